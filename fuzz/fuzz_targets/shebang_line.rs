//! The start of a file a capture would run, from arbitrary bytes: it reads
//! as a binary, a `#!` line the kernel refuses, or a script naming one
//! interpreter word; never a panic.

#![no_main]

use std::os::unix::ffi::OsStrExt;

use libfuzzer_sys::fuzz_target;
use rea::capture::interpreter::{Head, SHEBANG_BYTES, parse};

fuzz_target!(|data: &[u8]| {
    if let Head::Script { name, .. } = parse(data) {
        let name = name.as_bytes();
        assert!(!name.is_empty() && name.len() < SHEBANG_BYTES);
        assert!(!name.iter().any(|b| matches!(b, b' ' | b'\t' | b'\n' | 0)));
    }
});
