//! The orchestration block's rules: mode, input schema, bindings and routes.

use std::time::Duration;

use serde_json::Value;
use toolgate_core::names::{is_namespaced_tool_name, is_tool_name};

use super::MAX_ORCHESTRATED_NAME;
use super::lines::{Checker, Seg};
use super::raw::RawOrchestration;
use crate::error::ErrorKind;
use crate::skill::{
    Binding, DEFAULT_MAX_PARALLEL, DEFAULT_STEP_TIMEOUT_MS, DEFAULT_TIMEOUT_MS, Mode, Orchestration,
    Reference, reference,
};

pub(super) fn check_orchestration(
    cx: &mut Checker<'_>,
    raw: RawOrchestration,
    id: &str,
) -> Option<Orchestration> {
    const O: Seg<'static> = Seg::Key("orchestration");
    let before = cx.errors.len();
    cx.note(&[O]);
    if id.len() > MAX_ORCHESTRATED_NAME {
        cx.error(
            &[Seg::Key("name")],
            ErrorKind::Field,
            format!(
                "name `{id}` is {} characters; a skill with an orchestration becomes the tool `run_<name>`, so its name may have at most {MAX_ORCHESTRATED_NAME}; shorten it",
                id.len()
            ),
        );
    }
    let mode = raw.mode.unwrap_or_else(|| {
        cx.error(
            &[O],
            ErrorKind::Field,
            "orchestration.mode is missing; use sequential, parallel or routing".into(),
        );
        Mode::Sequential
    });

    let schema = raw.input_schema.unwrap_or_else(|| {
        cx.error(
            &[O],
            ErrorKind::Field,
            "orchestration.input_schema is missing; describe the run's input as a JSON Schema object (`type: object`, `properties`, `required`)".into(),
        );
        Value::Null
    });
    let properties: Option<Vec<String>> =
        schema.get("properties").and_then(Value::as_object).map(|p| p.keys().cloned().collect());
    if !schema.is_null() {
        let schema_path = [O, Seg::Key("input_schema")];
        if !schema.is_object() || schema.get("type").and_then(Value::as_str) != Some("object") {
            cx.error(
                &schema_path,
                ErrorKind::Field,
                "orchestration.input_schema must be a JSON Schema object with `type: object`".into(),
            );
        } else if schema.get("additionalProperties").is_some_and(|v| *v != Value::Bool(false)) {
            cx.error(
                &schema_path,
                ErrorKind::Field,
                "orchestration.input_schema allows additional properties; remove `additionalProperties` (the run tool's schema is closed)".into(),
            );
        }
    }
    let known_fields = properties.as_ref().map(|p| p.join(", ")).unwrap_or_default();

    if raw.bindings.is_empty() {
        cx.error(
            &[O],
            ErrorKind::Field,
            "orchestration.bindings is empty; bind at least one tool (`- tool: <name>`)".into(),
        );
    }
    let mut bindings = Vec::with_capacity(raw.bindings.len());
    for (i, b) in raw.bindings.into_iter().enumerate() {
        let at = |key: &'static str| [O, Seg::Key("bindings"), Seg::Index(i), Seg::Key(key)];
        cx.note(&at("tool"));
        if !is_tool_name(&b.tool) && !is_namespaced_tool_name(&b.tool) {
            cx.error(
                &at("tool"),
                ErrorKind::Field,
                format!(
                    "orchestration.bindings[{i}].tool `{}` is not a tool name; use the tool's verb_noun snake_case name, or an upstream MCP server's tool as `<upstream>__<tool>`",
                    b.tool
                ),
            );
        }
        if let Some(params) = &b.params {
            if !params.is_object() {
                cx.error(
                    &at("params"),
                    ErrorKind::Field,
                    format!(
                        "orchestration.bindings[{i}].params must be a mapping of parameter names to values or `$input.<field>`; leave it out to pass the whole input"
                    ),
                );
            }
            let mut refs = Vec::new();
            collect_refs(params, &mut refs);
            for r in refs {
                match reference(r) {
                    Reference::Bad => cx.error(
                        &at("params"),
                        ErrorKind::Field,
                        format!(
                            "orchestration.bindings[{i}].params uses `{r}`; write `$input` (the whole input), `$input.<field>`, or `$$` for a literal `$`"
                        ),
                    ),
                    Reference::Input(path) => {
                        if let (Some(first), Some(props)) = (path.first(), &properties)
                            && !props.iter().any(|p| p == first)
                        {
                            cx.error(
                                &at("params"),
                                ErrorKind::Field,
                                format!(
                                    "orchestration.bindings[{i}].params reads `{r}`, but input_schema has no property `{first}`; use one of: {known_fields}"
                                ),
                            );
                        }
                    }
                    Reference::Literal(_) => {}
                }
            }
        }
        if mode != Mode::Routing && b.when.is_some() {
            cx.error(
                &at("when"),
                ErrorKind::Field,
                format!(
                    "orchestration.bindings[{i}].when is only for mode routing; remove it or set `mode: routing`"
                ),
            );
        }
        bindings.push(Binding { tool: b.tool, params: b.params, when: b.when });
    }

    match mode {
        Mode::Routing => check_routes(cx, &raw.route_by, &schema, &properties, &bindings),
        _ => {
            if raw.route_by.is_some() {
                cx.error(
                    &[O, Seg::Key("route_by")],
                    ErrorKind::Field,
                    "orchestration.route_by is only for mode routing; remove it or set `mode: routing`"
                        .into(),
                );
            }
        }
    }
    if mode == Mode::Routing && raw.on_error.is_some() {
        cx.error(
            &[O, Seg::Key("on_error")],
            ErrorKind::Field,
            "orchestration.on_error does not apply to mode routing (it runs one tool); remove it".into(),
        );
    }
    if let Some(n) = raw.max_parallel {
        if mode != Mode::Parallel {
            cx.error(
                &[O, Seg::Key("max_parallel")],
                ErrorKind::Field,
                "orchestration.max_parallel is only for mode parallel; remove it or set `mode: parallel`"
                    .into(),
            );
        } else if n == 0 {
            cx.error(
                &[O, Seg::Key("max_parallel")],
                ErrorKind::Field,
                "orchestration.max_parallel is 0; use 1 or more".into(),
            );
        }
    }
    for (key, value) in [("step_timeout_ms", raw.step_timeout_ms), ("timeout_ms", raw.timeout_ms)] {
        if value == Some(0) {
            cx.error(
                &[O, Seg::Key(key)],
                ErrorKind::Field,
                format!("orchestration.{key} is 0; give a limit in milliseconds, e.g. 30000"),
            );
        }
    }

    (cx.errors.len() == before).then(|| Orchestration {
        mode,
        input_schema: schema,
        bindings,
        route_by: raw.route_by,
        on_error: raw.on_error.unwrap_or_default(),
        max_parallel: raw.max_parallel.unwrap_or(DEFAULT_MAX_PARALLEL),
        step_timeout: Duration::from_millis(raw.step_timeout_ms.unwrap_or(DEFAULT_STEP_TIMEOUT_MS)),
        timeout: Duration::from_millis(raw.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)),
    })
}

/// Routing rules: a `route_by` field of the input, one `when` per binding,
/// no value twice, and an `enum` on the field (if any) that matches the bindings exactly.
pub(super) fn check_routes(
    cx: &mut Checker<'_>,
    route_by: &Option<String>,
    schema: &Value,
    properties: &Option<Vec<String>>,
    bindings: &[Binding],
) {
    const O: Seg<'static> = Seg::Key("orchestration");
    let Some(route_by) = route_by else {
        cx.error(
            &[O],
            ErrorKind::Field,
            "orchestration.route_by is missing; mode routing needs the input field whose value picks the binding".into(),
        );
        return;
    };
    cx.note(&[O, Seg::Key("route_by")]);
    if let Some(props) = properties
        && !props.iter().any(|p| p == route_by)
    {
        cx.error(
            &[O, Seg::Key("route_by")],
            ErrorKind::Field,
            format!(
                "orchestration.route_by names `{route_by}`, which input_schema does not define; use one of: {}",
                props.join(", ")
            ),
        );
        return;
    }
    let mut seen: Vec<(&Value, usize)> = Vec::new();
    for (i, b) in bindings.iter().enumerate() {
        let at = [O, Seg::Key("bindings"), Seg::Index(i), Seg::Key("when")];
        match &b.when {
            None => cx.error(
                &[O, Seg::Key("bindings"), Seg::Index(i)],
                ErrorKind::Field,
                format!(
                    "orchestration.bindings[{i}].when is missing; routing needs the `{route_by}` value that picks `{}`",
                    b.tool
                ),
            ),
            Some(v) if !(v.is_string() || v.is_number() || v.is_boolean()) => cx.error(
                &at,
                ErrorKind::Field,
                format!("orchestration.bindings[{i}].when must be a string, number or boolean, not {v}"),
            ),
            Some(v) => match seen.iter().find(|(w, _)| *w == v) {
                Some((_, j)) => cx.error(
                    &at,
                    ErrorKind::Field,
                    format!(
                        "orchestration.bindings[{i}].when {v} is also the value of bindings[{j}]; each value must pick one binding"
                    ),
                ),
                None => seen.push((v, i)),
            },
        }
    }
    let allowed =
        schema.pointer(&format!("/properties/{}/enum", pointer_escape(route_by))).and_then(Value::as_array);
    if let Some(allowed) = allowed {
        let list = allowed.iter().map(Value::to_string).collect::<Vec<_>>().join(", ");
        for value in allowed {
            if !bindings.iter().any(|b| b.when.as_ref() == Some(value)) {
                cx.error(
                    &[O, Seg::Key("input_schema")],
                    ErrorKind::Field,
                    format!(
                        "input_schema allows `{route_by}` = {value}, which matches no binding; add a binding with `when: {value}` or drop the value from the enum"
                    ),
                );
            }
        }
        for (i, b) in bindings.iter().enumerate() {
            if let Some(v) = b.when.as_ref().filter(|v| !allowed.contains(v)) {
                cx.error(
                    &[O, Seg::Key("bindings"), Seg::Index(i), Seg::Key("when")],
                    ErrorKind::Field,
                    format!(
                        "orchestration.bindings[{i}].when {v} is not an allowed value of `{route_by}` ({list}), so this binding can never run; fix the value or add it to the enum"
                    ),
                );
            }
        }
    }
}

pub(super) fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

pub(super) fn collect_refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) if s.starts_with('$') => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}
