//! What a native addon (`.node`) file is, read with the `object` crate:
//! its container format, architectures and exported symbol names, so the
//! analyst knows what `open_binary` will find. Bounded and panic-free:
//! malformed files give `format: "unknown"` and no exports.

use object::read::macho::{FatArch, MachOFatFile32, MachOFatFile64};
use object::{FileKind, NameOrOrdinal, Object};

/// Exported names kept per addon.
pub const MAX_EXPORTS: usize = 256;
/// Exports examined per addon (the rest are not counted).
const MAX_EXPORTS_SCANNED: usize = 200_000;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NativeInfo {
    /// `elf`, `macho`, `universal-macho`, `pe` or `unknown`.
    pub format: &'static str,
    pub architectures: Vec<String>,
    /// The first [`MAX_EXPORTS`] exported names: plain names, then mangled ones, each sorted.
    pub exports: Vec<String>,
    pub exports_total: u64,
}

fn arch_name(a: object::Architecture) -> String {
    format!("{a:?}").to_ascii_lowercase()
}

/// Describes the addon held in `bytes`.
pub fn describe(bytes: &[u8]) -> NativeInfo {
    let mut info = NativeInfo {
        format: "unknown",
        ..NativeInfo::default()
    };
    let Ok(kind) = FileKind::parse(bytes) else {
        return info;
    };
    let single = match kind {
        FileKind::Elf32 | FileKind::Elf64 => Some("elf"),
        FileKind::MachO32 | FileKind::MachO64 => Some("macho"),
        FileKind::Pe32 | FileKind::Pe64 => Some("pe"),
        _ => None,
    };
    if let Some(format) = single {
        info.format = format;
        exports_of(bytes, &mut info);
        return info;
    }
    let slices: Vec<(object::Architecture, &[u8])> = match kind {
        FileKind::MachOFat32 => MachOFatFile32::parse(bytes)
            .map(|f| fat_slices(f.arches(), bytes))
            .unwrap_or_default(),
        FileKind::MachOFat64 => MachOFatFile64::parse(bytes)
            .map(|f| fat_slices(f.arches(), bytes))
            .unwrap_or_default(),
        _ => return info,
    };
    info.format = "universal-macho";
    let mut first = None;
    for (arch, data) in slices {
        info.architectures.push(arch_name(arch));
        first.get_or_insert(data);
    }
    if let Some(data) = first {
        let mut inner = NativeInfo::default();
        exports_of(data, &mut inner);
        info.exports = inner.exports;
        info.exports_total = inner.exports_total;
    }
    info
}

fn fat_slices<'d, A: FatArch>(
    arches: &[A],
    bytes: &'d [u8],
) -> Vec<(object::Architecture, &'d [u8])> {
    arches
        .iter()
        .take(64)
        .filter_map(|a| Some((a.architecture(), a.data(bytes).ok()?)))
        .collect()
}

fn exports_of(bytes: &[u8], info: &mut NativeInfo) {
    let Ok(file) = object::File::parse(bytes) else {
        return;
    };
    if info.architectures.is_empty() {
        info.architectures.push(arch_name(file.architecture()));
    }
    let Ok(exports) = file.exports() else {
        return;
    };
    let mut names = Vec::new();
    for export in exports.take(MAX_EXPORTS_SCANNED).flatten() {
        info.exports_total += 1;
        names.push(match export.name() {
            NameOrOrdinal::Name(n) => String::from_utf8_lossy(n).into_owned(),
            NameOrOrdinal::Ordinal(o) => format!("#{o}"),
        });
    }
    // Plain (C / N-API) names first: they are the addon's entry points;
    // mangled C++ names follow.
    let mangled = |n: &str| n.starts_with("_Z") || n.starts_with("__Z") || n.starts_with('?');
    names.sort_by(|a, b| (mangled(a), a).cmp(&(mangled(b), b)));
    names.dedup();
    names.truncate(MAX_EXPORTS);
    info.exports = names;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_unknown() {
        for bytes in [
            &b""[..],
            b"\x7fELF",
            b"MZ\0\0garbage",
            &[0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 9],
        ] {
            let i = describe(bytes);
            assert!(i.exports.is_empty());
        }
        assert_eq!(describe(b"hello").format, "unknown");
    }

    #[test]
    fn reads_real_addons_when_fixtures_are_present() {
        use crate::providers::native::fixtures::fixture;
        let Some(elf) = fixture("watcher-linux-x64.node") else {
            return;
        };
        let dir = elf.parent().unwrap().to_owned();
        let elf = std::fs::read(elf).unwrap();
        let i = describe(&elf);
        assert_eq!(i.format, "elf");
        assert_eq!(i.architectures, ["x86_64"]);
        // This addon exports only C++ names (N-API glue), 663 of them.
        assert!(i.exports.iter().any(|e| e.starts_with("_Z10getBackend")));
        assert!(i.exports_total > MAX_EXPORTS as u64);
        assert_eq!(i.exports.len(), MAX_EXPORTS);
        if let Ok(fat) = std::fs::read(dir.join("fsevents.node")) {
            let f = describe(&fat);
            assert_eq!(f.format, "universal-macho");
            assert_eq!(f.architectures.len(), 2);
            assert!(f.architectures.contains(&"x86_64".to_owned()));
            assert!(!f.exports.is_empty());
        }
        if let Ok(macho) = std::fs::read(dir.join("watcher-darwin-arm64.node")) {
            let m = describe(&macho);
            assert_eq!(
                (m.format, m.architectures.as_slice()),
                ("macho", &["aarch64".to_owned()][..])
            );
        }
        if let Ok(pe) = std::fs::read(dir.join("watcher-win32-x64.node")) {
            let p = describe(&pe);
            assert_eq!(p.format, "pe");
            assert!(
                p.exports
                    .iter()
                    .any(|e| e.starts_with("napi_register_module")),
                "{:?}",
                p.exports
            );
        }
    }
}
