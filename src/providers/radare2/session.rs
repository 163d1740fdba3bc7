//! [`Radare2Session`]: one target analysed by one radare2 process at a time.
//!
//! The process starts on [`Radare2Session::open`] (or the first operation),
//! loads the file, and runs `aa` once. Every command has a deadline and an
//! output cap. When one is exceeded, or radare2 dies, the process is killed
//! and reaped, the operation fails with a typed error, and the next
//! operation starts a fresh process (load and `aa` again). Nothing ever falls
//! back to another provider.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::super::Inventory;
use super::super::code::{CallSite, FunctionDossier};
use super::command::{AnalysisDepth, Command, Kind};
use super::convert::{self, Sections, XrefsTo};
use super::detect::Launcher;
use super::json::{
    BlockJson, FunctionJson, OpJson, SectionJson, SymbolJson, VersionJson, XrefJson, parse_list,
    parse_object,
};
use crate::ground::child::{ChildOptions, Process, ReadFailure};

/// radare2 answers end at a NUL (r2pipe); it dies with rea and may use at
/// most 8 GiB of address space, so a hostile file cannot take the machine.
const RADARE2_CHILD: ChildOptions = ChildOptions {
    delimiter: 0,
    memory_bytes: Some(8 << 30),
    die_with_rea: true,
};
use super::target_path::check_target_path;
use super::{MAX_PROCEDURES, PROVIDER_ID, Radare2Error};
use super::{dossier, inventory};
use crate::providers::ProviderIdentity;

/// Default deadline for loading the file and for analysis passes (`aa`, `af`).
pub const DEFAULT_ANALYSIS_TIMEOUT: Duration = Duration::from_secs(60);
/// Default deadline for every other command.
pub const DEFAULT_QUERY_TIMEOUT: Duration = Duration::from_secs(10);
/// Default cap on one command's answer. `aflj` costs about 2 KB per
/// function, so this covers some 30,000 functions.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 << 20;

const ENV_ANALYSIS_TIMEOUT: &str = "REA_RADARE2_ANALYSIS_TIMEOUT_SECS";
const ENV_QUERY_TIMEOUT: &str = "REA_RADARE2_QUERY_TIMEOUT_SECS";
const ENV_MAX_OUTPUT: &str = "REA_RADARE2_MAX_OUTPUT_BYTES";
const ENV_ANALYSIS: &str = "REA_RADARE2_ANALYSIS";

/// Settings applied before the file loads, identically for both launchers:
/// no colour or prompts in answers; relocations applied in an I/O cache so
/// code shows what GOT slots hold (5.7.4 has no `bin.relocs.apply`); raw
/// symbol names (`sym._ZN…`), comparable with the native provider's.
const SETTINGS: [&str; 4] = [
    "scr.color=0",
    "scr.interactive=false",
    "bin.cache=true",
    "bin.demangle=false",
];

/// The label of the wait for radare2's first NUL (the file is loaded).
const LOAD: &str = "load the file";

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timeouts {
    /// Loading the file and analysis passes.
    pub analysis: Duration,
    /// Every other command.
    pub query: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            analysis: DEFAULT_ANALYSIS_TIMEOUT,
            query: DEFAULT_QUERY_TIMEOUT,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Radare2Options {
    pub timeouts: Timeouts,
    /// Cap on one command's answer, in bytes.
    pub max_output_bytes: usize,
    /// The analysis run once after loading.
    pub analysis: AnalysisDepth,
}

impl Default for Radare2Options {
    fn default() -> Self {
        Radare2Options {
            timeouts: Timeouts::default(),
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            analysis: AnalysisDepth::default(),
        }
    }
}

impl Radare2Options {
    /// Defaults overridden by `REA_RADARE2_ANALYSIS_TIMEOUT_SECS`,
    /// `REA_RADARE2_QUERY_TIMEOUT_SECS`, `REA_RADARE2_MAX_OUTPUT_BYTES` and
    /// `REA_RADARE2_ANALYSIS` (`aa`, `aaa` or `aaaa`).
    pub fn from_env() -> Result<Radare2Options, Radare2Error> {
        Radare2Options::from_lookup(|name| std::env::var(name).ok())
    }

    /// As [`Radare2Options::from_env`], reading variables through `lookup`.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Radare2Options, Radare2Error> {
        let mut options = Radare2Options::default();
        if let Some(v) = lookup(ENV_ANALYSIS_TIMEOUT) {
            options.timeouts.analysis = seconds(ENV_ANALYSIS_TIMEOUT, &v)?;
        }
        if let Some(v) = lookup(ENV_QUERY_TIMEOUT) {
            options.timeouts.query = seconds(ENV_QUERY_TIMEOUT, &v)?;
        }
        if let Some(v) = lookup(ENV_MAX_OUTPUT) {
            options.max_output_bytes = v
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|&b| b > 0)
                .ok_or_else(|| {
                    invalid(
                        ENV_MAX_OUTPUT,
                        &v,
                        "expected a positive whole number of bytes",
                    )
                })?;
        }
        if let Some(v) = lookup(ENV_ANALYSIS) {
            options.analysis = AnalysisDepth::parse(&v)
                .ok_or_else(|| invalid(ENV_ANALYSIS, &v, "expected aa, aaa or aaaa"))?;
        }
        Ok(options)
    }

    fn timeout(&self, kind: Kind) -> Duration {
        match kind {
            Kind::Analysis => self.timeouts.analysis,
            Kind::Query => self.timeouts.query,
        }
    }
}

fn seconds(name: &str, value: &str) -> Result<Duration, Radare2Error> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 1e7)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| invalid(name, value, "expected a positive number of seconds"))
}

fn invalid(name: &str, value: &str, reason: &str) -> Radare2Error {
    Radare2Error::InvalidOption {
        name: name.to_string(),
        value: value.to_string(),
        reason: reason.to_string(),
    }
}

/// What `open` learned once per process.
struct Opened {
    version: String,
    sections: Sections,
}

pub struct Radare2Session {
    /// The target as the session names it (messages only).
    target: PathBuf,
    /// The opened target: radare2 reads this descriptor, never the path.
    file: std::fs::File,
    launcher: Launcher,
    options: Radare2Options,
    process: Option<Process>,
    opened: Option<Opened>,
    lineage: Vec<u32>,
}

impl Radare2Session {
    /// A session on the file at `target`, opened once here (unconfined:
    /// tests and tools that name a file directly). The server opens beneath
    /// its read roots and calls [`Radare2Session::from_file`].
    pub fn new(
        target: &Path,
        launcher: Launcher,
        options: Radare2Options,
    ) -> Result<Radare2Session, Radare2Error> {
        let file = crate::ground::confined::Roots::default()
            .open_file(target)
            .map_err(|e| Radare2Error::UnsafePath {
                path: target.display().to_string(),
                reason: format!("it cannot be opened: {e}"),
            })?;
        let absolute = std::path::absolute(target).unwrap_or_else(|_| target.to_path_buf());
        Radare2Session::from_file(file.into_file(), &absolute, launcher, options)
    }

    /// A session on an opened file; nothing starts until
    /// [`Radare2Session::open`] or the first operation. radare2 is handed
    /// the descriptor (as `/proc/self/fd/3` in its own process), so what it
    /// reads is what the session opened, whatever happens to `target`.
    pub fn from_file(
        file: std::fs::File,
        target: &Path,
        launcher: Launcher,
        options: Radare2Options,
    ) -> Result<Radare2Session, Radare2Error> {
        check_target_path(Path::new(DESCRIPTOR_PATH))?;
        Ok(Radare2Session {
            file,
            target: target.to_path_buf(),
            launcher,
            options,
            process: None,
            opened: None,
            lineage: Vec::new(),
        })
    }

    /// The path the session names the target by.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The running radare2 process, if any.
    pub fn process_id(&self) -> Option<u32> {
        self.process.as_ref().map(Process::id)
    }

    /// Every process this session started, oldest first.
    pub fn process_lineage(&self) -> &[u32] {
        &self.lineage
    }

    /// Starts radare2 if it is not running: load the file, read the version
    /// and sections, run the configured analysis (`aa` by default).
    pub fn open(&mut self) -> Result<(), Radare2Error> {
        if self.process.is_some() && self.opened.is_some() {
            return Ok(());
        }
        self.close();
        let (program, args) = launch_command(&self.launcher, Path::new(DESCRIPTOR_PATH));
        let process = Process::spawn_with(&program, &args, Some(&self.file), RADARE2_CHILD)
            .map_err(|e| Radare2Error::Spawn {
                program: program.display().to_string(),
                reason: e.to_string(),
            })?;
        self.lineage.push(process.id());
        self.process = Some(process);
        let started = self.start();
        if started.is_err() {
            self.close();
        }
        started
    }

    fn start(&mut self) -> Result<(), Radare2Error> {
        self.receive(LOAD, self.options.timeouts.analysis)?;
        let version = self.exchange(&Command::version())?;
        let version: VersionJson = parse_object(Command::version().text(), &version)?;
        let version = version.version.ok_or_else(|| Radare2Error::BadOutput {
            command: Command::version().text().to_string(),
            reason: "no `version` field".into(),
        })?;
        let sections = self.exchange(&Command::sections())?;
        let sections: Vec<SectionJson> = parse_list(Command::sections().text(), &sections)?;
        self.exchange(&Command::analyze_all(self.options.analysis))?;
        self.opened = Some(Opened {
            version,
            sections: Sections::new(&sections),
        });
        Ok(())
    }

    /// Stops radare2 (killed and reaped). The next operation starts it again.
    pub fn close(&mut self) {
        self.opened = None;
        self.process = None;
    }

    /// `radare2 (analysis aa)` (the configured depth) and the version
    /// radare2 reports (`?Vj`), e.g. `5.7.4`.
    pub fn identity(&mut self) -> Result<ProviderIdentity, Radare2Error> {
        self.open()?;
        Ok(ProviderIdentity {
            id: PROVIDER_ID.to_string(),
            name: format!("radare2 (analysis {})", self.options.analysis.as_str()),
            version: self
                .opened
                .as_ref()
                .map(|o| o.version.clone())
                .unwrap_or_default(),
        })
    }

    /// radare2's functions after its analysis (`aflj`), with raw symbol names from
    /// `isj` as aliases.
    pub fn procedures(&mut self) -> Result<Inventory, Radare2Error> {
        let functions: Vec<FunctionJson> = self.query_list(&Command::functions())?;
        let symbols: Vec<SymbolJson> = self.query_list(&Command::symbols())?;
        Ok(inventory::inventory(functions, &symbols, MAX_PROCEDURES))
    }

    /// The function radare2 knows at `entry` (defined with `af` when
    /// needed): blocks and edges (`afbj`), and up to `max_instructions`
    /// instructions decoded block by block (`pdj`), entry block first.
    pub fn analyze_function(
        &mut self,
        entry: u64,
        max_instructions: usize,
    ) -> Result<FunctionDossier, Radare2Error> {
        self.require_function(entry)?;
        let blocks: Vec<BlockJson> = self.query_list(&Command::blocks(entry))?;
        let (ops, truncated) =
            dossier::list_instructions(&blocks, entry, max_instructions, |count, start| {
                self.query_list::<OpJson>(&Command::disassemble(count, start))
            })?;
        let sections = self
            .opened
            .as_ref()
            .map(|o| o.sections.clone())
            .unwrap_or_default();
        Ok(dossier::dossier(
            entry,
            &blocks,
            &ops,
            truncated,
            max_instructions,
            &sections,
        ))
    }

    /// References to `address` (`axtj`), at most `limit`, in address order.
    pub fn xrefs_to(&mut self, address: u64, limit: usize) -> Result<XrefsTo, Radare2Error> {
        let items: Vec<XrefJson> = self.query_list(&Command::xrefs_to(address))?;
        Ok(convert::xrefs_to(address, &items, limit))
    }

    /// The call sites whose direct call targets `entry` (`axtj`, `CALL`).
    pub fn callers(&mut self, entry: u64) -> Result<Vec<CallSite>, Radare2Error> {
        let items: Vec<XrefJson> = self.query_list(&Command::xrefs_to(entry))?;
        Ok(convert::callers(entry, &items))
    }

    /// The direct calls the function at `entry` makes, from its decoded
    /// instructions. radare2 5.7.4's `afij` `callrefs` and `axffj` are not
    /// used: they mix in data references and give `call rax` a target.
    pub fn callees(&mut self, entry: u64) -> Result<Vec<CallSite>, Radare2Error> {
        Ok(self.analyze_function(entry, usize::MAX)?.callees)
    }

    fn require_function(&mut self, entry: u64) -> Result<(), Radare2Error> {
        for attempt in 0..2 {
            let known: Vec<FunctionJson> = self.query_list(&Command::function_info(entry))?;
            if known.iter().any(|f| f.offset == Some(entry)) {
                return Ok(());
            }
            if attempt == 0 {
                self.run(&Command::define_function(entry))?;
            }
        }
        Err(Radare2Error::NoFunction { address: entry })
    }

    fn query_list<T: serde::de::DeserializeOwned>(
        &mut self,
        command: &Command,
    ) -> Result<Vec<T>, Radare2Error> {
        let text = self.run(command)?;
        parse_list(command.text(), &text)
    }

    /// Opens if needed, then runs one command.
    fn run(&mut self, command: &Command) -> Result<String, Radare2Error> {
        self.open()?;
        self.exchange(command)
    }

    fn exchange(&mut self, command: &Command) -> Result<String, Radare2Error> {
        let sent = match self.process.as_mut() {
            Some(process) => process.send(command.text()).is_ok(),
            None => false,
        };
        if !sent {
            return Err(self.fail(command.text(), ReadFailure::Eof, Duration::ZERO));
        }
        self.receive(command.text(), self.options.timeout(command.kind()))
    }

    fn receive(&mut self, label: &str, timeout: Duration) -> Result<String, Radare2Error> {
        let limit = self.options.max_output_bytes;
        let answer = match self.process.as_mut() {
            Some(process) => process.read_answer_unless(
                timeout,
                limit,
                &crate::providers::interrupt::interrupted,
            ),
            None => Err(ReadFailure::Eof),
        };
        match answer {
            Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Err(failure) => Err(self.fail(label, failure, timeout)),
        }
    }

    /// Ends the process after a failed exchange and describes the failure.
    fn fail(&mut self, command: &str, failure: ReadFailure, timeout: Duration) -> Radare2Error {
        self.opened = None;
        let process = self.process.take();
        let command = command.to_string();
        match failure {
            // A stopped call leaves radare2 mid-command: end it like a
            // timeout, so the next command starts a fresh process.
            ReadFailure::Timeout | ReadFailure::Interrupted => {
                drop(process);
                Radare2Error::Timeout {
                    command,
                    seconds: timeout.as_secs_f64(),
                }
            }
            ReadFailure::TooLarge => {
                drop(process);
                Radare2Error::OutputTooLarge {
                    command,
                    limit: self.options.max_output_bytes,
                }
            }
            ReadFailure::Eof => {
                let (status, stderr) = match process {
                    Some(mut p) => p.finish(),
                    None => ("not running".to_string(), String::new()),
                };
                Radare2Error::Exited {
                    command,
                    status,
                    stderr,
                }
            }
        }
    }
}

/// The program and arguments for `launcher`. The target is the last
/// argument, after the settings; it is absolute, so never an option.
/// What radare2 opens: the target descriptor the child inherits.
const DESCRIPTOR_PATH: &str = "/proc/self/fd/3";

fn launch_command(launcher: &Launcher, target: &Path) -> (PathBuf, Vec<OsString>) {
    let mut args: Vec<OsString> = Vec::new();
    let program = match launcher {
        Launcher::R2Pipe { executable } => {
            // -q0: quiet r2pipe mode; -N: no ~/.radare2rc or user scripts,
            // which could print into the protocol.
            args.extend(["-q0", "-N"].map(OsString::from));
            executable.clone()
        }
        Launcher::Libr { dir, host } => {
            args.extend(["radare2-host", "--libr"].map(OsString::from));
            args.push(dir.as_os_str().to_owned());
            host.clone()
        }
    };
    for setting in SETTINGS {
        args.push("-e".into());
        args.push(setting.into());
    }
    if matches!(launcher, Launcher::Libr { .. }) {
        args.push("--".into());
    }
    args.push(target.as_os_str().to_owned());
    (program, args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_can_move_to_another_thread() {
        fn send<T: Send>() {}
        send::<Radare2Session>();
    }

    #[test]
    fn options_come_from_the_environment_or_defaults() {
        let defaults = Radare2Options::from_lookup(|_| None).unwrap();
        assert_eq!(defaults, Radare2Options::default());
        assert_eq!(defaults.timeouts.analysis, Duration::from_secs(60));
        let set = Radare2Options::from_lookup(|name| match name {
            ENV_ANALYSIS_TIMEOUT => Some("120".into()),
            ENV_QUERY_TIMEOUT => Some("0.5".into()),
            ENV_MAX_OUTPUT => Some("1048576".into()),
            ENV_ANALYSIS => Some(" aaa ".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(set.analysis, AnalysisDepth::Aaa);
        assert_eq!(defaults.analysis, AnalysisDepth::Aa);
        assert_eq!(set.timeouts.analysis, Duration::from_secs(120));
        assert_eq!(set.timeouts.query, Duration::from_millis(500));
        assert_eq!(set.max_output_bytes, 1 << 20);
        for (name, bad) in [
            (ENV_ANALYSIS_TIMEOUT, "-1"),
            (ENV_QUERY_TIMEOUT, "NaN"),
            (ENV_QUERY_TIMEOUT, "soon"),
            (ENV_MAX_OUTPUT, "0"),
            (ENV_ANALYSIS, "aa;!id"),
            (ENV_ANALYSIS, "aaaaa"),
        ] {
            let err =
                Radare2Options::from_lookup(|n| (n == name).then(|| bad.to_string())).unwrap_err();
            assert!(
                matches!(err, Radare2Error::InvalidOption { .. }),
                "{name}={bad}"
            );
        }
    }

    #[test]
    fn the_target_is_the_last_argument_and_settings_precede_it() {
        let target = Path::new("/tmp/a;b|c.node");
        let (program, args) = launch_command(
            &Launcher::R2Pipe {
                executable: "/usr/bin/r2".into(),
            },
            target,
        );
        assert_eq!(program, Path::new("/usr/bin/r2"));
        assert_eq!(&args[..2], ["-q0", "-N"]);
        assert_eq!(args.last().unwrap(), target.as_os_str());
        assert!(args.iter().any(|a| a == "bin.demangle=false"));

        let (program, args) = launch_command(
            &Launcher::Libr {
                dir: "/opt/libr".into(),
                host: "/bin/rea".into(),
            },
            target,
        );
        assert_eq!(program, Path::new("/bin/rea"));
        assert_eq!(&args[..3], ["radare2-host", "--libr", "/opt/libr"]);
        assert_eq!(&args[args.len() - 2..], ["--", "/tmp/a;b|c.node"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_relative_or_missing_target_is_refused_before_anything_starts() {
        let launcher = Launcher::R2Pipe {
            executable: "/nonexistent/r2".into(),
        };
        let err = Radare2Session::new(
            Path::new("/nonexistent/file"),
            launcher.clone(),
            Radare2Options::default(),
        )
        .err()
        .unwrap();
        assert!(matches!(err, Radare2Error::UnsafePath { .. }));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.bin");
        std::fs::write(&file, b"x").unwrap();
        let mut session = Radare2Session::new(&file, launcher, Radare2Options::default()).unwrap();
        assert!(session.target().is_absolute());
        assert_eq!(session.process_id(), None);
        let err = session.identity().unwrap_err();
        assert!(matches!(err, Radare2Error::Spawn { .. }));
        assert!(session.process_lineage().is_empty());
    }

    /// A scripted `r2 -q0`: the protocol, canned answers, and commands that
    /// hang, crash or flood.
    #[cfg(unix)]
    const FAKE_R2: &str = r#"#!/bin/sh
printf '\0'
while IFS= read -r line; do
  case "$line" in
    '?Vj') printf '{"version":"5.7.4"}\0' ;;
    'iSj'|'isj') printf '[]\0' ;;
    'aflj') printf '[{"offset":4096,"name":"sym.main","realsz":16}]\0' ;;
    'axtj @ 0x10') exec sleep 30 ;;
    'axtj @ 0x20') echo 'radare2 fell over' >&2; exit 7 ;;
    'axtj @ 0x30') head -c 3000 /dev/zero | tr '\0' x; printf '\0' ;;
    *) printf '\0' ;;
  esac
done
"#;

    #[cfg(unix)]
    #[test]
    fn failures_end_the_process_and_the_next_call_starts_a_fresh_one() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let r2 = dir.path().join("r2");
        std::fs::write(&r2, FAKE_R2).unwrap();
        std::fs::set_permissions(&r2, std::fs::Permissions::from_mode(0o755)).unwrap();
        let target = dir.path().join("a;b|c.bin");
        std::fs::write(&target, b"\x7fELF").unwrap();
        let options = Radare2Options {
            timeouts: Timeouts {
                analysis: Duration::from_secs(20),
                query: Duration::from_millis(300),
            },
            max_output_bytes: 1000,
            ..Radare2Options::default()
        };
        let mut session =
            Radare2Session::new(&target, Launcher::R2Pipe { executable: r2 }, options).unwrap();
        assert_eq!(session.identity().unwrap().version, "5.7.4");
        assert_eq!(session.procedures().unwrap().procedures.len(), 1);
        let first = session.process_id().unwrap();

        let err = session.xrefs_to(0x10, 10).unwrap_err();
        assert_eq!(
            err,
            Radare2Error::Timeout {
                command: "axtj @ 0x10".into(),
                seconds: 0.3
            }
        );
        assert_eq!(session.process_id(), None);
        #[cfg(target_os = "linux")]
        assert!(!Path::new(&format!("/proc/{first}")).exists());

        assert_eq!(session.procedures().unwrap().procedures.len(), 1);
        assert_eq!(session.process_lineage().len(), 2);
        assert_eq!(session.process_lineage()[0], first);

        let Radare2Error::Exited {
            command,
            status,
            stderr,
        } = session.xrefs_to(0x20, 10).unwrap_err()
        else {
            panic!("expected an exit");
        };
        assert_eq!(command, "axtj @ 0x20");
        assert!(status.contains('7'), "{status}");
        assert_eq!(stderr, "radare2 fell over");

        let err = session.xrefs_to(0x30, 10).unwrap_err();
        assert!(matches!(err, Radare2Error::OutputTooLarge { .. }));
        assert_eq!(session.process_lineage().len(), 3);
        assert_eq!(session.process_id(), None);
    }
}
