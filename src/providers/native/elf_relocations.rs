//! An ELF file's dynamic relocations as `object` reads them, bounded by
//! what the file holds.
//!
//! `object` reads every relocation section linked to the dynamic symbol
//! table, and a hostile file may point thousands of section headers at one
//! array of a million entries: the walk would grow as sections × entries
//! while the file holds only the one array. Distinct `REL`/`RELA` entries
//! take at least 8 bytes of the file each, so no real file holds more
//! entries than a eighth of its size: every entry visited counts against
//! that (the entries a reader skips too), and the walk stops there with a
//! limitation. It also stops when the call is interrupted.

use object::{Object, Relocation};

use crate::providers::interrupt::Checkpoint;

/// Bytes of the smallest dynamic relocation entry (`Elf32_Rel`).
const MIN_ENTRY_BYTES: usize = 8;

/// The dynamic relocations of an ELF `file`, `(slot, relocation)`.
pub(super) struct DynamicRelocations<'file> {
    entries: Box<dyn Iterator<Item = (u64, Relocation)> + 'file>,
    left: usize,
    checkpoint: Checkpoint,
    capped: bool,
}

impl<'file> DynamicRelocations<'file> {
    /// `None` for a file that is not ELF.
    pub(super) fn of<'data>(file: &'file object::File<'data>) -> Option<DynamicRelocations<'file>> {
        let len = match file {
            object::File::Elf32(elf) => elf.data().len(),
            object::File::Elf64(elf) => elf.data().len(),
            _ => return None,
        };
        Some(DynamicRelocations {
            entries: Box::new(file.dynamic_relocations()?),
            left: len / MIN_ENTRY_BYTES,
            checkpoint: Checkpoint::new(),
            capped: false,
        })
    }

    /// Whether the walk stopped at the file's share of entries (sections
    /// overlap: the same entries were offered again).
    pub(super) fn capped(&self) -> bool {
        self.capped
    }

    /// The limitation a capped walk gives, for the reader `what`.
    pub(super) fn limitation(what: &str) -> String {
        format!(
            "{what}: dynamic relocation sections overlap; reading stopped after as many entries \
             as the file can hold (one per {MIN_ENTRY_BYTES} bytes)"
        )
    }
}

impl Iterator for DynamicRelocations<'_> {
    type Item = (u64, Relocation);

    fn next(&mut self) -> Option<Self::Item> {
        if self.checkpoint.stop() {
            return None;
        }
        let entry = self.entries.next()?;
        if self.left == 0 {
            self.capped = true;
            return None;
        }
        self.left -= 1;
        Some(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::native::synth_elf::{
        Contents, Elf, SHF_ALLOC, SHF_EXECINSTR, SHT_DYNSYM, SHT_PROGBITS, SHT_RELA, SHT_STRTAB,
        Section, rela, sym,
    };

    /// `sections` `SHT_RELA` headers over one array of `entries`
    /// relocations of type `kind` (8 = `R_X86_64_RELATIVE`, 0 = `NONE`).
    pub(crate) fn shared_relocations(sections: u64, entries: u64, kind: u32) -> Vec<u8> {
        let mut elf = Elf::new(0x1000);
        elf.section(Section::new(
            ".text",
            SHT_PROGBITS,
            SHF_ALLOC | SHF_EXECINSTR,
            0x1000,
            vec![0xc3; 16],
        ));
        let strings = elf.section(Section::new(".dynstr", SHT_STRTAB, SHF_ALLOC, 0, vec![0]));
        let symbols = elf.section(
            Section::new(
                ".dynsym",
                SHT_DYNSYM,
                SHF_ALLOC,
                0,
                sym(0, 0, 0, 0, 0).to_vec(),
            )
            .link(strings)
            .entsize(24),
        );
        let array: Vec<u8> = (0..entries)
            .flat_map(|index| rela(0x2000 + index * 8, 0, kind, 0x1000))
            .collect();
        let size = array.len() as u64;
        let first = elf.section(
            Section::new(".rela.dyn", SHT_RELA, SHF_ALLOC, 0, array)
                .link(symbols)
                .entsize(24),
        );
        for index in 1..sections {
            let mut again =
                Section::new(&format!(".rela{index}"), SHT_RELA, SHF_ALLOC, 0, Vec::new())
                    .link(symbols)
                    .entsize(24);
            again.contents = Contents::Shared {
                section: first,
                size,
            };
            elf.section(again);
        }
        elf.build()
    }

    #[test]
    fn sections_sharing_one_array_are_read_no_more_than_the_file_holds() {
        let bytes = shared_relocations(400, 5_000, 0);
        let file = object::File::parse(&*bytes).unwrap();
        let offered = file.dynamic_relocations().unwrap().take(3_000_000).count();
        assert_eq!(
            offered,
            400 * 5_000,
            "object offers every section's entries"
        );
        let mut relocations = DynamicRelocations::of(&file).unwrap();
        let visited = relocations.by_ref().count();
        assert_eq!(visited, bytes.len() / MIN_ENTRY_BYTES);
        assert!(relocations.capped());
    }

    #[test]
    fn a_file_whose_sections_do_not_overlap_is_read_whole() {
        let bytes = shared_relocations(1, 5_000, 8);
        let file = object::File::parse(&*bytes).unwrap();
        let mut relocations = DynamicRelocations::of(&file).unwrap();
        assert_eq!(relocations.by_ref().count(), 5_000);
        assert!(!relocations.capped());
    }

    #[test]
    fn the_import_and_pointer_readers_walk_no_more_than_the_file_holds() {
        use crate::providers::native::code_map::CodeMap;
        use crate::providers::native::imports::ImportTable;
        use crate::providers::native::pointers::DataPointers;
        for kind in [0, 8] {
            let bytes = shared_relocations(400, 5_000, kind);
            let file = object::File::parse(&*bytes).unwrap();
            let code = CodeMap::new(&file, bytes.len());
            let overlap =
                |limitations: &[String]| limitations.iter().any(|l| l.contains("overlap"));
            let imports = ImportTable::read(&file, &code);
            assert!(overlap(&imports.limitations), "{:?}", imports.limitations);
            let pointers = DataPointers::read(&file, |_| false);
            assert!(overlap(&pointers.limitations), "{:?}", pointers.limitations);
        }
    }

    #[test]
    fn an_interrupted_call_stops_the_walks_and_keeps_nothing() {
        use std::sync::Arc;

        use crate::providers::ProviderError;
        use crate::providers::interrupt::{self, CHECK_EVERY, Check};
        use crate::providers::native::NativeImage;
        use crate::providers::native::fixtures::temp_file;
        use crate::providers::native::pointers::DataPointers;

        let bytes = shared_relocations(1, 50_000, 8);
        let file = object::File::parse(&*bytes).unwrap();
        let stop: Check = Arc::new(|| true);
        interrupt::with_check(Some(stop.clone()), || {
            let walked = DynamicRelocations::of(&file).unwrap().count();
            assert_eq!(walked, CHECK_EVERY as usize - 1);
            assert!(DataPointers::read(&file, |_| false).len() < CHECK_EVERY as usize);
        });
        let temp = temp_file("shared", &bytes);
        let image = NativeImage::open(&temp.path).unwrap();
        let stopped = interrupt::with_check(Some(stop), || image.inventory(0));
        assert_eq!(stopped.err(), Some(ProviderError::Interrupted));
        let pointers = image.data_pointers(0).unwrap();
        assert_eq!(
            pointers.len(),
            50_000,
            "nothing of the stopped work was kept"
        );
        assert!(image.inventory(0).is_ok());
    }
}
