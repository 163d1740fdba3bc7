//! Analysis providers. Providers know nothing of MCP, prompts or the session:
//! they turn a file into documents, procedure inventories and overviews.
//!
//! The built-in [`native`] provider always works (pure Rust, `object` over a
//! memory map). Deep providers ([`radare2`]) are chosen explicitly or by
//! `auto`, never as a silent fallback.

pub mod code;
pub mod demangle;
pub mod interrupt;
pub mod limitations;
pub mod native;
pub mod radare2;

pub use crate::ground::shared_name::SharedName;

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
    pub name: Option<SharedName>,
    /// Other symbol names at the same address, sorted.
    pub aliases: Vec<SharedName>,
    /// Extent in bytes when a table states it (symbol size, `.eh_frame` FDE
    /// range, PE `.pdata` entry); `None` when only the start is known.
    pub size: Option<u64>,
    /// How the procedure was found (one or more ways).
    pub sources: Sources,
    /// For an imported function, the library the file binds it to, when
    /// the file says which: the import table's one copy, shared by every
    /// import of that library.
    pub library: Option<std::sync::Arc<str>>,
    /// For a fragment (a `.cold` or `.part` piece laid out apart), the
    /// start of the procedure it belongs to.
    pub part_of: Option<u64>,
}

/// One way a procedure can be found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// A defined function symbol of the symbol table.
    Symbol,
    /// A defined function symbol of the dynamic symbol table.
    DynamicSymbol,
    /// A PE export that points into code.
    Export,
    /// The entry point.
    Entry,
    /// An ELF `.eh_frame` FDE start.
    EhFrame,
    /// A Mach-O `LC_FUNCTION_STARTS` entry.
    FunctionStarts,
    /// A PE `.pdata` runtime function entry.
    Pdata,
    /// A pointer in ELF `.init_array`, `.fini_array` or `.preinit_array`.
    InitArray,
    /// Go's function table (`pclntab`), with the function's name.
    GoPclntab,
    /// The target of a direct call found by disassembly.
    CallTarget,
    /// radare2's function analysis.
    Radare2,
    /// An imported function: its stub, or its import slot.
    Import,
    /// A pointer to code stored in data (a relocation, or the aligned scan).
    CodePointer,
    /// Code whose address an instruction computes (`lea`, `adr`).
    AddressTaken,
    /// The target of a jump that leaves a procedure (a tail call).
    TailCall,
    /// A piece of another procedure laid out apart from it (`.cold`, `.part`).
    Fragment,
    /// Code no known procedure reaches, after padding.
    CodeGap,
    /// `main`, from the argument the C runtime's entry passes (an inference).
    CRuntimeMain,
}

impl Source {
    pub const ALL: [Source; 18] = [
        Source::Symbol,
        Source::DynamicSymbol,
        Source::Export,
        Source::Entry,
        Source::EhFrame,
        Source::FunctionStarts,
        Source::Pdata,
        Source::InitArray,
        Source::GoPclntab,
        Source::CallTarget,
        Source::Radare2,
        Source::Import,
        Source::CodePointer,
        Source::AddressTaken,
        Source::TailCall,
        Source::Fragment,
        Source::CodeGap,
        Source::CRuntimeMain,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Source::Symbol => "symbol",
            Source::DynamicSymbol => "dynamic_symbol",
            Source::Export => "export",
            Source::Entry => "entry",
            Source::EhFrame => "eh_frame",
            Source::FunctionStarts => "function_starts",
            Source::Pdata => "pdata",
            Source::InitArray => "init_array",
            Source::GoPclntab => "go_pclntab",
            Source::CallTarget => "call_target",
            Source::Radare2 => "radare2",
            Source::Import => "import",
            Source::CodePointer => "code_pointer",
            Source::AddressTaken => "address_taken",
            Source::TailCall => "tail_call",
            Source::Fragment => "fragment",
            Source::CodeGap => "code_gap",
            Source::CRuntimeMain => "c_runtime_main",
        }
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// A set of [`Source`]s, listed in declaration order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Sources(u32);

impl Sources {
    pub fn of(source: Source) -> Sources {
        Sources(source.bit())
    }

    pub fn insert(&mut self, source: Source) {
        self.0 |= source.bit();
    }

    pub fn union(self, other: Sources) -> Sources {
        Sources(self.0 | other.0)
    }

    pub fn contains(self, source: Source) -> bool {
        self.0 & source.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = Source> {
        Source::ALL.into_iter().filter(move |s| self.contains(*s))
    }

    /// Names in declaration order, for results.
    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(Source::as_str).collect()
    }
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
    /// Sentences about what discovery could not read (malformed tables,
    /// code the disassembler does not cover).
    pub limitations: Vec<String>,
}

/// A segment (or, for COFF objects, a section) in an overview.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Segment {
    pub name: Option<String>,
    /// Lowercase `0x` hex.
    pub address: String,
    pub size: u64,
}

/// Which provider made an observation: its id (what `open_binary` and
/// completion name), display name and version. Evidence records carry it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderIdentity {
    pub id: String,
    pub name: String,
    pub version: String,
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
    /// The link-time address of the file's first byte (its header), which
    /// is what a crash report's module load address corresponds to: link
    /// address = runtime address - load address + image_base. Lowercase
    /// `0x` hex; `None` when no segment maps the header (COFF objects).
    pub image_base: Option<String>,
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
    /// The call that asked stopped the work (see [`interrupt`]); nothing
    /// of it was kept.
    #[error("the analysis was interrupted before it finished; nothing of it was kept")]
    Interrupted,
}

/// Lowercase `0x`-prefixed hex without padding: the one address spelling.
pub fn format_address(address: u64) -> String {
    format!("{address:#x}")
}
