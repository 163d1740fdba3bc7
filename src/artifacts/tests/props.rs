use proptest::prelude::*;

use super::*;

const FORMATS: [ArtifactFormat; 5] = ArtifactFormat::IN_MEMORY;

fn check(bytes: &[u8]) {
    let limits = Limits {
        max_entries: 64,
        max_total_bytes: 1 << 20,
        max_entry_bytes: 1 << 16,
        ..Limits::default()
    };
    for format in FORMATS {
        if let Ok(i) = inspect_bytes(bytes, format, &limits) {
            i.validate().unwrap();
            assert!(i.occurrences.len() as u64 <= limits.max_entries);
        }
    }
}

fn seeds() -> Vec<Vec<u8>> {
    vec![
        zip(&[
            z("a", b"abc"),
            deflated("b/c", &b"xy".repeat(50)),
            z("in.zip", &zip(&[z("q", b"q")])),
        ]),
        ar(&[("a.o", b"one"), ("b.o", b"two")]),
        asar::build(
            r#"{"files":{"a":{"size":3,"offset":"0"},"d":{"files":{"l":{"link":"a"}}}}}"#,
            b"abc",
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_bytes_give_ok_or_a_typed_error(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        check(&bytes);
    }

    #[test]
    fn mutated_archives_give_ok_or_a_typed_error(
        seed in 0usize..3,
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        let mut b = seeds()[seed].clone();
        for (at, v) in flips {
            let n = b.len();
            b[at % n] = v;
        }
        check(&b);
        let keep = cut % (b.len() + 1);
        check(&b[..keep]);
    }
}
