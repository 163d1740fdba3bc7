//! `capture_process_scenario` over MCP: a crash captured and offered by the
//! `capture` completion family, every refusal (policy off, not approved,
//! paths outside the roots) running nothing, and secret values absent from
//! everything the client can read back.
#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rea::capture::types::Network;
use rea::server::Hub;
use rea::session::{CapturePolicy, CaptureSettings, Policies};
use serde_json::{Value, json};

const REA: &str = env!("CARGO_BIN_EXE_rea");

/// A program that leaves `ran-marker` in its working directory, so a test
/// can tell that a refused call started nothing.
const MARKER: &str = r#"
#include <stdio.h>
int main(void) { FILE *f = fopen("ran-marker", "w"); if (f) fclose(f); return 0; }
"#;

/// A hub whose sessions may capture executables under `exec_root` running
/// in `work_root`, served by the built `rea`.
fn capture_hub(exec_root: &Path, work_root: &Path) -> Arc<Hub> {
    capture_hub_with(exec_root, work_root, None)
}

/// [`capture_hub`] with the operator's network setting.
fn capture_hub_with(exec_root: &Path, work_root: &Path, network: Option<Network>) -> Arc<Hub> {
    let policy = CapturePolicy::new(CaptureSettings {
        enabled: true,
        executable_roots: vec![exec_root.to_path_buf()],
        working_roots: vec![work_root.to_path_buf()],
        user: Some("65534:65534".into()).filter(|_| common::running_as_root()),
        network,
    })
    .expect("policy")
    .with_host(PathBuf::from(REA));
    Hub::with_policies(
        rea::catalog::render::LoadedCatalog::embedded().expect("catalog"),
        Policies {
            capture: policy,
            ..Policies::default()
        },
        rea::session::DeepProviders::none(),
    )
}

fn request(exe: &Path, dir: &Path, extra: Value) -> Value {
    let mut base = json!({
        "executable": exe,
        "working_directory": dir,
        "timeout_ms": 5000,
        "idle_timeout_ms": 5000,
        "question": "does it crash, and where?",
        "approved": true,
    });
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    base
}

/// Calls `capture_process_scenario` with [`request`]`(exe, dir, extra)`.
async fn capture(client: &common::Client, exe: &Path, dir: &Path, extra: Value) -> (Value, bool) {
    common::call(client, "capture_process_scenario", request(exe, dir, extra)).await
}

fn error_code(response: &Value) -> &str {
    response["error"]["code"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_is_captured_and_completes_as_a_capture() {
    let dir = common::open_dir();
    let src = r#"
#include <stdio.h>
int crash_here(volatile int *p) { return *p; }
int main(void) { puts("about to crash"); fflush(stdout); return crash_here(0); }
"#;
    let Some(exe) = common::open_program(dir.path(), "crash", src) else {
        return;
    };
    let hub = capture_hub(dir.path(), dir.path());
    let (client, _, _) = common::connect_to(&hub, common::Era::Modern).await;

    let (response, failed) = capture(&client, &exe, dir.path(), json!({})).await;
    assert!(!failed, "{response}");
    let result = &response["result"];
    assert_eq!(result["exit"]["signal"], json!(libc::SIGSEGV), "{result}");
    assert_eq!(result["exit"]["signal_name"], json!("SIGSEGV"));
    assert_eq!(result["stdout"]["text"], json!("about to crash\n"));
    assert!(
        result["crash"]["program_counter"].as_str().is_some(),
        "{result}"
    );
    assert_eq!(result["cleanup"]["verified"], json!(true));
    let evidence = &response["evidence"];
    assert_eq!(evidence["operation"], json!("capture_process_scenario"));
    assert_eq!(evidence["provider"]["id"], json!("rea-process"));
    common::assert_said_once(&response);
    assert_eq!(
        evidence.get("result"),
        None,
        "the client gets the recorded capture once"
    );
    assert_eq!(
        evidence["subject"]["sha256"],
        json!(common::sha256_file(&exe))
    );
    assert_eq!(evidence["subject"]["format"], json!("elf"));
    assert_eq!(
        evidence["parameters"]["question"],
        json!("does it crash, and where?")
    );
    let capture_id = evidence["evidence_id"].as_str().expect("id").to_string();

    // Evidence of another operation is not a capture.
    let (opened, failed) = common::call(&client, "open_binary", json!({"path": exe})).await;
    assert!(!failed, "{opened}");
    let other_id = opened["evidence"]["evidence_id"].as_str().expect("id");

    for (prompt, argument) in [
        (
            "prepare_bounded_process_capture",
            "prior_capture_evidence_id",
        ),
        ("trace_crash", "capture_evidence_id"),
    ] {
        let info = common::complete(&client, prompt, argument, "").await;
        let values = common::values(&info);
        assert_eq!(values, [capture_id.as_str()], "{prompt}.{argument}");
        assert!(!values.contains(&other_id));
        let info = common::complete(&client, prompt, argument, &capture_id[..8]).await;
        assert_eq!(common::values(&info), [capture_id.as_str()]);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_calls_run_nothing() {
    let dir = common::open_dir();
    let Some(exe) = common::open_program(dir.path(), "marker", MARKER) else {
        return;
    };
    let marker = dir.path().join("ran-marker");

    // Capture off (the default hub): the operator setting is missing.
    let (client, _, _) = common::connect(common::Era::Modern).await;
    let (response, failed) = capture(&client, &exe, dir.path(), json!({})).await;
    assert!(failed);
    assert_eq!(error_code(&response), "permission_required", "{response}");
    let missing = &response["error"]["data"]["missing"];
    assert_eq!(missing.as_array().map(Vec::len), Some(1), "{missing}");
    assert!(
        missing[0]
            .as_str()
            .unwrap()
            .contains("--enable-process-capture")
    );
    assert_eq!(response["error"]["data"]["policy"]["enabled"], json!(false));
    assert!(response.get("evidence").is_none());

    // Enabled, but the call is not approved.
    let hub = capture_hub(dir.path(), dir.path());
    let (client, _, _) = common::connect_to(&hub, common::Era::Modern).await;
    let (response, _) = capture(&client, &exe, dir.path(), json!({"approved": false})).await;
    assert_eq!(error_code(&response), "permission_required", "{response}");
    assert_eq!(
        response["error"]["data"]["missing"],
        json!(["request field: approved: true"])
    );

    // Paths the policy refuses: a relative path, an executable outside the
    // roots, a symlink inside the root that escapes it, a working
    // directory outside the roots.
    let elsewhere = common::open_dir();
    let Some(outside) = common::open_program(elsewhere.path(), "marker", MARKER) else {
        return;
    };
    let link = dir.path().join("escape");
    std::os::unix::fs::symlink(&outside, &link).expect("symlink");
    for (executable, working, code) in [
        (json!("marker"), json!(dir.path()), "invalid_path"),
        (json!(outside), json!(dir.path()), "outside_capture_roots"),
        (json!(link), json!(dir.path()), "outside_capture_roots"),
        (json!(exe), json!(elsewhere.path()), "outside_capture_roots"),
        (json!(exe), json!("."), "invalid_path"),
    ] {
        let (response, failed) = capture(
            &client,
            &exe,
            dir.path(),
            json!({"executable": executable, "working_directory": working}),
        )
        .await;
        assert!(failed, "{response}");
        assert_eq!(
            error_code(&response),
            code,
            "{executable} in {working}: {response}"
        );
    }
    assert!(!marker.exists(), "a refused call started the program");
    assert!(!elsewhere.path().join("ran-marker").exists());
    let (listed, _) = common::call(&client, "list_evidence", json!({})).await;
    assert_eq!(listed["result"]["total"], json!(0), "{listed}");

    // The same program, allowed, does run: the refusals above were real.
    let (response, failed) = capture(&client, &exe, dir.path(), json!({})).await;
    assert!(!failed, "{response}");
    assert_eq!(response["result"]["exit"]["code"], json!(0));
    assert!(marker.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn secret_values_never_reach_the_client() {
    let dir = common::open_dir();
    let src = r#"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    const char *t = getenv("API_TOKEN");
    printf("token=%s arg=%s\n", t, argc > 1 ? argv[1] : "");
    fprintf(stderr, "err %s\n", t);
    return 0;
}
"#;
    let Some(exe) = common::open_program(dir.path(), "leaky", src) else {
        return;
    };
    let secret = "zq9-Secret-Value-7731";
    let hub = capture_hub(dir.path(), dir.path());
    let (client, _, _) = common::connect_to(&hub, common::Era::Modern).await;
    let (response, failed) = capture(
        &client,
        &exe,
        dir.path(),
        json!({
            "arguments": [secret],
            "environment": [
                {"name": "API_TOKEN", "value": secret, "secret": true},
                {"name": "PLAIN", "value": "visible"},
            ],
            "question": format!("does {secret} leak?"),
        }),
    )
    .await;
    assert!(!failed, "{response}");
    assert_eq!(
        response["result"]["stdout"]["text"],
        json!("token=[redacted:API_TOKEN] arg=[redacted:API_TOKEN]\n")
    );
    let parameters = &response["evidence"]["parameters"];
    assert_eq!(
        parameters["scenario"]["environment"],
        json!([
            {"name": "API_TOKEN", "value": "[redacted]", "secret": true},
            {"name": "PLAIN", "value": "visible", "secret": false},
        ])
    );
    assert!(!response.to_string().contains(secret), "{response}");
    let id = response["evidence"]["evidence_id"].clone();

    let (listed, _) = common::call(&client, "list_evidence", json!({})).await;
    assert_eq!(listed["result"]["total"], json!(1), "{listed}");
    assert!(!listed.to_string().contains(secret));
    let (got, failed) = common::call(&client, "get_evidence", json!({"evidence_id": id})).await;
    assert!(!failed, "{got}");
    assert!(got.to_string().contains("[redacted:API_TOKEN]"));
    assert!(!got.to_string().contains(secret));

    // A refusal quoting the request never quotes a secret either.
    let (refused, failed) = capture(
        &client,
        &exe,
        dir.path(),
        json!({
            "environment": [{"name": "API_TOKEN", "value": secret, "secret": true}],
            "timeout_ms": secret,
        }),
    )
    .await;
    assert!(failed);
    assert_eq!(error_code(&refused), "invalid_arguments", "{refused}");
    assert!(!refused.to_string().contains(secret), "{refused}");
}

/// Connects to the test's own listener on the host's loopback, then to a
/// listener of its own on 127.0.0.1, and prints NoNewPrivs.
const NETWORK_PROBE: &str = r#"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
static int dial(int port) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a; memset(&a, 0, sizeof a);
    a.sin_family = AF_INET; a.sin_port = htons(port); a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int ok = connect(s, (struct sockaddr *)&a, sizeof a) == 0;
    close(s);
    return ok;
}
int main(int argc, char **argv) {
    printf("host %s\n", dial(atoi(argv[1])) ? "reached" : "unreachable");
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a; memset(&a, 0, sizeof a); socklen_t n = sizeof a;
    a.sin_family = AF_INET; a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int own = bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 1) == 0
        && getsockname(l, (struct sockaddr *)&a, &n) == 0 && dial(ntohs(a.sin_port));
    printf("loopback %s\n", own ? "works" : "broken");
    FILE *f = fopen("/proc/self/status", "r"); char line[256];
    while (f && fgets(line, sizeof line, f)) if (!strncmp(line, "NoNewPrivs:", 11)) fputs(line, stdout);
    return 0;
}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn captures_run_without_the_host_network_unless_the_operator_allows_it() {
    let dir = common::open_dir();
    let Some(exe) = common::open_program(dir.path(), "netprobe", NETWORK_PROBE) else {
        return;
    };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("addr").port().to_string();
    for (network, reached, shown) in [
        (None, "unreachable", "isolated"),
        (Some(Network::Host), "reached", "host"),
    ] {
        let hub = capture_hub_with(dir.path(), dir.path(), network);
        let (client, _, _) = common::connect_to(&hub, common::Era::Modern).await;
        let (status, _) = common::call(&client, "binary_session", json!({})).await;
        assert_eq!(
            status["result"]["process_capture"]["network"],
            json!(shown),
            "{status}"
        );
        let (response, failed) =
            capture(&client, &exe, dir.path(), json!({"arguments": [port]})).await;
        if failed && error_code(&response) == "network_isolation_unavailable" {
            common::skip("this machine cannot create a network namespace for the capture");
            return;
        }
        assert!(!failed, "{response}");
        let result = &response["result"];
        let out = result["stdout"]["text"].as_str().expect("stdout");
        assert!(
            out.contains(&format!("host {reached}\n")),
            "{network:?}: {out}"
        );
        assert!(out.contains("loopback works\n"), "{network:?}: {out}");
        assert!(out.contains("NoNewPrivs:\t1"), "{out}");
        assert_eq!(result["network"], json!(shown), "{result}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_script_whose_interpreter_lies_outside_the_roots_is_refused() {
    let dir = common::open_dir();
    let script = dir.path().join("run.sh");
    std::fs::write(&script, "#!/bin/sh\necho ran\n").expect("write");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let hub = capture_hub(dir.path(), dir.path());
    let (client, _, _) = common::connect_to(&hub, common::Era::Modern).await;
    let (response, failed) = capture(&client, &script, dir.path(), json!({})).await;
    assert!(failed, "{response}");
    assert_eq!(
        error_code(&response),
        "interpreter_outside_capture_roots",
        "{response}"
    );
    assert!(!dir.path().join("ran").exists());
    // With the interpreter inside the executable root, the script runs.
    let Some(sh) = ["/bin/sh", "/usr/bin/sh"]
        .iter()
        .map(Path::new)
        .find(|p| p.exists())
    else {
        return;
    };
    let inside = dir.path().join("sh");
    std::fs::copy(std::fs::canonicalize(sh).expect("sh"), &inside).expect("copy sh");
    std::fs::write(&script, format!("#!{}\necho ran\n", inside.display())).expect("write");
    let (response, failed) = capture(&client, &script, dir.path(), json!({})).await;
    assert!(!failed, "{response}");
    assert_eq!(
        response["result"]["stdout"]["text"],
        json!("ran\n"),
        "{response}"
    );
}

/// Prints `inside` and nothing else: which interpreter ran shows in the
/// output, since `/bin/sh` would run the script's `echo outside`.
const INSIDE_INTERPRETER: &str = r#"
#include <stdio.h>
int main(void) { puts("inside"); return 0; }
"#;

/// R3-12: a writer inside the executable root rewrites the script's `#!`
/// line in place (same inode, open/write/close) between an interpreter
/// inside the roots and `/bin/sh`, while the script is captured again and
/// again. `/bin/sh` never runs: a run is refused, fails to start, or runs
/// the interpreter inside the roots.
#[tokio::test(flavor = "multi_thread")]
async fn a_script_rewritten_during_the_check_never_runs_an_interpreter_outside_the_roots() {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    const RUNS: usize = 300;
    let dir = common::open_dir();
    let Some(inside) = common::open_program(dir.path(), "inside", INSIDE_INTERPRETER) else {
        return;
    };
    if !Path::new("/bin/sh").exists() {
        common::skip("no /bin/sh to stand for the interpreter outside the roots");
        return;
    }
    let body = "echo outside\n";
    let allowed = format!("#!{}\n{body}", inside.display());
    let filler = allowed.len() - "#!/bin/sh\n#\n".len() - body.len();
    let forbidden = format!("#!/bin/sh\n#{}\n{body}", "-".repeat(filler));
    assert_eq!(
        allowed.len(),
        forbidden.len(),
        "rewritten in place, never truncated"
    );
    let script = dir.path().join("flipped.sh");
    std::fs::write(&script, &allowed).expect("write");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");

    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let writer = {
        let (stop, script) = (stop.clone(), script.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                for text in [&forbidden, &allowed] {
                    // The kernel refuses writers (ETXTBSY) while it executes
                    // the file: the writer tries again.
                    if let Ok(mut file) = std::fs::OpenOptions::new().write(true).open(&script) {
                        let _ = file.write_all(text.as_bytes());
                    }
                }
            }
        })
    };
    let hub = capture_hub(dir.path(), dir.path());
    let (client, _, _) = common::connect_to(&hub, common::Era::Modern).await;
    let (mut ran_inside, mut refused, mut ran_outside) = (0, 0, Vec::new());
    for run in 0..RUNS {
        let (response, failed) = capture(&client, &script, dir.path(), json!({})).await;
        if failed {
            refused += usize::from(error_code(&response) == "interpreter_outside_capture_roots");
            continue;
        }
        match response["result"]["stdout"]["text"].as_str() {
            Some("inside\n") => ran_inside += 1,
            _ => {
                ran_outside.push(run);
                break;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().expect("the writer");
    assert_eq!(
        ran_outside,
        Vec::<usize>::new(),
        "/bin/sh ran (run numbers); {ran_inside} ran inside, {refused} refused"
    );
    assert!(ran_inside > 0, "no run got through: the race was not run");
    assert!(
        refused > 0,
        "the check never saw /bin/sh: the line was not flipped"
    );
}

/// Tries a host's path-based Unix sockets every way a program can reach
/// them: a stream socket connected to `argv[1]`, a datagram socket and
/// datagram pairs (`SOCK_RAW` makes one too) sending to `argv[2]`; then checks that a stream pair (the
/// program's own IPC) still works and cannot be pointed elsewhere.
const UNIX_SOCKET_PROBE: &str = r#"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
static struct sockaddr_un at(const char *path) {
    struct sockaddr_un a; memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX; strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    return a;
}
static void say(const char *what, int ok) { printf("%s: %s\n", what, ok ? "reached" : strerror(errno)); }
int main(int argc, char **argv) {
    if (argc < 3) return 2;
    struct sockaddr_un stream = at(argv[1]), dgram = at(argv[2]);
    struct sockaddr *to = (struct sockaddr *)&dgram;
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    say("stream", s >= 0 && connect(s, (struct sockaddr *)&stream, sizeof stream) == 0
        && write(s, "via-stream", 10) == 10);
    int d = socket(AF_UNIX, SOCK_DGRAM, 0);
    say("datagram", d >= 0 && sendto(d, "via-datagram", 12, 0, to, sizeof dgram) == 12);
    int pair[2];
    say("datagram pair", socketpair(AF_UNIX, SOCK_DGRAM, 0, pair) == 0
        && sendto(pair[0], "via-pair", 8, 0, to, sizeof dgram) == 8);
    say("raw pair", socketpair(AF_UNIX, SOCK_RAW, 0, pair) == 0
        && sendto(pair[0], "via-raw", 7, 0, to, sizeof dgram) == 7);
    int own[2]; char got[2];
    int works = socketpair(AF_UNIX, SOCK_STREAM, 0, own) == 0 && write(own[0], "ok", 2) == 2
        && read(own[1], got, 2) == 2;
    printf("stream pair %s\n", works ? "works" : "broken");
    if (works) say("stream pair", connect(own[0], (struct sockaddr *)&stream, sizeof stream) == 0);
    return 0;
}
"#;

/// R3-13: a world-writable path-based Unix socket on the host, in the
/// working root, is out of an isolated capture's reach (stream and
/// datagram alike), and reachable only when the operator allows the host
/// network.
#[tokio::test(flavor = "multi_thread")]
async fn an_isolated_capture_cannot_reach_the_hosts_unix_sockets() {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::net::{UnixDatagram, UnixListener};
    let dir = common::open_dir();
    let Some(exe) = common::open_program(dir.path(), "unixprobe", UNIX_SOCKET_PROBE) else {
        return;
    };
    let stream_path = dir.path().join("host-stream.sock");
    let dgram_path = dir.path().join("host-dgram.sock");
    let listener = UnixListener::bind(&stream_path).expect("listen");
    let datagrams = UnixDatagram::bind(&dgram_path).expect("bind");
    for path in [&stream_path, &dgram_path] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    }
    listener.set_nonblocking(true).expect("nonblocking");
    datagrams.set_nonblocking(true).expect("nonblocking");
    let arguments = json!({"arguments": [stream_path, dgram_path]});
    for network in [None, Some(Network::Host)] {
        let hub = capture_hub_with(dir.path(), dir.path(), network);
        let (client, _, _) = common::connect_to(&hub, common::Era::Modern).await;
        let (response, failed) = capture(&client, &exe, dir.path(), arguments.clone()).await;
        if failed && error_code(&response) == "network_isolation_unavailable" {
            common::skip("this machine cannot create a network namespace for the capture");
            return;
        }
        assert!(!failed, "{response}");
        let out = response["result"]["stdout"]["text"]
            .as_str()
            .expect("stdout");
        assert!(out.contains("stream pair works\n"), "{network:?}: {out}");
        assert!(
            out.contains("stream pair: Transport endpoint is already connected\n"),
            "{network:?}: {out}"
        );
        let mut received = Vec::new();
        if let Ok((mut connection, _)) = listener.accept() {
            let mut bytes = String::new();
            connection.read_to_string(&mut bytes).expect("read");
            received.push(bytes);
        }
        let mut buf = [0u8; 64];
        while let Ok(n) = datagrams.recv(&mut buf) {
            received.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
        if network.is_none() {
            for channel in ["stream", "datagram", "datagram pair", "raw pair"] {
                assert!(
                    out.contains(&format!("{channel}: Permission denied\n")),
                    "{channel}: {out}"
                );
            }
            assert_eq!(
                received,
                Vec::<String>::new(),
                "the host's sockets got: {out}"
            );
        } else {
            for channel in ["stream", "datagram", "datagram pair", "raw pair"] {
                assert!(
                    out.contains(&format!("{channel}: reached\n")),
                    "{channel}: {out}"
                );
            }
            assert_eq!(
                received,
                ["via-stream", "via-datagram", "via-pair", "via-raw"],
                "{out}"
            );
        }
    }
}

/// A running capture holds no lock: the session answers meanwhile.
#[tokio::test(flavor = "multi_thread")]
async fn the_session_answers_while_a_capture_runs() {
    let dir = common::open_dir();
    let src = "#include <unistd.h>\nint main(void) { sleep(3); return 0; }\n";
    let Some(exe) = common::open_program(dir.path(), "sleeper", src) else {
        return;
    };
    let hub = capture_hub(dir.path(), dir.path());
    let (client, _, _) = common::connect_to(&hub, common::Era::Modern).await;
    let peer = client.peer().clone();
    let request = request(&exe, dir.path(), json!({}));
    let running = tokio::spawn(async move {
        common::call_peer_with(&peer, "capture_process_scenario", request).await
    });
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let started = std::time::Instant::now();
    let (status, failed) = common::call(&client, "binary_session", json!({})).await;
    assert!(!failed, "{status}");
    let waited = started.elapsed();
    assert!(!running.is_finished(), "the capture was still running");
    assert!(
        waited < std::time::Duration::from_secs(2),
        "binary_session waited {waited:?}"
    );
    let (captured, failed) = running.await.expect("capture task");
    assert!(!failed, "{captured}");
    assert_eq!(captured["result"]["exit"]["code"], json!(0), "{captured}");
}

/// prepare_bounded_process_capture plans for the policy the server has:
/// off by default, the roots and account when the operator enabled it.
#[tokio::test]
async fn the_capture_prompt_follows_the_operators_policy() {
    let dir = common::open_dir();
    let args = json!({
        "behavior_question": "does it write a file?",
        "executable": "/bin/true",
        "working_directory": dir.path(),
    });
    let off = "Process capture is off on this server";
    let (client, _, _) = common::connect(common::Era::Legacy).await;
    let text = common::prompt_text(&client, "prepare_bounded_process_capture", args.clone()).await;
    assert!(text.contains(off), "{text}");
    let hub = capture_hub(dir.path(), dir.path());
    let (client, _, _) = common::connect_to(&hub, common::Era::Modern).await;
    let text = common::prompt_text(&client, "prepare_bounded_process_capture", args).await;
    assert!(!text.contains(off), "{text}");
    assert!(
        text.contains("`binary_session` reports the capture policy"),
        "{text}"
    );
}
