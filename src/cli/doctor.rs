//! `rea doctor [--target PATH]`: is this installation usable, and can this
//! target be opened? The target check is the same admission and provider
//! open that `open_binary` performs.

use rea::tools::ToolError;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rea::artifacts::{self, ArtifactFormat};
use rea::catalog::render::LoadedCatalog;
use rea::providers::native::NativeImage;
use rea::session::{AvailableAction, DEEP_PROVIDERS, DeepProviders, ReadRoots, admission};
use rea::tools::ToolName;

use super::CliError;

struct Check {
    name: &'static str,
    ok: bool,
    detail: String,
    remediation: Option<String>,
}

pub fn run(target: Option<&Path>, read_roots: &[PathBuf]) -> Result<ExitCode, CliError> {
    let mut checks = Vec::new();
    checks.push(match LoadedCatalog::embedded() {
        Ok(c) => Check {
            name: "prompts",
            ok: true,
            detail: format!("{} guided prompts", c.specs().count()),
            remediation: None,
        },
        Err(d) => Check {
            name: "prompts",
            ok: false,
            detail: d
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
            remediation: Some(
                "Rebuild rea; the embedded catalog is validated at build time.".into(),
            ),
        },
    });
    checks.push(Check {
        name: "tools",
        ok: true,
        detail: format!("{} tools", ToolName::ALL.len()),
        remediation: None,
    });
    checks.push(providers_check());
    if let Some(target) = target {
        checks.push(target_check(target, read_roots));
    }
    let mut healthy = true;
    for c in &checks {
        healthy &= c.ok;
        let status = if c.ok { "ok" } else { "FAIL" };
        println!("{status:4}  {:10} {}", c.name, c.detail);
        if let Some(r) = &c.remediation {
            println!("      {:10} remediation: {r}", "");
        }
    }
    Ok(if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn target_check(target: &Path, read_roots: &[PathBuf]) -> Check {
    let fail = |detail: String, remediation: String| Check {
        name: "target",
        ok: false,
        detail,
        remediation: Some(remediation),
    };
    let roots = match ReadRoots::new(read_roots) {
        Ok(r) => r,
        Err(e) => {
            let error = ToolError::from(e);
            return fail(error.message, error.remediation);
        }
    };
    let admitted = match admission::admit(target, &roots) {
        Ok(a) => a,
        Err(e) => {
            let error = ToolError::from(e);
            return fail(
                format!("[{}] {}", error.code, error.message),
                error.remediation,
            );
        }
    };
    let sniffed = match admitted.bundle {
        Some(_) => Ok(None),
        None => artifacts::sniff(&admitted.file),
    };
    match sniffed {
        Ok(Some(format @ (ArtifactFormat::Zip | ArtifactFormat::Ar | ArtifactFormat::Asar))) => {
            let mut detail = format!(
                "{} ({} archive): opens as an artifact for inspect_artifact; it has no code \
                 documents",
                target.display(),
                format.as_str()
            );
            if format == ArtifactFormat::Asar {
                let action = AvailableAction::analyze_javascript(&target.display().to_string());
                detail.push_str(&format!(
                    "; its application graph: {} (input_path) or `{}`",
                    action.tool, action.cli
                ));
            }
            return Check {
                name: "target",
                ok: true,
                detail,
                remediation: None,
            };
        }
        Ok(_) => {}
        Err(e) => {
            let error = ToolError::from(e);
            return fail(
                format!("[{}] {}", error.code, error.message),
                error.remediation,
            );
        }
    }
    match NativeImage::from_file(&admitted.file, &admitted.file_path) {
        Ok(image) => {
            let documents: Vec<String> = image.documents().iter().map(|d| d.name.clone()).collect();
            Check {
                name: "target",
                ok: true,
                detail: format!(
                    "{} ({}): {}",
                    target.display(),
                    image.format().as_str(),
                    documents.join(", ")
                ),
                remediation: None,
            }
        }
        Err(e) => fail(
            e.to_string(),
            "Give a readable ELF, Mach-O or PE/COFF file, a macOS .app bundle, or an archive \
             (zip, jar, apk, ipa, wheel, ar, asar)."
                .into(),
        ),
    }
}

/// The built-in provider and what detection (files only, no process) found
/// for each deep provider. An unavailable deep provider is not a failure:
/// deep providers are optional. Invalid deep-provider settings are.
fn providers_check() -> Check {
    match DeepProviders::detect() {
        Ok(deep) => {
            let candidates: Vec<String> = deep
                .candidates(None)
                .iter()
                .map(|c| {
                    let id = c["provider"].as_str().unwrap_or("?");
                    match c["availability"].as_str() {
                        Some("available") => {
                            format!("{id} available ({})", c["launch"].as_str().unwrap_or(""))
                        }
                        _ => format!(
                            "{id} unavailable: {} ({})",
                            c["detail"].as_str().unwrap_or(""),
                            c["remediation"].as_str().unwrap_or("")
                        ),
                    }
                })
                .collect();
            Check {
                name: "providers",
                ok: true,
                detail: format!(
                    "native (built in); deep candidates ({}): {}",
                    DEEP_PROVIDERS.join(", "),
                    candidates.join("; ")
                ),
                remediation: None,
            }
        }
        Err(e) => Check {
            name: "providers",
            ok: false,
            detail: e.to_string(),
            remediation: Some(ToolError::from(e).remediation),
        },
    }
}
