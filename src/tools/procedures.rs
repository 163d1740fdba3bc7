//! Name-level procedure tools: search by name (raw and demangled) and
//! resolve a name or address to its canonical entry address.

use crate::tools::tool::{Call, Tool};
use serde_json::{Value, json};

use super::inputs::{ProcedureAddressInput, SearchInput};
use super::search::Search;
use super::shared::procedures::{Scope, import_facts, name_facts, names, put_name, resolve};
use super::{HandlerResult, ToolError, ToolName};
use crate::providers::{Procedure, format_address};
use crate::session::ProcedureIndex;

fn item(p: &Procedure, matched: &str, index: &ProcedureIndex) -> Value {
    let mut item = json!({"address": format_address(p.address)});
    put_name(&mut item, "matched_name", matched);
    if let Some(n) = &p.name {
        put_name(&mut item, "name", n);
    }
    if let Some(d) = index.demangled(matched) {
        put_name(&mut item, "demangled", d);
    }
    import_facts(p, &mut item);
    item
}

pub struct SearchProcedures;

impl Tool for SearchProcedures {
    const NAME: ToolName = ToolName::SearchProcedures;
    const BUILDS_INDEX: bool = true;
    type Input = SearchInput;

    fn run(input: SearchInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let search = Search::new(&input)?;
        let scope = Scope::open(session, input.document.as_deref(), call.progress)?;
        let index = &scope.index;
        let pattern = &search.pattern;
        let matches: Vec<(&Procedure, &str)> = index
            .inventory
            .procedures
            .iter()
            .filter_map(|p| {
                names(p)
                    .find(|n| {
                        pattern.is_match(n)
                            || index.demangled(n).is_some_and(|d| pattern.is_match(d))
                    })
                    .map(|matched| (p, matched.as_str()))
            })
            .collect();
        let mut limitations = Vec::new();
        if index.inventory.truncated {
            limitations.push(
            "the procedure inventory is truncated at its cap; procedures beyond it were not searched"
                .to_string(),
        );
        }
        let result = search.page(
            &scope.name,
            &matches,
            |(p, matched)| item(p, matched, index),
            index.inventory.truncated,
        );
        scope.observe(
            session,
            ToolName::SearchProcedures,
            search.parameters(&scope.name),
            result,
            limitations,
        )
    }
}

pub struct ProcedureAddress;

impl Tool for ProcedureAddress {
    const NAME: ToolName = ToolName::ProcedureAddress;
    const BUILDS_INDEX: bool = true;
    type Input = ProcedureAddressInput;

    fn run(input: ProcedureAddressInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let query = input.procedure.trim().to_string();
        if query.is_empty() {
            return Err(ToolError::invalid_arguments(
                "procedure is empty; give a name or an address",
            ));
        }
        let scope = Scope::open(session, input.document.as_deref(), call.progress)?;
        let procedure = resolve(&scope.index, &query)?;
        let mut result = json!({
            "document": scope.name,
            "query": query,
            "address": format_address(procedure.address),
            "name": null,
        });
        name_facts(procedure, &mut result);
        result["found_by"] = json!(procedure.sources.names());
        if let Some(parent) = procedure.part_of {
            result["part_of"] = json!(format_address(parent));
        }
        import_facts(procedure, &mut result);
        let parameters = json!({"document": scope.name, "procedure": query});
        scope.observe(
            session,
            ToolName::ProcedureAddress,
            parameters,
            result,
            Vec::new(),
        )
    }
}
