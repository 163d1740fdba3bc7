//! Shared test support: in-process MCP clients of both protocol eras, test
//! binaries compiled on the spot, and the pinned real-world fixtures.
#![allow(dead_code)]

#[cfg(unix)]
pub mod serve;
pub mod stdio;
/// Hostile ELF shapes, written byte by byte (shared with the unit tests).
#[path = "../../src/providers/native/synth_elf.rs"]
pub mod synth_elf;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rea::catalog::render::LoadedCatalog;
use rea::server::{Hub, ReaServer};
use rea::session::ReadRoots;
use rmcp::model::{
    CallToolRequestParams, CompletionContext, CompletionInfo, ProgressNotificationParam,
    ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Map, Value};
use tokio::sync::Notify;

/// Which protocol era a test client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` handshake, 2025-11-25.
    Legacy,
    /// Stateless 2026-07-28 with per-request metadata.
    Modern,
}

pub const ERAS: [Era; 2] = [Era::Legacy, Era::Modern];

/// Counts `notifications/prompts/list_changed` delivered to the handler,
/// and keeps every `notifications/progress` in arrival order.
#[derive(Clone, Default)]
pub struct Counter {
    pub list_changed: Arc<AtomicUsize>,
    pub notify: Arc<Notify>,
    pub progress: Arc<std::sync::Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Counter {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().expect("progress log").push(params);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
        self.notify.notify_waiters();
    }
}

pub type Client = RunningService<RoleClient, Counter>;

pub fn hub() -> Arc<Hub> {
    Hub::new(
        LoadedCatalog::embedded().expect("embedded catalog"),
        ReadRoots::default(),
    )
}

/// Connects a fresh client of `era` to a fresh server connection on `hub`.
pub async fn connect_to(hub: &Arc<Hub>, era: Era) -> (Client, ReaServer, Counter) {
    // The decompile worker is the built `rea`, not this test binary.
    rea::decompiler::shared().configure(
        Some(PathBuf::from(env!("CARGO_BIN_EXE_rea"))),
        rea::decompiler::Limits::default(),
        2,
    );
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = ReaServer::new(hub.clone());
    let handle = server.clone();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let counter = Counter::default();
    let lifecycle = match era {
        Era::Legacy => ClientLifecycleMode::Initialize,
        Era::Modern => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    };
    let client = rmcp::service::ClientServiceExt::serve_with_lifecycle(
        counter.clone(),
        client_io,
        lifecycle,
    )
    .await
    .expect("client connects");
    (client, handle, counter)
}

pub async fn connect(era: Era) -> (Client, ReaServer, Counter) {
    connect_to(&hub(), era).await
}

pub fn object(v: Value) -> Map<String, Value> {
    v.as_object().cloned().expect("a JSON object")
}

/// Calls a tool and returns its structured content and whether it failed.
pub async fn call(client: &Client, tool: &str, args: Value) -> (Value, bool) {
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(object(args)))
        .await
        .expect("tools/call answers");
    (
        result
            .structured_content
            .clone()
            .expect("structured content"),
        result.is_error.unwrap_or(false),
    )
}

pub async fn complete(
    client: &Client,
    prompt: &str,
    argument: &str,
    value: &str,
) -> CompletionInfo {
    complete_with(client, prompt, argument, value, None).await
}

pub async fn complete_with(
    client: &Client,
    prompt: &str,
    argument: &str,
    value: &str,
    context: Option<Value>,
) -> CompletionInfo {
    let context = context.map(|c| {
        let args = c
            .as_object()
            .expect("context object")
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect();
        CompletionContext::with_arguments(args)
    });
    client
        .complete_prompt_argument(prompt, argument, value, context)
        .await
        .expect("completion answers")
}

/// With `REA_REQUIRE_EXTERNALS=1` (CI) a missing external is a failure;
/// elsewhere the test prints why it is skipped.
pub fn require_externals() -> bool {
    std::env::var("REA_REQUIRE_EXTERNALS").is_ok_and(|v| v == "1")
}

/// Skips the rest of a test whose external is missing. The line goes to
/// the process's stderr directly, not through the test harness's capture,
/// so a skip shows in plain `cargo test` output instead of passing
/// silently.
pub fn skip(reason: &str) {
    use std::io::Write;
    assert!(!require_externals(), "REA_REQUIRE_EXTERNALS=1 but {reason}");
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: {reason} (run `bash scripts/test.sh` to install it)"
    );
}

/// A pinned fixture from `tests/fixtures/fetch.sh` (a file, or a whole
/// package directory).
pub fn fixture(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/fixtures")
        .join(name);
    if path.exists() {
        Some(path)
    } else {
        skip(&format!(
            "fixture {name} is missing; run tests/fixtures/fetch.sh"
        ));
        None
    }
}

/// Compiles C sources with `cc -O0 -fno-inline` into `dir/name`.
pub fn compile_c(dir: &Path, name: &str, sources: &[(&str, &str)]) -> Option<PathBuf> {
    compile_c_with(dir, name, &["-O0", "-fno-inline"], sources)
}

/// Compiles C sources with `cc FLAGS` into `dir/name`.
pub fn compile_c_with(
    dir: &Path,
    name: &str,
    flags: &[&str],
    sources: &[(&str, &str)],
) -> Option<PathBuf> {
    compile_with("cc", dir, name, flags, sources)
}

/// Compiles `sources` with `compiler` (a C compiler driver taking `-o`)
/// into `dir/name`; skips (see [`skip`]) when the compiler is missing.
pub fn compile_with(
    compiler: &str,
    dir: &Path,
    name: &str,
    flags: &[&str],
    sources: &[(&str, &str)],
) -> Option<PathBuf> {
    let mut cmd = Command::new(compiler);
    cmd.args(flags).arg("-o").arg(dir.join(name));
    for (file, text) in sources {
        let path = dir.join(file);
        std::fs::write(&path, text).expect("write source");
        cmd.arg(path);
    }
    match cmd.output() {
        Ok(out) if out.status.success() => Some(dir.join(name)),
        Ok(out) => panic!(
            "{compiler} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => {
            skip(&format!("cannot run {compiler}: {e}"));
            None
        }
    }
}

/// A scratch directory an unprivileged captured process can enter, run
/// from and write to (a tempdir is 0700 and captures as root run as nobody).
#[cfg(unix)]
pub fn open_dir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
        .expect("chmod dir");
    dir
}

/// Compiles `source` into `dir/name` (see [`compile_c`]), executable by
/// everyone.
#[cfg(unix)]
pub fn open_program(dir: &Path, name: &str, source: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let exe = compile_c(dir, name, &[(&format!("{name}.c"), source)])?;
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).expect("chmod exe");
    Some(exe)
}

/// A small ELF with known procedures: `first_procedure`, `unique_helper`,
/// two static functions both named `duplicate`, and one whose symbol name
/// carries a right-to-left override.
pub fn sample_binary(dir: &Path, name: &str, feature_fn: &str) -> Option<PathBuf> {
    let a = format!(
        r#"
static int duplicate(int x) {{ return x + 1; }}
int {feature_fn}(int x) {{ return duplicate(x) * 2; }}
int unique_helper(int x) {{ return x - 3; }}
int hidden_name(int x) __asm__("evil\xe2\x80\xaename");
int hidden_name(int x) {{ return x ^ 5; }}
int other(int);
int main(int argc, char **argv) {{ (void)argv; return {feature_fn}(argc) + unique_helper(argc) + other(argc) + hidden_name(argc); }}
"#
    );
    let b = r#"
static int duplicate(int x) { return x * 7; }
int other(int x) { return duplicate(x); }
"#;
    compile_c(dir, name, &[("a.c", &a), ("b.c", b)])
}

/// The stdout of `llvm-nm ARGS PATH`; `None` (after [`skip`]) when llvm-nm
/// cannot run, a panic when it fails.
fn run_llvm_nm(args: &[&str], path: &Path) -> Option<String> {
    match Command::new("llvm-nm").args(args).arg(path).output() {
        Ok(out) if out.status.success() => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => panic!("llvm-nm failed: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => {
            skip(&format!("cannot run llvm-nm: {e}"));
            None
        }
    }
}

/// `llvm-nm --defined-only` of `path`: (address, type, name) rows.
pub fn llvm_nm(args: &[&str], path: &Path) -> Option<Vec<(u64, char, String)>> {
    Some(
        run_llvm_nm(args, path)?
            .lines()
            .filter_map(|line| {
                let mut parts = line.splitn(3, ' ');
                let address = u64::from_str_radix(parts.next()?, 16).ok()?;
                let kind = parts.next()?.chars().next()?;
                Some((address, kind, parts.next()?.to_string()))
            })
            .collect(),
    )
}

pub fn values(info: &CompletionInfo) -> Vec<&str> {
    info.values.iter().map(String::as_str).collect()
}

pub fn json_of<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// `call` over a bare peer (for use inside spawned tasks).
pub async fn call_peer(peer: &rmcp::service::Peer<RoleClient>, tool: &str) -> (Value, bool) {
    call_peer_with(peer, tool, Value::Object(Map::new())).await
}

/// Calls `tool` with `args` on any peer (a child-process server, say) and
/// returns its structured content and whether it failed.
pub async fn call_peer_with(
    peer: &rmcp::service::Peer<RoleClient>,
    tool: &str,
    args: Value,
) -> (Value, bool) {
    let result = peer
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(object(args)))
        .await
        .unwrap_or_else(|e| panic!("tools/call {tool}: {e}"));
    (
        result.structured_content.clone().unwrap_or(Value::Null),
        result.is_error.unwrap_or(false),
    )
}

/// One defined symbol as `llvm-nm --defined-only --format=sysv` prints it.
#[derive(Debug, Clone)]
pub struct NmRow {
    pub address: u64,
    /// The symbol's name without the `@VERSION` decoration llvm-nm adds to
    /// dynamic ELF names (`inflate@@ZLIB_1.2.0`).
    pub name: String,
    /// nm's class letter (`T`, `t`, `D`, `V`, `u`, `S`, ...).
    pub class: String,
    /// The ELF symbol type (`FUNC`, `OBJECT`, ...); empty for Mach-O.
    pub kind: String,
}

impl NmRow {
    /// Defined function: ELF type FUNC, or (Mach-O has no type column)
    /// class T/t.
    pub fn is_function(&self) -> bool {
        self.kind == "FUNC" || (self.kind.is_empty() && matches!(self.class.as_str(), "T" | "t"))
    }
}

/// Every defined symbol per `llvm-nm --defined-only --format=sysv ARGS PATH`.
pub fn nm_rows(args: &[&str], path: &Path) -> Option<Vec<NmRow>> {
    let args: Vec<&str> = ["--defined-only", "--format=sysv"]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    Some(
        run_llvm_nm(&args, path)?
            .lines()
            .filter_map(|line| {
                let cols: Vec<&str> = line.split('|').map(str::trim).collect();
                if cols.len() < 4 {
                    return None;
                }
                Some(NmRow {
                    address: u64::from_str_radix(cols[1], 16).ok()?,
                    name: cols[0].split('@').next().unwrap_or(cols[0]).to_string(),
                    class: cols[2].to_string(),
                    kind: cols[3].to_string(),
                })
            })
            .collect(),
    )
}

/// Defined function symbols per `llvm-nm --format=sysv` (see
/// [`NmRow::is_function`]): `(address, name)`.
pub fn nm_functions(args: &[&str], path: &Path) -> Option<Vec<(u64, String)>> {
    Some(
        nm_rows(args, path)?
            .into_iter()
            .filter(NmRow::is_function)
            .map(|row| (row.address, row.name))
            .collect(),
    )
}

/// The completion candidates an inventory built from `functions` (plus
/// nameless `extra` addresses such as the entry point or discovered starts)
/// must offer: every address, and each name that identifies exactly one
/// address.
pub fn expected_candidates(functions: &[(u64, String)], extra: &[u64]) -> Vec<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut addresses: BTreeSet<u64> = functions.iter().map(|(a, _)| *a).collect();
    addresses.extend(extra);
    let mut names: BTreeMap<&str, BTreeSet<u64>> = BTreeMap::new();
    for (a, n) in functions {
        names.entry(n.as_str()).or_default().insert(*a);
    }
    let mut out: Vec<String> = addresses.iter().map(|a| format!("{a:#x}")).collect();
    out.extend(
        names
            .into_iter()
            .filter(|(_, a)| a.len() == 1)
            .map(|(n, _)| n.to_string()),
    );
    out.sort();
    out.dedup();
    out
}

/// `rea procedures PATH`: every `(address, name)` line, with `None` for an
/// address printed alone (a procedure without a name).
pub fn rea_procedures(path: &Path) -> Vec<(u64, Option<String>)> {
    let out = Command::new(env!("CARGO_BIN_EXE_rea"))
        .arg("procedures")
        .arg(path)
        .output()
        .expect("run rea procedures");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let (address, name) = match line.split_once(' ') {
                Some((a, n)) => (a, Some(n.to_string())),
                None => (line, None),
            };
            Some((
                u64::from_str_radix(address.strip_prefix("0x")?, 16).ok()?,
                name,
            ))
        })
        .collect()
}

/// Lowercase hex sha256 of a file's bytes.
pub fn sha256_file(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(path).expect("read file to hash");
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `(claim_id, verdict)` of each claim a `verify_reconstruction` result judged.
pub fn claim_verdicts(result: &Value) -> Vec<(&str, &str)> {
    result["claims"]
        .as_array()
        .expect("claims")
        .iter()
        .map(|c| {
            (
                c["claim_id"].as_str().expect("claim_id"),
                c["verdict"].as_str().expect("verdict"),
            )
        })
        .collect()
}

/// Whether this test process runs as root (captures then need a user).
pub fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}

/// GNU objdump's call and jump sites of `name@plt` outside the PLT itself:
/// the oracle for "who calls this import".
pub fn objdump_plt_sites(path: &Path, name: &str) -> Vec<String> {
    let out = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(path)
        .output()
        .expect("objdump runs");
    assert!(out.status.success(), "objdump failed");
    let label = format!("<{name}@plt>");
    let mut in_plt = false;
    let mut sites = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some(section) = line.strip_prefix("Disassembly of section ") {
            in_plt = section.starts_with(".plt");
        } else if !in_plt
            && line.ends_with(&label)
            && let Some((address, _)) = line.trim_start().split_once(':')
        {
            sites.push(format!("{:#x}", u64::from_str_radix(address, 16).unwrap()));
        }
    }
    sites.sort();
    sites
}

/// The text `prompts/get` returns for a request that must succeed.
pub async fn prompt_text(client: &Client, name: &str, args: Value) -> String {
    let result = client
        .get_prompt(rmcp::model::GetPromptRequestParams::new(name).with_arguments(object(args)))
        .await
        .expect("prompts/get answers");
    result.messages[0]
        .content
        .as_text()
        .expect("a text message")
        .text
        .clone()
}

/// The Evidence ID a client recomputes from an answer alone: `ev_` +
/// sha256 of the RFC 8785 form of `{operation, subject, provider {id,
/// version}, parameters, result}`, the result being the answer's own.
pub fn recomputed_evidence_id(answer: &Value) -> String {
    use sha2::{Digest, Sha256};
    let header = &answer["evidence"];
    let projection = serde_json::json!({
        "operation": header["operation"],
        "subject": header["subject"],
        "provider": {"id": header["provider"]["id"], "version": header["provider"]["version"]},
        "parameters": header["parameters"],
        "result": answer["result"],
    });
    let canonical = rea::ground::canonical::to_canonical(&projection).expect("no floats");
    let digest = Sha256::digest(canonical.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("ev_{hex}")
}

/// Asserts an answer states its result once and its Evidence ID recomputes
/// from it.
pub fn assert_said_once(answer: &Value) {
    let header = &answer["evidence"];
    assert!(
        header.get("result").is_none(),
        "the header repeats the result: {answer}"
    );
    assert_eq!(
        header["evidence_id"].as_str(),
        Some(recomputed_evidence_id(answer).as_str()),
        "the Evidence ID recomputes from the answer"
    );
}

/// A program that leaves processes behind: it starts a grandchild in a
/// session of its own, writes `HOST MAIN GRANDCHILD` (the pids of its
/// parent, itself and the grandchild) to `pids` in its working directory,
/// and sleeps two minutes, as does the grandchild. A capture of it that is
/// stopped must leave none of the three alive.
pub const LINGERER_SOURCE: &str = r#"
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
int main(void) {
    int host = (int)getppid();
    int link[2];
    if (pipe(link) != 0) return 1;
    pid_t child = fork();
    if (child == 0) {
        setsid();
        pid_t grandchild = fork();
        if (grandchild == 0) { sleep(120); _exit(0); }
        write(link[1], &grandchild, sizeof grandchild);
        _exit(0);
    }
    pid_t grandchild = 0;
    if (read(link[0], &grandchild, sizeof grandchild) != sizeof grandchild) return 1;
    waitpid(child, 0, 0);
    FILE *f = fopen("pids.tmp", "w");
    if (!f) return 1;
    fprintf(f, "%d %d %d\n", host, (int)getpid(), (int)grandchild);
    fclose(f);
    rename("pids.tmp", "pids");
    sleep(120);
    return 0;
}
"#;

/// The pids [`LINGERER_SOURCE`] wrote in `dir`, once it has.
pub fn lingerer_pids(dir: &Path) -> Option<[i32; 3]> {
    let text = std::fs::read_to_string(dir.join("pids")).ok()?;
    let pids: Vec<i32> = text
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    pids.try_into().ok()
}

/// [`lingerer_pids`], waiting up to a minute for the program to start.
pub fn wait_for_lingerer(dir: &Path) -> [i32; 3] {
    wait_for("the captured program's pids", || lingerer_pids(dir))
}

/// What `found` finds, asking every 10 ms for up to a minute; a test that
/// never sees `what` fails instead of hanging.
pub fn wait_for<T>(what: &str, mut found: impl FnMut() -> Option<T>) -> T {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Some(value) = found() {
            return value;
        }
        assert!(std::time::Instant::now() < until, "never saw {what}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Whether `pid` is a live process (not a zombie).
pub fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| rea::capture::procfs::parse_stat(&stat))
        .is_some_and(|(state, _)| state != 'Z')
}

/// Those of `pids` still alive after waiting up to `within` for them to go.
pub fn survivors(pids: &[i32], within: std::time::Duration) -> Vec<i32> {
    let until = std::time::Instant::now() + within;
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || std::time::Instant::now() >= until {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// radare2 as `rea` would find it here (`REA_RADARE2_LIBR` or `r2` on
/// `PATH`, served through the built `rea`), or a skip saying why not.
pub fn radare2() -> Option<rea::providers::radare2::Detection> {
    use rea::providers::radare2::{Detection, DetectionEnv, LIBR_ENV, detect_in};
    let env = DetectionEnv {
        path: std::env::var_os("PATH"),
        libr: std::env::var_os(LIBR_ENV),
        host: Some(PathBuf::from(env!("CARGO_BIN_EXE_rea"))),
    };
    match detect_in(&env) {
        available @ Detection::Available(_) => Some(available),
        Detection::Unavailable(u) => {
            skip(&format!("radare2 is not available: {}", u.detail));
            None
        }
    }
}

/// CPU seconds (user + system) the process `pid` has used so far.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc stat");
    // Fields after the command's closing parenthesis; utime and stime are
    // the 12th and 13th of them, in clock ticks (100 per second on Linux).
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

/// An ELF whose 16 MiB of code is `call $+5`, over and over: 3.4 million
/// calls, each a procedure start, so listing its procedures is long work.
pub fn elf_of_calls(dir: &Path) -> PathBuf {
    use synth_elf::{Elf, SHF_ALLOC, SHF_EXECINSTR, SHT_PROGBITS, Section};
    const TEXT: u64 = 0x40_0000;
    let code: Vec<u8> = [0xe8, 0, 0, 0, 0].repeat((16 << 20) / 5);
    let mut elf = Elf::new(TEXT);
    elf.section(Section::new(
        ".text",
        SHT_PROGBITS,
        SHF_ALLOC | SHF_EXECINSTR,
        TEXT,
        code,
    ));
    let path = dir.join("calls.elf");
    std::fs::write(&path, elf.build()).unwrap();
    path
}

/// Waits until the process `pid` has used `seconds` more CPU time than
/// `from` (the work is under way), however busy the machine is.
pub fn wait_for_cpu(pid: u32, from: f64, seconds: f64) {
    wait_for("the work to use CPU time", || {
        (cpu_seconds(pid) - from > seconds).then_some(())
    });
}
