//! Typed tools: an input type declares the parameters once (serde for the
//! value, schemars attributes for shape and limits), and [`tool_fn`] turns it
//! plus one async function into a [`Tool`].
//!
//! The schema that is published is derived from the type ([`typed_schema`]);
//! the same schema, compiled once, checks every call; then serde builds the
//! value the function gets. Rules a schema cannot express (a return date
//! before the departure) run on the typed value and join the schema's errors
//! in one `INVALID_PARAMS` answer.

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, OnceLock};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolgate_core::{FieldError, IntoToolOutput, Tool, ToolContext, ToolError, ToolResult, ToolSpec};

use crate::typed_schema;
use crate::validate::Validator;

/// A pattern for names and short texts shown to people: at least one
/// visible character, no control characters (C0, DEL, C1) and no
/// bidirectional marks, embeddings, overrides or isolates, which can make a
/// stored name read differently from what it is. Use it as
/// `#[schemars(pattern(toolgate_schema::PLAIN_TEXT))]`; the validator answers it
/// in words ([`PLAIN_TEXT_WORDS`]), not as a regex.
pub const PLAIN_TEXT: &str = r"^(?!\s*$)[^\x00-\x1F\x7F-\x9F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]+$";

/// How the schema's descriptions and errors say [`PLAIN_TEXT`].
pub const PLAIN_TEXT_WORDS: &str =
    "with a visible character and no control characters or bidirectional marks";

/// What stands in for a value that must never be echoed.
const REDACTED: &str = "[redacted]";

/// Cross-field rules of an input type: every problem as a [`FieldError`].
type Rules<I> = Arc<dyn Fn(&I) -> Vec<FieldError> + Send + Sync>;

/// A tool made of a typed input `I` and one async function `F`; build it with [`tool_fn`].
pub struct TypedTool<I, F> {
    spec: ToolSpec,
    validator: Validator,
    rules: Option<Rules<I>>,
    /// Whether the input has a `writeOnly` field (a secret): then no error echoes any value.
    secret: bool,
    f: F,
    _input: PhantomData<fn() -> I>,
}

impl<I, F> fmt::Debug for TypedTool<I, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedTool").field("name", &self.spec.name).finish_non_exhaustive()
    }
}

/// A [`Tool`] from a spec and `async fn(ctx, input: I)`. The spec's
/// `input_schema` is replaced by the schema derived from `I`, so the type is
/// the one declaration of the parameters. The function answers a
/// [`toolgate_core::ToolOutput`] (result and signals) or any serializable value.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use serde_json::json;
/// use toolgate_core::{Tool, ToolSpec};
///
/// /// Parameters of `greet_person`.
/// #[derive(Debug, Deserialize, JsonSchema)]
/// struct Greet {
///     /// Who to greet.
///     #[schemars(length(min = 1, max = 40))]
///     name: String,
/// }
///
/// let tool = toolgate_schema::tool_fn(
///     ToolSpec::new("greet_person", "Greet someone by name. Returns {text}.", json!({})),
///     |_ctx, input: Greet| async move { Ok(json!({"text": format!("Hello, {}!", input.name)})) },
/// );
/// assert_eq!(tool.spec().input_schema["properties"]["name"]["maxLength"], 40);
/// let err = tool.parse(&json!({"name": "", "age": 3})).unwrap_err();
/// assert_eq!(err.code, toolgate_core::ErrorCode::InvalidParams);
/// assert_eq!(err.details.unwrap()["errors"].as_array().unwrap().len(), 2);
/// ```
///
/// # Panics
///
/// When the schema derived from `I` does not compile (a bad regex in an
/// attribute): a programming error, found by the first test that builds the tool.
pub fn tool_fn<I, O, F, Fut>(mut spec: ToolSpec, f: F) -> TypedTool<I, F>
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: IntoToolOutput,
    F: Fn(ToolContext, I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
{
    let (schema, validator) = compiled::<I>(&spec.name);
    spec.input_schema = schema;
    let secret = spec.input_schema["properties"]
        .as_object()
        .is_some_and(|props| props.values().any(|p| p["writeOnly"] == true));
    TypedTool { spec, validator, rules: None, secret, f, _input: PhantomData }
}

/// The schema of `I` and its validator, derived and compiled once per type
/// and process: building the same tools again (one set per store, per test)
/// costs a clone, not a regex compilation.
fn compiled<I: JsonSchema + 'static>(tool: &str) -> (Value, Validator) {
    type Cache = Mutex<HashMap<TypeId, (Value, Validator)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Cache::default);
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(&TypeId::of::<I>()).cloned()) {
        return hit;
    }
    let schema = typed_schema::<I>();
    let validator = Validator::new(&schema)
        .unwrap_or_else(|e| panic!("the input schema of `{tool}` does not compile: {e}"));
    if let Ok(mut c) = cache.lock() {
        c.insert(TypeId::of::<I>(), (schema.clone(), validator.clone()));
    }
    (schema, validator)
}

impl<I, F> TypedTool<I, F>
where
    I: DeserializeOwned,
{
    /// Add the rules a schema cannot express; they run on the typed value
    /// and their errors join the schema's in one answer.
    pub fn with_rules(mut self, rules: impl Fn(&I) -> Vec<FieldError> + Send + Sync + 'static) -> Self {
        self.rules = Some(Arc::new(rules));
        self
    }

    /// The typed value, or every problem: the schema's, then the rules' (a
    /// pointer the schema already reported is not reported twice).
    pub fn parse(&self, params: &Value) -> Result<I, ToolError> {
        let mut errors = self.validator.validate(params).err().unwrap_or_default();
        // One problem per value: an empty name breaks both its length and its pattern.
        let mut seen = std::collections::HashSet::new();
        errors.retain(|e| seen.insert(e.pointer.clone()));
        // A field the session supplies is explained as such, as the gateway does.
        for e in &mut errors {
            let name = e.pointer.strip_prefix('/').unwrap_or_default();
            if !name.contains('/') && toolgate_core::names::is_injected_field(name) {
                e.expected = "no such parameter".into();
                e.message =
                    format!("`{name}` is taken from the caller's session, never from parameters; remove it");
            }
        }
        let value = match I::deserialize(params) {
            Ok(value) => Some(value),
            Err(e) if errors.is_empty() => {
                // The schema passed but serde refused: the type is stricter
                // than its schema. Still an answer, never a panic.
                errors.push(FieldError::new(
                    "",
                    "parameters matching the tool's schema",
                    &Value::Null,
                    format!("the parameters could not be read ({e}); check them against the tool's schema"),
                ));
                None
            }
            Err(_) => None,
        };
        if let (Some(value), Some(rules)) = (&value, &self.rules) {
            let extra: Vec<FieldError> =
                rules(value).into_iter().filter(|e| !errors.iter().any(|s| s.pointer == e.pointer)).collect();
            errors.extend(extra);
        }
        match value {
            Some(value) if errors.is_empty() => Ok(value),
            _ => Err(ToolError::invalid_params(self.redact(errors, params))),
        }
    }

    /// A tool that takes a secret echoes no value at all: not in `actual`,
    /// not quoted in a message.
    fn redact(&self, errors: Vec<FieldError>, params: &Value) -> Vec<FieldError> {
        if !self.secret {
            return errors;
        }
        let texts: Vec<&str> = match params {
            Value::Object(map) => map.values().filter_map(Value::as_str).filter(|s| s.len() >= 4).collect(),
            _ => Vec::new(),
        };
        errors
            .into_iter()
            .map(|mut e| {
                if !e.actual.is_null() {
                    e.actual = Value::String(REDACTED.into());
                }
                for text in &texts {
                    e.message = e.message.replace(text, REDACTED);
                }
                e
            })
            .collect()
    }
}

#[toolgate_core::async_trait]
impl<I, O, F, Fut> Tool for TypedTool<I, F>
where
    I: DeserializeOwned + Send + 'static,
    O: IntoToolOutput,
    F: Fn(ToolContext, I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
{
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, ctx: &ToolContext, params: Value) -> ToolResult {
        let input = self.parse(&params)?;
        (self.f)(ctx.clone(), input).await?.into_tool_output()
    }

    fn check_params(&self, params: &Value) -> Vec<FieldError> {
        let (Ok(value), Some(rules)) = (I::deserialize(params), &self.rules) else { return Vec::new() };
        self.redact(rules(&value), params)
    }
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::{Value, json};
    use toolgate_core::{ErrorCode, FieldError, Tool, ToolSpec};

    use super::{PLAIN_TEXT, tool_fn};

    /// The README's example input.
    #[derive(Debug, Deserialize, JsonSchema)]
    struct Greet {
        /// Who to greet.
        #[schemars(length(min = 1, max = 40), pattern(PLAIN_TEXT))]
        name: String,
        /// How many times, 1 to 3.
        #[schemars(range(min = 1, max = 3))]
        times: u8,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    struct Login {
        /// The account.
        #[schemars(length(min = 1, max = 20))]
        user: String,
        /// The secret.
        #[schemars(length(min = 8), extend("writeOnly" = true))]
        password: String,
    }

    fn pointers(params: Value, f: impl Fn(&Value) -> Result<(), toolgate_core::ToolError>) -> Vec<String> {
        let err = f(&params).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidParams);
        let errors: Vec<FieldError> = serde_json::from_value(err.details.unwrap()["errors"].clone()).unwrap();
        errors.into_iter().map(|e| e.pointer).collect()
    }

    fn greet() -> super::TypedTool<
        Greet,
        impl Fn(toolgate_core::ToolContext, Greet) -> std::future::Ready<Result<Value, toolgate_core::ToolError>>
        + Send
        + Sync,
    > {
        let spec = ToolSpec::new("greet_person", "Greet someone. Returns {text}.", json!({"ignored": true}));
        tool_fn(spec, |_ctx, g: Greet| std::future::ready(Ok(json!({"text": g.name.repeat(g.times.into())}))))
            .with_rules(|g| match g.name == "nobody" {
                true => vec![FieldError::new("/name", "a person", &json!(g.name), "greet a person")],
                false => vec![],
            })
    }

    #[test]
    fn the_schema_comes_from_the_type_and_checks_every_call() {
        let tool = greet();
        let schema = &tool.spec().input_schema;
        assert_eq!(schema["properties"]["name"]["maxLength"], 40);
        assert_eq!(schema["properties"]["times"]["maximum"], 3);
        assert_eq!(schema["additionalProperties"], false);
        assert!(tool.parse(&json!({"name": "Ada", "times": 2})).is_ok());
        let p = pointers(json!({"name": "", "times": 9, "extra": 1}), |v| tool.parse(v).map(drop));
        assert_eq!(p, ["/name", "/times", "/extra"], "one error per value, every value at once");
    }

    #[test]
    fn rules_join_schema_errors_and_check_params_says_only_theirs() {
        let tool = greet();
        // The name's rule fails, and the schema refuses `times` (a u8 it still reads).
        let p = pointers(json!({"name": "nobody", "times": 9}), |v| tool.parse(v).map(drop));
        assert_eq!(p, ["/times", "/name"]);
        let extra = tool.check_params(&json!({"name": "nobody", "times": 1}));
        assert_eq!(extra.iter().map(|e| e.pointer.as_str()).collect::<Vec<_>>(), ["/name"]);
    }

    #[test]
    fn control_and_bidi_characters_are_refused_in_words() {
        let tool = greet();
        for name in ["Ad\u{202E}a", "Ada\u{0007}", "   ", "\u{2066}x"] {
            let err = tool.parse(&json!({"name": name, "times": 1})).unwrap_err();
            let text = err.message;
            assert!(text.contains("bidirectional"), "{name:?}: {text}");
            assert!(!text.contains("\\u0000"), "no regex in the message: {text}");
        }
        assert!(tool.parse(&json!({"name": "Zoë 北京 — O'Brien", "times": 1})).is_ok());
    }

    #[test]
    fn a_tool_with_a_secret_echoes_no_value() {
        let spec = ToolSpec::new("log_in", "Log in. Returns {ok}.", json!({}));
        let tool = tool_fn(spec, |_ctx, l: Login| {
            std::future::ready(Ok(json!({"ok": l.user.len() + l.password.len() > 0})))
        });
        let err = tool
            .parse(&json!({"user": "ada", "password": "hunter2", "pasword": "hunter2-typo"}))
            .unwrap_err();
        let text = serde_json::to_string(&err.details).unwrap() + &err.message;
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("[redacted]"), "{text}");
    }

    #[test]
    fn a_session_field_is_explained() {
        let tool = greet();
        let err = tool.parse(&json!({"name": "Ada", "times": 1, "user_id": "bob"})).unwrap_err();
        assert!(err.message.contains("session"), "{}", err.message);
    }
}
