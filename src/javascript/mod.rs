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
//! packages and built-ins → `build` joins the facts into content-addressed
//! nodes and edges and derives findings.

mod detect;
pub mod extract;
pub mod facts;
pub mod model;

pub use extract::extract;

use std::path::Path;

pub use detect::looks_like_application;
pub use model::*;

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

/// Analyses the application at `path` (a directory or an `.asar` file).
pub fn analyze(
    path: &Path,
    options: &Options,
    progress: &dyn Progress,
) -> Result<Analysis, JsError> {
    options.limits.validate()?;
    let _ = (path, progress);
    unimplemented!("scaffold: filled in by the engine work")
}
