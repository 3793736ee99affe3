//! Travel domain tools for toolgate, on sqlx.
//!
//! - [`read`]: `query_travel_order`, `query_booking_record`,
//!   `check_travel_order_conflicts`, `query_travel_policy`, `query_weather`.
//! - [`write`]: `submit_travel_approval` (idempotent by a database unique
//!   index, verified by reading back), `cancel_travel_order`,
//!   `cancel_booking`, `save_flight_api_key` (AEAD at rest).
//! - [`plan`]: `plan_itinerary` and `review_planner_result`, with the full
//!   plan kept in a plan store (SQL table or Redis) and only a compact
//!   summary sent to the model.
//!
//! Every tool takes the user from `ctx.caller.user_id`, never from its
//! parameters, and every query is scoped by it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), toolgate_travel::StoreError> {
//! let store = toolgate_travel::connect("sqlite:travel.db").await?;
//! toolgate_travel::seed_demo(&store).await?;
//! let config = toolgate_travel::TravelConfig::default().with_weather_url("http://127.0.0.1:9100/weather");
//! let tools = toolgate_travel::tools(store, config);
//! assert_eq!(tools.len(), 11);
//! # Ok(()) }
//! ```

// ToolError is the contract's error type (tool-core); every tool answers it by
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
