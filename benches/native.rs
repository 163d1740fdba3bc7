//! Native provider hot paths on a real 11 MB PE32+ (esbuild 0.28.2 from the
//! pinned fixture set; run `tests/fixtures/fetch.sh` first):
//! `cargo bench --bench native`.
//!
//! Each iteration opens the file afresh so the per-document caches are cold.

use std::path::{Path, PathBuf};

use rea::providers::native::NativeImage;

fn main() {
    if fixture().is_none() {
        eprintln!(
            "skipped: target/fixtures/esbuild-win32-x64.exe is missing; run tests/fixtures/fetch.sh"
        );
        return;
    }
    divan::main();
}

fn fixture() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fixtures/esbuild-win32-x64.exe");
    path.is_file().then_some(path)
}

fn open() -> NativeImage {
    NativeImage::open(&fixture().expect("fixture checked in main")).expect("fixture opens")
}

#[divan::bench(sample_count = 20)]
fn strings_table(bencher: divan::Bencher) {
    bencher
        .with_inputs(open)
        .bench_local_values(|image| image.strings(0).map(|t| t.strings.len()).unwrap_or(0));
}

#[divan::bench(sample_count = 20)]
fn layout(bencher: divan::Bencher) {
    bencher
        .with_inputs(open)
        .bench_local_values(|image| image.layout(0).map(|l| l.imports.len()).unwrap_or(0));
}

#[divan::bench(sample_count = 20)]
fn inventory(bencher: divan::Bencher) {
    bencher
        .with_inputs(open)
        .bench_local_values(|image| image.inventory(0).map(|i| i.procedures.len()).unwrap_or(0));
}
