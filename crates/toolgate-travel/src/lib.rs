//! Travel domain tools for toolgate, on sqlx.
//!
//! - read: `query_travel_order`, `query_booking_record`,
//!   `check_travel_order_conflicts`, `query_travel_policy`, `query_weather`.
//! - write: `submit_travel_approval` (idempotent by a database unique
//!   index, verified by reading back), `cancel_travel_order`,
//!   `cancel_booking`, `save_flight_api_key` (AEAD at rest).
//! - plan: `plan_itinerary` and `review_planner_result`, with the full
//!   plan kept in a plan store (SQL table or Redis) and only a compact
//!   summary sent to the model ([`PlanResources`] serves the full plan
//!   as an MCP resource).
//!
//! All of them come from [`tools`] in one list; [`Store`] (module [`store`])
//! is the repository underneath, [`TravelConfig`] what they need from the
//! deployment (weather provider, secret key, plan store).
//!
//! Every tool takes the user from `ctx.caller.user_id`, never from its
//! parameters, and every query is scoped by it.
//!
//! Open a store (SQLite here, in a temporary directory; a `postgres://` URL works the same),
//! seed the policies and demo orders, register the tools with a gateway, and call one as a
//! demo user:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use serde_json::json;
//! use toolgate_core::{Caller, ToolContext};
//! use toolgate_gateway::{CallOptions, Gateway};
//!
//! let dir = tempfile::tempdir()?;
//! let url = format!("sqlite:{}", dir.path().join("travel.db").display());
//! let store = toolgate_travel::connect(&url).await?; // creates the file, runs the migrations
//! toolgate_travel::seed_demo(&store).await?;
//!
//! let tools = toolgate_travel::tools(store, toolgate_travel::TravelConfig::default());
//! let gateway = Gateway::builder().tools(tools).build()?;
//! for name in toolgate_travel::TOOL_NAMES {
//!     assert_eq!(gateway.spec(name).map(|s| s.domain), Some(toolgate_travel::DOMAIN.to_owned()));
//! }
//!
//! // The user comes from the caller, never from the parameters.
//! let alice = ToolContext::new(Caller::new("alice", "member"));
//! let answer = gateway
//!     .execute(&alice, "query_travel_policy", json!({"city": "Shanghai"}), &CallOptions::default())
//!     .await;
//! assert!(answer.success, "{:?}", answer.error);
//! let policy = answer.result.expect("a policy");
//! assert_eq!((policy["level"].as_str(), policy["tier"].as_i64()), (Some("staff"), Some(1)));
//! # Ok(()) }
//! ```
//!
//! # Cargo features
//!
//! None: both backends (SQLite and PostgreSQL, through `toolgate-db`) and the Redis plan store
//! are always built.
#![deny(missing_docs)]
// ToolError is the contract's error type (toolgate-core); every tool answers it by
// value, so its size is not ours to shrink here.
#![allow(clippy::result_large_err)]

mod config;
mod crypto;
mod error;
pub mod model;
mod plan;
mod plan_store;
mod read;
mod seed;
mod shared;
pub mod store;
mod write;

use std::sync::Arc;

use toolgate_core::Tool;

pub use config::{
    DEFAULT_PLAN_TTL, ENV_PLAN_TTL, ENV_REDIS_URL, ENV_SECRET_KEY, ENV_WEATHER_URL, PlanStoreConfig,
    TravelConfig, WEATHER_TIMEOUT,
};
pub use crypto::open_api_key;
pub use error::{Result, StoreError};
pub use plan::resource::{PLAN_URI_PREFIX, PlanResources, plan_uri};
pub use seed::{DEMO_USERS, seed_demo, seed_policies};
pub use store::{BackendKind, Store, connect};

/// The domain name every travel tool carries.
pub const DOMAIN: &str = "travel";

/// Every travel tool, ready to register with a gateway, in registration order.
/// This list is the one place that knows every tool; each tool's module
/// holds its input type, spec and function, and `shared` is below them all.
pub fn tools(store: Store, config: TravelConfig) -> Vec<Arc<dyn Tool>> {
    let shared = Arc::new(shared::Shared::new(store, config));
    let s = &shared;
    vec![
        read::order::tool_for(s),
        read::booking::tool_for(s),
        read::conflicts::tool_for(s),
        read::policy::tool_for(s),
        read::weather::tool_for(s),
        write::submit::tool_for(s),
        write::cancel::order_tool(s),
        write::cancel::booking_tool(s),
        write::api_key::tool_for(s),
        plan::tools::plan_tool(s),
        plan::tools::review_tool(s),
    ]
}

/// The names of every travel tool, in registration order.
pub const TOOL_NAMES: [&str; 11] = [
    "query_travel_order",
    "query_booking_record",
    "check_travel_order_conflicts",
    "query_travel_policy",
    "query_weather",
    "submit_travel_approval",
    "cancel_travel_order",
    "cancel_booking",
    "save_flight_api_key",
    "plan_itinerary",
    "review_planner_result",
];

/// The names of every travel tool, in registration order.
pub fn tool_names() -> Vec<&'static str> {
    TOOL_NAMES.to_vec()
}
