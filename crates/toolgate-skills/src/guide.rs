//! Skill guides: the markdown `get_skill_guide` answers, rendered for one
//! caller through a [`GuideView`] of the tools that caller may see.

use std::fmt::Write as _;

use serde_json::Value;
use toolgate_core::{Effect, ToolSpec};

use crate::skill::Skill;

/// What the guide may say about tools, as seen by one caller. The gateway
/// answers with its registry and the caller's permissions.
pub trait GuideView {
    /// The tool's spec (with the role the deployment requires for it);
    /// `None` when no tool of that name is registered.
    fn tool(&self, name: &str) -> Option<ToolSpec>;
    /// Whether the caller may call the tool.
    fn may_call(&self, name: &str) -> bool;
}

/// The mark on a step whose tool the caller may not call.
pub const NOT_AVAILABLE: &str = "(not available to your role)";
/// The mark on a step whose tool is not registered.
pub const UNKNOWN_TOOL: &str = "(unknown tool)";

/// The guide of a skill as markdown: the title and purpose, the body, then
/// each step with the tool to call, a tool-info block (name, description,
/// required role, read or write) and the parameter schema. A step the caller
/// may not run is marked [`NOT_AVAILABLE`] and its tool is not described; a
/// step naming an unregistered tool is marked [`UNKNOWN_TOOL`]. When the
/// skill has an orchestration whose `run_<skill>` tool the caller may call,
/// a last section offers it.
///
/// Whether the caller may see the skill at all is the gateway's decision
/// (the skill's `required_role`), made before rendering.
pub fn render_guide(skill: &Skill, view: &dyn GuideView) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", skill.title);
    let _ = writeln!(out, "**Purpose:** {}\n", skill.description.trim());
    if !skill.body.is_empty() {
        let _ = writeln!(out, "{}\n", skill.body);
    }
    for (i, step) in skill.steps.iter().enumerate() {
        let n = i + 1;
        let spec = view.tool(&step.tool);
        match spec {
            None => {
                let _ = writeln!(out, "## Step {n}: {} {UNKNOWN_TOOL}\n", step.title);
                let _ = writeln!(
                    out,
                    "This step names `{}`, which is not a tool here: skip it and tell the user this part is not available.\n",
                    step.tool
                );
                notes(&mut out, step.notes.as_deref());
            }
            Some(_) if !view.may_call(&step.tool) => {
                let _ = writeln!(out, "## Step {n}: {} {NOT_AVAILABLE}\n", step.title);
                let _ = writeln!(
                    out,
                    "This step calls `{}`, which your role may not use: ask the user to have someone with the right role do it, or leave the step out.\n",
                    step.tool
                );
                notes(&mut out, step.notes.as_deref());
            }
            Some(spec) => {
                let _ = writeln!(out, "## Step {n}: {}\n", step.title);
                let _ = writeln!(out, "Call `{}`.\n", spec.name);
                notes(&mut out, step.notes.as_deref());
                tool_info(&mut out, &spec);
            }
        }
    }
    if skill.orchestration.is_some() {
        let name = skill.tool_name();
        if let Some(spec) = view.tool(&name).filter(|_| view.may_call(&name)) {
            let _ = writeln!(out, "## Run the whole skill in one call\n");
            let _ = writeln!(out, "Instead of calling the steps one by one, you may call `{name}`.\n");
            tool_info(&mut out, &spec);
        }
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out.push('\n');
    out
}

fn notes(out: &mut String, notes: Option<&str>) {
    if let Some(notes) = notes {
        let _ = writeln!(out, "{}\n", notes.trim());
    }
}

fn tool_info(out: &mut String, spec: &ToolSpec) {
    let _ = writeln!(out, "Tool info:\n");
    let _ = writeln!(out, "- name: `{}`", spec.name);
    let _ = writeln!(out, "- description: {}", spec.description.trim().replace('\n', "\n  "));
    let _ = writeln!(out, "- required role: `{}`", spec.required_role);
    let _ = writeln!(out, "- effect: {}\n", effect_text(spec.effect));
    let _ = writeln!(out, "Parameters (JSON Schema):\n");
    let schema = serde_json::to_string_pretty(&sorted(&spec.input_schema)).unwrap_or_else(|_| "{}".into());
    let _ = writeln!(out, "```json\n{schema}\n```\n");
}

fn effect_text(effect: Effect) -> &'static str {
    match effect {
        Effect::Read => "read (changes nothing)",
        Effect::Write { idempotent: true } => {
            "write, idempotent (repeating the same call changes nothing more)"
        }
        Effect::Write { idempotent: false } => "write, not idempotent (call it once; do not repeat it)",
    }
}

/// JSON Schema keywords in reading order; other keys follow, sorted.
const KEYWORD_ORDER: &[&str] = &[
    "$schema",
    "title",
    "type",
    "description",
    "format",
    "const",
    "enum",
    "properties",
    "required",
    "additionalProperties",
];

/// The value with object keys in a fixed order (schema keywords first in
/// reading order, the rest sorted), so the guide is the same whatever map
/// order serde_json was built with.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            let rank = |k: &str| KEYWORD_ORDER.iter().position(|w| *w == k).unwrap_or(KEYWORD_ORDER.len());
            keys.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.cmp(b)));
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&map[k]))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}
