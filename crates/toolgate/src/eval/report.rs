//! The report: per task × exposure (success over the repeats, steps, calls by
//! outcome, tokens, wall time, and why the failed runs failed), per exposure
//! and overall (success rate with a 95 % Wilson interval over every run,
//! tokens and calls per successful task), as markdown and as JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Value, json};

use super::runner::{Mode, RunResult};

/// Everything one `toolgate eval` measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The model name.
    pub model: String,
    /// `native` or `text`.
    pub tool_calling: String,
    /// Runs per task and exposure.
    pub repeat: u32,
    /// The exposures, in order.
    pub modes: Vec<Mode>,
    /// The tasks (id, title), in order.
    pub tasks: Vec<(String, String)>,
    /// Every run.
    pub runs: Vec<RunResult>,
}

/// Figures over a set of runs.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Figures {
    /// Runs.
    pub runs: usize,
    /// Runs whose checks all held.
    pub successes: usize,
    /// successes / runs.
    pub success_rate: f64,
    /// The 95 % Wilson interval of the success rate.
    pub ci_low: f64,
    /// Its upper end.
    pub ci_high: f64,
    /// Mean model turns per run.
    pub steps: f64,
    /// Tool calls by outcome, summed.
    pub calls_by_outcome: BTreeMap<String, usize>,
    /// Mean prompt tokens per run.
    pub prompt_tokens: f64,
    /// Mean completion tokens per run.
    pub completion_tokens: f64,
    /// Every token spent, over successes (`null` in JSON without a success).
    pub tokens_per_success: Option<f64>,
    /// Every tool call made, over successes.
    pub calls_per_success: Option<f64>,
    /// Mean wall time per run, in milliseconds.
    pub wall_ms: f64,
}

impl Figures {
    fn of<'a>(runs: impl Iterator<Item = &'a RunResult>) -> Self {
        let runs: Vec<&RunResult> = runs.collect();
        let n = runs.len();
        let successes = runs.iter().filter(|r| r.success).count();
        let mut calls_by_outcome = BTreeMap::new();
        for r in &runs {
            for (k, v) in &r.outcomes {
                *calls_by_outcome.entry(k.clone()).or_default() += v;
            }
        }
        let sum = |f: &dyn Fn(&RunResult) -> f64| runs.iter().map(|r| f(r)).sum::<f64>();
        let mean = |total: f64| if n == 0 { 0.0 } else { total / n as f64 };
        let tokens = sum(&|r| (r.prompt_tokens + r.completion_tokens) as f64);
        let calls = sum(&|r| r.calls as f64);
        let (ci_low, ci_high) = wilson(successes, n);
        Self {
            runs: n,
            successes,
            success_rate: if n == 0 { 0.0 } else { successes as f64 / n as f64 },
            ci_low,
            ci_high,
            steps: mean(sum(&|r| f64::from(r.steps))),
            calls_by_outcome,
            prompt_tokens: mean(sum(&|r| r.prompt_tokens as f64)),
            completion_tokens: mean(sum(&|r| r.completion_tokens as f64)),
            tokens_per_success: (successes > 0).then(|| tokens / successes as f64),
            calls_per_success: (successes > 0).then(|| calls / successes as f64),
            wall_ms: mean(sum(&|r| r.wall_ms as f64)),
        }
    }
}

/// The 95 % Wilson score interval of `k` successes in `n` runs.
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_964_f64;
    let (n, p) = (n as f64, k as f64 / n as f64);
    let denominator = 1.0 + z * z / n;
    let center = (p + z * z / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denominator;
    ((center - half).max(0.0), (center + half).min(1.0))
}

impl Report {
    /// The runs of one task in one mode.
    pub fn cell(&self, task: &str, mode: Mode) -> Figures {
        Figures::of(self.runs.iter().filter(|r| r.task == task && r.mode == mode))
    }

    /// Every run of one mode.
    pub fn mode(&self, mode: Mode) -> Figures {
        Figures::of(self.runs.iter().filter(|r| r.mode == mode))
    }

    /// Every run.
    pub fn overall(&self) -> Figures {
        Figures::of(self.runs.iter())
    }

    /// Why the failed runs of a task in a mode failed, each reason once.
    pub fn reasons(&self, task: &str, mode: Mode) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in self.runs.iter().filter(|r| r.task == task && r.mode == mode && !r.success) {
            let mut why: Vec<String> =
                r.checks.iter().filter(|c| !c.pass).map(|c| format!("{}: {}", c.check, c.why)).collect();
            if let Some(e) = &r.error {
                why.push(format!("error: {e}"));
            }
            for w in why {
                if !out.contains(&w) {
                    out.push(w);
                }
            }
        }
        out
    }

    /// The markdown report.
    pub fn markdown(&self) -> String {
        let mut out = format!(
            "# toolgate eval: {} ({} tool calls, {} run(s) per task and exposure)\n\n",
            self.model, self.tool_calling, self.repeat
        );
        out.push_str("| task |");
        for m in &self.modes {
            let _ = write!(out, " {} |", m.as_str());
        }
        out.push_str("\n| --- |");
        for _ in &self.modes {
            out.push_str(" --- |");
        }
        out.push('\n');
        for (id, _) in &self.tasks {
            let _ = write!(out, "| {id} |");
            for m in &self.modes {
                let f = self.cell(id, *m);
                let mark = if f.successes == f.runs {
                    "pass"
                } else if f.successes == 0 {
                    "FAIL"
                } else {
                    "part"
                };
                let _ = write!(
                    out,
                    " {mark} {}/{} · {:.1} steps · {} · {:.0} tok · {:.1} s |",
                    f.successes,
                    f.runs,
                    f.steps,
                    outcomes(&f.calls_by_outcome),
                    f.prompt_tokens + f.completion_tokens,
                    f.wall_ms / 1000.0
                );
            }
            out.push('\n');
        }
        out.push_str("\n| exposure | success | 95% interval | tokens per success | calls per success | calls by outcome |\n");
        out.push_str("| --- | ---: | --- | ---: | ---: | --- |\n");
        let rows = self.modes.iter().map(|m| (m.as_str().to_owned(), self.mode(*m)));
        for (name, f) in rows.chain([("overall".to_owned(), self.overall())]) {
            let _ = writeln!(
                out,
                "| {name} | {:.1}% ({}/{}) | {:.1}–{:.1}% | {} | {} | {} |",
                f.success_rate * 100.0,
                f.successes,
                f.runs,
                f.ci_low * 100.0,
                f.ci_high * 100.0,
                f.tokens_per_success.map_or("–".into(), |t| format!("{t:.0}")),
                f.calls_per_success.map_or("–".into(), |c| format!("{c:.1}")),
                outcomes(&f.calls_by_outcome)
            );
        }
        let mut failures = String::new();
        for (id, _) in &self.tasks {
            for m in &self.modes {
                for why in self.reasons(id, *m) {
                    let _ = writeln!(failures, "- {id} × {}: {why}", m.as_str());
                }
            }
        }
        if !failures.is_empty() {
            out.push_str("\n## Why runs failed\n\n");
            out.push_str(&failures);
        }
        out
    }

    /// The JSON report: `success_rate` per task × exposure, per exposure and overall.
    pub fn json(&self) -> Value {
        let tasks: Vec<Value> = self
            .tasks
            .iter()
            .map(|(id, title)| {
                let exposures: serde_json::Map<String, Value> = self
                    .modes
                    .iter()
                    .map(|m| {
                        let mut cell = serde_json::to_value(self.cell(id, *m)).unwrap_or(Value::Null);
                        cell["failures"] = json!(self.reasons(id, *m));
                        (m.as_str().to_owned(), cell)
                    })
                    .collect();
                json!({"id": id, "title": title, "exposures": exposures})
            })
            .collect();
        let exposures: serde_json::Map<String, Value> = self
            .modes
            .iter()
            .map(|m| (m.as_str().to_owned(), serde_json::to_value(self.mode(*m)).unwrap_or(Value::Null)))
            .collect();
        json!({
            "model": self.model,
            "tool_calling": self.tool_calling,
            "repeat": self.repeat,
            "tasks": tasks,
            "exposures": exposures,
            "overall": self.overall(),
            "runs": self.runs,
        })
    }
}

fn outcomes(map: &BTreeMap<String, usize>) -> String {
    if map.is_empty() {
        return "no calls".into();
    }
    map.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::wilson;

    #[test]
    fn wilson_intervals() {
        let (lo, hi) = wilson(3, 3);
        assert!((lo - 0.438).abs() < 0.01 && hi == 1.0, "{lo} {hi}");
        let (lo, hi) = wilson(0, 3);
        assert!(lo == 0.0 && (hi - 0.562).abs() < 0.01, "{lo} {hi}");
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }
}
