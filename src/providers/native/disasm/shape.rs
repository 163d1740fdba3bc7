//! What an instruction does, in the few terms control-flow recovery needs:
//! padding between functions, and the pieces of a switch's jump table
//! (the bounding compare, the table's address, the indexed load, the add
//! of a base, the register jump).
//!
//! Registers are small numbers local to one architecture: on x86 the
//! full register (`eax` and `rax` are one), on AArch64 the register number
//! (`w3` and `x3` are one). Only instructions that fit a shape exactly get
//! one; everything else is [`Shape::Other`], which recovery treats as
//! "unknown effect".

/// A general register, numbered per architecture (see the module comment).
pub type Reg = u16;

/// Registers an instruction reads and writes among those a procedure's
/// entry receives from its caller only to preserve them (callee-saved
/// registers: x86 `rbx`, `rbp`, `r12`–`r15`, and on 32-bit x86 `esi`,
/// `edi`; AArch64 `x19`–`x29`) plus, on x86, the full `rax`/`eax` an
/// unwinder hands a landing pad. Bit `n` is register `n` of the
/// architecture's numbering (x86: `rax` 0 … `r15` 15; AArch64: `xn`).
///
/// A procedure's entry never reads one of these before writing it, except
/// to store it on the stack (saving it is not counted as a read); code
/// inside a procedure (a landing pad, a switch case) does.
///
/// `saves` are the registers it stores on the stack (`push rbx`, `stp
/// x29, x30, [sp, #-16]!`): an entry writes a callee-saved register only
/// after saving it. `moves_stack` says whether the instruction writes the
/// stack pointer (x86 only): an x86-64 entry must move it before it calls
/// anything, to keep the stack aligned for the callee.
///
/// `clobbers` are all the general registers it writes, of any class
/// (stack pointer excluded): what a reading that follows an argument
/// register through a few instructions needs to know.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Inherited {
    pub reads: u32,
    pub writes: u32,
    pub saves: u32,
    pub moves_stack: bool,
    pub clobbers: u32,
}

impl Inherited {
    /// Bit of x86's `rax`/`eax` in [`Inherited::reads`] and
    /// [`Inherited::writes`]: the exception pointer, not a callee-saved
    /// register.
    pub const EXCEPTION_POINTER: u32 = 1;
}

/// The unsigned comparisons that bound a switch index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsigned {
    /// `ja` / `b.hi`: taken when the index is greater.
    Above,
    /// `jae` / `b.hs`: taken when greater or equal.
    AboveOrEqual,
    /// `jbe` / `b.ls`: taken when less or equal.
    BelowOrEqual,
    /// `jb` / `b.lo`: taken when less.
    Below,
}

impl Unsigned {
    /// Number of table entries an index compared with `imm` can select.
    pub fn entries(self, imm: u64) -> Option<u64> {
        match self {
            Unsigned::Above | Unsigned::BelowOrEqual => imm.checked_add(1),
            Unsigned::AboveOrEqual | Unsigned::Below => Some(imm),
        }
    }
}

/// The recovery-relevant effect of one decoded instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Other,
    /// Bytes that decode as no instruction.
    Undecodable,
    /// Executes nothing of interest and is what assemblers put between
    /// functions: `nop` in any form, `int3`, zero bytes, AArch64 `nop` and
    /// zero words.
    Padding,
    /// `cmp reg, imm`.
    Compare {
        reg: Reg,
        imm: u64,
    },
    /// A conditional branch on an unsigned comparison.
    Branch(Unsigned),
    /// `reg = address`: `lea reg, [rip + x]`, `adr`, `adrp` (the page).
    AddressOf {
        reg: Reg,
        address: u64,
    },
    /// `dst = imm` (`mov rdi, 0x401820`, `movz x0, #0x10`).
    MoveImmediate {
        dst: Reg,
        imm: u64,
    },
    /// `dst = [base + disp]`, `width` bytes, no index: a load from a fixed
    /// slot (`mov rdi, [rip + x]`, where `base` is `None` and `disp` the
    /// slot's address; `ldr x0, [x0, #0xfe8]` after `adrp x0`).
    LoadFixed {
        dst: Reg,
        base: Option<Reg>,
        disp: u64,
        width: u8,
    },
    /// `dst = src + imm` (`add x1, x1, #0x120`, the low half after `adrp`).
    AddImmediate {
        dst: Reg,
        src: Reg,
        imm: u64,
    },
    /// `dst = [base + disp + (index << shift)]`, `width` bytes,
    /// sign-extended when `signed`.
    Load {
        dst: Reg,
        base: Option<Reg>,
        index: Reg,
        shift: u8,
        width: u8,
        signed: bool,
        disp: u64,
    },
    /// `dst = a + extend(b) << shift`, where `extend` sign-extends the low
    /// `extend` bytes of `b` (0: all of `b`).
    AddRegister {
        dst: Reg,
        a: Reg,
        b: Reg,
        shift: u8,
        extend: u8,
    },
    /// `jmp reg` / `br reg`.
    JumpRegister {
        reg: Reg,
    },
    /// `jmp [disp + (index << shift)]`, a `width`-byte absolute entry.
    JumpLoad {
        index: Reg,
        shift: u8,
        width: u8,
        disp: u64,
    },
}
