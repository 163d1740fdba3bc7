//! How rea matches things: case- and compatibility-insensitive prefix
//! matching over candidate sets, and bounded alignment of two sequences.
//!
//! Neutral ground between the session (which keeps a prepared index beside
//! each procedure inventory) and completion (which queries it); the
//! alignment is what `compare_functions` diffs listings with.

pub mod align;
pub mod index;
pub mod key;
mod min_tree;

pub use index::{CandidateIndex, CompletionPage, MAX_VALUES, complete, is_offerable};
