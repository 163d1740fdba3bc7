//! `rea index FILE [--document D]`: builds one document's code index (the
//! sweep behind xrefs, callers, callees and call-target discovery) and
//! prints what it holds and how long it took, as one JSON object.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use super::CliError;
use super::procedures::open_document;

pub fn run(file: &Path, document: Option<&str>) -> Result<ExitCode, CliError> {
    let (image, index) = open_document(file, document)?;
    let started = Instant::now();
    let code = image
        .code_index(index, &|_, _| {})
        .map_err(|e| CliError::failed("index_failed", e.to_string()))?;
    let seconds = started.elapsed().as_secs_f64();
    let stats = serde_json::json!({
        "document": image.documents()[index].name,
        "architecture": code.arch.map(|a| a.as_str()),
        "code_bytes": code.bytes,
        "instructions": code.instructions,
        "references": code.xref_count(),
        "call_targets": code.call_targets().len(),
        "truncated": code.truncated,
        "seconds": seconds,
        "instructions_per_second": if seconds > 0.0 { (code.instructions as f64 / seconds).round() } else { 0.0 },
        "limitations": code.limitations,
    });
    println!("{stats:#}");
    Ok(ExitCode::SUCCESS)
}
