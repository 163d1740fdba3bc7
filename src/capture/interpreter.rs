//! How a script runs, decided once. A capture never lets the kernel read a
//! `#!` line: the kernel reads it again at `execve`, after any check, so a
//! writer that flips the line in place (same inode) in between would pick
//! the interpreter. Instead the caller reads the first line of the opened
//! file here (through that descriptor, once), opens the interpreter (and
//! that interpreter's own, as the kernel follows them) where it allows,
//! and the host executes the last program of the chain from its descriptor,
//! with close-on-exec set (the kernel then refuses to treat it as a
//! script), giving it the script as `/dev/fd/3`: the argument vector the
//! kernel would have built, without the kernel choosing anything.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::ground::confined::{ConfinedFile, OpenError};

/// What the kernel reads of a file to find its `#!` line
/// (`BINPRM_BUF_SIZE`); a shorter file reads as padded with NULs.
pub const SHEBANG_BYTES: usize = 256;

/// Scripts a chain may hold before it is refused, the executable included
/// (the kernel stops rewriting after a few levels too).
pub const MAX_INTERPRETER_DEPTH: usize = 4;

/// The first line of a file, as the kernel's `binfmt_script` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// Not a script: the kernel runs it as a binary.
    Binary,
    /// A script naming `name`, with at most one `argument` (the rest of
    /// the line).
    Script {
        name: OsString,
        argument: Option<OsString>,
    },
    /// A `#!` line the kernel refuses to run (`ENOEXEC`): no name, or a
    /// name that may be cut off.
    Unrunnable,
}

/// Parses the start of a file exactly as the kernel does (Linux
/// `fs/binfmt_script.c`): the line ends at a newline or, without one, at
/// the buffer's end (refused when the name itself may be cut off); spaces
/// and tabs around the name are skipped; the name ends at a space, tab or
/// NUL; the argument is the rest of the line, trailing spaces and tabs
/// trimmed, up to any NUL.
pub fn parse(start: &[u8]) -> Head {
    let mut buf = [0u8; SHEBANG_BYTES];
    let taken = start.len().min(SHEBANG_BYTES);
    buf[..taken].copy_from_slice(&start[..taken]);
    if &buf[..2] != b"#!" {
        return Head::Binary;
    }
    let spacetab = |b: u8| b == b' ' || b == b'\t';
    let last = SHEBANG_BYTES - 1;
    // Both searches include `to`, as the kernel's do.
    let non_spacetab = |from: usize, to: usize| (from..=to).find(|&i| !spacetab(buf[i]));
    let terminator =
        |from: usize, to: usize| (from..=to).find(|&i| spacetab(buf[i]) || buf[i] == 0);
    let mut end = match buf.iter().position(|&b| b == b'\n') {
        Some(newline) => newline,
        None => {
            let Some(first) = non_spacetab(2, last) else {
                return Head::Unrunnable;
            };
            if terminator(first, last).is_none() {
                return Head::Unrunnable;
            }
            last
        }
    };
    while end > 2 && spacetab(buf[end - 1]) {
        end -= 1;
    }
    let name_start = match non_spacetab(2, end) {
        // The kernel: a name that starts at a NUL is no name (ENOEXEC).
        Some(i) if i != end && buf[i] != 0 => i,
        _ => return Head::Unrunnable,
    };
    let separator = terminator(name_start, end);
    let argument = separator
        .filter(|&s| buf[s] != 0)
        .and_then(|s| non_spacetab(s, end))
        .map(|from| {
            let text = &buf[from..end];
            let text = text.split(|&b| b == 0).next().unwrap_or(text);
            OsStr::from_bytes(text).to_os_string()
        });
    let name = &buf[name_start..separator.unwrap_or(end)];
    Head::Script {
        name: OsStr::from_bytes(name).to_os_string(),
        argument,
    }
}

/// The interpreter a script runs under.
#[derive(Debug)]
pub struct Interpreter {
    /// The last program of the chain, never a script when it was read:
    /// what runs.
    pub file: ConfinedFile,
    /// What comes before the script's own name in the argument vector,
    /// as the kernel would build it: the innermost interpreter's name and
    /// argument first, then each script of the chain by name with its
    /// interpreter's argument, outermost last.
    pub argv: Vec<OsString>,
}

/// A program to run: the file asked for and, when it is a script, the
/// interpreter that runs it.
#[derive(Debug)]
pub struct Program {
    pub file: ConfinedFile,
    pub interpreter: Option<Interpreter>,
}

/// Why a script's interpreter cannot be decided.
#[derive(Debug, thiserror::Error)]
pub enum InterpreterError {
    #[error("cannot be read: {0}")]
    Unreadable(io::Error),
    #[error("is not an absolute path")]
    Relative,
    #[error("is missing or cut off (the kernel would not run it either)")]
    Unrunnable,
    #[error("cannot be opened: {0}")]
    Open(OpenError),
    #[error("chain is deeper than {MAX_INTERPRETER_DEPTH} scripts")]
    TooDeep,
}

impl Program {
    /// Reads the first line of `file` (through its descriptor) and, for a
    /// script, opens each interpreter of the chain with `open`: the
    /// caller decides where an interpreter may be.
    pub fn resolve(
        file: ConfinedFile,
        open: &mut dyn FnMut(&Path) -> Result<ConfinedFile, OpenError>,
    ) -> Result<Program, InterpreterError> {
        let mut argv: Vec<OsString> = Vec::new();
        let mut interpreter: Option<ConfinedFile> = None;
        // One read more than scripts allowed: the last must be a binary.
        for _ in 0..=MAX_INTERPRETER_DEPTH {
            let current = interpreter.as_ref().unwrap_or(&file);
            let (name, argument) = match parse(&first_bytes(current)?) {
                Head::Binary => {
                    let interpreter = interpreter.map(|file| Interpreter { file, argv });
                    return Ok(Program { file, interpreter });
                }
                Head::Unrunnable => return Err(InterpreterError::Unrunnable),
                Head::Script { name, argument } => (name, argument),
            };
            let path = Path::new(&name);
            if !path.is_absolute() {
                return Err(InterpreterError::Relative);
            }
            interpreter = Some(open(path).map_err(InterpreterError::Open)?);
            // The kernel puts the interpreter and its argument in front of
            // what it had, whose first entry is the previous script's name.
            argv.splice(0..0, std::iter::once(name).chain(argument));
        }
        Err(InterpreterError::TooDeep)
    }
}

/// The first [`SHEBANG_BYTES`] of `file` as it is now, read through its
/// descriptor.
fn first_bytes(file: &ConfinedFile) -> Result<Vec<u8>, InterpreterError> {
    let mut buf = vec![0u8; SHEBANG_BYTES];
    let mut done = 0;
    while done < buf.len() {
        match file.file().read_at(&mut buf[done..], done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(InterpreterError::Unreadable(e)),
        }
    }
    buf.truncate(done);
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::confined::Roots;

    fn script(name: &str, argument: Option<&str>) -> Head {
        Head::Script {
            name: name.into(),
            argument: argument.map(Into::into),
        }
    }

    #[test]
    fn first_lines_parse_as_the_kernel_reads_them() {
        assert_eq!(parse(b"\x7fELF"), Head::Binary);
        assert_eq!(parse(b""), Head::Binary);
        assert_eq!(parse(b"#"), Head::Binary);
        assert_eq!(parse(b"#!/bin/sh\necho"), script("/bin/sh", None));
        assert_eq!(parse(b"#!  /bin/sh  \n"), script("/bin/sh", None));
        assert_eq!(
            parse(b"#!\t/usr/bin/env  -S a b \t\n"),
            script("/usr/bin/env", Some("-S a b"))
        );
        // No newline in a short file: its NUL padding ends the name.
        assert_eq!(parse(b"#!/bin/sh"), script("/bin/sh", None));
        assert_eq!(parse(b"#!/bin/sh\0 -x\n"), script("/bin/sh", None));
        assert_eq!(parse(b"#!/bin/sh -x\0y\n"), script("/bin/sh", Some("-x")));
        assert_eq!(parse(b"#!sh\n"), script("sh", None));
        assert_eq!(parse(b"#!\n"), Head::Unrunnable);
        assert_eq!(parse(b"#!   \n"), Head::Unrunnable);
        // A name that fills the buffer may be cut off: refused.
        let long = [b"#!/".as_slice(), &[b'a'; 300]].concat();
        assert_eq!(parse(&long), Head::Unrunnable);
        let spaces = [b"#!".as_slice(), &[b' '; 300]].concat();
        assert_eq!(parse(&spaces), Head::Unrunnable);
        // Without a newline, the argument is what fits before the last byte.
        let mut cut = b"#!/bin/sh ".to_vec();
        cut.extend([b'x'; 300]);
        let Head::Script { argument, .. } = parse(&cut) else {
            panic!("a script");
        };
        assert_eq!(argument.map(|a| a.len()), Some(SHEBANG_BYTES - 1 - 10));
    }

    #[test]
    fn a_chain_resolves_to_its_binary_with_the_kernels_argument_vector() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        std::fs::write(at("binary"), b"\x7fELF").unwrap();
        std::fs::write(at("inner"), format!("#!{} -b\n", at("binary").display())).unwrap();
        std::fs::write(at("outer"), format!("#!{} -a\n", at("inner").display())).unwrap();
        let roots = Roots::default();
        let mut open = |p: &Path| roots.open_file(p);
        let opened = |name: &str| roots.open_file(&at(name)).unwrap();

        let program = Program::resolve(opened("outer"), &mut open).unwrap();
        let interpreter = program.interpreter.expect("a script");
        let shown = |p: std::path::PathBuf| p.into_os_string();
        assert_eq!(
            interpreter.argv,
            [
                shown(at("binary")),
                "-b".into(),
                shown(at("inner")),
                "-a".into()
            ]
        );
        assert_eq!(first_bytes(&interpreter.file).unwrap(), b"\x7fELF");
        assert!(
            Program::resolve(opened("binary"), &mut open)
                .unwrap()
                .interpreter
                .is_none()
        );

        std::fs::write(at("loop"), format!("#!{}\n", at("loop").display())).unwrap();
        let looped = Program::resolve(opened("loop"), &mut open).unwrap_err();
        assert!(matches!(looped, InterpreterError::TooDeep), "{looped}");
        std::fs::write(at("relative"), b"#!binary\n").unwrap();
        let relative = Program::resolve(opened("relative"), &mut open).unwrap_err();
        assert!(matches!(relative, InterpreterError::Relative), "{relative}");
        std::fs::write(at("missing"), format!("#!{}\n", at("absent").display())).unwrap();
        let missing = Program::resolve(opened("missing"), &mut open).unwrap_err();
        assert!(matches!(missing, InterpreterError::Open(_)), "{missing}");
    }
}

#[cfg(test)]
mod any_bytes {
    use super::*;

    proptest::proptest! {
        /// Any start of a file reads as a binary, an unrunnable line or a
        /// script whose name is one non-empty word from the first
        /// `SHEBANG_BYTES`, never a panic.
        #[test]
        fn any_bytes_read_as_a_head_of_one_word(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400), shebang in proptest::bool::ANY) {
            let mut bytes = bytes;
            if shebang {
                bytes.splice(0..0, *b"#!");
            }
            if let Head::Script { name, argument } = parse(&bytes) {
                let name = name.as_bytes();
                proptest::prop_assert!(!name.is_empty() && name.len() < SHEBANG_BYTES);
                proptest::prop_assert!(!name.iter().any(|b| matches!(b, b' ' | b'\t' | b'\n' | 0)));
                if let Some(argument) = argument {
                    proptest::prop_assert!(!argument.as_bytes().iter().any(|b| matches!(b, b'\n' | 0)));
                }
            }
        }
    }
}
