//! Orchestration over real tools through the runner contract: sequential
//! (stop and continue), parallel (order kept, bound honoured), routing, and
//! the step and whole-run time limits.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{Log, Registry, ctx, echo, failing, sleeping, spec, tool};
use serde_json::{Value, json};
use toolgate_core::{Effect, Envelope, ErrorCode, ProgressSink, Tool, ToolContext, ToolOutput};
use toolgate_skills::{Skill, SkillTool, StepRunner, orchestrate};

fn read(name: &str) -> toolgate_core::ToolSpec {
    spec(name, Effect::Read, "guest", "travel")
}

/// A skill `test-run` with this orchestration block (indented by two spaces).
fn skill(orchestration: &str) -> Skill {
    let text = format!(
        "---\nname: test-run\ndescription: Runs test tools.\norchestration:\n{}---\n",
        orchestration.lines().map(|l| format!("  {l}\n")).collect::<String>()
    );
    match Skill::parse(&text, "skills/test-run/SKILL.md") {
        Ok(skill) => skill,
        Err(errors) => panic!("{}", errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")),
    }
}

const CITY: &str =
    "input_schema:\n  type: object\n  properties:\n    city: {type: string}\n    days: {type: integer}\n";

fn tools_of(result: &Value) -> Vec<&str> {
    result["steps"].as_array().unwrap().iter().map(|s| s["tool"].as_str().unwrap()).collect()
}

fn json_of(out: ToolOutput) -> Value {
    match out.payload {
        toolgate_core::Payload::Json(v) => v,
        other => panic!("expected JSON, got {other:?}"),
    }
}

#[tokio::test]
async fn sequential_runs_in_order_with_mapped_params() {
    let log = Log::default();
    let runner = Registry::new([
        echo(read("find_flight"), &log),
        echo(read("find_hotel"), &log),
        echo(read("plan_budget"), &log),
    ]);
    let skill = skill(&format!(
        "mode: sequential\n{CITY}bindings:\n  - tool: find_flight\n    params: {{destination: $input.city}}\n  - tool: find_hotel\n  - tool: plan_budget\n    params: {{days: $input.days, currency: EUR}}\n"
    ));
    let out = orchestrate(&skill, &runner, &ctx("guest"), json!({"city": "Oslo"})).await.unwrap();
    let result = json_of(out);
    assert_eq!(log.calls(), ["find_flight", "find_hotel", "plan_budget"]);
    assert_eq!(tools_of(&result), ["find_flight", "find_hotel", "plan_budget"]);
    assert_eq!((result["completed"].clone(), result["failed"].clone()), (json!(3), json!(0)));
    assert_eq!(result["skipped"], json!([]));
    assert_eq!(result["mode"], "sequential");
    assert_eq!(result["skill"], "test-run");
    let steps = &result["steps"];
    assert_eq!(steps[0]["envelope"]["result"]["params"], json!({"destination": "Oslo"}));
    assert_eq!(
        steps[1]["envelope"]["result"]["params"],
        json!({"city": "Oslo"}),
        "no params: the whole input"
    );
    assert_eq!(
        steps[2]["envelope"]["result"]["params"],
        json!({"currency": "EUR"}),
        "absent input field left out"
    );
    assert_eq!(steps[0]["envelope"]["success"], json!(true));
}

#[tokio::test]
async fn sequential_stops_at_the_first_failure_by_default() {
    let log = Log::default();
    let runner = Registry::new([
        echo(read("find_flight"), &log),
        failing(read("find_hotel"), &log, ErrorCode::Conflict),
        echo(read("plan_budget"), &log),
    ]);
    let skill = skill(&format!(
        "mode: sequential\n{CITY}bindings:\n  - tool: find_flight\n  - tool: find_hotel\n  - tool: plan_budget\n"
    ));
    let err = orchestrate(&skill, &runner, &ctx("guest"), json!({"city": "Oslo"})).await.unwrap_err();
    assert_eq!(log.calls(), ["find_flight", "find_hotel"]);
    assert_eq!(err.code, ErrorCode::ExecutionError);
    assert_eq!(
        err.message,
        "`run_test_run` failed: step 2 of 3 (`find_hotel`) answered CONFLICT: the backend refused it; not run: `plan_budget`. `details.steps` has each step's envelope"
    );
    let details = err.details.unwrap();
    assert_eq!(tools_of(&details), ["find_flight", "find_hotel"]);
    assert_eq!(details["steps"][1]["envelope"]["error"]["code"], "CONFLICT");
    assert_eq!((details["completed"].clone(), details["failed"].clone()), (json!(1), json!(1)));
    assert_eq!(details["skipped"], json!(["plan_budget"]));
}

#[tokio::test]
async fn sequential_continues_past_failures_when_configured() {
    let log = Log::default();
    let runner = Registry::new([
        failing(read("find_flight"), &log, ErrorCode::Unavailable),
        echo(read("find_hotel"), &log),
    ]);
    let skill = skill(&format!(
        "mode: sequential\non_error: continue\n{CITY}bindings:\n  - tool: find_flight\n  - tool: find_hotel\n"
    ));
    let result = json_of(orchestrate(&skill, &runner, &ctx("guest"), json!({})).await.unwrap());
    assert_eq!(log.calls(), ["find_flight", "find_hotel"]);
    assert_eq!((result["completed"].clone(), result["failed"].clone()), (json!(1), json!(1)));
    assert_eq!(result["steps"][0]["envelope"]["error"]["code"], "UNAVAILABLE");

    // When every step fails there is nothing to answer with: an error.
    let runner = Registry::new([
        failing(read("find_flight"), &log, ErrorCode::Unavailable),
        failing(read("find_hotel"), &log, ErrorCode::NotFound),
    ]);
    let err = orchestrate(&skill, &runner, &ctx("guest"), json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::ExecutionError);
    assert_eq!(
        err.message,
        "`run_test_run` failed: every step failed; the first, `find_flight`, answered UNAVAILABLE: the backend refused it. `details.steps` has each step's envelope"
    );
    assert_eq!(err.details.unwrap()["failed"], json!(2));
}

/// Tools that count how many of them run at once; earlier ones sleep longer,
/// so they finish in the reverse of the binding order.
fn counted(n: usize, max_seen: &Arc<AtomicUsize>) -> Vec<Arc<dyn Tool>> {
    let in_flight = Arc::new(AtomicUsize::new(0));
    (0..n)
        .map(|i| {
            let (in_flight, max_seen) = (in_flight.clone(), max_seen.clone());
            let sleep = Duration::from_millis(20 * (n - i) as u64);
            tool(read(&format!("probe_{i}")), move |_ctx, _params| {
                let (in_flight, max_seen) = (in_flight.clone(), max_seen.clone());
                Box::pin(async move {
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    max_seen.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(sleep).await;
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    Ok(ToolOutput::json(json!({"probe": i})))
                })
            })
        })
        .collect()
}

#[tokio::test]
async fn parallel_keeps_binding_order_and_honours_the_bound() {
    let max_seen = Arc::new(AtomicUsize::new(0));
    let runner = Registry::new(counted(5, &max_seen));
    let bindings: String = (0..5).map(|i| format!("  - tool: probe_{i}\n")).collect();
    let skill = skill(&format!("mode: parallel\nmax_parallel: 2\n{CITY}bindings:\n{bindings}"));
    let result = json_of(orchestrate(&skill, &runner, &ctx("guest"), json!({})).await.unwrap());
    assert_eq!(tools_of(&result), ["probe_0", "probe_1", "probe_2", "probe_3", "probe_4"]);
    let probes: Vec<Value> =
        (0..5).map(|i| result["steps"][i]["envelope"]["result"]["probe"].clone()).collect();
    assert_eq!(probes, [json!(0), json!(1), json!(2), json!(3), json!(4)]);
    assert_eq!(max_seen.load(Ordering::SeqCst), 2, "two at once, never more");
    assert_eq!(result["completed"], json!(5));
}

#[tokio::test]
async fn parallel_stop_mode_starts_nothing_after_a_failure() {
    let log = Log::default();
    let runner = Registry::new([
        sleeping(read("find_hotel"), &log, Duration::from_millis(50)),
        failing(read("find_flight"), &log, ErrorCode::Conflict),
        echo(read("plan_budget"), &log),
    ]);
    let skill = skill(&format!(
        "mode: parallel\nmax_parallel: 2\n{CITY}bindings:\n  - tool: find_hotel\n  - tool: find_flight\n  - tool: plan_budget\n"
    ));
    let err = orchestrate(&skill, &runner, &ctx("guest"), json!({})).await.unwrap_err();
    assert_eq!(
        log.calls(),
        ["find_hotel", "find_flight"],
        "the started step finishes, the next never starts"
    );
    assert_eq!(err.code, ErrorCode::ExecutionError);
    assert_eq!(
        err.message,
        "`run_test_run` failed: step 2 of 3 (`find_flight`) answered CONFLICT: the backend refused it; not run: `plan_budget`. `details.steps` has each step's envelope"
    );
    let details = err.details.unwrap();
    assert_eq!(tools_of(&details), ["find_hotel", "find_flight"]);
    assert_eq!(details["skipped"], json!(["plan_budget"]));
    assert_eq!(details["steps"][0]["envelope"]["success"], json!(true));
}

const ROUTES: &str = "\
mode: routing
route_by: kind
input_schema:
  type: object
  properties:
    kind: {type: string}
    city: {type: string}
bindings:
  - tool: find_flight
    when: flight
    params: {destination: $input.city}
  - tool: find_hotel
    when: hotel
";

#[tokio::test]
async fn routing_runs_the_binding_the_value_picks() {
    let log = Log::default();
    let runner = Registry::new([echo(read("find_flight"), &log), echo(read("find_hotel"), &log)]);
    let skill = skill(ROUTES);
    let result = json_of(
        orchestrate(&skill, &runner, &ctx("guest"), json!({"kind": "hotel", "city": "Rome"})).await.unwrap(),
    );
    assert_eq!(log.calls(), ["find_hotel"]);
    assert_eq!(result["route"], "hotel");
    assert_eq!(result["mode"], "routing");
    assert_eq!(result["steps"][0]["envelope"]["result"]["params"], json!({"kind": "hotel", "city": "Rome"}));
    let result = json_of(
        orchestrate(&skill, &runner, &ctx("guest"), json!({"kind": "flight", "city": "Rome"})).await.unwrap(),
    );
    assert_eq!(result["steps"][0]["envelope"]["result"]["params"], json!({"destination": "Rome"}));
}

#[tokio::test]
async fn routing_value_that_matches_no_binding_names_the_valid_values() {
    let log = Log::default();
    let runner = Registry::new([echo(read("find_flight"), &log), echo(read("find_hotel"), &log)]);
    let skill = skill(ROUTES);
    let err = orchestrate(&skill, &runner, &ctx("guest"), json!({"kind": "train"})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidParams);
    assert_eq!(
        err.message,
        "1 invalid parameter: /kind: `kind` = \"train\" matches no route; use one of \"flight\", \"hotel\". Fix all of them and call again."
    );
    let err = orchestrate(&skill, &runner, &ctx("guest"), json!({"city": "Rome"})).await.unwrap_err();
    assert_eq!(
        err.message,
        "1 invalid parameter: /kind: `kind` is required: it picks the tool to run; use one of \"flight\", \"hotel\". Fix all of them and call again."
    );
    assert!(log.calls().is_empty());
}

#[tokio::test]
async fn routing_failure_is_an_execution_error_naming_the_tool() {
    let log = Log::default();
    let runner = Registry::new([
        failing(read("find_flight"), &log, ErrorCode::NotFound),
        echo(read("find_hotel"), &log),
    ]);
    let err =
        orchestrate(&skill(ROUTES), &runner, &ctx("guest"), json!({"kind": "flight"})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::ExecutionError);
    assert_eq!(
        err.message,
        "`run_test_run` failed: the routed tool `find_flight` answered NOT_FOUND: the backend refused it. `details.steps` has each step's envelope"
    );
}

/// A runner that ignores the time limit it is given, so only the
/// orchestration's own limits can stop a step.
struct Careless(Registry);

#[async_trait::async_trait]
impl StepRunner for Careless {
    async fn run_step(&self, ctx: &ToolContext, tool: &str, params: Value, _timeout: Duration) -> Envelope {
        self.0.run_step(ctx, tool, params, Duration::from_secs(3600)).await
    }
}

#[tokio::test]
async fn each_step_has_a_time_limit() {
    let log = Log::default();
    let tools =
        || [sleeping(read("wait_long"), &log, Duration::from_secs(30)), echo(read("find_hotel"), &log)];
    let skill = skill(&format!(
        "mode: sequential\non_error: continue\nstep_timeout_ms: 50\n{CITY}bindings:\n  - tool: wait_long\n  - tool: find_hotel\n"
    ));
    // Enforced by the orchestration even when the runner does not.
    let careless = Careless(Registry::new(tools()));
    let result = json_of(orchestrate(&skill, &careless, &ctx("guest"), json!({})).await.unwrap());
    let first = &result["steps"][0]["envelope"];
    assert_eq!(first["error"]["code"], "TIMEOUT");
    assert_eq!(first["error"]["message"], "`wait_long` did not finish within the step time limit (50 ms)");
    assert_eq!(result["steps"][1]["envelope"]["success"], json!(true));
    assert_eq!((result["completed"].clone(), result["failed"].clone()), (json!(1), json!(1)));

    // A runner that honours the limit it is given answers its own TIMEOUT.
    let runner = Registry::new(tools());
    let result = json_of(orchestrate(&skill, &runner, &ctx("guest"), json!({})).await.unwrap());
    assert_eq!(result["steps"][0]["envelope"]["error"]["code"], "TIMEOUT");
}

#[tokio::test]
async fn the_whole_run_has_a_time_limit() {
    let log = Log::default();
    let runner = Careless(Registry::new([
        echo(read("find_flight"), &log),
        sleeping(read("wait_long"), &log, Duration::from_secs(30)),
        echo(read("find_hotel"), &log),
    ]));
    // on_error: continue does not extend the run's limit.
    let skill = skill(&format!(
        "mode: sequential\non_error: continue\ntimeout_ms: 100\nstep_timeout_ms: 10000\n{CITY}bindings:\n  - tool: find_flight\n  - tool: wait_long\n  - tool: find_hotel\n"
    ));
    let err = orchestrate(&skill, &runner, &ctx("guest"), json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Timeout);
    assert!(
        err.message
            .starts_with("`run_test_run` did not finish within its time limit (100 ms, stopped after "),
        "{}",
        err.message
    );
    assert!(
        err.message.ends_with("1 of 3 steps completed, 1 failed, 1 did not run; `details.steps` has each finished step's envelope"),
        "{}",
        err.message
    );
    let details = err.details.unwrap();
    assert_eq!(tools_of(&details), ["find_flight", "wait_long"]);
    assert_eq!(
        details["steps"][1]["envelope"]["error"]["message"],
        "`wait_long` was still running when the skill run reached its time limit (100 ms); it was stopped"
    );
    assert_eq!(details["skipped"], json!(["find_hotel"]));
    assert_eq!(log.calls(), ["find_flight", "wait_long"]);
}

#[tokio::test]
async fn parallel_run_limit_and_the_callers_deadline() {
    let log = Log::default();
    let runner = Careless(Registry::new([
        sleeping(read("wait_long"), &log, Duration::from_secs(30)),
        echo(read("find_hotel"), &log),
    ]));
    let skill =
        skill(&format!("mode: parallel\n{CITY}bindings:\n  - tool: wait_long\n  - tool: find_hotel\n"));
    // The default run limit is 60 s; the caller's deadline is sooner and wins.
    let ctx = ctx("guest").with_deadline(std::time::Instant::now() + Duration::from_millis(80));
    let err = orchestrate(&skill, &runner, &ctx, json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Timeout);
    let details = err.details.unwrap();
    assert_eq!(tools_of(&details), ["wait_long", "find_hotel"]);
    assert_eq!(details["steps"][1]["envelope"]["success"], json!(true));
    assert_eq!(details["completed"], json!(1));
}

#[tokio::test]
async fn bad_calls_get_structured_errors() {
    let runner = Registry::default();
    let skill = skill(&format!("mode: sequential\n{CITY}bindings:\n  - tool: find_flight\n"));
    let err = orchestrate(&skill, &runner, &ctx("guest"), json!([1, 2])).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidParams);
    assert!(err.message.contains("the input of `run_test_run` must be a JSON object"), "{}", err.message);

    // A step whose tool the runner does not know fails like any other step.
    let err = orchestrate(&skill, &runner, &ctx("guest"), json!({})).await.unwrap_err();
    assert_eq!(err.details.unwrap()["steps"][0]["envelope"]["error"]["code"], "TOOL_NOT_FOUND");

    let plain = Skill::parse("---\nname: plain\ndescription: d\n---\n", "skills/plain/SKILL.md").unwrap();
    let err = orchestrate(&plain, &runner, &ctx("guest"), json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::ToolNotFound);
}

#[derive(Default)]
struct Progress(Mutex<Vec<(f64, Option<f64>, String)>>);

impl ProgressSink for Progress {
    fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.0.lock().unwrap().push((progress, total, message.unwrap_or_default().to_string()));
    }
}

#[tokio::test]
async fn a_skill_is_a_tool_that_reports_progress() {
    let log = Log::default();
    let runner: Arc<dyn StepRunner> =
        Arc::new(Registry::new([echo(read("find_flight"), &log), echo(read("find_hotel"), &log)]));
    let skill = Arc::new(skill(&format!(
        "mode: sequential\n{CITY}bindings:\n  - tool: find_flight\n  - tool: find_hotel\n"
    )));
    let spec = skill.tool_spec().unwrap();
    let tool = SkillTool::new(skill.clone(), spec, runner).unwrap();
    assert_eq!(tool.spec().name, "run_test_run");
    let progress = Arc::new(Progress::default());
    let ctx = ctx("guest").with_progress(progress.clone());
    let result = json_of(tool.call(&ctx, json!({"city": "Oslo"})).await.unwrap());
    assert_eq!(result["completed"], json!(2));
    let reports = progress.0.lock().unwrap().clone();
    assert_eq!(
        reports,
        [
            (1.0, Some(2.0), "step `find_flight` finished".to_string()),
            (2.0, Some(2.0), "step `find_hotel` finished".to_string())
        ]
    );
}
