//! What the model is offered (the tool list and the system prompt, per
//! exposure) and how one of its calls runs: meta-tools through
//! `Gateway::call_meta`, everything else through `Gateway::execute`, so
//! authorization, validation, limits and the trace apply unchanged.

use serde_json::{Value, json};
use toolgate_core::{Caller, Envelope, ErrorCode, FieldError, Metadata, ToolContext, ToolError, ToolSpec};
use toolgate_gateway::{CallOptions, EXECUTE_TOOL, Filter, GET_SKILL_GUIDE, Gateway, META_TOOLS};

use crate::{AgentConfig, Exposure, ToolCalling};

/// The function tools sent with every request.
pub(crate) fn offered(gateway: &Gateway, caller: &Caller, exposure: Exposure) -> Vec<Value> {
    match exposure {
        Exposure::Meta => gateway.meta_specs().iter().map(function).collect(),
        Exposure::Direct => gateway
            .discover(caller, &Filter::default())
            .iter()
            .map(toolgate_gateway::toolgate_schema::export::openai_strict)
            .collect(),
    }
}

/// The meta-tools as plain (non-strict) functions: `execute_tool`'s
/// `parameters` is any object, which strict mode cannot say.
fn function(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {"name": spec.name, "description": spec.description, "parameters": spec.input_schema},
    })
}

/// The system prompt: the deployment's instructions, then the catalog
/// (meta) or the working rules and skills (direct), then, for text tool
/// calling, how to write a call and the tools' specs.
pub(crate) fn system_prompt(
    gateway: &Gateway,
    caller: &Caller,
    config: &AgentConfig,
    tools: &[Value],
) -> String {
    let mut out = String::new();
    if let Some(text) = &config.instructions {
        out.push_str(text.trim());
        out.push_str("\n\n");
    }
    match config.exposure {
        Exposure::Meta => out.push_str(&gateway.catalog(caller)),
        Exposure::Direct => {
            out.push_str("# Working with tools\n\nYour tools are the functions you were given.\n\nRules:\n");
            out.push_str("- If a skill matches the task, follow its steps (listed below).\n");
            out.push_str("- Never invent values (dates, ids, amounts): ask the user. Never send user ids, tokens or session ids.\n");
            out.push_str(
                "- If `success` is false, fix what the error names; never repeat a call unchanged.\n",
            );
            let skills = gateway.visible_skills(caller);
            if !skills.is_empty() {
                out.push_str("\n## Skills\n\n");
                for skill in skills {
                    out.push_str(&format!("- `{}`: {}\n", skill.id, skill.description));
                }
            }
        }
    }
    if config.tool_calling == ToolCalling::Text {
        out.push_str(
            "\n## How to call a tool\n\nWrite each call as <tool_call>{\"name\": \"TOOL\", \"arguments\": {...}}</tool_call>; \
             several calls may follow each other. Results come back in <tool_response> blocks. \
             When you have the answer, write it without any tool_call.\n\nFunctions:\n",
        );
        for tool in tools {
            out.push_str(&tool["function"].to_string());
            out.push('\n');
        }
    }
    out
}

/// Whether a call only reads (so calls of one turn may run together).
pub(crate) fn is_read(gateway: &Gateway, name: &str, args: &Value) -> bool {
    let target = if name == EXECUTE_TOOL { args["tool_name"].as_str().unwrap_or_default() } else { name };
    if META_TOOLS.contains(&target) {
        return target != EXECUTE_TOOL;
    }
    gateway.spec(target).is_some_and(|spec| spec.effect.is_read())
}

/// Run one call as the caller.
pub(crate) async fn run(
    gateway: &Gateway,
    ctx: &ToolContext,
    exposure: Exposure,
    name: &str,
    args: Result<Value, String>,
) -> Envelope {
    let args = match args {
        Ok(args) => args,
        Err(e) => {
            let error = ToolError::invalid_params(vec![FieldError::new(
                "",
                "a JSON object",
                &Value::Null,
                format!("the arguments are not valid JSON ({e}); send one JSON object"),
            )]);
            return Envelope::err(error, Metadata::now(name, 0.0, 0));
        }
    };
    if META_TOOLS.contains(&name) {
        return gateway.call_meta(ctx, name, args).await;
    }
    // Meta mode offers three functions; a business tool called by its own
    // name is answered with how to call it, and does not run. A name the
    // caller cannot see goes on to `execute`, which answers it as unknown.
    if exposure == Exposure::Meta
        && gateway.discover(&ctx.caller, &Filter::default()).iter().any(|s| s.name == name)
    {
        let error = ToolError::new(
            ErrorCode::ToolNotFound,
            format!(
                "`{name}` is not one of your functions: call every business tool through `{EXECUTE_TOOL}`, \
                 e.g. {{\"tool_name\": \"{name}\", \"parameters\": {{...}}}}"
            ),
        );
        return Envelope::err(error, Metadata::now(name, 0.0, 0));
    }
    let opts = CallOptions::default().openai_strict(exposure == Exposure::Direct);
    gateway.execute(ctx, name, args, &opts).await
}

/// The text the model reads for an envelope, cut to `max` characters.
pub(crate) fn model_text(gateway: &Gateway, envelope: &Envelope, max: usize) -> String {
    let text = match envelope.result.as_ref().and_then(|r| r["guide"].as_str()) {
        // A guide is markdown meant to be read as is, not a JSON string.
        Some(guide) if envelope.success && envelope.metadata.tool == GET_SKILL_GUIDE => guide.to_owned(),
        _ => gateway.render_result(envelope),
    };
    cut(&text, max)
}

/// The result as events show it: redacted, cut short.
pub(crate) fn event_text(envelope: &Envelope) -> String {
    let text = match (&envelope.error, &envelope.result) {
        (Some(error), _) => format!("{}: {}", error.code, error.message),
        (None, Some(result)) => toolgate_gateway::redact(result).to_string(),
        (None, None) => String::new(),
    };
    cut(&text, 1000)
}

/// The code of a failed envelope, as text.
pub(crate) fn code(envelope: &Envelope) -> Option<String> {
    envelope.code().map(|c: ErrorCode| c.to_string())
}

pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push_str("\n[... cut: the result was longer; ask for less (filters, a page) if you need the rest]");
    out
}
