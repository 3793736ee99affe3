//! Skills: SKILL.md files loaded into [`Skill`]s, rendered as guides for the
//! model ([`render_guide`]), and run as one tool when they have an
//! orchestration ([`orchestrate`], [`Skill::tool_spec`]).
//!
//! Most services use skills through `toolgate-gateway`, which loads them with
//! [`SkillSet::load_dir`], checks them against its tools and serves their
//! guides and `run_<skill>` tools. This crate is the format and its rules,
//! usable alone: a linter for SKILL.md files, a custom host, or tests.
//!
//! # Example
//!
//! A SKILL.md parsed from a string and its guide rendered for one caller:
//!
//! ```
//! use serde_json::json;
//! use toolgate_core::ToolSpec;
//! use toolgate_skills::{GuideView, NOT_AVAILABLE, Skill, render_guide};
//!
//! let text = "---
//! name: order-lookup
//! description: Find an order and cancel it. Use when the user asks about an order.
//! steps:
//!   - title: Find the order
//!     tool: query_order
//!     notes: Ask for the order number if the user did not give it.
//!   - title: Cancel it
//!     tool: cancel_order
//! ---
//! Confirm with the user before cancelling.
//! ";
//! let skill = Skill::parse(text, "skills/order-lookup/SKILL.md").map_err(|errors| errors[0].to_string())?;
//! assert_eq!((skill.id.as_str(), skill.steps.len()), ("order-lookup", 2));
//! assert_eq!(skill.required_role, "guest"); // the lowest role of the default hierarchy
//!
//! /// The tools as one caller sees them: both exist, only the first is theirs to call.
//! struct Member;
//! impl GuideView for Member {
//!     fn tool(&self, name: &str) -> Option<ToolSpec> {
//!         let schema = json!({"type": "object", "properties": {"order_id": {"type": "string"}}});
//!         Some(ToolSpec::new(name, "Find or cancel one order by its id.", schema))
//!     }
//!     fn may_call(&self, name: &str) -> bool {
//!         name == "query_order"
//!     }
//! }
//!
//! let guide = render_guide(&skill, &Member);
//! assert!(guide.starts_with("# order-lookup\n"));
//! assert!(guide.contains("## Step 1: Find the order\n\nCall `query_order`."));
//! assert!(guide.contains(&format!("## Step 2: Cancel it {NOT_AVAILABLE}")));
//! println!("{guide}");
//!
//! // A broken file says where and how to fix it.
//! let errors = Skill::parse("---\nname: Order\n---\n", "skills/Order/SKILL.md").unwrap_err();
//! assert_eq!(errors[0].line, Some(2));
//! assert!(errors[0].to_string().contains("has capitals"));
//! # Ok::<(), String>(())
//! ```
//!
//! # Cargo features
//!
//! None: the crate always parses, checks, renders and orchestrates. It reads
//! files with `std::fs` and needs only tokio's timer (`time`) to limit an
//! orchestration's steps, so any tokio runtime with time enabled runs it.
//!
//! # The SKILL.md format
//!
//! A skill is a folder `skills/<id>/` holding a `SKILL.md`: YAML front matter
//! between two `---` lines, then a markdown body. The front matter follows
//! the [Agent Skills](https://agentskills.io/specification) convention and
//! adds toolgate's fields. A full example, `skills/trip-planning/SKILL.md`:
//!
//! ```markdown
//! ---
//! name: trip-planning
//! description: Plan a business trip - find flights and a hotel for a city and dates. Use when the user wants to travel somewhere.
//! title: Plan a business trip
//! license: MIT
//! metadata:
//!   owner: travel-team
//! required_role: member
//! steps:
//!   - title: Find flights
//!     tool: search_flights
//!     notes: Ask for the departure city if the user did not say it.
//!   - title: Find a hotel
//!     tool: search_hotels
//!   - title: Book the trip
//!     tool: submit_travel_order
//!     notes: Show the user the flight and hotel first and book only after they agree.
//! orchestration:
//!   mode: parallel
//!   input_schema:
//!     type: object
//!     properties:
//!       city: {type: string, description: Destination city}
//!       date: {type: string, format: date}
//!     required: [city, date]
//!   bindings:
//!     - tool: search_flights
//!       params: {destination: $input.city, date: $input.date}
//!     - tool: search_hotels
//!       params: {city: $input.city, check_in: $input.date}
//!   max_parallel: 2
//!   step_timeout_ms: 10000
//!   timeout_ms: 20000
//! ---
//! Trips start with what the user already knows: the city and the dates.
//! Never invent a date; ask.
//! ```
//!
//! ## Fields
//!
//! | field | | rule |
//! |---|---|---|
//! | `name` | required | 1 to 64 characters: lowercase `a-z`, digits and hyphens, no hyphen at either end, no `--`; equal to the folder name |
//! | `description` | required | 1 to 1024 characters: what the skill does and when to use it |
//! | `license`, `compatibility` (≤ 500 chars), `metadata` (string to string), `allowed-tools` | optional | Agent Skills fields, kept in [`Skill::extra`] |
//! | `title` | optional | the guide's heading; without it, a leading `# ` heading of the body (taken out of the body), else the name |
//! | `required_role` | optional | the lowest role that sees the skill; default: the lowest role of the hierarchy ([`SkillSet::load_dir_with`]) |
//! | `steps` | optional | a list of `{title, tool, notes?}`; `tool` is a verb_noun tool name, or another MCP server's tool as `<upstream>__<tool>` (e.g. `weather__get_forecast`) |
//! | `orchestration` | optional | makes the skill a tool, below |
//!
//! Any other field is an error (a misspelt field must not pass silently).
//!
//! ## Orchestration
//!
//! With an `orchestration` block the skill is also the tool `run_<id>` (hyphens
//! become underscores: `run_trip_planning`), whose input schema is
//! `input_schema` made strict (`additionalProperties: false`; for routing, the
//! `route_by` field limited to the bound values). See [`Skill::tool_spec`] and
//! [`Skill::tool_spec_with`].
//!
//! - `mode`: `sequential` (bindings in order), `parallel` (concurrently, at
//!   most `max_parallel` at once, default 4, results in binding order) or
//!   `routing` (exactly one binding, the one whose `when` equals the input's
//!   `route_by` field).
//! - `bindings`: `{tool, params?, when?}`. Without `params` the tool gets the
//!   whole input. `params` is a template: the string `"$input"` is the whole
//!   input, `"$input.city"` (or `"$input.trip.days"`) that field, left out when
//!   the input has none; any other value is literal (`"$$"` starts a literal `$`).
//!   Every `$input.<field>` must name a property of `input_schema`.
//! - `route_by` and `when`: routing only. Each binding has a distinct `when`
//!   (string, number or boolean); an `enum` on the `route_by` property must
//!   list exactly the `when` values.
//! - `on_error`: `stop` (default: no further step starts and the run fails
//!   with `EXECUTION_ERROR`) or `continue` (every step runs; the run fails only
//!   when every step failed). Not for routing.
//! - `step_timeout_ms` (default 30000) and `timeout_ms` (default 60000): the
//!   limit of each step and of the whole run. A run past its limit is
//!   `TIMEOUT`, whatever `on_error` says.
//!
//! The result lists each step's envelope:
//! `{"skill", "mode", "steps": [{"tool", "envelope"}], "completed", "failed", "skipped"}`,
//! and an error carries the same object in its `details` (see [`orchestrate`]).
//! The gateway runs each step through its own pipeline by implementing
//! [`StepRunner`], so a step is checked exactly like a direct call.
//!
//! # Errors and warnings
//!
//! Every problem is a [`SkillError`] with the file, the line, the field and
//! the fix, e.g. `skills/Bad/SKILL.md:2: name `Bad-Skill` has capitals; use
//! lowercase letters, digits and hyphens`. [`SkillSet::load_dir`] reports a
//! bad file and still loads the others. [`SkillSet::check_tools`] checks the
//! loaded skills against the registered tools:
//!
//! - a step or binding naming a tool that does not exist is an **error**;
//! - a binding whose tool needs a role above the skill's is an **error**:
//!   `run_<skill>` would be offered to callers whose run must fail;
//! - a step whose tool needs a role above the skill's is a **warning**: the
//!   guide is still useful to lower roles, and [`render_guide`] marks that
//!   step "(not available to your role)" for them.
//!
//! Another MCP server's tools are listed only once it is connected, after the
//! skills load: [`SkillSet::check_tools_with`] accepts a missing
//! `<upstream>__<tool>` when that upstream is configured (an unknown prefix
//! is the same error as any unknown tool), and the gateway looks the tool up
//! again for each guide and each run.

#![deny(missing_docs)]

mod error;
mod guide;
mod orchestrate;
mod parse;
mod set;
mod skill;

pub use error::{ErrorKind, Severity, SkillError};
pub use guide::{GuideView, NOT_AVAILABLE, UNKNOWN_TOOL, render_guide};
pub use orchestrate::{SkillTool, StepRunner, orchestrate};
pub use set::{SKILL_FILE, SkillSet};
pub use skill::{AgentSkillsFields, Binding, FieldLines, Mode, OnError, Orchestration, Skill, Step};

#[cfg(test)]
mod tests {
    /// The example in the crate docs is a valid skill.
    #[test]
    fn the_documented_example_loads() {
        let docs: String = include_str!("lib.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//!"))
            .map(|l| l.strip_prefix(' ').unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n");
        let start = docs.find("```markdown\n").map(|i| i + "```markdown\n".len()).unwrap();
        let example = &docs[start..start + docs[start..].find("```").unwrap()];
        let skill = crate::Skill::parse(example, "skills/trip-planning/SKILL.md").unwrap();
        assert_eq!(skill.title, "Plan a business trip");
        assert_eq!(skill.steps.len(), 3);
        let spec = skill.tool_spec().unwrap();
        assert_eq!(spec.name, "run_trip_planning");
        spec.check().unwrap();
    }
}
