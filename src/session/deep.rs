//! Deep providers: which ones this server offers, whether each is
//! available, and the selection rules of `provider_id`.
//!
//! Rules (never a silent fallback, not even after a later failure):
//! - `auto` binds the one deep candidate that is available and supports the
//!   target; several are `ambiguous` (no preference is ever applied); none
//!   opens the target with the built-in native provider.
//! - `native` binds the built-in provider.
//! - A deep provider id must be offered, available and support the target,
//!   otherwise it is a typed error with a remediation.
//!
//! Detection only looks at files (no process, no `dlopen`), so listing
//! candidates is free; a radare2 process starts only when a target is
//! opened with radare2 bound.

use serde::Serialize;
use serde_json::{Value, json};

use crate::providers::Format;
use crate::providers::radare2::{self, Detection, Radare2Error, Radare2Options};
use crate::providers::{NATIVE_PROVIDER_ID, radare2::PROVIDER_ID as RADARE2};

/// Environment variable that sets the default `provider_id`.
pub const PROVIDER_ENV: &str = "REA_ANALYSIS_PROVIDER";

/// Deep providers this build knows, sorted by id; the order is not a priority.
pub const DEEP_PROVIDERS: &[&str] = &[RADARE2];

/// The deep providers one server offers, detected once at start.
#[derive(Debug, Clone, Default)]
pub struct DeepProviders {
    /// `None`: this server does not offer radare2 (tests that want only the
    /// built-in provider). `Some`: what detection found.
    radare2: Option<(Detection, Radare2Options)>,
    /// The default `provider_id` when a request names none.
    default_provider: Option<String>,
}

/// How the binding was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SelectionSource {
    /// The request named the provider.
    Request,
    /// `REA_ANALYSIS_PROVIDER` named it.
    Environment,
    /// `auto` found exactly one available deep candidate for the target.
    AutoSingleCandidate,
    /// `auto` found no deep candidate for this target; the built-in provider serves it.
    AutoNoDeepCandidate,
}

/// What `open_binary` should bind.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    Native(SelectionSource),
    Radare2 {
        launcher: radare2::Launcher,
        options: Radare2Options,
        source: SelectionSource,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    #[error(
        "provider id {0:?} is not valid: use `auto`, `native` or a deep provider id ([a-z][a-z0-9-]*, at most 64 characters)"
    )]
    Invalid(String),
    #[error("unknown provider {id:?}; this server offers: {known}")]
    Unknown { id: String, known: String },
    #[error("provider {id:?} is not available: {detail}")]
    Unavailable {
        id: String,
        code: &'static str,
        detail: String,
        remediation: String,
    },
    #[error("provider {id:?} does not support this target: {reason}")]
    TargetUnsupported { id: String, reason: String },
    #[error("several deep providers could serve this target under `auto`: {0}")]
    Ambiguous(String),
}

impl DeepProviders {
    /// Detects every deep provider from the process environment (files
    /// only) and reads their options and the default provider.
    pub fn detect() -> Result<DeepProviders, Radare2Error> {
        Ok(DeepProviders {
            radare2: Some((radare2::detect(), Radare2Options::from_env()?)),
            default_provider: std::env::var(PROVIDER_ENV)
                .ok()
                .filter(|v| !v.trim().is_empty()),
        })
    }

    /// No deep provider: every target opens with the built-in provider.
    pub fn none() -> DeepProviders {
        DeepProviders::default()
    }

    /// radare2 with an explicit detection result and options.
    pub fn with_radare2(detection: Detection, options: Radare2Options) -> DeepProviders {
        DeepProviders {
            radare2: Some((detection, options)),
            default_provider: None,
        }
    }

    /// Offered ids, sorted.
    fn offered(&self) -> Vec<&'static str> {
        DEEP_PROVIDERS
            .iter()
            .copied()
            .filter(|id| *id != RADARE2 || self.radare2.is_some())
            .collect()
    }

    /// The candidate list `binary_session` reports, sorted by id; support
    /// for `format` is `unknown` when no target is open.
    pub fn candidates(&self, format: Option<Format>) -> Vec<Value> {
        let Some((detection, _)) = &self.radare2 else {
            return Vec::new();
        };
        let support = match format {
            None => json!("unknown"),
            Some(f) => json!(radare2_supports(f).map_or("supported", |_| "unsupported")),
        };
        let mut candidate = json!({"provider": RADARE2, "target_support": support});
        match detection {
            Detection::Available(launcher) => {
                candidate["availability"] = json!("available");
                candidate["launch"] = json!(match launcher {
                    radare2::Launcher::R2Pipe { .. } => "r2 executable on PATH",
                    radare2::Launcher::Libr { .. } => "libr_core through rea radare2-host",
                });
            }
            Detection::Unavailable(why) => {
                candidate["availability"] = json!("unavailable");
                candidate["reason"] = json!(why.code.as_str());
                candidate["detail"] = json!(why.detail);
                candidate["remediation"] = json!(why.remediation());
            }
        }
        vec![candidate]
    }

    /// Applies the selection rules to a request for a target of `format`.
    pub fn select(
        &self,
        requested: Option<&str>,
        format: Format,
    ) -> Result<Choice, SelectionError> {
        let (id, named) = match requested.map(str::trim).filter(|r| !r.is_empty()) {
            Some(id) => (id.to_owned(), SelectionSource::Request),
            None => match &self.default_provider {
                Some(id) => (id.trim().to_owned(), SelectionSource::Environment),
                None => ("auto".to_owned(), SelectionSource::Request),
            },
        };
        if !valid_id(&id) {
            return Err(SelectionError::Invalid(id));
        }
        match id.as_str() {
            "auto" => self.auto(format),
            NATIVE_PROVIDER_ID => Ok(Choice::Native(named)),
            RADARE2 if self.radare2.is_some() => self.radare2(format, named),
            other => Err(SelectionError::Unknown {
                id: other.to_owned(),
                known: ["auto", NATIVE_PROVIDER_ID]
                    .into_iter()
                    .chain(self.offered())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    fn auto(&self, format: Format) -> Result<Choice, SelectionError> {
        let mut usable: Vec<Choice> = self
            .offered()
            .into_iter()
            .filter_map(|id| match id {
                RADARE2 => self
                    .radare2(format, SelectionSource::AutoSingleCandidate)
                    .ok(),
                _ => None,
            })
            .collect();
        match usable.len() {
            0 => Ok(Choice::Native(SelectionSource::AutoNoDeepCandidate)),
            1 => Ok(usable.remove(0)),
            _ => Err(SelectionError::Ambiguous(self.offered().join(", "))),
        }
    }

    fn radare2(&self, format: Format, source: SelectionSource) -> Result<Choice, SelectionError> {
        let Some((detection, options)) = &self.radare2 else {
            return Err(SelectionError::Unknown {
                id: RADARE2.to_owned(),
                known: "auto, native".to_owned(),
            });
        };
        let launcher = match detection {
            Detection::Available(launcher) => launcher.clone(),
            Detection::Unavailable(why) => {
                return Err(SelectionError::Unavailable {
                    id: RADARE2.to_owned(),
                    code: why.code.as_str(),
                    detail: why.detail.clone(),
                    remediation: why.remediation().to_owned(),
                });
            }
        };
        if let Some(reason) = radare2_supports(format) {
            return Err(SelectionError::TargetUnsupported {
                id: RADARE2.to_owned(),
                reason: reason.to_owned(),
            });
        }
        Ok(Choice::Radare2 {
            launcher,
            options: *options,
            source,
        })
    }
}

/// `None` when radare2 supports the format, else why not.
fn radare2_supports(format: Format) -> Option<&'static str> {
    match format {
        Format::MachOUniversal => Some(
            "radare2 reads only the first slice of a universal Mach-O; open it with `native`, \
             which analyses every slice",
        ),
        Format::Elf | Format::MachO | Format::Pe | Format::Coff => None,
    }
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::providers::radare2::{Launcher, Unavailable, UnavailableCode};

    fn available() -> DeepProviders {
        DeepProviders::with_radare2(
            Detection::Available(Launcher::R2Pipe {
                executable: PathBuf::from("/usr/bin/r2"),
            }),
            Radare2Options::default(),
        )
    }

    fn unavailable() -> DeepProviders {
        DeepProviders::with_radare2(
            Detection::Unavailable(Unavailable {
                code: UnavailableCode::ExecutableMissing,
                detail: "no r2 on PATH".to_owned(),
            }),
            Radare2Options::default(),
        )
    }

    #[test]
    fn auto_binds_the_single_available_candidate_or_native() {
        assert!(matches!(
            available().select(None, Format::Elf),
            Ok(Choice::Radare2 {
                source: SelectionSource::AutoSingleCandidate,
                ..
            })
        ));
        assert_eq!(
            unavailable().select(Some("auto"), Format::Elf),
            Ok(Choice::Native(SelectionSource::AutoNoDeepCandidate))
        );
        assert_eq!(
            DeepProviders::none().select(None, Format::Elf),
            Ok(Choice::Native(SelectionSource::AutoNoDeepCandidate))
        );
        // A candidate that does not support the target is not a candidate.
        assert_eq!(
            available().select(None, Format::MachOUniversal),
            Ok(Choice::Native(SelectionSource::AutoNoDeepCandidate))
        );
    }

    #[test]
    fn a_named_provider_that_cannot_serve_is_an_error_never_a_fallback() {
        let error = unavailable()
            .select(Some("radare2"), Format::Elf)
            .unwrap_err();
        assert!(matches!(
            error,
            SelectionError::Unavailable {
                code: "executable_missing",
                ..
            }
        ));
        let error = available()
            .select(Some("radare2"), Format::MachOUniversal)
            .unwrap_err();
        assert!(matches!(error, SelectionError::TargetUnsupported { .. }));
        let error = DeepProviders::none()
            .select(Some("radare2"), Format::Elf)
            .unwrap_err();
        assert!(matches!(error, SelectionError::Unknown { .. }));
        assert_eq!(
            available().select(Some("native"), Format::Elf),
            Ok(Choice::Native(SelectionSource::Request))
        );
        assert!(matches!(
            available().select(Some("Radare2"), Format::Elf),
            Err(SelectionError::Invalid(_))
        ));
    }

    #[test]
    fn the_environment_default_applies_only_without_a_request() {
        let mut providers = available();
        providers.default_provider = Some("native".to_owned());
        assert_eq!(
            providers.select(None, Format::Elf),
            Ok(Choice::Native(SelectionSource::Environment))
        );
        assert!(matches!(
            providers.select(Some("radare2"), Format::Elf),
            Ok(Choice::Radare2 {
                source: SelectionSource::Request,
                ..
            })
        ));
    }

    #[test]
    fn candidates_report_availability_without_starting_anything() {
        let listed = unavailable().candidates(None);
        assert_eq!(listed[0]["availability"], json!("unavailable"));
        assert_eq!(listed[0]["target_support"], json!("unknown"));
        assert_eq!(listed[0]["reason"], json!("executable_missing"));
        assert!(DeepProviders::none().candidates(None).is_empty());
        assert_eq!(
            available().candidates(Some(Format::MachOUniversal))[0]["target_support"],
            json!("unsupported")
        );
    }
}
