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
//! # async fn demo() -> Result<(), travel::StoreError> {
//! let store = travel::connect("sqlite:travel.db").await?;
//! travel::seed_demo(&store).await?;
//! let tools = travel::tools(store, travel::TravelConfig::from_env());
//! assert_eq!(tools.len(), 11);
//! # Ok(()) }
//! ```

// ToolError is the contract's error type (tool-core); every tool answers it by
// value, so its size is not ours to shrink here.
#![allow(clippy::result_large_err)]

mod common;
mod config;
mod crypto;
mod error;
pub mod model;
mod plan;
mod read;
mod schema;
mod seed;
pub mod store;
mod write;

use std::sync::Arc;

use tool_core::Tool;

pub use config::{
    DEFAULT_PLAN_TTL, ENV_PLAN_TTL, ENV_REDIS_URL, ENV_SECRET_KEY, ENV_WEATHER_URL, PlanStoreConfig,
    TravelConfig, WEATHER_TIMEOUT,
};
pub use crypto::open_api_key;
pub use error::{Result, StoreError};
pub use seed::{DEMO_USERS, seed_demo, seed_policies};
pub use store::{BackendKind, Store, connect};

/// The domain name every travel tool carries.
pub const DOMAIN: &str = "travel";

/// Every travel tool, ready to register with a gateway.
pub fn tools(store: Store, config: TravelConfig) -> Vec<Arc<dyn Tool>> {
    let shared = Arc::new(common::Shared::new(store, config));
    common::Kind::ALL
        .iter()
        .map(|kind| Arc::new(common::TravelTool::new(*kind, shared.clone())) as Arc<dyn Tool>)
        .collect()
}

/// The names of every travel tool, in registration order.
pub fn tool_names() -> Vec<&'static str> {
    common::Kind::ALL.iter().map(|k| k.name()).collect()
}
