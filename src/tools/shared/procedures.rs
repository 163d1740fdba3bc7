//! Procedures as the code tools name them: the opening every code tool
//! shares ([`Scope`]), a name or address resolved to one procedure, and the
//! facts an answer attaches to a procedure.

use crate::tools::errors::ErrorCode;
use serde_json::{Value, json};

use crate::ground::suggest;
use crate::providers::native::Progress;
use crate::providers::{Procedure, SharedName, Source, format_address};
use crate::session::{ActiveTarget, ProcedureIndex, Session};
use crate::tools::{HandlerResult, ToolError, ToolName};

use super::document::Document;

/// Most candidates listed when a name is ambiguous.
const MAX_LISTED_CANDIDATES: usize = 20;

/// "Did you mean" scans names only for inventories up to this size.
const MAX_SUGGESTION_SCAN: usize = 50_000;

pub(crate) fn names(p: &Procedure) -> impl Iterator<Item = &SharedName> {
    p.name.iter().chain(&p.aliases)
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
                ErrorCode::AmbiguousProcedure,
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

fn not_found(query: &str, is_address: bool, index: &ProcedureIndex) -> ToolError {
    if is_address {
        return ToolError::new(
            ErrorCode::NotAProcedureStart,
            format!("no procedure starts at {query}"),
        );
    }
    let procedures = &index.inventory.procedures;
    let hint = if procedures.len() <= MAX_SUGGESTION_SCAN {
        suggest::hint(
            query,
            procedures.iter().flat_map(names).map(SharedName::as_str),
        )
    } else {
        String::new()
    };
    ToolError::new(
        ErrorCode::UnknownProcedure,
        format!("no procedure is named `{query}`{hint}"),
    )
}

/// Characters of a procedure name an answer shows. Mangled C++ and Rust
/// names stay well below it; a hostile file's 1 MB name does not, and the
/// address always identifies the procedure.
pub(crate) const SHOWN_NAME_CHARS: usize = 512;

/// Aliases one answer shows per procedure (`aliases_total` counts them all).
pub(crate) const SHOWN_ALIASES: usize = 8;

/// Sets `item[key]` to `name` as answers show it: cut to
/// [`SHOWN_NAME_CHARS`] with `…`, and then `<key>_chars` gives its length.
pub(crate) fn put_name(item: &mut Value, key: &str, name: &str) {
    let shown = crate::ground::text::excerpt(name, SHOWN_NAME_CHARS);
    if shown.len() != name.len() {
        item[format!("{key}_chars")] = json!(name.chars().count());
    }
    item[key] = json!(shown);
}

/// A procedure's `name` and `aliases` as answers show them (each through
/// [`put_name`]'s cut; at most [`SHOWN_ALIASES`] aliases, with
/// `aliases_total` when there are more).
pub(crate) fn name_facts(p: &Procedure, item: &mut Value) {
    if let Some(name) = &p.name {
        put_name(item, "name", name);
    }
    if p.aliases.is_empty() {
        return;
    }
    let aliases: Vec<String> = p
        .aliases
        .iter()
        .take(SHOWN_ALIASES)
        .map(|alias| crate::ground::text::excerpt(alias, SHOWN_NAME_CHARS))
        .collect();
    item["aliases"] = json!(aliases);
    if p.aliases.len() > SHOWN_ALIASES {
        item["aliases_total"] = json!(p.aliases.len());
    }
}

/// `{address, name?}` of the procedure starting at `entry`.
pub(crate) fn procedure_ref(index: &ProcedureIndex, entry: u64) -> Value {
    let mut value = json!({"address": format_address(entry)});
    if let Some(name) = index.procedure_at(entry).and_then(|p| p.name.as_ref()) {
        put_name(&mut value, "name", name);
    }
    value
}

/// The common opening of every code tool: target, document index and name,
/// and the procedure index (built with progress reporting).
pub(crate) struct Scope {
    pub target: std::sync::Arc<ActiveTarget>,
    pub document: usize,
    pub name: String,
    pub index: std::sync::Arc<ProcedureIndex>,
}

impl Scope {
    pub fn open(
        session: &Session,
        document: Option<&str>,
        progress: Progress<'_>,
    ) -> Result<Scope, ToolError> {
        let Document {
            target,
            index: document,
            name,
        } = Document::open(session, document)?;
        let index = target.procedure_index_with_progress(document, progress)?;
        Ok(Scope {
            target,
            document,
            name,
            index,
        })
    }

    /// Records an observation of this document and returns the result with it.
    pub fn observe(
        &self,
        session: &mut Session,
        tool: ToolName,
        parameters: Value,
        result: Value,
        limitations: Vec<String>,
    ) -> HandlerResult {
        let draft = self.target.observation(
            tool.as_str(),
            self.target.document_subject(self.document),
            parameters,
            result,
            limitations,
        );
        crate::tools::recorded(session, draft)
    }
}
