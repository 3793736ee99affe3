//! A real OpenID provider for end-to-end sign-in tests: panva's
//! `oidc-provider` (npm, installed by `.ci/tools.sh` under
//! `TOOLGATE_NODE_MODULES`), started from a script of the test's crate on an
//! ephemeral port and stopped with the test; required under
//! `TOOLGATE_REQUIRE_OIDC=1`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// The flag that turns a missing provider into a failure.
pub const REQUIRE: &str = "TOOLGATE_REQUIRE_OIDC";

/// A running provider; killed when dropped (it also exits when its stdin closes).
#[derive(Debug)]
pub struct Provider {
    /// What it printed once listening: `issuer`, `token_endpoint`, `stats_url`, ...
    pub info: Value,
    child: Child,
}

impl Provider {
    /// Start `script` with node and `env`, when `oidc-provider` is installed;
    /// otherwise `None` after saying why the test skipped.
    pub fn start(script: &Path, env: &[(&str, &str)]) -> Option<Self> {
        let modules = crate::gate::path("TOOLGATE_NODE_MODULES", "target/e2e-node/node_modules");
        if !modules.join("oidc-provider").is_dir() {
            crate::gate::skip(
                REQUIRE,
                &format!("no oidc-provider in {} (run .ci/tools.sh)", modules.display()),
            );
            return None;
        }
        let mut child = Command::new("node")
            .arg(script)
            .env("TOOLGATE_NODE_MODULES", &modules)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting node {}: {e}", script.display()));
        let stdout = child.stdout.take().expect("stdout piped");
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("the provider's first line");
        let info: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the provider printed {line:?}, not its JSON line: {e}"));
        Some(Self { info, child })
    }

    /// The issuer, exactly as the provider writes it.
    pub fn issuer(&self) -> &str {
        self.info["issuer"].as_str().expect("issuer")
    }

    /// Its token endpoint.
    pub fn token_endpoint(&self) -> &str {
        self.info["token_endpoint"].as_str().expect("token_endpoint")
    }

    /// Its counters (`GET /test/stats`).
    pub async fn stats(&self) -> Value {
        let url = self.info["stats_url"].as_str().expect("stats_url");
        reqwest::get(url).await.expect("the stats").json().await.expect("JSON stats")
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
