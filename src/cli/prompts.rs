//! `rea prompts list|show|render|lint`.

use std::path::Path;
use std::process::ExitCode;

use rea::catalog::engine::{SESSION_FACTS, SessionFacts};
use rea::catalog::generated::prompts::PromptName;
use rea::catalog::render::LoadedCatalog;
use rea::catalog::validate::Diagnostic;
use rea::ground::suggest;

use super::{CliError, LintFormat};

fn catalog() -> Result<std::sync::Arc<LoadedCatalog>, CliError> {
    LoadedCatalog::embedded().map_err(|d| {
        CliError::failed(
            "catalog_invalid",
            format!(
                "the embedded prompt catalog does not validate (a broken build): {}",
                d.first().map(ToString::to_string).unwrap_or_default()
            ),
        )
    })
}

fn prompt_name(name: &str) -> Result<PromptName, CliError> {
    PromptName::from_name(name).ok_or_else(|| {
        CliError::Usage(format!(
            "unknown prompt `{name}`{}; `rea prompts list` shows them",
            suggest::hint(name, PromptName::ALL.iter().map(|p| p.as_str()))
        ))
    })
}

pub fn list() -> Result<ExitCode, CliError> {
    let catalog = catalog()?;
    for spec in catalog.specs() {
        let args: Vec<String> = spec
            .arguments
            .iter()
            .map(|a| {
                if a.required {
                    a.name.clone()
                } else {
                    format!("[{}]", a.name)
                }
            })
            .collect();
        println!("{}  {}  ({})", spec.name, spec.title, args.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn show(name: &str) -> Result<ExitCode, CliError> {
    let name = prompt_name(name)?;
    let catalog = catalog()?;
    let Some(spec) = catalog.spec(name) else {
        return Err(CliError::failed(
            "catalog_invalid",
            format!("prompt `{}` missing from the catalog", name.as_str()),
        ));
    };
    println!("{} — {}\n", spec.name, spec.title);
    println!(
        "{}\n\nObjective: {}\n\nArguments:",
        spec.description, spec.objective
    );
    for a in &spec.arguments {
        let completion = a
            .completion
            .map(|f| format!(", completes {}", f.as_str()))
            .unwrap_or_default();
        let required = if a.required { "required" } else { "optional" };
        println!("  {} ({required}{completion}): {}", a.name, a.description);
    }
    println!("\nStarting points: {}", spec.starting_points.join(", "));
    Ok(ExitCode::SUCCESS)
}

pub fn render(name: &str, args: &[String], facts: &[String]) -> Result<ExitCode, CliError> {
    let name = prompt_name(name)?;
    for fact in facts {
        if !SESSION_FACTS.contains(&fact.as_str()) {
            return Err(CliError::Usage(format!(
                "--fact {fact:?} is not a session fact{}; the facts are {}",
                suggest::hint(fact, SESSION_FACTS),
                SESSION_FACTS.join(", ")
            )));
        }
    }
    let facts = SessionFacts::from_pairs(facts.iter().map(|f| (f.as_str(), true)));
    let mut map = serde_json::Map::new();
    for arg in args {
        let (key, value) = arg
            .split_once('=')
            .ok_or_else(|| CliError::Usage(format!("--arg {arg:?} is not NAME=VALUE")))?;
        let previous = map.insert(
            key.to_string(),
            serde_json::Value::String(value.to_string()),
        );
        if previous.is_some() {
            return Err(CliError::Usage(format!(
                "--arg {key}= is given more than once; give each argument once"
            )));
        }
    }
    let parsed = name
        .parse_arguments(&map)
        .map_err(|e| CliError::Usage(format!("invalid arguments for `{}`: {e}", name.as_str())))?;
    let text = catalog()?
        .render_in(&parsed, facts)
        .map_err(|e| CliError::failed("render_failed", format!("rendering failed: {e}")))?;
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

fn github_escape(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn print_diagnostic(d: &Diagnostic, format: LintFormat) {
    match format {
        LintFormat::Text => println!("{d}"),
        LintFormat::Github => println!(
            "::error file={},line={},col={}::{}",
            github_escape(&d.file)
                .replace(',', "%2C")
                .replace(':', "%3A"),
            d.line,
            d.col,
            github_escape(&d.message)
        ),
    }
}

/// Runs exactly what a `--prompts-dir` reload runs (the validator and the
/// compiled-shape check), on `dir`, or without one on the sources compiled
/// into this binary.
pub fn lint(dir: Option<&Path>, format: LintFormat) -> Result<ExitCode, CliError> {
    let (shown, result) = match dir {
        Some(dir) => (dir.display().to_string(), LoadedCatalog::from_dir(dir)),
        None => (
            "the compiled catalog".to_string(),
            LoadedCatalog::embedded(),
        ),
    };
    match result {
        Ok(catalog) => {
            eprintln!("{shown}: {} prompts valid", catalog.specs().count());
            Ok(ExitCode::SUCCESS)
        }
        Err(diags) => {
            for d in &diags {
                print_diagnostic(d, format);
            }
            eprintln!("{shown}: {} problem(s)", diags.len());
            Ok(ExitCode::from(1))
        }
    }
}
