//! The evidence ledger and bundles with 5,000 records, through the public
//! session API: `Session::record`, `Session::export_bundle` (inside a write
//! root) and `Session::import_bundle` into a fresh session, plus the two
//! halves of that round trip without the file system (`bundle_bytes`,
//! `parse_bundle`). Run with `cargo bench --bench records`; see
//! `benches/README.md` for the figures.
//!
//! The drafts are generated deterministically (xorshift64*, fixed seed):
//! each looks like a paged `list_strings` result over one of 50 subjects,
//! about 2.4 KiB of canonical JSON (a 12.4 MB bundle). The filled session and the exported
//! bundle are made once, before divan starts, and checked (record count,
//! the import adds every record) so no bench can measure an error path.

use std::path::PathBuf;
use std::sync::LazyLock;

use rea::session::bundle::{bundle_bytes, parse_bundle};
use rea::session::{
    Confidence, EvidenceDraft, Location, Session, Subject, WriteRoots, native_identity,
};
use serde_json::{Value, json};

/// Records in the ledger (half the ledger's 10,000-entry limit).
const RECORDS: usize = 5_000;

fn main() {
    LazyLock::force(&BUNDLE);
    divan::main();
    // Statics are never dropped, so remove the bundle's directory here.
    let _ = std::fs::remove_dir_all(BUNDLE.dir.path());
}

fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// `RECORDS` distinct drafts.
fn drafts() -> Vec<EvidenceDraft> {
    let mut state = 0x0123_4567_89ab_cdefu64;
    (0..RECORDS)
        .map(|i| {
            let subject = i % 50;
            let offset = (i / 50) * 20;
            let strings: Vec<Value> = (0..20)
                .map(|k| {
                    let address = 0x40_0000 + next(&mut state) % 0x10_0000;
                    json!({
                        "address": format!("{address:#x}"),
                        "section": ".rodata",
                        "encoding": "utf-8",
                        "text": format!("string {} of subject {subject}", offset + k),
                    })
                })
                .collect();
            EvidenceDraft {
                operation: "list_strings".into(),
                subject: Some(Subject {
                    sha256: format!("{subject:064x}"),
                    format: "elf".into(),
                    architecture: Some("x86_64".into()),
                }),
                provider: native_identity(),
                parameters: json!({"offset": offset, "limit": 20, "min_length": 4}),
                result: json!({"total": 100_000, "offset": offset, "strings": strings}),
                confidence: Confidence::Observed,
                limitations: vec![],
                locations: vec![Location::Address {
                    document: "main".into(),
                    address: format!("{:#x}", 0x40_0000 + offset),
                }],
                local_path: None,
            }
        })
        .collect()
}

fn filled() -> Session {
    let mut session = Session::default();
    for draft in drafts() {
        session.record(draft).expect("the ledger takes the record");
    }
    session
}

/// A filled session that may write under a temporary write root, and
/// the bundle it exported there once.
struct Exported {
    dir: tempfile::TempDir,
    session: Session,
    path: PathBuf,
}

static BUNDLE: LazyLock<Exported> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let roots = WriteRoots::new(&[dir.path().to_path_buf()]).expect("a write root");
    let session = filled().with_write_roots(roots);
    assert_eq!(session.ledger().len(), RECORDS);
    let path = dir.path().join("bundle.json");
    let summary = session
        .export_bundle(&path, false)
        .expect("export the bundle");
    let mut fresh = Session::default();
    let imported = fresh.import_bundle(&path).expect("import the bundle");
    assert_eq!(imported.records_added, RECORDS);
    eprintln!(
        "bundle: {} records, {} bytes ({:.1} KiB per record), ledger {} bytes of JSON",
        summary.records,
        summary.bytes,
        summary.bytes as f64 / RECORDS as f64 / 1024.0,
        session.ledger().bytes()
    );
    Exported { dir, session, path }
});

/// Seal (canonical JSON + sha256) and record every draft into an empty
/// session.
#[divan::bench(sample_count = 10)]
fn record_5000(bencher: divan::Bencher) {
    bencher.with_inputs(drafts).bench_local_values(|drafts| {
        let mut session = Session::default();
        for draft in drafts {
            session.record(draft).expect("the ledger takes the record");
        }
        session
    });
}

/// `export_bundle`: canonical bytes of the whole ledger, written to a
/// temporary file and renamed over the previous bundle.
#[divan::bench(sample_count = 10)]
fn export_5000(bencher: divan::Bencher) {
    let exported = &*BUNDLE;
    bencher.bench_local(|| {
        exported
            .session
            .export_bundle(&exported.path, true)
            .expect("export the bundle")
            .bytes
    });
}

/// `import_bundle` into a fresh session: read, parse, recompute every
/// record's ID, merge all or nothing. The session is dropped outside the
/// timed region.
#[divan::bench(sample_count = 10)]
fn import_5000(bencher: divan::Bencher) {
    let exported = &*BUNDLE;
    bencher
        .with_inputs(Session::default)
        .bench_local_refs(|session| {
            session
                .import_bundle(&exported.path)
                .expect("import the bundle")
                .records_added
        });
}

/// `bundle_bytes` alone: the canonical serialisation export writes.
#[divan::bench(sample_count = 10)]
fn bundle_bytes_5000(bencher: divan::Bencher) {
    let ledger = BUNDLE.session.ledger();
    bencher.bench_local(|| bundle_bytes(ledger).expect("serialise").len());
}

/// `parse_bundle` alone: parse and verify every record, no merge.
#[divan::bench(sample_count = 10)]
fn parse_bundle_5000(bencher: divan::Bencher) {
    let bytes = std::fs::read(&BUNDLE.path).expect("read the bundle");
    bencher.bench_local(|| parse_bundle(&bytes).expect("parse").0.len());
}
