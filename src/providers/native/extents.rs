//! Procedure extents: which bytes belong to which procedure.
//!
//! A procedure starts at its address and extends to the size a table stated
//! (symbol size, FDE range, `.pdata` entry), or, when none did, to the next
//! procedure's start — but never past the next procedure's start nor past
//! the end of its executable section. Extents are therefore disjoint, so
//! every code address belongs to at most one procedure, and "who calls f"
//! and "whom does g call" are answered by the same assignment (callers and
//! callees are symmetric by construction).

use super::code_map::CodeMap;
use crate::providers::Inventory;

/// Where an address falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Containment {
    /// Inside the procedure with this index in the inventory.
    Procedure { index: usize, start: u64, end: u64 },
    /// In executable code that no procedure's extent covers (padding,
    /// code reached only indirectly, or a procedure no table declared).
    NotInProcedure,
    /// Not in executable code.
    NotCode,
}

/// Disjoint `[start, end)` extents, parallel to an inventory's procedures.
#[derive(Debug, Default)]
pub struct Extents {
    starts: Vec<u64>,
    ends: Vec<u64>,
}

impl Extents {
    pub(super) fn new(inventory: &Inventory, code: &CodeMap<'_>) -> Extents {
        let procedures = &inventory.procedures;
        let mut ends = Vec::with_capacity(procedures.len());
        for (i, procedure) in procedures.iter().enumerate() {
            let start = procedure.address;
            let region_end = code.region_of(start).map_or(start, |region| region.end);
            let next = procedures.get(i + 1).map_or(u64::MAX, |p| p.address);
            let stated = procedure
                .size
                .map_or(u64::MAX, |size| start.saturating_add(size));
            ends.push(stated.min(next).min(region_end));
        }
        Extents {
            starts: procedures.iter().map(|p| p.address).collect(),
            ends,
        }
    }

    /// The extent of procedure `index`; empty when it is not in code.
    pub fn extent(&self, index: usize) -> Option<(u64, u64)> {
        Some((*self.starts.get(index)?, *self.ends.get(index)?))
    }

    /// Index of the procedure starting exactly at `address`.
    pub fn index_of_start(&self, address: u64) -> Option<usize> {
        self.starts.binary_search(&address).ok()
    }

    /// The procedure whose extent covers `address`, if any.
    pub fn containing(&self, address: u64) -> Option<usize> {
        let index = self
            .starts
            .partition_point(|&s| s <= address)
            .checked_sub(1)?;
        (address < *self.ends.get(index)?).then_some(index)
    }

    /// The start of the procedure whose extent covers `address`, if any.
    pub fn containing_start(&self, address: u64) -> Option<u64> {
        self.containing(address)
            .and_then(|index| self.starts.get(index).copied())
    }

    pub(crate) fn classify(&self, address: u64, code: &CodeMap<'_>) -> Containment {
        match self.containing(address) {
            Some(index) => Containment::Procedure {
                index,
                start: self.starts[index],
                end: self.ends[index],
            },
            None if code.contains(address) => Containment::NotInProcedure,
            None => Containment::NotCode,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::native::code_map::CodeRegion;
    use crate::providers::{Procedure, Source, Sources};

    fn inventory(procedures: &[(u64, Option<u64>)]) -> Inventory {
        Inventory {
            procedures: procedures
                .iter()
                .map(|&(address, size)| Procedure {
                    address,
                    name: None,
                    aliases: Vec::new(),
                    size,
                    sources: Sources::of(Source::EhFrame),
                    library: None,
                    part_of: None,
                })
                .collect(),
            truncated: false,
            non_utf8_names: 0,
            limitations: Vec::new(),
        }
    }

    #[test]
    fn extents_are_disjoint_and_bounded_by_sizes_and_next_starts() {
        let extents = Extents {
            starts: vec![0x10, 0x20, 0x40],
            ends: vec![0x18, 0x40, 0x50],
        };
        assert_eq!(extents.containing(0x10), Some(0));
        assert_eq!(extents.containing(0x17), Some(0));
        assert_eq!(extents.containing(0x18), None, "gap after a stated size");
        assert_eq!(extents.containing(0x3f), Some(1));
        assert_eq!(extents.containing(0x4f), Some(2));
        assert_eq!(extents.containing(0x50), None);
        assert_eq!(extents.containing(0x0f), None);
        assert_eq!(extents.index_of_start(0x20), Some(1));
        assert_eq!(extents.index_of_start(0x21), None);
    }

    #[test]
    fn new_uses_sizes_next_starts_and_region_ends() {
        let inv = inventory(&[
            (0x1000, Some(0x8)),
            (0x1010, Some(0x100)),
            (0x1020, None),
            (0x3000, None),
        ]);
        let code = CodeMap::from_regions(vec![CodeRegion {
            address: 0x1000,
            end: 0x1030,
            bytes: &[],
            section: ".text",
        }]);
        let extents = Extents::new(&inv, &code);
        assert_eq!(extents.extent(0), Some((0x1000, 0x1008)), "stated size");
        assert_eq!(
            extents.extent(1),
            Some((0x1010, 0x1020)),
            "cut at the next start"
        );
        assert_eq!(
            extents.extent(2),
            Some((0x1020, 0x1030)),
            "cut at the region end"
        );
        assert_eq!(
            extents.extent(3),
            Some((0x3000, 0x3000)),
            "not in code: empty"
        );
        assert_eq!(extents.classify(0x1009, &code), Containment::NotInProcedure);
        assert_eq!(extents.classify(0x2000, &code), Containment::NotCode);
        assert_eq!(
            extents.classify(0x1025, &code),
            Containment::Procedure {
                index: 2,
                start: 0x1020,
                end: 0x1030
            }
        );
    }
}
