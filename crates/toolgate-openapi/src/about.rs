//! What a document says about the things its operations act on, beside the operations: the
//! descriptions of its tags, which become the tables' `about` (read by discovery's ranking,
//! never by the model).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::operation::snake_case;

/// The most of a tag's description that discovery reads, in characters.
const ABOUT_MAX: usize = 300;

/// Each tag's domain name with the first line of the tag's description (at most
/// [`ABOUT_MAX`] characters): what the document says about the things its operations act on.
pub(crate) fn tag_descriptions(doc: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for tag in doc.get("tags").and_then(Value::as_array).into_iter().flatten() {
        let (Some(name), Some(description)) =
            (tag.get("name").and_then(Value::as_str), tag.get("description").and_then(Value::as_str))
        else {
            continue;
        };
        let line: String =
            description.trim().lines().next().unwrap_or_default().trim().chars().take(ABOUT_MAX).collect();
        if !line.is_empty() {
            out.entry(snake_case(name)).or_insert(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_tag_gives_its_domain_the_first_line_of_its_description_clipped() {
        let doc = json!({"tags": [
            {"name": "Droplets", "description": "\n  Droplets are virtual machines.\nMore text."},
            {"name": "No description"},
            {"name": "Blank", "description": "   "},
            {"name": "Long words", "description": "x".repeat(1000)},
            {"name": "Droplets", "description": "A second tag of that name is not read."},
            "not an object"
        ]});
        let about = tag_descriptions(&doc);
        assert_eq!(about.get("droplets").map(String::as_str), Some("Droplets are virtual machines."));
        assert_eq!(about.get("long_words").map(|a| a.chars().count()), Some(ABOUT_MAX));
        assert_eq!(about.len(), 2, "{about:?}");
        assert!(tag_descriptions(&json!({"tags": "nope"})).is_empty());
    }
}
