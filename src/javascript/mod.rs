//! JavaScript and Electron applications: a static application graph read
//! from a directory or an `.asar` archive without executing anything.
//! See ARCHITECTURE.md ("src/javascript/").
//!
//! This is a pure library: the MCP side (read roots, Evidence, view, trace,
//! comparison) and `rea analyze` call [`analyze`].
//!
//! Data flow: `source` lists the files (directory walk or asar table,
//! bounded, confined) → `extract` parses each JavaScript/TypeScript text
//! with oxc into per-file [`facts::ModuleFacts`] (`html` does the same for
//! pages and their inline scripts) → `resolve` turns specifiers into files,
//! packages and built-ins → `graph` joins the facts into content-addressed
//! nodes and edges → `findings` derives processes, observations,
//! relationships and unknowns → `finish` applies the limits and orders and
//! computes the ids (and `Analysis::validate` checks them again).
//! Extraction runs on one thread with the extractor's stack.

mod detect;
pub mod extract;
pub mod facts;
mod findings;
mod finish;
pub mod graph;
pub mod html;
pub mod model;
pub mod native;
pub mod package;
pub mod resolve;
pub mod source;
pub mod trace;

#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;

pub use extract::extract;

use std::collections::BTreeMap;
use std::path::Path;

pub use detect::looks_like_application;
pub use model::*;
pub use source::Input;

use facts::{Language, ModuleFacts};
use graph::Parsed;

/// Progress reports for long analyses (the CLI draws a bar from them).
pub trait Progress {
    /// The number of files that will be read, once known.
    fn total(&self, files: u64);
    /// One more file read (and parsed, for source files).
    fn advance(&self, path: &str);
}

/// No progress reporting.
pub struct Silent;

impl Progress for Silent {
    fn total(&self, _files: u64) {}
    fn advance(&self, _path: &str) {}
}

/// The per-file extractor and the stack it needs.
#[derive(Clone, Copy)]
pub struct Extractor {
    pub run: fn(&str, Language) -> ModuleFacts,
    pub stack_bytes: usize,
}

/// Analyses the application at `path` (a directory or an `.asar` file),
/// opened once and unconfined (tests, benches). The server and the CLI
/// open through their read roots ([`Input::open`]) and call
/// [`analyze_input`].
pub fn analyze(
    path: &Path,
    options: &Options,
    progress: &dyn Progress,
) -> Result<Analysis, JsError> {
    let input = Input::open(&crate::ground::confined::Roots::default(), path)?;
    analyze_input(&input, options, progress)
}

/// Analyses an opened application.
pub fn analyze_input(
    input: &Input,
    options: &Options,
    progress: &dyn Progress,
) -> Result<Analysis, JsError> {
    analyze_with(input, options, progress, default_extractor())
}

/// The oxc extractor on the stack it needs.
pub fn default_extractor() -> Extractor {
    Extractor {
        run: extract::extract,
        stack_bytes: extract::EXTRACT_STACK_BYTES,
    }
}

/// [`analyze`] with a given extractor (tests use hand-made facts).
pub fn analyze_with(
    input: &Input,
    options: &Options,
    progress: &dyn Progress,
    extractor: Extractor,
) -> Result<Analysis, JsError> {
    options.limits.validate()?;
    let listing = source::list(input, &options.limits)?;
    let package = listing
        .files
        .iter()
        .find(|f| f.path == "package.json")
        .and_then(|f| package::parse(&f.path, f.bytes.as_deref()?));
    let parsed = extract_all(&listing, extractor, progress)?;
    Ok(finish::analysis(
        &listing,
        &parsed,
        package.as_ref(),
        options,
    ))
}

/// What to do with one listed file.
fn job(file: &source::SourceFile) -> Option<(Option<Language>, bool)> {
    let language = Language::of_path(&file.path);
    let lower = file.path.to_ascii_lowercase();
    let page = lower.ends_with(".html") || lower.ends_with(".htm");
    (language.is_some() || page).then_some((language, page))
}

/// Parses every source file and page on one thread with the extractor's
/// stack; progress is reported from the calling thread.
fn extract_all(
    listing: &source::Listing,
    extractor: Extractor,
    progress: &dyn Progress,
) -> Result<BTreeMap<usize, Parsed>, JsError> {
    let jobs: Vec<usize> = (0..listing.files.len())
        .filter(|&i| job(&listing.files[i]).is_some())
        .collect();
    progress.total(jobs.len() as u64);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Parsed)>();
    let jobs = &jobs;
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("rea-js-extract".into())
            .stack_size(extractor.stack_bytes)
            .spawn_scoped(scope, move || {
                for &i in jobs {
                    let parsed = parse_one(&listing.files[i], extractor);
                    if tx.send((i, parsed)).is_err() {
                        return;
                    }
                }
                drop(tx);
            })
            .map_err(|e| JsError::Io {
                path: "<extraction thread>".into(),
                reason: e.to_string(),
            })?;
        let mut out = BTreeMap::new();
        for (i, parsed) in rx {
            progress.advance(&listing.files[i].path);
            out.insert(i, parsed);
        }
        worker.join().map_err(|_| JsError::Io {
            path: "<extraction thread>".into(),
            reason: "the extraction thread stopped unexpectedly".into(),
        })?;
        Ok(out)
    })
}

fn parse_one(file: &source::SourceFile, extractor: Extractor) -> Parsed {
    let Some((language, page)) = job(file) else {
        return Parsed::NotParsed("not a source file".into());
    };
    let Some(bytes) = file.bytes.as_deref() else {
        let why = file.not_read.clone().unwrap_or_else(|| "not read".into());
        return Parsed::NotParsed(why);
    };
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Parsed::NotParsed("not valid UTF-8".into());
    };
    // The extractor promises not to panic; should it break that promise on
    // one file, that file is reported unparsed and the analysis goes on.
    let guarded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if page {
            return Parsed::Page(html::scan(text, &|body, l| (extractor.run)(body, l)));
        }
        match language {
            Some(l) => Parsed::Module((extractor.run)(text, l)),
            None => Parsed::NotParsed("not a source file".into()),
        }
    }));
    guarded.unwrap_or_else(|_| Parsed::NotParsed("the extractor failed on this file".into()))
}
