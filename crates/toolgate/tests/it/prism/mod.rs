//! Real APIs, served faithfully: a corpus of public OpenAPI documents nobody here wrote
//! (`tests/openapi/`, see its SOURCE.md) is imported with `toolgate import openapi`, served by
//! `toolgate serve` as a `[[domains]]` entry, and every mapped operation is called over MCP
//! with arguments made from the schema toolgate publishes for it (once with its required
//! fields, once with every field). Each request goes to Stoplight Prism mocking the same
//! document with `--errors`, which answers 2xx only for a request valid against the
//! document. Invalid arguments are refused by toolgate before the backend: Prism never sees
//! them (the recorder in front of it counts). Run with `--nocapture` for the figures (each
//! document's operations, tools, largest tool, tokens, Prism's verdicts and every gap).
//!
//! The test skips without Prism unless `TOOLGATE_REQUIRE_PRISM=1` (`.ci/run` sets it).

mod backend;
mod corpus;
mod figures;
mod values;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};
use toolgate_schema::RouteTable;
use toolgate_test_support::mcp;

use self::backend::{Backend, Exchange};
use self::corpus::Doc;
use self::values::Fill;
use crate::common::{self, key_of, rpc, serving};

/// How one call ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// Prism found the request valid and toolgate returned its answer (or the error answer
    /// that is all the document defines for the operation).
    Valid,
    /// Prism found the request invalid against the document: the API would refuse it.
    Invalid(String),
    /// Prism found the request valid and answered 2xx, yet toolgate's envelope is an error.
    Unread(String),
    /// toolgate refused arguments valid against its own published schema; no request.
    Refused(String),
    /// Not judged: no arguments could be made from the schema (e.g. a pattern too rich to
    /// generate), or Prism took longer to mock an answer than toolgate waits (`TIMEOUT`).
    NotJudged(String),
}

impl Outcome {
    /// A gap of toolgate: the kinds a document lists as known.
    pub(crate) fn gap(&self) -> Option<&'static str> {
        match self {
            Outcome::Invalid(_) => Some("invalid"),
            Outcome::Unread(_) => Some("unread"),
            Outcome::Refused(_) => Some("refused"),
            _ => None,
        }
    }
}

/// One call: the tool, its op, which fill, the outcome and the request as sent.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) tool: String,
    pub(crate) op: String,
    pub(crate) write: bool,
    pub(crate) fill: Fill,
    pub(crate) outcome: Outcome,
    pub(crate) sent: Option<Exchange>,
}

/// What the import printed: the summary line and every `skipped` line.
#[derive(Debug, Clone, Default)]
pub(crate) struct Imported {
    pub(crate) tools: usize,
    pub(crate) imported: usize,
    pub(crate) skipped: Vec<String>,
    pub(crate) tables: Vec<RouteTable>,
    /// The `schemes = {...}` line of the printed `[[domains]]` entry, as a user pastes it.
    pub(crate) schemes: Option<String>,
}

/// The document as a file Prism and the importer read: a `.gz` is unpacked into `dir`.
fn materialize(doc: &Doc, dir: &Path) -> PathBuf {
    let path = corpus::root().join(doc.file);
    let Some(stem) = doc.file.strip_suffix(".gz") else { return path };
    let out = dir.join(Path::new(stem).file_name().unwrap());
    let packed = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&packed[..]), &mut text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::fs::write(&out, text).unwrap();
    out
}

fn import(document: &Path, routes: &Path) -> Imported {
    let output = common::toolgate()
        .args(["import", "openapi"])
        .arg(document)
        .arg("--out")
        .arg(routes)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "import of {} failed:\n{out}", document.display());
    let summary =
        out.lines().find(|l| l.contains(" operation(s) imported, ")).unwrap_or_else(|| panic!("{out}"));
    let number = |before: &str| -> usize {
        let head = &summary[..summary.find(before).unwrap()];
        head.rsplit([' ', ':']).find(|w| !w.is_empty()).unwrap().parse().unwrap()
    };
    let mut tables: Vec<RouteTable> = std::fs::read_dir(routes)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            RouteTable::from_toml_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        })
        .collect();
    tables.sort_by(|a, b| a.tool.cmp(&b.tool));
    Imported {
        tools: number(" tool(s)"),
        imported: number(" operation(s) imported"),
        skipped: out.lines().filter_map(|l| l.trim().strip_prefix("skipped ")).map(str::to_owned).collect(),
        tables,
        schemes: out.lines().find(|l| l.starts_with("schemes = ")).map(str::to_owned),
    }
}

/// The environment variables the printed `schemes` line reads its credentials from.
fn scheme_envs(imported: &Imported) -> Vec<String> {
    let Some(line) = &imported.schemes else { return Vec::new() };
    let parsed: toml::Table = toml::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    parsed["schemes"]
        .as_table()
        .unwrap()
        .values()
        .filter_map(|auth| auth.get("env")?.as_str().map(str::to_owned))
        .collect()
}

/// The `[[domains]]` entry: the recorder as `base_url` and as every operation's own server, a
/// fixed credential Prism accepts, and the scheme credentials as the import printed them.
fn config(dir: &Path, doc: &Doc, routes: &Path, backend: &str, imported: &Imported) -> PathBuf {
    let db = format!("sqlite:{}", dir.join("tg.db").display());
    let text = format!(
        "[database]\nurl = \"{db}\"\n\n[rate_limits]\nper_key = {{ requests = 100000, interval_s = 60, concurrent = 16 }}\n\
         http = {{ requests = 100000, interval_s = 60 }}\n\n[[domains]]\nname = \"{name}\"\nbase_url = \"{backend}\"\n\
         routes = \"{routes}\"\nauth = {{ kind = \"static\", header = \"{header}\", env = \"CORPUS_CREDENTIAL\" }}\n\
         timeout_ms = 20000\nmax_binary_bytes = 16777216\n",
        name = doc.domain,
        routes = routes.display(),
        header = doc.credential.0,
    );
    let mut text = text;
    let servers: std::collections::BTreeSet<&String> =
        imported.tables.iter().flat_map(|t| &t.routes).filter_map(|r| r.server.as_ref()).collect();
    if !servers.is_empty() {
        let quote = |s: &str| toml::Value::String(s.to_owned()).to_string();
        let mapped: Vec<String> =
            servers.into_iter().map(|s| format!("{} = {}", quote(s), quote(backend))).collect();
        text.push_str(&format!("servers = {{ {} }}\n", mapped.join(", ")));
    }
    if let Some(line) = &imported.schemes {
        text.push_str(line);
        text.push('\n');
    }
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Import, serve and call every operation of `doc`; the calls and the figures.
pub(crate) async fn run(doc: &Doc) -> Option<figures::Figures> {
    let prism = backend::prism_binary()?;
    let dir = tempfile::tempdir().unwrap();
    let document = materialize(doc, dir.path());
    let routes = dir.path().join("routes");
    // Prism takes seconds to read a large document: it starts while toolgate imports.
    let backend = tokio::spawn(Backend::start(prism, document.clone()));
    let started = std::time::Instant::now();
    let imported = import(&document, &routes);
    let import_ms = started.elapsed().as_millis();
    let backend = backend.await.unwrap();
    let config = config(dir.path(), doc, &routes, &backend.url, &imported);
    let (_served, url, banner) = serving(
        common::toolgate()
            .arg("--config")
            .arg(&config)
            .args(["serve", "--demo", "--listen", "127.0.0.1:0"])
            .env("CORPUS_CREDENTIAL", doc.credential.1)
            .envs(scheme_envs(&imported).into_iter().map(|e| (e, "corpus-scheme-credential")))
            .stderr(Stdio::null()),
    );
    let key = key_of(&banner, "alice");
    let client = reqwest::Client::new();
    let endpoint = format!("{url}/mcp");
    let (session, _) = mcp::open_session(&client, &endpoint, Some(&key)).await;
    let mcp = Mcp { client, endpoint, key, session, next: 10.into() };

    let mut calls = Vec::new();
    for table in &imported.tables {
        let schema = table.schema();
        for (route, branch) in table.routes.iter().zip(schema["oneOf"].as_array().unwrap()) {
            // Every field, and only the required ones where that is a different call.
            let optional = branch["properties"].as_object().map_or(0, |p| p.len())
                > branch["required"].as_array().map_or(0, |r| r.len());
            let fills: &[Fill] = if optional { &[Fill::Required, Fill::Every] } else { &[Fill::Every] };
            for &fill in fills {
                let call = call(&mcp, &backend, table, &route.op, route.method.is_read(), branch, fill).await;
                calls.push(call);
            }
        }
    }
    let calls_ms = started.elapsed().as_millis();
    let refusals = refusals(&mcp, &backend, &imported.tables).await;
    let budget = budget(&config, doc.credential.1, &scheme_envs(&imported));
    let mut figures = figures::Figures::new(doc, &imported, import_ms, calls, refusals, budget);
    figures.run_ms = calls_ms;
    Some(figures)
}

struct Mcp {
    client: reqwest::Client,
    endpoint: String,
    key: String,
    session: String,
    next: std::sync::atomic::AtomicU64,
}

impl Mcp {
    /// `execute_tool` of `tool` with `args`: the envelope (`structuredContent`).
    async fn execute(&self, tool: &str, args: Value) -> Value {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body = mcp::execute_tool(id, tool, args);
        let (_, _, answer) =
            rpc(&self.client, &self.endpoint, Some(&self.key), Some(&self.session), &body).await;
        let envelope = answer["result"]["structuredContent"].clone();
        assert!(envelope.is_object(), "no envelope for {tool}: {answer}");
        envelope
    }
}

async fn call(
    mcp: &Mcp,
    backend: &Backend,
    table: &RouteTable,
    op: &str,
    read: bool,
    branch: &Value,
    fill: Fill,
) -> Call {
    let done = |outcome, sent| Call {
        tool: table.tool.clone(),
        op: op.to_owned(),
        write: !read,
        fill,
        outcome,
        sent,
    };
    let args = match values::arguments(branch, fill) {
        Ok(args) => args,
        Err(why) => return done(Outcome::NotJudged(why), None),
    };
    if let Err(errors) = toolgate_schema::Validator::new(branch).unwrap().validate(&args) {
        return done(Outcome::NotJudged(format!("{errors:?}")), None);
    }
    let before = backend.count();
    let envelope = mcp.execute(&table.tool, args.clone()).await;
    let mut sent = backend.since(before).pop();
    let error = || format!("{} {}", envelope["error"]["code"], envelope["error"]["message"]);
    if sent.is_none() && envelope["error"]["code"] == "TIMEOUT" {
        // Prism is still making its answer: wait for it, so requests stay one at a time.
        for _ in 0..600 {
            if backend.count() > before {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        sent = backend.since(before).pop();
        return done(
            Outcome::NotJudged(format!("{} (Prism answered later: {:?})", error(), sent.map(|x| x.status))),
            None,
        );
    }
    let outcome = match &sent {
        None => Outcome::Refused(format!("{} for {args}", error())),
        Some(x) if x.valid() && (200..300).contains(&x.status) && envelope["success"] != true => {
            Outcome::Unread(error())
        }
        Some(x) if x.valid() => Outcome::Valid,
        Some(x) => Outcome::Invalid(x.line()),
    };
    done(outcome, sent)
}

/// Invalid arguments for up to 25 operations of the document (a required field left out, a
/// field it does not have, a number given as text): each is `INVALID_PARAMS` and none
/// reaches Prism. The number of such calls.
async fn refusals(mcp: &Mcp, backend: &Backend, tables: &[RouteTable]) -> usize {
    let before = backend.count();
    let mut n = 0;
    for table in tables {
        let schema = table.schema();
        for branch in schema["oneOf"].as_array().unwrap() {
            let Ok(Value::Object(good)) = values::arguments(branch, Fill::Required) else { continue };
            let mut bad = Vec::new();
            let mut unknown = good.clone();
            unknown.insert("zz_not_a_field".into(), json!(1));
            bad.push(unknown);
            if let Some(name) = good.keys().find(|k| *k != "op") {
                let mut missing = good.clone();
                missing.remove(name);
                bad.push(missing);
            }
            let props = branch["properties"].as_object().unwrap();
            if let Some((name, _)) = props.iter().find(|(_, p)| p["type"] == "integer") {
                let mut wrong = good.clone();
                wrong.insert(name.clone(), json!("not a number"));
                bad.push(wrong);
            }
            for args in bad {
                let envelope = mcp.execute(&table.tool, Value::Object(args.clone())).await;
                assert_eq!(
                    envelope["error"]["code"], "INVALID_PARAMS",
                    "{}: {args:?} -> {envelope}",
                    table.tool
                );
                n += 1;
            }
            if n >= 60 {
                break;
            }
        }
        if n >= 60 {
            break;
        }
    }
    let reached = backend.since(before);
    assert!(reached.is_empty(), "invalid arguments reached the backend: {reached:#?}");
    n
}

/// `toolgate budget`: (tools, tokens) of the document's domain alone (direct) and of meta mode.
fn budget(config: &Path, credential: &str, scheme_envs: &[String]) -> BTreeMap<String, (usize, usize)> {
    let (ok, out) = toolgate_test_support::process::output(
        common::toolgate()
            .arg("--config")
            .arg(config)
            .arg("budget")
            .env("CORPUS_CREDENTIAL", credential)
            .envs(scheme_envs.iter().map(|e| (e, "corpus-scheme-credential"))),
    );
    assert!(ok, "{out}");
    out.lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let [mode, tools, _bytes, tokens] = cols[..] else { return None };
            Some((mode.to_owned(), (tools.parse().ok()?, tokens.parse().ok()?)))
        })
        .collect()
}
