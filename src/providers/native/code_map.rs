//! Where a document's code is: its executable sections as disjoint address
//! ranges, each with the bytes the file holds for it.
//!
//! Every analysis that reads code (procedure discovery, the whole-binary
//! code index, function dossiers, "which procedure contains this address")
//! goes through one `CodeMap`, so they agree on what counts as code. Hostile
//! files may declare overlapping sections: overlaps are trimmed so each
//! address is read at most once, and the bytes a map may hold are bounded by
//! a budget, so decoding work stays linear in the file size.

use object::{Object, ObjectSection, ObjectSegment, SectionKind, SegmentFlags};

use crate::ground::text::{EXCERPT_CHARS, excerpt};
use crate::providers::limitations::Limitations;

/// One executable range.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CodeRegion<'data> {
    pub address: u64,
    /// Exclusive end of the range in memory (may exceed `bytes`: zero-fill).
    pub end: u64,
    /// The file's bytes for the start of the range.
    pub bytes: &'data [u8],
    /// Name of the section this range comes from.
    pub section: &'data str,
}

impl<'data> CodeRegion<'data> {
    /// The file's bytes from `address` to the end of the region's data.
    pub fn bytes_from(&self, address: u64) -> &'data [u8] {
        let Some(skip) = address.checked_sub(self.address) else {
            return &[];
        };
        usize::try_from(skip)
            .ok()
            .and_then(|skip| self.bytes.get(skip..))
            .unwrap_or(&[])
    }
}

/// The executable ranges of one document, sorted and disjoint.
#[derive(Debug, Default)]
pub(crate) struct CodeMap<'data> {
    regions: Vec<CodeRegion<'data>>,
    /// What was not mapped (overlaps, budget), each kind once.
    pub limitations: Limitations,
}

impl<'data> CodeMap<'data> {
    /// The executable sections of `file`, holding at most `byte_budget`
    /// bytes of section data in total.
    pub fn new(file: &object::File<'data>, byte_budget: usize) -> CodeMap<'data> {
        let mut sections: Vec<CodeRegion<'data>> = file
            .sections()
            .filter(|section| section.kind() == SectionKind::Text)
            .map(|section| {
                let bytes = section.data().unwrap_or(&[]);
                // Some linkers leave VirtualSize zero; the raw size then counts.
                let size = section.size().max(bytes.len() as u64);
                CodeRegion {
                    address: section.address(),
                    end: section.address().saturating_add(size),
                    bytes,
                    section: section.name().unwrap_or(""),
                }
            })
            .filter(|region| region.end > region.address)
            .collect();
        if file.sections().next().is_none() {
            // No section headers (e.g. after `sstrip`): the executable
            // segments are the code.
            sections.extend(
                file.segments()
                    .filter(|segment| executable(segment.flags()))
                    .map(|segment| CodeRegion {
                        address: segment.address(),
                        end: segment.address().saturating_add(segment.size()),
                        bytes: segment.data().unwrap_or(&[]),
                        section: "",
                    })
                    .filter(|region| region.end > region.address),
            );
        }
        sections.sort_unstable_by_key(|region| (region.address, region.end));
        let mut map = CodeMap::default();
        let mut budget = byte_budget;
        let mut overlaps = 0usize;
        for mut region in sections {
            if let Some(last) = map.regions.last()
                && region.address < last.end
            {
                overlaps += 1;
                if region.end <= last.end {
                    continue;
                }
                region.bytes = region.bytes_from(last.end);
                region.address = last.end;
            }
            if region.bytes.len() > budget {
                // One kind, however many sections: a hostile file may
                // declare hundreds of thousands of them.
                map.limitations.occurrence(
                    &format!(
                        "executable section(s) past the code analysis budget of {byte_budget} \
                         bytes were not (wholly) read"
                    ),
                    || {
                        format!(
                            "{} at {:#x}",
                            excerpt(region.section, EXCERPT_CHARS),
                            region.address
                        )
                    },
                );
                region.bytes = &region.bytes[..budget];
            }
            budget -= region.bytes.len();
            map.regions.push(region);
        }
        if overlaps > 0 {
            map.limitations.note(format!(
                "{overlaps} executable section(s) overlap others; overlapping bytes were read once"
            ));
        }
        map
    }

    /// A map of exactly these regions (sorted, disjoint), for tests.
    #[cfg(test)]
    pub fn from_regions(regions: Vec<CodeRegion<'data>>) -> CodeMap<'data> {
        CodeMap {
            regions,
            limitations: Limitations::new(),
        }
    }

    pub fn regions(&self) -> &[CodeRegion<'data>] {
        &self.regions
    }

    /// The region containing `address`.
    pub fn region_of(&self, address: u64) -> Option<&CodeRegion<'data>> {
        let after = self
            .regions
            .partition_point(|region| region.address <= address);
        after
            .checked_sub(1)
            .and_then(|index| self.regions.get(index))
            .filter(|region| address < region.end)
    }

    pub fn contains(&self, address: u64) -> bool {
        self.region_of(address).is_some()
    }

    /// Total bytes of section data held.
    pub fn byte_len(&self) -> u64 {
        self.regions
            .iter()
            .map(|region| region.bytes.len() as u64)
            .sum()
    }
}

/// Whether a segment is mapped executable (ELF `PF_X`, Mach-O
/// `VM_PROT_EXECUTE` in its initial protection, PE `IMAGE_SCN_MEM_EXECUTE`).
fn executable(flags: SegmentFlags) -> bool {
    match flags {
        SegmentFlags::Elf { p_flags, .. } => p_flags.contains(object::elf::PF_X),
        SegmentFlags::MachO { initprot, .. } => initprot.contains(object::macho::VM_PROT_EXECUTE),
        SegmentFlags::Coff { characteristics } => {
            characteristics.contains(object::pe::IMAGE_SCN_MEM_EXECUTE)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(address: u64, end: u64, bytes: &'static [u8]) -> CodeRegion<'static> {
        CodeRegion {
            address,
            end,
            bytes,
            section: "t",
        }
    }

    #[test]
    fn lookups_respect_region_bounds() {
        let map = CodeMap {
            regions: vec![
                region(0x1000, 0x2000, &[0; 16]),
                region(0x3000, 0x3010, &[]),
            ],
            limitations: Limitations::new(),
        };
        assert!(map.contains(0x1000));
        assert!(map.contains(0x1fff));
        assert!(!map.contains(0x2000));
        assert!(!map.contains(0xfff));
        assert!(map.contains(0x3008));
        assert!(!map.contains(u64::MAX));
        assert_eq!(map.byte_len(), 16);
    }

    #[test]
    fn bytes_from_is_bounded() {
        let r = region(0x1000, 0x1010, &[1, 2, 3, 4]);
        assert_eq!(r.bytes_from(0x1002), &[3, 4]);
        assert_eq!(r.bytes_from(0x1008), &[] as &[u8]);
        assert_eq!(r.bytes_from(0xfff), &[] as &[u8]);
        assert_eq!(r.bytes_from(u64::MAX), &[] as &[u8]);
    }
}
