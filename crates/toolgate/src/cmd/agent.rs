//! `toolgate agent "message"`: run the agent for one message as a user and
//! stream the answer, one line per tool call, a spinner while waiting.
//!
//! A tool call that needs the person (a write to confirm, missing values
//! with `[limits] ask_for_missing`) is asked here: when stdin is a
//! terminal, the question goes to stderr and the answer is read from stdin
//! (`y`/`n` for a confirmation; the values as JSON or `key=value` pairs; an
//! empty line declines). When stdin is not a terminal nobody can be asked,
//! and the model gets the `need_confirm` signal as before.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use toolgate::{App, Config};
use toolgate_agent::{Asking, CancellationToken, Event, RunOptions, RunRequest, StopReason};
use toolgate_core::{Answer, Asker, Caller, Question};

use super::check_role;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// What to ask.
    message: String,
    /// The user the agent acts for.
    #[arg(long)]
    user: String,
    /// The user's role.
    #[arg(long)]
    role: String,
    /// Continue a stored conversation (printed at the end of each run).
    #[arg(long)]
    conversation: Option<String>,
}

pub(crate) async fn run(args: Args, app: &App, config: &Config) -> Result<ExitCode> {
    check_role(app.gateway.policy().hierarchy(), &args.role, "")?;
    let agent = app.agent(config).await?;
    let caller = app.with_fitness_credential(Caller::new(args.user, args.role)).await?;
    let request = RunRequest::new(caller, args.message).with_conversation_id(args.conversation);
    let (tx, mut rx) = toolgate_agent::event_channel();
    let cancel = CancellationToken::new();
    let ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            ctrl_c.cancel();
        }
    });
    // The spinner and the questions share stderr: a question holds it while it is open.
    let screen = Arc::new(Mutex::new(false));
    let asker = TerminalAsker::new(std::io::stdin().is_terminal(), screen.clone());
    let options = RunOptions::default().with_asking(Asking::Asker(Arc::new(asker)));
    let task = tokio::spawn(async move { agent.run_with(request, &tx, cancel, options).await });
    let mut out = Printer::new(screen);
    let mut tick = tokio::time::interval(Duration::from_millis(120));
    let mut stop = None;
    loop {
        tokio::select! {
            event = rx.recv() => match event {
                Some(event) => {
                    if let Event::Final { stop_reason, .. } = &event {
                        stop = Some(*stop_reason);
                    }
                    out.event(event);
                }
                None => break,
            },
            _ = tick.tick() => out.spin(),
        }
    }
    out.clear_spinner();
    match task.await? {
        Ok(_) => Ok(if stop == Some(StopReason::Answer) { ExitCode::SUCCESS } else { ExitCode::from(1) }),
        Err(e) => {
            eprintln!("error {}: {}", e.code(), e.public_message());
            Ok(ExitCode::from(1))
        }
    }
}

/// Writes events to the terminal: tokens to stdout as they come, tool
/// calls and the closing line to stderr, the spinner only on a terminal.
struct Printer {
    /// Started calls by id: the name to show and its short parameters.
    calls: std::collections::HashMap<String, (String, String)>,
    spinner: bool,
    spinning: bool,
    /// True while a question is on the screen (no spinner then).
    screen: Arc<Mutex<bool>>,
    /// Open questions by id: their message.
    questions: std::collections::HashMap<String, String>,
    frame: usize,
    mid_line: bool,
}

impl Printer {
    fn new(screen: Arc<Mutex<bool>>) -> Self {
        Self {
            calls: std::collections::HashMap::new(),
            spinner: std::io::stderr().is_terminal(),
            spinning: false,
            screen,
            questions: std::collections::HashMap::new(),
            frame: 0,
            mid_line: false,
        }
    }

    fn spin(&mut self) {
        if !self.spinner || self.mid_line {
            return;
        }
        let asking = self.screen.lock().unwrap_or_else(|e| e.into_inner());
        if *asking {
            return;
        }
        const FRAMES: [&str; 4] = ["|", "/", "-", "\\"];
        self.frame = (self.frame + 1) % FRAMES.len();
        eprint!("\r{} thinking", FRAMES[self.frame]);
        let _ = std::io::stderr().flush();
        self.spinning = true;
    }

    fn clear_spinner(&mut self) {
        if self.spinning {
            eprint!("\r           \r");
            self.spinning = false;
        }
    }

    fn end_line(&mut self) {
        if self.mid_line {
            outln!();
            self.mid_line = false;
        }
    }

    fn event(&mut self, event: Event) {
        self.clear_spinner();
        match event {
            Event::Token { text } => {
                out!("{text}");
                self.mid_line = !text.ends_with('\n');
            }
            Event::ToolCallStarted { id, tool, parameters } => {
                // `execute_tool` is shown as the tool it runs, with that tool's parameters.
                let (name, params) = match parameters["tool_name"].as_str() {
                    Some(inner) if tool == toolgate_gateway::EXECUTE_TOOL => {
                        (format!("{tool} → {inner}"), &parameters["parameters"])
                    }
                    _ => (tool, &parameters),
                };
                let params = if params.is_null() { "{}".to_owned() } else { params.to_string() };
                let params = if params.chars().count() > 80 {
                    format!("{}…", params.chars().take(80).collect::<String>())
                } else {
                    params
                };
                self.calls.insert(id, (name, params));
            }
            Event::ToolCallFinished { id, tool, success, code, signals, duration_ms, .. } => {
                self.end_line();
                let (name, params) = self.calls.remove(&id).unwrap_or((tool, String::new()));
                let outcome = if success { "ok".to_owned() } else { code.unwrap_or_else(|| "failed".into()) };
                let signals =
                    if signals.is_empty() { String::new() } else { format!(" [{}]", signals.join(", ")) };
                eprintln!("  -> {name} {params}: {outcome}{signals} ({duration_ms:.0} ms)");
            }
            Event::Elicitation { id, message, .. } => {
                self.end_line();
                self.questions.insert(id, message);
            }
            Event::ElicitationAnswered { id, outcome } => {
                let message = self.questions.remove(&id).unwrap_or_default();
                if outcome == "unreachable" {
                    // Nobody saw the question: say what it was.
                    eprintln!("  ? not asked (stdin is not a terminal): {message}");
                } else {
                    eprintln!("  ? {outcome}");
                }
            }
            Event::Error { code, message } => {
                self.end_line();
                eprintln!("error {code}: {message}");
            }
            Event::Final { conversation_id, stop_reason, usage, steps, .. } => {
                self.end_line();
                eprintln!(
                    "[{} after {steps} step(s), {} tokens; continue with --conversation {conversation_id}]",
                    stop_reason.as_str(),
                    usage.total_tokens
                );
            }
            // An event kind newer than this CLI: nothing to show.
            _ => {}
        }
    }
}

/// Asks the person at the terminal: the question on stderr, the answer a
/// line of stdin. Without a terminal on stdin, nobody: every question is
/// [`Answer::Unreachable`], so the model gets the signal as without asking.
struct TerminalAsker {
    /// Lines of stdin, read on a thread of their own (started only for a terminal).
    lines: Option<tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>>,
    /// Held while a question is on the screen, true then (the spinner waits).
    screen: Arc<Mutex<bool>>,
}

impl TerminalAsker {
    fn new(terminal: bool, screen: Arc<Mutex<bool>>) -> Self {
        let lines = terminal.then(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            // A blocking read of its own: a question given up (its time ran
            // out) leaves no read behind that would take the next answer.
            std::thread::spawn(move || {
                for line in std::io::stdin().lock().lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            tokio::sync::Mutex::new(rx)
        });
        Self { lines, screen }
    }
}

/// Sets the screen back to the spinner's when the question is over (answered or given up).
struct OnScreen<'a>(&'a Mutex<bool>);

impl Drop for OnScreen<'_> {
    fn drop(&mut self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = false;
    }
}

#[toolgate_core::async_trait]
impl Asker for TerminalAsker {
    async fn ask(&self, question: &Question) -> Answer {
        let Some(lines) = &self.lines else {
            return Answer::Unreachable("stdin is not a terminal: nobody can be asked".to_owned());
        };
        // One question at a time (reads of one turn may ask together).
        let mut lines = lines.lock().await;
        // What was typed before the question is not its answer.
        while lines.try_recv().is_ok() {}
        let form = Form::of(&question.schema);
        {
            let mut asking = self.screen.lock().unwrap_or_else(|e| e.into_inner());
            *asking = true;
            eprintln!("\r           \r? {}", question.message);
            eprint!("{}", form.prompt());
            let _ = std::io::stderr().flush();
        }
        let _screen = OnScreen(&self.screen);
        loop {
            let Some(line) = lines.recv().await else {
                return Answer::Unanswered("stdin was closed".to_owned());
            };
            match form.answer(&line) {
                Ok(answer) => return answer,
                Err(problem) => {
                    eprint!("  {problem}\n{}", form.prompt());
                    let _ = std::io::stderr().flush();
                }
            }
        }
    }
}

/// The answer form of a question's schema: a yes/no confirmation, or fields.
#[derive(Debug)]
struct Form {
    /// `(name, type)` of each property, in the schema's order.
    fields: Vec<(String, String)>,
    required: Vec<String>,
}

impl Form {
    fn of(schema: &Value) -> Self {
        let fields = schema["properties"]
            .as_object()
            .map(|props| {
                props
                    .iter()
                    .map(|(name, p)| (name.clone(), p["type"].as_str().unwrap_or("string").to_owned()))
                    .collect()
            })
            .unwrap_or_default();
        let required = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        Self { fields, required }
    }

    /// A confirmation: one boolean `confirm`.
    fn is_confirmation(&self) -> bool {
        matches!(self.fields.as_slice(), [(name, kind)] if name == "confirm" && kind == "boolean")
    }

    fn prompt(&self) -> String {
        if self.is_confirmation() {
            return "  [y/N] ".to_owned();
        }
        let names: Vec<String> = self
            .fields
            .iter()
            .map(|(name, kind)| {
                let mark = if self.required.contains(name) { "" } else { "?" };
                format!("{name}{mark} ({kind})")
            })
            .collect();
        format!("  Give {} as JSON or key=value pairs (an empty line declines): ", names.join(", "))
    }

    /// The answer a line gives, or what is wrong with it (to ask again).
    fn answer(&self, line: &str) -> Result<Answer, String> {
        let line = line.trim();
        if self.is_confirmation() {
            return match line.to_ascii_lowercase().as_str() {
                "y" | "yes" => Ok(Answer::Accept(json!({"confirm": true}))),
                "" | "n" | "no" => Ok(Answer::Decline),
                _ => Err("answer y (go ahead) or n (leave everything as it is)".to_owned()),
            };
        }
        if line.is_empty() {
            return Ok(Answer::Decline);
        }
        let given = if line.starts_with(['{', '[']) {
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(given)) => given,
                Ok(_) | Err(_) => {
                    return Err("that is not a JSON object; write {\"name\": value, ...}".to_owned());
                }
            }
        } else {
            self.pairs(line)?
        };
        if let Some(unknown) = given.keys().find(|k| !self.fields.iter().any(|(name, _)| name == *k)) {
            return Err(format!("`{unknown}` is not asked for; give {}", self.names()));
        }
        let missing: Vec<&str> =
            self.required.iter().filter(|r| !given.contains_key(*r)).map(String::as_str).collect();
        if !missing.is_empty() {
            return Err(format!("still missing: {}", missing.join(", ")));
        }
        Ok(Answer::Accept(Value::Object(given)))
    }

    /// `a=1 b=two words`: a word with `=` after a field's name starts a
    /// value, and the words after it belong to it until the next one.
    fn pairs(&self, line: &str) -> Result<Map<String, Value>, String> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for word in line.split_whitespace() {
            let starts =
                word.split_once('=').filter(|(name, _)| self.fields.iter().any(|(field, _)| field == name));
            match (starts, pairs.last_mut()) {
                (Some((name, value)), _) => pairs.push((name.to_owned(), value.to_owned())),
                (None, Some((_, value))) => {
                    value.push(' ');
                    value.push_str(word);
                }
                (None, None) => {
                    return Err(format!("write name=value pairs, the names being {}", self.names()));
                }
            }
        }
        let mut given = Map::new();
        for (name, text) in pairs {
            let kind = self.fields.iter().find(|(field, _)| *field == name).map(|(_, k)| k.as_str());
            given.insert(name.clone(), typed(&name, kind.unwrap_or("string"), &text)?);
        }
        Ok(given)
    }

    fn names(&self) -> String {
        self.fields.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>().join(", ")
    }
}

/// A `key=value` value as its field's type.
fn typed(name: &str, kind: &str, text: &str) -> Result<Value, String> {
    let text = text.trim();
    let unquoted = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text);
    let wrong =
        || format!("`{name}` must be {} {kind}, not `{text}`", if kind == "integer" { "an" } else { "a" });
    match kind {
        "integer" => text.parse::<i64>().map(Value::from).map_err(|_| wrong()),
        "number" => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(wrong),
        "boolean" => match text.to_ascii_lowercase().as_str() {
            "true" | "yes" | "y" => Ok(Value::Bool(true)),
            "false" | "no" | "n" => Ok(Value::Bool(false)),
            _ => Err(wrong()),
        },
        _ => Ok(Value::String(unquoted.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn missing() -> Form {
        Form::of(&json!({
            "type": "object",
            "properties": {
                "return_date": {"type": "string", "format": "date"},
                "nights": {"type": "integer"},
                "budget": {"type": "number"},
                "window_seat": {"type": "boolean"}
            },
            "required": ["return_date", "nights"]
        }))
    }

    #[test]
    fn a_confirmation_is_y_or_n_and_nothing_else() {
        let form = Form::of(&Question::confirm("order 7 cannot be undone").schema);
        assert!(form.is_confirmation());
        assert_eq!(form.answer("y"), Ok(Answer::Accept(json!({"confirm": true}))));
        assert_eq!(form.answer(" YES "), Ok(Answer::Accept(json!({"confirm": true}))));
        for no in ["n", "No", ""] {
            assert_eq!(form.answer(no), Ok(Answer::Decline), "{no:?}");
        }
        assert!(form.answer("sure").unwrap_err().contains("answer y"));
        assert!(form.prompt().contains("[y/N]"));
    }

    #[test]
    fn missing_values_are_read_as_key_value_pairs_of_their_types() {
        let form = missing();
        assert!(!form.is_confirmation());
        assert_eq!(
            form.answer("return_date=2026-12-24 nights=3 budget=99.5 window_seat=yes"),
            Ok(Answer::Accept(
                json!({"return_date": "2026-12-24", "nights": 3, "budget": 99.5, "window_seat": true})
            ))
        );
        // A value may have spaces, and quotes around a string are not part of it.
        let form = Form::of(&json!({"type": "object", "properties": {"city": {"type": "string"},
            "nights": {"type": "integer"}}, "required": ["city"]}));
        assert_eq!(
            form.answer("city=New York nights=2"),
            Ok(Answer::Accept(json!({"city": "New York", "nights": 2})))
        );
        assert_eq!(form.answer("city=\"Oslo\""), Ok(Answer::Accept(json!({"city": "Oslo"}))));
    }

    #[test]
    fn missing_values_are_read_as_json_too() {
        assert_eq!(
            missing().answer(r#"{"return_date": "2026-12-24", "nights": 3}"#),
            Ok(Answer::Accept(json!({"return_date": "2026-12-24", "nights": 3})))
        );
        assert!(missing().answer("[1, 2]").unwrap_err().contains("JSON object"));
        assert!(missing().answer("{nope").unwrap_err().contains("JSON object"));
    }

    #[test]
    fn a_wrong_or_incomplete_answer_says_what_to_fix_and_an_empty_one_declines() {
        let form = missing();
        assert_eq!(form.answer("  "), Ok(Answer::Decline));
        assert_eq!(form.answer("nights=3").unwrap_err(), "still missing: return_date");
        assert_eq!(
            form.answer("return_date=2026-12-24 nights=three").unwrap_err(),
            "`nights` must be an integer, not `three`"
        );
        assert!(form.answer("2026-12-24").unwrap_err().contains("name=value"));
        assert!(
            form.answer(r#"{"return_date": "x", "nights": 1, "pin": 1}"#)
                .unwrap_err()
                .contains("`pin` is not asked for")
        );
    }

    #[tokio::test]
    async fn without_a_terminal_on_stdin_nobody_is_asked() {
        let asker = TerminalAsker::new(false, Arc::default());
        let answer = asker.ask(&Question::confirm("order 7 cannot be undone")).await;
        assert!(matches!(answer, Answer::Unreachable(_)), "{answer:?}");
    }
}
