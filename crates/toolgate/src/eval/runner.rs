//! One task in one exposure mode: a fresh SQLite file seeded with the demo
//! data, the in-process fitness API on it (which also answers the imported
//! domains), the deployment's gateway over it, and the agent talking to the
//! model under test, turn by turn. What happened is read back from the
//! conversation store (every call, its parameters and its envelope), so the
//! checks see exactly what the model did and what it was answered.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolgate_agent::{Agent, AgentConfig, ConversationStore, Exposure, RunRequest, StopReason, ToolCalling};
use toolgate_core::{Caller, Secret};
use toolgate_gateway::{EXECUTE_TOOL, META_TOOLS};

use super::suite::{Suite, Task, When, dates};
use crate::{App, Config};

/// The model under test.
#[derive(Debug, Clone)]
pub struct Target {
    /// OpenAI-compatible base URL, up to `/v1`.
    pub base_url: String,
    /// The model name.
    pub model: String,
    /// The bearer key, when the endpoint wants one.
    pub api_key: Option<Secret>,
    /// Native or text tool calls.
    pub tool_calling: ToolCalling,
    /// Sampling temperature (`None`: the server's default).
    pub temperature: Option<f32>,
    /// Longest wait for the model's next byte.
    pub idle_timeout: Duration,
    /// Extra attempts after a transient model error.
    pub retries: u32,
}

/// How the tools are offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The three meta-tools and the catalog.
    Meta,
    /// Every tool the caller may use, each a function.
    Direct,
    /// Direct, narrowed to the task's `scope` domains.
    Scoped,
}

impl Mode {
    /// All modes, in report order.
    pub const ALL: [Mode; 3] = [Mode::Meta, Mode::Direct, Mode::Scoped];

    /// The name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Meta => "meta",
            Mode::Direct => "direct",
            Mode::Scoped => "scoped",
        }
    }

    /// Parse `meta`, `direct` or `scoped`.
    pub fn parse(text: &str) -> Result<Self> {
        match text.trim() {
            "meta" => Ok(Mode::Meta),
            "direct" => Ok(Mode::Direct),
            "scoped" => Ok(Mode::Scoped),
            other => anyhow::bail!("unknown exposure `{other}`: use meta, direct or scoped"),
        }
    }
}

/// One tool call as the model made it and as it was answered.
#[derive(Debug, Clone, Serialize)]
pub struct Call {
    /// The user message it answered (0-based).
    pub turn: usize,
    /// The function the model called (`execute_tool` or the tool itself).
    pub called: String,
    /// The tool meant: `execute_tool`'s `tool_name`, else the function.
    pub tool: String,
    /// The tool's parameters (`execute_tool`'s `parameters`).
    pub params: Value,
    /// Whether the envelope says success.
    pub success: bool,
    /// The error code, when it failed.
    pub code: Option<String>,
    /// The envelope's signals.
    pub signals: Vec<Value>,
    /// Characters of the transcript the model had read before this call.
    #[serde(skip)]
    pub seen: usize,
}

impl Call {
    /// `ok` or the error code.
    pub fn outcome(&self) -> String {
        if self.success { "ok".into() } else { self.code.clone().unwrap_or_else(|| "failed".into()) }
    }

    /// Whether this is a business call (not a meta-tool's own work).
    pub fn is_business(&self) -> bool {
        !META_TOOLS.contains(&self.tool.as_str())
    }
}

/// What a run did, read back from the store.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    /// Every call, in order.
    pub calls: Vec<Call>,
    /// The answer to each user message sent (empty when the run stopped without one).
    pub answers: Vec<String>,
    /// Why each run stopped.
    pub stops: Vec<StopReason>,
    /// The user messages and tool results, in order (what a model could copy ids from).
    pub corpus: String,
}

/// What the harness prepared once for every run: the base configuration and
/// the imported domains' route tables.
#[derive(Debug)]
pub struct Prepared {
    config: Config,
    imports: Vec<(String, PathBuf)>,
    _routes: tempfile::TempDir,
    /// The day the dates of the run are relative to.
    pub today: NaiveDate,
}

impl Prepared {
    /// Import the suite's documents (as `toolgate import openapi` does) and keep the configuration.
    pub fn new(suite: &Suite, config: &Config) -> Result<Self> {
        let routes = tempfile::tempdir().context("a folder for the imported route tables")?;
        let mut imports = Vec::new();
        for import in &suite.imports {
            let path = suite.dir.join(&import.openapi);
            let text =
                std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
            let options = toolgate_openapi::Options::default();
            let imported = toolgate_openapi::import(&text, &options)
                .with_context(|| format!("importing {}", path.display()))?;
            let dir = routes.path().join(&import.name);
            std::fs::create_dir_all(&dir)?;
            for table in &imported.tables {
                let text = toml::to_string(table).with_context(|| format!("writing table {}", table.tool))?;
                std::fs::write(dir.join(format!("{}.toml", table.tool)), text)?;
            }
            imports.push((import.name.clone(), dir));
        }
        let mut config = config.clone();
        // Each run is its own little deployment: no shared counters or upstreams.
        config.rate_limits = Default::default();
        config.redis = Default::default();
        config.telemetry = Default::default();
        Ok(Self { config, imports, _routes: routes, today: chrono::Utc::now().date_naive() })
    }
}

/// The result of one task in one mode.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// The task.
    pub task: String,
    /// The mode.
    pub mode: Mode,
    /// Which repeat (0-based).
    pub repeat: u32,
    /// Every check passed.
    pub success: bool,
    /// Each check and why it failed.
    pub checks: Vec<super::checks::Verdict>,
    /// Model turns, over every user message.
    pub steps: u32,
    /// Calls by outcome (`ok` or the error code).
    pub outcomes: std::collections::BTreeMap<String, usize>,
    /// Tool calls made.
    pub calls: usize,
    /// Prompt tokens the endpoint reported.
    pub prompt_tokens: u64,
    /// Completion tokens the endpoint reported.
    pub completion_tokens: u64,
    /// Milliseconds from the first message to the last answer.
    pub wall_ms: u64,
    /// Why each run stopped.
    pub stops: Vec<String>,
    /// The setup or run error, when there was one.
    pub error: Option<String>,
}

/// Run `task` in `mode` against `target` on fresh data.
pub async fn run_task(prep: &Prepared, task: &Task, mode: Mode, repeat: u32, target: &Target) -> RunResult {
    let mut result = RunResult {
        task: task.id.clone(),
        mode,
        repeat,
        success: false,
        checks: Vec::new(),
        steps: 0,
        outcomes: Default::default(),
        calls: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        wall_ms: 0,
        stops: Vec::new(),
        error: None,
    };
    if let Err(e) = run_into(prep, task, mode, target, &mut result).await {
        result.error = Some(format!("{e:#}"));
        result.success = false;
    }
    result
}

async fn run_into(
    prep: &Prepared,
    task: &Task,
    mode: Mode,
    target: &Target,
    result: &mut RunResult,
) -> Result<()> {
    let dir = tempfile::tempdir().context("a folder for the run's database")?;
    let url = format!("sqlite:{}", dir.path().join("eval.db").display());
    let mut config = prep.config.clone();
    config.database.url = url;
    // The fitness API of this run, on its fresh data; it also answers the imported domains.
    let db = crate::wiring::connect_db(&config.database).await?;
    let fitness_db = toolgate_fitness_api::Db::open(db.clone()).await.context("opening the fitness store")?;
    let fitness = toolgate_fitness_api::spawn("127.0.0.1:0", fitness_db.clone())
        .await
        .context("starting the fitness API")?;
    config.fitness.base_url = Some(fitness.url());
    for (name, routes) in &prep.imports {
        config.domains.push(crate::domains::DomainConfig {
            name: name.clone(),
            base_url: fitness.url(),
            routes: routes.clone(),
            auth: crate::domains::AuthConfig::BearerFromCaller,
            schemes: Default::default(),
            servers: Default::default(),
            timeout_ms: 10_000,
            max_binary_bytes: 1024 * 1024,
            max_upload_bytes: 1024 * 1024,
        });
    }
    let app = App::start(&config).await?;
    seed(&app, &fitness_db, &task.user, prep.today).await?;
    let token = Secret::new(toolgate_fitness_api::issue_token(&fitness_db, &task.user).await?);
    let mut credentials = toolgate_core::Credentials::default();
    credentials.insert(toolgate_fitness::BACKEND_ID, token.clone());
    for (name, _) in &prep.imports {
        credentials.insert(name.clone(), token.clone());
    }
    let mut caller = Caller::new(task.user.clone(), task.role.clone());
    caller.credentials = credentials.clone();
    caller.toolset.clone_from(&task.toolset);
    caller.domains = match (mode, &task.key_domains) {
        (Mode::Scoped, Some(key)) => Some(key.iter().filter(|d| task.scope.contains(d)).cloned().collect()),
        (Mode::Scoped, None) => Some(task.scope.clone()),
        (_, key) => key.clone(),
    };

    let mut agent_config = AgentConfig::new(target.base_url.clone(), target.model.clone());
    agent_config.api_key.clone_from(&target.api_key);
    agent_config.exposure = if mode == Mode::Meta { Exposure::Meta } else { Exposure::Direct };
    agent_config.tool_calling = target.tool_calling;
    agent_config.temperature = target.temperature;
    agent_config.idle_timeout = target.idle_timeout;
    agent_config.model_retries = target.retries;
    agent_config.max_steps = task.max_steps;
    let store = ConversationStore::new(app.db.clone()).await.context("preparing the conversation tables")?;
    let started = Instant::now();
    let deadline = started + Duration::from_secs(task.deadline_secs.max(1));
    let mut conversation: Option<String> = None;
    let mut last: Option<(StopReason, String)> = None;
    for (i, turn) in task.turns.iter().enumerate() {
        if let Some((stop, answer)) = &last {
            let go = *stop == StopReason::Answer && (turn.when == When::Answered || answer.contains('?'));
            if !go {
                break;
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            result.stops.push(StopReason::Deadline.as_str().into());
            break;
        }
        agent_config.deadline = left;
        let agent = Agent::new(app.gateway.clone(), agent_config.clone())?.with_store(store.clone());
        let request = RunRequest::new(caller.clone(), dates(&turn.say, prep.today))
            .with_conversation_id(conversation.clone());
        let (events, mut rx) = toolgate_agent::event_channel();
        let run = async move { agent.run(request, &events, toolgate_agent::CancellationToken::new()).await };
        let drain = async { while rx.recv().await.is_some() {} };
        let outcome =
            tokio::join!(run, drain).0.map_err(|e| anyhow::anyhow!("turn {i}: {}", e.public_message()))?;
        result.steps += outcome.steps;
        result.prompt_tokens += outcome.usage.prompt_tokens;
        result.completion_tokens += outcome.usage.completion_tokens;
        result.stops.push(outcome.stop_reason.as_str().into());
        conversation = Some(outcome.conversation_id.clone());
        last = Some((outcome.stop_reason, outcome.answer));
    }
    result.wall_ms = started.elapsed().as_millis() as u64;
    let Some(conversation) = conversation else { anyhow::bail!("no turn was sent") };
    let stored = store.messages(&conversation, &task.user).await.map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut transcript = read_transcript(&stored);
    transcript.stops = result
        .stops
        .iter()
        .map(|s| serde_json::from_value(Value::String(s.clone())).unwrap_or(StopReason::ModelError))
        .collect();
    result.calls = transcript.calls.len();
    for call in &transcript.calls {
        *result.outcomes.entry(call.outcome()).or_default() += 1;
    }
    // State is read back through the tools, as the task's user with every tool visible.
    let highest = app.gateway.policy().hierarchy().highest().to_owned();
    let mut reader = Caller::new(task.user.clone(), highest);
    reader.credentials = credentials;
    result.checks = super::checks::verify(task, &transcript, &app.gateway, &reader, prep.today).await;
    result.success = result.checks.iter().all(|c| c.pass);
    drop(app);
    drop(fitness);
    Ok(())
}

/// The demo data, as `toolgate serve --demo` seeds it, plus the task's user.
async fn seed(app: &App, fitness_db: &toolgate_fitness_api::Db, user: &str, today: NaiveDate) -> Result<()> {
    toolgate_travel::seed_demo(&app.travel).await.context("seeding the travel demo data")?;
    let mut users: Vec<&str> = crate::serve::DEMO_USERS.iter().map(|(u, _)| *u).collect();
    if !users.contains(&user) {
        users.push(user);
    }
    for user in users {
        let _ = toolgate_fitness_api::create_user(fitness_db, user).await;
        toolgate_fitness_api::seed_demo(fitness_db, user, today)
            .await
            .context("seeding the fitness demo data")?;
    }
    Ok(())
}

/// Every call with its envelope, the answers and the corpus, from the stored conversation.
pub fn read_transcript(stored: &[toolgate_agent::StoredMessage]) -> Transcript {
    let mut out = Transcript::default();
    let mut turn: Option<usize> = None;
    // Calls waiting for their envelope: native ones by id, text ones in order.
    let mut native: Vec<(String, usize)> = Vec::new();
    let mut text: std::collections::VecDeque<usize> = Default::default();
    for m in stored {
        let content = m.message["content"].as_str().unwrap_or_default();
        match m.role.as_str() {
            "user" if m.envelope.is_none() => {
                turn = Some(turn.map_or(0, |t| t + 1));
                out.answers.push(String::new());
                out.corpus.push_str(content);
                out.corpus.push('\n');
            }
            "user" => {
                let envelopes = m.envelope.as_ref().and_then(Value::as_array).cloned().unwrap_or_default();
                for envelope in envelopes {
                    if let Some(i) = text.pop_front() {
                        answer_call(&mut out.calls[i], &envelope);
                    }
                }
                out.corpus.push_str(content);
                out.corpus.push('\n');
            }
            "assistant" => {
                let t = turn.unwrap_or(0);
                let calls = m.message["tool_calls"].as_array().cloned().unwrap_or_default();
                if !calls.is_empty() {
                    for c in calls {
                        let args = c["function"]["arguments"].as_str().unwrap_or("{}");
                        let args = serde_json::from_str(args).unwrap_or(Value::Null);
                        let name = c["function"]["name"].as_str().unwrap_or_default();
                        native.push((c["id"].as_str().unwrap_or_default().to_owned(), out.calls.len()));
                        out.calls.push(new_call(t, name, args, out.corpus.len()));
                    }
                } else {
                    match toolgate_gateway::fallback::parse_all(content) {
                        Ok(parsed) if !parsed.is_empty() => {
                            for c in parsed {
                                text.push_back(out.calls.len());
                                out.calls.push(new_call(t, &c.tool, c.parameters, out.corpus.len()));
                            }
                        }
                        _ => {
                            if let Some(answer) = out.answers.last_mut() {
                                *answer = content.to_owned();
                            }
                        }
                    }
                }
            }
            "tool" => {
                let id = m.message["tool_call_id"].as_str().unwrap_or_default();
                if let Some(pos) = native.iter().position(|(n, _)| n == id) {
                    let (_, i) = native.remove(pos);
                    if let Some(envelope) = &m.envelope {
                        answer_call(&mut out.calls[i], envelope);
                    }
                }
                out.corpus.push_str(content);
                out.corpus.push('\n');
                if let Some(envelope) = &m.envelope {
                    out.corpus.push_str(&envelope["result"].to_string());
                    out.corpus.push('\n');
                }
            }
            _ => {}
        }
    }
    out
}

fn new_call(turn: usize, name: &str, args: Value, seen: usize) -> Call {
    let (tool, params) = if name == EXECUTE_TOOL {
        let params = match &args["parameters"] {
            Value::String(s) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
            Value::Null => Value::Object(Default::default()),
            other => other.clone(),
        };
        (args["tool_name"].as_str().unwrap_or_default().to_owned(), params)
    } else {
        (name.to_owned(), args)
    };
    Call {
        turn,
        called: name.to_owned(),
        tool,
        params,
        success: false,
        code: None,
        signals: Vec::new(),
        seen,
    }
}

fn answer_call(call: &mut Call, envelope: &Value) {
    call.success = envelope["success"].as_bool().unwrap_or(false);
    call.code = envelope["error"]["code"].as_str().map(str::to_owned);
    call.signals = envelope["signals"].as_array().cloned().unwrap_or_default();
}
