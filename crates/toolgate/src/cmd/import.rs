//! `toolgate import openapi SPEC --out DIR`: route tables from an OpenAPI 3.0/3.1 document,
//! a summary (tools, ops, skipped operations with reasons) and the `[[domains]]` entry to paste.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use toolgate_openapi::{DomainBy, Options};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Kind {
    /// An OpenAPI 3.0 or 3.1 document, JSON or YAML.
    Openapi(OpenapiArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct OpenapiArgs {
    /// The document.
    spec: PathBuf,
    /// Folder the route tables are written to (created when missing).
    #[arg(long)]
    out: PathBuf,
    /// What names a domain: the first tag, or the first path segment.
    #[arg(long, value_parser = ["tag", "path"], default_value = "tag")]
    domain_by: String,
    /// The role the tools require.
    #[arg(long, default_value = "member")]
    role: String,
    /// The most tokens one tool may cost (name, description and input schema); a larger one is
    /// split by sub-resource and its long texts clipped.
    #[arg(long, default_value_t = toolgate_openapi::budget::DEFAULT_TOOL_TOKENS)]
    max_tool_tokens: usize,
}

pub(crate) fn run(kind: Kind) -> Result<ExitCode> {
    let Kind::Openapi(args) = kind;
    let options = Options::default()
        .with_domain_by(if args.domain_by == "path" { DomainBy::Path } else { DomainBy::Tag })
        .with_required_role(args.role)
        .with_max_tool_tokens(args.max_tool_tokens);
    // From the file: the files its relative `$ref`s name are read from its folder.
    let import = match toolgate_openapi::import_file(&args.spec, &options) {
        Ok(import) => import,
        Err(e) => {
            eprintln!("error: {}: {e}", args.spec.display());
            return Ok(ExitCode::from(1));
        }
    };
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    // A comment line: a line break (or any control character) in the file's name cannot end it.
    let spec_name: String = args
        .spec
        .file_name()
        .map(|n| n.to_string_lossy().chars().map(|c| if c.is_control() { '?' } else { c }).collect())
        .unwrap_or_default();
    for table in &import.tables {
        let path = args.out.join(format!("{}.toml", table.tool));
        // Every string from the document goes through the serializer.
        let text = toml::to_string(table).with_context(|| format!("writing table {}", table.tool))?;
        let header = format!(
            "# Imported from {spec_name} by `toolgate import openapi`; edit freely (descriptions are what the model reads).\n"
        );
        std::fs::write(&path, header + &text).with_context(|| format!("writing {}", path.display()))?;
    }
    // What was written must load exactly as `serve` will load it.
    let files = toolgate::domains::read_dir(&args.out).map_err(anyhow::Error::msg)?;
    if let Err(problems) = toolgate::domains::load_tables(&files) {
        anyhow::bail!("the written tables do not load (a bug in the importer):\n  {}", problems.join("\n  "));
    }
    out!("{}", import.summary());
    outln!("wrote {} file(s) to {}\n\nAdd to toolgate.toml:\n", import.tables.len(), args.out.display());
    out!("{}", import.domain_snippet(&args.out.display().to_string()));
    Ok(ExitCode::SUCCESS)
}
