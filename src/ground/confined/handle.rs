//! Opened files and directories. A handle is the only way to read what it
//! names: nothing here goes back to a path outside its directory.

use std::ffi::{OsStr, OsString};
use std::fs::{File, FileType};
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, FileTypeExt};
use std::path::{Component, Path, PathBuf};

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};

use super::OpenError;

/// What an open found: a regular file or a directory. Anything else was
/// refused.
#[derive(Debug)]
pub enum Node {
    File(ConfinedFile),
    Dir(ConfinedDir),
}

impl Node {
    pub fn into_file(self) -> Result<ConfinedFile, OpenError> {
        match self {
            Node::File(f) => Ok(f),
            Node::Dir(d) => Err(OpenError::NotRegular {
                path: d.shown,
                kind: "a directory",
            }),
        }
    }

    pub fn into_dir(self) -> Result<ConfinedDir, OpenError> {
        match self {
            Node::Dir(d) => Ok(d),
            Node::File(f) => Err(OpenError::NotADirectory { path: f.shown }),
        }
    }

    pub fn shown(&self) -> &str {
        match self {
            Node::File(f) => &f.shown,
            Node::Dir(d) => &d.shown,
        }
    }
}

/// An opened regular file, its size when opened, and the path to show.
#[derive(Debug)]
pub struct ConfinedFile {
    file: File,
    size: u64,
    /// Permission bits `fstat` reported at open.
    mode: u32,
    shown: String,
}

impl ConfinedFile {
    pub fn file(&self) -> &File {
        &self.file
    }

    pub fn into_file(self) -> File {
        self.file
    }

    /// The size `fstat` reported at open.
    pub fn len(&self) -> u64 {
        self.size
    }

    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// Whether any execute bit was set at open.
    pub fn is_executable(&self) -> bool {
        self.mode & 0o111 != 0
    }

    /// Whether its group or others had any permission at open (read,
    /// write or execute): a secrets file must be its owner's alone (`0600`
    /// or `0400`), since one that others may write can be rewritten to
    /// hold their token.
    pub fn open_to_others(&self) -> bool {
        self.mode & 0o077 != 0
    }

    /// The path as requested, for messages.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    pub fn try_clone(&self) -> io::Result<ConfinedFile> {
        Ok(ConfinedFile {
            file: self.file.try_clone()?,
            size: self.size,
            mode: self.mode,
            shown: self.shown.clone(),
        })
    }

    /// At most `max` bytes from the start (positioned reads, so clones
    /// sharing the descriptor do not disturb each other).
    pub fn prefix(&self, max: u64) -> io::Result<Vec<u8>> {
        let want = usize::try_from(max.min(self.size)).unwrap_or(usize::MAX);
        let mut out = vec![0u8; want];
        let mut done = 0;
        while done < want {
            match self.file.read_at(&mut out[done..], done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        out.truncate(done);
        Ok(out)
    }

    /// The whole file, refused (`TooLarge`) when it is over `limit` bytes,
    /// also when it grew past the limit after it was opened.
    pub fn read_bounded(&self, limit: u64) -> Result<Vec<u8>, OpenError> {
        let too_large = |size| OpenError::TooLarge {
            path: self.shown.clone(),
            size,
            limit,
        };
        if self.size > limit {
            return Err(too_large(self.size));
        }
        let bytes = self
            .prefix(limit.saturating_add(1))
            .map_err(|e| OpenError::Io {
                path: self.shown.clone(),
                reason: e.to_string(),
            })?;
        if bytes.len() as u64 > limit {
            return Err(too_large(bytes.len() as u64));
        }
        Ok(bytes)
    }

    /// The lowercase hex sha256 of the whole file, read in 1 MiB positioned
    /// chunks. `on_chunk(done, total)` runs after each; when it returns
    /// false the hashing stops and the answer is `None`.
    pub fn sha256(&self, on_chunk: &mut dyn FnMut(u64, u64) -> bool) -> io::Result<Option<String>> {
        use sha2::{Digest, Sha256};
        const CHUNK: usize = 1 << 20;
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; CHUNK];
        let mut done = 0u64;
        loop {
            let n = match self.file.read_at(&mut buffer, done) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            hasher.update(&buffer[..n]);
            done += n as u64;
            if !on_chunk(done, self.size.max(done)) {
                return Ok(None);
            }
        }
        let digest = hasher.finalize();
        let mut text = String::with_capacity(64);
        for byte in digest {
            use std::fmt::Write as _;
            let _ = write!(text, "{byte:02x}");
        }
        Ok(Some(text))
    }

    /// A read-only map of the file.
    pub fn map(&self) -> io::Result<memmap2::Mmap> {
        // SAFETY: the map is read-only and private to this process. If
        // another process truncates the file while it is mapped, reads past
        // the new end fault (SIGBUS); that is the accepted price of not
        // copying large binaries into memory.
        unsafe { memmap2::Mmap::map(&self.file) }
    }

    /// A sequential reader from the start, by positioned reads (so clones
    /// sharing the descriptor's offset do not disturb each other).
    pub fn reader(&self) -> impl Read + '_ {
        Positioned {
            file: &self.file,
            offset: 0,
        }
    }
}

/// An opened directory: every open below it resolves beneath it.
#[derive(Debug)]
pub struct ConfinedDir {
    dir: Dir,
    shown: String,
}

/// What a directory entry is, as the directory reports it (symlinks are
/// not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: OsString,
    pub kind: EntryKind,
}

fn read_options(follow: FollowSymlinks) -> OpenOptions {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .follow(follow);
    options
}

/// What `fstat` says a non-regular file is.
fn kind_name(ft: FileType) -> &'static str {
    if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else {
        "a special file"
    }
}

/// Classifies a freshly opened descriptor by `fstat`: a regular file or a
/// directory is kept, anything else refused (the open itself was
/// non-blocking, so a FIFO or device never held the caller).
pub(crate) fn classify(file: File, shown: String) -> Result<Node, OpenError> {
    let meta = file.metadata().map_err(|e| OpenError::Io {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    let ft = meta.file_type();
    if ft.is_file() {
        Ok(Node::File(ConfinedFile {
            file,
            size: meta.len(),
            mode: std::os::unix::fs::PermissionsExt::mode(&meta.permissions()),
            shown,
        }))
    } else if ft.is_dir() {
        Ok(Node::Dir(ConfinedDir {
            dir: Dir::from_std_file(file),
            shown,
        }))
    } else {
        Err(OpenError::NotRegular {
            path: shown,
            kind: kind_name(ft),
        })
    }
}

/// Opens `path` with the non-blocking read options, no confinement (the
/// operator set no roots).
pub(crate) fn open_ambient(path: &Path, shown: String) -> Result<Node, OpenError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| OpenError::from_open(&shown, "read", "", e))?;
    classify(file, shown)
}

impl ConfinedDir {
    pub(crate) fn from_dir(dir: Dir, shown: String) -> ConfinedDir {
        ConfinedDir { dir, shown }
    }

    pub(crate) fn cap(&self) -> &Dir {
        &self.dir
    }

    /// The path as requested, for messages.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    fn child(&self, rel: &Path) -> String {
        if rel.as_os_str().is_empty() {
            self.shown.clone()
        } else {
            let joined = format!("{}/{}", self.shown.trim_end_matches('/'), rel.display());
            crate::ground::text::excerpt(&joined, crate::ground::text::PATH_CHARS)
        }
    }

    /// The directory's descriptor, for handing to another process.
    pub fn into_fd(self) -> std::os::fd::OwnedFd {
        self.dir.into_std_file().into()
    }

    pub fn try_clone(&self) -> io::Result<ConfinedDir> {
        Ok(ConfinedDir {
            dir: self.dir.try_clone()?,
            shown: self.shown.clone(),
        })
    }

    /// Opens `rel` beneath this directory. Symlinks are followed only
    /// while they stay beneath it; one that leaves is `OutsideRoots`.
    pub fn open(&self, rel: &Path) -> Result<Node, OpenError> {
        self.open_with(rel, FollowSymlinks::Yes, "read", &self.shown)
    }

    pub(crate) fn open_with(
        &self,
        rel: &Path,
        follow: FollowSymlinks,
        label: &'static str,
        roots: &str,
    ) -> Result<Node, OpenError> {
        let shown = self.child(rel);
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        let file = self
            .dir
            .open_with(rel, &read_options(follow))
            .map_err(|e| OpenError::from_open(&shown, label, roots, e))?;
        classify(file.into_std(), shown)
    }

    pub fn open_file(&self, rel: &Path) -> Result<ConfinedFile, OpenError> {
        self.open(rel)?.into_file()
    }

    pub fn open_dir(&self, rel: &Path) -> Result<ConfinedDir, OpenError> {
        self.open(rel)?.into_dir()
    }

    /// Opens `rel` beneath this directory without following a symlink in
    /// any component: for places that must never be reached through one.
    pub fn open_no_symlinks(&self, rel: &Path) -> Result<Node, OpenError> {
        let shown = self.child(rel);
        let mut names = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(name) => names.push(name),
                Component::CurDir => {}
                _ => {
                    return Err(OpenError::OutsideRoots {
                        path: shown,
                        label: "read",
                        roots: self.shown.clone(),
                    });
                }
            }
        }
        let Some((last, parents)) = names.split_last() else {
            return self.open(Path::new(""));
        };
        let mut dir: Option<Dir> = None;
        for name in parents {
            let at = dir.as_ref().unwrap_or(&self.dir);
            let next = at
                .open_dir_nofollow(name)
                .map_err(|e| OpenError::from_open(&shown, "read", &self.shown, e))?;
            dir = Some(next);
        }
        let at = dir.as_ref().unwrap_or(&self.dir);
        let file = at
            .open_with(last, &read_options(FollowSymlinks::No))
            .map_err(|e| OpenError::from_open(&shown, "read", &self.shown, e))?;
        classify(file.into_std(), shown)
    }

    /// The entries, sorted by name bytes, at most `cap` (and whether more
    /// were left unread). Kinds come from the directory itself, so
    /// symlinks are reported as symlinks.
    pub fn entries(&self, cap: u64) -> io::Result<(Vec<DirEntry>, bool)> {
        let mut out = Vec::new();
        let mut more = false;
        for item in self.dir.entries()? {
            if out.len() as u64 >= cap {
                more = true;
                break;
            }
            let item = item?;
            let ft = item.file_type()?;
            let kind = if ft.is_dir() {
                EntryKind::Dir
            } else if ft.is_file() {
                EntryKind::File
            } else if ft.is_symlink() {
                EntryKind::Symlink
            } else {
                EntryKind::Other
            };
            out.push(DirEntry {
                name: item.file_name(),
                kind,
            });
        }
        out.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        Ok((out, more))
    }

    /// What the symlink `rel` says, unresolved (absolute targets too).
    pub fn read_link(&self, rel: &Path) -> io::Result<PathBuf> {
        self.dir.read_link_contents(rel)
    }

    /// `lstat` of `rel` beneath this directory.
    pub fn symlink_metadata(&self, rel: &Path) -> io::Result<cap_std::fs::Metadata> {
        self.dir.symlink_metadata(rel)
    }

    /// Whether `name` exists here (without following a final symlink).
    pub fn entry_exists(&self, name: &OsStr) -> bool {
        self.dir.symlink_metadata(name).is_ok()
    }
}

impl std::os::fd::AsFd for ConfinedFile {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.file.as_fd()
    }
}

impl std::os::fd::AsFd for ConfinedDir {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.dir.as_fd()
    }
}

impl ConfinedFile {
    pub(crate) fn shown_as(mut self, shown: String) -> ConfinedFile {
        self.shown = shown;
        self
    }
}

impl ConfinedDir {
    pub(crate) fn shown_as(mut self, shown: String) -> ConfinedDir {
        self.shown = shown;
        self
    }
}

struct Positioned<'a> {
    file: &'a File,
    offset: u64,
}

impl Read for Positioned<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
    }
}
