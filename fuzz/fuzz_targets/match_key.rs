//! The match key over arbitrary UTF-8: `key` is idempotent, and completion
//! over the input as its only candidate never panics for any prefix of it.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rea::matching::key::key;
use rea::matching::{complete, is_offerable};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let k = key(s);
    assert_eq!(key(&k), k, "key is not idempotent for {s:?}");

    // A prefix of the input, its length chosen by the first byte and moved
    // back to a character boundary.
    let mut cut = data.first().map_or(0, |&b| b as usize % (s.len() + 1));
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    let prefix = &s[..cut];
    let page = complete([s], prefix);
    assert!(page.total <= 1 && page.values.len() == page.total);
    if let Some(value) = page.values.first() {
        assert_eq!(value, s);
    }

    // The input always matches itself exactly when it may be offered at all.
    let page = complete([s], s);
    assert_eq!(page.total, usize::from(is_offerable(s)), "{s:?} vs itself");
});
