//! The route table: the one list the router is built from, and that `routes()` /
//! `route_specs()` publish (method, path template, query and body schemas).

use axum::Router;
use axum::handler::Handler;
use axum::http::{Method, Uri};
use axum::response::IntoResponse;
use axum::routing::{MethodFilter, MethodRouter, on};
use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::db::Db;
use crate::error::ApiError;
use crate::validate::date_range;
use crate::{body, goals, nutrition, training};

/// Most rows a list answers; beyond that it says `"truncated": true`.
pub(crate) const LIST_LIMIT: i64 = 1000;

/// What every handler shares.
#[derive(Debug, Clone)]
pub(crate) struct AppState {
    pub(crate) db: Db,
}

/// Query of the list routes: an inclusive date range, either end open.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RangeQuery {
    /// First day, inclusive, YYYY-MM-DD.
    #[schemars(extend("format" = "date"))]
    pub(crate) from: Option<String>,
    /// Last day, inclusive, YYYY-MM-DD.
    #[schemars(extend("format" = "date"))]
    pub(crate) to: Option<String>,
}

/// The range to query, open ends replaced by the first and last representable days.
pub(crate) fn range_bounds(q: &RangeQuery) -> Result<(NaiveDate, NaiveDate), ApiError> {
    let (from, to) = date_range(q.from.as_deref(), q.to.as_deref())?;
    let first = NaiveDate::from_ymd_opt(1, 1, 1).unwrap_or(NaiveDate::MIN);
    let last = NaiveDate::from_ymd_opt(9999, 12, 31).unwrap_or(NaiveDate::MAX);
    Ok((from.unwrap_or(first), to.unwrap_or(last)))
}

/// One route of the API as published: what a client (or a route table) needs to call it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RouteSpec {
    /// HTTP method.
    pub method: Method,
    /// Path template exactly as registered, variables in braces: `/body/measurements/{date}`.
    pub path: &'static str,
    /// One line on what the route does.
    pub summary: &'static str,
    /// The operation's name (`operationId` in `/openapi.json`, `op` in the route tables).
    pub operation_id: &'static str,
    /// The domain it belongs to (`body`, `nutrition`, `training`; the OpenAPI tag).
    pub tag: &'static str,
    /// JSON Schema (2020-12) of the query string, for routes that take one.
    pub query: Option<Value>,
    /// JSON Schema (2020-12) of the JSON body, for routes that take one.
    pub body: Option<Value>,
}

struct Entry {
    spec: RouteSpec,
    handler: MethodRouter<AppState>,
}

impl Entry {
    fn new<H, T>(
        (operation_id, tag): (&'static str, &'static str),
        method: Method,
        path: &'static str,
        summary: &'static str,
        handler: H,
    ) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        let filter = MethodFilter::try_from(method.clone()).unwrap_or(MethodFilter::GET);
        Entry {
            spec: RouteSpec { method, path, summary, operation_id, tag, query: None, body: None },
            handler: on(filter, handler),
        }
    }

    fn query<Q: JsonSchema>(mut self) -> Self {
        self.spec.query = Some(published_schema(schemars::schema_for!(Q).to_value()));
        self
    }

    fn body<B: JsonSchema>(mut self) -> Self {
        self.spec.body = Some(published_schema(schemars::schema_for!(B).to_value()));
        self
    }
}

/// Drops the numeric `format`s schemars adds from Rust types (`double`, `int64`, ...): they
/// say how the server stores a number, not what a client may send. `date` stays.
fn published_schema(mut schema: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(map) => {
                let numeric = map.get("format").and_then(Value::as_str).is_some_and(|f| {
                    matches!(f, "double" | "float") || f.starts_with("int") || f.starts_with("uint")
                });
                if numeric {
                    map.remove("format");
                }
                map.values_mut().for_each(walk);
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut schema);
    schema
}

/// The single source of the API's routes.
fn table() -> Vec<Entry> {
    use Method as M;
    vec![
        Entry::new(
            ("list_measurements", "body"),
            M::GET,
            "/body/measurements",
            "List body measurements in a date range",
            body::list,
        )
        .query::<RangeQuery>(),
        Entry::new(
            ("get_measurement", "body"),
            M::GET,
            "/body/measurements/{date}",
            "Get the body measurement of one day",
            body::get,
        ),
        Entry::new(
            ("put_measurement", "body"),
            M::PUT,
            "/body/measurements/{date}",
            "Create or replace the body measurement of one day",
            body::put,
        )
        .body::<body::MeasurementInput>(),
        Entry::new(
            ("delete_measurement", "body"),
            M::DELETE,
            "/body/measurements/{date}",
            "Delete the body measurement of one day",
            body::delete,
        ),
        Entry::new(
            ("list_meals", "nutrition"),
            M::GET,
            "/nutrition/days/{date}/meals",
            "List the meals of one day",
            nutrition::list_meals,
        ),
        Entry::new(
            ("log_meal", "nutrition"),
            M::POST,
            "/nutrition/days/{date}/meals",
            "Log a meal with its items",
            nutrition::create_meal,
        )
        .body::<nutrition::MealInput>(),
        Entry::new(
            ("day_summary", "nutrition"),
            M::GET,
            "/nutrition/days/{date}/summary",
            "Totals of one day beside the daily goals",
            nutrition::summary,
        ),
        Entry::new(
            ("set_goals", "nutrition"),
            M::PUT,
            "/nutrition/goals",
            "Set the daily nutrition goals (kcal, protein, carbs, fat)",
            goals::put,
        )
        .body::<goals::GoalsInput>(),
        Entry::new(
            ("delete_meal", "nutrition"),
            M::DELETE,
            "/nutrition/meals/{meal_id}",
            "Delete a meal and its items",
            nutrition::delete_meal,
        ),
        Entry::new(
            ("list_workouts", "training"),
            M::GET,
            "/training/workouts",
            "List workouts in a date range",
            training::list,
        )
        .query::<RangeQuery>(),
        Entry::new(
            ("get_workout", "training"),
            M::GET,
            "/training/workouts/{workout_id}",
            "Get one workout with its sets",
            training::get,
        ),
        Entry::new(
            ("log_workout", "training"),
            M::POST,
            "/training/workouts",
            "Log a workout, optionally with its sets",
            training::create,
        )
        .body::<training::WorkoutInput>(),
        Entry::new(
            ("update_workout", "training"),
            M::PATCH,
            "/training/workouts/{workout_id}",
            "Change a workout's date, name, duration or notes",
            training::patch,
        )
        .body::<training::WorkoutPatch>(),
        Entry::new(
            ("delete_workout", "training"),
            M::DELETE,
            "/training/workouts/{workout_id}",
            "Delete a workout and its sets",
            training::delete,
        ),
        Entry::new(
            ("add_set", "training"),
            M::POST,
            "/training/workouts/{workout_id}/sets",
            "Append a set to a workout",
            training::add_set,
        )
        .body::<training::SetInput>(),
    ]
}

/// Every route as (method, path template), in table order.
pub fn routes() -> Vec<(Method, &'static str)> {
    table().into_iter().map(|e| (e.spec.method, e.spec.path)).collect()
}

/// Every route with its summary and the JSON Schemas of its query and body.
pub fn route_specs() -> Vec<RouteSpec> {
    table().into_iter().map(|e| e.spec).collect()
}

/// The API as an axum router over `db`. Every route needs `Authorization: Bearer <token>`,
/// except `GET /openapi.json` (the OpenAPI 3.1 description of the routes, see [`crate::openapi`]).
pub fn router(db: Db) -> Router {
    let document = crate::openapi::openapi();
    let mut router =
        Router::new().route("/openapi.json", axum::routing::get(move || async move { axum::Json(document) }));
    for entry in table() {
        router = router.route(entry.spec.path, entry.handler);
    }
    router
        .fallback(|method: Method, uri: Uri| async move { not_routed(&method, &uri, false) })
        .method_not_allowed_fallback(
            |method: Method, uri: Uri| async move { not_routed(&method, &uri, true) },
        )
        .with_state(AppState { db })
}

fn not_routed(method: &Method, uri: &Uri, known_path: bool) -> axum::response::Response {
    let path: String = uri.path().chars().take(200).collect();
    if known_path {
        ApiError::method_not_allowed(method.as_str(), &path).into_response()
    } else {
        ApiError::route_not_found(method.as_str(), &path).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_unique_per_method_and_variables_are_braced() {
        let all = routes();
        for (i, (m, p)) in all.iter().enumerate() {
            assert!(all[i + 1..].iter().all(|(m2, p2)| !(m == m2 && p == p2)), "{m} {p} twice");
            assert!(p.starts_with('/') && !p.contains(':') && !p.ends_with('/'), "{p}");
        }
        assert_eq!(all.len(), 15);
    }

    #[test]
    fn bodies_only_on_writes_and_queries_only_on_reads() {
        for spec in route_specs() {
            if spec.body.is_some() {
                assert!([Method::POST, Method::PUT, Method::PATCH].contains(&spec.method), "{}", spec.path);
            }
            if spec.query.is_some() {
                assert_eq!(spec.method, Method::GET, "{}", spec.path);
            }
            for schema in spec.body.iter().chain(&spec.query) {
                assert_eq!(schema["type"], "object", "{}", spec.path);
                assert_eq!(schema["additionalProperties"], false, "{}", spec.path);
            }
        }
    }
}
