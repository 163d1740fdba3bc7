//! Pointers stored in data: the slots of option tables, method tables,
//! callback arrays and string tables that no instruction names directly.
//!
//! Where the file says which words are pointers, that is the source:
//! - ELF dynamic relocations: `RELATIVE` (the addend, or the word itself
//!   for `REL`), and absolute relocations against a symbol defined here;
//! - PE base relocations (`DIR64`, `HIGHLOW`): the word at the slot;
//! - Mach-O rebases, classic or chained ([`super::macho_rebases`]).
//!
//! An image without them (a static non-PIE ELF, a Mach-O with neither) is
//! scanned instead: every aligned
//! pointer-sized word of a data section whose value `is_target` accepts (a
//! string start or code). Chained-fixup words are also tried as a 36-bit
//! target, plain and added to the image base. A scanned pointer is an
//! inference, which the result says.
//!
//! Bounded by the file: every slot is a word the file holds, at most
//! [`MAX_POINTERS`] are kept, and reading stops with a limitation there.

use object::read::elf::FileHeader as _;
use object::read::pe::{ImageNtHeaders, ImageOptionalHeader as _, PeFile};

use super::elf_relocations::DynamicRelocations;
use super::macho_rebases;
use super::words::Words;
use crate::providers::interrupt::Checkpoint;
use object::{
    Object, ObjectSection, ObjectSegment, ObjectSymbol, ObjectSymbolTable, RelocationFlags,
    RelocationKind, RelocationTarget, SectionKind, elf, pe,
};

/// Most pointer slots one document keeps.
pub const MAX_POINTERS: usize = 4_000_000;

/// How the pointers of a document were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointerSource {
    /// Relocations the loader applies: the file says these are pointers.
    Relocations,
    /// An aligned scan of data sections: values that land on a target.
    Scan,
}

impl PointerSource {
    pub fn as_str(self) -> &'static str {
        match self {
            PointerSource::Relocations => "relocations",
            PointerSource::Scan => "aligned_scan",
        }
    }
}

/// Largest gap between two pointer slots of one table: a struct array
/// holds other fields between its pointers, a table ends where pointers
/// stop.
pub const MAX_TABLE_GAP: u64 = 64;
/// Most slots one table region is walked over, each way.
const MAX_TABLE_SLOTS: usize = 1 << 16;

/// One document's pointer slots.
#[derive(Debug)]
pub struct DataPointers {
    /// `(target, slot)`, sorted.
    by_target: Vec<(u64, u64)>,
    /// `(slot, target)`, sorted.
    by_slot: Vec<(u64, u64)>,
    /// Bytes per pointer.
    width: u64,
    /// `[start, end)` of every section with file data, sorted, and whether
    /// it is code: a table never crosses a section's edge.
    sections: Vec<(u64, u64, bool)>,
    pub source: PointerSource,
    pub truncated: bool,
    pub limitations: Vec<String>,
}

impl DataPointers {
    /// Every `(slot, pointer)`, in slot order.
    pub fn slots(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.by_slot.iter().copied()
    }

    /// Slots whose pointer is exactly `target`, in address order.
    pub fn slots_pointing_at(&self, target: u64) -> impl Iterator<Item = u64> + '_ {
        let first = self.by_target.partition_point(|&(t, _)| t < target);
        self.by_target[first..]
            .iter()
            .take_while(move |&&(t, _)| t == target)
            .map(|&(_, slot)| slot)
    }

    /// The table `slot` belongs to: `[start, end)` over the run of slots
    /// around it, in its section, where consecutive slots are at most
    /// [`MAX_TABLE_GAP`] apart and point at code or into the same section
    /// as this slot's pointer (so the string pointers of an option table
    /// stay one table, and a neighbouring pointer to data ends it). A lone
    /// pointer is its own table.
    pub fn table_of(&self, slot: u64) -> (u64, u64) {
        let lone = (slot, slot.saturating_add(self.width));
        let Ok(at) = self.by_slot.binary_search_by_key(&slot, |&(s, _)| s) else {
            return lone;
        };
        let section_of = |address: u64| {
            self.sections
                .partition_point(|&(start, _, _)| start <= address)
                .checked_sub(1)
                .and_then(|index| self.sections.get(index))
                .filter(|&&(_, end, _)| address < end)
                .copied()
        };
        let Some(home) = section_of(slot) else {
            return lone;
        };
        let aim = section_of(self.by_slot[at].1);
        let alike = |&(slot, target): &(u64, u64)| {
            let pointee = section_of(target);
            section_of(slot) == Some(home)
                && (pointee == aim || pointee.is_some_and(|(_, _, code)| code))
        };
        let near = |pair: &[(u64, u64)]| {
            pair[1].0.saturating_sub(pair[0].0) <= MAX_TABLE_GAP
                && alike(&pair[0])
                && alike(&pair[1])
        };
        let before = self.by_slot[..=at]
            .windows(2)
            .rev()
            .take(MAX_TABLE_SLOTS)
            .take_while(|pair| near(pair))
            .count();
        let after = self.by_slot[at..]
            .windows(2)
            .take(MAX_TABLE_SLOTS)
            .take_while(|pair| near(pair))
            .count();
        let start = self.by_slot[at - before].0;
        let last = self.by_slot[at + after].0;
        (start, last.saturating_add(self.width))
    }

    /// The pointer stored at `slot`, if it is one of the slots.
    pub fn value_at(&self, slot: u64) -> Option<u64> {
        self.by_slot
            .binary_search_by_key(&slot, |&(s, _)| s)
            .ok()
            .map(|at| self.by_slot[at].1)
    }

    /// Every distinct address some slot points at, sorted.
    pub fn targets(&self) -> impl Iterator<Item = u64> + '_ {
        let mut last = None;
        self.by_target
            .iter()
            .map(|&(target, _)| target)
            .filter(move |&target| {
                let new = last != Some(target);
                last = Some(target);
                new
            })
    }

    pub fn len(&self) -> usize {
        self.by_target.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_target.is_empty()
    }

    pub(super) fn read(file: &object::File<'_>, is_target: impl Fn(u64) -> bool) -> DataPointers {
        let words = Words::new(file);
        let mut found = Collector::default();
        // A Mach-O that states its rebases has no other pointers to find.
        let mut stated = false;
        match file {
            object::File::Pe32(pe) => pe_relocations(pe, &words, &mut found),
            object::File::Pe64(pe) => pe_relocations(pe, &words, &mut found),
            object::File::MachO32(_) | object::File::MachO64(_) => {
                stated = macho_rebases::rebases(file, &words, MAX_POINTERS, &mut |slot, target| {
                    !found.checkpoint.stop() && found.push(slot, target)
                });
            }
            _ => elf_relocations(file, &words, &mut found),
        }
        let source = if found.pairs.is_empty() && !found.full && !stated {
            scan(file, &words, &is_target, &mut found);
            PointerSource::Scan
        } else {
            PointerSource::Relocations
        };
        let mut by_target = found.pairs;
        by_target.sort_unstable();
        by_target.dedup();
        let mut by_slot: Vec<(u64, u64)> = by_target
            .iter()
            .map(|&(target, slot)| (slot, target))
            .collect();
        by_slot.sort_unstable();
        by_slot.dedup_by_key(|&mut (slot, _)| slot);
        let mut limitations = std::mem::take(&mut found.notes);
        if found.full {
            limitations.push(format!(
                "pointers in data: reading stopped at {MAX_POINTERS} slots; higher slots are missing"
            ));
        }
        if source == PointerSource::Scan {
            limitations.push(
                "pointers in data were found by an aligned scan (the file lists no pointer \
                 relocations rea reads): a word whose value equals a string's or code's address is \
                 taken for a pointer, which is an inference"
                    .to_owned(),
            );
        }
        DataPointers {
            by_target,
            by_slot,
            width: words.size as u64,
            sections: words.bounds.clone(),
            source,
            truncated: found.full,
            limitations,
        }
    }
}

#[derive(Default)]
struct Collector {
    pairs: Vec<(u64, u64)>,
    full: bool,
    /// Limitations of the readers.
    notes: Vec<String>,
    /// Stops the readers when the call is interrupted.
    checkpoint: Checkpoint,
}

impl Collector {
    fn push(&mut self, slot: u64, target: u64) -> bool {
        if self.pairs.len() >= MAX_POINTERS {
            self.full = true;
            return false;
        }
        self.pairs.push((target, slot));
        true
    }
}

fn elf_relocations(file: &object::File<'_>, words: &Words<'_>, out: &mut Collector) {
    let Some(mut relocations) = DynamicRelocations::of(file) else {
        return;
    };
    let symbols = file.dynamic_symbol_table();
    let machine = match file {
        object::File::Elf32(elf) => elf.elf_header().e_machine(elf.endian()),
        object::File::Elf64(elf) => elf.elf_header().e_machine(elf.endian()),
        _ => return,
    };
    for (slot, relocation) in relocations.by_ref() {
        // `object` leaves the relative types unclassified.
        let relative = matches!(
            (machine, relocation.flags()),
            (
                elf::EM_X86_64,
                RelocationFlags::Elf {
                    r_type: elf::R_X86_64_RELATIVE
                }
            ) | (
                elf::EM_386,
                RelocationFlags::Elf {
                    r_type: elf::R_386_RELATIVE
                }
            ) | (
                elf::EM_AARCH64,
                RelocationFlags::Elf {
                    r_type: elf::R_AARCH64_RELATIVE
                }
            )
        ) || relocation.kind() == RelocationKind::Relative;
        let target = match (relative, relocation.kind(), relocation.target()) {
            (true, ..) if relocation.has_implicit_addend() => words.at(slot),
            (true, ..) => u64::try_from(relocation.addend()).ok(),
            (false, RelocationKind::Absolute, RelocationTarget::Symbol(index)) => symbols
                .as_ref()
                .and_then(|table| table.symbol_by_index(index).ok())
                .filter(|symbol| symbol.is_definition() && symbol.address() != 0)
                .map(|symbol| symbol.address().wrapping_add_signed(relocation.addend())),
            _ => None,
        };
        if let Some(target) = target
            && !out.push(slot, target)
        {
            return;
        }
    }
    if relocations.capped() {
        out.notes
            .push(DynamicRelocations::limitation("pointers in data"));
    }
}

fn pe_relocations<Pe: ImageNtHeaders>(pe: &PeFile<'_, Pe>, words: &Words<'_>, out: &mut Collector) {
    let base = pe.nt_headers().optional_header().image_base();
    let Ok(Some(mut blocks)) = pe
        .data_directories()
        .relocation_blocks(pe.data(), &pe.section_table())
    else {
        return;
    };
    while let Ok(Some(block)) = blocks.next() {
        for relocation in block {
            if out.checkpoint.stop() {
                return;
            }
            let wide = relocation.typ == pe::IMAGE_REL_BASED_DIR64;
            if !wide && relocation.typ != pe::IMAGE_REL_BASED_HIGHLOW {
                continue;
            }
            let slot = base.wrapping_add(u64::from(relocation.virtual_address));
            if let Some(target) = words.at(slot)
                && !out.push(slot, target)
            {
                return;
            }
        }
    }
}

/// Aligned words of data sections whose value (or chained-fixup target)
/// `is_target` accepts.
fn scan(
    file: &object::File<'_>,
    words: &Words<'_>,
    is_target: &impl Fn(u64) -> bool,
    out: &mut Collector,
) {
    let base = file
        .segments()
        .filter_map(|segment| (segment.size() > 0).then(|| segment.address()))
        .filter(|&address| address > 0)
        .min()
        .unwrap_or(0);
    let chained = file.format() == object::BinaryFormat::MachO;
    let data_sections = file.sections().filter(|section| {
        matches!(
            section.kind(),
            SectionKind::Data | SectionKind::ReadOnlyData | SectionKind::ReadOnlyDataWithRel
        )
    });
    let size = words.size as u64;
    for section in data_sections {
        let Ok(data) = section.data() else { continue };
        let start = section.address();
        let skip = usize::try_from(start.wrapping_neg() % size).unwrap_or(0);
        let Some(aligned) = data.get(skip..) else {
            continue;
        };
        for (index, word) in aligned.chunks_exact(words.size).enumerate() {
            if out.checkpoint.stop() {
                return;
            }
            let Some(value) = words.decode(word) else {
                continue;
            };
            let low = value & 0xf_ffff_ffff;
            let target = [value]
                .into_iter()
                .chain(chained.then_some(low))
                .chain(chained.then(|| base.wrapping_add(low)))
                .find(|&candidate| candidate != 0 && is_target(candidate));
            let slot = start
                .wrapping_add(skip as u64)
                .wrapping_add((index as u64).wrapping_mul(size));
            if let Some(target) = target
                && !out.push(slot, target)
            {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use super::*;
    use crate::providers::native::NativeImage;
    use crate::providers::native::fixtures::{fixture, run};

    fn pointers(pairs: &[(u64, u64)], sections: &[(u64, u64, bool)]) -> DataPointers {
        let mut by_target: Vec<(u64, u64)> = pairs.iter().map(|&(s, t)| (t, s)).collect();
        by_target.sort_unstable();
        let mut by_slot = pairs.to_vec();
        by_slot.sort_unstable();
        DataPointers {
            by_target,
            by_slot,
            width: 8,
            sections: sections.to_vec(),
            source: PointerSource::Relocations,
            truncated: false,
            limitations: Vec::new(),
        }
    }

    #[test]
    fn a_table_is_the_run_of_alike_pointers_around_a_slot() {
        // .text, .rodata (strings), .data: a data self-pointer, then a
        // table of {name, help, id} entries (stride 24), then a gap.
        let sections = [
            (0x1000, 0x2000, true),
            (0x2000, 0x3000, false),
            (0x4000, 0x5000, false),
        ];
        let table = [
            (0x4028, 0x4028),
            (0x4040, 0x2004),
            (0x4048, 0x200a),
            (0x4058, 0x2020),
            (0x4060, 0x1100),
            (0x4070, 0x203a),
            (0x4078, 0x2040),
            (0x4200, 0x2050),
        ];
        let found = pointers(&table, &sections);
        assert_eq!(found.table_of(0x4078), (0x4040, 0x4080));
        assert_eq!(found.table_of(0x4040), (0x4040, 0x4080));
        // The self-pointer into .data is not like its string neighbours.
        assert_eq!(found.table_of(0x4028), (0x4028, 0x4030));
        // Past the gap, a lone pointer.
        assert_eq!(found.table_of(0x4200), (0x4200, 0x4208));
        // Not a slot at all.
        assert_eq!(found.table_of(0x4100), (0x4100, 0x4108));
        assert_eq!(
            found.slots_pointing_at(0x2040).collect::<Vec<_>>(),
            vec![0x4078]
        );
    }

    #[test]
    fn elf_relative_relocations_are_pointers() {
        let path = Path::new("/usr/bin/ls");
        let text = run("readelf", &["-rW", "/usr/bin/ls"]);
        let relative: BTreeSet<(u64, u64)> = text
            .lines()
            .filter(|line| line.contains("R_X86_64_RELATIVE"))
            .filter_map(|line| {
                let mut words = line.split_whitespace();
                let slot = u64::from_str_radix(words.next()?, 16).ok()?;
                let target = u64::from_str_radix(words.last()?, 16).ok()?;
                Some((slot, target))
            })
            .collect();
        assert!(
            relative.len() > 100,
            "readelf lists {} RELATIVE",
            relative.len()
        );
        let image = NativeImage::open(path).expect("open");
        let found = image.data_pointers(0).expect("pointers");
        assert_eq!(found.source, PointerSource::Relocations);
        for &(slot, target) in &relative {
            assert!(
                found.slots_pointing_at(target).any(|s| s == slot),
                "{slot:#x} -> {target:#x} missing"
            );
        }
    }

    #[test]
    fn pe_base_relocations_are_pointers() {
        let Some(path) = fixture("watcher-win32-x64.node") else {
            return;
        };
        let text = run(
            "llvm-readobj",
            &["--coff-basereloc", &path.to_string_lossy()],
        );
        // `Entry { Type: DIR64 Address: 0x… }`; ABSOLUTE entries pad blocks.
        let mut rvas = BTreeSet::new();
        let mut pointer = false;
        for line in text.lines().map(str::trim) {
            if let Some(kind) = line.strip_prefix("Type: ") {
                pointer = kind == "DIR64" || kind == "HIGHLOW";
            } else if let Some(hex) = line.strip_prefix("Address: 0x")
                && pointer
            {
                rvas.insert(u64::from_str_radix(hex, 16).expect("hex"));
            }
        }
        assert!(
            rvas.len() > 1000,
            "readobj lists {} relocations",
            rvas.len()
        );
        let image = NativeImage::open(&path).expect("open");
        let found = image.data_pointers(0).expect("pointers");
        let ours: BTreeSet<u64> = found
            .by_slot
            .iter()
            .map(|&(slot, _)| slot - 0x1_8000_0000)
            .collect();
        let missing: Vec<_> = rvas.difference(&ours).take(5).collect();
        let extra: Vec<_> = ours.difference(&rvas).take(5).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{missing:x?} {extra:x?}"
        );
    }
}
