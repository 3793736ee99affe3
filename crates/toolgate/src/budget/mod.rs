//! The token budget: what a model must read before its first call in each
//! exposure mode — the server's instructions (the catalog) plus the
//! `tools/list` answer — in bytes and in tokens of a real tokenizer that
//! works offline (tiktoken's `o200k_base`, the [`toolgate_tokens`] crate's estimate,
//! which the OpenAPI importer's per-tool limit uses too).
//!
//! Besides the shipped tools it measures a generated set of
//! [`GENERATED_TOOLS`] tools (ten domains of realistic reads and writes), so
//! the figure that matters as deployments add domains is held too: meta
//! mode's first-call context must not grow with the number of tools.

pub mod domains;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::Arc;

use anyhow::{Result, anyhow};
use serde_json::{Value, json};
use toolgate_core::{Caller, Effect, FnTool, Tool, ToolOutput, ToolSpec};
use toolgate_gateway::{Filter, Gateway};
use toolgate_mcp::{Exposure, McpServer};

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
    /// Meta and direct mode with [`GENERATED_TOOLS`] generated tools.
    pub generated: [Row; 2],
}

/// How many tools the generated set has.
pub const GENERATED_TOOLS: usize = 200;

/// The name of the tokenizer the figures use.
pub const TOKENIZER: &str = toolgate_tokens::TOKENIZER;

/// What `tools/list` carries for one tool, exactly as the server sends it.
fn listed(spec: &ToolSpec) -> Value {
    toolgate_mcp::tool_listing(spec)
}

fn first_call_context(instructions: &str, tools: &[ToolSpec]) -> String {
    let list = json!({ "tools": tools.iter().map(listed).collect::<Vec<_>>() });
    format!("{instructions}\n{list}")
}

/// Measure every mode.
pub fn report(gateway: &Gateway) -> Result<Report> {
    let count = toolgate_tokens::count;
    let caller = Caller::new("budget", gateway.policy().hierarchy().highest());
    let mut rows = Vec::new();

    let server = |exposure: Exposure| McpServer::new(gateway.clone(), exposure);
    let [meta, direct] = meta_and_direct(gateway, &caller, &count);
    let all = gateway.discover(&caller, &Filter::default());
    rows.push(meta);
    rows.push(direct);

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
    let generated = generated_gateway(gateway)?;
    let [meta, direct] = meta_and_direct(&generated, &caller, &count);
    let generated = [
        Row { mode: format!("meta ({GENERATED_TOOLS} generated tools)"), ..meta },
        Row { mode: format!("direct ({GENERATED_TOOLS} generated tools)"), ..direct },
    ];
    Ok(Report { rows, generated })
}

fn meta_and_direct(gateway: &Gateway, caller: &Caller, count: &dyn Fn(&str) -> usize) -> [Row; 2] {
    let server = |exposure: Exposure| McpServer::new(gateway.clone(), exposure);
    let meta = first_call_context(&server(Exposure::Meta).instructions(caller), &gateway.meta_specs());
    let all = gateway.discover(caller, &Filter::default());
    let direct = first_call_context(&server(Exposure::Direct).instructions(caller), &all);
    [
        Row { mode: "meta".into(), tools: 3, bytes: meta.len(), tokens: count(&meta) },
        Row { mode: "direct".into(), tools: all.len(), bytes: direct.len(), tokens: count(&direct) },
    ]
}

/// A gateway with the deployment's policy and skills and
/// [`GENERATED_TOOLS`] generated tools: ten domains, each with reads and
/// writes whose descriptions and schemas are the size of real ones.
pub fn generated_gateway(like: &Gateway) -> Result<Gateway> {
    const DOMAINS: [&str; 10] = [
        "billing",
        "crm",
        "hr",
        "inventory",
        "logistics",
        "marketing",
        "payroll",
        "support",
        "tickets",
        "wiki",
    ];
    const THINGS: [&str; 10] = [
        "invoice", "contact", "employee", "item", "shipment", "campaign", "payslip", "case", "ticket", "page",
    ];
    const VERBS: [&str; 20] = [
        "query",
        "list",
        "get",
        "search",
        "count",
        "export",
        "compare",
        "summarize",
        "check",
        "find",
        "create",
        "update",
        "archive",
        "assign",
        "approve",
        "close",
        "tag",
        "merge",
        "notify",
        "schedule",
    ];
    let roles = like.policy().hierarchy().roles().to_vec();
    let mut tools: Vec<Arc<dyn Tool>> = Vec::with_capacity(GENERATED_TOOLS);
    for i in 0..GENERATED_TOOLS {
        let (domain, thing, verb) = (DOMAINS[i % 10], THINGS[i % 10], VERBS[(i / 10) % 20]);
        let write = (i / 10) % 20 >= 10;
        let name = format!("{verb}_{domain}_{thing}");
        let description = format!(
            "{verb} {thing} records of the caller's {domain} account. Use it when the user asks about a {thing} \
             by id, status or date range. Returns at most 50 records with their id, status and dates. \
             Example: {{\"status\": \"open\", \"from\": \"2026-07-01\"}}."
        );
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": format!("The {thing} id, e.g. {}-1042.", &thing[..2])},
                "status": {"type": "string", "enum": ["open", "pending", "closed"]},
                "from": {"type": "string", "format": "date", "description": "First day, YYYY-MM-DD."},
                "to": {"type": "string", "format": "date", "description": "Last day, YYYY-MM-DD."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50}
            },
            "additionalProperties": false
        });
        let mut spec = ToolSpec::new(name, description, schema).with_domain(domain).with_tags([thing]);
        if write {
            spec = spec.with_effect(Effect::Write { idempotent: i % 2 == 0 });
        }
        if let Some(role) = roles.get(1 + i % roles.len().saturating_sub(1).max(1)).or(roles.first()) {
            spec = spec.with_role(role.clone());
        }
        tools.push(Arc::new(FnTool::new(spec, |_ctx, _params| {
            Box::pin(async { Ok(ToolOutput::json(json!({}))) })
        })));
    }
    Gateway::builder()
        .policy((*like.policy()).clone())
        .limits((*like.limits()).clone())
        .skills((*like.skill_set()).clone())
        .tools(tools)
        .build()
        .map_err(|e| anyhow!("the generated tools: {e}"))
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

    /// With the generated tools: meta mode's tokens as a share of direct mode's.
    pub fn generated_meta_share(&self) -> f64 {
        let [meta, direct] = &self.generated;
        if direct.tokens > 0 { meta.tokens as f64 / direct.tokens as f64 } else { 0.0 }
    }

    /// A plain-text table.
    pub fn text(&self) -> String {
        let mut out = format!("{:<34} {:>6} {:>9} {:>8}\n", "mode", "tools", "bytes", "tokens");
        for r in self.rows.iter().chain(&self.generated) {
            let _ = writeln!(out, "{:<34} {:>6} {:>9} {:>8}", r.mode, r.tools, r.bytes, r.tokens);
        }
        let _ = writeln!(out, "meta / direct: {:.2}% of the tokens ({TOKENIZER})", self.meta_share() * 100.0);
        let _ = write!(
            out,
            "generated: meta {} tokens, {:.2}% of direct",
            self.generated[0].tokens,
            self.generated_meta_share() * 100.0
        );
        out
    }

    /// A markdown table.
    pub fn markdown(&self) -> String {
        let mut out = String::from("| mode | tools | bytes | tokens |\n| --- | ---: | ---: | ---: |\n");
        for r in self.rows.iter().chain(&self.generated) {
            let _ = writeln!(out, "| {} | {} | {} | {} |", r.mode, r.tools, r.bytes, r.tokens);
        }
        let _ = write!(
            out,
            "\nMeta mode's first-call context is {:.2}% of direct mode's, in tokens of {TOKENIZER}; \
             with {GENERATED_TOOLS} generated tools it is {} tokens, {:.2}% of direct mode's \
             (the catalog lists domains, not tools, past {} tools).\n",
            self.meta_share() * 100.0,
            self.generated[0].tokens,
            self.generated_meta_share() * 100.0,
            toolgate_gateway::NAMED_TOOLS
        );
        out
    }
}
