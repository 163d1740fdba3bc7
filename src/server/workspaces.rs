//! The workspaces of analysts whose requests carry no session: on a shared
//! HTTP server, 2026-07-28 clients send each request on its own, so what
//! they opened and recorded lives in the workspace of the token that
//! authenticated them. (A legacy client's `Mcp-Session-Id` session has a
//! workspace of its own, held by its connection's handler.)
//!
//! A workspace is a [`Session`]: target, provider binding, ledger, residual
//! unknowns, document selection. It lives until it sits idle past the
//! timeout; `close_binary` empties it. Nothing is shared between two
//! workspaces, so an identifier from one is "not found" in another.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::hub::Hub;
use crate::session::Session;

/// Who a request comes from: the analyst a bearer token names, or the one
/// local analyst of a server without tokens.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Analyst(pub String);

/// The name of the one analyst of a loopback server without tokens.
pub const LOCAL_ANALYST: &str = "local";

impl Analyst {
    /// The directory this analyst writes beneath, inside each write root of
    /// a shared server: the name itself when it is plain (ASCII letters,
    /// digits, `-` and `_`, at most 64), else `analyst.` and a digest of it.
    /// The two forms cannot meet (a plain name has no `.`), and two names
    /// never share a directory.
    pub fn directory(&self) -> String {
        let name = &self.0;
        let plain = !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if plain {
            name.clone()
        } else {
            let digest = crate::ground::digest::sha256_hex(name.as_bytes());
            format!("analyst.{}", &digest[..32])
        }
    }
}

/// Why a workspace cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceError {
    #[error(
        "the server holds its most workspaces ({max}); an idle one is freed after {idle_secs} s, \
         or ask the operator for a higher --max-workspaces"
    )]
    Full { max: usize, idle_secs: u64 },
}

struct Held {
    session: Arc<Mutex<Session>>,
    last_used: Instant,
}

/// Per-analyst workspaces, bounded in number and idle time.
pub struct Workspaces {
    held: Mutex<HashMap<Analyst, Held>>,
    max: usize,
    idle: Duration,
    /// Whether each analyst writes beneath a directory of their own in
    /// every write root (a server of several analysts).
    own_write_dirs: bool,
}

impl Workspaces {
    pub fn new(max: usize, idle: Duration) -> Workspaces {
        Workspaces {
            held: Mutex::new(HashMap::new()),
            max: max.max(1),
            idle,
            own_write_dirs: false,
        }
    }

    /// Gives each analyst a directory of their own in every write root
    /// ([`Analyst::directory`]), for legacy sessions and workspaces alike.
    pub fn with_own_write_dirs(mut self, on: bool) -> Workspaces {
        self.own_write_dirs = on;
        self
    }

    pub fn own_write_dirs(&self) -> bool {
        self.own_write_dirs
    }

    /// The workspace of `analyst`, made on first use. Workspaces idle past
    /// the timeout are dropped first, so a full server frees room by
    /// itself.
    pub fn of(&self, analyst: &Analyst, hub: &Hub) -> Result<Arc<Mutex<Session>>, WorkspaceError> {
        let now = Instant::now();
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held.retain(|_, h| now.duration_since(h.last_used) <= self.idle);
        if let Some(h) = held.get_mut(analyst) {
            h.last_used = now;
            return Ok(h.session.clone());
        }
        if held.len() >= self.max {
            return Err(WorkspaceError::Full {
                max: self.max,
                idle_secs: self.idle.as_secs(),
            });
        }
        let session = Arc::new(Mutex::new(hub.new_session_for(analyst)));
        held.insert(
            analyst.clone(),
            Held {
                session: session.clone(),
                last_used: now,
            },
        );
        Ok(session)
    }

    /// Drops the workspace of `analyst`, if one is held (their token was
    /// taken out of the tokens file).
    pub fn forget(&self, analyst: &Analyst) {
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(analyst);
    }

    /// How many workspaces are held now.
    pub fn len(&self) -> usize {
        self.held.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::render::LoadedCatalog;
    use crate::session::ReadRoots;

    fn hub() -> Arc<Hub> {
        Hub::new(
            LoadedCatalog::embedded().expect("the embedded catalog loads"),
            ReadRoots::default(),
        )
    }

    #[test]
    fn each_analyst_has_one_workspace_of_their_own() {
        let hub = hub();
        let spaces = Workspaces::new(4, Duration::from_secs(60));
        let ana = Analyst("ana".into());
        let ben = Analyst("ben".into());
        let a1 = spaces.of(&ana, &hub).unwrap();
        let a2 = spaces.of(&ana, &hub).unwrap();
        let b = spaces.of(&ben, &hub).unwrap();
        assert!(Arc::ptr_eq(&a1, &a2));
        assert!(!Arc::ptr_eq(&a1, &b));
        assert_eq!(spaces.len(), 2);
    }

    #[test]
    fn each_analyst_has_a_directory_no_other_name_maps_to() {
        assert_eq!(Analyst("ana".into()).directory(), "ana");
        assert_eq!(Analyst("Ben_2-x".into()).directory(), "Ben_2-x");
        for odd in ["../ana", "ana/..", ".", "..", "an a", "ána", ""] {
            let dir = Analyst(odd.into()).directory();
            assert!(
                dir.starts_with("analyst.") && !dir.contains('/'),
                "{odd}: {dir}"
            );
        }
        assert_ne!(
            Analyst("a b".into()).directory(),
            Analyst("a c".into()).directory()
        );
    }

    #[test]
    fn a_full_server_refuses_a_new_analyst_until_one_is_idle() {
        let hub = hub();
        let spaces = Workspaces::new(1, Duration::from_millis(50));
        spaces.of(&Analyst("ana".into()), &hub).unwrap();
        let Err(err) = spaces.of(&Analyst("ben".into()), &hub) else {
            panic!("a second analyst fits in a server of one workspace")
        };
        assert!(matches!(err, WorkspaceError::Full { max: 1, .. }), "{err}");
        std::thread::sleep(Duration::from_millis(80));
        spaces.of(&Analyst("ben".into()), &hub).unwrap();
        assert_eq!(spaces.len(), 1);
    }
}
