//! The three meta-tools: `get_skill_guide`, `get_tool_schema`, `execute_tool`.
//!
//! They are ordinary [`ToolSpec`]s so that a server can expose them, and
//! their arguments are checked by the same validators as any tool's.

use std::sync::LazyLock;
use std::time::Instant;

use schema_gen::Validator;
use serde_json::{Value, json};
use tool_core::{Caller, Effect, Envelope, ErrorCode, Metadata, ToolContext, ToolError, ToolSpec};

use crate::execute::{closest, quoted, short};
use crate::{CallOptions, Gateway, SchemaFormat};

/// Name of the meta-tool that returns a skill's guide.
pub const GET_SKILL_GUIDE: &str = "get_skill_guide";
/// Name of the meta-tool that returns a tool's schema.
pub const GET_TOOL_SCHEMA: &str = "get_tool_schema";
/// Name of the meta-tool that runs a tool.
pub const EXECUTE_TOOL: &str = "execute_tool";
/// The three meta-tools, in the order they are listed.
pub const META_TOOLS: [&str; 3] = [GET_SKILL_GUIDE, GET_TOOL_SCHEMA, EXECUTE_TOOL];

fn meta_specs_for(lowest_role: &str) -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            GET_SKILL_GUIDE,
            "Read a skill's step-by-step guide (markdown: each step's tool and parameter schema). \
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
            "Read one tool's contract: description, read or write, role needed, and the JSON Schema of its \
             parameters. Call it before a tool's first call. Example: {\"tool_name\": \"query_travel_order\"}.",
            json!({
                "type": "object",
                "properties": {
                    "tool_name": {"type": "string", "minLength": 1},
                    "format": {"type": "string", "enum": ["mcp", "openai", "anthropic", "gemini"], "description": "Schema dialect (default mcp)."}
                },
                "required": ["tool_name"],
                "additionalProperties": false
            }),
        ),
        ToolSpec::new(
            EXECUTE_TOOL,
            "Run one tool with parameters matching its schema. Returns an envelope {success, result, error, \
             signals, metadata}; on failure fix what error.message names. Example: \
             {\"tool_name\": \"query_travel_order\", \"parameters\": {\"status\": \"SUBMITTED\"}}.",
            json!({
                "type": "object",
                "properties": {
                    "tool_name": {"type": "string", "minLength": 1},
                    "parameters": {"description": "A JSON object matching the tool's schema.", "default": {}},
                    "options": {
                        "type": "object",
                        "properties": {
                            "timeout_ms": {"type": "integer", "minimum": 1},
                            "retries": {"type": "integer", "minimum": 0, "maximum": 10},
                            "retry_delay_ms": {"type": "integer", "minimum": 0},
                            "format": {"type": "string", "enum": ["json", "raw"]}
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

/// The meta-tools' argument validators, compiled once.
static VALIDATORS: LazyLock<Vec<(String, Validator)>> = LazyLock::new(|| {
    meta_specs_for("guest")
        .into_iter()
        .filter_map(|spec| Validator::new(&spec.input_schema).ok().map(|v| (spec.name, v)))
        .collect()
});

impl Gateway {
    /// The three meta-tools' specs (available to the lowest role).
    pub fn meta_specs(&self) -> Vec<ToolSpec> {
        meta_specs_for(self.inner.policy.hierarchy().lowest())
    }

    /// Call a meta-tool. `execute_tool` answers the inner tool's envelope itself.
    pub async fn call_meta(&self, ctx: &ToolContext, meta_tool: &str, args: Value) -> Envelope {
        let started = Instant::now();
        if meta_tool == EXECUTE_TOOL {
            if let Err(error) = check_args(meta_tool, &args) {
                return Envelope::err(error, Metadata::now(meta_tool, ms(started), 0));
            }
            let tool_name = args["tool_name"].as_str().unwrap_or_default().to_owned();
            let options = match args.get("options") {
                None | Some(Value::Null) => CallOptions::default(),
                Some(raw) => match serde_json::from_value::<CallOptions>(raw.clone()) {
                    Ok(options) => options,
                    Err(e) => {
                        let error = ToolError::new(ErrorCode::InvalidParams, format!("`options`: {e}"));
                        return Envelope::err(error, Metadata::now(meta_tool, ms(started), 0));
                    }
                },
            };
            let mut args = args;
            let parameters = args.get_mut("parameters").map(Value::take).unwrap_or_else(|| json!({}));
            return self.execute(ctx, &tool_name, parameters, &options).await;
        }
        let result = match meta_tool {
            GET_SKILL_GUIDE => check_args(meta_tool, &args).and_then(|()| {
                let id = args["skill_id"].as_str().unwrap_or_default();
                self.skill_guide(&ctx.caller, id).map(|guide| json!({ "skill_id": id, "guide": guide }))
            }),
            GET_TOOL_SCHEMA => check_args(meta_tool, &args).and_then(|()| {
                let format = match args.get("format").and_then(Value::as_str) {
                    Some("openai") => SchemaFormat::Openai,
                    Some("anthropic") => SchemaFormat::Anthropic,
                    Some("gemini") => SchemaFormat::Gemini,
                    _ => SchemaFormat::Mcp,
                };
                self.tool_schema_as(&ctx.caller, args["tool_name"].as_str().unwrap_or_default(), format)
            }),
            other => Err(ToolError::new(
                ErrorCode::ToolNotFound,
                format!("`{other}` is not a meta-tool; use one of {}", META_TOOLS.join(", ")),
            )),
        };
        let metadata = Metadata::now(meta_tool, ms(started), u32::from(result.is_ok()));
        match result {
            Ok(value) => Envelope::ok(value, Vec::new(), metadata),
            Err(error) => Envelope::err(error, metadata),
        }
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
        spec.required_role = self.inner.policy.required_role(&spec).to_owned();
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
            SchemaFormat::Openai => schema_gen::export::openai_strict(&spec),
            SchemaFormat::Anthropic => schema_gen::export::anthropic(&spec),
            SchemaFormat::Gemini => schema_gen::export::gemini(&spec),
        })
    }

    /// A skill's guide as the caller may read it.
    pub fn skill_guide(&self, caller: &Caller, id: &str) -> Result<String, ToolError> {
        let Some(skill) = self.inner.skills.get(id) else {
            let visible = self.visible_skills(caller);
            let suggestions = closest(id, visible.iter().map(|s| s.id.as_str()));
            let mut message = format!("there is no skill `{}`.", short(id));
            if !suggestions.is_empty() {
                message.push_str(&format!(" Did you mean {}?", quoted(&suggestions)));
            }
            return Err(ToolError::new(ErrorCode::SkillNotFound, message)
                .with_details(json!({ "suggestions": suggestions })));
        };
        if !self.inner.policy.role_satisfies(&caller.role, &skill.required_role) {
            return Err(ToolError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "skill `{id}` needs role `{}` or above; this caller is `{}`.",
                    skill.required_role, caller.role
                ),
            )
            .with_details(json!({ "required_role": skill.required_role })));
        }
        Ok(skills::render_guide(skill, &CallerView { gateway: self, caller }))
    }
}

/// What a guide may show to one caller.
struct CallerView<'a> {
    gateway: &'a Gateway,
    caller: &'a Caller,
}

impl skills::GuideView for CallerView<'_> {
    fn tool(&self, name: &str) -> Option<ToolSpec> {
        self.gateway.inner.tools().tools.get(name).map(|e| {
            let mut spec = e.tool.spec().clone();
            spec.required_role = self.gateway.inner.policy.required_role(&spec).to_owned();
            spec
        })
    }

    fn may_call(&self, name: &str) -> bool {
        self.gateway
            .inner
            .tools()
            .tools
            .get(name)
            .is_some_and(|e| self.gateway.inner.policy.visible(self.caller, e.tool.spec()))
    }
}

fn check_args(meta_tool: &str, args: &Value) -> Result<(), ToolError> {
    match VALIDATORS.iter().find(|(name, _)| name == meta_tool) {
        Some((_, validator)) => validator.validate(args).map_err(ToolError::invalid_params),
        None => Err(ToolError::internal()),
    }
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}
