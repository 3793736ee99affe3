//! A gateway's tool specs and envelopes in MCP's shapes: the tool (schema,
//! annotations, output schema), its arguments on the way in, the envelope as
//! `structuredContent` on the way out. Kept apart from the handler so that
//! what a client sees of a tool is stated in one place.

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::Value;
use toolgate_core::{Effect, Envelope, ToolSpec};
use toolgate_gateway::toolgate_schema::export;

/// The envelope's JSON Schema, as every tool's `outputSchema`.
static ENVELOPE_SCHEMA: LazyLock<Arc<JsonObject>> = LazyLock::new(|| match Envelope::json_schema() {
    Value::Object(map) => Arc::new(map),
    _ => Arc::new(JsonObject::new()),
});

/// The envelope as `structuredContent`: the same JSON as
/// [`Envelope::to_value`], but the result (the bulk of it) is moved, not
/// copied; only the small parts go through serde.
pub(crate) fn structured(envelope: Envelope) -> Value {
    let to_value = |value: Result<Value, serde_json::Error>| value.unwrap_or(Value::Null);
    let mut map = JsonObject::with_capacity(5);
    map.insert("success".to_owned(), Value::Bool(envelope.success));
    map.insert("result".to_owned(), envelope.result.unwrap_or(Value::Null));
    map.insert("error".to_owned(), envelope.error.map_or(Value::Null, |e| to_value(serde_json::to_value(e))));
    map.insert("signals".to_owned(), to_value(serde_json::to_value(envelope.signals)));
    map.insert("metadata".to_owned(), to_value(serde_json::to_value(envelope.metadata)));
    Value::Object(map)
}

/// A tool spec as an MCP tool: schema, annotations from the effect, the
/// envelope as output schema.
///
/// A schema whose root is a union (a route table's `oneOf` per operation) is
/// published wrapped under one `request` property, as the Anthropic export
/// does: clients that forward MCP schemas to model APIs (which refuse a root
/// union) can then use the tool; [`unwrap_args`] undoes it on the way in.
pub(crate) fn mcp_tool(spec: &ToolSpec) -> Option<Tool> {
    let wrapped;
    let published = if export::needs_wrapper(&spec.input_schema) {
        wrapped = export::anthropic(spec)["input_schema"].take();
        &wrapped
    } else {
        &spec.input_schema
    };
    let Value::Object(schema) = published else {
        return None;
    };
    let annotations = ToolAnnotations::new()
        .read_only(spec.effect.is_read())
        .destructive(matches!(spec.effect, Effect::Write { idempotent: false }))
        .idempotent(spec.effect.is_retry_safe());
    let tool = Tool::new(
        Cow::Owned(spec.name.clone()),
        Cow::Owned(spec.description.clone()),
        Arc::new(schema.clone()),
    )
    .with_title(spec.display_title())
    .with_raw_output_schema(ENVELOPE_SCHEMA.clone())
    .with_annotations(annotations);
    Some(match icons(&spec.icons) {
        Some(icons) => tool.with_icons(icons),
        None => tool,
    })
}

/// toolgate's icon: the web page's tab and the server's `icons` in `initialize`.
pub(crate) const ICON_SVG: &str = "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'>\
<rect width='16' height='16' rx='3' fill='#2b5797'/>\
<path d='M4 13V6h8v7M8 6v7' stroke='#fff' stroke-width='1.5' fill='none'/></svg>";

/// [`ICON_SVG`] as a `data:` URI (percent-encoded, no base64 needed), for
/// clients that show the server's icon.
pub(crate) fn server_icon() -> rmcp::model::Icon {
    let mut uri = String::from("data:image/svg+xml,");
    for c in ICON_SVG.chars() {
        match c {
            '<' => uri.push_str("%3C"),
            '>' => uri.push_str("%3E"),
            '#' => uri.push_str("%23"),
            ' ' => uri.push_str("%20"),
            '%' => uri.push_str("%25"),
            c => uri.push(c),
        }
    }
    let mut icon = rmcp::model::Icon::new(uri);
    icon.mime_type = Some("image/svg+xml".to_owned());
    icon.sizes = Some(vec!["any".to_owned()]);
    icon
}

/// A tool's icons as MCP says them; `None` (left out) when it has none.
fn icons(icons: &[toolgate_core::ToolIcon]) -> Option<Vec<rmcp::model::Icon>> {
    (!icons.is_empty()).then(|| {
        icons
            .iter()
            .map(|icon| {
                let mut out = rmcp::model::Icon::new(icon.src.clone());
                out.mime_type = icon.mime_type.clone();
                out
            })
            .collect()
    })
}

/// The JSON object `tools/list` carries for a tool, exactly as this server
/// sends it (for measuring what a model reads, e.g. the token budget).
pub fn tool_listing(spec: &ToolSpec) -> Value {
    mcp_tool(spec).and_then(|tool| serde_json::to_value(tool).ok()).unwrap_or(Value::Null)
}

/// Arguments for a tool whose schema [`mcp_tool`] published wrapped:
/// `{"request": {...}}` becomes `{...}`; anything else is passed as is
/// (a client may also send the unwrapped form).
pub(crate) fn unwrap_args(gateway: &toolgate_gateway::Gateway, name: &str, args: Value) -> Value {
    match gateway.spec(name) {
        Some(spec) if export::needs_wrapper(&spec.input_schema) => export::unwrap(args),
        _ => args,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn annotations_follow_the_effect() {
        let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
        let check = |effect: Effect, read_only: bool, destructive: bool, idempotent: bool| {
            let spec = ToolSpec::new("query_thing", "Reads a thing.", schema.clone()).with_effect(effect);
            let tool = mcp_tool(&spec).unwrap();
            let a = tool.annotations.unwrap();
            assert_eq!(a.read_only_hint, Some(read_only), "{effect:?}");
            assert_eq!(a.destructive_hint, Some(destructive), "{effect:?}");
            assert_eq!(a.idempotent_hint, Some(idempotent), "{effect:?}");
            assert_eq!(Value::Object((*tool.output_schema.unwrap()).clone()), Envelope::json_schema());
        };
        check(Effect::Read, true, false, true);
        check(Effect::Write { idempotent: true }, false, false, true);
        check(Effect::Write { idempotent: false }, false, true, false);
    }

    #[test]
    fn structured_content_is_the_envelope_as_json() {
        use toolgate_core::{ErrorCode, Metadata, Signal, ToolError};
        let signal = Signal::Unavailable { reason: "off".into(), how_to_enable: "turn it on".into() };
        let mut metadata = Metadata::now("query_weather", 1.5, 1);
        metadata.total = Some(7);
        let ok = Envelope::ok(json!({"city": "Oslo", "n": [1, 2]}), vec![signal.clone()], metadata);
        let failed = Envelope::err(
            ToolError::new(ErrorCode::InvalidParams, "bad city").with_details(json!({"field": "city"})),
            Metadata::now("query_weather", 0.2, 0),
        );
        for envelope in [ok, failed] {
            let expected = envelope.to_value();
            let got = structured(envelope);
            assert_eq!(got, expected);
            // The same key order too (serde_json keeps insertion order here).
            assert_eq!(got.to_string(), expected.to_string());
        }
    }
}
