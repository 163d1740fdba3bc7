//! The whole-binary code index of one document: every direct reference an
//! instruction makes (calls, jumps, data loads, stores and address
//! computations), every indirect call or jump, and the direct call targets
//! that name procedures no table declared.
//!
//! It is built by one linear sweep over the [`CodeMap`] (the fast, text-free
//! decoder path; large x86 regions on two cores, see [`split`]), once per
//! document, on first need. Linear sweep can
//! misread data embedded in code as instructions; the index says so in its
//! limitations rather than pretending to be exact.

mod split;

use super::code_map::CodeMap;
use super::disasm::{self, Decoded};
use crate::providers::code::{Arch, Flow, RefKind, UnresolvedKind, Xref};
use split::Meter;

/// Most references one index keeps. Beyond it the index is `truncated`;
/// the cap bounds memory at a few hundred MB for the largest binaries.
pub const MAX_XREFS: usize = 16_000_000;

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
            limitations: code.limitations.sentences(),
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
        let meter = Meter::new(progress, code.byte_len());
        let mut facts = Facts::default();
        let mut checkpoint = crate::providers::interrupt::Checkpoint::new();
        for region in code.regions() {
            if checkpoint.stop() {
                break;
            }
            split::sweep_region(arch, region, code, &meter, &mut facts);
        }
        meter.finish();
        index.bytes = code.byte_len();
        index.by_from = facts.by_from;
        index.indirect = facts.indirect;
        index.call_targets = facts.calls.into_iter().map(|(_, target)| target).collect();
        index.instructions = facts.instructions;
        index.truncated = facts.truncated;
        index.finish();
        index
    }

    fn finish(&mut self) {
        // The sweep emits in address order, so this is usually one pass.
        if !self.by_from.is_sorted() {
            self.by_from.sort_unstable();
        }
        self.by_from.dedup();
        // A stable radix sort of (target, position) pairs, built in
        // position order, leaves ties on the target in source order; it
        // takes a few passes over contiguous memory where a comparison
        // sort took a fifth of the index's time. `by_from` holds at most
        // MAX_XREFS (< u32::MAX) entries.
        let mut keyed: Vec<(u64, u32)> = self
            .by_from
            .iter()
            .enumerate()
            .map(|(position, xref)| (xref.to, position as u32))
            .collect();
        radsort::sort_by_key(&mut keyed, |&(target, _)| target);
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

/// What a sweep of some code found, before sorting: the raw material of a
/// [`CodeIndex`], kept apart so that parts of a region swept on different
/// cores can be joined.
#[derive(Debug, Default, PartialEq, Eq)]
struct Facts {
    by_from: Vec<Xref>,
    indirect: Vec<(u64, UnresolvedKind)>,
    /// `(call site, target)` of direct calls into code.
    calls: Vec<(u64, u64)>,
    instructions: u64,
    truncated: bool,
}

impl Facts {
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
                    self.calls.push((from, target));
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

    /// Appends the facts of `later`, swept from a higher address, about
    /// its instructions at `from` and above; `skipped` of its
    /// instructions lay below `from`.
    fn append(&mut self, later: Facts, from: u64, skipped: u64) {
        for xref in later.by_from.into_iter().filter(|xref| xref.from >= from) {
            self.push(xref);
        }
        self.truncated |= later.truncated;
        self.indirect
            .extend(later.indirect.into_iter().filter(|(at, _)| *at >= from));
        self.calls
            .extend(later.calls.into_iter().filter(|(at, _)| *at >= from));
        self.instructions += later.instructions.saturating_sub(skipped);
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
