//! The built-in decompiler: C for any procedure rea lists, from
//! `ghidra-decompiler` (a Rust port of Ghidra's decompiler), which runs only
//! in rea's own worker processes ([`worker`], `rea decompile-worker`).
//!
//! The engine is contained, not trusted: it can abort on out-of-memory,
//! grow without bound inside one load, and has no cancel of its own. So a
//! worker runs under a memory cap, is killed at each procedure's deadline
//! or when the call is cancelled, dies with rea, and is recycled after a
//! number of calls ([`pool`]). rea feeds it what it knows ([`knowledge`]):
//! procedure starts, import names for stubs and slots, strings. What comes
//! back is lines of C, each with the instruction addresses it comes from
//! ([`view`] turns them into pages, outlines and address maps).

pub mod c_types;
pub mod client;
pub mod from_native;
pub mod idioms;
pub mod knowledge;
pub mod pool;
pub mod protocol;
pub mod view;
pub mod worker;

use std::sync::OnceLock;

pub use client::{Limits, WorkerFailure};
pub use pool::{Outcome, Pool, Source};

/// The process's pool: every session shares its workers and results.
pub fn shared() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(Pool::new)
}

/// `bytes` in an anonymous, sealed file a worker reads as its descriptor 3:
/// nobody can change it once handed over, and it needs no path.
pub fn sealed_copy(bytes: &[u8]) -> std::io::Result<std::fs::File> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    // SAFETY: memfd_create with a static NUL-terminated name; the new
    // descriptor is owned by the File.
    let mut file = unsafe {
        let fd = libc::memfd_create(
            c"rea-document".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        );
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        std::fs::File::from_raw_fd(fd)
    };
    file.write_all(bytes)?;
    let seals = libc::F_SEAL_WRITE | libc::F_SEAL_GROW | libc::F_SEAL_SHRINK | libc::F_SEAL_SEAL;
    // SAFETY: fcntl on a descriptor this function owns.
    if unsafe {
        libc::fcntl(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            libc::F_ADD_SEALS,
            seals,
        )
    } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    Ok(file)
}
