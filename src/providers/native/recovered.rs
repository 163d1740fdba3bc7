//! The inventory's last step: procedures recovered from the code (see
//! [`recovery`](super::recovery)), from what the tables, symbols and
//! direct calls already declared.

use object::{Object, ObjectSection};

use super::code_index::CodeIndex;
use super::code_map::CodeMap;
use super::procedures::Candidate;
use super::recovery::{self, Input};
use super::thunks::Thunks;
use super::words::Words;
use super::{NativeImage, code_index};
use crate::providers::code::RefKind;
use crate::providers::{Inventory, ProviderError, Source};

/// Sections of import stubs: code, but never a procedure of its own.
const STUB_SECTIONS: &[&str] = &[
    ".plt",
    ".plt.sec",
    ".plt.got",
    ".iplt",
    "__stubs",
    "__auth_stubs",
    "__stub_helper",
];

/// What recovery adds to an inventory.
pub(super) struct Recovered {
    pub candidates: Vec<Candidate<'static>>,
    pub limitations: Vec<String>,
}

impl NativeImage {
    /// Procedures the code shows beyond `declared` (tail-call targets,
    /// fragments, code reached through pointers, unreached code).
    pub(super) fn recover_procedures(
        &self,
        document: usize,
        file: &object::File<'_>,
        index: &CodeIndex,
        thunks: &Thunks,
        declared: &Inventory,
    ) -> Result<Recovered, ProviderError> {
        let none = Recovered {
            candidates: Vec::new(),
            limitations: Vec::new(),
        };
        let Some(arch) = code_index::arch_of(file) else {
            return Ok(none);
        };
        let code = CodeMap::new(file, self.code_budget(document));
        let known = known_extents(declared, &code);
        let pointers = self.data_pointers(document)?;
        let pointed_data = pointers
            .targets()
            .filter(|&target| code.contains(target))
            .map(|target| (target, Source::CodePointer));
        let taken = index
            .xrefs()
            .iter()
            .filter(|xref| xref.kind == RefKind::Address && code.contains(xref.to))
            .map(|xref| (xref.to, Source::AddressTaken));
        let noreturn = thunks
            .imports()
            .iter()
            .filter(|import| recovery::never_returns(&import.name))
            .flat_map(|import| import.stubs.iter().chain(&import.slots).copied())
            .collect();
        let excluded = file
            .sections()
            .filter(|section| {
                section
                    .name()
                    .is_ok_and(|name| STUB_SECTIONS.contains(&name))
            })
            .map(|section| {
                (
                    section.address(),
                    section.address().saturating_add(section.size()),
                )
            })
            .collect();
        let words = Words::new(file);
        let referenced = |address: u64| {
            index
                .xrefs_to(address, address.saturating_add(1))
                .next()
                .is_some()
                || pointers.slots_pointing_at(address).next().is_some()
        };
        let recovery = recovery::recover(Input {
            code: &code,
            arch,
            known,
            pointed: pointed_data.chain(taken).collect(),
            excluded,
            noreturn,
            words: &words,
            pointers: &pointers,
            referenced: &referenced,
        });
        let candidates = recovery
            .found
            .iter()
            .map(|found| match found.part_of {
                Some(parent) => Candidate::fragment(found.address, parent),
                None => Candidate::unnamed(found.address, None, found.source),
            })
            .collect();
        let mut limitations = recovery.limitations;
        if recovery.unbounded_tables > 0 {
            limitations.push(format!(
                "{} of {} indirect jumps that look like switch tables have no compare bounding \
                 their index; their cases were not followed, so code only they reach is listed \
                 as procedures of its own (`code_gap`)",
                recovery.unbounded_tables,
                recovery.unbounded_tables + recovery.tables
            ));
        }
        Ok(Recovered {
            candidates,
            limitations,
        })
    }
}

/// The declared procedures in code, with their stated extents. Go's
/// function table lists every function in address order, so each of its
/// functions extends to the next one it lists (within one region): there
/// is nothing left between them to recover.
fn known_extents(declared: &Inventory, code: &CodeMap<'_>) -> Vec<(u64, Option<u64>)> {
    let in_code: Vec<_> = declared
        .procedures
        .iter()
        .filter(|procedure| code.contains(procedure.address))
        .collect();
    let go: Vec<u64> = in_code
        .iter()
        .filter(|procedure| procedure.sources.contains(Source::GoPclntab))
        .map(|procedure| procedure.address)
        .collect();
    in_code
        .iter()
        .map(|procedure| {
            let next_go = go
                .get(go.partition_point(|&start| start <= procedure.address))
                .copied()
                .filter(|_| procedure.sources.contains(Source::GoPclntab));
            let same_region = |end: u64| {
                code.region_of(procedure.address)
                    .is_some_and(|region| end <= region.end)
            };
            let size = next_go
                .filter(|&end| same_region(end))
                .map(|end| end - procedure.address);
            (procedure.address, procedure.size.or(size))
        })
        .collect()
}
