//! The guided prompt catalog: specification model, the one validator,
//! generated typed code, rendering and untrusted-data fences.
//!
//! The catalog knows nothing of sessions: rendering a prompt reads only the
//! catalog and the request's arguments.

pub mod args;
pub mod engine;
pub mod fence;
pub mod generated;
pub mod render;
pub mod spec;
pub mod validate;

// The validator, engine and fence are also compiled into build.rs (through
// `#[path]`), where these two ground-floor modules sit beside them; here
// they are the ground floor's, under the same names.
pub use crate::ground::{hidden, suggest};
