//! The per-tool budget: no generated tool may cost a model more than a limit (default
//! [`DEFAULT_TOOL_TOKENS`]) of tokens of its name, description and input schema, measured
//! with the [`toolgate_tokens`] crate's estimate (the one `toolgate budget` reports).
//!
//! Applied after the import grouped the operations into one read and one write table per
//! domain. A table within the limit is left as it is. One over it is
//! 1. split by sub-resource: the operations are grouped by the path segment after
//!    the resource (`/databases/{id}/users/...` → `update_databases_users`), recursively for a
//!    group still too large; sub-resources small enough go back into the table that keeps
//!    the original name, so a table only slightly over the limit does not become many tools;
//! 2. a part still over the limit gets its long texts clipped: each operation's
//!    summary is kept first and cut at a sentence or word, field descriptions likewise, each
//!    with a note saying so;
//! 3. a part still over the limit with several operations is cut into consecutive parts
//!    (`_2`, `_3`, ...);
//! 4. a tool still over the limit (one operation whose schema alone is that large) has its
//!    deepest nested body schemas cut to free-form values, the deepest level first and its
//!    largest subtrees first, each cut's description saying what was left out; the value is
//!    taken and sent as given. One still over the limit after that stays, and is reported.
//!
//! Names stay verb_noun, at most 64 characters, unique in the import, and the same for the
//! same document. Every change is reported in a [`Report`].

mod cut;
mod split;
mod trim;

use std::collections::BTreeSet;
use std::fmt;

use toolgate_schema::{Route, RouteTable};
use toolgate_tokens::Memo;

/// The default limit of one generated tool, in tokens of its name, description and input
/// schema.
pub const DEFAULT_TOOL_TOKENS: usize = 8_000;

/// The tokens one table costs a model: its name, description and input schema.
pub fn table_tokens(table: &RouteTable) -> usize {
    toolgate_tokens::tool(&table.tool, &table.description, &table.schema())
}

/// [`table_tokens`], counted with `memo` (which tokenizes each operation's part of the schema
/// once however many tables it is counted in).
pub(crate) fn measure(memo: &Memo, table: &RouteTable) -> usize {
    memo.tool(&table.tool, &table.description, &table.schema())
}

/// Whether a table costs at most `limit` tokens ([`table_tokens`]), found without the
/// tokenizer when its text is that short in bytes ([`toolgate_tokens::tool_within`]); with its
/// tokens when they were counted.
pub(crate) fn within(memo: &Memo, table: &RouteTable, limit: usize) -> (bool, Option<usize>) {
    memo.tool_within(&table.tool, &table.description, &table.schema(), limit)
}

/// What the budget changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// The limit applied, in tokens per tool.
    pub limit: usize,
    /// One entry per table that was over the limit, in the import's order.
    pub changes: Vec<Change>,
}

/// A table that was over the limit, and what it became.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Change {
    /// The table's tool name as grouped.
    pub tool: String,
    /// Its tokens then.
    pub tokens: usize,
    /// The tools it became (one when it was only trimmed), in order.
    pub into: Vec<Part>,
}

/// One tool made from a table that was over the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Part {
    /// The tool name.
    pub tool: String,
    /// How many operations it has.
    pub ops: usize,
    /// Its tokens.
    pub tokens: usize,
    /// How many texts (operation summaries, field descriptions) were clipped or, at the last
    /// steps, left out in it.
    pub clipped: usize,
    /// How many nested schemas were cut to free-form values in it (the last step).
    pub cut: usize,
}

impl Report {
    /// The tools that are still over the limit (each a single operation whose schema is that
    /// large even with its nested schemas cut).
    pub fn over(&self) -> impl Iterator<Item = &Part> {
        self.changes.iter().flat_map(|c| &c.into).filter(|p| p.tokens > self.limit)
    }

    /// Whether nothing was changed.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

impl fmt::Display for Report {
    /// One line per change, each starting with two spaces, as in the import's summary.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for change in &self.changes {
            let parts: Vec<String> =
                change.into.iter().map(|p| format!("{} ({})", p.tool, p.tokens)).collect();
            let clipped: usize = change.into.iter().map(|p| p.clipped).sum();
            let verb = if change.into.len() > 1 { "split" } else { "trimmed" };
            write!(
                f,
                "  {verb} {} ({} tokens, over the {}-token limit) into {}",
                change.tool,
                change.tokens,
                self.limit,
                parts.join(", ")
            )?;
            if clipped > 0 {
                write!(f, "; {clipped} long text(s) clipped")?;
            }
            let cut: usize = change.into.iter().map(|p| p.cut).sum();
            if cut > 0 {
                write!(f, "; {cut} nested schema(s) cut to free-form values")?;
            }
            writeln!(f)?;
        }
        for part in self.over() {
            writeln!(
                f,
                "  still over the {}-token limit: {} ({} tokens; one operation's schema is that large)",
                self.limit, part.tool, part.tokens
            )?;
        }
        Ok(())
    }
}

/// Fit every table within `limit` tokens. `make(domain, read, routes)` builds a table as the
/// import does (name, description listing the operations, example); the parts get their own
/// names. Tables within the limit come back unchanged, in order; a table's parts take its
/// place.
pub(crate) fn fit(
    tables: Vec<RouteTable>,
    limit: usize,
    make: impl Fn(&str, bool, Vec<Route>) -> RouteTable,
) -> (Vec<RouteTable>, Report) {
    let mut taken: BTreeSet<String> = tables.iter().map(|t| t.tool.clone()).collect();
    let mut report = Report { limit, changes: Vec::new() };
    let mut out = Vec::with_capacity(tables.len());
    let memo = Memo::default();
    let memo = &memo;
    for table in tables {
        let (fits, counted) = within(memo, &table, limit);
        if fits {
            out.push(table);
            continue;
        }
        let tokens = counted.unwrap_or_else(|| measure(memo, &table));
        let read = table.routes.iter().all(|r| r.method.is_read());
        let build = |name: &str, routes: Vec<Route>| {
            let mut t = make(&table.domain, read, routes);
            t.tool = name.to_owned();
            t.required_role.clone_from(&table.required_role);
            t.tags.clone_from(&table.tags);
            t
        };
        let parts = split::split(memo, &table.tool, table.routes.clone(), limit, &build);
        let mut change = Change { tool: table.tool.clone(), tokens, into: Vec::new() };
        let mut names = Names { taken: &mut taken, own: table.tool.clone() };
        for (name, routes) in parts {
            for (part, clipped, cut) in fit_part(memo, name, routes, limit, &build) {
                let mut part = part;
                part.tool = names.claim(&part.tool);
                let tokens = measure(memo, &part);
                let ops = part.routes.len();
                change.into.push(Part { tool: part.tool.clone(), ops, tokens, clipped, cut });
                out.push(part);
            }
        }
        report.changes.push(change);
    }
    (out, report)
}

/// One part of a split table: clipped where still too large; while it has several operations
/// and is still too large, cut into consecutive parts instead (each clipped where it must be);
/// a part still too large has its nested schemas cut. Each with how many texts were clipped
/// and how many schemas cut in it.
fn fit_part(
    memo: &Memo,
    name: String,
    routes: Vec<Route>,
    limit: usize,
    build: &dyn Fn(&str, Vec<Route>) -> RouteTable,
) -> Vec<(RouteTable, usize, usize)> {
    let counted = |(t, removed, fits): (RouteTable, usize, bool)| {
        let (t, cuts) = match fits {
            true => (t, 0),
            false => {
                let (t, cuts, _) = cut::cut(memo, t, limit, build);
                (t, cuts)
            }
        };
        let clipped = trim::count_clipped(&t.routes) + removed;
        (t, clipped, cuts)
    };
    let (table, removed, fits) = trimmed(memo, &name, routes.clone(), limit, build);
    if fits || routes.len() == 1 {
        return vec![counted((table, removed, fits))];
    }
    split::chunks(memo, &name, routes, limit, build)
        .into_iter()
        .map(|t| counted(trimmed(memo, &t.tool.clone(), t.routes, limit, build)))
        .collect()
}

/// The table of these operations, their texts clipped step by step until it fits; how many
/// descriptions were left out, and whether it fits.
fn trimmed(
    memo: &Memo,
    name: &str,
    routes: Vec<Route>,
    limit: usize,
    build: &dyn Fn(&str, Vec<Route>) -> RouteTable,
) -> (RouteTable, usize, bool) {
    let mut table = build(name, routes);
    if within(memo, &table, limit).0 {
        return (table, 0, true);
    }
    let mut removed = 0;
    for tier in trim::TIERS {
        let mut routes = table.routes;
        removed += trim::routes(&mut routes, tier);
        table = build(name, routes);
        if within(memo, &table, limit).0 {
            return (table, removed, true);
        }
    }
    (table, removed, false)
}

/// The tool names of the import: a part takes a name no other table has.
struct Names<'a> {
    taken: &'a mut BTreeSet<String>,
    /// The split table's own name, which its first part keeps.
    own: String,
}

impl Names<'_> {
    fn claim(&mut self, wanted: &str) -> String {
        if wanted == self.own {
            // The table's own name, taken by itself: its part keeps it (once).
            self.own.clear();
            return wanted.to_owned();
        }
        let mut name = wanted.to_owned();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = split::join(wanted, &n.to_string());
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

#[cfg(test)]
mod tests;
