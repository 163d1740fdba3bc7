use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::*;

const SECRET: &[u8] = b"OUTSIDE-THE-ROOT";

struct Fixture {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    root: PathBuf,
    outside: PathBuf,
    roots: Roots,
}

/// A root with `file`, `sub/inner`, `in_link -> file`, `out_link ->
/// ../outside/secret`, `abs_link -> /abs/outside/secret`, `loop_a <->
/// loop_b`, `dir_out -> outside dir`, and a FIFO.
fn fixture() -> Fixture {
    let root_dir = tempfile::tempdir().unwrap();
    let outside_dir = tempfile::tempdir().unwrap();
    let root = root_dir.path().canonicalize().unwrap();
    let outside = outside_dir.path().canonicalize().unwrap();
    std::fs::write(outside.join("secret"), SECRET).unwrap();
    std::fs::write(root.join("file"), b"inside").unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/inner"), b"inner").unwrap();
    fn link(target: impl AsRef<Path>, at: PathBuf) -> std::io::Result<()> {
        std::os::unix::fs::symlink(target, at)
    }
    link("file", root.join("in_link")).unwrap();
    link(outside.join("secret"), root.join("abs_link")).unwrap();
    let rel_out = Path::new("..")
        .join(outside.file_name().unwrap())
        .join("secret");
    link(rel_out, root.join("out_link")).unwrap();
    link("loop_b", root.join("loop_a")).unwrap();
    link("loop_a", root.join("loop_b")).unwrap();
    link(&outside, root.join("dir_out")).unwrap();
    mkfifo(&root.join("fifo"));
    let roots = Roots::open("read", std::slice::from_ref(&root)).unwrap();
    Fixture {
        _dirs: (root_dir, outside_dir),
        root,
        outside,
        roots,
    }
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

fn exchange(a: &Path, b: &Path) -> bool {
    let a = CString::new(a.as_os_str().as_bytes()).unwrap();
    let b = CString::new(b.as_os_str().as_bytes()).unwrap();
    // SAFETY: valid C strings; RENAME_EXCHANGE swaps two existing names.
    unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        ) == 0
    }
}

fn content(roots: &Roots, path: &Path) -> Result<Vec<u8>, OpenError> {
    roots.open_file(path)?.read_bounded(1 << 20)
}

#[test]
fn files_inside_open_and_symlinks_stay_inside() {
    let f = fixture();
    assert_eq!(content(&f.roots, &f.root.join("file")).unwrap(), b"inside");
    assert_eq!(
        content(&f.roots, &f.root.join("in_link")).unwrap(),
        b"inside"
    );
    assert_eq!(
        content(&f.roots, &f.root.join("sub/../file")).unwrap(),
        b"inside"
    );
    assert_eq!(
        content(&f.roots, &f.root.join("./sub/inner")).unwrap(),
        b"inner"
    );
    for escape in ["out_link", "abs_link", "dir_out/secret"] {
        let err = content(&f.roots, &f.root.join(escape)).unwrap_err();
        assert!(
            matches!(err, OpenError::OutsideRoots { label: "read", .. }),
            "{escape}: {err}"
        );
    }
    let err = content(&f.roots, &f.outside.join("secret")).unwrap_err();
    assert!(matches!(err, OpenError::OutsideRoots { label: "read", .. }));
    let sneaky = f
        .root
        .join("..")
        .join(f.outside.file_name().unwrap())
        .join("secret");
    assert!(matches!(
        content(&f.roots, &sneaky).unwrap_err(),
        OpenError::OutsideRoots { label: "read", .. }
    ));
}

#[test]
fn loops_fifos_and_odd_names_are_refused_without_blocking() {
    let f = fixture();
    let err = content(&f.roots, &f.root.join("loop_a")).unwrap_err();
    assert!(matches!(err, OpenError::NotRegular { .. }), "{err}");
    let err = content(&f.roots, &f.root.join("fifo")).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} is a FIFO, not a regular file",
            f.root.join("fifo").display()
        )
    );
    let long = f.root.join("x".repeat(300));
    assert!(content(&f.roots, &long).is_err());
    let missing = content(&f.roots, &f.root.join("nope")).unwrap_err();
    assert!(matches!(missing, OpenError::NotFound { .. }));
    // A directory is a directory, never a file.
    assert!(matches!(
        content(&f.roots, &f.root.join("sub")).unwrap_err(),
        OpenError::NotRegular { .. }
    ));
    assert!(f.roots.open_dir(&f.root.join("sub")).is_ok());
    assert!(f.roots.open_dir(&f.root).is_ok());
}

#[test]
fn unconfined_opens_refuse_special_files_too() {
    let f = fixture();
    let none = Roots::default();
    assert_eq!(content(&none, &f.outside.join("secret")).unwrap(), SECRET);
    let err = content(&none, &f.root.join("fifo")).unwrap_err();
    assert!(matches!(err, OpenError::NotRegular { .. }));
    let err = none.open_file(Path::new("/dev/null")).unwrap_err();
    assert!(err.to_string().contains("a character device"), "{err}");
}

#[test]
fn directories_walk_beneath_their_handle() {
    let f = fixture();
    let dir = f.roots.open_dir(&f.root).unwrap();
    let (entries, more) = dir.entries(100).unwrap();
    assert!(!more);
    let names: Vec<_> = entries
        .iter()
        .map(|e| e.name.to_string_lossy().into_owned())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let kind = |n: &str| entries.iter().find(|e| e.name == n).unwrap().kind;
    assert_eq!(kind("sub"), EntryKind::Dir);
    assert_eq!(kind("file"), EntryKind::File);
    assert_eq!(kind("in_link"), EntryKind::Symlink);
    assert_eq!(kind("fifo"), EntryKind::Other);
    // A capped listing says so (which entries it holds is the directory's order).
    let (two, more) = dir.entries(2).unwrap();
    assert_eq!((two.len(), more), (2, true));
    assert_eq!(
        dir.read_link(Path::new("abs_link")).unwrap(),
        f.outside.join("secret")
    );
    // No symlink anywhere: even one that stays inside is refused.
    assert!(dir.open_no_symlinks(Path::new("sub/inner")).is_ok());
    let err = dir.open_no_symlinks(Path::new("in_link")).unwrap_err();
    assert!(matches!(err, OpenError::NotRegular { .. }));
    let err = dir
        .open_no_symlinks(Path::new("dir_out/secret"))
        .unwrap_err();
    // A symlinked directory on the way is not followed: the kernel answers
    // that the component is not a directory.
    assert!(matches!(err, OpenError::NotFound { .. }), "{err}");
    assert!(dir.open_no_symlinks(Path::new("../x")).is_err());
}

#[test]
fn writes_stay_beneath_the_write_root() {
    let f = fixture();
    let roots = Roots::open("write", std::slice::from_ref(&f.root)).unwrap();
    let (dir, name) = roots.open_parent(&f.root.join("sub/out.json")).unwrap();
    let target = WriteTarget { dir, name };
    write_atomically(&target, b"one", false).unwrap();
    let again = write_atomically(&target, b"two", false).unwrap_err();
    assert_eq!(again.kind(), std::io::ErrorKind::AlreadyExists);
    write_atomically(&target, b"three", true).unwrap();
    assert_eq!(
        std::fs::read(f.root.join("sub/out.json")).unwrap(),
        b"three"
    );
    let leftovers = std::fs::read_dir(f.root.join("sub"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".rea-tmp-")
        })
        .count();
    assert_eq!(leftovers, 0);
    let err = roots
        .open_parent(&f.root.join("dir_out/x.json"))
        .unwrap_err();
    assert!(matches!(
        err,
        OpenError::OutsideRoots { label: "write", .. }
    ));
}

/// Runs `swap` in a loop on another thread while `probe` runs for `for_`.
fn race(for_: Duration, swap: impl Fn() + Send + 'static, mut probe: impl FnMut()) -> u64 {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let swapper = std::thread::spawn(move || {
        while !flag.load(Ordering::Relaxed) {
            swap();
        }
    });
    let start = Instant::now();
    let mut calls = 0;
    while start.elapsed() < for_ {
        probe();
        calls += 1;
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    calls
}

#[test]
fn a_symlink_swapped_in_never_leads_outside() {
    let f = fixture();
    let file = f.root.join("target");
    std::fs::write(&file, b"inside").unwrap();
    let swap = f.root.join("swap");
    std::os::unix::fs::symlink(f.outside.join("secret"), &swap).unwrap();
    let (a, b) = (file.clone(), swap.clone());
    let mut opened = 0;
    let calls = race(
        Duration::from_secs(2),
        move || {
            exchange(&a, &b);
        },
        || {
            if let Ok(bytes) = content(&f.roots, &file) {
                assert_ne!(bytes, SECRET, "the outside file was read");
                opened += 1;
            }
        },
    );
    assert!(calls > 100, "{calls} calls");
    assert!(opened > 0, "the inside file never opened in {calls} calls");
}

#[test]
fn a_directory_swapped_for_a_symlink_never_leads_outside() {
    let f = fixture();
    std::fs::create_dir(f.root.join("d")).unwrap();
    std::fs::write(f.root.join("d/secret"), b"inside").unwrap();
    std::os::unix::fs::symlink(&f.outside, f.root.join("d_swap")).unwrap();
    let (a, b) = (f.root.join("d"), f.root.join("d_swap"));
    let path = f.root.join("d/secret");
    race(
        Duration::from_secs(2),
        move || {
            exchange(&a, &b);
        },
        || {
            if let Ok(bytes) = content(&f.roots, &path) {
                assert_ne!(bytes, SECRET, "the outside directory was read");
            }
        },
    );
}

#[test]
fn a_fifo_swapped_in_never_blocks() {
    let f = fixture();
    let file = f.root.join("target");
    std::fs::write(&file, b"inside").unwrap();
    let (a, b) = (file.clone(), f.root.join("fifo"));
    let mut refused = 0;
    let calls = race(
        Duration::from_secs(2),
        move || {
            exchange(&a, &b);
        },
        || match content(&f.roots, &file) {
            Ok(bytes) => assert_eq!(bytes, b"inside"),
            Err(e) => {
                assert!(
                    matches!(e, OpenError::NotRegular { .. } | OpenError::NotFound { .. }),
                    "{e}"
                );
                refused += 1;
            }
        },
    );
    // Had an open blocked, the loop would never have come back.
    assert!(calls > 100, "{calls} calls");
    let _ = refused;
}

fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("file".to_string()),
        Just("sub".to_string()),
        Just("inner".to_string()),
        Just("..".to_string()),
        Just(".".to_string()),
        Just("in_link".to_string()),
        Just("out_link".to_string()),
        Just("abs_link".to_string()),
        Just("loop_a".to_string()),
        Just("dir_out".to_string()),
        Just("secret".to_string()),
        Just("fifo".to_string()),
        "[a-z]{1,300}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Whatever the path shape, a confined open never yields the outside
    /// file and never blocks.
    #[test]
    fn no_path_shape_reads_outside(parts in proptest::collection::vec(component(), 0..8), via_outside in any::<bool>()) {
        let f = fixture();
        // Either the root as named, or reached with `..` from outside it.
        let mut path = if via_outside {
            f.outside.join("..").join(f.root.file_name().unwrap())
        } else {
            f.root.clone()
        };
        for p in &parts {
            path.push(p);
        }
        if let Ok(bytes) = content(&f.roots, &path) {
            prop_assert_ne!(bytes, SECRET.to_vec());
        }
        if let Ok(dir) = f.roots.open_dir(&path) {
            prop_assert!(dir.open_file(Path::new("secret")).map_or(true, |s| s.read_bounded(64).unwrap() != SECRET));
        }
    }
}
