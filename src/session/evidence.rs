//! Evidence records: what a tool observed, content-addressed and carried
//! inline in every successful tool result.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::ground::canonical::{CanonicalError, to_canonical, without_null_members};
use crate::ground::digest::hex;

/// How directly a record reflects the artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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

/// Which provider made a record; providers state it of themselves.
pub use crate::providers::ProviderIdentity;

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
    ///
    /// Null members of the parameters and the result are dropped first, so
    /// a record never spells "absent" two ways and an answer can carry the
    /// result without them and still recompute the ID.
    pub fn seal(mut self) -> Result<Evidence, CanonicalError> {
        self.parameters = without_null_members(std::mem::take(&mut self.parameters));
        self.result = without_null_members(std::mem::take(&mut self.result));
        Ok(Evidence {
            evidence_id: self.identity()?,
            body: self,
        })
    }

    /// `ev_` + sha256 of the RFC 8785 canonical form of the identity
    /// projection: operation, subject, provider id and version, parameters
    /// and result. Provider display name, confidence, limitations, locations
    /// and the local path are presentation and stay out, so the same
    /// observation made from another copy of the file has the same address.
    pub fn identity(&self) -> Result<String, CanonicalError> {
        let projection = json!({
            "operation": self.operation,
            "subject": self.subject,
            "provider": {"id": self.provider.id, "version": self.provider.version},
            "parameters": self.parameters,
            "result": self.result,
        });
        let digest = Sha256::digest(to_canonical(&projection)?.as_bytes());
        Ok(format!("ev_{}", hex(&digest)))
    }
}

impl Evidence {
    /// The record without its result: what an answer carries beside the
    /// result it already states, so each fact travels once. The ID is the
    /// content address of `{operation, subject, provider {id, version},
    /// parameters, result}`, so a client recomputes it from the header and
    /// the answer's result (an absent `subject` is `null`). Null members
    /// are left out, except inside `subject`, which is hashed exactly as
    /// the header spells it (`architecture: null` for an archive).
    pub fn header(&self) -> Value {
        let mut header = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(members) = &mut header {
            members.remove("result");
            members.retain(|_, v| !v.is_null());
        }
        header
    }
}

/// Why a record read from outside the session (a bundle) was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("an Evidence record is malformed: {0}")]
    Malformed(String),
    #[error(
        "Evidence record {claimed} does not match its content (the content addresses {actual}); \
         the record was altered after it was sealed"
    )]
    Tampered { claimed: String, actual: String },
}

/// The members a serialized record may have. `Evidence` flattens its body,
/// and serde cannot combine `flatten` with `deny_unknown_fields`, so
/// [`Evidence::from_value`] checks the member names against this list.
const RECORD_MEMBERS: [&str; 10] = [
    "evidence_id",
    "operation",
    "subject",
    "provider",
    "parameters",
    "result",
    "confidence",
    "limitations",
    "locations",
    "local_path",
];

impl Evidence {
    /// Parses a record from untrusted JSON: every member must be known, the
    /// ID well formed, and the ID must be the content address of the body.
    pub fn from_value(value: Value) -> Result<Evidence, RecordError> {
        let Value::Object(members) = &value else {
            return Err(RecordError::Malformed(
                "a record must be a JSON object".into(),
            ));
        };
        if members
            .keys()
            .any(|k| !RECORD_MEMBERS.contains(&k.as_str()))
        {
            return Err(RecordError::Malformed(format!(
                "a member is not one of {}",
                RECORD_MEMBERS.join(", ")
            )));
        }
        let evidence: Evidence =
            serde_json::from_value(value).map_err(|e| RecordError::Malformed(schema_error(&e)))?;
        if !is_evidence_id(&evidence.evidence_id) {
            return Err(RecordError::Malformed(
                "evidence_id is not an Evidence ID (ev_ and 64 lowercase hex digits)".into(),
            ));
        }
        evidence.verify()?;
        Ok(evidence)
    }

    /// Recomputes the content address and rejects a record whose ID does not
    /// match (the same projection as [`EvidenceDraft::seal`]).
    pub fn verify(&self) -> Result<(), RecordError> {
        let actual = self
            .body
            .identity()
            .map_err(|e| RecordError::Malformed(e.to_string()))?;
        if actual == self.evidence_id {
            Ok(())
        } else {
            Err(RecordError::Tampered {
                claimed: self.evidence_id.clone(),
                actual,
            })
        }
    }
}

/// Who stands behind a record: the kinds of authority a residual unknown
/// may require of the Evidence that resolves it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Authority {
    /// Read from the artifact under investigation.
    ShippedArtifact,
    /// Observed by replaying the artifact under control.
    ControlledReplay,
    /// Taken from an earlier release or published reference.
    HistoricalReference,
    /// Reported by a service outside rea.
    ExternalService,
    /// Concluded by the analyst (or the registry recording them).
    AnalystInference,
}

/// The provider id of residual-unknown mutation records.
pub const UNKNOWN_REGISTRY_PROVIDER: &str = "rea-unknown-registry";

/// The authority of a record, derived rather than stored: every provider in
/// this build reads the opened artifact itself (native parser, radare2), so
/// a record with a subject is `shipped-artifact`; registry mutations and
/// records without a subject are `analyst-inference`. Deriving keeps the
/// identity projection (and every existing Evidence ID) unchanged; a
/// provider with another authority (replay, external service) will need a
/// stored field, which is when this function changes.
pub fn authority(evidence: &Evidence) -> Authority {
    let body = &evidence.body;
    if body.provider.id == UNKNOWN_REGISTRY_PROVIDER || body.subject.is_none() {
        Authority::AnalystInference
    } else {
        Authority::ShippedArtifact
    }
}

impl Confidence {
    /// observed 3 > derived 2 > inferred 1.
    pub fn rank(self) -> u8 {
        match self {
            Confidence::Observed => 3,
            Confidence::Derived => 2,
            Confidence::Inferred => 1,
        }
    }
}

/// What is wrong with JSON that does not fit a schema, without repeating
/// any of it: serde's messages quote unknown names and wrong values read
/// from the input, so only a missing field (the schema's own name) and the
/// kind of problem are kept.
pub fn schema_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if text.starts_with("missing field `") {
        return text
            .split(" at line")
            .next()
            .unwrap_or("a field is missing")
            .to_owned();
    }
    let kind = match e.classify() {
        serde_json::error::Category::Io => "it cannot be read",
        serde_json::error::Category::Syntax => "it is not valid JSON",
        serde_json::error::Category::Data => "a value has the wrong type or an unknown name",
        serde_json::error::Category::Eof => "it ends too early",
    };
    match e.line() {
        0 => kind.to_owned(),
        line => format!("{kind} (line {line}, column {})", e.column()),
    }
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
    fn records_round_trip_and_tampering_is_detected() {
        let sealed = draft("/a/ls", Confidence::Observed).seal().unwrap();
        let value = serde_json::to_value(&sealed).unwrap();
        assert_eq!(Evidence::from_value(value.clone()).unwrap(), sealed);

        let mut altered = value.clone();
        altered["result"] = json!(["rm"]);
        assert!(matches!(
            Evidence::from_value(altered),
            Err(RecordError::Tampered { .. })
        ));
        // Presentation is not identity: changing it is not tampering.
        let mut renamed = value.clone();
        renamed["local_path"] = json!("/elsewhere/ls");
        assert!(Evidence::from_value(renamed).is_ok());

        let mut extra = value.clone();
        extra["note"] = json!("smuggled");
        let err = Evidence::from_value(extra).unwrap_err();
        assert!(err.to_string().contains("a member is not one of"), "{err}");
        assert!(!err.to_string().contains("note"), "{err}");
        let mut bad_id = value;
        bad_id["evidence_id"] = json!("ev_XYZ");
        assert!(matches!(
            Evidence::from_value(bad_id),
            Err(RecordError::Malformed(_))
        ));
        assert!(Evidence::from_value(json!([1])).is_err());
    }

    #[test]
    fn authority_is_derived_from_the_provider_and_subject() {
        let observed = draft("/a", Confidence::Observed).seal().unwrap();
        assert_eq!(authority(&observed), Authority::ShippedArtifact);
        let mut registry = draft("/a", Confidence::Derived);
        registry.provider.id = UNKNOWN_REGISTRY_PROVIDER.into();
        assert_eq!(
            authority(&registry.seal().unwrap()),
            Authority::AnalystInference
        );
        assert!(Confidence::Observed.rank() > Confidence::Derived.rank());
        assert!(Confidence::Derived.rank() > Confidence::Inferred.rank());
    }

    #[test]
    fn identity_covers_the_result() {
        let a = draft("/a", Confidence::Observed).seal().unwrap();
        let mut d = draft("/a", Confidence::Observed);
        d.result = json!(["other"]);
        assert_ne!(a.evidence_id, d.seal().unwrap().evidence_id);
    }
}
