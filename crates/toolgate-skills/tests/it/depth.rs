//! Front matter nested deeper than a JSON document may be is refused before the YAML parser
//! runs (its time grows with the square of the depth), and what the pre-scan counts is what
//! the parser builds: for the shipped skills, and for any value written as YAML or JSON.

use std::path::Path;

use proptest::prelude::*;
use serde_json::Value;
use toolgate_core::nesting::{MAX_DEPTH, check_yaml_with};
use toolgate_skills::{ErrorKind, Skill, SkillSet};
use toolgate_test_support::json::Shape;

/// The smallest limit the text passes.
fn scanned(text: &str) -> usize {
    (0..=MAX_DEPTH).find(|&limit| check_yaml_with(text, limit).is_ok()).expect("within the limit")
}

/// Collections nested in a parsed value.
fn built(value: &serde_norway::Value) -> usize {
    use serde_norway::Value as Y;
    match value {
        Y::Sequence(items) => 1 + items.iter().map(built).max().unwrap_or(0),
        Y::Mapping(map) => 1 + map.iter().map(|(k, v)| built(k).max(built(v))).max().unwrap_or(0),
        Y::Tagged(tagged) => built(&tagged.value),
        _ => 0,
    }
}

fn deep(levels: usize) -> String {
    format!("{}{}", "[".repeat(levels), "]".repeat(levels))
}

#[test]
fn front_matter_nested_100000_deep_is_refused_naming_the_depth() {
    let text = format!("---\nname: deep\ndescription: d\nx: {}\n---\n", deep(100_000));
    let errors = Skill::parse(&text, "skills/deep/SKILL.md").unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].kind, ErrorKind::Syntax);
    assert_eq!(errors[0].line, Some(4), "the line of `x`");
    assert!(
        errors[0].message.contains(&format!("nests deeper than {MAX_DEPTH} levels")),
        "{}",
        errors[0].message
    );
}

#[test]
fn the_depth_is_refused_before_the_yaml_parser_runs() {
    // Deep, then a syntax error: without the pre-scan the parser answers (its recursion limit,
    // after scanning the whole depth, as "not valid YAML"); with it, the depth is refused.
    let text = format!("---\nname: deep\ndescription: d\nx: {}\ny: [unclosed\n---\n", deep(MAX_DEPTH + 1));
    let errors = Skill::parse(&text, "skills/deep/SKILL.md").unwrap_err();
    assert!(errors[0].message.contains("nests deeper than"), "{}", errors[0].message);
    assert!(!errors[0].message.contains("not valid YAML"), "{}", errors[0].message);
    // One level less is the parser's: its syntax error.
    let text = format!("---\nname: deep\ndescription: d\nx: {}\ny: [unclosed\n---\n", deep(MAX_DEPTH - 1));
    let errors = Skill::parse(&text, "skills/deep/SKILL.md").unwrap_err();
    assert!(errors[0].message.contains("not valid YAML"), "{}", errors[0].message);
}

#[test]
fn the_shipped_skills_load_and_the_scan_counts_what_the_parser_builds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../skills");
    let (set, errors) = SkillSet::load_dir(&root);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(set.len() >= 5, "the repository's skills");
    let mut seen = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path().join("SKILL.md")).unwrap();
        let front = text.split("\n---\n").next().unwrap().trim_start_matches("---\n");
        let value: serde_norway::Value = serde_norway::from_str(front).unwrap();
        assert_eq!(scanned(front), built(&value), "{front}");
        seen += 1;
    }
    assert_eq!(seen, set.len());
}

fn json() -> impl Strategy<Value = Value> {
    toolgate_test_support::json::value(Shape {
        text: "\\PC{0,12}",
        words: &["a", "- b", "[c", "{d: e}", "'f", "\"g", "h: i", "# j", "|", "k\nl", " m"],
        keys: "[a-z]{1,6}",
        key_words: &["- k", "[k", "k: v", "#k", "'k"],
        depth: 6,
        size: 48,
        width: 5,
    })
}

fn json_depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(json_depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(json_depth).max().unwrap_or(0),
        _ => 0,
    }
}

proptest! {
    #[test]
    fn the_scan_counts_the_nesting_of_any_value_written_as_yaml_or_json(value in json()) {
        let depth = json_depth(&value);
        let yaml = serde_norway::to_string(&value).unwrap();
        prop_assert_eq!(scanned(&yaml), depth, "{}", yaml);
        let flow = serde_json::to_string(&value).unwrap();
        prop_assert_eq!(scanned(&flow), depth, "{}", flow);
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        prop_assert_eq!(scanned(&pretty), depth, "{}", pretty);
    }
}
