//! Tool failures as the client sees them: a stable code, a message and a
//! remediation that says what to do next.

use serde::Serialize;
use serde_json::{Value, json};

use crate::artifacts::ArtifactError;
use crate::providers::ProviderError;
use crate::providers::native::FunctionError;
use crate::session::{BundleError, LedgerError, SelectionError, SessionError, UnknownError};
use crate::tools::compare::DossierError;
use crate::tools::shared::ledger::FetchError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolError {
    pub code: &'static str,
    pub message: String,
    pub remediation: String,
    /// Structured detail a client can act on without parsing the message
    /// (e.g. the current head on a revision conflict); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
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
            data: None,
        }
    }

    /// The same error with structured detail.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// A mutation or write was attempted without `approved: true`.
    pub fn approval_required(tool: &str) -> Self {
        ToolError::new(
            "approval_required",
            format!("{tool} changes state and needs explicit approval"),
            format!(
                "Ask the user to approve this {tool} call, then repeat it with approved: true."
            ),
        )
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
            SessionError::Admission(a) => {
                let error = ToolError::new(a.code(), message, a.remediation());
                match a.data() {
                    Some(data) => error.with_data(data),
                    None => error,
                }
            }
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
            SessionError::Ledger(e) => ledger_error(e, message),
            SessionError::Unknown(e) => unknown_error(e, message),
            SessionError::Write(e) => ToolError::new(e.code(), message, e.remediation()),
            SessionError::Bundle(e) => bundle_error(e, message),
            SessionError::Interrupted(crate::session::Interruption::Cancelled) => ToolError::new(
                "cancelled",
                message,
                "Nothing changed; call again when you want the result.",
            ),
            SessionError::Interrupted(crate::session::Interruption::TimedOut(_)) => ToolError::new(
                "call_timeout",
                message,
                "Nothing changed. Ask the operator for a longer --call-timeout, or open a smaller file.",
            ),
            SessionError::Evidence(_) => ToolError::new(
                "evidence_error",
                message,
                "This is a defect in rea; please report it with the tool call that caused it.",
            ),
        }
    }
}

impl From<crate::javascript::JsError> for ToolError {
    fn from(e: crate::javascript::JsError) -> Self {
        ToolError::new(e.code(), e.to_string(), e.remediation())
    }
}

impl From<ArtifactError> for ToolError {
    fn from(e: ArtifactError) -> Self {
        ToolError::new(e.code(), e.to_string(), e.remediation())
    }
}

fn ledger_error(e: LedgerError, message: String) -> ToolError {
    match e {
        LedgerError::Full { .. } => ToolError::new(
            "ledger_full",
            message,
            "Save the investigation with export_evidence_bundle, then close_binary to clear the \
             ledger, or start a new session.",
        ),
        LedgerError::Integrity { .. } => ToolError::new(
            "integrity_error",
            message,
            "The session already holds a different record under this ID; the incoming copy was \
             altered. Export from the original session again.",
        ),
    }
}

fn unknown_error(e: UnknownError, message: String) -> ToolError {
    match e {
        UnknownError::Invalid(_) => ToolError::invalid_arguments(message),
        UnknownError::NotFound(_) => ToolError::new(
            "unknown_not_found",
            message,
            "List the current unknowns with list_unknowns and pass one of their unknown_id values.",
        ),
        UnknownError::AlreadyExists(_) => ToolError::new(
            "already_exists",
            message,
            "Update the existing unknown with update_unknown (list_unknowns shows its revision).",
        ),
        UnknownError::RevisionConflict { head, .. } => ToolError::new(
            "revision_conflict",
            message,
            "Someone changed the unknown since you read it: review data.current_head, then \
             repeat update_unknown with expected_revision set to its revision.",
        )
        .with_data(json!({"current_head": head})),
        UnknownError::InvalidTransition(_) => ToolError::new(
            "invalid_transition",
            message,
            "resolved needs a resolution (and only resolved has one); contradicted needs \
             contradicting Evidence; a verified resolution needs supporting Evidence that meets \
             the required authority and confidence (see verify_unknown_resolution).",
        ),
        UnknownError::EvidenceNotFound(_) => evidence_not_found(message),
        UnknownError::Integrity(_) => ToolError::new(
            "integrity_error",
            message,
            "The bundle or record was altered or is incomplete; export it again from the \
             original session.",
        ),
        UnknownError::Ledger(e) => ledger_error(e, message),
    }
}

fn bundle_error(e: BundleError, message: String) -> ToolError {
    match e {
        BundleError::Io { .. } => ToolError::new(
            "io_error",
            message,
            "Check that the bundle file exists and is readable.",
        ),
        BundleError::TooLarge { .. } => ToolError::new(
            "bundle_too_large",
            message,
            "Import a bundle written by export_evidence_bundle; a session's bundle never exceeds \
             the limit.",
        ),
        BundleError::Invalid(_) => ToolError::new(
            "invalid_bundle",
            message,
            "Import a file written by export_evidence_bundle, unmodified.",
        ),
        BundleError::Record { .. } => ToolError::new(
            "integrity_error",
            message,
            "A record in the bundle was altered or is malformed; nothing was imported. Export the \
             bundle again from the original session.",
        ),
    }
}

/// An Evidence ID that is well formed but not held.
pub fn evidence_not_found(message: impl Into<String>) -> ToolError {
    ToolError::new(
        "evidence_not_found",
        message,
        "Find held records with list_evidence; Evidence from a closed session is gone unless it \
         was exported and imported with import_evidence_bundle.",
    )
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
            FetchError::NotRetained { .. } => evidence_not_found(message),
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

impl From<crate::session::capture_policy::CapturePathError> for ToolError {
    fn from(e: crate::session::capture_policy::CapturePathError) -> Self {
        use crate::session::capture_policy::CapturePathError as P;
        let message = e.to_string();
        match e {
            P::OutsideRoots { .. } => ToolError::new(
                "outside_capture_roots",
                message,
                "Use an executable and working directory inside the roots binary_session lists \
                 under process_capture, or ask the operator to add a root.",
            ),
            P::Interpreter { .. } => ToolError::new(
                "interpreter_outside_capture_roots",
                message,
                "Run a binary, or a script whose #! interpreter is an absolute path inside an \
                 executable root (binary_session lists them under process_capture).",
            ),
            P::Relative { .. } | P::Unresolvable { .. } | P::WrongKind { .. } => ToolError::new(
                "invalid_path",
                message,
                "Give the absolute path of an existing regular file (executable) and of an \
                 existing directory (working_directory).",
            ),
        }
    }
}

impl From<crate::capture::CaptureError> for ToolError {
    fn from(e: crate::capture::CaptureError) -> Self {
        use crate::capture::CaptureError as C;
        let message = e.to_string();
        match e {
            C::InvalidScenario { .. } => ToolError::invalid_arguments(message),
            C::Unsupported => ToolError::new(
                "unsupported_platform",
                message,
                "Run the capture on a Linux host running rea.",
            ),
            C::WouldRunAsRoot => ToolError::new(
                "permission_required",
                message,
                "Ask the operator to set --capture-user to an unprivileged account.",
            ),
            C::Spawn(_) => ToolError::new(
                "spawn_failed",
                message,
                "Check that the executable can run on this host and that the account the capture \
                 runs as (binary_session: process_capture.run_as) can read it and enter the \
                 working directory.",
            ),
            C::NetworkIsolation(_) => ToolError::new(
                "network_isolation_unavailable",
                message,
                "Nothing ran. The operator can run rea as root, enable unprivileged user \
                 namespaces, or allow host networking with --capture-network host.",
            ),
            C::HostDeadline(_) => ToolError::new(
                "capture_timeout",
                message,
                "Lower timeout_ms or the limits and capture again.",
            ),
            C::HostStart(_) | C::HostFailed(_) | C::InvalidCapture(_) | C::Io(_) => ToolError::new(
                "capture_failed",
                message,
                "Nothing was recorded. Check the rea installation (rea doctor) and capture \
                     again; report the message if it persists.",
            ),
        }
    }
}
