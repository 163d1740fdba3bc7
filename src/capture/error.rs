//! Capture failures. Each message says what to change; none carries an
//! environment value (secrets must not leak through errors).

/// Why a capture could not be produced. A run that ends badly (crash,
/// timeout) is not an error: it is a [`super::Capture`].
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("process capture is not supported on this platform (Linux only)")]
    Unsupported,
    #[error("scenario field `{field}` {reason}")]
    InvalidScenario { field: String, reason: String },
    #[error(
        "refusing to run the process as root: start rea as root with an unprivileged run_as, or as an ordinary user"
    )]
    WouldRunAsRoot,
    #[error(
        "the capture host could not start ({0}); check REA_CAPTURE_HOST or the rea installation"
    )]
    HostStart(String),
    #[error(
        "the capture host overran its deadline of {0} ms and was killed; lower timeout_ms or the limits"
    )]
    HostDeadline(u64),
    #[error(
        "the run was stopped before it ended (the call was cancelled or ran past the operator's deadline, or the server is stopping); {}",
        if *cleanup_verified {
            "every process it started was killed and reaped"
        } else {
            "rea could not verify that every process it started is gone"
        }
    )]
    Stopped { cleanup_verified: bool },
    #[error("the capture host failed: {0}")]
    HostFailed(String),
    #[error("the target could not be started: {0}; check the executable and working directory")]
    Spawn(String),
    #[error(
        "the run could not be isolated from the network ({0}); isolation needs a network namespace (rea running as root, or unprivileged user namespaces allowed) and seccomp filters (a kernel with CONFIG_SECCOMP_FILTER on x86-64 or aarch64), or the operator may allow host networking (--capture-network host)"
    )]
    NetworkIsolation(String),
    #[error("the capture result is invalid: {0}")]
    InvalidCapture(String),
    #[error("capture I/O failed: {0}")]
    Io(String),
}
