//! The whole-binary code index of one document: every direct reference an
//! instruction makes (calls, jumps, data loads, stores and address
//! computations), every indirect call or jump, and the direct call targets
//! that name procedures no table declared.
//!
//! It is built by one linear sweep over the [`CodeMap`] (the fast, text-free
//! decoder path), once per document, on first need. Linear sweep can
//! misread data embedded in code as instructions; the index says so in its
//! limitations rather than pretending to be exact.

use super::code_map::CodeMap;
use super::disasm::{self, Decoded};
use crate::providers::code::{Arch, Flow, RefKind, UnresolvedKind, Xref};

/// Most references one index keeps. Beyond it the index is `truncated`;
/// the cap bounds memory at a few hundred MB for the largest binaries.
pub const MAX_XREFS: usize = 16_000_000;

/// How often (in bytes of code swept) progress is reported.
const PROGRESS_STEP: u64 = 1 << 20;

/// Progress callback: `(bytes done, bytes total)`.
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// The references and control-flow facts of one document's code.
#[derive(Debug, Default)]
pub struct CodeIndex {
    pub arch: Option<Arch>,
    /// Every reference, sorted by `(from, to, kind)`.
    by_from: Vec<Xref>,
    /// Positions in `by_from`, sorted by `(to, from)`.
    by_to: Vec<u32>,
    /// Indirect calls and jumps, sorted by address.
    indirect: Vec<(u64, UnresolvedKind)>,
    /// Targets of direct calls that land in code, sorted, deduplicated.
    call_targets: Vec<u64>,
    pub instructions: u64,
    pub bytes: u64,
    /// True when [`MAX_XREFS`] was reached.
    pub truncated: bool,
    pub limitations: Vec<String>,
}

impl CodeIndex {
    /// Sweeps every executable region of `code`.
    pub(super) fn build(
        code: &CodeMap<'_>,
        arch: Option<Arch>,
        progress: Progress<'_>,
    ) -> CodeIndex {
        let mut index = CodeIndex {
            arch,
            limitations: code.limitations.clone(),
            ..CodeIndex::default()
        };
        let Some(arch) = arch else {
            index.limitations.push(
                "this architecture has no disassembler in rea (x86, x86-64 and arm64 do); \
                 no references or call targets were read"
                    .to_owned(),
            );
            return index;
        };
        let total = code.byte_len();
        let mut done = 0u64;
        let mut next_report = PROGRESS_STEP;
        progress(0, total);
        for region in code.regions() {
            disasm::sweep(arch, region.bytes, region.address, |decoded| {
                index.record(decoded, arch, code);
                let swept = done + decoded.address.wrapping_sub(region.address);
                if swept >= next_report {
                    next_report = swept + PROGRESS_STEP;
                    progress(swept, total);
                }
            });
            done += region.bytes.len() as u64;
        }
        progress(total, total);
        index.bytes = total;
        index.finish();
        index
    }

    fn record(&mut self, decoded: Decoded, arch: Arch, code: &CodeMap<'_>) {
        self.instructions += 1;
        let from = decoded.address;
        match decoded.flow {
            Flow::Call { target } => {
                self.push(Xref {
                    from,
                    to: target,
                    kind: RefKind::Call,
                });
                if code.contains(target) && is_aligned(arch, target) {
                    self.call_targets.push(target);
                }
            }
            Flow::Jump { target } => self.push(Xref {
                from,
                to: target,
                kind: RefKind::Jump,
            }),
            Flow::ConditionalJump { target } => self.push(Xref {
                from,
                to: target,
                kind: RefKind::ConditionalJump,
            }),
            Flow::IndirectCall => self.indirect.push((from, UnresolvedKind::IndirectCall)),
            Flow::IndirectJump => self.indirect.push((from, UnresolvedKind::IndirectJump)),
            Flow::Sequential | Flow::Return | Flow::Stop => {}
        }
        if let Some(data) = decoded.data {
            self.push(Xref {
                from,
                to: data.target,
                kind: data.kind,
            });
        }
    }

    fn push(&mut self, xref: Xref) {
        if self.by_from.len() < MAX_XREFS {
            self.by_from.push(xref);
        } else {
            self.truncated = true;
        }
    }

    fn finish(&mut self) {
        // The sweep emits in address order, so this is usually one pass.
        if !self.by_from.is_sorted() {
            self.by_from.sort_unstable();
        }
        self.by_from.dedup();
        // Sorting contiguous (target, position) pairs avoids an indirect
        // load per comparison; `by_from` is in source order, so ties on the
        // target end up in source order too. `by_from` holds at most
        // MAX_XREFS (< u32::MAX) entries.
        let mut keyed: Vec<(u64, u32)> = self
            .by_from
            .iter()
            .enumerate()
            .map(|(position, xref)| (xref.to, position as u32))
            .collect();
        keyed.sort_unstable();
        self.by_to = keyed.into_iter().map(|(_, position)| position).collect();
        self.indirect.sort_unstable();
        self.call_targets.sort_unstable();
        self.call_targets.dedup();
        if self.truncated {
            self.limitations.push(format!(
                "the code index holds its cap of {MAX_XREFS} references; references from higher \
                 addresses are missing"
            ));
        }
        self.limitations.push(
            "code was read by linear sweep: data embedded in code may be misread as \
             instructions, and references computed at run time are not seen"
                .to_owned(),
        );
    }

    /// References whose target lies in `[start, end)`, sorted by target then source.
    pub fn xrefs_to(&self, start: u64, end: u64) -> impl Iterator<Item = &Xref> + '_ {
        let target = |i: &u32| self.by_from[*i as usize].to;
        let first = self.by_to.partition_point(|i| target(i) < start);
        let last = self.by_to.partition_point(|i| target(i) < end);
        self.by_to[first..last.max(first)]
            .iter()
            .map(|&i| &self.by_from[i as usize])
    }

    /// References made by instructions in `[start, end)`, in address order.
    pub fn xrefs_from(&self, start: u64, end: u64) -> &[Xref] {
        let first = self.by_from.partition_point(|x| x.from < start);
        let last = self.by_from.partition_point(|x| x.from < end);
        &self.by_from[first..last.max(first)]
    }

    /// Indirect calls and jumps in `[start, end)`.
    pub fn indirect_in(&self, start: u64, end: u64) -> &[(u64, UnresolvedKind)] {
        let first = self.indirect.partition_point(|(at, _)| *at < start);
        let last = self.indirect.partition_point(|(at, _)| *at < end);
        &self.indirect[first..last.max(first)]
    }

    /// Direct call targets inside code, sorted.
    pub fn call_targets(&self) -> &[u64] {
        &self.call_targets
    }

    /// Every reference, sorted by source.
    pub fn xrefs(&self) -> &[Xref] {
        &self.by_from
    }

    pub fn xref_count(&self) -> usize {
        self.by_from.len()
    }
}

/// AArch64 instructions are 4-byte aligned; a misaligned "call target" is
/// an artefact of sweeping data and is not a procedure.
fn is_aligned(arch: Arch, address: u64) -> bool {
    match arch {
        Arch::Aarch64 => address.is_multiple_of(4),
        Arch::X86 | Arch::X86_64 => true,
    }
}

/// The architecture of a parsed document, if rea can disassemble it.
pub(super) fn arch_of(file: &object::File<'_>) -> Option<Arch> {
    disasm::arch_of(file)
}
