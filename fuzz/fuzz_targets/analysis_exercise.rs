//! What the `native_analysis` fuzz target does with one input, shared with
//! the corpus replay test (`tests/fuzz_replay.rs`) through `#[path]`.
//!
//! Open the file, list every document's procedures (which sweeps its code),
//! then analyse a bounded sample of procedures: dossier, callers, callees,
//! unresolved branches, containing-procedure lookups and references, at
//! addresses taken from the procedures and from the input itself. The
//! import readers (ELF relocations and PLTs, PE import directories, Mach-O
//! indirect symbols) run through the inventory, the layout and the thunks;
//! the pointer readers (relocations, base relocations, the aligned scan)
//! through `pointer_uses`.

use rea::providers::native::NativeImage;

/// Procedures analysed per document (the first ones, the last one, and
/// one chosen by the input).
const SAMPLE: usize = 6;

pub fn exercise(image: &NativeImage, data: &[u8]) {
    for document in 0..image.documents().len() {
        let Ok(inventory) = image.inventory(document) else {
            continue;
        };
        let procedures = &inventory.procedures;
        assert!(procedures.windows(2).all(|w| w[0].address < w[1].address));
        // Every import is a procedure at its stub or slot.
        if let Ok(thunks) = image.thunks(document) {
            for import in thunks.imports() {
                let Some(address) = import.address() else {
                    continue;
                };
                let listed = procedures
                    .binary_search_by_key(&address, |p| p.address)
                    .is_ok();
                assert!(
                    listed || inventory.truncated,
                    "import at {address:#x} not listed"
                );
                let _ = image.callers(document, address);
            }
        }
        let _ = image.layout(document);
        let chosen = data
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
            .unwrap_or(0);
        let picks = procedures
            .iter()
            .take(SAMPLE - 2)
            .chain(procedures.last())
            .chain(procedures.get(chosen as usize % procedures.len().max(1)));
        for procedure in picks {
            let entry = procedure.address;
            if let Ok(dossier) = image.function(document, entry, 256) {
                assert!(dossier.instructions.len() <= 256);
                assert_eq!(dossier.entry, entry);
            }
            let _ = image.callers(document, entry);
            let _ = image.callees(document, entry);
            let _ = image.unresolved(document, entry);
            let _ = image.locate(document, entry.wrapping_add(1));
            let _ = image.xrefs_to(document, entry, entry.saturating_add(1), 16);
        }
        // Addresses that are not procedure starts are typed errors.
        let _ = image.function(document, chosen, 64);
        let _ = image.locate(document, chosen);
        let _ = image.locate(document, u64::MAX);
        let _ = image.xrefs_to(document, chosen, u64::MAX, 16);
        // Pointers in data (relocations, base relocations or the scan).
        for target in [chosen, procedures.first().map_or(0, |p| p.address)] {
            let Ok(uses) = image.pointer_uses(document, target, 4, 4) else {
                continue;
            };
            assert!(uses.uses.len() <= 4 && uses.uses.len() <= uses.total_slots);
            for used in &uses.uses {
                assert!(used.table.0 <= used.slot && used.slot <= used.table.1);
                assert!(used.users.len() <= 4 && used.users.len() <= used.users_total);
            }
        }
    }
}
