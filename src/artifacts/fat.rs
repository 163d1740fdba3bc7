//! Universal (fat) Mach-O: each slice is an occurrence of the universal
//! binary (entry kind `slice`), hashed and read for its layout facts.

use object::FileKind;
use object::read::macho::{FatArch, MachOFatFile32, MachOFatFile64};

use super::classify::MAX_FAT_SLICES;
use super::model::{ArtifactError, EntryKind, HashStatus, UnexploredReason};
use super::walk::{Container, Content, Entry, Walk};

fn malformed(detail: impl Into<String>) -> ArtifactError {
    ArtifactError::malformed("universal Mach-O", detail)
}

/// (offset, size) of each slice, or `None` when this is not a readable fat
/// header (Java class files share the magic).
fn slices(b: &[u8]) -> Option<Vec<(u64, u64)>> {
    let claimed = u32::from_be_bytes(b.get(4..8)?.try_into().ok()?);
    if claimed == 0 || claimed > MAX_FAT_SLICES {
        return None;
    }
    match FileKind::parse(b).ok()? {
        FileKind::MachOFat32 => Some(ranges(MachOFatFile32::parse(b).ok()?.arches())),
        FileKind::MachOFat64 => Some(ranges(MachOFatFile64::parse(b).ok()?.arches())),
        _ => None,
    }
}

fn ranges<A: FatArch>(arches: &[A]) -> Vec<(u64, u64)> {
    arches.iter().map(FatArch::file_range).collect()
}

pub(crate) fn slice_count(b: &[u8]) -> Option<usize> {
    slices(b).map(|s| s.len())
}

pub(crate) fn walk(w: &mut Walk, c: &Container, b: &[u8]) -> Result<(), ArtifactError> {
    let slices = slices(b).ok_or_else(|| malformed("not a readable fat header"))?;
    for (index, (offset, size)) in slices.into_iter().enumerate() {
        if w.stopped() {
            break;
        }
        if !w.see(c) {
            break;
        }
        let data = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(o, s)| b.get(o..o.checked_add(s)?));
        let Some(data) = data else {
            w.unexplored(
                Some(c.id.clone()),
                format!("{}#slice-{index}", c.display),
                UnexploredReason::Malformed,
                format!("slice {index} lies outside the file"),
            );
            continue;
        };
        let arch = super::classify::native_facts(data, "slice")
            .map(|f| f.architecture)
            .unwrap_or_else(|_| "unknown".into());
        let mut e = Entry::new(
            format!("slice-{index}-{arch}"),
            EntryKind::Slice,
            Content::Absent(HashStatus::NotHashedLimit),
        );
        e.declared_size = size;
        if !w.add_in_memory(c, e, data, false).1 {
            break;
        }
    }
    Ok(())
}
