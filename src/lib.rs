//! rea: an MCP server for evidence-first reverse engineering.
//!
//! Data flows one way: transport → [`server`] → ([`catalog`] | [`completion`]
//! | [`tools`]) → [`session`] → [`providers`]. See ARCHITECTURE.md.

pub mod artifacts;
pub mod capture;
pub mod catalog;
pub mod completion;
pub mod decompiler;
pub mod ground;
pub mod javascript;
pub mod matching;
pub mod providers;
pub mod server;
pub mod session;
pub mod tools;
