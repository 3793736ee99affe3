//! Body subdomain: one measurement (weight, body fat, waist, note) per user and day.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::auth::User;
use crate::db::{Db, on_pool};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath, ApiQuery};
use crate::routes::{AppState, LIST_LIMIT, RangeQuery, range_bounds};
use crate::validate::{Checker, path_date};

/// Body of `PUT /body/measurements/{date}`: the whole record for that day (absent = empty).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MeasurementInput {
    /// Body weight in kilograms, 1 to 700.
    #[schemars(range(min = 1, max = 700))]
    pub(crate) weight_kg: Option<f64>,
    /// Body fat in percent, 0 to 100.
    #[schemars(range(min = 0, max = 100))]
    pub(crate) body_fat_pct: Option<f64>,
    /// Waist circumference in centimetres, 10 to 300.
    #[schemars(range(min = 10, max = 300))]
    pub(crate) waist_cm: Option<f64>,
    /// Free text, at most 2000 characters.
    #[schemars(length(max = 2000))]
    pub(crate) note: Option<String>,
}

/// One day's measurement as stored.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, PartialEq)]
pub(crate) struct Measurement {
    pub(crate) date: NaiveDate,
    pub(crate) weight_kg: Option<f64>,
    pub(crate) body_fat_pct: Option<f64>,
    pub(crate) waist_cm: Option<f64>,
    pub(crate) note: Option<String>,
}

impl MeasurementInput {
    fn check(self, date: NaiveDate) -> Result<Measurement, ApiError> {
        let mut c = Checker::new();
        c.opt_number("weight_kg", self.weight_kg, 1.0, 700.0);
        c.opt_number("body_fat_pct", self.body_fat_pct, 0.0, 100.0);
        c.opt_number("waist_cm", self.waist_cm, 10.0, 300.0);
        c.note("note", self.note.as_deref());
        let note = self.note.map(|n| n.trim().to_owned()).filter(|n| !n.is_empty());
        if self.weight_kg.is_none()
            && self.body_fat_pct.is_none()
            && self.waist_cm.is_none()
            && note.is_none()
        {
            c.fail("body", "give at least one of weight_kg, body_fat_pct, waist_cm, note");
        }
        c.finish()?;
        Ok(Measurement {
            date,
            weight_kg: self.weight_kg,
            body_fat_pct: self.body_fat_pct,
            waist_cm: self.waist_cm,
            note,
        })
    }
}

pub(crate) async fn list_rows(
    db: &Db,
    user: &str,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<Vec<Measurement>, sqlx::Error> {
    const SQL: &str = "SELECT date, weight_kg, body_fat_pct, waist_cm, note FROM fit_body_measurements \
         WHERE user_id = $1 AND date >= $2 AND date <= $3 ORDER BY date LIMIT $4";
    on_pool!(db, |pool| {
        sqlx::query_as::<_, Measurement>(SQL)
            .bind(user)
            .bind(from)
            .bind(to)
            .bind(LIST_LIMIT + 1)
            .fetch_all(pool)
            .await
    })
}

pub(crate) async fn get_row(
    db: &Db,
    user: &str,
    date: NaiveDate,
) -> Result<Option<Measurement>, sqlx::Error> {
    const SQL: &str = "SELECT date, weight_kg, body_fat_pct, waist_cm, note FROM fit_body_measurements \
         WHERE user_id = $1 AND date = $2";
    on_pool!(db, |pool| sqlx::query_as::<_, Measurement>(SQL)
        .bind(user)
        .bind(date)
        .fetch_optional(pool)
        .await)
}

/// Inserts or replaces the day's record; returns it as stored.
pub(crate) async fn upsert_row(db: &Db, user: &str, m: &Measurement) -> Result<Measurement, sqlx::Error> {
    const SQL: &str = "INSERT INTO fit_body_measurements (user_id, date, weight_kg, body_fat_pct, waist_cm, note) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (user_id, date) DO UPDATE SET weight_kg = excluded.weight_kg, \
         body_fat_pct = excluded.body_fat_pct, waist_cm = excluded.waist_cm, note = excluded.note \
         RETURNING date, weight_kg, body_fat_pct, waist_cm, note";
    on_pool!(db, |pool| {
        sqlx::query_as::<_, Measurement>(SQL)
            .bind(user)
            .bind(m.date)
            .bind(m.weight_kg)
            .bind(m.body_fat_pct)
            .bind(m.waist_cm)
            .bind(m.note.as_deref())
            .fetch_one(pool)
            .await
    })
}

async fn delete_row(db: &Db, user: &str, date: NaiveDate) -> Result<bool, sqlx::Error> {
    const SQL: &str = "DELETE FROM fit_body_measurements WHERE user_id = $1 AND date = $2";
    let n = on_pool!(db, |pool| sqlx::query(SQL).bind(user).bind(date).execute(pool).await?.rows_affected());
    Ok(n > 0)
}

/// `GET /body/measurements?from=&to=`
pub(crate) async fn list(
    State(state): State<AppState>,
    user: User,
    ApiQuery(q): ApiQuery<RangeQuery>,
) -> Result<Response, ApiError> {
    let (from, to) = range_bounds(&q)?;
    let mut rows = list_rows(&state.db, &user.id, from, to).await?;
    let truncated = rows.len() > LIST_LIMIT as usize;
    rows.truncate(LIST_LIMIT as usize);
    Ok(axum::Json(json!({ "measurements": rows, "truncated": truncated })).into_response())
}

/// `GET /body/measurements/{date}`
pub(crate) async fn get(
    State(state): State<AppState>,
    user: User,
    ApiPath(date): ApiPath<String>,
) -> Result<Response, ApiError> {
    let date = path_date("date", &date)?;
    match get_row(&state.db, &user.id, date).await? {
        Some(m) => Ok(axum::Json(m).into_response()),
        None => Err(ApiError::not_found(format!("no body measurement on {date}"))),
    }
}

/// `PUT /body/measurements/{date}`: create or replace; 201 when created, 200 when replaced.
pub(crate) async fn put(
    State(state): State<AppState>,
    user: User,
    ApiPath(date): ApiPath<String>,
    ApiJson(input): ApiJson<MeasurementInput>,
) -> Result<Response, ApiError> {
    let date = path_date("date", &date)?;
    let m = input.check(date)?;
    let existed = get_row(&state.db, &user.id, date).await?.is_some();
    let stored = upsert_row(&state.db, &user.id, &m).await?;
    let status = if existed { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, axum::Json(stored)).into_response())
}

/// `DELETE /body/measurements/{date}`
pub(crate) async fn delete(
    State(state): State<AppState>,
    user: User,
    ApiPath(date): ApiPath<String>,
) -> Result<Response, ApiError> {
    let date = path_date("date", &date)?;
    if delete_row(&state.db, &user.id, date).await? {
        Ok(axum::Json(json!({ "deleted": { "date": date } })).into_response())
    } else {
        Err(ApiError::not_found(format!("no body measurement on {date}")))
    }
}
