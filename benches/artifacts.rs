//! Artifact inspection (`rea::artifacts::inspect`): real wheels and a
//! universal Mach-O from the pinned fixture set (run
//! `tests/fixtures/fetch.sh` first), a generated zip at the entry limit,
//! and a zip bomb. Run with `cargo bench --bench artifacts`; see
//! `benches/README.md` for the figures.
//!
//! The generated archives are built once, in memory, by the small zip
//! writer at the end of this file (local headers, central directory, end
//! record; CRC-32 from `flate2::Crc`, deflate from `flate2`), and written
//! to a temporary file so the timed region runs the same path as
//! `inspect_artifact`: open, map, walk, hash, finish. Before divan starts,
//! `main` inspects each input once, checks the outcome the bench claims to
//! measure (complete coverage, or a compression-ratio refusal), and prints
//! coverage, bytes read, the peak heap of that one inspection and the heap
//! its result holds to stderr.
//! The peak comes from a counting global allocator that counts only inside
//! that one call; in the timed runs it costs one relaxed load per
//! allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

use flate2::Compression;
use flate2::write::DeflateEncoder;
use rea::artifacts::{
    ArtifactFormat, CoverageStatus, Inspection, Limits, RefusalReason, inspect, sniff,
};

/// Members in the generated archive: with the root occurrence this is
/// exactly `Limits::MAX.max_entries` (10,000), the most a complete
/// inspection can list.
const MEMBERS: usize = 9_999;
/// Explicit directory entries among them (nested up to three levels).
const DIRECTORIES: usize = 15;
/// Uncompressed size of the bomb's only entry.
const BOMB_BYTES: usize = 64 << 20;

fn main() {
    if fixture("markupsafe-2.1.5-manylinux-x86_64.whl").is_none() {
        eprintln!(
            "skipped: target/fixtures/markupsafe-2.1.5-manylinux-x86_64.whl is missing; run \
             tests/fixtures/fetch.sh"
        );
        return;
    }
    describe();
    divan::main();
    // Statics are never dropped, so remove the generated archives here.
    for generated in [&*MANY, &*BOMB] {
        let _ = std::fs::remove_dir_all(generated.dir.path());
    }
}

// ---------------------------------------------------------------------------
// Peak heap: a counting allocator, read once per input outside divan.
// ---------------------------------------------------------------------------

struct Counting;

/// Counting is on only inside [`peak_heap`], so the timed runs pay one
/// relaxed load per allocation and nothing else.
static COUNTING: AtomicBool = AtomicBool::new(false);
/// Net bytes allocated since the window opened (negative when it frees
/// memory allocated before), and the highest value seen.
static CURRENT: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded unchanged to `System`; the counters only
// observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        count(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

fn count(delta: isize) {
    if COUNTING.load(Ordering::Relaxed) {
        let now = CURRENT.fetch_add(delta, Ordering::Relaxed) + delta;
        PEAK.fetch_max(now, Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` and returns its value with the heap it needed above what was
/// already held: the peak during `f`, and what its value still holds.
fn peak_heap<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    CURRENT.store(0, Ordering::Relaxed);
    PEAK.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    let value = f();
    COUNTING.store(false, Ordering::Relaxed);
    let bytes = |v: isize| usize::try_from(v).unwrap_or(0);
    let (peak, retained) = (
        PEAK.load(Ordering::Relaxed),
        CURRENT.load(Ordering::Relaxed),
    );
    (value, bytes(peak), bytes(retained))
}

// ---------------------------------------------------------------------------
// Inputs.
// ---------------------------------------------------------------------------

fn fixture(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/fixtures")
        .join(name);
    path.is_file().then_some(path)
}

fn required(name: &str) -> PathBuf {
    fixture(name).unwrap_or_else(|| panic!("{name} is missing; run tests/fixtures/fetch.sh"))
}

/// A generated archive on disk; `main` removes the directory at the end.
struct Generated {
    dir: tempfile::TempDir,
    path: PathBuf,
}

fn generated(name: &str, bytes: Vec<u8>) -> Generated {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write the generated archive");
    Generated { dir, path }
}

static MANY: LazyLock<Generated> = LazyLock::new(|| generated("many.zip", many_members()));
static BOMB: LazyLock<Generated> = LazyLock::new(|| generated("bomb.zip", bomb()));

/// Deterministic archive: `DIRECTORIES` explicit directories (`pkg/`,
/// `pkg/mNN/`, `pkg/mNN/sub/`) and small files spread over them, every
/// third stored, the rest deflated; sizes 40..~2,100 bytes, content from
/// xorshift64* with a fixed seed (text-like, so deflate has work to do).
fn many_members() -> Vec<u8> {
    let mut dirs = vec!["pkg/".to_string()];
    for m in 0..(DIRECTORIES - 1) / 2 {
        dirs.push(format!("pkg/m{m:02}/"));
        dirs.push(format!("pkg/m{m:02}/sub/"));
    }
    assert_eq!(dirs.len(), DIRECTORIES);
    let mut zip = ZipWriter::default();
    for d in &dirs {
        zip.directory(d);
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let words = [
        "alpha", "beta", "gamma", "delta", "import", "def", "return", "self", "None", "0x1f",
    ];
    for i in 0..MEMBERS - DIRECTORIES {
        let dir = &dirs[i % DIRECTORIES];
        let mut data = format!("member {i}\n").into_bytes();
        let len = 40 + (next(&mut state) % 2048) as usize;
        while data.len() < len {
            let w = words[(next(&mut state) % words.len() as u64) as usize];
            data.extend_from_slice(w.as_bytes());
            data.push(if next(&mut state).is_multiple_of(8) {
                b'\n'
            } else {
                b' '
            });
        }
        let method = if i.is_multiple_of(3) {
            Method::Stored
        } else {
            Method::Deflated
        };
        zip.file(&format!("{dir}f{i:05}.txt"), &data, method);
    }
    zip.finish()
}

/// One entry of `BOMB_BYTES` zeros, deflated at the best level (about
/// 1,030:1, just over the default ratio limit of 1,000), with its true size
/// declared so only the ratio guard can stop it.
fn bomb() -> Vec<u8> {
    let mut zip = ZipWriter::default();
    zip.file("zeros.bin", &vec![0u8; BOMB_BYTES], Method::Deflated);
    zip.finish()
}

fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

// ---------------------------------------------------------------------------
// What each bench measures, checked once before divan runs.
// ---------------------------------------------------------------------------

fn inspect_path(path: &Path) -> Inspection {
    inspect_with(path, &Limits::default())
}

fn inspect_with(path: &Path, limits: &Limits) -> Inspection {
    let file = rea::ground::confined::Roots::default()
        .open_file(path)
        .expect("open the input");
    let format = sniff(&file)
        .expect("sniff the input")
        .unwrap_or_else(|| panic!("{} is not an artifact container", path.display()));
    inspect(path, format, limits).expect("the inspection succeeds")
}

fn ratio_limited(ratio: u64) -> Limits {
    Limits {
        max_compression_ratio: ratio,
        ..Limits::default()
    }
}

fn describe() {
    let inputs: [(&str, PathBuf, Limits, bool); 6] = [
        (
            "markupsafe-2.1.5 wheel",
            required("markupsafe-2.1.5-manylinux-x86_64.whl"),
            Limits::default(),
            false,
        ),
        (
            "markupsafe-3.0.2 wheel",
            required("markupsafe-3.0.2-manylinux-x86_64.whl"),
            Limits::default(),
            false,
        ),
        (
            "fsevents.node (universal Mach-O)",
            required("fsevents.node"),
            Limits::default(),
            false,
        ),
        ("generated zip", MANY.path.clone(), Limits::default(), false),
        ("zip bomb", BOMB.path.clone(), Limits::default(), true),
        (
            "zip bomb, ratio 100",
            BOMB.path.clone(),
            ratio_limited(100),
            true,
        ),
    ];
    for (label, path, limits, bomb) in inputs {
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let (inspection, peak, retained) = peak_heap(|| inspect_with(&path, &limits));
        let c = &inspection.coverage;
        if bomb {
            let refused = inspection
                .findings
                .refused_entries
                .iter()
                .any(|r| r.reason == RefusalReason::CompressionRatio);
            assert!(refused, "{label}: the ratio guard did not refuse the entry");
        } else {
            assert_eq!(c.status, CoverageStatus::Complete, "{label}: {c:?}");
        }
        eprintln!(
            "{label}: {bytes} bytes on disk; coverage {:?}, {} occurrences, {} nodes, \
             bytes_read {}, limits hit {:?}; peak heap {:.1} MiB, result {:.1} MiB",
            c.status,
            c.entries_listed,
            inspection.nodes.len(),
            c.bytes_read,
            c.limits_hit,
            peak as f64 / f64::from(1 << 20),
            retained as f64 / f64::from(1 << 20)
        );
    }
    let many = inspect_path(&MANY.path);
    assert_eq!(many.coverage.entries_listed, MEMBERS as u64 + 1);
    assert_eq!(many.manifest.root_format, ArtifactFormat::Zip);
}

// ---------------------------------------------------------------------------
// Benches.
// ---------------------------------------------------------------------------

fn bench_path(bencher: divan::Bencher, path: &Path, limits: Limits) {
    bencher.bench_local(|| inspect_with(path, &limits).coverage.entries_listed);
}

#[divan::bench(sample_count = 50)]
fn wheel_markupsafe_2_1_5(bencher: divan::Bencher) {
    let path = required("markupsafe-2.1.5-manylinux-x86_64.whl");
    bench_path(bencher, &path, Limits::default());
}

#[divan::bench(sample_count = 50)]
fn wheel_markupsafe_3_0_2(bencher: divan::Bencher) {
    let path = required("markupsafe-3.0.2-manylinux-x86_64.whl");
    bench_path(bencher, &path, Limits::default());
}

#[divan::bench(sample_count = 50)]
fn universal_macho_fsevents(bencher: divan::Bencher) {
    bench_path(bencher, &required("fsevents.node"), Limits::default());
}

#[divan::bench(sample_count = 10)]
fn zip_9999_members(bencher: divan::Bencher) {
    bench_path(bencher, &MANY.path, Limits::default());
}

/// Time to refusal under the default limits (ratio 1,000).
#[divan::bench(sample_count = 10)]
fn zip_bomb_refused(bencher: divan::Bencher) {
    bench_path(bencher, &BOMB.path, Limits::default());
}

/// The same bomb with `max_compression_ratio: 100`.
#[divan::bench(sample_count = 10)]
fn zip_bomb_refused_ratio_100(bencher: divan::Bencher) {
    bench_path(bencher, &BOMB.path, ratio_limited(100));
}

// ---------------------------------------------------------------------------
// A minimal zip writer (no zip64, no data descriptors): enough for the
// generated inputs above, which stay far below 4 GiB and 65,535 entries.
// ---------------------------------------------------------------------------

#[derive(Clone, Copy)]
enum Method {
    Stored,
    Deflated,
}

#[derive(Default)]
struct ZipWriter {
    out: Vec<u8>,
    central: Vec<u8>,
    entries: u16,
}

/// 1980-01-01 00:00 in MS-DOS date/time form.
const DOS_DATE: u16 = 0x21;
const UNIX_DIR: u32 = 0o040_755;
const UNIX_FILE: u32 = 0o100_644;

impl ZipWriter {
    fn directory(&mut self, name: &str) {
        self.entry(name, &[], 0, 0, 0, UNIX_DIR);
    }

    fn file(&mut self, name: &str, data: &[u8], method: Method) {
        let mut crc = flate2::Crc::new();
        crc.update(data);
        let (code, body) = match method {
            Method::Stored => (0, data.to_vec()),
            Method::Deflated => {
                let mut enc = DeflateEncoder::new(Vec::new(), Compression::best());
                enc.write_all(data).expect("deflate into memory");
                (8, enc.finish().expect("deflate into memory"))
            }
        };
        self.entry(name, &body, data.len(), code, crc.sum(), UNIX_FILE);
    }

    fn entry(&mut self, name: &str, body: &[u8], size: usize, method: u16, crc: u32, mode: u32) {
        let offset = u32::try_from(self.out.len()).expect("under 4 GiB");
        let name_len = u16::try_from(name.len()).expect("short name");
        let csize = u32::try_from(body.len()).expect("under 4 GiB");
        let usize_ = u32::try_from(size).expect("under 4 GiB");
        let local = &mut self.out;
        local.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        for v in [20u16, 0, method, 0, DOS_DATE] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        for v in [crc, csize, usize_] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        for v in [name_len, 0] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        local.extend_from_slice(name.as_bytes());
        local.extend_from_slice(body);

        let c = &mut self.central;
        c.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        // Made by Unix (3), so the external attributes carry the mode.
        for v in [(3u16 << 8) | 20, 20, 0, method, 0, DOS_DATE] {
            c.extend_from_slice(&v.to_le_bytes());
        }
        for v in [crc, csize, usize_] {
            c.extend_from_slice(&v.to_le_bytes());
        }
        for v in [name_len, 0, 0, 0, 0] {
            c.extend_from_slice(&v.to_le_bytes());
        }
        for v in [mode << 16, offset] {
            c.extend_from_slice(&v.to_le_bytes());
        }
        c.extend_from_slice(name.as_bytes());
        self.entries += 1;
    }

    fn finish(mut self) -> Vec<u8> {
        let cd_offset = u32::try_from(self.out.len()).expect("under 4 GiB");
        let cd_size = u32::try_from(self.central.len()).expect("under 4 GiB");
        self.out.extend_from_slice(&self.central);
        self.out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        for v in [0u16, 0, self.entries, self.entries] {
            self.out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [cd_size, cd_offset] {
            self.out.extend_from_slice(&v.to_le_bytes());
        }
        self.out.extend_from_slice(&0u16.to_le_bytes());
        self.out
    }
}
