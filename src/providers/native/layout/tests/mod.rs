//! Oracles: LLVM's readers (`llvm-readelf`, `llvm-readobj`,
//! `llvm-objdump`, `llvm-otool`, `llvm-nm`) on pinned real binaries and
//! on a program compiled here, and hand-built bytes whose layout is known
//! by construction.
//!
//! Split by format (`elf.rs`, `pe.rs`, `macho.rs`, `exports_trie.rs`) plus
//! `all_formats.rs` (every fixture, hostile inputs); this file holds the
//! support they share.

mod all_formats;
mod elf;
mod exports_trie;
mod macho;
mod pe;

use std::path::Path;
use std::process::Command;

use super::super::fixtures::skip_or_fail;
use super::super::{DocumentInfo, NativeImage, documents};
use super::*;

// ------------------------------------------------------------ support

/// The first of `names` that runs, or `None` (after skip-or-fail).
fn tool(names: &[&str]) -> Option<String> {
    let found = names.iter().find(|name| {
        Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|output| output.status.success())
    });
    if found.is_none() {
        skip_or_fail(&format!("none of {names:?} is installed"));
    }
    found.map(|name| (*name).to_owned())
}

fn run(tool: &str, args: &[&str], path: &Path) -> String {
    let output = Command::new(tool)
        .args(args)
        .arg(path)
        .output()
        .unwrap_or_else(|error| panic!("run {tool}: {error}"));
    assert!(
        output.status.success(),
        "{tool} {args:?} {} failed: {}",
        path.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn hex(text: &str) -> u64 {
    let digits = text
        .trim()
        .trim_start_matches("0x")
        .trim_start_matches("0X");
    u64::from_str_radix(digits, 16).unwrap_or_else(|_| panic!("not hex: {text:?}"))
}

fn addr(text: &str) -> String {
    format_address(hex(text))
}

fn open_layouts(path: &Path) -> Vec<(DocumentInfo, Layout)> {
    let image = NativeImage::open(path).expect("open fixture");
    (0..image.documents().len())
        .map(|index| {
            let layout = image.layout(index).expect("layout");
            (image.documents()[index].clone(), layout)
        })
        .collect()
}

/// Layout straight from bytes (no temporary file), for hostile sweeps:
/// every document `classify` accepts.
fn layouts_of_bytes(bytes: &[u8]) -> Vec<Layout> {
    let Ok(classified) = documents::classify(bytes, Path::new("hostile")) else {
        return Vec::new();
    };
    classified
        .documents
        .iter()
        .zip(&classified.ranges)
        .filter_map(|(info, range)| {
            let data = bytes.get(range.clone())?;
            let file = object::File::parse(data).ok()?;
            Some(layout(&file, info))
        })
        .collect()
}

fn layout_of_bytes(bytes: &[u8]) -> Layout {
    let mut layouts = layouts_of_bytes(bytes);
    assert_eq!(layouts.len(), 1, "expected one document");
    layouts.remove(0)
}

fn put(out: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    if out.len() < at + bytes.len() {
        out.resize(at + bytes.len(), 0);
    }
    out[at..at + bytes.len()].copy_from_slice(bytes);
}
