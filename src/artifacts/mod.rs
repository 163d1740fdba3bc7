//! Artifact inventory: a bounded, content-addressed graph of what an
//! archive, bundle or universal binary holds. Nothing is extracted to disk
//! and nothing is executed. See ARCHITECTURE.md ("src/artifacts/").

pub mod model;

pub use model::*;
