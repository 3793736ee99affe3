//! Log output: human-readable lines by default, one JSON object per line
//! with `TOOLGATE_LOG_FORMAT=json` (for log shippers), always on stderr
//! (stdout carries results and the MCP stdio stream). The JSON writer is a
//! small `FormatEvent`, so it needs no extra dependency.

use std::fmt;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// Levels that `TOOLGATE_LOG` cannot raise, because these libraries log
/// whole messages: rmcp prints every request with its tool arguments (API
/// keys given to `save_flight_api_key`, passwords in parameters) at `debug`
/// and notifications at `info`, and its warnings can quote a parameter. Our
/// own crates log ids and codes, never values, so they may go to `trace`.
const LOG_CAPS: &[&str] = &["rmcp=error", "hyper=warn", "hyper_util=warn", "reqwest=warn", "h2=warn"];

/// Start logging at `TOOLGATE_LOG` (default `warn`) in `TOOLGATE_LOG_FORMAT` (`text` or `json`).
pub(crate) fn init() {
    let mut filter = tracing_subscriber::EnvFilter::try_from_env("TOOLGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Added last, a cap replaces a user's directive for the same target.
    for cap in LOG_CAPS {
        if let Ok(directive) = cap.parse() {
            filter = filter.add_directive(directive);
        }
    }
    let json = std::env::var("TOOLGATE_LOG_FORMAT").is_ok_and(|v| v.trim().eq_ignore_ascii_case("json"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = if json { builder.event_format(JsonLines).try_init() } else { builder.try_init() };
}

/// `{"timestamp", "level", "target", "message", "fields": {...}, "spans": [...]}` per line.
struct JsonLines;

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut fields = Map::new();
        event.record(&mut Fields(&mut fields));
        let meta = event.metadata();
        let mut line = Map::new();
        line.insert(
            "timestamp".into(),
            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true).into(),
        );
        line.insert("level".into(), meta.level().as_str().into());
        line.insert("target".into(), meta.target().into());
        line.insert("message".into(), fields.remove("message").unwrap_or(Value::Null));
        line.insert("fields".into(), Value::Object(fields));
        if let Some(scope) = ctx.event_scope() {
            let spans: Vec<Value> = scope.from_root().map(|span| Value::from(span.name())).collect();
            line.insert("spans".into(), Value::Array(spans));
        }
        writeln!(writer, "{}", Value::Object(line))
    }
}

struct Fields<'a>(&'a mut Map<String, Value>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}").into());
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }
}
