//! `rea decompile FILE PROC… [--document D] [--outline] [--json]`: the CLI
//! twin of `procedure_pseudo_code`. It runs the tool itself on a session of
//! its own (same engine, limits and outcomes), pages to the end, and prints
//! the C on stdout; what failed goes to stderr and makes the exit non-zero.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use rea::session::{DeepProviders, ReadRoots, Session};
use rea::tools::{Call, ToolName, ToolOutput};

use super::CliError;

/// Lines fetched per page.
const PAGE: u64 = 5_000;

pub struct Request<'a> {
    pub file: &'a Path,
    pub procedures: &'a [String],
    pub document: Option<&'a str>,
    pub outline: bool,
    pub json: bool,
}

pub fn run(request: Request<'_>) -> Result<ExitCode, CliError> {
    let session = Mutex::new(Session::new(
        ReadRoots::default(),
        Arc::new(DeepProviders::none()),
    ));
    let call = Call::new(&session, &|_, _| {}, Arc::new(|| None));
    let path = request.file.display().to_string();
    answer(
        &call,
        ToolName::OpenBinary,
        json!({"path": path, "provider_id": "native"}),
    )?;
    let mut failed = false;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for chunk in request
        .procedures
        .chunks(rea::tools::MAX_PSEUDO_CODE_PROCEDURES)
    {
        let mut arguments = json!({"procedures": chunk, "limit": PAGE});
        if let Some(document) = request.document {
            arguments["document"] = json!(document);
        }
        if request.outline {
            arguments["view"] = json!("outline");
        }
        let first = answer(&call, ToolName::ProcedurePseudoCode, arguments.clone())?;
        let procedures = first["procedures"].as_array().cloned().unwrap_or_default();
        for (i, item) in procedures.into_iter().enumerate() {
            let mut item = item;
            if item["outcome"] != "complete" {
                failed = true;
                eprintln!(
                    "rea: {}: {} ({})",
                    chunk[i],
                    item["detail"].as_str().unwrap_or("no C"),
                    item["reason"].as_str().unwrap_or("incomplete")
                );
                continue;
            }
            // Page this procedure to its end.
            let mut pages = vec![item.clone()];
            while let Some(next) = item["next_offset"].as_u64() {
                let mut more = arguments.clone();
                more["procedures"] = json!([chunk[i]]);
                more["offset"] = json!(next);
                let page = answer(&call, ToolName::ProcedurePseudoCode, more)?;
                item = page["procedures"][0].clone();
                pages.push(item.clone());
            }
            print(&mut out, &pages, request.json, request.outline)
                .map_err(|e| CliError::failed("write_failed", format!("cannot write: {e}")))?;
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn answer(call: &Call<'_>, tool: ToolName, arguments: Value) -> Result<Value, CliError> {
    let Value::Object(arguments) = arguments else {
        return Err(CliError::Usage("arguments must be an object".into()));
    };
    match rea::tools::call(tool, arguments, call) {
        ToolOutput::Success { result, .. } => Ok(result),
        ToolOutput::Failure(error) => Err(CliError::tool(error)),
    }
}

fn print(out: &mut impl Write, pages: &[Value], json: bool, outline: bool) -> std::io::Result<()> {
    if json {
        for page in pages {
            writeln!(out, "{page}")?;
        }
        return Ok(());
    }
    let first = &pages[0];
    let name = first["procedure"]["name"]
        .as_str()
        .or(first["procedure"]["address"].as_str())
        .unwrap_or("");
    writeln!(
        out,
        "/* {name} at {} ({}) */",
        first["procedure"]["address"].as_str().unwrap_or(""),
        first["evidence_id"].as_str().unwrap_or("")
    )?;
    if outline {
        writeln!(out, "{}", first["signature"].as_str().unwrap_or(""))?;
    }
    for page in pages {
        if outline {
            for entry in page["outline"].as_array().into_iter().flatten() {
                writeln!(out, "{:>6}: {}", entry[0], entry[1].as_str().unwrap_or(""))?;
            }
        } else {
            for line in page["lines"].as_array().into_iter().flatten() {
                writeln!(out, "{}", line.as_str().unwrap_or(""))?;
            }
        }
    }
    writeln!(out)
}
