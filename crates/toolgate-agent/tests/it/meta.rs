//! The meta-tool scenario end to end: a model that sees only the three
//! meta-tools reads the travel-request guide, reads the submit schema,
//! submits through `execute_tool` and answers; the order is in the
//! database. The same script as a guest gets PERMISSION_DENIED fed back.

use serde_json::{Value, json};
use toolgate_agent::{Agent, Event, StopReason};
use toolgate_core::{Caller, ToolContext};
use toolgate_gateway::toolgate_skills::{Skill, SkillSet};
use toolgate_gateway::{CallOptions, Gateway, META_TOOLS};

use crate::model_server::{ModelServer, Reply, calls, text};
use crate::{config, run, tool_messages};

async fn travel_gateway(dir: &tempfile::TempDir) -> Gateway {
    let url = format!("sqlite:{}", dir.path().join("travel.db").display());
    let store = toolgate_travel::connect(&url).await.unwrap();
    let hierarchy = toolgate_authz::RoleHierarchy::default();
    let skill = Skill::parse_with(
        include_str!("../../../../skills/travel-request/SKILL.md"),
        "skills/travel-request/SKILL.md",
        &hierarchy,
    )
    .unwrap();
    Gateway::builder()
        .tools(toolgate_travel::tools(store, toolgate_travel::TravelConfig::default()))
        .skills(SkillSet::from_skills(vec![skill]))
        .build()
        .unwrap()
}

fn day(days: i64) -> String {
    (chrono::Utc::now().date_naive() + chrono::Duration::days(days)).to_string()
}

fn script(final_answer: &str) -> Vec<Reply> {
    let trip = json!({"destination": "Shanghai", "departure_city": "Beijing", "departure_date": day(10),
                      "return_date": day(12), "purpose": "customer workshop"});
    vec![
        calls(&[("g1", "get_skill_guide", json!({"skill_id": "travel-request"}))]),
        calls(&[("s1", "get_tool_schema", json!({"tool_name": "submit_travel_approval"}))]),
        calls(&[("e1", "execute_tool", json!({"tool_name": "submit_travel_approval", "parameters": trip}))]),
        text(final_answer),
    ]
}

async fn orders(gateway: &Gateway, user: &str) -> Vec<Value> {
    let ctx = ToolContext::new(Caller::new(user, "member"));
    let env = gateway.execute(&ctx, "query_travel_order", json!({}), &CallOptions::default()).await;
    assert!(env.success, "{env:?}");
    let result = env.result.unwrap();
    result["orders"].as_array().cloned().unwrap_or_else(|| panic!("{result}"))
}

#[tokio::test]
async fn a_member_completes_travel_request_through_the_meta_tools() {
    let dir = tempfile::tempdir().unwrap();
    let gateway = travel_gateway(&dir).await;
    let server = ModelServer::start(script("Your trip to Shanghai is submitted for approval.")).await;
    let agent = Agent::new(gateway.clone(), config(&server)).unwrap();
    let (outcome, events) = run(&agent, Caller::new("mia", "member"), "I need to go to Shanghai.").await;
    let outcome = outcome.unwrap();
    assert_eq!((outcome.stop_reason, outcome.steps), (StopReason::Answer, 4));
    // The model saw only the three meta-tools, and the catalog names the skill.
    for i in 0..4 {
        assert_eq!(server.tools_offered(i), META_TOOLS, "request {i}");
    }
    let system = server.messages(0)[0]["content"].as_str().unwrap().to_owned();
    assert!(system.contains("`travel-request`"), "{system}");
    let fed = tool_messages(&server.messages(3));
    assert_eq!(fed.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["g1", "s1", "e1"]);
    assert!(fed[0].1.contains("submit_travel_approval") && !fed[0].1.starts_with("Error"), "{}", fed[0].1);
    assert!(fed[1].1.contains("departure_date"), "{}", fed[1].1);
    assert!(fed[2].1.contains("order_id") || fed[2].1.contains("SUBMITTED"), "{}", fed[2].1);
    let finished: Vec<(String, bool)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallFinished { tool, success, .. } => Some((tool.clone(), *success)),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        [
            ("get_skill_guide".to_owned(), true),
            ("get_tool_schema".to_owned(), true),
            ("execute_tool".to_owned(), true)
        ]
    );
    let orders = orders(&gateway, "mia").await;
    assert_eq!(orders.len(), 1, "{orders:?}");
    assert_eq!(orders[0]["destination"], "Shanghai");
}

#[tokio::test]
async fn a_guest_running_the_same_script_is_told_permission_denied() {
    let dir = tempfile::tempdir().unwrap();
    let gateway = travel_gateway(&dir).await;
    let server =
        ModelServer::start(script("I cannot submit trips for you: permission denied (a member may).")).await;
    let agent = Agent::new(gateway.clone(), config(&server)).unwrap();
    let (outcome, _events) = run(&agent, Caller::new("gus", "guest"), "I need to go to Shanghai.").await;
    let outcome = outcome.unwrap();
    assert_eq!(outcome.stop_reason, StopReason::Answer);
    assert!(outcome.answer.contains("permission denied"), "{}", outcome.answer);
    let fed = tool_messages(&server.messages(3));
    assert_eq!(fed.len(), 3);
    for (id, text) in &fed {
        assert!(text.starts_with("Error PERMISSION_DENIED"), "{id}: {text}");
    }
    assert!(orders(&gateway, "gus").await.is_empty());
}

#[tokio::test]
async fn a_business_tool_called_by_its_own_name_in_meta_mode_is_answered_with_execute_tool_and_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let gateway = travel_gateway(&dir).await;
    let trip = json!({"destination": "Shanghai", "departure_city": "Beijing", "departure_date": day(10),
                      "return_date": day(12), "purpose": "customer workshop"});
    let server = ModelServer::start(vec![
        calls(&[("d1", "submit_travel_approval", trip.clone())]),
        calls(&[("e1", "execute_tool", json!({"tool_name": "submit_travel_approval", "parameters": trip}))]),
        text("Submitted."),
    ])
    .await;
    let agent = Agent::new(gateway.clone(), config(&server)).unwrap();
    let (outcome, _events) = run(&agent, Caller::new("mia", "member"), "I need to go to Shanghai.").await;
    assert_eq!(outcome.unwrap().stop_reason, StopReason::Answer);
    let fed = tool_messages(&server.messages(2));
    assert_eq!(fed.len(), 2, "{fed:?}");
    assert!(
        fed[0].1.starts_with("Error TOOL_NOT_FOUND") && fed[0].1.contains("through `execute_tool`"),
        "{}",
        fed[0].1
    );
    // The corrected call made the one order; the direct one ran nothing.
    assert!(!fed[1].1.starts_with("Error") && !fed[1].1.contains("duplicate"), "{}", fed[1].1);
    assert_eq!(orders(&gateway, "mia").await.len(), 1);
    // The rule is in the catalog the model read.
    let system = server.messages(0)[0]["content"].as_str().unwrap().to_owned();
    assert!(system.contains("through `execute_tool`, never directly"), "{system}");
}
