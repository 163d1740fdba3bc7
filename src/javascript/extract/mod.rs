//! Per-file fact extraction: one JavaScript/TypeScript text in, one
//! [`ModuleFacts`] out, with oxc as the parser.
//!
//! The text is hostile input. [`extract`] never panics and allocates in
//! proportion to the text; what the parser could not bear (nesting deeper
//! than [`prescan::MAX_NESTING`]) is refused before parsing, and what the
//! walk could not bear is skipped and flagged. The parser still recurses
//! once per nesting level, so callers run [`extract`] on a thread with
//! [`EXTRACT_STACK_BYTES`] of stack (see [`run_with_stack`]).

mod lines;
mod names;
mod prescan;
mod strings;
mod surfaces;
mod urls;
mod walker;

#[cfg(test)]
mod tests;

use oxc_allocator::Allocator;
use oxc_ast_visit::Visit;
use oxc_parser::{ParseOptions, Parser, ParserReturn};
use oxc_span::SourceType;

use super::facts::{Diagnostic, Language, ModuleFacts, ParseOutcome};
use lines::LineIndex;
use strings::clip;
use walker::{Phase, Walker};

/// Stack the thread running [`extract`] must have: 256 MiB. It is address
/// space reserved, not memory used; the pre-scan bounds nesting to what
/// uses a small fraction of it even in unoptimised builds (the tests run
/// the worst accepted inputs on a thread of this size).
pub const EXTRACT_STACK_BYTES: usize = 256 << 20;

/// Diagnostics kept per file (the total is counted).
pub const MAX_DIAGNOSTICS: usize = 10;

/// Lines this long (bytes) or an average this long mark minified code.
const MINIFIED_LINE: usize = 5_000;
const MINIFIED_AVERAGE: usize = 500;

/// Runs `f` on a new thread with [`EXTRACT_STACK_BYTES`] of stack and
/// returns its result (`None` if the thread could not start or panicked).
pub fn run_with_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    std::thread::Builder::new()
        .name("rea-js-extract".into())
        .stack_size(EXTRACT_STACK_BYTES)
        .spawn(f)
        .ok()?
        .join()
        .ok()
}

/// Reads the facts of one source text. Run it on a thread with
/// [`EXTRACT_STACK_BYTES`] of stack.
pub fn extract(source: &str, language: Language) -> ModuleFacts {
    let lines = LineIndex::new(source);
    let mut parse = ParseOutcome {
        minified: looks_minified(source, &lines),
        source_map_url: source_map_url(source),
        ..ParseOutcome::default()
    };
    let typescript = matches!(language, Language::TypeScript | Language::Tsx);
    if u32::try_from(source.len()).is_err() {
        parse.not_parsed = Some("the text is larger than 4 GiB".into());
        return ModuleFacts {
            parse,
            ..ModuleFacts::default()
        };
    }
    if let Some(reason) = prescan::refuse(source, typescript) {
        parse.not_parsed = Some(reason);
        return ModuleFacts {
            parse,
            ..ModuleFacts::default()
        };
    }

    let candidates = candidates(language);
    let mut arena = Allocator::default();
    let first = parse_with(&arena, source, candidates[0]);
    if first.diagnostics.is_empty() {
        return facts_of(&first, source, &lines, parse);
    }
    // Try the other configurations in a scratch arena, counting diagnostics
    // only, so a file with errors never holds more than two ASTs at once.
    let mut best = (0, first.diagnostics.len());
    let mut scratch = Allocator::default();
    for (i, source_type) in candidates.iter().enumerate().skip(1) {
        scratch.reset();
        let count = parse_with(&scratch, source, *source_type).diagnostics.len();
        if count < best.1 {
            best = (i, count);
        }
        if count == 0 {
            break;
        }
    }
    drop(scratch);
    if best.0 == 0 {
        return facts_of(&first, source, &lines, parse);
    }
    drop(first);
    arena.reset();
    let chosen = parse_with(&arena, source, candidates[best.0]);
    facts_of(&chosen, source, &lines, parse)
}

fn parse_with<'a>(
    arena: &'a Allocator,
    source: &'a str,
    source_type: SourceType,
) -> ParserReturn<'a> {
    Parser::new(arena, source, source_type)
        .with_options(ParseOptions {
            // CommonJS wraps files in a function; bundles return at top level.
            allow_return_outside_function: true,
            ..ParseOptions::default()
        })
        .parse()
}

/// Walks a parsed program twice (names, then facts) and joins the loads.
fn facts_of(
    ret: &ParserReturn<'_>,
    source: &str,
    lines: &LineIndex<'_>,
    mut parse: ParseOutcome,
) -> ModuleFacts {
    parse.parsed = true;
    parse.diagnostics_total = ret.diagnostics.len() as u64;
    parse.diagnostics = ret
        .diagnostics
        .iter()
        .take(MAX_DIAGNOSTICS)
        .map(|d| Diagnostic {
            message: clip(&d.message),
            pos: lines.pos(d.labels.first().map_or(0, |l| l.offset())),
        })
        .collect();
    let mut walker = Walker::new(source, lines);
    walker.visit_program(&ret.program);
    walker.phase = Phase::Facts;
    walker.visit_program(&ret.program);
    walker.join_loads();
    parse.walk_truncated = walker.truncated;
    ModuleFacts {
        parse,
        ..walker.facts
    }
}

/// The parser configurations tried, most likely first. `.js` files are
/// CommonJS scripts more often than ES modules, and some carry JSX.
fn candidates(language: Language) -> Vec<SourceType> {
    // Never empty: `extract` parses with the first.
    match language {
        Language::JavaScript => vec![
            SourceType::cjs(),
            SourceType::unambiguous(),
            SourceType::unambiguous().with_jsx(true),
        ],
        Language::Module => vec![SourceType::mjs(), SourceType::mjs().with_jsx(true)],
        Language::Jsx => vec![
            SourceType::unambiguous().with_jsx(true),
            SourceType::cjs().with_jsx(true),
        ],
        Language::TypeScript => vec![SourceType::ts()],
        Language::Tsx => vec![SourceType::tsx()],
    }
}

/// Long lines and few newlines: bundled or minified code.
fn looks_minified(source: &str, lines: &LineIndex<'_>) -> bool {
    let count = lines.line_count();
    if source.len() / count > MINIFIED_AVERAGE {
        return true;
    }
    let longest = source.split('\n').map(str::len).max().unwrap_or(0);
    longest > MINIFIED_LINE && count < 200
}

/// The value of a trailing `//# sourceMappingURL=` (or legacy `//@`) comment.
fn source_map_url(source: &str) -> Option<String> {
    let tail = source.trim_end();
    let line_start = tail.rfind('\n').map_or(0, |i| i + 1);
    let line = tail[line_start..].trim_start();
    let value = line
        .strip_prefix("//# sourceMappingURL=")
        .or_else(|| line.strip_prefix("//@ sourceMappingURL="))?
        .trim();
    (!value.is_empty() && !value.contains(char::is_whitespace)).then(|| clip(value))
}
