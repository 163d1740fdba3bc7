//! Artifact inspection and comparison end to end over MCP: two real
//! releases of a wheel no one here wrote (expectations from Python's
//! `zipfile`, computed at run time), and hostile archives and bundles built
//! in the test.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Client, Era, call, complete, connect, fixture, skip, values};
use serde_json::{Value, json};

/// One zip member as Python's `zipfile` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Member {
    directory: bool,
    size: u64,
    sha256: String,
}

/// `zipfile`'s view of a wheel: name (without a directory's trailing `/`)
/// → member.
fn zipfile_listing(wheel: &Path) -> Option<BTreeMap<String, Member>> {
    const SCRIPT: &str = r#"
import hashlib, json, sys, zipfile
out = []
with zipfile.ZipFile(sys.argv[1]) as z:
    for i in z.infolist():
        data = z.read(i)
        out.append({"name": i.filename.rstrip("/"), "dir": i.is_dir(), "size": len(data),
                    "sha256": hashlib.sha256(data).hexdigest()})
print(json.dumps(out))
"#;
    let output = match Command::new("python3")
        .arg("-c")
        .arg(SCRIPT)
        .arg(wheel)
        .output()
    {
        Ok(o) if o.status.success() => o,
        Ok(o) => panic!(
            "python3 zipfile failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => {
            skip(&format!("cannot run python3: {e}"));
            return None;
        }
    };
    let rows: Vec<Value> = serde_json::from_slice(&output.stdout).expect("zipfile JSON");
    Some(
        rows.into_iter()
            .map(|r| {
                (
                    r["name"].as_str().unwrap().to_string(),
                    Member {
                        directory: r["dir"].as_bool().unwrap(),
                        size: r["size"].as_u64().unwrap(),
                        sha256: r["sha256"].as_str().unwrap().to_string(),
                    },
                )
            })
            .collect(),
    )
}

/// Opens `path` and pages `inspect_artifact` to the end with small pages
/// (so paging itself is exercised). Returns the manifest and every
/// occurrence, with the first page's full result.
async fn inspect_all(client: &Client, path: &Path) -> (Value, Vec<Value>, Value) {
    let (opened, failed) = call(client, "open_binary", json!({"path": path})).await;
    assert!(!failed, "{opened}");
    let mut occurrences = Vec::new();
    let mut offset = 0u64;
    let mut first = Value::Null;
    loop {
        let (page, failed) = call(
            client,
            "inspect_artifact",
            json!({"occurrence_offset": offset, "occurrence_limit": 4}),
        )
        .await;
        assert!(!failed, "{page}");
        assert!(
            page["evidence"]["evidence_id"]
                .as_str()
                .unwrap()
                .starts_with("ev_")
        );
        let result = page["result"].clone();
        occurrences.extend(result["occurrences"]["items"].as_array().unwrap().clone());
        if first.is_null() {
            first = result.clone();
        }
        match result["occurrences"]["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    (first["manifest"].clone(), occurrences, first)
}

/// Members by path as rea listed them (the root excluded).
fn rea_listing(occurrences: &[Value]) -> BTreeMap<String, (String, u64, Option<String>)> {
    occurrences
        .iter()
        .filter(|o| !o["parent_occurrence_id"].is_null())
        .map(|o| {
            (
                o["logical_path"].as_str().unwrap().to_string(),
                (
                    o["entry_kind"].as_str().unwrap().to_string(),
                    o["size"].as_u64().unwrap(),
                    o["sha256"].as_str().map(str::to_string),
                ),
            )
        })
        .collect()
}

#[tokio::test]
async fn two_wheel_releases_are_inspected_and_compared_like_zipfile_sees_them() {
    let (Some(left), Some(right)) = (
        fixture("markupsafe-2.1.5-manylinux-x86_64.whl"),
        fixture("markupsafe-3.0.2-manylinux-x86_64.whl"),
    ) else {
        return;
    };
    let (Some(left_zip), Some(right_zip)) = (zipfile_listing(&left), zipfile_listing(&right))
    else {
        return;
    };
    let (client, _server, _) = connect(Era::Modern).await;

    let mut manifests = Vec::new();
    let mut all_occurrences = Vec::new();
    for (path, expected) in [(&left, &left_zip), (&right, &right_zip)] {
        let (manifest, occurrences, first) = inspect_all(&client, path).await;
        assert_eq!(first["coverage"]["status"], "complete", "{first}");
        assert_eq!(manifest["root_format"], "zip");
        assert_eq!(
            manifest["occurrence_count"].as_u64().unwrap() as usize,
            expected.len() + 1,
            "every member plus the root"
        );
        let listed = rea_listing(&occurrences);
        assert_eq!(
            listed.keys().collect::<BTreeSet<_>>(),
            expected.keys().collect::<BTreeSet<_>>()
        );
        for (name, member) in expected.iter() {
            let (kind, size, sha256) = &listed[name];
            if member.directory {
                assert_eq!(kind, "directory", "{name}");
            } else {
                assert_eq!(kind, "file", "{name}");
                assert_eq!(*size, member.size, "{name}");
                assert_eq!(sha256.as_deref(), Some(member.sha256.as_str()), "{name}");
            }
        }
        manifests.push(manifest["manifest_id"].as_str().unwrap().to_string());
        all_occurrences.extend(occurrences);
    }
    assert_ne!(manifests[0], manifests[1]);

    // Completion answers from the retained inventories.
    let info = complete(
        &client,
        "compare_application_versions",
        "left_manifest_id",
        "agm_",
    )
    .await;
    let offered: BTreeSet<&str> = values(&info).into_iter().collect();
    assert_eq!(
        offered,
        manifests
            .iter()
            .map(String::as_str)
            .collect::<BTreeSet<_>>()
    );
    let info = complete(
        &client,
        "compare_application_versions",
        "focus_occurrence_id",
        "occ_",
    )
    .await;
    let ids: BTreeSet<&str> = all_occurrences
        .iter()
        .map(|o| o["occurrence_id"].as_str().unwrap())
        .collect();
    assert_eq!(info.total, Some(ids.len() as u32));

    // The comparison, against zipfile's own listing.
    let (compared, failed) = call(
        &client,
        "compare_artifacts",
        json!({"left": manifests[0], "right": manifests[1], "limit": 500}),
    )
    .await;
    assert!(!failed, "{compared}");
    let result = &compared["result"];
    assert_eq!(result["status"], "changed", "{result}");
    let expected_changed: BTreeSet<&str> = left_zip
        .iter()
        .filter(|(name, m)| right_zip.get(*name).is_some_and(|r| r.sha256 != m.sha256))
        .map(|(name, _)| name.as_str())
        .collect();
    let expected_added: BTreeSet<&str> = right_zip
        .keys()
        .filter(|name| !left_zip.contains_key(*name))
        .map(String::as_str)
        .collect();
    let expected_removed: BTreeSet<&str> = left_zip
        .keys()
        .filter(|name| !right_zip.contains_key(*name))
        .map(String::as_str)
        .collect();
    assert!(expected_changed.contains("markupsafe/_speedups.cpython-312-x86_64-linux-gnu.so"));
    let reported = |change: &str| -> BTreeSet<String> {
        result["changes"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["change"] == change)
            .map(|c| c["path"].as_str().unwrap().to_string())
            .collect()
    };
    let as_owned = |s: &BTreeSet<&str>| s.iter().map(|p| p.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(reported("changed"), as_owned(&expected_changed));
    assert_eq!(reported("added"), as_owned(&expected_added));
    assert_eq!(reported("removed"), as_owned(&expected_removed));
    assert_eq!(
        result["summary"]["changed"].as_u64().unwrap() as usize,
        expected_changed.len()
    );
    assert!(expected_added.len() >= 3 && expected_removed.len() >= 3);
    assert!(compared["evidence"]["evidence_id"].is_string());
}

#[tokio::test]
async fn an_incomplete_inventory_makes_the_comparison_unknown_never_unchanged() {
    let Some(wheel) = fixture("markupsafe-3.0.2-manylinux-x86_64.whl") else {
        return;
    };
    let (client, _server, _) = connect(Era::Legacy).await;
    call(&client, "open_binary", json!({"path": wheel})).await;
    // Only the first two occurrences are retained.
    let (page, _) = call(&client, "inspect_artifact", json!({"occurrence_limit": 2})).await;
    let manifest = page["result"]["manifest"]["manifest_id"].clone();
    let (compared, failed) = call(
        &client,
        "compare_artifacts",
        json!({"left": manifest, "right": manifest}),
    )
    .await;
    assert!(!failed, "{compared}");
    assert_eq!(compared["result"]["status"], "unknown", "{compared}");
    // Paging to the end makes the same comparison conclusive.
    call(
        &client,
        "inspect_artifact",
        json!({"occurrence_offset": 2, "occurrence_limit": 500}),
    )
    .await;
    let (compared, _) = call(
        &client,
        "compare_artifacts",
        json!({"left": manifest, "right": manifest}),
    )
    .await;
    assert_eq!(compared["result"]["status"], "unchanged", "{compared}");
}

/// Writes a zip with Python from `(name, bytes-expression)` pairs.
fn python_zip(path: &Path, entries: &[(&str, &str)]) -> bool {
    let mut script = String::from(
        "import zipfile, sys\nz = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n",
    );
    for (name, data) in entries {
        script.push_str(&format!(
            "i = zipfile.ZipInfo({name:?}); i.compress_type = zipfile.ZIP_DEFLATED; z.writestr(i, {data})\n"
        ));
    }
    script.push_str("z.close()\n");
    match Command::new("python3")
        .arg("-c")
        .arg(&script)
        .arg(path)
        .status()
    {
        Ok(s) if s.success() => true,
        Ok(s) => panic!("python3 could not write the zip: {s}"),
        Err(e) => {
            skip(&format!("cannot run python3: {e}"));
            false
        }
    }
}

/// Every path under `dir`, recursively, to prove nothing was written.
fn tree(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                stack.push(path.clone());
            }
            out.insert(path);
        }
    }
    out
}

fn refusals(result: &Value) -> Vec<(String, String)> {
    result["findings"]["refused_entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["raw_path"].as_str().unwrap().to_string(),
                r["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn hostile_zips_are_reported_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("work");
    std::fs::create_dir(&root).unwrap();
    let traversal = root.join("traversal.zip");
    let bomb = root.join("bomb.zip");
    if !python_zip(
        &traversal,
        &[
            ("../evil.txt", "b'escape'"),
            ("/abs.txt", "b'absolute'"),
            ("ok.txt", "b'fine'"),
        ],
    ) || !python_zip(&bomb, &[("zeros.bin", "bytes(100 * 1024 * 1024)")])
    {
        return;
    }
    let before = tree(dir.path());
    let (client, _server, _) = connect(Era::Modern).await;

    call(&client, "open_binary", json!({"path": traversal})).await;
    let (page, failed) = call(&client, "inspect_artifact", json!({})).await;
    assert!(!failed, "{page}");
    let result = &page["result"];
    let refused = refusals(result);
    assert!(
        refused.contains(&("../evil.txt".into(), "path-traversal".into())),
        "{refused:?}"
    );
    assert!(
        refused.contains(&("/abs.txt".into(), "absolute-path".into())),
        "{refused:?}"
    );
    let listed: Vec<&str> = result["occurrences"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["logical_path"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["", "ok.txt"]);
    assert_ne!(result["coverage"]["status"], "complete");

    call(&client, "open_binary", json!({"path": bomb})).await;
    let (page, failed) = call(&client, "inspect_artifact", json!({})).await;
    assert!(!failed, "{page}");
    let refused = refusals(&page["result"]);
    assert!(
        refused.contains(&("zeros.bin".into(), "compression-ratio".into())),
        "{refused:?}"
    );
    assert!(page["result"]["coverage"]["bytes_read"].as_u64().unwrap() < 100 * 1024 * 1024);

    // The code tools say why they cannot help with an archive.
    let (err, failed) = call(&client, "list_documents", json!({})).await;
    assert!(failed);
    assert_eq!(err["error"]["code"], "no_code_documents", "{err}");

    assert_eq!(tree(dir.path()), before, "inspection wrote nothing to disk");
    assert!(!dir.path().join("evil.txt").exists());
}

#[tokio::test]
async fn a_bundle_symlink_escaping_the_bundle_is_refused_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let Some(program) = common::sample_binary(dir.path(), "Demo", "demo_feature") else {
        return;
    };
    let app = dir.path().join("Demo.app");
    let contents = app.join("Contents");
    std::fs::create_dir_all(contents.join("MacOS")).unwrap();
    std::fs::create_dir_all(contents.join("Resources")).unwrap();
    std::fs::copy(&program, contents.join("MacOS/Demo")).unwrap();
    std::fs::write(
        contents.join("Info.plist"),
        r#"<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict>
<key>CFBundleExecutable</key><string>Demo</string>
<key>CFBundleIdentifier</key><string>org.example.demo</string>
<key>CFBundleShortVersionString</key><string>1.2.3</string>
</dict></plist>"#,
    )
    .unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "outside the bundle").unwrap();
    std::os::unix::fs::symlink(&secret, contents.join("Resources/escape")).unwrap();
    std::os::unix::fs::symlink("../Info.plist", contents.join("Resources/inside")).unwrap();

    let (client, _server, _) = connect(Era::Legacy).await;
    let (opened, failed) = call(&client, "open_binary", json!({"path": app})).await;
    assert!(!failed, "{opened}");
    assert_eq!(opened["context"]["artifact_format"], "app-bundle");
    let (page, failed) = call(&client, "inspect_artifact", json!({})).await;
    assert!(!failed, "{page}");
    let result = &page["result"];
    let refused = refusals(result);
    assert!(
        refused
            .iter()
            .any(|(path, reason)| path.ends_with("Resources/escape") && reason == "symlink-escape"),
        "{refused:?}"
    );
    let occurrences = result["occurrences"]["items"].as_array().unwrap();
    let inside = occurrences
        .iter()
        .find(|o| o["logical_path"] == "Contents/Resources/inside")
        .expect("the inside symlink is listed");
    assert_eq!(inside["entry_kind"], "symlink");
    assert!(
        occurrences
            .iter()
            .all(|o| o["sha256"].as_str() != Some(&common::sha256_file(&secret))),
        "the escaping target's bytes were never read"
    );
    let plist = &result["findings"]["info_plist"][0];
    assert_eq!(plist["bundle_identifier"], "org.example.demo");
    assert_eq!(plist["short_version"], "1.2.3");
    assert!(
        result["edges"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "loads"),
        "Info.plist loads the executable"
    );
    // A bundle has code: the native tools still work on its executable.
    let (documents, failed) = call(&client, "list_documents", json!({})).await;
    assert!(!failed, "{documents}");
}
