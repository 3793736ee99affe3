//! Loading SKILL.md files from real folders: every bad input gets one clear
//! message naming the file, line, field and fix, and the other skills still load.

use std::path::Path;

use crate::common::{spec, write_skill};
use serde_json::json;
use toolgate_authz::Policy;
use toolgate_core::{Effect, ToolSpec};
use toolgate_skills::{ErrorKind, Mode, OnError, Severity, Skill, SkillError, SkillSet};

const GOOD: &str = "\
---
name: trip-planning
description: Plan a trip. Use when the user wants to travel.
required_role: member
steps:
  - title: Find flights
    tool: search_flights
    notes: Ask for the dates first.
  - title: Find a hotel
    tool: search_hotels
---
# Plan a trip

Ask before you book.
";

/// The messages, with the tempdir prefix taken off the paths.
fn messages(dir: &Path, errors: &[SkillError]) -> Vec<String> {
    let prefix = format!("{}/", dir.display());
    errors.iter().map(|e| e.to_string().replace(&prefix, "")).collect()
}

/// Load one skill folder holding `text`; the messages of its problems.
fn check(folder: &str, text: &str, expect: &[&str]) -> Vec<SkillError> {
    let dir = tempfile::tempdir().unwrap();
    write_skill(dir.path(), folder, text);
    let (set, errors) = SkillSet::load_dir(dir.path());
    assert_eq!(messages(dir.path(), &errors), expect);
    assert!(set.is_empty(), "a bad skill must not load");
    errors
}

#[test]
fn a_good_skill_loads_with_its_fields() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(dir.path(), "trip-planning", GOOD);
    let (set, errors) = SkillSet::load_dir(dir.path());
    assert!(errors.is_empty(), "{errors:?}");
    let skill = set.get("trip-planning").unwrap();
    assert_eq!(skill.name, "trip-planning");
    assert_eq!(skill.title, "Plan a trip");
    assert_eq!(skill.body, "Ask before you book.");
    assert_eq!(skill.required_role, "member");
    assert_eq!(skill.steps.len(), 2);
    assert_eq!(skill.steps[0].notes.as_deref(), Some("Ask for the dates first."));
    assert_eq!(skill.steps[1].tool, "search_hotels");
    assert_eq!(skill.lines.get("steps[1].tool"), Some(10));
    assert_eq!(skill.source, dir.path().join("trip-planning").join("SKILL.md"));
    assert!(skill.orchestration.is_none());
    assert!(skill.tool_spec().is_none());
}

#[test]
fn required_role_defaults_to_the_lowest_role() {
    let text = "---\nname: a\ndescription: d\n---\n";
    assert_eq!(Skill::parse(text, "skills/a/SKILL.md").unwrap().required_role, "guest");
    let hierarchy = toolgate_authz::RoleHierarchy::new(["访客", "成员"]).unwrap();
    assert_eq!(Skill::parse_with(text, "skills/a/SKILL.md", &hierarchy).unwrap().required_role, "访客");
}

#[test]
fn agent_skills_optional_fields_are_kept() {
    let text = "---\nname: a\ndescription: d\nlicense: MIT\ncompatibility: any\nmetadata:\n  owner: team\nallowed-tools: Read\ntitle: The A skill\n---\n# Heading kept\n";
    let skill = Skill::parse(text, "skills/a/SKILL.md").unwrap();
    assert_eq!(skill.extra.license.as_deref(), Some("MIT"));
    assert_eq!(skill.extra.metadata.get("owner").map(String::as_str), Some("team"));
    assert_eq!(skill.extra.allowed_tools.as_deref(), Some("Read"));
    assert_eq!(skill.title, "The A skill");
    assert_eq!(skill.body, "# Heading kept");
}

#[test]
fn broken_yaml() {
    let errors = check(
        "broken",
        "---\nname: broken\ndescription: [unclosed\nsteps: []\n---\n",
        &[
            "broken/SKILL.md:4: the front matter is not valid YAML: did not find expected ',' or ']', while parsing a flow sequence; fix the YAML syntax",
        ],
    );
    assert_eq!(errors[0].kind, ErrorKind::Syntax);
    assert_eq!(errors[0].field, None);
}

#[test]
fn no_front_matter() {
    check(
        "plain",
        "# Just markdown\n",
        &[
            "plain/SKILL.md:1: no front matter; a SKILL.md starts with a `---` line, then the YAML fields (name, description, ...), then a closing `---` line",
        ],
    );
    check(
        "open",
        "---\nname: open\ndescription: d\n",
        &["open/SKILL.md:1: the front matter has no closing `---` line; add one after the last field"],
    );
}

#[test]
fn missing_name() {
    let errors = check(
        "no-name",
        "---\ndescription: Does things.\n---\n",
        &["no-name/SKILL.md:1: missing `name`; add `name: no-name` (the folder name) to the front matter"],
    );
    assert_eq!(errors[0].field.as_deref(), Some("name"));
    assert_eq!(errors[0].skill.as_deref(), Some("no-name"));
    assert_eq!(errors[0].severity, Severity::Error);
}

#[test]
fn name_with_capitals() {
    let errors = check(
        "Bad",
        "---\nname: Bad-Skill\ndescription: d\n---\n",
        &["Bad/SKILL.md:2: name `Bad-Skill` has capitals; use lowercase letters, digits and hyphens"],
    );
    assert_eq!((errors[0].line, errors[0].kind), (Some(2), ErrorKind::Field));
}

#[test]
fn other_bad_names() {
    check(
        "trip",
        "---\ndescription: d\nname: trip_plan\n---\n",
        &["trip/SKILL.md:3: name `trip_plan` has `_`; use lowercase letters, digits and hyphens"],
    );
    check(
        "trip",
        "---\nname: trip--plan\ndescription: d\n---\n",
        &["trip/SKILL.md:2: name `trip--plan` has `--`; use single hyphens between words"],
    );
    check(
        "trip",
        "---\nname: plan-trip\ndescription: d\n---\n",
        &[
            "trip/SKILL.md:2: name `plan-trip` differs from its folder `trip`; rename the folder or the name so they match",
        ],
    );
    let long = "a".repeat(65);
    check(
        &long,
        &format!("---\nname: {long}\ndescription: d\n---\n"),
        &[&format!(
            "{long}/SKILL.md:2: name is 65 characters, the limit is 64; shorten it (and rename the folder to match)"
        )],
    );
}

#[test]
fn description_of_2000_characters() {
    let text = format!("---\nname: wordy\ndescription: {}\n---\n", "x".repeat(2000));
    let errors = check(
        "wordy",
        &text,
        &[
            "wordy/SKILL.md:3: description is 2000 characters, the limit is 1024; shorten it and move the details into the body",
        ],
    );
    assert_eq!(errors[0].field.as_deref(), Some("description"));
}

#[test]
fn missing_description_and_every_field_problem_at_once() {
    check(
        "many",
        "---\nname: many\nsteps:\n  - title: ''\n    tool: Find Flights\n---\n",
        &[
            "many/SKILL.md:1: missing `description`; add one saying what the skill does and when to use it",
            "many/SKILL.md:4: steps[0].title is empty; say what the step does, e.g. \"Find flights\"",
            "many/SKILL.md:5: steps[0].tool `Find Flights` is not a tool name; use the tool's verb_noun snake_case name, e.g. `query_travel_order`, or an upstream MCP server's tool as `<upstream>__<tool>`",
        ],
    );
}

#[test]
fn unknown_fields_are_errors() {
    check(
        "typo",
        "---\nname: typo\ndescription: d\nstpes: []\n---\n",
        &[
            "typo/SKILL.md:4: unknown field `stpes`, expected one of `name`, `description`, `title`, `license`, `compatibility`, `metadata`, `allowed-tools`, `required_role`, `steps`, `orchestration`; remove it or fix its spelling",
        ],
    );
    let errors = check(
        "typo",
        "---\nname: typo\ndescription: d\nsteps:\n  - title: a\n    tool: find_flight\n    note: x\n---\n",
        &[
            "typo/SKILL.md:7: steps[0]: unknown field `note`, expected one of `title`, `tool`, `notes`; remove it or fix its spelling",
        ],
    );
    assert_eq!(errors[0].field.as_deref(), Some("steps[0].note"));
    check(
        "typo",
        "---\nname: typo\ndescription: d\norchestration:\n  mode: paralel\n---\n",
        &[
            "typo/SKILL.md:5: orchestration.mode: unknown variant `paralel`, expected one of `sequential`, `parallel`, `routing`; fix the value",
        ],
    );
}

const ROUTING: &str = "\
---
name: book-transport
description: Book a flight or a train.
orchestration:
  mode: routing
  route_by: kind
  input_schema:
    type: object
    properties:
      kind: {type: string, enum: [flight, train, bus]}
      city: {type: string}
    required: [kind, city]
  bindings:
    - tool: book_flight
      when: flight
    - tool: book_train
      when: train
      params:
        destination: $input.city
    - tool: book_ferry
      when: ferry
---
";

#[test]
fn routing_values_must_match_the_bindings() {
    check(
        "book-transport",
        ROUTING,
        &[
            "book-transport/SKILL.md:7: input_schema allows `kind` = \"bus\", which matches no binding; add a binding with `when: \"bus\"` or drop the value from the enum",
            "book-transport/SKILL.md:21: orchestration.bindings[2].when \"ferry\" is not an allowed value of `kind` (\"flight\", \"train\", \"bus\"), so this binding can never run; fix the value or add it to the enum",
        ],
    );
}

#[test]
fn orchestration_rules() {
    let text = "\
---
name: mixed
description: d
orchestration:
  mode: sequential
  route_by: kind
  max_parallel: 2
  input_schema:
    type: object
    properties:
      city: {type: string}
      user_id: {type: string}
  bindings:
    - tool: find_hotel
      when: x
      params: {city: $input.town, note: $city}
---
";
    check(
        "mixed",
        text,
        &[
            "mixed/SKILL.md:16: orchestration.bindings[0].params reads `$input.town`, but input_schema has no property `town`; use one of: city, user_id",
            "mixed/SKILL.md:16: orchestration.bindings[0].params uses `$city`; write `$input` (the whole input), `$input.<field>`, or `$$` for a literal `$`",
            "mixed/SKILL.md:15: orchestration.bindings[0].when is only for mode routing; remove it or set `mode: routing`",
            "mixed/SKILL.md:6: orchestration.route_by is only for mode routing; remove it or set `mode: routing`",
            "mixed/SKILL.md:7: orchestration.max_parallel is only for mode parallel; remove it or set `mode: parallel`",
        ],
    );
    // With those fixed, the injected field is refused by the tool contract.
    let text = "---\nname: mixed\ndescription: d\norchestration:\n  mode: sequential\n  input_schema:\n    type: object\n    properties:\n      user_id: {type: string}\n  bindings:\n    - tool: find_hotel\n---\n";
    check(
        "mixed",
        text,
        &[
            "mixed/SKILL.md:6: orchestration.input_schema: tool `run_mixed`: input schema exposes `user_id` at /properties/user_id; it comes from the call context, remove it from the schema",
        ],
    );
    check(
        "empty",
        "---\nname: empty\ndescription: d\norchestration:\n  mode: parallel\n  input_schema: {type: object}\n---\n",
        &["empty/SKILL.md:4: orchestration.bindings is empty; bind at least one tool (`- tool: <name>`)"],
    );
}

#[test]
fn a_bad_skill_does_not_stop_the_others() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(dir.path(), "trip-planning", GOOD);
    write_skill(dir.path(), "Bad", "---\nname: Bad-Skill\ndescription: d\n---\n");
    write_skill(dir.path(), "broken", "---\nname: [\n---\n");
    write_skill(dir.path(), "zz-last", "---\nname: zz-last\ndescription: Last one.\n---\nBody.\n");
    std::fs::create_dir(dir.path().join("no-file")).unwrap();
    std::fs::create_dir(dir.path().join(".hidden")).unwrap();
    std::fs::write(dir.path().join("README.md"), "not a skill").unwrap();

    let (set, errors) = SkillSet::load_dir(dir.path());
    let ids: Vec<&str> = set.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["trip-planning", "zz-last"]);
    let msgs = messages(dir.path(), &errors);
    assert_eq!(msgs.len(), 3, "{msgs:#?}");
    assert!(msgs[0].starts_with("Bad/SKILL.md:2: name `Bad-Skill` has capitals"), "{msgs:?}");
    assert!(msgs[1].starts_with("broken/SKILL.md:3: the front matter is not valid YAML"), "{msgs:?}");
    assert_eq!(
        msgs[2],
        format!(
            "no-file: warning: no SKILL.md in this folder; add one, or move the folder out of {}",
            dir.path().display()
        )
    );
    assert_eq!(errors.iter().filter(|e| e.is_error()).count(), 2);
}

#[test]
fn a_missing_folder_is_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let (set, errors) = SkillSet::load_dir(&dir.path().join("nope"));
    assert!(set.is_empty());
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].kind, ErrorKind::Io);
    assert!(errors[0].message.starts_with("cannot read the skills folder: "), "{}", errors[0]);
}

#[test]
fn non_utf8_file_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("bin")).unwrap();
    std::fs::write(dir.path().join("bin/SKILL.md"), [0xff, 0xfe, 0x00]).unwrap();
    let (_, errors) = SkillSet::load_dir(dir.path());
    assert_eq!(
        messages(dir.path(), &errors),
        ["bin/SKILL.md: cannot read the file: stream did not contain valid UTF-8; it must be UTF-8 text"]
    );
}

fn registry(name: &str) -> Option<ToolSpec> {
    match name {
        "search_flights" | "search_hotels" => Some(spec(name, Effect::Read, "guest", "travel")),
        "submit_travel_order" => Some(spec(name, Effect::Write { idempotent: false }, "manager", "travel")),
        _ => None,
    }
}

#[test]
fn check_tools_reports_unknown_tools_and_roles() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(
        dir.path(),
        "book-trip",
        "\
---
name: book-trip
description: Find and book a trip.
required_role: member
steps:
  - title: Find flights
    tool: search_flights
  - title: Find a car
    tool: find_car
  - title: Book
    tool: submit_travel_order
orchestration:
  mode: sequential
  input_schema: {type: object, properties: {city: {type: string}}}
  bindings:
    - tool: search_flights
    - tool: submit_travel_order
---
",
    );
    write_skill(dir.path(), "odd-role", "---\nname: odd-role\ndescription: d\nrequired_role: boss\n---\n");
    let (set, errors) = SkillSet::load_dir(dir.path());
    assert!(errors.is_empty(), "{errors:?}");
    let found = set.check_tools(&registry, &Policy::default());
    assert_eq!(
        messages(dir.path(), &found),
        [
            "book-trip/SKILL.md:9: steps[1].tool names `find_car`, which is not a registered tool; fix the name or register the tool",
            "book-trip/SKILL.md:11: warning: steps[2].tool `submit_travel_order` needs role `manager`, above the skill's `member`; callers below `manager` see this step marked as not available. Raise required_role to `manager` if the skill cannot work without this step",
            "book-trip/SKILL.md:17: orchestration.bindings[1].tool `submit_travel_order` needs role `manager`, above the skill's `member`; `run_book_trip` would fail for callers below `manager`. Raise required_role to `manager` or bind another tool",
            "odd-role/SKILL.md:4: required_role `boss` is not a role of this deployment (guest < member < manager < admin); use one of them",
        ]
    );
    assert_eq!(found[0].kind, ErrorKind::UnknownTool);
    assert_eq!(found[1].severity, Severity::Warning);
    assert_eq!(found[2].severity, Severity::Error);
    // A per-deployment override is what counts.
    let policy = Policy::default().with_override("submit_travel_order", "member").unwrap();
    let found = set.check_tools(&registry, &policy);
    assert_eq!(found.len(), 2, "{found:?}");
}

#[test]
fn upstream_tools_load_when_their_upstream_is_configured() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(
        dir.path(),
        "forecast",
        "\
---
name: forecast
description: Check the long-range forecast.
required_role: member
steps:
  - title: Forecast
    tool: weather__get_forecast
  - title: Ghost
    tool: ghost__get_thing
orchestration:
  mode: sequential
  input_schema: {type: object, properties: {city: {type: string}}}
  bindings:
    - tool: weather__get_forecast
---
",
    );
    let (set, errors) = SkillSet::load_dir(dir.path());
    assert!(errors.is_empty(), "a namespaced name parses: {errors:?}");
    // `weather` is a configured upstream whose tools arrive later; `ghost` is not.
    let later = |name: &str| name.starts_with("weather__");
    let found = set.check_tools_with(&registry, &later, &Policy::default());
    assert_eq!(
        messages(dir.path(), &found),
        [
            "forecast/SKILL.md:9: steps[1].tool names `ghost__get_thing`, which is not a registered tool; fix the name or register the tool",
        ]
    );
    assert_eq!(found[0].kind, ErrorKind::UnknownTool);
    // Without the upstream, its tool is as unknown as any other.
    let found = set.check_tools(&registry, &Policy::default());
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found.iter().all(|p| p.kind == ErrorKind::UnknownTool && p.is_error()));
}

#[test]
fn the_default_role_must_exist_in_the_deployment() {
    let set = SkillSet::from_skills(vec![
        Skill::parse("---\nname: a\ndescription: d\n---\n", "skills/a/SKILL.md").unwrap(),
    ]);
    let policy = Policy::new(toolgate_authz::RoleHierarchy::new(["访客", "成员"]).unwrap());
    let found = set.check_tools(&registry, &policy);
    assert_eq!(
        found.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [
            "skills/a/SKILL.md:1: the skill sets no required_role and the default `guest` is not a role of this deployment (访客 < 成员); set required_role, or load the skills with the deployment's role hierarchy"
        ]
    );
}

#[test]
fn orchestration_defaults_and_run_tool_spec() {
    let text = "\
---
name: trip-search
description: Search flights and hotels.
orchestration:
  mode: parallel
  input_schema:
    type: object
    properties:
      city: {type: string}
    required: [city]
  bindings:
    - tool: search_flights
    - tool: search_hotels
      params: {city: $input.city}
---
";
    let skill = Skill::parse(text, "skills/trip-search/SKILL.md").unwrap();
    let orch = skill.orchestration.as_ref().unwrap();
    assert_eq!((orch.mode, orch.on_error, orch.max_parallel), (Mode::Parallel, OnError::Stop, 4));
    assert_eq!(orch.step_timeout.as_millis(), 30_000);
    assert_eq!(orch.timeout.as_millis(), 60_000);

    let plain = skill.tool_spec().unwrap();
    assert_eq!(plain.name, "run_trip_search");
    assert_eq!(plain.effect, Effect::Write { idempotent: false });
    assert_eq!(plain.domain, "skills");
    assert_eq!(plain.required_role, "guest");
    assert_eq!(plain.input_schema["additionalProperties"], json!(false));
    plain.check().unwrap();
    assert_eq!(
        plain.description,
        "Search flights and hotels. Runs `search_flights`, `search_hotels` at the same time (at most 4 at once; after a failure no further step starts). Answers `steps` (each step's tool and envelope) with `completed` and `failed` counts."
    );

    let derived = skill.tool_spec_with(&registry).unwrap();
    assert_eq!((derived.effect, derived.domain.as_str()), (Effect::Read, "travel"));
    let writes = |name: &str| {
        registry(name).map(|s| {
            if name == "search_hotels" {
                s.with_effect(Effect::Write { idempotent: true }).with_domain("hotels")
            } else {
                s
            }
        })
    };
    let derived = skill.tool_spec_with(&writes).unwrap();
    assert_eq!((derived.effect, derived.domain.as_str()), (Effect::Write { idempotent: true }, "skills"));
    // An unknown bound tool: nothing can be derived, the safe default stays.
    assert_eq!(skill.tool_spec_with(&|_| None).unwrap().effect, Effect::Write { idempotent: false });
}

#[test]
fn routing_run_tool_lists_the_routes_in_its_schema() {
    let text = "\
---
name: find-transport
description: Find a flight or a train.
orchestration:
  mode: routing
  route_by: kind
  input_schema:
    type: object
    properties:
      kind: {type: string}
  bindings:
    - tool: search_flights
      when: flight
    - tool: search_trains
      when: train
---
";
    let spec = Skill::parse(text, "skills/find-transport/SKILL.md").unwrap().tool_spec().unwrap();
    assert_eq!(spec.input_schema["properties"]["kind"]["enum"], json!(["flight", "train"]));
    assert!(
        spec.description.contains(
            "Runs one tool picked by `kind`: \"flight\" -> `search_flights`, \"train\" -> `search_trains`."
        ),
        "{}",
        spec.description
    );
}
