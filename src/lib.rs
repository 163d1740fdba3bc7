//! rea: an MCP server for evidence-first reverse engineering.

pub mod catalog;
