//! Every failure a client can see, with its wire code and what to do about
//! it, in one place.
//!
//! A variant is a situation. Several situations share a wire code when a
//! client acts on them alike but the advice differs (a capture that is not
//! permitted and one that would run as root are both `permission_required`).
//! The wire codes are a contract: tests, prompts and clients match on them.

use serde::{Serialize, Serializer};

/// A client-facing failure: its stable code and its remediation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    // The call itself.
    InvalidArguments,
    ApprovalRequired,
    LimitOutOfRange,
    InvalidPattern,
    Cancelled,
    CallTimeout,
    AnswerTooLarge,
    PolicyDisabled,
    // The target and its documents.
    TargetRequired,
    NoCodeDocuments,
    UnknownDocument,
    UnsupportedFormat,
    MalformedBinary,
    UnsupportedArchitecture,
    NotABinaryTarget,
    InvalidAppBundle,
    // Files from outside.
    NotFound,
    OutsideReadRoots,
    OutsideWriteRoots,
    NotARegularFile,
    NotADirectory,
    FileTooLarge,
    Unreadable,
    BadReadRoot,
    // Writing.
    WriteDisabled,
    BadWriteRoot,
    InvalidWritePath,
    FileExists,
    Unwritable,
    // Providers.
    InvalidProviderId,
    UnknownProvider,
    ProviderUnavailable,
    TargetUnsupported,
    AmbiguousProvider,
    ExecutableMissing,
    RuntimeMissing,
    UnsupportedHost,
    UnsafePath,
    ProviderStartFailed,
    ProviderTimeout,
    ProviderExited,
    ProviderOutputTooLarge,
    ProviderBadOutput,
    InvalidProviderOptions,
    NoFunction,
    // Procedures and addresses.
    NotAProcedureStart,
    UnknownProcedure,
    AmbiguousProcedure,
    OutsideSegments,
    NotInProcedure,
    NotCode,
    // Evidence and the ledger.
    EvidenceNotFound,
    WrongEvidenceKind,
    NotAnInventoryPage,
    InvalidDossier,
    InvalidCapture,
    ManifestNotRetained,
    LedgerFull,
    IntegrityError,
    BundleTooLarge,
    InvalidBundle,
    EvidenceError,
    // Residual unknowns.
    UnknownNotFound,
    UnknownExists,
    RevisionConflict,
    InvalidTransition,
    // Artifacts and applications.
    ArtifactUnreadable,
    ContainerMalformed,
    AsarMalformed,
    ArtifactFormatMismatch,
    InspectionInvalid,
    ApplicationUnreadable,
    NotAnApplication,
    InputFormatMismatch,
    AnalysisInvalid,
    // Process capture.
    CaptureNotPermitted,
    WouldRunAsRoot,
    OutsideCaptureRoots,
    InterpreterOutsideCaptureRoots,
    InvalidCapturePath,
    UnsupportedPlatform,
    SpawnFailed,
    NetworkIsolationUnavailable,
    CaptureTimeout,
    CaptureFailed,
}

impl ErrorCode {
    /// The stable wire code.
    pub const fn as_str(self) -> &'static str {
        use ErrorCode::*;
        match self {
            InvalidArguments => "invalid_arguments",
            ApprovalRequired => "approval_required",
            LimitOutOfRange => "limit_out_of_range",
            InvalidPattern => "invalid_pattern",
            Cancelled => "cancelled",
            CallTimeout => "call_timeout",
            AnswerTooLarge => "answer_too_large",
            PolicyDisabled => "policy_disabled",
            TargetRequired => "target_required",
            NoCodeDocuments => "no_code_documents",
            UnknownDocument => "unknown_document",
            UnsupportedFormat => "unsupported_format",
            MalformedBinary => "malformed_binary",
            UnsupportedArchitecture => "unsupported_architecture",
            NotABinaryTarget => "not_a_binary_target",
            InvalidAppBundle | InvalidBundle => "invalid_bundle",
            NotFound => "not_found",
            OutsideReadRoots => "outside_read_roots",
            OutsideWriteRoots => "outside_write_roots",
            NotARegularFile => "not_a_regular_file",
            NotADirectory => "not_a_directory",
            FileTooLarge => "file_too_large",
            Unreadable | Unwritable => "io_error",
            BadReadRoot => "bad_read_root",
            WriteDisabled => "write_disabled",
            BadWriteRoot => "bad_write_root",
            InvalidWritePath | InvalidCapturePath => "invalid_path",
            FileExists | UnknownExists => "already_exists",
            InvalidProviderId => "invalid_provider_id",
            UnknownProvider => "unknown_provider",
            ProviderUnavailable => "provider_unavailable",
            TargetUnsupported => "target_unsupported",
            AmbiguousProvider => "ambiguous_provider",
            ExecutableMissing => "executable_missing",
            RuntimeMissing => "runtime_missing",
            UnsupportedHost => "unsupported_host",
            UnsafePath => "unsafe_path",
            ProviderStartFailed => "provider_start_failed",
            ProviderTimeout => "provider_timeout",
            ProviderExited => "provider_exited",
            ProviderOutputTooLarge => "provider_output_too_large",
            ProviderBadOutput => "provider_bad_output",
            InvalidProviderOptions => "invalid_options",
            NoFunction => "no_function",
            NotAProcedureStart => "not_a_procedure_start",
            UnknownProcedure => "unknown_procedure",
            AmbiguousProcedure => "ambiguous_procedure",
            OutsideSegments => "outside_segments",
            NotInProcedure | NotCode => "not_in_procedure",
            EvidenceNotFound => "evidence_not_found",
            WrongEvidenceKind | NotAnInventoryPage => "wrong_evidence_kind",
            InvalidDossier | InvalidCapture => "invalid_evidence",
            ManifestNotRetained => "manifest_not_retained",
            LedgerFull => "ledger_full",
            IntegrityError => "integrity_error",
            BundleTooLarge => "bundle_too_large",
            EvidenceError => "evidence_error",
            UnknownNotFound => "unknown_not_found",
            RevisionConflict => "revision_conflict",
            InvalidTransition => "invalid_transition",
            ArtifactUnreadable => "artifact_unreadable",
            ContainerMalformed | AsarMalformed => "artifact_malformed",
            ArtifactFormatMismatch => "artifact_format_mismatch",
            InspectionInvalid => "inspection_invalid",
            ApplicationUnreadable => "application_unreadable",
            NotAnApplication => "not_an_application",
            InputFormatMismatch => "input_format_mismatch",
            AnalysisInvalid => "analysis_invalid",
            CaptureNotPermitted | WouldRunAsRoot => "permission_required",
            OutsideCaptureRoots => "outside_capture_roots",
            InterpreterOutsideCaptureRoots => "interpreter_outside_capture_roots",
            UnsupportedPlatform => "unsupported_platform",
            SpawnFailed => "spawn_failed",
            NetworkIsolationUnavailable => "network_isolation_unavailable",
            CaptureTimeout => "capture_timeout",
            CaptureFailed => "capture_failed",
        }
    }

    /// What the user should do next. The message says what went wrong and
    /// names the values involved; this says what to do about it.
    pub const fn remediation(self) -> &'static str {
        use ErrorCode::*;
        match self {
            InvalidArguments => {
                "Check the argument names and types against the tool's input schema in tools/list."
            }
            ApprovalRequired => {
                "Ask the user to approve this call, then repeat it with approved: true."
            }
            LimitOutOfRange => {
                "Pass a value within the range the message gives, or omit the field for the default."
            }
            InvalidPattern => {
                "Fix the regular expression, or pass mode literal to search for the text as written."
            }
            Cancelled => "Nothing was recorded; call again when you want the result.",
            AnswerTooLarge => {
                "Ask for less: a smaller limit or max_instructions, or one list at a time with \
                 offset and limit."
            }
            CallTimeout => {
                "Nothing was recorded. Ask for less (a smaller file, a shorter capture), or ask the \
                 operator for a longer --call-timeout."
            }
            PolicyDisabled => {
                "The operator has not enabled this; binary_session shows the policy in force."
            }
            TargetRequired => "Open an executable, .app bundle or archive with open_binary first.",
            NoCodeDocuments => {
                "inspect_artifact lists what the archive holds; the code tools need an executable, \
                 so open one of its binaries as a file in its own right."
            }
            UnknownDocument => {
                "Pass one of the names list_documents returns, or omit document to use the current one."
            }
            UnsupportedFormat => {
                "Open an ELF, Mach-O (thin or universal) or PE/COFF file, a macOS .app bundle, or an \
                 archive (zip, jar, apk, ipa, wheel, ar, asar) for inspect_artifact."
            }
            MalformedBinary => "The file is damaged or truncated; analyse an intact copy.",
            UnsupportedArchitecture => {
                "Disassembly covers x86, x86-64 and arm64; open the target with a deep provider \
                 (provider_id) that supports this architecture, or use the layout and string tools."
            }
            NotABinaryTarget => {
                "Open an executable file, an archive or a macOS .app bundle; when an analysis \
                 applies to this directory, data.available_action names it."
            }
            InvalidAppBundle => {
                "Open the executable inside Contents/MacOS directly, or repair the bundle's Info.plist."
            }
            NotFound => "Check the path; a relative path resolves against rea's working directory.",
            OutsideReadRoots => {
                "Choose a path under one of the read roots binary_session lists, or ask the operator \
                 to add a --read-root."
            }
            OutsideWriteRoots => {
                "Choose a path under one of the write roots binary_session lists, or ask the operator \
                 to add a --write-root."
            }
            NotARegularFile => "Open a regular file.",
            NotADirectory => "Pass a directory.",
            FileTooLarge => "Choose a smaller file, or ask the operator to raise the limit.",
            Unreadable => "Check that the file exists and is readable.",
            BadReadRoot => "Pass existing directories to --read-root.",
            WriteDisabled => {
                "Ask the operator to start the server with `rea mcp --write-root DIR` (repeatable) \
                 and write under DIR."
            }
            BadWriteRoot => "Pass existing directories to --write-root.",
            InvalidWritePath => {
                "Pass a file path without `..` whose parent directory exists and whose final \
                 component is not a symlink."
            }
            FileExists => "Pass overwrite: true to replace the file, or choose another path.",
            Unwritable => "Check that the directory is writable and has space.",
            InvalidProviderId => "Pass provider_id auto (the default) or native.",
            UnknownProvider => {
                "Pass provider_id auto (the default) or native; binary_session lists deep candidates."
            }
            ProviderUnavailable | ExecutableMissing | RuntimeMissing | UnsupportedHost => {
                "Install what binary_session says the provider needs, or open the target with \
                 provider_id native."
            }
            TargetUnsupported => {
                "Open the target with provider_id native, or with a provider binary_session lists \
                 as supporting it."
            }
            AmbiguousProvider => {
                "Pass an explicit provider_id: one of the deep candidates binary_session lists, or native."
            }
            UnsafePath => {
                "Copy or symlink the target to an absolute path without `//` or control characters \
                 and open that."
            }
            ProviderStartFailed => {
                "Check the radare2 installation (`r2 -v`, or the REA_RADARE2_LIBR directory)."
            }
            ProviderTimeout => {
                "Raise REA_RADARE2_ANALYSIS_TIMEOUT_SECS or REA_RADARE2_QUERY_TIMEOUT_SECS, or \
                 retry; a fresh radare2 process re-runs its analysis."
            }
            ProviderExited => {
                "Retry; a fresh radare2 process re-runs its analysis. If it ends again, this file \
                 crashes radare2: use the native provider for it."
            }
            ProviderOutputTooLarge => {
                "Raise REA_RADARE2_MAX_OUTPUT_BYTES, or ask for a smaller result."
            }
            ProviderBadOutput => {
                "Use radare2 5.7.4 (r2libr==5.7.4), the version rea is tested with."
            }
            InvalidProviderOptions => "Give a positive number of seconds or bytes.",
            NoFunction => {
                "Pick an entry address from the procedure list; radare2 could not define a \
                 function at this address."
            }
            NotAProcedureStart => {
                "Pass a procedure's entry address or name (list_procedures, search_procedures), or \
                 find the procedure containing an address with resolve_containing_procedure."
            }
            UnknownProcedure => {
                "Search with search_procedures, or pass an address from list_procedures."
            }
            AmbiguousProcedure => "Pass one of the listed addresses instead of the name.",
            OutsideSegments => {
                "Check the address: for a crash PC, subtract the module's load address and add its \
                 link-time base (inspect_binary_layout lists segments)."
            }
            NotInProcedure => {
                "Try analyze_function on the nearest procedure below it (list_procedures), or bind \
                 a deep provider whose analysis may know more procedures."
            }
            NotCode => "If this is data, find the code that uses it with xrefs.",
            EvidenceNotFound => {
                "Find held records with list_evidence; Evidence from a closed session is gone \
                 unless it was exported and imported with import_evidence_bundle."
            }
            WrongEvidenceKind => {
                "Pass the evidence_id of a retained result of the kind the message names."
            }
            NotAnInventoryPage => {
                "Pass a manifest id (agm_…) or the evidence_id of an inspect_artifact result."
            }
            InvalidDossier => {
                "Re-run analyze_function on the procedure and compare the new Evidence."
            }
            InvalidCapture => {
                "Capture the scenario again with capture_process_scenario and pass the new evidence_id."
            }
            ManifestNotRetained => {
                "Open that artifact with open_binary and run inspect_artifact (paging its \
                 occurrences to the end), or import a bundle that holds it."
            }
            LedgerFull => {
                "Save the investigation with export_evidence_bundle, then close_binary to clear the \
                 ledger, or start a new session."
            }
            IntegrityError => {
                "A record or revision was altered or is incomplete, and nothing of it was taken \
                 in; export it again from the original session."
            }
            BundleTooLarge => {
                "Import a bundle written by export_evidence_bundle; a session's bundle never \
                 exceeds the limit."
            }
            InvalidBundle => "Import a file written by export_evidence_bundle, unmodified.",
            EvidenceError => {
                "This is a defect in rea; please report it with the tool call that caused it."
            }
            UnknownNotFound => {
                "List the current unknowns with list_unknowns and pass one of their unknown_id values."
            }
            UnknownExists => {
                "Update the existing unknown with update_unknown (list_unknowns shows its revision)."
            }
            RevisionConflict => {
                "Someone changed the unknown since you read it: review data.current_head, then \
                 repeat update_unknown with expected_revision set to its revision."
            }
            InvalidTransition => {
                "resolved needs a resolution (and only resolved has one); contradicted needs \
                 contradicting Evidence; a verified resolution needs supporting Evidence that \
                 meets the required authority and confidence (see verify_unknown_resolution)."
            }
            ArtifactUnreadable => "Check that the artifact exists and is readable.",
            ContainerMalformed => {
                "The container structure cannot be read; open the file as a plain binary instead."
            }
            AsarMalformed => {
                "The archive header cannot be read safely; inspect it with open_binary and \
                 inspect_artifact instead."
            }
            ArtifactFormatMismatch => {
                "Let the format be sniffed, or pass the format the file really has."
            }
            InspectionInvalid => "Re-run the inspection; do not edit inspection results by hand.",
            ApplicationUnreadable => {
                "Check that the path exists, is readable and lies inside a read root."
            }
            NotAnApplication => {
                "Pass an application directory (one holding package.json or JavaScript) or an \
                 .asar file."
            }
            InputFormatMismatch => {
                "Pass format auto (the default), or the format the path really has."
            }
            AnalysisInvalid => {
                "Re-run analyze_javascript_application on the application; do not edit analysis \
                 results by hand."
            }
            CaptureNotPermitted => {
                "Process capture needs the operator to enable it (binary_session reports the \
                 policy) and the user to approve this call; then repeat it with approved: true."
            }
            WouldRunAsRoot => "Ask the operator to set --capture-user to an unprivileged account.",
            OutsideCaptureRoots => {
                "Use an executable and working directory inside the roots binary_session lists \
                 under process_capture, or ask the operator to add a root."
            }
            InterpreterOutsideCaptureRoots => {
                "Run a binary, or a script whose #! interpreter is an absolute path inside an \
                 executable root (binary_session lists them under process_capture)."
            }
            InvalidCapturePath => {
                "Give the absolute path of an existing regular file (executable) and of an \
                 existing directory (working_directory)."
            }
            UnsupportedPlatform => "Run the capture on a Linux host running rea.",
            SpawnFailed => {
                "Check that the executable can run on this host and that the account the capture \
                 runs as (binary_session: process_capture.run_as) can read it and enter the \
                 working directory."
            }
            NetworkIsolationUnavailable => {
                "Nothing ran. The operator can run rea as root or enable unprivileged user \
                 namespaces (for the network namespace), run it on a kernel with seccomp filters \
                 (x86-64 or aarch64), or allow host networking with --capture-network host."
            }
            CaptureTimeout => "Lower timeout_ms or the limits and capture again.",
            CaptureFailed => {
                "Nothing was recorded. Check the rea installation (rea doctor) and capture again; \
                 report the message if it persists."
            }
        }
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCode::{self, *};

    /// A sample across every group, with codes shared by two situations.
    const SAMPLE: [ErrorCode; 12] = [
        InvalidArguments,
        TargetRequired,
        OutsideReadRoots,
        Unreadable,
        Unwritable,
        ProviderUnavailable,
        NotCode,
        NotAnInventoryPage,
        IntegrityError,
        AsarMalformed,
        WouldRunAsRoot,
        CaptureFailed,
    ];

    #[test]
    fn codes_are_snake_case_and_remediations_are_sentences() {
        for code in SAMPLE {
            let wire = code.as_str();
            assert!(
                wire.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{wire}"
            );
            let advice = code.remediation();
            assert!(advice.ends_with('.'), "{wire}: {advice}");
            assert!(!advice.contains("  "), "{wire}: {advice}");
        }
    }

    #[test]
    fn situations_share_a_wire_code_where_clients_act_alike() {
        assert_eq!(Unreadable.as_str(), Unwritable.as_str());
        assert_ne!(Unreadable.remediation(), Unwritable.remediation());
        assert_eq!(NotCode, "not_in_procedure");
        assert_eq!(
            serde_json::to_value(WouldRunAsRoot).unwrap(),
            serde_json::json!("permission_required")
        );
    }
}
