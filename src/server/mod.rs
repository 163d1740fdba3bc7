//! The MCP surface: a hand-written rmcp `ServerHandler` over the prompt
//! catalog, completion, the tool catalog and the session.
//!
//! One [`ReaServer`] per connection (each owns its session; the end of the
//! connection drops it), all sharing one [`Hub`].

mod handler;
pub mod http;
pub mod hub;
pub mod log;
pub mod message;
pub mod reload;
pub mod sessions;
pub mod stdio;
pub mod tokens;
pub mod workspaces;

pub use handler::ReaServer;
pub use hub::{Hub, NOTIFY_TIMEOUT};
