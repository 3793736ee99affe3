//! A deployment with a weather upstream (the official Python SDK server of
//! mcp-upstream's tests, as a child process), started as `toolgate serve`
//! starts it: `query_weather`'s `beyond_range` names the upstream's forecast
//! tool, which works, and skills name upstream tools like any other.

use std::path::Path;

use chrono::{Duration, Utc};
use serde_json::{Value, json};
use toolgate::{App, Config};
use toolgate_core::{Caller, Envelope, Signal, ToolContext};
use toolgate_gateway::CallOptions;

const SERVER: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../toolgate-mcp-upstream/tests/python/upstream_server.py");

fn skill(dir: &Path, id: &str, text: &str) {
    std::fs::create_dir_all(dir.join(id)).unwrap();
    std::fs::write(dir.join(id).join("SKILL.md"), text).unwrap();
}

const LONG_FORECAST: &str = "\
---
name: long-forecast
description: The forecast for a trip further ahead than query_weather serves.
required_role: member
steps:
  - title: Try the built-in forecast
    tool: query_weather
    notes: A beyond_range signal names the tool to use instead.
  - title: Ask the weather service
    tool: weather__get_forecast
orchestration:
  mode: sequential
  input_schema:
    type: object
    properties:
      city: {type: string, description: The city.}
    required: [city]
  bindings:
    - tool: weather__get_forecast
      params: {city: $input.city, days: 5}
---
";

async fn call(app: &App, ctx: &ToolContext, tool: &str, params: Value) -> Envelope {
    app.gateway.execute(ctx, tool, params, &CallOptions::default()).await
}

#[tokio::test]
async fn a_weather_upstream_is_named_by_beyond_range_and_by_skills() {
    let Some(python) = toolgate_test_support::python::with("from mcp.server.mcpserver import MCPServer")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let skills = dir.path().join("skills");
    skill(&skills, "long-forecast", LONG_FORECAST);
    // An unknown upstream prefix is refused like any unknown tool; a tool the
    // connected upstream does not list is reported once it has listed.
    skill(
        &skills,
        "ghost-forecast",
        "---\nname: ghost-forecast\ndescription: d\nrequired_role: member\nsteps:\n  - title: Ask\n    tool: ghost__get_forecast\n---\n",
    );
    skill(
        &skills,
        "typo-forecast",
        "---\nname: typo-forecast\ndescription: d\nrequired_role: member\nsteps:\n  - title: Ask\n    tool: weather__get_forcast\n---\n",
    );
    let config = Config::from_toml(&format!(
        r#"
        [database]
        url = "sqlite:{db}"
        [weather]
        upstream_tool = "weather__get_forecast"
        [skills]
        dir = "{skills}"
        [[upstreams]]
        name = "weather"
        command = ["{python}", "{SERVER}"]
        env = {{ MARKER_DIR = "{markers}" }}
        read_only_tools = ["get_forecast"]
        connect_timeout_ms = 60000
        "#,
        db = dir.path().join("t.db").display(),
        skills = skills.display(),
        markers = dir.path().display(),
    ))
    .unwrap();
    let app = App::start(&config).await.unwrap();
    let status = app.upstreams.lock().await.status();
    assert!(status[0].connected, "{status:?}");
    let member = ToolContext::new(Caller::new("mia", "member"));

    // beyond_range names the upstream tool, and that tool answers.
    let later = (Utc::now().date_naive() + Duration::days(6)).to_string();
    let weather = call(&app, &member, "query_weather", json!({"city": "Oslo", "date": later})).await;
    assert!(weather.success, "{weather:?}");
    let Some(Signal::BeyondRange { use_tool, instead, .. }) = weather.signals.first() else {
        panic!("a beyond_range signal: {weather:?}")
    };
    assert_eq!(use_tool.as_deref(), Some("weather__get_forecast"));
    assert!(instead.contains("`weather__get_forecast`"), "{instead}");
    let named = use_tool.clone().unwrap();
    let forecast = call(&app, &member, &named, json!({"city": "Oslo", "days": 7})).await;
    assert!(forecast.success, "{forecast:?}");
    assert_eq!(forecast.result.as_ref().unwrap()["days"].as_array().unwrap().len(), 7);
    // A date inside the window is still query_weather's own, without a tool named.
    let past = call(&app, &member, "query_weather", json!({"city": "Oslo", "date": "2020-01-01"})).await;
    assert!(matches!(past.signals.first(), Some(Signal::BeyondRange { use_tool: None, .. })), "{past:?}");

    // The skill naming the upstream tool loaded; the unknown prefix did not.
    let errors: Vec<String> =
        app.skill_problems.iter().filter(|p| p.is_error()).map(ToString::to_string).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("`ghost__get_forecast`, which is not a registered tool"), "{errors:?}");
    let set = app.gateway.skill_set();
    let ids: Vec<&str> = set.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["long-forecast", "typo-forecast"]);
    assert_eq!(
        app.upstream_problems,
        [
            "skill `typo-forecast` names `weather__get_forcast`, which upstream `weather` does not list; fix the name (calls to it answer NOT_FOUND)"
        ]
    );

    // The guide describes the upstream tool like ours.
    let guide = app.gateway.skill_guide(&Caller::new("mia", "member"), "long-forecast").unwrap();
    assert!(guide.contains("Call `weather__get_forecast`."), "{guide}");
    assert!(guide.contains("- name: `weather__get_forecast`"), "{guide}");
    assert!(!guide.contains("(unknown tool)"), "{guide}");

    // run_long_forecast calls it through the pipeline.
    let run = call(&app, &member, "run_long_forecast", json!({"city": "Bergen"})).await;
    assert!(run.success, "{run:?}");
    let step = &run.result.as_ref().unwrap()["steps"][0];
    assert_eq!(step["tool"], "weather__get_forecast", "{run:?}");
    assert_eq!(step["envelope"]["result"]["city"], "Bergen", "{run:?}");
    assert_eq!(step["envelope"]["result"]["days"].as_array().unwrap().len(), 5);
    // Its steps keep the upstream tool's role: a guest is refused.
    let guest = ToolContext::new(Caller::new("gus", "guest"));
    let refused = call(&app, &guest, "weather__get_forecast", json!({"city": "Oslo"})).await;
    assert_eq!(refused.code(), Some(toolgate_core::ErrorCode::PermissionDenied), "{refused:?}");
}
