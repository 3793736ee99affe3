//! The tool contract: [`ToolSpec`] and [`Effect`], checked when a tool is registered.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::names::{is_injected_field, is_tool_name};

/// What a tool does to the world. Drives MCP annotations, the retry policy
/// and which agents may see the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Effect {
    /// Reads only; safe to retry.
    Read,
    /// Changes state. `idempotent` writes may be retried: the same call twice
    /// has the effect of one.
    Write {
        /// Whether repeating the call is harmless.
        idempotent: bool,
    },
}

impl Effect {
    /// Whether the tool only reads.
    pub fn is_read(self) -> bool {
        matches!(self, Effect::Read)
    }

    /// Whether the gateway may run the tool again after a transient failure.
    pub fn is_retry_safe(self) -> bool {
        match self {
            Effect::Read => true,
            Effect::Write { idempotent } => idempotent,
        }
    }

    /// `"read"` or `"write"`.
    pub fn label(self) -> &'static str {
        if self.is_read() { "read" } else { "write" }
    }
}

/// A worked example of a call, shown to the model in schemas and guides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolExample {
    /// What the example shows.
    pub description: String,
    /// The parameters.
    pub parameters: Value,
}

/// The contract of one tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolSpec {
    /// verb_noun snake_case, e.g. `query_travel_order`.
    pub name: String,
    /// For the model: what it does; when to call it; what it returns and its
    /// limits; formats, with an example.
    pub description: String,
    /// JSON Schema 2020-12; root `type: object`, `additionalProperties: false`.
    pub input_schema: Value,
    /// JSON Schema of the `result` on success, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Read, or write (idempotent or not).
    pub effect: Effect,
    /// The lowest role that may see and call the tool.
    pub required_role: String,
    /// The business domain (`travel`, `nutrition`, ...), used by scoped exposure.
    pub domain: String,
    /// Free tags for discovery.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Default time limit of one attempt.
    #[serde(with = "duration_ms", rename = "timeout_ms")]
    pub timeout: Duration,
    /// Usage examples.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<ToolExample>,
    /// A minijinja template that renders the result as short markdown for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_template: Option<String>,
    /// A short name for people (MCP `title`, shown in clients' tool lists);
    /// [`ToolSpec::display_title`] derives one from the name when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Icons for clients' tool lists (MCP `icons`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<ToolIcon>,
    /// What the tool's source says about the things it acts on (an OpenAPI tag's
    /// description, its path items'): read by discovery's ranking, never shown to the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub about: Vec<String>,
}

/// An icon of a tool: a URI (`https:` or `data:`) and its media type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolIcon {
    /// Where the image is, e.g. `data:image/svg+xml;base64,...`.
    pub src: String,
    /// Its media type, e.g. `image/png`, when the URI does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

impl ToolIcon {
    /// An icon at `src` (an `https:` or `data:` URI), its media type left to the URI.
    pub fn new(src: impl Into<String>) -> Self {
        Self { src: src.into(), mime_type: None }
    }

    /// Set the media type, e.g. `image/png`.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

mod duration_ms {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis() as u64)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

/// Why a spec was refused at registration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The name is not verb_noun snake_case.
    #[error("tool name `{0}` is not verb_noun snake_case (e.g. `query_travel_order`)")]
    BadName(String),
    /// The description is empty.
    #[error("tool `{0}` has an empty description")]
    NoDescription(String),
    /// The schema root is not an object schema without extra properties.
    #[error("tool `{tool}`: input schema {problem}")]
    BadSchema {
        /// The tool.
        tool: String,
        /// What is wrong.
        problem: String,
    },
    /// The schema exposes a value the system injects.
    #[error(
        "tool `{tool}`: input schema exposes `{field}` at {pointer}; it comes from the call context, remove it from the schema"
    )]
    InjectedField {
        /// The tool.
        tool: String,
        /// The offending property.
        field: String,
        /// Where it is in the schema.
        pointer: String,
    },
}

impl ToolSpec {
    /// A spec with the given name, description and schema; a read tool for
    /// role `guest` in domain `general`, 30 s timeout. Adjust with the `with_*` methods.
    pub fn new(name: impl Into<String>, description: impl Into<String>, input_schema: Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            input_schema,
            output_schema: None,
            effect: Effect::Read,
            required_role: "guest".into(),
            domain: "general".into(),
            tags: Vec::new(),
            timeout: Duration::from_secs(30),
            examples: Vec::new(),
            result_template: None,
            title: None,
            icons: Vec::new(),
            about: Vec::new(),
        }
    }

    /// Set the title people see (the model reads the name and description).
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Add an icon.
    pub fn with_icon(mut self, icon: ToolIcon) -> Self {
        self.icons.push(icon);
        self
    }

    /// The title: the one set, or the name in words (`query_travel_order`
    /// is "Query travel order"; an upstream's `weather__get_forecast` is
    /// "Get forecast (weather)").
    pub fn display_title(&self) -> String {
        if let Some(title) = &self.title {
            return title.clone();
        }
        let (namespace, name) = match self.name.split_once("__") {
            Some((namespace, name)) => (Some(namespace), name),
            None => (None, self.name.as_str()),
        };
        let mut words = name.split('_').filter(|w| !w.is_empty());
        let mut title = String::with_capacity(self.name.len() + 2);
        if let Some(first) = words.next() {
            let mut chars = first.chars();
            title.extend(chars.next().map(|c| c.to_ascii_uppercase()));
            title.push_str(chars.as_str());
        }
        for word in words {
            title.push(' ');
            title.push_str(word);
        }
        if let Some(namespace) = namespace {
            title.push_str(&format!(" ({namespace})"));
        }
        title
    }

    /// Set the effect.
    pub fn with_effect(mut self, effect: Effect) -> Self {
        self.effect = effect;
        self
    }

    /// Set the required role.
    pub fn with_role(mut self, role: impl Into<String>) -> Self {
        self.required_role = role.into();
        self
    }

    /// Set the domain.
    pub fn with_domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = domain.into();
        self
    }

    /// Set what the tool's source says about the things it acts on ([`ToolSpec::about`]).
    pub fn with_about<I, S>(mut self, about: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.about = about.into_iter().map(Into::into).collect();
        self
    }

    /// Set the tags.
    pub fn with_tags<I, S>(mut self, tags: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// Set the default timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Set the output schema.
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Add an example.
    pub fn with_example(mut self, description: impl Into<String>, parameters: Value) -> Self {
        self.examples.push(ToolExample { description: description.into(), parameters });
        self
    }

    /// Set the result template (minijinja).
    pub fn with_result_template(mut self, template: impl Into<String>) -> Self {
        self.result_template = Some(template.into());
        self
    }

    /// Check the contract: the name, the description, the schema root and
    /// that no property anywhere in the schema is a context-injected value.
    pub fn check(&self) -> Result<(), SpecError> {
        if !is_tool_name(&self.name) && !crate::names::is_namespaced_tool_name(&self.name) {
            return Err(SpecError::BadName(self.name.clone()));
        }
        if self.description.trim().is_empty() {
            return Err(SpecError::NoDescription(self.name.clone()));
        }
        let bad = |problem: &str| SpecError::BadSchema { tool: self.name.clone(), problem: problem.into() };
        let root = self.input_schema.as_object().ok_or_else(|| bad("is not a JSON object"))?;
        if root.get("type").and_then(Value::as_str) != Some("object") {
            return Err(bad("root must have `type: object`"));
        }
        let closed = root.get("additionalProperties") == Some(&Value::Bool(false))
            || root.get("unevaluatedProperties") == Some(&Value::Bool(false))
            || root.get("oneOf").and_then(Value::as_array).is_some_and(|branches| {
                branches.iter().all(|b| b.get("additionalProperties") == Some(&Value::Bool(false)))
            });
        if !closed {
            return Err(bad(
                "must set `additionalProperties: false` (on the root or on every `oneOf` branch)",
            ));
        }
        find_injected(&self.input_schema, String::new()).map_or(Ok(()), |(field, pointer)| {
            Err(SpecError::InjectedField { tool: self.name.clone(), field, pointer })
        })
    }
}

/// Find the first property, at any depth, that is a context-injected value.
fn find_injected(schema: &Value, pointer: String) -> Option<(String, String)> {
    match schema {
        Value::Object(map) => {
            for key in ["properties", "patternProperties", "$defs", "definitions"] {
                if let Some(Value::Object(props)) = map.get(key) {
                    for (name, sub) in props {
                        let here = format!("{pointer}/{key}/{name}");
                        if key == "properties" && is_injected_field(name) {
                            return Some((name.clone(), here));
                        }
                        if let Some(found) = find_injected(sub, here) {
                            return Some(found);
                        }
                    }
                }
            }
            if let Some(Value::Array(required)) = map.get("required")
                && let Some(name) = required.iter().filter_map(Value::as_str).find(|n| is_injected_field(n))
            {
                return Some((name.to_string(), format!("{pointer}/required")));
            }
            for key in ["oneOf", "anyOf", "allOf", "prefixItems"] {
                if let Some(Value::Array(items)) = map.get(key) {
                    for (i, sub) in items.iter().enumerate() {
                        if let Some(found) = find_injected(sub, format!("{pointer}/{key}/{i}")) {
                            return Some(found);
                        }
                    }
                }
            }
            for key in ["items", "additionalProperties", "not", "if", "then", "else"] {
                if let Some(sub @ Value::Object(_)) = map.get(key)
                    && let Some(found) = find_injected(sub, format!("{pointer}/{key}"))
                {
                    return Some(found);
                }
            }
            None
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(name: &str, schema: Value) -> ToolSpec {
        ToolSpec::new(name, "does a thing", schema)
    }

    fn closed(props: Value) -> Value {
        json!({"type": "object", "properties": props, "additionalProperties": false})
    }

    #[test]
    fn a_title_is_the_one_set_or_the_name_in_words() {
        let schema = closed(json!({}));
        assert_eq!(spec("query_travel_order", schema.clone()).display_title(), "Query travel order");
        assert_eq!(spec("weather__get_forecast", schema.clone()).display_title(), "Get forecast (weather)");
        let titled = spec("query_travel_order", schema).with_title("Travel orders");
        assert_eq!(titled.display_title(), "Travel orders");
        let back: ToolSpec = serde_json::from_value(serde_json::to_value(&titled).unwrap()).unwrap();
        assert_eq!(back, titled);
    }

    #[test]
    fn accepts_a_good_spec() {
        spec("query_order", closed(json!({"order_id": {"type": "integer"}}))).check().unwrap();
    }

    #[test]
    fn rejects_bad_names_and_open_schemas() {
        assert!(matches!(spec("QueryOrder", closed(json!({}))).check(), Err(SpecError::BadName(_))));
        let open = json!({"type": "object", "properties": {}});
        assert!(matches!(spec("query_order", open).check(), Err(SpecError::BadSchema { .. })));
        assert!(matches!(
            spec("query_order", json!({"type": "array"})).check(),
            Err(SpecError::BadSchema { .. })
        ));
        assert!(matches!(spec("query_order", json!(true)).check(), Err(SpecError::BadSchema { .. })));
    }

    #[test]
    fn rejects_injected_fields_at_any_depth() {
        let top = closed(json!({"userId": {"type": "string"}}));
        let err = spec("query_order", top).check().unwrap_err();
        assert!(matches!(&err, SpecError::InjectedField { field, .. } if field == "userId"));

        let nested = json!({
            "type": "object",
            "oneOf": [{
                "type": "object",
                "additionalProperties": false,
                "properties": {"op": {"const": "x"}, "filter": closed(json!({"session_id": {"type": "string"}}))}
            }]
        });
        let err = spec("query_order", nested).check().unwrap_err();
        match err {
            SpecError::InjectedField { field, pointer, .. } => {
                assert_eq!(field, "session_id");
                assert_eq!(pointer, "/oneOf/0/properties/filter/properties/session_id");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn effect_drives_retry_safety() {
        assert!(Effect::Read.is_retry_safe());
        assert!(Effect::Write { idempotent: true }.is_retry_safe());
        assert!(!Effect::Write { idempotent: false }.is_retry_safe());
    }
}
