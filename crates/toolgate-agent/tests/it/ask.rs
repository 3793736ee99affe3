//! Asking the person running the agent: a write that answers `need_confirm`
//! is put to the run's asker (announced as `elicitation` events); yes runs
//! it, no leaves everything as it was (read back from the tool's own
//! state), nobody answering in time changes nothing, and the time the
//! person takes does not count in the run's deadline. A run whose
//! questions go to its event consumer is answered through `Agent::answer`,
//! by its owner only.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate_agent::{
    Agent, AgentError, Asking, Event, Outcome, RunOptions, RunRequest, StopReason, UnknownQuestion,
};
use toolgate_core::{Answer, Asker, Effect, FnTool, Question, Signal, ToolOutput, ToolSpec};
use toolgate_gateway::{Gateway, Limits};

use crate::model_server::{ModelServer, calls, text};
use crate::{direct, member, names, tool_messages};

/// Orders cancelled so far: what the write did, read back.
type Cancelled = Arc<Mutex<Vec<String>>>;

/// A gateway whose `cancel_order` answers `need_confirm` unless `force` is
/// true, and then cancels the order for real.
fn orders(confirm_timeout_ms: u64) -> (Gateway, Cancelled) {
    orders_with(Limits { confirm_timeout_ms, ..Limits::default() })
}

fn orders_with(limits: Limits) -> (Gateway, Cancelled) {
    let cancelled: Cancelled = Arc::default();
    let done = cancelled.clone();
    let tool = FnTool::new(
        ToolSpec::new(
            "cancel_order",
            "Cancel an order. Example: {\"order\": \"7\"}.",
            json!({"type": "object", "properties": {"order": {"type": "string", "minLength": 1},
                   "force": {"type": "boolean"}}, "required": ["order"], "additionalProperties": false}),
        )
        .with_effect(Effect::Write { idempotent: false })
        .with_role("member"),
        move |_ctx, params: Value| {
            let done = done.clone();
            Box::pin(async move {
                let order = params["order"].as_str().unwrap_or_default().to_owned();
                if params["force"] != json!(true) {
                    return Ok(ToolOutput::json(json!({"cancelled": false, "order": order})).with_signal(
                        Signal::NeedConfirm {
                            message: format!("order {order} is approved; cancelling it cannot be undone"),
                            confirm_param: "force".into(),
                            confirm_value: json!(true),
                        },
                    ));
                }
                done.lock().unwrap().push(order.clone());
                Ok(ToolOutput::json(json!({"cancelled": true, "order": order})))
            })
        },
    );
    let gateway = Gateway::builder().tool(Arc::new(tool)).limits(limits).build().unwrap();
    (gateway, cancelled)
}

/// A person who answers every question with `answer`, after `delay`, and
/// keeps the questions.
struct Person {
    answer: Answer,
    delay: Duration,
    asked: Mutex<Vec<Question>>,
}

impl Person {
    fn new(answer: Answer) -> Arc<Self> {
        Self::slow(answer, Duration::ZERO)
    }

    fn slow(answer: Answer, delay: Duration) -> Arc<Self> {
        Arc::new(Self { answer, delay, asked: Mutex::default() })
    }
}

#[toolgate_core::async_trait]
impl Asker for Person {
    async fn ask(&self, question: &Question) -> Answer {
        self.asked.lock().unwrap().push(question.clone());
        // The person reading and answering (not a synchronisation).
        tokio::time::sleep(self.delay).await;
        self.answer.clone()
    }
}

/// A model that cancels order 7, then answers.
async fn model() -> ModelServer {
    ModelServer::start(vec![
        calls(&[("call_1", "cancel_order", json!({"order": "7"}))]),
        text("Done as you said."),
    ])
    .await
}

/// Run one message with `asking`; every event in order.
async fn run_asking(agent: &Agent, asking: Asking) -> (Result<Outcome, AgentError>, Vec<Event>) {
    let (tx, mut rx) = toolgate_agent::event_channel();
    let request = RunRequest::new(member(), "Cancel order 7");
    let options = RunOptions::default().with_asking(asking);
    let run = async move { agent.run_with(request, &tx, CancellationToken::new(), options).await };
    let read = async {
        let mut events = Vec::new();
        while let Some(e) = rx.recv().await {
            events.push(e);
        }
        events
    };
    tokio::join!(run, read)
}

/// The `elicitation_answered` outcomes of a run.
fn outcomes(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ElicitationAnswered { outcome, .. } => Some(outcome.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_yes_from_the_person_runs_the_write() {
    let server = model().await;
    let (gateway, cancelled) = orders(10_000);
    let agent = Agent::new(gateway, direct(&server)).unwrap();
    let person = Person::new(Answer::Accept(json!({"confirm": true})));
    let (outcome, events) = run_asking(&agent, Asking::Asker(person.clone())).await;
    assert_eq!(outcome.unwrap().stop_reason, StopReason::Answer);
    assert_eq!(*cancelled.lock().unwrap(), ["7"], "the write happened once confirmed");
    assert_eq!(
        names(&events),
        ["tool_call_started", "elicitation", "elicitation_answered", "tool_call_finished", "token", "final"]
    );
    let (id, asked) = match &events[1] {
        Event::Elicitation { id, call_id, message, requested_schema } => {
            assert_eq!(call_id, "call_1");
            assert!(message.contains("cannot be undone"), "{message}");
            assert_eq!(requested_schema["properties"]["confirm"]["type"], "boolean", "{requested_schema}");
            (id.clone(), message.clone())
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(events[2], Event::ElicitationAnswered { id, outcome: "accepted".into() });
    let questions = person.asked.lock().unwrap();
    assert_eq!(questions.len(), 1);
    assert_eq!(questions[0].message, asked, "the event shows the question the person got");
    // The model reads the result of the confirmed write, no signal left to act on.
    let answers = tool_messages(&server.messages(1));
    assert!(answers[0].1.contains("\"cancelled\": true"), "{}", answers[0].1);
    assert!(!answers[0].1.contains("need_confirm"), "{}", answers[0].1);
}

#[tokio::test]
async fn a_no_from_the_person_changes_nothing_and_the_model_is_told() {
    for (answer, outcome) in [
        (Answer::Decline, "declined"),
        (Answer::Cancel, "cancelled"),
        (Answer::Accept(json!({"confirm": false})), "accepted"),
    ] {
        let server = model().await;
        let (gateway, cancelled) = orders(10_000);
        let agent = Agent::new(gateway, direct(&server)).unwrap();
        let (result, events) = run_asking(&agent, Asking::Asker(Person::new(answer))).await;
        assert_eq!(result.unwrap().stop_reason, StopReason::Answer);
        assert!(cancelled.lock().unwrap().is_empty(), "{outcome}: nothing was cancelled");
        assert_eq!(outcomes(&events), [outcome]);
        let answers = tool_messages(&server.messages(1));
        assert!(answers[0].1.contains("nothing was changed"), "{outcome}: {}", answers[0].1);
    }
}

#[tokio::test]
async fn without_an_asker_or_with_nobody_to_reach_the_model_gets_the_signal() {
    for asking in [Asking::Nobody, Asking::Asker(Person::new(Answer::Unreachable("no terminal".into())))] {
        let server = model().await;
        let (gateway, cancelled) = orders(10_000);
        let agent = Agent::new(gateway, direct(&server)).unwrap();
        let reached = matches!(asking, Asking::Asker(_));
        let (result, events) = run_asking(&agent, asking).await;
        assert_eq!(result.unwrap().stop_reason, StopReason::Answer);
        assert!(cancelled.lock().unwrap().is_empty());
        assert_eq!(outcomes(&events), if reached { vec!["unreachable".to_owned()] } else { Vec::new() });
        let answers = tool_messages(&server.messages(1));
        assert!(answers[0].1.contains("need_confirm"), "{}", answers[0].1);
    }
}

#[tokio::test]
async fn the_runs_owner_answers_through_the_agent_and_nobody_else_can() {
    let server = model().await;
    let (gateway, cancelled) = orders(10_000);
    let agent = Agent::new(gateway, direct(&server)).unwrap();
    let (tx, mut rx) = toolgate_agent::event_channel();
    let request = RunRequest::new(member(), "Cancel order 7");
    let options = RunOptions::default().with_asking(Asking::Events { owner: "key_mia".into() });
    let runner = agent.clone();
    let run =
        tokio::spawn(async move { runner.run_with(request, &tx, CancellationToken::new(), options).await });
    let mut answered = None;
    let mut events = Vec::new();
    while let Some(event) = rx.recv().await {
        if let Event::Elicitation { id, .. } = &event {
            let no = Answer::Decline;
            assert_eq!(agent.answer(id, "key_other", no.clone()), Err(UnknownQuestion(id.clone())));
            assert_eq!(agent.answer("q_unknown", "key_mia", no), Err(UnknownQuestion("q_unknown".into())));
            agent.answer(id, "key_mia", Answer::Accept(json!({"confirm": true}))).unwrap();
            answered = Some((id.clone(), Instant::now()));
        }
        if let (Event::ToolCallFinished { success, .. }, Some((_, at))) = (&event, &answered) {
            assert!(success);
            eprintln!("from the owner's answer to the confirmed write's end: {:?}", at.elapsed());
        }
        events.push(event);
    }
    assert_eq!(run.await.unwrap().unwrap().stop_reason, StopReason::Answer);
    assert_eq!(*cancelled.lock().unwrap(), ["7"]);
    assert_eq!(outcomes(&events), ["accepted"]);
    let (id, _) = answered.expect("a question was asked");
    assert!(agent.answer(&id, "key_mia", Answer::Decline).is_err(), "a question is answered once");
}

#[tokio::test]
async fn a_question_nobody_answers_ends_unanswered_when_the_confirm_timeout_passes() {
    let server = model().await;
    let (gateway, cancelled) = orders(300);
    let agent = Agent::new(gateway, direct(&server)).unwrap();
    let start = Instant::now();
    let (result, events) = run_asking(&agent, Asking::Events { owner: "key_mia".into() }).await;
    assert_eq!(result.unwrap().stop_reason, StopReason::Answer);
    assert!(cancelled.lock().unwrap().is_empty());
    assert_eq!(outcomes(&events), ["unanswered"]);
    let id = events
        .iter()
        .find_map(|e| if let Event::Elicitation { id, .. } = e { Some(id.clone()) } else { None })
        .unwrap();
    assert!(agent.answer(&id, "key_mia", Answer::Decline).is_err(), "a question given up takes no answer");
    let answers = tool_messages(&server.messages(1));
    assert!(answers[0].1.contains("did not answer"), "{}", answers[0].1);
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
}

#[tokio::test]
async fn the_time_the_person_takes_does_not_count_in_the_runs_deadline() {
    let server = model().await;
    let (gateway, cancelled) = orders(10_000);
    let mut config = direct(&server);
    config.deadline = Duration::from_millis(800);
    let agent = Agent::new(gateway, config).unwrap();
    // The person takes twice the run's deadline to say yes.
    let person = Person::slow(Answer::Accept(json!({"confirm": true})), Duration::from_millis(1600));
    let (result, _) = run_asking(&agent, Asking::Asker(person)).await;
    assert_eq!(result.unwrap().stop_reason, StopReason::Answer);
    assert_eq!(*cancelled.lock().unwrap(), ["7"]);
}

#[tokio::test]
async fn a_run_still_ends_at_its_deadline_when_nobody_is_asked() {
    // The control of the test above: without a question the same deadline stops a slow run.
    let server =
        ModelServer::start(vec![crate::model_server::Reply::Endless { every: Duration::from_millis(50) }])
            .await;
    let (gateway, _) = orders(10_000);
    let mut config = direct(&server);
    config.deadline = Duration::from_millis(500);
    let agent = Agent::new(gateway, config).unwrap();
    let start = Instant::now();
    let (result, _) = run_asking(&agent, Asking::Events { owner: "key_mia".into() }).await;
    assert_eq!(result.unwrap().stop_reason, StopReason::Deadline);
    assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
}

#[tokio::test]
async fn missing_values_are_asked_then_the_write_is_confirmed() {
    // The model leaves the order out; with ask_for_missing the person gives it, then confirms.
    let server =
        ModelServer::start(vec![calls(&[("call_1", "cancel_order", json!({}))]), text("Done.")]).await;
    let (gateway, cancelled) =
        orders_with(Limits { confirm_timeout_ms: 10_000, ask_for_missing: true, ..Limits::default() });
    let agent = Agent::new(gateway, direct(&server)).unwrap();
    let (tx, mut rx) = toolgate_agent::event_channel();
    let request = RunRequest::new(member(), "Cancel my order");
    let options = RunOptions::default().with_asking(Asking::Events { owner: "key_mia".into() });
    let runner = agent.clone();
    let run =
        tokio::spawn(async move { runner.run_with(request, &tx, CancellationToken::new(), options).await });
    let mut schemas = Vec::new();
    let mut events = Vec::new();
    while let Some(event) = rx.recv().await {
        if let Event::Elicitation { id, requested_schema, .. } = &event {
            let answer = if requested_schema["properties"].get("confirm").is_some() {
                json!({"confirm": true})
            } else {
                json!({"order": "7"})
            };
            schemas.push(requested_schema.clone());
            agent.answer(id, "key_mia", Answer::Accept(answer)).unwrap();
        }
        events.push(event);
    }
    assert_eq!(run.await.unwrap().unwrap().stop_reason, StopReason::Answer);
    assert_eq!(schemas.len(), 2, "{schemas:?}");
    assert_eq!(schemas[0]["required"], json!(["order"]), "first the missing value: {}", schemas[0]);
    assert!(schemas[1]["properties"]["confirm"].is_object(), "then the confirmation: {}", schemas[1]);
    assert_eq!(outcomes(&events), ["accepted", "accepted"]);
    assert_eq!(*cancelled.lock().unwrap(), ["7"]);
}
