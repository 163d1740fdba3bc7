//! `rea serve` against the attacks of the round-3 hostile-input review
//! (`R3-7` to `R3-11`): connections that hold descriptors without a
//! token, slow headers and bodies, a lying `Content-Length`, one analyst
//! holding every session, files written for one analyst, tokens taken out
//! of the file while the server runs, and requests that are not valid
//! JSON-RPC. Each test is the attack, through the real binary over raw
//! HTTP/1.1. (Borrowed session ids, R3-3, are in `serve.rs`.)
#![cfg(target_os = "linux")]

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::serve::*;
use serde_json::{Value, json};

/// Whether the server closed `stream` (a read gives end of file or a
/// reset) within `within`.
fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    stream.set_read_timeout(Some(within)).unwrap();
    let mut byte = [0u8; 64];
    loop {
        match stream.read(&mut byte) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return false,
            Err(_) => return true,
        }
    }
}

fn body_of(answer: &str) -> Value {
    let (_, body) = answer.split_once("\r\n\r\n").expect("a body");
    serde_json::from_str(body).unwrap_or_else(|_| panic!("not JSON: {answer}"))
}

/// R3-7: a client that sends its headers too slowly, or leaves a
/// connection idle, is closed at the header timeout; a body too slow gets
/// 408; a declared length over the limit gets 413 at once, before any body.
#[test]
fn slow_headers_idle_connections_slow_bodies_and_lying_lengths_are_cut_short() {
    let served = serve_two_analysts_with(&[
        "--header-timeout",
        "1",
        "--body-timeout",
        "1",
        "--max-body-bytes",
        "4096",
    ]);
    let port = served.port;
    let mut idle = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    assert!(closed_within(&mut idle, Duration::from_secs(10)));
    assert!(closed_within(&mut slow, Duration::from_secs(10)));

    let head = |length: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {ANA}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {length}\r\n\r\n"
        )
    };
    // The answer to `request`, sent whole; the rest of the body it
    // announces never comes.
    let first_answer = |request: String| {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut answer = vec![0u8; 4096];
        let n = stream.read(&mut answer).unwrap_or(0);
        String::from_utf8_lossy(&answer[..n]).into_owned()
    };
    // 10 GB announced, 10 bytes sent: refused before any more is read.
    let answer = first_answer(format!("{}0123456789", head("10000000000")));
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    let answer = first_answer(format!("{}{{\"jsonrpc\"", head("100")));
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert_eq!(body_of(&answer)["error"]["code"], -32600);
    // And the server serves as before.
    assert!(post(port, Some(&format!("Bearer {ANA}"))).starts_with("HTTP/1.1 200"));
}

/// R3-7: more idle strangers than the server holds connections do not
/// starve an analyst: the oldest stranger is closed to make room.
#[test]
fn idle_strangers_make_room_for_an_analyst() {
    let served = serve_two_analysts_with(&["--max-connections", "8", "--header-timeout", "60"]);
    let port = served.port;
    let mut strangers: Vec<TcpStream> = (0..20)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    // Let the server accept them all.
    std::thread::sleep(Duration::from_millis(500));
    let head = post(port, Some(&format!("Bearer {ANA}")));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let closed = strangers
        .iter_mut()
        .map(|s| closed_within(s, Duration::from_millis(200)))
        .filter(|closed| *closed)
        .count();
    assert!(closed >= 12, "only {closed} of 20 strangers were shed");
}

/// R3-8: one analyst cannot hold every legacy session; another still
/// opens theirs.
#[test]
fn each_analyst_holds_at_most_their_share_of_sessions() {
    let served = serve_two_analysts_with(&["--max-workspaces", "4"]);
    let (ana, ben) = (format!("Bearer {ANA}"), format!("Bearer {BEN}"));
    for _ in 0..2 {
        assert!(post(served.port, Some(&ana)).starts_with("HTTP/1.1 200"));
    }
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let third = exchange(served.port, &[("Authorization", ana.as_str())], body);
    assert!(third.starts_with("HTTP/1.1 429"), "{third}");
    assert!(
        third.to_ascii_lowercase().contains("retry-after:"),
        "{third}"
    );
    let error = body_of(&third);
    assert_eq!(
        (&error["id"], &error["error"]["code"]),
        (&json!(7), &json!(-32001))
    );
    assert!(post(served.port, Some(&ben)).starts_with("HTTP/1.1 200"));
}

/// R3-10: a token taken out of the file stops working at once, on SIGHUP
/// and on a change alike; what it opened ends; a bad file keeps the tokens
/// in force; SIGHUP never stops the server.
#[test]
fn tokens_reload_revokes_at_once_and_a_bad_file_changes_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let mut served = serve_two_analysts();
    let port = served.port;
    let pid = served.child.id() as libc::pid_t;
    let (ana, ben) = (format!("Bearer {ANA}"), format!("Bearer {BEN}"));
    let session = open_legacy_session(port, ANA);
    let hangup = || {
        // SAFETY: signalling our own child by its pid.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGHUP) }, 0);
    };
    let write = |text: &str| {
        let staged = served.tokens.with_extension("new");
        std::fs::write(&staged, text).unwrap();
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::rename(&staged, &served.tokens).unwrap();
    };
    let status = |auth: &str| post(port, Some(auth))[..12].to_owned();

    // A broken file: nothing changes, and the log says why.
    write("[[token]]\nname = ");
    hangup();
    common::wait_for("the refused reload in the log", || {
        served.log().contains("not reloaded").then_some(())
    });
    assert_eq!(status(&ana), "HTTP/1.1 200");

    // ana taken out (a change, then SIGHUP too): her token is refused at
    // once and her session ends; ben is served throughout.
    write(&format!("[[token]]\nname = \"ben\"\ntoken = \"{BEN}\"\n"));
    hangup();
    common::wait_for("ana's token refused", || {
        (status(&ana) == "HTTP/1.1 401").then_some(())
    });
    assert_eq!(status(&ben), "HTTP/1.1 200");
    write(&two_tokens());
    common::wait_for("ana's token accepted again", || {
        (status(&ana) == "HTTP/1.1 200").then_some(())
    });
    let call = call_request(
        port,
        ANA,
        Via::Session(&session),
        "binary_session",
        json!({}),
    );
    let after = send(port, &call);
    assert!(
        after.starts_with("HTTP/1.1 404"),
        "her old session ended: {after}"
    );
    for _ in 0..10 {
        hangup();
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        served.child.try_wait().unwrap().is_none(),
        "SIGHUP stopped the server"
    );
    assert_eq!(status(&ben), "HTTP/1.1 200");
}

/// R3-11 over HTTP: an object with an id that is not a valid request gets
/// -32600 with that id, as JSON; an unknown method's name is not echoed.
#[test]
fn invalid_requests_get_their_id_as_json_and_unknown_methods_are_not_echoed() {
    let served = serve_two_analysts();
    let ana = format!("Bearer {ANA}");
    for body in [
        r#"{"jsonrpc":"1.0","id":11,"method":"ping"}"#,
        r#"{"id":11,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":11}"#,
        r#"{"jsonrpc":"2.0","id":11,"method":null}"#,
        r#"{"jsonrpc":"2.0","id":11,"method":5}"#,
        r#"{"jsonrpc":"2.0","id":10,"id":11,"method":"ping"}"#,
    ] {
        let answer = exchange(served.port, &[("Authorization", ana.as_str())], body);
        assert!(answer.starts_with("HTTP/1.1 200"), "{body}: {answer}");
        assert!(
            answer
                .to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{answer}"
        );
        let error = body_of(&answer);
        assert_eq!(
            (&error["id"], &error["error"]["code"]),
            (&json!(11), &json!(-32600)),
            "{body}"
        );
    }
    let session = open_legacy_session(served.port, ANA);
    let method = "m".repeat(100_000);
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": {}}).to_string();
    let headers = [
        ("Authorization", ana.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let answer = exchange(served.port, &headers, &body);
    assert!(answer.len() < 4_000, "{} bytes", answer.len());
    assert!(!answer.contains(&method));
    assert!(answer.contains("-32601"), "{answer}");
    // Nothing the server answers is plain text.
    let no_token = exchange(
        served.port,
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    );
    assert!(no_token.starts_with("HTTP/1.1 401"), "{no_token}");
    assert_eq!(body_of(&no_token)["error"]["code"], -32600);
}

/// R3-9: on a server of several analysts each writes beneath a directory
/// of their own, which another can neither replace nor read back; a write
/// root inside a read root is refused at start.
#[test]
fn files_written_for_one_analyst_stay_theirs() {
    let reads = tempfile::tempdir().unwrap();
    let writes = tempfile::tempdir().unwrap();
    let served = serve_two_analysts_with(&[
        std::ffi::OsStr::new("--read-root"),
        reads.path().as_os_str(),
        std::ffi::OsStr::new("--write-root"),
        writes.path().as_os_str(),
        std::ffi::OsStr::new("--max-body-bytes"),
        std::ffi::OsStr::new("65536"),
    ]);
    let port = served.port;
    let mine = writes.path().join("ana").join("bundle.json");
    let export = |token: &str, path: &std::path::Path, overwrite: bool| {
        modern_call(
            port,
            token,
            "export_evidence_bundle",
            json!({"path": path, "approved": true, "overwrite": overwrite}),
        )
    };
    let done = export(ANA, &mine, false);
    assert!(done["isError"] != json!(true), "{done}");
    let written = std::fs::read(&mine).expect("ana's bundle is in her directory");
    let mode = std::fs::metadata(writes.path().join("ana")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o700
    );
    let stolen = export(BEN, &mine, true);
    assert_eq!(stolen["isError"], json!(true), "{stolen}");
    assert_eq!(
        std::fs::read(&mine).unwrap(),
        written,
        "ben replaced ana's bundle"
    );
    let read = modern_call(port, BEN, "import_evidence_bundle", json!({"path": mine}));
    assert_eq!(read["isError"], json!(true), "{read}");
    let own = modern_call(port, ANA, "import_evidence_bundle", json!({"path": mine}));
    assert!(own["isError"] != json!(true), "{own}");

    // A write root inside a read root is refused at start.
    let inside = reads.path().join("out");
    std::fs::create_dir(&inside).unwrap();
    let tokens = tempfile::tempdir().unwrap();
    let file = tokens.path().join("tokens.toml");
    std::fs::write(&file, two_tokens()).unwrap();
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_rea"))
        .args(["serve", "--listen", "127.0.0.1:0", "--tokens-file"])
        .arg(&file)
        .arg("--read-root")
        .arg(reads.path())
        .arg("--write-root")
        .arg(&inside)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("overlap"), "{said}");
}
