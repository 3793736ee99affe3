//! The task suite: a TOML file of tasks (who asks, what they say turn by turn,
//! limits, and the checks that decide success) and the OpenAPI documents its
//! imported-domain tasks run on. Dates in messages and checks are written
//! relative to the day of the run (`{today}`, `{today+30}`, `{today-3}`), as
//! the demo data is.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use chrono::{Duration, NaiveDate};
use serde::Deserialize;
use serde_json::{Map, Value};

/// A parsed suite.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// OpenAPI documents imported as domains before the tasks run.
    #[serde(default)]
    pub imports: Vec<Import>,
    /// The tasks, in the order they run.
    pub tasks: Vec<Task>,
    /// The suite file's folder (documents are found from it).
    #[serde(skip)]
    pub dir: PathBuf,
}

/// An OpenAPI document served as a declared domain.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Import {
    /// The domain name (`[[domains]] name`).
    pub name: String,
    /// The document, relative to the suite file.
    pub openapi: PathBuf,
    /// The backend that answers it: only `fitness-api` (the in-process
    /// fitness API of the run, on the run's fresh data) exists.
    pub backend: String,
}

/// One task.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// A short id, unique in the suite.
    pub id: String,
    /// What it measures, one line.
    pub title: String,
    /// The user the agent acts for (a demo user: visitor, alice, bob, carol).
    pub user: String,
    /// The caller's role.
    pub role: String,
    /// The key's toolset (e.g. `read_only`), when the caller's key has one.
    #[serde(default)]
    pub toolset: Option<String>,
    /// The key's domains, when the caller's key is scoped.
    #[serde(default)]
    pub key_domains: Option<Vec<String>>,
    /// The domains the `scoped` exposure narrows to for this task.
    pub scope: Vec<String>,
    /// Most model turns per user message.
    #[serde(default = "default_steps")]
    pub max_steps: u32,
    /// The whole task's time limit, in seconds.
    #[serde(default = "default_deadline")]
    pub deadline_secs: u64,
    /// What the user says, in order.
    pub turns: Vec<Turn>,
    /// What decides success (the default checks are added to every task).
    #[serde(default)]
    pub checks: Vec<Check>,
}

fn default_steps() -> u32 {
    10
}

fn default_deadline() -> u64 {
    180
}

/// One user message.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// The text (placeholders allowed).
    pub say: String,
    /// When it is sent.
    #[serde(default)]
    pub when: When,
}

/// When a scripted reply is sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum When {
    /// After the previous message was answered.
    #[default]
    Answered,
    /// Only when the previous answer asked the user something (it holds a `?`):
    /// "yes, cancel it" is said only to a question.
    Asked,
}

/// A success check, on state (what the database holds afterwards, read back
/// through the tools as the task's user) or on behaviour (the calls made).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// Call `tool` with `params` as the task's user after the run; the array
    /// at `path` (a JSON pointer; the result itself when absent) must hold
    /// exactly `count` items whose fields equal `where`.
    State {
        /// The read tool.
        tool: String,
        /// Its parameters.
        #[serde(default)]
        params: Map<String, Value>,
        /// Where the items are.
        #[serde(default)]
        path: Option<String>,
        /// Fields each counted item has.
        #[serde(default, rename = "where")]
        filter: Map<String, Value>,
        /// How many.
        count: usize,
        /// What it means, for the report.
        #[serde(default)]
        about: Option<String>,
    },
    /// Calls of `tool` (by its own name, whether called directly or through
    /// `execute_tool`) whose parameters include `where`, with this outcome
    /// (`ok`, `failed`, an error code; any when absent), in this user turn
    /// (any when absent), number at least `min` and at most `max`.
    Calls {
        /// The business tool.
        tool: String,
        /// Parameters each counted call has.
        #[serde(default, rename = "where")]
        filter: Map<String, Value>,
        /// The outcome counted.
        #[serde(default)]
        outcome: Option<String>,
        /// Only calls made while answering this user message (0-based).
        #[serde(default)]
        turn: Option<usize>,
        /// At least.
        #[serde(default)]
        min: Option<usize>,
        /// At most.
        #[serde(default)]
        max: Option<usize>,
        /// What it means, for the report.
        #[serde(default)]
        about: Option<String>,
    },
    /// Each tool answered successfully before the next one was first called.
    Sequence {
        /// The tools, in order.
        tools: Vec<String>,
    },
    /// Every call of `tool` with `param` true was made only after the user
    /// message `after_turn` (a reply sent only when the assistant asked), and
    /// that message was sent.
    Confirmed {
        /// The tool.
        tool: String,
        /// Its confirm parameter.
        param: String,
        /// The user message that says yes.
        after_turn: usize,
    },
    /// After a call answered with `signal`, that tool was not called again;
    /// when the signal named a `use_tool`, that tool was called.
    FollowsSignal {
        /// The signal kind, e.g. `beyond_range`.
        signal: String,
    },
    /// Every call of `tool` sent only these parameters (a plan is referred
    /// to by its id, never pasted back).
    OnlyParams {
        /// The tool.
        tool: String,
        /// The parameters allowed.
        allowed: Vec<String>,
    },
    /// The answer to user message `turn` (the last when absent) contains one
    /// of `any` (case-insensitive), and, with `asks`, asks a question.
    Answer {
        /// Which answer.
        #[serde(default)]
        turn: Option<usize>,
        /// Words, one of which must appear.
        #[serde(default)]
        any: Vec<String>,
        /// It must hold a `?`.
        #[serde(default)]
        asks: bool,
        /// What it means, for the report.
        #[serde(default)]
        about: Option<String>,
    },
}

impl Suite {
    /// Read and check a suite file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut suite = Self::parse(&text).with_context(|| format!("in {}", path.display()))?;
        suite.dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(suite)
    }

    /// Parse and check suite text.
    pub fn parse(text: &str) -> Result<Self> {
        let suite: Suite = toml::from_str(text)?;
        let mut problems = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for task in &suite.tasks {
            if !seen.insert(task.id.as_str()) {
                problems.push(format!("task `{}` appears twice", task.id));
            }
            if task.turns.is_empty() {
                problems.push(format!("task `{}` has no turns", task.id));
            }
            if task.scope.is_empty() {
                problems.push(format!("task `{}`: `scope` names no domain", task.id));
            }
            if task.turns.first().is_some_and(|t| t.when == When::Asked) {
                problems.push(format!("task `{}`: the first turn cannot wait for a question", task.id));
            }
            for check in &task.checks {
                if let Check::Confirmed { after_turn, .. } = check
                    && *after_turn >= task.turns.len()
                {
                    problems.push(format!(
                        "task `{}`: confirmed.after_turn {after_turn} is past the last turn",
                        task.id
                    ));
                }
            }
        }
        for import in &suite.imports {
            if import.backend != "fitness-api" {
                problems.push(format!(
                    "import `{}`: backend `{}` is not known; use `fitness-api`",
                    import.name, import.backend
                ));
            }
        }
        if suite.tasks.is_empty() {
            problems.push("the suite has no tasks".into());
        }
        if !problems.is_empty() {
            bail!("the suite has {} problem(s):\n  {}", problems.len(), problems.join("\n  "));
        }
        Ok(suite)
    }
}

/// `{today}`, `{today+N}`, `{today-N}` replaced by dates (YYYY-MM-DD).
pub fn dates(text: &str, today: NaiveDate) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{today") {
        out.push_str(&rest[..start]);
        let after = &rest[start + "{today".len()..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let offset = &after[..end];
        let days = match offset.strip_prefix('+') {
            Some(n) => n.trim().parse::<i64>().ok(),
            None => match offset.strip_prefix('-') {
                Some(n) => n.trim().parse::<i64>().ok().map(|n| -n),
                None => offset.is_empty().then_some(0),
            },
        };
        match days {
            Some(days) => out.push_str(&(today + Duration::days(days)).to_string()),
            None => out.push_str(&rest[start..start + "{today".len() + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// [`dates`] on every string of a JSON value.
pub fn dates_in(value: &Value, today: NaiveDate) -> Value {
    match value {
        Value::String(s) => Value::String(dates(s, today)),
        Value::Array(items) => Value::Array(items.iter().map(|v| dates_in(v, today)).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), dates_in(v, today))).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_dates() {
        let today = NaiveDate::from_ymd_opt(2027, 3, 1).unwrap();
        assert_eq!(
            dates("from {today} to {today+30}, {today-1}", today),
            "from 2027-03-01 to 2027-03-31, 2027-02-28"
        );
        assert_eq!(dates("{tomorrow} {today+x} {today", today), "{tomorrow} {today+x} {today");
    }

    #[test]
    fn the_shipped_suite_parses() {
        let suite = Suite::parse(include_str!("../../../../eval/tasks.toml")).unwrap();
        assert!(suite.tasks.len() >= 12, "{}", suite.tasks.len());
    }

    #[test]
    fn a_broken_suite_names_every_problem() {
        let err = Suite::parse(
            "[[tasks]]\nid='a'\ntitle='t'\nuser='u'\nrole='member'\nscope=[]\nturns=[]\n\
             [[tasks]]\nid='a'\ntitle='t'\nuser='u'\nrole='member'\nscope=['x']\nturns=[{say='hi', when='asked'}]\n",
        )
        .unwrap_err()
        .to_string();
        for part in ["appears twice", "no turns", "names no domain", "cannot wait"] {
            assert!(err.contains(part), "{part}: {err}");
        }
    }
}
