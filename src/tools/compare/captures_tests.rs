//! The dimension rules of `compare_process_captures`, on hand-made
//! captures.

use super::*;
use crate::capture::fixtures::{crashed, exited, stream};

fn file(path: &str, sha: &str) -> FileEntry {
    FileEntry {
        path: path.into(),
        kind: "file".into(),
        size: 1,
        sha256: Some(sha.into()),
        hashed_bytes: 1,
    }
}

fn statuses(result: &Value) -> BTreeMap<String, String> {
    result["dimensions"]
        .as_object()
        .expect("dimensions")
        .iter()
        .map(|(k, v)| (k.clone(), v["status"].as_str().expect("status").to_owned()))
        .collect()
}

fn status(result: &Value, dimension: &str) -> String {
    statuses(result)[dimension].clone()
}

#[test]
fn identical_runs_are_unchanged_in_every_dimension() {
    let (result, _) = compare(&exited(0, "hi\n"), &exited(0, "hi\n"));
    let all = statuses(&result);
    assert_eq!(
        all.keys().collect::<Vec<_>>(),
        ["exit", "files", "signal", "stderr", "stdout"]
    );
    assert!(all.values().all(|s| s == "unchanged"), "{all:?}");
    assert_eq!(result["status"], "unchanged");
}

#[test]
fn exit_code_and_signal_changes_are_seen() {
    let (result, _) = compare(&exited(0, ""), &exited(3, ""));
    assert_eq!(status(&result, "exit"), "changed");
    assert_eq!(status(&result, "signal"), "unchanged");
    assert_eq!(result["status"], "changed");
    assert_eq!(result["dimensions"]["exit"]["right"]["code"], 3);

    let crash = crashed(Some(0x1000), Some(0), Vec::new());
    let (result, _) = compare(&exited(0, ""), &crash);
    assert_eq!(status(&result, "exit"), "changed");
    assert_eq!(status(&result, "signal"), "changed");
    // Two crashes at different addresses (ASLR) are the same outcome.
    let other = crashed(Some(0x2000), Some(0), Vec::new());
    let (result, _) = compare(&crash, &other);
    assert_eq!(status(&result, "signal"), "unchanged");
    assert_eq!(status(&result, "exit"), "unchanged");
}

#[test]
fn truncated_streams_are_never_unchanged() {
    let complete = stream("abcdef", 6);
    let cut = stream("abc", 6);
    // Equal in the kept prefix, same total: the rest is not seen.
    assert_eq!(stream_status(&cut, &cut), ComparisonStatus::Truncated);
    assert_eq!(
        stream_status(&stream("abc", 9), &stream("abcdef", 9)),
        ComparisonStatus::Truncated
    );
    // A difference inside the common prefix is a fact.
    assert_eq!(
        stream_status(&stream("abx", 6), &cut),
        ComparisonStatus::Changed
    );
    // A complete side equal to the other's kept prefix, with as many bytes
    // written: the cut side's rest is not seen.
    assert_eq!(stream_status(&complete, &cut), ComparisonStatus::Truncated);
    // A different number of bytes written is a difference.
    assert_eq!(
        stream_status(&stream("abc", 7), &cut),
        ComparisonStatus::Changed
    );
    // Complete streams compare by hash.
    assert_eq!(
        stream_status(&complete, &complete),
        ComparisonStatus::Unchanged
    );
    assert_eq!(
        stream_status(&complete, &stream("abcdeg", 6)),
        ComparisonStatus::Changed
    );

    let mut left = exited(0, "");
    left.stdout = cut.clone();
    let mut right = exited(0, "");
    right.stdout = cut;
    let (result, limitations) = compare(&left, &right);
    assert_eq!(status(&result, "stdout"), "truncated");
    assert_eq!(result["status"], "truncated");
    assert!(
        limitations
            .iter()
            .any(|l| l.contains("left stdout was cut"))
    );
}

#[test]
fn file_changes_are_keyed_by_path_and_hash() {
    let a = "a".repeat(64);
    let b = "b".repeat(64);
    let mut left = exited(0, "");
    left.files.created = vec![file("out.txt", &a)];
    let mut right = left.clone();
    let (result, _) = compare(&left, &right);
    assert_eq!(status(&result, "files"), "unchanged");

    right.files.created = vec![file("out.txt", &b)];
    let (result, _) = compare(&left, &right);
    assert_eq!(status(&result, "files"), "changed");
    assert_eq!(
        result["dimensions"]["files"]["differing"]["items"][0]["path"],
        "out.txt"
    );

    // A file only one run wrote: a change, not a direction.
    right.files.created.push(file("extra.log", &a));
    right.files.created[0] = file("out.txt", &a);
    let (result, _) = compare(&left, &right);
    assert_eq!(status(&result, "files"), "changed");
    assert_eq!(
        result["dimensions"]["files"]["only_right"]["items"][0],
        "extra.log"
    );

    // A truncated listing: equal where seen is never unchanged, and a
    // path missing from the truncated side is not a difference.
    let mut cut = left.clone();
    cut.files.truncated = true;
    let (result, limitations) = compare(&left, &cut);
    assert_eq!(status(&result, "files"), "truncated");
    assert!(limitations.iter().any(|l| l.contains("right file listing")));
    let mut cut_empty = exited(0, "");
    cut_empty.files.truncated = true;
    let (result, _) = compare(&cut_empty, &left);
    assert_eq!(status(&result, "files"), "truncated");
    assert_eq!(result["dimensions"]["files"]["unseen"], 1);
}
