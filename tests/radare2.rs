//! The radare2 provider against a real radare2: `r2` from PATH, or the
//! r2libr 5.7.4 libraries through `rea radare2-host` (REA_RADARE2_LIBR).
//! Without either, each test prints why it skipped, or fails when
//! REA_REQUIRE_EXTERNALS=1 (CI).

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rea::providers::Source;
use rea::providers::code::{CallSite, RefKind};
use rea::providers::native::NativeImage;
use rea::providers::radare2::{
    AnalysisDepth, Detection, DetectionEnv, LIBR_ENV, Launcher, Radare2Error, Radare2Options,
    Radare2Session, Timeouts, detect_in,
};

/// How radare2 is started here; the host is this build's `rea`.
fn launcher() -> Option<Launcher> {
    let env = DetectionEnv {
        path: std::env::var_os("PATH"),
        libr: std::env::var_os(LIBR_ENV),
        host: Some(PathBuf::from(env!("CARGO_BIN_EXE_rea"))),
    };
    match detect_in(&env) {
        Detection::Available(launcher) => Some(launcher),
        Detection::Unavailable(u) => {
            common::skip(&format!(
                "radare2 is not available ({}): {}; {}",
                u.code.as_str(),
                u.detail,
                u.remediation()
            ));
            None
        }
    }
}

fn setup(fixture: &str) -> Option<(Launcher, PathBuf)> {
    let launcher = launcher()?;
    let file = common::fixture(fixture)?;
    Some((launcher, file))
}

fn session(file: &Path, launcher: &Launcher) -> Radare2Session {
    Radare2Session::new(file, launcher.clone(), Radare2Options::default()).unwrap()
}

#[cfg(target_os = "linux")]
fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn watcher_linux_x64_functions_code_and_references() {
    let Some((launcher, file)) = setup("watcher-linux-x64.node") else {
        return;
    };
    let mut r2 = session(&file, &launcher);
    let identity = r2.identity().unwrap();
    assert_eq!(
        (identity.id.as_str(), identity.name.as_str()),
        ("radare2", "radare2 (analysis aa)")
    );
    assert!(identity.version.starts_with("5."), "{}", identity.version);

    let inventory = r2.procedures().unwrap();
    assert!(!inventory.truncated);
    let procedures = &inventory.procedures;
    assert!(procedures.len() > 500, "{} functions", procedures.len());
    assert!(procedures.windows(2).all(|w| w[0].address < w[1].address));
    let unref = procedures.iter().find(|p| p.address == 0x38330).unwrap();
    assert_eq!(unref.name.as_deref(), Some("sym._ZN7Watcher5unrefEv"));
    assert_eq!(unref.aliases, ["_ZN7Watcher5unrefEv"]);

    // Every raw symbol radare2 reports is a procedure of the native
    // provider at the same address: the overlap the two can be compared on.
    let image = NativeImage::open(&file).unwrap();
    let native = image.inventory(0).unwrap();
    let native_names: HashMap<&str, u64> = native
        .procedures
        .iter()
        .flat_map(|p| {
            p.name
                .iter()
                .chain(&p.aliases)
                .map(move |n| (n.as_str(), p.address))
        })
        .collect();
    let mut compared = 0;
    for p in procedures {
        for raw in &p.aliases {
            assert_eq!(native_names.get(raw.as_str()), Some(&p.address), "{raw}");
            compared += 1;
        }
    }
    assert!(compared > 300, "only {compared} raw symbols compared");

    // DirTree::write(FILE*): 9 blocks, 49 instructions, 4 direct calls.
    let write = 0x3edb0;
    let dossier = r2.analyze_function(write, 1000).unwrap();
    assert!(!dossier.truncated);
    assert_eq!(dossier.blocks.len(), 9);
    assert_eq!(dossier.instructions.len(), 49);
    assert_eq!(dossier.instructions[0].mnemonic, "push");
    assert_eq!(dossier.end, Some(0x3ee4a));
    assert!(dossier.callees.contains(&CallSite {
        at: 0x3edd6,
        target: 0x1e570
    }));
    assert_eq!(dossier.callees.len(), 4);
    assert!(
        dossier
            .references
            .iter()
            .any(|x| x.from == 0x3ede3 && x.to == 0x70441 && x.kind == RefKind::Address)
    );
    assert_eq!(r2.callees(write).unwrap(), dossier.callees);

    let short = r2.analyze_function(write, 5).unwrap();
    assert!(short.truncated);
    assert_eq!(short.instructions.len(), 5);
    assert_eq!(short.blocks, dossier.blocks);

    // pthread_mutex_lock's PLT stub is called from DirTree::write.
    let xrefs = r2.xrefs_to(0x1e570, 1000).unwrap();
    assert!(
        xrefs
            .xrefs
            .iter()
            .any(|x| x.from == 0x3edd6 && x.kind == RefKind::Call),
        "{xrefs:?}"
    );
    let callers = r2.callers(0x1e570).unwrap();
    assert!(callers.contains(&CallSite {
        at: 0x3edd6,
        target: 0x1e570
    }));
    assert!(callers.len() > 10, "{}", callers.len());
    let one = r2.xrefs_to(0x1e570, 1).unwrap();
    assert!(one.truncated && one.xrefs.len() == 1);

    let err = r2.analyze_function(0x9_9999_9999, 10).unwrap_err();
    assert_eq!(
        err,
        Radare2Error::NoFunction {
            address: 0x9_9999_9999
        }
    );
    // Still the same process: a missing function is not a failure of radare2.
    assert_eq!(r2.process_lineage().len(), 1);
}

#[test]
fn a_timeout_kills_radare2_and_a_new_session_works() {
    let Some((launcher, file)) = setup("markupsafe-speedups-universal2.so") else {
        return;
    };
    let hasty = Radare2Options {
        timeouts: Timeouts {
            analysis: Duration::from_millis(1),
            query: Duration::from_millis(1),
        },
        ..Radare2Options::default()
    };
    let mut r2 = Radare2Session::new(&file, launcher.clone(), hasty).unwrap();
    let started = Instant::now();
    let err = r2.open().unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    let Radare2Error::Timeout { seconds, .. } = &err else {
        panic!("expected a timeout, got {err}");
    };
    assert_eq!(*seconds, 0.001);
    assert!(matches!(err, Radare2Error::Timeout { .. }), "{err}");
    assert!(
        err.to_string().contains("raise the radare2 timeout"),
        "{err}"
    );
    assert_eq!(r2.process_id(), None);
    let pid = r2.process_lineage()[0];
    #[cfg(target_os = "linux")]
    assert!(
        !process_exists(pid),
        "radare2 process {pid} survived its timeout"
    );
    let _ = pid;

    let mut fresh = session(&file, &launcher);
    assert!(fresh.identity().unwrap().version.starts_with("5."));
    assert!(!fresh.procedures().unwrap().procedures.is_empty());
}

#[test]
fn a_killed_radare2_is_a_typed_error_and_the_next_call_recovers() {
    let Some((launcher, file)) = setup("markupsafe-speedups-universal2.so") else {
        return;
    };
    let mut r2 = session(&file, &launcher);
    let before = r2.procedures().unwrap();
    let pid = r2.process_id().unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());

    let started = Instant::now();
    let err = r2.procedures().unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    let Radare2Error::Exited { status, .. } = &err else {
        panic!("expected an exit, got {err}");
    };
    assert!(status.contains('9'), "{status}");
    assert!(matches!(err, Radare2Error::Exited { .. }), "{err}");
    #[cfg(target_os = "linux")]
    assert!(!process_exists(pid));

    assert_eq!(r2.procedures().unwrap(), before);
    assert_eq!(r2.process_lineage().len(), 2);
}

#[test]
fn radare2_metacharacters_in_a_file_name_are_only_characters() {
    let Some((launcher, file)) = setup("markupsafe-speedups-universal2.so") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.so");
    let hostile = dir.path().join("a;b|c`?e x`@0x10~y $z.so");
    std::fs::copy(&file, &plain).unwrap();
    std::fs::copy(&file, &hostile).unwrap();
    let expected = session(&plain, &launcher).procedures().unwrap();
    assert!(!expected.procedures.is_empty());
    let mut r2 = session(&hostile, &launcher);
    assert_eq!(r2.procedures().unwrap(), expected);
}

/// The host's stdout carries protocol bytes only: output radare2 (or a
/// shell it starts) writes to descriptor 1 goes to stderr instead.
#[cfg(unix)]
#[test]
fn the_libr_host_keeps_stdout_for_the_protocol() {
    use std::io::Write;
    use std::process::{Command, Stdio};

    let Some((launcher, file)) = setup("markupsafe-speedups-universal2.so") else {
        return;
    };
    let Launcher::Libr { dir, host } = launcher else {
        common::skip("the libr host is not in use (radare2 comes from PATH)");
        return;
    };
    let mut child = Command::new(host)
        .args(["radare2-host", "--libr"])
        .arg(&dir)
        .args(["-e", "scr.color=0", "--"])
        .arg(&file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"?V\n!echo LEAKED-TO-FD-1\n?e hi\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let frames: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
    assert_eq!(
        frames.len(),
        5,
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(frames[0], b"");
    assert!(frames[1].starts_with(b"5."));
    assert_eq!(
        (frames[2], frames[3], frames[4]),
        (&b""[..], &b"hi\n"[..], &b""[..])
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("LEAKED-TO-FD-1"));
}

#[test]
fn the_libr_host_refuses_what_it_cannot_serve() {
    let Some(file) = common::fixture("markupsafe-speedups-universal2.so") else {
        return;
    };
    let empty = tempfile::tempdir().unwrap();
    let run = |libr: &Path, target: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_rea"))
            .args(["radare2-host", "--libr"])
            .arg(libr)
            .arg("--")
            .arg(target)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(empty.path(), &file);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("REA_RADARE2_LIBR"));
    let out = run(empty.path(), Path::new("relative.so"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be absolute"));
}

/// The operator's analysis depth reaches radare2 and is named in its
/// identity (which Evidence carries): `aaa` finds at least the functions
/// `aa` does.
#[test]
fn the_analysis_depth_is_the_operators_and_is_named() {
    let Some((launcher, file)) = setup("watcher-linux-x64.node") else {
        return;
    };
    let mut counts = Vec::new();
    for depth in [AnalysisDepth::Aa, AnalysisDepth::Aaa] {
        let options = Radare2Options {
            analysis: depth,
            ..Radare2Options::default()
        };
        let mut r2 = Radare2Session::new(&file, launcher.clone(), options).unwrap();
        let identity = r2.identity().unwrap();
        assert_eq!(
            identity.name,
            format!("radare2 (analysis {})", depth.as_str())
        );
        counts.push(r2.procedures().unwrap().procedures.len());
    }
    assert!(counts[1] >= counts[0], "aa {} aaa {}", counts[0], counts[1]);
}

/// `main` of an MSVC executable (universal CRT), which the native
/// provider names from the runtime's `__p___argc` handover, is where
/// radare2's own MSVC entry-stub reading puts it.
#[test]
fn msvc_main_is_where_radare2_finds_it() {
    let Some((launcher, file)) = setup("setuptools-cli-64.exe") else {
        return;
    };
    let theirs: Vec<u64> = session(&file, &launcher)
        .procedures()
        .unwrap()
        .procedures
        .iter()
        .filter(|p| p.name.as_deref() == Some("main"))
        .map(|p| p.address)
        .collect();
    assert_eq!(theirs.len(), 1, "radare2 names one main: {theirs:x?}");
    let image = NativeImage::open(&file).unwrap();
    let inventory = image.inventory(0).unwrap();
    let ours: Vec<_> = inventory
        .procedures
        .iter()
        .filter(|p| p.name.as_deref() == Some("main"))
        .collect();
    assert_eq!(ours.len(), 1, "{ours:?}");
    assert_eq!(ours[0].address, theirs[0]);
    assert!(
        ours[0].sources.contains(Source::CRuntimeMain),
        "{:?}",
        ours[0].sources
    );
}
