//! The one validator for the prompt catalog. Shared with build.rs.
//!
//! `build.rs`, `rea prompts lint` and the `--prompts-dir` reload path all call
//! [`validate`], so an author sees the same rules and the same
//! `file:line:col` diagnostics everywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use toml::Spanned;

use super::engine::{self, Citation};
use super::spec::{PromptSpec, ToolIndex};
use super::suggest;

/// The listing order file inside a prompts directory.
pub const ORDER_FILE: &str = "catalog.toml";
/// The shared evidence-discipline partial every prompt ends with.
pub const DISCIPLINE_FILE: &str = "_discipline.md.j2";
/// Extension of prompt templates and partials.
pub const TEMPLATE_EXT: &str = ".md.j2";
/// Bounds on what a prompts directory may hold.
pub const MAX_FILES: usize = 256;
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Every combination of optional arguments is rendered; this keeps that finite.
pub const MAX_OPTIONAL_ARGUMENTS: usize = 10;

/// One finding, printed as `file:line:col: error: message`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            self.file, self.line, self.col, self.message
        )
    }
}

/// A file's display path and text.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: String,
    pub text: String,
}

impl SourceFile {
    fn diag_at(&self, offset: usize, message: impl Into<String>) -> Diagnostic {
        let (line, col) = line_col(&self.text, offset);
        Diagnostic {
            file: self.path.clone(),
            line,
            col,
            message: message.into(),
        }
    }

    /// The stem before `.toml` or `.md.j2`.
    fn stem(&self) -> &str {
        let name = self.path.rsplit(['/', '\\']).next().unwrap_or(&self.path);
        name.strip_suffix(".toml")
            .or_else(|| name.strip_suffix(TEMPLATE_EXT))
            .unwrap_or(name)
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, text[line_start..offset].chars().count() + 1)
}

/// The files of one catalog, before validation.
#[derive(Debug, Clone)]
pub struct CatalogFiles {
    pub order: SourceFile,
    /// `<name>.toml` with its `<name>.md.j2`, when present.
    pub prompts: Vec<(SourceFile, Option<SourceFile>)>,
    /// `_*.md.j2` partials, including the discipline section.
    pub partials: Vec<SourceFile>,
    /// Templates that have no `.toml` beside them.
    pub orphans: Vec<SourceFile>,
}

/// Reads a prompts directory (bounded in file count and size).
pub fn read_dir(dir: &Path) -> Result<CatalogFiles, Vec<Diagnostic>> {
    let dir_name = dir.display().to_string();
    let fail = |message: String| {
        vec![Diagnostic {
            file: dir_name.clone(),
            line: 1,
            col: 1,
            message,
        }]
    };
    let entries = std::fs::read_dir(dir)
        .map_err(|e| fail(format!("cannot read the prompts directory: {e}")))?;
    let mut files: BTreeMap<String, SourceFile> = BTreeMap::new();
    for entry in entries {
        let entry = entry.map_err(|e| fail(format!("cannot list the prompts directory: {e}")))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.ends_with(".toml") || name.ends_with(TEMPLATE_EXT)) {
            continue;
        }
        if files.len() >= MAX_FILES {
            return Err(fail(format!(
                "more than {MAX_FILES} catalog files; a prompts directory holds one .toml and one \
                 .md.j2 per prompt"
            )));
        }
        let path = entry.path();
        let shown = path.display().to_string();
        let meta =
            std::fs::metadata(&path).map_err(|e| fail(format!("cannot read {shown}: {e}")))?;
        if meta.len() > MAX_FILE_BYTES {
            return Err(fail(format!(
                "{shown} is {} bytes; catalog files are limited to {MAX_FILE_BYTES} bytes",
                meta.len()
            )));
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| fail(format!("cannot read {shown} as UTF-8 text: {e}")))?;
        files.insert(name, SourceFile { path: shown, text });
    }
    let order = files.remove(ORDER_FILE).ok_or_else(|| {
        fail(format!(
            "missing {ORDER_FILE}, which lists the prompts in order"
        ))
    })?;
    let mut catalog = CatalogFiles {
        order,
        prompts: Vec::new(),
        partials: Vec::new(),
        orphans: Vec::new(),
    };
    let names: Vec<String> = files.keys().cloned().collect();
    for name in &names {
        if let Some(stem) = name.strip_suffix(".toml")
            && let Some(toml) = files.remove(name)
        {
            let template = files.remove(&format!("{stem}{TEMPLATE_EXT}"));
            catalog.prompts.push((toml, template));
        }
    }
    for (name, file) in files {
        if name.starts_with('_') {
            catalog.partials.push(file);
        } else {
            catalog.orphans.push(file);
        }
    }
    Ok(catalog)
}

/// One prompt that passed validation.
#[derive(Debug, Clone)]
pub struct ValidPrompt {
    pub spec: PromptSpec,
    pub template_name: String,
    pub template: String,
    /// Every distinct `tool(...)` call over all argument combinations.
    pub citations: BTreeSet<Citation>,
}

/// A catalog that passed validation, in listing order.
#[derive(Debug, Clone)]
pub struct ValidCatalog {
    pub prompts: Vec<ValidPrompt>,
    /// `(template name, source)` of every partial.
    pub partials: Vec<(String, String)>,
}

impl ValidCatalog {
    pub fn get(&self, name: &str) -> Option<&ValidPrompt> {
        self.prompts.iter().find(|p| p.spec.name == name)
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z'))
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
        && s.len() <= 64
}

/// Adds a "did you mean" to serde's "unknown field"/"unknown variant" messages.
fn explain_toml_error(message: &str) -> String {
    let message = message.trim();
    for marker in ["unknown field `", "unknown variant `"] {
        if let Some(rest) = message.split(marker).nth(1)
            && let Some(word) = rest.split('`').next()
        {
            let expected: Vec<&str> = message
                .split("expected ")
                .nth(1)
                .map(|list| list.split('`').skip(1).step_by(2).collect())
                .unwrap_or_default();
            return format!("{message}{}", suggest::hint(word, expected));
        }
    }
    message.to_string()
}

fn parse_toml<T: for<'de> Deserialize<'de>>(file: &SourceFile) -> Result<T, Diagnostic> {
    toml::from_str::<T>(&file.text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        file.diag_at(offset, explain_toml_error(e.message()))
    })
}

/// Field positions, read alongside [`PromptSpec`] so semantic errors point at
/// the right line.
#[derive(Deserialize)]
struct Located {
    name: Spanned<String>,
    starting_points: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    arguments: Vec<LocatedArgument>,
}

/// `catalog.toml` with positions, so a repeated listing is reported where it repeats.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LocatedOrder {
    prompts: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
struct LocatedArgument {
    name: Spanned<String>,
    #[serde(default)]
    completion: Option<Spanned<String>>,
}

/// Validates a whole catalog against the tools (names and parameters) of
/// the tool catalog.
pub fn validate(files: &CatalogFiles, tools: &ToolIndex) -> Result<ValidCatalog, Vec<Diagnostic>> {
    let tool_set: Arc<ToolIndex> = Arc::new(tools.clone());
    let mut diags = Vec::new();

    let order = match parse_toml::<LocatedOrder>(&files.order) {
        Ok(o) => Some(o),
        Err(d) => {
            diags.push(d);
            None
        }
    };

    for orphan in &files.orphans {
        diags.push(orphan.diag_at(
            0,
            format!(
                "template has no prompt file; add {}.toml beside it or rename it",
                orphan.stem()
            ),
        ));
    }

    let partials: Vec<(String, String)> = files
        .partials
        .iter()
        .map(|p| (file_name(&p.path), p.text.clone()))
        .collect();
    if !partials.iter().any(|(n, _)| n == DISCIPLINE_FILE) {
        diags.push(files.order.diag_at(
            0,
            format!(
                "missing {DISCIPLINE_FILE}, the evidence-discipline section every prompt ends with"
            ),
        ));
    }

    let mut prompts: BTreeMap<String, ValidPrompt> = BTreeMap::new();
    for (toml_file, template) in &files.prompts {
        match validate_prompt(toml_file, template.as_ref(), &tool_set, &partials) {
            Ok(p) => {
                prompts.insert(p.spec.name.clone(), p);
            }
            Err(mut d) => diags.append(&mut d),
        }
    }

    for partial in &files.partials {
        diags.extend(scan_backticks(partial, &[], &tool_set));
        let mut env = engine::environment(tool_set.clone(), None);
        for (name, text) in &partials {
            if let Err(e) = env.add_template_owned(name.clone(), text.clone())
                && *name == file_name(&partial.path)
            {
                diags.push(template_diag(partial, &e));
            }
        }
        if let Ok(t) = env.get_template(&file_name(&partial.path))
            && let Err(e) = t.render(engine::arguments_context([]))
        {
            diags.push(template_diag(partial, &e));
        }
    }

    let mut ordered = Vec::new();
    if let Some(order) = order {
        let mut seen = BTreeSet::new();
        for listed in &order.prompts {
            let name = listed.get_ref();
            let offset = listed.span().start;
            if !seen.insert(name.clone()) {
                diags.push(
                    files
                        .order
                        .diag_at(offset, format!("prompt `{name}` is listed twice")),
                );
                continue;
            }
            match prompts.remove(name) {
                Some(p) => ordered.push(p),
                None => {
                    let known: Vec<&str> = files.prompts.iter().map(|(t, _)| t.stem()).collect();
                    if !known.contains(&name.as_str()) {
                        diags.push(files.order.diag_at(
                            offset,
                            format!(
                                "prompt `{name}` has no {name}.toml{}",
                                suggest::hint(name, known.iter().copied())
                            ),
                        ));
                    }
                }
            }
        }
        for (name, _) in prompts {
            diags.push(files.order.diag_at(
                0,
                format!("prompt `{name}` is not listed in {ORDER_FILE}; add it to `prompts`"),
            ));
        }
    }

    if diags.is_empty() {
        Ok(ValidCatalog {
            prompts: ordered,
            partials,
        })
    } else {
        diags.sort();
        diags.dedup();
        Err(diags)
    }
}

fn file_name(path: &str) -> String {
    path.rsplit(['/', '\\']).next().unwrap_or(path).to_string()
}

fn template_diag(file: &SourceFile, e: &minijinja::Error) -> Diagnostic {
    let offset = match (e.range(), e.line()) {
        (Some(r), _) => r.start,
        (None, Some(line)) => file
            .text
            .split_inclusive('\n')
            .take(line.saturating_sub(1))
            .map(str::len)
            .sum(),
        (None, None) => 0,
    };
    let message = match e.detail() {
        Some(detail) => format!("{}: {detail}", e.kind()),
        None => e.kind().to_string(),
    };
    file.diag_at(offset, message)
}

fn validate_prompt(
    file: &SourceFile,
    template: Option<&SourceFile>,
    tools: &Arc<ToolIndex>,
    partials: &[(String, String)],
) -> Result<ValidPrompt, Vec<Diagnostic>> {
    let spec: PromptSpec = parse_toml(file).map_err(|d| vec![d])?;
    let located: Located = parse_toml(file).map_err(|d| vec![d])?;
    let mut diags = Vec::new();
    let at = |span: std::ops::Range<usize>, msg: String| file.diag_at(span.start, msg);

    if spec.name != file.stem() {
        diags.push(at(
            located.name.span(),
            format!(
                "prompt name `{}` differs from its file name `{}`; rename one so they match",
                spec.name,
                file_name(&file.path)
            ),
        ));
    }
    if !is_identifier(&spec.name) {
        diags.push(at(
            located.name.span(),
            format!(
                "prompt name `{}` must be snake_case ([a-z][a-z0-9_]*, at most 64)",
                spec.name
            ),
        ));
    }

    let mut seen_tools = BTreeSet::new();
    for tool in located.starting_points.get_ref() {
        if !tools.contains(tool.get_ref()) {
            diags.push(at(
                tool.span(),
                format!(
                    "tool `{}` is not in the tool catalog (src/tools/catalog.toml){}",
                    tool.get_ref(),
                    suggest::hint(tool.get_ref(), tools.names())
                ),
            ));
        } else if !seen_tools.insert(tool.get_ref().clone()) {
            diags.push(at(
                tool.span(),
                format!("tool `{}` is listed twice", tool.get_ref()),
            ));
        }
    }

    let mut arg_names = BTreeSet::new();
    for (arg, loc) in spec.arguments.iter().zip(&located.arguments) {
        if !is_identifier(&arg.name) {
            diags.push(at(
                loc.name.span(),
                format!(
                    "argument name `{}` must be snake_case ([a-z][a-z0-9_]*)",
                    arg.name
                ),
            ));
        }
        if arg.name == engine::SESSION_VARIABLE {
            diags.push(at(
                loc.name.span(),
                format!(
                    "argument name `{}` is reserved for session facts; choose another name",
                    arg.name
                ),
            ));
        }
        if !arg_names.insert(arg.name.clone()) {
            diags.push(at(
                loc.name.span(),
                format!("argument `{}` is declared twice", arg.name),
            ));
        }
        if arg.required
            && let (Some(family), Some(span)) = (arg.completion, &loc.completion)
        {
            diags.push(at(
                span.span(),
                format!(
                    "required argument `{}` has completion family `{}`; only optional arguments \
                     complete. Remove `completion` or make the argument optional",
                    arg.name,
                    family.as_str()
                ),
            ));
        }
    }
    let optional: Vec<&str> = spec
        .arguments
        .iter()
        .filter(|a| !a.required)
        .map(|a| a.name.as_str())
        .collect();
    if optional.len() > MAX_OPTIONAL_ARGUMENTS {
        diags.push(file.diag_at(
            0,
            format!("at most {MAX_OPTIONAL_ARGUMENTS} optional arguments are supported"),
        ));
    }

    let Some(template) = template else {
        diags.push(file.diag_at(
            0,
            format!(
                "missing template {}{TEMPLATE_EXT} beside this file",
                file.stem()
            ),
        ));
        return Err(diags);
    };
    if !diags.is_empty() {
        return Err(diags);
    }

    let declared: Vec<&str> = spec.arguments.iter().map(|a| a.name.as_str()).collect();
    diags.extend(scan_backticks(template, &declared, tools));

    let template_name = file_name(&template.path);
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut env = engine::environment(tools.clone(), Some(log.clone()));
    for (name, text) in partials {
        // Partial errors are reported against the partial itself.
        let _ = env.add_template_owned(name.clone(), text.clone());
    }
    if let Err(e) = env.add_template_owned(template_name.clone(), template.text.clone()) {
        diags.push(template_diag(template, &e));
        return Err(diags);
    }
    let compiled = match env.get_template(&template_name) {
        Ok(t) => t,
        Err(e) => {
            diags.push(template_diag(template, &e));
            return Err(diags);
        }
    };

    for name in compiled.undeclared_variables(false) {
        if name == "tool" || name == engine::SESSION_VARIABLE || declared.contains(&name.as_str()) {
            continue;
        }
        let offset = find_in_tags(&template.text, &name).unwrap_or(0);
        diags.push(template.diag_at(
            offset,
            format!(
                "`{name}` is not a declared argument of `{}`{}",
                spec.name,
                suggest::hint(&name, declared.iter().copied())
            ),
        ));
    }

    let errors_before = diags.len();
    for mask in 0u32..(1u32 << optional.len()) {
        let args = spec.arguments.iter().map(|a| {
            let present = a.required
                || optional
                    .iter()
                    .position(|o| *o == a.name)
                    .is_some_and(|i| mask & (1 << i) != 0);
            (a.name.as_str(), present.then_some("example value"))
        });
        let args: Vec<_> = args.collect();
        // Every session state too, so a typo in `session.<fact>` (strict
        // undefined) and every citation behind a fact are seen.
        for session in engine::SessionFacts::all() {
            if let Err(e) = compiled.render(engine::render_context(args.iter().copied(), session)) {
                diags.push(template_diag(template, &e));
                break;
            }
        }
    }

    let citations: BTreeSet<Citation> = log
        .lock()
        .map(|l| l.iter().cloned().collect())
        .unwrap_or_default();
    let cited: BTreeSet<&str> = citations.iter().map(|c| c.tool.as_str()).collect();
    // A failed render stops early, so citations are only complete without errors.
    let renders_ok = diags.len() == errors_before;
    for tool in spec.starting_points.iter().filter(|_| renders_ok) {
        if !cited.contains(tool.as_str()) {
            diags.push(at(
                located.starting_points.span(),
                format!(
                    "starting point `{tool}` is never cited by {template_name}; cite it with \
                     {{{{ tool(\"{tool}\") }}}} or remove it from `starting_points`"
                ),
            ));
        }
    }
    for tool in cited {
        if !seen_tools.contains(tool) {
            // Point at the quoted name, quote included.
            let offset = find_in_tags(&template.text, tool)
                .map(|o| {
                    o - usize::from(
                        o > 0 && matches!(template.text.as_bytes()[o - 1], b'"' | b'\''),
                    )
                })
                .unwrap_or(0);
            diags.push(template.diag_at(
                offset,
                format!(
                    "`{tool}` is cited but not listed in `starting_points` of {}",
                    file_name(&file.path)
                ),
            ));
        }
    }

    if diags.is_empty() {
        Ok(ValidPrompt {
            spec,
            template_name,
            template: template.text.clone(),
            citations,
        })
    } else {
        Err(diags)
    }
}

/// Byte ranges of the template tags (`{{ }}`, `{% %}`, `{# #}`) in `text`;
/// an unclosed tag runs to the end.
fn tag_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut ranges = Vec::new();
    let mut i = 0;
    while i + 1 < bytes.len() {
        let close: &[u8] = match &bytes[i..i + 2] {
            b"{{" => b"}}",
            b"{%" => b"%}",
            b"{#" => b"#}",
            _ => {
                i += 1;
                continue;
            }
        };
        let end = bytes[i + 2..]
            .windows(2)
            .position(|w| w == close)
            .map_or(bytes.len(), |p| i + 2 + p + 2);
        ranges.push(i..end);
        i = end;
    }
    ranges
}

/// The first whole-word occurrence of `word` inside a template tag (prose
/// that happens to use the same word is not where the problem is).
fn find_in_tags(text: &str, word: &str) -> Option<usize> {
    let is_ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    tag_ranges(text).into_iter().find_map(|range| {
        let tag = &text[range.clone()];
        tag.match_indices(word)
            .map(|(i, _)| i)
            .find(|&i| {
                !is_ident(tag[..i].chars().next_back())
                    && !is_ident(tag[i + word.len()..].chars().next())
            })
            .map(|i| range.start + i)
    })
}

/// Flags backticked snake_case words in template prose (outside `{{ }}`,
/// `{% %}` and `{# #}`) that are neither declared arguments nor tool names
/// cited through `tool(...)`.
fn scan_backticks(file: &SourceFile, declared: &[&str], tools: &ToolIndex) -> Vec<Diagnostic> {
    let text = &file.text;
    let mut diags = Vec::new();
    // Blank out template tags byte for byte (keeping newlines) so offsets stay exact.
    let mut prose = text.as_bytes().to_vec();
    for range in tag_ranges(text) {
        for b in &mut prose[range] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    let prose = String::from_utf8_lossy(&prose).into_owned();

    let mut search = 0;
    while let Some(open) = prose[search..].find('`').map(|i| i + search) {
        let Some(close) = prose[open + 1..].find('`').map(|i| i + open + 1) else {
            break;
        };
        let word = &prose[open + 1..close];
        if is_identifier(word) && !declared.contains(&word) {
            let message = if tools.contains(word) {
                format!(
                    "tool `{word}` is written as plain text; cite it with {{{{ tool(\"{word}\") }}}}"
                )
            } else {
                let candidates = declared.iter().copied().chain(tools.names());
                format!(
                    "`{word}` is neither a declared argument nor a tool citation{}",
                    suggest::hint(word, candidates)
                )
            };
            diags.push(file.diag_at(open, message));
        }
        search = close + 1;
    }
    diags
}
