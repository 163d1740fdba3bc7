//! Switch jump tables: from the instructions before a register or memory
//! jump, the table's address, its entry format and its length, bounded by
//! the compare that guards the index. Shapes (compilers' usual output):
//!
//! * x86-64 position-independent: `lea rT, [rip + table]`; `movsxd rE,
//!   [rT + rI*4]`; `add rE, rT`; `jmp rE` — entries are offsets from the
//!   table.
//! * x86 absolute: `jmp [table + rI*8]` (or `*4`), or `mov rE, [table +
//!   rI*8]`; `jmp rE` — entries are addresses.
//! * AArch64: `adrp xT, table`; `add xT, xT, #lo`; `ldrb`/`ldrh`/`ldr wE,
//!   [xT, wI, uxtw #s]`; `adr xB, base`; `add xE, xB, wE, sxtb #2`; `br xE`
//!   — entries are signed instruction counts from `base`.
//!
//! The length comes from the last `cmp rI, #n` followed by an unsigned
//! branch (`ja`, `b.hi`, ...). An absolute table (also a computed-goto
//! label table) needs no bound: its entries are pointers the file
//! relocates (or the scan found), and it ends where they stop. A relative
//! table with no such bound (hand-written assembly indexes one by a
//! `bsf` result) is read up to the next address that code or a pointer
//! refers to, the start of the next object, and only while its entries
//! land near the jump ([`Resolution::Delimited`]). Every entry must land
//! in `valid`; reading stops at the first that does not.
//!
//! A register the dispatch sequence does not set itself (a table address
//! hoisted out of a loop) takes the one address the procedure computed
//! into it elsewhere, if it computed exactly one.

use super::super::disasm::shape::{Reg, Shape};

/// Most entries one table is read for.
pub(super) const MAX_ENTRIES: u64 = 4096;
/// Most entries a relative table no compare bounds is read for.
const MAX_DELIMITED: u64 = 256;
/// Fewest entries that make an unbounded relative table believable.
const MIN_DELIMITED: usize = 2;

/// Where a table's entries point, relative to what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entries {
    /// Each entry is an address.
    Absolute,
    /// Each entry, sign-extended and shifted left by `shift`, is added to `base`.
    Relative { base: u64, shift: u8, extend: u8 },
}

/// A recognised table, before its entries are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Table {
    address: u64,
    width: u8,
    signed: bool,
    entries: Entries,
    index: Reg,
}

/// What became of one indirect jump.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Resolution {
    /// A table was read: its targets, in table order.
    Targets(Vec<u64>),
    /// A relative table no compare bounds, read up to the next referenced
    /// address while its entries stayed valid and near: its targets.
    Delimited(Vec<u64>),
    /// The jump looks like a table dispatch, but nothing bounds the index
    /// and no believable table ends at a referenced address.
    Unbounded,
    /// Not a recognised table shape (a tail call through a pointer, or a
    /// shape this module does not know).
    Unknown,
}

/// What a resolution may read of the document.
pub(super) struct Reader<R, P, K, V, F> {
    /// `read(address, width)`: a value of the file's bytes.
    pub read: R,
    /// `pointer(slot)`: the pointer stored at a slot (relocated).
    pub pointer: P,
    /// `register(reg)`: the one address the procedure put in `reg`.
    pub register: K,
    /// `valid(target, delimited)`: whether a target may be a case of this
    /// jump; `delimited` for a table no compare bounds, whose cases must
    /// lie nearer.
    pub valid: V,
    /// `referenced(address)`: whether code or a pointer refers to
    /// `address` (where another object starts).
    pub referenced: F,
}

/// Resolves the jump whose shape is `jump`, given the shapes of the
/// instructions before it on the same straight-line path (oldest first).
pub(super) fn resolve<R, P, K, V, F>(
    history: &[Shape],
    jump: Shape,
    reader: &Reader<R, P, K, V, F>,
) -> Resolution
where
    R: Fn(u64, u8) -> Option<u64>,
    P: Fn(u64) -> Option<u64>,
    K: Fn(Reg) -> Option<u64>,
    V: Fn(u64, bool) -> bool,
    F: Fn(u64) -> bool,
{
    let Some(table) = recognise(history, jump, &reader.register) else {
        return Resolution::Unknown;
    };
    let (count, delimited) = match (bound(history, table.index), table.entries) {
        (Some(count), _) => (count, false),
        (None, Entries::Absolute) => (MAX_ENTRIES, false),
        (None, Entries::Relative { .. }) => (MAX_DELIMITED, true),
    };
    let mut targets = Vec::new();
    for entry in 0..count.min(MAX_ENTRIES) {
        let at = table
            .address
            .wrapping_add(entry.wrapping_mul(u64::from(table.width)));
        if delimited && entry > 0 && (reader.referenced)(at) {
            break;
        }
        let raw = match table.entries {
            Entries::Absolute => (reader.pointer)(at),
            Entries::Relative { .. } => (reader.read)(at, table.width),
        };
        let Some(raw) = raw else {
            break;
        };
        let target = match table.entries {
            Entries::Absolute => raw,
            Entries::Relative {
                base,
                shift,
                extend,
            } => {
                let width = if extend > 0 {
                    extend.min(table.width)
                } else {
                    table.width
                };
                let value = if table.signed || extend > 0 {
                    sign_extend(raw, width)
                } else {
                    raw
                };
                base.wrapping_add(value.wrapping_shl(u32::from(shift)))
            }
        };
        if !(reader.valid)(target, delimited) {
            break;
        }
        targets.push(target);
    }
    match (delimited, targets.len()) {
        (false, _) => Resolution::Targets(targets),
        (true, n) if n >= MIN_DELIMITED => Resolution::Delimited(targets),
        (true, _) => Resolution::Unbounded,
    }
}

/// The code address a register jump that reads no table adds its offset
/// to (`lea r9, [rip + blocks]`; `shl ecx, 6`; `add rcx, r9`; `jmp rcx`:
/// hand-written assembly entering one of equal-sized blocks), or jumps to
/// outright. The blocks from there on are the jumping procedure's.
pub(super) fn computed_base(
    history: &[Shape],
    jump: Shape,
    register: &impl Fn(Reg) -> Option<u64>,
) -> Option<u64> {
    let Shape::JumpRegister { reg } = jump else {
        return None;
    };
    let value_of = value_or_hoisted(register);
    let (at, definition) = last_definition(history, reg)?;
    let before = &history[..at];
    match definition {
        Shape::AddressOf { address, .. } => Some(address),
        Shape::AddRegister { a, b, .. } => value_of(before, a).or_else(|| value_of(before, b)),
        _ => None,
    }
}

fn sign_extend(value: u64, width: u8) -> u64 {
    let bits = u32::from(width.clamp(1, 8)) * 8;
    if bits >= 64 {
        return value;
    }
    let shift = 64 - bits;
    (((value << shift) as i64) >> shift) as u64
}

/// The table a jump dispatches through, from the shapes before it.
fn recognise(
    history: &[Shape],
    jump: Shape,
    register: &impl Fn(Reg) -> Option<u64>,
) -> Option<Table> {
    let value_of = value_or_hoisted(register);
    match jump {
        Shape::JumpLoad {
            index,
            shift,
            width,
            disp,
        } if u32::from(width) == 1 << shift => Some(Table {
            address: disp,
            width,
            signed: false,
            entries: Entries::Absolute,
            index,
        }),
        Shape::JumpRegister { reg } => {
            let (at, definition) = last_definition(history, reg)?;
            let before = &history[..at];
            match definition {
                Shape::Load {
                    base: None,
                    index,
                    shift,
                    width,
                    disp,
                    ..
                } if u32::from(width) == 1 << shift && width >= 4 => Some(Table {
                    address: disp,
                    width,
                    signed: false,
                    entries: Entries::Absolute,
                    index,
                }),
                // `lea rT, [rip + table]` ... `mov rE, [rT + rI*8]`.
                Shape::Load {
                    base: Some(base),
                    index,
                    shift,
                    width,
                    disp,
                    ..
                } if u32::from(width) == 1 << shift && width >= 4 => Some(Table {
                    address: value_of(before, base)?.wrapping_add(disp),
                    width,
                    signed: false,
                    entries: Entries::Absolute,
                    index,
                }),
                Shape::AddRegister {
                    a,
                    b,
                    shift,
                    extend,
                    ..
                } => {
                    // One operand is the loaded entry, the other the base.
                    [(b, a), (a, b)].into_iter().find_map(|(entry, base)| {
                        relative(before, entry, base, shift, extend, &value_of)
                    })
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// `entry` loaded from a table and `base` an address: a relative table.
fn relative(
    history: &[Shape],
    entry: Reg,
    base: Reg,
    shift: u8,
    extend: u8,
    value_of: &impl Fn(&[Shape], Reg) -> Option<u64>,
) -> Option<Table> {
    let (at, load) = last_definition(history, entry)?;
    let Shape::Load {
        base: Some(table_reg),
        index,
        shift: index_shift,
        width,
        signed,
        disp: 0,
        ..
    } = load
    else {
        return None;
    };
    if u32::from(width) != 1 << index_shift {
        return None;
    }
    let address = value_of(&history[..at], table_reg)?;
    let base = if base == table_reg {
        address
    } else {
        value_of(history, base)?
    };
    Some(Table {
        address,
        width,
        signed,
        entries: Entries::Relative {
            base,
            shift,
            extend,
        },
        index,
    })
}

/// [`value_of`], or else the one address the procedure computed into the
/// register elsewhere (a table address hoisted out of a loop).
fn value_or_hoisted(
    register: &impl Fn(Reg) -> Option<u64>,
) -> impl Fn(&[Shape], Reg) -> Option<u64> + '_ {
    move |history, reg| value_of(history, reg).or_else(|| register(reg))
}

/// The address a register holds at the end of `history`, if an
/// `lea`/`adr`/`adrp`(+`add`) chain or a `mov` of an immediate there
/// computes it.
fn value_of(history: &[Shape], reg: Reg) -> Option<u64> {
    let (at, definition) = last_definition(history, reg)?;
    match definition {
        Shape::AddressOf { address, .. } | Shape::MoveImmediate { imm: address, .. } => {
            Some(address)
        }
        Shape::AddImmediate { src, imm, .. } => {
            value_of(&history[..at], src).map(|value| value.wrapping_add(imm))
        }
        _ => None,
    }
}

/// The last shape in `history` that writes `reg`, with its position.
/// An unknown instruction (`Other`) is assumed not to touch it: the window
/// is short and compilers emit the dispatch as one sequence.
fn last_definition(history: &[Shape], reg: Reg) -> Option<(usize, Shape)> {
    history.iter().enumerate().rev().find_map(|(at, shape)| {
        let writes = match *shape {
            Shape::AddressOf { reg: dst, .. }
            | Shape::MoveImmediate { dst, .. }
            | Shape::LoadFixed { dst, .. }
            | Shape::AddImmediate { dst, .. }
            | Shape::Load { dst, .. }
            | Shape::AddRegister { dst, .. } => dst == reg,
            _ => false,
        };
        writes.then_some((at, *shape))
    })
}

/// Entries the index can select: from the last unsigned branch and the
/// compare just before it. The compare may test a copy of the index
/// (`cmp edx, 20` then `mov eax, edx`), so its register is not required to
/// match; a compare whose count overflows bounds nothing.
fn bound(history: &[Shape], _index: Reg) -> Option<u64> {
    let branch_at = history
        .iter()
        .rposition(|shape| matches!(shape, Shape::Branch(_)))?;
    let Shape::Branch(kind) = history[branch_at] else {
        return None;
    };
    history[..branch_at]
        .iter()
        .rev()
        .find_map(|shape| match *shape {
            Shape::Compare { imm, .. } => Some(kind.entries(imm)),
            _ => None,
        })?
}

#[cfg(test)]
mod tests {
    use super::super::super::disasm::shape::Unsigned;
    use super::*;

    const RAX: Reg = 0;
    const RDX: Reg = 2;
    const RDI: Reg = 7;

    fn words(table: &[i32]) -> impl Fn(u64, u8) -> Option<u64> + '_ {
        move |address, width| {
            let index = usize::try_from(address.checked_sub(0x1000)? / u64::from(width)).ok()?;
            table.get(index).map(|&v| i64::from(v) as u64)
        }
    }

    #[allow(clippy::type_complexity)]
    fn reader<'t>(
        table: &'t [i32],
        valid: impl Fn(u64) -> bool + 't,
    ) -> Reader<
        impl Fn(u64, u8) -> Option<u64> + 't,
        impl Fn(u64) -> Option<u64> + 't,
        impl Fn(Reg) -> Option<u64>,
        impl Fn(u64, bool) -> bool + 't,
        impl Fn(u64) -> bool,
    > {
        Reader {
            read: words(table),
            pointer: move |slot| words(table)(slot, 4),
            register: |_| None,
            valid: move |target, _| valid(target),
            referenced: |address| address == 0x1008,
        }
    }

    #[test]
    fn a_relative_x86_table_is_bounded_by_its_compare() {
        let history = [
            Shape::Compare { reg: RDI, imm: 3 },
            Shape::Branch(Unsigned::Above),
            Shape::AddressOf {
                reg: RDX,
                address: 0x1000,
            },
            Shape::Load {
                dst: RAX,
                base: Some(RDX),
                index: RDI,
                shift: 2,
                width: 4,
                signed: true,
                disp: 0,
            },
            Shape::AddRegister {
                dst: RAX,
                a: RAX,
                b: RDX,
                shift: 0,
                extend: 0,
            },
        ];
        let table = [-0x10, -0x20, -0x30, -0x40, -0x50];
        let got = resolve(
            &history,
            Shape::JumpRegister { reg: RAX },
            &reader(&table, |_| true),
        );
        assert_eq!(got, Resolution::Targets(vec![0xff0, 0xfe0, 0xfd0, 0xfc0]));
    }

    #[test]
    fn reading_stops_at_the_first_entry_outside_code() {
        let history = [
            Shape::Compare { reg: RDI, imm: 9 },
            Shape::Branch(Unsigned::Above),
        ];
        let table = [0x2000, 0x2010, 0x9999];
        let jump = Shape::JumpLoad {
            index: RDI,
            shift: 2,
            width: 4,
            disp: 0x1000,
        };
        let got = resolve(
            &history,
            jump,
            &reader(&table, |t| (0x2000..0x3000).contains(&t)),
        );
        assert_eq!(got, Resolution::Targets(vec![0x2000, 0x2010]));
    }

    #[test]
    fn an_unbounded_relative_table_is_not_read_and_an_absolute_one_ends_with_its_pointers() {
        let history = [
            Shape::AddressOf {
                reg: RDX,
                address: 0x1000,
            },
            Shape::Load {
                dst: RAX,
                base: Some(RDX),
                index: RDI,
                shift: 2,
                width: 4,
                signed: true,
                disp: 0,
            },
            Shape::AddRegister {
                dst: RAX,
                a: RAX,
                b: RDX,
                shift: 0,
                extend: 0,
            },
        ];
        let jump = Shape::JumpRegister { reg: RAX };
        // Read up to the next referenced address (0x1008)...
        assert_eq!(
            resolve(&history, jump, &reader(&[0x10, 0x20, 0x30], |_| true)),
            Resolution::Delimited(vec![0x1010, 0x1020])
        );
        // ...and only while its entries are valid: one is not a table.
        assert_eq!(
            resolve(&history, jump, &reader(&[0x10, 0x20], |t| t < 0x1020)),
            Resolution::Unbounded
        );
        let absolute = Shape::JumpLoad {
            index: RDI,
            shift: 2,
            width: 4,
            disp: 0x1000,
        };
        let got = resolve(
            &[],
            absolute,
            &reader(&[0x2000, 0x2040, 7], |t| t >= 0x2000),
        );
        assert_eq!(got, Resolution::Targets(vec![0x2000, 0x2040]));
        assert_eq!(
            resolve(&[], jump, &reader(&[], |_| true)),
            Resolution::Unknown
        );
    }

    #[test]
    fn an_arm64_byte_table_counts_instructions_from_its_base() {
        // cmp w0, #2; b.hi; adrp x1; add x1, x1, #0x10; ldrb w1, [x1, w0, uxtw];
        // adr x2, 0x4000; add x1, x2, w1, sxtb #2; br x1
        let history = [
            Shape::Compare { reg: 0, imm: 2 },
            Shape::Branch(Unsigned::Above),
            Shape::AddressOf {
                reg: 1,
                address: 0x0ff0,
            },
            Shape::AddImmediate {
                dst: 1,
                src: 1,
                imm: 0x10,
            },
            Shape::Load {
                dst: 1,
                base: Some(1),
                index: 0,
                shift: 0,
                width: 1,
                signed: false,
                disp: 0,
            },
            Shape::AddressOf {
                reg: 2,
                address: 0x4000,
            },
            Shape::AddRegister {
                dst: 1,
                a: 2,
                b: 1,
                shift: 2,
                extend: 1,
            },
        ];
        let bytes = [0u8, 3, 0xfe];
        let reader = Reader {
            read: |address: u64, _| {
                bytes
                    .get(usize::try_from(address - 0x1000).ok()?)
                    .map(|&b| u64::from(b))
            },
            pointer: |_| None,
            register: |_| None,
            valid: |_, _| true,
            referenced: |_| false,
        };
        let got = resolve(&history, Shape::JumpRegister { reg: 1 }, &reader);
        assert_eq!(got, Resolution::Targets(vec![0x4000, 0x400c, 0x3ff8]));
    }
}
