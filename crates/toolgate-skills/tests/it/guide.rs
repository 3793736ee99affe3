//! Rendered guides, snapshot at two roles: what a guest and a manager read.

use std::collections::BTreeMap;

use crate::common::{View, write_skill};
use serde_json::json;
use toolgate_authz::Policy;
use toolgate_core::{Caller, Effect, ToolSpec};
use toolgate_skills::{NOT_AVAILABLE, SkillSet, UNKNOWN_TOOL, render_guide};

const SKILL: &str = "\
---
name: trip-planning
description: Plan a business trip - flights, a hotel, then the booking. Use when the user wants to travel somewhere.
steps:
  - title: Find flights
    tool: search_flights
    notes: Ask for the departure city if the user did not say it.
  - title: Find a hotel
    tool: search_hotels
  - title: Book the trip
    tool: submit_travel_order
    notes: Show the flight and hotel first; book only after the user agrees.
  - title: Rent a car
    tool: rent_car
orchestration:
  mode: parallel
  input_schema:
    type: object
    properties:
      city: {type: string, description: Destination city}
      date: {type: string, format: date}
    required: [city, date]
  bindings:
    - tool: search_flights
      params: {destination: $input.city, date: $input.date}
    - tool: search_hotels
      params: {city: $input.city, check_in: $input.date}
  max_parallel: 2
---
# Plan a business trip

Trips start with what the user already knows: the city and the dates.
Never invent a date; ask.
";

fn specs() -> BTreeMap<String, ToolSpec> {
    let flights = ToolSpec::new(
        "search_flights",
        "Search flights to a city on a date.\nReturns up to 10 flights, cheapest first.",
        json!({
            "type": "object",
            "properties": {
                "destination": {"type": "string", "description": "City name"},
                "date": {"type": "string", "format": "date"}
            },
            "required": ["destination", "date"],
            "additionalProperties": false
        }),
    )
    .with_domain("travel");
    let hotels = ToolSpec::new(
        "search_hotels",
        "Search hotels in a city from a check-in date.",
        json!({
            "type": "object",
            "properties": {"city": {"type": "string"}, "check_in": {"type": "string", "format": "date"}},
            "required": ["city"],
            "additionalProperties": false
        }),
    )
    .with_domain("travel");
    let submit = ToolSpec::new(
        "submit_travel_order",
        "Book a flight and a hotel as one travel order.",
        json!({
            "type": "object",
            "properties": {"flight_id": {"type": "integer"}, "hotel_id": {"type": "integer"}},
            "required": ["flight_id", "hotel_id"],
            "additionalProperties": false
        }),
    )
    .with_effect(Effect::Write { idempotent: true })
    .with_role("manager")
    .with_domain("travel");
    [flights, hotels, submit].into_iter().map(|s| (s.name.clone(), s)).collect()
}

fn guide(role: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    write_skill(dir.path(), "trip-planning", SKILL);
    let (set, errors) = SkillSet::load_dir(dir.path());
    assert!(errors.is_empty(), "{errors:?}");
    let skill = set.get("trip-planning").unwrap();
    let mut specs = specs();
    let lookup = |name: &str| specs.get(name).cloned();
    let run = skill.tool_spec_with(&lookup).unwrap();
    specs.insert(run.name.clone(), run);
    let view = View { specs, policy: Policy::default(), caller: Caller::new("u1", role) };
    render_guide(skill, &view)
}

#[test]
fn guide_for_a_guest() {
    let text = guide("guest");
    assert!(text.contains(&format!("## Step 3: Book the trip {NOT_AVAILABLE}")));
    assert!(
        !text.contains("Book a flight and a hotel as one travel order."),
        "a tool the caller may not call is not described"
    );
    assert!(text.contains(&format!("## Step 4: Rent a car {UNKNOWN_TOOL}")));
    insta::assert_snapshot!("guide_guest", text);
}

#[test]
fn guide_for_a_manager() {
    let text = guide("manager");
    assert!(!text.contains(NOT_AVAILABLE));
    assert!(text.contains("- effect: write, idempotent"));
    insta::assert_snapshot!("guide_manager", text);
}

#[test]
fn run_tool_section_only_when_the_caller_may_call_it() {
    let skill = toolgate_skills::Skill::parse(SKILL, "skills/trip-planning/SKILL.md").unwrap();
    let view = View { specs: specs(), policy: Policy::default(), caller: Caller::new("u1", "admin") };
    let text = render_guide(&skill, &view);
    assert!(!text.contains("run_trip_planning"), "no run tool registered, no section");
    assert!(text.starts_with("# Plan a business trip\n\n**Purpose:** Plan a business trip"));
}
