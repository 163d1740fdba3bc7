//! A JSON-RPC message as a client sends it (a stdio line, an HTTP body),
//! from arbitrary bytes: `server::message::check` passes it or answers it
//! with a well-formed JSON-RPC error, never panics, and an answer never
//! quotes the input beyond the request's own id.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rea::server::message::check;

fuzz_target!(|data: &[u8]| {
    match check(data) {
        Ok(value) => assert!(value.is_object(), "only one message object passes"),
        Err(answer) => {
            assert_eq!(answer["jsonrpc"], "2.0");
            let code = answer["error"]["code"].as_i64().expect("a code");
            assert!((-32700..=-32600).contains(&code), "{code}");
            let message = answer["error"]["message"].as_str().expect("a message");
            assert!(message.len() < 512, "an unbounded message");
        }
    }
});
