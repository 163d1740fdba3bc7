//! A retained `analyze_function` result read back as typed facts.
//!
//! The record may come from any target, provider or (once bundles import)
//! an earlier session, so its shape is checked rather than trusted: a
//! record that does not validate is refused with a typed error, never
//! half-read.

use serde::Deserialize;
use serde_json::Value;

use super::super::procedures::parse_address;
use crate::session::Evidence;
use crate::session::evidence::{EXCERPT_CHARS, excerpt};

/// Why a record cannot be read as a function dossier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} `{id}` is analyze_function Evidence whose result does not validate: {reason}")]
pub struct DossierError {
    pub field: String,
    pub id: String,
    pub reason: String,
}

/// One listed instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    pub address: u64,
    pub mnemonic: String,
    pub operands: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub start: u64,
    pub instruction_count: u64,
    /// `(edge kind, target)`.
    pub successors: Vec<(String, u64)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callee {
    pub at: u64,
    /// Entry of the called procedure (after any stub).
    pub target: u64,
    pub name: Option<String>,
    /// The stub the instruction names, when the call goes through one.
    pub through_stub: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub at: u64,
    pub target: u64,
    pub kind: String,
    pub string: Option<String>,
    pub string_address: Option<u64>,
}

/// What a comparison needs of one dossier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dossier {
    pub evidence_id: String,
    pub document: Option<String>,
    pub procedure: Value,
    pub instructions: Vec<Instruction>,
    pub blocks: Vec<Block>,
    pub callees: Vec<Callee>,
    /// `None` when the record carries no reference list at all.
    pub references: Option<Vec<Reference>>,
    pub truncated: bool,
}

#[derive(Deserialize)]
struct RawInstruction {
    address: String,
    mnemonic: String,
    operands: String,
}

#[derive(Deserialize)]
struct RawEdge {
    target: String,
    kind: String,
}

#[derive(Deserialize)]
struct RawBlock {
    start: String,
    instruction_count: u64,
    successors: Vec<RawEdge>,
}

#[derive(Deserialize)]
struct RawProcedureRef {
    address: String,
    name: Option<String>,
}

#[derive(Deserialize)]
struct RawCallee {
    at: String,
    target: RawProcedureRef,
    through_stub: Option<String>,
}

#[derive(Deserialize)]
struct RawReference {
    at: String,
    target: String,
    kind: String,
    string: Option<String>,
    string_address: Option<String>,
}

#[derive(Deserialize)]
struct RawDossier {
    instructions: Vec<RawInstruction>,
    blocks: Vec<RawBlock>,
    callees: Vec<RawCallee>,
    references: Option<Vec<RawReference>>,
    truncated: bool,
    document: Option<String>,
    #[serde(default)]
    procedure: Value,
}

impl Dossier {
    /// Reads the dossier of `evidence` (already known to be
    /// `analyze_function` Evidence), named `field` in errors.
    pub fn read(field: &str, evidence: &Evidence) -> Result<Dossier, DossierError> {
        let error = |reason: String| DossierError {
            field: field.to_owned(),
            id: evidence.evidence_id.clone(),
            reason,
        };
        // The record may come from a bundle: quote its text only in part.
        let raw = RawDossier::deserialize(&evidence.body.result)
            .map_err(|e| error(excerpt(&e.to_string(), 4 * EXCERPT_CHARS)))?;
        let address = |text: &str| {
            parse_address(text).ok_or_else(|| {
                error(format!(
                    "`{}` is not an address",
                    excerpt(text, EXCERPT_CHARS)
                ))
            })
        };
        let optional = |text: Option<String>| text.as_deref().map(address).transpose();
        let instructions = raw
            .instructions
            .into_iter()
            .map(|i| {
                Ok(Instruction {
                    address: address(&i.address)?,
                    mnemonic: i.mnemonic,
                    operands: i.operands,
                })
            })
            .collect::<Result<_, DossierError>>()?;
        let blocks = raw
            .blocks
            .into_iter()
            .map(|b| {
                Ok(Block {
                    start: address(&b.start)?,
                    instruction_count: b.instruction_count,
                    successors: b
                        .successors
                        .into_iter()
                        .map(|e| Ok((e.kind, address(&e.target)?)))
                        .collect::<Result<_, DossierError>>()?,
                })
            })
            .collect::<Result<_, DossierError>>()?;
        let callees = raw
            .callees
            .into_iter()
            .map(|c| {
                Ok(Callee {
                    at: address(&c.at)?,
                    target: address(&c.target.address)?,
                    name: c.target.name,
                    through_stub: optional(c.through_stub)?,
                })
            })
            .collect::<Result<_, DossierError>>()?;
        let references = raw
            .references
            .map(|list| {
                list.into_iter()
                    .map(|r| {
                        Ok(Reference {
                            at: address(&r.at)?,
                            target: address(&r.target)?,
                            kind: r.kind,
                            string: r.string,
                            string_address: optional(r.string_address)?,
                        })
                    })
                    .collect::<Result<_, DossierError>>()
            })
            .transpose()?;
        Ok(Dossier {
            evidence_id: evidence.evidence_id.clone(),
            document: raw.document,
            procedure: raw.procedure,
            instructions,
            blocks,
            callees,
            references,
            truncated: raw.truncated,
        })
    }
}
