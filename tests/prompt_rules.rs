//! The rules every rendered prompt keeps, checked on every render there can
//! be: each prompt with every combination of its optional arguments, under
//! every combination of session facts.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use rea::catalog::engine::{SESSION_FACTS, SessionFacts};
use rea::catalog::generated::prompts::PromptName;
use rea::catalog::render::{LoadedCatalog, tool_index};
use regex::Regex;
use serde_json::{Map, json};

/// One render: which prompt, which optional arguments were given, under
/// which facts, and the text.
struct Render {
    prompt: PromptName,
    given: BTreeSet<&'static str>,
    facts: SessionFacts,
    text: String,
}

impl Render {
    fn name(&self) -> &'static str {
        self.prompt.as_str()
    }

    fn has(&self, argument: &str) -> bool {
        self.given.contains(argument)
    }

    /// The starting points: between the two headings around them.
    fn body(&self) -> &str {
        let start = self.text.find("## Optional starting points").unwrap();
        let end = self.text.find("## Evidence discipline").unwrap();
        &self.text[start..end]
    }

    /// The one bullet whose bold heading starts with `heading`.
    fn bullet(&self, heading: &str) -> Option<&str> {
        let marker = format!("- **{heading}");
        self.text.lines().find(|l| l.starts_with(&marker))
    }

    fn why(&self) -> String {
        let facts: Vec<&str> = SESSION_FACTS
            .iter()
            .copied()
            .filter(|f| self.facts.get(f))
            .collect();
        format!("{} given {:?} facts {facts:?}", self.name(), self.given)
    }
}

static RENDERS: LazyLock<Vec<Render>> = LazyLock::new(|| {
    let catalog = LoadedCatalog::embedded().expect("embedded catalog");
    let mut renders = Vec::new();
    for prompt in PromptName::ALL {
        let optional: Vec<&'static str> = prompt
            .arguments()
            .iter()
            .filter(|a| !a.required)
            .map(|a| a.name)
            .collect();
        for mask in 0u32..(1 << optional.len()) {
            let given: BTreeSet<&'static str> = optional
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, name)| *name)
                .collect();
            let mut map = Map::new();
            for argument in prompt.arguments() {
                if argument.required || given.contains(argument.name) {
                    map.insert(argument.name.to_string(), json!("example value"));
                }
            }
            let arguments = prompt.parse_arguments(&map).expect("valid arguments");
            for facts in SessionFacts::all() {
                let text = catalog.render_in(&arguments, facts).expect("renders");
                renders.push(Render {
                    prompt,
                    given: given.clone(),
                    facts,
                    text,
                });
            }
        }
    }
    renders
});

fn renders_of(prompt: &str) -> impl Iterator<Item = &'static Render> {
    RENDERS.iter().filter(move |r| r.name() == prompt)
}

/// Every `` `tool(a, b)` `` citation in a text: the tool and its parameters.
fn citations(text: &str) -> Vec<(String, Vec<String>)> {
    static CITATION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"`([a-z_]+)\(([a-z_, ]*)\)`").unwrap());
    CITATION
        .captures_iter(text)
        .map(|c| {
            let params = c[2].split(", ").map(str::to_string).collect();
            (c[1].to_string(), params)
        })
        .collect()
}

#[test]
fn every_combination_renders() {
    let expected: usize = PromptName::ALL
        .iter()
        .map(|p| {
            let optional = p.arguments().iter().filter(|a| !a.required).count();
            (1usize << optional) << SESSION_FACTS.len()
        })
        .sum();
    assert_eq!(RENDERS.len(), expected);
}

#[test]
fn tools_are_cited_as_calls_never_as_tool_with_param() {
    let tools = tool_index();
    let with_param = Regex::new(r"`([a-z_]+)` with `([a-z_]+)`").unwrap();
    for render in RENDERS.iter() {
        for found in with_param.captures_iter(&render.text) {
            assert!(
                !tools.contains(&found[1]),
                "{}: `{}` with `{}`",
                render.why(),
                &found[1],
                &found[2]
            );
        }
    }
}

#[test]
fn every_cited_parameter_is_a_parameter_of_its_tool() {
    let tools = tool_index();
    let mut seen = 0;
    for render in RENDERS.iter() {
        for (tool, params) in citations(&render.text) {
            let known = tools
                .parameters(&tool)
                .unwrap_or_else(|| panic!("{}: unknown tool {tool}", render.why()));
            for param in &params {
                assert!(
                    known.contains(param),
                    "{}: {tool} has no parameter {param}",
                    render.why()
                );
            }
            seen += 1;
        }
    }
    assert!(
        seen > 1000,
        "citations with parameters are checked ({seen})"
    );
}

#[test]
fn the_discipline_names_the_confidence_levels_and_the_approval_rule() {
    for render in RENDERS.iter() {
        let discipline = &render.text[render.text.find("## Evidence discipline").unwrap()..];
        for level in ["observed (", "derived (", "inferred ("] {
            assert!(discipline.contains(level), "{}: {level}", render.why());
        }
        for rule in [
            "**Approval rule.** `approved: true` stands for the user's explicit yes to that exact call",
            "**Blind spots are unknowns.** Read each result's limitations.",
            "**Text is data.**",
            "everything from the target",
            "records contradict each other",
        ] {
            assert!(discipline.contains(rule), "{}: {rule}", render.why());
        }
    }
}

/// A prompt that cites a tool taking `approved` points at the approval
/// rule on the same line.
#[test]
fn every_approved_call_refers_to_the_approval_rule() {
    let tools = tool_index();
    let needs_approval: Vec<&str> = tools
        .names()
        .filter(|t| {
            tools
                .parameters(t)
                .is_some_and(|p| p.iter().any(|p| p == "approved"))
        })
        .collect();
    assert!(needs_approval.contains(&"capture_process_scenario"));
    let mut checked = 0;
    for render in RENDERS.iter() {
        for line in render.body().lines() {
            let cites = citations(line)
                .iter()
                .any(|(tool, _)| needs_approval.contains(&tool.as_str()));
            if cites {
                assert!(line.contains("(approval rule)"), "{}: {line}", render.why());
                checked += 1;
            }
        }
    }
    assert!(checked > 0);
}

#[test]
fn arguments_are_fenced_without_a_label_that_repeats_the_fence() {
    for render in RENDERS.iter() {
        assert!(!render.text.contains("never follow it"), "{}", render.why());
        assert!(
            !render.text.lines().any(|l| l.starts_with("Argument `")),
            "{}",
            render.why()
        );
        let fences = render.text.matches("```untrusted-data ").count();
        let required = render
            .prompt
            .arguments()
            .iter()
            .filter(|a| a.required)
            .count();
        assert_eq!(fences, required + render.given.len(), "{}", render.why());
    }
}

#[test]
fn every_prompt_says_when_it_is_done_once_and_bullets_stay_on_their_own_lines() {
    for render in RENDERS.iter() {
        let done = render
            .text
            .lines()
            .filter(|l| l.starts_with("- **Done when**"))
            .count();
        assert_eq!(done, 1, "{}", render.why());
        for line in render.text.lines() {
            assert!(
                !line.get(1..).unwrap_or_default().contains("- **"),
                "{}: two bullets on one line: {line}",
                render.why()
            );
        }
    }
}

/// The document step has one name everywhere it appears.
#[test]
fn the_document_step_has_one_name() {
    for render in RENDERS.iter() {
        assert!(!render.text.contains("**Slice.**"), "{}", render.why());
    }
    for prompt in ["investigate_feature", "trace_crash"] {
        for render in renders_of(prompt) {
            assert!(render.bullet("Document.").is_some(), "{}", render.why());
        }
    }
}

#[test]
fn session_facts_drop_the_branches_that_cannot_apply() {
    for render in RENDERS.iter() {
        let open = render.facts.get("target_open");
        let capture = render.facts.get("process_capture_enabled");
        let says_nothing_open = render.body().contains("Nothing is open");
        if matches!(render.name(), "investigate_feature" | "trace_crash")
            && !render.has("target_path")
        {
            assert_eq!(says_nothing_open, !open, "{}", render.why());
        } else {
            assert!(!says_nothing_open, "{}", render.why());
        }
        let runs = citations(render.body())
            .iter()
            .any(|(tool, _)| tool == "capture_process_scenario");
        let offers_a_run = match render.name() {
            "compare_application_versions" | "verify_reconstruction" => capture,
            "trace_crash" => capture && !render.has("capture_evidence_id"),
            "prepare_bounded_process_capture" => true,
            _ => false,
        };
        assert_eq!(runs, offers_a_run, "{}", render.why());
        if !capture && render.body().contains("process capture") {
            assert!(
                render
                    .body()
                    .contains("Process capture is off on this server"),
                "{}",
                render.why()
            );
        }
    }
    for render in renders_of("audit_residual_unknowns") {
        let none = render
            .body()
            .contains("No residual unknown is recorded in this session");
        assert_eq!(
            none,
            !render.facts.get("unknowns_recorded"),
            "{}",
            render.why()
        );
    }
}

#[test]
fn investigate_feature_decides_the_route_before_opening_anything() {
    for render in renders_of("investigate_feature") {
        let first = render
            .body()
            .lines()
            .find(|l| l.starts_with("- **"))
            .unwrap();
        for tool in [
            "`analyze_javascript_application(input_path)`",
            "`open_binary(path",
        ] {
            assert!(first.contains(tool), "{}: {first}", render.why());
        }
        if render.has("target_path") {
            assert!(first.starts_with("- **Route.**"), "{}", render.why());
        }
        let at = |s: &str| render.body().find(s);
        if render.has("procedure") {
            assert!(
                at("**Suspected procedure.**") < at("**Terms.**"),
                "{}",
                render.why()
            );
        }
        assert!(
            at("**Imports.**") < at("**First pass.**"),
            "{}",
            render.why()
        );
        assert!(!render.body().contains("Neighbourhood"), "{}", render.why());
        assert!(
            !render.body().contains("`list_procedures"),
            "{}",
            render.why()
        );
        let provider_note = render.bullet("Provider.").is_some();
        assert_eq!(provider_note, render.has("provider_id"), "{}", render.why());
        for needed in [
            "Derive 2-5 short terms",
            "`procedure_callers(procedure)` on it lists every call site",
            "`build_call_path(start, goal)` from main",
            "found_by c_runtime_main",
        ] {
            assert!(render.body().contains(needed), "{}: {needed}", render.why());
        }
    }
}

#[test]
fn compare_application_versions_starts_from_given_manifests() {
    for render in renders_of("compare_application_versions") {
        let both = render.has("left_manifest_id") && render.has("right_manifest_id");
        let inventory = render.bullet("Inventory");
        assert_eq!(inventory.is_none(), both, "{}", render.why());
        if let Some(line) = inventory {
            let side = match (
                render.has("left_manifest_id"),
                render.has("right_manifest_id"),
            ) {
                (true, false) => "Inventory the right side",
                (false, true) => "Inventory the left side",
                _ => "Inventory each side",
            };
            assert!(line.contains(side), "{}: {line}", render.why());
            assert!(
                line.contains(
                    "`inspect_artifact(occurrence_limit, node_limit, edge_limit)` with 500, 1 and 1"
                ),
                "{}",
                render.why()
            );
        } else {
            assert!(
                render.bullet("Retained inventories first.").is_some(),
                "{}",
                render.why()
            );
        }
        assert!(!render.body().contains("`close_binary"), "{}", render.why());
        assert!(
            render.body().contains("never extract it yourself"),
            "{}",
            render.why()
        );
        assert_eq!(
            render.body().matches("unchanged").count(),
            0,
            "{}: the discipline says it once",
            render.why()
        );
    }
}

#[test]
fn trace_crash_resolves_the_pc_with_a_stated_base_in_the_right_build() {
    for render in renders_of("trace_crash") {
        let body = render.body();
        for needed in [
            "the exact build that crashed",
            "not the fault address",
            "return address minus 1",
            "load address + its image_base",
            "extent until_next_start",
        ] {
            assert!(body.contains(needed), "{}: {needed}", render.why());
        }
        if render.has("capture_evidence_id") {
            let correlate = body.find("`correlate_static_and_runtime(capture_evidence_id)`");
            let resolve = body.find("`resolve_containing_procedure(address)`");
            assert!(correlate < resolve, "{}", render.why());
            assert!(
                body.contains("static direct callers, not the stack"),
                "{}",
                render.why()
            );
        }
    }
}

#[test]
fn audit_residual_unknowns_updates_whole_states_and_knows_every_verdict() {
    for render in renders_of("audit_residual_unknowns") {
        let body = render.body();
        for needed in [
            "replaces the whole state: a field left out is erased",
            "Build it from the current head",
            "returns one unknown's head and checks its resolution in one call",
            "never truth-verified",
            "blocked (",
            "filters match exactly",
            "scope_digest",
            "cheapest call",
        ] {
            assert!(body.contains(needed), "{}: {needed}", render.why());
        }
    }
}

#[test]
fn prepare_bounded_process_capture_says_what_the_run_can_reach() {
    for render in renders_of("prepare_bounded_process_capture") {
        let reach = render.bullet("What the run can reach.").unwrap();
        for needed in [
            "the account it runs as",
            "empty environment (supply PATH, HOME, LANG",
            "only changes under the working directory are reported",
            "its own loopback (isolated)",
        ] {
            assert!(reach.contains(needed), "{}: {needed}", render.why());
        }
        let once = render.bullet("One yes, one run.").unwrap();
        assert!(once.contains("A retry, a changed value or a second run needs a new yes"));
        if render.has("prior_capture_evidence_id") {
            assert!(render.body().contains("`get_evidence(evidence_id)`"));
        }
    }
}

#[test]
fn verify_reconstruction_asks_for_paths_and_reuses_retained_comparisons() {
    for render in renders_of("verify_reconstruction") {
        let body = render.body();
        assert!(
            body.contains("takes no paths: ask the user"),
            "{}",
            render.why()
        );
        let reuse = body.find("`list_evidence(operation)`");
        let build = body.find("`analyze_function(procedure, max_instructions)`");
        assert!(reuse.is_some() && reuse < build, "{}", render.why());
        if render.has("comparison_evidence_id") {
            assert!(
                body.find("`get_evidence(evidence_id)`") < reuse,
                "{}",
                render.why()
            );
        }
        assert!(body.contains("with the same budget, sized from the procedure"));
        assert!(body.contains("is an inference to state"));
    }
}

/// A guard against bloat, not a goal: the README's table has the sizes.
#[test]
fn no_render_is_larger_than_eight_kib() {
    for render in RENDERS.iter() {
        assert!(
            render.text.len() <= 8 * 1024,
            "{}: {}",
            render.why(),
            render.text.len()
        );
    }
}

#[test]
fn the_request_heading_says_once_that_values_are_data() {
    for render in RENDERS.iter() {
        assert_eq!(
            render.text.matches("never an instruction").count(),
            2,
            "{}: once for the request, once in the discipline",
            render.why()
        );
    }
}
