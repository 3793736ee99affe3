//! The figures of one document: operations total / mapped / left out (with their reasons),
//! tools, the largest tool (characters and tokens of name + description + input schema, as
//! `toolgate_tokens::tool` measures it), the first-call tokens of the domain alone in direct mode and of
//! meta mode (`toolgate budget`), and Prism's verdicts on the calls.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::json;

use super::corpus::Doc;
use super::values::Fill;
use super::{Call, Imported, Outcome};

/// What the report prints for one document.
pub(crate) struct Figures {
    pub(crate) name: &'static str,
    pub(crate) total: usize,
    pub(crate) mapped: usize,
    pub(crate) skipped: Vec<String>,
    pub(crate) tools: usize,
    /// (tool, characters, tokens).
    pub(crate) largest: (String, usize, usize),
    pub(crate) direct_tokens: usize,
    pub(crate) meta_tokens: usize,
    pub(crate) import_ms: u128,
    /// From the import to the last call answered.
    pub(crate) run_ms: u128,
    pub(crate) calls: Vec<Call>,
    pub(crate) refusals: usize,
}

impl Figures {
    pub(crate) fn new(
        doc: &Doc,
        imported: &Imported,
        import_ms: u128,
        calls: Vec<Call>,
        refusals: usize,
        budget: BTreeMap<String, (usize, usize)>,
    ) -> Self {
        let largest = imported
            .tables
            .iter()
            .map(|t| {
                let schema = t.schema();
                let text =
                    json!({"name": t.tool, "description": t.description, "inputSchema": schema}).to_string();
                (
                    t.tool.clone(),
                    text.chars().count(),
                    toolgate_tokens::tool(&t.tool, &t.description, &schema),
                )
            })
            .max_by_key(|(_, _, tokens)| *tokens)
            .unwrap_or_default();
        let scoped = budget.get(&format!("scoped:{}", doc.domain)).copied().unwrap_or_default();
        Self {
            name: doc.name,
            total: imported.imported + imported.skipped.len(),
            mapped: imported.imported,
            skipped: imported.skipped.clone(),
            tools: imported.tools,
            largest,
            direct_tokens: scoped.1,
            meta_tokens: budget.get("meta").map_or(0, |m| m.1),
            import_ms,
            run_ms: 0,
            calls,
            refusals,
        }
    }

    /// Calls with the outcome `pick` selects.
    pub(crate) fn count(&self, pick: impl Fn(&Outcome) -> bool) -> usize {
        self.calls.iter().filter(|c| pick(&c.outcome)).count()
    }

    /// Ops with a gap of toolgate (a request Prism refused, an answer not read, a valid call
    /// refused), each with its first such call.
    pub(crate) fn gaps(&self) -> BTreeMap<String, &Call> {
        let mut gaps = BTreeMap::new();
        for call in &self.calls {
            if call.outcome.gap().is_some() {
                gaps.entry(call.op.clone()).or_insert(call);
            }
        }
        gaps
    }

    /// Where the valid calls put values: path, query, header, JSON body (an array too), form,
    /// multipart or binary body, a null.
    pub(crate) fn features(&self) -> BTreeSet<&'static str> {
        let mut seen = BTreeSet::new();
        for call in self.calls.iter().filter(|c| c.outcome == Outcome::Valid) {
            let Some(x) = &call.sent else { continue };
            if !x.headers.is_empty() {
                seen.insert("header");
            }
            if x.target.contains('?') {
                seen.insert("query");
            }
            match x.content_type.as_deref().unwrap_or("") {
                ct if ct.starts_with("application/json")
                    || ct.split(';').next().is_some_and(|m| m.ends_with("+json")) =>
                {
                    seen.insert("json");
                    // A body that is one field's value (`body_field`): an array.
                    if x.body.trim_start().starts_with('[') {
                        seen.insert("json array");
                    }
                }
                ct if ct.starts_with("application/x-www-form-urlencoded") => {
                    seen.insert("form");
                }
                ct if ct.starts_with("multipart/form-data") => {
                    seen.insert("multipart");
                }
                // A raw body in another media type (`body_encoding = "binary"` or `"text"`:
                // application/octet-stream, image/png, Spotify's base64 image/jpeg).
                "" => {}
                _ => {
                    seen.insert("binary");
                }
            }
            if x.body.contains("null") && call.fill == Fill::Every {
                seen.insert("null");
            }
            if call.write {
                seen.insert("write");
            } else {
                seen.insert("read");
            }
        }
        seen
    }

    /// The report: one table row and the details below it.
    pub(crate) fn report(&self) -> String {
        let valid = self.count(|o| *o == Outcome::Valid);
        let invalid = self.count(|o| matches!(o, Outcome::Invalid(_)));
        let unread = self.count(|o| matches!(o, Outcome::Unread(_)));
        let refused = self.count(|o| matches!(o, Outcome::Refused(_)));
        let ungenerated = self.count(|o| matches!(o, Outcome::NotJudged(_)));
        let mut out = String::new();
        let _ = writeln!(
            out,
            "| {} | {} | {} ({:.0} %) | {} | {} | {} ({} chars, {} tokens) | {} | {} | {} sent: {valid} valid, {invalid} invalid, {unread} valid but unread; {refused} refused; {ungenerated} not judged | {} refused before Prism | import {} ms, all {} ms |",
            self.name,
            self.total,
            self.mapped,
            100.0 * self.mapped as f64 / self.total.max(1) as f64,
            self.skipped.len(),
            self.tools,
            self.largest.0,
            self.largest.1,
            self.largest.2,
            self.direct_tokens,
            self.meta_tokens,
            valid + invalid + unread,
            self.refusals,
            self.import_ms,
            self.run_ms,
        );
        let _ = writeln!(out, "  features of valid calls: {:?}", self.features());
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        for s in &self.skipped {
            let reason = s.split_once(": ").map_or(s.as_str(), |(_, r)| r);
            let reason: String =
                reason.split('`').enumerate().filter(|(i, _)| i % 2 == 0).map(|(_, p)| p).collect();
            *reasons.entry(reason).or_default() += 1;
        }
        for (reason, n) in reasons {
            let _ = writeln!(out, "  left out {n}×: {reason}");
        }
        for (op, call) in self.gaps() {
            let detail = match &call.outcome {
                Outcome::Invalid(x) | Outcome::Unread(x) | Outcome::Refused(x) => x.clone(),
                _ => String::new(),
            };
            let sent = call.sent.as_ref().map(|x| x.line()).unwrap_or_default();
            let _ = writeln!(
                out,
                "  gap {}: {}.{op} ({:?}): {detail}\n      sent: {sent}",
                call.outcome.gap().unwrap(),
                call.tool,
                call.fill
            );
        }
        for call in self.calls.iter().filter(|c| matches!(c.outcome, Outcome::NotJudged(_))) {
            if let Outcome::NotJudged(x) = &call.outcome {
                let _ = writeln!(
                    out,
                    "  not judged: {} ({:?}): {}",
                    call.op,
                    call.fill,
                    x.chars().take(300).collect::<String>()
                );
            }
        }
        out
    }
}
