//! Skills through the gateway: guides filtered by role, and `run_<skill>`
//! tools whose steps run through the same pipeline as direct calls.

use crate::common::{ctx, gateway_with};
use serde_json::json;
use toolgate_core::{Caller, ErrorCode};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_skills::SkillSet;

const FLIGHT_CHECK: &str = r#"---
name: flight-check
description: Check flights and who is asking. Use when the user asks about flights.
required_role: member
steps:
  - title: Find flights
    tool: search_flights
    notes: Ask for the cities if the user did not say them.
  - title: Approve the budget
    tool: approve_budget
orchestration:
  mode: sequential
  input_schema:
    type: object
    properties:
      from: {type: string}
      to: {type: string}
      date: {type: string}
    required: [from, to, date]
  bindings:
    - tool: search_flights
    - tool: whoami_now
      params: {}
---
Flights first, always.
"#;

fn gateway_with_skills() -> (Gateway, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("flight-check")).unwrap();
    std::fs::write(dir.path().join("flight-check/SKILL.md"), FLIGHT_CHECK).unwrap();
    let (set, errors) = SkillSet::load_dir(dir.path());
    assert!(errors.is_empty(), "{errors:?}");
    let base = gateway_with(vec![]);
    let tools: Vec<_> = base.all_specs().into_iter().map(|s| s.name).collect();
    assert!(tools.contains(&"search_flights".to_string()));
    // Rebuild with the skills (the common tools plus the skill set).
    let gw = crate::common::gateway_builder(vec![]).skills(set).build().unwrap();
    (gw, dir)
}

#[tokio::test]
async fn guides_are_filtered_by_role() {
    let (gw, _dir) = gateway_with_skills();
    let guide = gw.skill_guide(&Caller::new("u", "member"), "flight-check").unwrap();
    assert!(guide.contains("search_flights"));
    assert!(guide.contains("Flights first, always."));
    assert!(
        guide.contains("not available to your role"),
        "approve_budget must be marked for a member:\n{guide}"
    );
    let manager_guide = gw.skill_guide(&Caller::new("u", "manager"), "flight-check").unwrap();
    assert!(!manager_guide.contains("not available to your role"));
    let err = gw.skill_guide(&Caller::new("u", "guest"), "flight-check").unwrap_err();
    assert_eq!(err.code, ErrorCode::PermissionDenied);
    let err = gw.skill_guide(&Caller::new("u", "member"), "flight-chek").unwrap_err();
    assert_eq!(err.code, ErrorCode::SkillNotFound);
    assert!(err.message.contains("flight-check"));
    assert!(gw.catalog(&Caller::new("u", "member")).contains("`flight-check`"));
    assert!(!gw.catalog(&Caller::new("u", "guest")).contains("flight-check"));
    let env = gw.call_meta(&ctx("member"), "get_skill_guide", json!({"skill_id": "flight-check"})).await;
    assert!(env.success);
    assert_eq!(env.result.unwrap()["guide"], json!(guide));
}

#[tokio::test]
async fn skill_tools_run_their_steps_through_the_pipeline() {
    let (gw, _dir) = gateway_with_skills();
    let spec = gw.spec("run_flight_check").expect("run_flight_check is registered");
    assert_eq!(spec.required_role, "member");
    let env = gw
        .execute(
            &ctx("member"),
            "run_flight_check",
            json!({"from": "PAR", "to": "OSL", "date": "2026-07-15"}),
            &CallOptions::default(),
        )
        .await;
    assert!(env.success, "{env:?}");
    let steps = env.result.unwrap()["steps"].as_array().unwrap().clone();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["envelope"]["result"]["count"], 2);
    assert_eq!(steps[1]["envelope"]["result"]["user_id"], "u-1");
    // The input is validated by the skill tool's own schema.
    let env =
        gw.execute(&ctx("member"), "run_flight_check", json!({"from": "PAR"}), &CallOptions::default()).await;
    assert_eq!(env.code(), Some(ErrorCode::InvalidParams));
    // A step that fails validation inside the run stops it with its envelope in the details.
    let env = gw
        .execute(
            &ctx("member"),
            "run_flight_check",
            json!({"from": "P", "to": "OSL", "date": "2026-07-15"}),
            &CallOptions::default(),
        )
        .await;
    assert_eq!(env.code(), Some(ErrorCode::ExecutionError), "{env:?}");
    let details = env.error.unwrap().details.unwrap();
    assert_eq!(details["steps"][0]["envelope"]["error"]["code"], "INVALID_PARAMS");
}

#[tokio::test]
async fn a_skill_naming_a_missing_tool_is_left_out_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("broken-one")).unwrap();
    std::fs::write(
        dir.path().join("broken-one/SKILL.md"),
        "---\nname: broken-one\ndescription: Uses a tool that is not there.\nsteps:\n  - title: Missing\n    tool: query_nothing\n---\nBody.\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("flight-check")).unwrap();
    std::fs::write(dir.path().join("flight-check/SKILL.md"), FLIGHT_CHECK).unwrap();
    let (set, errors) = SkillSet::load_dir(dir.path());
    assert!(errors.is_empty(), "{errors:?}");
    let gw = crate::common::gateway_builder(vec![]).skills(set).build().unwrap();
    assert!(gw.skill_set().get("broken-one").is_none());
    assert!(gw.skill_set().get("flight-check").is_some());
    let problems = gw.skill_problems();
    let problem = problems.iter().find(|p| p.is_error()).expect("a reported error");
    assert!(problem.message.contains("query_nothing"), "{}", problem.message);
}
