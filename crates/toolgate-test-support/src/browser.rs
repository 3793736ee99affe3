//! Chromium and playwright-core for tests of the web page in a real browser:
//! `TOOLGATE_CHROMIUM` (default `/usr/bin/chromium`) and `TOOLGATE_NODE_MODULES`
//! (default `target/e2e-node/node_modules`); required under `TOOLGATE_REQUIRE_BROWSER=1`.

use std::path::PathBuf;
use std::process::Stdio;

/// What a browser test runs: Chromium and the `node_modules` with playwright-core.
#[derive(Debug)]
pub struct Browser {
    pub chromium: PathBuf,
    pub node_modules: PathBuf,
}

/// The browser tools, or `None` after saying why the test skipped.
pub fn find() -> Option<Browser> {
    match locate() {
        Ok(found) => Some(found),
        Err(why) => {
            crate::gate::skip("TOOLGATE_REQUIRE_BROWSER", &why);
            None
        }
    }
}

fn locate() -> Result<Browser, String> {
    let chromium = crate::gate::path("TOOLGATE_CHROMIUM", "/usr/bin/chromium");
    if !chromium.exists() {
        return Err(format!("no Chromium at {} (apt-get install chromium)", chromium.display()));
    }
    let node_modules = crate::gate::path("TOOLGATE_NODE_MODULES", "target/e2e-node/node_modules");
    let found = std::process::Command::new("node")
        .args(["-e", "require('playwright-core')"])
        .env("NODE_PATH", &node_modules)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match found {
        Ok(status) if status.success() => Ok(Browser { chromium, node_modules }),
        Ok(_) => {
            Err(format!("no playwright-core in {} (npm install playwright-core)", node_modules.display()))
        }
        Err(error) => Err(format!("`node` cannot be run ({error})")),
    }
}
