//! Atomic writes relative to an opened directory: the temporary file is
//! created beside the target with `O_EXCL | O_NOFOLLOW`, synced, then
//! renamed (or hard-linked, so an existing file is never replaced) within
//! the same directory handle. No step goes back to a path.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::OpenOptions;

use super::ConfinedDir;

/// Where a file is to be written: its opened parent and its name.
#[derive(Debug)]
pub struct WriteTarget {
    pub dir: ConfinedDir,
    pub name: OsString,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn temp_name(name: &OsStr) -> OsString {
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(format!(
        ".rea-tmp-{}-{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    temp
}

/// Writes `bytes` to `target` atomically. Without `overwrite`, an entry
/// already there (even one that appeared meanwhile) is
/// `ErrorKind::AlreadyExists`. The temporary file is removed on every
/// path out.
pub fn write_atomically(target: &WriteTarget, bytes: &[u8], overwrite: bool) -> io::Result<()> {
    let dir = target.dir.cap();
    let temp = temp_name(&target.name);
    let mut options = OpenOptions::new();
    options
        .write(true)
        .create_new(true)
        .follow(FollowSymlinks::No);
    let mut file = dir.open_with(&temp, &options)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            drop(file);
            if overwrite {
                dir.rename(&temp, dir, &target.name)
            } else {
                place_new(target, &temp)
            }
        });
    if let Err(e) = written {
        let _ = dir.remove_file(&temp);
        return Err(e);
    }
    // Make the new directory entry durable too.
    // SAFETY: fsync on a descriptor this handle owns.
    unsafe { libc::fsync(dir.as_raw_fd()) };
    Ok(())
}

/// Moves `temp` to the target only if nothing is there: a hard link fails
/// atomically when the name exists. On a file system without hard links
/// the check and the rename are two steps, the best it allows.
fn place_new(target: &WriteTarget, temp: &OsStr) -> io::Result<()> {
    let dir = target.dir.cap();
    match dir.hard_link(temp, dir, &target.name) {
        Ok(()) => dir.remove_file(temp),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(e),
        Err(_) if target.dir.entry_exists(&target.name) => Err(io::ErrorKind::AlreadyExists.into()),
        Err(_) => dir.rename(temp, dir, &target.name),
    }
}
