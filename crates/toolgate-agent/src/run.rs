//! The loop: ask the model, run the calls it makes, feed the results back,
//! until it answers or a guard stops it (steps, deadline, a call that
//! fails the same way twice, a model error, cancellation). Every stop ends
//! with one `final` event that says why.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::join_all;
use serde_json::{Value, json};
use tokio::sync::mpsc::{Receiver, Sender};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use toolgate_core::{Caller, Envelope, ErrorCode, Metadata, ToolContext, ToolError};
use toolgate_gateway::fallback::{self, FallbackError};

use crate::ask::{AskClock, RunAsking};
use crate::calls;
use crate::model::{Message, ModelErrorKind, ToolCall};
use crate::redact::{Secrets, attribute, neutralise_tags};
use crate::store::NewMessage;
use crate::{Agent, AgentError, Asking, Event, StopReason, Usage};

/// Events a run's channel holds before the run waits for its consumer.
pub const EVENT_BUFFER: usize = 64;

/// A channel for [`Agent::run`]'s events. It is bounded ([`EVENT_BUFFER`]):
/// a consumer that stops reading stalls the run (and so the model's
/// stream) instead of letting events pile up in memory.
pub fn event_channel() -> (Sender<Event>, Receiver<Event>) {
    tokio::sync::mpsc::channel(EVENT_BUFFER)
}

/// Longest user message accepted, in characters.
pub const MAX_MESSAGE_CHARS: usize = 32_000;

/// One run: who asks, what, and in which conversation.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunRequest {
    /// The caller every tool call runs as.
    pub caller: Caller,
    /// The user's message.
    pub message: String,
    /// A stored conversation to continue (must be the caller's).
    pub conversation_id: Option<String>,
}

impl RunRequest {
    /// A run of `message` as `caller`, in a new conversation.
    pub fn new(caller: Caller, message: impl Into<String>) -> Self {
        Self { caller, message: message.into(), conversation_id: None }
    }

    /// Continue the stored conversation `id` (it must be the caller's), or
    /// start a new one with `None`.
    pub fn with_conversation_id(mut self, id: Option<String>) -> Self {
        self.conversation_id = id;
        self
    }
}

/// Asked before each tool call of a run (a turn's reads that run together
/// are asked once) whether the run's caller may still act, e.g. whether the
/// API key it came with is still active with the same role and scope. A
/// refusal runs no call: the run ends with an `UNAUTHORIZED` error event
/// and stop reason `cancelled`.
#[toolgate_core::async_trait]
pub trait CallerCheck: Send + Sync {
    /// `Err(message)`: the caller may no longer act; `message` says why, for a person.
    async fn still_allowed(&self, caller: &Caller) -> Result<(), String>;
}

/// What a run may do besides its calls: check its caller before each tool
/// call, and ask its person. The default does neither.
#[derive(Default)]
#[non_exhaustive]
pub struct RunOptions<'a> {
    /// Asked before each tool call whether the caller may still act.
    pub check: Option<&'a dyn CallerCheck>,
    /// Who the tool calls' questions (confirmations, missing values) go to.
    pub asking: Asking,
}

impl<'a> RunOptions<'a> {
    /// Ask `check` before each tool call whether the caller may still act.
    pub fn with_check(mut self, check: &'a dyn CallerCheck) -> Self {
        self.check = Some(check);
        self
    }

    /// Send the tool calls' questions to `asking`.
    pub fn with_asking(mut self, asking: Asking) -> Self {
        self.asking = asking;
        self
    }
}

impl std::fmt::Debug for RunOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("check", &self.check.map(|_| ".."))
            .field("asking", &self.asking)
            .finish()
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Outcome {
    /// The conversation (stored when the agent has a store).
    pub conversation_id: String,
    /// The final answer (empty when the run stopped without one).
    pub answer: String,
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// Tokens used.
    pub usage: Usage,
    /// Model turns taken.
    pub steps: u32,
}

/// A call as the loop runs it (native or read from text).
struct Pending {
    call: ToolCall,
    args: Result<Value, String>,
}

/// The state of one run.
struct Run<'a> {
    agent: &'a Agent,
    ctx: ToolContext,
    events: &'a Sender<Event>,
    conversation_id: String,
    history: Vec<Message>,
    unsaved: Vec<NewMessage>,
    next_seq: i32,
    usage: Usage,
    failures: HashMap<String, u32>,
    steps: u32,
    /// What the run's calls and results hold under secret-named keys: kept out of the store.
    secrets: Secrets,
    check: Option<&'a dyn CallerCheck>,
    /// The check's refusal, once it refused: the run stops.
    refused: Option<String>,
    /// Who the calls ask, if anyone.
    asking: Option<Arc<RunAsking>>,
    /// The time spent asking, which the deadline does not count.
    clock: Arc<AskClock>,
}

impl Agent {
    /// Run the loop for one user message. Events go to `events` (see
    /// [`event_channel`]) as they happen, waiting while it is full; a closed
    /// receiver or a cancelled `cancel` stops the run (stop reason
    /// `cancelled`). Errors before the loop starts (an unknown
    /// conversation, an empty message) are returned, not streamed.
    pub async fn run(
        &self,
        request: RunRequest,
        events: &Sender<Event>,
        cancel: CancellationToken,
    ) -> Result<Outcome, AgentError> {
        self.run_checked(request, events, cancel, None).await
    }

    /// [`run`](Self::run), asking `check` before each tool call whether the
    /// caller may still act (see [`CallerCheck`]).
    pub async fn run_checked(
        &self,
        request: RunRequest,
        events: &Sender<Event>,
        cancel: CancellationToken,
        check: Option<&dyn CallerCheck>,
    ) -> Result<Outcome, AgentError> {
        self.run_with(request, events, cancel, RunOptions { check, asking: Asking::Nobody }).await
    }

    /// [`run`](Self::run) with [`RunOptions`]: a [`CallerCheck`] before each
    /// tool call, and someone to ask ([`Asking`]) when a call needs the
    /// person (a write to confirm, missing values). Each question is an
    /// `elicitation` event and its end an `elicitation_answered` event; the
    /// time spent waiting for the person does not count in the run's deadline.
    pub async fn run_with(
        &self,
        request: RunRequest,
        events: &Sender<Event>,
        cancel: CancellationToken,
        options: RunOptions<'_>,
    ) -> Result<Outcome, AgentError> {
        let RunOptions { check, asking } = options;
        let message = request.message.trim();
        if message.is_empty() {
            return Err(AgentError::InvalidInput("the message is empty".into()));
        }
        if message.chars().count() > MAX_MESSAGE_CHARS {
            return Err(AgentError::InvalidInput(format!(
                "the message is longer than {MAX_MESSAGE_CHARS} characters"
            )));
        }
        let caller = request.caller;
        let (conversation_id, stored) = match (&self.store, request.conversation_id) {
            (Some(store), Some(id)) => {
                let stored = store.messages_for(&id, &caller).await?;
                (id, stored.iter().filter_map(|m| Message::from_wire(&m.message)).collect())
            }
            (Some(store), None) => (store.create(&caller).await?, Vec::new()),
            (None, Some(id)) => return Err(crate::StoreError::NotFound(id).into()),
            (None, None) => (format!("conv_{}", uuid::Uuid::new_v4().simple()), Vec::new()),
        };
        let tools = calls::offered(&self.gateway, &caller, self.config.exposure);
        let system = calls::system_prompt(&self.gateway, &caller, &self.config, &tools);
        let tools = if self.config.tool_calling == crate::ToolCalling::Native { tools } else { Vec::new() };
        let mut caller = caller;
        caller.session_id = Some(conversation_id.clone());
        let ctx = ToolContext::new(caller).with_trace_id(uuid::Uuid::new_v4().to_string());
        let clock = Arc::new(AskClock::default());
        let asking = RunAsking::new(asking, self, events, clock.clone());
        let next_seq = stored.len() as i32;
        let mut history = vec![Message::text("system", system)];
        history.extend(stored);
        let mut run = Run {
            agent: self,
            ctx,
            events,
            conversation_id,
            history,
            unsaved: Vec::new(),
            next_seq,
            usage: Usage::default(),
            failures: HashMap::new(),
            steps: 0,
            secrets: Secrets::default(),
            check,
            refused: None,
            asking,
            clock: clock.clone(),
        };
        run.push(Message::text("user", message), None, None);
        let deadline = Instant::now() + self.config.deadline;
        let cancelled = async {
            tokio::select! {
                () = cancel.cancelled() => {}
                () = events.closed() => {}
            }
        };
        let (stop, answer) = tokio::select! {
            biased;
            () = cancelled => (StopReason::Cancelled, String::new()),
            () = clock.expired(deadline) => (StopReason::Deadline, String::new()),
            ended = run.steps(&tools, deadline) => ended,
        };
        // Whatever happened, what was said so far is kept.
        run.save().await?;
        let outcome = Outcome {
            conversation_id: run.conversation_id.clone(),
            answer,
            stop_reason: stop,
            usage: run.usage,
            steps: run.steps,
        };
        let last = Event::Final {
            conversation_id: outcome.conversation_id.clone(),
            answer: outcome.answer.clone(),
            stop_reason: outcome.stop_reason,
            usage: outcome.usage,
            steps: outcome.steps,
        };
        // The run is over: a consumer that still does not read gets no more time than a quiet model.
        let _ = events.send_timeout(last, self.config.idle_timeout).await;
        Ok(outcome)
    }
}

impl Run<'_> {
    /// Add a message to the conversation. What is stored has the values of
    /// secret-named keys redacted, and those values wherever they recur;
    /// what the model reads in this run keeps them.
    fn push(&mut self, message: Message, envelope: Option<Value>, usage: Option<Value>) {
        if let Some(envelope) = &envelope {
            self.secrets.learn(envelope);
        }
        let stored = self.secrets.message(&message);
        let envelope = envelope.map(|e| self.secrets.value(&e));
        self.history.push(message);
        self.unsaved.push(NewMessage { message: stored, envelope, usage });
    }

    async fn save(&mut self) -> Result<(), AgentError> {
        if let Some(store) = &self.agent.store
            && !self.unsaved.is_empty()
        {
            store.append(&self.conversation_id, self.next_seq, &self.unsaved).await?;
        }
        self.next_seq += self.unsaved.len() as i32;
        self.unsaved.clear();
        Ok(())
    }

    async fn emit(&self, event: Event) {
        // A closed receiver is seen by the run's select, which stops it.
        let _ = self.events.send(event).await;
    }

    /// The turns, until a stop; returns the stop and the answer.
    async fn steps(&mut self, tools: &[Value], deadline: Instant) -> (StopReason, String) {
        let max_steps = self.agent.config.max_steps;
        for step in 1..=max_steps {
            self.steps = step;
            // No question is open between calls: the deadline is moved by the time spent asking.
            let deadline = self.clock.shifted(deadline).unwrap_or(deadline);
            let turn = match self.agent.client.complete(&self.history, tools, self.events, deadline).await {
                Ok(turn) => turn,
                Err(e) => {
                    tracing::warn!(kind = e.kind.as_str(), status = ?e.status, "model request failed");
                    self.emit(Event::Error { code: "MODEL_ERROR".into(), message: e.to_string() }).await;
                    self.steps = step - 1;
                    // A Retry-After past the deadline ends the run as the deadline would.
                    let stop = if e.kind == ModelErrorKind::Deadline {
                        StopReason::Deadline
                    } else {
                        StopReason::ModelError
                    };
                    return (stop, String::new());
                }
            };
            if let Some(usage) = turn.usage {
                self.usage.add(usage);
            }
            let usage = turn.usage.map(|u| json!(u));
            // The calls' secret-named values are known before the turn is stored.
            turn.tool_calls.iter().for_each(|c| self.secrets.learn_arguments(&c.arguments));
            let parsed = turn.tool_calls.is_empty().then(|| fallback::parse_all(&turn.content));
            if let Some(Ok(parsed)) = &parsed {
                parsed.iter().for_each(|c| self.secrets.learn(&c.parameters));
            }
            let assistant = Message {
                tool_calls: turn.tool_calls.clone(),
                ..Message::text("assistant", turn.content.clone())
            };
            self.push(assistant, None, usage);
            let (pending, native) = if let Some(parsed) = parsed {
                match parsed {
                    Ok(parsed) => (
                        parsed
                            .into_iter()
                            .enumerate()
                            .map(|(i, c)| Pending {
                                call: ToolCall {
                                    id: format!("text_{step}_{i}"),
                                    name: c.tool,
                                    arguments: c.parameters.to_string(),
                                },
                                args: Ok(c.parameters),
                            })
                            .collect(),
                        false,
                    ),
                    Err(FallbackError::Malformed(why)) if fallback::has_call_markup(&turn.content) => {
                        let key = format!("malformed:{why}");
                        let why = neutralise_tags(&why);
                        self.push(Message::text("user", format!("<tool_response>\nError PARSE_ERROR: your tool call could not be read: {why}. Write it again as <tool_call>{{\"name\": ..., \"arguments\": {{...}}}}</tool_call>.\n</tool_response>")), None, None);
                        if self.failed_again(key) {
                            return (StopReason::RepeatedFailure, String::new());
                        }
                        continue;
                    }
                    Err(_) => return (StopReason::Answer, turn.content),
                }
            } else {
                let pending = turn
                    .tool_calls
                    .into_iter()
                    .map(|call| {
                        let args = serde_json::from_str::<Value>(&call.arguments).map_err(|e| e.to_string());
                        Pending { call, args }
                    })
                    .collect();
                (pending, true)
            };
            let repeated = self.run_calls(pending, native).await;
            if let Some(refused) = self.refused.take() {
                self.emit(Event::Error { code: "UNAUTHORIZED".into(), message: refused }).await;
                return (StopReason::Cancelled, String::new());
            }
            if repeated {
                return (StopReason::RepeatedFailure, String::new());
            }
            // Save after each step, so a run cut short keeps what it did.
            if let Err(e) = self.save().await {
                tracing::error!(error = %e, "saving the conversation failed");
            }
        }
        (StopReason::MaxSteps, String::new())
    }

    /// Run one turn's calls: consecutive reads together, each write alone, in
    /// order. Returns whether a call failed the same way it failed before.
    /// When the [`CallerCheck`] refuses, the calls left are answered with
    /// its refusal, not run, and `refused` is set.
    /// The calls past `max_tool_calls` are not run: each is answered with
    /// an error that tells the model so.
    async fn run_calls(&mut self, mut pending: Vec<Pending>, native: bool) -> bool {
        let gateway = &self.agent.gateway;
        let exposure = self.agent.config.exposure;
        let (asked, cap) = (pending.len(), self.agent.config.max_tool_calls);
        let over_cap = if asked > cap { pending.split_off(cap) } else { Vec::new() };
        let mut results: Vec<(ToolCall, Envelope)> = Vec::with_capacity(pending.len());
        let mut batch: Vec<Pending> = Vec::new();
        let mut queue = pending.into_iter().peekable();
        while let Some(next) = queue.next() {
            let read = next.args.as_ref().is_ok_and(|a| calls::is_read(gateway, &next.call.name, a));
            batch.push(next);
            let next_is_read = queue
                .peek()
                .is_some_and(|p| p.args.as_ref().is_ok_and(|a| calls::is_read(gateway, &p.call.name, a)));
            if read && next_is_read {
                continue;
            }
            if let Some(check) = self.check
                && let Err(refused) = check.still_allowed(&self.ctx.caller).await
            {
                let error = ToolError::new(ErrorCode::PermissionDenied, refused.clone());
                results.extend(batch.drain(..).chain(queue.by_ref()).map(|p| {
                    let envelope = Envelope::err(error.clone(), Metadata::now(&p.call.name, 0.0, 0));
                    (p.call, envelope)
                }));
                self.refused = Some(refused);
                break;
            }
            for p in &batch {
                let parameters = p.args.as_ref().map(toolgate_gateway::redact).unwrap_or(Value::Null);
                self.emit(Event::ToolCallStarted {
                    id: p.call.id.clone(),
                    tool: p.call.name.clone(),
                    parameters,
                })
                .await;
            }
            let ctx = &self.ctx;
            let events = self.events;
            let asking = &self.asking;
            let envelopes = join_all(batch.iter().map(|p| async move {
                // One trace id per call (the run's, then the call's), so the
                // trace tells apart two calls of one tool in one run.
                let mut ctx = ctx.clone().with_trace_id(format!("{}/{}", ctx.trace_id, p.call.id));
                if let Some(asking) = asking {
                    ctx = ctx.with_asker(asking.for_call(&p.call.id));
                }
                let envelope = calls::run(gateway, &ctx, exposure, &p.call.name, p.args.clone()).await;
                let _ = events
                    .send(Event::ToolCallFinished {
                        id: p.call.id.clone(),
                        tool: p.call.name.clone(),
                        success: envelope.success,
                        code: calls::code(&envelope),
                        signals: envelope.signals.iter().map(|s| s.kind().to_owned()).collect(),
                        duration_ms: envelope.metadata.duration_ms,
                        result: calls::event_text(&envelope),
                    })
                    .await;
                envelope
            }))
            .await;
            results.extend(batch.drain(..).map(|p| p.call).zip(envelopes));
        }
        let ran = results.len();
        if !over_cap.is_empty() {
            tracing::warn!(asked, cap, "a model turn asked for more tool calls than max_tool_calls");
        }
        results.extend(over_cap.into_iter().map(|p| {
            let error = ToolError::new(
                ErrorCode::RateLimited,
                format!(
                    "not run: this turn asked for {asked} tool calls and at most {cap} run per turn \
                     ([agent] max_tool_calls), so only the first {cap} ran. Ask again for the ones \
                     still needed, at most {cap} at a time"
                ),
            )
            .with_details(json!({"max_tool_calls": cap, "asked": asked}));
            (p.call.clone(), Envelope::err(error, Metadata::now(&p.call.name, 0.0, 0)))
        }));
        let max = self.agent.config.max_result_chars;
        let mut repeated = false;
        let mut text_block = String::new();
        let mut text_envelopes = Vec::new();
        for (i, (call, envelope)) in results.into_iter().enumerate() {
            let text = calls::model_text(gateway, &envelope, max);
            // A call past the cap did not fail: it was not run.
            if !envelope.success && i < ran {
                let key = format!("{}:{}", call.name, canonical(&call.arguments));
                repeated |= self.failed_again(key);
            }
            let stored = serde_json::to_value(&envelope).ok();
            if native {
                self.push(Message::tool(&call.id, text), stored, None);
            } else {
                // A result cannot end its block (or open another): its tags are neutralised.
                text_block.push_str(&format!(
                    "<tool_response name=\"{}\">\n{}\n</tool_response>\n",
                    attribute(&call.name),
                    neutralise_tags(&text)
                ));
                if let Some(stored) = &stored {
                    self.secrets.learn(stored);
                }
                text_envelopes.push(stored.unwrap_or(Value::Null));
            }
        }
        if !native {
            self.push(Message::text("user", text_block.trim_end()), Some(Value::Array(text_envelopes)), None);
        }
        repeated
    }

    /// Count a failure; true when this exact call had failed before.
    fn failed_again(&mut self, key: String) -> bool {
        let count = self.failures.entry(key).or_insert(0);
        *count += 1;
        *count >= 2
    }
}

/// Arguments in one spelling, so `{"a":1, "b":2}` and `{"b":2,"a":1}` are the same call.
fn canonical(arguments: &str) -> String {
    fn sort(v: Value) -> Value {
        match v {
            Value::Object(map) => {
                let mut entries: Vec<(String, Value)> = map.into_iter().collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(entries.into_iter().map(|(k, v)| (k, sort(v))).collect())
            }
            Value::Array(items) => Value::Array(items.into_iter().map(sort).collect()),
            other => other,
        }
    }
    serde_json::from_str::<Value>(arguments)
        .map(|v| sort(v).to_string())
        .unwrap_or_else(|_| arguments.to_owned())
}
