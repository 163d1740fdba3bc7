//! x86 and x86_64 decoding with iced-x86.
//!
//! Rules, beyond iced's own classification:
//!
//! * Flow comes from iced's [`FlowControl`]. Far direct `jmp`/`call`
//!   (`ptr16:32`) are indirect: their target is `segment:offset`, not a
//!   linear address. `syscall`-like "calls" and `int n` continue with the
//!   next instruction; `int3`, `int1`, `hlt` and `ud0`/`ud1`/`ud2` stop.
//! * The data reference is the explicit memory operand when its address is
//!   static: RIP/EIP-relative, or absolute (no base, no index, not `fs:` or
//!   `gs:`, which address thread-local storage). `lea` takes the address;
//!   any other instruction that may write the operand (including
//!   read-modify-write) writes it; everything else reads it. An indirect
//!   `call [rip + x]` or `jmp [rip + x]` goes through its pointer slot: the
//!   reference is a `Call` or `Jump` to the slot (an import's IAT or GOT
//!   entry), not a plain read. Direct branches have no memory operand.

use iced_x86::{
    Code, CodeSize, Decoder, DecoderError, DecoderOptions, FlowControl, Formatter as _,
    FormatterOperandOptions, FormatterOptionsProvider, Instruction, InstructionInfoFactory,
    InstructionInfoOptions, IntelFormatter, MemorySizeOptions, Mnemonic, NumberFormattingOptions,
    OpAccess, OpKind, Register,
};

use super::super::super::code::{Arch, DataReference, Flow, RefKind};
use super::shape::{Inherited, Reg, Shape, Unsigned};
use super::{Convention, Decoded};

/// Decodes one instruction after another, resynchronising one byte after
/// each undecodable one.
pub(super) struct Cursor<'a> {
    decoder: Decoder<'a>,
    bytes: &'a [u8],
    bytes_len: usize,
    address: u64,
    instruction: Instruction,
    /// Reused for operand access queries; it owns small buffers, so
    /// creating it per instruction would allocate.
    info: InstructionInfoFactory,
    /// Whether [`Cursor::instruction`] holds a decodable instruction.
    valid: bool,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(arch: Arch, bytes: &'a [u8], address: u64) -> Self {
        let bitness = if arch == Arch::X86 { 32 } else { 64 };
        Cursor {
            // `with_ip` only panics on a bitness other than 16, 32 or 64.
            decoder: Decoder::with_ip(bitness, bytes, address, DecoderOptions::NONE),
            bytes,
            bytes_len: bytes.len(),
            address,
            instruction: Instruction::default(),
            info: InstructionInfoFactory::new(),
            valid: false,
        }
    }

    /// Decodes the next instruction, or `None` at the end of the bytes.
    pub(super) fn next_decoded(&mut self) -> Option<Decoded> {
        let position = self.decoder.position();
        let remaining = self.bytes_len.checked_sub(position).filter(|&n| n > 0)?;
        let address = self.address.wrapping_add(position as u64);
        self.decoder.decode_out(&mut self.instruction);
        self.valid = !self.instruction.is_invalid();
        if self.valid {
            let flow = flow(&self.instruction);
            // A trapping instruction (`ud0`/`ud1` take a memory operand)
            // never accesses its operand.
            let data = match flow {
                Flow::Stop => None,
                _ => data_reference(&self.instruction, &mut self.info)
                    .map(|data| through_slot(flow, data)),
            };
            return Some(Decoded {
                address,
                len: self.instruction.len() as u8,
                flow,
                data,
            });
        }
        // A trailing partial instruction is one Stop over what is left;
        // anything else undecodable is skipped one byte at a time.
        let len = if self.decoder.last_error() == DecoderError::NoMoreBytes {
            remaining.min(Arch::X86_64.max_instruction_len())
        } else {
            1
        };
        // `position + len <= bytes_len`, which `set_position` accepts.
        let _ = self.decoder.set_position(position + len);
        self.decoder.set_ip(address.wrapping_add(len as u64));
        Some(Decoded {
            address,
            len: len as u8,
            flow: Flow::Stop,
            data: None,
        })
    }

    /// Moves to `address`, so the next instruction decodes from there;
    /// `false` (and no move) if it lies outside the bytes.
    pub(super) fn seek(&mut self, address: u64) -> bool {
        let Ok(offset) = usize::try_from(address.wrapping_sub(self.address)) else {
            return false;
        };
        if offset >= self.bytes_len || self.decoder.set_position(offset).is_err() {
            return false;
        }
        self.decoder.set_ip(address);
        true
    }

    /// The [`Inherited`] registers the last decoded instruction reads and
    /// writes (none if it was undecodable).
    pub(super) fn inherited(&mut self) -> Inherited {
        if !self.valid {
            return Inherited::default();
        }
        let long = self.decoder.bitness() == 64;
        inherited(&self.instruction, &mut self.info, long)
    }

    /// The [`Shape`] of the last decoded instruction (`Other` if it was
    /// undecodable).
    pub(super) fn shape(&self) -> Shape {
        if !self.valid {
            return Shape::Undecodable;
        }
        let start = self
            .decoder
            .position()
            .saturating_sub(self.instruction.len());
        let raw = self
            .bytes
            .get(start..self.decoder.position())
            .unwrap_or_default();
        shape(&self.instruction, raw)
    }

    /// Writes the text of the last decoded instruction into `out`; `false`
    /// (and nothing written) if it was undecodable.
    pub(super) fn write_text(&self, text: &mut Text, out: &mut String) -> bool {
        if !self.valid {
            return false;
        }
        let instruction = &self.instruction;
        if instruction.mnemonic() == Mnemonic::Nop && instruction.op_count() == 0 {
            // iced spells `66 90` as `xchg ax, ax`; llvm-objdump says `nop`.
            out.push_str("nop");
            return true;
        }
        if is_movabs(instruction) {
            // llvm-objdump names the 64-bit immediate and offset forms.
            out.push_str("movabs ");
            text.formatter.format_all_operands(instruction, out);
            return true;
        }
        text.formatter.format(instruction, out);
        true
    }
}

/// Intel-syntax formatter configured to read like
/// `llvm-objdump -d --x86-asm-syntax=intel`: lowercase, `0x` hex, sizes on
/// every memory operand, `[rip + 0x10]`, `[rax + 8*rcx]`, absolute
/// branch targets, immediates signed the way LLVM prints them.
pub(super) struct Text {
    formatter: IntelFormatter,
}

impl Text {
    pub(super) fn new() -> Self {
        let mut formatter = IntelFormatter::with_options(None, Some(Box::new(LlvmImmediates)));
        let options = formatter.options_mut();
        options.set_uppercase_all(false);
        options.set_hex_prefix("0x");
        options.set_hex_suffix("");
        options.set_uppercase_hex(false);
        options.set_small_hex_numbers_in_decimal(false);
        options.set_add_leading_zero_to_hex_numbers(false);
        options.set_leading_zeros(false);
        options.set_branch_leading_zeros(false);
        options.set_displacement_leading_zeros(false);
        options.set_space_after_operand_separator(true);
        options.set_space_between_memory_add_operators(true);
        options.set_space_between_memory_mul_operators(false);
        options.set_scale_before_index(true);
        options.set_rip_relative_addresses(true);
        options.set_show_branch_size(false);
        options.set_memory_size_options(MemorySizeOptions::Always);
        options.set_signed_memory_displacements(true);
        options.set_show_useless_prefixes(true);
        Text { formatter }
    }
}

/// Signs immediates like LLVM's x86 printer, which sign-extends by
/// encoding: a sign-extended `imm8`/`imm32` (`and rsp, -0x10`), an
/// `imm64` and the `imm8` of an 8-bit ALU or `mov` (`cmp al, -0x1`) print
/// signed; an `imm16`/`imm32` as wide as its operand (`and eax,
/// 0x80000000`) and the `imm8` of shifts, `int` and vector selectors print
/// unsigned.
struct LlvmImmediates;

impl FormatterOptionsProvider for LlvmImmediates {
    fn operand_options(
        &mut self,
        instruction: &Instruction,
        _operand: u32,
        instruction_operand: Option<u32>,
        _options: &mut FormatterOperandOptions,
        number_options: &mut NumberFormattingOptions<'_>,
    ) {
        let Some(operand) = instruction_operand.filter(|&operand| operand < instruction.op_count())
        else {
            return;
        };
        number_options.signed_number = match instruction.op_kind(operand) {
            OpKind::Immediate8to16
            | OpKind::Immediate8to32
            | OpKind::Immediate8to64
            | OpKind::Immediate32to64
            | OpKind::Immediate64 => true,
            OpKind::Immediate8 => matches!(
                instruction.mnemonic(),
                Mnemonic::Add
                    | Mnemonic::Or
                    | Mnemonic::Adc
                    | Mnemonic::Sbb
                    | Mnemonic::And
                    | Mnemonic::Sub
                    | Mnemonic::Xor
                    | Mnemonic::Cmp
                    | Mnemonic::Mov
                    | Mnemonic::Test
            ),
            OpKind::Immediate16 | OpKind::Immediate32 => false,
            _ => return,
        };
    }
}

/// `mov r64, imm64` and, in 64-bit code, the `moffs` forms: what
/// llvm-objdump prints as `movabs`.
fn is_movabs(instruction: &Instruction) -> bool {
    match instruction.code() {
        Code::Mov_r64_imm64 => true,
        Code::Mov_AL_moffs8
        | Code::Mov_AX_moffs16
        | Code::Mov_EAX_moffs32
        | Code::Mov_RAX_moffs64
        | Code::Mov_moffs8_AL
        | Code::Mov_moffs16_AX
        | Code::Mov_moffs32_EAX
        | Code::Mov_moffs64_RAX => instruction.code_size() == CodeSize::Code64,
        _ => false,
    }
}

/// How control leaves a decodable instruction.
fn flow(instruction: &Instruction) -> Flow {
    match instruction.flow_control() {
        FlowControl::Next | FlowControl::XbeginXabortXend => {
            if instruction.mnemonic() == Mnemonic::Hlt {
                Flow::Stop
            } else {
                Flow::Sequential
            }
        }
        FlowControl::UnconditionalBranch => match near_target(instruction) {
            Some(target) => Flow::Jump { target },
            None => Flow::IndirectJump,
        },
        FlowControl::ConditionalBranch => match near_target(instruction) {
            Some(target) => Flow::ConditionalJump { target },
            None => Flow::IndirectJump,
        },
        FlowControl::Call => match near_target(instruction) {
            Some(target) => Flow::Call { target },
            // Far direct call: the target is segment:offset.
            None if is_far_branch(instruction) => Flow::IndirectCall,
            // `syscall`, `sysenter`, `vmcall`...: execution resumes next.
            None => Flow::Sequential,
        },
        FlowControl::IndirectBranch => Flow::IndirectJump,
        FlowControl::IndirectCall => Flow::IndirectCall,
        FlowControl::Return => Flow::Return,
        FlowControl::Interrupt => match instruction.mnemonic() {
            Mnemonic::Int3 | Mnemonic::Int1 => Flow::Stop,
            _ => Flow::Sequential,
        },
        FlowControl::Exception => Flow::Stop,
    }
}

/// Target of a near direct branch; iced already wraps it to the operand
/// size (so 32-bit code wraps in 32 bits).
fn near_target(instruction: &Instruction) -> Option<u64> {
    let branch = (0..instruction.op_count()).any(|operand| {
        matches!(
            instruction.op_kind(operand),
            OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
        )
    });
    branch.then(|| instruction.near_branch_target())
}

fn is_far_branch(instruction: &Instruction) -> bool {
    matches!(
        instruction.op0_kind(),
        OpKind::FarBranch16 | OpKind::FarBranch32
    )
}

/// The statically known address of the explicit memory operand, and what
/// the instruction does with it.
fn data_reference(
    instruction: &Instruction,
    info: &mut InstructionInfoFactory,
) -> Option<DataReference> {
    let operand = memory_operand(instruction)?;
    let target = static_address(instruction)?;
    let kind = if instruction.mnemonic() == Mnemonic::Lea {
        RefKind::Address
    } else {
        let options =
            InstructionInfoOptions::NO_MEMORY_USAGE | InstructionInfoOptions::NO_REGISTER_USAGE;
        match info.info_options(instruction, options).op_access(operand) {
            OpAccess::Write
            | OpAccess::CondWrite
            | OpAccess::ReadWrite
            | OpAccess::ReadCondWrite => RefKind::Write,
            _ => RefKind::Read,
        }
    };
    Some(DataReference { target, kind })
}

/// An indirect call or jump whose operand is a static slot goes through
/// that slot: the reference is a call or jump to it.
fn through_slot(flow: Flow, data: DataReference) -> DataReference {
    let kind = match (flow, data.kind) {
        (Flow::IndirectCall, RefKind::Read) => RefKind::Call,
        (Flow::IndirectJump, RefKind::Read) => RefKind::Jump,
        _ => data.kind,
    };
    DataReference { kind, ..data }
}

/// Index of the explicit `[...]` operand, if the instruction has one.
fn memory_operand(instruction: &Instruction) -> Option<u32> {
    (0..instruction.op_count()).find(|&operand| instruction.op_kind(operand) == OpKind::Memory)
}

/// RIP/EIP-relative or absolute address of the memory operand; `None` when
/// it depends on registers or on the `fs`/`gs` (thread-local) base.
fn static_address(instruction: &Instruction) -> Option<u64> {
    if instruction.is_ip_rel_memory_operand() {
        return Some(instruction.ip_rel_memory_address());
    }
    let absolute = instruction.memory_base() == Register::None
        && instruction.memory_index() == Register::None
        && !matches!(instruction.memory_segment(), Register::FS | Register::GS);
    absolute.then(|| instruction.memory_displacement64())
}

/// The recovery shape of a decodable instruction (see [`Shape`]).
fn shape(instruction: &Instruction, raw: &[u8]) -> Shape {
    let register = |operand: u32| {
        (instruction.op_kind(operand) == OpKind::Register)
            .then(|| reg(instruction.op_register(operand)))
            .flatten()
    };
    let immediate = |operand: u32| {
        matches!(
            instruction.op_kind(operand),
            OpKind::Immediate8
                | OpKind::Immediate16
                | OpKind::Immediate32
                | OpKind::Immediate64
                | OpKind::Immediate8to16
                | OpKind::Immediate8to32
                | OpKind::Immediate8to64
                | OpKind::Immediate32to64
        )
        .then(|| instruction.immediate(operand))
    };
    let two = instruction.op_count() == 2;
    match instruction.mnemonic() {
        Mnemonic::Nop | Mnemonic::Int3 => Shape::Padding,
        // Two zero bytes decode as `add [rax], al`: filler, not code.
        Mnemonic::Add if raw.iter().all(|&byte| byte == 0) => Shape::Padding,
        // `lea esi, [esi + 0]`: the old multi-byte no-op of 32-bit code.
        Mnemonic::Lea
            if two
                && instruction.memory_index() == Register::None
                && instruction.memory_displacement64() == 0
                && instruction.memory_base() == instruction.op0_register() =>
        {
            Shape::Padding
        }
        Mnemonic::Cmp if two => match (register(0), immediate(1)) {
            (Some(reg), Some(imm)) => Shape::Compare { reg, imm },
            // `cmp dword [rsi], 7`, the index loaded afterwards.
            (None, Some(imm)) if instruction.op0_kind() == OpKind::Memory => {
                Shape::Compare { reg: MEMORY, imm }
            }
            _ => Shape::Other,
        },
        Mnemonic::Ja => Shape::Branch(Unsigned::Above),
        Mnemonic::Jae => Shape::Branch(Unsigned::AboveOrEqual),
        Mnemonic::Jbe => Shape::Branch(Unsigned::BelowOrEqual),
        Mnemonic::Jb => Shape::Branch(Unsigned::Below),
        Mnemonic::Lea if two && instruction.is_ip_rel_memory_operand() => match register(0) {
            Some(reg) => Shape::AddressOf {
                reg,
                address: instruction.ip_rel_memory_address(),
            },
            None => Shape::Other,
        },
        // `lea rcx, [r11 + rcx]`: an add of two registers.
        Mnemonic::Lea if two && instruction.memory_displacement64() == 0 => match (
            register(0),
            reg(instruction.memory_base()),
            reg(instruction.memory_index()),
        ) {
            (Some(dst), Some(a), Some(b)) => Shape::AddRegister {
                dst,
                a,
                b,
                shift: scale_shift(instruction.memory_index_scale()),
                extend: 0,
            },
            _ => Shape::Other,
        },
        Mnemonic::Mov if two => match (register(0), immediate(1)) {
            (Some(dst), Some(imm)) => Shape::MoveImmediate { dst, imm },
            _ => load(instruction, register(0)),
        },
        Mnemonic::Movsxd | Mnemonic::Movzx | Mnemonic::Movsx
            if two && instruction.op1_kind() == OpKind::Memory =>
        {
            load(instruction, register(0))
        }
        Mnemonic::Add if two => match (register(0), register(1)) {
            (Some(dst), Some(b)) => Shape::AddRegister {
                dst,
                a: dst,
                b,
                shift: 0,
                extend: 0,
            },
            _ => Shape::Other,
        },
        Mnemonic::Jmp => match instruction.op0_kind() {
            OpKind::Register => register(0).map_or(Shape::Other, |reg| Shape::JumpRegister { reg }),
            OpKind::Memory
                if instruction.memory_base() == Register::None
                    && !instruction.is_ip_rel_memory_operand() =>
            {
                match reg(instruction.memory_index()) {
                    Some(index) => Shape::JumpLoad {
                        index,
                        shift: scale_shift(instruction.memory_index_scale()),
                        width: instruction.memory_size().size().min(8) as u8,
                        disp: instruction.memory_displacement64(),
                    },
                    None => Shape::Other,
                }
            }
            _ => Shape::Other,
        },
        _ => Shape::Other,
    }
}

/// The shape of `mov`/`movsx`/`movzx` into `dst` from memory: indexed (a
/// table entry) or from a fixed slot (plain `mov` only).
fn load(instruction: &Instruction, dst: Option<Reg>) -> Shape {
    let Some(dst) = dst else {
        return Shape::Other;
    };
    if instruction.op1_kind() != OpKind::Memory
        || matches!(instruction.memory_segment(), Register::FS | Register::GS)
    {
        return Shape::Other;
    }
    let width = instruction.memory_size().size().min(8) as u8;
    match reg(instruction.memory_index()) {
        Some(index) => Shape::Load {
            dst,
            base: reg(instruction.memory_base()),
            index,
            shift: scale_shift(instruction.memory_index_scale()),
            width,
            signed: matches!(instruction.mnemonic(), Mnemonic::Movsxd | Mnemonic::Movsx),
            disp: instruction.memory_displacement64(),
        },
        None if instruction.mnemonic() == Mnemonic::Mov => Shape::LoadFixed {
            dst,
            base: reg(instruction.memory_base()),
            disp: if instruction.is_ip_rel_memory_operand() {
                instruction.ip_rel_memory_address()
            } else {
                instruction.memory_displacement64()
            },
            width,
        },
        None => Shape::Other,
    }
}

/// Callee-saved in every x86-64 calling convention: `rbx`, `rbp`,
/// `r12`–`r15` (register numbers).
const PRESERVED_64: u32 = 1 << 3 | 1 << 5 | 0xf << 12;
/// Callee-saved on 32-bit x86: `ebx`, `ebp`, `esi`, `edi`.
const PRESERVED_32: u32 = 1 << 3 | 1 << 5 | 1 << 6 | 1 << 7;

/// See [`Cursor::inherited`].
fn inherited(
    instruction: &Instruction,
    info: &mut InstructionInfoFactory,
    long: bool,
) -> Inherited {
    let preserved = if long { PRESERVED_64 } else { PRESERVED_32 };
    let exception = if long { Register::RAX } else { Register::EAX };
    // Pushing a register or storing it on the stack saves it.
    let saves = instruction.mnemonic() == Mnemonic::Push
        || (instruction.mnemonic() == Mnemonic::Mov
            && instruction.op0_kind() == OpKind::Memory
            && matches!(instruction.memory_base(), Register::RSP | Register::ESP));
    // `xor ebx, ebx` only writes.
    let zeroing = matches!(instruction.mnemonic(), Mnemonic::Xor | Mnemonic::Sub)
        && instruction.op_count() == 2
        && instruction.op0_kind() == OpKind::Register
        && instruction.op1_kind() == OpKind::Register
        && instruction.op0_register() == instruction.op1_register();
    let mut out = Inherited::default();
    for used in info.info(instruction).used_registers() {
        let register = used.register();
        if !register.is_gpr() {
            continue;
        }
        let (read, write) = match used.access() {
            OpAccess::Read | OpAccess::CondRead => (true, false),
            OpAccess::Write | OpAccess::CondWrite => (false, true),
            OpAccess::ReadWrite | OpAccess::ReadCondWrite => (true, true),
            _ => (false, false),
        };
        if write && register.full_register() == Register::RSP {
            out.moves_stack = true;
        }
        // General registers number 0 (`rax`) to 15 (`r15`).
        let number = register.full_register().number();
        let bit = 1u32 << number;
        if write && register.full_register() != Register::RSP {
            out.clobbers |= bit;
        }
        let preserved_register = preserved & bit != 0;
        // Of `rax`, only the full register is the exception pointer
        // (`test al, al` opens every variadic function), and only a full
        // or zero-extending 32-bit write replaces it.
        let counts_read = preserved_register || (number == 0 && register == exception);
        let counts_write = preserved_register || (number == 0 && register.size() >= 4);
        if read && counts_read && !saves && !zeroing {
            out.reads |= bit;
        }
        if read && saves && preserved_register {
            out.saves |= bit;
        }
        if write && counts_write {
            out.writes |= bit;
        }
    }
    out
}

/// `rdi`, the first integer argument of the System V calling convention.
pub(super) const RDI: Reg = Register::RDI as Reg;

/// The Windows x64 convention: `rcx` first, `rax` result; `rax`, `rcx`,
/// `rdx` and `r8`–`r11` not preserved across a call.
pub(super) const WINDOWS_X64: Convention = Convention {
    first_argument: Register::RCX as Reg,
    result: Register::RAX as Reg,
    volatile: 0b1111_0000_0111,
};

/// The [`Inherited`] bit of a [`Reg`] (its full register's number); 0 for
/// what is no general register.
pub(super) fn register_bit(reg: Reg) -> u32 {
    match Register::try_from(usize::from(reg)) {
        Ok(register) if register.is_gpr() => 1 << register.full_register().number(),
        _ => 0,
    }
}

/// The [`Reg`] of a compare whose first operand is memory.
const MEMORY: Reg = Reg::MAX;

/// A general register as a [`Reg`] (its full register); `None` for no
/// register and for the instruction pointer.
fn reg(register: Register) -> Option<Reg> {
    let full = register.full_register();
    (register != Register::None && register.is_gpr() && !register.is_ip()).then_some(full as Reg)
}

/// `log2` of an index scale of 1, 2, 4 or 8.
fn scale_shift(scale: u32) -> u8 {
    scale.trailing_zeros().min(3) as u8
}
