//! The bearer tokens a shared server accepts (`--tokens-file`): who an
//! HTTP request comes from.
//!
//! The file is TOML, `[[token]]` tables with a `name` (the analyst, which
//! logs may show) and a `token` (a secret of at least 16 characters, which
//! nothing shows). It is opened once and refused when the group or others
//! may read it. Only each token's sha256 is kept, and a presented token is
//! compared with every one of them in constant time, so neither which token
//! matched nor how much of one did shows in the time an answer takes.
//! Messages name the file, a line and a column, or an analyst's name; never
//! a token, and never text from the file that could be one.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::ground::confined::{OpenError, Roots};
use crate::ground::text::excerpt;

/// Longest analyst name a message shows, in characters.
const SHOWN_NAME_CHARS: usize = 64;

/// Shortest accepted token, in characters.
pub const MIN_TOKEN_CHARS: usize = 16;
/// Largest accepted tokens file.
pub const MAX_TOKENS_FILE_BYTES: u64 = 1 << 20;
/// Most tokens in one file.
pub const MAX_TOKENS: usize = 1024;

/// Why a tokens file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TokensError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(
        "{path} grants its group or others some access (it must be its owner's alone, mode 0600 \
         or 0400); a tokens file holds secrets: `chmod 600 {path}`, then start again"
    )]
    Exposed { path: String },
    #[error(
        "{path}:{line}:{column}: not a tokens file; it holds [[token]] tables, each with a \
         `name` and a `token` string"
    )]
    Syntax {
        path: String,
        line: usize,
        column: usize,
    },
    #[error("{path} holds no [[token]] table; add one per analyst")]
    Empty { path: String },
    #[error("{path} holds more than {MAX_TOKENS} tokens")]
    TooMany { path: String },
    #[error(
        "{path}: the token of `{name}` is shorter than {MIN_TOKEN_CHARS} characters; use a \
         random one (e.g. `openssl rand -hex 24`)"
    )]
    TooShort { path: String, name: String },
    #[error("{path}: `{name}` has an empty name or one with control characters")]
    BadName { path: String, name: String },
    #[error("{path}: the name `{name}` is given twice; each analyst has one name")]
    DuplicateName { path: String, name: String },
    #[error("{path}: `{name}` and `{other}` have the same token; give each analyst their own")]
    DuplicateToken {
        path: String,
        name: String,
        other: String,
    },
}

/// The accepted tokens, as digests with the name each stands for.
pub struct Tokens {
    entries: Vec<(String, [u8; 32])>,
}

/// Which token authenticated a request: its digest, so that a token taken
/// out of the file ends what was opened with it even when its analyst's
/// name stays. Never shown, not even in debug output.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Credential([u8; 32]);

impl Credential {
    /// The credential of the one local analyst of a server without tokens.
    pub const LOCAL: Credential = Credential([0; 32]);
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credential(…)")
    }
}

impl std::fmt::Debug for Tokens {
    /// Names only: a token's digest is not shown either.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.entries.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Tokens").field("names", &names).finish()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokensFile {
    #[serde(default)]
    token: Vec<TokenEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenEntry {
    name: String,
    token: String,
}

impl Tokens {
    /// Reads `path` once, refusing it unless only its owner has access.
    pub fn load(path: &Path) -> Result<Tokens, TokensError> {
        let file = Roots::default().open_file(path)?;
        let shown = file.shown().to_owned();
        if file.open_to_others() {
            return Err(TokensError::Exposed { path: shown });
        }
        let bytes = file.read_bounded(MAX_TOKENS_FILE_BYTES)?;
        Tokens::parse(&bytes, &shown)
    }

    /// Parses a tokens file's content; `shown` names it in messages.
    pub fn parse(bytes: &[u8], shown: &str) -> Result<Tokens, TokensError> {
        let syntax = |offset: usize| {
            let before = &bytes[..offset.min(bytes.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
            TokensError::Syntax {
                path: shown.to_owned(),
                line,
                column,
            }
        };
        let text = std::str::from_utf8(bytes).map_err(|e| syntax(e.valid_up_to()))?;
        // toml's own message may quote a value, which could be a token: only
        // its position is reported.
        let file: TokensFile =
            toml::from_str(text).map_err(|e| syntax(e.span().map_or(0, |span| span.start)))?;
        if file.token.is_empty() {
            return Err(TokensError::Empty {
                path: shown.to_owned(),
            });
        }
        if file.token.len() > MAX_TOKENS {
            return Err(TokensError::TooMany {
                path: shown.to_owned(),
            });
        }
        let mut entries: Vec<(String, [u8; 32])> = Vec::with_capacity(file.token.len());
        for entry in file.token {
            let name = entry.name.trim().to_owned();
            let named = || excerpt(&name, SHOWN_NAME_CHARS);
            if name.is_empty() || name.chars().any(char::is_control) {
                return Err(TokensError::BadName {
                    path: shown.to_owned(),
                    name: named(),
                });
            }
            if entry.token.chars().count() < MIN_TOKEN_CHARS {
                return Err(TokensError::TooShort {
                    path: shown.to_owned(),
                    name: named(),
                });
            }
            let digest: [u8; 32] = Sha256::digest(entry.token.as_bytes()).into();
            if entries.iter().any(|(n, _)| *n == name) {
                return Err(TokensError::DuplicateName {
                    path: shown.to_owned(),
                    name: named(),
                });
            }
            if let Some((other, _)) = entries.iter().find(|(_, d)| *d == digest) {
                return Err(TokensError::DuplicateToken {
                    path: shown.to_owned(),
                    name: named(),
                    other: excerpt(other, SHOWN_NAME_CHARS),
                });
            }
            entries.push((name, digest));
        }
        Ok(Tokens { entries })
    }

    /// The analyst an `Authorization` header value authenticates: `Bearer`
    /// followed by one of the tokens. Every token is compared, in constant
    /// time, whatever matches.
    pub fn analyst(&self, authorization: &str) -> Option<&str> {
        self.authenticate(authorization).map(|(name, _)| name)
    }

    /// [`Tokens::analyst`], with the credential that matched.
    pub fn authenticate(&self, authorization: &str) -> Option<(&str, Credential)> {
        let (scheme, presented) = authorization.trim().split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        let digest: [u8; 32] = Sha256::digest(presented.trim().as_bytes()).into();
        let mut found: Option<(&str, Credential)> = None;
        for (name, expected) in &self.entries {
            if bool::from(expected.ct_eq(&digest)) {
                found = Some((name, Credential(*expected)));
            }
        }
        found
    }

    /// Whether `credential` is still one of these tokens.
    pub fn holds(&self, credential: Credential) -> bool {
        self.entries.iter().any(|(_, d)| *d == credential.0)
    }

    /// The analysts' names, in file order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(n, _)| n.as_str())
    }
}

/// The tokens file a running server answers to, reloaded on request
/// (SIGHUP, or a change to the file): a reload that fails keeps the
/// previous tokens, so a half-written file never locks everyone out.
pub struct TokenStore {
    path: PathBuf,
    current: RwLock<Arc<Tokens>>,
}

/// What a reload took away.
#[derive(Debug, Default)]
pub struct Revoked {
    /// Tokens no longer in the file: what was opened with them ends.
    pub credentials: Vec<Credential>,
    /// Analysts no longer named in the file.
    pub names: Vec<String>,
}

impl TokenStore {
    pub fn load(path: &Path) -> Result<TokenStore, TokensError> {
        Ok(TokenStore {
            path: path.to_path_buf(),
            current: RwLock::new(Arc::new(Tokens::load(path)?)),
        })
    }

    /// The tokens in force now.
    pub fn current(&self) -> Arc<Tokens> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Reads the file again. On success the new tokens are in force at
    /// once and the answer says what they no longer hold; on failure
    /// nothing changes.
    pub fn reload(&self) -> Result<Revoked, TokensError> {
        let fresh = Arc::new(Tokens::load(&self.path)?);
        let old = std::mem::replace(
            &mut *self.current.write().unwrap_or_else(|p| p.into_inner()),
            fresh.clone(),
        );
        Ok(Revoked {
            credentials: old
                .entries
                .iter()
                .map(|(_, d)| Credential(*d))
                .filter(|c| !fresh.holds(*c))
                .collect(),
            names: old
                .names()
                .filter(|n| !fresh.names().any(|f| f == *n))
                .map(str::to_owned)
                .collect(),
        })
    }

    /// The file, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use proptest::prelude::*;

    use super::*;

    const TWO: &str = "[[token]]\nname = \"ana\"\ntoken = \"0123456789abcdef-ana\"\n\n\
                       [[token]]\nname = \"ben\"\ntoken = \"0123456789abcdef-ben\"\n";

    fn parse(text: &str) -> Result<Tokens, TokensError> {
        Tokens::parse(text.as_bytes(), "tokens.toml")
    }

    #[test]
    fn a_bearer_token_names_its_analyst_and_nothing_else_does() {
        let tokens = parse(TWO).unwrap();
        assert_eq!(tokens.analyst("Bearer 0123456789abcdef-ana"), Some("ana"));
        assert_eq!(tokens.analyst("bearer 0123456789abcdef-ben"), Some("ben"));
        for refused in [
            "",
            "Bearer",
            "Bearer ",
            "Basic 0123456789abcdef-ana",
            "Bearer 0123456789abcdef-an",
            "Bearer 0123456789abcdef-anaa",
            "0123456789abcdef-ana",
        ] {
            assert_eq!(tokens.analyst(refused), None, "{refused:?}");
        }
        assert_eq!(tokens.names().collect::<Vec<_>>(), ["ana", "ben"]);
    }

    #[test]
    fn no_message_and_no_debug_output_holds_a_token() {
        let tokens = parse(TWO).unwrap();
        let shown = format!("{tokens:?}");
        assert!(!shown.contains("0123456789abcdef"), "{shown}");
        let broken = [
            "[[token]]\nname = \"ana\"\ntoken = 0123456789abcdef\n",
            "[[token]]\nname = \"ana\"\ntoken = \"secret-secret-secret\"\ncolour = \"secret-secret-secret\"\n",
            "[[token]]\nname = \"ana\"\ntoken = [\"secret-secret-secret\"]\n",
            "[[token]]\nname = \"ana\"\ntoken = \"short-secret\"\n",
            "[[token]]\nname = \"ana\"\ntoken = \"secret-secret-secret\"\n[[token]]\nname = \"ben\"\ntoken = \"secret-secret-secret\"\n",
        ];
        for text in broken {
            let message = parse(text).unwrap_err().to_string();
            assert!(!message.contains("secret"), "{message}");
            assert!(!message.contains("0123456789abcdef"), "{message}");
        }
    }

    #[test]
    fn malformed_files_are_refused_with_a_position_or_a_reason() {
        let err = parse("[[token]]\nname = \"ana\"\ntokn = \"0123456789abcdef\"\n").unwrap_err();
        assert!(matches!(err, TokensError::Syntax { line: 3, .. }), "{err}");
        assert!(matches!(parse("").unwrap_err(), TokensError::Empty { .. }));
        assert!(matches!(
            parse("[[token]]\nname = \"ana\"\ntoken = \"short\"\n").unwrap_err(),
            TokensError::TooShort { .. }
        ));
        assert!(matches!(
            parse("[[token]]\nname = \"\"\ntoken = \"0123456789abcdef\"\n").unwrap_err(),
            TokensError::BadName { .. }
        ));
        let twice = format!("{TWO}[[token]]\nname = \"ana\"\ntoken = \"another-token-0123456\"\n");
        assert!(matches!(
            parse(&twice).unwrap_err(),
            TokensError::DuplicateName { .. }
        ));
        assert!(matches!(
            Tokens::parse(b"\xff\xfe", "t").unwrap_err(),
            TokensError::Syntax { line: 1, .. }
        ));
    }

    #[test]
    fn a_file_others_have_any_access_to_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.toml");
        std::fs::write(&path, TWO).unwrap();
        for mode in [
            0o644, 0o640, 0o604, 0o620, 0o602, 0o610, 0o601, 0o660, 0o777,
        ] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let err = Tokens::load(&path).unwrap_err();
            assert!(
                matches!(err, TokensError::Exposed { .. }),
                "{mode:o}: {err}"
            );
            assert!(err.to_string().contains("chmod 600"), "{err}");
        }
        for mode in [0o600, 0o400] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let tokens = Tokens::load(&path).unwrap();
            assert_eq!(tokens.analyst("Bearer 0123456789abcdef-ben"), Some("ben"));
        }
        // A FIFO is refused at once, never read (which would block).
        let fifo = dir.path().join("fifo");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c_path` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let err = Tokens::load(&fifo).unwrap_err();
        assert!(matches!(err, TokensError::Open(_)), "{err}");
    }

    #[test]
    fn a_reload_revokes_what_left_the_file_and_a_bad_one_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.toml");
        std::fs::write(&path, TWO).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let store = TokenStore::load(&path).unwrap();
        let (_, ben) = store
            .current()
            .authenticate("Bearer 0123456789abcdef-ben")
            .unwrap();
        // ana keeps her token; ben's is replaced; cy is new.
        let next = "[[token]]\nname = \"ana\"\ntoken = \"0123456789abcdef-ana\"\n\n\
                    [[token]]\nname = \"ben\"\ntoken = \"0123456789abcdef-ben2\"\n\n\
                    [[token]]\nname = \"cy\"\ntoken = \"0123456789abcdef-cy\"\n";
        std::fs::write(&path, next).unwrap();
        let revoked = store.reload().unwrap();
        assert_eq!(revoked.credentials, [ben]);
        assert!(revoked.names.is_empty());
        let now = store.current();
        assert_eq!(now.analyst("Bearer 0123456789abcdef-ben"), None);
        assert_eq!(now.analyst("Bearer 0123456789abcdef-ben2"), Some("ben"));
        assert_eq!(now.analyst("Bearer 0123456789abcdef-ana"), Some("ana"));
        // A broken or exposed file keeps the tokens in force.
        std::fs::write(&path, "[[token]]\nname = ").unwrap();
        assert!(store.reload().is_err());
        std::fs::write(&path, TWO).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(matches!(store.reload(), Err(TokensError::Exposed { .. })));
        assert_eq!(
            store.current().analyst("Bearer 0123456789abcdef-cy"),
            Some("cy")
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let revoked = store.reload().unwrap();
        assert_eq!(revoked.names, ["cy"]);
        assert_eq!(format!("{revoked:?}").matches("Credential(…)").count(), 2);
    }

    proptest! {
        /// Any bytes give tokens or a typed error, and an error never
        /// quotes what the file held.
        #[test]
        fn any_bytes_parse_or_fail_without_quoting(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            if let Err(e) = Tokens::parse(&bytes, "t") {
                let message = e.to_string();
                prop_assert!(message.len() < 400);
            }
        }

        /// Only the exact token authenticates.
        #[test]
        fn only_the_exact_token_authenticates(token in "[!-~]{16,64}", other in "[!-~]{1,64}") {
            let text = format!("[[token]]\nname = \"ana\"\ntoken = {}\n", toml::Value::String(token.clone()));
            let tokens = Tokens::parse(text.as_bytes(), "t").unwrap();
            let bearer = format!("Bearer {token}");
            prop_assert_eq!(tokens.analyst(&bearer), Some("ana"));
            if other != token {
                let wrong = format!("Bearer {other}");
                prop_assert_eq!(tokens.analyst(&wrong), None);
            }
        }
    }
}
