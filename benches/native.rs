//! Native provider hot paths on real 11 MB executables (esbuild 0.28.2 for
//! Windows x64, Linux x64 and Linux arm64, from the pinned fixture set; run
//! `tests/fixtures/fetch.sh` first): `cargo bench --bench native`.
//!
//! Each iteration opens the file afresh so the per-document caches are cold.
//! The code-index benches sweep the whole `.text` (1.2-1.4 M instructions);
//! `rea index FILE` prints the instruction count and rate of one build.

use std::path::{Path, PathBuf};

use rea::providers::code::Arch;
use rea::providers::native::{NativeImage, disasm};

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
    fixture_named("esbuild-win32-x64.exe")
}

fn fixture_named(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/fixtures")
        .join(name);
    path.is_file().then_some(path)
}

fn open() -> NativeImage {
    NativeImage::open(&fixture().expect("fixture checked in main")).expect("fixture opens")
}

fn open_named(name: &str) -> NativeImage {
    let path = fixture_named(name)
        .unwrap_or_else(|| panic!("{name} is missing; run tests/fixtures/fetch.sh"));
    NativeImage::open(&path).expect("fixture opens")
}

/// One code-index build (decode every instruction, record references,
/// sort both orders); returns the instruction count.
fn build_code_index(image: NativeImage) -> u64 {
    image
        .code_index(0, &|_, _| {})
        .map(|index| index.instructions)
        .unwrap_or(0)
}

/// The decoder alone: one sweep of `.text`, counting instructions.
fn sweep_text(name: &str, arch: Arch) -> impl FnMut() -> u64 {
    use object::{Object as _, ObjectSection as _};
    let path = fixture_named(name).unwrap_or_else(|| panic!("{name} is missing"));
    let data = std::fs::read(path).expect("read the fixture");
    move || {
        let file = object::File::parse(&*data).expect("parse the fixture");
        let text = file.section_by_name(".text").expect("a .text section");
        let mut count = 0u64;
        disasm::sweep(arch, text.data().unwrap_or(&[]), text.address(), |_| {
            count += 1
        });
        count
    }
}

#[divan::bench(sample_count = 10)]
fn sweep_x86_64(bencher: divan::Bencher) {
    let mut sweep = sweep_text("esbuild-linux-x64", Arch::X86_64);
    bencher.bench_local(&mut sweep);
}

#[divan::bench(sample_count = 10)]
fn sweep_arm64(bencher: divan::Bencher) {
    let mut sweep = sweep_text("esbuild-linux-arm64", Arch::Aarch64);
    bencher.bench_local(&mut sweep);
}

#[divan::bench(sample_count = 10)]
fn code_index_x86_64(bencher: divan::Bencher) {
    bencher
        .with_inputs(|| open_named("esbuild-linux-x64"))
        .bench_local_values(build_code_index);
}

#[divan::bench(sample_count = 10)]
fn code_index_arm64(bencher: divan::Bencher) {
    bencher
        .with_inputs(|| open_named("esbuild-linux-arm64"))
        .bench_local_values(build_code_index);
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

/// The whole procedure listing of esbuild linux-x64: code index, pointers
/// in data (string table and data scan), recursive descent, inventory —
/// the speed goal's "end to end".
#[divan::bench(sample_count = 10)]
fn listing_x86_64(bencher: divan::Bencher) {
    bencher
        .with_inputs(|| open_named("esbuild-linux-x64"))
        .bench_local_values(|image| image.inventory(0).map(|i| i.procedures.len()).unwrap_or(0));
}
