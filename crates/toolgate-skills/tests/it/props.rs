//! Property tests for input from outside: any SKILL.md text gives a skill or
//! structured errors, and any JSON input to an orchestration gives a result
//! or a structured error; never a panic.

use crate::common::{Log, Registry, ctx, echo, spec};
use proptest::prelude::*;
use serde_json::Value;
use toolgate_core::Effect;
use toolgate_skills::Skill;
use toolgate_test_support::json::Shape;

/// Lines made of the pieces SKILL.md files are built from, in any order.
fn skill_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("---".to_string()),
        Just("name: a-b".to_string()),
        Just("description: d".to_string()),
        Just("steps:".to_string()),
        Just("  - title: t".to_string()),
        Just("    tool: find_flight".to_string()),
        Just("  -".to_string()),
        Just("orchestration:".to_string()),
        Just("  mode: routing".to_string()),
        Just("  route_by: kind".to_string()),
        Just("  input_schema: {type: object, properties: {kind: {enum: [a]}}}".to_string()),
        Just("  bindings:".to_string()),
        Just("  - tool: find_flight".to_string()),
        Just("    when: a".to_string()),
        Just("    params: {x: $input.kind, y: $input, z: $bad}".to_string()),
        Just("      - ".to_string()),
        "[ -~]{0,30}".prop_map(String::from),
        "\\PC{0,10}".prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..14).prop_map(|lines| lines.join("\n"))
}

fn json() -> impl Strategy<Value = Value> {
    toolgate_test_support::json::value(Shape {
        text: "\\PC{0,12}",
        words: &["a", "kind", "city"],
        keys: "[a-z]{1,6}",
        key_words: &["kind", "city"],
        depth: 4,
        size: 32,
        width: 6,
    })
}

proptest! {
    #[test]
    fn any_text_parses_or_reports(text in skill_text()) {
        match Skill::parse(&text, "skills/a-b/SKILL.md") {
            Ok(skill) => prop_assert_eq!(skill.id, "a-b"),
            Err(errors) => {
                prop_assert!(!errors.is_empty());
                for e in errors {
                    prop_assert!(e.line.is_some_and(|l| l >= 1), "{}", e);
                    prop_assert!(!e.message.is_empty());
                }
            }
        }
    }

    #[test]
    fn any_input_gets_a_result_or_a_structured_error(input in json(), routing in any::<bool>()) {
        let log = Log::default();
        let read = |n: &str| spec(n, Effect::Read, "guest", "travel");
        let runner = Registry::new([echo(read("find_flight"), &log), echo(read("find_hotel"), &log)]);
        let orchestration = if routing {
            "  mode: routing\n  route_by: kind\n  input_schema: {type: object, properties: {kind: {type: string}, city: {type: string}}}\n  bindings:\n    - tool: find_flight\n      when: a\n      params: {to: $input.city.name, all: [$input]}\n    - tool: find_hotel\n      when: kind\n"
        } else {
            "  mode: parallel\n  input_schema: {type: object, properties: {city: {type: string}}}\n  bindings:\n    - tool: find_flight\n      params: {to: $input.city}\n    - tool: find_hotel\n"
        };
        let text = format!("---\nname: a-b\ndescription: d\norchestration:\n{orchestration}---\n");
        let skill = Skill::parse(&text, "skills/a-b/SKILL.md").unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        match rt.block_on(toolgate_skills::orchestrate(&skill, &runner, &ctx("guest"), input.clone())) {
            Ok(_) => prop_assert!(input.is_object()),
            Err(e) => prop_assert!(!e.message.is_empty()),
        }
    }
}
