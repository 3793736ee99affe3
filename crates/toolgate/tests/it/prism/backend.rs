//! The backend of the corpus test: Stoplight Prism (`prism mock DOC --errors`), which answers
//! an example for a request valid against the document and a problem naming what is wrong
//! otherwise, behind a recording proxy on 127.0.0.1 that keeps every request toolgate sent
//! and Prism's answer (so a refusal by toolgate is seen as no request at all).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Request, StatusCode, Uri};
use axum::response::Response;

/// The flag that turns a missing Prism into a failure.
pub(crate) const REQUIRE: &str = "TOOLGATE_REQUIRE_PRISM";

/// Prism's binary: `TOOLGATE_PRISM`, else where `.ci/tools.sh` installs it; `None` (after
/// saying why) when absent and not required.
pub(crate) fn prism_binary() -> Option<PathBuf> {
    let path = toolgate_test_support::gate::path(
        "TOOLGATE_PRISM",
        "/var/tmp/toolgate-ci-tools/node/node_modules/.bin/prism",
    );
    if path.is_file() {
        Some(path)
    } else {
        toolgate_test_support::gate::skip(
            REQUIRE,
            &format!("no Prism at {} (run .ci/tools.sh)", path.display()),
        );
        None
    }
}

/// One request that reached the backend and Prism's answer.
#[derive(Debug, Clone)]
pub(crate) struct Exchange {
    pub(crate) method: String,
    /// Path and query as sent.
    pub(crate) target: String,
    pub(crate) content_type: Option<String>,
    pub(crate) accept: Option<String>,
    /// The request's headers other than the transport's, credential and negotiation ones.
    pub(crate) headers: Vec<String>,
    pub(crate) body: String,
    pub(crate) status: u16,
    /// Prism's verdict from its log: passed its validation, or the reasons it did not (its
    /// `[VALIDATOR] error` lines, or why it ended the request).
    pub(crate) verdict: Result<(), Vec<String>>,
    /// Prism's answer (clipped).
    pub(crate) answer: String,
}

impl Exchange {
    /// Prism judged the request valid against the document (whatever the answer it then
    /// chose: an operation documenting only `405 Invalid input` answers that).
    pub(crate) fn valid(&self) -> bool {
        self.verdict.is_ok()
    }

    /// One line for a report: the request and, when refused, Prism's reasons.
    pub(crate) fn line(&self) -> String {
        let body =
            if self.body.is_empty() { String::new() } else { format!(" body {}", clip(&self.body, 300)) };
        let ct = self.content_type.as_deref().map(|c| format!(" [{c}]")).unwrap_or_default();
        let ct = match &self.accept {
            Some(accept) => format!("{ct} (Accept: {accept})"),
            None => ct,
        };
        let why = match &self.verdict {
            Ok(()) => String::new(),
            Err(reasons) => format!(" Prism: {}", reasons.join("; ")),
        };
        format!(
            "{} {}{ct}{body} -> {}{why} {}",
            self.method,
            self.target,
            self.status,
            clip(&self.answer, 300)
        )
    }
}

fn clip(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_owned()
    } else {
        format!("{}…", text.chars().take(n).collect::<String>())
    }
}

/// Prism on a document, behind the recorder; both stop when dropped.
pub(crate) struct Backend {
    /// The recorder's base URL (the domain's `base_url`).
    pub(crate) url: String,
    pub(crate) log: Arc<Mutex<Vec<Exchange>>>,
    _child: Killed,
    _server: tokio::task::JoinHandle<()>,
}

/// A child process killed and reaped when dropped, however the test ends: also when the test
/// panics (or its runtime stops) while Prism is still starting, which left Prism running before.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Backend {
    /// Start Prism on `document` (a free port on 127.0.0.1), wait until it listens, and the
    /// recorder in front of it.
    pub(crate) async fn start(prism: PathBuf, document: PathBuf) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = Killed(
            Command::new(&prism)
                .args(["mock", "--errors", "-h", "127.0.0.1", "-p", &port.to_string()])
                .arg(&document)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("starting {}: {e}", prism.display())),
        );
        let stdout = child.0.stdout.take().unwrap();
        let stderr = child.0.stderr.take().unwrap();
        let (ready, listening) = std::sync::mpsc::channel();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        std::thread::spawn(move || {
            let mut ready = Some(ready);
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line.clone());
                if line.contains("Prism is listening")
                    && let Some(ready) = ready.take()
                {
                    let _ = ready.send(Ok(()));
                }
            }
            if let Some(ready) = ready {
                let _ = ready.send(Err(()));
            }
        });
        let errors = Arc::new(Mutex::new(String::new()));
        let sink = errors.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                if s.len() < 4000 {
                    s.push_str(&line);
                    s.push('\n');
                }
            }
        });
        let started = tokio::task::spawn_blocking(move || listening.recv_timeout(Duration::from_secs(150)))
            .await
            .unwrap();
        if !matches!(started, Ok(Ok(()))) {
            let said = lines.lock().unwrap();
            let tail = said[said.len().saturating_sub(10)..].join("\n");
            panic!("Prism did not start on {}: {tail}\n{}", document.display(), errors.lock().unwrap());
        }
        let log = Arc::new(Mutex::new(Vec::new()));
        let state = Recorder {
            prism: format!("http://127.0.0.1:{port}"),
            log: log.clone(),
            lines,
            client: reqwest::Client::new(),
        };
        let app = axum::Router::new().fallback(forward).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { url, log, _child: child, _server: server }
    }

    /// How many requests reached Prism so far.
    pub(crate) fn count(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    /// The requests after the first `from`.
    pub(crate) fn since(&self, from: usize) -> Vec<Exchange> {
        self.log.lock().unwrap()[from..].to_vec()
    }
}

#[derive(Clone)]
struct Recorder {
    prism: String,
    log: Arc<Mutex<Vec<Exchange>>>,
    /// Prism's log, line by line.
    lines: Arc<Mutex<Vec<String>>>,
    client: reqwest::Client,
}

/// Prism's verdict on the `nth` request it received (from 0): its log says whether that
/// request passed the validation rules before it answers (`Responding with "…"`) or ends it
/// (`Request terminated with error`). Requests reach it one at a time.
async fn verdict(lines: &Mutex<Vec<String>>, nth: usize) -> Result<(), Vec<String>> {
    for _ in 0..400 {
        {
            let lines = lines.lock().unwrap();
            let received = lines.iter().enumerate().filter(|(_, l)| l.contains("Request received")).nth(nth);
            let logged = match received {
                Some((at, _)) => &lines[at..],
                None => &lines[lines.len()..],
            };
            let end = logged.iter().position(|l| {
                l.contains("Responding with \"") || l.contains("Request terminated with error")
            });
            if let Some(end) = end {
                let logged = &logged[..=end];
                if logged.iter().any(|l| l.contains("The request passed the validation rules")) {
                    return Ok(());
                }
                let reasons: Vec<String> = logged
                    .iter()
                    .filter(|l| {
                        (l.contains("[VALIDATOR]") && l.contains("error"))
                            || l.contains("terminated with error")
                    })
                    .map(|l| l.split_once("error").map_or(l.as_str(), |(_, m)| m).trim().to_owned())
                    .collect();
                return Err(if reasons.is_empty() { vec!["no verdict logged".to_owned()] } else { reasons });
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Err(vec!["Prism logged no verdict within 2 s".to_owned()])
}

async fn forward(State(r): State<Recorder>, request: Request<Body>) -> Response {
    let (parts, body) = request.into_parts();
    let body: Bytes = axum::body::to_bytes(body, 16 << 20).await.unwrap_or_default();
    let (method, uri, headers): (Method, Uri, HeaderMap) = (parts.method, parts.uri, parts.headers);
    let target = uri.path_and_query().map_or("/".to_owned(), ToString::to_string);
    let mut outgoing = r.client.request(method.clone(), format!("{}{target}", r.prism)).body(body.clone());
    for (name, value) in &headers {
        if name != "host" && name != "content-length" {
            outgoing = outgoing.header(name, value);
        }
    }
    let nth = r.log.lock().unwrap().len();
    let header = |n: &str| headers.get(n).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let (status, content_type, answer) = match outgoing.send().await {
        Ok(reply) => {
            let status = reply.status();
            let ct = reply.headers().get("content-type").cloned();
            (status, ct, reply.bytes().await.unwrap_or_default())
        }
        Err(e) => (StatusCode::BAD_GATEWAY, None, Bytes::from(format!("prism: {e}"))),
    };
    // With `--errors` Prism answers 2xx only to a request that passed its validation.
    let verdict = if status.is_success() { Ok(()) } else { verdict(&r.lines, nth).await };
    r.log.lock().unwrap().push(Exchange {
        method: method.to_string(),
        target,
        content_type: header("content-type"),
        accept: header("accept"),
        headers: headers
            .keys()
            .map(|n| n.as_str().to_owned())
            .filter(|n| {
                !matches!(
                    n.as_str(),
                    "host"
                        | "content-type"
                        | "content-length"
                        | "accept"
                        | "authorization"
                        | "user-agent"
                        | "traceparent"
                        | "tracestate"
                        | "accept-encoding"
                )
            })
            .collect(),
        body: String::from_utf8_lossy(&body).into_owned(),
        status: status.as_u16(),
        verdict,
        answer: String::from_utf8_lossy(&answer[..answer.len().min(2000)]).into_owned(),
    });
    let mut response = Response::builder().status(status);
    if let Some(ct) = content_type {
        response = response.header("content-type", ct);
    }
    response.body(Body::from(answer)).unwrap()
}
