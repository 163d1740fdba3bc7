//! Replays the committed `native_analysis` fuzz inputs
//! (`fuzz/regressions/native_analysis/`: crashes found and fixed, plus a
//! minimized seed corpus) through the same exercise the fuzz target runs.
//! The full local corpus is replayed by libFuzzer itself at the start of
//! every `.ci/fuzz.sh` run.

#[path = "../fuzz/fuzz_targets/analysis_exercise.rs"]
mod analysis_exercise;

use std::path::{Path, PathBuf};

use rea::providers::native::NativeImage;

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn replay(files: &[PathBuf]) {
    let scratch = tempfile::tempdir().expect("tempdir");
    for (i, source) in files.iter().enumerate() {
        let data = std::fs::read(source).expect("read input");
        // A copy per input: the image maps the file it opens.
        let path = scratch.path().join(format!("input-{i}"));
        std::fs::write(&path, &data).expect("write input");
        if let Ok(image) = NativeImage::open(&path) {
            analysis_exercise::exercise(&image, &data);
        }
    }
}

#[test]
fn committed_regression_inputs_replay_cleanly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/native_analysis");
    let files = inputs(&dir);
    assert!(
        !files.is_empty(),
        "{} holds the committed inputs",
        dir.display()
    );
    replay(&files);
}

#[path = "../fuzz/fuzz_targets/artifact_exercise.rs"]
mod artifact_exercise;

/// The committed `artifact_archive` inputs (`fuzz/regressions/artifact_archive/`)
/// through the fuzz target's exercise.
#[test]
fn committed_artifact_inputs_replay_cleanly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/artifact_archive");
    let files = inputs(&dir);
    assert!(
        files.len() >= 4,
        "{} holds the committed inputs",
        dir.display()
    );
    for source in files {
        artifact_exercise::exercise(&std::fs::read(source).expect("read input"));
    }
}
