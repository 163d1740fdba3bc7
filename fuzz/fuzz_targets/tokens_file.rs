//! A tokens file (`rea serve --tokens-file`) from arbitrary bytes: it parses
//! or fails with a typed error, never panics, and an error never quotes a
//! token the file held.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rea::server::tokens::Tokens;

fuzz_target!(|data: &[u8]| {
    match Tokens::parse(data, "tokens.toml") {
        Ok(tokens) => {
            // Whatever the names, a header nobody issued authenticates no one.
            assert_eq!(tokens.analyst("Bearer not-a-token-of-this-file\u{0}"), None);
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.len() < 1024, "an unbounded message");
        }
    }
});
