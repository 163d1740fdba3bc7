//! Analysis providers. Providers know nothing of MCP, prompts or the session:
//! they turn a file into documents, procedure inventories and overviews.
//!
//! The built-in [`native`] provider always works (pure Rust, `object` over a
//! memory map). Deep providers (radare2, later) are chosen explicitly or by
//! `auto`, never as a silent fallback.

pub mod demangle;
pub mod native;

/// The id of the built-in provider.
pub const NATIVE_PROVIDER_ID: &str = "native";

/// Executable container format of a target or document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    Elf,
    MachO,
    MachOUniversal,
    Pe,
    Coff,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Elf => "elf",
            Format::MachO => "mach-o",
            Format::MachOUniversal => "mach-o-universal",
            Format::Pe => "pe",
            Format::Coff => "coff",
        }
    }
}

/// One procedure of an inventory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Procedure {
    /// Virtual address as in the file (PE: image base + RVA; ELF: link-time).
    pub address: u64,
    /// Primary symbol name; `None` when no symbol names this address or its
    /// name is not valid UTF-8.
    pub name: Option<String>,
    /// Other symbol names at the same address, sorted.
    pub aliases: Vec<String>,
}

/// A document's complete procedure inventory, sorted by address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inventory {
    pub procedures: Vec<Procedure>,
    /// True when the file held more procedures than [`native::MAX_PROCEDURES`];
    /// the inventory then holds the lowest addresses only.
    pub truncated: bool,
    /// Symbol names skipped because they were not valid UTF-8.
    pub non_utf8_names: usize,
}

/// A segment (or, for COFF objects, a section) in an overview.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Segment {
    pub name: Option<String>,
    /// Lowercase `0x` hex.
    pub address: String,
    pub size: u64,
}

/// Summary facts of one document.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Overview {
    pub format: Format,
    pub architecture: String,
    pub endianness: &'static str,
    pub bits: u8,
    /// Lowercase `0x` hex; `None` for objects without an entry point.
    pub entry_point: Option<String>,
    pub segments: Vec<Segment>,
    pub segment_count: usize,
    pub section_count: usize,
    pub symbol_count: usize,
}

/// Why a provider could not read a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("cannot read {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("{path} is not an executable format rea reads (ELF, Mach-O, PE/COFF): {reason}")]
    UnsupportedFormat { path: String, reason: String },
    #[error("{path} is a malformed {format} file: {reason}")]
    Malformed {
        path: String,
        format: &'static str,
        reason: String,
    },
    #[error("no document named {name:?}; the target's documents are: {available}")]
    UnknownDocument { name: String, available: String },
}

/// Lowercase `0x`-prefixed hex without padding: the one address spelling.
pub fn format_address(address: u64) -> String {
    format!("{address:#x}")
}
