//! Every format at once: each pinned fixture's layout is complete, and
//! truncated or garbled inputs never panic.

use std::time::{Duration, Instant};

use super::elf::{DT_NEEDED, DT_RUNPATH, dynamic_elf};
use super::pe::pe_with_tls;
use super::*;
use crate::providers::ProviderError;
use crate::providers::native::fixtures::{self, PE_BASE, fixture};

#[test]
fn every_fixture_layout_is_complete() {
    for name in [
        "fsevents.node",
        "watcher-darwin-arm64.node",
        "watcher-win32-x64.node",
        "watcher-linux-x64.node",
        "esbuild-win32-x64.exe",
        "markupsafe-speedups-universal2.so",
    ] {
        let Some(path) = fixture(name) else {
            continue;
        };
        for (info, layout) in open_layouts(&path) {
            assert!(
                layout.limitations.is_empty(),
                "{}: {:?}",
                info.name,
                layout.limitations
            );
            assert!(!layout.segments.is_empty(), "{}", info.name);
            assert!(!layout.sections.is_empty(), "{}", info.name);
            assert!(!layout.needed_libraries.is_empty(), "{}", info.name);
            assert!(!layout.imports.is_empty(), "{}", info.name);
            let json = serde_json::to_value(&layout).expect("serialize");
            assert!(
                json["segments"][0]["address"]
                    .as_str()
                    .is_some_and(|a| a.starts_with("0x"))
            );
        }
    }
}

// ------------------------------------------------------------- hostile

/// xorshift64: deterministic garbage without a dependency.
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn truncated_and_garbage_inputs_never_panic() {
    let samples = [
        ("tiny elf", fixtures::tiny_elf()),
        (
            "dynamic elf",
            dynamic_elf(b"\0libx.so\0/r\0", &[(DT_NEEDED, 1), (DT_RUNPATH, 9)], true),
        ),
        ("tiny pe", fixtures::tiny_pe()),
        ("pe with tls", pe_with_tls(&[PE_BASE + 0x1000, 0])),
        (
            "tiny mach-o",
            fixtures::tiny_macho(fixtures::MACHO_CPU_ARM64),
        ),
        (
            "fat",
            fixtures::fat(&[
                fixtures::tiny_macho(fixtures::MACHO_CPU_X86_64),
                fixtures::tiny_macho(fixtures::MACHO_CPU_ARM64),
            ]),
        ),
    ];
    let started = Instant::now();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for (what, bytes) in &samples {
        // Every truncation.
        for length in 0..bytes.len() {
            layouts_of_bytes(&bytes[..length]);
        }
        // Each header word set to all ones or zero (huge counts,
        // offsets and sizes).
        for at in (0..bytes.len().min(0x400)).step_by(4) {
            for fill in [0xffu8, 0x00, 0x7f] {
                let mut variant = bytes.clone();
                variant[at..(at + 4).min(bytes.len())].fill(fill);
                layouts_of_bytes(&variant);
            }
        }
        // Random corruption.
        for _ in 0..300 {
            let mut variant = bytes.clone();
            for _ in 0..1 + next_random(&mut state) % 8 {
                let at = (next_random(&mut state) % bytes.len() as u64) as usize;
                variant[at] = next_random(&mut state) as u8;
            }
            layouts_of_bytes(&variant);
        }
        eprintln!("{what}: survived");
    }
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "hostile sweep took {:?}",
        started.elapsed()
    );
}

#[test]
fn layout_of_unknown_document_and_garbage_file() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("tiny.elf");
    std::fs::write(&path, fixtures::tiny_elf()).expect("write");
    let image = NativeImage::open(&path).expect("open");
    assert!(matches!(
        image.layout(1),
        Err(ProviderError::UnknownDocument { .. })
    ));
    let layout = image.layout(0).expect("layout");
    assert_eq!(
        layout.entry_point,
        Some(format_address(fixtures::ELF_ENTRY))
    );
    assert!(layout.needed_libraries.is_empty());
    assert_eq!(layout.code_signature, None);

    let mut broken = fixtures::tiny_elf();
    broken[fixtures::ELF64_SHOFF_OFFSET..fixtures::ELF64_SHOFF_OFFSET + 8]
        .copy_from_slice(&u64::MAX.to_le_bytes());
    let path = dir.path().join("broken.elf");
    std::fs::write(&path, &broken).expect("write");
    assert!(matches!(
        NativeImage::open(&path),
        Err(ProviderError::Malformed { .. })
    ));
}
