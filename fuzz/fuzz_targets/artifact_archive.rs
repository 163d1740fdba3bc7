//! The artifact inventory over arbitrary bytes: zip, ar, asar and
//! universal Mach-O readers (and the nested walk) must never panic, hang or
//! allocate without bound, and every result they return must validate.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "artifact_exercise.rs"]
mod artifact_exercise;

fuzz_target!(|data: &[u8]| {
    artifact_exercise::exercise(data);
});
