//! [`Knowledge`] from what the built-in provider reads in the file, whatever
//! provider the session is bound to: the decompiler reads the file, so its
//! facts come from the file too.

use super::knowledge::{Knowledge, KnownString, Named, Start};
use crate::providers::native::NativeImage;
use crate::providers::native::StringEncoding;
use crate::providers::{Format, ProviderError};

/// What rea knows of `document` that the engine should know too.
pub fn knowledge_of(image: &NativeImage, document: usize) -> Result<Knowledge, ProviderError> {
    let inventory = image.inventory(document)?;
    let thunks = image.thunks(document)?;
    let macho = image
        .documents()
        .get(document)
        .is_some_and(|d| d.format == Format::MachO);
    let mut knowledge = Knowledge::default();
    for procedure in &inventory.procedures {
        // A `.cold` or `.part` piece is decompiled with its parent, never as
        // a function of its own (it would run on into the parent's body).
        if procedure.part_of.is_some() {
            continue;
        }
        knowledge.functions.push(Start {
            address: procedure.address,
            name: procedure.name.as_deref().map(display_name),
        });
    }
    for import in thunks.imports() {
        let name = display_name(if macho {
            c_name(&import.name)
        } else {
            &import.name
        });
        for &stub in &import.stubs {
            knowledge.import_stubs.push(Named {
                address: stub,
                name: name.clone(),
            });
        }
        for &slot in &import.slots {
            knowledge.import_slots.push(Named {
                address: slot,
                name: name.clone(),
            });
        }
    }
    // Only strings the loader maps from the file: a section it does not
    // load (ELF `.comment`) sits at address 0, where every null pointer is.
    let mapped = file_backed(image, document)?;
    let strings = image.strings(document)?;
    for found in &strings.strings {
        if !mapped.contains(found.address) {
            continue;
        }
        let (units, wide) = match found.encoding {
            StringEncoding::Ascii | StringEncoding::Utf8 => (found.value.len(), false),
            StringEncoding::Utf16Le => (found.value.encode_utf16().count(), true),
        };
        if found.truncated {
            continue;
        }
        knowledge.strings.push(KnownString {
            address: found.address,
            units: u32::try_from(units).unwrap_or(u32::MAX),
            wide,
        });
    }
    Ok(knowledge.normalize())
}

/// The address ranges the loader fills from the file's bytes: what the
/// decompiler may read. A truncated file's sections promise more, which the
/// engine would read as zeros.
pub struct FileBacked(Vec<(u64, u64)>);

impl FileBacked {
    pub fn contains(&self, address: u64) -> bool {
        self.0
            .iter()
            .any(|&(start, end)| (start..end).contains(&address))
    }
}

pub fn file_backed(image: &NativeImage, document: usize) -> Result<FileBacked, ProviderError> {
    let layout = image.layout(document)?;
    // The headers' own sizes, cut where the file ends.
    let length = image.document_bytes(document).len() as u64;
    Ok(FileBacked(
        layout
            .segments
            .iter()
            .filter_map(|s| {
                let start = u64::from_str_radix(s.address.trim_start_matches("0x"), 16).ok()?;
                let held = s.file_size.min(length.saturating_sub(s.file_offset));
                Some((start, start.saturating_add(held)))
            })
            .collect(),
    ))
}

/// A Mach-O symbol's C name: without the underscore the format adds.
fn c_name(name: &str) -> &str {
    match name.strip_prefix('_') {
        Some(rest) if !rest.is_empty() => rest,
        _ => name,
    }
}

fn display_name(name: &str) -> String {
    crate::providers::demangle::demangle(name).unwrap_or_else(|| name.to_string())
}
