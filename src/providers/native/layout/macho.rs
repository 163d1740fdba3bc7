//! Mach-O: the load commands (libraries, rpaths, code signature, build
//! version) and where the exports come from (the exports trie, walked in
//! `exports_trie.rs`, or the symbol table). One file per format keeps each
//! reader next to the facts only that format has.

use object::read::macho::{LoadCommandVariant, MachHeader, MachOFile};
use object::{Endianness, Object, ObjectSegment, ReadRef, macho};

use super::exports_trie::trie_exports;
use super::notes::{Distinct, Notes};
use super::object_tables::{object_exports, object_imports};
use super::{Layout, MAX_LOAD_COMMANDS};

pub(super) fn macho_layout<'data, Mach: MachHeader<Endian = Endianness>>(
    file: &object::File<'data>,
    macho: &MachOFile<'data, Mach, &'data [u8]>,
    layout: &mut Layout,
    notes: &mut Notes,
) {
    let endian = macho.endian();
    let mut needed = Distinct::new();
    let mut rpaths = Distinct::new();
    let mut signed = false;
    let mut build_versions = Vec::new();
    let mut minimum_versions = Vec::new();
    let mut exports_trie = None;
    let mut dyld_info_exports = None;
    let mut bad_strings = 0usize;
    match macho.macho_load_commands() {
        Ok(mut commands) => {
            for index in 0.. {
                if index >= MAX_LOAD_COMMANDS {
                    notes.note(format!(
                        "load commands: reading stopped after {MAX_LOAD_COMMANDS} commands"
                    ));
                    break;
                }
                let command = match commands.next() {
                    Ok(Some(command)) => command,
                    Ok(None) => break,
                    Err(error) => {
                        notes.note(format!(
                            "load commands: reading stopped at command #{index}: {error}"
                        ));
                        break;
                    }
                };
                let variant = match command.variant() {
                    Ok(variant) => variant,
                    Err(error) => {
                        notes.note(format!("load commands: command #{index}: {error}"));
                        continue;
                    }
                };
                match variant {
                    LoadCommandVariant::Dylib(dylib) => {
                        match command.string(endian, dylib.dylib.name) {
                            Ok(name) => {
                                needed.push(notes.name(name));
                            }
                            Err(_) => bad_strings += 1,
                        }
                    }
                    LoadCommandVariant::Rpath(rpath) => match command.string(endian, rpath.path) {
                        Ok(path) => {
                            rpaths.push(notes.name(path));
                        }
                        Err(_) => bad_strings += 1,
                    },
                    LoadCommandVariant::LinkeditData(linkedit) => {
                        let cmd = command.cmd();
                        if cmd == macho::LC_CODE_SIGNATURE {
                            signed = true;
                        } else if cmd == macho::LC_DYLD_EXPORTS_TRIE {
                            exports_trie =
                                Some((linkedit.dataoff.get(endian), linkedit.datasize.get(endian)));
                        }
                    }
                    LoadCommandVariant::DyldInfo(info) => {
                        let size = info.export_size.get(endian);
                        if size != 0 {
                            dyld_info_exports = Some((info.export_off.get(endian), size));
                        }
                    }
                    LoadCommandVariant::BuildVersion(build, _) => {
                        build_versions.push(build_version(
                            platform_name(build.platform.get(endian).0),
                            build.minos.get(endian),
                            build.sdk.get(endian),
                        ));
                    }
                    LoadCommandVariant::VersionMin(minimum) => {
                        let cmd = command.cmd();
                        let platform = if cmd == macho::LC_VERSION_MIN_MACOSX {
                            "macos"
                        } else if cmd == macho::LC_VERSION_MIN_IPHONEOS {
                            "ios"
                        } else if cmd == macho::LC_VERSION_MIN_TVOS {
                            "tvos"
                        } else {
                            "watchos"
                        };
                        minimum_versions.push(build_version(
                            platform.to_owned(),
                            minimum.version.get(endian),
                            minimum.sdk.get(endian),
                        ));
                    }
                    _ => {}
                }
            }
        }
        Err(error) => notes.note(format!("load commands cannot be read: {error}")),
    }
    if bad_strings > 0 {
        notes.note(format!(
            "load commands: {bad_strings} library or rpath names could not be read"
        ));
    }
    (layout.needed_libraries, layout.needed_libraries_repeated) =
        needed.finish("needed libraries", notes);
    layout.rpaths = rpaths.finish("rpaths", notes).0;
    layout.code_signature = Some(signed);
    let versions = if build_versions.is_empty() {
        minimum_versions
    } else {
        build_versions
    };
    if !versions.is_empty() {
        layout.macho_build_version = Some(joined_versions(versions));
    }
    layout.imports = object_imports(file, notes);
    // `object` walks an exports trie without bounding its work, so tries are
    // walked here; without one, exports come from the symbol table.
    layout.exports = match exports_trie.or(dyld_info_exports) {
        Some((offset, size)) => {
            match macho
                .data()
                .read_bytes_at(u64::from(offset), u64::from(size))
            {
                Ok(trie) => trie_exports(trie, text_base(file), notes),
                Err(()) => {
                    notes.note(format!(
                        "exports: the exports trie (offset {offset}, {size} bytes) runs past \
                         the end of the file"
                    ));
                    Vec::new()
                }
            }
        }
        None => object_exports(file, notes),
    };
}

/// Exports trie addresses are offsets from the `__TEXT` segment's address.
fn text_base(file: &object::File<'_>) -> u64 {
    file.segments()
        .take(MAX_LOAD_COMMANDS)
        .find(|segment| segment.name_bytes().ok().flatten() == Some(b"__TEXT".as_slice()))
        .map_or(0, |segment| segment.address())
}

fn build_version(platform: String, minimum: macho::Version, sdk: macho::Version) -> String {
    let sdk = if sdk.0 == 0 {
        "n/a".to_owned()
    } else {
        version_text(sdk)
    };
    format!("{platform} {} (sdk {sdk})", version_text(minimum))
}

/// `X.Y`, or `X.Y.Z` when Z is not zero (the `otool` spelling).
fn version_text(version: macho::Version) -> String {
    if version.update() == 0 {
        format!("{}.{}", version.major(), version.minor())
    } else {
        format!(
            "{}.{}.{}",
            version.major(),
            version.minor(),
            version.update()
        )
    }
}

fn platform_name(platform: u32) -> String {
    match platform {
        1 => "macos",
        2 => "ios",
        3 => "tvos",
        4 => "watchos",
        5 => "bridgeos",
        6 => "maccatalyst",
        7 => "ios-simulator",
        8 => "tvos-simulator",
        9 => "watchos-simulator",
        10 => "driverkit",
        11 => "visionos",
        12 => "visionos-simulator",
        13 => "firmware",
        14 => "sepos",
        other => return format!("platform {other}"),
    }
    .to_owned()
}

/// Distinct versions joined with `; `, at most [`MAX_VERSIONS`] of them
/// and then a count: a hostile file may carry 100,000 version commands.
fn joined_versions(mut versions: Vec<String>) -> String {
    const MAX_VERSIONS: usize = 4;
    let mut seen = std::collections::HashSet::new();
    versions.retain(|version| seen.insert(version.clone()));
    let more = versions.len().saturating_sub(MAX_VERSIONS);
    versions.truncate(MAX_VERSIONS);
    let mut joined = versions.join("; ");
    if more > 0 {
        joined.push_str(&format!("; and {more} more"));
    }
    joined
}

#[cfg(test)]
mod version_tests {
    #[test]
    fn many_version_commands_give_a_short_fact() {
        let versions = (0..100_000).map(|i| format!("macos 11.{i}")).collect();
        assert_eq!(
            super::joined_versions(versions),
            "macos 11.0; macos 11.1; macos 11.2; macos 11.3; and 99996 more"
        );
        let same = vec!["ios 17.0".to_owned(); 3];
        assert_eq!(super::joined_versions(same), "ios 17.0");
    }
}
