//! Relevance ranking for discovery (`get_tool_schema` with a `query`): BM25
//! over what describes each tool, so that "create a task on a file" finds
//! the task-creating tool although no tool carries every one of its words.
//!
//! Each tool is one document: its name (split on `_`, counted twice: a name
//! is the strongest hint), description, domain, tags, and for a route-table
//! tool its operations' names and summaries (the `op` branches of its
//! `oneOf` schema, which is where a table's operations reach the registry).
//! Words are normalised lightly (camelCase split, lowercase, split on
//! anything not alphanumeric, a few stop words left out, a naive plural
//! strip: `tasks` → `task`, `entries` → `entry`).
//!
//! The index is built once per table snapshot (see [`index_for`]): a query
//! only walks the postings of its own words.

use std::collections::HashMap;

use serde_json::Value;
use toolgate_core::ToolSpec;

use crate::dynamic::Table;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation.
const B: f64 = 0.75;
/// How many times a tool's name counts against one mention elsewhere.
const NAME_WEIGHT: u32 = 2;

/// Words that say nothing about which tool is meant.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "for", "from",
    "how", "i", "in", "into", "is", "it", "its", "me", "my", "of", "on", "onto", "or", "our", "please",
    "some", "that", "the", "this", "to", "we", "what", "with", "you", "your",
];

/// Words an API and its users say for the same thing (after [`terms`]' normalising): a query
/// word also finds its group's other words, at [`RELATED_WEIGHT`] of a word's own weight, so
/// that "cancel my reservation" finds `delete_booking` and "the songs of an album" the tracks.
const RELATED: &[&[&str]] = &[
    &["delete", "remove", "cancel", "erase", "unfollow"],
    &["create", "add", "make", "register", "new"],
    &["update", "change", "edit", "modify", "rename"],
    &["user", "customer", "account", "person", "profile", "me"],
    &["booking", "reservation", "reserve", "book", "ticket"],
    &["track", "song", "tune", "music"],
    &["artist", "musician", "performer", "singer", "band"],
    &["playback", "player", "play", "listen", "listened", "music"],
    &["volume", "loud", "louder", "quieter"],
    &["shuffle", "random"],
    &["device", "speaker", "phone"],
    &["recent", "recently", "lately", "latest"],
    &["market", "country", "region"],
    &["search", "keyword", "find", "look"],
    &["save", "like", "bookmark", "bookmarked", "favorite", "favourite", "collection", "library"],
    &["order", "purchase", "buy"],
    &["pay", "payment", "charge", "card"],
    &["follow", "following", "subscribe"],
    &["top", "popular", "most"],
    &["related", "similar"],
    &["current", "currently", "now"],
    &["inventory", "stock"],
    &["login", "sign", "log"],
    &["feature", "tempo", "energy", "danceability"],
    &["podcast", "show", "episode"],
];

/// What a related word counts for against the query's own word.
const RELATED_WEIGHT: f64 = 0.5;

/// The words `word` stands for besides itself.
fn related(word: &str) -> impl Iterator<Item = &'static str> + '_ {
    RELATED
        .iter()
        .filter(move |group| group.contains(&word))
        .flat_map(|group| group.iter().copied())
        .filter(move |w| *w != word)
}

/// The normalised words of `text`, in order, stop words left out.
pub(crate) fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() && !STOP_WORDS.contains(&word.as_str()) {
            out.push(singular(word));
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            // camelCase and PascalCase operation ids: `createTask` is `create task`.
            if c.is_uppercase() && previous_lower {
                flush(&mut word, &mut out);
            }
            previous_lower = c.is_lowercase() || c.is_numeric();
            word.extend(c.to_lowercase());
        } else {
            previous_lower = false;
            flush(&mut word, &mut out);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// A naive singular: `tasks` → `task`, `entries` → `entry`, `boxes` → `box`,
/// `addresses` → `address`; `status`, `access` and short words stay.
fn singular(word: &str) -> String {
    let n = word.len();
    if n > 4 && word.ends_with("ies") {
        return format!("{}y", &word[..n - 3]);
    }
    if n > 4 && ["sses", "xes", "ches", "shes"].iter().any(|s| word.ends_with(s)) {
        return word[..n - 2].to_owned();
    }
    if n > 3 && word.ends_with('s') && !["ss", "us", "is"].iter().any(|s| word.ends_with(s)) {
        return word[..n - 1].to_owned();
    }
    word.to_owned()
}

/// The words that describe one tool, the name counted [`NAME_WEIGHT`] times.
fn document(spec: &ToolSpec) -> Vec<String> {
    let mut words = Vec::new();
    let name = terms(&spec.name);
    for _ in 0..NAME_WEIGHT {
        words.extend(name.iter().cloned());
    }
    words.extend(terms(&spec.description));
    words.extend(terms(&spec.domain));
    for tag in &spec.tags {
        words.extend(terms(tag));
    }
    for (op, summary) in operations(&spec.input_schema) {
        words.extend(terms(op));
        words.extend(terms(summary));
    }
    words
}

/// A route-table tool's operations: each `oneOf` branch's `op` constant and
/// its description (the route's summary).
fn operations(schema: &Value) -> impl Iterator<Item = (&str, &str)> {
    schema.get("oneOf").and_then(Value::as_array).into_iter().flatten().filter_map(|branch| {
        let op = branch.get("properties")?.get("op")?;
        let name = op.get("const").and_then(Value::as_str)?;
        Some((name, op.get("description").and_then(Value::as_str).unwrap_or_default()))
    })
}

/// A BM25 index over a list of tools; documents are numbered in the list's order.
#[derive(Debug, Default)]
pub(crate) struct Index {
    /// Each word's documents, with how often the word occurs in each.
    postings: HashMap<String, Vec<(u32, u32)>>,
    /// Each document's BM25 length norm, `k1 · (1 − b + b · length / mean length)`.
    norms: Vec<f64>,
}

impl Index {
    /// Index these tools; a hit names a tool by its position here.
    pub(crate) fn build<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> Self {
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let mut lengths = Vec::new();
        for (doc, spec) in specs.into_iter().enumerate() {
            let words = document(spec);
            lengths.push(words.len() as u32);
            let mut counts: HashMap<String, u32> = HashMap::new();
            for word in words {
                *counts.entry(word).or_default() += 1;
            }
            for (word, count) in counts {
                postings.entry(word).or_default().push((doc as u32, count));
            }
        }
        let total: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
        let mean = (total as f64 / lengths.len().max(1) as f64).max(1.0);
        let norms = lengths.iter().map(|&l| K1 * (1.0 - B + B * f64::from(l) / mean)).collect();
        Self { postings, norms }
    }

    /// The documents that share at least one word with `query`, best first;
    /// equal scores keep the documents' order. `None` when the query has no
    /// word to look for (empty, or stop words only).
    pub(crate) fn search(&self, query: &str) -> Option<Vec<usize>> {
        let words = terms(query);
        if words.is_empty() {
            return None;
        }
        // Each query word at weight 1, the words related to it at RELATED_WEIGHT (the larger
        // weight where a word is both).
        let mut weights: HashMap<String, f64> = HashMap::new();
        for word in &words {
            for other in related(word) {
                let w = weights.entry(singular(other)).or_insert(0.0);
                *w = w.max(RELATED_WEIGHT);
            }
        }
        for word in words {
            weights.insert(word, 1.0);
        }
        let mut weights: Vec<(String, f64)> = weights.into_iter().collect();
        weights.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let n = self.norms.len() as f64;
        let mut scores = vec![0.0_f64; self.norms.len()];
        let mut touched: Vec<u32> = Vec::new();
        for (word, weight) in &weights {
            let Some(docs) = self.postings.get(word) else { continue };
            let df = docs.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in docs {
                let tf = f64::from(tf);
                let score = &mut scores[doc as usize];
                if *score == 0.0 {
                    touched.push(doc);
                }
                *score += weight * idf * tf * (K1 + 1.0) / (tf + self.norms[doc as usize]);
            }
        }
        let mut hits: Vec<(u32, f64)> = touched.into_iter().map(|doc| (doc, scores[doc as usize])).collect();
        hits.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Some(hits.into_iter().map(|(doc, _)| doc as usize).collect())
    }
}

/// The index of this table snapshot, built on its first query and kept with
/// it: a table is immutable and replaced whole when a source changes, so its
/// index stays right for as long as the snapshot lives.
pub(crate) fn index_for(table: &Table) -> &Index {
    table.index.get_or_init(|| {
        Index::build(
            table.order.iter().filter_map(|name| table.tools.get(name)).map(|entry| entry.tool.spec()),
        )
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(name: &str, description: &str) -> ToolSpec {
        ToolSpec::new(name, description, json!({"type": "object"}))
    }

    fn names<'a>(specs: &'a [ToolSpec], hits: &[usize]) -> Vec<&'a str> {
        hits.iter().map(|&i| specs[i].name.as_str()).collect()
    }

    #[test]
    fn words_are_normalised() {
        assert_eq!(terms("Create a Task on my file"), ["create", "task", "file"]);
        assert_eq!(
            terms("list_tasks, createTask; getHTTPStatus"),
            ["list", "task", "create", "task", "get", "httpstatus"]
        );
        assert_eq!(terms("entries boxes addresses searches"), ["entry", "box", "address", "search"]);
        assert_eq!(terms("status access analysis sets kids"), ["status", "access", "analysis", "set", "kid"]);
        assert!(terms("the of a to").is_empty());
        assert_eq!(terms("été 2026 Zürich"), ["été", "2026", "zürich"]);
    }

    #[test]
    fn any_word_counts_and_the_better_match_comes_first() {
        let specs = [
            spec("query_files", "List files and read a file's content."),
            spec("update_tasks", "Create a task, assign it, complete it."),
            spec("query_weather", "The forecast for a city."),
        ];
        let index = Index::build(&specs);
        let hits = index.search("create a task on a file").unwrap();
        assert_eq!(names(&specs, &hits), ["update_tasks", "query_files"]);
        assert_eq!(index.search("nothing matches").unwrap(), Vec::<usize>::new());
        assert_eq!(index.search("the of"), None, "stop words only is no query");
        assert_eq!(index.search(""), None);
    }

    #[test]
    fn operations_of_a_route_table_are_indexed() {
        let table = json!({"oneOf": [
            {"properties": {"op": {"const": "post_tasks", "description": "Create task"}}},
            {"properties": {"op": {"const": "delete_tasks_id", "description": "Remove task"}}}
        ]});
        let specs = [
            spec("update_things", "Changes things."),
            ToolSpec::new("update_items", "Changes items.", table),
        ];
        let index = Index::build(&specs);
        assert_eq!(names(&specs, &index.search("remove a task").unwrap()), ["update_items"]);
        assert_eq!(names(&specs, &index.search("post").unwrap()), ["update_items"]);
    }

    #[test]
    fn equal_scores_keep_the_registry_order() {
        let specs = [
            spec("zeta_one", "Same words."),
            spec("alpha_two", "Same words."),
            spec("mid_six", "Same words."),
        ];
        let index = Index::build(&specs);
        assert_eq!(index.search("same words").unwrap(), [0, 1, 2]);
    }

    #[test]
    fn a_rare_word_outweighs_a_common_one() {
        let specs = [
            spec("update_files", "Create a file, create a folder, create a copy."),
            spec("update_tasks", "Assign a task."),
            spec("update_comments", "Create a comment."),
            spec("update_users", "Create a user."),
        ];
        let index = Index::build(&specs);
        assert_eq!(index.search("create task").unwrap()[0], 1);
    }

    #[test]
    fn an_index_is_built_once_per_snapshot() {
        let table = Table::default();
        let first = index_for(&table);
        assert!(std::ptr::eq(first, index_for(&table)));
        let other = Table::default();
        assert!(!std::ptr::eq(first, index_for(&other)));
    }
}
