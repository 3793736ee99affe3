//! Reading a SKILL.md file: the front matter between `---` lines, its YAML
//! into strict raw structs, the field rules, and the source line of each field.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use tool_core::names::is_tool_name;

use crate::error::{ErrorKind, SkillError};
use crate::skill::{
    AgentSkillsFields, Binding, DEFAULT_MAX_PARALLEL, DEFAULT_STEP_TIMEOUT_MS, DEFAULT_TIMEOUT_MS,
    FieldLines, Mode, OnError, Orchestration, Reference, Skill, Step, reference,
};

const MAX_NAME: usize = 64;
const MAX_DESCRIPTION: usize = 1024;
const MAX_COMPATIBILITY: usize = 500;
/// `run_` + the id must still be a tool name of at most 64 characters.
const MAX_ORCHESTRATED_NAME: usize = 60;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a mapping of front matter fields (name, description, ...)")]
struct RawFront {
    name: Option<String>,
    description: Option<String>,
    title: Option<String>,
    license: Option<String>,
    compatibility: Option<String>,
    #[serde(default)]
    metadata: BTreeMap<String, String>,
    #[serde(rename = "allowed-tools")]
    allowed_tools: Option<String>,
    required_role: Option<String>,
    #[serde(default)]
    steps: Vec<RawStep>,
    orchestration: Option<RawOrchestration>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a step: a mapping with title, tool and optional notes")]
struct RawStep {
    title: String,
    tool: String,
    notes: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an orchestration block: a mapping with mode, input_schema, bindings, ..."
)]
struct RawOrchestration {
    mode: Option<Mode>,
    input_schema: Option<Value>,
    #[serde(default)]
    bindings: Vec<RawBinding>,
    route_by: Option<String>,
    on_error: Option<OnError>,
    max_parallel: Option<usize>,
    step_timeout_ms: Option<u64>,
    timeout_ms: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a binding: a mapping with tool and optional params and when")]
struct RawBinding {
    tool: String,
    params: Option<Value>,
    when: Option<Value>,
}

/// A step in a path into the front matter.
#[derive(Debug, Clone, Copy)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

fn render(path: &[Seg<'_>]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if out.is_empty() => out.push_str(k),
            Seg::Key(k) => {
                let _ = write!(out, ".{k}");
            }
            Seg::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

/// Parse a SKILL.md text. `source` names the file in messages; its folder
/// name is the skill's id (when it has none, the id is the `name`).
pub(crate) fn parse(text: &str, source: &Path, default_role: &str) -> Result<Skill, Vec<SkillError>> {
    let folder = source.parent().and_then(Path::file_name).and_then(|n| n.to_str()).map(str::to_string);
    let text = text.strip_prefix('\u{feff}').unwrap_or(text).replace("\r\n", "\n");
    let syntax = |line: usize, message: String| {
        vec![SkillError::new(source, ErrorKind::Syntax, message).at(Some(line)).skill(folder.as_deref())]
    };
    let (front, body) = split(&text).map_err(|message| syntax(1, message.to_string()))?;
    // The front matter starts on the file's second line.
    let yaml_error = |e: serde_norway::Error| {
        let text = e.to_string();
        let mut errors = syntax(e.location().map_or(1, |l| l.line() + 1), yaml_message(&text));
        errors[0].field = yaml_field(&text);
        errors
    };
    let raw: RawFront = if front.trim().is_empty() {
        RawFront::default()
    } else {
        // Syntax first: the typed pass reports the first wrong type it
        // meets, which can hide a syntax error further on.
        serde_norway::from_str::<serde_norway::Value>(front).map_err(yaml_error)?;
        serde_norway::from_str(front).map_err(yaml_error)?
    };

    let mut cx =
        Checker { file: source, front, skill: folder.clone(), errors: Vec::new(), lines: BTreeMap::new() };
    let id_hint = folder.clone().unwrap_or_else(|| "my-skill".into());

    let name = match raw.name {
        None => {
            cx.push(
                None,
                "name",
                ErrorKind::Field,
                format!("missing `name`; add `name: {id_hint}` (the folder name) to the front matter"),
            );
            String::new()
        }
        Some(name) => {
            if let Some(problem) = name_problem(&name) {
                cx.error(&[Seg::Key("name")], ErrorKind::Field, problem);
            } else if let Some(folder) = folder.as_deref().filter(|f| *f != name) {
                cx.error(
                    &[Seg::Key("name")],
                    ErrorKind::Field,
                    format!(
                        "name `{name}` differs from its folder `{folder}`; rename the folder or the name so they match"
                    ),
                );
            }
            name
        }
    };
    let id = folder.clone().unwrap_or_else(|| name.clone());
    cx.skill = Some(id.clone());

    let description = match raw.description {
        None => {
            cx.push(
                None,
                "description",
                ErrorKind::Field,
                "missing `description`; add one saying what the skill does and when to use it".into(),
            );
            String::new()
        }
        Some(d) => {
            let n = d.chars().count();
            if d.trim().is_empty() {
                cx.error(
                    &[Seg::Key("description")],
                    ErrorKind::Field,
                    "description is empty; say what the skill does and when to use it".into(),
                );
            } else if n > MAX_DESCRIPTION {
                cx.error(
                    &[Seg::Key("description")],
                    ErrorKind::Field,
                    format!(
                        "description is {n} characters, the limit is {MAX_DESCRIPTION}; shorten it and move the details into the body"
                    ),
                );
            }
            d
        }
    };

    if let Some(c) = &raw.compatibility {
        let n = c.chars().count();
        if n > MAX_COMPATIBILITY {
            cx.error(
                &[Seg::Key("compatibility")],
                ErrorKind::Field,
                format!("compatibility is {n} characters, the limit is {MAX_COMPATIBILITY}; shorten it"),
            );
        }
    }
    if raw.title.as_deref().is_some_and(|t| t.trim().is_empty()) {
        cx.error(
            &[Seg::Key("title")],
            ErrorKind::Field,
            "title is empty; write one or leave the field out".into(),
        );
    }
    let required_role = match raw.required_role {
        Some(role) if role.trim().is_empty() => {
            cx.error(
                &[Seg::Key("required_role")],
                ErrorKind::Field,
                format!("required_role is empty; name a role, or leave the field out for `{default_role}`"),
            );
            role
        }
        Some(role) => role,
        None => default_role.to_string(),
    };

    let mut steps = Vec::with_capacity(raw.steps.len());
    for (i, step) in raw.steps.into_iter().enumerate() {
        cx.note(&[Seg::Key("steps"), Seg::Index(i)]);
        cx.note(&[Seg::Key("steps"), Seg::Index(i), Seg::Key("tool")]);
        if step.title.trim().is_empty() {
            cx.error(
                &[Seg::Key("steps"), Seg::Index(i), Seg::Key("title")],
                ErrorKind::Field,
                format!("steps[{i}].title is empty; say what the step does, e.g. \"Find flights\""),
            );
        }
        if !is_tool_name(&step.tool) {
            cx.error(
                &[Seg::Key("steps"), Seg::Index(i), Seg::Key("tool")],
                ErrorKind::Field,
                format!(
                    "steps[{i}].tool `{}` is not a tool name; use the tool's verb_noun snake_case name, e.g. `query_travel_order`",
                    step.tool
                ),
            );
        }
        steps.push(Step {
            title: step.title,
            tool: step.tool,
            notes: step.notes.filter(|n| !n.trim().is_empty()),
        });
    }

    let orchestration = raw.orchestration.and_then(|o| check_orchestration(&mut cx, o, &id));

    let (title, body) = title_and_body(raw.title, body, &name);
    cx.note(&[Seg::Key("required_role")]);
    let skill = Skill {
        id,
        name,
        title,
        description,
        required_role,
        steps,
        orchestration,
        body,
        source: source.to_path_buf(),
        extra: AgentSkillsFields {
            license: raw.license,
            compatibility: raw.compatibility,
            metadata: raw.metadata,
            allowed_tools: raw.allowed_tools,
        },
        lines: FieldLines(std::mem::take(&mut cx.lines)),
    };
    if let Some(Err(e)) = skill.tool_spec().map(|s| s.check()) {
        cx.error(
            &[Seg::Key("orchestration"), Seg::Key("input_schema")],
            ErrorKind::Field,
            format!("orchestration.input_schema: {e}"),
        );
    }
    if cx.errors.is_empty() { Ok(skill) } else { Err(cx.errors) }
}

fn check_orchestration(cx: &mut Checker<'_>, raw: RawOrchestration, id: &str) -> Option<Orchestration> {
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
        if !is_tool_name(&b.tool) {
            cx.error(
                &at("tool"),
                ErrorKind::Field,
                format!(
                    "orchestration.bindings[{i}].tool `{}` is not a tool name; use the tool's verb_noun snake_case name",
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
fn check_routes(
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

fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn collect_refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) if s.starts_with('$') => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// The guide title and the body: the `title` field, else a leading `# `
/// heading of the body (taken out of it), else the name.
fn title_and_body(title: Option<String>, body: &str, name: &str) -> (String, String) {
    let body = body.trim();
    if let Some(title) = title.filter(|t| !t.trim().is_empty()) {
        return (title.trim().to_string(), body.to_string());
    }
    let (first, rest) = body.split_once('\n').unwrap_or((body, ""));
    match first.strip_prefix("# ") {
        Some(heading) if !heading.trim().is_empty() => (heading.trim().to_string(), rest.trim().to_string()),
        _ => (name.to_string(), body.to_string()),
    }
}

/// What is wrong with a name, by the Agent Skills rules.
fn name_problem(name: &str) -> Option<String> {
    const FIX: &str = "use lowercase letters, digits and hyphens";
    let n = name.chars().count();
    if name.is_empty() {
        return Some(format!("name is empty; {FIX}, the same as the folder name"));
    }
    if n > MAX_NAME {
        return Some(format!(
            "name is {n} characters, the limit is {MAX_NAME}; shorten it (and rename the folder to match)"
        ));
    }
    if name.chars().any(char::is_uppercase) {
        return Some(format!("name `{name}` has capitals; {FIX}"));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')) {
        let what = if c.is_whitespace() { "a space".to_string() } else { format!("`{c}`") };
        return Some(format!("name `{name}` has {what}; {FIX}"));
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Some(format!("name `{name}` starts or ends with a hyphen; put hyphens only between words"));
    }
    if name.contains("--") {
        return Some(format!("name `{name}` has `--`; use single hyphens between words"));
    }
    None
}

/// Split a SKILL.md into front matter and body.
fn split(text: &str) -> Result<(&str, &str), &'static str> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err(
            "no front matter; a SKILL.md starts with a `---` line, then the YAML fields (name, description, ...), then a closing `---` line",
        );
    }
    let start = first.len();
    let mut at = start;
    for line in lines {
        if line.trim_end() == "---" {
            return Ok((&text[start..at], &text[at + line.len()..]));
        }
        at += line.len();
    }
    Err("the front matter has no closing `---` line; add one after the last field")
}

/// A YAML or field-type error from the deserializer, without its position
/// (the line goes in front) and with the fix.
fn yaml_message(raw: &str) -> String {
    let mut msg = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(i) = rest.find(" at line ") {
        msg.push_str(&rest[..i]);
        let after = &rest[i + " at line ".len()..];
        let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let n = digits(after);
        let tail = &after[n..];
        rest = match tail.strip_prefix(" column ") {
            Some(col) if n > 0 => &col[digits(col)..],
            _ => {
                msg.push_str(" at line ");
                after
            }
        };
    }
    msg.push_str(rest);
    if msg.contains("unknown field") {
        format!("{msg}; remove it or fix its spelling")
    } else if msg.contains("invalid type")
        || msg.contains("missing field")
        || msg.contains("unknown variant")
        || msg.contains("invalid value")
    {
        format!("{msg}; fix the value")
    } else {
        format!("the front matter is not valid YAML: {msg}; fix the YAML syntax")
    }
}

/// The field a deserializer message is about: its path prefix
/// (`steps[0]: ...`), extended by the unknown field's name when that is the problem.
fn yaml_field(message: &str) -> Option<String> {
    let is_path = |p: &str| {
        !p.is_empty()
            && p.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '[' | ']'))
    };
    let (path, rest) = match message.split_once(": ") {
        Some((p, rest)) if is_path(p) => (Some(p), rest),
        _ => (None, message),
    };
    let unknown = rest
        .strip_prefix("unknown field `")
        .and_then(|r| r.split_once('`'))
        .map(|(name, _)| name)
        .filter(|name| !name.is_empty());
    match (path, unknown) {
        (Some(p), Some(u)) => Some(format!("{p}.{u}")),
        (None, Some(u)) => Some(u.to_string()),
        (Some(p), None) => Some(p.to_string()),
        (None, None) => None,
    }
}

/// Collects field errors and the lines of the fields.
struct Checker<'a> {
    file: &'a Path,
    front: &'a str,
    skill: Option<String>,
    errors: Vec<SkillError>,
    lines: BTreeMap<String, usize>,
}

impl Checker<'_> {
    /// The file line of a field; the front matter starts on line 2.
    fn line_of(&self, path: &[Seg<'_>]) -> Option<usize> {
        key_line(self.front, path).map(|i| i + 2)
    }

    /// Remember the line of a field that is written out (not one only implied).
    fn note(&mut self, path: &[Seg<'_>]) {
        if let Some((line, depth)) = key_line_depth(self.front, path)
            && depth == path.len()
        {
            self.lines.insert(render(path), line + 2);
        }
    }

    fn error(&mut self, path: &[Seg<'_>], kind: ErrorKind, message: String) {
        let line = self.line_of(path);
        self.push(line, &render(path), kind, message);
    }

    fn push(&mut self, line: Option<usize>, field: &str, kind: ErrorKind, message: String) {
        self.errors.push(
            SkillError::new(self.file, kind, message)
                .at(Some(line.unwrap_or(1)))
                .field(field)
                .skill(self.skill.as_deref()),
        );
    }
}

/// The 0-based line (in the front matter) of the deepest part of `path`
/// that can be found; `None` when not even the first part is there.
fn key_line(front: &str, path: &[Seg<'_>]) -> Option<usize> {
    key_line_depth(front, path).map(|(line, _)| line)
}

/// A small indentation-based walk over block-style YAML: good enough to
/// point at a key in hand-written front matter (flow-style mappings point
/// at their parent key).
fn key_line_depth(front: &str, path: &[Seg<'_>]) -> Option<(usize, usize)> {
    let lines: Vec<&str> = front.lines().collect();
    let content = |i: usize| {
        let t = lines[i].trim();
        !t.is_empty() && !t.starts_with('#')
    };
    let mut region = 0..lines.len();
    let mut found = None;
    for (depth, seg) in path.iter().enumerate() {
        let Some(first) = region.clone().find(|&i| content(i)) else { break };
        match *seg {
            Seg::Key(key) => {
                let probe = if bare_dash(lines[first]) {
                    match (first + 1..region.end).find(|&i| content(i)) {
                        Some(next) => next,
                        None => break,
                    }
                } else {
                    first
                };
                let col = key_column(lines[probe]);
                let Some(at) = region.clone().find(|&i| {
                    content(i) && key_column(lines[i]) == col && starts_with_key(&lines[i][col..], key)
                }) else {
                    break;
                };
                found = Some((at, depth + 1));
                let end = (at + 1..region.end)
                    .find(|&i| {
                        content(i) && {
                            let ind = indent(lines[i]);
                            ind < col || (ind == col && !is_dash(lines[i]))
                        }
                    })
                    .unwrap_or(region.end);
                region = at + 1..end;
            }
            Seg::Index(n) => {
                let d = indent(lines[first]);
                let items: Vec<usize> = region
                    .clone()
                    .filter(|&i| content(i) && indent(lines[i]) == d && is_dash(lines[i]))
                    .collect();
                let Some(&at) = items.get(n) else { break };
                found = Some((at, depth + 1));
                region = at..items.get(n + 1).copied().unwrap_or(region.end);
            }
        }
    }
    found
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_dash(line: &str) -> bool {
    let t = line.trim_start_matches(' ');
    t == "-" || t.starts_with("- ")
}

fn bare_dash(line: &str) -> bool {
    line.trim() == "-"
}

/// The column where a line's mapping key starts (after `- ` for an item).
fn key_column(line: &str) -> usize {
    let ind = indent(line);
    if is_dash(line) {
        let after = &line[ind + 1..];
        ind + 1 + (after.len() - after.trim_start_matches(' ').len())
    } else {
        ind
    }
}

fn starts_with_key(text: &str, key: &str) -> bool {
    let rest = text
        .strip_prefix(key)
        .or_else(|| {
            text.strip_prefix('"').and_then(|t| t.strip_prefix(key)).and_then(|t| t.strip_prefix('"'))
        })
        .or_else(|| {
            text.strip_prefix('\'').and_then(|t| t.strip_prefix(key)).and_then(|t| t.strip_prefix('\''))
        });
    rest.and_then(|r| r.strip_prefix(':')).is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRONT: &str = "\
name: trip
description: >
  steps: not a key
steps:
  - title: a
    tool: find_flight
  -
    title: b
    tool: find_hotel
orchestration:
  mode: routing
  bindings:
  - tool: find_flight
    when: flight
  - tool: find_hotel
    params: {city: $input.city}
    when: hotel
  route_by: kind
";

    fn line(path: &[Seg<'_>]) -> Option<usize> {
        key_line(FRONT, path).map(|l| l + 1)
    }

    #[test]
    fn finds_the_line_of_nested_keys() {
        use Seg::{Index as I, Key as K};
        assert_eq!(line(&[K("name")]), Some(1));
        assert_eq!(line(&[K("steps")]), Some(4));
        assert_eq!(line(&[K("steps"), I(0), K("tool")]), Some(6));
        assert_eq!(line(&[K("steps"), I(1)]), Some(7));
        assert_eq!(line(&[K("steps"), I(1), K("tool")]), Some(9));
        assert_eq!(line(&[K("orchestration"), K("mode")]), Some(11));
        assert_eq!(line(&[K("orchestration"), K("bindings"), I(1), K("when")]), Some(17));
        assert_eq!(line(&[K("orchestration"), K("bindings"), I(0), K("tool")]), Some(13));
        assert_eq!(line(&[K("orchestration"), K("route_by")]), Some(18));
        // Flow mappings point at their key; missing keys at the deepest parent found.
        assert_eq!(line(&[K("orchestration"), K("bindings"), I(1), K("params"), K("city")]), Some(16));
        assert_eq!(line(&[K("orchestration"), K("timeout_ms")]), Some(10));
        assert_eq!(line(&[K("nope")]), None);
        assert_eq!(key_line_depth(FRONT, &[K("steps"), I(1), K("tool")]), Some((8, 3)));
        assert_eq!(key_line_depth(FRONT, &[K("steps"), I(2), K("tool")]), Some((3, 1)));
    }

    #[test]
    fn yaml_positions_are_dropped_from_messages() {
        assert_eq!(
            yaml_message(
                "steps[0]: unknown field `tol`, expected one of `title`, `tool`, `notes` at line 4 column 5"
            ),
            "steps[0]: unknown field `tol`, expected one of `title`, `tool`, `notes`; remove it or fix its spelling"
        );
        assert_eq!(
            yaml_message("mapping values are not allowed in this context at line 2 column 12"),
            "the front matter is not valid YAML: mapping values are not allowed in this context; fix the YAML syntax"
        );
    }

    #[test]
    fn fields_of_deserializer_messages() {
        assert_eq!(
            yaml_field("steps[0]: unknown field `note`, expected one of"),
            Some("steps[0].note".into())
        );
        assert_eq!(yaml_field("unknown field `stpes`, expected one of"), Some("stpes".into()));
        assert_eq!(yaml_field("orchestration.mode: unknown variant `x`"), Some("orchestration.mode".into()));
        assert_eq!(yaml_field("did not find expected ',' or ']', while parsing"), None);
        assert_eq!(yaml_field("mapping values are not allowed in this context"), None);
    }

    #[test]
    fn names() {
        assert_eq!(name_problem("trip-planning-2"), None);
        assert_eq!(name_problem("a"), None);
        for bad in
            ["", "Trip", "trip_plan", "trip plan", "-trip", "trip-", "trip--plan", &"a".repeat(65), "été"]
        {
            assert!(name_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn front_matter_is_split_from_the_body() {
        assert_eq!(split("---\nname: a\n---\n# T\nbody\n"), Ok(("name: a\n", "# T\nbody\n")));
        assert_eq!(split("---\n---"), Ok(("", "")));
        assert!(split("name: a\n").is_err());
        assert!(split("---\nname: a\n").is_err());
        assert_eq!(
            title_and_body(None, "# Plan a trip\n\nText", "trip"),
            ("Plan a trip".into(), "Text".into())
        );
        assert_eq!(title_and_body(Some("T".into()), "# H\nx", "trip"), ("T".into(), "# H\nx".into()));
        assert_eq!(title_and_body(None, "Text", "trip"), ("trip".into(), "Text".into()));
    }
}
