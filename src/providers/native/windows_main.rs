//! `main` of a Windows console executable, from how its C runtime hands
//! over the command line: an inference, marked `c_runtime_main` like the
//! ELF one (see [`super::c_runtime`]).
//!
//! The two C runtimes that build most Windows executables both fetch
//! `argc` through a named import of the C library and pass it to `main`
//! as its first argument:
//!
//! - MSVC's (`__scrt_common_main_seh`, universal CRT): `call __p___argc`
//!   returns a pointer to `argc`, then `mov ecx, [rax]` (ARM64: `ldr w0,
//!   [x0]`) and `call main`.
//! - MinGW-w64's (`__tmainCRTStartup`, msvcrt): `__getmainargs(&argc,
//!   &argv, &envp, …)` fills a variable of the runtime; later `mov ecx,
//!   [argc]` and `call main`.
//!
//! So `main` is the local function called within a few straight-line
//! instructions of fetching `argc`, with `argc` still in the first-argument
//! register. The wide imports (`__p___wargv`, `__wgetmainargs`) make it
//! `wmain`. What this cannot see is left unnamed: 32-bit x86 (arguments on
//! the stack), a C runtime linked in statically (no import to recognise),
//! `WinMain` (a GUI executable is passed no `argc`), and two different
//! callees that both look like the handover.

use super::code_index::CodeIndex;
use super::code_map::CodeMap;
use super::disasm::shape::Shape;
use super::disasm::{self, Convention, Decoded, Walker};
use super::imports::Import;
use super::thunks::Thunks;
use crate::providers::code::{Arch, Flow, RefKind};

/// Instructions followed from the fetch of `argc` to the call of `main`
/// (MSVC has 4, MinGW-w64 5).
const WINDOW: usize = 16;

/// How far before its call `__getmainargs`'s first argument may be set up
/// (five arguments, the fifth stored on the stack).
const SETUP: u64 = 64;

/// The import that returns a pointer to `argc` (universal CRT).
const ARGC_POINTER: &str = "__p___argc";

/// What [`windows_main`] reads.
pub(super) struct Startup<'a> {
    pub code: &'a CodeMap<'a>,
    pub index: &'a CodeIndex,
    pub arch: Arch,
    pub thunks: &'a Thunks,
}

/// `main`'s address and name (`main` or `wmain`), when exactly one local
/// function is called the way the C runtime calls it.
pub(super) fn windows_main(startup: &Startup<'_>) -> Option<(u64, &'static str)> {
    let convention = disasm::windows_convention(startup.arch)?;
    let imports = startup.thunks.imports();
    let imported = |name: &str| imports.iter().any(|import| &*import.name == name);
    let mut found: Vec<(u64, bool)> = Vec::new();
    for import in imports {
        match &*import.name {
            ARGC_POINTER => {
                let wide = imported("__p___wargv") && !imported("__p___argv");
                for site in call_sites(startup, import) {
                    found.extend(follow(startup, convention, site, None).map(|main| (main, wide)));
                }
            }
            name @ ("__getmainargs" | "__wgetmainargs") => {
                let wide = name == "__wgetmainargs";
                for site in call_sites(startup, import) {
                    let Some(argc) = first_argument_address(startup, convention, site) else {
                        continue;
                    };
                    let loads = startup
                        .index
                        .xrefs_to(argc, argc + 1)
                        .filter(|xref| xref.kind == RefKind::Read);
                    for load in loads {
                        let main = follow(startup, convention, load.from, Some(argc));
                        found.extend(main.map(|main| (main, wide)));
                    }
                }
            }
            _ => {}
        }
    }
    found.sort_unstable();
    found.dedup();
    match found.as_slice() {
        [(main, wide)] => Some((*main, if *wide { "wmain" } else { "main" })),
        _ => None,
    }
}

/// Addresses of the instructions that call `import` (through a stub or
/// straight through its slot).
fn call_sites(startup: &Startup<'_>, import: &Import) -> Vec<u64> {
    let mut sites: Vec<u64> = import
        .stubs
        .iter()
        .chain(&import.slots)
        .flat_map(|&address| startup.index.xrefs_to(address, address.saturating_add(1)))
        .filter(|xref| xref.kind == RefKind::Call)
        .map(|xref| xref.from)
        .collect();
    sites.sort_unstable();
    sites.dedup();
    sites
}

/// The address last put in the first-argument register before the call
/// at `site` (`lea rcx, [argc]`).
fn first_argument_address(startup: &Startup<'_>, convention: Convention, site: u64) -> Option<u64> {
    let region = startup.code.region_of(site)?;
    let mut walker = Walker::new(startup.arch, region.bytes, region.address);
    startup
        .index
        .xrefs_from(site.saturating_sub(SETUP), site)
        .iter()
        .filter(|xref| xref.kind == RefKind::Address)
        .filter_map(|xref| match walker.decode_at(xref.from)? {
            (_, Shape::AddressOf { reg, address }) if reg == convention.first_argument => {
                Some(address)
            }
            _ => None,
        })
        .last()
}

/// Registers (as [`Shape`]'s `Inherited` bits) known to hold `argc` or a
/// pointer to it.
#[derive(Default, Clone, Copy)]
struct Held {
    argc: u32,
    argc_pointer: u32,
}

impl Held {
    fn overwrite(&mut self, registers: u32) {
        self.argc &= !registers;
        self.argc_pointer &= !registers;
    }
}

/// Reads straight-line code from `start` (a call of `__p___argc`, or a
/// load of the `argc` variable) to the first call of a local function,
/// and answers that function if `argc` is its first argument.
fn follow(
    startup: &Startup<'_>,
    convention: Convention,
    start: u64,
    argc_variable: Option<u64>,
) -> Option<u64> {
    let arch = startup.arch;
    let bit = |reg| disasm::register_bit(arch, reg);
    let region = startup.code.region_of(start)?;
    let mut walker = Walker::new(arch, region.bytes, region.address);
    let mut held = Held::default();
    let mut next = walker.decode_at(start);
    for _ in 0..WINDOW {
        let (decoded, shape) = next?;
        match decoded.flow {
            Flow::Call { .. } | Flow::IndirectCall => match import_called(startup, &decoded) {
                Some(import) => {
                    held.overwrite(convention.volatile);
                    if &*import.name == ARGC_POINTER {
                        held.argc_pointer |= bit(convention.result);
                    }
                }
                None => {
                    let Flow::Call { target } = decoded.flow else {
                        return None;
                    };
                    let passed = held.argc & bit(convention.first_argument) != 0;
                    return (passed && startup.code.contains(target)).then_some(target);
                }
            },
            Flow::Sequential => {
                let argc = match shape {
                    Shape::LoadFixed {
                        dst,
                        base: Some(base),
                        disp: 0,
                        width: 4,
                    } if held.argc_pointer & bit(base) != 0 => Some(dst),
                    Shape::LoadFixed {
                        dst,
                        base: None,
                        disp,
                        width: 4,
                    } if Some(disp) == argc_variable => Some(dst),
                    _ => None,
                };
                held.overwrite(walker.inherited().clobbers);
                if let Some(dst) = argc {
                    held.argc |= bit(dst);
                }
            }
            // The handover is straight-line code.
            _ => return None,
        }
        next = walker.decode_next();
    }
    None
}

/// The import a call instruction reaches, through a stub or its slot.
fn import_called<'a>(startup: &Startup<'a>, decoded: &Decoded) -> Option<&'a Import> {
    let address = match decoded.flow {
        Flow::Call { target } => target,
        Flow::IndirectCall => decoded.data?.target,
        _ => return None,
    };
    startup.thunks.import_at(address)
}
