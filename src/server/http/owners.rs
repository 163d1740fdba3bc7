//! Who opened each legacy session (`Mcp-Session-Id`), so that every request
//! naming a session (a call, a notification, a GET that listens or resumes
//! a stream, a DELETE) is served only for the token that opened it
//! (round-3 finding R3-3), and so that one analyst cannot hold every
//! session the server allows (R3-8).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::server::tokens::Credential;
use crate::server::workspaces::Analyst;

/// The analyst and the token a session was opened with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub analyst: Analyst,
    pub credential: Credential,
}

/// Session id → owner, for the sessions this server opened. An entry whose
/// session ended by itself (idle past the timeout) is pruned against the
/// session manager's live set before anything is counted.
#[derive(Default)]
pub struct SessionOwners {
    held: Mutex<HashMap<String, Owner>>,
}

impl SessionOwners {
    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<String, Owner>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes that `owner` opened session `id`.
    pub fn record(&self, id: &str, owner: Owner) {
        self.held().insert(id.to_owned(), owner);
    }

    /// Whether session `id` was opened by `owner` (by the same token).
    /// An id this server never handed out belongs to no one.
    pub fn owned_by(&self, id: &str, owner: &Owner) -> bool {
        self.held().get(id) == Some(owner)
    }

    pub fn forget(&self, id: &str) {
        self.held().remove(id);
    }

    /// Keeps only the sessions `live` still knows.
    pub fn retain_live(&self, live: impl Fn(&str) -> bool) {
        self.held().retain(|id, _| live(id));
    }

    /// How many sessions `analyst` holds.
    pub fn held_by(&self, analyst: &Analyst) -> usize {
        self.held()
            .values()
            .filter(|o| o.analyst == *analyst)
            .count()
    }

    /// Forgets, and returns, the sessions opened with any of `credentials`.
    pub fn take_opened_with(&self, credentials: &[Credential]) -> Vec<String> {
        let mut held = self.held();
        let ids: Vec<String> = held
            .iter()
            .filter(|(_, o)| credentials.contains(&o.credential))
            .map(|(id, _)| id.clone())
            .collect();
        for id in &ids {
            held.remove(id);
        }
        ids
    }
}

/// How many legacy sessions one analyst may hold: an equal share of the
/// server's cap among the analysts the tokens file names, at least one.
pub fn share(max_sessions: usize, analysts: usize) -> usize {
    (max_sessions / analysts.max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(name: &str, credential: Credential) -> Owner {
        Owner {
            analyst: Analyst(name.into()),
            credential,
        }
    }

    #[test]
    fn a_session_answers_only_to_the_token_that_opened_it() {
        let owners = SessionOwners::default();
        let ana = owner("ana", Credential::LOCAL);
        owners.record("s1", ana.clone());
        assert!(owners.owned_by("s1", &ana));
        assert!(!owners.owned_by("s1", &owner("ben", Credential::LOCAL)));
        assert!(!owners.owned_by("s2", &ana), "an unknown id is no one's");
        assert_eq!(owners.held_by(&ana.analyst), 1);
        assert_eq!(owners.take_opened_with(&[Credential::LOCAL]), ["s1"]);
        assert!(!owners.owned_by("s1", &ana));
        owners.record("s3", ana.clone());
        owners.retain_live(|id| id != "s3");
        assert_eq!(owners.held_by(&ana.analyst), 0);
    }

    #[test]
    fn each_analyst_has_a_share_of_at_least_one() {
        assert_eq!(share(64, 1), 64);
        assert_eq!(share(64, 2), 32);
        assert_eq!(share(64, 0), 64);
        assert_eq!(share(4, 10), 1);
    }
}
