//! Native code analysis over arbitrary file contents: open, list
//! procedures (code sweep, unwind tables, call targets), analyse functions,
//! callers, callees, xrefs and containing-procedure lookups. None of it may
//! panic, hang or allocate without bound.
//!
//! Like `native_image`, each input goes to one temp file per process and
//! the image is dropped before the next input overwrites it.

#![no_main]

#[path = "analysis_exercise.rs"]
mod analysis_exercise;

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use rea::providers::native::NativeImage;

static PATH: LazyLock<PathBuf> = LazyLock::new(|| {
    std::env::temp_dir().join(format!("rea-fuzz-native-analysis-{}.bin", std::process::id()))
});

fuzz_target!(|data: &[u8]| {
    let mut file = std::fs::File::create(&*PATH).expect("create the fuzz temp file");
    file.write_all(data).expect("write the fuzz temp file");
    drop(file);
    if let Ok(image) = NativeImage::open(&PATH) {
        analysis_exercise::exercise(&image, data);
    }
});
