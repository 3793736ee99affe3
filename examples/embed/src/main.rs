//! A service of your own that embeds toolgate: two typed tools in a gateway
//! (`toolgate-core` + `toolgate-gateway`), served over MCP by `toolgate-mcp`
//! beside the service's own routes, with API keys in a SQLite file.
//!
//! Run: `cargo run -p toolgate-example-embed -- 127.0.0.1:8400 sqlite:embed.db`,
//! then point an MCP client at `http://127.0.0.1:8400/mcp` with the printed key.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::{Router, routing::get};
use serde_json::json;
use toolgate_core::ToolSpec;
use toolgate_gateway::{Gateway, tool_fn};
use toolgate_mcp::{Exposure, HttpState, KeyStore, http_router};

/// Input of `convert_temperature`: the type is the schema, the limits and the check.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Celsius {
    /// Degrees Celsius, -273.15 or above.
    #[schemars(range(min = -273.15))]
    celsius: f64,
}

/// Input of `split_bill`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Bill {
    /// The total in cents.
    total_cents: u64,
    /// How many people share it, 1 to 50.
    #[schemars(range(min = 1, max = 50))]
    people: u64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let listen = args.next().unwrap_or_else(|| "127.0.0.1:8400".to_owned());
    let keys = KeyStore::connect(&args.next().unwrap_or_else(|| "sqlite:embed.db".to_owned())).await?;

    let convert = ToolSpec::new(
        "convert_temperature",
        "Convert Celsius to Fahrenheit. Returns {fahrenheit}.",
        json!({}),
    );
    let split =
        ToolSpec::new("split_bill", "Split a bill evenly. Returns {each_cents, remainder_cents}.", json!({}));
    let gateway = Gateway::builder()
        .tool(Arc::new(tool_fn(convert, |_ctx, i: Celsius| async move {
            Ok(json!({"fahrenheit": i.celsius * 1.8 + 32.0}))
        })))
        .tool(Arc::new(tool_fn(split, |_ctx, i: Bill| async move {
            let people = i.people.max(1); // the schema already refused 0
            Ok(json!({"each_cents": i.total_cents / people, "remainder_cents": i.total_cents % people}))
        })))
        .build()?;

    let created = keys.create("ada", "member").await?;
    let mcp = http_router(HttpState::new(gateway, keys).with_exposure(Exposure::Direct));
    let app = Router::new().route("/hello", get(|| async { "the service's own route" })).merge(mcp);

    let listener = tokio::net::TcpListener::bind(&listen).await?;
    println!("key for ada (shown once): {}", created.key.expose());
    println!("serving MCP at http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await?;
    Ok(())
}
