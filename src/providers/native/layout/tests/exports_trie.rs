//! The exports trie walker on hand-built tries: exact results, cycles,
//! exponential DAGs and broken numbers.

use std::time::{Duration, Instant};

use super::super::exports_trie::{trie_exports, uleb128};
use super::*;

fn uleb_padded(value: usize) -> [u8; 2] {
    [0x80 | (value & 0x7f) as u8, (value >> 7) as u8]
}

/// A trie of `depth` nodes, each with `fanout` edges labelled `a` to the
/// next node (a DAG with `fanout^depth` paths); the last node is a
/// terminal at offset 0x10 when `terminal`.
fn dag_trie(depth: usize, fanout: u8, terminal: bool) -> Vec<u8> {
    let node_size = 2 + usize::from(fanout) * 4;
    let mut trie = Vec::new();
    for index in 0..depth {
        trie.extend_from_slice(&[0, fanout]);
        for _ in 0..fanout {
            trie.extend_from_slice(b"a\0");
            trie.extend_from_slice(&uleb_padded((index + 1) * node_size));
        }
    }
    if terminal {
        trie.extend_from_slice(&[2, 0, 0x10, 0]);
    } else {
        trie.extend_from_slice(&[0, 0]);
    }
    trie
}

#[test]
fn exports_trie_walk_is_exact_and_bounded() {
    // Root with edges "_a" (regular, 0x10), "_b" (re-export), "_c"
    // (stub 0x20 + resolver 0x30), "_d" (absolute).
    let mut trie = vec![0u8, 4];
    let labels: [&[u8]; 4] = [b"_a\0", b"_b\0", b"_c\0", b"_d\0"];
    let terminals: [&[u8]; 4] = [
        &[2, 0x00, 0x10],
        &[4, 0x08, 0x01, b'x', 0],
        &[3, 0x10, 0x20, 0x30],
        &[2, 0x02, 0x44],
    ];
    let mut offset = 2 + labels.iter().map(|label| label.len() + 1).sum::<usize>();
    for (label, terminal) in labels.iter().zip(terminals) {
        trie.extend_from_slice(label);
        trie.push(offset as u8);
        offset += terminal.len() + 1;
    }
    for terminal in terminals {
        trie.extend_from_slice(terminal);
        trie.push(0);
    }
    let mut notes = Notes::new();
    let exports = trie_exports(&trie, 0x1000, &mut notes);
    assert_eq!(
        exports,
        [
            LayoutExport {
                name: "_a".to_owned(),
                address: "0x1010".to_owned()
            },
            LayoutExport {
                name: "_c".to_owned(),
                address: "0x1020".to_owned()
            },
        ]
    );
    let limitations = notes.finish();
    assert_eq!(limitations.len(), 1, "{limitations:?}");
    assert!(limitations[0].contains("2 exports have no address"));

    // An edge back to the root is skipped, not followed.
    let mut notes = Notes::new();
    assert!(trie_exports(&[0, 1, b'a', 0, 0], 0, &mut notes).is_empty());
    assert!(notes.finish()[0].contains("loops back"));

    // Exponentially many paths to one terminal: capped exports, fast.
    let started = Instant::now();
    let mut notes = Notes::new();
    let exports = trie_exports(&dag_trie(30, 4, true), 0, &mut notes);
    assert_eq!(exports.len(), MAX_LAYOUT_ENTRIES);
    assert!(notes.finish()[0].starts_with("exports truncated at 10000"));
    // Exponentially many paths and no terminal: the node budget stops it.
    let mut notes = Notes::new();
    assert!(trie_exports(&dag_trie(30, 4, false), 0, &mut notes).is_empty());
    let limitations = notes.finish();
    assert!(
        limitations[0].contains("after visiting 100000 trie nodes"),
        "{limitations:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));

    // Broken numbers and offsets.
    let mut notes = Notes::new();
    let overflowing = [0xffu8; 12];
    assert!(trie_exports(&overflowing, 0, &mut notes).is_empty());
    assert!(trie_exports(&[0, 1, b'a', 0, 0x7f], 0, &mut notes).is_empty());
    assert!(trie_exports(&[], 0, &mut notes).is_empty());
    assert_eq!(notes.finish().len(), 3);
    let mut value: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
    assert_eq!(uleb128(&mut value), Ok(u64::MAX));
    let mut value: &[u8] = &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
    assert!(uleb128(&mut value).is_err());
}
