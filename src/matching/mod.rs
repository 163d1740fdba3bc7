//! Case- and compatibility-insensitive prefix matching over candidate sets.
//!
//! Neutral ground between the session (which keeps a prepared index beside
//! each procedure inventory) and completion (which queries it).

pub mod index;
pub mod key;
mod min_tree;

pub use index::{CandidateIndex, CompletionPage, MAX_VALUES, complete, is_offerable};
