//! Name-level procedure tools: search by name (raw and demangled) and
//! resolve a name or address to its canonical entry address.

use serde_json::{Value, json};

use super::inputs::{ProcedureAddressInput, SearchInput};
use super::search::Search;
use super::{HandlerResult, ToolError, ToolName};
use crate::ground::suggest;
use crate::providers::{Procedure, Source, format_address};
use crate::session::{ProcedureIndex, Session};

/// Most candidates listed when a name is ambiguous.
const MAX_LISTED_CANDIDATES: usize = 20;
/// "Did you mean" scans names only for inventories up to this size.
const MAX_SUGGESTION_SCAN: usize = 50_000;

fn names(p: &Procedure) -> impl Iterator<Item = &String> {
    p.name.iter().chain(&p.aliases)
}

fn item(p: &Procedure, matched: &str, index: &ProcedureIndex) -> Value {
    let mut item = json!({"address": format_address(p.address), "matched_name": matched});
    if let Some(n) = &p.name {
        item["name"] = json!(n);
    }
    if let Some(d) = index.demangled(matched) {
        item["demangled"] = json!(d);
    }
    import_facts(p, &mut item);
    item
}

/// Marks an imported function (`imported`, and its `library` when the file
/// names one), so an agent knows it has callers here but no code.
pub(crate) fn import_facts(p: &Procedure, item: &mut Value) {
    if p.sources.contains(Source::Import) {
        item["imported"] = json!(true);
        if let Some(library) = &p.library {
            item["library"] = json!(library);
        }
    }
}

pub(crate) fn search_procedures(input: SearchInput, session: &mut Session) -> HandlerResult {
    let search = Search::new(&input)?;
    let target = session.require_target()?.clone();
    let document = session.document_index(input.document.as_deref())?;
    let name = target.image.documents()[document].name.clone();
    let index = target.procedure_index(document)?;
    let pattern = &search.pattern;
    let matches: Vec<Value> = index
        .inventory
        .procedures
        .iter()
        .filter_map(|p| {
            names(p)
                .find(|n| {
                    pattern.is_match(n) || index.demangled(n).is_some_and(|d| pattern.is_match(d))
                })
                .map(|matched| item(p, matched, &index))
        })
        .collect();
    let mut limitations = Vec::new();
    if index.inventory.truncated {
        limitations.push(
            "the procedure inventory is truncated at its cap; procedures beyond it were not searched"
                .to_string(),
        );
    }
    let result = search.page(&name, matches, index.inventory.truncated);
    let draft = target.observation(
        ToolName::SearchProcedures.as_str(),
        target.document_subject(document),
        search.parameters(&name),
        result.clone(),
        limitations,
    );
    let evidence = session.record(draft)?;
    Ok((result, Some(evidence)))
}

/// The one procedure a name (raw or demangled, exact) or entry address
/// names; an ambiguous name is an error listing the candidates.
pub(crate) fn resolve<'i>(
    index: &'i ProcedureIndex,
    query: &str,
) -> Result<&'i Procedure, ToolError> {
    let query = query.trim();
    if query.is_empty() {
        return Err(ToolError::invalid_arguments(
            "procedure is empty; give a name or an address",
        ));
    }
    let procedures = &index.inventory.procedures;
    let found: Vec<&Procedure> = match parse_address(query) {
        Some(address) => index.procedure_at(address).into_iter().collect(),
        None => procedures
            .iter()
            .filter(|p| names(p).any(|n| n == query || index.demangled(n) == Some(query)))
            .collect(),
    };
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(not_found(query, parse_address(query).is_some(), index)),
        many => {
            let listed: Vec<String> = many
                .iter()
                .take(MAX_LISTED_CANDIDATES)
                .map(|p| format_address(p.address))
                .collect();
            Err(ToolError::new(
                "ambiguous_procedure",
                format!(
                    "`{query}` names {} procedures: {}{}",
                    many.len(),
                    listed.join(", "),
                    if many.len() > listed.len() {
                        ", …"
                    } else {
                        ""
                    }
                ),
                "Pass one of the listed addresses instead of the name.",
            ))
        }
    }
}

/// `0x`-prefixed hex or plain decimal.
pub(crate) fn parse_address(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None if text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok(),
        None => None,
    }
}

pub(crate) fn procedure_address(
    input: ProcedureAddressInput,
    session: &mut Session,
) -> HandlerResult {
    let query = input.procedure.trim().to_string();
    if query.is_empty() {
        return Err(ToolError::invalid_arguments(
            "procedure is empty; give a name or an address",
        ));
    }
    let target = session.require_target()?.clone();
    let document = session.document_index(input.document.as_deref())?;
    let name = target.image.documents()[document].name.clone();
    let index = target.procedure_index(document)?;
    let procedure = resolve(&index, &query)?;
    let mut result = json!({
        "document": name,
        "query": query,
        "address": format_address(procedure.address),
        "name": procedure.name,
    });
    if !procedure.aliases.is_empty() {
        result["aliases"] = json!(procedure.aliases);
    }
    result["found_by"] = json!(procedure.sources.names());
    if let Some(parent) = procedure.part_of {
        result["part_of"] = json!(format_address(parent));
    }
    import_facts(procedure, &mut result);
    let draft = target.observation(
        ToolName::ProcedureAddress.as_str(),
        target.document_subject(document),
        json!({"document": name, "procedure": query}),
        result.clone(),
        Vec::new(),
    );
    let evidence = session.record(draft)?;
    Ok((result, Some(evidence)))
}

fn not_found(query: &str, is_address: bool, index: &ProcedureIndex) -> ToolError {
    if is_address {
        return ToolError::new(
            "not_a_procedure_start",
            format!("no procedure starts at {query}"),
            "Pass a procedure's entry address (list_procedures shows them) or its name.",
        );
    }
    let procedures = &index.inventory.procedures;
    let hint = if procedures.len() <= MAX_SUGGESTION_SCAN {
        suggest::hint(query, procedures.iter().flat_map(names).map(String::as_str))
    } else {
        String::new()
    };
    ToolError::new(
        "unknown_procedure",
        format!("no procedure is named `{query}`{hint}"),
        "Search with search_procedures, or pass an address from list_procedures.",
    )
}
