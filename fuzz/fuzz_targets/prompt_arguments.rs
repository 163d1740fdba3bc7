//! Prompt arguments from an arbitrary JSON object: parsing never panics, and
//! every rendered value sits in exactly one untrusted-data fence whose single
//! literal line parses back (as JSON) to the trimmed value.

#![no_main]

use std::sync::{Arc, LazyLock};

use libfuzzer_sys::fuzz_target;
use rea::catalog::args::ArgumentMap;
use rea::catalog::generated::prompts::PromptName;
use rea::catalog::render::LoadedCatalog;
use serde_json::Value;

const FENCE: &str = "```";
const FENCE_INFO: &str = "untrusted-data";

static CATALOG: LazyLock<Arc<LoadedCatalog>> =
    LazyLock::new(|| LoadedCatalog::embedded().expect("the embedded catalog loads"));

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let map: ArgumentMap = map;
    for name in PromptName::ALL {
        let Ok(arguments) = name.parse_arguments(&map) else {
            continue;
        };
        assert_eq!(arguments.prompt(), name);
        let text = CATALOG
            .render(&arguments)
            .unwrap_or_else(|error| panic!("{} fails to render: {error:#}", name.as_str()));
        let lines: Vec<&str> = text.split('\n').collect();
        for (arg, value) in arguments.values() {
            let header = format!("{FENCE}{FENCE_INFO} {arg}");
            let at: Vec<usize> = lines
                .iter()
                .enumerate()
                .filter(|(_, line)| **line == header)
                .map(|(i, _)| i)
                .collect();
            let Some(value) = value else {
                assert!(
                    at.is_empty(),
                    "{}: absent argument `{arg}` has a fence",
                    name.as_str()
                );
                continue;
            };
            // The parsed value is the trimmed request value.
            let raw = map.get(arg).and_then(Value::as_str).unwrap_or_else(|| {
                panic!("{}: `{arg}` present but not in the request", name.as_str())
            });
            assert_eq!(
                value,
                raw.trim(),
                "{}: `{arg}` is not the trimmed value",
                name.as_str()
            );
            assert_eq!(
                at.len(),
                1,
                "{}: `{arg}` has {} fence headers, want exactly one",
                name.as_str(),
                at.len()
            );
            let i = at[0];
            let literal = lines.get(i + 1).copied().unwrap_or_else(|| {
                panic!("{}: `{arg}` fence ends after its header", name.as_str())
            });
            let parsed: String = serde_json::from_str(literal).unwrap_or_else(|error| {
                panic!(
                    "{}: `{arg}` literal {literal:?} is not a JSON string: {error}",
                    name.as_str()
                )
            });
            assert_eq!(
                parsed,
                value,
                "{}: `{arg}` literal does not round-trip",
                name.as_str()
            );
            assert_eq!(
                lines.get(i + 2).copied(),
                Some(FENCE),
                "{}: `{arg}` fence is not closed right after its literal",
                name.as_str()
            );
        }
    }
});
