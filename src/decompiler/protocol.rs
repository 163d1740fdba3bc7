//! The worker protocol: one JSON object per line each way. The worker opens
//! with a [`Hello`]; rea sends one [`Request::Load`], then any number of
//! [`Request::Decompile`]s, each answered by one [`Reply`]. A worker that
//! says another protocol or engine version is not used.

use serde::{Deserialize, Serialize};

use super::knowledge::Knowledge;

/// Bumped whenever a message changes shape.
pub const PROTOCOL_VERSION: u32 = 1;
/// The engine's crate version, pinned in `Cargo.toml`; part of every cache
/// key and Evidence record.
pub const ENGINE_VERSION: &str = "2.1.0";
/// The engine's name as answers and Evidence give it.
pub const ENGINE: &str = "ghidra-decompiler";
/// The descriptor a worker reads its document through (sealed, read-only).
pub const TARGET_FD: i32 = crate::ground::child::TARGET_FD;
/// The longest line either side accepts.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// The worker's first line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hello {
    pub protocol: u32,
    pub engine: String,
}

impl Hello {
    pub fn current() -> Hello {
        Hello {
            protocol: PROTOCOL_VERSION,
            engine: ENGINE_VERSION.to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "request", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Load the document on [`TARGET_FD`] and apply what rea knows.
    Load {
        knowledge: Box<Knowledge>,
        /// The engine's flow limit per procedure.
        max_instructions: u32,
    },
    /// Decompile the procedure starting at `address`.
    Decompile { address: u64 },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    Loaded {
        /// The engine's language id (`x86:LE:64:default:gcc`).
        language: String,
    },
    Decompiled(Box<Decompiled>),
    /// The engine refused (bad data, flow limit, no code): the message is
    /// the engine's, never bytes of the file.
    Failed {
        message: String,
    },
}

/// One procedure as C.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decompiled {
    pub lines: Vec<Line>,
    pub callees: Vec<Callee>,
    /// Addresses of the strings rea told the worker about that the C uses.
    pub strings: Vec<u64>,
}

/// One line of C and the instruction addresses its tokens come from,
/// ascending and distinct.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Line {
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<u64>,
}

/// A call the C makes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Callee {
    pub name: String,
    /// The callee's entry, or the import slot called through; `None` for a
    /// computed call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<u64>,
    pub call_site: u64,
}
