//! rea's side of one worker: start it on a sealed copy of the document,
//! check its hello, load the knowledge, then one request at a time, each
//! under a deadline and the caller's interruption check. A worker that
//! passes its deadline, is interrupted, or dies is killed and never reused.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::knowledge::Knowledge;
use super::protocol::{Decompiled, Hello, MAX_LINE_BYTES, Reply, Request};
use crate::ground::child::{ChildOptions, Process, ReadFailure};

/// What a worker may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Its address space (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// One procedure's wall-clock deadline.
    pub deadline: Duration,
    /// Loading the document and the knowledge.
    pub load_deadline: Duration,
    /// The engine's flow limit per procedure (its default is 100,000,
    /// which lets a 1 KB file drive it to 5 GB).
    pub max_instructions: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            memory_bytes: 2 << 30,
            deadline: Duration::from_secs(30),
            load_deadline: Duration::from_secs(120),
            max_instructions: 30_000,
        }
    }
}

/// Why a worker gave no C for a procedure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkerFailure {
    #[error("the procedure passed its deadline of {seconds} s; the worker was stopped")]
    Timeout { seconds: u64 },
    #[error("the call was cancelled; the worker was stopped")]
    Cancelled,
    #[error("the decompile worker ended ({status}){stderr}")]
    Died { status: String, stderr: String },
    #[error("the decompiler cannot decompile this procedure: {0}")]
    Refused(String),
    #[error("the decompile worker cannot start: {0}")]
    Start(String),
    #[error("the decompile worker answered out of protocol: {0}")]
    Protocol(String),
}

impl WorkerFailure {
    /// Only a refusal leaves the worker fit for the next request.
    pub fn keeps_worker(&self) -> bool {
        matches!(self, WorkerFailure::Refused(_))
    }
}

pub struct Worker {
    process: Process,
    calls: u32,
    language: String,
}

impl Worker {
    /// Starts `program decompile-worker` on `document` and loads
    /// `knowledge`, within the load deadline.
    pub fn start(
        program: &Path,
        document: &std::fs::File,
        knowledge: &Knowledge,
        limits: &Limits,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Worker, WorkerFailure> {
        let options = ChildOptions {
            delimiter: b'\n',
            memory_bytes: Some(limits.memory_bytes),
            die_with_rea: true,
        };
        let process = Process::spawn_with(
            program,
            &[OsString::from("decompile-worker")],
            Some(document),
            options,
        )
        .map_err(|e| WorkerFailure::Start(e.to_string()))?;
        let mut worker = Worker {
            process,
            calls: 0,
            language: String::new(),
        };
        let hello: Hello = worker.read(limits.load_deadline, interrupted)?;
        if hello != Hello::current() {
            return Err(WorkerFailure::Protocol(format!(
                "it speaks protocol {} of engine {}, rea needs {} of {}",
                hello.protocol,
                crate::ground::text::excerpt(&hello.engine, 40),
                Hello::current().protocol,
                Hello::current().engine
            )));
        }
        let load = Request::Load {
            knowledge: Box::new(knowledge.clone()),
            max_instructions: limits.max_instructions,
        };
        match worker.exchange(&load, limits.load_deadline, interrupted)? {
            Reply::Loaded { language } => {
                worker.language = language;
                Ok(worker)
            }
            Reply::Failed { message } => Err(WorkerFailure::Refused(message)),
            Reply::Decompiled(_) => Err(WorkerFailure::Protocol("C before any request".into())),
        }
    }

    /// The engine's language id for the document.
    pub fn language(&self) -> &str {
        &self.language
    }

    /// Requests served so far.
    pub fn calls(&self) -> u32 {
        self.calls
    }

    /// The worker's resident memory now, in bytes.
    pub fn resident_bytes(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.process.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }

    pub fn pid(&self) -> u32 {
        self.process.id()
    }

    /// The procedure at `address`, within the deadline.
    pub fn decompile(
        &mut self,
        address: u64,
        limits: &Limits,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Decompiled, WorkerFailure> {
        self.calls += 1;
        match self.exchange(
            &Request::Decompile { address },
            limits.deadline,
            interrupted,
        )? {
            Reply::Decompiled(done) => Ok(*done),
            Reply::Failed { message } => Err(WorkerFailure::Refused(message)),
            Reply::Loaded { .. } => Err(WorkerFailure::Protocol(
                "a load reply to a decompile".into(),
            )),
        }
    }

    fn exchange(
        &mut self,
        request: &Request,
        deadline: Duration,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<Reply, WorkerFailure> {
        let line =
            serde_json::to_string(request).map_err(|e| WorkerFailure::Protocol(e.to_string()))?;
        if self.process.send(&line).is_err() {
            return Err(self.died());
        }
        self.read(deadline, interrupted)
    }

    fn read<T: serde::de::DeserializeOwned>(
        &mut self,
        deadline: Duration,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<T, WorkerFailure> {
        match self
            .process
            .read_answer_unless(deadline, MAX_LINE_BYTES, interrupted)
        {
            Ok(bytes) => {
                serde_json::from_slice(&bytes).map_err(|e| WorkerFailure::Protocol(e.to_string()))
            }
            Err(ReadFailure::Timeout) => Err(WorkerFailure::Timeout {
                seconds: deadline.as_secs(),
            }),
            Err(ReadFailure::Interrupted) => Err(WorkerFailure::Cancelled),
            Err(ReadFailure::TooLarge) => Err(WorkerFailure::Protocol(
                "a reply over the line limit".into(),
            )),
            Err(ReadFailure::Eof) => Err(self.died()),
        }
    }

    /// How the worker ended, once its output closed.
    fn died(&mut self) -> WorkerFailure {
        let (status, stderr) = self.process.finish();
        WorkerFailure::Died {
            status,
            stderr: if stderr.is_empty() {
                String::new()
            } else {
                format!(": {}", crate::ground::hidden::escape_for_c(&stderr))
            },
        }
    }
}
