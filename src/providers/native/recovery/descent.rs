//! The recursive descent of [`super::recover`]: one procedure at a time,
//! a worklist of addresses, each followed along its straight-line run
//! until control leaves it or the run reaches claimed bytes, padding or
//! another procedure's start.

use crate::providers::interrupt::Checkpoint;
use std::collections::{BTreeMap, HashMap, HashSet};

use super::super::disasm::Walker;
use super::super::disasm::shape::{Inherited, Reg, Shape};
use super::claims::Claims;
use super::jump_tables::{self, Resolution};
use super::{Found, Input, Recovery};
use crate::providers::Source;
use crate::providers::code::{Arch, Flow, RefKind};

/// Shapes remembered along a run for jump-table recognition.
const HISTORY: usize = 16;
/// Instructions a candidate start is read for before it is believed.
const PLAUSIBLE_RUN: usize = 32;
/// The alignment compilers give functions at `-O2` (gcc, clang and rustc
/// on x86-64 and AArch64).
const FUNCTION_ALIGNMENT: u64 = 16;
/// Widest unclaimed gap between two runs of one procedure that is taken
/// as that procedure's own code.
const HOLE: u64 = 4096;
/// Farthest a jump-table target may lie from its jump.
const TABLE_REACH: u64 = 1 << 20;
/// How far from its jump a case of a table no compare bounds may lie.
const DELIMITED_REACH: u64 = 1 << 16;
/// Instructions of a block read to tell a procedure's inside from an
/// entry ([`Descent::reads_as_inside`]).
const ENTRY_WINDOW: usize = 8;
/// Call sites followed by padding that show a callee never returns.
const PADDED_CALLS: usize = 2;
/// Jump-table entries one pass may read in all, beyond a quarter of the
/// code's bytes. One table's entries are in the file once, but any number
/// of jumps may claim it (a hostile file points 20,000 switches at one
/// table of 2,000,000 entries, each bounded by `cmp edi, 0x7fffffff`):
/// without a total, work and memory grow as jumps × entries. Real code
/// holds far fewer case entries than a quarter of its bytes.
const MIN_TABLE_ENTRIES: u64 = 1 << 16;

/// Addresses still to walk, each with the shapes on the path to it.
type Worklist = Vec<(u64, Vec<Shape>)>;

/// One procedure the descent walked.
struct Walked {
    start: u64,
    /// `[start, end)` of the runs it claimed, in claim order.
    runs: Vec<(u64, u64)>,
    /// `(from, to, conditional)` of the branches it followed inside itself.
    branches: Vec<(u64, u64, bool)>,
    /// Addresses it computes into registers: `(reg, address, unique)`,
    /// where `unique` is false once the register got two different ones.
    registers: Vec<(Reg, u64, bool)>,
    /// Whether some path returns: a `ret`, a jump through a register no
    /// table explains, or a tail call.
    returns: bool,
    /// Known starts it tail-calls.
    tail_calls: Vec<u64>,
    /// Callees after whose call only padding follows (the first pass stops
    /// there, suspecting they never return).
    suspected: Vec<u64>,
    /// Whether it enters code through a computed jump (a base plus an
    /// offset no table holds): its blocks after the base are its own.
    computed: bool,
}

impl Walked {
    fn new(start: u64) -> Walked {
        Walked {
            start,
            runs: Vec::new(),
            branches: Vec::new(),
            registers: Vec::new(),
            returns: false,
            tail_calls: Vec::new(),
            suspected: Vec::new(),
            computed: false,
        }
    }

    /// Notes what an instruction computes into a register.
    fn note(&mut self, shape: Shape) {
        match shape {
            Shape::AddressOf { reg, address } => {
                match self.registers.iter_mut().find(|(r, _, _)| *r == reg) {
                    Some(entry) if entry.1 != address => entry.2 = false,
                    Some(_) => {}
                    None => self.registers.push((reg, address, true)),
                }
            }
            // The low half after `adrp`: the same register, completed.
            Shape::AddImmediate { dst, src, imm } if dst == src => {
                if let Some(entry) = self.registers.iter_mut().find(|(r, _, _)| *r == dst) {
                    entry.1 = entry.1.wrapping_add(imm);
                }
            }
            _ => {}
        }
    }

    /// The one address the procedure computes into `reg`, if one.
    fn register(&self, reg: Reg) -> Option<u64> {
        self.registers
            .iter()
            .find(|(r, _, unique)| *r == reg && *unique)
            .map(|&(_, address, _)| address)
    }
}

pub(super) struct Descent<'a> {
    input: &'a Input<'a>,
    claims: Claims,
    /// One decoder per code region, in region order.
    walkers: Vec<Walker<'a>>,
    /// Every start known so far: the input's, then each one found.
    starts: HashSet<u64>,
    pending_tail_calls: Vec<u64>,
    walked: Vec<Walked>,
    /// Every run walked: start -> (end, index in `walked`).
    runs: BTreeMap<u64, (u64, usize)>,
    found: Vec<Found>,
    tables: usize,
    unbounded_tables: usize,
    /// First pass: a call followed by padding ends its path.
    suspect: bool,
    /// Procedures the first pass showed never return.
    never_return: HashSet<u64>,
    /// Branch targets of the first pass, with the start of the procedure
    /// that branched there.
    foreign_targets: HashMap<u64, u64>,
    /// Stops the walk when the call is interrupted (its result is then
    /// discarded).
    checkpoint: Checkpoint,
    /// Jump-table entries this pass may still read (see
    /// [`MIN_TABLE_ENTRIES`]), and how many it read.
    table_entries_left: u64,
    table_entries_read: u64,
}

impl<'a> Descent<'a> {
    pub(super) fn new(
        input: &'a Input<'a>,
        claims: Claims,
        suspect: bool,
        (never_return, foreign_targets): (HashSet<u64>, HashMap<u64, u64>),
    ) -> Descent<'a> {
        Descent {
            input,
            claims,
            walkers: input
                .code
                .regions()
                .iter()
                .map(|region| Walker::new(input.arch, region.bytes, region.address))
                .collect(),
            starts: input.known.iter().map(|&(start, _)| start).collect(),
            pending_tail_calls: Vec::new(),
            walked: Vec::new(),
            runs: BTreeMap::new(),
            found: Vec::new(),
            tables: 0,
            unbounded_tables: 0,
            suspect,
            never_return,
            foreign_targets,
            checkpoint: Checkpoint::new(),
            table_entries_left: input.code.byte_len() / 4 + MIN_TABLE_ENTRIES,
            table_entries_read: 0,
        }
    }

    /// What the first pass knows for the second: the procedures that never
    /// return ([`Descent::non_returning`]) and who branches where.
    pub(super) fn lessons(&self) -> (HashSet<u64>, HashMap<u64, u64>) {
        let targets = self
            .walked
            .iter()
            .flat_map(|walked| walked.branches.iter().map(|&(_, to, _)| (to, walked.start)))
            .collect();
        (self.non_returning(), targets)
    }

    /// The procedures that never return, from what the first pass walked:
    /// no path returns, and every call it stopped after and every tail
    /// call goes to an import that never returns or to another such
    /// procedure (the largest set closed under that rule). Also every
    /// callee after whose call padding follows at [`PADDED_CALLS`] sites or
    /// more, whatever its own code shows (`_Unwind_Resume` ends in a jump
    /// through a register): the compilers of its callers knew.
    fn non_returning(&self) -> HashSet<u64> {
        let mut padded: HashMap<u64, usize> = HashMap::new();
        for walked in &self.walked {
            for &callee in &walked.suspected {
                *padded.entry(callee).or_default() += 1;
            }
        }
        let mut set = self.closed_non_returning();
        set.extend(
            padded
                .into_iter()
                .filter(|&(_, sites)| sites >= PADDED_CALLS)
                .map(|(callee, _)| callee),
        );
        set
    }

    /// The largest set of walked procedures closed under the rule of
    /// [`Descent::non_returning`].
    fn closed_non_returning(&self) -> HashSet<u64> {
        let mut set: HashSet<u64> = self
            .walked
            .iter()
            .filter(|walked| !walked.returns)
            .map(|walked| walked.start)
            .collect();
        loop {
            let before = set.len();
            for walked in &self.walked {
                let depends = walked.suspected.iter().chain(&walked.tail_calls);
                let closed = depends
                    .clone()
                    .all(|&callee| set.contains(&callee) || self.import_never_returns(callee));
                if !closed {
                    set.remove(&walked.start);
                }
            }
            if set.len() == before {
                return set;
            }
        }
    }

    /// The instruction at `address` and its shape.
    fn decode(&mut self, address: u64) -> Option<(super::super::disasm::Decoded, Shape)> {
        self.walker_of(address)?.decode_at(address)
    }

    /// The decoder of the region holding `address`.
    fn walker_of(&mut self, address: u64) -> Option<&mut Walker<'a>> {
        let regions = self.input.code.regions();
        let index = regions
            .partition_point(|region| region.address <= address)
            .checked_sub(1)?;
        if address >= regions[index].end {
            return None;
        }
        self.walkers.get_mut(index)
    }

    /// Whether the code at `address` reads as the inside of a procedure,
    /// not an entry: its first straight-line instructions read a register
    /// only code already running there sets
    /// ([`Inherited`](super::super::disasm::shape::Inherited)), as a
    /// landing pad's `mov rbx, rax` or a cleanup's `mov x0, x19` does,
    /// write a callee-saved register it has not saved (`mov x19, x0`), or
    /// (x86-64) call something before moving the stack pointer, as a
    /// terminate pad's `call panic_in_cleanup` does.
    fn reads_as_inside(&mut self, address: u64) -> bool {
        let x86_64 = self.input.arch == Arch::X86_64;
        let mut written = 0u32;
        let mut saved = 0u32;
        let mut stack_moved = false;
        let mut at = address;
        for _ in 0..ENTRY_WINDOW {
            let Some(walker) = self.walker_of(at) else {
                return false;
            };
            let Some((decoded, _)) = walker.decode_at(at) else {
                return false;
            };
            let access = walker.inherited();
            // A callee-saved register read before it is written, or
            // written before it is saved.
            let clobbered = access.writes & !Inherited::EXCEPTION_POINTER & !saved;
            if access.reads & !written != 0 || clobbered != 0 {
                return true;
            }
            saved |= access.saves;
            let calls = matches!(decoded.flow, Flow::Call { .. } | Flow::IndirectCall);
            if x86_64 && calls && !stack_moved {
                return true;
            }
            written |= access.writes;
            stack_moved |= access.moves_stack;
            if decoded.flow != Flow::Sequential {
                return false;
            }
            at = at.wrapping_add(u64::from(decoded.len));
        }
        false
    }

    fn region_bounds(&self, address: u64) -> Option<(u64, u64)> {
        self.input
            .code
            .region_of(address)
            .map(|region| (region.address, region.end))
    }

    fn aligned(&self, address: u64) -> bool {
        self.input.arch != Arch::Aarch64 || address.is_multiple_of(4)
    }

    fn excluded(&self, address: u64) -> bool {
        self.input
            .excluded
            .iter()
            .any(|&(start, end)| (start..end).contains(&address))
    }

    /// Walks the procedure at `start`, unless its bytes are already
    /// claimed. `source` is how it was found when it is new (`None` for a
    /// start the input already knew).
    pub(super) fn procedure(&mut self, start: u64, source: Option<Source>) {
        if self.claims.is_claimed(start) || !self.input.code.contains(start) || !self.aligned(start)
        {
            return;
        }
        let owner = match source {
            Some(Source::CodeGap) => self
                .hole_owner(start)
                .or_else(|| self.tail_owner(start))
                .or_else(|| self.body_owner(start)),
            Some(_) => self.hole_owner(start),
            None => None,
        };
        if let Some(owner) = owner {
            // Code between two runs of one procedure is that procedure's
            // (a case its unresolved switch reaches), whatever points at it.
            let mut walked = std::mem::replace(&mut self.walked[owner], Walked::new(0));
            // The last run may grow (a run that continues it merges in),
            // so it is indexed again with the new ones.
            let first_new = walked.runs.len().saturating_sub(1);
            self.walk_from(&mut walked, start);
            self.index_runs(owner, &walked.runs[first_new..]);
            self.walked[owner] = walked;
            return;
        }
        let start = match source {
            Some(Source::CodeGap | Source::TailCall) => self.entry_nop_before(start),
            _ => start,
        };
        if let Some(source) = source {
            self.starts.insert(start);
            self.found.push(Found {
                address: start,
                source,
                part_of: None,
            });
        }
        let mut walked = Walked::new(start);
        self.walk_from(&mut walked, start);
        self.index_runs(self.walked.len(), &walked.runs);
        self.walked.push(walked);
    }

    fn walk_from(&mut self, walked: &mut Walked, start: u64) {
        let mut worklist = vec![(start, Vec::new())];
        while let Some((address, history)) = worklist.pop() {
            if self.checkpoint.stop() {
                return;
            }
            self.run(walked, address, history, &mut worklist);
        }
    }

    fn index_runs(&mut self, owner: usize, runs: &[(u64, u64)]) {
        for &(start, end) in runs {
            self.runs.insert(start, (end, owner));
        }
    }

    /// The procedure whose run ends right at `address`, when `address` is
    /// not where a compiler would start a function (functions are aligned
    /// to 16 bytes, with padding before): code no branch reaches that
    /// directly follows a procedure is that procedure's (a landing pad the
    /// unwinder enters, code after a call that does not return).
    ///
    /// At an aligned address it must also read as such code: its first
    /// block ends in a call that never returns (`_Unwind_Resume`) or jumps
    /// back into the procedure.
    fn tail_owner(&mut self, address: u64) -> Option<usize> {
        let (&start, &(end, owner)) = self.runs.range(..address).next_back()?;
        let entry = self.walked.get(owner)?.start;
        // Only after the procedure's own body: its pieces laid out apart
        // (gcc puts `.cold` code before the hot code) are followed by
        // other procedures' pieces.
        if end != address || start < entry {
            return None;
        }
        if address.is_multiple_of(FUNCTION_ALIGNMENT)
            && !self.returns_into(address, entry)
            && !self.reads_as_inside(address)
        {
            return None;
        }
        Some(owner)
    }

    /// The procedure whose body's last run before `address` lies at most
    /// [`HOLE`] bytes before it, when the code at `address` reads as that
    /// procedure's inside ([`Descent::reads_as_inside`]): a landing pad
    /// laid out after the body, past padding or code of its own no branch
    /// reaches. Code in the area of pieces laid out apart (before the
    /// procedure's entry) is left to start its own. After a procedure that
    /// jumps into computed blocks, any such code is its (the blocks no
    /// table lists).
    fn body_owner(&mut self, address: u64) -> Option<usize> {
        let (&start, &(end, owner)) = self.runs.range(..address).next_back()?;
        let walked = self.walked.get(owner)?;
        let (entry, computed) = (walked.start, walked.computed);
        let near = start >= entry && address.saturating_sub(end) <= HOLE;
        (near && (computed || self.reads_as_inside(address))).then_some(owner)
    }

    /// Whether the first block at `address` ends in a call to an import
    /// that never returns or in a jump back to `[entry, address)`.
    fn returns_into(&mut self, address: u64, entry: u64) -> bool {
        let mut at = address;
        for _ in 0..PLAUSIBLE_RUN {
            let Some((decoded, _)) = self.decode(at) else {
                return false;
            };
            match decoded.flow {
                Flow::Call { target } => {
                    if self.import_never_returns(target) {
                        return true;
                    }
                }
                Flow::IndirectCall => {
                    let slot = decoded.data.filter(|data| data.kind == RefKind::Call);
                    if slot.is_some_and(|data| self.import_never_returns(data.target)) {
                        return true;
                    }
                }
                Flow::Jump { target } | Flow::ConditionalJump { target } => {
                    if (entry..address).contains(&target) {
                        return true;
                    }
                    if matches!(decoded.flow, Flow::Jump { .. }) {
                        return false;
                    }
                }
                Flow::Sequential => {}
                _ => return false,
            }
            at = at.wrapping_add(u64::from(decoded.len));
        }
        false
    }

    /// The procedure whose runs lie on both sides of `address`, at most
    /// [`HOLE`] bytes apart with nothing claimed between.
    fn hole_owner(&self, address: u64) -> Option<usize> {
        let (&before_start, &(before_end, before)) = self.runs.range(..=address).next_back()?;
        let (&after_start, &(_, after)) = self.runs.range(address..).next()?;
        // Only within the body: pieces laid out apart are packed among
        // other procedures' pieces.
        let hole = before == after
            && before_end <= address
            && after_start.saturating_sub(before_end) <= HOLE
            && before_start >= self.walked.get(before)?.start;
        hole.then_some(before)
    }

    /// Follows one straight-line run from `address`.
    /// `history` holds the shapes on the path that branched here, so a
    /// switch whose bounding compare sits before a conditional branch to
    /// its dispatch still sees it.
    fn run(
        &mut self,
        walked: &mut Walked,
        mut address: u64,
        mut history: Vec<Shape>,
        worklist: &mut Worklist,
    ) {
        let run_start = address;
        loop {
            let entering_another = address != walked.start && self.starts.contains(&address);
            if entering_another || self.claims.is_claimed(address) {
                break;
            }
            let Some((decoded, shape)) = self.decode(address) else {
                break;
            };
            let next = address.wrapping_add(u64::from(decoded.len));
            // Padding reached by falling through is executed (compilers
            // align loop heads with it); a call followed by padding was
            // already taken as not returning.
            if shape == Shape::Undecodable {
                break;
            }
            self.claims.claim(address, next);
            match walked.runs.last_mut() {
                Some(last) if last.1 == address => last.1 = next,
                _ => walked.runs.push((address, next)),
            }
            if history.len() == HISTORY {
                history.remove(0);
            }
            walked.note(shape);
            match decoded.flow {
                Flow::Sequential => {}
                Flow::IndirectCall => {
                    let through = decoded
                        .data
                        .filter(|data| data.kind == RefKind::Call)
                        .map(|data| data.target);
                    if through.is_some_and(|slot| self.import_never_returns(slot)) {
                        break;
                    }
                }
                Flow::Call { target } => {
                    if self.import_never_returns(target) {
                        break;
                    }
                    // A callee shown not to return ends the path only
                    // where padding follows: a compiler that did not know
                    // leaves code after the call, which is the caller's.
                    let suspect = self.suspect || self.never_return.contains(&target);
                    if suspect && self.padding_at(next) {
                        walked.suspected.push(target);
                        break;
                    }
                    // Code after it that another procedure branches to
                    // is that procedure's (`.cold` pieces are packed).
                    let foreign = self
                        .foreign_targets
                        .get(&next)
                        .is_some_and(|&owner| owner != walked.start);
                    if self.never_return.contains(&target) && foreign {
                        break;
                    }
                }
                Flow::ConditionalJump { target } => {
                    let mut path = history.clone();
                    path.push(shape);
                    self.branch(walked, address, target, true, path, worklist);
                }
                Flow::Jump { target } => {
                    self.jump(walked, address, next, target, history, worklist);
                    break;
                }
                Flow::IndirectJump => {
                    self.dispatch(walked, address, &history, shape, worklist);
                    break;
                }
                Flow::Return => {
                    walked.returns = true;
                    break;
                }
                Flow::Stop => break,
            }
            history.push(shape);
            address = next;
            if address == run_start {
                break;
            }
        }
    }

    fn import_never_returns(&self, target: u64) -> bool {
        self.input.noreturn.binary_search(&target).is_ok()
    }

    /// Whether the instruction at `address` is padding.
    fn padding_at(&mut self, address: u64) -> bool {
        matches!(self.decode(address), Some((_, Shape::Padding)))
    }

    /// `address`, or on AArch64 the unclaimed `nop` just before it when
    /// that `nop` is 16-aligned: glibc's assembly functions open with one
    /// (where `bti c` would go), and branches to them skip it. Alignment
    /// padding ends at an aligned address, so a `nop` ending 4 bytes past
    /// one opens the function.
    fn entry_nop_before(&mut self, address: u64) -> u64 {
        let Some(nop) = address.checked_sub(4) else {
            return address;
        };
        let opens = self.input.arch == Arch::Aarch64
            && nop.is_multiple_of(FUNCTION_ALIGNMENT)
            && !self.claims.is_claimed(nop)
            && self.padding_at(nop);
        if opens { nop } else { address }
    }

    /// Whether `address` is where a compiler starts a function: aligned,
    /// and right after padding (AArch64: or after an instruction that does
    /// not fall through). Decoding x86 backwards is a guess, so there only
    /// padding counts, and only what would be padding whatever the bytes
    /// before it: a multi-byte `nop`, or a one-byte `nop`/`int3`.
    fn after_boundary(&mut self, address: u64) -> bool {
        if !address.is_multiple_of(FUNCTION_ALIGNMENT) {
            return false;
        }
        match self.input.arch {
            Arch::Aarch64 => address.checked_sub(4).is_some_and(|before| {
                self.decode(before).is_some_and(|(decoded, shape)| {
                    shape == Shape::Padding || !decoded.flow.falls_through()
                })
            }),
            Arch::X86 | Arch::X86_64 => (1..=15u64).any(|width| {
                let Some(before) = address.checked_sub(width) else {
                    return false;
                };
                let bytes = self
                    .input
                    .code
                    .region_of(before)
                    .map_or(&[][..], |region| region.bytes_from(before));
                let single = width == 1 && matches!(bytes.first(), Some(0x90 | 0xcc));
                // Zero bytes decode as padding too, but end many an
                // instruction (`mov r12, [rsp + 0x90]`).
                let zeros = bytes.iter().take(width as usize).all(|&byte| byte == 0);
                let multi = width > 1
                    && !zeros
                    && self.decode(before).is_some_and(|(decoded, shape)| {
                        u64::from(decoded.len) == width && shape == Shape::Padding
                    });
                single || multi
            }),
        }
    }

    /// The first address at or after `address` that is not padding.
    fn skip_padding(&mut self, mut address: u64) -> u64 {
        for _ in 0..64 {
            match self.decode(address) {
                Some((decoded, Shape::Padding)) => {
                    address = address.wrapping_add(u64::from(decoded.len.max(1)));
                }
                _ => break,
            }
        }
        address
    }

    /// A conditional branch (or a table entry): another procedure's start
    /// is a tail call; anything else in code is this procedure's.
    fn branch(
        &mut self,
        walked: &mut Walked,
        from: u64,
        target: u64,
        conditional: bool,
        history: Vec<Shape>,
        worklist: &mut Worklist,
    ) {
        if !self.input.code.contains(target) || !self.aligned(target) {
            return;
        }
        if target != walked.start && self.starts.contains(&target) {
            walked.tail_calls.push(target);
            return;
        }
        walked.branches.push((from, target, conditional));
        worklist.push((target, history));
    }

    /// An unconditional jump: a tail call when it goes to a known start or
    /// over padding to the first instruction after it (a procedure does
    /// not jump over padding to its next instruction), else a branch.
    fn jump(
        &mut self,
        walked: &mut Walked,
        from: u64,
        next: u64,
        target: u64,
        history: Vec<Shape>,
        worklist: &mut Worklist,
    ) {
        if !self.input.code.contains(target) {
            // A jump out of the code (through a stub's slot) returns
            // for all rea knows.
            walked.returns = true;
            return;
        }
        if target == walked.start {
            return;
        }
        if self.starts.contains(&target) {
            walked.tail_calls.push(target);
            return;
        }
        // A jump to the very next instruction is no boundary (LLVM ends
        // landing pads so); over padding, it leaves the procedure. So does
        // a jump back before the entry to where a function would start
        // (its body has no loop head there; its pieces laid out apart are
        // packed, not aligned after padding).
        let over_padding = target != next && target == self.skip_padding(next);
        let back_to_a_start = target < walked.start && self.after_boundary(target);
        if (over_padding || back_to_a_start) && !self.excluded(target) {
            self.starts.insert(target);
            self.pending_tail_calls.push(target);
            walked.tail_calls.push(target);
            return;
        }
        self.branch(walked, from, target, false, history, worklist);
    }

    /// An indirect jump: a switch table's cases are this procedure's.
    fn dispatch(
        &mut self,
        walked: &mut Walked,
        from: u64,
        history: &[Shape],
        shape: Shape,
        worklist: &mut Worklist,
    ) {
        let Some((low, high)) = self.region_bounds(from) else {
            return;
        };
        let words = self.input.words;
        let pointers = self.input.pointers;
        let unaligned_ok = self.input.arch != Arch::Aarch64;
        // Every entry read counts against the pass's total; a table read
        // when it is spent ends there.
        let left = std::cell::Cell::new(self.table_entries_left);
        let spend = || {
            let more = left.get() > 0;
            left.set(left.get().saturating_sub(1));
            more
        };
        let reader = jump_tables::Reader {
            read: |at, width| spend().then(|| words.value(at, width)).flatten(),
            pointer: |slot| spend().then(|| pointers.value_at(slot)).flatten(),
            register: |reg| walked.register(reg),
            valid: |target: u64, delimited: bool| {
                let reach = if delimited {
                    DELIMITED_REACH
                } else {
                    TABLE_REACH
                };
                (low..high).contains(&target)
                    && target.abs_diff(from) <= reach
                    && (unaligned_ok || target.is_multiple_of(4))
            },
            referenced: self.input.referenced,
        };
        let resolution = jump_tables::resolve(history, shape, &reader);
        self.table_entries_read += self.table_entries_left - left.get();
        self.table_entries_left = left.get();
        match resolution {
            Resolution::Targets(targets) | Resolution::Delimited(targets) => {
                self.tables += 1;
                // Cases share targets (every default case): each is one
                // branch.
                let mut seen = HashSet::with_capacity(targets.len());
                for target in targets {
                    if seen.insert(target) {
                        self.branch(walked, from, target, false, Vec::new(), worklist);
                    }
                }
            }
            Resolution::Unbounded => {
                self.unbounded_tables += 1;
                walked.returns = true;
            }
            Resolution::Unknown => {
                walked.returns = true;
                let base = jump_tables::computed_base(history, shape, &|reg| walked.register(reg));
                if let Some(base) = base.filter(|&base| {
                    (low..high).contains(&base) && base.abs_diff(from) <= DELIMITED_REACH
                }) {
                    walked.computed = true;
                    self.branch(walked, from, base, false, Vec::new(), worklist);
                }
            }
        }
    }

    /// Walks every start found as a tail-call target so far.
    pub(super) fn drain_tail_calls(&mut self) {
        while let Some(target) = self.pending_tail_calls.pop() {
            // Already in `starts`; `procedure` records it as found.
            self.starts.remove(&target);
            // A start that moves to its entry `nop` is inside that
            // procedure, no start of its own.
            let entry = self.entry_nop_before(target);
            self.procedure(target, Some(Source::TailCall));
            if entry == target {
                self.starts.insert(target);
            }
        }
    }

    /// Whether unclaimed code at `address` reads as the start of a
    /// procedure: not padding, and decodable up to the end of its first
    /// run without running into claimed bytes.
    pub(super) fn plausible_start(&mut self, address: u64) -> bool {
        if !self.input.code.contains(address)
            || !self.aligned(address)
            || self.claims.is_claimed(address)
            || self.excluded(address)
        {
            return false;
        }
        let mut at = address;
        let mut after_call = false;
        for step in 0..PLAUSIBLE_RUN {
            // Running into another procedure's entry right after a call:
            // that call does not return (`__cxa_throw`).
            if step > 0 && self.claims.is_claimed(at) {
                return after_call && self.starts.contains(&at);
            }
            let Some((decoded, shape)) = self.decode(at) else {
                return false;
            };
            if step == 0 && shape == Shape::Padding {
                return false;
            }
            match decoded.flow {
                // A trap (`ud2` after a failed check) ends a real run;
                // undecodable bytes do not.
                Flow::Stop => return step > 0 && shape != Shape::Undecodable,
                // A lone `ret` followed by more code is a byte of
                // something else; an empty function is followed by padding.
                Flow::Return if step == 0 => {
                    let next = at.wrapping_add(u64::from(decoded.len));
                    return self.padding_at(next);
                }
                Flow::Return | Flow::Jump { .. } | Flow::IndirectJump => return true,
                _ => {}
            }
            after_call = matches!(decoded.flow, Flow::Call { .. } | Flow::IndirectCall);
            at = at.wrapping_add(u64::from(decoded.len));
        }
        true
    }

    /// Starts a procedure at every run of unclaimed code that is not
    /// padding.
    ///
    /// First, as long as that claims anything, only code that continues a
    /// procedure (a hole in its body, or right after it) is walked, as that
    /// procedure's: its branches then claim the pieces they reach for the
    /// right procedure before any of those pieces could start one of its
    /// own. Then every remaining run starts a procedure.
    pub(super) fn fill_gaps(&mut self) {
        loop {
            let before = self.claimed_runs();
            self.gap_pass(true);
            if self.claimed_runs() == before {
                break;
            }
        }
        self.gap_pass(false);
    }

    /// Runs walked so far, a measure of progress.
    fn claimed_runs(&self) -> usize {
        self.runs.len()
    }

    /// One pass over the unclaimed code; `continuations_only` walks only
    /// code that continues a procedure.
    fn gap_pass(&mut self, continuations_only: bool) {
        let regions: Vec<(u64, u64)> = self
            .input
            .code
            .regions()
            .iter()
            .map(|region| (region.address, region.end))
            .collect();
        for (start, end) in regions {
            let mut address = start;
            while address < end {
                if self.checkpoint.stop() {
                    return;
                }
                let Some(unclaimed) = self.claims.next_unclaimed(address) else {
                    break;
                };
                address = unclaimed;
                if address >= end {
                    break;
                }
                let Some((decoded, _)) = self.decode(address) else {
                    break;
                };
                let step = u64::from(decoded.len.max(1));
                let continues = continuations_only
                    && (self.hole_owner(address).is_some() || self.tail_owner(address).is_some());
                if (continues || !continuations_only) && self.plausible_start(address) {
                    self.procedure(address, Some(Source::CodeGap));
                    self.drain_tail_calls();
                }
                if !self.claims.is_claimed(address) {
                    address = address.wrapping_add(step);
                }
            }
        }
    }

    /// Splits off the fragments, and returns everything found.
    pub(super) fn finish(mut self) -> Recovery {
        let walked = std::mem::take(&mut self.walked);
        for (index, procedure) in walked.iter().enumerate() {
            self.fragments(index, procedure, &walked);
        }
        let mut found = self.found;
        found.sort_unstable_by_key(|found| found.address);
        found.dedup_by_key(|found| found.address);
        let mut limitations = Vec::new();
        if self.table_entries_left == 0 {
            limitations.push(format!(
                "jump tables: reading stopped after {} entries in all (a quarter of the code's \
                 bytes plus {MIN_TABLE_ENTRIES}); the cases of later tables were not followed",
                self.table_entries_read
            ));
        }
        Recovery {
            found,
            tables: self.tables,
            unbounded_tables: self.unbounded_tables,
            #[cfg(test)]
            table_entries: self.table_entries_read,
            limitations,
        }
    }

    /// The pieces of `procedure` not contiguous with its entry (only
    /// padding between counts as contiguous) become starts of their own:
    /// fragments when they branch back into the body or are entered by a
    /// conditional branch, tail-call targets otherwise.
    ///
    /// After the entry, a gap of at most [`HOLE`] bytes that holds no other
    /// procedure's code still joins two pieces: it is this procedure's
    /// code no branch reaches (a landing pad). Before the entry, where
    /// pieces laid out apart are packed (gcc's `.cold`, one per function),
    /// such a gap joins them too unless another procedure starts in it.
    fn fragments(&mut self, index: usize, procedure: &Walked, walked: &[Walked]) {
        let mut runs = procedure.runs.clone();
        runs.sort_unstable();
        let mut pieces: Vec<(u64, u64)> = Vec::new();
        for (start, end) in runs {
            let before_entry = start < procedure.start;
            match pieces.last_mut() {
                Some(last)
                    if last.1 >= start
                        || self.only_padding(last.1, start)
                        || (last.0 >= procedure.start
                            && start - last.1 <= HOLE
                            && self.only_own_runs_between(index, last.1, start))
                        || (before_entry
                            && start - last.1 <= HOLE
                            && self.no_start_between(index, walked, last.1, start)) =>
                {
                    last.1 = last.1.max(end);
                }
                _ => pieces.push((start, end)),
            }
        }
        let Some(body) = pieces
            .iter()
            .copied()
            .find(|&(start, end)| (start..end).contains(&procedure.start))
        else {
            return;
        };
        for &(start, end) in &pieces {
            if (start, end) == body || self.starts.contains(&start) {
                continue;
            }
            let in_body = |address: u64| (body.0..body.1).contains(&address);
            let returns_to_body = procedure
                .branches
                .iter()
                .any(|&(from, to, _)| (start..end).contains(&from) && in_body(to));
            let entered_conditionally = procedure
                .branches
                .iter()
                .any(|&(from, to, conditional)| conditional && to == start && in_body(from));
            let fragment = returns_to_body || entered_conditionally;
            self.starts.insert(start);
            self.found.push(Found {
                address: start,
                source: if fragment {
                    Source::Fragment
                } else {
                    Source::TailCall
                },
                part_of: fragment.then_some(procedure.start),
            });
        }
    }

    /// The procedures owning the runs that start in `[start, end)`.
    fn run_owners(&self, start: u64, end: u64) -> impl Iterator<Item = usize> + '_ {
        self.runs.range(start..end).map(|(_, &(_, owner))| owner)
    }

    /// Whether no run in `[start, end)` belongs to another procedure that
    /// is reported as a start.
    fn no_start_between(&self, owner: usize, walked: &[Walked], start: u64, end: u64) -> bool {
        self.run_owners(start, end).all(|other| {
            other == owner
                || walked
                    .get(other)
                    .is_none_or(|other| !self.starts.contains(&other.start))
        })
    }

    /// Whether every run in `[start, end)` is `owner`'s.
    fn only_own_runs_between(&self, owner: usize, start: u64, end: u64) -> bool {
        self.run_owners(start, end).all(|other| other == owner)
    }

    /// Whether `[start, end)` holds nothing but padding.
    fn only_padding(&mut self, start: u64, end: u64) -> bool {
        let mut at = start;
        while at < end {
            match self.decode(at) {
                Some((decoded, Shape::Padding)) => {
                    at = at.wrapping_add(u64::from(decoded.len.max(1)))
                }
                _ => return false,
            }
        }
        true
    }
}
