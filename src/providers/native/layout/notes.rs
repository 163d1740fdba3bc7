//! Bookkeeping shared by every table of a layout: the limitations collected
//! while reading ([`Notes`], with the time budget), lists capped at
//! [`MAX_LAYOUT_ENTRIES`] ([`Capped`]), bounded reading of `object`'s
//! iterators ([`drain`]) and of NUL-terminated names ([`c_string`]). Kept
//! apart from the format readers, which all lean on it.

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt::Display;
use std::time::Instant;

use super::{MAX_ENTRY_ERRORS, MAX_LAYOUT_ENTRIES, MAX_NAME_BYTES, MAX_PULLS, TIME_LIMIT};
use crate::providers::limitations::Limitations;

/// Limitations collected while building one layout (each kind once, see
/// [`Limitations`]), plus the time budget.
pub(super) struct Notes {
    limitations: Limitations,
    pub(super) deadline: Instant,
    out_of_time: bool,
    /// Names cut at [`MAX_NAME_BYTES`]; a `Cell` so that closures holding a
    /// shared borrow can count.
    cut_names: Cell<usize>,
}

impl Notes {
    pub(super) fn new() -> Notes {
        Notes {
            limitations: Limitations::new(),
            deadline: Instant::now() + TIME_LIMIT,
            out_of_time: false,
            cut_names: Cell::new(0),
        }
    }

    pub(super) fn note(&mut self, text: impl Into<String>) {
        self.limitations.note(text);
    }

    /// True once the time budget is spent; notes `what` as cut short.
    pub(super) fn expired(&mut self, what: &str) -> bool {
        if Instant::now() < self.deadline {
            return false;
        }
        self.out_of_time = true;
        self.note(format!(
            "{what}: reading stopped at the {} s time limit, the list is incomplete",
            TIME_LIMIT.as_secs()
        ));
        true
    }

    /// A name as text: invalid UTF-8 is replaced, and names longer than
    /// [`MAX_NAME_BYTES`] are cut (and counted).
    pub(super) fn name(&self, bytes: &[u8]) -> String {
        let bytes = match bytes.get(..MAX_NAME_BYTES) {
            Some(head) if bytes.len() > MAX_NAME_BYTES => {
                self.cut_names.set(self.cut_names.get() + 1);
                head
            }
            _ => bytes,
        };
        String::from_utf8_lossy(bytes).into_owned()
    }

    /// Records how reading a table through [`drain`] went.
    pub(super) fn drained(&mut self, what: &str, drained: Drained) {
        if drained.errors > 0 {
            let first = drained.first_error.unwrap_or_default();
            let gave_up = if drained.errors >= MAX_ENTRY_ERRORS {
                ", reading stopped there"
            } else {
                ""
            };
            self.note(format!(
                "{what}: {} entries could not be read{gave_up} (first error: {first})",
                drained.errors
            ));
        }
        if drained.too_many {
            self.note(format!(
                "{what}: reading stopped after {MAX_PULLS} table entries"
            ));
        }
        if drained.out_of_time {
            self.out_of_time = true;
            self.note(format!(
                "{what}: reading stopped at the {} s time limit, the list is incomplete",
                TIME_LIMIT.as_secs()
            ));
        }
    }

    pub(super) fn finish(mut self) -> Vec<String> {
        let cut = self.cut_names.get();
        if cut > 0 {
            self.note(format!(
                "{cut} names were longer than {MAX_NAME_BYTES} bytes and were cut"
            ));
        }
        self.limitations.sentences()
    }
}

/// A list that keeps its first [`MAX_LAYOUT_ENTRIES`] items and remembers
/// whether more were offered.
pub(super) struct Capped<T> {
    pub(super) items: Vec<T>,
    pub(super) dropped: bool,
}

impl<T> Capped<T> {
    pub(super) fn new() -> Capped<T> {
        Capped {
            items: Vec::new(),
            dropped: false,
        }
    }

    pub(super) fn is_full(&self) -> bool {
        self.items.len() >= MAX_LAYOUT_ENTRIES
    }

    /// Keeps `item` if there is room; returns false (and drops it) once the
    /// cap is reached, so that callers can stop reading.
    pub(super) fn push(&mut self, item: T) -> bool {
        if self.is_full() {
            self.dropped = true;
            return false;
        }
        self.items.push(item);
        true
    }

    pub(super) fn finish(self, what: &str, notes: &mut Notes) -> Vec<T> {
        if self.dropped {
            notes.note(format!(
                "{what} truncated at {MAX_LAYOUT_ENTRIES}: the first ones are listed"
            ));
        }
        self.items
    }
}

/// Names without repeats, in the order first seen, capped like
/// [`Capped`]: 20,000 `DT_NEEDED` entries naming one library are one
/// entry, and `repeats` counts the other 19,999.
pub(super) struct Distinct {
    list: Capped<String>,
    seen: HashSet<String>,
    pub(super) repeats: usize,
}

impl Distinct {
    pub(super) fn new() -> Distinct {
        Distinct {
            list: Capped::new(),
            seen: HashSet::new(),
            repeats: 0,
        }
    }

    pub(super) fn is_full(&self) -> bool {
        self.list.is_full()
    }

    /// Notes that a name was offered past the cap without reading it.
    pub(super) fn drop_one(&mut self) {
        self.list.dropped = true;
    }

    /// Keeps `name` unless it was seen (then counts a repeat); returns
    /// false once the cap is reached, so that callers can stop reading.
    pub(super) fn push(&mut self, name: String) -> bool {
        if self.seen.contains(&name) {
            self.repeats += 1;
            return true;
        }
        if self.list.is_full() {
            self.list.dropped = true;
            return false;
        }
        self.seen.insert(name.clone());
        self.list.push(name)
    }

    /// The distinct names and how many repeats were left out.
    pub(super) fn finish(self, what: &str, notes: &mut Notes) -> (Vec<String>, usize) {
        (self.list.finish(what, notes), self.repeats)
    }
}

/// How reading one table through [`drain`] ended.
#[derive(Default)]
pub(super) struct Drained {
    errors: usize,
    first_error: Option<String>,
    too_many: bool,
    out_of_time: bool,
}

/// Feeds the readable items to `accept` until it returns false or the
/// iterator ends; stops early after [`MAX_ENTRY_ERRORS`] errors,
/// [`MAX_PULLS`] items or at `deadline`.
pub(super) fn drain<T, E: Display>(
    items: impl Iterator<Item = Result<T, E>>,
    deadline: Instant,
    mut accept: impl FnMut(T) -> bool,
) -> Drained {
    let mut drained = Drained::default();
    for (pulled, item) in items.enumerate() {
        if pulled >= MAX_PULLS {
            drained.too_many = true;
            break;
        }
        if pulled % 64 == 0 && Instant::now() >= deadline {
            drained.out_of_time = true;
            break;
        }
        match item {
            Ok(value) => {
                if !accept(value) {
                    break;
                }
            }
            Err(error) => {
                drained.errors += 1;
                if drained.first_error.is_none() {
                    drained.first_error = Some(error.to_string());
                }
                if drained.errors >= MAX_ENTRY_ERRORS {
                    break;
                }
            }
        }
    }
    drained
}

/// The NUL-terminated string at `offset` in `table`, looked for within
/// [`MAX_NAME_BYTES`] bytes only. A longer string comes back as its first
/// `MAX_NAME_BYTES + 1` bytes, which [`Notes::name`] then cuts and counts.
/// `None` when the offset is outside the table or the table ends before the
/// terminator.
pub(super) fn c_string(table: &[u8], offset: u64) -> Option<&[u8]> {
    let rest = table.get(usize::try_from(offset).ok()?..)?;
    let window = rest.get(..MAX_NAME_BYTES).unwrap_or(rest);
    match window.iter().position(|&byte| byte == 0) {
        Some(end) => window.get(..end),
        // Cut: one byte more than the limit, so that `Notes::name` counts it.
        None if rest.len() > MAX_NAME_BYTES => rest.get(..=MAX_NAME_BYTES),
        None => None,
    }
}
