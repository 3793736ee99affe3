//! What a document says about the things its operations act on, beside the operations: the
//! descriptions of its tags, and the summaries and descriptions of its path items (which the
//! OpenAPI Specification says apply to all the path's operations; Twilio's document describes
//! its resources there and not in its tags), which become the tables' `about` (read by
//! discovery's ranking, never by the model).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::operation::snake_case;

/// The most of a tag's description that discovery reads, in characters.
const ABOUT_MAX: usize = 300;

/// Each tag's domain name with the opening of the tag's description ([`opening`]): what the
/// document says about the things its operations act on.
pub(crate) fn tag_descriptions(doc: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for tag in doc.get("tags").and_then(Value::as_array).into_iter().flatten() {
        let (Some(name), Some(description)) =
            (tag.get("name").and_then(Value::as_str), tag.get("description").and_then(Value::as_str))
        else {
            continue;
        };
        let text = opening(description);
        if !text.is_empty() {
            out.entry(snake_case(name)).or_insert(text);
        }
    }
    out
}

/// What a path item says of the operations under it: its `summary`, and the opening of its
/// `description` ([`opening`]), each as plain words, without repeats or empty texts.
pub(crate) fn path_item_texts(item: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for key in ["summary", "description"] {
        let Some(text) = item.get(key).and_then(Value::as_str) else { continue };
        let text = opening(text);
        if !text.is_empty() && !out.contains(&text) {
            out.push(text);
        }
    }
    out
}

/// The first paragraph of a Markdown description as plain words: its lines joined (documents
/// wrap their text at 70-odd columns, often mid-sentence), links reduced to their text,
/// emphasis and code marks dropped, whitespace collapsed; cut at the last sentence end within
/// [`ABOUT_MAX`] characters (at a word when no sentence ends there).
pub(crate) fn opening(markdown: &str) -> String {
    let paragraph: Vec<&str> =
        markdown.trim().lines().map(str::trim).take_while(|line| !line.is_empty()).collect();
    let plain = plain_words(&paragraph.join(" "));
    if plain.chars().count() <= ABOUT_MAX {
        return plain;
    }
    let clipped: String = plain.chars().take(ABOUT_MAX).collect();
    let sentence = clipped.match_indices(". ").map(|(at, _)| at + 1).last();
    let word = clipped.rfind(' ');
    match sentence.or(word) {
        Some(end) => clipped[..end].trim_end().to_owned(),
        None => clipped,
    }
}

/// `text` without Markdown's marks: `[words](url)` as `words`, no `*`, `_` around words, or
/// backticks, runs of whitespace as one space.
fn plain_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find("](").and_then(|close| Some((close, after[close + 2..].find(')')?))) {
            Some((close, url_end)) => {
                out.push_str(&after[..close]);
                rest = &after[close + 2 + url_end + 1..];
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    let out: String = out.chars().filter(|c| !matches!(c, '*' | '`')).collect();
    out.split_whitespace()
        .map(|word| word.trim_matches('_'))
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_tag_gives_its_domain_the_first_paragraph_of_its_description_clipped() {
        let doc = json!({"tags": [
            {"name": "Droplets", "description": "\n  Droplets are virtual machines.\n\nMore text."},
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

    #[test]
    fn a_path_items_summary_and_description_are_its_operations_texts() {
        // Twilio's path items describe the resource; the summary of another document's too.
        let item = json!({"description": "Conference participants", "post": {}});
        assert_eq!(path_item_texts(&item), ["Conference participants"]);
        let item = json!({"summary": "Pets", "description": "The *pets* of the store.\n\nMore."});
        assert_eq!(path_item_texts(&item), ["Pets", "The pets of the store."]);
        assert_eq!(path_item_texts(&json!({"summary": "Same", "description": "Same"})), ["Same"]);
        assert!(path_item_texts(&json!({"summary": " ", "description": 3, "get": {}})).is_empty());
    }

    #[test]
    fn a_wrapped_paragraph_is_read_whole_as_plain_words() {
        // DigitalOcean's description of Droplets, wrapped as the document wraps it: its first
        // line alone ends at "is a DigitalOcean".
        let text = "A [Droplet](https://docs.digitalocean.com/products/droplets/) is a DigitalOcean\n\
                    virtual machine. By sending requests to the Droplet endpoint, you can\n\
                    list, create, or delete Droplets.\n\nSome of the attributes will have an object value.";
        assert_eq!(
            opening(text),
            "A Droplet is a DigitalOcean virtual machine. By sending requests to the Droplet endpoint, \
             you can list, create, or delete Droplets."
        );
        assert_eq!(
            opening("A *budget* object, see `budgets` and [the [docs](x"),
            "A budget object, see budgets and [the [docs](x"
        );
        assert_eq!(opening("snake_case _stays_ __whole__"), "snake_case stays whole");
    }

    #[test]
    fn a_long_paragraph_ends_at_its_last_sentence_within_the_limit() {
        let first = format!("{}.", "word ".repeat(40).trim_end());
        let text = format!("{first} {}", "more words here ".repeat(20));
        assert_eq!(opening(&text), first);
        let one = "w ".repeat(400);
        let cut = opening(&one);
        assert!(cut.chars().count() <= ABOUT_MAX && cut.ends_with('w'), "{cut:?}");
    }
}
