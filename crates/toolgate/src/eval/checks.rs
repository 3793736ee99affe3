//! The checks: each says pass or fail and, when it fails, why, in words a
//! person reads in the report. Three are added to every task: every message
//! was answered, no call carried an identity field, and no id was invented
//! (each id a call sent had been read before, in the user's words or a
//! tool's answer).

use chrono::NaiveDate;
use serde::Serialize;
use serde_json::{Map, Value};
use toolgate_core::{Caller, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};

use super::runner::{Call, Transcript};
use super::suite::{Check, Task, dates, dates_in};

/// One check's result.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Verdict {
    /// What was checked.
    pub check: String,
    /// Whether it held.
    pub pass: bool,
    /// Why not (empty when it held).
    pub why: String,
}

impl Verdict {
    fn new(check: impl Into<String>, failure: Option<String>) -> Self {
        let why = failure.unwrap_or_default();
        Self { check: check.into(), pass: why.is_empty(), why }
    }
}

/// Parameter names that carry who the caller is: the gateway takes them from the key.
pub const IDENTITY_FIELDS: [&str; 12] = [
    "user_id",
    "userid",
    "user",
    "username",
    "role",
    "tenant",
    "tenant_id",
    "session_id",
    "sessionid",
    "token",
    "access_token",
    "authorization",
];

/// Every check of the task (its own, then the default ones).
pub async fn verify(
    task: &Task,
    transcript: &Transcript,
    gateway: &Gateway,
    reader: &Caller,
    today: NaiveDate,
) -> Vec<Verdict> {
    let mut out = Vec::new();
    for check in &task.checks {
        out.push(one(check, task, transcript, gateway, reader, today).await);
    }
    out.push(answered(task, transcript));
    out.push(no_identity(transcript));
    out.push(no_invented_ids(transcript));
    out
}

async fn one(
    check: &Check,
    task: &Task,
    t: &Transcript,
    gateway: &Gateway,
    reader: &Caller,
    today: NaiveDate,
) -> Verdict {
    match check {
        Check::State { tool, params, path, filter, count, about } => {
            let filter = resolve(filter, today);
            let name =
                about.clone().unwrap_or_else(|| format!("{tool} has {count} item(s) with {}", show(&filter)));
            let ctx = ToolContext::new(reader.clone());
            let params = dates_in(&Value::Object(params.clone()), today);
            let envelope = gateway.execute(&ctx, tool, params, &CallOptions::default()).await;
            let Some(result) = envelope.result.filter(|_| envelope.success) else {
                let why = envelope.error.map(|e| format!("{}: {}", e.code, e.message)).unwrap_or_default();
                return Verdict::new(name, Some(format!("reading the state failed ({why})")));
            };
            let items = match path {
                Some(p) => result.pointer(p).cloned().unwrap_or(Value::Null),
                None => Value::Array(vec![result]),
            };
            let items = match items {
                Value::Array(items) => items,
                Value::Null => Vec::new(),
                one => vec![one],
            };
            let found = items.iter().filter(|i| matches(i, &filter)).count();
            Verdict::new(name, (found != *count).then(|| format!("found {found}, expected {count}")))
        }
        Check::Calls { tool, filter, outcome, turn, min, max, about } => {
            let filter = resolve(filter, today);
            let names: Vec<&str> = tool.split('|').collect();
            let counted: Vec<&Call> = t
                .calls
                .iter()
                .filter(|c| names.contains(&c.tool.as_str()) && matches(&c.params, &filter))
                .filter(|c| turn.is_none_or(|n| c.turn == n))
                .filter(|c| match outcome.as_deref() {
                    None => true,
                    Some("ok") => c.success,
                    Some("failed") => !c.success,
                    Some(code) => c.code.as_deref() == Some(code),
                })
                .collect();
            let n = counted.len();
            let mut bounds = Vec::new();
            if let Some(min) = min {
                bounds.push(format!(">= {min}"));
            }
            if let Some(max) = max {
                bounds.push(format!("<= {max}"));
            }
            let name = about.clone().unwrap_or_else(|| {
                let mut name = format!("calls of {tool}");
                if !filter.is_empty() {
                    name.push_str(&format!(" with {}", show(&filter)));
                }
                if let Some(o) = outcome {
                    name.push_str(&format!(" answered {o}"));
                }
                if let Some(n) = turn {
                    name.push_str(&format!(" in message {n}"));
                }
                format!("{name}: {}", bounds.join(" and "))
            });
            let low = min.is_some_and(|m| n < m);
            let high = max.is_some_and(|m| n > m);
            let why = (low || high).then(|| {
                let mut why = format!("{n} such call(s)");
                let other: Vec<String> = t
                    .calls
                    .iter()
                    .filter(|c| names.contains(&c.tool.as_str()))
                    .map(|c| format!("{} -> {}", compact(&c.params), c.outcome()))
                    .take(3)
                    .collect();
                if !other.is_empty() {
                    why.push_str(&format!("; its calls: {}", other.join("; ")));
                }
                why
            });
            Verdict::new(name, why)
        }
        Check::Sequence { tools } => {
            let name = format!("order: {}", tools.join(" -> "));
            let mut why = None;
            for pair in tools.windows(2) {
                let first_next = t.calls.iter().position(|c| c.tool == pair[1]);
                let Some(next) = first_next else {
                    why = Some(format!("{} was never called", pair[1]));
                    break;
                };
                if !t.calls[..next].iter().any(|c| c.tool == pair[0] && c.success) {
                    why = Some(format!("{} was called before {} had answered", pair[1], pair[0]));
                    break;
                }
            }
            Verdict::new(name, why)
        }
        Check::Confirmed { tool, param, after_turn } => {
            let name = format!("{tool} with {param}=true only after the user said yes");
            let sent = t.answers.len() > *after_turn;
            let early: Vec<&Call> = t
                .calls
                .iter()
                .filter(|c| {
                    c.tool == *tool && c.params[param.as_str()] == Value::Bool(true) && c.turn < *after_turn
                })
                .collect();
            let why = if !early.is_empty() {
                Some(format!(
                    "{param}=true was sent before the assistant asked (in message {})",
                    early[0].turn
                ))
            } else if !sent {
                Some("the assistant never asked, so the user never said yes".into())
            } else {
                None
            };
            Verdict::new(name, why)
        }
        Check::FollowsSignal { signal } => {
            let name = format!("follows `{signal}`");
            let mut why = None;
            let mut met = false;
            for (i, call) in t.calls.iter().enumerate() {
                let Some(s) = call.signals.iter().find(|s| s["kind"] == signal.as_str()) else { continue };
                met = true;
                let later = &t.calls[i + 1..];
                if let Some(again) = later.iter().find(|c| c.tool == call.tool) {
                    why = Some(format!(
                        "{} was called again after `{signal}` ({})",
                        call.tool,
                        compact(&again.params)
                    ));
                    break;
                }
                if let Some(other) = s["use_tool"].as_str()
                    && !later.iter().any(|c| c.tool == other)
                {
                    why = Some(format!("`{signal}` named {other}, which was not called"));
                    break;
                }
            }
            if !met && why.is_none() {
                why = Some(format!("no call answered `{signal}`"));
            }
            Verdict::new(name, why)
        }
        Check::OnlyParams { tool, allowed } => {
            let name = format!("{tool} sent only {}", allowed.join(", "));
            let why = t.calls.iter().filter(|c| c.tool == *tool).find_map(|c| {
                let extra: Vec<&String> = c
                    .params
                    .as_object()
                    .map(|m| m.keys().filter(|k| !allowed.contains(k)).collect())
                    .unwrap_or_default();
                (!extra.is_empty()).then(|| {
                    format!(
                        "a call sent {} ({} characters of parameters)",
                        extra.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", "),
                        c.params.to_string().len()
                    )
                })
            });
            let why = why.or_else(|| {
                (!t.calls.iter().any(|c| c.tool == *tool)).then(|| format!("{tool} was never called"))
            });
            Verdict::new(name, why)
        }
        Check::Answer { turn, any, asks, about } => {
            let index = turn.unwrap_or(task.turns.len().saturating_sub(1));
            let words: Vec<String> = any.iter().map(|w| dates(w, today)).collect();
            let name = about.clone().unwrap_or_else(|| {
                let mut name = format!("answer to message {index}");
                if !words.is_empty() {
                    name.push_str(&format!(" mentions one of {}", words.join(" / ")));
                }
                if *asks {
                    name.push_str(" and asks");
                }
                name
            });
            let why = match t.answers.get(index) {
                None => Some(format!("message {index} was never sent")),
                Some(answer) => {
                    let lower = answer.to_lowercase();
                    if answer.trim().is_empty() {
                        Some("there was no answer".into())
                    } else if !words.is_empty() && !words.iter().any(|w| lower.contains(&w.to_lowercase())) {
                        Some(format!("the answer was: {}", clip(answer, 160)))
                    } else if *asks && !answer.contains('?') {
                        Some(format!("it asked nothing: {}", clip(answer, 160)))
                    } else {
                        None
                    }
                }
            };
            Verdict::new(name, why)
        }
    }
}

/// Every message that was sent got an answer (no step limit, deadline, repeated failure or model error).
fn answered(task: &Task, t: &Transcript) -> Verdict {
    let name = "every message answered";
    let why = t
        .stops
        .iter()
        .enumerate()
        .find(|(_, s)| **s != toolgate_agent::StopReason::Answer)
        .map(|(i, s)| format!("message {i} stopped with {}", s.as_str()));
    let why = why.or_else(|| (t.stops.is_empty() && !task.turns.is_empty()).then(|| "nothing ran".into()));
    Verdict::new(name, why)
}

fn no_identity(t: &Transcript) -> Verdict {
    let why = t.calls.iter().find_map(|c| {
        let keys = c.params.as_object()?;
        keys.keys()
            .find(|k| IDENTITY_FIELDS.contains(&k.to_lowercase().as_str()))
            .map(|k| format!("{} was sent `{k}`", c.tool))
    });
    Verdict::new("no call carried a user id, role or token", why)
}

fn no_invented_ids(t: &Transcript) -> Verdict {
    let why = t.calls.iter().filter(|c| c.is_business()).find_map(|c| {
        let keys = c.params.as_object()?;
        keys.iter().find_map(|(k, v)| {
            if !(k == "id" || k.ends_with("_id")) {
                return None;
            }
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return None,
            };
            let read = &t.corpus[..c.seen.min(t.corpus.len())];
            (!text.is_empty() && !contains_token(read, &text))
                .then(|| format!("{} got {k}={text}, which nothing had shown", c.tool))
        })
    });
    Verdict::new("no invented ids", why)
}

/// `needle` appears in `hay` not inside a longer run of letters or digits.
fn contains_token(hay: &str, needle: &str) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    hay.match_indices(needle).any(|(i, _)| {
        let before = hay[..i].chars().next_back().is_none_or(|c| !word(c));
        let after = hay[i + needle.len()..].chars().next().is_none_or(|c| !word(c));
        before && after
    })
}

fn resolve(filter: &Map<String, Value>, today: NaiveDate) -> Map<String, Value> {
    match dates_in(&Value::Object(filter.clone()), today) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Every field of `filter` equals the item's (numbers compared as numbers).
fn matches(item: &Value, filter: &Map<String, Value>) -> bool {
    filter.iter().all(|(k, want)| {
        let got = &item[k.as_str()];
        match (got.as_f64(), want.as_f64()) {
            (Some(a), Some(b)) => (a - b).abs() < 1e-9,
            _ => got == want,
        }
    })
}

fn show(filter: &Map<String, Value>) -> String {
    if filter.is_empty() {
        return "any fields".into();
    }
    filter
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn compact(params: &Value) -> String {
    clip(&params.to_string(), 120)
}

fn clip(text: &str, max: usize) -> String {
    let text = text.replace('\n', " ");
    if text.chars().count() <= max {
        return text;
    }
    format!("{}…", text.chars().take(max).collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_count_as_read_only_as_whole_tokens() {
        assert!(contains_token("| 1234 | APPROVED |", "1234"));
        assert!(!contains_token("| 12345 | APPROVED |", "1234"));
        assert!(contains_token("Plan plan_3f2a for", "plan_3f2a"));
        assert!(!contains_token("", "7"));
    }

    #[test]
    fn numbers_match_as_numbers() {
        let filter: Map<String, Value> =
            serde_json::from_value(serde_json::json!({"weight_kg": 72.4, "status": "CANCELLED"})).unwrap();
        assert!(matches(&serde_json::json!({"weight_kg": 72.40, "status": "CANCELLED", "x": 1}), &filter));
        assert!(!matches(&serde_json::json!({"weight_kg": 72.4, "status": "APPROVED"}), &filter));
    }
}
