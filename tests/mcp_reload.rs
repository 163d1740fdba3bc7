//! `notifications/prompts/list_changed` on reload, in both protocol eras,
//! driven through the hub's deterministic reload entry point (one smoke test
//! goes through the real file watcher in `cli.rs`).

mod common;

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::{Era, connect_to, hub};
use rmcp::model::{ServerNotification, SubscriptionFilter};

/// A fresh copy of the shipped prompts directory.
fn prompts_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    for entry in std::fs::read_dir(&src).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    dir
}

fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} lacks {from:?}");
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

async fn wait_for(counter: &common::Counter, n: usize) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while counter.list_changed.load(Ordering::SeqCst) < n {
        if tokio::time::timeout_at(deadline, counter.notify.notified())
            .await
            .is_err()
        {
            return counter.list_changed.load(Ordering::SeqCst) >= n;
        }
    }
    true
}

#[tokio::test]
async fn a_valid_change_reaches_legacy_peers_and_subscribed_modern_clients_only() {
    let hub = hub();
    let (legacy, _, legacy_counter) = connect_to(&hub, Era::Legacy).await;
    let (subscribed, _, _) = connect_to(&hub, Era::Modern).await;
    let (unsubscribed, _, unsubscribed_counter) = connect_to(&hub, Era::Modern).await;
    legacy.list_all_prompts().await.unwrap();
    unsubscribed.list_all_prompts().await.unwrap();
    let mut subscription = subscribed
        .peer()
        .listen(SubscriptionFilter::builder().prompts_list_changed().build())
        .await
        .expect("listen is served");

    let copy = prompts_copy();
    let dir = copy.path();
    edit(
        dir,
        "investigate_feature.toml",
        "title = \"Investigate a feature\"",
        "title = \"Investigate a feature (reloaded)\"",
    );
    edit(
        dir,
        "investigate_feature.md.j2",
        "These are optional starting points",
        "Reloaded: these are optional starting points",
    );
    let told = hub.reload(dir).await.expect("valid change");
    assert_eq!(told, 2, "one legacy peer and one subscription");

    assert!(wait_for(&legacy_counter, 1).await, "legacy peer notified");
    let note = tokio::time::timeout(Duration::from_secs(5), subscription.next())
        .await
        .expect("subscription notified in time")
        .expect("stream open");
    assert!(
        matches!(
            note,
            Some(ServerNotification::PromptListChangedNotification(_))
        ),
        "{note:?}"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        unsubscribed_counter.list_changed.load(Ordering::SeqCst),
        0,
        "unsubscribed modern client told nothing"
    );

    for client in [&legacy, &subscribed, &unsubscribed] {
        let prompts = client.list_all_prompts().await.unwrap();
        assert_eq!(
            prompts[0].title.as_deref(),
            Some("Investigate a feature (reloaded)")
        );
    }
    let text = legacy
        .get_prompt(
            rmcp::model::GetPromptRequestParams::new("investigate_feature")
                .with_arguments(common::object(serde_json::json!({"feature": "x"}))),
        )
        .await
        .unwrap();
    assert!(
        text.messages[0]
            .content
            .as_text()
            .unwrap()
            .text
            .contains("Reloaded: these")
    );
}

#[tokio::test]
async fn an_invalid_change_keeps_the_old_catalog_and_tells_nobody() {
    let hub = hub();
    let (legacy, _, counter) = connect_to(&hub, Era::Legacy).await;
    legacy.list_all_prompts().await.unwrap();
    let copy = prompts_copy();
    let dir = copy.path();
    edit(
        dir,
        "trace_crash.md.j2",
        "tool(\"binary_overview\")",
        "tool(\"binary_overveiw\")",
    );
    let diags = hub.reload(dir).await.expect_err("invalid");
    let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert!(
        text.iter()
            .any(|d| d.contains("trace_crash.md.j2:")
                && d.contains("did you mean `binary_overview`")),
        "{text:?}"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(counter.list_changed.load(Ordering::SeqCst), 0);
    assert_eq!(hub.catalog().origin, "embedded");
}

#[tokio::test]
async fn argument_shape_changes_need_a_rebuild() {
    let hub = hub();
    let cases = [
        (
            "investigate_feature.toml",
            "completion = \"document\"",
            "completion = \"provider\"",
        ),
        (
            "investigate_feature.toml",
            "name = \"document\"",
            "name = \"doc\"",
        ),
        (
            "trace_crash.toml",
            "name = \"target_path\"\ndescription",
            "name = \"target_path\"\nrequired = true\ndescription",
        ),
    ];
    for (file, from, to) in cases {
        let copy = prompts_copy();
        let dir = copy.path();
        edit(dir, file, from, to);
        let diags = hub.reload(dir).await.expect_err("shape change rejected");
        let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
        assert!(
            text.iter()
                .any(|d| d.contains("need a rebuild") || d.contains("needs a rebuild")),
            "{file}: {text:?}"
        );
    }
}

/// A legacy connection over a pipe of a few bytes whose client reads
/// until its `prompts/list` is answered and then never again: the server
/// cannot write it a notification.
async fn stalled_legacy_listener(
    hub: &std::sync::Arc<rea::server::Hub>,
) -> tokio::io::DuplexStream {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (server_io, client_io) = tokio::io::duplex(16);
    let server = rea::server::ReaServer::new(hub.clone());
    tokio::spawn(async move {
        if let Ok(running) = rmcp::ServiceExt::serve(server, server_io).await {
            let _ = running.waiting().await;
        }
    });
    let mut client = BufReader::new(client_io);
    let requests = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stalled","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"prompts/list","params":{}}"#,
    ];
    for request in requests {
        let stream = client.get_mut();
        stream.write_all(request.as_bytes()).await.unwrap();
        stream.write_all(b"\n").await.unwrap();
        if request.contains("\"id\"") {
            let mut answer = String::new();
            client.read_line(&mut answer).await.unwrap();
            assert!(answer.contains("\"result\""), "{answer}");
        }
    }
    client.into_inner()
}

#[tokio::test]
async fn a_listener_that_stops_reading_delays_no_one() {
    let hub = hub();
    // Registered first, so telling listeners one after another would wait
    // on it before anyone else.
    let _stalled = stalled_legacy_listener(&hub).await;
    let (legacy, _, counter) = connect_to(&hub, Era::Legacy).await;
    legacy.list_all_prompts().await.unwrap();
    let copy = prompts_copy();
    edit(
        copy.path(),
        "trace_crash.toml",
        "title = \"Trace a crash\"",
        "title = \"Trace a crash (edited)\"",
    );
    let reloading = {
        let hub = hub.clone();
        tokio::spawn(async move { hub.reload(copy.path()).await })
    };
    assert!(
        wait_for(&counter, 1).await,
        "the reading client is told while the stalled one blocks"
    );
    let told = tokio::time::timeout(
        rea::server::NOTIFY_TIMEOUT + Duration::from_secs(10),
        reloading,
    )
    .await
    .expect("the reload ends once the stalled listener's time is up")
    .expect("the reload task")
    .expect("a valid change");
    assert_eq!(told, 1, "only the reading client took the notification");
    // The stalled listener stays one (it may read again): the next reload
    // again tells the reading client at once and ends in bounded time.
    let again = prompts_copy();
    let told = tokio::time::timeout(
        rea::server::NOTIFY_TIMEOUT + Duration::from_secs(10),
        hub.reload(again.path()),
    )
    .await
    .expect("the reload ends in bounded time")
    .expect("valid");
    assert_eq!(told, 1);
    assert!(
        wait_for(&counter, 2).await,
        "the reading client is told again"
    );
}
