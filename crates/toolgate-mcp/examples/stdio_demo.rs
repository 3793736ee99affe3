//! Serves the test demo gateway over stdio, for the interop check
//! (`tests/python/client_check.py` spawns it). Not a product: `toolgate
//! serve --stdio` is.
//!
//! ```text
//! cargo run -p toolgate-mcp --example stdio_demo -- --user alice --role member [--expose meta|direct|scoped:a,b]
//! ```
//!
//! The identity comes from the command line: whoever starts the process is
//! that caller (the stdio trust boundary, see `toolgate_mcp::serve_stdio`).

#[path = "../tests/it/common/demo.rs"]
mod demo;

use toolgate_core::Caller;
use toolgate_mcp::{Exposure, serve_stdio};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // stdout carries the protocol; logs go to stderr.
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter("warn").init();
    let mut user = "demo".to_owned();
    let mut role = "member".to_owned();
    let mut exposure = Exposure::Meta;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--user" => user = value()?,
            "--role" => role = value()?,
            "--expose" => exposure = value()?.parse()?,
            other => return Err(format!("unknown argument `{other}`; use --user, --role, --expose").into()),
        }
    }
    let demo = demo::demo();
    serve_stdio(demo.gateway, Caller::new(user, role), exposure).await?;
    Ok(())
}
