//! `toolgate audit`: read the audit trail (every write call and every
//! refused call), newest first. Read-only: toolgate has no command that
//! changes or deletes records (retention pruning runs inside `serve`).

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use toolgate::Config;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Only this user's calls.
    #[arg(long)]
    user: Option<String>,
    /// Only calls of this tool.
    #[arg(long)]
    tool: Option<String>,
    /// Only this outcome: OK or an error code such as PERMISSION_DENIED.
    #[arg(long)]
    outcome: Option<String>,
    /// Only calls since this time: RFC 3339 (2026-11-30T12:00:00Z) or an
    /// age such as 90s, 15m, 2h, 7d.
    #[arg(long)]
    since: Option<String>,
    /// At most this many records (default 100, at most 1000).
    #[arg(long)]
    limit: Option<u32>,
    /// One JSON object per line instead of a table.
    #[arg(long)]
    json: bool,
}

pub(crate) async fn run(args: Args, config: &Config) -> Result<ExitCode> {
    let since = args.since.as_deref().map(since).transpose()?;
    let db = toolgate::wiring::connect_db(&config.database).await?;
    let audit = toolgate_fleet::SqlAudit::open(db, toolgate::wiring::instance_name(config))
        .await
        .context("opening the audit trail")?;
    let mut query = toolgate_fleet::AuditQuery::default();
    query.user = args.user;
    query.tool = args.tool;
    query.outcome = args.outcome.map(|o| o.to_ascii_uppercase());
    query.since = since;
    query.limit = args.limit;
    let records = audit.query(&query).await?;
    for r in &records {
        if args.json {
            outln!("{}", serde_json::to_string(r)?);
        } else {
            outln!(
                "{}\t{}\t{}\t{}\t{}\t{}\tids={}\tparams={}\t{}",
                r.at,
                r.user_id,
                r.role,
                r.key_id.as_deref().unwrap_or("-"),
                r.tool,
                r.outcome,
                r.ids,
                r.params,
                r.instance
            );
        }
    }
    if !args.json {
        eprintln!("{} record(s), newest first", records.len());
    }
    Ok(ExitCode::SUCCESS)
}

/// An RFC 3339 time as given, or `now - age` for `90s`, `15m`, `2h`, `7d`.
fn since(text: &str) -> Result<String> {
    let text = text.trim();
    if chrono::DateTime::parse_from_rfc3339(text).is_ok() {
        return Ok(text.to_owned());
    }
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => 0,
    };
    let Ok(n) = number.parse::<i64>() else {
        bail!("--since {text:?}: give an RFC 3339 time (2026-11-30T12:00:00Z) or an age such as 15m, 2h, 7d");
    };
    if seconds == 0 {
        bail!("--since {text:?}: the age's unit is s, m, h or d");
    }
    let age = chrono::Duration::try_seconds(n.saturating_mul(seconds)).unwrap_or(chrono::Duration::MAX);
    let at = chrono::Utc::now().checked_sub_signed(age).unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
    Ok(at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

#[cfg(test)]
mod tests {
    use super::since;

    #[test]
    fn since_takes_times_and_ages() {
        assert_eq!(since("2026-11-30T12:00:00Z").unwrap(), "2026-11-30T12:00:00Z");
        let an_hour_ago = chrono::DateTime::parse_from_rfc3339(&since("1h").unwrap()).unwrap();
        let delta = chrono::Utc::now().signed_duration_since(an_hour_ago).num_seconds();
        assert!((3590..=3610).contains(&delta), "{delta}");
        assert!(since("yesterday").unwrap_err().to_string().contains("RFC 3339"));
        assert!(since("5w").unwrap_err().to_string().contains("unit"));
    }
}
