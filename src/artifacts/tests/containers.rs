use super::*;
use crate::providers::native::fixtures::{self as fx, MACHO_CPU_ARM64, MACHO_CPU_X86_64};

#[test]
fn zip_entries_are_hashed_with_stored_and_deflate() {
    let text = b"hello hello hello hello".repeat(20);
    let b = zip(&[
        z("dir/", b""),
        z("dir/a.txt", b"abc"),
        deflated("dir/b.txt", &text),
    ]);
    let i = bytes(ArtifactFormat::Zip, &b);
    assert_eq!(paths_of(&i), ["", "dir", "dir/a.txt", "dir/b.txt"]);
    let a = by_path(&i, "dir/a.txt");
    assert_eq!(a.sha256.as_deref(), Some(sha256_hex(b"abc").as_str()));
    assert_eq!(a.hash_status, HashStatus::Verified);
    let bb = by_path(&i, "dir/b.txt");
    assert_eq!(bb.size, text.len() as u64);
    assert!(bb.compressed_size.unwrap() < bb.size);
    assert_eq!(by_path(&i, "dir").entry_kind, EntryKind::Directory);
    assert_eq!(i.coverage.status, CoverageStatus::Complete);
    assert_eq!(i.coverage.entries_listed, 4);
    assert_eq!(i.manifest.root_sha256, sha256_hex(&b));
    // Every entry has a contains edge from the root.
    let root = &i.occurrences[0].occurrence_id;
    assert_eq!(
        i.edges
            .iter()
            .filter(|e| e.kind == EdgeKind::Contains && &e.from == root)
            .count(),
        3
    );
    let node = i
        .nodes
        .iter()
        .find(|n| n.sha256 == sha256_hex(&text))
        .unwrap();
    assert_eq!(node.format, NodeFormat::Text);
}

#[test]
fn nested_archives_are_walked_to_max_depth() {
    let inner2 = zip(&[z("deep.txt", b"d")]);
    let inner = zip(&[z("x.txt", b"x"), z("more.zip", &inner2)]);
    let outer = zip(&[z("inner.zip", &inner)]);
    let i = bytes(ArtifactFormat::Zip, &outer);
    assert!(paths_of(&i).contains(&"inner.zip!/more.zip!/deep.txt".to_string()));
    let inner_occ = by_path(&i, "inner.zip");
    assert_eq!(
        by_path(&i, "inner.zip!/x.txt")
            .parent_occurrence_id
            .as_deref(),
        Some(inner_occ.occurrence_id.as_str())
    );

    let shallow = Limits {
        max_depth: 1,
        ..Limits::default()
    };
    let i = inspect_bytes(&outer, ArtifactFormat::Zip, &shallow).unwrap();
    i.validate().unwrap();
    assert!(paths_of(&i).contains(&"inner.zip!/more.zip".to_string()));
    assert!(!paths_of(&i).iter().any(|p| p.ends_with("deep.txt")));
    let branch = &i.findings.unexplored_branches[0];
    assert_eq!(branch.reason, UnexploredReason::NestedDepth);
    assert_eq!(branch.logical_path, "inner.zip!/more.zip");
    assert_eq!(i.coverage.status, CoverageStatus::Partial);
    assert!(i.coverage.limits_hit.contains(&"max_depth".to_string()));
}

#[test]
fn ar_members_are_occurrences() {
    let b = ar(&[("a.o", b"one"), ("b.o", b"three")]);
    let i = bytes(ArtifactFormat::Ar, &b);
    assert_eq!(paths_of(&i), ["", "a.o", "b.o"]);
    assert_eq!(
        by_path(&i, "b.o").sha256.as_deref(),
        Some(sha256_hex(b"three").as_str())
    );
    assert!(by_path(&i, "a.o").executable);
}

#[test]
fn asar_files_links_integrity_and_unpacked() {
    let good = sha256_hex(b"abc");
    let json = format!(
        r#"{{"files":{{"app":{{"files":{{"main.js":{{"size":3,"offset":"0","integrity":{{"algorithm":"SHA256","hash":"{good}","blockSize":4194304,"blocks":["{good}"]}}}},"bad.js":{{"size":2,"offset":"3","integrity":{{"algorithm":"SHA256","hash":"{good}","blockSize":4194304,"blocks":[]}}}}}}}},"link":{{"link":"app/main.js"}},"native.node":{{"size":4,"unpacked":true}}}}}}"#
    );
    let b = asar::build(&json, b"abcde");
    let i = bytes(ArtifactFormat::Asar, &b);
    assert_eq!(by_path(&i, "app/main.js").hash_status, HashStatus::Verified);
    assert_eq!(
        by_path(&i, "app/bad.js").hash_status,
        HashStatus::Mismatched
    );
    assert!(
        i.findings
            .observations
            .iter()
            .any(|o| o.kind == ObservationKind::IntegrityMismatch)
    );
    let link = by_path(&i, "link");
    assert_eq!(link.entry_kind, EntryKind::Symlink);
    assert_eq!(link.symlink_target.as_deref(), Some("app/main.js"));
    assert!(
        i.findings
            .derived_relationships
            .iter()
            .any(|r| r.kind == RelationshipKind::SymlinkTarget && r.from == link.occurrence_id)
    );
    assert_eq!(
        by_path(&i, "native.node").hash_status,
        HashStatus::Unavailable
    );
    assert_eq!(i.coverage.status, CoverageStatus::Partial);
}

#[test]
fn asar_unpacked_files_are_checked_next_to_the_archive() {
    let dir = tempfile::tempdir().unwrap();
    let json = r#"{"files":{"here.node":{"size":1,"unpacked":true},"gone.node":{"size":1,"unpacked":true}}}"#;
    let path = dir.path().join("app.asar");
    std::fs::write(&path, asar::build(json, b"")).unwrap();
    std::fs::create_dir(dir.path().join("app.asar.unpacked")).unwrap();
    std::fs::write(dir.path().join("app.asar.unpacked/here.node"), b"x").unwrap();
    assert_eq!(sniff_at(&path), Some(ArtifactFormat::Asar));
    let i = inspect(&path, ArtifactFormat::Asar, &Limits::default()).unwrap();
    i.validate().unwrap();
    let kinds: Vec<_> = i
        .findings
        .observations
        .iter()
        .map(|o| (o.kind, o.message.clone()))
        .collect();
    assert!(
        kinds
            .iter()
            .any(|(k, m)| *k == ObservationKind::UnpackedMissing && m.contains("gone.node")),
        "{kinds:?}"
    );
    assert!(
        kinds
            .iter()
            .any(|(k, m)| *k == ObservationKind::UnpackedEntry && m.contains("here.node")),
        "{kinds:?}"
    );
    let here = by_path(&i, "here.node");
    assert_eq!(here.sha256.as_deref(), Some(sha256_hex(b"x").as_str()));
    assert_eq!(here.hash_status, HashStatus::Verified);
    assert_eq!(
        by_path(&i, "gone.node").hash_status,
        HashStatus::Unavailable
    );
    // A symlink in the unpacked directory is not followed.
    std::fs::remove_file(dir.path().join("app.asar.unpacked/here.node")).unwrap();
    std::os::unix::fs::symlink(
        "/etc/hostname",
        dir.path().join("app.asar.unpacked/here.node"),
    )
    .unwrap();
    let i = inspect(&path, ArtifactFormat::Asar, &Limits::default()).unwrap();
    assert_eq!(by_path(&i, "here.node").sha256, None);

    // Nor is a symlinked directory on the way: a regular file outside the
    // unpacked directory is neither read nor confirmed to exist.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.node"), b"s").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("app.asar.unpacked/sub")).unwrap();
    let json = r#"{"files":{"sub":{"files":{"secret.node":{"size":1,"unpacked":true}}}}}"#;
    std::fs::write(&path, asar::build(json, b"")).unwrap();
    let i = inspect(&path, ArtifactFormat::Asar, &Limits::default()).unwrap();
    let secret = by_path(&i, "sub/secret.node");
    assert_eq!(secret.sha256, None);
    assert_eq!(secret.hash_status, HashStatus::Unavailable);

    // And an unpacked directory that is itself a symlink is not used.
    std::fs::remove_dir_all(dir.path().join("app.asar.unpacked")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("app.asar.unpacked")).unwrap();
    let json = r#"{"files":{"secret.node":{"size":1,"unpacked":true}}}"#;
    std::fs::write(&path, asar::build(json, b"")).unwrap();
    let i = inspect(&path, ArtifactFormat::Asar, &Limits::default()).unwrap();
    assert_eq!(by_path(&i, "secret.node").sha256, None);
}

#[test]
fn universal_slices_are_hashed_with_their_architecture() {
    let x = fx::tiny_macho(MACHO_CPU_X86_64);
    let a = fx::tiny_macho(MACHO_CPU_ARM64);
    let b = fx::fat(&[x.clone(), a.clone()]);
    let i = bytes(ArtifactFormat::UniversalMacho, &b);
    let slices: Vec<_> = i
        .occurrences
        .iter()
        .filter(|o| o.entry_kind == EntryKind::Slice)
        .map(|o| {
            (
                o.logical_path.clone(),
                o.architecture.clone(),
                o.sha256.clone(),
            )
        })
        .collect();
    assert_eq!(
        slices,
        [
            (
                "slice-0-x86_64".into(),
                Some("x86_64".into()),
                Some(sha256_hex(&x))
            ),
            (
                "slice-1-arm64".into(),
                Some("arm64".into()),
                Some(sha256_hex(&a))
            ),
        ]
    );
    assert_eq!(
        i.nodes
            .iter()
            .find(|n| n.sha256 == sha256_hex(&b))
            .unwrap()
            .format,
        NodeFormat::UniversalMacho
    );
    // Each slice gets a code-signature fact (the tiny images are unsigned).
    assert_eq!(i.findings.code_signature.len(), 2);
    assert!(i.findings.code_signature.iter().all(|s| !s.signed));
}

#[test]
fn real_universal_fixture() {
    let Some(path) = fx::fixture("markupsafe-speedups-universal2.so") else {
        return;
    };
    assert_eq!(sniff_at(&path), Some(ArtifactFormat::UniversalMacho));
    let i = inspect(&path, ArtifactFormat::UniversalMacho, &Limits::default()).unwrap();
    i.validate().unwrap();
    let mut archs: Vec<_> = i
        .occurrences
        .iter()
        .filter_map(|o| o.architecture.clone())
        .collect();
    archs.sort();
    assert_eq!(archs, ["arm64", "x86_64"]);
    assert!(
        i.findings
            .external_libraries
            .iter()
            .any(|l| l.library.starts_with("/usr/lib/libSystem"))
    );
    assert_eq!(i.coverage.status, CoverageStatus::Complete);
}

#[test]
fn real_wheel_and_shipped_library_links() {
    let Some(whl) = fx::fixture("markupsafe-3.0.2-manylinux-x86_64.whl") else {
        return;
    };
    assert_eq!(sniff_at(&whl), Some(ArtifactFormat::Zip));
    let i = inspect(&whl, ArtifactFormat::Zip, &Limits::default()).unwrap();
    i.validate().unwrap();
    assert!(i.nodes.iter().any(|n| n.format == NodeFormat::Elf));
    assert!(
        i.findings
            .external_libraries
            .iter()
            .any(|l| l.library == "libc.so.6")
    );

    let Some(node) = fx::fixture("watcher-linux-x64.node") else {
        return;
    };
    let elf = std::fs::read(node).unwrap();
    let b = zip(&[
        z("build/watcher.node", &elf),
        z("vendor/libstdc++.so.6", b"not really"),
    ]);
    let i = bytes(ArtifactFormat::Zip, &b);
    let from = by_path(&i, "build/watcher.node");
    let to = by_path(&i, "vendor/libstdc++.so.6");
    assert!(i.edges.iter().any(|e| e.kind == EdgeKind::LinksTo
        && e.from == from.occurrence_id
        && e.to == to.occurrence_id
        && e.detail.as_deref() == Some("libstdc++.so.6")));
    assert!(
        i.findings
            .external_libraries
            .iter()
            .any(|l| l.library == "libc.so.6")
    );
    assert_eq!(from.architecture.as_deref(), Some("x86_64"));
}

#[test]
fn macho_references_resolve_through_rpaths_and_symlinks() {
    // Occurrences of a bundle-like zip; the native facts are synthetic.
    let b = zip(&[
        z("A.app/Contents/MacOS/app", b"exe"),
        z("A.app/Contents/Frameworks/F.framework/Versions/A/F", b"lib"),
        Z {
            mode: Some(0o120777),
            ..z(
                "A.app/Contents/Frameworks/F.framework/Versions/Current",
                b"A",
            )
        },
    ]);
    let i = bytes(ArtifactFormat::Zip, &b);
    let occs: Vec<_> = i
        .occurrences
        .iter()
        .cloned()
        .map(|o| (Vec::new(), o))
        .collect();
    let index = links::Index::new(&occs);
    let root = i.occurrences[0].occurrence_id.clone();
    let facts = |rpaths: &[&str]| classify::NativeFacts {
        occurrence_id: "occ_x".into(),
        location: (Some(root.clone()), "A.app/Contents/MacOS/app".into()),
        macho: true,
        rpaths: rpaths.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let target = by_path(&i, "A.app/Contents/Frameworks/F.framework/Versions/A/F");
    let lib = "@rpath/F.framework/Versions/Current/F";
    let found = |r: links::Resolution| match r {
        links::Resolution::Found(k) => Some(index.get(k).occurrence_id.clone()),
        _ => None,
    };
    assert_eq!(
        found(links::resolve(
            &index,
            &facts(&["/usr/lib/swift", "@executable_path/../Frameworks"]),
            lib,
            None
        )),
        Some(target.occurrence_id.clone())
    );
    assert_eq!(
        found(links::resolve(
            &index,
            &facts(&[]),
            "@loader_path/../Frameworks/F.framework/Versions/A/F",
            None
        )),
        Some(target.occurrence_id.clone())
    );
    assert!(matches!(
        links::resolve(&index, &facts(&["@loader_path/../Nowhere"]), lib, None),
        links::Resolution::Missing(_)
    ));
    assert!(matches!(
        links::resolve(
            &index,
            &facts(&["/usr/lib/swift"]),
            "@rpath/libswiftCore.dylib",
            None
        ),
        links::Resolution::External
    ));
    assert!(matches!(
        links::resolve(&index, &facts(&[]), "/usr/lib/libSystem.B.dylib", None),
        links::Resolution::External
    ));
    assert!(matches!(
        links::resolve(&index, &facts(&[]), "@rpath/F", None),
        links::Resolution::Missing(_)
    ));
}

#[test]
fn a_plain_file_is_one_occurrence() {
    let elf = fx::tiny_elf();
    let i = bytes(ArtifactFormat::File, &elf);
    assert_eq!(i.occurrences.len(), 1);
    assert_eq!(i.nodes[0].format, NodeFormat::Elf);
    assert_eq!(i.occurrences[0].architecture.as_deref(), Some("x86_64"));
    assert_eq!(i.coverage.status, CoverageStatus::Complete);
}
