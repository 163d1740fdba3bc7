//! `procedure_pseudo_code`: procedures as C, from the built-in decompiler
//! (`crate::decompiler`), paged by lines with each line's instruction
//! addresses, or as an outline. One Evidence record per procedure.
//!
//! The session is held only to resolve the procedures and to record what
//! came back; the decompiling runs on the shared worker pool meanwhile, so
//! a slow procedure holds up nobody else.

use serde_json::{Value, json};

use super::inputs::{PseudoCodeInput, PseudoCodeView};
use super::shared::listing::shown_string;
use super::shared::procedures::{Scope, procedure_ref, resolve};
use super::{Call, HandlerResult, Tool, ToolError, ToolName};
use crate::decompiler::protocol::{Decompiled, ENGINE, ENGINE_VERSION};
use crate::decompiler::{Source, WorkerFailure, from_native, view};
use crate::providers::{Source as Found, format_address};
use crate::session::SessionError;

/// Most procedures one call decompiles.
pub const MAX_PROCEDURES: usize = 64;
/// Lines of C (or outline entries) on a page unless `limit` says.
const DEFAULT_LIMIT: usize = 200;
const MAX_LIMIT: usize = 5_000;
/// Bytes of C a default answer carries over all its procedures, and the
/// most any answer carries; each procedure gets its share.
const DEFAULT_ANSWER_BUDGET: usize = 24 << 10;
const MAX_ANSWER_BUDGET: usize = 1 << 20;
/// The smallest share of one procedure.
const MIN_SHARE: usize = 2 << 10;
/// Callees and strings listed per procedure.
const SHOWN_CALLEES: usize = 100;
const SHOWN_STRINGS: usize = 50;

pub struct ProcedurePseudoCode;

impl Tool for ProcedurePseudoCode {
    const NAME: ToolName = ToolName::ProcedurePseudoCode;
    const BUILDS_INDEX: bool = true;
    type Input = PseudoCodeInput;

    fn run(input: PseudoCodeInput, call: &Call<'_>) -> HandlerResult {
        if input.procedures.is_empty() || input.procedures.len() > MAX_PROCEDURES {
            return Err(ToolError::invalid_arguments(format!(
                "procedures lists {} entries; give 1-{MAX_PROCEDURES}",
                input.procedures.len()
            )));
        }
        let limit = input.limit.map_or(DEFAULT_LIMIT, |l| l as usize);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(ToolError::invalid_arguments(format!(
                "limit {limit} is outside 1-{MAX_LIMIT}"
            )));
        }
        let offset = input.offset.unwrap_or(0) as usize;
        let view = input.view.unwrap_or(PseudoCodeView::Code);
        let budget = match input.limit {
            None => DEFAULT_ANSWER_BUDGET,
            Some(_) => MAX_ANSWER_BUDGET,
        };
        let share = (budget / input.procedures.len()).max(MIN_SHARE);
        let scope = Scope::open(&call.session(), input.document.as_deref(), call.progress)?;
        let image = &scope.target.image;
        let in_file = from_native::file_backed(image, scope.document)?;
        let mut wanted = Vec::with_capacity(input.procedures.len());
        for query in &input.procedures {
            let procedure = resolve(&scope.index, query)?;
            let imported_only =
                procedure.sources.contains(Found::Import) && procedure.sources.names().len() == 1;
            let no_code = if imported_only {
                Some((
                    "no_code",
                    "an imported function has no code in this file; see its callers",
                ))
            } else if !in_file.contains(procedure.address) {
                Some((
                    "not_in_file",
                    "the file does not hold the bytes at this address (a truncated or virtual section); nothing was decoded",
                ))
            } else {
                None
            };
            wanted.push((procedure.address, no_code));
        }
        let document_key = format!("{}:{}:{ENGINE_VERSION}", image.sha256(), scope.document);
        let pool = crate::decompiler::shared();
        let (knowledge, digest) = pool.knowledge(&document_key, || {
            from_native::knowledge_of(image, scope.document)
        })?;
        let source = Source {
            document_key,
            bytes: image.document_bytes(scope.document),
            knowledge,
            digest: digest.clone(),
        };
        let with_code: Vec<u64> = wanted
            .iter()
            .filter(|(_, no_code)| no_code.is_none())
            .map(|(a, _)| *a)
            .collect();
        let stop = || (call.interrupted)().is_some();
        let outcomes = pool.decompile_all(&source, &with_code, &stop);
        if let Some(reason) = (call.interrupted)() {
            return Err(SessionError::Interrupted(reason).into());
        }
        let strings = image.strings(scope.document)?;
        let mut outcomes = outcomes.into_iter();
        let mut session = call.session();
        let mut items = Vec::with_capacity(wanted.len());
        let mut complete = 0;
        for (address, no_code) in wanted {
            let mut item = json!({"procedure": procedure_ref(&scope.index, address)});
            let mut limitations = Vec::new();
            if let Some((reason, detail)) = no_code {
                incomplete(&mut item, reason, detail);
            } else {
                match outcomes.next().unwrap_or(Err(WorkerFailure::Cancelled)) {
                    Ok(done) => {
                        complete += 1;
                        item["outcome"] = json!("complete");
                        let page = Page {
                            offset,
                            limit,
                            share,
                        };
                        let cut = describe(&mut item, &done, address, view, &page, &strings);
                        limitations.extend(cut);
                    }
                    Err(failure) => {
                        let reason = match failure {
                            WorkerFailure::Timeout { .. } => "timeout",
                            WorkerFailure::Cancelled => "cancelled",
                            WorkerFailure::Refused(_) => "engine_refused",
                            _ => "decompiler_failed",
                        };
                        incomplete(&mut item, reason, &failure.to_string());
                    }
                }
            }
            let parameters = json!({
                "document": scope.name,
                "procedure": format_address(address),
                "decompiler": ENGINE,
                "decompiler_version": ENGINE_VERSION,
                "knowledge": digest,
                "view": view.as_str(),
                "offset": offset,
                "limit": limit,
            });
            let draft = scope.target.file_observation(
                ToolName::ProcedurePseudoCode.as_str(),
                scope.target.document_subject(scope.document),
                parameters,
                item.clone(),
                limitations,
            );
            let evidence = session.record(draft)?;
            item["evidence_id"] = json!(evidence.evidence_id);
            items.push(item);
        }
        let result = json!({
            "document": scope.name,
            "procedures_total": items.len(),
            "complete": complete,
            "procedures": items,
        });
        Ok((result, None))
    }
}

/// Where a page starts, how long it may be, and its byte share.
struct Page {
    offset: usize,
    limit: usize,
    share: usize,
}

fn incomplete(item: &mut Value, reason: &str, detail: &str) {
    item["outcome"] = json!("incomplete");
    item["reason"] = json!(reason);
    item["detail"] = json!(detail);
}

/// Fills `item` with the page of `done` that `page` asks for; a sentence
/// when the byte share cut the page short.
fn describe(
    item: &mut Value,
    done: &Decompiled,
    entry: u64,
    view: PseudoCodeView,
    page: &Page,
    strings: &crate::providers::native::StringTable,
) -> Option<String> {
    item["signature"] = json!(view::signature(&done.lines));
    item["total_lines"] = json!(done.lines.len());
    let mut cut = None;
    match view {
        PseudoCodeView::Code => {
            let shown = fit(
                done.lines[page.offset.min(done.lines.len())..]
                    .iter()
                    .map(|l| l.text.len() + 4 + 6 * l.addresses.len()),
                page,
            );
            let end = page.offset.min(done.lines.len()) + shown;
            let lines = &done.lines[page.offset.min(end)..end];
            item["offset"] = json!(page.offset);
            item["lines"] = json!(lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>());
            item["address_map"] = json!(view::address_map(lines, entry));
            if end < done.lines.len() {
                item["next_offset"] = json!(end);
                if shown < page.limit {
                    cut = Some(format!(
                        "the page stops after {shown} lines to keep the answer within its \
                         share of {} bytes; continue at offset {end}",
                        page.share
                    ));
                }
            }
        }
        PseudoCodeView::Outline => {
            let outline = view::outline(done);
            let shown = fit(
                outline[page.offset.min(outline.len())..]
                    .iter()
                    .map(|(_, t)| t.len() + 10),
                page,
            );
            let start = page.offset.min(outline.len());
            let end = start + shown;
            item["offset"] = json!(page.offset);
            item["outline_total"] = json!(outline.len());
            item["outline"] = json!(
                outline[start..end]
                    .iter()
                    .map(|(n, t)| json!([n, t]))
                    .collect::<Vec<_>>()
            );
            if end < outline.len() {
                item["next_offset"] = json!(end);
            }
        }
    }
    item["callees"] = json!(
        done.callees
            .iter()
            .take(SHOWN_CALLEES)
            .map(|c| {
                let mut callee = json!({"name": c.name, "call_site": format_address(c.call_site)});
                if let Some(address) = c.address {
                    callee["address"] = json!(format_address(address));
                }
                callee
            })
            .collect::<Vec<_>>()
    );
    if done.callees.len() > SHOWN_CALLEES {
        item["callees_total"] = json!(done.callees.len());
    }
    item["strings"] = json!(
        done.strings
            .iter()
            .take(SHOWN_STRINGS)
            .filter_map(|&address| strings.covering(address).map(|found| (address, found)))
            .map(|(address, found)| {
                let (value, chars) = shown_string(&found.value);
                let mut string = json!({"address": format_address(address), "value": value});
                if let Some(chars) = chars {
                    string["chars"] = json!(chars);
                }
                string
            })
            .collect::<Vec<_>>()
    );
    if done.strings.len() > SHOWN_STRINGS {
        item["strings_total"] = json!(done.strings.len());
    }
    cut
}

/// How many of the items (their byte costs given) fit the page: at most its
/// limit, within its share, and always at least one.
fn fit(costs: impl Iterator<Item = usize>, page: &Page) -> usize {
    let mut used = 0;
    let mut count = 0;
    for cost in costs.take(page.limit) {
        if count > 0 && used + cost > page.share {
            break;
        }
        used += cost;
        count += 1;
    }
    count
}

impl PseudoCodeView {
    fn as_str(self) -> &'static str {
        match self {
            PseudoCodeView::Code => "code",
            PseudoCodeView::Outline => "outline",
        }
    }
}
