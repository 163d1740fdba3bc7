//! JavaScript/TypeScript fact extraction over arbitrary text: `extract`
//! never panics or overflows its stack, and every fact list and string
//! stays within its documented bound.
//!
//! The first byte picks the language, the rest is the text (lossy UTF-8).
//! `extract` runs on one long-lived worker thread with the documented
//! `EXTRACT_STACK_BYTES`, as the engine runs it; a panic there ends the
//! worker, which fails the next receive and so the input.

#![no_main]

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{LazyLock, Mutex};

use libfuzzer_sys::fuzz_target;
use rea::javascript::extract::{EXTRACT_STACK_BYTES, MAX_DIAGNOSTICS, extract};
use rea::javascript::facts::{Language, MAX_FACTS_PER_LIST, ModuleFacts, Pos};
use rea::javascript::model::EXCERPT_CHARS;

const LANGUAGES: [Language; 5] = Language::ALL;

type Worker = (Sender<(String, Language)>, Receiver<ModuleFacts>);

static WORKER: LazyLock<Mutex<Worker>> = LazyLock::new(|| {
    let (request_tx, request_rx) = channel::<(String, Language)>();
    let (facts_tx, facts_rx) = channel();
    std::thread::Builder::new()
        .stack_size(EXTRACT_STACK_BYTES)
        .spawn(move || {
            for (text, language) in request_rx {
                if facts_tx.send(extract(&text, language)).is_err() {
                    return;
                }
            }
        })
        .expect("the extraction worker starts");
    Mutex::new((request_tx, facts_rx))
});

fn short(text: &str) -> bool {
    text.chars().count() <= EXCERPT_CHARS
}

fn valid(pos: Pos) -> bool {
    pos.line >= 1 && pos.column >= 1
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let language = LANGUAGES[selector as usize % LANGUAGES.len()];
    let text = String::from_utf8_lossy(rest).into_owned();
    let worker = WORKER.lock().expect("worker lock");
    worker.0.send((text, language)).expect("worker alive");
    let facts = worker.1.recv().expect("extract did not panic");

    let parse = &facts.parse;
    assert_ne!(parse.parsed, parse.not_parsed.is_some());
    assert!(parse.diagnostics.len() <= MAX_DIAGNOSTICS);
    assert!(parse.diagnostics.len() as u64 <= parse.diagnostics_total);
    for diagnostic in &parse.diagnostics {
        assert!(short(&diagnostic.message) && valid(diagnostic.pos));
    }
    let lists = [
        facts.imports.len(),
        facts.windows.len(),
        facts.loose_loads.len(),
        facts.ipc.len(),
        facts.exposed.len(),
        facts.api_uses.len(),
        facts.protocols.len(),
        facts.open_external.len(),
        facts.urls.len(),
        facts.menus.len(),
        facts.remote.len(),
    ];
    assert!(lists.iter().all(|&n| n <= MAX_FACTS_PER_LIST));
    for import in &facts.imports {
        assert!(valid(import.pos) && short(&import.specifier.excerpt));
        assert!(import.specifier.literal.as_deref().is_none_or(short));
    }
    for ipc in &facts.ipc {
        assert!(valid(ipc.pos) && short(&ipc.channel.excerpt) && short(&ipc.api));
    }
    for url in &facts.urls {
        assert!(valid(url.pos) && short(&url.url));
    }
    for window in &facts.windows {
        assert!(valid(window.pos) && window.loads.len() <= MAX_FACTS_PER_LIST);
        assert!(window.binding.as_deref().is_none_or(short));
    }
    for menu in &facts.menus {
        assert!(menu.labels.iter().all(|l| short(l)));
    }
});
