//! Mutated binaries through the decompile worker, as the server uses it:
//! knowledge gathered from the file, a worker started on it under a memory
//! cap and a deadline, up to four procedures decompiled. Whatever the
//! engine does with the bytes (abort, loop, run out of memory), this
//! process must get an outcome for every procedure, within the deadline,
//! and never crash or wedge.
//!
//! The worker is a built `rea` (`REA_FUZZ_WORKER`; `.ci/fuzz.sh` sets it):
//! the engine never runs in this process.

#![no_main]

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use rea::decompiler::{Limits, Source, from_native, shared};
use rea::providers::native::NativeImage;

/// Each procedure's deadline here.
const DEADLINE: Duration = Duration::from_secs(2);

static PATH: LazyLock<PathBuf> = LazyLock::new(|| {
    let worker = std::env::var_os("REA_FUZZ_WORKER")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .expect("REA_FUZZ_WORKER names the built rea binary (.ci/fuzz.sh sets it)");
    shared().configure(
        Some(worker),
        Limits {
            memory_bytes: 1 << 30,
            deadline: DEADLINE,
            load_deadline: Duration::from_secs(10),
            max_instructions: 10_000,
        },
        1,
    );
    std::env::temp_dir().join(format!("rea-fuzz-decompile-{}.bin", std::process::id()))
});

fuzz_target!(|data: &[u8]| {
    let path = &*PATH;
    let mut file = std::fs::File::create(path).expect("create the fuzz temp file");
    file.write_all(data).expect("write the fuzz temp file");
    drop(file);
    let Ok(image) = NativeImage::open(path) else {
        return;
    };
    // Results are cached by document key: each input gets its own.
    let key = rea::ground::digest::sha256_hex(data);
    for document in 0..image.documents().len().min(2) {
        let Ok(knowledge) = from_native::knowledge_of(&image, document) else {
            continue;
        };
        let Ok(in_file) = from_native::file_backed(&image, document) else {
            continue;
        };
        let addresses: Vec<u64> = knowledge
            .functions
            .iter()
            .map(|f| f.address)
            .filter(|&a| in_file.contains(a))
            .take(4)
            .collect();
        if addresses.is_empty() {
            continue;
        }
        let digest = knowledge.digest();
        let source = Source {
            document_key: format!("{key}:{document}"),
            bytes: image.document_bytes(document),
            knowledge: std::sync::Arc::new(knowledge),
            digest,
        };
        let started = Instant::now();
        let outcomes = shared().decompile_all(&source, &addresses, &|| false);
        assert_eq!(outcomes.len(), addresses.len());
        // Start, load and one deadline per procedure, with room to spare.
        let bound = Duration::from_secs(10) + DEADLINE * (addresses.len() as u32 + 1) + Duration::from_secs(5);
        assert!(started.elapsed() < bound, "the batch took {:?}", started.elapsed());
    }
});
