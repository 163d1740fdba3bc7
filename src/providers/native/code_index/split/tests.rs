//! The two-core sweep against one sweep from the start, on real compiled
//! code (this test program's own `.text`) and on arbitrary bytes.

use std::sync::Mutex;

use object::{Object as _, ObjectSection as _};
use proptest::prelude::*;

use super::*;

fn region(bytes: &[u8], address: u64) -> CodeRegion<'_> {
    CodeRegion {
        address,
        end: address.saturating_add(bytes.len() as u64),
        bytes,
        section: ".text",
    }
}

/// The facts of one sweep on one core, and of a sweep split by `split`.
fn both(split: Split, arch: Arch, bytes: &[u8], address: u64) -> (Facts, Facts, Sweep) {
    let region = region(bytes, address);
    let code = CodeMap::from_regions(vec![region]);
    let meter = Meter::new(&|_, _| {}, bytes.len() as u64);
    let mut whole = Facts::default();
    Part::new(arch, &code, &meter).sweep(bytes, address, &mut whole, |_| true);
    let mut halves = Facts::default();
    let how = sweep_region_split(split, arch, &region, &code, &meter, &mut halves);
    (whole, halves, how)
}

/// At most 4 MiB of this program's `.text` and its address: a debug
/// build's is larger than a region the index splits.
fn own_code() -> (Vec<u8>, u64) {
    let exe = std::fs::read(std::env::current_exe().expect("the test program's path"))
        .expect("read the test program");
    let file = object::File::parse(&*exe).expect("parse the test program");
    let text = file.section_by_name(".text").expect("a .text section");
    let bytes = text.data().expect(".text bytes");
    (bytes[..bytes.len().min(4 << 20)].to_vec(), text.address())
}

#[test]
fn compiled_code_split_in_two_reads_as_one_sweep() {
    let (bytes, address) = own_code();
    assert!(bytes.len() > 1 << 16, "the test program's code is large");
    let split = Split {
        min_len: 1 << 16,
        window: SPLIT.window,
    };
    let (whole, halves, how) = both(split, Arch::X86_64, &bytes, address);
    assert!(
        matches!(how, Sweep::Met(at) if at >= address + bytes.len() as u64 / 2),
        "the halves meet past the midpoint of compiled code: {how:?}"
    );
    assert!(whole.instructions > 10_000 && !whole.by_from.is_empty());
    assert_eq!(whole, halves);
}

#[test]
fn small_arm64_and_wrapping_regions_are_swept_whole() {
    let bytes = [0x90u8; 64];
    let (_, _, how) = both(SPLIT, Arch::X86_64, &bytes, 0x1000);
    assert_eq!(how, Sweep::Whole);
    let split = Split {
        min_len: 0,
        window: 16,
    };
    let (whole, halves, how) = both(split, Arch::Aarch64, &bytes, 0x1000);
    assert_eq!(how, Sweep::Whole);
    assert_eq!(whole, halves);
    let (whole, halves, how) = both(split, Arch::X86_64, &bytes, u64::MAX - 31);
    assert_eq!(how, Sweep::Whole, "addresses that wrap");
    assert_eq!(whole, halves);
}

#[test]
fn halves_that_never_meet_sweep_on_alone() {
    // `b8 imm32` (`mov eax, imm32`) is five bytes: from offset 0 the
    // instructions start at multiples of 5, from the midpoint (2048) at
    // 2048 + multiples of 5, so the two never share a start.
    let bytes = vec![0xb8u8; 4096];
    let split = Split {
        min_len: 0,
        window: 64,
    };
    let (whole, halves, how) = both(split, Arch::X86_64, &bytes, 0x40_0000);
    assert_eq!(how, Sweep::Alone);
    assert_eq!(whole, halves);
}

#[test]
fn progress_only_goes_up_and_ends_at_the_total() {
    let (bytes, address) = own_code();
    let seen = Mutex::new(Vec::new());
    let record = |done: u64, total: u64| seen.lock().expect("no panic").push((done, total));
    let region = region(&bytes, address);
    let code = CodeMap::from_regions(vec![region]);
    let total = bytes.len() as u64;
    let meter = Meter::new(&record, total);
    let split = Split {
        min_len: 0,
        window: SPLIT.window,
    };
    sweep_region_split(
        split,
        Arch::X86_64,
        &region,
        &code,
        &meter,
        &mut Facts::default(),
    );
    meter.finish();
    let seen = seen.into_inner().expect("no panic");
    assert!(seen.len() > 2, "{seen:?}");
    assert!(
        seen.iter()
            .all(|&(done, all)| all == total && done <= total)
    );
    assert!(
        seen.windows(2).all(|pair| pair[0].0 <= pair[1].0),
        "{seen:?}"
    );
    assert_eq!(seen.first(), Some(&(0, total)));
    assert_eq!(seen.last(), Some(&(total, total)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_split_read_as_one_sweep(
        bytes in proptest::collection::vec(any::<u8>(), 0..2048),
        window in 1u64..64,
        wide in any::<bool>(),
    ) {
        let arch = if wide { Arch::X86_64 } else { Arch::X86 };
        let split = Split { min_len: 0, window };
        let (whole, halves, _) = both(split, arch, &bytes, 0x1000);
        prop_assert_eq!(whole, halves);
    }
}
