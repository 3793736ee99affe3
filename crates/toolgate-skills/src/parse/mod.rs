//! Reading a SKILL.md file: the front matter between `---` lines, its YAML
//! into strict raw structs, the field rules, and the source line of each field.
//!
//! `raw` holds the strict shapes serde reads, `lines` finds the source line
//! of a field, `orchestration` checks the orchestration block.

mod lines;
mod orchestration;
mod raw;

use std::collections::BTreeMap;
use std::path::Path;

use toolgate_core::names::{is_namespaced_tool_name, is_tool_name};

use crate::error::{ErrorKind, SkillError};
use crate::skill::{AgentSkillsFields, FieldLines, Skill, Step};

use self::lines::{Checker, Seg, yaml_field, yaml_message};
use self::orchestration::check_orchestration;
use self::raw::RawFront;

const MAX_NAME: usize = 64;
const MAX_DESCRIPTION: usize = 1024;
const MAX_COMPATIBILITY: usize = 500;
/// `run_` + the id must still be a tool name of at most 64 characters.
pub(super) const MAX_ORCHESTRATED_NAME: usize = 60;

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
    // The YAML parser's time grows with the square of the nesting depth: deeper than a JSON
    // document may nest is refused first, in one pass.
    if let Err(deep) = toolgate_core::nesting::check_yaml(front) {
        return Err(syntax(
            deep.line + 1,
            format!(
                "the front matter nests deeper than {} levels, the most a JSON document may nest; flatten it",
                deep.limit
            ),
        ));
    }
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
        if !is_tool_name(&step.tool) && !is_namespaced_tool_name(&step.tool) {
            cx.error(
                &[Seg::Key("steps"), Seg::Index(i), Seg::Key("tool")],
                ErrorKind::Field,
                format!(
                    "steps[{i}].tool `{}` is not a tool name; use the tool's verb_noun snake_case name, e.g. `query_travel_order`, or an upstream MCP server's tool as `<upstream>__<tool>`",
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

#[cfg(test)]
mod tests {
    use super::lines::*;
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
