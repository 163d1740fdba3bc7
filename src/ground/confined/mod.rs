//! Confined file access: every file rea reads or writes from outside goes
//! through here. A path is resolved beneath an operator root once and
//! opened once; hashing, mapping, parsing and listing then use only that
//! descriptor, so a symlink or FIFO swapped in after a check can neither
//! lead outside the root nor block the session.
//!
//! How: the roots are opened as directory handles when the server starts
//! (`cap-std` `Dir`s). A path is located under a root (lexically, or
//! through its canonical form) and the rest is opened relative to the
//! root's handle with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`
//! where the kernel has it, and cap-std's component-by-component walk
//! where it does not, so symlinks inside a root are followed only while
//! they stay inside it. Every final open is `O_NONBLOCK | O_NOCTTY` and is
//! followed by `fstat` on the descriptor: anything but a regular file or a
//! directory is refused without blocking. Walks continue relative to
//! opened directory handles.
//!
//! The ground floor: this module imports nothing of the project but the
//! ground-floor `text`. Errors name the path as the caller gave it (its
//! first characters) and what was wrong with it, never
//! bytes read from a file.

mod error;
mod handle;
mod roots;
mod write;

#[cfg(test)]
mod tests;

pub use error::OpenError;
pub use handle::{ConfinedDir, ConfinedFile, DirEntry, EntryKind, Node};
pub use roots::{RootError, Roots};
pub use write::{WriteTarget, write_atomically};
