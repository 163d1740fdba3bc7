//! The catalog validator, one fixture catalog per diagnostic class.
//!
//! Each test copies the real `prompts/` into a temporary directory, makes one
//! targeted edit, and checks the exact `file:line:col` and message of what
//! `read_dir` + `validate` report. Expected positions are derived from where
//! the edit was made (never hard-coded), so rewording the prompts does not
//! break these tests.

use std::path::{Path, PathBuf};

use rea::catalog::render::tool_index;
use rea::catalog::validate::{Diagnostic, read_dir, validate};
use tempfile::TempDir;

/// A writable copy of `prompts/`.
struct Catalog {
    dir: TempDir,
}

impl Catalog {
    fn copy() -> Catalog {
        let dir = tempfile::tempdir().expect("tempdir");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
        for entry in std::fs::read_dir(&src).expect("prompts/ exists") {
            let entry = entry.expect("dir entry");
            if entry.file_type().expect("file type").is_file() {
                std::fs::copy(entry.path(), dir.path().join(entry.file_name())).expect("copy");
            }
        }
        Catalog { dir }
    }

    fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }

    fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.path(file)).unwrap_or_else(|e| panic!("read {file}: {e}"))
    }

    fn write(&self, file: &str, text: &str) {
        std::fs::write(self.path(file), text).unwrap_or_else(|e| panic!("write {file}: {e}"));
    }

    fn remove(&self, file: &str) {
        std::fs::remove_file(self.path(file)).unwrap_or_else(|e| panic!("remove {file}: {e}"));
    }

    /// Replaces the only occurrence of `from` with `to`; returns the byte
    /// offset of the replacement and the new text.
    fn replace(&self, file: &str, from: &str, to: &str) -> (usize, String) {
        let text = self.read(file);
        assert_eq!(
            text.matches(from).count(),
            1,
            "{file} must contain {from:?} exactly once"
        );
        let at = text.find(from).expect("present");
        let new = format!("{}{to}{}", &text[..at], &text[at + from.len()..]);
        self.write(file, &new);
        (at, new)
    }

    /// Inserts `insertion` just before the only occurrence of `anchor`.
    fn insert_before(&self, file: &str, anchor: &str, insertion: &str) -> (usize, String) {
        self.replace(file, anchor, &format!("{insertion}{anchor}"))
    }

    /// Appends `tail` to the file (after a newline if it lacks one); returns
    /// the offset where `tail` starts.
    fn append(&self, file: &str, tail: &str) -> (usize, String) {
        let mut text = self.read(file);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let at = text.len();
        text.push_str(tail);
        self.write(file, &text);
        (at, text)
    }

    /// What the validator reports; panics if the catalog validates.
    fn diagnostics(&self) -> Vec<Diagnostic> {
        match read_dir(self.dir.path()).and_then(|files| validate(&files, &tool_index())) {
            Ok(_) => panic!("the edited catalog validated"),
            Err(diags) => diags,
        }
    }

    fn shown(&self, file: &str) -> String {
        self.path(file).display().to_string()
    }
}

/// 1-based line and column (in characters) of a byte offset, computed here
/// independently of the validator.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.split('\n').count();
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

fn file_name(path: &str) -> &str {
    Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(path)
}

fn render(diags: &[Diagnostic]) -> String {
    diags
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asserts that exactly one diagnostic was reported, at `file` (full path
/// and file name), `line`:`col`, and that its message contains every one of
/// `parts`. Returns it.
fn assert_only(
    catalog: &Catalog,
    diags: &[Diagnostic],
    file: &str,
    (line, col): (usize, usize),
    parts: &[&str],
) -> Diagnostic {
    assert_eq!(
        diags.len(),
        1,
        "expected one diagnostic:\n{}",
        render(diags)
    );
    assert_at(catalog, diags, file, (line, col), parts)
}

/// Asserts that one of `diags` is at `file`:`line`:`col` with a message
/// containing every one of `parts`.
fn assert_at(
    catalog: &Catalog,
    diags: &[Diagnostic],
    file: &str,
    (line, col): (usize, usize),
    parts: &[&str],
) -> Diagnostic {
    let found = diags.iter().find(|d| {
        file_name(&d.file) == file
            && d.line == line
            && d.col == col
            && parts.iter().all(|p| d.message.contains(p))
    });
    let Some(d) = found else {
        panic!(
            "no diagnostic at {file}:{line}:{col} containing {parts:?}; got:\n{}",
            render(diags)
        );
    };
    assert_eq!(
        d.file,
        catalog.shown(file),
        "diagnostics name the real path"
    );
    assert_eq!(
        d.to_string(),
        format!("{}:{line}:{col}: error: {}", catalog.shown(file), d.message)
    );
    d.clone()
}

const FEATURE_TOML: &str = "investigate_feature.toml";
const FEATURE_J2: &str = "investigate_feature.md.j2";

#[test]
fn the_real_catalog_validates_cleanly() {
    let catalog = Catalog::copy();
    let files = read_dir(catalog.dir.path()).expect("readable");
    let valid = match validate(&files, &tool_index()) {
        Ok(v) => v,
        Err(d) => panic!("prompts/ does not validate:\n{}", render(&d)),
    };
    let names: Vec<&str> = valid.prompts.iter().map(|p| p.spec.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "investigate_feature",
            "compare_application_versions",
            "verify_reconstruction",
            "trace_crash",
            "audit_residual_unknowns",
            "prepare_bounded_process_capture",
        ]
    );
    for prompt in &valid.prompts {
        let cited: Vec<&str> = prompt.citations.iter().map(|c| c.tool.as_str()).collect();
        for tool in &prompt.spec.starting_points {
            assert!(
                cited.contains(&tool.as_str()),
                "{} cites {tool}",
                prompt.spec.name
            );
        }
    }
    assert!(
        valid
            .partials
            .iter()
            .any(|(name, _)| name == "_discipline.md.j2")
    );
}

// ---- prompt TOML files ------------------------------------------------------

#[test]
fn unknown_toml_key_suggests_the_field() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.insert_before(FEATURE_TOML, "starting_points = [", "titel = \"x\"\n");
    let d = assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_TOML,
        position(&text, at),
        &["unknown field `titel`", "did you mean `title`?"],
    );
    assert!(d.message.starts_with("unknown field `titel`"), "{d}");
}

#[test]
fn unknown_key_in_an_argument_table_suggests_from_the_argument_fields() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.append(FEATURE_TOML, "requird = true\n");
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_TOML,
        position(&text, at),
        &["unknown field `requird`", "did you mean `required`?"],
    );
}

#[test]
fn missing_toml_key_is_named() {
    let catalog = Catalog::copy();
    let text = catalog.read(FEATURE_TOML);
    let line = text
        .lines()
        .find(|l| l.starts_with("objective = "))
        .expect("an objective line");
    catalog.replace(FEATURE_TOML, &format!("{line}\n"), "");
    // The whole top-level table lacks the key: reported at its start.
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_TOML,
        (1, 1),
        &["missing field `objective`"],
    );
}

#[test]
fn unknown_completion_family_suggests_the_family() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.replace(
        FEATURE_TOML,
        "completion = \"document\"",
        "completion = \"documnet\"",
    );
    let value = at + "completion = ".len();
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_TOML,
        position(&text, value),
        &["unknown variant `documnet`", "did you mean `document`?"],
    );
}

#[test]
fn completion_family_on_a_required_argument() {
    let catalog = Catalog::copy();
    // `feature` is the first argument and the only required one of this prompt.
    let (at, text) = catalog.replace(
        FEATURE_TOML,
        "required = true\n",
        "required = true\ncompletion = \"document\"\n",
    );
    let value = at + "required = true\ncompletion = ".len();
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_TOML,
        position(&text, value),
        &[
            "required argument `feature` has completion family `document`",
            "Remove `completion` or make the argument optional",
        ],
    );
}

#[test]
fn duplicate_argument_name() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.append(
        FEATURE_TOML,
        "\n[[arguments]]\nname = \"procedure\"\ndescription = \"Again.\"\n",
    );
    let value = at + "\n[[arguments]]\nname = ".len();
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_TOML,
        position(&text, value),
        &["argument `procedure` is declared twice"],
    );
}

#[test]
fn prompt_name_differs_from_its_file_name() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.replace(
        "trace_crash.toml",
        "name = \"trace_crash\"",
        "name = \"trace_crashes\"",
    );
    let value = at + "name = ".len();
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        "trace_crash.toml",
        position(&text, value),
        &[
            "prompt name `trace_crashes` differs from its file name `trace_crash.toml`; rename \
             one so they match",
        ],
    );
}

// ---- catalog.toml ---------------------------------------------------------

#[test]
fn duplicate_prompt_in_catalog_toml() {
    let catalog = Catalog::copy();
    let (_, text) = catalog.replace("catalog.toml", "\n]", "\n  \"trace_crash\",\n]");
    let diags = catalog.diagnostics();
    assert_eq!(diags.len(), 1, "{}", render(&diags));
    let d = &diags[0];
    assert_eq!(file_name(&d.file), "catalog.toml");
    assert_eq!(d.message, "prompt `trace_crash` is listed twice");
    // It points at a listing of `trace_crash` (see the ignored test below for
    // which one it should be).
    let listings: Vec<(usize, usize)> = text
        .match_indices("\"trace_crash\"")
        .map(|(i, _)| position(&text, i))
        .collect();
    assert_eq!(listings.len(), 2);
    assert!(
        listings.contains(&(d.line, d.col)),
        "{d} not at {listings:?}"
    );
}

#[test]

fn duplicate_prompt_is_reported_at_the_repeated_listing() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.replace("catalog.toml", "\n]", "\n  \"trace_crash\",\n]");
    let value = at + "\n  ".len();
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        "catalog.toml",
        position(&text, value),
        &["prompt `trace_crash` is listed twice"],
    );
}

#[test]
fn prompt_file_not_listed_in_catalog_toml() {
    let catalog = Catalog::copy();
    catalog.replace("catalog.toml", "  \"trace_crash\",\n", "");
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        "catalog.toml",
        (1, 1),
        &["prompt `trace_crash` is not listed in catalog.toml; add it to `prompts`"],
    );
}

#[test]
fn listed_prompt_without_a_file_suggests_the_near_miss() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.replace("catalog.toml", "\"trace_crash\"", "\"trace_crsh\"");
    let diags = catalog.diagnostics();
    assert_at(
        &catalog,
        &diags,
        "catalog.toml",
        position(&text, at),
        &[
            "prompt `trace_crsh` has no trace_crsh.toml",
            "did you mean `trace_crash`?",
        ],
    );
    // And trace_crash.toml is now unlisted.
    assert_at(
        &catalog,
        &diags,
        "catalog.toml",
        (1, 1),
        &["prompt `trace_crash` is not listed in catalog.toml"],
    );
    assert_eq!(diags.len(), 2, "{}", render(&diags));
}

// ---- templates --------------------------------------------------------------

#[test]
fn template_syntax_error_unclosed_block() {
    let catalog = Catalog::copy();
    let (_, text) = catalog.append(FEATURE_J2, "{% if feature %}\nnever closed\n");
    // minijinja gives no span for "end of input", only the line of the last
    // token; the validator reports the start of that line.
    let last_line = text.trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1);
    let d = assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_J2,
        position(&text, last_line),
        &["syntax error", "unexpected end of input"],
    );
    assert!(d.message.contains("end of block"), "{d}");
}

#[test]
fn template_syntax_error_inside_a_print_tag() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.insert_before(FEATURE_J2, "- **Imports.**", "{{ feature feature }}\n");
    let second = at + "{{ feature ".len();
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_J2,
        position(&text, second),
        &[
            "syntax error",
            "unexpected identifier, expected end of variable block",
        ],
    );
}

#[test]
fn undeclared_variable_suggests_the_argument() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.append(FEATURE_J2, "See {{ featur }}.\n");
    let word = at + "See {{ ".len();
    let diags = catalog.diagnostics();
    assert_at(
        &catalog,
        &diags,
        FEATURE_J2,
        position(&text, word),
        &[
            "`featur` is not a declared argument of `investigate_feature`",
            "did you mean `feature`?",
        ],
    );
    // The strict render of the same tag may add "undefined value", at the
    // same place; nothing else is reported.
    assert!(
        diags
            .iter()
            .all(|d| (d.line, d.col) == position(&text, word)),
        "{}",
        render(&diags)
    );
}

#[test]

fn undeclared_variable_is_reported_at_its_tag_even_when_prose_uses_the_word() {
    let catalog = Catalog::copy();
    // "target" is also an ordinary prose word.
    let tail = "Check the target first.\nSee {{ target }}.\n";
    let (at, text) = catalog.append(FEATURE_J2, tail);
    let word = at + "Check the target first.\nSee {{ ".len();
    let diags = catalog.diagnostics();
    assert_at(
        &catalog,
        &diags,
        FEATURE_J2,
        position(&text, word),
        &["`target` is not a declared argument of `investigate_feature`"],
    );
}

#[test]
fn unknown_filter() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.append(FEATURE_J2, "{{ \"x\"|shout }}\n");
    let filter = at + "{{ \"x\"|".len();
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_J2,
        position(&text, filter),
        &["unknown filter", "shout"],
    );
}

#[test]
fn any_filter_on_an_argument_is_rejected() {
    for filter in ["upper", "lower", "trim", "length", "join"] {
        let catalog = Catalog::copy();
        let (at, text) = catalog.append(FEATURE_J2, &format!("{{{{ feature|{filter} }}}}\n"));
        let name = at + "{{ feature|".len();
        assert_only(
            &catalog,
            &catalog.diagnostics(),
            FEATURE_J2,
            position(&text, name),
            &[
                &format!("filter `{filter}` applied to argument `feature`"),
                "arguments render only as untrusted-data fences; print `{{ feature }}` without a \
                 filter",
            ],
        );
    }
}

#[test]
fn printing_an_optional_argument_outside_if() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.append(FEATURE_J2, "Focus: {{ document }}\n");
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_J2,
        position(&text, at + "Focus: {{ ".len()),
        &["argument `document` may be absent here; print it only inside `{% if document %}`"],
    );
}

#[test]
fn printing_an_optional_argument_inside_if_is_fine() {
    let catalog = Catalog::copy();
    catalog.append(
        FEATURE_J2,
        "{% if document %}Focus: {{ document }}{% endif %}\n",
    );
    let files = read_dir(catalog.dir.path()).expect("readable");
    if let Err(d) = validate(&files, &tool_index()) {
        panic!("a guarded print must validate:\n{}", render(&d));
    }
}

#[test]
fn unknown_tool_in_tool_call_suggests_the_tool() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.append(FEATURE_J2, "Then {{ tool(\"list_procedure\") }}.\n");
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_J2,
        position(&text, at + "Then {{ ".len()),
        &[
            "tool `list_procedure` is not in the tool catalog (src/tools/catalog.toml); did you \
             mean `list_procedures`?",
        ],
    );
}

#[test]
fn unknown_parameter_in_tool_call_names_the_tools_parameters() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.append(
        FEATURE_J2,
        "Then {{ tool(\"build_call_path\", \"start\", \"gaol\") }}.\n",
    );
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_J2,
        position(&text, at + "Then {{ ".len()),
        &[
            "tool `build_call_path` has no parameter `gaol` (it takes start, goal, document, \
             max_depth, max_paths); did you mean `goal`?",
        ],
    );
}

#[test]
fn tool_named_in_prose_must_use_tool() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.append(FEATURE_J2, "Or call `open_binary` again.\n");
    let tick = at + "Or call ".len();
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_J2,
        position(&text, tick),
        &["tool `open_binary` is written as plain text; cite it with {{ tool(\"open_binary\") }}"],
    );
}

#[test]
fn columns_count_characters_not_bytes() {
    let catalog = Catalog::copy();
    let lead = "Ünïcödé → ";
    let (at, text) = catalog.append(FEATURE_J2, &format!("{lead}`open_binary`\n"));
    let (line, col) = position(&text, at + lead.len());
    assert_eq!(col, lead.chars().count() + 1);
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_J2,
        (line, col),
        &["tool `open_binary` is written as plain text"],
    );
}

#[test]
fn backticked_word_that_is_neither_argument_nor_tool() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.append(FEATURE_J2, "Mind the `documnt` and the `secret_sauce`.\n");
    let diags = catalog.diagnostics();
    assert_eq!(diags.len(), 2, "{}", render(&diags));
    assert_at(
        &catalog,
        &diags,
        FEATURE_J2,
        position(&text, at + "Mind the ".len()),
        &[
            "`documnt` is neither a declared argument nor a tool citation",
            "did you mean `document`?",
        ],
    );
    let d = assert_at(
        &catalog,
        &diags,
        FEATURE_J2,
        position(&text, at + "Mind the `documnt` and the ".len()),
        &["`secret_sauce` is neither a declared argument nor a tool citation"],
    );
    assert!(!d.message.contains("did you mean"), "{d}");
}

#[test]
fn backticks_inside_template_tags_are_not_prose() {
    let catalog = Catalog::copy();
    catalog.append(FEATURE_J2, "{# `secret_sauce` is a comment #}\n");
    let files = read_dir(catalog.dir.path()).expect("readable");
    if let Err(d) = validate(&files, &tool_index()) {
        panic!("a comment is not prose:\n{}", render(&d));
    }
}

#[test]
fn backticked_word_in_the_discipline_partial() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.append("_discipline.md.j2", "5. Never use `list_documents` here.\n");
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        "_discipline.md.j2",
        position(&text, at + "5. Never use ".len()),
        &["tool `list_documents` is written as plain text"],
    );
}

// ---- starting points ---------------------------------------------------

#[test]
fn unknown_tool_in_starting_points_suggests_the_tool() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.replace(FEATURE_TOML, "\"build_call_path\"]", "\"build_call_pat\"]");
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_TOML,
        position(&text, at),
        &[
            "tool `build_call_pat` is not in the tool catalog (src/tools/catalog.toml); did you \
             mean `build_call_path`?",
        ],
    );
}

#[test]
fn tool_listed_twice_in_starting_points() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.replace(
        FEATURE_TOML,
        "\"build_call_path\"]",
        "\"build_call_path\", \"binary_session\"]",
    );
    let second = at + "\"build_call_path\", ".len();
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_TOML,
        position(&text, second),
        &["tool `binary_session` is listed twice"],
    );
}

#[test]
fn starting_point_never_cited() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.replace(
        FEATURE_TOML,
        "\"build_call_path\"]",
        "\"build_call_path\", \"close_binary\"]",
    );
    // Reported at the `starting_points` array.
    let array = text[..at].rfind('[').expect("array start");
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_TOML,
        position(&text, array),
        &[
            "starting point `close_binary` is never cited by investigate_feature.md.j2",
            "{{ tool(\"close_binary\") }}",
            "remove it from `starting_points`",
        ],
    );
}

#[test]
fn cited_tool_not_in_starting_points() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.append(FEATURE_J2, "- **Done.** {{ tool(\"close_binary\") }}\n");
    let name = at + "- **Done.** {{ tool(".len();
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_J2,
        position(&text, name),
        &[
            "`close_binary` is cited but not listed in `starting_points` of investigate_feature.toml",
        ],
    );
}

#[test]

fn cited_tool_not_in_starting_points_single_quoted() {
    let catalog = Catalog::copy();
    let (at, text) = catalog.append(FEATURE_J2, "- **Done.** {{ tool('close_binary') }}\n");
    let name = at + "- **Done.** {{ tool(".len();
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        FEATURE_J2,
        position(&text, name),
        &["`close_binary` is cited but not listed in `starting_points`"],
    );
}

// ---- files present and missing ------------------------------------------------

#[test]
fn orphan_template_without_toml() {
    let catalog = Catalog::copy();
    catalog.write("stray.md.j2", "Nothing to see.\n");
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        "stray.md.j2",
        (1, 1),
        &["template has no prompt file; add stray.toml beside it or rename it"],
    );
}

#[test]
fn missing_template_for_a_toml() {
    let catalog = Catalog::copy();
    catalog.remove("trace_crash.md.j2");
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        "trace_crash.toml",
        (1, 1),
        &["missing template trace_crash.md.j2 beside this file"],
    );
}

#[test]
fn missing_discipline_partial() {
    let catalog = Catalog::copy();
    catalog.remove("_discipline.md.j2");
    assert_only(
        &catalog,
        &catalog.diagnostics(),
        "catalog.toml",
        (1, 1),
        &["missing _discipline.md.j2, the evidence-discipline section every prompt ends with"],
    );
}

#[test]
fn missing_catalog_toml_is_reported_against_the_directory() {
    let catalog = Catalog::copy();
    catalog.remove("catalog.toml");
    let diags = match read_dir(catalog.dir.path()) {
        Ok(_) => panic!("read_dir accepted a directory without catalog.toml"),
        Err(d) => d,
    };
    assert_eq!(diags.len(), 1, "{}", render(&diags));
    assert_eq!(diags[0].file, catalog.dir.path().display().to_string());
    assert_eq!((diags[0].line, diags[0].col), (1, 1));
    assert!(
        diags[0].message.contains("missing catalog.toml"),
        "{}",
        diags[0]
    );
}
