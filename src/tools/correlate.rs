//! `correlate_static_and_runtime`: a retained crash capture tied back to
//! the open target's code.
//!
//! The chain is kept explicit, and each link says where it came from:
//! * observed (the capture): the signal, the fault address, the program
//!   counter and the module map of the crashed process;
//! * derived (computed here): the mapping that holds the PC, the file
//!   offset `pc - start + offset` in that module, the virtual address the
//!   file offset has in the open document (through its segments' file
//!   ranges), the procedure covering it and that procedure's direct
//!   callers;
//! * inferred: one sentence about the cause, marked as an inference.
//!
//! Going through the file offset makes PIE and fixed-address executables
//! the same case: a mapping starts wherever the loader put that part of
//! the file, and the segment table says where the file offset lives at
//! link time.

use crate::tools::tool::{Call, Tool};
use std::path::Path;

use serde_json::{Value, json};

use super::inputs::CorrelateStaticAndRuntimeInput;
use super::{HandlerResult, ToolName};
use crate::capture::{Crash, Mapping};
use crate::providers::format_address;
use crate::providers::native::Containment;
use crate::providers::native::LayoutSegment;
use crate::session::Confidence;
use crate::tools::shared::ledger::read_capture;
use crate::tools::shared::procedures::{Scope, parse_address, procedure_ref};

/// Most callers listed (the total is always given).
const MAX_CALLERS: usize = 50;
/// Fault addresses below this are read as a null-pointer dereference (a
/// field of a null struct pointer lands in the first pages).
const NULL_PAGE_LIMIT: u64 = 0x1000;

/// Where the PC lies in the captured module map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleHit<'a> {
    /// The mapping holding `pc`, and the file offset `pc` has in it.
    Mapped {
        mapping: &'a Mapping,
        file_offset: u64,
    },
    /// No file-backed mapping holds `pc` (JIT code, the stack, a wild jump).
    Outside,
}

fn hex(text: &str) -> Option<u64> {
    parse_address(text)
}

/// The mapping of `maps` that holds `address`, with the file offset of
/// `address` in it: `address - start + offset`.
pub fn locate_in_modules(maps: &[Mapping], address: u64) -> ModuleHit<'_> {
    for mapping in maps {
        let (Some(start), Some(end), Some(offset)) =
            (hex(&mapping.start), hex(&mapping.end), hex(&mapping.offset))
        else {
            continue;
        };
        if (start..end).contains(&address)
            && let Some(file_offset) = (address - start).checked_add(offset)
        {
            return ModuleHit::Mapped {
                mapping,
                file_offset,
            };
        }
    }
    ModuleHit::Outside
}

/// The link-time virtual address of `file_offset` through the segments'
/// file ranges `[file_offset, file_offset + file_size)`.
pub fn virtual_address(segments: &[LayoutSegment], file_offset: u64) -> Option<u64> {
    segments.iter().find_map(|segment| {
        let end = segment.file_offset.checked_add(segment.file_size)?;
        if !(segment.file_offset..end).contains(&file_offset) {
            return None;
        }
        hex(&segment.address)?.checked_add(file_offset - segment.file_offset)
    })
}

/// Whether a mapping's path names the target file: both canonical (the
/// process may have run the file through a symlink or another spelling).
pub fn is_target_file(mapping_path: &str, target_file: &Path) -> bool {
    let path = Path::new(mapping_path);
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let target = std::fs::canonicalize(target_file).unwrap_or_else(|_| target_file.to_path_buf());
    canonical == target
}

/// The part of a correlation that needs only the capture and the file:
/// everything up to the virtual address, or why the chain stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mapped {
    /// The PC lies in the target at this link-time virtual address.
    Address {
        module: String,
        file_offset: u64,
        virtual_address: u64,
    },
    /// The chain stops; `module`/`file_offset` when it got that far.
    Stopped {
        reason: String,
        module: Option<String>,
        file_offset: Option<u64>,
    },
}

fn stopped(reason: impl Into<String>) -> Mapped {
    Mapped::Stopped {
        reason: reason.into(),
        module: None,
        file_offset: None,
    }
}

/// Maps the crash's PC into the target file's address space.
pub fn map_crash(crash: Option<&Crash>, target_file: &Path, segments: &[LayoutSegment]) -> Mapped {
    let Some(crash) = crash else {
        return stopped("the capture records no crash: the process did not die of a crash signal");
    };
    let Some(pc) = crash.program_counter.as_deref().and_then(hex) else {
        return stopped(format!(
            "the program counter is unknown: {}",
            crash
                .unknown_reason
                .as_deref()
                .unwrap_or("the capture gives no reason")
        ));
    };
    let (mapping, file_offset) = match locate_in_modules(&crash.module_map, pc) {
        ModuleHit::Mapped {
            mapping,
            file_offset,
        } => (mapping, file_offset),
        ModuleHit::Outside => {
            let mut reason = format!(
                "the program counter {} is outside every file-backed mapping of the captured module map",
                format_address(pc)
            );
            if crash.module_map_truncated {
                reason.push_str(" (the module map was truncated, so it may be in an unlisted one)");
            }
            return stopped(reason);
        }
    };
    if !is_target_file(&mapping.path, target_file) {
        return Mapped::Stopped {
            reason: format!(
                "the program counter is in `{}`, not in the open target `{}`; open that module \
                 with open_binary and correlate again",
                mapping.path,
                target_file.display()
            ),
            module: Some(mapping.path.clone()),
            file_offset: Some(file_offset),
        };
    }
    match virtual_address(segments, file_offset) {
        Some(virtual_address) => Mapped::Address {
            module: mapping.path.clone(),
            file_offset,
            virtual_address,
        },
        None => Mapped::Stopped {
            reason: format!(
                "file offset {} of the target is in no segment's file range of this document",
                format_address(file_offset)
            ),
            module: Some(mapping.path.clone()),
            file_offset: Some(file_offset),
        },
    }
}

/// The observed part: straight from the capture.
fn observed(crash: Option<&Crash>) -> Value {
    match crash {
        None => json!(null),
        Some(c) => json!({
            "signal": c.signal,
            "signal_name": c.signal_name,
            "fault_address": c.fault_address,
            "program_counter": c.program_counter,
            "unknown_reason": c.unknown_reason,
        }),
    }
}

/// Where the fault address lies in the module map, when it lies in one.
fn fault_module(crash: &Crash) -> Value {
    let Some(fault) = crash.fault_address.as_deref().and_then(hex) else {
        return json!(null);
    };
    match locate_in_modules(&crash.module_map, fault) {
        ModuleHit::Mapped {
            mapping,
            file_offset,
        } => json!({"module": mapping.path, "file_offset": format_address(file_offset)}),
        ModuleHit::Outside => json!({"module": null}),
    }
}

/// The one-sentence cause hypothesis, always marked as an inference.
pub fn inference(crash: &Crash, procedure: Option<&str>) -> Option<String> {
    let place = procedure.map(|p| format!(" in {p}")).unwrap_or_default();
    let fault = crash.fault_address.as_deref().and_then(hex);
    let statement = match (crash.signal, fault) {
        (11 | 7, Some(f)) if f < NULL_PAGE_LIMIT => format!(
            "Inference, not observed: a null pointer dereference{place} (the fault address {} is \
             in the first page, which is never mapped)",
            format_address(f)
        ),
        (11 | 7, Some(f)) => format!(
            "Inference, not observed: an invalid memory access{place} at {} (a wild or dangling \
             pointer, or a write to read-only memory)",
            format_address(f)
        ),
        (6, _) => format!(
            "Inference, not observed: the program aborted itself{place} (abort(), a failed \
             assertion or a detected heap corruption)"
        ),
        (8, _) => {
            format!("Inference, not observed: an arithmetic fault{place} (e.g. division by zero)")
        }
        (4, _) => format!(
            "Inference, not observed: an illegal instruction{place} (a trap such as ud2, or a jump into data)"
        ),
        _ => return None,
    };
    Some(statement)
}

pub struct CorrelateStaticAndRuntime;

impl Tool for CorrelateStaticAndRuntime {
    const NAME: ToolName = ToolName::CorrelateStaticAndRuntime;
    const BUILDS_INDEX: bool = true;
    type Input = CorrelateStaticAndRuntimeInput;

    fn run(input: CorrelateStaticAndRuntimeInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let progress = call.progress;
        let capture_id = input.capture_evidence_id.trim();
        let capture = read_capture(session, "capture_evidence_id", capture_id)?;
        let scope = Scope::open(session, input.document.as_deref(), progress)?;
        let layout = scope.target.image.layout(scope.document)?;
        let crash = capture.crash.as_ref();
        let mut reasons = Vec::new();
        let mut derived = json!({});
        let mut procedure_name = None;
        match map_crash(crash, &scope.target.admitted.file_path, &layout.segments) {
            Mapped::Stopped {
                reason,
                module,
                file_offset,
            } => {
                reasons.push(reason);
                derived["module"] = json!(module);
                derived["file_offset"] = json!(file_offset.map(format_address));
            }
            Mapped::Address {
                module,
                file_offset,
                virtual_address,
            } => {
                derived["module"] = json!(module);
                derived["file_offset"] = json!(format_address(file_offset));
                derived["virtual_address"] = json!(format_address(virtual_address));
                let location = scope.target.locate(scope.document, virtual_address)?;
                match location.containment {
                    Containment::Procedure { start, end, .. } => {
                        let procedure = procedure_ref(&scope.index, start);
                        procedure_name = procedure["name"].as_str().map(str::to_owned);
                        derived["procedure"] = json!({
                            "procedure": procedure,
                            "start": format_address(start),
                            "end": format_address(end),
                            "offset": virtual_address - start,
                        });
                        derived["callers"] = callers(&scope, start)?;
                    }
                    Containment::NotInProcedure | Containment::NotCode => reasons.push(format!(
                        "virtual address {} is in no known procedure of {}",
                        format_address(virtual_address),
                        scope.name
                    )),
                }
            }
        }
        if let Some(c) = crash {
            derived["fault_address_module"] = fault_module(c);
        }
        let inferred = crash
            .filter(|_| reasons.is_empty())
            .and_then(|c| inference(c, procedure_name.as_deref()));
        let status = if reasons.is_empty() {
            "correlated"
        } else {
            "unknown"
        };
        let result = json!({
            "status": status,
            "reasons": reasons,
            "document": scope.name,
            "capture_evidence_id": capture_id,
            "observed": observed(crash),
            "derived": derived,
            "inferred": inferred.map(|statement| json!({"statement": statement, "confidence": "inferred"})),
        });
        let mut limitations = vec![
        "callers are direct calls only; callers through function pointers or tables are not seen"
            .to_owned(),
        "the cause is an inference from the signal and fault address, not an observation"
            .to_owned(),
    ];
        if crash.is_some_and(|c| c.module_map_truncated) {
            limitations.push("the captured module map was truncated".to_owned());
        }
        let parameters = json!({"capture_evidence_id": capture_id, "document": scope.name});
        let mut draft = scope.target.observation(
            ToolName::CorrelateStaticAndRuntime.as_str(),
            scope.target.document_subject(scope.document),
            parameters,
            result.clone(),
            limitations,
        );
        draft.confidence = Confidence::Derived;
        let evidence = session.record(draft)?;
        Ok((result, Some(evidence)))
    }
}

/// The distinct procedures that call `entry` directly, capped.
fn callers(scope: &Scope, entry: u64) -> Result<Value, super::ToolError> {
    let edges = scope.target.callers(scope.document, entry)?;
    let mut starts: Vec<Option<u64>> = edges.iter().map(|e| e.caller).collect();
    starts.sort_unstable();
    starts.dedup();
    let items: Vec<Value> = starts
        .iter()
        .take(MAX_CALLERS)
        .map(|s| match s {
            Some(start) => procedure_ref(&scope.index, *start),
            None => json!({"address": null, "outside_procedures": true}),
        })
        .collect();
    Ok(json!({
        "items": items,
        "total": starts.len(),
        "capped": starts.len() > MAX_CALLERS,
    }))
}

#[cfg(test)]
#[path = "correlate_tests.rs"]
mod tests;
