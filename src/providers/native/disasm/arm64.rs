//! AArch64 decoding with yaxpeax-arm.
//!
//! Flow: `b` jumps, `b.cond`/`bc.cond`/`cbz`/`cbnz`/`tbz`/`tbnz` branch
//! conditionally (`b.al`/`b.nv` always branch, so they are jumps), `bl`
//! calls, `br`/`bra*` and `blr`/`blra*` are indirect, `ret`/`reta*`/`eret*`/
//! `drps` return, and `brk`, `udf`, `hlt` and undecodable words stop.
//!
//! Data references:
//!
//! * `adr` takes its address (`Address`); a literal `ldr`/`ldrsw` reads it.
//! * `adrp` alone reports nothing. Its page is remembered for the
//!   destination register, and the next instruction that uses that
//!   register as the base of `add Xd, Xn, #imm` (`Address`), of an
//!   immediate-offset load (`Read`), or of a store or atomic
//!   (`Write`) reports `page + offset`.
//! * A remembered page is forgotten when its register may be overwritten
//!   (the first operand of almost every instruction, both registers of a
//!   load pair or atomic, writeback bases), when a call or `svc` clobbers
//!   the AAPCS64 caller-saved registers, and entirely at every instruction
//!   that ends a basic block, so a pairing never crosses a branch.
//!   Forgetting too much only loses a reference; never forgetting enough
//!   would invent one, so every doubt forgets.

use std::fmt::Write as _;

use yaxpeax_arch::{Decoder as _, U8Reader};
use yaxpeax_arm::armv8::a64::{InstDecoder, Instruction, Opcode, Operand, ShiftStyle, SizeCode};

use super::super::super::code::{DataReference, Flow, RefKind};
use super::Decoded;
use super::shape::{Inherited, Reg, Shape, Unsigned};

/// Every AArch64 instruction is one little-endian 32-bit word.
const WORD: usize = 4;

/// The `nop` word (`hint #0`), what assemblers pad code with.
const NOP: u32 = 0xd503_201f;

/// x0–x18 and x30 (the link register): what a call may change under
/// AAPCS64. Go's ABI clobbers more, but Go keeps nothing live in registers
/// across calls, so no stale page can pair there either.
const CALLER_SAVED: u32 = 0x0007_ffff | (1 << 30);

/// Decodes one word after another.
pub(super) struct Cursor<'a> {
    decoder: InstDecoder,
    bytes: &'a [u8],
    address: u64,
    offset: usize,
    instruction: Instruction,
    /// Address of the last decoded instruction; `None` if it was
    /// undecodable.
    last: Option<u64>,
    pages: Pages,
    /// The last word was an SVE instruction (see [`is_sve`]).
    sve: bool,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(bytes: &'a [u8], address: u64) -> Self {
        Cursor {
            decoder: InstDecoder::default(),
            bytes,
            address,
            offset: 0,
            instruction: Instruction::default(),
            last: None,
            pages: Pages::default(),
            sve: false,
        }
    }

    /// Decodes the next word, or `None` at the end of the bytes. A
    /// trailing partial word is one `Stop` of its length.
    pub(super) fn next_decoded(&mut self) -> Option<Decoded> {
        let rest = self
            .bytes
            .get(self.offset..)
            .filter(|rest| !rest.is_empty())?;
        let pc = self.address.wrapping_add(self.offset as u64);
        let word = rest.get(..WORD).unwrap_or(rest);
        self.offset += word.len();
        if !(word.len() == WORD && self.decode(word)) {
            self.last = None;
            self.pages.forget(u32::MAX);
            // yaxpeax reads no SVE; none of it branches, so the code goes on.
            self.sve = is_sve(word);
            return Some(Decoded {
                address: pc,
                len: word.len() as u8,
                flow: if self.sve {
                    Flow::Sequential
                } else {
                    Flow::Stop
                },
                data: None,
            });
        }
        self.sve = false;
        self.last = Some(pc);
        let flow = flow(&self.instruction, pc);
        let data = data_reference(&self.instruction, pc, &self.pages);
        self.track(flow, pc);
        Some(Decoded {
            address: pc,
            len: WORD as u8,
            flow,
            data,
        })
    }

    /// Moves to `address`, so the next word decodes from there (with no
    /// remembered pages); `false` (and no move) outside the bytes.
    pub(super) fn seek(&mut self, address: u64) -> bool {
        let Ok(offset) = usize::try_from(address.wrapping_sub(self.address)) else {
            return false;
        };
        if offset >= self.bytes.len() {
            return false;
        }
        self.offset = offset;
        self.last = None;
        self.pages.forget(u32::MAX);
        true
    }

    /// The [`Inherited`] registers the last decoded word reads and writes
    /// (none if it was undecodable).
    pub(super) fn inherited(&self) -> Inherited {
        match self.last {
            Some(_) => inherited(&self.instruction),
            // An SVE instruction may write a general register (`cntb x7`).
            None if self.sve => Inherited {
                clobbers: (1 << 31) - 1,
                ..Inherited::default()
            },
            None => Inherited::default(),
        }
    }

    /// The [`Shape`] of the last decoded word: padding for `nop` and zero
    /// words (whether decodable or not), `Undecodable` for other words
    /// that are no instruction.
    pub(super) fn shape(&self) -> Shape {
        let start = self.offset.saturating_sub(WORD);
        let word = self
            .bytes
            .get(start..self.offset)
            .and_then(|word| <[u8; WORD]>::try_from(word).ok())
            .map(u32::from_le_bytes);
        if matches!(word, Some(0 | NOP)) {
            return Shape::Padding;
        }
        if self.sve {
            return Shape::Other;
        }
        match self.last {
            Some(pc) => shape(&self.instruction, pc),
            None => Shape::Undecodable,
        }
    }

    /// Decodes one word into [`Cursor::instruction`]; `false` if it is
    /// undecodable.
    ///
    /// yaxpeax 0.5.0 answers `Ok` for some unallocated words (such as
    /// `0x2ee85800`) without setting the opcode, which would leave the
    /// previous instruction's opcode with no operands, and its `Display`
    /// panics on some of those (`csneg`). Resetting the opcode first makes
    /// such words `Invalid`.
    fn decode(&mut self, word: &[u8]) -> bool {
        self.instruction.opcode = Opcode::Invalid;
        let decoded = self
            .decoder
            .decode_into(&mut self.instruction, &mut U8Reader::new(word))
            .is_ok()
            && !matches!(self.instruction.opcode, Opcode::Invalid)
            && !unallocated_udf(&self.instruction, word);
        if decoded {
            repair_msr(&mut self.instruction, word);
        }
        decoded
    }

    /// Updates the remembered `adrp` pages after the current instruction.
    fn track(&mut self, flow: Flow, pc: u64) {
        let instruction = &self.instruction;
        if self.pages.any() {
            self.pages.forget(written_registers(instruction));
        }
        if flow.ends_block() {
            self.pages.forget(u32::MAX);
        } else if matches!(flow, Flow::Call { .. } | Flow::IndirectCall)
            || matches!(instruction.opcode, Opcode::SVC | Opcode::HVC | Opcode::SMC)
        {
            self.pages.forget(CALLER_SAVED);
        }
        if matches!(instruction.opcode, Opcode::ADRP)
            && let (Operand::Register(SizeCode::X, register), Some(page)) =
                (instruction.operands[0], pc_relative(instruction, pc))
        {
            self.pages.set(register, page);
        }
    }

    /// Writes the text of the last decoded instruction into `out`, with
    /// PC-relative operands as absolute `0x` addresses like llvm-objdump;
    /// `false` (and nothing written) if it was undecodable.
    pub(super) fn write_text(&self, out: &mut String) -> bool {
        let Some(pc) = self.last else {
            return false;
        };
        let instruction = extend_fixed(&self.instruction);
        // Writing into a String cannot fail.
        let _ = match llvm_mnemonic(&instruction) {
            Some(mnemonic) => write_operands(out, mnemonic, &instruction),
            None => write!(out, "{instruction}"),
        };
        if let Some(target) = pc_relative(&self.instruction, pc) {
            absolute_target(out, target);
        }
        true
    }
}

/// yaxpeax 0.5.0 prints the `uxtw` extend of `add`/`sub` (extended
/// register) as `lsl` whenever the index is a W register, which is only
/// the preferred spelling in 32-bit forms that involve `wsp`: `add x9, x8,
/// w8, uxtw #1` came out as `add x9, x8, w8, lsl #1`, which reads as a
/// different operation. This returns the instruction with the extend named
/// as llvm-objdump and the ARM ARM name it.
fn extend_fixed(instruction: &Instruction) -> Instruction {
    let mut fixed = *instruction;
    let extended_add = matches!(
        instruction.opcode,
        Opcode::ADD | Opcode::ADDS | Opcode::SUB | Opcode::SUBS
    );
    if let [
        destination,
        Operand::RegisterOrSP(_, source),
        Operand::RegShift(ShiftStyle::LSL, amount, SizeCode::W, index),
        _,
    ] = instruction.operands
    {
        let wide = matches!(
            destination,
            Operand::RegisterOrSP(SizeCode::X, _) | Operand::Register(SizeCode::X, _)
        );
        let uses_sp = source == 31 || matches!(destination, Operand::RegisterOrSP(SizeCode::W, 31));
        if extended_add && (wide || !uses_sp) {
            fixed.operands[2] = Operand::RegShift(ShiftStyle::UXTW, amount, SizeCode::W, index);
        }
    }
    fixed
}

/// The mnemonic llvm-objdump uses where yaxpeax prefers an alias that
/// the ARM ARM does not: `dup` (element) into a vector is never `mov`,
/// and `orr Rd, zr, #imm` is `mov` only when no single `movz`/`movn`
/// makes the value (otherwise `mov` would name that instruction).
fn llvm_mnemonic(instruction: &Instruction) -> Option<&'static str> {
    match (instruction.opcode, instruction.operands) {
        (
            Opcode::DUP,
            [
                Operand::SIMDRegisterElements(..),
                Operand::SIMDRegisterElementsLane(..),
                ..,
            ],
        ) => Some("dup"),
        (Opcode::ORR, [_, Operand::Register(_, 31), Operand::Imm64(value), _]) => {
            move_wide_preferred(value, 64).then_some("orr")
        }
        (Opcode::ORR, [_, Operand::Register(_, 31), Operand::Immediate(value), _]) => {
            move_wide_preferred(value.into(), 32).then_some("orr")
        }
        _ => None,
    }
}

/// Whether one `movz` or `movn` of a `width`-bit register makes `value`:
/// all its set bits, or all its clear bits, lie in one 16-bit halfword.
fn move_wide_preferred(value: u64, width: u32) -> bool {
    let mask = u64::MAX >> (64 - width);
    let one_halfword = |bits: u64| {
        (0..width)
            .step_by(16)
            .any(|shift| bits & mask & !(0xffff << shift) == 0)
    };
    one_halfword(value) || one_halfword(!value)
}

/// `mnemonic` followed by the operands as yaxpeax prints them.
fn write_operands(out: &mut String, mnemonic: &str, instruction: &Instruction) -> std::fmt::Result {
    out.push_str(mnemonic);
    let present = instruction
        .operands
        .iter()
        .take_while(|operand| !matches!(operand, Operand::Nothing));
    for (index, operand) in present.enumerate() {
        out.push_str(if index == 0 { " " } else { ", " });
        write!(out, "{operand}")?;
    }
    Ok(())
}

/// Replaces yaxpeax's relative `$+0x10` / `$-0x10` with the absolute
/// target. Writing into a `String` cannot fail.
fn absolute_target(out: &mut String, target: u64) {
    let Some(start) = out.find('$') else {
        return;
    };
    let end = out[start..]
        .find([',', ' '])
        .map_or(out.len(), |length| start + length);
    let tail = out.split_off(end);
    out.truncate(start);
    let _ = write!(out, "{target:#x}");
    out.push_str(&tail);
}

/// `adrp` pages remembered per X register (31 is never set: as an `adrp`
/// destination it is `xzr`).
#[derive(Default)]
struct Pages {
    page: [u64; 32],
    /// Bit `n` set: `page[n]` holds what `adrp xn` computed.
    known: u32,
}

impl Pages {
    fn get(&self, register: u16) -> Option<u64> {
        let index = usize::from(register);
        let known = index < 31 && self.known & (1 << index) != 0;
        known.then(|| self.page[index])
    }

    fn set(&mut self, register: u16, page: u64) {
        let index = usize::from(register);
        if index < 31 {
            self.page[index] = page;
            self.known |= 1 << index;
        }
    }

    fn forget(&mut self, registers: u32) {
        self.known &= !registers;
    }

    /// Whether any page is remembered: when none is, only `adr` and
    /// literal loads can refer to data, which keeps the sweep fast.
    fn any(&self) -> bool {
        self.known != 0
    }
}

/// yaxpeax 0.5.0 decodes the whole reserved encoding space (bits 28:25
/// zero) as `udf`, but `udf #imm16` is only the words below `0x10000`;
/// the rest are unallocated, and shown as `(bad)` like llvm-objdump does.
/// Either way the flow is `Stop`.
fn unallocated_udf(instruction: &Instruction, word: &[u8]) -> bool {
    matches!(instruction.opcode, Opcode::UDF) && word.get(2..) != Some(&[0, 0][..])
}

/// yaxpeax 0.5.0 reads the source of `msr <sysreg>, Xt` from four bits
/// instead of five, turning x16–x30 and `xzr` into x0–x15; this takes
/// `Rt` from the word again.
fn repair_msr(instruction: &mut Instruction, word: &[u8]) {
    if let (Opcode::MSR, Operand::SystemReg(_), Some(&low)) =
        (instruction.opcode, instruction.operands[0], word.first())
    {
        instruction.operands[1] = Operand::Register(SizeCode::X, u16::from(low & 0x1f));
    }
}

/// The one PC-relative operand resolved against `pc`: the page for
/// `adrp`, the address for everything else.
fn pc_relative(instruction: &Instruction, pc: u64) -> Option<u64> {
    let offset = instruction
        .operands
        .iter()
        .find_map(|operand| match operand {
            Operand::PCOffset(offset) => Some(*offset as u64),
            _ => None,
        })?;
    let base = if matches!(instruction.opcode, Opcode::ADRP) {
        pc & !0xfff
    } else {
        pc
    };
    Some(base.wrapping_add(offset))
}

/// How control leaves a decodable instruction.
fn flow(instruction: &Instruction, pc: u64) -> Flow {
    let target = || pc_relative(instruction, pc);
    match instruction.opcode {
        Opcode::B => target().map_or(Flow::IndirectJump, |target| Flow::Jump { target }),
        Opcode::BL => target().map_or(Flow::IndirectCall, |target| Flow::Call { target }),
        // Conditions 14 (al) and 15 (nv) both mean "always".
        Opcode::Bcc(condition) | Opcode::BCcc(condition) if condition >= 14 => {
            target().map_or(Flow::IndirectJump, |target| Flow::Jump { target })
        }
        Opcode::Bcc(_)
        | Opcode::BCcc(_)
        | Opcode::CBZ
        | Opcode::CBNZ
        | Opcode::TBZ
        | Opcode::TBNZ => target().map_or(Flow::IndirectJump, |target| Flow::ConditionalJump {
            target,
        }),
        Opcode::BR | Opcode::BRAA | Opcode::BRAAZ | Opcode::BRAB | Opcode::BRABZ => {
            Flow::IndirectJump
        }
        Opcode::BLR | Opcode::BLRAA | Opcode::BLRAAZ | Opcode::BLRAB | Opcode::BLRABZ => {
            Flow::IndirectCall
        }
        Opcode::RET
        | Opcode::RETAA
        | Opcode::RETAB
        | Opcode::RETAASPPC
        | Opcode::RETABSPPC
        | Opcode::RETAASPPCR
        | Opcode::RETABSPPCR
        | Opcode::ERET
        | Opcode::ERETAA
        | Opcode::ERETAB
        | Opcode::DRPS => Flow::Return,
        Opcode::BRK | Opcode::UDF | Opcode::HLT | Opcode::Invalid => Flow::Stop,
        _ => Flow::Sequential,
    }
}

/// What a memory instruction does with the memory it addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Load,
    /// A load that writes two registers (`ldp`, `ldxp`...).
    LoadPair,
    Store,
    /// A store that writes a status register first (`stxr ws, ...`).
    StoreExclusive,
    /// Read-modify-write: `swp`, `ldadd`..., `cas`: writes memory and
    /// the registers in its first two operands.
    Atomic,
}

impl Access {
    fn kind(self) -> RefKind {
        match self {
            Access::Load | Access::LoadPair => RefKind::Read,
            Access::Store | Access::StoreExclusive | Access::Atomic => RefKind::Write,
        }
    }
}

/// Memory access class of an opcode; `None` for non-memory instructions,
/// prefetches and MTE tag accesses.
fn access(opcode: Opcode) -> Option<Access> {
    use Opcode::*;
    Some(match opcode {
        LDR | LDRB | LDRH | LDRSB | LDRSH | LDRSW | LDUR | LDURB | LDURH | LDURSB | LDURSH
        | LDURSW | LDTR | LDTRB | LDTRH | LDTRSB | LDTRSH | LDTRSW | LDAR | LDARB | LDARH
        | LDLAR | LDLARB | LDLARH | LDAXR | LDAXRB | LDAXRH | LDXR | LDXRB | LDXRH | LDAPR
        | LDAPRB | LDAPRH | LDAPUR | LDAPURB | LDAPURH | LDAPURSB | LDAPURSH | LDAPURSW | LDRAA
        | LDRAB | LD1 | LD2 | LD3 | LD4 | LD1R | LD2R | LD3R | LD4R => Access::Load,
        LDP | LDPSW | LDNP | LDXP | LDAXP => Access::LoadPair,
        STR | STRB | STRH | STRW | STUR | STURB | STURH | STTR | STTRB | STTRH | STLR | STLRB
        | STLRH | STLLR | STLLRB | STLLRH | STLUR | STLURB | STLURH | STP | STNP | ST1 | ST2
        | ST3 | ST4 => Access::Store,
        STXR | STXRB | STXRH | STLXR | STLXRB | STLXRH | STXP | STLXP => Access::StoreExclusive,
        SWP(_) | SWPB(_) | SWPH(_) | LDADD(_) | LDADDB(_) | LDADDH(_) | LDCLR(_) | LDCLRB(_)
        | LDCLRH(_) | LDEOR(_) | LDEORB(_) | LDEORH(_) | LDSET(_) | LDSETB(_) | LDSETH(_)
        | LDSMAX(_) | LDSMAXB(_) | LDSMAXH(_) | LDSMIN(_) | LDSMINB(_) | LDSMINH(_) | LDUMAX(_)
        | LDUMAXB(_) | LDUMAXH(_) | LDUMIN(_) | LDUMINB(_) | LDUMINH(_) | CAS(_) | CASB(_)
        | CASH(_) | CASP(_) => Access::Atomic,
        _ => return None,
    })
}

/// The statically known data address of a decodable instruction.
fn data_reference(instruction: &Instruction, pc: u64, pages: &Pages) -> Option<DataReference> {
    let reference = |target, kind| Some(DataReference { target, kind });
    match instruction.opcode {
        Opcode::ADR => reference(pc_relative(instruction, pc)?, RefKind::Address),
        Opcode::ADD if pages.any() => {
            let [
                Operand::RegisterOrSP(SizeCode::X, _),
                Operand::RegisterOrSP(SizeCode::X, base),
                immediate,
                _,
            ] = instruction.operands
            else {
                return None;
            };
            let offset = match immediate {
                Operand::Immediate(value) => u64::from(value),
                Operand::ImmShift(value, shift) => u64::from(value).checked_shl(shift.into())?,
                _ => return None,
            };
            reference(pages.get(base)?.wrapping_add(offset), RefKind::Address)
        }
        // Literal loads (`ldr x0, label`) are the only memory
        // instructions with a PC-relative operand, always the second.
        opcode if matches!(instruction.operands[1], Operand::PCOffset(_)) => {
            reference(pc_relative(instruction, pc)?, access(opcode)?.kind())
        }
        _ if !pages.any() => None,
        opcode => {
            let kind = access(opcode)?.kind();
            reference(paged_address(instruction, pages)?, kind)
        }
    }
}

/// `page + offset` of an immediate-offset memory operand whose base holds
/// a remembered `adrp` page.
fn paged_address(instruction: &Instruction, pages: &Pages) -> Option<u64> {
    instruction
        .operands
        .iter()
        .find_map(|operand| match *operand {
            Operand::RegPreIndex(base, offset, _) => {
                Some(pages.get(base)?.wrapping_add(i64::from(offset) as u64))
            }
            // Post-index accesses the base itself, then moves it.
            Operand::RegPostIndex(base, _) | Operand::RegPostIndexReg(base, _) => pages.get(base),
            _ => None,
        })
}

/// General registers the instruction may write, as a bit mask. Errs on
/// the side of too many (see the module comment).
fn written_registers(instruction: &Instruction) -> u32 {
    let [first, second, ..] = instruction.operands;
    let mut mask = match access(instruction.opcode) {
        Some(Access::Store) => 0,
        Some(Access::LoadPair | Access::Atomic) => register_bits(first) | register_bits(second),
        _ => register_bits(first),
    };
    for operand in instruction.operands {
        if let Operand::RegPreIndex(base, _, true)
        | Operand::RegPostIndex(base, _)
        | Operand::RegPostIndexReg(base, _) = operand
        {
            mask |= bit(base);
        }
    }
    mask
}

/// Bits of the general registers an operand names (none for `xzr`/`sp`,
/// vector registers, immediates and memory).
fn register_bits(operand: Operand) -> u32 {
    match operand {
        Operand::Register(_, register) | Operand::RegisterOrSP(_, register) => bit(register),
        Operand::RegisterPair(_, register) => bit(register) | bit(register.wrapping_add(1)),
        _ => 0,
    }
}

fn bit(register: u16) -> u32 {
    if register < 31 { 1 << register } else { 0 }
}

/// Callee-saved: `x19`–`x28` and the frame pointer `x29`.
const PRESERVED: u32 = 0x7ff << 19;

/// Whether a word lies in the A64 encoding space of the Scalable Vector
/// Extension (top-level `op0`, bits 28:25, `0010`), which has no branch.
fn is_sve(word: &[u8]) -> bool {
    <[u8; WORD]>::try_from(word).is_ok_and(|word| (u32::from_le_bytes(word) >> 25) & 0xf == 0b0010)
}

/// See [`Cursor::inherited`]. The first operand is the destination except
/// for stores, compare-and-branch and register branches (sources only);
/// pair loads write their second operand too. A store whose base is `sp`
/// saves its registers.
fn inherited(instruction: &Instruction) -> Inherited {
    use Opcode::*;
    let opcode = instruction.opcode;
    let store = matches!(
        opcode,
        STR | STRB
            | STRH
            | STRW
            | STUR
            | STURB
            | STURH
            | STP
            | STNP
            | STLR
            | STLRB
            | STLRH
            | STLUR
            | STLURB
            | STLURH
            | STTR
            | STTRB
            | STTRH
    );
    let sources_only = store || matches!(opcode, CBZ | CBNZ | TBZ | TBNZ | BR | BLR | RET);
    let pair_load = matches!(opcode, LDP | LDPSW | LDNP | LDXP | LDAXP);
    let base_is_sp = instruction.operands.iter().any(|operand| {
        matches!(
            operand,
            Operand::RegPreIndex(31, _, _)
                | Operand::RegPostIndex(31, _)
                | Operand::RegRegOffset(31, _, _, _, _)
        )
    });
    let mut reads = 0u32;
    let mut writes = 0u32;
    let mut saves = 0u32;
    let bit = |n: u16| if n < 31 { (1u32 << n) & PRESERVED } else { 0 };
    for (position, operand) in instruction.operands.iter().enumerate() {
        match *operand {
            Operand::Register(_, n) | Operand::RegisterOrSP(_, n) => {
                let written = !sources_only && (position == 0 || (position == 1 && pair_load));
                if written {
                    writes |= bit(n);
                } else if store && base_is_sp {
                    saves |= bit(n);
                } else {
                    reads |= bit(n);
                }
            }
            Operand::RegShift(_, _, _, n) => reads |= bit(n),
            Operand::RegRegOffset(base, index, _, _, _) => reads |= bit(base) | bit(index),
            Operand::RegPreIndex(base, _, _) | Operand::RegPostIndex(base, _) => reads |= bit(base),
            Operand::RegPostIndexReg(base, index) => reads |= bit(base) | bit(index),
            _ => {}
        }
    }
    // A call writes the link register too.
    let link = if matches!(opcode, BL | BLR) {
        1 << 30
    } else {
        0
    };
    Inherited {
        reads,
        writes,
        saves,
        moves_stack: false,
        clobbers: written_registers(instruction) | link,
    }
}

/// The recovery shape of a decoded instruction at `pc` (see [`Shape`]).
fn shape(instruction: &Instruction, pc: u64) -> Shape {
    let general = |operand: Operand| match operand {
        Operand::Register(_, n) | Operand::RegisterOrSP(_, n) if n < 31 => Some(n as Reg),
        _ => None,
    };
    let [first, second, third, _] = instruction.operands;
    match instruction.opcode {
        // `cmp wn, #imm` is `subs wzr, wn, #imm`.
        Opcode::SUBS if matches!(first, Operand::Register(_, 31)) => {
            let imm = match third {
                Operand::Immediate(value) => Some(u64::from(value)),
                Operand::ImmShift(value, shift) => u64::from(value).checked_shl(shift.into()),
                _ => None,
            };
            match (general(second), imm) {
                (Some(reg), Some(imm)) => Shape::Compare { reg, imm },
                _ => Shape::Other,
            }
        }
        // Condition codes: 2 hs, 3 lo, 8 hi, 9 ls.
        Opcode::Bcc(2) => Shape::Branch(Unsigned::AboveOrEqual),
        Opcode::Bcc(3) => Shape::Branch(Unsigned::Below),
        Opcode::Bcc(8) => Shape::Branch(Unsigned::Above),
        Opcode::Bcc(9) => Shape::Branch(Unsigned::BelowOrEqual),
        Opcode::ADR | Opcode::ADRP => match (general(first), pc_relative(instruction, pc)) {
            (Some(reg), Some(address)) => Shape::AddressOf { reg, address },
            _ => Shape::Other,
        },
        Opcode::ADD => {
            let Some(dst) = general(first) else {
                return Shape::Other;
            };
            let Some(a) = general(second) else {
                return Shape::Other;
            };
            match third {
                Operand::Immediate(value) => Shape::AddImmediate {
                    dst,
                    src: a,
                    imm: u64::from(value),
                },
                Operand::ImmShift(value, shift) => match u64::from(value).checked_shl(shift.into())
                {
                    Some(imm) => Shape::AddImmediate { dst, src: a, imm },
                    None => Shape::Other,
                },
                Operand::RegShift(style, amount, _, b) if b < 31 => {
                    let extend = match style {
                        ShiftStyle::SXTB => 1,
                        ShiftStyle::SXTH => 2,
                        ShiftStyle::SXTW => 4,
                        ShiftStyle::LSL | ShiftStyle::UXTX | ShiftStyle::SXTX => 0,
                        _ => return Shape::Other,
                    };
                    Shape::AddRegister {
                        dst,
                        a,
                        b: b as Reg,
                        shift: amount,
                        extend,
                    }
                }
                _ => Shape::Other,
            }
        }
        Opcode::LDRB
        | Opcode::LDRH
        | Opcode::LDR
        | Opcode::LDRSW
        | Opcode::LDRSB
        | Opcode::LDRSH => {
            let Some(dst) = general(first) else {
                return Shape::Other;
            };
            let (width, signed) = match instruction.opcode {
                Opcode::LDRB => (1, false),
                Opcode::LDRSB => (1, true),
                Opcode::LDRH => (2, false),
                Opcode::LDRSH => (2, true),
                Opcode::LDRSW => (4, true),
                _ if matches!(first, Operand::Register(SizeCode::W, _)) => (4, false),
                _ => (8, false),
            };
            let (base, index, amount) = match second {
                Operand::RegRegOffset(base, index, _, _, amount) if index < 31 => {
                    (base, index, amount)
                }
                // `ldr x0, [x0, #0xfe8]`: a fixed slot once `x0` holds a page.
                Operand::RegPreIndex(base, offset, false) if base < 31 && !signed => {
                    return Shape::LoadFixed {
                        dst,
                        base: Some(base as Reg),
                        disp: i64::from(offset) as u64,
                        width,
                    };
                }
                _ => return Shape::Other,
            };
            Shape::Load {
                dst,
                base: (base < 31).then_some(base as Reg),
                index: index as Reg,
                shift: amount,
                width,
                signed,
                disp: 0,
            }
        }
        Opcode::MOVZ => match (general(first), second) {
            (Some(dst), Operand::ImmShift(value, shift)) => u64::from(value)
                .checked_shl(shift.into())
                .map_or(Shape::Other, |imm| Shape::MoveImmediate { dst, imm }),
            _ => Shape::Other,
        },
        Opcode::BR => general(first).map_or(Shape::Other, |reg| Shape::JumpRegister { reg }),
        _ => Shape::Other,
    }
}
