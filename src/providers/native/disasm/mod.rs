//! Native instruction decoding for x86, x86_64 (iced-x86) and AArch64
//! (yaxpeax-arm), producing the provider-neutral types of
//! [`crate::providers::code`].
//!
//! Two entry points share one decoder per architecture:
//!
//! * [`sweep`] is the hot path of whole-binary reference indexes: it yields
//!   [`Decoded`] facts (length, control flow, one resolved data reference)
//!   and never formats text or allocates per instruction.
//! * [`disassemble`] adds the text (`mnemonic`, `operands`) for people,
//!   for at most `max_instructions` instructions.
//!
//! Both are linear sweeps: every byte of the input belongs to exactly one
//! yielded instruction, undecodable bytes become [`Flow::Stop`] entries of
//! one unit (1 byte on x86, 4 on AArch64) and decoding resumes right after
//! them, so a sweep can never stall, skip or overlap bytes.
//!
//! Input is hostile: any bytes at any address. Nothing here panics, targets
//! use wrapping arithmetic, and [`disassemble`] allocates at most one entry
//! per input byte.

mod arm64;
pub mod shape;
mod x86;

#[cfg(test)]
mod oracle;
#[cfg(test)]
mod oracle_tests;
#[cfg(test)]
mod tests;

use object::{Architecture, Object as _};

use super::super::code::{Arch, DataReference, Flow, Instruction};

/// Mnemonic of an undecodable instruction, as objdump spells it.
pub const BAD_MNEMONIC: &str = "(bad)";

/// Architecture of a parsed document's code, or `None` if unsupported.
///
/// The x32 and ILP32 ABIs run the same instruction sets as x86_64 and
/// AArch64, so they decode with those.
pub fn arch_of(file: &object::File<'_>) -> Option<Arch> {
    match file.architecture() {
        Architecture::I386 => Some(Arch::X86),
        Architecture::X86_64 | Architecture::X86_64_X32 => Some(Arch::X86_64),
        Architecture::Aarch64 | Architecture::Aarch64_Ilp32 => Some(Arch::Aarch64),
        _ => None,
    }
}

/// The register holding a call's first integer argument under the
/// System V calling convention (`rdi`, `x0`); `None` on 32-bit x86,
/// which passes arguments on the stack.
pub fn first_argument(arch: Arch) -> Option<shape::Reg> {
    match arch {
        Arch::X86_64 => Some(x86::RDI),
        Arch::Aarch64 => Some(0),
        Arch::X86 => None,
    }
}

/// The Windows x64 and ARM64 calling conventions, as much of them as a
/// reading of the C runtime's handover to `main` needs; `None` on 32-bit
/// x86, which passes arguments on the stack.
pub fn windows_convention(arch: Arch) -> Option<Convention> {
    match arch {
        Arch::X86_64 => Some(x86::WINDOWS_X64),
        // AAPCS64: x0 first argument and result, x0–x18 and the link
        // register not preserved across a call.
        Arch::Aarch64 => Some(Convention {
            first_argument: 0,
            result: 0,
            volatile: ((1 << 19) - 1) | (1 << 30),
        }),
        Arch::X86 => None,
    }
}

/// Registers of one calling convention: the first integer argument, the
/// integer result, and (as [`shape::Inherited`] bits) those a call may
/// overwrite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Convention {
    pub first_argument: shape::Reg,
    pub result: shape::Reg,
    pub volatile: u32,
}

/// The [`shape::Inherited`] bit of a [`shape::Reg`].
pub fn register_bit(arch: Arch, reg: shape::Reg) -> u32 {
    match arch {
        Arch::X86_64 | Arch::X86 => x86::register_bit(reg),
        Arch::Aarch64 => 1u32.checked_shl(reg.into()).unwrap_or(0),
    }
}

/// Facts about one instruction, without text (fast path for whole-binary
/// indexes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    pub address: u64,
    /// Bytes covered: 1–15 on x86, 4 on AArch64 except for a trailing
    /// partial word.
    pub len: u8,
    pub flow: Flow,
    /// The one statically resolved data address, if any (see the
    /// architecture modules for the rules).
    pub data: Option<DataReference>,
}

/// Linear sweep over `bytes` mapped at `address`, calling `sink` once per
/// instruction in order.
///
/// Undecodable bytes yield `Decoded { flow: Flow::Stop, len: 1 (x86) / 4
/// (arm64), data: None }` and the sweep continues. A trailing partial
/// instruction yields one `Stop` of the remaining length. Never panics,
/// never allocates per instruction.
pub fn sweep(arch: Arch, bytes: &[u8], address: u64, mut sink: impl FnMut(Decoded)) {
    sweep_while(arch, bytes, address, |decoded| {
        sink(decoded);
        true
    });
}

/// [`sweep`] that stops as soon as `sink` returns `false` (after that
/// instruction); returns whether the sweep reached the end of `bytes`.
pub fn sweep_while(
    arch: Arch,
    bytes: &[u8],
    address: u64,
    mut sink: impl FnMut(Decoded) -> bool,
) -> bool {
    match arch {
        Arch::X86 | Arch::X86_64 => {
            let mut cursor = x86::Cursor::new(arch, bytes, address);
            while let Some(decoded) = cursor.next_decoded() {
                if !sink(decoded) {
                    return false;
                }
            }
        }
        Arch::Aarch64 => {
            let mut cursor = arm64::Cursor::new(bytes, address);
            while let Some(decoded) = cursor.next_decoded() {
                if !sink(decoded) {
                    return false;
                }
            }
        }
    }
    true
}

/// Decodes single instructions at chosen addresses of one byte range,
/// with their [`Shape`](shape::Shape): the random-access path recursive
/// descent needs. Reuses one decoder for every call.
pub struct Walker<'a> {
    cursor: WalkerCursor<'a>,
}

enum WalkerCursor<'a> {
    X86(x86::Cursor<'a>),
    Aarch64(arm64::Cursor<'a>),
}

impl<'a> Walker<'a> {
    pub fn new(arch: Arch, bytes: &'a [u8], address: u64) -> Self {
        let cursor = match arch {
            Arch::X86 | Arch::X86_64 => WalkerCursor::X86(x86::Cursor::new(arch, bytes, address)),
            Arch::Aarch64 => WalkerCursor::Aarch64(arm64::Cursor::new(bytes, address)),
        };
        Walker { cursor }
    }

    /// The instruction at `address`, or `None` outside the bytes.
    /// Undecodable bytes are a `Stop` with shape `Other` (AArch64 zero
    /// words are `Padding`).
    pub fn decode_at(&mut self, address: u64) -> Option<(Decoded, shape::Shape)> {
        match &mut self.cursor {
            WalkerCursor::X86(cursor) => {
                if !cursor.seek(address) {
                    return None;
                }
                let decoded = cursor.next_decoded()?;
                Some((decoded, cursor.shape()))
            }
            WalkerCursor::Aarch64(cursor) => {
                if !cursor.seek(address) {
                    return None;
                }
                let decoded = cursor.next_decoded()?;
                Some((decoded, cursor.shape()))
            }
        }
    }

    /// The [`Inherited`](shape::Inherited) registers the last decoded
    /// instruction reads and writes.
    pub fn inherited(&mut self) -> shape::Inherited {
        match &mut self.cursor {
            WalkerCursor::X86(cursor) => cursor.inherited(),
            WalkerCursor::Aarch64(cursor) => cursor.inherited(),
        }
    }

    /// The next instruction after the last one decoded (cheaper than a
    /// seek on x86, and AArch64 keeps its `adrp` pairing).
    pub fn decode_next(&mut self) -> Option<(Decoded, shape::Shape)> {
        match &mut self.cursor {
            WalkerCursor::X86(cursor) => {
                let decoded = cursor.next_decoded()?;
                Some((decoded, cursor.shape()))
            }
            WalkerCursor::Aarch64(cursor) => {
                let decoded = cursor.next_decoded()?;
                Some((decoded, cursor.shape()))
            }
        }
    }
}

/// Disassembles at most `max_instructions` instructions starting at
/// `address` (the start of `bytes`), stopping at the end of `bytes`; with
/// text.
///
/// Undecodable bytes become an instruction with mnemonic `(bad)` (like
/// objdump), empty operands and flow `Stop`; an AArch64 SVE word, which
/// the decoder cannot name but which never branches, is `(bad)` with flow
/// `Sequential`. `max_instructions` is capped
/// at `bytes.len()`: every instruction covers at least one byte, so the
/// listing never holds more entries than that, whatever the maximum.
pub fn disassemble(
    arch: Arch,
    bytes: &[u8],
    address: u64,
    max_instructions: usize,
) -> Vec<Instruction> {
    let max = max_instructions.min(bytes.len());
    match arch {
        Arch::X86 | Arch::X86_64 => {
            let mut cursor = x86::Cursor::new(arch, bytes, address);
            let mut text = x86::Text::new();
            collect(bytes, address, max, |line| {
                let decoded = cursor.next_decoded()?;
                let valid = cursor.write_text(&mut text, line);
                Some((decoded, valid))
            })
        }
        Arch::Aarch64 => {
            let mut cursor = arm64::Cursor::new(bytes, address);
            collect(bytes, address, max, |line| {
                let decoded = cursor.next_decoded()?;
                let valid = cursor.write_text(line);
                Some((decoded, valid))
            })
        }
    }
}

/// Entries reserved before decoding: a typical function's listing.
const INITIAL_CAPACITY: usize = 256;

/// Builds up to `max` [`Instruction`]s from `step`, which decodes the next
/// instruction, writes its text into the scratch line and says whether it
/// was decodable. One scratch `String` is reused for every line.
fn collect(
    bytes: &[u8],
    address: u64,
    max: usize,
    mut step: impl FnMut(&mut String) -> Option<(Decoded, bool)>,
) -> Vec<Instruction> {
    // Grown as decoded rather than reserved up front: `max` may be as
    // large as a whole section.
    let mut instructions = Vec::with_capacity(max.min(INITIAL_CAPACITY));
    let mut line = String::new();
    while instructions.len() < max {
        line.clear();
        let Some((decoded, valid)) = step(&mut line) else {
            break;
        };
        let text = if valid { line.as_str() } else { BAD_MNEMONIC };
        instructions.push(instruction(bytes, address, decoded, text));
    }
    instructions
}

/// One listing entry: `text` is split at its first space into the
/// mnemonic and the (trimmed) operands.
fn instruction(bytes: &[u8], address: u64, decoded: Decoded, text: &str) -> Instruction {
    let text = text.trim();
    let (mnemonic, operands) = text.split_once(' ').unwrap_or((text, ""));
    // The decoded address is `address + offset` (wrapping), so this
    // recovers the offset into `bytes` without trusting any other value.
    let start = usize::try_from(decoded.address.wrapping_sub(address)).unwrap_or(usize::MAX);
    let end = start.saturating_add(usize::from(decoded.len));
    Instruction {
        address: decoded.address,
        bytes: bytes.get(start..end).unwrap_or_default().to_vec(),
        mnemonic: mnemonic.to_ascii_lowercase(),
        operands: operands.trim().to_ascii_lowercase(),
        flow: decoded.flow,
        data: decoded.data,
    }
}
