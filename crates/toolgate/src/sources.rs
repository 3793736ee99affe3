//! The sources of a serving toolgate for the operator's page
//! (`GET /api/admin/sources`, [`toolgate_mcp::Sources`]): the compiled-in
//! travel domain (over the database), the fitness API, every `[[domains]]`
//! entry and every `[[upstreams]]` entry, each asked whether it answers now.
//!
//! An HTTP backend is reachable when its host accepts a TCP connection on
//! the base URL's port within [`PROBE_TIMEOUT`] (no request is sent: a probe
//! must not count as a call, need a credential, or change anything); the
//! database when it answers a query; an upstream when its MCP connection is
//! up (its supervisor's state, with the reason it is down). The numbers
//! (tools, calls, error rate, latency) are added by the server from the
//! gateway's metrics.
//!
//! `[[domains]]` entries are the ones the process started with; one added by
//! a reload is still listed, by its tools' domain, with its reachability unknown.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;
use toolgate_mcp::SourceState;

use crate::wiring::{App, redact_url};

/// How long one backend may take to accept a connection.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// The sources of an [`App`] (see the module docs).
pub struct AppSources {
    db: toolgate_db::Db,
    /// (name, kind, base URL) of each HTTP backend.
    backends: Vec<(String, &'static str, String)>,
    upstreams: Arc<tokio::sync::Mutex<toolgate_mcp_upstream::Upstreams>>,
    /// Where each configured upstream is (URL without credentials, or the command's program).
    upstream_targets: Vec<(String, String)>,
}

impl std::fmt::Debug for AppSources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppSources").field("backends", &self.backends.len()).finish_non_exhaustive()
    }
}

impl AppSources {
    /// The sources of `app`, started from `config`.
    pub fn new(app: &App, config: &crate::Config) -> Self {
        let fitness_url = match (&config.fitness.base_url, &app.fitness_server) {
            (Some(url), _) => Some(url.clone()),
            (None, Some(server)) => Some(server.url()),
            (None, None) => None,
        };
        let mut backends: Vec<(String, &'static str, String)> = Vec::new();
        if let Some(url) = fitness_url {
            backends.push(("fitness".into(), "built-in", url));
        }
        for domain in &config.domains {
            backends.push((domain.name.clone(), "domain", domain.base_url.clone()));
        }
        let upstream_targets = config
            .upstreams
            .iter()
            .map(|u| {
                let target = match (&u.url, &u.command) {
                    (Some(url), _) => redact_url(url),
                    (None, Some(command)) => command.first().cloned().unwrap_or_default(),
                    (None, None) => String::new(),
                };
                (u.name.clone(), target)
            })
            .collect();
        Self { db: app.db.clone(), backends, upstreams: app.upstreams.clone(), upstream_targets }
    }
}

/// Whether `base_url`'s host accepts a connection on its port.
async fn probe(base_url: &str) -> Result<(), String> {
    let url = reqwest::Url::parse(base_url).map_err(|e| format!("the base URL does not parse: {e}"))?;
    let host = url.host_str().ok_or("the base URL names no host")?.trim_matches(['[', ']']).to_owned();
    let port = url.port_or_known_default().ok_or("the base URL names no port")?;
    match tokio::time::timeout(PROBE_TIMEOUT, tokio::net::TcpStream::connect((host.as_str(), port))).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(format!("{host}:{port} refuses connections ({e})")),
        Err(_) => {
            Err(format!("{host}:{port} did not accept a connection within {} ms", PROBE_TIMEOUT.as_millis()))
        }
    }
}

#[async_trait::async_trait]
impl toolgate_mcp::Sources for AppSources {
    async fn sources(&self) -> Vec<SourceState> {
        let mut probes = JoinSet::new();
        for (at, (_, _, url)) in self.backends.iter().enumerate() {
            let url = url.clone();
            probes.spawn(async move { (at, probe(&url).await) });
        }
        let database = match tokio::time::timeout(PROBE_TIMEOUT * 2, self.db.check_reachable()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!("the database does not answer ({e})")),
            Err(_) => Err("the database did not answer within 2 s".to_owned()),
        };
        let mut out = vec![
            SourceState::new(toolgate_travel::DOMAIN, "built-in")
                .with_target(format!("the database ({})", self.db.backend().as_str()))
                .with_reach(database),
        ];
        let mut reached: Vec<Option<Result<(), String>>> = vec![None; self.backends.len()];
        while let Some(done) = probes.join_next().await {
            if let Ok((at, reach)) = done {
                reached[at] = Some(reach);
            }
        }
        for ((name, kind, url), reach) in self.backends.iter().zip(reached) {
            let state = SourceState::new(name, *kind).with_target(redact_url(url));
            out.push(match reach {
                Some(reach) => state.with_reach(reach),
                None => state,
            });
        }
        // A reload holds the lock while it connects upstreams: then their state is not known yet.
        let status = match tokio::time::timeout(PROBE_TIMEOUT, self.upstreams.lock()).await {
            Ok(running) => running.status(),
            Err(_) => {
                let mut busy = Vec::new();
                for (name, target) in &self.upstream_targets {
                    let mut state = SourceState::new(name, "upstream").with_target(target);
                    state.error = Some("a reload is connecting upstreams; ask again".into());
                    busy.push(state);
                }
                out.extend(busy);
                return out;
            }
        };
        for upstream in status {
            let mut state = SourceState::new(&upstream.name, "upstream");
            if let Some((_, target)) = self.upstream_targets.iter().find(|(n, _)| *n == upstream.name) {
                state = state.with_target(target);
            }
            out.push(state.with_reach(match upstream.reason {
                None if upstream.connected => Ok(()),
                reason => Err(reason.unwrap_or_else(|| "not connected".into())),
            }));
        }
        out
    }
}
