//! The bytes of a document's sections by virtual address: pointer-sized
//! words for the pointer scan, small values for jump tables.

use object::{Object, ObjectSection, SectionKind};

/// Pointer-sized words of the file's sections, by address.
pub(super) struct Words<'data> {
    /// `(address, bytes)` of every section with file data, sorted.
    sections: Vec<(u64, &'data [u8])>,
    /// Their `[start, end)` and whether each is code, in the same order.
    pub(super) bounds: Vec<(u64, u64, bool)>,
    /// Bytes per pointer.
    pub(super) size: usize,
    little: bool,
}

impl<'data> Words<'data> {
    pub(super) fn new(file: &object::File<'data>) -> Words<'data> {
        let mut sections: Vec<(u64, &[u8], bool)> = file
            .sections()
            .filter(|section| section.kind() != SectionKind::UninitializedData)
            .filter_map(|section| {
                let data = section.data().ok()?;
                Some((section.address(), data, section.kind() == SectionKind::Text))
            })
            .filter(|(_, data, _)| !data.is_empty())
            .collect();
        sections.sort_unstable_by_key(|&(address, _, _)| address);
        Words {
            bounds: sections
                .iter()
                .map(|&(address, data, code)| {
                    (address, address.saturating_add(data.len() as u64), code)
                })
                .collect(),
            sections: sections
                .into_iter()
                .map(|(address, data, _)| (address, data))
                .collect(),
            size: if file.is_64() { 8 } else { 4 },
            little: file.is_little_endian(),
        }
    }

    /// The `len` bytes at `address`, if one section holds them all.
    fn bytes_at(&self, address: u64, len: usize) -> Option<&'data [u8]> {
        let index = self
            .sections
            .partition_point(|&(start, _)| start <= address)
            .checked_sub(1)?;
        let (start, data) = self.sections[index];
        let offset = usize::try_from(address - start).ok()?;
        data.get(offset..offset.checked_add(len)?)
    }

    /// The pointer-sized word at `address`.
    pub(super) fn at(&self, address: u64) -> Option<u64> {
        self.decode(self.bytes_at(address, self.size)?)
    }

    /// The `width`-byte (1, 2, 4 or 8) unsigned value at `address`.
    pub(super) fn value(&self, address: u64, width: u8) -> Option<u64> {
        let bytes = self.bytes_at(address, usize::from(width.min(8)))?;
        let mut value = 0u64;
        for (position, &byte) in bytes.iter().enumerate() {
            let shift = if self.little {
                position
            } else {
                bytes.len() - 1 - position
            };
            value |= u64::from(byte) << (8 * shift);
        }
        Some(value)
    }

    pub(super) fn decode(&self, bytes: &[u8]) -> Option<u64> {
        Some(match (self.size, self.little) {
            (8, true) => u64::from_le_bytes(bytes.try_into().ok()?),
            (8, false) => u64::from_be_bytes(bytes.try_into().ok()?),
            (_, true) => u32::from_le_bytes(bytes.try_into().ok()?).into(),
            (_, false) => u32::from_be_bytes(bytes.try_into().ok()?).into(),
        })
    }
}
