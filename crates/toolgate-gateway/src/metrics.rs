//! Call metrics, kept as plain atomics laid out when the gateway is built
//! (tools × roles × outcomes), and rendered in the Prometheus text format
//! only when someone scrapes. A call costs a few relaxed atomic adds: no
//! lock, no map lookup, no allocation, so metrics are free when nobody reads them.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};

use toolgate_core::ErrorCode;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];
/// The upper bounds of [`ToolStats::latency_buckets`], in seconds.
pub const LATENCY_BUCKETS: &[f64] = &BUCKETS;
/// `OK` plus every error code.
const OUTCOMES: usize = ErrorCode::ALL.len() + 1;
/// Rows laid out for tools added while serving (an upstream's tools): each
/// new name takes the next one and keeps it (a counter never restarts under
/// the same label), further names share `(other)`, so the series stay bounded.
pub const MAX_DYNAMIC_TOOLS: usize = 128;

/// One tool's calls since the gateway was built, as `/metrics` counts them
/// (for status pages that want numbers, not the text format).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolStats {
    /// The tool (or `(other)` / `(unknown)`, as on `/metrics`).
    pub tool: String,
    /// Calls that finished, whatever their outcome.
    pub calls: u64,
    /// The calls that did not end `OK`, by error code.
    pub errors: BTreeMap<&'static str, u64>,
    /// Their wall time added up, in seconds.
    pub latency_sum_seconds: f64,
    /// Calls per latency bucket, not cumulative: `[i]` took at most
    /// [`LATENCY_BUCKETS`]`[i]` and more than the bound before; calls slower
    /// than the last bound are `calls` minus their sum.
    pub latency_buckets: Vec<u64>,
}

/// One tool's latency histogram.
#[derive(Debug, Default)]
struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_us: AtomicU64,
}

/// Counters of every call the gateway ran.
#[derive(Debug)]
pub(crate) struct CallMetrics {
    /// Tool label per slot: the tools known at build time, then
    /// [`MAX_DYNAMIC_TOOLS`] slots named as tools arrive, then `(other)` and
    /// `(unknown)` (names that are not registered).
    tools: Vec<OnceLock<String>>,
    /// The first dynamic slot.
    first_dynamic: usize,
    /// The slots given to tools added while serving, by name.
    dynamic: Mutex<HashMap<String, usize>>,
    /// Role label per slot; the last one is `(other)`.
    roles: Vec<String>,
    calls: Vec<AtomicU64>,
    latency: Vec<Histogram>,
    in_flight: AtomicI64,
}

impl CallMetrics {
    pub(crate) fn new(tools: &[String], roles: &[String]) -> Self {
        let named = |name: &str| OnceLock::from(name.to_owned());
        let mut tools: Vec<OnceLock<String>> = tools.iter().map(|t| named(t)).collect();
        let first_dynamic = tools.len();
        tools.extend((0..MAX_DYNAMIC_TOOLS).map(|_| OnceLock::new()));
        tools.push(named("(other)"));
        tools.push(named("(unknown)"));
        let mut roles = roles.to_vec();
        roles.push("(other)".into());
        let calls = (0..tools.len() * roles.len() * OUTCOMES).map(|_| AtomicU64::new(0)).collect();
        let latency = (0..tools.len()).map(|_| Histogram::default()).collect();
        Self {
            tools,
            first_dynamic,
            dynamic: Mutex::default(),
            roles,
            calls,
            latency,
            in_flight: AtomicI64::new(0),
        }
    }

    /// The slot of a tool added while serving: its own row for the first
    /// [`MAX_DYNAMIC_TOOLS`] names, `(other)` beyond. Taken when the tool is
    /// registered, never on a call.
    pub(crate) fn dynamic_slot(&self, name: &str) -> usize {
        let other = self.tools.len() - 2;
        let Ok(mut dynamic) = self.dynamic.lock() else { return other };
        if let Some(slot) = dynamic.get(name) {
            return *slot;
        }
        // A tool of the build served again (removed, then added back by a reload): its row.
        if let Some(slot) =
            self.tools[..self.first_dynamic].iter().position(|t| t.get().is_some_and(|t| t == name))
        {
            return slot;
        }
        let slot = self.first_dynamic + dynamic.len();
        if slot >= other {
            return other;
        }
        let _ = self.tools[slot].set(name.to_owned());
        dynamic.insert(name.to_owned(), slot);
        slot
    }

    /// The slot of names that are not registered.
    pub(crate) fn unknown_tool(&self) -> usize {
        self.tools.len() - 1
    }

    fn role_slot(&self, role: &str) -> usize {
        self.roles[..self.roles.len() - 1].iter().position(|r| r == role).unwrap_or(self.roles.len() - 1)
    }

    pub(crate) fn started(&self) {
        self.in_flight.fetch_add(1, Relaxed);
    }

    pub(crate) fn left(&self) {
        self.in_flight.fetch_sub(1, Relaxed);
    }

    pub(crate) fn finished(&self, tool: usize, role: &str, code: Option<ErrorCode>, seconds: f64) {
        // Slot 0 is OK; a code's slot is its index in `ErrorCode::ALL` (declared
        // with the enum, so every code has one).
        let outcome = code.map_or(0, |c| c.index() + 1);
        let slot = (tool * self.roles.len() + self.role_slot(role)) * OUTCOMES + outcome;
        self.calls[slot].fetch_add(1, Relaxed);
        let histogram = &self.latency[tool];
        if let Some(bucket) = BUCKETS.iter().position(|b| seconds <= *b) {
            histogram.buckets[bucket].fetch_add(1, Relaxed);
        }
        histogram.count.fetch_add(1, Relaxed);
        histogram.sum_us.fetch_add((seconds * 1e6) as u64, Relaxed);
    }

    /// Every tool that finished a call, with its counts (see [`ToolStats`]).
    pub(crate) fn stats(&self) -> Vec<ToolStats> {
        let mut out = Vec::new();
        for (t, (tool, h)) in self.tools.iter().zip(&self.latency).enumerate() {
            let calls = h.count.load(Relaxed);
            let Some(tool) = tool.get().filter(|_| calls > 0) else { continue };
            let mut errors = BTreeMap::new();
            for r in 0..self.roles.len() {
                for (o, code) in ErrorCode::ALL.iter().enumerate() {
                    let n = self.calls[(t * self.roles.len() + r) * OUTCOMES + o + 1].load(Relaxed);
                    if n > 0 {
                        *errors.entry(code.as_str()).or_insert(0) += n;
                    }
                }
            }
            out.push(ToolStats {
                tool: tool.clone(),
                calls,
                errors,
                latency_sum_seconds: h.sum_us.load(Relaxed) as f64 / 1e6,
                latency_buckets: h.buckets.iter().map(|b| b.load(Relaxed)).collect(),
            });
        }
        out
    }

    /// Append the metrics in Prometheus text format.
    pub(crate) fn render(&self, out: &mut String) {
        out.push_str(
            "# HELP toolgate_calls_total Tool calls by tool, role and outcome (OK or the error code).\n",
        );
        out.push_str("# TYPE toolgate_calls_total counter\n");
        let mut rate_limited = 0u64;
        let limited = ErrorCode::RateLimited.index() + 1;
        for (t, tool) in self.tools.iter().enumerate() {
            // A dynamic slot not taken yet has counted nothing.
            let Some(tool) = tool.get() else { continue };
            for (r, role) in self.roles.iter().enumerate() {
                for o in 0..OUTCOMES {
                    let n = self.calls[(t * self.roles.len() + r) * OUTCOMES + o].load(Relaxed);
                    if n == 0 {
                        continue;
                    }
                    if o == limited {
                        rate_limited += n;
                    }
                    let outcome = if o == 0 { "OK" } else { ErrorCode::ALL[o - 1].as_str() };
                    let _ = writeln!(
                        out,
                        "toolgate_calls_total{{tool=\"{}\",role=\"{}\",outcome=\"{outcome}\"}} {n}",
                        label(tool),
                        label(role)
                    );
                }
            }
        }
        out.push_str("# HELP toolgate_rate_limited_total Tool calls refused with RATE_LIMITED.\n");
        out.push_str("# TYPE toolgate_rate_limited_total counter\n");
        let _ = writeln!(out, "toolgate_rate_limited_total {rate_limited}");
        out.push_str("# HELP toolgate_calls_in_flight Tool calls running now.\n");
        out.push_str("# TYPE toolgate_calls_in_flight gauge\n");
        let _ = writeln!(out, "toolgate_calls_in_flight {}", self.in_flight.load(Relaxed));
        out.push_str("# HELP toolgate_call_duration_seconds Wall time of tool calls, by tool.\n");
        out.push_str("# TYPE toolgate_call_duration_seconds histogram\n");
        for (tool, h) in self.tools.iter().zip(&self.latency) {
            let count = h.count.load(Relaxed);
            let Some(tool) = tool.get().filter(|_| count > 0) else {
                continue;
            };
            let tool = label(tool);
            let mut cumulative = 0;
            for (bound, bucket) in BUCKETS.iter().zip(&h.buckets) {
                cumulative += bucket.load(Relaxed);
                let _ = writeln!(
                    out,
                    "toolgate_call_duration_seconds_bucket{{tool=\"{tool}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ =
                writeln!(out, "toolgate_call_duration_seconds_bucket{{tool=\"{tool}\",le=\"+Inf\"}} {count}");
            let sum = h.sum_us.load(Relaxed) as f64 / 1e6;
            let _ = writeln!(out, "toolgate_call_duration_seconds_sum{{tool=\"{tool}\"}} {sum}");
            let _ = writeln!(out, "toolgate_call_duration_seconds_count{{tool=\"{tool}\"}} {count}");
        }
    }
}

/// A label value with `\`, `"` and newlines escaped as the text format asks.
pub fn label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_land_in_their_labels_and_buckets() {
        let m = CallMetrics::new(&["a_tool".into(), "b_tool".into()], &["guest".into(), "admin".into()]);
        m.started();
        m.finished(1, "admin", None, 0.003);
        m.finished(1, "admin", Some(ErrorCode::RateLimited), 0.0001);
        m.finished(m.unknown_tool(), "nobody", Some(ErrorCode::ToolNotFound), 0.0001);
        m.left();
        let mut out = String::new();
        m.render(&mut out);
        assert!(
            out.contains("toolgate_calls_total{tool=\"b_tool\",role=\"admin\",outcome=\"OK\"} 1\n"),
            "{out}"
        );
        assert!(out.contains("outcome=\"RATE_LIMITED\"} 1\n"));
        assert!(out.contains(
            "toolgate_calls_total{tool=\"(unknown)\",role=\"(other)\",outcome=\"TOOL_NOT_FOUND\"} 1"
        ));
        assert!(out.contains("toolgate_rate_limited_total 1\n"));
        assert!(out.contains("toolgate_calls_in_flight 0\n"));
        assert!(out.contains("toolgate_call_duration_seconds_bucket{tool=\"b_tool\",le=\"0.0025\"} 1\n"));
        assert!(out.contains("toolgate_call_duration_seconds_bucket{tool=\"b_tool\",le=\"0.005\"} 2\n"));
        assert!(out.contains("toolgate_call_duration_seconds_count{tool=\"b_tool\"} 2\n"));
        assert!(!out.contains("tool=\"a_tool\""), "untouched series are left out");
        assert!(!out.contains("tool=\"(other)\""), "untouched series are left out");
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }

    #[test]
    fn stats_count_calls_errors_and_latency_per_tool() {
        let m = CallMetrics::new(&["a_tool".into(), "b_tool".into()], &["guest".into(), "admin".into()]);
        m.finished(1, "admin", None, 0.003);
        m.finished(1, "guest", Some(ErrorCode::Timeout), 0.2);
        m.finished(1, "nobody", Some(ErrorCode::Timeout), 20.0);
        let stats = m.stats();
        assert_eq!(stats.len(), 1, "untouched tools are left out: {stats:?}");
        let b = &stats[0];
        assert_eq!((b.tool.as_str(), b.calls), ("b_tool", 3));
        assert_eq!(b.errors.get("TIMEOUT"), Some(&2));
        assert_eq!(b.errors.len(), 1);
        assert!((b.latency_sum_seconds - 20.203).abs() < 1e-3, "{}", b.latency_sum_seconds);
        assert_eq!(b.latency_buckets.len(), LATENCY_BUCKETS.len());
        assert_eq!(b.latency_buckets[2], 1, "3 ms is in (2.5 ms, 5 ms]");
        assert_eq!(b.latency_buckets[7], 1, "200 ms is in (100 ms, 250 ms]");
        assert_eq!(b.latency_buckets.iter().sum::<u64>(), 2, "20 s is over the last bound");
    }

    #[test]
    fn every_code_is_counted_under_its_own_name() {
        let m = CallMetrics::new(&["a_tool".into()], &["member".into()]);
        for code in ErrorCode::ALL {
            m.finished(0, "member", Some(code), 0.001);
        }
        let mut out = String::new();
        m.render(&mut out);
        for code in ErrorCode::ALL {
            let row =
                format!("toolgate_calls_total{{tool=\"a_tool\",role=\"member\",outcome=\"{code}\"}} 1\n");
            assert!(out.contains(&row), "{code} is not counted under its name:\n{out}");
        }
        assert!(!out.contains("outcome=\"OK\""), "no failure is counted as OK:\n{out}");
    }

    #[test]
    fn tools_added_while_serving_get_their_own_rows_up_to_the_cap() {
        let m = CallMetrics::new(&["a_tool".into()], &["member".into()]);
        let first = m.dynamic_slot("w__forecast");
        assert_eq!(m.dynamic_slot("w__forecast"), first, "a name keeps its row");
        for i in 1..MAX_DYNAMIC_TOOLS {
            assert_ne!(m.dynamic_slot(&format!("w__t{i}")), first);
        }
        let other = m.dynamic_slot("w__one_too_many");
        assert_eq!(m.dynamic_slot("w__two_too_many"), other);
        m.finished(first, "member", None, 0.001);
        m.finished(other, "member", Some(ErrorCode::Timeout), 0.001);
        let mut out = String::new();
        m.render(&mut out);
        assert!(
            out.contains("toolgate_calls_total{tool=\"w__forecast\",role=\"member\",outcome=\"OK\"} 1\n"),
            "{out}"
        );
        assert!(
            out.contains("toolgate_calls_total{tool=\"(other)\",role=\"member\",outcome=\"TIMEOUT\"} 1\n")
        );
        assert!(out.contains("toolgate_call_duration_seconds_count{tool=\"w__forecast\"} 1\n"));
    }
}
