//! `main`, found from the C runtime's call to it: an inference, marked
//! `c_runtime_main`, for executables whose symbols are stripped.
//!
//! glibc's and musl's `_start` load `main`'s address into the first
//! argument register and call `__libc_start_main` (through its import in
//! a dynamic executable; directly, unnamed, in a static one), which never
//! returns. musl puts one more step between them (`_start` calls
//! `_start_c`, which tail-calls `__libc_start_main`), so one direct call
//! from the entry is followed, and so is a wrapper that only jumps on to
//! `main` (static AArch64 glibc passes `__wrap_main`). Mach-O's `LC_MAIN`
//! states `main` outright
//! (see [`super::entry::macho_main`]).
//!
//! Nothing else counts: an entry that calls an import of another name, or
//! calls a local function that returns, has no `main` this can see.
//! Windows executables are read another way, in [`super::windows_main`].

use object::{BinaryFormat, Object, ObjectKind};

use super::code_index::CodeIndex;
use super::code_map::CodeMap;
use super::disasm::shape::{Reg, Shape};
use super::disasm::{self, Walker};
use super::thunks::Thunks;
use super::windows_main::{Startup, windows_main};
use super::words::Words;
use super::{NativeImage, entry};
use crate::providers::ProviderError;
use crate::providers::code::{Arch, Flow};

/// Instructions read from the entry before giving up (glibc's `_start` is
/// 12, musl's `_start_c` about 10).
const WINDOW: usize = 32;

/// The C library functions that call `main`.
const START_MAIN: &[&str] = &["__libc_start_main", "__uClibc_main"];

/// What [`main_from_entry`] asks of the document.
pub(super) struct Runtime<'a> {
    pub code: &'a CodeMap<'a>,
    pub arch: Arch,
    /// The import a stub or slot address stands for, by name.
    pub import_at: &'a dyn Fn(u64) -> Option<&'a str>,
    /// The pointer stored at a data address (a GOT slot).
    pub pointer_at: &'a dyn Fn(u64) -> Option<u64>,
}

/// The address the entry point passes to the C runtime as `main`.
pub(super) fn main_from_entry(runtime: &Runtime<'_>, entry: u64) -> Option<u64> {
    let argument = disasm::first_argument(runtime.arch)?;
    let passed = match call_from(runtime, entry, argument)? {
        Call::StartMain(main) => main,
        // musl: `_start` passes its stack pointer to `_start_c`.
        Call::Local(callee) => match call_from(runtime, callee, argument)? {
            Call::StartMain(main) => main,
            Call::Local(_) => return None,
        },
    };
    Some(through_wrapper(runtime, passed))
}

/// Where a wrapper that only jumps on leads (static AArch64 glibc passes
/// `__wrap_main`: `nop; b main`); `address` itself otherwise.
fn through_wrapper(runtime: &Runtime<'_>, address: u64) -> u64 {
    let Some(region) = runtime.code.region_of(address) else {
        return address;
    };
    let mut walker = Walker::new(runtime.arch, region.bytes, region.address);
    let mut next = walker.decode_at(address);
    for _ in 0..2 {
        match next {
            Some((decoded, Shape::Padding)) if decoded.flow == Flow::Sequential => {
                next = walker.decode_next();
            }
            Some((decoded, _)) => {
                return match decoded.flow {
                    Flow::Jump { target } if runtime.code.contains(target) => target,
                    _ => address,
                };
            }
            None => return address,
        }
    }
    address
}

/// What the first call of the code at `start` is.
enum Call {
    /// A call that never returns, to `__libc_start_main` by name or to a
    /// local function, with a code address as first argument.
    StartMain(u64),
    /// A direct call to a local function whose first argument is no code
    /// address (`_start_c`).
    Local(u64),
}

/// Reads from `start` to its first call or jump out, tracking what the
/// `argument` register holds.
fn call_from(runtime: &Runtime<'_>, start: u64, argument: Reg) -> Option<Call> {
    let region = runtime.code.region_of(start)?;
    let mut walker = Walker::new(runtime.arch, region.bytes, region.address);
    let mut values = Registers::default();
    let mut next = walker.decode_at(start);
    for _ in 0..WINDOW {
        let (decoded, shape) = next?;
        let code_argument = values
            .get(argument)
            .filter(|&value| runtime.code.contains(value));
        let callee = match decoded.flow {
            Flow::Call { target } | Flow::Jump { target } => Some(Callee::Direct(target)),
            Flow::IndirectCall | Flow::IndirectJump => decoded.data.map(|d| Callee::Slot(d.target)),
            Flow::Return | Flow::Stop => return None,
            Flow::Sequential | Flow::ConditionalJump { .. } => None,
        };
        if let Some(callee) = callee {
            let import = match callee {
                Callee::Direct(target) | Callee::Slot(target) => (runtime.import_at)(target),
            };
            return match (callee, import) {
                (_, Some(name)) => START_MAIN
                    .contains(&name)
                    .then_some(code_argument)
                    .flatten()
                    .map(Call::StartMain),
                (Callee::Slot(_), None) => None,
                (Callee::Direct(target), None) => match code_argument {
                    Some(main) if never_returns_here(&mut walker, decoded.flow) => {
                        Some(Call::StartMain(main))
                    }
                    Some(_) => None,
                    None => runtime.code.contains(target).then_some(Call::Local(target)),
                },
            };
        }
        values.note(shape, runtime.pointer_at);
        next = walker.decode_next();
    }
    None
}

/// Where a call goes.
#[derive(Clone, Copy)]
enum Callee {
    Direct(u64),
    /// Through the pointer at this address.
    Slot(u64),
}

/// A tail jump, or a call that a stop (`hlt`) or another call (`bl abort`)
/// follows: what glibc emits after `__libc_start_main`.
fn never_returns_here(walker: &mut Walker<'_>, flow: Flow) -> bool {
    if matches!(flow, Flow::Jump { .. }) {
        return true;
    }
    matches!(
        walker.decode_next().map(|(decoded, _)| decoded.flow),
        Some(Flow::Stop | Flow::Call { .. })
    )
}

/// The values a few registers are known to hold.
#[derive(Default)]
struct Registers(Vec<(Reg, Option<u64>)>);

impl Registers {
    fn get(&self, reg: Reg) -> Option<u64> {
        self.0.iter().find(|(r, _)| *r == reg).and_then(|&(_, v)| v)
    }

    fn set(&mut self, reg: Reg, value: Option<u64>) {
        match self.0.iter_mut().find(|(r, _)| *r == reg) {
            Some(entry) => entry.1 = value,
            None => self.0.push((reg, value)),
        }
    }

    /// Applies what `shape` writes. Instructions of other shapes are
    /// assumed not to write the tracked registers: `_start` is a fixed
    /// sequence, not general code.
    fn note(&mut self, shape: Shape, pointer_at: &dyn Fn(u64) -> Option<u64>) {
        match shape {
            Shape::AddressOf { reg, address } => self.set(reg, Some(address)),
            Shape::MoveImmediate { dst, imm } => self.set(dst, Some(imm)),
            Shape::AddImmediate { dst, src, imm } => {
                let value = self.get(src).map(|value| value.wrapping_add(imm));
                self.set(dst, value);
            }
            Shape::LoadFixed {
                dst, base, disp, ..
            } => {
                let slot = match base {
                    None => Some(disp),
                    Some(base) => self.get(base).map(|page| page.wrapping_add(disp)),
                };
                self.set(dst, slot.and_then(pointer_at));
            }
            Shape::Load { dst, .. } | Shape::AddRegister { dst, .. } => self.set(dst, None),
            _ => {}
        }
    }
}

impl NativeImage {
    /// `main` and its name, when `LC_MAIN` states it (Mach-O) or the C
    /// runtime's call shows it (ELF from the entry point, PE from the
    /// runtime's argument imports: [`windows_main`]).
    pub(super) fn c_runtime_main(
        &self,
        document: usize,
        file: &object::File<'_>,
        code: &CodeMap<'_>,
        index: &CodeIndex,
        thunks: &Thunks,
    ) -> Result<Option<(u64, &'static str)>, ProviderError> {
        if let Some(main) = entry::macho_main(file) {
            return Ok(Some((main, "main")).filter(|&(main, _)| code.contains(main)));
        }
        let Some(arch) = disasm::arch_of(file) else {
            return Ok(None);
        };
        if file.format() == BinaryFormat::Pe && file.kind() == ObjectKind::Executable {
            let startup = Startup {
                code,
                index,
                arch,
                thunks,
            };
            return Ok(windows_main(&startup));
        }
        let (BinaryFormat::Elf, Some(entry)) = (file.format(), entry::entry_point(file)) else {
            return Ok(None);
        };
        let pointers = self.data_pointers(document)?;
        let words = Words::new(file);
        let import_at = |address: u64| thunks.import_at(address).map(|import| &*import.name);
        let pointer_at = |slot: u64| pointers.value_at(slot).or_else(|| words.at(slot));
        let runtime = Runtime {
            code,
            arch,
            import_at: &import_at,
            pointer_at: &pointer_at,
        };
        Ok(main_from_entry(&runtime, entry).map(|main| (main, "main")))
    }
}

#[cfg(test)]
mod tests {
    use super::super::code_map::CodeRegion;
    use super::*;

    /// glibc 2.36's x86-64 `_start` in a PIE (`ls` from Debian bookworm):
    /// `lea rdi, [rip + main]`; `call [rip + __libc_start_main@GOT]`; `hlt`.
    const X86_64_PIE_START: [u8; 34] = [
        0x31, 0xed, 0x49, 0x89, 0xd1, 0x5e, 0x48, 0x89, 0xe2, 0x48, 0x83, 0xe4, 0xf0, 0x50, 0x54,
        0x45, 0x31, 0xc0, 0x31, 0xc9, 0x48, 0x8d, 0x3d, 0x45, 0xe5, 0xff, 0xff, 0xff, 0x15, 0x9f,
        0xdd, 0x01, 0x00, 0xf4,
    ];

    /// glibc's AArch64 `_start` in a static executable: `adrp x0; add x0,
    /// x0, #0x3b4` (`__wrap_main`); `bl __libc_start_main`; `bl abort`;
    /// then `__wrap_main`: `nop; b main`.
    const AARCH64_STATIC_START: [u32; 15] = [
        0xd503201f, 0xd280001d, 0xd280001e, 0xaa0003e5, 0xf94003e1, 0x910023e2, 0x910003e6,
        0x90000000, 0x910ed000, 0xd2800003, 0xd2800004, 0x94034062, 0x97fffdcb, 0xd503201f,
        0x17fffe52,
    ];

    fn runtime<'a>(
        code: &'a CodeMap<'a>,
        arch: Arch,
        import_at: &'a dyn Fn(u64) -> Option<&'a str>,
    ) -> Runtime<'a> {
        Runtime {
            code,
            arch,
            import_at,
            pointer_at: &|_| None,
        }
    }

    #[test]
    fn main_is_the_first_argument_of_the_call_to_libc_start_main() {
        // Mapped as in `ls`: `_start` at 0x61d0, the GOT slot at 0x23f90.
        let mut bytes = vec![0u8; 0x61d0 - 0x4000];
        bytes.extend_from_slice(&X86_64_PIE_START);
        let code = CodeMap::from_regions(vec![CodeRegion {
            address: 0x4000,
            end: 0x4000 + bytes.len() as u64,
            bytes: &bytes,
            section: ".text",
        }]);
        let libc = |address: u64| (address == 0x23f90).then_some("__libc_start_main");
        assert_eq!(
            main_from_entry(&runtime(&code, Arch::X86_64, &libc), 0x61d0),
            Some(0x4730)
        );
        // Another import called first: no `main` can be told.
        let other = |address: u64| (address == 0x23f90).then_some("__cxa_atexit");
        assert_eq!(
            main_from_entry(&runtime(&code, Arch::X86_64, &other), 0x61d0),
            None
        );
    }

    #[test]
    fn a_wrapper_that_only_jumps_leads_to_main() {
        // `_start` at 0x401380, `main` at 0x400d00 (as the unstripped build
        // says); the code from 0x400d00 is zeros here.
        let mut bytes = vec![0u8; 0x401380 - 0x400d00];
        for word in AARCH64_STATIC_START {
            bytes.extend_from_slice(&word.to_le_bytes());
        }
        let code = CodeMap::from_regions(vec![CodeRegion {
            address: 0x400d00,
            end: 0x400d00 + bytes.len() as u64,
            bytes: &bytes,
            section: ".text",
        }]);
        let none = |_: u64| None;
        assert_eq!(
            main_from_entry(&runtime(&code, Arch::Aarch64, &none), 0x401380),
            Some(0x400d00)
        );
        // 32-bit x86 passes `main` on the stack: nothing is inferred.
        assert_eq!(
            main_from_entry(&runtime(&code, Arch::X86, &none), 0x401380),
            None
        );
    }
}
