//! The ground floor: what every layer may use and which imports nothing of
//! the project (`tests/layering.rs` holds it so). Canonical JSON, hex and
//! sha256, the rule for caller-chosen limits, bounded quoting of untrusted
//! text, the invisible-character rule, "did you mean", a name shared by
//! every view that holds it, and confined file access (open once beneath a root, read and map through that descriptor).

pub mod canonical;
pub mod child;
pub mod confined;
pub mod digest;
pub mod hidden;
pub mod limits;
pub mod shared_name;
pub mod suggest;
pub mod text;
