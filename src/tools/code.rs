//! Code tools: which procedure holds an address, a function's dossier,
//! references to an address, and a procedure's callers and callees.

use crate::tools::errors::ErrorCode;
use crate::tools::tool::{Call, Tool};
use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::inputs::{
    AnalyzeFunctionInput, ProcedureCallsInput, ResolveContainingProcedureInput, XrefsInput,
};
use super::paging::PageRequest;
use super::shared::listing::{block_line, instruction_line, shown_string};
use super::shared::procedures::{Scope, import_facts, parse_address, procedure_ref, resolve};
use super::{HandlerResult, ToolError, ToolName};
use crate::providers::code::{CallEdge, CallKind, Flow, FunctionDossier};
use crate::providers::format_address;
use crate::providers::native::{Containment, PointerUses, Progress, StringTable};
use crate::session::{ProcedureIndex, Session};

/// Default and cap of `analyze_function`'s listing.
const DEFAULT_MAX_INSTRUCTIONS: u32 = 300;
/// Bytes the listing of a dossier (instructions, blocks, references,
/// callees) may take: by default (so the default answer stays under 32
/// KiB however long the file's instructions, strings and names are), and
/// when the call asks for a `max_instructions` (so the largest answer stays
/// under the 4 MiB ceiling of every answer).
const DEFAULT_LISTING_BYTES: usize = 20 << 10;
const MAX_LISTING_BYTES: usize = 3 << 20;
/// Most callers a dossier lists (the total is always given).
const DOSSIER_CALLERS: usize = 50;

fn address_argument(text: &str) -> Result<u64, ToolError> {
    parse_address(text.trim()).ok_or_else(|| {
        ToolError::invalid_arguments(format!(
            "`{}` is not an address; write it as 0x-prefixed hex (e.g. 0x401000) or decimal",
            text.trim()
        ))
    })
}

pub struct ResolveContainingProcedure;

impl Tool for ResolveContainingProcedure {
    const NAME: ToolName = ToolName::ResolveContainingProcedure;
    const BUILDS_INDEX: bool = true;
    type Input = ResolveContainingProcedureInput;

    fn run(input: ResolveContainingProcedureInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let progress = call.progress;
        let address = address_argument(&input.address)?;
        let scope = Scope::open(session, input.document.as_deref(), progress)?;
        let location = scope.target.locate(scope.document, address)?;
        let spelled = format_address(address);
        let (start, end) = match location.containment {
            Containment::Procedure { start, end, .. } => (start, end),
            Containment::NotInProcedure | Containment::NotCode if !location.mapped => {
                return Err(ToolError::new(
                    ErrorCode::OutsideSegments,
                    format!("{spelled} is not inside any segment of {}", scope.name),
                ));
            }
            Containment::NotInProcedure => {
                return Err(ToolError::new(
                    ErrorCode::NotInProcedure,
                    format!(
                        "{spelled} is in executable code of {} that no known procedure covers",
                        scope.name
                    ),
                ));
            }
            Containment::NotCode => {
                return Err(ToolError::new(
                    ErrorCode::NotCode,
                    format!(
                        "{spelled} is mapped{} but is not executable code",
                        location
                            .segment
                            .as_deref()
                            .map(|s| format!(" (segment {s})"))
                            .unwrap_or_default()
                    ),
                ));
            }
        };
        // Without a stated size the extent runs to the next known start, so it
        // may cover a procedure nobody found: say which kind of end this is.
        let stated = scope
            .index
            .procedure_at(start)
            .is_some_and(|p| p.size.is_some());
        let mut result = json!({
            "document": scope.name,
            "address": spelled,
            "procedure": procedure_ref(&scope.index, start),
            "procedure_end": format_address(end),
            "extent": if stated { "stated_size" } else { "until_next_start" },
            "offset": address - start,
        });
        if let Some(segment) = &location.segment {
            result["segment"] = json!(segment);
        }
        let parameters = json!({"document": scope.name, "address": spelled});
        scope.observe(
            session,
            ToolName::ResolveContainingProcedure,
            parameters,
            result,
            Vec::new(),
        )
    }
}

pub struct AnalyzeFunction;

impl Tool for AnalyzeFunction {
    const NAME: ToolName = ToolName::AnalyzeFunction;
    const BUILDS_INDEX: bool = true;
    type Input = AnalyzeFunctionInput;

    fn run(input: AnalyzeFunctionInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let progress = call.progress;
        let max = input.max_instructions.unwrap_or(DEFAULT_MAX_INSTRUCTIONS);
        if !(1..=20_000).contains(&max) {
            return Err(ToolError::invalid_arguments(format!(
                "max_instructions {max} is outside 1-20000"
            )));
        }
        let budget = match input.max_instructions {
            None => DEFAULT_LISTING_BYTES,
            Some(_) => MAX_LISTING_BYTES,
        };
        let scope = Scope::open(session, input.document.as_deref(), progress)?;
        let procedure = resolve(&scope.index, &input.procedure)?.clone();
        let mut dossier = scope
            .target
            .function(scope.document, procedure.address, max as usize)?;
        let strings = scope.target.image.strings(scope.document)?;
        let mut callees = callees_json(&scope, &dossier)?;
        let mut cut = None;
        if let Some(fits) = listing_fit(&dossier, &strings, &callees, budget) {
            // The same dossier, shorter: its blocks and edges end where the
            // listing does.
            dossier = scope
                .target
                .function(scope.document, procedure.address, fits.max(1))?;
            callees = callees_json(&scope, &dossier)?;
            cut = Some(dossier.instructions.len());
        }
        let callers = scope.target.callers(scope.document, procedure.address)?;
        let mut result = dossier_json(&dossier, &strings);
        result["callees"] = json!(callees);
        if cut.is_some() {
            result["truncated"] = json!(true);
        }
        result["document"] = json!(scope.name);
        result["procedure"] = procedure_ref(&scope.index, procedure.address);
        result["procedure"]["found_by"] = json!(procedure.sources.names());
        result["callers"] = json!(
            callers
                .iter()
                .take(DOSSIER_CALLERS)
                .map(|edge| caller_json(edge, &scope.index))
                .collect::<Vec<_>>()
        );
        result["callers_total"] = json!(callers.len());
        let mut limitations = dossier.limitations.clone();
        if let Some(listed) = cut {
            limitations.push(format!(
                "the listing stops after {listed} instructions to keep the answer within \
                 {budget} bytes of listing (long instructions, strings or names); the rest of \
                 the procedure is not shown"
            ));
        }
        limitations.push(
            "callers are direct calls, tail calls (tail_call) and calls through import stubs and \
         slots; calls through other pointers, vtables or tables are not seen"
                .to_owned(),
        );
        let parameters = json!({
            "document": scope.name,
            "procedure": format_address(procedure.address),
            "max_instructions": max,
        });
        scope.observe(
            session,
            ToolName::AnalyzeFunction,
            parameters,
            result,
            limitations,
        )
    }
}

/// One reference of a dossier; a string it points into is shown in part
/// ([`shown_string`]), with its length when cut.
fn reference_json(xref: &crate::providers::code::Xref, strings: &StringTable) -> Value {
    let mut value = json!({
        "at": format_address(xref.from),
        "target": format_address(xref.to),
        "kind": xref.kind.as_str(),
    });
    if let Some(found) = strings.covering(xref.to) {
        let (shown, chars) = shown_string(&found.value);
        value["string"] = json!(shown);
        if let Some(chars) = chars {
            value["string_chars"] = json!(chars);
        }
        value["string_address"] = json!(format_address(found.address));
    }
    value
}

/// How many of the dossier's instructions fit `budget` bytes of listing,
/// each counted with its line, the line of the block it starts, and its
/// references and callees; `None` when all do.
fn listing_fit(
    dossier: &FunctionDossier,
    strings: &StringTable,
    callees: &[Value],
    budget: usize,
) -> Option<usize> {
    let mut extra: BTreeMap<u64, usize> = BTreeMap::new();
    for block in &dossier.blocks {
        *extra.entry(block.start).or_default() += block_line(block).len() + 3;
    }
    for xref in &dossier.references {
        *extra.entry(xref.from).or_default() += reference_json(xref, strings).to_string().len() + 1;
    }
    for callee in callees {
        let at = callee["at"].as_str().and_then(parse_address).unwrap_or(0);
        *extra.entry(at).or_default() += callee.to_string().len() + 1;
    }
    let mut used = 0usize;
    for (listed, instruction) in dossier.instructions.iter().enumerate() {
        used += instruction_line(instruction).len()
            + 3
            + extra.get(&instruction.address).copied().unwrap_or(0);
        if used > budget {
            return Some(listed);
        }
    }
    None
}

fn dossier_json(dossier: &FunctionDossier, strings: &StringTable) -> Value {
    let blocks: Vec<String> = dossier.blocks.iter().map(block_line).collect();
    let references: Vec<Value> = dossier
        .references
        .iter()
        .map(|xref| reference_json(xref, strings))
        .collect();
    let unresolved: Vec<Value> = dossier
        .unresolved
        .iter()
        .map(|u| json!({"at": format_address(u.at), "kind": u.kind.as_str()}))
        .collect();
    json!({
        "entry": format_address(dossier.entry),
        "end": dossier.end.map(format_address),
        "instructions": dossier.instructions.iter().map(instruction_line).collect::<Vec<_>>(),
        "blocks": blocks,
        "references": references,
        "unresolved": unresolved,
        "truncated": dossier.truncated,
    })
}

fn caller_json(edge: &CallEdge, index: &ProcedureIndex) -> Value {
    let mut value = json!({
        "at": format_address(edge.at),
        "procedure": edge.caller.map(|entry| procedure_ref(index, entry)),
    });
    if edge.kind == CallKind::TailCall {
        value["tail_call"] = json!(true);
    }
    value
}

/// The dossier's calls, each to the procedure it reaches: through an
/// import's stub or slot (`through`), or directly. A call through a slot
/// that is no import's (a function pointer in data) is not a callee; it
/// stays in `unresolved`, where the dossier lists every indirect call.
fn callees_json(scope: &Scope, dossier: &FunctionDossier) -> Result<Vec<Value>, ToolError> {
    let instructions = &dossier.instructions;
    let mut callees = Vec::with_capacity(dossier.callees.len());
    for call in &dossier.callees {
        let resolved = scope.target.call_target(scope.document, call.target)?;
        // The listing is in address order.
        let direct = instructions
            .binary_search_by_key(&call.at, |instruction| instruction.address)
            .ok()
            .and_then(|i| instructions.get(i))
            .is_none_or(|instruction| matches!(instruction.flow, Flow::Call { .. }));
        if !direct && scope.index.procedure_at(resolved).is_none() {
            continue;
        }
        let mut value = json!({
            "at": format_address(call.at),
            "target": procedure_ref(&scope.index, resolved),
        });
        if resolved != call.target {
            value["through"] = json!(format_address(call.target));
        }
        callees.push(value);
    }
    Ok(callees)
}

pub struct Xrefs;

impl Tool for Xrefs {
    const NAME: ToolName = ToolName::Xrefs;
    const BUILDS_INDEX: bool = true;
    type Input = XrefsInput;

    fn run(input: XrefsInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let progress = call.progress;
        let page = PageRequest::new(input.offset, input.limit, 100, 500)?;
        let scope = Scope::open(session, input.document.as_deref(), progress)?;
        let address = match parse_address(input.address.trim()) {
            Some(address) => address,
            None => resolve(&scope.index, &input.address)?.address,
        };
        let wanted = usize::try_from(page.offset.saturating_add(u64::from(page.limit)))
            .unwrap_or(usize::MAX);
        // An import is also reached through its other stubs and its slots.
        let aliases = scope.target.aliases(scope.document, address)?;
        let (upto_page, total) = if aliases.is_empty() {
            scope
                .target
                .xrefs_to(scope.document, address, address.saturating_add(1), wanted)?
        } else {
            let mut all = Vec::new();
            let mut total = 0;
            for target in std::iter::once(address).chain(aliases) {
                let (found, count) = scope.target.xrefs_to(
                    scope.document,
                    target,
                    target.saturating_add(1),
                    usize::MAX,
                )?;
                total += count;
                all.extend(found);
            }
            all.sort_unstable_by_key(|xref| (xref.from, xref.to));
            all.truncate(wanted);
            (all, total)
        };
        let skip = usize::try_from(page.offset).unwrap_or(usize::MAX);
        let items: Vec<Value> = upto_page
            .iter()
            .skip(skip)
            .map(|xref| {
                let procedure = match scope.target.containing_procedure(scope.document, xref.from) {
                    Ok(Some(start)) => procedure_ref(&scope.index, start),
                    _ => Value::Null,
                };
                let mut item = json!({
                    "from": format_address(xref.from),
                    "kind": xref.kind.as_str(),
                    "procedure": procedure,
                });
                if xref.to != address {
                    item["to"] = json!(format_address(xref.to));
                }
                item
            })
            .collect();
        let spelled = format_address(address);
        let mut result = json!({"document": scope.name, "address": spelled, "items": items});
        page.annotate(total, &mut result);
        let mut limitations = vec![
            "items are the references instructions make directly; addresses computed at run time \
         are not seen"
                .to_owned(),
        ];
        // The data slots pointing here come with the first page.
        if page.offset == 0 {
            match scope.target.pointer_uses(
                scope.document,
                address,
                MAX_POINTER_SLOTS,
                MAX_CALL_SITES_LISTED,
            )? {
                Some(uses) if uses.total_slots > 0 => {
                    result["pointers"] = pointers_json(&scope, &uses)?;
                    limitations.extend(uses.limitations);
                    limitations.push(TABLE_MEDIATED.to_owned());
                }
                Some(_) => {}
                None => limitations.push(
                    "pointers in data are not read under this provider; open with the native \
                 provider to see them"
                        .to_owned(),
                ),
            }
        }
        let parameters = json!({
            "document": scope.name,
            "address": spelled,
            "offset": page.offset,
            "limit": page.limit,
        });
        scope.observe(session, ToolName::Xrefs, parameters, result, limitations)
    }
}

/// One call site: where, and whether it is a tail call.
type Site = (u64, CallKind);

/// Data slots listed per address in one answer (the total is given).
pub const MAX_POINTER_SLOTS: usize = 16;

/// What a table-mediated use is, for the limitations of every answer that
/// lists one.
pub const TABLE_MEDIATED: &str = "pointers lists data slots holding the address, each with its \
     table (the run of pointer slots around it, at most 64 bytes apart) and the instructions that \
     refer into that table: that they use this slot is derived, not observed, and several users of \
     one table are all listed";

/// `{total, source, items: [{slot, table, used_by, used_by_total}]}` for
/// the data slots pointing at one address.
pub(crate) fn pointers_json(scope: &Scope, uses: &PointerUses) -> Result<Value, ToolError> {
    let mut items = Vec::with_capacity(uses.uses.len());
    for used in &uses.uses {
        let mut users = Vec::with_capacity(used.users.len());
        for xref in &used.users {
            let procedure = scope
                .target
                .containing_procedure(scope.document, xref.from)?
                .map(|start| procedure_ref(&scope.index, start));
            users.push(json!({"at": format_address(xref.from), "procedure": procedure}));
        }
        items.push(json!({
            "slot": format_address(used.slot),
            "table": format_address(used.table.0),
            "table_end": format_address(used.table.1),
            "used_by": users,
            "used_by_total": used.users_total,
        }));
    }
    Ok(json!({
        "total": uses.total_slots,
        "source": uses.source.as_str(),
        "items": items,
    }))
}

/// Call edges grouped by the procedure on the other end, in address order
/// (`None`, calls from code outside every procedure, last).
fn grouped(
    edges: &[CallEdge],
    other_end: impl Fn(&CallEdge) -> Option<u64>,
) -> Vec<(Option<u64>, Vec<Site>)> {
    let mut groups: BTreeMap<(bool, u64), Vec<Site>> = BTreeMap::new();
    for edge in edges {
        let key = match other_end(edge) {
            Some(entry) => (false, entry),
            None => (true, 0),
        };
        groups.entry(key).or_default().push((edge.at, edge.kind));
    }
    groups
        .into_iter()
        .map(|((outside, entry), sites)| ((!outside).then_some(entry), sites))
        .collect()
}

/// Call sites listed per procedure in one answer; the rest are counted
/// (`call_sites_omitted`) and `xrefs` on the callee pages through them all.
/// Pages bound the procedures, this bounds the sites inside each, so one
/// procedure called from millions of places cannot fill an answer.
pub const MAX_CALL_SITES_LISTED: usize = 32;

fn calls_result(
    scope: &Scope,
    page: PageRequest,
    procedure: u64,
    groups: &[(Option<u64>, Vec<Site>)],
) -> Value {
    let items: Vec<Value> = page
        .slice(groups)
        .iter()
        .map(|(entry, sites)| {
            let listed = &sites[..sites.len().min(MAX_CALL_SITES_LISTED)];
            let of_kind = |kind: CallKind| {
                listed
                    .iter()
                    .filter(|(_, k)| *k == kind)
                    .map(|&(at, _)| format_address(at))
                    .collect::<Vec<_>>()
            };
            let mut item = json!({
                "procedure": entry.map(|e| procedure_ref(&scope.index, e)),
                "call_sites": of_kind(CallKind::Call),
            });
            let tail_calls = of_kind(CallKind::TailCall);
            if !tail_calls.is_empty() {
                item["tail_call_sites"] = json!(tail_calls);
            }
            if sites.len() > MAX_CALL_SITES_LISTED {
                item["call_sites_omitted"] = json!(sites.len() - MAX_CALL_SITES_LISTED);
            }
            item
        })
        .collect();
    let mut result = json!({
        "document": scope.name,
        "procedure": procedure_ref(&scope.index, procedure),
        "items": items,
    });
    if let Some(procedure) = scope.index.procedure_at(procedure) {
        import_facts(procedure, &mut result["procedure"]);
    }
    page.annotate(groups.len(), &mut result);
    result
}

pub struct ProcedureCallers;

impl Tool for ProcedureCallers {
    const NAME: ToolName = ToolName::ProcedureCallers;
    const BUILDS_INDEX: bool = true;
    type Input = ProcedureCallsInput;

    fn run(input: ProcedureCallsInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let progress = call.progress;
        procedure_calls(input, session, progress, ToolName::ProcedureCallers)
    }
}

pub struct ProcedureCallees;

impl Tool for ProcedureCallees {
    const NAME: ToolName = ToolName::ProcedureCallees;
    const BUILDS_INDEX: bool = true;
    type Input = ProcedureCallsInput;

    fn run(input: ProcedureCallsInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let progress = call.progress;
        procedure_calls(input, session, progress, ToolName::ProcedureCallees)
    }
}

fn procedure_calls(
    input: ProcedureCallsInput,
    session: &mut Session,
    progress: Progress<'_>,
    tool: ToolName,
) -> HandlerResult {
    let page = PageRequest::new(input.offset, input.limit, 100, 500)?;
    let scope = Scope::open(session, input.document.as_deref(), progress)?;
    let entry = resolve(&scope.index, &input.procedure)?.address;
    let (groups, limitation) = if tool == ToolName::ProcedureCallers {
        let edges = scope.target.callers(scope.document, entry)?;
        (
            grouped(&edges, |edge| edge.caller),
            "calls, tail calls (tail_call_sites) and calls through import stubs and slots are \
             listed; callers through other function pointers, vtables or tables are not seen",
        )
    } else {
        let edges = scope.target.callees(scope.document, entry)?;
        (
            grouped(&edges, |edge| Some(edge.callee)),
            "calls, tail calls (tail_call_sites) and calls through import stubs and slots are \
             listed; other indirect calls are counted under unresolved",
        )
    };
    let mut result = calls_result(&scope, page, entry, &groups);
    let mut limitations = vec![limitation.to_owned()];
    if groups
        .iter()
        .any(|(_, sites)| sites.len() > MAX_CALL_SITES_LISTED)
    {
        limitations.push(format!(
            "call_sites lists at most {MAX_CALL_SITES_LISTED} sites per procedure \
             (call_sites_omitted counts the rest); xrefs on the called address pages through all"
        ));
    }
    if tool == ToolName::ProcedureCallees {
        let unresolved = scope.target.unresolved(scope.document, entry)?;
        result["unresolved"] = json!(unresolved.len());
        if !unresolved.is_empty() {
            limitations.push(format!(
                "{} indirect call(s) or jump(s) in this procedure may reach procedures not listed",
                unresolved.len()
            ));
        }
    }
    let parameters = json!({
        "document": scope.name,
        "procedure": format_address(entry),
        "offset": page.offset,
        "limit": page.limit,
    });
    scope.observe(session, tool, parameters, result, limitations)
}
