//! The budget per domain: for each domain of the configuration, how many tools it has, what a
//! model reads before its first call with only that domain (its tools listed directly, or
//! meta mode's catalog and three meta-tools), and its largest tool against the per-tool limit
//! the OpenAPI importer keeps ([`toolgate_openapi::budget::DEFAULT_TOOL_TOKENS`]).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::Serialize;
use toolgate_core::{Caller, ToolSpec};
use toolgate_gateway::{Filter, Gateway};
use toolgate_mcp::{Exposure, McpServer};

use super::first_call_context;

/// One domain's figures, in tokens of [`toolgate_tokens::TOKENIZER`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DomainRow {
    /// The domain.
    pub domain: String,
    /// How many tools it has (for the highest role).
    pub tools: usize,
    /// Instructions + `tools/list` with only this domain's tools listed (`--expose scoped:D`,
    /// which is direct mode for one domain).
    pub tokens_direct: usize,
    /// Instructions + `tools/list` in meta mode for a caller of only this domain.
    pub tokens_meta: usize,
    /// Its largest tool.
    pub largest_tool: String,
    /// That tool's tokens: name, description and input schema ([`toolgate_tokens::tool`]).
    pub largest_tokens: usize,
    /// Its tools over the per-tool limit, largest first.
    pub over: Vec<Over>,
}

/// A tool over the per-tool limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Over {
    /// The tool.
    pub tool: String,
    /// Its tokens.
    pub tokens: usize,
}

/// One tool's tokens as the importer's limit counts them.
pub fn tool_tokens(spec: &ToolSpec) -> usize {
    toolgate_tokens::tool(&spec.name, &spec.description, &spec.input_schema)
}

/// Every domain's row, in name order, a tool over `limit` tokens named in `over`.
pub fn rows(gateway: &Gateway, caller: &Caller, limit: usize) -> Vec<DomainRow> {
    let all = gateway.discover(caller, &Filter::default());
    let domains: BTreeSet<&str> = all.iter().map(|s| s.domain.as_str()).collect();
    let server = |exposure: Exposure| McpServer::new(gateway.clone(), exposure);
    let meta_specs = gateway.meta_specs();
    domains
        .into_iter()
        .map(|domain| {
            let scoped = caller.clone().with_domains([domain.to_owned()]);
            let tools = gateway.discover(&scoped, &Filter::default());
            let instructions = server(Exposure::Scoped(vec![domain.to_owned()])).instructions(&scoped);
            let direct = first_call_context(&instructions, &tools);
            let meta = first_call_context(&server(Exposure::Meta).instructions(&scoped), &meta_specs);
            let mut sizes: Vec<(String, usize)> =
                tools.iter().map(|t| (t.name.clone(), tool_tokens(t))).collect();
            sizes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let (largest_tool, largest_tokens) = sizes.first().cloned().unwrap_or_default();
            DomainRow {
                domain: domain.to_owned(),
                tools: tools.len(),
                tokens_direct: toolgate_tokens::count(&direct),
                tokens_meta: toolgate_tokens::count(&meta),
                largest_tool,
                largest_tokens,
                over: sizes
                    .into_iter()
                    .filter(|(_, n)| *n > limit)
                    .map(|(tool, tokens)| Over { tool, tokens })
                    .collect(),
            }
        })
        .collect()
}

/// A plain-text table of the rows.
pub fn text(rows: &[DomainRow], limit: usize) -> String {
    let mut out = format!(
        "{:<24} {:>6} {:>13} {:>11}  {:<40} {:>7}  over {limit}\n",
        "domain", "tools", "tokens direct", "tokens meta", "largest tool", "tokens"
    );
    for r in rows {
        let over = match r.over.len() {
            0 => "no".to_owned(),
            n => format!("yes ({n})"),
        };
        let _ = writeln!(
            out,
            "{:<24} {:>6} {:>13} {:>11}  {:<40} {:>7}  {over}",
            r.domain, r.tools, r.tokens_direct, r.tokens_meta, r.largest_tool, r.largest_tokens
        );
    }
    for r in rows {
        for o in &r.over {
            let _ = writeln!(
                out,
                "over the {limit}-token limit: {} ({} tokens, domain {})",
                o.tool, o.tokens, r.domain
            );
        }
    }
    out
}
