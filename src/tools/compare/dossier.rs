//! A retained `analyze_function` result read back as typed facts.
//!
//! The record may come from any target, provider or (once bundles import)
//! an earlier session, so its shape is checked rather than trusted: a
//! record that does not validate is refused with a typed error, never
//! half-read.

use serde::Deserialize;
use serde_json::Value;

use crate::ground::text::{EXCERPT_CHARS, excerpt};
use crate::session::Evidence;
use crate::tools::shared::procedures::parse_address;

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

/// An instruction as `analyze_function` lists it: a line
/// `address  mnemonic operands`, or (records from before lines) an object.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawInstruction {
    Line(String),
    Object {
        address: String,
        mnemonic: String,
        operands: String,
    },
}

impl RawInstruction {
    /// `(address, mnemonic, operands)`; `None` for a line that is not one.
    fn parts(self) -> Option<(String, String, String)> {
        match self {
            RawInstruction::Object {
                address,
                mnemonic,
                operands,
            } => Some((address, mnemonic, operands)),
            RawInstruction::Line(line) => {
                let (address, text) = line.split_once("  ")?;
                let (mnemonic, operands) = text.split_once(' ').unwrap_or((text, ""));
                Some((address.into(), mnemonic.into(), operands.into()))
            }
        }
    }
}

#[derive(Deserialize)]
struct RawEdge {
    target: String,
    kind: String,
}

/// A basic block: a line `start..end (count): kind target, ...`, or (records
/// from before lines) an object.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawBlock {
    Line(String),
    Object {
        start: String,
        instruction_count: u64,
        successors: Vec<RawEdge>,
    },
}

/// A block's start, instruction count and `(kind, target)` edges, as text.
type BlockParts = (String, u64, Vec<(String, String)>);

impl RawBlock {
    /// The block's parts; `None` for a line that is not one.
    fn parts(self) -> Option<BlockParts> {
        match self {
            RawBlock::Object {
                start,
                instruction_count,
                successors,
            } => Some((
                start,
                instruction_count,
                successors.into_iter().map(|e| (e.kind, e.target)).collect(),
            )),
            RawBlock::Line(line) => {
                let (head, edges) = line.split_once(": ").unwrap_or((&line, ""));
                let (range, count) = head.split_once(" (")?;
                let count = count.strip_suffix(')')?.parse().ok()?;
                let (start, _) = range.split_once("..")?;
                let successors = edges
                    .split(", ")
                    .filter(|e| !e.is_empty())
                    .map(|e| {
                        let (kind, target) = e.split_once(' ')?;
                        Some((kind.to_owned(), target.to_owned()))
                    })
                    .collect::<Option<_>>()?;
                Some((start.to_owned(), count, successors))
            }
        }
    }
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
                let (at, mnemonic, operands) = i
                    .parts()
                    .ok_or_else(|| error("an instruction line is not `address  text`".into()))?;
                Ok(Instruction {
                    address: address(&at)?,
                    mnemonic,
                    operands,
                })
            })
            .collect::<Result<_, DossierError>>()?;
        let blocks = raw
            .blocks
            .into_iter()
            .map(|b| {
                let (start, instruction_count, successors) = b.parts().ok_or_else(|| {
                    error("a block line is not `start..end (count): kind target, ...`".into())
                })?;
                Ok(Block {
                    start: address(&start)?,
                    instruction_count,
                    successors: successors
                        .into_iter()
                        .map(|(kind, target)| Ok((kind, address(&target)?)))
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::providers::code::{BasicBlock, Edge, EdgeKind, Flow};
    use crate::tools::shared::listing::{block_line, instruction_line};

    fn read(result: Value) -> Result<Dossier, DossierError> {
        let evidence = super::super::tests::evidence("analyze_function", result);
        Dossier::read("left_evidence_id", &evidence)
    }

    fn dossier(instructions: Value, blocks: Value) -> Value {
        json!({"instructions": instructions, "blocks": blocks, "callees": [],
               "references": [], "truncated": false, "document": "d"})
    }

    const KINDS: [EdgeKind; 4] = [
        EdgeKind::Fallthrough,
        EdgeKind::Jump,
        EdgeKind::ConditionalTaken,
        EdgeKind::ConditionalNotTaken,
    ];

    proptest! {
        /// What analyze_function writes, compare_functions reads back exactly.
        #[test]
        fn listing_lines_read_back_exactly(
            address in any::<u64>(),
            mnemonic in "[a-z0-9.()]{1,12}",
            operands in ".{0,40}",
            start in any::<u64>(),
            count in 0usize..10_000,
            edges in proptest::collection::vec((0usize..4, any::<u64>()), 0..4),
        ) {
            let instruction = crate::providers::code::Instruction {
                address,
                bytes: vec![0x90],
                mnemonic: mnemonic.clone(),
                operands: operands.clone(),
                flow: Flow::Sequential,
                data: None,
            };
            let block = BasicBlock {
                start,
                end: start.saturating_add(1),
                instruction_count: count,
                successors: edges.iter().map(|&(k, target)| Edge { target, kind: KINDS[k] }).collect(),
            };
            let read = read(dossier(
                json!([instruction_line(&instruction)]),
                json!([block_line(&block)]),
            )).unwrap();
            prop_assert_eq!(&read.instructions[0], &Instruction { address, mnemonic, operands });
            let expected: Vec<(String, u64)> = edges
                .iter()
                .map(|&(k, target)| (KINDS[k].as_str().to_owned(), target))
                .collect();
            prop_assert_eq!(&read.blocks[0], &Block { start, instruction_count: count as u64, successors: expected });
        }
    }

    #[test]
    fn records_listed_as_objects_still_read() {
        let read = read(dossier(
            json!([{"address": "0x10", "bytes": "90", "mnemonic": "nop", "operands": ""}]),
            json!([{"start": "0x10", "end": "0x11", "instruction_count": 1,
                    "successors": [{"target": "0x20", "kind": "jump"}]}]),
        ))
        .unwrap();
        assert_eq!(read.instructions[0].mnemonic, "nop");
        assert_eq!(read.blocks[0].successors, vec![("jump".to_owned(), 0x20)]);
    }

    #[test]
    fn a_line_that_is_no_instruction_is_refused() {
        let error = read(dossier(json!(["0x10 nop"]), json!([]))).unwrap_err();
        assert!(error.reason.contains("address  text"), "{error}");
        let error = read(dossier(json!([]), json!(["0x10..0x11"]))).unwrap_err();
        assert!(error.reason.contains("start..end (count)"), "{error}");
    }
}
