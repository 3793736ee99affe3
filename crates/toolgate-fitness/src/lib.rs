//! The fitness domain: body, nutrition and training, each as one read tool and one write tool
//! over the fitness REST API (the reference backend is the `toolgate-fitness-api` crate).
//!
//! | domain | read (GET only) | write |
//! |---|---|---|
//! | `body` | `query_body_data` | `update_body_data` (PUT, DELETE: idempotent) |
//! | `nutrition` | `query_nutrition` | `update_nutrition` (POST, PUT goals, DELETE) |
//! | `training` | `query_training` | `update_training` (POST, PATCH, DELETE) |
//!
//! Each tool is a route table (`crates/toolgate-fitness/routes/<tool>.toml`, compiled into the binary):
//! one `oneOf` branch per operation, chosen by `op`. The tables match the API route for route
//! and field for field; a test compares them with `toolgate_fitness_api::route_specs()`. The calls run
//! through [`toolgate_http::HttpExecutor`] with the caller's credential for the fitness API: the
//! one filed under [`BACKEND_ID`] (`Caller::with_credential("fitness", token)`), which no other
//! backend's tools are given.
//!
//! Building the tools sends nothing, so they can be listed (names, effects, schemas) with no
//! API running; a call goes to `base_url`:
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use toolgate_core::Effect;
//!
//! let tools = toolgate_fitness::tools("http://127.0.0.1:8080", toolgate_fitness::HttpOptions::default())?;
//! let names: Vec<String> = tools.iter().map(|t| t.spec().name.clone()).collect();
//! assert_eq!(names[..2], ["query_body_data", "update_body_data"]);
//! # #[cfg(feature = "charts")]
//! assert_eq!(names.last().map(String::as_str), Some("render_weight_chart"));
//!
//! let query = tools[0].spec();
//! assert_eq!(query.effect, Effect::Read);
//! // one `oneOf` branch per operation, chosen by `op`
//! let ops = query.input_schema["oneOf"].as_array().expect("a oneOf schema");
//! assert!(ops.iter().any(|op| op["properties"]["op"]["const"] == "list_measurements"));
//!
//! // registered with a gateway like any other tools
//! let gateway = toolgate_gateway::Gateway::builder().tools(tools).build()?;
//! # let _ = gateway;
//! # Ok(()) }
//! ```
//!
//! # Cargo features
//!
//! - `charts` (default): the `render_weight_chart` tool, the caller's weight trend as a PNG
//!   (plotters into an RGB buffer, no fonts or system libraries, encoded with png). Without it,
//!   [`tools`] and [`tools_with`] give the six route-table tools and [`with_chart`] adds nothing.
#![deny(missing_docs)]

#[cfg(feature = "charts")]
mod chart;

use std::sync::Arc;

use serde_json::json;
use toolgate_core::{Tool, ToolSpec};
use toolgate_schema::RouteTable;

pub use toolgate_http::{Error, HttpExecutor, HttpOptions};

/// The route tables as shipped: `(tool name, TOML text)`, in the order the tools are listed.
pub const ROUTE_FILES: [(&str, &str); 6] = [
    ("query_body_data", include_str!("../routes/query_body_data.toml")),
    ("update_body_data", include_str!("../routes/update_body_data.toml")),
    ("query_nutrition", include_str!("../routes/query_nutrition.toml")),
    ("update_nutrition", include_str!("../routes/update_nutrition.toml")),
    ("query_training", include_str!("../routes/query_training.toml")),
    ("update_training", include_str!("../routes/update_training.toml")),
];

/// The fitness API's identity: the name its callers' credentials are filed under
/// ([`toolgate_core::Caller::credentials`]), so only the fitness tools ever send them.
pub const BACKEND_ID: &str = "fitness";

/// The three domains, as tools and callers name them (`Caller::with_domains`).
pub const DOMAINS: [&str; 3] = ["body", "nutrition", "training"];

/// The six route tables, parsed and checked.
pub fn tables() -> Result<Vec<RouteTable>, toolgate_schema::Error> {
    ROUTE_FILES.iter().map(|(_, text)| RouteTable::from_toml_str(text)).collect()
}

/// Worked examples shown with each tool's schema: `(tool, description, parameters)`.
fn examples() -> Vec<(&'static str, &'static str, serde_json::Value)> {
    vec![
        (
            "query_body_data",
            "Weight trend of March",
            json!({"op": "list_measurements", "from": "2026-03-01", "to": "2026-03-31"}),
        ),
        ("query_body_data", "One day's measurement", json!({"op": "get_measurement", "date": "2026-03-14"})),
        (
            "update_body_data",
            "Record this morning's weight",
            json!({"op": "put_measurement", "date": "2026-03-14", "weight_kg": 81.4}),
        ),
        (
            "update_body_data",
            "Remove a wrong entry",
            json!({"op": "delete_measurement", "date": "2026-03-13"}),
        ),
        ("query_nutrition", "Calories eaten today", json!({"op": "day_summary", "date": "2026-03-14"})),
        (
            "query_nutrition",
            "The meals of a day (with their meal_id)",
            json!({"op": "list_meals", "date": "2026-03-14"}),
        ),
        (
            "update_nutrition",
            "Log breakfast",
            json!({"op": "log_meal", "date": "2026-03-14", "name": "breakfast", "items": [
                {"name": "oatmeal", "grams": 250, "kcal": 180, "protein_g": 6, "carbs_g": 30, "fat_g": 4}
            ]}),
        ),
        ("update_nutrition", "Delete a meal logged by mistake", json!({"op": "delete_meal", "meal_id": 17})),
        (
            "update_nutrition",
            "Set daily goals of 2200 kcal and 140 g protein",
            json!({"op": "set_goals", "kcal": 2200, "protein_g": 140}),
        ),
        (
            "query_training",
            "This week's workouts",
            json!({"op": "list_workouts", "from": "2026-03-09", "to": "2026-03-15"}),
        ),
        ("query_training", "One workout with its sets", json!({"op": "get_workout", "workout_id": 42})),
        (
            "update_training",
            "Log a leg day with two sets",
            json!({"op": "log_workout", "date": "2026-03-14", "name": "leg day", "duration_min": 50, "sets": [
                {"exercise": "squat", "reps": 5, "weight_kg": 100},
                {"exercise": "lunge", "reps": 12}
            ]}),
        ),
        (
            "update_training",
            "Add a set to workout 42",
            json!({"op": "add_set", "workout_id": 42, "exercise": "squat", "reps": 5, "weight_kg": 105}),
        ),
        (
            "update_training",
            "Correct the duration",
            json!({"op": "update_workout", "workout_id": 42, "duration_min": 55}),
        ),
        (
            "update_training",
            "Delete a workout and its sets",
            json!({"op": "delete_workout", "workout_id": 42}),
        ),
    ]
}

/// The fitness tools (the six route-table tools, then `render_weight_chart` with the `charts`
/// feature), calling the fitness API at `base_url` (e.g. `http://127.0.0.1:8080`) through one
/// shared [`HttpExecutor`]. Nothing is sent until a tool is called; an `Err` means `base_url`
/// or `options` were refused by [`HttpExecutor::new`]. Messages name the backend "the fitness API" unless
/// `options.backend_name` was changed from its default; the callers' credentials are those
/// filed under [`BACKEND_ID`] unless `options.backend_id` names another.
pub fn tools(base_url: &str, mut options: HttpOptions) -> Result<Vec<Arc<dyn Tool>>, Error> {
    if options.backend_name == HttpOptions::default().backend_name {
        options.backend_name = "the fitness API".to_owned();
    }
    if options.backend_id.is_empty() {
        options.backend_id = BACKEND_ID.to_owned();
    }
    let executor = Arc::new(HttpExecutor::new(base_url, options)?);
    tools_with(&executor)
}

/// The fitness tools run by an executor the caller built (to share its
/// connection pool): the six route-table tools, then (with the `charts`
/// feature) `render_weight_chart`, which reads through `query_body_data`.
pub fn tools_with(executor: &Arc<HttpExecutor>) -> Result<Vec<Arc<dyn Tool>>, Error> {
    let mut tools = route_tools(executor)?;
    tools = with_chart(tools);
    Ok(tools)
}

/// `tools` plus `render_weight_chart` when `query_body_data` is among them
/// (the chart reads through it): used for the compiled-in and the declared
/// fitness domain alike. Without the `charts` feature it returns `tools` unchanged.
pub fn with_chart(tools: Vec<Arc<dyn Tool>>) -> Vec<Arc<dyn Tool>> {
    #[cfg(feature = "charts")]
    {
        let mut tools = tools;
        if let Some(query) = tools.iter().find(|t| t.spec().name == "query_body_data").cloned() {
            tools.push(chart::tool(query));
        }
        tools
    }
    #[cfg(not(feature = "charts"))]
    tools
}

fn route_tools(executor: &Arc<HttpExecutor>) -> Result<Vec<Arc<dyn Tool>>, Error> {
    tables()?
        .into_iter()
        .map(|table| Ok(Arc::new(executor.tool(table)?.map_spec(with_examples)) as Arc<dyn Tool>))
        .collect()
}

/// A fitness tool's spec with its worked examples added (the tables carry none, so a domain
/// loaded from the route files gets the same examples as [`tools`]).
pub fn with_examples(mut spec: ToolSpec) -> ToolSpec {
    let name = spec.name.clone();
    for (_, description, params) in examples().into_iter().filter(|(t, _, _)| *t == name) {
        spec = spec.with_example(description, params);
    }
    spec
}
