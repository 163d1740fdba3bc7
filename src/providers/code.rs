//! Provider-neutral results of code analysis: decoded instructions, basic
//! blocks, references and function dossiers.
//!
//! The native provider (iced-x86, yaxpeax-arm) and the radare2 provider both
//! produce these types, so the tools above them answer the same shape
//! whichever provider is bound. Addresses are plain `u64` here; the tool
//! layer spells them with [`super::format_address`].

/// Instruction set of a document's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arch {
    X86,
    X86_64,
    Aarch64,
}

impl Arch {
    pub fn as_str(self) -> &'static str {
        match self {
            Arch::X86 => "x86",
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "arm64",
        }
    }

    /// Largest instruction, in bytes.
    pub fn max_instruction_len(self) -> usize {
        match self {
            Arch::X86 | Arch::X86_64 => 15,
            Arch::Aarch64 => 4,
        }
    }
}

/// How control leaves one instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flow {
    /// Continues with the next instruction only.
    Sequential,
    /// Unconditional direct branch.
    Jump {
        target: u64,
    },
    /// Conditional direct branch; falls through when not taken.
    ConditionalJump {
        target: u64,
    },
    /// Branch through a register or memory: target unknown statically.
    IndirectJump,
    /// Direct call; execution resumes at the next instruction.
    Call {
        target: u64,
    },
    /// Call through a register or memory.
    IndirectCall,
    Return,
    /// Ends execution on this path: `hlt`, `ud2`, `int3`, `brk`, `udf`, or an
    /// undecodable instruction.
    Stop,
}

impl Flow {
    /// Whether the next instruction in memory can run after this one.
    pub fn falls_through(self) -> bool {
        matches!(
            self,
            Flow::Sequential
                | Flow::ConditionalJump { .. }
                | Flow::Call { .. }
                | Flow::IndirectCall
        )
    }

    /// Whether this instruction ends a basic block.
    pub fn ends_block(self) -> bool {
        !matches!(
            self,
            Flow::Sequential | Flow::Call { .. } | Flow::IndirectCall
        )
    }
}

/// What a reference from an instruction to an address does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RefKind {
    Call,
    Jump,
    ConditionalJump,
    /// Loads from the address.
    Read,
    /// Stores to the address.
    Write,
    /// Takes the address (x86 `lea`, AArch64 `adr`/`adrp`+`add`), e.g. to
    /// pass a string pointer.
    Address,
}

impl RefKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RefKind::Call => "call",
            RefKind::Jump => "jump",
            RefKind::ConditionalJump => "conditional_jump",
            RefKind::Read => "read",
            RefKind::Write => "write",
            RefKind::Address => "address",
        }
    }

    /// Code references (branches and calls) as opposed to data references.
    pub fn is_code(self) -> bool {
        matches!(
            self,
            RefKind::Call | RefKind::Jump | RefKind::ConditionalJump
        )
    }
}

/// One reference: the instruction at `from` refers to `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Xref {
    pub from: u64,
    pub to: u64,
    pub kind: RefKind,
}

/// A data address an instruction computes or accesses, resolved statically
/// (x86 RIP-relative or absolute memory operands; AArch64 `adr`, literal
/// loads, and `adrp` paired with a following `add`/`ldr`/`str`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataReference {
    pub target: u64,
    /// `Read`, `Write` or `Address`; `Call` or `Jump` for an x86 indirect
    /// branch through a static slot (`call [rip + slot]`).
    pub kind: RefKind,
}

/// One decoded instruction, as text for people and as facts for analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    pub address: u64,
    pub bytes: Vec<u8>,
    /// Lowercase, e.g. `mov`, `bl`.
    pub mnemonic: String,
    /// Lowercase operands in Intel (x86) or ARM syntax; numbers in `0x` hex.
    pub operands: String,
    pub flow: Flow,
    pub data: Option<DataReference>,
}

/// How a basic block continues into a successor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    Fallthrough,
    Jump,
    ConditionalTaken,
    ConditionalNotTaken,
}

impl EdgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Fallthrough => "fallthrough",
            EdgeKind::Jump => "jump",
            EdgeKind::ConditionalTaken => "conditional_taken",
            EdgeKind::ConditionalNotTaken => "conditional_not_taken",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub target: u64,
    pub kind: EdgeKind,
}

/// A maximal straight-line run of instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BasicBlock {
    pub start: u64,
    /// Address just past the last instruction.
    pub end: u64,
    pub instruction_count: usize,
    pub successors: Vec<Edge>,
}

/// A direct call: the instruction at `at` calls `target`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallSite {
    pub at: u64,
    pub target: u64,
}

/// How a call edge transfers control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CallKind {
    /// A call (`call`, `bl`, or `call [slot]` through an import slot).
    Call,
    /// A jump to another procedure's start (`jmp f`, `b f`, `jmp [slot]`):
    /// a tail call, which returns to the caller's caller.
    TailCall,
}

impl CallKind {
    /// The call edge a reference of this kind makes, if any.
    pub fn of(kind: RefKind) -> Option<CallKind> {
        match kind {
            RefKind::Call => Some(CallKind::Call),
            RefKind::Jump | RefKind::ConditionalJump => Some(CallKind::TailCall),
            RefKind::Read | RefKind::Write | RefKind::Address => None,
        }
    }
}

/// One edge of the direct call graph, at one call instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallEdge {
    /// Entry of the procedure containing the call; `None` when the call is
    /// in code no procedure's extent covers.
    pub caller: Option<u64>,
    /// Address of the call instruction.
    pub at: u64,
    /// Entry of the called procedure.
    pub callee: u64,
    pub kind: CallKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UnresolvedKind {
    IndirectCall,
    IndirectJump,
}

impl UnresolvedKind {
    pub fn as_str(self) -> &'static str {
        match self {
            UnresolvedKind::IndirectCall => "indirect_call",
            UnresolvedKind::IndirectJump => "indirect_jump",
        }
    }
}

/// A control transfer whose target is not known statically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Unresolved {
    pub at: u64,
    pub kind: UnresolvedKind,
}

/// What one provider read about one function: its code and where it leads.
/// Callers and the text of referenced strings are added by the tool layer
/// from the whole-binary indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionDossier {
    pub entry: u64,
    /// Exclusive end of the procedure's extent, when known.
    pub end: Option<u64>,
    pub instructions: Vec<Instruction>,
    pub blocks: Vec<BasicBlock>,
    /// Direct calls, in address order.
    pub callees: Vec<CallSite>,
    /// Data references (`Read`, `Write`, `Address`), in address order.
    pub references: Vec<Xref>,
    pub unresolved: Vec<Unresolved>,
    /// True when `max_instructions` (or the extent) cut the listing short.
    pub truncated: bool,
    pub limitations: Vec<String>,
}
