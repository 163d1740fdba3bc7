//! Helpers more than one tool uses, in one place: opening the document a
//! call reads, reading and writing the ledger from a tool, resolving procedures and addresses, and the compact
//! disassembly lines answers carry and comparisons read back.

pub(crate) mod document;
pub(crate) mod ledger;
pub(crate) mod listing;
pub(crate) mod procedures;
