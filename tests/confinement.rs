//! The read root holds under races (hostile-input findings F1, F1b, F2).
//!
//! An attacker who can write inside `--read-root` swaps, in a loop, a file
//! or directory there with a symlink to something outside (or with a FIFO)
//! while a real `rea mcp --read-root` serves tool calls on the inside path.
//! No answer may carry the outside file's identity or content, and no call
//! may block.

mod common;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

/// How long each race runs.
const RACE: Duration = Duration::from_secs(3);
/// A call that takes longer than this has blocked.
const BLOCKED: Duration = Duration::from_secs(20);

type Client = RunningService<RoleClient, ()>;

async fn serve(root: &Path) -> Client {
    serve_with(root, &[]).await
}

async fn call(client: &Client, tool: &str, args: Value) -> (Value, bool) {
    let call = common::call_peer_with(client.peer(), tool, args);
    tokio::time::timeout(BLOCKED, call)
        .await
        .unwrap_or_else(|_| panic!("{tool} blocked for {BLOCKED:?}"))
}

fn exchange(a: &Path, b: &Path) {
    let a = CString::new(a.as_os_str().as_bytes()).unwrap();
    let b = CString::new(b.as_os_str().as_bytes()).unwrap();
    // SAFETY: valid C strings; RENAME_EXCHANGE swaps two existing names.
    unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        );
    }
}

/// Swaps `a` and `b` on a thread until the guard is dropped.
struct Swapper {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Swapper {
    fn start(a: PathBuf, b: PathBuf) -> Swapper {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                exchange(&a, &b);
                // A pause much shorter than a call: each rename bumps the
                // kernel's global rename sequence, and lookups retry while
                // it moves, so an unbroken loop starves the server.
                std::thread::sleep(Duration::from_micros(20));
            }
        });
        Swapper {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Scene {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    root: PathBuf,
    outside: PathBuf,
}

fn scene() -> Scene {
    let root_dir = tempfile::tempdir().unwrap();
    let outside_dir = tempfile::tempdir().unwrap();
    Scene {
        root: root_dir.path().canonicalize().unwrap(),
        outside: outside_dir.path().canonicalize().unwrap(),
        _dirs: (root_dir, outside_dir),
    }
}

/// Two distinct ELF files: the one inside and the one outside.
fn binaries(s: &Scene) -> Option<(PathBuf, String)> {
    let (inside, outside) = (Path::new("/bin/true"), Path::new("/bin/false"));
    if !inside.is_file() || !outside.is_file() {
        common::skip("/bin/true and /bin/false are needed as two ELF files");
        return None;
    }
    std::fs::copy(inside, s.root.join("target")).unwrap();
    std::fs::copy(outside, s.outside.join("secret")).unwrap();
    let secret = common::sha256_file(&s.outside.join("secret"));
    assert_ne!(secret, common::sha256_file(&s.root.join("target")));
    Some((s.outside.join("secret"), secret))
}

#[tokio::test(flavor = "multi_thread")]
async fn open_binary_never_opens_a_swapped_in_symlink() {
    let s = scene();
    let Some((secret_file, secret)) = binaries(&s) else {
        return;
    };
    std::os::unix::fs::symlink(&secret_file, s.root.join("swap")).unwrap();
    let client = serve(&s.root).await;
    let target = s.root.join("target");
    let swapper = Swapper::start(target.clone(), s.root.join("swap"));
    let (mut calls, mut opened) = (0, 0);
    let start = Instant::now();
    while start.elapsed() < RACE {
        let (answer, failed) = call(&client, "open_binary", json!({"path": target})).await;
        calls += 1;
        let text = answer.to_string();
        assert!(
            !text.contains(&secret),
            "call {calls} opened the outside file"
        );
        if !failed {
            opened += 1;
            let (strings, _) = call(&client, "search_strings", json!({"query": "a"})).await;
            assert!(!strings.to_string().contains(&secret));
        }
    }
    drop(swapper);
    assert!(opened > 0, "the inside file never opened in {calls} calls");
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_directory_swapped_for_a_symlink_never_leads_outside() {
    let s = scene();
    let Some((_, secret)) = binaries(&s) else {
        return;
    };
    std::fs::create_dir(s.root.join("d")).unwrap();
    std::fs::rename(s.root.join("target"), s.root.join("d/secret")).unwrap();
    std::os::unix::fs::symlink(&s.outside, s.root.join("d_swap")).unwrap();
    let client = serve(&s.root).await;
    let swapper = Swapper::start(s.root.join("d"), s.root.join("d_swap"));
    let path = s.root.join("d/secret");
    let start = Instant::now();
    while start.elapsed() < RACE {
        let (answer, _) = call(&client, "open_binary", json!({"path": path})).await;
        assert!(!answer.to_string().contains(&secret));
    }
    drop(swapper);
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fifo_swapped_in_never_blocks_the_session() {
    let s = scene();
    let Some(_) = binaries(&s) else {
        return;
    };
    let fifo = CString::new(s.root.join("fifo").as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let client = serve(&s.root).await;
    let target = s.root.join("target");
    let swapper = Swapper::start(target.clone(), s.root.join("fifo"));
    let (mut refused, mut calls) = (0, 0);
    let start = Instant::now();
    while start.elapsed() < RACE {
        // `call` fails the test if any of these blocks.
        let (answer, failed) = call(&client, "open_binary", json!({"path": target})).await;
        calls += 1;
        if failed && answer["error"]["code"] == "not_a_regular_file" {
            refused += 1;
        }
        call(&client, "binary_session", json!({})).await;
    }
    drop(swapper);
    assert!(calls > 10, "{calls} calls");
    eprintln!("{refused} of {calls} opens met the FIFO and were refused");
    client.cancel().await.ok();
}

fn bundle_json(padding: usize) -> String {
    format!(
        "{{\"format\":\"rea-evidence-bundle\",{}\"bundle_version\":1,\"records\":[],\"unknowns\":[]}}",
        " ".repeat(padding)
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn import_evidence_bundle_never_reads_outside() {
    let s = scene();
    std::fs::write(s.root.join("bundle.json"), bundle_json(0)).unwrap();
    // A valid bundle outside (its sha256 must never be reported), and one
    // whose member name must never be echoed (F1b).
    std::fs::write(s.outside.join("valid.json"), bundle_json(7)).unwrap();
    let valid_outside = common::sha256_file(&s.outside.join("valid.json"));
    std::fs::write(
        s.outside.join("named.json"),
        "{\"PRIVATE_KEY_NAME_OUTSIDE_ROOT\":1}",
    )
    .unwrap();
    for (name, outside) in [("valid", "valid.json"), ("named", "named.json")] {
        let swap = s.root.join(format!("swap-{name}"));
        std::os::unix::fs::symlink(s.outside.join(outside), &swap).unwrap();
        let client = serve(&s.root).await;
        let path = s.root.join("bundle.json");
        let swapper = Swapper::start(path.clone(), swap);
        let start = Instant::now();
        let mut calls = 0;
        while start.elapsed() < RACE {
            let (answer, _) = call(&client, "import_evidence_bundle", json!({"path": path})).await;
            calls += 1;
            let text = answer.to_string();
            assert!(
                !text.contains(&valid_outside),
                "the outside bundle was imported"
            );
            assert!(!text.contains("PRIVATE_KEY_NAME"), "{text}");
        }
        drop(swapper);
        assert!(calls > 100, "only {calls} calls");
        client.cancel().await.ok();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn analyze_javascript_application_never_reads_outside() {
    let s = scene();
    let app = s.root.join("app");
    std::fs::create_dir(&app).unwrap();
    std::fs::write(app.join("package.json"), r#"{"main":"main.js"}"#).unwrap();
    std::fs::write(app.join("main.js"), "require('electron');\n").unwrap();
    std::fs::create_dir(s.outside.join("app")).unwrap();
    let marker = "const OUTSIDE_MARKER = require('electron');\n";
    std::fs::write(s.outside.join("app/main.js"), marker).unwrap();
    std::fs::write(s.outside.join("app/package.json"), r#"{"main":"main.js"}"#).unwrap();
    let outside_sha = common::sha256_file(&s.outside.join("app/main.js"));
    // The whole directory, and one file in it, swapped for symlinks.
    std::os::unix::fs::symlink(s.outside.join("app"), s.root.join("app_swap")).unwrap();
    std::os::unix::fs::symlink(s.outside.join("app/main.js"), app.join("main_swap")).unwrap();
    let client = serve(&s.root).await;
    for (a, b) in [
        (app.clone(), s.root.join("app_swap")),
        (app.join("main.js"), app.join("main_swap")),
    ] {
        let swapper = Swapper::start(a, b);
        let start = Instant::now();
        while start.elapsed() < RACE {
            let (answer, _) = call(
                &client,
                "analyze_javascript_application",
                json!({"input_path": app}),
            )
            .await;
            assert!(
                !answer.to_string().contains(&outside_sha),
                "an outside file was read"
            );
        }
        drop(swapper);
    }
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bundle_executable_swapped_for_a_symlink_never_leads_outside() {
    let s = scene();
    let Some((secret_file, secret)) = binaries(&s) else {
        return;
    };
    let bundle = s.root.join("Demo.app");
    std::fs::create_dir_all(bundle.join("Contents/MacOS")).unwrap();
    std::fs::write(
        bundle.join("Contents/Info.plist"),
        r#"<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict><key>CFBundleExecutable</key><string>Demo</string></dict></plist>"#,
    )
    .unwrap();
    std::fs::rename(s.root.join("target"), bundle.join("Contents/MacOS/Demo")).unwrap();
    std::os::unix::fs::symlink(&secret_file, bundle.join("Contents/MacOS/swap")).unwrap();
    let client = serve(&s.root).await;
    let swapper = Swapper::start(
        bundle.join("Contents/MacOS/Demo"),
        bundle.join("Contents/MacOS/swap"),
    );
    let start = Instant::now();
    let mut opened = 0;
    while start.elapsed() < RACE {
        let (answer, failed) = call(&client, "open_binary", json!({"path": bundle})).await;
        assert!(!answer.to_string().contains(&secret));
        if !failed {
            opened += 1;
            let (inventory, _) = call(&client, "inspect_artifact", json!({})).await;
            assert!(!inventory.to_string().contains(&secret));
        }
    }
    drop(swapper);
    assert!(opened > 0, "the bundle never opened");
    client.cancel().await.ok();
}

// ---- long opens (findings F3, F7) ------------------------------------------

/// A sparse file of `size` bytes that starts as a real ELF (4 KiB on disk).
fn sparse_elf(dir: &Path, size: u64) -> Option<PathBuf> {
    let elf = Path::new("/bin/true");
    if !elf.is_file() {
        common::skip("/bin/true is needed as an ELF header");
        return None;
    }
    let path = dir.join("huge.elf");
    std::fs::copy(elf, &path).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(size)
        .unwrap();
    Some(path)
}

async fn serve_with(root: &Path, extra: &[&str]) -> Client {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_rea"));
    cmd.arg("mcp")
        .arg("--read-root")
        .arg(root)
        .args(extra)
        .env_remove("REA_LOG")
        .env("REA_ANALYSIS_PROVIDER", "native");
    ().serve(TokioChildProcess::new(cmd).expect("rea mcp starts"))
        .await
        .expect("client connects")
}

/// A server over `s.root` started with `extra` flags, with a small ELF
/// already open, and the path of a 64 GiB sparse ELF beside it.
async fn small_open_and_huge_waiting(s: &Scene, extra: &[&str]) -> Option<(Client, PathBuf)> {
    let huge = sparse_elf(&s.root, 64 << 30)?;
    std::fs::copy("/bin/true", s.root.join("small")).unwrap();
    let client = serve_with(&s.root, extra).await;
    let path = s.root.join("small");
    let (small, failed) = call(&client, "open_binary", json!({"path": path})).await;
    assert!(!failed, "{small}");
    Some((client, huge))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_target_is_refused_at_once_by_its_size() {
    let s = scene();
    let Some(huge) = sparse_elf(&s.root, 50 << 30) else {
        return;
    };
    let client = serve(&s.root).await;
    let start = Instant::now();
    let (answer, failed) = call(&client, "open_binary", json!({"path": huge})).await;
    assert!(failed, "{answer}");
    assert_eq!(answer["error"]["code"], "file_too_large", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&(4u64 << 30).to_string()),
        "names the limit: {message}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_open_stops_at_the_deadline_and_keeps_the_previous_target() {
    let s = scene();
    let flags = ["--max-target-bytes", "100000000000", "--call-timeout", "2"];
    let Some((client, huge)) = small_open_and_huge_waiting(&s, &flags).await else {
        return;
    };
    let start = Instant::now();
    let (answer, failed) = call(&client, "open_binary", json!({"path": huge})).await;
    assert!(failed, "{answer}");
    assert_eq!(answer["error"]["code"], "call_timeout", "{answer}");
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "{:?}",
        start.elapsed()
    );
    let (status, _) = call(&client, "binary_session", json!({})).await;
    assert_eq!(
        status["result"]["target"]["path"],
        json!(s.root.join("small")),
        "the previous target stays active: {status}"
    );
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn other_requests_answer_while_an_open_hashes_and_a_cancel_stops_it() {
    use rmcp::model::{CallToolRequestParams, ClientRequest, Request};
    use rmcp::service::PeerRequestOptions;
    let s = scene();
    let flags = ["--max-target-bytes", "100000000000"];
    let Some((client, huge)) = small_open_and_huge_waiting(&s, &flags).await else {
        return;
    };
    let params = CallToolRequestParams::new("open_binary")
        .with_arguments(common::object(json!({"path": huge})));
    let request = ClientRequest::CallToolRequest(Request::new(params));
    let handle = client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .expect("sent");
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The open is hashing; the session answers meanwhile.
    for _ in 0..3 {
        let start = Instant::now();
        let (status, _) = call(&client, "binary_session", json!({})).await;
        assert_eq!(
            status["result"]["target"]["path"],
            json!(s.root.join("small")),
            "{status}"
        );
        let prompt = client
            .peer()
            .get_prompt(
                rmcp::model::GetPromptRequestParams::new("investigate_feature")
                    .with_arguments(common::object(json!({"feature": "x"}))),
            )
            .await
            .expect("prompts/get answers");
        assert!(!prompt.messages.is_empty());
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }
    handle
        .cancel(Some("test".into()))
        .await
        .expect("cancel sent");
    // The cancelled open never replaces the active target.
    for _ in 0..10 {
        let (status, _) = call(&client, "binary_session", json!({})).await;
        assert_eq!(
            status["result"]["target"]["path"],
            json!(s.root.join("small")),
            "{status}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    client.cancel().await.ok();
}
