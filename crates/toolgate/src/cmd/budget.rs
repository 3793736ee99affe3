//! `toolgate budget`: what a model reads before its first call, per exposure mode and per
//! domain, each domain's largest tool against the per-tool limit (`--max-tool-tokens`, the
//! OpenAPI importer's default); `--json` for scripts, `--markdown` for the docs.

use std::process::ExitCode;

use anyhow::Result;
use serde_json::json;
use toolgate::App;
use toolgate::budget::{Row, domains};
use toolgate_core::Caller;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print markdown instead of plain text (the modes only, as docs/budget.md has them).
    #[arg(long, conflicts_with = "json")]
    markdown: bool,
    /// Print one JSON object: the modes, the generated set and every domain.
    #[arg(long)]
    json: bool,
    /// The most tokens one tool may cost (name, description and input schema).
    #[arg(long, default_value_t = toolgate_openapi::budget::DEFAULT_TOOL_TOKENS)]
    max_tool_tokens: usize,
}

pub(crate) fn run(args: Args, app: &App) -> Result<ExitCode> {
    let report = toolgate::budget::report(&app.gateway)?;
    if args.markdown {
        outln!("{}", report.markdown());
        return Ok(ExitCode::SUCCESS);
    }
    let caller = Caller::new("budget", app.gateway.policy().hierarchy().highest());
    let rows = domains::rows(&app.gateway, &caller, args.max_tool_tokens);
    if args.json {
        let mode = |r: &Row| json!({"mode": r.mode, "tools": r.tools, "bytes": r.bytes, "tokens": r.tokens});
        let value = json!({
            "tokenizer": toolgate_tokens::TOKENIZER,
            "max_tool_tokens": args.max_tool_tokens,
            "modes": report.rows.iter().map(mode).collect::<Vec<_>>(),
            "generated": report.generated.iter().map(mode).collect::<Vec<_>>(),
            "meta_share": report.meta_share(),
            "domains": rows,
            "over_budget": rows.iter().any(|r| !r.over.is_empty()),
        });
        outln!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        outln!("{}\n\n{}", report.text(), domains::text(&rows, args.max_tool_tokens).trim_end());
    }
    Ok(ExitCode::SUCCESS)
}
