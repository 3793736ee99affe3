//! Discovery (list and filter the tools a caller may use) and the catalog
//! text that goes into the system prompt.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use toolgate_core::{Caller, ToolSpec};

use crate::Gateway;

/// Read or write, for filtering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectFilter {
    /// Only read tools.
    Read,
    /// Only write tools.
    Write,
}

/// What to list. Empty fields match everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Filter {
    /// A substring of the name (case-insensitive).
    pub name: Option<String>,
    /// An exact domain.
    pub domain: Option<String>,
    /// An exact tag.
    pub tag: Option<String>,
    /// Read or write.
    pub effect: Option<EffectFilter>,
    /// Free text. [`Gateway::discover`]: every word must appear in the name,
    /// description, domain or tags (case-insensitive). [`Gateway::search`]
    /// and `get_tool_schema`'s `query`: ranked by relevance (BM25), any word
    /// may match.
    pub text: Option<String>,
}

impl Filter {
    /// Match a name substring.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Match a domain.
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }

    /// Match a tag.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tag = Some(tag.into());
        self
    }

    /// Match an effect.
    pub fn effect(mut self, effect: EffectFilter) -> Self {
        self.effect = Some(effect);
        self
    }

    /// Match free text.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    fn matches(&self, spec: &ToolSpec) -> bool {
        self.name.as_ref().is_none_or(|n| spec.name.contains(&n.to_lowercase()))
            && self.text.as_ref().is_none_or(|t| text_matches(t, spec))
            && self.domain.as_ref().is_none_or(|d| spec.domain == *d)
            && self.tag.as_ref().is_none_or(|t| spec.tags.iter().any(|x| x == t))
            && self.effect.is_none_or(|e| spec.effect.is_read() == (e == EffectFilter::Read))
    }
}

/// Every word of `text` appears somewhere in what describes the tool.
fn text_matches(text: &str, spec: &ToolSpec) -> bool {
    let haystack =
        format!("{} {} {} {}", spec.name, spec.description, spec.domain, spec.tags.join(" ")).to_lowercase();
    text.split_whitespace().all(|word| {
        let word = word.to_lowercase();
        haystack.contains(&word) || haystack.contains(&word.replace(' ', "_"))
    })
}

impl Gateway {
    /// The tools this caller may use that match the filter, sorted by name,
    /// with the deployment's required roles filled in.
    pub fn discover(&self, caller: &Caller, filter: &Filter) -> Vec<ToolSpec> {
        let table = self.inner.tools();
        table
            .order
            .iter()
            .filter_map(|name| table.tools.get(name))
            .map(|entry| entry.tool.spec())
            .filter(|spec| filter.matches(spec) && self.inner.policy().visible(caller, spec))
            .map(|spec| {
                let mut spec = spec.clone();
                spec.required_role = self.inner.policy().required_role(&spec).to_owned();
                spec
            })
            .collect()
    }

    /// The tools this caller may use that match the filter, ranked by
    /// relevance to its `text` as `get_tool_schema`'s `query` ranks them
    /// (BM25 over name, description, domain, tags and a
    /// route table's operations; a tool sharing any word is found, the best
    /// first; with [`crate::GatewayBuilder::embedder`], fused with a ranking by
    /// meaning, which finds tools that share no word with the text). `name`, `domain`, `tag` and `effect` filter as in
    /// [`Gateway::discover`], which this is without `text`, or when no tool
    /// shares a word with it (every word a substring, as before).
    pub fn search(&self, caller: &Caller, filter: &Filter) -> Vec<ToolSpec> {
        let table = self.inner.tools();
        let Some(hits) = filter
            .text
            .as_deref()
            .and_then(|text| crate::rank::index_for(&table, self.inner.semantic.as_deref()).search(text))
        else {
            return self.discover(caller, filter);
        };
        let rest = Filter { text: None, ..filter.clone() };
        let ranked: Vec<ToolSpec> = hits
            .into_iter()
            .filter_map(|doc| table.order.get(doc).and_then(|name| table.tools.get(name)))
            .map(|entry| entry.tool.spec())
            .filter(|spec| rest.matches(spec) && self.inner.policy().visible(caller, spec))
            .map(|spec| {
                let mut spec = spec.clone();
                spec.required_role = self.inner.policy().required_role(&spec).to_owned();
                spec
            })
            .collect();
        if ranked.is_empty() { self.discover(caller, filter) } else { ranked }
    }

    /// The system-prompt text for this caller in meta mode: the working
    /// rules, the skills (one line each) and the domains with their tools.
    /// Past [`NAMED_TOOLS`] tools only the domains and their sizes are
    /// listed, so the text stays short however many tools are registered;
    /// the model finds tools with `get_tool_schema`'s search.
    pub fn catalog(&self, caller: &Caller) -> String {
        let mut out = String::new();
        out.push_str("# Working with tools\n\nRules:\n");
        for rule in [
            "Call every business tool through `execute_tool`, never directly.",
            "If a skill matches the task, call `get_skill_guide` first and follow its steps.",
            "Find tools with `get_tool_schema` (`query`, `domain`, `tag`, `effect`); read a tool's contract (`tool_name`) before calling it.",
            "Never invent values (dates, ids, amounts): ask the user. Never send user ids, tokens or session ids.",
            "Never state a result before the tool has answered.",
            "If `success` is false, fix what `error.message` names; never repeat a call unchanged; if `error.details.retryable`, tell the user to try later.",
            "Signals: `need_confirm`: ask the user, then call again with the confirm parameter; `beyond_range`: tell the user, use its suggestion (call its `use_tool` when it names one); `unavailable`: tell the user, stop; `duplicate`: already done, do not resubmit; `related_items`: tell the user.",
        ] {
            let _ = writeln!(out, "- {rule}");
        }
        let skills = self.visible_skill_briefs(caller);
        if !skills.is_empty() {
            out.push_str("\n## Skills\n\n");
            for (id, description) in skills {
                let _ = writeln!(out, "- `{id}`: {}", brief(&description, 50));
            }
        }
        let tools = self.discover(caller, &Filter::default());
        out.push_str("\n## Tools by domain\n\n");
        if tools.is_empty() {
            out.push_str("(none available to this caller)\n");
        }
        let mut domains: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for spec in &tools {
            domains.entry(spec.domain.as_str()).or_default().push(format!("`{}`", spec.name));
        }
        for (domain, names) in domains {
            if tools.len() <= NAMED_TOOLS {
                let _ = writeln!(out, "- {domain}: {}", names.join(", "));
            } else {
                let _ = writeln!(out, "- {domain}: {} tools", names.len());
            }
        }
        let unreachable = self.unreachable();
        if !unreachable.is_empty() {
            out.push_str("\n## Unavailable now\n\n");
            for (namespace, _) in unreachable {
                let _ = writeln!(
                    out,
                    "- `{namespace}` (another MCP server): not reached since start; its tools (`{namespace}__...`) appear once it answers. If a task needs it, tell the user it is unavailable."
                );
            }
        }
        out
    }
}

/// Up to this many tools the catalog names each one (grouped by domain);
/// beyond it, only the domains.
pub const NAMED_TOOLS: usize = 40;

/// The first sentence of a description cut at a word boundary near `max`
/// characters: the catalog is read before every conversation.
pub(crate) fn brief(text: &str, max: usize) -> String {
    let sentence = first_sentence(text);
    if sentence.chars().count() <= max {
        return sentence.to_owned();
    }
    let cut: String = sentence.chars().take(max).collect();
    match cut.rfind(' ') {
        Some(i) => format!("{}…", cut[..i].trim_end_matches([',', ';', ':'])),
        None => format!("{cut}…"),
    }
}

/// The first sentence of a description, for one-line listings.
pub(crate) fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    let end = text
        .char_indices()
        .find(|&(i, c)| c == '\n' || (c == '.' && text[i + 1..].starts_with(char::is_whitespace)))
        .map_or(text.len(), |(i, c)| if c == '.' { i + 1 } else { i });
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::first_sentence;

    #[test]
    fn first_sentences() {
        assert_eq!(first_sentence("Find orders. Returns a page."), "Find orders.");
        assert_eq!(first_sentence("One line\nsecond"), "One line");
        assert_eq!(first_sentence("v1.2 is out"), "v1.2 is out");
        assert_eq!(first_sentence(""), "");
    }
}
