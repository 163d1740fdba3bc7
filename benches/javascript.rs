//! JavaScript application analysis (`rea::javascript::analyze`, the engine
//! behind `analyze_javascript_application` and `rea analyze`): the real
//! electron-api-demos 2.0.1 app as a directory and as the `.asar` the
//! official packer makes (run `tests/fixtures/fetch.sh` first), and a
//! generated application of 2,000 modules to show how the analysis scales.
//! Run with `cargo bench --bench javascript`; see `benches/README.md`.
//!
//! Before divan starts, `main` analyses each input once, checks it gives
//! the graph the bench claims to measure (the directory and the archive
//! give the same graph; the generated app is complete), and prints its
//! size to stderr.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use rea::javascript::{Analysis, CoverageStatus, Options, Silent, analyze};

/// Modules in the generated application.
const MODULES: usize = 2_000;

fn main() {
    if fixture("electron-api-demos-2.0.1.asar").is_none() {
        eprintln!(
            "skipped: target/fixtures/electron-api-demos-2.0.1.asar is missing; run \
             tests/fixtures/fetch.sh"
        );
        return;
    }
    describe();
    divan::main();
    let _ = std::fs::remove_dir_all(GENERATED.path());
}

fn fixture(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/fixtures")
        .join(name);
    path.exists().then_some(path)
}

fn required(name: &str) -> PathBuf {
    fixture(name).unwrap_or_else(|| panic!("{name} is missing; run tests/fixtures/fetch.sh"))
}

fn run(path: &Path) -> Analysis {
    analyze(path, &Options::default(), &Silent).expect("the bench input analyses")
}

fn describe() {
    let dir = run(&required("electron-api-demos-2.0.1"));
    let asar = run(&required("electron-api-demos-2.0.1.asar"));
    assert_eq!(dir.graph_sha256, asar.graph_sha256, "dir and asar differ");
    let generated = run(GENERATED.path());
    assert_eq!(generated.coverage.status, CoverageStatus::Complete);
    for (name, a) in [
        ("demo dir", &dir),
        ("demo asar", &asar),
        ("generated", &generated),
    ] {
        eprintln!(
            "{name}: {} files seen, {} parsed, {} source bytes; {} nodes, {} edges",
            a.coverage.files_seen,
            a.coverage.files_parsed,
            a.statistics.source_bytes,
            a.nodes.len(),
            a.edges.len()
        );
    }
}

/// A generated Electron app: a main process that requires every module,
/// each module with an IPC handler, a sender, a URL and two imports.
static GENERATED: LazyLock<tempfile::TempDir> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).expect("src");
    std::fs::write(
        root.join("package.json"),
        r#"{"name":"generated","version":"1.0.0","main":"main.js","dependencies":{"electron":"^30.0.0"}}"#,
    )
    .expect("package.json");
    let mut main = String::from(
        "const { app, BrowserWindow } = require('electron')\nconst path = require('path')\n",
    );
    main.push_str(
        "app.whenReady().then(() => {\n  const win = new BrowserWindow({ webPreferences: { preload: path.join(__dirname, 'src/m0.js') } })\n  win.loadFile('index.html')\n})\n",
    );
    for i in 0..MODULES {
        let _ = writeln!(main, "require('./src/m{i}')");
        let next = (i + 1) % MODULES;
        let module = format!(
            "const {{ ipcMain, ipcRenderer }} = require('electron')\n\
             const peer = require('./m{next}')\n\
             const fs = require('fs')\n\
             ipcMain.handle('channel-{i}', async (event, arg) => peer.work(arg))\n\
             function send(x) {{ return ipcRenderer.invoke('channel-{next}', x) }}\n\
             module.exports = {{ work: (x) => fs.existsSync(x) ? 'https://example.com/{i}' : send(x) }}\n"
        );
        std::fs::write(root.join(format!("src/m{i}.js")), module).expect("module");
    }
    std::fs::write(root.join("main.js"), main).expect("main.js");
    std::fs::write(
        root.join("index.html"),
        "<html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'\"></head><body><script src=\"src/m1.js\"></script></body></html>",
    )
    .expect("index.html");
    dir
});

#[divan::bench(sample_count = 20)]
fn demo_directory(bencher: divan::Bencher) {
    let path = required("electron-api-demos-2.0.1");
    bencher.bench(|| run(&path));
}

#[divan::bench(sample_count = 20)]
fn demo_asar(bencher: divan::Bencher) {
    let path = required("electron-api-demos-2.0.1.asar");
    bencher.bench(|| run(&path));
}

#[divan::bench(sample_count = 10)]
fn generated_2000_modules(bencher: divan::Bencher) {
    let path = GENERATED.path().to_path_buf();
    bencher.bench(|| run(&path));
}
