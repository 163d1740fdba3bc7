//! The guided prompt catalog: specification model, the one validator,
//! generated typed code, rendering and untrusted-data fences.
//!
//! The catalog knows nothing of sessions: rendering a prompt reads only the
//! catalog and the request's arguments.

pub mod args;
pub mod engine;
pub mod fence;
pub mod generated;
pub mod hidden;
pub mod render;
pub mod spec;
pub mod suggest;
pub mod validate;
