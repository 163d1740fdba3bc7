//! Tool failures as the client sees them: a stable code, a message and a
//! remediation that says what to do next.
//!
//! Codes and remediations live in [`ErrorCode`]; this module maps every
//! domain error (plain `thiserror` types of the layers below) into one.
//! Messages come from the domain error and name the values involved; a
//! remediation differs from its code's only where the domain knows the
//! remedy (how to install a provider, which kind of Evidence was wanted).

mod code;

use serde::Serialize;
use serde_json::{Value, json};

pub use code::ErrorCode;

use crate::artifacts::ArtifactError;
use crate::capture::CaptureError;
use crate::ground::confined::OpenError;
use crate::javascript::JsError;
use crate::providers::ProviderError;
use crate::providers::native::FunctionError;
use crate::providers::radare2::{Radare2Error, UnavailableCode};
use crate::session::admission::AdmissionError;
use crate::session::capture_policy::CapturePathError;
use crate::session::policy::WriteError;
use crate::session::{
    BundleError, Interruption, LedgerError, SelectionError, SessionError, UnknownError,
};
use crate::tools::compare::DossierError;
use crate::tools::shared::ledger::FetchError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    pub remediation: String,
    /// Structured detail a client can act on without parsing the message
    /// (e.g. the current head on a revision conflict); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ToolError {
    /// A failure with its code's remediation.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
            remediation: code.remediation().to_owned(),
            data: None,
        }
    }

    /// The same error with structured detail.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The remedy the domain knows better than the code's general advice.
    fn advising(mut self, remediation: impl Into<String>) -> Self {
        self.remediation = remediation.into();
        self
    }

    /// A mutation or write was attempted without `approved: true`.
    pub fn approval_required(tool: &str) -> Self {
        ToolError::new(
            ErrorCode::ApprovalRequired,
            format!("{tool} changes state and needs explicit approval"),
        )
    }

    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        ToolError::new(ErrorCode::InvalidArguments, message)
    }
}

impl From<SessionError> for ToolError {
    fn from(e: SessionError) -> Self {
        let message = e.to_string();
        let code = match e {
            SessionError::TargetRequired => ErrorCode::TargetRequired,
            SessionError::NoCodeDocuments { .. } => ErrorCode::NoCodeDocuments,
            SessionError::Artifact(a) => return a.into(),
            SessionError::Admission(a) => return a.into(),
            SessionError::Provider(p) => return provider_error(p, message),
            SessionError::Function(FunctionError::Provider(p)) => {
                return provider_error(p, message);
            }
            SessionError::Function(FunctionError::NotAProcedure(_)) => {
                ErrorCode::NotAProcedureStart
            }
            SessionError::Function(FunctionError::UnsupportedArchitecture(_)) => {
                ErrorCode::UnsupportedArchitecture
            }
            SessionError::Selection(SelectionError::Invalid(_)) => ErrorCode::InvalidProviderId,
            SessionError::Selection(SelectionError::Unknown { .. }) => ErrorCode::UnknownProvider,
            SessionError::Selection(SelectionError::Unavailable { remediation, .. }) => {
                return ToolError::new(ErrorCode::ProviderUnavailable, message)
                    .advising(remediation);
            }
            SessionError::Selection(SelectionError::TargetUnsupported { .. }) => {
                ErrorCode::TargetUnsupported
            }
            SessionError::Selection(SelectionError::Ambiguous(_)) => ErrorCode::AmbiguousProvider,
            SessionError::Radare2(e) => return e.into(),
            SessionError::Ledger(e) => ledger_code(&e),
            SessionError::Unknown(e) => return unknown_error(e, message),
            SessionError::Write(e) => return e.into(),
            SessionError::Bundle(e) => bundle_code(&e),
            SessionError::Interrupted(Interruption::Cancelled) => ErrorCode::Cancelled,
            SessionError::Interrupted(Interruption::TimedOut(_)) => ErrorCode::CallTimeout,
            SessionError::Evidence(_) => ErrorCode::EvidenceError,
        };
        ToolError::new(code, message)
    }
}

impl From<OpenError> for ToolError {
    fn from(e: OpenError) -> Self {
        let code = match &e {
            OpenError::NotFound { .. } => ErrorCode::NotFound,
            OpenError::OutsideRoots { label: "write", .. } => ErrorCode::OutsideWriteRoots,
            OpenError::OutsideRoots { .. } => ErrorCode::OutsideReadRoots,
            OpenError::NotRegular { .. } => ErrorCode::NotARegularFile,
            OpenError::NotADirectory { .. } => ErrorCode::NotADirectory,
            OpenError::TooLarge { .. } => ErrorCode::FileTooLarge,
            OpenError::Io { .. } => ErrorCode::Unreadable,
        };
        ToolError::new(code, e.to_string())
    }
}

impl From<AdmissionError> for ToolError {
    fn from(e: AdmissionError) -> Self {
        let message = e.to_string();
        match e {
            AdmissionError::Open(open) => open.into(),
            AdmissionError::NotABinaryTarget {
                available_action, ..
            } => {
                let error = ToolError::new(ErrorCode::NotABinaryTarget, message);
                match available_action {
                    Some(action) => error
                        .advising(format!(
                            "Call {} with input_path set to this directory (no open_binary \
                             needed), or run `{}`.",
                            action.tool, action.cli
                        ))
                        .with_data(json!({ "available_action": action })),
                    None => error,
                }
            }
            AdmissionError::InvalidBundle { .. } => {
                ToolError::new(ErrorCode::InvalidAppBundle, message)
            }
            AdmissionError::BadReadRoot { .. } => ToolError::new(ErrorCode::BadReadRoot, message),
        }
    }
}

impl From<WriteError> for ToolError {
    fn from(e: WriteError) -> Self {
        let code = match &e {
            WriteError::Disabled => ErrorCode::WriteDisabled,
            WriteError::BadRoot { .. } => ErrorCode::BadWriteRoot,
            WriteError::OutsideRoots { .. } => ErrorCode::OutsideWriteRoots,
            WriteError::BadPath { .. } => ErrorCode::InvalidWritePath,
            WriteError::AlreadyExists { .. } => ErrorCode::FileExists,
            WriteError::Io { .. } => ErrorCode::Unwritable,
        };
        ToolError::new(code, e.to_string())
    }
}

impl From<Radare2Error> for ToolError {
    fn from(e: Radare2Error) -> Self {
        let message = e.to_string();
        let code = match &e {
            Radare2Error::Unavailable(u) => {
                let code = match u.code {
                    UnavailableCode::ExecutableMissing => ErrorCode::ExecutableMissing,
                    UnavailableCode::RuntimeMissing => ErrorCode::RuntimeMissing,
                    UnavailableCode::UnsupportedHost => ErrorCode::UnsupportedHost,
                };
                return ToolError::new(code, message).advising(u.remediation());
            }
            Radare2Error::UnsafePath { .. } => ErrorCode::UnsafePath,
            Radare2Error::Spawn { .. } => ErrorCode::ProviderStartFailed,
            Radare2Error::Timeout { .. } => ErrorCode::ProviderTimeout,
            Radare2Error::Exited { .. } => ErrorCode::ProviderExited,
            Radare2Error::OutputTooLarge { .. } => ErrorCode::ProviderOutputTooLarge,
            Radare2Error::NoFunction { .. } => ErrorCode::NoFunction,
            Radare2Error::BadOutput { .. } => ErrorCode::ProviderBadOutput,
            Radare2Error::InvalidOption { .. } => ErrorCode::InvalidProviderOptions,
        };
        ToolError::new(code, message)
    }
}

impl From<JsError> for ToolError {
    fn from(e: JsError) -> Self {
        let message = e.to_string();
        let code = match e {
            JsError::Open(open) => return open.into(),
            JsError::LimitOutOfRange { .. } => ErrorCode::LimitOutOfRange,
            JsError::Io { .. } => ErrorCode::ApplicationUnreadable,
            JsError::NotAnApplication { .. } => ErrorCode::NotAnApplication,
            JsError::MalformedAsar { .. } => ErrorCode::AsarMalformed,
            JsError::Invalid { .. } => ErrorCode::AnalysisInvalid,
        };
        ToolError::new(code, message)
    }
}

impl From<ArtifactError> for ToolError {
    fn from(e: ArtifactError) -> Self {
        let code = match &e {
            ArtifactError::LimitOutOfRange { .. } => ErrorCode::LimitOutOfRange,
            ArtifactError::Io { .. } => ErrorCode::ArtifactUnreadable,
            ArtifactError::Malformed { .. } => ErrorCode::ContainerMalformed,
            ArtifactError::FormatMismatch { .. } => ErrorCode::ArtifactFormatMismatch,
            ArtifactError::Invalid { .. } => ErrorCode::InspectionInvalid,
        };
        ToolError::new(code, e.to_string())
    }
}

fn ledger_code(e: &LedgerError) -> ErrorCode {
    match e {
        LedgerError::Full { .. } => ErrorCode::LedgerFull,
        LedgerError::Integrity { .. } => ErrorCode::IntegrityError,
    }
}

fn unknown_error(e: UnknownError, message: String) -> ToolError {
    let code = match e {
        UnknownError::Invalid(_) => ErrorCode::InvalidArguments,
        UnknownError::NotFound(_) => ErrorCode::UnknownNotFound,
        UnknownError::AlreadyExists(_) => ErrorCode::UnknownExists,
        UnknownError::RevisionConflict { head, .. } => {
            return ToolError::new(ErrorCode::RevisionConflict, message)
                .with_data(json!({"current_head": head}));
        }
        UnknownError::InvalidTransition(_) => ErrorCode::InvalidTransition,
        UnknownError::EvidenceNotFound(_) => ErrorCode::EvidenceNotFound,
        UnknownError::Integrity(_) => ErrorCode::IntegrityError,
        UnknownError::Ledger(e) => ledger_code(&e),
    };
    ToolError::new(code, message)
}

fn bundle_code(e: &BundleError) -> ErrorCode {
    match e {
        BundleError::Io { .. } => ErrorCode::Unreadable,
        BundleError::TooLarge { .. } => ErrorCode::BundleTooLarge,
        BundleError::Invalid(_) => ErrorCode::InvalidBundle,
        BundleError::Record { .. } => ErrorCode::IntegrityError,
    }
}

fn provider_error(e: ProviderError, message: String) -> ToolError {
    let code = match e {
        ProviderError::Io { .. } => ErrorCode::Unreadable,
        ProviderError::UnsupportedFormat { .. } => ErrorCode::UnsupportedFormat,
        ProviderError::Malformed { .. } => ErrorCode::MalformedBinary,
        ProviderError::UnknownDocument { .. } => ErrorCode::UnknownDocument,
        // `tools::tool` says which (cancelled or past the deadline).
        ProviderError::Interrupted => ErrorCode::Cancelled,
    };
    ToolError::new(code, message)
}

impl From<ProviderError> for ToolError {
    fn from(e: ProviderError) -> Self {
        let message = e.to_string();
        provider_error(e, message)
    }
}

impl From<FetchError> for ToolError {
    fn from(e: FetchError) -> Self {
        let message = e.to_string();
        match e {
            FetchError::Malformed { .. } => ToolError::invalid_arguments(message),
            FetchError::NotRetained { .. } => ToolError::new(ErrorCode::EvidenceNotFound, message),
            FetchError::WrongKind { expected, .. } => {
                ToolError::new(ErrorCode::WrongEvidenceKind, message).advising(format!(
                    "Pass the evidence_id of a retained {expected} result."
                ))
            }
        }
    }
}

impl From<DossierError> for ToolError {
    fn from(e: DossierError) -> Self {
        ToolError::new(ErrorCode::InvalidDossier, e.to_string())
    }
}

impl From<CapturePathError> for ToolError {
    fn from(e: CapturePathError) -> Self {
        let code = match &e {
            CapturePathError::OutsideRoots { .. } => ErrorCode::OutsideCaptureRoots,
            CapturePathError::Interpreter { .. } => ErrorCode::InterpreterOutsideCaptureRoots,
            CapturePathError::Relative { .. }
            | CapturePathError::Unresolvable { .. }
            | CapturePathError::WrongKind { .. } => ErrorCode::InvalidCapturePath,
        };
        ToolError::new(code, e.to_string())
    }
}

impl From<CaptureError> for ToolError {
    fn from(e: CaptureError) -> Self {
        let code = match &e {
            CaptureError::InvalidScenario { .. } => ErrorCode::InvalidArguments,
            CaptureError::Unsupported => ErrorCode::UnsupportedPlatform,
            CaptureError::WouldRunAsRoot => ErrorCode::WouldRunAsRoot,
            CaptureError::Spawn(_) => ErrorCode::SpawnFailed,
            CaptureError::NetworkIsolation(_) => ErrorCode::NetworkIsolationUnavailable,
            CaptureError::HostDeadline(_) => ErrorCode::CaptureTimeout,
            CaptureError::Stopped { .. } => ErrorCode::Cancelled,
            CaptureError::HostStart(_)
            | CaptureError::HostFailed(_)
            | CaptureError::InvalidCapture(_)
            | CaptureError::Io(_) => ErrorCode::CaptureFailed,
        };
        ToolError::new(code, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::AvailableAction;

    #[test]
    fn a_domain_error_keeps_its_message_and_gets_its_code_and_remediation() {
        let error = ToolError::from(OpenError::OutsideRoots {
            path: "/x".into(),
            label: "write",
            roots: "/w".into(),
        });
        assert_eq!(error.code, "outside_write_roots");
        assert!(error.message.contains("/x"), "{}", error.message);
        assert_eq!(
            error.remediation,
            ErrorCode::OutsideWriteRoots.remediation()
        );
        assert!(error.remediation.contains("--write-root"));
    }

    #[test]
    fn a_directory_an_analysis_applies_to_says_which() {
        let action = AvailableAction::analyze_javascript("/apps/my app");
        let error = ToolError::from(AdmissionError::NotABinaryTarget {
            path: "/apps/my app".into(),
            available_action: Some(action),
        });
        assert_eq!(error.code, "not_a_binary_target");
        assert!(error.remediation.contains("analyze_javascript_application"));
        let data = error.data.expect("the action as data");
        assert_eq!(
            data["available_action"]["tool"],
            "analyze_javascript_application"
        );
        let plain = ToolError::from(AdmissionError::NotABinaryTarget {
            path: "/srv".into(),
            available_action: None,
        });
        assert!(plain.remediation.contains(".app"));
        assert!(plain.data.is_none());
    }

    #[test]
    fn the_write_policy_says_how_to_enable_writing() {
        let error = ToolError::from(WriteError::Disabled);
        assert_eq!(error.code, "write_disabled");
        assert!(error.remediation.contains("--write-root"));
    }
}
