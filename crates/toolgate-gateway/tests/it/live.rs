//! Roles, toolsets, limits and skills changed while the gateway serves (`Gateway::apply`):
//! checked whole, swapped in one step, calls in flight finish on what they started with.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde_json::json;
use toolgate_authz::Policy;
use toolgate_core::{Caller, Effect, ErrorCode, ToolContext, ToolOutput, ToolSpec};
use toolgate_gateway::{CallOptions, Change, Gateway, Limits, Problem};
use toolgate_skills::{Skill, SkillSet};

use crate::common::{object, tool};

fn tools() -> Vec<Arc<dyn toolgate_core::Tool>> {
    let mut write = ToolSpec::new(
        "update_ledger",
        "Write a line to the ledger.",
        object(json!({"text": {"type": "string"}}), &["text"]),
    );
    write.effect = Effect::Write { idempotent: false };
    write.required_role = "member".into();
    let mut read = ToolSpec::new(
        "query_ledger",
        "Read the ledger; sleeps `ms` first.",
        object(json!({"ms": {"type": "integer"}}), &[]),
    );
    read.required_role = "member".into();
    vec![
        tool(write, |_ctx, p| async move { Ok(ToolOutput::json(json!({"wrote": p["text"]}))) }),
        tool(read, |_ctx, p| async move {
            tokio::time::sleep(Duration::from_millis(p["ms"].as_u64().unwrap_or(0))).await;
            Ok(ToolOutput::json(json!({"lines": 3})))
        }),
    ]
}

fn policy(toml: &str) -> Policy {
    Policy::from_toml(toml).unwrap()
}

async fn call(
    gateway: &Gateway,
    caller: &Caller,
    tool: &str,
    params: serde_json::Value,
) -> toolgate_core::Envelope {
    gateway.execute(&ToolContext::new(caller.clone()), tool, params, &CallOptions::default()).await
}

#[tokio::test]
async fn a_role_override_and_a_toolset_change_live_and_calls_in_flight_keep_their_snapshot() {
    let gateway = Gateway::builder().tools(tools()).build().unwrap();
    let mia = Caller::new("mia", "member");
    let mut changes = gateway.tools_changed();
    changes.mark_unchanged();
    assert!(call(&gateway, &mia, "update_ledger", json!({"text": "a"})).await.success);

    // A read that started before the change finishes on the policy it started with.
    let slow = {
        let (gateway, mia) = (gateway.clone(), mia.clone());
        tokio::spawn(async move { call(&gateway, &mia, "query_ledger", json!({"ms": 300})).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let applied = gateway
        .apply(Change::new().with_policy(policy(
            "[overrides]\nupdate_ledger = \"manager\"\nquery_ledger = \"manager\"\n[toolsets.auditors]\ntools = [\"query_ledger\"]\n",
        )))
        .unwrap();
    assert!(applied.policy_changed && !applied.limits_changed && !applied.skills_changed);
    assert!(changes.has_changed().unwrap(), "direct-mode sessions are told");
    assert!(slow.await.unwrap().success, "the call in flight kept its snapshot");

    let denied = call(&gateway, &mia, "update_ledger", json!({"text": "b"})).await;
    assert_eq!(denied.code(), Some(ErrorCode::PermissionDenied), "{denied:?}");
    assert_eq!(denied.error.unwrap().details.unwrap()["required_role"], "manager");
    assert!(gateway.discover(&mia, &toolgate_gateway::Filter::default()).is_empty());
    let mut auditor = Caller::new("ann", "manager");
    auditor.toolset = Some("auditors".into());
    assert!(call(&gateway, &auditor, "query_ledger", json!({})).await.success);
    assert_eq!(
        call(&gateway, &auditor, "update_ledger", json!({"text": "c"})).await.code(),
        Some(ErrorCode::PermissionDenied)
    );
    assert!(gateway.policy().toolset("auditors").is_some());
}

#[test]
fn a_policy_that_leaves_a_served_tool_without_its_role_is_refused_and_changes_nothing() {
    let gateway = Gateway::builder().tools(tools()).build().unwrap();
    let before = gateway.policy();
    let mut changes = gateway.tools_changed();
    changes.mark_unchanged();
    let problems = gateway
        .apply(
            Change::new()
                .with_policy(policy("roles = [\"reader\", \"writer\"]\n"))
                .with_limits(Limits { max_param_bytes: 10, ..Limits::default() }),
        )
        .unwrap_err();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems.iter().all(|p| matches!(p, Problem::Tool(toolgate_gateway::BuildError::UnknownRole { .. })))
    );
    assert!(problems[0].to_string().contains("`member`"), "{}", problems[0]);
    assert_eq!(*gateway.policy(), *before);
    assert_eq!(*gateway.limits(), Limits::default(), "the limits of a refused change are not taken either");
    assert!(!changes.has_changed().unwrap());
}

#[tokio::test]
async fn limits_change_live() {
    let gateway = Gateway::builder().tools(tools()).build().unwrap();
    let mia = Caller::new("mia", "member");
    let long = json!({"text": "x".repeat(200)});
    assert!(call(&gateway, &mia, "update_ledger", long.clone()).await.success);
    gateway.apply(Change::new().with_limits(Limits { max_param_bytes: 64, ..Limits::default() })).unwrap();
    let refused = call(&gateway, &mia, "update_ledger", long).await;
    assert_eq!(refused.code(), Some(ErrorCode::InvalidParams), "{refused:?}");
    assert_eq!(gateway.limits().max_param_bytes, 64);
}

const SKILL: &str = r#"---
name: ledger-check
description: Read the ledger. Use when the user asks about the ledger.
required_role: member
steps:
  - title: Read it
    tool: query_ledger
orchestration:
  mode: sequential
  input_schema:
    type: object
    properties: {}
  bindings:
    - tool: query_ledger
      params: {}
---
Read first.
"#;

#[tokio::test]
async fn skills_change_live_with_their_run_tools_and_a_skill_naming_a_missing_tool_is_refused() {
    let gateway = Gateway::builder().tools(tools()).build().unwrap();
    let mia = Caller::new("mia", "member");
    assert!(gateway.skill_guide(&mia, "ledger-check").is_err());
    let skill = Skill::parse(SKILL, "skills/ledger-check/SKILL.md").unwrap();
    let applied = gateway.apply(Change::new().with_skills(SkillSet::from_skills(vec![skill]))).unwrap();
    assert!(applied.skills_changed);
    assert!(gateway.skill_guide(&mia, "ledger-check").unwrap().contains("Read first."));
    assert_eq!(gateway.source_of("run_ledger_check").as_deref(), Some(toolgate_gateway::SKILLS_SOURCE));
    let ran = call(&gateway, &mia, "run_ledger_check", json!({})).await;
    assert!(ran.success, "{ran:?}");

    // A skill whose step names a tool that is not served: refused, the old skills stay.
    let broken = Skill::parse(
        &SKILL.replace("tool: query_ledger", "tool: query_nothing"),
        "skills/ledger-check/SKILL.md",
    )
    .unwrap();
    let problems = gateway.apply(Change::new().with_skills(SkillSet::from_skills(vec![broken]))).unwrap_err();
    assert!(problems.iter().any(|p| matches!(p, Problem::Skill(_))), "{problems:?}");
    assert!(problems.iter().any(|p| p.to_string().contains("query_nothing")), "{problems:?}");
    assert!(gateway.skill_guide(&mia, "ledger-check").is_ok());

    gateway.apply(Change::new().with_skills(SkillSet::default())).unwrap();
    assert!(gateway.spec("run_ledger_check").is_none());
    assert_eq!(
        call(&gateway, &mia, "run_ledger_check", json!({})).await.code(),
        Some(ErrorCode::ToolNotFound)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn calls_never_fail_while_the_policy_is_swapped_over_and_over() {
    let gateway = Gateway::builder().tools(tools()).build().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let (done, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let mut callers = Vec::new();
    for i in 0..4 {
        let (gateway, stop, done, failed) = (gateway.clone(), stop.clone(), done.clone(), failed.clone());
        callers.push(tokio::spawn(async move {
            let caller = Caller::new(format!("u{i}"), "manager");
            while !stop.load(Ordering::Relaxed) {
                let envelope = call(&gateway, &caller, "update_ledger", json!({"text": "t"})).await;
                let counter = if envelope.success { &done } else { &failed };
                counter.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for n in 0..200 {
        let role = if n % 2 == 0 { "manager" } else { "member" };
        let text = format!("[overrides]\nupdate_ledger = \"{role}\"\n");
        gateway.apply(Change::new().with_policy(policy(&text))).unwrap();
        tokio::task::yield_now().await;
    }
    stop.store(true, Ordering::Relaxed);
    for caller in callers {
        caller.await.unwrap();
    }
    assert_eq!(failed.load(Ordering::Relaxed), 0);
    assert!(done.load(Ordering::Relaxed) > 0);
}
