//! ELF PLT stubs: the entries of `.plt`, `.plt.sec`, `.plt.got` and
//! `.iplt` that jump through an import's GOT slot, found by decoding those
//! sections (as objdump does for its `name@plt` labels) rather than by
//! assuming an entry size.
//!
//! A stub starts at the instruction sequence that reads its slot:
//! - x86 and x86-64: the `jmp [slot]` itself (`jmp *disp(%ebx)` in
//!   position-independent i386 code, where `%ebx` holds the GOT base),
//!   or the `endbr64`/`endbr32` just before it;
//! - AArch64: the `adrp` before the `ldr` of the slot, or the `bti c` just
//!   before that.

use object::{Object, ObjectSection};

use super::Builder;
use crate::providers::code::{Arch, RefKind};
use crate::providers::native::code_map::{CodeMap, CodeRegion};
use crate::providers::native::disasm;

/// Sections whose entries are import stubs.
const PLT_SECTIONS: [&str; 4] = [".plt", ".plt.sec", ".plt.got", ".iplt"];

pub(crate) const ENDBR64: [u8; 4] = [0xf3, 0x0f, 0x1e, 0xfa];
pub(crate) const ENDBR32: [u8; 4] = [0xf3, 0x0f, 0x1e, 0xfb];
/// AArch64 `bti c`.
const BTI_C: u32 = 0xd503_245f;

pub(super) fn read(file: &object::File<'_>, code: &CodeMap<'_>, out: &mut Builder) {
    let Some(arch) = disasm::arch_of(file) else {
        return;
    };
    let got_base = [".got.plt", ".got"]
        .into_iter()
        .find_map(|name| file.section_by_name(name))
        .map(|section| section.address());
    for region in code
        .regions()
        .iter()
        .filter(|region| PLT_SECTIONS.contains(&region.section))
    {
        disasm::sweep(arch, region.bytes, region.address, |decoded| {
            let slot = match decoded.data {
                Some(data) if matches!(data.kind, RefKind::Read | RefKind::Jump) => {
                    Some(data.target)
                }
                Some(_) => None,
                None if arch == Arch::X86 => got_base
                    .and_then(|base| ebx_relative_jump(region.bytes_from(decoded.address), base)),
                None => None,
            };
            if let Some(slot) = slot {
                out.stub_through(slot, stub_start(arch, region, decoded.address));
            }
        });
    }
}

/// The slot of an i386 `jmp *disp32(%ebx)` (`ff a3`, optionally after a
/// `bnd` prefix), given the GOT base `%ebx` holds in PIC code.
pub(super) fn ebx_relative_jump(bytes: &[u8], got_base: u64) -> Option<u64> {
    let bytes = bytes.strip_prefix(&[0xf2]).unwrap_or(bytes);
    let [0xff, 0xa3, a, b, c, d, ..] = *bytes else {
        return None;
    };
    let displacement = i32::from_le_bytes([a, b, c, d]);
    Some((got_base as u32).wrapping_add(displacement as u32).into())
}

/// Where the stub whose slot access is at `at` begins.
pub(super) fn stub_start(arch: Arch, region: &CodeRegion<'_>, at: u64) -> u64 {
    let word_before = |address: u64| -> Option<[u8; 4]> {
        let start = address.checked_sub(4).filter(|&s| s >= region.address)?;
        region.bytes_from(start).get(..4)?.try_into().ok()
    };
    match arch {
        Arch::X86 | Arch::X86_64 => match word_before(at) {
            Some(word) if word == ENDBR64 || word == ENDBR32 => at - 4,
            _ => at,
        },
        Arch::Aarch64 => {
            let is_adrp = |word: [u8; 4]| u32::from_le_bytes(word) & 0x9f00_0000 == 0x9000_0000;
            let Some(adrp) = word_before(at)
                .filter(|&word| is_adrp(word))
                .map(|_| at - 4)
            else {
                return at;
            };
            match word_before(adrp) {
                Some(word) if u32::from_le_bytes(word) == BTI_C => adrp - 4,
                _ => adrp,
            }
        }
    }
}
