//! The native provider over arbitrary file contents: opening, listing
//! documents, inventories, overviews, layouts and string tables must never
//! panic.
//!
//! `NativeImage::open` takes a path (it memory-maps the file), so each input
//! is written to one temp file per process, overwritten every iteration. The
//! image (and so the map) is dropped before the next write truncates the
//! file, so no stale map ever sees a shrunken file.

#![no_main]

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use rea::providers::native::NativeImage;

static PATH: LazyLock<PathBuf> = LazyLock::new(|| {
    std::env::temp_dir().join(format!("rea-fuzz-native-image-{}.bin", std::process::id()))
});

fn write_input(data: &[u8]) {
    let mut file = std::fs::File::create(&*PATH).expect("create the fuzz temp file");
    file.write_all(data).expect("write the fuzz temp file");
}

fuzz_target!(|data: &[u8]| {
    write_input(data);
    let Ok(image) = NativeImage::open(&PATH) else {
        return;
    };
    let count = image.documents().len();
    for i in 0..count {
        let _ = image.inventory(i);
        let _ = image.overview(i, 50);
        let _ = image.layout(i);
        if let Ok(table) = image.strings(i) {
            assert!(table.strings.windows(2).all(|w| w[0].address <= w[1].address));
        }
        let name = image.documents()[i].name.clone();
        let found = image
            .document_index(&name)
            .expect("a listed document's name resolves");
        assert_eq!(image.documents()[found].name, name);
    }
    // Out-of-range indexes and unknown names are errors, never panics.
    assert!(image.inventory(count).is_err());
    assert!(image.overview(count, 50).is_err());
    assert!(image.overview(usize::MAX, 0).is_err());
    assert!(image.layout(count).is_err());
    assert!(image.strings(count).is_err());
    let unknown = String::from_utf8_lossy(&data[..data.len().min(64)]).into_owned();
    if !image.documents().iter().any(|d| d.name == unknown) {
        assert!(image.document_index(&unknown).is_err());
    }
});
