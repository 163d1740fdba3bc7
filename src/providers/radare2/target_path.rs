//! Which file paths may be handed to radare2.
//!
//! The path never enters a radare2 command: it travels as an argument
//! (`r2 … FILE`, `rea radare2-host … -- FILE`) and from there to
//! `r_core_file_open` as data, so `;`, `|`, `` ` ``, `@`, `~` or `!` in a file
//! name are just characters. What remains dangerous is radare2's I/O layer,
//! which reads `scheme://…` as a plugin URI (`malloc://`, `rap://`, `gdb://`,
//! some matched anywhere in the string, e.g. `zip://`), and argument parsing,
//! where a leading `-` is an option. So a path must be absolute (it starts
//! with `/`), must not contain `//` (hence no `://`), and must not contain
//! control characters, which would also corrupt the one-line protocol and
//! error messages.

use std::path::Path;

use super::Radare2Error;

/// Checks that radare2 will read `path` as a plain file. The session passes
/// a canonical path; the host checks again, since it can be run directly.
pub(crate) fn check_target_path(path: &Path) -> Result<(), Radare2Error> {
    let refuse = |reason: &str| {
        Err(Radare2Error::UnsafePath {
            path: path.display().to_string(),
            reason: reason.to_string(),
        })
    };
    let bytes = path.as_os_str().as_encoded_bytes();
    if !path.is_absolute() || bytes.first() != Some(&b'/') {
        return refuse("the path must be absolute");
    }
    if bytes.windows(2).any(|w| w == b"//") {
        return refuse("`//` (and so `scheme://`) selects a radare2 I/O plugin instead of a file");
    }
    if bytes.iter().any(|&b| b < 0x20 || b == 0x7f) {
        return refuse("the path contains control characters");
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn plain_absolute_paths_pass_even_with_command_characters() {
        for ok in [
            "/tmp/watcher.node",
            "/tmp/a;b|c.node",
            "/tmp/x`?e pwned`@0x0~y!z $(id).node",
            "/tmp/-rf.node",
            "/tmp/sp ace/ü.node",
        ] {
            assert!(check_target_path(Path::new(ok)).is_ok(), "{ok}");
        }
    }

    #[test]
    fn uris_relative_paths_and_controls_are_refused() {
        for bad in [
            "watcher.node",
            "-q",
            "malloc://512",
            "/tmp/zip://x",
            "/tmp//double",
            "/tmp/line\nbreak",
            "/tmp/tab\there",
            "/tmp/del\u{7f}",
        ] {
            let err = check_target_path(Path::new(bad)).unwrap_err();
            assert!(matches!(err, Radare2Error::UnsafePath { .. }), "{bad}");
            assert!(err.to_string().contains("copy or link"), "{err}");
        }
    }
}
