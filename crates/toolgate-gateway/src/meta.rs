//! The three meta-tools: `get_skill_guide`, `get_tool_schema`, `execute_tool`.
//!
//! They are ordinary [`ToolSpec`]s so that a server can expose them, and
//! their arguments are checked by the same validators as any tool's.

use std::time::Instant;

use serde_json::{Value, json};
use toolgate_core::{
    Caller, Effect, Envelope, ErrorCode, FieldError, Metadata, ToolContext, ToolError, ToolSpec,
};
use toolgate_schema::Validator;

use crate::echo::{self, clip_str};
use crate::{CallOptions, EffectFilter, Filter, Gateway, Limits, SchemaFormat};

/// Name of the meta-tool that returns a skill's guide.
pub const GET_SKILL_GUIDE: &str = "get_skill_guide";
/// Name of the meta-tool that returns a tool's schema.
pub const GET_TOOL_SCHEMA: &str = "get_tool_schema";
/// Name of the meta-tool that runs a tool.
pub const EXECUTE_TOOL: &str = "execute_tool";
/// The three meta-tools, in the order they are listed.
pub const META_TOOLS: [&str; 3] = [GET_SKILL_GUIDE, GET_TOOL_SCHEMA, EXECUTE_TOOL];

/// Most tools one discovery answer carries (`limit`'s maximum).
pub const MAX_DISCOVERED: u64 = 50;

pub(crate) fn meta_specs_for(lowest_role: &str, limits: &Limits) -> Vec<ToolSpec> {
    let retry_ms = json!({"type": "integer", "minimum": 0, "maximum": limits.max_retry_delay_ms});
    let total_ms = json!({"type": "integer", "minimum": 1, "maximum": limits.max_timeout_ms});
    vec![
        ToolSpec::new(
            GET_SKILL_GUIDE,
            "A skill's step-by-step guide (each step's tool and parameters). \
             Call it first when a skill in the catalog matches the task. Example: {\"skill_id\": \"travel-request\"}.",
            json!({
                "type": "object",
                "properties": {"skill_id": {"type": "string", "minLength": 1}},
                "required": ["skill_id"],
                "additionalProperties": false
            }),
        ),
        ToolSpec::new(
            GET_TOOL_SCHEMA,
            "With `tool_name`: a tool's contract (description, effect, role, parameter schema); read it before \
             the tool's first call. Without: find tools by `query`, `domain`, `tag`, `effect` (result.tools, \
             metadata.total). Example: {\"query\": \"weather\"}.",
            json!({
                "type": "object",
                "properties": {
                    "tool_name": {"type": "string", "minLength": 1},
                    "format": {"enum": ["mcp", "openai", "anthropic", "gemini"]},
                    "query": {"type": "string"},
                    "domain": {"type": "string"},
                    "tag": {"type": "string"},
                    "effect": {"enum": ["read", "write"]},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_DISCOVERED}
                },
                "additionalProperties": false
            }),
        ),
        ToolSpec::new(
            EXECUTE_TOOL,
            "Run one tool with parameters matching its schema. Returns an envelope {success, result, error, \
             signals, metadata}. options.timeout_ms covers the whole call. Example: \
             {\"tool_name\": \"query_travel_order\", \"parameters\": {\"status\": \"SUBMITTED\"}}.",
            json!({
                "type": "object",
                "properties": {
                    "tool_name": {"type": "string", "minLength": 1},
                    "parameters": {"description": "A JSON object matching the tool's schema.", "default": {}},
                    "options": {
                        "type": "object",
                        "properties": {
                            "timeout_ms": total_ms,
                            "retries": {"type": "integer", "minimum": 0, "maximum": limits.max_retries},
                            "retry_delay_ms": retry_ms,
                            "format": {"enum": ["json", "raw"]}
                        },
                        "additionalProperties": false
                    }
                },
                "required": ["tool_name"],
                "additionalProperties": false
            }),
        )
        .with_effect(Effect::Write { idempotent: false }),
    ]
    .into_iter()
    .map(|spec| spec.with_role(lowest_role).with_domain("meta"))
    .collect()
}

/// Options in other tool-calling conventions' spelling, and the name each
/// stands for (in milliseconds, as ours).
const OPTION_SPELLINGS: [(&str, &str); 2] = [("timeout", "timeout_ms"), ("retryDelay", "retry_delay_ms")];

/// `options.timeout` and `options.retryDelay` become `timeout_ms` and
/// `retry_delay_ms` before the arguments are checked, so the published
/// schema lists each option once; both spellings at once is refused.
fn respell_options(args: &mut Value) -> Result<(), ToolError> {
    let Some(Value::Object(options)) = args.get_mut("options") else { return Ok(()) };
    for (alias, name) in OPTION_SPELLINGS {
        if let Some(value) = options.remove(alias) {
            if options.contains_key(name) {
                return Err(ToolError::invalid_params(vec![FieldError::new(
                    format!("/options/{alias}"),
                    "each option once",
                    &Value::Null,
                    format!("`{alias}` and `{name}` are the same option; send one of them"),
                )]));
            }
            options.insert(name.to_owned(), value);
        }
    }
    Ok(())
}

/// The meta-tools' argument validators, compiled once per gateway (the
/// options' limits are the gateway's).
pub(crate) fn validators(limits: &Limits) -> Vec<(String, Validator)> {
    meta_specs_for("guest", limits)
        .into_iter()
        .filter_map(|spec| Validator::new(&spec.input_schema).ok().map(|v| (spec.name, v)))
        .collect()
}

impl Gateway {
    /// The three meta-tools' specs (available to the lowest role).
    pub fn meta_specs(&self) -> Vec<ToolSpec> {
        let settings = self.inner.settings();
        meta_specs_for(settings.policy.hierarchy().lowest(), &settings.limits)
    }

    /// Call a meta-tool. `execute_tool` answers the inner tool's envelope itself.
    pub async fn call_meta(&self, ctx: &ToolContext, meta_tool: &str, args: Value) -> Envelope {
        let started = Instant::now();
        if meta_tool == EXECUTE_TOOL {
            let refused = |error| Envelope::err(error, Metadata::now(EXECUTE_TOOL, ms(started), 0));
            let mut args = args;
            if let Err(error) = respell_options(&mut args) {
                return refused(error);
            }
            if let Err(error) = self.check_args(meta_tool, &args) {
                return refused(error);
            }
            let tool_name = args["tool_name"].as_str().unwrap_or_default().to_owned();
            let options = match args.get("options") {
                None | Some(Value::Null) => CallOptions::default(),
                // The schema passed, so this reads; serde's text is never
                // repeated (it may quote a value).
                Some(raw) => serde_json::from_value::<CallOptions>(raw.clone()).unwrap_or_default(),
            };
            let parameters = match args.get_mut("parameters").map(Value::take) {
                None | Some(Value::Null) => json!({}),
                // Models often send the object as JSON text; text that is not
                // an object stays text (and is refused without being repeated).
                Some(Value::String(text)) => match serde_json::from_str::<Value>(&text) {
                    Ok(object @ Value::Object(_)) => object,
                    _ => Value::String(text),
                },
                Some(other) => other,
            };
            return self.execute(ctx, &tool_name, parameters, &options).await;
        }
        let mut total = None;
        let result = match meta_tool {
            GET_SKILL_GUIDE => self.check_args(meta_tool, &args).and_then(|()| {
                let id = args["skill_id"].as_str().unwrap_or_default();
                self.skill_guide(&ctx.caller, id).map(|guide| json!({ "skill_id": id, "guide": guide }))
            }),
            GET_TOOL_SCHEMA => self.check_args(meta_tool, &args).and_then(|()| {
                let Some(name) = args.get("tool_name").and_then(Value::as_str) else {
                    let (found, all) = self.find_tools(&ctx.caller, &args);
                    total = Some(all);
                    return Ok(found);
                };
                let format = match args.get("format").and_then(Value::as_str) {
                    Some("openai") => SchemaFormat::Openai,
                    Some("anthropic") => SchemaFormat::Anthropic,
                    Some("gemini") => SchemaFormat::Gemini,
                    _ => SchemaFormat::Mcp,
                };
                self.tool_schema_as(&ctx.caller, name, format)
            }),
            other => Err(ToolError::new(
                ErrorCode::ToolNotFound,
                format!("`{}` is not a meta-tool; use one of {}", clip_str(other), META_TOOLS.join(", ")),
            )),
        };
        let mut metadata = Metadata::now(clip_str(meta_tool), ms(started), u32::from(result.is_ok()));
        metadata.total = total;
        match result {
            Ok(value) => Envelope::ok(value, Vec::new(), metadata),
            Err(error) => Envelope::err(error, metadata),
        }
    }

    /// Discovery for the model: the matching tools this caller may use, at
    /// most `limit` of them, each with its parameters' schema; and how many matched.
    ///
    /// A `query` ranks by relevance ([`crate::rank`]: BM25 over each tool's
    /// name, description, domain, tags and operations): a tool that shares
    /// any word with it is found, the best first, equal scores in the
    /// registry's order. `domain`, `tag`, `effect` and the caller's
    /// permissions filter as without a query. When no tool shares a word
    /// (or the query is only stop words), the query is matched as before:
    /// every word a substring of what describes the tool.
    fn find_tools(&self, caller: &Caller, args: &Value) -> (Value, u64) {
        let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
        let filter = Filter {
            name: None,
            domain: text("domain"),
            tag: text("tag"),
            effect: match args.get("effect").and_then(Value::as_str) {
                Some("read") => Some(EffectFilter::Read),
                Some("write") => Some(EffectFilter::Write),
                _ => None,
            },
            text: text("query"),
        };
        let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(10).min(MAX_DISCOVERED) as usize;
        let (tools, total) = match self.rank_tools(caller, &filter, limit) {
            Some(found) if found.1 > 0 => found,
            _ => {
                let found = self.discover(caller, &filter);
                let tools = found.iter().take(limit).map(|spec| listed(spec, &spec.required_role)).collect();
                (tools, found.len())
            }
        };
        (json!({ "tools": tools }), total as u64)
    }

    /// The tools the filter's query ranks, filtered as [`Gateway::discover`]
    /// filters (domain, tag, effect, the caller's permissions): the first
    /// `limit` as discovery lists them, and how many there are. `None`
    /// without a query word to rank by.
    fn rank_tools(&self, caller: &Caller, filter: &Filter, limit: usize) -> Option<(Vec<Value>, usize)> {
        let table = self.inner.tools();
        let hits =
            crate::rank::index_for(&table, self.inner.semantic.as_deref()).search(filter.text.as_deref()?)?;
        let mut found = Vec::with_capacity(limit.min(hits.len()));
        let mut total = 0;
        for spec in hits
            .into_iter()
            .filter_map(|doc| table.order.get(doc).and_then(|name| table.tools.get(name)))
            .map(|entry| entry.tool.spec())
            .filter(|spec| passes(filter, spec) && self.inner.policy().visible(caller, spec))
        {
            total += 1;
            if found.len() < limit {
                found.push(listed(spec, self.inner.policy().required_role(spec)));
            }
        }
        Some((found, total))
    }

    /// The contract of a tool as the caller may see it, in MCP form.
    pub fn tool_schema(&self, caller: &Caller, name: &str) -> Result<Value, ToolError> {
        self.tool_schema_as(caller, name, SchemaFormat::Mcp)
    }

    /// The contract of a tool in a provider's dialect.
    pub fn tool_schema_as(
        &self,
        caller: &Caller,
        name: &str,
        format: SchemaFormat,
    ) -> Result<Value, ToolError> {
        let table = self.inner.tools();
        let Some(entry) = table.tools.get(name) else {
            return Err(self.tool_not_found(caller, name));
        };
        let spec = entry.tool.spec();
        self.authorize(caller, spec)?;
        let mut spec = spec.clone();
        spec.required_role = self.inner.policy().required_role(&spec).to_owned();
        Ok(match format {
            SchemaFormat::Mcp => json!({
                "name": spec.name,
                "description": spec.description,
                "effect": spec.effect.label(),
                "idempotent": spec.effect.is_retry_safe(),
                "required_role": spec.required_role,
                "domain": spec.domain,
                "input_schema": spec.input_schema,
                "examples": spec.examples,
                "timeout_ms": spec.timeout.as_millis() as u64,
            }),
            SchemaFormat::Openai => toolgate_schema::export::openai_strict(&spec),
            SchemaFormat::Anthropic => toolgate_schema::export::anthropic(&spec),
            SchemaFormat::Gemini => toolgate_schema::export::gemini(&spec),
        })
    }

    /// A skill's guide as the caller may read it (markdown, see
    /// `toolgate_skills::render_guide`): `SKILL_NOT_FOUND` (with close ids the caller may read)
    /// when there is no such skill, `PERMISSION_DENIED` when the caller's role is below the
    /// skill's. Without the `skills` feature the gateway has no skills: always `SKILL_NOT_FOUND`.
    pub fn skill_guide(&self, caller: &Caller, id: &str) -> Result<String, ToolError> {
        #[cfg(not(feature = "skills"))]
        return Err(self.skill_not_found(caller, id));
        #[cfg(feature = "skills")]
        {
            let settings = self.inner.settings();
            let Some(skill) = settings.skills.get(id) else {
                return Err(self.skill_not_found(caller, id));
            };
            if !settings.policy.role_satisfies(&caller.role, &skill.required_role) {
                return Err(ToolError::new(
                    ErrorCode::PermissionDenied,
                    format!(
                        "skill `{id}` needs role `{}` or above; this caller is `{}`.",
                        skill.required_role, caller.role
                    ),
                )
                .with_details(json!({ "required_role": skill.required_role })));
            }
            Ok(toolgate_skills::render_guide(skill, &CallerView { gateway: self, caller }))
        }
    }
}

/// What a guide may show to one caller.
#[cfg(feature = "skills")]
struct CallerView<'a> {
    gateway: &'a Gateway,
    caller: &'a Caller,
}

#[cfg(feature = "skills")]
impl toolgate_skills::GuideView for CallerView<'_> {
    fn tool(&self, name: &str) -> Option<ToolSpec> {
        self.gateway.inner.tools().tools.get(name).map(|e| {
            let mut spec = e.tool.spec().clone();
            spec.required_role = self.gateway.inner.policy().required_role(&spec).to_owned();
            spec
        })
    }

    fn may_call(&self, name: &str) -> bool {
        self.gateway
            .inner
            .tools()
            .tools
            .get(name)
            .is_some_and(|e| self.gateway.inner.policy().visible(self.caller, e.tool.spec()))
    }
}

impl Gateway {
    /// A meta-tool's arguments against its schema; the errors are echoed
    /// safely (a secret sent beside `tool_name` is not repeated).
    fn check_args(&self, meta_tool: &str, args: &Value) -> Result<(), ToolError> {
        match self.inner.settings().meta_validators.iter().find(|(name, _)| name == meta_tool) {
            Some((_, validator)) => validator
                .validate(args)
                .map_err(|errors| ToolError::invalid_params(echo::field_errors(errors))),
            None => Err(ToolError::internal()),
        }
    }
}

/// One tool as discovery lists it, with the deployment's required role.
fn listed(spec: &ToolSpec, required_role: &str) -> Value {
    // Built from clones: `json!` would serialize the schema value by value.
    let mut metadata = serde_json::Map::with_capacity(5);
    metadata.insert("effect".into(), spec.effect.label().into());
    metadata.insert("idempotent".into(), spec.effect.is_retry_safe().into());
    metadata.insert("required_role".into(), required_role.into());
    metadata.insert("domain".into(), spec.domain.as_str().into());
    metadata.insert("tags".into(), spec.tags.iter().map(|t| Value::from(t.as_str())).collect());
    let mut tool = serde_json::Map::with_capacity(4);
    tool.insert("name".into(), spec.name.as_str().into());
    tool.insert("description".into(), spec.description.as_str().into());
    tool.insert("params_schema".into(), spec.input_schema.clone());
    tool.insert("metadata".into(), Value::Object(metadata));
    Value::Object(tool)
}

/// The filter's domain, tag and effect (what [`Filter`] checks besides the
/// name and the text, which discovery does not send and ranks).
fn passes(filter: &Filter, spec: &ToolSpec) -> bool {
    filter.domain.as_ref().is_none_or(|d| spec.domain == *d)
        && filter.tag.as_ref().is_none_or(|t| spec.tags.iter().any(|x| x == t))
        && filter.effect.is_none_or(|e| spec.effect.is_read() == (e == EffectFilter::Read))
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}
