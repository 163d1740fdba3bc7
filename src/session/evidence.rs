//! Evidence records: what a tool observed, content-addressed and carried
//! inline in every successful tool result.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::canonical::{CanonicalError, to_canonical};

/// How directly a record reflects the artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Read from the artifact itself.
    Observed,
    /// Computed from observations.
    Derived,
    /// Reasoned, not read.
    Inferred,
}

/// The artifact a record is about. Paths never enter identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Subject {
    pub sha256: String,
    pub format: String,
    pub architecture: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderIdentity {
    pub id: String,
    pub name: String,
    pub version: String,
}

/// A location the record points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Location {
    Address { document: String, address: String },
    ArtifactPath { path: String },
}

/// One Evidence record, as it travels in a tool result: the content address
/// followed by the sealed body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// `ev_` + sha256 of the canonical identity projection.
    pub evidence_id: String,
    #[serde(flatten)]
    pub body: EvidenceDraft,
}

/// What a tool hands over to become Evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidenceDraft {
    pub operation: String,
    pub subject: Option<Subject>,
    pub provider: ProviderIdentity,
    /// Request parameters with local paths removed.
    pub parameters: Value,
    /// The normalized result (no local paths, no floats).
    pub result: Value,
    pub confidence: Confidence,
    pub limitations: Vec<String>,
    pub locations: Vec<Location>,
    /// The local path of the subject, for display only; not part of identity.
    pub local_path: Option<String>,
}

impl EvidenceDraft {
    /// Computes the content address and seals the record. Identity covers
    /// what was observed of which artifact by which provider, never where the
    /// file lives or how the result is presented.
    pub fn seal(self) -> Result<Evidence, CanonicalError> {
        let identity = json!({
            "operation": self.operation,
            "subject": self.subject,
            "provider": {"id": self.provider.id, "version": self.provider.version},
            "parameters": self.parameters,
            "result": self.result,
        });
        let digest = Sha256::digest(to_canonical(&identity)?.as_bytes());
        Ok(Evidence {
            evidence_id: format!("ev_{}", hex(&digest)),
            body: self,
        })
    }
}

/// Lowercase hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// Whether `s` has the shape of an Evidence ID.
pub fn is_evidence_id(s: &str) -> bool {
    s.strip_prefix("ev_")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft(path: &str, confidence: Confidence) -> EvidenceDraft {
        EvidenceDraft {
            operation: "list_documents".into(),
            subject: Some(Subject {
                sha256: "ab".repeat(32),
                format: "elf".into(),
                architecture: Some("x86_64".into()),
            }),
            provider: ProviderIdentity {
                id: "native".into(),
                name: "Native".into(),
                version: "0.1.0".into(),
            },
            parameters: json!({}),
            result: json!(["ls"]),
            confidence,
            limitations: vec![],
            locations: vec![],
            local_path: Some(path.into()),
        }
    }

    #[test]
    fn identity_ignores_local_path_and_presentation() {
        let a = draft("/a/ls", Confidence::Observed).seal().unwrap();
        let b = draft("/b/ls", Confidence::Derived).seal().unwrap();
        assert_eq!(a.evidence_id, b.evidence_id);
        assert!(is_evidence_id(&a.evidence_id));
    }

    #[test]
    fn identity_covers_the_result() {
        let a = draft("/a", Confidence::Observed).seal().unwrap();
        let mut d = draft("/a", Confidence::Observed);
        d.result = json!(["other"]);
        assert_ne!(a.evidence_id, d.seal().unwrap().evidence_id);
    }
}
