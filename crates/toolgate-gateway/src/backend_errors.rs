//! Failures of the services behind the tools (HTTP APIs, databases, other
//! MCP servers), counted apart from the calls' outcomes: a call may fail
//! with `UNAVAILABLE` once after three failed attempts, and a caller's
//! mistake is not the backend's. Only failures take the lock, so the
//! counters cost nothing on calls that succeed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::Mutex;

use toolgate_core::{BackendFailure, FailureKind, ToolSpec};

use crate::metrics::label;

/// The most distinct backend labels; failures of further ones count as `(other)`.
/// Backends are named by the deployment (domains, upstreams), so this only
/// guards against a tool that invents names.
pub const MAX_BACKENDS: usize = 64;

/// Counters by (backend, kind).
#[derive(Debug, Default)]
pub(crate) struct BackendErrors {
    counts: Mutex<BTreeMap<(String, FailureKind), u64>>,
}

impl BackendErrors {
    /// Count one failed attempt of `spec`'s tool; the backend is the one the
    /// error names, else the tool's domain.
    pub(crate) fn count(&self, spec: &ToolSpec, failure: &BackendFailure) {
        let backend = failure.backend.as_deref().unwrap_or(&spec.domain);
        let Ok(mut counts) = self.counts.lock() else { return };
        let known = counts.keys().any(|(b, _)| b == backend);
        let backend = if known || distinct(&counts) < MAX_BACKENDS { backend } else { "(other)" };
        *counts.entry((backend.to_owned(), failure.kind)).or_default() += 1;
    }

    /// Append `toolgate_backend_errors_total` in Prometheus text format.
    pub(crate) fn render(&self, out: &mut String) {
        out.push_str(
            "# HELP toolgate_backend_errors_total Failed attempts of the services behind the tools \
             (HTTP APIs, databases, upstream MCP servers), by backend and kind.\n",
        );
        out.push_str("# TYPE toolgate_backend_errors_total counter\n");
        let Ok(counts) = self.counts.lock() else { return };
        for ((backend, kind), n) in counts.iter() {
            let _ = writeln!(
                out,
                "toolgate_backend_errors_total{{backend=\"{}\",kind=\"{}\"}} {n}",
                label(backend),
                kind.as_str()
            );
        }
    }
}

fn distinct(counts: &BTreeMap<(String, FailureKind), u64>) -> usize {
    counts.keys().map(|(b, _)| b.as_str()).collect::<BTreeSet<_>>().len()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn failures_count_by_backend_and_kind_and_the_label_set_is_bounded() {
        let errors = BackendErrors::default();
        let spec = ToolSpec::new("query_thing", "A tool.", json!({"type": "object"})).with_domain("things");
        let of = |backend: Option<&str>, kind| BackendFailure { backend: backend.map(str::to_owned), kind };
        errors.count(&spec, &of(None, FailureKind::Http5xx));
        errors.count(&spec, &of(None, FailureKind::Http5xx));
        errors.count(&spec, &of(Some("weather"), FailureKind::Timeout));
        for i in 0..MAX_BACKENDS + 5 {
            errors.count(&spec, &of(Some(&format!("b{i}")), FailureKind::Unavailable));
        }
        let mut out = String::new();
        errors.render(&mut out);
        assert!(
            out.contains("toolgate_backend_errors_total{backend=\"things\",kind=\"http_5xx\"} 2\n"),
            "{out}"
        );
        assert!(out.contains("toolgate_backend_errors_total{backend=\"weather\",kind=\"timeout\"} 1\n"));
        assert!(out.contains("{backend=\"(other)\",kind=\"unavailable\"} 7\n"), "{out}");
        assert_eq!(
            out.lines().filter(|l| l.starts_with("toolgate_backend_errors_total{")).count(),
            MAX_BACKENDS + 1
        );
    }
}
