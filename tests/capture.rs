//! Process capture through the real `rea capture-host`: crashes mapped to
//! their function, limits that hold (processes, output, time, idleness),
//! descendants that escape their session found and killed, files listed
//! with hashes, and secrets that never leave the host.
#![cfg(target_os = "linux")]

mod common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rea::capture::{Capture, CaptureError, ExitReason, HOST_GRACE, Scenario};
use serde_json::json;

const REA: &str = env!("CARGO_BIN_EXE_rea");

fn scenario(exe: &Path, dir: &Path, extra: serde_json::Value) -> Scenario {
    let mut base = json!({
        "executable": exe,
        "working_directory": dir,
        "timeout_ms": 3000,
        "idle_timeout_ms": 3000,
    });
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    serde_json::from_value(base).expect("scenario")
}

fn capture(s: &Scenario) -> Capture {
    let c = rea::capture::run(s, Some(Path::new(REA))).expect("capture");
    c.validate().expect("valid capture");
    c
}

/// Compiles `source` as `name` in a fresh open directory and captures it
/// running there with `extra` scenario fields.
fn run_c(
    name: &str,
    source: &str,
    extra: serde_json::Value,
) -> Option<(tempfile::TempDir, PathBuf, Capture)> {
    let dir = common::open_dir();
    let exe = common::open_program(dir.path(), name, source)?;
    let c = capture(&scenario(&exe, dir.path(), extra));
    Some((dir, exe, c))
}

/// The number printed after `prefix` on the first line of `text`.
fn number_after<T: std::str::FromStr>(text: &str, prefix: &str) -> Option<T> {
    text.lines()
        .next()?
        .strip_prefix(prefix)?
        .trim()
        .parse()
        .ok()
}

fn hex(v: &str) -> u64 {
    u64::from_str_radix(v.trim_start_matches("0x"), 16).expect("hex")
}

/// Live processes running `exe`, found through `/proc/PID/exe`.
fn running(exe: &Path) -> Vec<i32> {
    let real = std::fs::canonicalize(exe).expect("canonical");
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|p| p == real))
        .filter(|pid| common::alive(*pid))
        .collect()
}

#[test]
fn crash_pc_maps_into_the_named_function() {
    let src = r#"
#include <stdio.h>
int crash_here(volatile int *p) { return *p; }
int main(void) { puts("about to crash"); fflush(stdout); return crash_here(0); }
"#;
    let Some((_dir, exe, c)) = run_c("crash", src, json!({})) else {
        return;
    };
    assert_eq!(c.exit.reason, ExitReason::Signaled);
    assert_eq!(c.exit.signal, Some(libc::SIGSEGV));
    assert_eq!(c.stdout.text, "about to crash\n");
    assert!(c.tracing.attached, "{:?}", c.tracing);
    let crash = c.crash.expect("a crash");
    assert_eq!(crash.fault_address.as_deref(), Some("0x0"));
    let pc = hex(crash.program_counter.as_deref().expect("pc"));
    let real = std::fs::canonicalize(&exe).expect("canonical");
    let m = crash
        .module_map
        .iter()
        .find(|m| hex(&m.start) <= pc && pc < hex(&m.end))
        .expect("the pc lies in a mapping");
    assert_eq!(Path::new(&m.path), real, "the pc is in the executable");
    assert!(m.perms.contains('x'));
    let file_offset = hex(&m.offset) + (pc - hex(&m.start));
    // File offset → virtual address through the program headers.
    let bytes = std::fs::read(&exe).expect("read exe");
    let file = object::File::parse(&*bytes).expect("parse exe");
    use object::{Object, ObjectSegment};
    let vaddr = file
        .segments()
        .find_map(|s| {
            let (off, size) = s.file_range();
            (off <= file_offset && file_offset < off + size)
                .then(|| s.address() + (file_offset - off))
        })
        .expect("a segment holds the offset");
    let Some(functions) = common::nm_functions(&[], &exe) else {
        return;
    };
    let start = functions
        .iter()
        .find(|(_, n)| n == "crash_here")
        .map(|(a, _)| *a)
        .expect("crash_here in nm");
    let end = functions
        .iter()
        .map(|(a, _)| *a)
        .filter(|a| *a > start)
        .min()
        .expect("a function after crash_here");
    assert!(
        (start..end).contains(&vaddr),
        "pc {vaddr:#x} outside crash_here {start:#x}..{end:#x}"
    );
}

#[test]
fn fork_bomb_stops_at_the_process_limit_and_everything_is_reaped() {
    // Self-limited: at most 300 forks even if no limit held.
    let src = r#"
#include <stdio.h>
#include <unistd.h>
int main(void) {
    int ok = 0;
    for (int i = 0; i < 300; i++) {
        pid_t p = fork();
        if (p == 0) { sleep(30); _exit(0); }
        if (p < 0) break;
        ok++;
    }
    printf("forked %d\n", ok);
    fflush(stdout);
    return 0;
}
"#;
    let Some((_dir, exe, c)) = run_c("bomb", src, json!({"limits": {"processes": 20}})) else {
        return;
    };
    assert_eq!(c.exit.code, Some(0), "{c:?}");
    let forked: u64 = number_after(&c.stdout.text, "forked ").expect("fork count");
    assert!((1..20).contains(&forked), "forked {forked}");
    assert!(c.cleanup.verified);
    assert!(c.cleanup.survivors_killed >= forked, "{:?}", c.cleanup);
    assert!(c.processes_seen > forked);
    assert_eq!(running(&exe), Vec::<i32>::new(), "bomb processes survived");
}

#[test]
fn setsid_grandchild_is_found_and_killed() {
    let src = r#"
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
int main(void) {
    pid_t child = fork();
    if (child == 0) {
        setsid();
        if (fork() == 0) {
            printf("grandchild %d\n", (int)getpid());
            fflush(stdout);
            sleep(60);
            _exit(0);
        }
        _exit(0);
    }
    waitpid(child, 0, 0);
    usleep(100000);
    return 0;
}
"#;
    let Some((_dir, exe, c)) = run_c("daemon", src, json!({})) else {
        return;
    };
    assert_eq!(c.exit.reason, ExitReason::Exited);
    let pid: i32 = number_after(&c.stdout.text, "grandchild ").expect("grandchild pid");
    assert!(c.cleanup.verified);
    assert_eq!(c.cleanup.survivors_killed, 1, "{:?}", c.cleanup);
    assert!(
        c.timing.wall_ms < 3000,
        "the 60 s sleeper did not hold the run"
    );
    assert!(!common::alive(pid), "grandchild {pid} survived");
    assert_eq!(running(&exe), Vec::<i32>::new());
}

#[test]
fn output_flood_is_truncated_in_bounded_memory() {
    let src = r#"
#include <string.h>
#include <unistd.h>
int main(void) {
    static char buf[65536];
    memset(buf, 'A', sizeof buf);
    long total = 200L * 1024 * 1024;
    for (long done = 0; done < total; ) {
        ssize_t n = write(1, buf, sizeof buf);
        if (n <= 0) return 1;
        done += n;
    }
    return 0;
}
"#;
    let Some((_dir, _exe, c)) = run_c(
        "flood",
        src,
        json!({"timeout_ms": 20000, "idle_timeout_ms": 3000, "limits": {"output_bytes": 1048576}}),
    ) else {
        return;
    };
    assert_eq!(c.exit.code, Some(0), "{:?}", c.exit);
    assert_eq!(c.stdout.stored_bytes, 1 << 20);
    assert_eq!(c.stdout.total_bytes, 200 << 20);
    assert!(c.stdout.truncated);
    assert_eq!(c.stdout.text.len(), 1 << 20);
    let peak = c.host_peak_rss_kib.expect("host peak rss");
    assert!(peak < 64 * 1024, "host peak RSS {peak} KiB");
}

#[test]
fn sigterm_ignoring_loop_is_killed_at_the_timeout() {
    let src = r#"
#include <signal.h>
#include <unistd.h>
int main(void) {
    signal(SIGTERM, SIG_IGN);
    for (;;) { (void)write(1, ".", 1); usleep(50000); }
}
"#;
    let Some((_dir, _exe, c)) = run_c("stubborn", src, json!({"timeout_ms": 1000})) else {
        return;
    };
    assert_eq!(c.exit.reason, ExitReason::Timeout);
    assert_eq!(c.exit.signal, Some(libc::SIGKILL));
    assert!(c.crash.is_none());
    assert!(
        c.timing.wall_ms >= 1000 && c.timing.wall_ms < 3000,
        "{:?}",
        c.timing
    );
    assert!(c.cleanup.verified);
}

#[test]
fn silence_ends_the_run_at_the_idle_timeout() {
    let src = r#"
#include <stdio.h>
#include <unistd.h>
int main(void) { puts("waiting"); fflush(stdout); sleep(30); return 0; }
"#;
    let Some((_dir, _exe, c)) = run_c(
        "idle",
        src,
        json!({"timeout_ms": 3000, "idle_timeout_ms": 500}),
    ) else {
        return;
    };
    assert_eq!(c.exit.reason, ExitReason::IdleTimeout);
    assert_eq!(c.exit.signal, Some(libc::SIGTERM));
    assert_eq!(c.stdout.text, "waiting\n");
    assert!(c.timing.wall_ms < 2000, "{:?}", c.timing);
}

#[test]
fn files_created_changed_and_deleted_are_listed_with_hashes() {
    let dir = common::open_dir();
    let src = r#"
#include <stdio.h>
#include <unistd.h>
int main(void) {
    FILE *f = fopen("new.txt", "w"); fputs("hello", f); fclose(f);
    f = fopen("existing.txt", "w"); fputs("changed", f); fclose(f);
    unlink("gone.txt");
    return 0;
}
"#;
    let Some(exe) = common::open_program(dir.path(), "writer", src) else {
        return;
    };
    let work = dir.path().join("work");
    std::fs::create_dir(&work).expect("mkdir");
    std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    std::fs::write(work.join("existing.txt"), "original").expect("write");
    std::fs::set_permissions(
        work.join("existing.txt"),
        std::fs::Permissions::from_mode(0o666),
    )
    .expect("chmod");
    std::fs::write(work.join("gone.txt"), "bye").expect("write");
    std::fs::write(work.join("same.txt"), "same").expect("write");
    let c = capture(&scenario(&exe, &work, json!({})));
    assert_eq!(c.exit.code, Some(0), "{c:?}");
    let names =
        |v: &[rea::capture::FileEntry]| v.iter().map(|e| e.path.clone()).collect::<Vec<_>>();
    assert_eq!(names(&c.files.created), ["new.txt"]);
    assert_eq!(names(&c.files.changed), ["existing.txt"]);
    assert_eq!(names(&c.files.deleted), ["gone.txt"]);
    assert_eq!(
        c.files.created[0].sha256.as_deref(),
        Some(common::sha256_file(&work.join("new.txt")).as_str())
    );
    assert_eq!(
        c.files.changed[0].sha256.as_deref(),
        Some(common::sha256_file(&work.join("existing.txt")).as_str())
    );
    assert_eq!(c.files.created[0].size, 5);
}

#[test]
fn secret_values_never_leave_the_host() {
    let dir = common::open_dir();
    let src = r#"
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    const char *t = getenv("API_TOKEN");
    printf("token=%s\n", t);
    fprintf(stderr, "err %s\n", t);
    char name[256];
    snprintf(name, sizeof name, "file-%s", t);
    FILE *f = fopen(name, "w"); fputs(t, f); fclose(f);
    return 0;
}
"#;
    let Some(exe) = common::open_program(dir.path(), "leaky", src) else {
        return;
    };
    let secret = "zq9-Secret-Value-7731";
    let s = scenario(
        &exe,
        dir.path(),
        json!({"environment": [
            {"name": "API_TOKEN", "value": secret, "secret": true},
            {"name": "MODE", "value": "plain"}
        ]}),
    );
    let mut child = Command::new(REA)
        .arg("capture-host")
        .env("REA_LOG", "trace")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start host");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(&serde_json::to_vec(&s).expect("json"))
            .expect("write scenario");
    }
    let out = child.wait_with_output().expect("host output");
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stdout.contains(secret), "secret in the result");
    assert!(!stderr.contains(secret), "secret in the trace log");
    assert!(stderr.contains("capture finished"), "trace logging was on");
    let reply: serde_json::Value = serde_json::from_str(&stdout).expect("reply");
    let c: Capture = serde_json::from_value(reply["capture"].clone()).expect("capture");
    c.validate().expect("valid");
    assert_eq!(c.stdout.text, "token=[redacted:API_TOKEN]\n");
    assert_eq!(c.stderr.text, "err [redacted:API_TOKEN]\n");
    assert_eq!(c.files.created.len(), 1);
    assert_eq!(c.files.created[0].path, "file-[redacted:API_TOKEN]");
    let echo = serde_json::to_string(&s.redacted()).expect("json");
    assert!(!echo.contains(secret) && echo.contains("plain"));
}

/// F6: a library named after a secret shows in the crash module map only
/// redacted.
#[test]
fn a_secret_in_a_mapped_file_name_is_redacted() {
    use std::os::unix::fs::PermissionsExt;
    let dir = common::open_dir();
    let secret = "k7Secret-Lib-Name-4410";
    let lib = format!("lib_{secret}.so");
    let Some(lib_path) = common::compile_c_with(
        dir.path(),
        &lib,
        &["-shared", "-fPIC"],
        &[("lib.c", "int helper(void) { return 1; }\n")],
    ) else {
        return;
    };
    std::fs::set_permissions(&lib_path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let src = r#"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    char name[512];
    snprintf(name, sizeof name, "./lib_%s.so", getenv("TOKEN"));
    if (!dlopen(name, RTLD_NOW)) { puts("dlopen failed"); return 2; }
    volatile int *p = 0;
    return *p;
}
"#;
    let Some(exe) = common::compile_c_with(dir.path(), "loader", &["-O0"], &[("loader.c", src)])
    else {
        return;
    };
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let c = capture(&scenario(
        &exe,
        dir.path(),
        json!({"environment": [{"name": "TOKEN", "value": secret, "secret": true}]}),
    ));
    assert_eq!(c.exit.signal, Some(libc::SIGSEGV), "{:?}", c.stdout.text);
    let crash = c.crash.as_ref().expect("a crash");
    assert!(
        crash
            .module_map
            .iter()
            .any(|m| m.path.ends_with("lib_[redacted:TOKEN].so")),
        "{:?}",
        crash.module_map
    );
    let whole = serde_json::to_string(&c).unwrap();
    assert!(!whole.contains(secret), "the secret reached the capture");
}

#[test]
fn relative_paths_and_missing_programs_are_refused() {
    let dir = common::open_dir();
    let rel = scenario(Path::new("bin/true"), dir.path(), json!({}));
    match rea::capture::run(&rel, Some(Path::new(REA))) {
        Err(CaptureError::InvalidScenario { field, .. }) => assert_eq!(field, "executable"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    let rel = scenario(Path::new("/bin/true"), Path::new("work"), json!({}));
    match rea::capture::run(&rel, Some(Path::new(REA))) {
        Err(CaptureError::InvalidScenario { field, .. }) => assert_eq!(field, "working_directory"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    let missing = scenario(&dir.path().join("absent"), dir.path(), json!({}));
    match rea::capture::run(&missing, Some(Path::new(REA))) {
        Err(CaptureError::Spawn(_)) => {}
        other => panic!("expected a spawn error, got {other:?}"),
    }
}

#[test]
fn environment_identity_and_stdin_are_exactly_as_given() {
    let dir = common::open_dir();
    let run = |exe: &str, extra| capture(&scenario(Path::new(exe), dir.path(), extra));
    let env = run(
        "/usr/bin/env",
        json!({"environment": [{"name": "MODE", "value": "plain"}]}),
    );
    assert_eq!(env.stdout.text, "MODE=plain\n", "nothing inherited");
    let id = run("/usr/bin/id", json!({}));
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // nobody:nogroup, and no supplementary group left from root.
        let t = id.stdout.text.trim();
        assert!(
            t.starts_with("uid=65534(") && t.contains(" gid=65534("),
            "{t}"
        );
        assert!(t.contains(" groups=65534(") && !t.contains(','), "{t}");
    }
    let fed = run("/bin/cat", json!({"stdin": "fed\nlines\n"}));
    assert_eq!(fed.stdout.text, "fed\nlines\n");
    let closed = run("/bin/cat", json!({}));
    assert_eq!(closed.exit.code, Some(0));
    assert_eq!(closed.stdout.total_bytes, 0);
}

#[test]
fn a_stopped_run_ends_at_once_and_leaves_no_process_behind() {
    let dir = common::open_dir();
    let Some(exe) = common::open_program(dir.path(), "lingerer", common::LINGERER_SOURCE) else {
        return;
    };
    let s = scenario(
        &exe,
        dir.path(),
        json!({"timeout_ms": 120000, "idle_timeout_ms": 120000}),
    );
    let started = || common::lingerer_pids(dir.path()).is_some();
    let r = rea::capture::run_with_grace(&s, Some(Path::new(REA)), HOST_GRACE, &started);
    assert!(
        matches!(
            r,
            Err(CaptureError::Stopped {
                cleanup_verified: true
            })
        ),
        "{r:?}"
    );
    let [host, target, grandchild] = common::lingerer_pids(dir.path()).expect("pids");
    for pid in [host, target, grandchild] {
        assert!(!common::alive(pid), "{pid} survived the stop");
    }
    assert_eq!(running(&exe), Vec::<i32>::new());
}

#[test]
fn a_server_killed_mid_capture_leaves_no_process_behind() {
    let dir = common::open_dir();
    let Some(exe) = common::open_program(dir.path(), "lingerer", common::LINGERER_SOURCE) else {
        return;
    };
    let mut server = Command::new(REA);
    server
        .args(["mcp", "--enable-process-capture"])
        .arg("--capture-executable-root")
        .arg(dir.path())
        .arg("--capture-working-root")
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if common::running_as_root() {
        server.args(["--capture-user", "nobody"]);
    }
    let mut server = server.spawn().expect("rea mcp starts");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "capture_process_scenario",
    "arguments": {
        "executable": exe,
        "working_directory": dir.path(),
        "timeout_ms": 120000,
        "idle_timeout_ms": 120000,
        "question": "Does the program ever end by itself?",
        "approved": true,
    }}});
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        call,
    ];
    let mut stdin = server.stdin.take().expect("stdin");
    for line in lines {
        writeln!(stdin, "{line}").expect("the server reads");
    }
    let pids = common::wait_for_lingerer(dir.path());
    assert_eq!(
        rea::capture::procfs::parent_of(pids[0]),
        Some(server.id() as i32),
        "the capture host is the server's child"
    );
    // No SIGTERM to handle: the server dies at once, mid-run.
    server.kill().expect("kill");
    server.wait().expect("reaped");
    assert_eq!(
        common::survivors(&pids, std::time::Duration::from_secs(30)),
        Vec::<i32>::new(),
        "capture host, program and grandchild ({pids:?}) end with the server"
    );
}

#[test]
fn a_call_stopped_before_it_starts_runs_nothing() {
    let dir = common::open_dir();
    let Some(exe) = common::open_program(dir.path(), "lingerer", common::LINGERER_SOURCE) else {
        return;
    };
    let s = scenario(&exe, dir.path(), json!({}));
    let r = rea::capture::run_with_grace(&s, Some(Path::new(REA)), HOST_GRACE, &|| true);
    assert!(
        matches!(
            r,
            Err(CaptureError::Stopped {
                cleanup_verified: true
            })
        ),
        "{r:?}"
    );
    assert_eq!(common::lingerer_pids(dir.path()), None, "the program ran");
}

#[test]
fn only_the_server_may_stop_a_run() {
    // Writes its parent's pid (the capture host's), then waits (a minute
    // at most) for the test to create `go`.
    const SOURCE: &str = r#"
#include <stdio.h>
#include <unistd.h>
int main(void) {
    FILE *f = fopen("host.tmp", "w");
    if (!f) return 1;
    fprintf(f, "%d\n", (int)getppid());
    fclose(f);
    rename("host.tmp", "host");
    for (int i = 0; i < 6000 && access("go", F_OK) != 0; i++) usleep(10000);
    return 7;
}
"#;
    let dir = common::open_dir();
    let Some(exe) = common::open_program(dir.path(), "sleeper", SOURCE) else {
        return;
    };
    let s = scenario(&exe, dir.path(), json!({"timeout_ms": 60000}));
    let host_file = dir.path().join("host");
    let run = std::thread::spawn(move || rea::capture::run(&s, Some(Path::new(REA))));
    let host = common::wait_for("the program's start", || {
        std::fs::read_to_string(&host_file)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
    });
    // Another process (not the server that started the host) asks it to
    // stop: the host does not take it, and the run ends by itself.
    let sent = Command::new("kill")
        .args(["-TERM", &host.to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    // Time for a stop the host took to end the run before the program can.
    std::thread::sleep(std::time::Duration::from_millis(500));
    std::fs::write(dir.path().join("go"), b"").expect("go");
    let c = run.join().expect("the run").expect("a capture");
    assert_eq!(c.exit.reason, ExitReason::Exited, "{:?}", c.exit);
    assert_eq!(c.exit.code, Some(7));
}

/// A stand-in host script in `dir`.
fn fake_host(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("host.sh");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write host");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod host");
    path
}

#[test]
fn a_stuck_host_is_killed_at_the_outer_deadline() {
    let dir = common::open_dir();
    // A host with a child of its own, as a real host has the target's
    // processes: killed, it must not leave the child to init.
    let d = dir.path().display();
    let host = fake_host(
        dir.path(),
        &format!("sleep 30 & echo $! > {d}/child; echo $$ > {d}/pid; wait"),
    );
    // Time enough for the script to start its child under load.
    let s = scenario(
        Path::new("/bin/true"),
        dir.path(),
        json!({"timeout_ms": 1500}),
    );
    let start = std::time::Instant::now();
    let r = rea::capture::run_with_grace(
        &s,
        Some(&host),
        std::time::Duration::from_millis(500),
        &|| false,
    );
    assert!(matches!(r, Err(CaptureError::HostDeadline(2000))), "{r:?}");
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    let pid: i32 = std::fs::read_to_string(dir.path().join("pid"))
        .expect("host pid")
        .trim()
        .parse()
        .expect("pid");
    assert!(!common::alive(pid), "the stuck host {pid} survived");
    let child: i32 = std::fs::read_to_string(dir.path().join("child"))
        .expect("child pid")
        .trim()
        .parse()
        .expect("pid");
    assert_eq!(
        common::survivors(&[child], std::time::Duration::from_secs(5)),
        Vec::<i32>::new(),
        "the stuck host's child survived it"
    );
}

#[test]
fn a_host_reply_that_is_not_a_capture_is_an_error() {
    let dir = common::open_dir();
    let s = scenario(Path::new("/bin/true"), dir.path(), json!({}));
    for (body, expect) in [
        ("cat >/dev/null; echo not-json", "unreadable reply"),
        ("cat >/dev/null", "no reply"),
    ] {
        let host = fake_host(dir.path(), body);
        match rea::capture::run(&s, Some(&host)) {
            Err(CaptureError::HostFailed(m)) => assert!(m.contains(expect), "{m}"),
            other => panic!("expected a host failure, got {other:?}"),
        }
    }
}

/// A script (here a chain: a script whose interpreter is a script) runs
/// with the argument vector the kernel builds when it runs the script
/// itself, the script named by its descriptor: whether the server decided
/// the interpreters or the host did, and without the kernel reading a
/// `#!` line.
#[test]
fn a_script_chain_gets_the_kernels_argument_vector() {
    let dir = common::open_dir();
    let inner = dir.path().join("inner");
    let outer = dir.path().join("outer");
    std::fs::write(&inner, "#!/bin/sh\necho \"$0|$*\"\n").expect("inner");
    std::fs::write(&outer, format!("#!{} -x\n", inner.display())).expect("outer");
    for path in [&inner, &outer] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    // The kernel's own: the interpreters' names and arguments, then the
    // script's name, then the arguments.
    let direct = Command::new(&outer).args(["a", "b"]).output().expect("run");
    let expected = String::from_utf8_lossy(&direct.stdout)
        .replace(outer.to_str().expect("utf-8"), "/dev/fd/3");
    assert_eq!(expected, format!("{}|-x /dev/fd/3 a b\n", inner.display()));
    let s = scenario(&outer, dir.path(), json!({"arguments": ["a", "b"]}));
    assert_eq!(capture(&s).stdout.text, expected, "the server decided");

    let mut host = Command::new(REA)
        .arg("capture-host")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start host");
    host.stdin
        .take()
        .expect("stdin")
        .write_all(&serde_json::to_vec(&s).expect("json"))
        .expect("write scenario");
    let out = host.wait_with_output().expect("host output");
    let reply: serde_json::Value = serde_json::from_slice(&out.stdout).expect("reply");
    assert_eq!(
        reply["capture"]["stdout"]["text"],
        json!(expected),
        "the host decided: {reply}"
    );
}

/// The kernel no longer executes the script itself, and its check stays:
/// a script without execute permission does not run, as with `execve`.
#[test]
fn a_script_without_execute_permission_does_not_run() {
    let dir = common::open_dir();
    let script = dir.path().join("plain.sh");
    std::fs::write(&script, "#!/bin/sh\necho ran\n").expect("write");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    match rea::capture::run(
        &scenario(&script, dir.path(), json!({})),
        Some(Path::new(REA)),
    ) {
        Err(CaptureError::Spawn(m)) => assert!(m.contains("Permission denied"), "{m}"),
        other => panic!("expected a refusal to start, got {other:?}"),
    }
}
