//! The address arithmetic of correlation, on hand-made captures: PIE and
//! fixed-address executables, another module, a PC outside every mapping,
//! and the inference only where the evidence supports it.

use std::path::PathBuf;

use super::*;
use crate::capture::fixtures::{crashed, exited, mapping};

fn segment(address: u64, file_offset: u64, file_size: u64) -> LayoutSegment {
    LayoutSegment {
        name: None,
        address: format!("{address:#x}"),
        size: file_size,
        file_offset,
        file_size,
        permissions: Some("r-x"),
    }
}

/// A file that exists, so canonicalization is exercised on real paths.
fn target() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("prog");
    std::fs::write(&file, b"x").expect("write");
    let file = std::fs::canonicalize(file).expect("canonical");
    (dir, file)
}

fn path(p: &std::path::Path) -> String {
    p.display().to_string()
}

#[test]
fn pie_pc_maps_through_the_load_base() {
    let (_dir, file) = target();
    // A PIE: link-time text at 0x1000 from file offset 0x1000, loaded at
    // 0x5555_5555_4000 (so the text mapping starts at base + 0x1000).
    let base = 0x5555_5555_4000;
    let segments = [segment(0, 0, 0x800), segment(0x1000, 0x1000, 0x2000)];
    let maps = vec![
        mapping(&path(&file), base, base + 0x1000, 0),
        mapping(&path(&file), base + 0x1000, base + 0x3000, 0x1000),
    ];
    let crash = crashed(Some(base + 0x1139), Some(0), maps);
    let mapped = map_crash(crash.crash.as_ref(), &file, &segments);
    assert_eq!(
        mapped,
        Mapped::Address {
            module: path(&file),
            file_offset: 0x1139,
            virtual_address: 0x1139,
        }
    );
}

#[test]
fn fixed_address_pc_maps_through_the_segment_table() {
    let (_dir, file) = target();
    // Non-PIE: text at 0x401000 from file offset 0x1000, mapped there.
    let segments = [
        segment(0x400000, 0, 0x800),
        segment(0x401000, 0x1000, 0x2000),
    ];
    let maps = vec![mapping(&path(&file), 0x401000, 0x403000, 0x1000)];
    let crash = crashed(Some(0x401234), Some(0x10), maps);
    let mapped = map_crash(crash.crash.as_ref(), &file, &segments);
    assert_eq!(
        mapped,
        Mapped::Address {
            module: path(&file),
            file_offset: 0x1234,
            virtual_address: 0x401234,
        }
    );
    // A file offset past every segment's file range stops the chain.
    let maps = vec![mapping(&path(&file), 0x401000, 0x409000, 0x1000)];
    let crash = crashed(Some(0x408000), Some(0x10), maps);
    assert!(matches!(
        map_crash(crash.crash.as_ref(), &file, &segments),
        Mapped::Stopped {
            file_offset: Some(0x8000),
            ..
        }
    ));
}

#[test]
fn another_module_is_named_not_correlated() {
    let (_dir, file) = target();
    let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    let maps = vec![
        mapping(&path(&file), 0x1000, 0x2000, 0),
        mapping(libc, 0x7f00_0000_0000, 0x7f00_0001_0000, 0x28000),
    ];
    let crash = crashed(Some(0x7f00_0000_0010), Some(0), maps);
    match map_crash(crash.crash.as_ref(), &file, &[segment(0, 0, 0x2000)]) {
        Mapped::Stopped {
            reason,
            module,
            file_offset,
        } => {
            assert_eq!(module.as_deref(), Some(libc));
            assert_eq!(file_offset, Some(0x28010));
            assert!(
                reason.contains(libc) && reason.contains("open_binary"),
                "{reason}"
            );
        }
        other => panic!("expected a stop, got {other:?}"),
    }
}

#[test]
fn a_symlinked_spelling_of_the_target_still_matches() {
    let (dir, file) = target();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&file, &link).expect("symlink");
    assert!(is_target_file(&path(&link), &file));
    assert!(!is_target_file("/nonexistent/prog", &file));
}

#[test]
fn chain_stops_without_crash_pc_or_mapping() {
    let (_dir, file) = target();
    let segments = [segment(0, 0, 0x2000)];
    let reason = |m: Mapped| match m {
        Mapped::Stopped { reason, .. } => reason,
        other => panic!("expected a stop, got {other:?}"),
    };
    let none = exited(0, "");
    assert!(reason(map_crash(none.crash.as_ref(), &file, &segments)).contains("no crash"));
    let unknown = crashed(None, None, Vec::new());
    assert!(
        reason(map_crash(unknown.crash.as_ref(), &file, &segments))
            .contains("ptrace was not permitted")
    );
    let maps = vec![mapping(&path(&file), 0x1000, 0x2000, 0)];
    let outside = crashed(Some(0x3000), Some(0), maps);
    assert!(
        reason(map_crash(outside.crash.as_ref(), &file, &segments))
            .contains("outside every file-backed mapping")
    );
    // Unparseable or inverted mappings are skipped, never trusted.
    let bad = vec![mapping(&path(&file), 0x2000, 0x1000, 0)];
    assert_eq!(locate_in_modules(&bad, 0x1800), ModuleHit::Outside);
}

#[test]
fn a_null_dereference_is_inferred_only_near_zero() {
    let near = crashed(Some(0x1000), Some(0x8), Vec::new());
    let text = inference(near.crash.as_ref().expect("crash"), Some("crash_here")).expect("some");
    assert!(text.starts_with("Inference"), "{text}");
    assert!(
        text.contains("null pointer dereference in crash_here"),
        "{text}"
    );
    let far = crashed(Some(0x1000), Some(0xdead_beef), Vec::new());
    let text = inference(far.crash.as_ref().expect("crash"), Some("f")).expect("some");
    assert!(!text.contains("null"), "{text}");
}
