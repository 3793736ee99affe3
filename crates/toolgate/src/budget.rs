//! The token budget: what a model must read before its first call in each
//! exposure mode — the server's instructions (the catalog) plus the
//! `tools/list` answer — in bytes and in tokens of a real tokenizer that
//! works offline (tiktoken's `o200k_base`, shipped inside tiktoken-rs).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use anyhow::{Result, anyhow};
use gateway::{Filter, Gateway};
use mcp_server::{Exposure, McpServer};
use serde_json::{Value, json};
use tool_core::{Caller, ToolSpec};

/// One exposure mode's first-call context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// `meta`, `direct` or `scoped:<domain>`.
    pub mode: String,
    /// How many tools `tools/list` answers.
    pub tools: usize,
    /// Bytes of instructions + `tools/list`.
    pub bytes: usize,
    /// Tokens of the same text.
    pub tokens: usize,
}

/// Every mode, for the highest role (who sees every tool).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// One row per mode: meta, direct, then scoped per domain.
    pub rows: Vec<Row>,
}

/// The name of the tokenizer the figures use.
pub const TOKENIZER: &str = "o200k_base (tiktoken-rs)";

/// What `tools/list` carries for one tool, exactly as the server sends it.
fn listed(spec: &ToolSpec) -> Value {
    mcp_server::tool_listing(spec)
}

fn first_call_context(instructions: &str, tools: &[ToolSpec]) -> String {
    let list = json!({ "tools": tools.iter().map(listed).collect::<Vec<_>>() });
    format!("{instructions}\n{list}")
}

/// Measure every mode.
pub fn report(gateway: &Gateway) -> Result<Report> {
    let bpe = tiktoken_rs::o200k_base().map_err(|e| anyhow!("loading the tokenizer: {e}"))?;
    let count = |text: &str| bpe.encode_with_special_tokens(text).len();
    let caller = Caller::new("budget", gateway.policy().hierarchy().highest());
    let mut rows = Vec::new();

    let server = |exposure: Exposure| McpServer::new(gateway.clone(), exposure);
    let meta = first_call_context(&server(Exposure::Meta).instructions(&caller), &gateway.meta_specs());
    rows.push(Row { mode: "meta".into(), tools: 3, bytes: meta.len(), tokens: count(&meta) });

    let all = gateway.discover(&caller, &Filter::default());
    let direct = first_call_context(&server(Exposure::Direct).instructions(&caller), &all);
    rows.push(Row { mode: "direct".into(), tools: all.len(), bytes: direct.len(), tokens: count(&direct) });

    let domains: BTreeSet<String> = all.iter().map(|s| s.domain.clone()).collect();
    for domain in domains {
        let scoped = caller.clone().with_domains([domain.clone()]);
        let tools = gateway.discover(&scoped, &Filter::default());
        let instructions = server(Exposure::Scoped(vec![domain.clone()])).instructions(&scoped);
        let text = first_call_context(&instructions, &tools);
        rows.push(Row {
            mode: format!("scoped:{domain}"),
            tools: tools.len(),
            bytes: text.len(),
            tokens: count(&text),
        });
    }
    Ok(Report { rows })
}

impl Report {
    fn row(&self, mode: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.mode == mode)
    }

    /// Meta mode's tokens as a share of direct mode's (0.0 to 1.0).
    pub fn meta_share(&self) -> f64 {
        match (self.row("meta"), self.row("direct")) {
            (Some(meta), Some(direct)) if direct.tokens > 0 => meta.tokens as f64 / direct.tokens as f64,
            _ => 0.0,
        }
    }

    /// A plain-text table.
    pub fn text(&self) -> String {
        let mut out = format!("{:<24} {:>6} {:>9} {:>8}\n", "mode", "tools", "bytes", "tokens");
        for r in &self.rows {
            let _ = writeln!(out, "{:<24} {:>6} {:>9} {:>8}", r.mode, r.tools, r.bytes, r.tokens);
        }
        let _ = write!(out, "meta / direct: {:.1}% of the tokens ({TOKENIZER})", self.meta_share() * 100.0);
        out
    }

    /// A markdown table.
    pub fn markdown(&self) -> String {
        let mut out = String::from("| mode | tools | bytes | tokens |\n| --- | ---: | ---: | ---: |\n");
        for r in &self.rows {
            let _ = writeln!(out, "| {} | {} | {} | {} |", r.mode, r.tools, r.bytes, r.tokens);
        }
        let _ = write!(
            out,
            "\nMeta mode's first-call context is {:.1}% of direct mode's, in tokens of {TOKENIZER}.\n",
            self.meta_share() * 100.0
        );
        out
    }
}
