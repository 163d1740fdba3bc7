//! `rea serve` over raw HTTP/1.1, where the status line, the headers and
//! the connection itself are what is tested: tokens and 401, a session
//! that answers only to the token that opened it, malformed, oversized and
//! stale requests, a full server, a client that disconnects mid-call, a
//! slow reader, and SIGTERM, which must end every run in flight and leave
//! no process behind. (The Python and npm SDKs over HTTP are in
//! `external_clients.rs`.)
#![cfg(target_os = "linux")]

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use common::serve::*;
use serde_json::{Value, json};

/// The head and body of a raw answer.
fn split(answer: &str) -> (&str, &str) {
    answer.split_once("\r\n\r\n").unwrap_or((answer, ""))
}

/// A raw request of `method` to `/mcp` under `token`, naming `session`.
fn session_request(
    port: u16,
    method: &str,
    token: &str,
    session: &str,
    extra: &str,
    body: &str,
) -> String {
    format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
         Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n{extra}\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Round-3 finding R3-3: another analyst's token on a legacy session id
/// can do nothing with it, whatever the method: not call, not cancel, not
/// resume or listen to its stream, not end it. Each gets exactly the 404 of
/// an id the server never gave, and the owner's session goes on.
#[test]
fn a_session_opened_under_one_token_refuses_another_in_every_method() {
    let served = serve_two_analysts_logging::<&str>(&[], "trace");
    let port = served.port;
    let session = open_legacy_session(port, ANA);
    let never_given = "5f0c3a52-0d1e-4c43-9a7e-3f2b1c0d9e8a";
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"binary_session","arguments":{}}}"#;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
    let attempts = [
        ("POST", "", call),
        ("POST", "", cancel),
        ("GET", "Last-Event-ID: 0/0\r\n", ""),
        ("GET", "", ""),
        ("DELETE", "", ""),
    ];
    for (method, extra, body) in attempts {
        let stolen = send(
            port,
            &session_request(port, method, BEN, &session, extra, body),
        );
        let unknown = send(
            port,
            &session_request(port, method, BEN, never_given, extra, body),
        );
        let (stolen_head, stolen_body) = split(&stolen);
        let (unknown_head, unknown_body) = split(&unknown);
        assert!(
            stolen_head.starts_with("HTTP/1.1 404"),
            "{method} {extra}: {stolen}"
        );
        assert_eq!(stolen_head.lines().next(), unknown_head.lines().next());
        assert_eq!(
            stolen_body, unknown_body,
            "{method}: a borrowed id reads as an unknown one"
        );
        let error: Value = serde_json::from_str(stolen_body).expect("a JSON-RPC error");
        assert_eq!(error["error"]["code"], -32600, "{error}");
    }
    // The owner's session is whole: it answers, and nothing of it reached
    // the other analyst.
    let own = send(
        port,
        &session_request(port, "POST", ANA, &session, "", call),
    );
    assert!(own.contains("\"tools\""), "{own}");
    // Session ids never reach the log, at any level.
    let log = served.log();
    assert!(!log.is_empty(), "REA_LOG=trace logs something");
    assert!(
        !log.contains(&session),
        "the session id is in the log:\n{log}"
    );
}

#[test]
fn http_requests_without_a_known_bearer_token_get_401() {
    let served = serve_two_analysts();
    for authorization in [
        None,
        Some("Bearer not-one-of-the-tokens-at-all"),
        Some(&format!("Basic {ANA}")[..]),
        Some(&format!("Bearer {ANA}x")[..]),
    ] {
        let head = post(served.port, authorization);
        assert!(
            head.starts_with("HTTP/1.1 401"),
            "{authorization:?}: {head}"
        );
        assert!(
            head.to_ascii_lowercase()
                .contains("www-authenticate: bearer"),
            "{head}"
        );
    }
    let head = post(served.port, Some(&format!("Bearer {ANA}")));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
}

#[test]
fn sigterm_stops_the_http_server_with_exit_0() {
    let mut served = serve_two_analysts();
    let head = post(served.port, Some(&format!("Bearer {BEN}")));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    // SAFETY: signalling our own child by its pid.
    let signalled = unsafe { libc::kill(served.child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(signalled, 0);
    let status = served.child.wait().expect("rea serve exits");
    assert!(status.success(), "{status:?}");
    assert!(std::net::TcpStream::connect(("127.0.0.1", served.port)).is_err());
}

#[test]
fn http_faults_get_their_answers_and_the_server_keeps_serving() {
    let served = serve_two_analysts_with(&[
        std::ffi::OsStr::new("--max-body-bytes"),
        std::ffi::OsStr::new("4096"),
        std::ffi::OsStr::new("--idle-timeout"),
        std::ffi::OsStr::new("1"),
    ]);
    let ana = format!("Bearer {ANA}");
    let auth = [("Authorization", ana.as_str())];
    let status = |answer: &str| answer.lines().next().unwrap_or_default().to_owned();
    // Bodies that are not one well-formed message get the JSON-RPC error
    // that names the problem: with HTTP 400 when it cannot name a request,
    // in-band (200) with the request's id when it can.
    let error_of = |answer: &str| -> Value {
        let (_, body) = answer.split_once("\r\n\r\n").expect("a body");
        serde_json::from_str(body).unwrap_or_else(|_| panic!("not JSON-RPC: {answer}"))
    };
    for (body, http, id, code) in [
        ("{not json", "400", Value::Null, -32700),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            "400",
            Value::Null,
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[1]}"#,
            "200",
            json!(5),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":5}}"#,
            "200",
            json!(6),
            -32602,
        ),
    ] {
        let answer = exchange(served.port, &auth, body);
        assert!(
            status(&answer).starts_with(&format!("HTTP/1.1 {http}")),
            "{answer}"
        );
        let error = error_of(&answer);
        assert_eq!(
            (&error["id"], &error["error"]["code"]),
            (&id, &json!(code)),
            "{body}: {error}"
        );
    }
    // A body over the limit.
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"{}","version":"0"}}}}}}"#,
        "x".repeat(8192)
    );
    let answer = exchange(served.port, &auth, &huge);
    assert!(status(&answer).starts_with("HTTP/1.1 413"), "{answer}");
    // A session id the server never gave.
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;
    let unknown = [
        ("Authorization", ana.as_str()),
        ("Mcp-Session-Id", "00000000-0000-0000-0000-000000000000"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let answer = exchange(served.port, &unknown, call);
    assert!(status(&answer).starts_with("HTTP/1.1 404"), "{answer}");
    // A session idle past the timeout is gone.
    let head = post(served.port, Some(&ana));
    let session = session_id(&head);
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let expired = [
        ("Authorization", ana.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let answer = exchange(served.port, &expired, call);
    assert!(status(&answer).starts_with("HTTP/1.1 404"), "{answer}");
    // And a new session is served as before.
    let head = post(served.port, Some(&ana));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
}

#[test]
fn a_session_ends_on_delete_with_200() {
    let served = serve_two_analysts();
    let session = open_legacy_session(served.port, ANA);
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {ANA}\r\n\
         Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\n\r\n",
        port = served.port
    );
    let answer = send(served.port, &delete);
    // 200, which every SDK takes for a clean end (the Python SDK warns on
    // anything but 200 or 204).
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let call = call_request(
        served.port,
        ANA,
        Via::Session(&session),
        "binary_session",
        json!({}),
    );
    let after = send(served.port, &call);
    assert!(after.starts_with("HTTP/1.1 404"), "{after}");
}

#[test]
fn a_full_http_server_refuses_a_new_session_and_says_why() {
    let served = serve_two_analysts_with(&["--max-workspaces", "1", "--max-body-bytes", "4096"]);
    let ana = format!("Bearer {ANA}");
    let first = post(served.port, Some(&ana));
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let second = exchange(served.port, &[("Authorization", ana.as_str())], body);
    assert!(second.starts_with("HTTP/1.1 503"), "{second}");
    assert!(
        second.to_ascii_lowercase().contains("retry-after: 60"),
        "{second}"
    );
    let (_, error) = second.split_once("\r\n\r\n").expect("a body");
    let error: Value = serde_json::from_str(error).expect("a JSON-RPC error");
    assert_eq!(error["id"], 1, "{error}");
    assert_eq!(error["error"]["code"], -32001, "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("most sessions (1)"), "{message}");
    // An oversized body is still refused as such, full or not.
    let huge = body.replace("\"raw\"", &format!("\"{}\"", "x".repeat(8192)));
    let oversized = exchange(served.port, &[("Authorization", ana.as_str())], &huge);
    assert!(oversized.starts_with("HTTP/1.1 413"), "{oversized}");
    // A stateless request opens no session: it is served as before.
    let ben = modern_call(served.port, BEN, "binary_session", json!({}));
    assert_eq!(ben["isError"], false, "{ben}");
}

/// A scenario that captures the lingerer in `root` for up to two minutes.
fn lingering_scenario(program: &Path, root: &Path) -> Value {
    json!({
        "executable": program,
        "working_directory": root,
        "timeout_ms": 120000,
        "idle_timeout_ms": 120000,
        "question": "Does the program ever end by itself?",
        "approved": true,
    })
}

/// A capture of the lingerer in flight on a server.
struct Lingering {
    served: Served,
    _root: tempfile::TempDir,
    /// The connection the capture was asked on.
    call: TcpStream,
    /// Capture host, program, grandchild.
    pids: [i32; 3],
    /// The legacy session the capture runs in, if any.
    session: Option<String>,
}

/// A capture server whose read root holds the lingerer, with Ana's
/// capture of it sent on a connection of its own (statelessly, or in a
/// legacy session when `legacy`) and running: the server, that
/// connection, and the pids of the capture host, the program and its
/// grandchild. `None` without a C compiler.
fn lingering_capture(legacy: bool) -> Option<Lingering> {
    let root = common::open_dir();
    let program = common::open_program(root.path(), "lingerer", common::LINGERER_SOURCE)?;
    let served = serve_two_analysts_with(&capture_arguments(root.path()));
    let session = legacy.then(|| open_legacy_session(served.port, ANA));
    let via = session.as_deref().map_or(Via::Modern, Via::Session);
    let request = call_request(
        served.port,
        ANA,
        via,
        "capture_process_scenario",
        lingering_scenario(&program, root.path()),
    );
    let mut call = TcpStream::connect(("127.0.0.1", served.port)).expect("connects");
    call.write_all(request.as_bytes()).unwrap();
    let pids = common::wait_for_lingerer(root.path());
    assert_eq!(
        rea::capture::procfs::parent_of(pids[0]),
        Some(served.child.id() as i32),
        "the capture host is the server's child"
    );
    Some(Lingering {
        served,
        _root: root,
        call,
        pids,
        session,
    })
}

/// How `child` exited, waiting at most a minute (a server that does not
/// stop fails the test instead of hanging it).
fn exit_of(child: &mut Child) -> ExitStatus {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        assert!(Instant::now() < until, "the server did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigterm_mid_capture_ends_the_run_and_leaves_no_process_behind() {
    for legacy in [false, true] {
        // Bound whole, so the call's connection stays open until the server
        // stops (a disconnect would stop the run by itself).
        let Some(mut capture) = lingering_capture(legacy) else {
            return;
        };
        let pids = capture.pids;
        let server = capture.served.child.id() as libc::pid_t;
        // SAFETY: signalling our own child by its pid.
        let signalled = unsafe { libc::kill(server, libc::SIGTERM) };
        assert_eq!(signalled, 0);
        let status = exit_of(&mut capture.served.child);
        assert!(status.success(), "legacy: {legacy}: {status:?}");
        assert_eq!(
            common::survivors(&pids, Duration::from_secs(30)),
            Vec::<i32>::new(),
            "legacy: {legacy}: capture host, program and grandchild ({pids:?}) all end with \
             the server"
        );
    }
}

#[test]
fn sigterm_leaves_no_radare2_host_behind() {
    if common::radare2().is_none() {
        return;
    }
    let mut served = serve_two_analysts();
    let server = served.child.id() as i32;
    let request = call_request(
        served.port,
        ANA,
        Via::Modern,
        "open_binary",
        json!({"path": "/bin/true", "provider_id": "radare2"}),
    );
    let mut call = TcpStream::connect(("127.0.0.1", served.port)).expect("connects");
    call.set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    call.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    call.read_to_string(&mut answer).expect("the answer");
    let opened = message_of(&answer);
    assert_eq!(opened["result"]["isError"], false, "{opened}");
    let hosts: Vec<i32> = rea::capture::procfs::children_of(server)
        .into_iter()
        .filter(|&(_, state)| state != 'Z')
        .map(|(pid, _)| pid)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("radare2-host"))
        })
        .collect();
    assert_eq!(hosts.len(), 1, "one radare2 host serves the open target");
    // SAFETY: signalling our own child by its pid.
    assert_eq!(unsafe { libc::kill(server, libc::SIGTERM) }, 0);
    let status = exit_of(&mut served.child);
    assert!(status.success(), "{status:?}");
    assert_eq!(
        common::survivors(&hosts, Duration::from_secs(30)),
        Vec::<i32>::new(),
        "the radare2 host ends with the server"
    );
}

#[test]
fn a_client_that_disconnects_mid_call_has_its_run_stopped_and_others_do_not_notice() {
    let Some(capture) = lingering_capture(false) else {
        return;
    };
    let (served, pids) = (&capture.served, capture.pids);
    // Ben is served while Ana's run goes on.
    let ben = modern_call(served.port, BEN, "binary_session", json!({}));
    assert_eq!(ben["isError"], false, "{ben}");
    drop(capture.call);
    assert_eq!(
        common::survivors(&pids, Duration::from_secs(30)),
        Vec::<i32>::new(),
        "a call whose client went away stops its run ({pids:?})"
    );
    // Nothing of the stopped run was recorded, and both are still served.
    let listed = modern_call(served.port, ANA, "list_evidence", json!({}));
    assert_eq!(
        listed["structuredContent"]["result"]["items"],
        json!([]),
        "{listed}"
    );
    let ben = modern_call(served.port, BEN, "list_evidence", json!({}));
    assert_eq!(ben["isError"], false, "{ben}");
}

#[test]
fn a_legacy_call_runs_on_after_a_disconnect_until_its_client_cancels_it() {
    let Some(capture) = lingering_capture(true) else {
        return;
    };
    let (served, pids) = (&capture.served, capture.pids);
    let session = capture.session.clone().expect("a legacy session");
    drop(capture.call);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        common::survivors(&pids, Duration::ZERO),
        pids.to_vec(),
        "a legacy session's call outlives its connection"
    );
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
    let authorization = format!("Bearer {ANA}");
    let answer = exchange(
        served.port,
        &[
            ("Authorization", authorization.as_str()),
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        cancel,
    );
    assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
    assert_eq!(
        common::survivors(&pids, Duration::from_secs(30)),
        Vec::<i32>::new(),
        "a cancelled call stops its run ({pids:?})"
    );
}

/// A loopback connection with a receive buffer of a few KiB, so a large
/// answer reaches its reader in many small pieces.
fn narrow_connection(port: u16) -> TcpStream {
    use std::os::fd::FromRawFd;
    // SAFETY: a fresh socket set up and connected with plain structs; the
    // descriptor is handed to the TcpStream that owns it from then on.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket");
        let size: libc::c_int = 2048;
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
        let address = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
            },
            sin_zero: [0; 8],
        };
        let connected = libc::connect(
            fd,
            (&address as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        assert_eq!(connected, 0, "connect");
        TcpStream::from_raw_fd(fd)
    }
}

#[test]
fn a_slow_reader_gets_its_whole_answer_and_holds_up_no_one() {
    let served = serve_two_analysts();
    let request = modern_request(served.port, ANA, "tools/list", None, json!({}));
    let mut slow = narrow_connection(served.port);
    slow.write_all(request.as_bytes()).unwrap();
    // Ana's tools/list waits unread; meanwhile Ben and Ana herself (on
    // another connection) are answered.
    std::thread::sleep(Duration::from_millis(300));
    for (token, tool) in [
        (BEN, "binary_session"),
        (ANA, "list_evidence"),
        (BEN, "list_evidence"),
    ] {
        let answer = modern_call(served.port, token, tool, json!({}));
        assert_eq!(answer["isError"], false, "{tool}: {answer}");
    }
    // Then the slow reader takes its answer a little at a time.
    let mut answer = Vec::new();
    let mut chunk = [0u8; 1024];
    slow.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    loop {
        let n = slow.read(&mut chunk).expect("the answer keeps coming");
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&chunk[..n]);
        std::thread::sleep(Duration::from_millis(5));
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.len() > 16 * 1024,
        "the answer is many times the receive buffer"
    );
    let message = message_of(&answer);
    let tools = message["result"]["tools"].as_array().expect("tools");
    assert!(
        tools
            .iter()
            .any(|t| t["name"] == "capture_process_scenario"),
        "{}",
        tools.len()
    );
}

/// Round-3 finding R3-4: SIGTERM stops `rea serve` while a call walks a
/// large file, well within the 30 s it gives connections: the stop
/// interrupts the walk rather than waiting for it.
#[test]
fn sigterm_stops_rea_serve_in_the_middle_of_a_walk() {
    let files = tempfile::tempdir().unwrap();
    let path = common::elf_of_calls(files.path());
    let mut served = serve_two_analysts_with(&[
        std::ffi::OsStr::new("--read-root"),
        files.path().as_os_str(),
    ]);
    let port = served.port;
    // The native walk is the one under test: with radare2 installed, `auto`
    // would hand the listing to its host process, whose CPU is not ours.
    let opened = modern_call(
        port,
        ANA,
        "open_binary",
        json!({"path": path, "provider_id": "native"}),
    );
    assert_eq!(opened["isError"], false, "{opened}");
    // The walker waits as long as the test may: a reader that gave up would
    // disconnect, and the disconnect alone would stop the walk.
    let walker = std::thread::spawn(move || {
        send_within(
            port,
            &call_request(port, ANA, Via::Modern, "list_procedures", json!({})),
            Duration::from_secs(120),
        )
    });
    let pid = served.child.id();
    let started = common::cpu_seconds(pid);
    common::wait_for_cpu(pid, started, 0.5);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        common::cpu_seconds(pid) - started > 0.5,
        "the listing is working"
    );
    let stop = Instant::now();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = loop {
        if let Some(status) = served.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            stop.elapsed() < Duration::from_secs(20),
            "rea serve still runs 20 s after SIGTERM (its grace is 30 s)"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    let _ = walker.join();
    assert!(
        served.log().contains("rea serve: stopped"),
        "{}",
        served.log()
    );
}
