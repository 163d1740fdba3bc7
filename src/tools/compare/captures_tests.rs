//! Hand-made captures (shared with the correlation tests) and the
//! dimension rules of `compare_process_captures`.

use sha2::Digest;

use super::*;
use crate::capture::types::SCHEMA_VERSION;
use crate::capture::{
    Cleanup, Crash, Exit, ExitReason, FileChanges, FileEntry, Mapping, Stream, Timing, Tracing,
};

pub(crate) fn stream(text: &str, total: u64) -> Stream {
    Stream {
        text: text.into(),
        sha256: crate::session::evidence::hex(&sha2::Sha256::digest(text.as_bytes())),
        stored_bytes: text.len() as u64,
        total_bytes: total,
        truncated: total > text.len() as u64,
    }
}

/// A run that exited with `code`, printing `out`.
pub(crate) fn exited(code: i32, out: &str) -> Capture {
    Capture {
        schema_version: SCHEMA_VERSION,
        exit: Exit {
            code: Some(code),
            signal: None,
            signal_name: None,
            reason: ExitReason::Exited,
        },
        crash: None,
        stdout: stream(out, out.len() as u64),
        stderr: stream("", 0),
        timing: Timing {
            wall_ms: 1,
            user_ms: 0,
            system_ms: 0,
        },
        max_rss_kib: 1,
        host_peak_rss_kib: None,
        processes_seen: 1,
        files: FileChanges::default(),
        cleanup: Cleanup {
            verified: true,
            survivors_killed: 0,
        },
        tracing: Tracing {
            attached: true,
            reason: None,
        },
        limitations: Vec::new(),
    }
}

pub(crate) fn mapping(path: &str, start: u64, end: u64, offset: u64) -> Mapping {
    Mapping {
        path: path.into(),
        start: format!("{start:#x}"),
        end: format!("{end:#x}"),
        offset: format!("{offset:#x}"),
        perms: "r-xp".into(),
    }
}

/// A SIGSEGV at `pc` touching `fault`, with `maps`.
pub(crate) fn crashed(pc: Option<u64>, fault: Option<u64>, maps: Vec<Mapping>) -> Capture {
    let mut c = exited(0, "");
    c.exit = Exit {
        code: None,
        signal: Some(11),
        signal_name: Some("SIGSEGV".into()),
        reason: ExitReason::Signaled,
    };
    c.crash = Some(Crash {
        signal: 11,
        signal_name: "SIGSEGV".into(),
        fault_address: fault.map(|f| format!("{f:#x}")),
        program_counter: pc.map(|p| format!("{p:#x}")),
        module_map: maps,
        module_map_truncated: false,
        unknown_reason: pc.is_none().then(|| "ptrace was not permitted".to_owned()),
    });
    c.validate().expect("a valid crash capture");
    c
}

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
