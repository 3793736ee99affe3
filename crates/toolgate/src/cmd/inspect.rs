//! The read-only commands: `tools`, `schema`, `guide`, `catalog` (`budget` has its own module).

use std::process::ExitCode;

use anyhow::Result;
use clap::ValueEnum;
use toolgate::App;
use toolgate_core::Caller;
use toolgate_gateway::{Filter, SchemaFormat};

#[derive(Debug, clap::Args)]
pub(crate) struct RoleArg {
    /// As this role (default: the highest).
    #[arg(long)]
    role: Option<String>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ToolsArgs {
    /// Only names containing this text.
    #[arg(long)]
    filter: Option<String>,
    #[command(flatten)]
    role: RoleArg,
}

#[derive(Debug, clap::Args)]
pub(crate) struct SchemaArgs {
    /// The tool's name.
    tool: String,
    /// The dialect.
    #[arg(long, value_enum, default_value_t = Format::Mcp)]
    format: Format,
}

#[derive(Debug, clap::Args)]
pub(crate) struct GuideArgs {
    /// The skill id.
    skill: String,
    #[command(flatten)]
    role: RoleArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Mcp,
    Openai,
    Anthropic,
    Gemini,
}

impl From<Format> for SchemaFormat {
    fn from(format: Format) -> Self {
        match format {
            Format::Mcp => SchemaFormat::Mcp,
            Format::Openai => SchemaFormat::Openai,
            Format::Anthropic => SchemaFormat::Anthropic,
            Format::Gemini => SchemaFormat::Gemini,
        }
    }
}

/// The caller a read-only command acts as: `cli` with the given role or the highest.
fn caller(app: &App, role: Option<String>) -> Caller {
    let highest = || app.gateway.policy().hierarchy().highest().to_owned();
    Caller::new("cli", role.unwrap_or_else(highest))
}

pub(crate) fn tools(args: ToolsArgs, app: &App) -> Result<ExitCode> {
    let filter = Filter { name: args.filter, ..Filter::default() };
    for spec in app.gateway.discover(&caller(app, args.role.role), &filter) {
        outln!(
            "{:<32} {:<6} {:<10} {:<8} {}",
            spec.name,
            spec.effect.label(),
            spec.domain,
            spec.required_role,
            spec.description.lines().next().unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn schema(args: SchemaArgs, app: &App) -> Result<ExitCode> {
    match app.gateway.tool_schema_as(&caller(app, None), &args.tool, args.format.into()) {
        Ok(schema) => {
            outln!("{}", serde_json::to_string_pretty(&schema)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{}: {}", e.code, e.message);
            Ok(ExitCode::from(1))
        }
    }
}

pub(crate) fn guide(args: GuideArgs, app: &App) -> Result<ExitCode> {
    match app.gateway.skill_guide(&caller(app, args.role.role), &args.skill) {
        Ok(guide) => {
            outln!("{guide}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{}: {}", e.code, e.message);
            Ok(ExitCode::from(1))
        }
    }
}

pub(crate) fn catalog(args: RoleArg, app: &App) -> Result<ExitCode> {
    outln!("{}", app.gateway.catalog(&caller(app, args.role)));
    Ok(ExitCode::SUCCESS)
}
