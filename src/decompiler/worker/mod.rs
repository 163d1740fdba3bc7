//! `rea decompile-worker` (hidden): the only process that runs the engine.
//! It can abort on out-of-memory, loop until killed, or panic; rea starts
//! it under a memory cap, tied to its own life, and kills it at a deadline,
//! so none of that reaches the server.
//!
//! It reads its document from descriptor [`TARGET_FD`] (a sealed copy rea
//! made), writes only protocol lines to the stdout it was given (the
//! engine's own output goes to stderr), and serves requests until stdin
//! closes.

mod engine;
mod recorder;

use std::io::{BufRead, Write};
use std::os::fd::FromRawFd;

use super::protocol::{Hello, MAX_LINE_BYTES, Reply, Request, TARGET_FD};
use engine::Engine;

/// The largest document a worker loads (the memory cap bounds it too).
const MAX_DOCUMENT_BYTES: u64 = 2 << 30;

/// Why the worker stopped before stdin closed.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("the decompile worker cannot set up its output: {0}")]
    Setup(std::io::Error),
    #[error("the decompile worker's pipe to rea broke: {0}")]
    Pipe(std::io::Error),
    #[error(
        "the decompile worker was sent a line it cannot read ({0}); it is started by rea, not by hand"
    )]
    Protocol(String),
}

/// Serves one rea until stdin closes.
pub fn run() -> Result<(), WorkerError> {
    let mut out = protocol_output()?;
    send(&mut out, &Hello::current())?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut engine: Option<Engine> = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = std::io::Read::take(&mut input, MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(WorkerError::Pipe)?;
        if read == 0 {
            return Ok(());
        }
        if line.len() > MAX_LINE_BYTES {
            return Err(WorkerError::Protocol(
                "a request over the line limit".into(),
            ));
        }
        let request: Request =
            serde_json::from_slice(&line).map_err(|e| WorkerError::Protocol(e.to_string()))?;
        let reply = match request {
            Request::Load {
                knowledge,
                max_instructions,
            } if engine.is_none() => match document()
                .and_then(|bytes| Engine::load(bytes, &knowledge, max_instructions))
            {
                Ok(loaded) => {
                    let language = loaded.language();
                    engine = Some(loaded);
                    Reply::Loaded { language }
                }
                Err(e) => Reply::Failed { message: e.0 },
            },
            Request::Load { .. } => Reply::Failed {
                message: "a worker loads one document".into(),
            },
            Request::Decompile { address } => match engine.as_mut() {
                None => Reply::Failed {
                    message: "no document is loaded".into(),
                },
                Some(engine) => match engine.decompile(address) {
                    Ok(done) => Reply::Decompiled(Box::new(done)),
                    Err(e) => Reply::Failed { message: e.0 },
                },
            },
        };
        send(&mut out, &reply)?;
    }
}

/// The stdout rea reads, kept as a private descriptor; descriptor 1 then
/// points at stderr, so nothing the engine prints can break a reply.
fn protocol_output() -> Result<std::io::BufWriter<std::fs::File>, WorkerError> {
    // SAFETY: dup and dup2 on the process's standard descriptors; the
    // duplicate is owned by the File from here on.
    unsafe {
        let kept = libc::dup(1);
        if kept < 0 || libc::dup2(2, 1) < 0 {
            return Err(WorkerError::Setup(std::io::Error::last_os_error()));
        }
        Ok(std::io::BufWriter::new(std::fs::File::from_raw_fd(kept)))
    }
}

fn send(out: &mut impl Write, message: &impl serde::Serialize) -> Result<(), WorkerError> {
    let mut line = serde_json::to_vec(message).map_err(|e| WorkerError::Protocol(e.to_string()))?;
    line.push(b'\n');
    out.write_all(&line)
        .and_then(|()| out.flush())
        .map_err(WorkerError::Pipe)
}

/// The document, read whole from [`TARGET_FD`] by position, which is then
/// closed: a worker loads once, and the sealed copy is freed as soon as the
/// last holder lets go of it.
fn document() -> Result<Vec<u8>, engine::EngineError> {
    use std::os::unix::fs::FileExt;
    // SAFETY: rea hands the worker this descriptor and nothing else in the
    // worker owns it; it is taken only once, by the one Load.
    let file = unsafe { std::fs::File::from_raw_fd(TARGET_FD) };
    let refused = |what: &str| engine::EngineError(format!("cannot read the document: {what}"));
    let size = file.metadata().map_err(|e| refused(&e.to_string()))?.len();
    if size > MAX_DOCUMENT_BYTES {
        return Err(refused("it is larger than 2 GiB"));
    }
    let mut bytes = vec![0u8; size as usize];
    file.read_exact_at(&mut bytes, 0)
        .map_err(|e| refused(&e.to_string()))?;
    Ok(bytes)
}
