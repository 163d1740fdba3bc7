//! One large x86 region swept on two cores, with the same result as one
//! linear sweep from its start.
//!
//! The second half is swept from its midpoint, where it may begin inside
//! an instruction. The first half, having reached the midpoint, decodes on
//! until it lands on an address the second half also decoded as an
//! instruction start: x86 code falls back into step within a few
//! instructions, and from a shared start both decode the same bytes the
//! same way (the x86 decoder keeps no state between instructions). The
//! second half's facts below that address are dropped. Should the two not
//! meet within a few kilobytes, the first half sweeps on to the end
//! alone and the second half is discarded, so the result never depends on
//! the split.
//!
//! AArch64 is swept on one core: its `adrp` pairing carries state from one
//! instruction to the next, which a sweep from the midpoint would not have.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::super::code_map::{CodeMap, CodeRegion};
use super::super::disasm::{self, Decoded};
use super::{Facts, MAX_XREFS, Progress};
use crate::providers::code::Arch;
use crate::providers::interrupt::{self, Checkpoint};

/// When a region is split and how far the halves look for each other.
#[derive(Debug, Clone, Copy)]
struct Split {
    /// Regions smaller than this are swept on one core: a second thread
    /// costs more than it saves.
    min_len: usize,
    /// How far past the midpoint the first half decodes looking for a
    /// start the second half shares.
    window: u64,
}

const SPLIT: Split = Split {
    min_len: 1 << 20,
    window: 4096,
};

/// How often (in bytes of code swept) progress is reported.
const PROGRESS_STEP: u64 = 1 << 20;

/// Sweeps `region` into `facts`, on two cores when it is a large x86
/// region.
///
/// Regions over [`MAX_XREFS`] bytes stay on one core: a part of at most
/// that many bytes cannot reach the cap on its own (every instruction is
/// at least one byte and has at most one reference per byte), so the cap
/// cuts the joined facts where one sweep would have.
pub(super) fn sweep_region(
    arch: Arch,
    region: &CodeRegion<'_>,
    code: &CodeMap<'_>,
    meter: &Meter<'_>,
    facts: &mut Facts,
) {
    sweep_region_split(SPLIT, arch, region, code, meter, facts);
}

/// How a region was swept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sweep {
    /// On one core from the start.
    Whole,
    /// On two cores; the halves met at this address.
    Met(u64),
    /// The halves did not meet: the first swept on alone.
    Alone,
}

fn sweep_region_split(
    split: Split,
    arch: Arch,
    region: &CodeRegion<'_>,
    code: &CodeMap<'_>,
    meter: &Meter<'_>,
    facts: &mut Facts,
) -> Sweep {
    // A region whose addresses wrap past 2^64 (only a hostile file has
    // one) stays whole: joining the halves compares addresses.
    let splittable = matches!(arch, Arch::X86 | Arch::X86_64)
        && (split.min_len..=MAX_XREFS).contains(&region.bytes.len())
        && region
            .address
            .checked_add(region.bytes.len() as u64)
            .is_some();
    let part = Part::new(arch, code, meter);
    let halves = splittable
        .then(|| sweep_halves(part, split.window, region, facts))
        .flatten();
    halves.unwrap_or_else(|| {
        part.sweep(region.bytes, region.address, facts, |_| true);
        Sweep::Whole
    })
}

/// The two-core sweep; `None` (and `facts` untouched) if no second
/// thread could be started.
fn sweep_halves(
    part: Part<'_, '_>,
    window: u64,
    region: &CodeRegion<'_>,
    facts: &mut Facts,
) -> Option<Sweep> {
    let (bytes, base) = (region.bytes, region.address);
    let middle = bytes.len() / 2;
    let middle_address = base.wrapping_add(middle as u64);
    let check = interrupt::current();
    std::thread::scope(|scope| {
        let second = std::thread::Builder::new().spawn_scoped(scope, || {
            interrupt::with_check(check, || {
                let mut later = Facts::default();
                let mut starts = Vec::new();
                part.sweep(&bytes[middle..], middle_address, &mut later, |decoded| {
                    if decoded.address.wrapping_sub(middle_address) < window {
                        starts.push(decoded.address);
                    }
                    true
                });
                (later, starts)
            })
        });
        let Ok(second) = second else {
            return None;
        };
        let beyond_middle = |decoded: &Decoded| decoded.address.wrapping_sub(base) >= middle as u64;
        let resume = part.sweep(bytes, base, facts, |decoded| !beyond_middle(decoded));
        // Should the second half have panicked (it never should), it
        // shares no start, and the first half sweeps on alone.
        let (later, starts) = second.join().unwrap_or_default();
        let Some(resume) = resume else {
            return Some(Sweep::Alone);
        };
        let mut met = None;
        let stopped = part.sweep_from(bytes, base, resume, facts, |decoded| {
            if starts.binary_search(&decoded.address).is_ok() {
                met = Some(decoded.address);
                return false;
            }
            decoded.address.wrapping_sub(middle_address) < window
        });
        if let Some(meeting) = met {
            let skipped = starts.partition_point(|&start| start < meeting) as u64;
            facts.append(later, meeting, skipped);
            return Some(Sweep::Met(meeting));
        }
        if let Some(stopped) = stopped {
            part.sweep_from(bytes, base, stopped, facts, |_| true);
        }
        Some(Sweep::Alone)
    })
}

/// One sweeper: the architecture, the code map call targets are checked
/// against, and the shared progress meter.
#[derive(Clone, Copy)]
struct Part<'a, 'm> {
    arch: Arch,
    code: &'a CodeMap<'a>,
    meter: &'a Meter<'m>,
}

impl<'a, 'm> Part<'a, 'm> {
    fn new(arch: Arch, code: &'a CodeMap<'a>, meter: &'a Meter<'m>) -> Self {
        Part { arch, code, meter }
    }

    /// Records the instructions of `bytes` (mapped at `address`) into
    /// `facts` while `go_on` accepts them; returns the address of the
    /// first one refused (not recorded), or `None` at the end. An
    /// interrupted call ends the sweep where it is (its result is then
    /// discarded, see `providers::interrupt`).
    fn sweep(
        &self,
        bytes: &[u8],
        address: u64,
        facts: &mut Facts,
        mut go_on: impl FnMut(&Decoded) -> bool,
    ) -> Option<u64> {
        let mut refused = None;
        let mut reported = address;
        let mut checkpoint = Checkpoint::new();
        disasm::sweep_while(self.arch, bytes, address, |decoded| {
            if checkpoint.stop() {
                return false;
            }
            if !go_on(&decoded) {
                refused = Some(decoded.address);
                return false;
            }
            facts.record(decoded, self.arch, self.code);
            let swept = decoded.address.wrapping_sub(reported);
            if swept >= PROGRESS_STEP {
                self.meter.add(swept);
                reported = decoded.address;
            }
            true
        });
        let end = refused.unwrap_or_else(|| address.wrapping_add(bytes.len() as u64));
        self.meter.add(end.wrapping_sub(reported));
        refused
    }

    /// [`Part::sweep`] from `resume`, an instruction start inside `bytes`
    /// (mapped at `base`).
    fn sweep_from(
        &self,
        bytes: &[u8],
        base: u64,
        resume: u64,
        facts: &mut Facts,
        go_on: impl FnMut(&Decoded) -> bool,
    ) -> Option<u64> {
        let offset = usize::try_from(resume.wrapping_sub(base)).ok()?;
        self.sweep(bytes.get(offset..)?, resume, facts, go_on)
    }
}

/// Progress of sweeps running on several cores, reported as one
/// increasing count of bytes.
pub(super) struct Meter<'a> {
    progress: Progress<'a>,
    total: u64,
    done: AtomicU64,
    /// The last count reported; held while reporting so that reports
    /// never go backwards.
    reported: Mutex<u64>,
}

impl<'a> Meter<'a> {
    /// Reports `(0, total)`.
    pub(super) fn new(progress: Progress<'a>, total: u64) -> Self {
        progress(0, total);
        Meter {
            progress,
            total,
            done: AtomicU64::new(0),
            reported: Mutex::new(0),
        }
    }

    /// Counts `bytes` more as swept. Bytes swept twice (where the halves
    /// overlap) count twice; the count never passes the total.
    fn add(&self, bytes: u64) {
        let done = self
            .done
            .fetch_add(bytes, Ordering::Relaxed)
            .saturating_add(bytes)
            .min(self.total);
        let mut reported = self
            .reported
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if done > *reported {
            *reported = done;
            (self.progress)(done, self.total);
        }
    }

    /// Reports `(total, total)`.
    pub(super) fn finish(&self) {
        (self.progress)(self.total, self.total);
    }
}

#[cfg(test)]
mod tests;
