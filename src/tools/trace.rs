//! Investigation tools over the direct call graph: from a feature's text to
//! the code that uses it (`trace_feature`), and from one procedure to
//! another (`build_call_path`). Both work to a budget and say what they did
//! not see instead of dropping it silently.

use crate::tools::tool::{Call, Tool};
use std::collections::{BTreeMap, HashMap, VecDeque};

use serde_json::{Value, json};

use super::code::{MAX_CALL_SITES_LISTED, MAX_POINTER_SLOTS, TABLE_MEDIATED};
use super::inputs::{BuildCallPathInput, TraceFeatureInput};
use super::pattern::Pattern;
use super::{HandlerResult, ToolError, ToolName};
use crate::providers::code::UnresolvedKind;
use crate::providers::format_address;
use crate::providers::native::{FoundString, StringEncoding};
use crate::tools::shared::listing::shown_string;
use crate::tools::shared::procedures::{Scope, procedure_ref, put_name, resolve};

/// Most procedures, edges and unknowns one trace lists (totals are exact).
const MAX_LISTED: usize = 200;
/// Most reasons listed per reached procedure.
const MAX_VIA: usize = 10;

/// Operations left; spending past zero marks the work truncated.
struct Budget {
    left: u64,
    exhausted: bool,
}

impl Budget {
    fn spend(&mut self, cost: u64) -> bool {
        if cost > self.left {
            self.left = 0;
            self.exhausted = true;
            return false;
        }
        self.left -= cost;
        true
    }
}

/// What the trace knows about one reached procedure.
struct Reached {
    depth: u32,
    via: Vec<Value>,
}

#[derive(Default)]
struct Trace {
    reached: BTreeMap<u64, Reached>,
    edges: Vec<Value>,
    unknowns: Vec<Value>,
}

impl Trace {
    /// Notes that `entry` was reached at `depth` for `reason`; true if new.
    fn reach(&mut self, entry: u64, depth: u32, reason: Value) -> bool {
        let mut new = false;
        let reached = self.reached.entry(entry).or_insert_with(|| {
            new = true;
            Reached {
                depth,
                via: Vec::new(),
            }
        });
        if reached.via.len() < MAX_VIA {
            reached.via.push(reason);
        }
        new
    }
}

fn bounded<T: serde::Serialize>(items: &[T]) -> Value {
    json!({"total": items.len(), "items": &items[..items.len().min(MAX_LISTED)]})
}

pub struct TraceFeature;

impl Tool for TraceFeature {
    const NAME: ToolName = ToolName::TraceFeature;
    const BUILDS_INDEX: bool = true;
    type Input = TraceFeatureInput;

    fn run(input: TraceFeatureInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let progress = call.progress;
        let max_seeds = input.max_seeds.unwrap_or(20);
        let max_depth = input.max_depth.unwrap_or(2);
        let budget_size = input.budget.unwrap_or(5_000);
        if !(1..=100).contains(&max_seeds)
            || max_depth > 8
            || !(100..=100_000).contains(&budget_size)
        {
            return Err(ToolError::invalid_arguments(
                "max_seeds must be 1-100, max_depth 0-8 and budget 100-100000",
            ));
        }
        let mode = input.mode.unwrap_or_default();
        let case_sensitive = input.case_sensitive.unwrap_or(false);
        let pattern = Pattern::new(&input.query, mode, case_sensitive)?;
        let scope = Scope::open(session, input.document.as_deref(), progress)?;
        let strings = scope.target.image.strings(scope.document)?;
        // The caller walk makes one provider query per expanded procedure.
        let expansions = scope.target.max_graph_expansions() as u64;
        let mut budget = Budget {
            left: u64::from(budget_size).min(expansions.saturating_mul(10)),
            exhausted: false,
        };
        let granted = budget.left;
        let mut trace = Trace::default();

        let string_matches: Vec<_> = strings
            .strings
            .iter()
            .filter(|s| pattern.is_match(&s.value))
            .collect();
        let mut string_items = Vec::new();
        let mut table_mediated = false;
        for found in string_matches.iter().take(max_seeds as usize) {
            let end = found.address.saturating_add(found.byte_len().max(1));
            let wanted = usize::try_from(budget.left).unwrap_or(usize::MAX);
            let (all_refs, seen) =
                scope
                    .target
                    .xrefs_to(scope.document, found.address, end, wanted)?;
            budget.spend(seen as u64);
            // A reference to the start covers the whole (possibly multi-line)
            // string; one into its middle counts only when the text from there
            // to the end of that line matches too: a pointer to the `'` closing
            // "invalid argument '%s'" is not a use of "'s", and a pointer to an
            // earlier line is not a use of a later one.
            let (refs, tails): (Vec<_>, Vec<_>) = all_refs.into_iter().partition(|xref| {
                xref.to == found.address
                    || suffix_at(found, xref.to)
                        .and_then(|text| text.split(['\n', '\r']).next())
                        .is_some_and(|line| pattern.is_match(line))
            });
            let total = seen - tails.len();
            // The trace routes; search_strings shows the whole text.
            let (value, chars) = shown_string(&found.value);
            let mut item = json!({
                "address": format_address(found.address),
                "value": value,
                "references": total,
            });
            if let Some(chars) = chars {
                item["value_chars"] = json!(chars);
            }
            if total == 0 {
                // No instruction names it: follow string ← pointer slot ←
                // the code that uses the slot's table.
                let reached =
                    follow_pointer_tables(&scope, found, &mut trace, &mut budget, &mut item)?;
                table_mediated |= reached;
                if !reached {
                    trace.unknowns.push(json!({
                    "kind": "string_without_code_reference",
                    "address": format_address(found.address),
                    "detail": "no instruction refers to this string, and no code was found \
                               using a pointer table that holds it; it may be reached through a \
                               computed address",
                }));
                }
            }
            string_items.push(item);
            for xref in &refs {
                match scope
                    .target
                    .containing_procedure(scope.document, xref.from)?
                {
                    Some(start) => {
                        trace.reach(
                        start,
                        0,
                        json!({"kind": "references_string", "string": format_address(found.address), "at": format_address(xref.from)}),
                    );
                    }
                    None => trace.unknowns.push(json!({
                        "kind": "reference_outside_procedures",
                        "at": format_address(xref.from),
                        "detail": "code outside every known procedure refers to a matching string",
                    })),
                }
            }
        }

        let procedures = &scope.index.inventory.procedures;
        let name_matches: Vec<_> = procedures
            .iter()
            .filter_map(|p| {
                p.name
                    .iter()
                    .chain(&p.aliases)
                    .find(|n| {
                        pattern.is_match(n)
                            || scope
                                .index
                                .demangled(n)
                                .is_some_and(|d| pattern.is_match(d))
                    })
                    .map(|n| (p.address, n.clone()))
            })
            .collect();
        // `names.items` shows each matched name once; the seed says only how
        // it was reached.
        for (entry, _) in name_matches.iter().take(max_seeds as usize) {
            trace.reach(*entry, 0, json!({"kind": "name_matches"}));
        }

        expand_callers(&scope, &mut trace, &mut budget, max_depth)?;

        let truncated = budget.exhausted
            || string_matches.len() > max_seeds as usize
            || name_matches.len() > max_seeds as usize;
        if string_matches.len() > max_seeds as usize || name_matches.len() > max_seeds as usize {
            trace.unknowns.push(json!({
            "kind": "seeds_not_followed",
            "detail": format!(
                "{} matching strings and {} matching names; only the first {max_seeds} of each were \
                 followed (raise max_seeds or narrow the query)",
                string_matches.len(), name_matches.len()
            ),
        }));
        }
        trace.unknowns.push(json!({
            "kind": "indirect_calls_not_followed",
            "detail": "callers through function pointers, vtables or tables are not seen",
        }));

        let mut reached: Vec<(&u64, &Reached)> = trace.reached.iter().collect();
        reached.sort_by_key(|(entry, r)| (r.depth, **entry));
        let reached: Vec<Value> = reached
            .into_iter()
            .map(|(&entry, r)| {
                let mut value = procedure_ref(&scope.index, entry);
                value["depth"] = json!(r.depth);
                value["via"] = json!(r.via);
                value
            })
            .collect();
        let result = json!({
            "document": scope.name,
            "query": input.query,
            "strings": {"total": string_matches.len(), "items": string_items},
            "names": {
                "total": name_matches.len(),
                "items": name_matches.iter().take(max_seeds as usize).map(|(entry, name)| {
                    let mut item = json!({"address": format_address(*entry)});
                    put_name(&mut item, "name", name);
                    item
                }).collect::<Vec<_>>(),
            },
            "procedures": bounded(&reached),
            "call_edges": bounded(&trace.edges),
            "unknowns": bounded(&trace.unknowns),
            "operations_granted": granted,
            "operations_used": granted - budget.left,
            "truncated": truncated,
        });
        let parameters = json!({
            "document": scope.name,
            "query": input.query,
            "mode": mode,
            "case_sensitive": case_sensitive,
            "max_seeds": max_seeds,
            "max_depth": max_depth,
            "budget": budget_size,
        });
        let mut limitations = vec![
        "a trace follows direct references and direct calls found by the code index, and for a \
         string no instruction names, the pointer tables that hold it"
            .to_owned(),
    ];
        if table_mediated {
            limitations.push(TABLE_MEDIATED.to_owned());
        }
        scope.observe(
            session,
            ToolName::TraceFeature,
            parameters,
            result,
            limitations,
        )
    }
}

/// Breadth-first over callers from every depth-0 procedure, up to `max_depth`.
fn expand_callers(
    scope: &Scope,
    trace: &mut Trace,
    budget: &mut Budget,
    max_depth: u32,
) -> Result<(), ToolError> {
    let mut frontier: Vec<u64> = trace.reached.keys().copied().collect();
    for depth in 1..=max_depth {
        let mut next = Vec::new();
        for (position, &callee) in frontier.iter().enumerate() {
            let edges = scope.target.callers(scope.document, callee)?;
            if !budget.spend(edges.len() as u64 + 1) {
                trace.unknowns.push(json!({
                    "kind": "budget_exhausted",
                    "detail": format!(
                        "the operation budget ran out at depth {depth}; callers of {} procedure(s) \
                         were not followed (raise budget)",
                        frontier.len() - position
                    ),
                }));
                return Ok(());
            }
            for edge in edges {
                let Some(caller) = edge.caller else {
                    trace.unknowns.push(json!({
                        "kind": "call_outside_procedures",
                        "at": format_address(edge.at),
                        "detail": "code outside every known procedure calls a traced procedure",
                    }));
                    continue;
                };
                trace.edges.push(json!({
                    "caller": format_address(caller),
                    "callee": format_address(callee),
                    "at": format_address(edge.at),
                }));
                let reason = json!({"kind": "calls", "callee": format_address(callee), "at": format_address(edge.at)});
                if trace.reach(caller, depth, reason) {
                    next.push(caller);
                }
            }
        }
        frontier = next;
        if frontier.is_empty() {
            return Ok(());
        }
    }
    if !frontier.is_empty() {
        trace.unknowns.push(json!({
            "kind": "max_depth_reached",
            "detail": format!(
                "callers of {} procedure(s) at depth {max_depth} were not followed (raise max_depth)",
                frontier.len()
            ),
        }));
    }
    Ok(())
}

/// Outcome of a call-path search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum PathStatus {
    Found,
    NotFound,
    Truncated,
    Unknown,
}

pub struct BuildCallPath;

impl Tool for BuildCallPath {
    const NAME: ToolName = ToolName::BuildCallPath;
    const BUILDS_INDEX: bool = true;
    type Input = BuildCallPathInput;

    fn run(input: BuildCallPathInput, call: &Call<'_>) -> HandlerResult {
        let session = &mut *call.session();
        let progress = call.progress;
        let max_depth = input.max_depth.unwrap_or(10);
        let max_paths = input.max_paths.unwrap_or(3);
        if !(1..=32).contains(&max_depth) || !(1..=20).contains(&max_paths) {
            return Err(ToolError::invalid_arguments(
                "max_depth must be 1-32 and max_paths 1-20",
            ));
        }
        let scope = Scope::open(session, input.document.as_deref(), progress)?;
        let start = resolve(&scope.index, &input.start)?.address;
        let goal = resolve(&scope.index, &input.goal)?.address;
        let search = shortest_paths(&scope, start, goal, max_depth)?;
        let paths = enumerate_paths(&search.parents, start, goal, max_paths as usize);
        let status = if !paths.is_empty() {
            PathStatus::Found
        } else if search.cut_short {
            PathStatus::Truncated
        } else if search.indirect_calls > 0 {
            PathStatus::Unknown
        } else {
            PathStatus::NotFound
        };
        let mut limitations =
            vec!["paths use direct calls only; the shortest paths are listed first".to_owned()];
        if status == PathStatus::Unknown {
            limitations.push(format!(
            "no direct path exists, but {} indirect call(s) in the explored procedures could hide one",
            search.indirect_calls
        ));
        }
        let result = json!({
            "document": scope.name,
            "start": procedure_ref(&scope.index, start),
            "goal": procedure_ref(&scope.index, goal),
            "status": status,
            "paths": paths.iter().map(|path| {
                path.iter().map(|&entry| procedure_ref(&scope.index, entry)).collect::<Vec<_>>()
            }).collect::<Vec<_>>(),
            "explored_procedures": search.parents.len(),
            "indirect_calls_seen": search.indirect_calls,
        });
        let parameters = json!({
            "document": scope.name,
            "start": format_address(start),
            "goal": format_address(goal),
            "max_depth": max_depth,
            "max_paths": max_paths,
        });
        scope.observe(
            session,
            ToolName::BuildCallPath,
            parameters,
            result,
            limitations,
        )
    }
}

struct PathSearch {
    /// Every reached procedure with its parents on shortest paths from start.
    parents: HashMap<u64, Vec<u64>>,
    /// The depth limit or the expansion cap stopped the search early.
    cut_short: bool,
    /// Indirect calls in the expanded procedures.
    indirect_calls: usize,
}

/// Breadth-first search over callees from `start`, stopping after the
/// level where `goal` is first reached.
fn shortest_paths(
    scope: &Scope,
    start: u64,
    goal: u64,
    max_depth: u32,
) -> Result<PathSearch, ToolError> {
    let mut depth_of: HashMap<u64, u32> = HashMap::from([(start, 0)]);
    let mut search = PathSearch {
        parents: HashMap::from([(start, Vec::new())]),
        cut_short: false,
        indirect_calls: 0,
    };
    let mut queue = VecDeque::from([start]);
    let mut expansions = 0usize;
    while let Some(node) = queue.pop_front() {
        let depth = depth_of[&node];
        if depth_of.get(&goal).is_some_and(|&d| depth >= d) {
            break;
        }
        if depth >= max_depth {
            search.cut_short = true;
            break;
        }
        expansions += 1;
        if expansions > scope.target.max_graph_expansions() {
            search.cut_short = true;
            break;
        }
        search.indirect_calls += scope
            .target
            .unresolved(scope.document, node)?
            .iter()
            .filter(|(_, kind)| *kind == UnresolvedKind::IndirectCall)
            .count();
        for edge in scope.target.callees(scope.document, node)? {
            let callee = edge.callee;
            match depth_of.get(&callee) {
                None => {
                    depth_of.insert(callee, depth + 1);
                    search.parents.insert(callee, vec![node]);
                    queue.push_back(callee);
                }
                Some(&d) if d == depth + 1 => {
                    let parents = search.parents.entry(callee).or_default();
                    if !parents.contains(&node) {
                        parents.push(node);
                    }
                }
                Some(_) => {}
            }
        }
    }
    Ok(search)
}

/// Up to `max_paths` shortest paths from `start` to `goal`, walking parents
/// back from the goal; deterministic (parents in address order).
fn enumerate_paths(
    parents: &HashMap<u64, Vec<u64>>,
    start: u64,
    goal: u64,
    max_paths: usize,
) -> Vec<Vec<u64>> {
    if start == goal {
        return vec![vec![start]];
    }
    if !parents.contains_key(&goal) {
        return Vec::new();
    }
    let mut paths = Vec::new();
    let mut stack = vec![vec![goal]];
    while let Some(partial) = stack.pop() {
        if paths.len() == max_paths {
            break;
        }
        let Some(&head) = partial.last() else {
            continue;
        };
        if head == start {
            paths.push(partial.into_iter().rev().collect());
            continue;
        }
        let mut from: Vec<u64> = parents.get(&head).cloned().unwrap_or_default();
        from.sort_unstable_by(|a, b| b.cmp(a));
        for parent in from {
            let mut longer = partial.clone();
            longer.push(parent);
            stack.push(longer);
        }
    }
    paths
}

/// Seeds the trace from the code that uses the pointer tables holding
/// `found`'s address (each use a derived `table_mediated` reason), records
/// the slots in `item`, and says whether any procedure was reached.
fn follow_pointer_tables(
    scope: &Scope,
    found: &FoundString,
    trace: &mut Trace,
    budget: &mut Budget,
    item: &mut Value,
) -> Result<bool, ToolError> {
    let Some(uses) = scope.target.pointer_uses(
        scope.document,
        found.address,
        MAX_POINTER_SLOTS,
        MAX_CALL_SITES_LISTED,
    )?
    else {
        return Ok(false);
    };
    if uses.total_slots == 0 {
        return Ok(false);
    }
    item["pointer_slots"] = json!(uses.total_slots);
    let mut reached = false;
    for used in &uses.uses {
        let table = used.table.0;
        for xref in &used.users {
            if !budget.spend(1) {
                return Ok(reached);
            }
            if let Some(start) = scope
                .target
                .containing_procedure(scope.document, xref.from)?
            {
                reached = true;
                trace.reach(
                    start,
                    0,
                    json!({
                        "kind": "table_mediated",
                        "string": format_address(found.address),
                        "slot": format_address(used.slot),
                        "table": format_address(table),
                        "at": format_address(xref.from),
                    }),
                );
            }
        }
    }
    Ok(reached)
}

/// The string's text from `address` on, when `address` is a character
/// boundary inside it.
fn suffix_at(found: &FoundString, address: u64) -> Option<&str> {
    let offset = usize::try_from(address.checked_sub(found.address)?).ok()?;
    match found.encoding {
        StringEncoding::Ascii | StringEncoding::Utf8 => found.value.get(offset..),
        StringEncoding::Utf16Le => {
            if offset % 2 != 0 {
                return None;
            }
            let (start, _) = found.value.char_indices().nth(offset / 2)?;
            found.value.get(start..)
        }
    }
}

#[cfg(test)]
mod tests {

    use crate::providers::native::{FoundString, StringEncoding};

    fn found(value: &str, encoding: StringEncoding) -> FoundString {
        FoundString {
            address: 0x100,
            encoding,
            value: value.to_owned(),
            section: ".rodata".to_owned(),
            truncated: false,
        }
    }

    #[test]
    fn a_reference_inside_a_string_sees_the_text_from_there_on() {
        let text = found("invalid %s argument '%s'", StringEncoding::Ascii);
        assert_eq!(super::suffix_at(&text, 0x100 + 20), Some("'%s'"));
        assert_eq!(super::suffix_at(&text, 0x100), Some(text.value.as_str()));
        assert_eq!(super::suffix_at(&text, 0xff), None);
        let wide = found("héllo", StringEncoding::Utf16Le);
        assert_eq!(super::suffix_at(&wide, 0x100 + 2), Some("éllo"));
        assert_eq!(super::suffix_at(&wide, 0x100 + 3), None);
        let utf8 = found("héllo", StringEncoding::Utf8);
        // Inside the two bytes of é: no character starts there.
        assert_eq!(super::suffix_at(&utf8, 0x100 + 2), None);
        assert_eq!(super::suffix_at(&utf8, 0x100 + 3), Some("llo"));
    }
    use super::*;

    #[test]
    fn paths_are_enumerated_shortest_first_and_bounded() {
        // 1 -> 2 -> 4, 1 -> 3 -> 4
        let parents = HashMap::from([(1, vec![]), (2, vec![1]), (3, vec![1]), (4, vec![3, 2])]);
        assert_eq!(
            enumerate_paths(&parents, 1, 4, 5),
            vec![vec![1, 2, 4], vec![1, 3, 4]]
        );
        assert_eq!(enumerate_paths(&parents, 1, 4, 1), vec![vec![1, 2, 4]]);
        assert_eq!(enumerate_paths(&parents, 1, 1, 5), vec![vec![1]]);
        assert!(enumerate_paths(&parents, 1, 9, 5).is_empty());
    }

    #[test]
    fn budget_refuses_overspending_and_remembers() {
        let mut budget = Budget {
            left: 5,
            exhausted: false,
        };
        assert!(budget.spend(5));
        assert!(!budget.spend(1));
        assert!(budget.exhausted);
    }
}
