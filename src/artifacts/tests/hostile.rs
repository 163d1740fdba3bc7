use super::*;

#[test]
fn zip_bomb_is_refused_by_its_real_ratio() {
    let zeros = vec![0u8; 1 << 20];
    let b = zip(&[deflated("bomb.bin", &zeros), z("ok.txt", b"ok")]);
    let limits = Limits {
        max_compression_ratio: 100,
        ..Limits::default()
    };
    let i = inspect_bytes(&b, ArtifactFormat::Zip, &limits).unwrap();
    i.validate().unwrap();
    assert_eq!(refusals(&i), [RefusalReason::CompressionRatio]);
    assert_eq!(paths_of(&i), ["", "ok.txt"]);
    assert!(
        i.coverage
            .limits_hit
            .contains(&"max_compression_ratio".to_string())
    );
    assert_eq!(i.coverage.status, CoverageStatus::Partial);
    // Reading stopped near the ratio cap (charged as work), far from the
    // megabyte declared.
    assert!(i.coverage.bytes_read < 200_000, "{}", i.coverage.bytes_read);
}

#[test]
fn oversized_entries_are_listed_but_not_hashed() {
    let data = vec![7u8; 5000];
    let limits = Limits {
        max_entry_bytes: 4096,
        ..Limits::default()
    };
    let b = zip(&[z("big.bin", &data), deflated("big2.bin", &data)]);
    let i = inspect_bytes(&b, ArtifactFormat::Zip, &limits).unwrap();
    i.validate().unwrap();
    for p in ["big.bin", "big2.bin"] {
        let o = by_path(&i, p);
        assert_eq!(o.hash_status, HashStatus::NotHashedLimit);
        assert_eq!(o.sha256, None);
        assert_eq!(o.size, 5000);
    }
    assert_eq!(i.coverage.limits_hit, ["max_entry_bytes"]);
}

#[test]
fn traversal_absolute_windows_and_duplicate_names_are_refused() {
    let b = zip(&[
        z("../evil.sh", b"x"),
        z("/etc/passwd", b"x"),
        z("C:\\win.ini", b"x"),
        z("a.txt", b"1"),
        z("a.txt", b"2"),
    ]);
    let i = bytes(ArtifactFormat::Zip, &b);
    assert_eq!(
        refusals(&i),
        [
            RefusalReason::PathTraversal,
            RefusalReason::AbsolutePath,
            RefusalReason::NonPosixPath,
            RefusalReason::Duplicate,
        ]
    );
    assert_eq!(paths_of(&i), ["", "a.txt"]);
    assert_eq!(
        by_path(&i, "a.txt").sha256.as_deref(),
        Some(sha256_hex(b"1").as_str())
    );
    assert_eq!(i.findings.refused_entries[0].raw_path, "../evil.sh");
    assert_eq!(i.coverage.entries_seen, 6);
}

#[test]
fn overlapping_entries_are_refused() {
    let mut second = z("b.txt", b"");
    second.local_of = Some(0);
    let b = zip(&[z("a.txt", b"shared bytes"), second]);
    let i = bytes(ArtifactFormat::Zip, &b);
    assert_eq!(refusals(&i), [RefusalReason::Overlapping]);
    assert_eq!(paths_of(&i), ["", "a.txt"]);
}

#[test]
fn encrypted_and_symlink_entries() {
    let mut enc = z("secret.bin", b"xxxx");
    enc.flags = 1;
    let link = Z {
        mode: Some(0o120777),
        ..z("lib/link", b"../../outside")
    };
    let inner = Z {
        mode: Some(0o120777),
        ..z("lib/ok", b"../secret.bin")
    };
    let exe = Z {
        mode: Some(0o100755),
        ..z("run.sh", b"#!/bin/sh\n")
    };
    let i = bytes(ArtifactFormat::Zip, &zip(&[enc, link, inner, exe]));
    let s = by_path(&i, "secret.bin");
    assert!(s.encrypted);
    assert_eq!(s.hash_status, HashStatus::Unavailable);
    assert_eq!(
        i.findings.unexplored_branches[0].reason,
        UnexploredReason::Encrypted
    );
    let l = by_path(&i, "lib/link");
    assert_eq!(l.entry_kind, EntryKind::Symlink);
    assert_eq!(l.symlink_target.as_deref(), Some("../../outside"));
    assert_eq!(refusals(&i), [RefusalReason::SymlinkEscape]);
    assert!(
        i.findings
            .derived_relationships
            .iter()
            .any(|r| { r.kind == RelationshipKind::SymlinkTarget && r.to == s.occurrence_id })
    );
    assert!(by_path(&i, "run.sh").executable);
}

#[test]
fn truncated_central_directory_is_a_typed_error() {
    let b = zip(&[z("a.txt", b"abc"), z("b.txt", b"def")]);
    // Cut inside the central directory: no end record survives.
    let cut = &b[..b.len() - 40];
    let err = inspect_bytes(cut, ArtifactFormat::Zip, &Limits::default()).unwrap_err();
    assert!(matches!(err, ArtifactError::Malformed { .. }));
    // An end record whose directory runs past the file.
    let mut lying = b.clone();
    let n = lying.len();
    lying[n - 10..n - 6].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = inspect_bytes(&lying, ArtifactFormat::Zip, &Limits::default()).unwrap_err();
    assert!(err.to_string().contains("outside the file"), "{err}");
    // A directory whose records are corrupted part-way lists what it can.
    let mut broken = b.clone();
    let cd = u32::from_le_bytes(broken[n - 6..n - 2].try_into().unwrap()) as usize;
    let second = cd + 46 + 5;
    broken[second] ^= 0xff;
    let i = inspect_bytes(&broken, ArtifactFormat::Zip, &Limits::default()).unwrap();
    i.validate().unwrap();
    assert_eq!(paths_of(&i), ["", "a.txt"]);
    assert_eq!(
        i.findings.unexplored_branches[0].reason,
        UnexploredReason::Malformed
    );
}

#[test]
fn entry_count_limit_truncates() {
    let entries: Vec<Z> = (0..5).map(|n| z(&format!("f{n}"), b"x")).collect();
    let limits = Limits {
        max_entries: 3,
        ..Limits::default()
    };
    let i = inspect_bytes(&zip(&entries), ArtifactFormat::Zip, &limits).unwrap();
    i.validate().unwrap();
    assert_eq!(i.occurrences.len(), 3);
    assert_eq!(i.coverage.status, CoverageStatus::Truncated);
    assert_eq!(i.coverage.limits_hit, ["max_entries"]);
    assert_eq!(
        i.findings.unexplored_branches[0].reason,
        UnexploredReason::Limit
    );
}

#[test]
fn total_byte_limit_truncates() {
    let entries: Vec<Z> = (0..4).map(|n| z(&format!("f{n}"), &[1u8; 100])).collect();
    let limits = Limits {
        max_total_bytes: 250,
        ..Limits::default()
    };
    let i = inspect_bytes(&zip(&entries), ArtifactFormat::Zip, &limits).unwrap();
    i.validate().unwrap();
    assert_eq!(i.coverage.status, CoverageStatus::Truncated);
    assert_eq!(i.coverage.bytes_read, 200);
    assert_eq!(i.coverage.limits_hit, ["max_total_bytes"]);
}

#[test]
fn hostile_asar_headers() {
    let limits = Limits::default();
    let mut big = asar::build(r#"{"files":{}}"#, b"");
    big[4..8].copy_from_slice(&(64u32 << 20).to_le_bytes());
    let err = inspect_bytes(&big, ArtifactFormat::Asar, &limits).unwrap_err();
    assert!(err.to_string().contains("limit"), "{err}");
    let deep = format!("{}{}", r#"{"files":{"a":"#.repeat(100), "}".repeat(200));
    let err = inspect_bytes(&asar::build(&deep, b""), ArtifactFormat::Asar, &limits).unwrap_err();
    assert!(err.to_string().contains("nests deeper"), "{err}");
    let outside = asar::build(
        r#"{"files":{"a":{"size":10,"offset":"5"},"b":{"size":1,"offset":"18446744073709551615"},"c":{"size":2,"offset":"0"}}}"#,
        b"abcdefgh",
    );
    let i = bytes(ArtifactFormat::Asar, &outside);
    assert_eq!(
        refusals(&i),
        [RefusalReason::OutOfBounds, RefusalReason::OutOfBounds]
    );
    assert_eq!(paths_of(&i), ["", "c"]);
    let escape = asar::build(
        r#"{"files":{"l":{"link":"../../etc/passwd"},"..":{"files":{}}}}"#,
        b"",
    );
    let i = bytes(ArtifactFormat::Asar, &escape);
    assert_eq!(
        refusals(&i),
        [RefusalReason::PathTraversal, RefusalReason::SymlinkEscape]
    );
}

#[test]
fn limits_are_validated() {
    let over = Limits {
        max_depth: 21,
        ..Limits::default()
    };
    assert!(matches!(
        over.validate().unwrap_err(),
        ArtifactError::LimitOutOfRange { .. }
    ));
    let zero = Limits {
        max_entries: 0,
        ..Limits::default()
    };
    assert!(inspect_bytes(b"", ArtifactFormat::File, &zero).is_err());
    let parsed: Limits = serde_json::from_str(r#"{"max_entries": 5}"#).unwrap();
    assert_eq!(parsed.max_entries, 5);
    assert_eq!(parsed.max_depth, 20);
    assert!(serde_json::from_str::<Limits>(r#"{"max_entriez": 5}"#).is_err());
}

#[test]
fn refused_entries_count_against_max_entries() {
    let entries: Vec<Z> = (0..50).map(|n| z(&format!("../x{n}"), b"x")).collect();
    let limits = Limits {
        max_entries: 10,
        ..Limits::default()
    };
    let i = inspect_bytes(&zip(&entries), ArtifactFormat::Zip, &limits).unwrap();
    i.validate().unwrap();
    assert_eq!(i.coverage.entries_seen, 10);
    assert_eq!(i.findings.refused_entries.len(), 9);
    assert_eq!(i.coverage.status, CoverageStatus::Truncated);
}

#[test]
fn findings_lists_are_capped_with_a_count() {
    let entries: Vec<Z> = (0..150).map(|n| z(&format!("/abs{n}"), b"x")).collect();
    let i = bytes(ArtifactFormat::Zip, &zip(&entries));
    assert_eq!(i.findings.refused_entries.len(), FINDINGS_CAP);
    assert_eq!(i.findings.omitted.refused_entries, 50);
}

/// Rewrites a zip's end record into its zip64 form (all-ones 32-bit
/// fields, a zip64 locator and end record carrying the real values).
fn as_zip64(b: &[u8]) -> Vec<u8> {
    let n = b.len();
    let eocd = n - 22;
    let entries = u16::from_le_bytes([b[eocd + 10], b[eocd + 11]]) as u64;
    let size = u32::from_le_bytes(b[eocd + 12..eocd + 16].try_into().unwrap()) as u64;
    let offset = u32::from_le_bytes(b[eocd + 16..eocd + 20].try_into().unwrap()) as u64;
    let mut out = b[..eocd].to_vec();
    let record_at = out.len() as u64;
    out.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
    out.extend_from_slice(&44u64.to_le_bytes());
    out.extend_from_slice(&[45, 0, 45, 0]);
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&entries.to_le_bytes());
    out.extend_from_slice(&entries.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&offset.to_le_bytes());
    out.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&record_at.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0xff; 16]);
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

#[test]
fn zip64_end_records_are_followed() {
    let plain = zip(&[z("a.txt", b"abc"), deflated("b.txt", b"bbbbbbbbbbbb")]);
    let i = bytes(ArtifactFormat::Zip, &as_zip64(&plain));
    assert_eq!(paths_of(&i), ["", "a.txt", "b.txt"]);
    assert_eq!(i.coverage.status, CoverageStatus::Complete);
    // A locator pointing nowhere is a typed error.
    let mut broken = as_zip64(&plain);
    let n = broken.len();
    broken[n - 22 - 20 + 8..n - 22 - 20 + 16].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        inspect_bytes(&broken, ArtifactFormat::Zip, &Limits::default()).unwrap_err(),
        ArtifactError::Malformed { .. }
    ));
}

#[test]
fn declared_sizes_and_crcs_are_checked_against_the_bytes() {
    let mut b = zip(&[z("a.txt", b"abc")]);
    let n = b.len();
    let cd = u32::from_le_bytes(b[n - 6..n - 2].try_into().unwrap()) as usize;
    b[cd + 24..cd + 28].copy_from_slice(&99u32.to_le_bytes());
    let i = bytes(ArtifactFormat::Zip, &b);
    let a = by_path(&i, "a.txt");
    assert_eq!(a.size, 3);
    assert_eq!(a.hash_status, HashStatus::Verified);
    assert_eq!(
        i.findings.observations[0].kind,
        ObservationKind::SizeMismatch
    );
    b[cd + 16] ^= 1;
    let i = bytes(ArtifactFormat::Zip, &b);
    assert_eq!(by_path(&i, "a.txt").hash_status, HashStatus::Mismatched);
    assert_eq!(i.coverage.status, CoverageStatus::Partial);
}

/// F5: a nested bomb (every member a zip whose leaf inflates past the entry
/// limit) stops once the inflation work reaches max_total_bytes, instead of
/// inflating every leaf at every level.
#[test]
fn nested_bomb_work_is_charged_across_levels() {
    let leaf = vec![0u8; 3 << 20];
    // The leaf declares 1 KiB, so only inflating it finds it too large.
    let inner = zip(&[Z {
        declared: Some(1024),
        ..deflated("leaf.bin", &leaf)
    }]);
    let members: Vec<Z> = (0..16)
        .map(|n| z(&format!("inner-{n}.zip"), &inner))
        .collect();
    let middle = zip(&members);
    let outer_members: Vec<Z> = (0..16)
        .map(|n| z(&format!("middle-{n}.zip"), &middle))
        .collect();
    let outer = zip(&outer_members);
    let limits = Limits {
        max_entry_bytes: 2 << 20,
        max_total_bytes: 16 << 20,
        ..Limits::default()
    };
    let i = inspect_bytes(&outer, ArtifactFormat::Zip, &limits).unwrap();
    i.validate().unwrap();
    assert_eq!(i.coverage.status, CoverageStatus::Truncated);
    assert!(
        i.coverage
            .limits_hit
            .contains(&"max_total_bytes".to_string())
    );
    // Without charging, 256 leaves would each inflate 2 MiB (512 MiB).
    assert!(
        i.coverage.bytes_read <= 16 << 20,
        "{}",
        i.coverage.bytes_read
    );
}
