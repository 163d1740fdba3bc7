//! What the `artifact_archive` fuzz target does with one input, shared with
//! `tests/fuzz_replay.rs`: inspect the bytes as every in-memory artifact
//! format under small limits; an inspection that succeeds must validate
//! and respect its limits. Errors are fine; panics are bugs.

use rea::artifacts::{ArtifactFormat, Limits, inspect_bytes};

const FORMATS: [ArtifactFormat; 5] = ArtifactFormat::IN_MEMORY;

pub fn exercise(data: &[u8]) {
    let limits = Limits {
        max_entries: 256,
        max_total_bytes: 8 << 20,
        max_entry_bytes: 2 << 20,
        max_compression_ratio: 1000,
        max_depth: 4,
        max_path_bytes: 1024,
    };
    for format in FORMATS {
        if let Ok(inspection) = inspect_bytes(data, format, &limits) {
            if let Err(error) = inspection.validate() {
                panic!("{format:?}: a fresh inspection does not validate: {error}");
            }
            assert!(inspection.coverage.entries_seen <= limits.max_entries);
            assert!(inspection.coverage.bytes_read <= limits.max_total_bytes);
        }
    }
}
