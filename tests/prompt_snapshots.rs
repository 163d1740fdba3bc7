//! Every prompt as the model reads it, pinned so that a change to a
//! template shows up in review as a change to the text: once with only the
//! required arguments in a session where nothing is known (no target, no
//! capture, nothing retained), once with every argument in a session where
//! every fact holds.

use rea::catalog::engine::{SESSION_FACTS, SessionFacts};
use rea::catalog::generated::prompts::PromptName;
use rea::catalog::render::LoadedCatalog;
use serde_json::{Map, json};

fn render(prompt: PromptName, all_arguments: bool, facts: SessionFacts) -> String {
    let mut map = Map::new();
    for argument in prompt.arguments() {
        if argument.required || all_arguments {
            map.insert(
                argument.name.to_string(),
                json!(format!("example {}", argument.name)),
            );
        }
    }
    let arguments = prompt.parse_arguments(&map).expect("valid arguments");
    LoadedCatalog::embedded()
        .expect("embedded catalog")
        .render_in(&arguments, facts)
        .expect("renders")
}

#[test]
fn every_prompt_with_required_arguments_only() {
    for prompt in PromptName::ALL {
        let text = render(prompt, false, SessionFacts::default());
        insta::assert_snapshot!(format!("{}_required_only", prompt.as_str()), text);
    }
}

#[test]
fn every_prompt_with_every_argument_and_fact() {
    let every_fact = SessionFacts::from_pairs(SESSION_FACTS.iter().map(|f| (*f, true)));
    for prompt in PromptName::ALL {
        let text = render(prompt, true, every_fact);
        insta::assert_snapshot!(format!("{}_every_argument", prompt.as_str()), text);
    }
}
