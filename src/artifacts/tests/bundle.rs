use std::os::unix::fs::{PermissionsExt, symlink};

use super::*;
use crate::providers::native::fixtures::{MACHO_CPU_ARM64, tiny_macho};

const PLIST: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict>
<key>CFBundleExecutable</key><string>Demo</string>
<key>CFBundleIdentifier</key><string>com.example.demo</string>
<key>CFBundleShortVersionString</key><string>1.2</string>
<key>CFBundleVersion</key><string>42</string>
<key>LSMinimumSystemVersion</key><string>11.0</string>
</dict></plist>"#;

fn app(dir: &std::path::Path) -> std::path::PathBuf {
    let b = dir.join("Demo.app");
    std::fs::create_dir_all(b.join("Contents/MacOS")).unwrap();
    std::fs::create_dir_all(b.join("Contents/Resources")).unwrap();
    std::fs::create_dir_all(b.join("Contents/_CodeSignature")).unwrap();
    std::fs::write(b.join("Contents/Info.plist"), PLIST).unwrap();
    let exe = b.join("Contents/MacOS/Demo");
    std::fs::write(&exe, tiny_macho(MACHO_CPU_ARM64)).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(b.join("Contents/_CodeSignature/CodeResources"), b"<plist/>").unwrap();
    symlink("../MacOS/Demo", b.join("Contents/Resources/inside")).unwrap();
    symlink(
        "../../../../etc/passwd",
        b.join("Contents/Resources/escape"),
    )
    .unwrap();
    symlink("/etc/passwd", b.join("Contents/Resources/absolute")).unwrap();
    b
}

#[test]
fn app_bundle_walk_with_plist_signature_and_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    let b = app(dir.path());
    let i = inspect(&b, ArtifactFormat::AppBundle, &Limits::default()).unwrap();
    i.validate().unwrap();
    assert_eq!(i.occurrences[0].entry_kind, EntryKind::Directory);
    let exe = by_path(&i, "Contents/MacOS/Demo");
    assert!(exe.executable);
    assert_eq!(exe.architecture.as_deref(), Some("arm64"));
    let plist = by_path(&i, "Contents/Info.plist");
    let facts = &i.findings.info_plist[0];
    assert_eq!(facts.occurrence_id, plist.occurrence_id);
    assert_eq!(facts.bundle_identifier.as_deref(), Some("com.example.demo"));
    assert_eq!(facts.short_version.as_deref(), Some("1.2"));
    assert_eq!(facts.version.as_deref(), Some("42"));
    assert_eq!(facts.minimum_system_version.as_deref(), Some("11.0"));
    assert!(i.edges.iter().any(|e| e.kind == EdgeKind::Loads
        && e.from == plist.occurrence_id
        && e.to == exe.occurrence_id));
    let root_sig = i
        .findings
        .code_signature
        .iter()
        .find(|s| s.occurrence_id == i.occurrences[0].occurrence_id)
        .unwrap();
    assert!(root_sig.signed);
    assert_eq!(
        refusals(&i),
        [RefusalReason::SymlinkEscape, RefusalReason::SymlinkEscape]
    );
    let absolute = by_path(&i, "Contents/Resources/absolute");
    assert_eq!(absolute.symlink_target, None);
    let inside = by_path(&i, "Contents/Resources/inside");
    assert!(i.findings.derived_relationships.iter().any(|r| {
        r.kind == RelationshipKind::SymlinkTarget
            && r.from == inside.occurrence_id
            && r.to == exe.occurrence_id
    }));
    // No absolute path anywhere in the result.
    let text = serde_json::to_string(&i).unwrap();
    assert!(!text.contains(dir.path().to_str().unwrap()));
}

#[test]
fn the_same_bundle_elsewhere_has_the_same_manifest() {
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    let a = inspect(
        &app(one.path()),
        ArtifactFormat::AppBundle,
        &Limits::default(),
    )
    .unwrap();
    let b = inspect(
        &app(two.path()),
        ArtifactFormat::AppBundle,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(a, b);
    std::fs::write(two.path().join("Demo.app/Contents/Resources/new.txt"), b"n").unwrap();
    let c = inspect(
        &two.path().join("Demo.app"),
        ArtifactFormat::AppBundle,
        &Limits::default(),
    )
    .unwrap();
    assert_ne!(a.manifest.root_sha256, c.manifest.root_sha256);
    assert_ne!(a.manifest.manifest_id, c.manifest.manifest_id);
}
