//! The loaded form of a SKILL.md file: [`Skill`], its [`Step`]s and its
//! optional [`Orchestration`], and the `run_<skill>` tool it becomes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolgate_authz::RoleHierarchy;
use toolgate_core::{Effect, ToolSpec};

use crate::error::{ErrorKind, SkillError};

/// One skill: a named procedure over registered tools, with a guide for the
/// model and, optionally, an orchestration that runs the tools in one call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Skill {
    /// The folder name; equal to `name`. Used to look the skill up.
    pub id: String,
    /// The `name` field (lowercase letters, digits and hyphens).
    pub name: String,
    /// The guide's heading: the `title` field, else the body's leading `# `
    /// heading (taken out of the body), else the name.
    pub title: String,
    /// What the skill does and when to use it (at most 1024 characters).
    pub description: String,
    /// The lowest role that may see and use the skill.
    pub required_role: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// How to run the bound tools in one call, when the skill can.
    pub orchestration: Option<Orchestration>,
    /// The markdown after the front matter (trimmed).
    pub body: String,
    /// The file the skill came from.
    pub source: PathBuf,
    /// The optional Agent Skills fields, kept as written.
    pub extra: AgentSkillsFields,
    /// Where each field was written in `source`, for messages found after loading.
    pub lines: FieldLines,
}

/// The optional fields of the Agent Skills convention. toolgate keeps them
/// but does not act on them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentSkillsFields {
    /// `license`: the skill's license, e.g. `MIT` or a file name.
    pub license: Option<String>,
    /// `compatibility` (at most 500 characters).
    pub compatibility: Option<String>,
    /// `metadata`: string keys to string values.
    pub metadata: BTreeMap<String, String>,
    /// `allowed-tools` (experimental in the convention).
    pub allowed_tools: Option<String>,
}

/// The 1-based source line of each field, keyed by its path in the front
/// matter (`required_role`, `steps[1].tool`, `orchestration.bindings[0].tool`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldLines(pub(crate) BTreeMap<String, usize>);

impl FieldLines {
    /// The line of a field, when it was written in a file.
    pub fn get(&self, field: &str) -> Option<usize> {
        self.0.get(field).copied()
    }
}

/// One step of a skill's guide.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Step {
    /// What the step does, e.g. "Find flights".
    pub title: String,
    /// The tool to call.
    pub tool: String,
    /// Advice for the model on this step.
    pub notes: Option<String>,
}

/// How an orchestration runs its bindings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Mode {
    /// One after the other, in the order written.
    Sequential,
    /// At the same time, at most `max_parallel` at once.
    Parallel,
    /// Exactly one, picked by the value of the `route_by` input field.
    Routing,
}

impl Mode {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Sequential => "sequential",
            Mode::Parallel => "parallel",
            Mode::Routing => "routing",
        }
    }
}

/// What a failed step does to the rest of the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum OnError {
    /// Start no further step; the run fails with `EXECUTION_ERROR`.
    #[default]
    Stop,
    /// Run every step; the run succeeds when at least one step did.
    Continue,
}

/// The `orchestration` block: the skill as one tool, `run_<skill>`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Orchestration {
    /// Sequential, parallel or routing.
    pub mode: Mode,
    /// The JSON Schema of the run tool's input, as written.
    pub input_schema: Value,
    /// The tools to run and how each gets its parameters.
    pub bindings: Vec<Binding>,
    /// Routing: the input field whose value picks the binding.
    pub route_by: Option<String>,
    /// What a failed step does (sequential and parallel).
    pub on_error: OnError,
    /// Parallel: how many steps run at once (default 4).
    pub max_parallel: usize,
    /// The time limit of each step (default 30 s).
    pub step_timeout: Duration,
    /// The time limit of the whole run (default 60 s).
    pub timeout: Duration,
}

/// Defaults of the orchestration block.
pub(crate) const DEFAULT_MAX_PARALLEL: usize = 4;
pub(crate) const DEFAULT_STEP_TIMEOUT_MS: u64 = 30_000;
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 60_000;
/// The run tool's own limit exceeds the orchestration's by this much, so the
/// orchestration's timeout (which reports every finished step) fires first.
const SPEC_TIMEOUT_MARGIN: Duration = Duration::from_secs(1);

/// One tool an orchestration runs.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Binding {
    /// The tool to call: a registered tool name or `<upstream>__<tool>`.
    pub tool: String,
    /// How to build the tool's parameters from the input: `None` passes the
    /// whole input; otherwise a JSON template whose strings `"$input"` and
    /// `"$input.<field>[.<field>...]"` are replaced by the input (a field
    /// missing from the input leaves its key out), and `"$$..."` is a literal
    /// `"$..."`.
    pub params: Option<Value>,
    /// Routing: the `route_by` value that picks this binding.
    pub when: Option<Value>,
}

impl Binding {
    /// The parameters for this binding's tool, built from the run's input.
    pub fn params_for(&self, input: &Value) -> Value {
        match &self.params {
            None => input.clone(),
            Some(template) => fill(template, input).unwrap_or(Value::Null),
        }
    }
}

/// Replace `$input` references in a template; `None` means "leave this key out".
fn fill(template: &Value, input: &Value) -> Option<Value> {
    match template {
        Value::String(s) => match reference(s) {
            Reference::Input(path) => lookup(input, &path).cloned(),
            Reference::Literal(text) => Some(Value::String(text.to_string())),
            Reference::Bad => Some(template.clone()),
        },
        Value::Object(map) => Some(Value::Object(
            map.iter().filter_map(|(k, v)| fill(v, input).map(|v| (k.clone(), v))).collect(),
        )),
        Value::Array(items) => {
            Some(Value::Array(items.iter().map(|v| fill(v, input).unwrap_or(Value::Null)).collect()))
        }
        other => Some(other.clone()),
    }
}

fn lookup<'a>(input: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(input, |value, key| value.get(key)).filter(|v| !v.is_null())
}

/// What a template string means.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reference<'a> {
    /// `$input` (empty path) or `$input.a.b`.
    Input(Vec<&'a str>),
    /// Plain text (after unescaping `$$`).
    Literal(&'a str),
    /// A `$` reference toolgate does not know.
    Bad,
}

pub(crate) fn reference(s: &str) -> Reference<'_> {
    if s.starts_with("$$") {
        return Reference::Literal(&s[1..]);
    }
    if !s.starts_with('$') {
        return Reference::Literal(s);
    }
    match s.strip_prefix("$input") {
        Some("") => Reference::Input(Vec::new()),
        Some(rest) => match rest.strip_prefix('.') {
            Some(path) if path.split('.').all(|p| !p.is_empty()) => {
                Reference::Input(path.split('.').collect())
            }
            _ => Reference::Bad,
        },
        None => Reference::Bad,
    }
}

impl Skill {
    /// Parse a SKILL.md text. `source` names the file in messages and its
    /// folder name is the skill's id. A skill without `required_role` gets
    /// `guest`, the lowest role of the default hierarchy. Every problem found
    /// is returned at once (a YAML error stops at the first).
    pub fn parse(text: &str, source: impl AsRef<Path>) -> Result<Skill, Vec<SkillError>> {
        Self::parse_with(text, source, &RoleHierarchy::default())
    }

    /// [`Skill::parse`] where a skill without `required_role` gets the lowest role of `hierarchy`.
    pub fn parse_with(
        text: &str,
        source: impl AsRef<Path>,
        hierarchy: &RoleHierarchy,
    ) -> Result<Skill, Vec<SkillError>> {
        crate::parse::parse(text, source.as_ref(), hierarchy.lowest())
    }

    /// Read and parse one SKILL.md file (default hierarchy, as [`Skill::parse`]).
    pub fn load(path: impl AsRef<Path>) -> Result<Skill, Vec<SkillError>> {
        Self::load_with(path, &RoleHierarchy::default())
    }

    /// Read and parse one SKILL.md file, as [`Skill::parse_with`].
    pub fn load_with(path: impl AsRef<Path>, hierarchy: &RoleHierarchy) -> Result<Skill, Vec<SkillError>> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| {
            vec![SkillError::new(
                path,
                ErrorKind::Io,
                format!("cannot read the file: {e}; it must be UTF-8 text"),
            )]
        })?;
        Self::parse_with(&text, path, hierarchy)
    }

    /// The name of the tool this skill becomes when it has an orchestration:
    /// `run_` and the id with hyphens turned into underscores.
    pub fn tool_name(&self) -> String {
        format!("run_{}", self.id.replace('-', "_"))
    }

    /// The `run_<skill>` tool, when the skill has an orchestration. Without
    /// knowing the bound tools it is a non-idempotent write in domain
    /// `skills`; [`Skill::tool_spec_with`] derives both from the bound tools.
    pub fn tool_spec(&self) -> Option<ToolSpec> {
        let orch = self.orchestration.as_ref()?;
        let spec = ToolSpec::new(self.tool_name(), self.run_description(orch), strict_schema(orch))
            .with_effect(Effect::Write { idempotent: false })
            .with_role(self.required_role.clone())
            .with_domain("skills")
            .with_tags(["skill", orch.mode.as_str()])
            .with_timeout(orch.timeout + SPEC_TIMEOUT_MARGIN);
        Some(spec)
    }

    /// The `run_<skill>` tool with its effect and domain taken from the
    /// bound tools, as `tools` describes them: `Read` when every bound tool
    /// reads, otherwise `Write`, idempotent only when every writing tool is;
    /// the bound tools' domain when they share one, else `skills`. When a
    /// bound tool is unknown this is [`Skill::tool_spec`].
    pub fn tool_spec_with(&self, tools: &dyn Fn(&str) -> Option<ToolSpec>) -> Option<ToolSpec> {
        let mut spec = self.tool_spec()?;
        let orch = self.orchestration.as_ref()?;
        let bound: Option<Vec<ToolSpec>> = orch.bindings.iter().map(|b| tools(&b.tool)).collect();
        let Some(bound) = bound else { return Some(spec) };
        spec.effect = if bound.iter().all(|s| s.effect.is_read()) {
            Effect::Read
        } else {
            Effect::Write { idempotent: bound.iter().all(|s| s.effect.is_retry_safe()) }
        };
        if let Some(first) = bound.first()
            && bound.iter().all(|s| s.domain == first.domain)
        {
            spec.domain = first.domain.clone();
        }
        Some(spec)
    }

    fn run_description(&self, orch: &Orchestration) -> String {
        let tools: Vec<String> = orch.bindings.iter().map(|b| format!("`{}`", b.tool)).collect();
        let what = match orch.mode {
            Mode::Sequential => format!(
                "Runs {} in this order with the same input ({}).",
                tools.join(", then "),
                match orch.on_error {
                    OnError::Stop => "stops at the first failure",
                    OnError::Continue => "keeps going past failures",
                }
            ),
            Mode::Parallel => format!(
                "Runs {} at the same time (at most {} at once{}).",
                tools.join(", "),
                orch.max_parallel,
                match orch.on_error {
                    OnError::Stop => "; after a failure no further step starts",
                    OnError::Continue => "",
                }
            ),
            Mode::Routing => {
                let routes: Vec<String> = orch
                    .bindings
                    .iter()
                    .map(|b| {
                        format!(
                            "{} -> `{}`",
                            b.when.as_ref().map(Value::to_string).unwrap_or_default(),
                            b.tool
                        )
                    })
                    .collect();
                format!(
                    "Runs one tool picked by `{}`: {}.",
                    orch.route_by.as_deref().unwrap_or_default(),
                    routes.join(", ")
                )
            }
        };
        format!(
            "{} {what} Answers `steps` (each step's tool and envelope) with `completed` and `failed` counts.",
            self.description.trim_end()
        )
    }
}

/// The input schema made strict: no extra properties at the root, and for
/// routing the `route_by` field limited to the values that pick a binding.
fn strict_schema(orch: &Orchestration) -> Value {
    let mut schema = orch.input_schema.clone();
    if let Value::Object(root) = &mut schema {
        root.entry("type").or_insert_with(|| Value::String("object".into()));
        root.insert("additionalProperties".into(), Value::Bool(false));
        if let (Mode::Routing, Some(route_by)) = (orch.mode, &orch.route_by) {
            let values: Vec<Value> = orch.bindings.iter().filter_map(|b| b.when.clone()).collect();
            let props = root.entry("properties").or_insert_with(|| Value::Object(Default::default()));
            if let Value::Object(props) = props
                && let Value::Object(field) =
                    props.entry(route_by.clone()).or_insert_with(|| Value::Object(Default::default()))
                && !field.contains_key("enum")
                && !field.contains_key("const")
            {
                field.insert("enum".into(), Value::Array(values));
            }
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn references() {
        assert_eq!(reference("$input"), Reference::Input(vec![]));
        assert_eq!(reference("$input.city"), Reference::Input(vec!["city"]));
        assert_eq!(reference("$input.a.b"), Reference::Input(vec!["a", "b"]));
        assert_eq!(reference("$$input"), Reference::Literal("$input"));
        assert_eq!(reference("plain"), Reference::Literal("plain"));
        assert_eq!(reference("$inputs"), Reference::Bad);
        assert_eq!(reference("$input."), Reference::Bad);
        assert_eq!(reference("$input..a"), Reference::Bad);
        assert_eq!(reference("$other"), Reference::Bad);
    }

    #[test]
    fn params_are_built_from_the_input() {
        let input = json!({"city": "Paris", "trip": {"days": 3}, "kind": "hotel"});
        let whole = Binding { tool: "find_hotel".into(), params: None, when: None };
        assert_eq!(whole.params_for(&input), input);
        let mapped = Binding {
            tool: "find_hotel".into(),
            params: Some(json!({
                "destination": "$input.city",
                "nights": "$input.trip.days",
                "budget": "$input.budget",
                "currency": "$$EUR",
                "sort": "price",
                "all": "$input",
                "list": ["$input.city", 1]
            })),
            when: None,
        };
        assert_eq!(
            mapped.params_for(&input),
            json!({
                "destination": "Paris",
                "nights": 3,
                "currency": "$EUR",
                "sort": "price",
                "all": input,
                "list": ["Paris", 1]
            })
        );
    }
}
