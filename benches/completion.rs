//! Procedure completion over a generated 1,000,000-procedure inventory.
//!
//! Run with `cargo bench --bench completion` (release profile). See
//! `benches/README.md` for what each bench measures and the figures.
//!
//! The inventory is generated deterministically (xorshift64*, fixed seed),
//! so every run and every machine benches the same data:
//!
//! - addresses strictly increasing from `0x100000` with varying gaps;
//! - names: ~60% mixed-case ASCII identifiers (`GetWindowTextW`,
//!   `parse_header_v2`), ~30% Itanium-like mangled names
//!   (`_ZN4core3fmt5write17h…E`, `_ZNK3std6vector…`), ~10% non-ASCII names
//!   (`größe_berechnen`, `Ｆｕｌｌｗｉｄｔｈ`, Greek, Cyrillic, `ǅemo`);
//! - some names repeated at other addresses (so the uniqueness filter of
//!   `ProcedureIndex::build` drops them), a few aliases and a few unnamed
//!   procedures.
//!
//! The inventory and its index are built once, outside every timed region.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::{Arc, LazyLock};

use divan::Bencher;
use rea::matching::key::key;
use rea::providers::{Inventory, Procedure};
use rea::session::ProcedureIndex;

fn main() {
    // Generate and index up front, so the description of the data (stderr)
    // does not land in the middle of divan's table. Costs a few seconds even
    // when a filter selects only the `key_*` benches.
    LazyLock::force(&INDEX);
    divan::main();
}

/// Procedures in the generated inventory.
const PROCEDURES: usize = 1_000_000;

/// The inventory every bench uses.
static INVENTORY: LazyLock<Arc<Inventory>> = LazyLock::new(|| Arc::new(generate(PROCEDURES)));

/// The index every query bench uses, built once.
static INDEX: LazyLock<ProcedureIndex> = LazyLock::new(|| {
    let started = std::time::Instant::now();
    let index = ProcedureIndex::build(INVENTORY.clone());
    let elapsed = started.elapsed();
    report(&INVENTORY, &index, elapsed);
    index
});

// ---------------------------------------------------------------------------
// Queries: the completion hot path.
// ---------------------------------------------------------------------------

fn query(bencher: Bencher, prefix: &'static str) {
    let index = &*INDEX;
    bencher.bench(|| index.candidates.query(black_box(prefix)));
}

/// Empty prefix: every candidate matches.
#[divan::bench]
fn query_empty(bencher: Bencher) {
    query(bencher, "");
}

/// One-character prefix: a large range (`G…` and `g…` names).
#[divan::bench]
fn query_g(bencher: Bencher) {
    query(bencher, "g");
}

/// Three-character prefix (`parse_…`, `Parse…`, `PARAM…`).
#[divan::bench]
fn query_par(bencher: Bencher) {
    query(bencher, "par");
}

/// The address prefix: every address matches.
#[divan::bench]
fn query_0x(bencher: Bencher) {
    query(bencher, "0x");
}

/// Extra: the mangled-name prefix, ~300k matches that sort after every
/// address and every capitalised name in code-point order.
#[divan::bench]
fn query_zn(bencher: Bencher) {
    query(bencher, "_zn");
}

// ---------------------------------------------------------------------------
// Index build: slow, so few samples of one iteration each.
// ---------------------------------------------------------------------------

/// `ProcedureIndex::build` over the whole inventory (name counting, address
/// formatting, keys, two sorts). The previous index is dropped untimed.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn index_build(bencher: Bencher) {
    let inventory = &*INVENTORY;
    bencher
        .with_inputs(|| inventory.clone())
        .bench_values(ProcedureIndex::build);
}

// ---------------------------------------------------------------------------
// The match key.
// ---------------------------------------------------------------------------

/// ASCII fast path: lowercase copy.
#[divan::bench]
fn key_ascii(bencher: Bencher) {
    bencher.bench(|| key(black_box("GetWindowTextW")));
}

/// Full chain: NFD, fold, NFKD, fold, NFKC, ignorables, fixed-point check.
#[divan::bench]
fn key_non_ascii(bencher: Bencher) {
    bencher.bench(|| key(black_box("Größe_Berechnen")));
}

// ---------------------------------------------------------------------------
// Deterministic inventory generation.
// ---------------------------------------------------------------------------

/// xorshift64* (Vigna): small, fast, good enough for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-enough value in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }

    /// True with probability `percent`/100.
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// Skewed towards the front of `items` (min of two draws), like real
    /// identifier vocabularies where `get`/`set`/`is` dominate.
    fn pick_skewed<'a>(&mut self, items: &[&'a str]) -> &'a str {
        let a = self.below(items.len());
        let b = self.below(items.len());
        items[a.min(b)]
    }
}

/// Identifier words, most common first.
#[rustfmt::skip]
const WORDS: &[&str] = &[
    "get", "set", "is", "parse", "create", "init", "read", "write", "open", "close", "update",
    "handle", "find", "add", "remove", "load", "save", "to", "from", "check", "process", "alloc",
    "free", "copy", "compare", "visit", "emit", "make", "build", "new", "drop", "clone", "window",
    "text", "header", "buffer", "file", "string", "event", "thread", "lock", "mutex", "queue",
    "node", "tree", "map", "insert", "render", "draw", "config", "socket", "send", "recv",
    "destroy", "value", "index", "count", "size", "length", "key", "entry", "table", "hash",
    "cache", "flush", "reset", "start", "stop", "run", "exec", "call", "decode", "encode",
    "compress", "validate", "format", "print", "log", "error", "state", "context", "device",
    "driver", "register", "memory", "page", "frame", "block", "stream", "packet", "request",
    "response", "client", "server", "session", "token", "user", "path", "name", "type", "class",
    "object", "list", "array", "vector", "matrix", "point", "rect", "color", "image", "font",
    "glyph", "layout", "widget", "menu", "button", "dialog", "input", "output", "param", "parent",
    "partition", "time", "timer", "clock", "date", "task", "job", "worker", "pool", "signal",
    "slot", "message", "graph", "grid", "group", "guard", "global", "generic",
];

/// Win32-style suffixes for CamelCase names.
const CAMEL_SUFFIXES: &[&str] = &["", "", "", "", "W", "A", "Ex", "ExW", "2", "Internal"];

/// Path segments of mangled names.
#[rustfmt::skip]
const NAMESPACES: &[&str] = &[
    "core", "alloc", "std", "fmt", "vec", "string", "io", "ptr", "mem", "iter", "slice", "ops",
    "rustc_middle", "rustc_ast", "rustc_hir", "ty", "hir", "mir", "serde", "de", "ser", "tokio",
    "sync", "collections", "hash_map", "btree", "raw_vec", "boxed", "rc", "cell", "option",
    "result", "llvm", "clang", "detail", "impl", "v1", "__1", "chrono", "regex",
];

/// C++ types that appear as class names in `_ZNK3std…` names.
#[rustfmt::skip]
const CXX_CLASSES: &[&str] = &[
    "vector", "basic_string", "map", "unordered_map", "shared_ptr", "unique_ptr", "deque", "list",
    "optional", "variant", "function", "allocator", "basic_ostream", "locale",
];

/// Itanium parameter encodings.
#[rustfmt::skip]
const CXX_PARAMS: &[&str] = &[
    "v", "i", "j", "m", "b", "PKc", "RKS_", "S_", "OS_", "PvS_", "iPKc", "RKSt6string", "d",
];

/// Non-ASCII stems: German, Greek, Cyrillic, Latin titlecase digraphs,
/// ligatures, CJK, and fullwidth (built separately).
const NON_ASCII: &[&str] = &[
    "größe_berechnen",
    "Größe_Prüfen",
    "straße_öffnen",
    "STRASSE_schließen",
    "übersetze_Datei",
    "Ärger_melden",
    "υπολογισμός_τιμής",
    "Σφάλμα_ανάγνωσης",
    "ΑΝΟΙΓΜΑ_αρχείου",
    "получить_значение",
    "Записать_Файл",
    "обработка_ошибок",
    "ǅemo",
    "ǅemo_učitaj",
    "ǈubav_init",
    "ﬁle_open",
    "café_crème",
    "naïve_résumé",
    "関数_初期化",
    "データ_読み込み",
    "Ωmega_\u{212A}elvin",
];

fn identifier(rng: &mut Rng, out: &mut String) {
    use std::fmt::Write as _;
    let words = 2 + rng.below(3);
    match rng.below(3) {
        // CamelCase: GetWindowTextW
        0 => {
            for _ in 0..words {
                let word = rng.pick_skewed(WORDS);
                let mut chars = word.chars();
                if let Some(first) = chars.next() {
                    out.push(first.to_ascii_uppercase());
                    out.push_str(chars.as_str());
                }
            }
            out.push_str(rng.pick(CAMEL_SUFFIXES));
        }
        // snake_case: parse_header_v2
        1 => {
            for i in 0..words {
                if i > 0 {
                    out.push('_');
                }
                out.push_str(rng.pick_skewed(WORDS));
            }
            if rng.chance(30) {
                let _ = write!(out, "_v{}", rng.below(5));
            }
        }
        // lowerCamel: readBufferSize
        _ => {
            for i in 0..words {
                let word = rng.pick_skewed(WORDS);
                if i == 0 {
                    out.push_str(word);
                } else {
                    let mut chars = word.chars();
                    if let Some(first) = chars.next() {
                        out.push(first.to_ascii_uppercase());
                        out.push_str(chars.as_str());
                    }
                }
            }
        }
    }
    // Keep the name space large enough that most names are unique.
    if rng.chance(60) {
        let _ = write!(out, "{}", rng.below(10_000));
    }
}

fn push_source_name(out: &mut String, name: &str) {
    use std::fmt::Write as _;
    let _ = write!(out, "{}{}", name.len(), name);
}

fn mangled(rng: &mut Rng, out: &mut String) {
    use std::fmt::Write as _;
    if rng.chance(60) {
        // Rust legacy mangling: _ZN4core3fmt5write17h0123456789abcdefE
        out.push_str("_ZN");
        for _ in 0..1 + rng.below(4) {
            push_source_name(out, rng.pick(NAMESPACES));
        }
        push_source_name(out, rng.pick_skewed(WORDS));
        let _ = write!(out, "17h{:016x}E", rng.next());
    } else {
        // Itanium C++: _ZNK3std6vectorIiSaIiEE4sizeEv and friends
        out.push_str(if rng.chance(40) { "_ZNK" } else { "_ZN" });
        for _ in 0..rng.below(3) {
            push_source_name(out, rng.pick(NAMESPACES));
        }
        push_source_name(out, rng.pick(CXX_CLASSES));
        if rng.chance(50) {
            out.push_str(rng.pick(&["IiSaIiEE", "IcSt11char_traitsIcESaIcEE", "IjE", "ImmE"]));
        }
        let _ = write!(out, "{}", rng.below(1000));
        let word = rng.pick_skewed(WORDS);
        let _ = write!(out, "{}{word}{}", word.len() + 1, rng.below(10));
        out.push('E');
        for _ in 0..1 + rng.below(3) {
            out.push_str(rng.pick(CXX_PARAMS));
        }
    }
}

fn non_ascii(rng: &mut Rng, out: &mut String) {
    use std::fmt::Write as _;
    if rng.chance(15) {
        // Fullwidth: Ｆｕｌｌｗｉｄｔｈ…
        let mut ascii = String::new();
        identifier(rng, &mut ascii);
        out.extend(ascii.chars().map(|c| match c {
            '!'..='~' => char::from_u32(c as u32 - 0x21 + 0xFF01).unwrap_or(c),
            _ => c,
        }));
    } else {
        out.push_str(rng.pick(NON_ASCII));
        let _ = write!(out, "_{}", rng.below(200_000));
    }
}

/// A deterministic inventory of `count` procedures, sorted by address.
fn generate(count: usize) -> Inventory {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut procedures = Vec::with_capacity(count);
    let mut address: u64 = 0x100000;
    // Every 97th name is remembered; ~2% of procedures reuse one of them.
    let mut reusable: Vec<String> = Vec::new();
    for i in 0..count {
        if i > 0 {
            address += match rng.below(100) {
                0..=59 => 16 * (1 + rng.below(8)) as u64,
                60..=94 => 16 * (1 + rng.below(256)) as u64,
                95..=98 => 1 + rng.below(15) as u64,
                _ => 0x1000 * (1 + rng.below(64)) as u64,
            };
        }
        let name = if rng.chance(1) {
            None
        } else if !reusable.is_empty() && rng.chance(2) {
            Some(reusable[rng.below(reusable.len())].clone())
        } else {
            let mut name = String::with_capacity(48);
            match rng.below(100) {
                0..=59 => identifier(&mut rng, &mut name),
                60..=89 => mangled(&mut rng, &mut name),
                _ => non_ascii(&mut rng, &mut name),
            }
            if i % 97 == 0 {
                reusable.push(name.clone());
            }
            Some(name)
        };
        let aliases = match &name {
            Some(primary) if rng.chance(1) => {
                vec![format!("{primary}@@V1"), format!("__{primary}")]
            }
            _ => Vec::new(),
        };
        procedures.push(Procedure {
            address,
            name: name.map(Into::into),
            aliases: aliases.into_iter().map(Into::into).collect(),
            size: None,
            sources: rea::providers::Sources::of(rea::providers::Source::Symbol),
            library: None,
            part_of: None,
        });
    }
    Inventory {
        procedures,
        truncated: false,
        non_utf8_names: 0,
        limitations: Vec::new(),
    }
}

/// Describes the generated data once, on stderr, so the figures can be read
/// against it.
fn report(inventory: &Inventory, index: &ProcedureIndex, elapsed: std::time::Duration) {
    let mut counts: HashMap<&str, u32> = HashMap::new();
    let mut non_ascii = 0usize;
    let mut mangled = 0usize;
    for p in &inventory.procedures {
        for name in p.name.iter().chain(&p.aliases) {
            *counts.entry(name).or_default() += 1;
        }
        if let Some(name) = &p.name {
            if !name.is_ascii() {
                non_ascii += 1;
            } else if name.starts_with("_Z") {
                mangled += 1;
            }
        }
    }
    let unique = counts.values().filter(|&&c| c == 1).count();
    let named = inventory
        .procedures
        .iter()
        .filter(|p| p.name.is_some())
        .count();
    eprintln!(
        "inventory: {} procedures ({named} named: {mangled} mangled, {non_ascii} non-ASCII), \
         {} distinct names, {unique} unique; index: {} candidates, built in {:.2?}",
        inventory.procedures.len(),
        counts.len(),
        index.candidates.len(),
        elapsed,
    );
    for prefix in ["", "g", "par", "0x", "_zn"] {
        let page = index.candidates.query(prefix);
        eprintln!(
            "query {prefix:?}: total {}, first {:?}",
            page.total,
            page.values.first()
        );
    }
}
