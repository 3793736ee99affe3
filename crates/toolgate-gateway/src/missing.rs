//! Missing required values asked of the person instead of refused (opt-in:
//! `[limits] ask_for_missing`): when a call fails only because required
//! top-level fields are absent, and the person behind it can be asked, they
//! get a form of exactly those fields (flat primitives, as elicitation
//! allows); what they give is checked like any parameter. Never for
//! identity fields (the caller's context has them) nor for secrets or
//! `writeOnly` fields (a form is no place for them): such a call is refused
//! as before, and so is one the person declines.

use std::time::Duration;

use serde_json::{Map, Value, json};
use toolgate_core::{Answer, Asker, Question, ToolError, ToolSpec, names::is_injected_field};

use crate::trace::{CallTrace, is_secret};

/// The keywords of a primitive property a form can carry.
const FORM_KEYWORDS: &[&str] =
    &["type", "title", "description", "enum", "minimum", "maximum", "minLength", "maxLength", "default"];
/// The string formats elicitation knows.
const FORM_FORMATS: &[&str] = &["email", "uri", "date", "date-time"];

/// The form for `error`'s missing fields, when every problem of the call is
/// a missing required top-level field that may be asked for; `None` otherwise.
pub(crate) fn question(
    spec: &ToolSpec,
    params: &Value,
    error: &ToolError,
) -> Option<(Question, Vec<String>)> {
    let given = params.as_object()?;
    let root = spec.input_schema.as_object()?;
    let properties = root.get("properties")?.as_object()?;
    let missing: Vec<String> = root
        .get("required")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .filter(|name| !given.contains_key(*name))
        .map(str::to_owned)
        .collect();
    if missing.is_empty() {
        return None;
    }
    // Every reported problem is one of these absences, nothing else.
    let problems = error.details.as_ref()?.get("errors")?.as_array()?;
    let only_missing = problems.iter().all(|p| {
        let pointer = p.get("pointer").and_then(Value::as_str).unwrap_or_default();
        missing.iter().any(|name| pointer == format!("/{name}"))
    });
    if problems.is_empty() || !only_missing {
        return None;
    }
    let mut form = Map::new();
    let mut labels = Vec::new();
    for name in &missing {
        if is_injected_field(name) || is_secret(name) {
            return None;
        }
        let field = properties.get(name)?.as_object()?;
        if field.get("writeOnly") == Some(&Value::Bool(true)) {
            return None;
        }
        let kind = field.get("type").and_then(Value::as_str)?;
        if !["string", "integer", "number", "boolean"].contains(&kind) {
            return None;
        }
        let mut flat: Map<String, Value> = field
            .iter()
            .filter(|(k, _)| FORM_KEYWORDS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(format) = field.get("format").and_then(Value::as_str).filter(|f| FORM_FORMATS.contains(f))
        {
            flat.insert("format".into(), json!(format));
        }
        flat.entry("title").or_insert_with(|| json!(name.replace('_', " ")));
        labels.push(format!("`{name}`"));
        form.insert(name.clone(), Value::Object(flat));
    }
    let message = format!(
        "{} needs {} to go on; fill in what you want, or decline and nothing is done.",
        spec.display_title(),
        labels.join(", ")
    );
    let schema = json!({"type": "object", "properties": form, "required": missing});
    Some((Question { message, schema }, missing))
}

/// Ask for the missing fields of `params`; the parameters with what the
/// person gave, or the refusal to answer the call with.
pub(crate) async fn ask(
    asker: &dyn Asker,
    spec: &ToolSpec,
    mut params: Value,
    error: ToolError,
    timeout: Duration,
    trace: Option<&CallTrace>,
) -> Result<Value, ToolError> {
    let Some((question, missing)) = question(spec, &params, &error) else { return Err(error) };
    let answer = match tokio::time::timeout(timeout, asker.ask(&question)).await {
        Ok(answer) => answer,
        Err(_) => Answer::Unanswered(format!("no answer within {} s", timeout.as_secs())),
    };
    let outcome = match &answer {
        Answer::Accept(_) => "given",
        Answer::Decline => "declined",
        Answer::Cancel => "cancelled",
        Answer::Unanswered(_) => "unanswered",
        Answer::Unreachable(_) => "unreachable",
    };
    tracing::info!(tool = %spec.name, fields = missing.len(), outcome, "asked the user for missing values");
    if let Some(trace) = trace {
        trace.asked(&question.message, outcome);
    }
    if let Answer::Unreachable(_) = answer {
        return Err(error);
    }
    let Answer::Accept(Value::Object(given)) = answer else {
        let mut error = error;
        error.message = format!(
            "{} The user was asked for them and did not give them; do not invent them.",
            error.message
        );
        return Err(error);
    };
    if let Some(map) = params.as_object_mut() {
        for name in missing {
            if let Some(value) = given.get(&name) {
                map.insert(name, value.clone());
            }
        }
    }
    Ok(params)
}
