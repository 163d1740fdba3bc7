//! Tool failures as the client sees them: a stable code, a message and a
//! remediation that says what to do next.

use serde::Serialize;

use crate::artifacts::ArtifactError;
use crate::providers::ProviderError;
use crate::providers::native::FunctionError;
use crate::session::{LedgerError, SelectionError, SessionError};
use crate::tools::compare::{DossierError, FetchError};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolError {
    pub code: &'static str,
    pub message: String,
    pub remediation: String,
}

impl ToolError {
    pub fn new(
        code: &'static str,
        message: impl Into<String>,
        remediation: impl Into<String>,
    ) -> Self {
        ToolError {
            code,
            message: message.into(),
            remediation: remediation.into(),
        }
    }

    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        ToolError::new(
            "invalid_arguments",
            message,
            "Check the argument names and types against the tool's input schema in tools/list.",
        )
    }
}

impl From<SessionError> for ToolError {
    fn from(e: SessionError) -> Self {
        let message = e.to_string();
        match e {
            SessionError::TargetRequired => ToolError::new(
                "target_required",
                "no target is open",
                "Open an executable, .app bundle or archive with open_binary first.",
            ),
            SessionError::NoCodeDocuments { .. } => ToolError::new(
                "no_code_documents",
                message,
                "inspect_artifact lists what the archive holds; the code tools need an executable, \
                 so open one of its binaries as a file in its own right.",
            ),
            SessionError::Artifact(a) => a.into(),
            SessionError::Admission(a) => ToolError::new(a.code(), message, a.remediation()),
            SessionError::Provider(p) => provider_error(p, message),
            SessionError::Function(FunctionError::Provider(p)) => provider_error(p, message),
            SessionError::Function(FunctionError::NotAProcedure(_)) => ToolError::new(
                "not_a_procedure_start",
                message,
                "Pass a procedure's entry address or name (list_procedures, search_procedures), or \
                 find the procedure containing an address with resolve_containing_procedure.",
            ),
            SessionError::Function(FunctionError::UnsupportedArchitecture(_)) => ToolError::new(
                "unsupported_architecture",
                message,
                "Disassembly covers x86, x86-64 and arm64; open the target with a deep provider \
                 (provider_id) that supports this architecture, or use the layout and string tools.",
            ),
            SessionError::Selection(SelectionError::Invalid(_)) => ToolError::new(
                "invalid_provider_id",
                message,
                "Pass provider_id auto (the default) or native.",
            ),
            SessionError::Selection(SelectionError::Unknown { .. }) => ToolError::new(
                "unknown_provider",
                message,
                "Pass provider_id auto (the default) or native; binary_session lists deep candidates.",
            ),
            SessionError::Selection(SelectionError::Unavailable { remediation, .. }) => {
                ToolError::new("provider_unavailable", message, remediation)
            }
            SessionError::Selection(SelectionError::TargetUnsupported { .. }) => ToolError::new(
                "target_unsupported",
                message,
                "Open the target with provider_id native, or with a provider binary_session lists \
                 as supporting it.",
            ),
            SessionError::Selection(SelectionError::Ambiguous(_)) => ToolError::new(
                "ambiguous_provider",
                message,
                "Pass an explicit provider_id: one of the deep candidates binary_session lists, or native.",
            ),
            SessionError::Radare2(e) => ToolError::new(e.code(), message, e.remediation()),
            SessionError::Ledger(LedgerError::Full { .. }) => ToolError::new(
                "ledger_full",
                message,
                "Close the target with close_binary to clear the ledger, or start a new session.",
            ),
            SessionError::Evidence(_) => ToolError::new(
                "evidence_error",
                message,
                "This is a defect in rea; please report it with the tool call that caused it.",
            ),
        }
    }
}

impl From<ArtifactError> for ToolError {
    fn from(e: ArtifactError) -> Self {
        ToolError::new(e.code(), e.to_string(), e.remediation())
    }
}

fn provider_error(e: ProviderError, message: String) -> ToolError {
    match e {
        ProviderError::Io { .. } => {
            ToolError::new("io_error", message, "Check that the file is readable.")
        }
        ProviderError::UnsupportedFormat { .. } => ToolError::new(
            "unsupported_format",
            message,
            "Open an ELF, Mach-O (thin or universal) or PE/COFF file, a macOS .app bundle, or an \
             archive (zip, jar, apk, ipa, wheel, ar, asar) for inspect_artifact.",
        ),
        ProviderError::Malformed { .. } => ToolError::new(
            "malformed_binary",
            message,
            "The file is damaged or truncated; analyse an intact copy.",
        ),
        ProviderError::UnknownDocument { .. } => ToolError::new(
            "unknown_document",
            message,
            "Pass one of the names list_documents returns, or omit document to use the current one.",
        ),
    }
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
            FetchError::NotRetained { .. } => ToolError::new(
                "evidence_not_found",
                message,
                "Pass the evidence_id of a record this session still holds (list_evidence lists \
                 them where available; close_binary clears the ledger), or re-run the tool that \
                 produced it.",
            ),
            FetchError::WrongKind { expected, .. } => ToolError::new(
                "wrong_evidence_kind",
                message,
                format!("Pass the evidence_id of a retained {expected} result."),
            ),
        }
    }
}

impl From<DossierError> for ToolError {
    fn from(e: DossierError) -> Self {
        ToolError::new(
            "invalid_evidence",
            e.to_string(),
            "Re-run analyze_function on the procedure and compare the new Evidence.",
        )
    }
}
