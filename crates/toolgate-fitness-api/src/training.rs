//! Training subdomain: workouts (date, name, duration, notes) and their sets
//! (exercise, reps, weight), numbered in the order they were logged.

use std::collections::BTreeMap;

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
use crate::validate::{Checker, path_id};

/// Most sets one workout may hold.
const MAX_SETS: usize = 200;

/// Body of `POST /training/workouts`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkoutInput {
    /// Day of the workout, YYYY-MM-DD.
    #[schemars(extend("format" = "date"))]
    pub(crate) date: String,
    /// Workout name, unique per day, e.g. "leg day" (1 to 200 characters).
    #[schemars(length(min = 1, max = 200))]
    pub(crate) name: String,
    /// Duration in minutes, 0 to 1440.
    #[schemars(range(min = 0, max = 1440))]
    pub(crate) duration_min: Option<i64>,
    /// Free text, at most 2000 characters.
    #[schemars(length(max = 2000))]
    pub(crate) notes: Option<String>,
    /// Sets done, in order (at most 200); more can be added later.
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub(crate) sets: Vec<SetInput>,
}

/// Body of `PATCH /training/workouts/{workout_id}`: only the fields given change
/// (`notes: ""` clears the notes).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkoutPatch {
    /// New day, YYYY-MM-DD.
    #[schemars(extend("format" = "date"))]
    pub(crate) date: Option<String>,
    /// New name (1 to 200 characters).
    #[schemars(length(min = 1, max = 200))]
    pub(crate) name: Option<String>,
    /// New duration in minutes, 0 to 1440.
    #[schemars(range(min = 0, max = 1440))]
    pub(crate) duration_min: Option<i64>,
    /// New notes; an empty string clears them.
    #[schemars(length(max = 2000))]
    pub(crate) notes: Option<String>,
}

/// One set: body of `POST /training/workouts/{workout_id}/sets`, and an element of
/// `sets` in `POST /training/workouts`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetInput {
    /// Exercise name, e.g. "squat" (1 to 200 characters).
    #[schemars(length(min = 1, max = 200))]
    pub(crate) exercise: String,
    /// Repetitions, 0 to 1000.
    #[schemars(range(min = 0, max = 1000))]
    pub(crate) reps: i64,
    /// Load in kilograms, 0 to 1000 (absent for bodyweight).
    #[schemars(range(min = 0, max = 1000))]
    pub(crate) weight_kg: Option<f64>,
}

/// A checked workout, ready to store.
#[derive(Debug, Clone)]
pub(crate) struct NewWorkout {
    pub(crate) date: NaiveDate,
    pub(crate) name: String,
    pub(crate) duration_min: Option<i32>,
    pub(crate) notes: Option<String>,
    pub(crate) sets: Vec<NewSet>,
}

#[derive(Debug, Clone)]
pub(crate) struct NewSet {
    pub(crate) exercise: String,
    pub(crate) reps: i32,
    pub(crate) weight_kg: Option<f64>,
}

fn clean_notes(notes: Option<String>) -> Option<String> {
    notes.map(|n| n.trim().to_owned()).filter(|n| !n.is_empty())
}

/// Values were range-checked before; this only converts.
fn small_int(value: i64) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}

impl SetInput {
    fn check(self, c: &mut Checker, prefix: &str) -> NewSet {
        let exercise = c.name(&format!("{prefix}exercise"), &self.exercise);
        c.integer(&format!("{prefix}reps"), self.reps, 0, 1000);
        c.opt_number(&format!("{prefix}weight_kg"), self.weight_kg, 0.0, 1000.0);
        NewSet { exercise, reps: small_int(self.reps), weight_kg: self.weight_kg }
    }
}

impl WorkoutInput {
    fn check(self) -> Result<NewWorkout, ApiError> {
        let mut c = Checker::new();
        let date = c.date("date", &self.date);
        let name = c.name("name", &self.name);
        if let Some(d) = self.duration_min {
            c.integer("duration_min", d, 0, 1440);
        }
        c.note("notes", self.notes.as_deref());
        if self.sets.len() > MAX_SETS {
            c.fail("sets", format!("at most {MAX_SETS} sets, got {}", self.sets.len()));
        }
        let sets: Vec<NewSet> =
            self.sets.into_iter().enumerate().map(|(i, s)| s.check(&mut c, &format!("sets[{i}]."))).collect();
        c.finish()?;
        let Some(date) = date else { return Err(ApiError::internal(&"date checked but missing")) };
        Ok(NewWorkout {
            date,
            name,
            duration_min: self.duration_min.map(small_int),
            notes: clean_notes(self.notes),
            sets,
        })
    }
}

/// A checked patch: `None` leaves the column as it is.
#[derive(Debug)]
struct Patch {
    date: Option<NaiveDate>,
    name: Option<String>,
    duration_min: Option<i32>,
    notes: Option<String>,
}

impl WorkoutPatch {
    fn check(self) -> Result<Patch, ApiError> {
        let mut c = Checker::new();
        let date = self.date.as_deref().and_then(|d| c.date("date", d));
        let name = self.name.as_deref().map(|n| c.name("name", n));
        if let Some(d) = self.duration_min {
            c.integer("duration_min", d, 0, 1440);
        }
        c.note("notes", self.notes.as_deref());
        if self.date.is_none() && self.name.is_none() && self.duration_min.is_none() && self.notes.is_none() {
            c.fail("body", "give at least one of date, name, duration_min, notes");
        }
        c.finish()?;
        Ok(Patch {
            date,
            name,
            duration_min: self.duration_min.map(small_int),
            notes: self.notes.map(|n| n.trim().to_owned()),
        })
    }
}

#[derive(Debug, sqlx::FromRow)]
struct WorkoutRow {
    workout_id: i64,
    date: NaiveDate,
    name: String,
    duration_min: Option<i32>,
    notes: Option<String>,
}

/// One set as stored.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub(crate) struct Set {
    #[serde(skip)]
    workout_id: i64,
    set_id: i64,
    set_no: i32,
    exercise: String,
    reps: i32,
    weight_kg: Option<f64>,
}

/// A workout as answered, with its sets in order.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Workout {
    workout_id: i64,
    date: NaiveDate,
    name: String,
    duration_min: Option<i32>,
    notes: Option<String>,
    sets: Vec<Set>,
}

fn assemble(rows: Vec<WorkoutRow>, sets: Vec<Set>) -> Vec<Workout> {
    let mut by_workout: BTreeMap<i64, Vec<Set>> = BTreeMap::new();
    for s in sets {
        by_workout.entry(s.workout_id).or_default().push(s);
    }
    rows.into_iter()
        .map(|w| Workout {
            sets: by_workout.remove(&w.workout_id).unwrap_or_default(),
            workout_id: w.workout_id,
            date: w.date,
            name: w.name,
            duration_min: w.duration_min,
            notes: w.notes,
        })
        .collect()
}

async fn list_rows(db: &Db, user: &str, from: NaiveDate, to: NaiveDate) -> Result<Vec<Workout>, sqlx::Error> {
    const ROWS: &str = "SELECT workout_id, date, name, duration_min, notes FROM fit_workouts \
         WHERE user_id = $1 AND date >= $2 AND date <= $3 ORDER BY date, workout_id LIMIT $4";
    const SETS: &str = "SELECT s.workout_id, s.set_id, s.set_no, s.exercise, s.reps, s.weight_kg \
         FROM fit_sets s JOIN fit_workouts w ON w.workout_id = s.workout_id \
         WHERE w.user_id = $1 AND w.date >= $2 AND w.date <= $3 ORDER BY s.workout_id, s.set_no";
    let (rows, sets) = on_pool!(db, |pool| {
        let rows = sqlx::query_as::<_, WorkoutRow>(ROWS)
            .bind(user)
            .bind(from)
            .bind(to)
            .bind(LIST_LIMIT + 1)
            .fetch_all(pool)
            .await?;
        let sets = sqlx::query_as::<_, Set>(SETS).bind(user).bind(from).bind(to).fetch_all(pool).await?;
        (rows, sets)
    });
    Ok(assemble(rows, sets))
}

pub(crate) async fn one(db: &Db, user: &str, workout_id: i64) -> Result<Option<Workout>, sqlx::Error> {
    const ROW: &str = "SELECT workout_id, date, name, duration_min, notes FROM fit_workouts WHERE user_id = $1 AND workout_id = $2";
    const SETS: &str = "SELECT workout_id, set_id, set_no, exercise, reps, weight_kg FROM fit_sets \
         WHERE workout_id = $1 ORDER BY set_no";
    let (row, sets) = on_pool!(db, |pool| {
        let row =
            sqlx::query_as::<_, WorkoutRow>(ROW).bind(user).bind(workout_id).fetch_optional(pool).await?;
        let sets = match row {
            Some(_) => sqlx::query_as::<_, Set>(SETS).bind(workout_id).fetch_all(pool).await?,
            None => Vec::new(),
        };
        (row, sets)
    });
    Ok(row.and_then(|r| assemble(vec![r], sets).pop()))
}

/// Inserts the workout and its sets in one transaction; returns the new id.
/// The same name on the same day is a unique violation (the caller answers 409).
pub(crate) async fn insert(db: &Db, user: &str, w: &NewWorkout) -> Result<i64, sqlx::Error> {
    const ROW: &str = "INSERT INTO fit_workouts (workout_id, user_id, date, name, duration_min, notes) \
         VALUES ($6, $1, $2, $3, $4, $5) ON CONFLICT (workout_id) DO NOTHING RETURNING workout_id";
    const SET: &str = "INSERT INTO fit_sets (set_id, workout_id, set_no, exercise, reps, weight_kg) \
         VALUES ($6, $1, $2, $3, $4, $5)";
    on_pool!(db, |pool| {
        let mut tx = pool.begin().await?;
        let mut id = None;
        for _ in 0..crate::ids::ATTEMPTS {
            id = sqlx::query_scalar(ROW)
                .bind(user)
                .bind(w.date)
                .bind(&w.name)
                .bind(w.duration_min)
                .bind(w.notes.as_deref())
                .bind(crate::ids::time_ordered())
                .fetch_optional(&mut *tx)
                .await?;
            if id.is_some() {
                break;
            }
        }
        let Some(id): Option<i64> = id else {
            return Err(sqlx::Error::Protocol("no free workout id".into()));
        };
        for (set_no, s) in (1_i32..).zip(&w.sets) {
            sqlx::query(SET)
                .bind(id)
                .bind(set_no)
                .bind(&s.exercise)
                .bind(s.reps)
                .bind(s.weight_kg)
                .bind(crate::ids::random())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(id)
    })
}

async fn id_by_name(db: &Db, user: &str, date: NaiveDate, name: &str) -> Result<Option<i64>, sqlx::Error> {
    const SQL: &str = "SELECT workout_id FROM fit_workouts WHERE user_id = $1 AND date = $2 AND name = $3";
    on_pool!(db, |pool| sqlx::query_scalar(SQL).bind(user).bind(date).bind(name).fetch_optional(pool).await)
}

fn not_found(workout_id: i64) -> ApiError {
    ApiError::not_found(format!("no workout {workout_id}"))
}

/// `GET /training/workouts?from=&to=`
pub(crate) async fn list(
    State(state): State<AppState>,
    user: User,
    ApiQuery(q): ApiQuery<RangeQuery>,
) -> Result<Response, ApiError> {
    let (from, to) = range_bounds(&q)?;
    let mut workouts = list_rows(&state.db, &user.id, from, to).await?;
    let truncated = workouts.len() > LIST_LIMIT as usize;
    workouts.truncate(LIST_LIMIT as usize);
    Ok(axum::Json(json!({ "workouts": workouts, "truncated": truncated })).into_response())
}

/// `GET /training/workouts/{workout_id}`
pub(crate) async fn get(
    State(state): State<AppState>,
    user: User,
    ApiPath(id): ApiPath<String>,
) -> Result<Response, ApiError> {
    let id = path_id("workout_id", &id)?;
    match one(&state.db, &user.id, id).await? {
        Some(w) => Ok(axum::Json(w).into_response()),
        None => Err(not_found(id)),
    }
}

/// `POST /training/workouts`: 201 with the workout; 409 when that day already has a
/// workout of that name.
pub(crate) async fn create(
    State(state): State<AppState>,
    user: User,
    ApiJson(input): ApiJson<WorkoutInput>,
) -> Result<Response, ApiError> {
    let w = input.check()?;
    let id = match insert(&state.db, &user.id, &w).await {
        Ok(id) => id,
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            return Err(conflict(&state.db, &user.id, w.date, &w.name).await);
        }
        Err(e) => return Err(e.into()),
    };
    match one(&state.db, &user.id, id).await? {
        Some(w) => Ok((StatusCode::CREATED, axum::Json(w)).into_response()),
        None => Err(ApiError::internal(&"workout vanished right after insert")),
    }
}

async fn conflict(db: &Db, user: &str, date: NaiveDate, name: &str) -> ApiError {
    let id = match id_by_name(db, user, date, name).await {
        Ok(Some(id)) => format!(" (workout_id {id})"),
        Ok(None) => String::new(),
        Err(e) => return e.into(),
    };
    ApiError::conflict(format!(
        "a workout named {name:?} already exists on {date}{id}; add sets to it or pick another name"
    ))
}

/// `PATCH /training/workouts/{workout_id}`: changes the given fields, answers the workout.
pub(crate) async fn patch(
    State(state): State<AppState>,
    user: User,
    ApiPath(id): ApiPath<String>,
    ApiJson(input): ApiJson<WorkoutPatch>,
) -> Result<Response, ApiError> {
    let id = path_id("workout_id", &id)?;
    let p = input.check()?;
    const SQL: &str = "UPDATE fit_workouts SET date = COALESCE($3, date), name = COALESCE($4, name), \
         duration_min = COALESCE($5, duration_min), notes = NULLIF(COALESCE($6, notes), '') \
         WHERE user_id = $1 AND workout_id = $2";
    let result = on_pool!(state.db, |pool| {
        sqlx::query(SQL)
            .bind(&user.id)
            .bind(id)
            .bind(p.date)
            .bind(p.name.as_deref())
            .bind(p.duration_min)
            .bind(p.notes.as_deref())
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
    });
    match result {
        Ok(0) => return Err(not_found(id)),
        Ok(_) => {}
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            // Only date and name are unique together; report the workout that holds them.
            let current = one(&state.db, &user.id, id).await?.ok_or_else(|| not_found(id))?;
            let date = p.date.unwrap_or(current.date);
            let name = p.name.unwrap_or(current.name);
            return Err(conflict(&state.db, &user.id, date, &name).await);
        }
        Err(e) => return Err(e.into()),
    }
    match one(&state.db, &user.id, id).await? {
        Some(w) => Ok(axum::Json(w).into_response()),
        None => Err(not_found(id)),
    }
}

/// `DELETE /training/workouts/{workout_id}` (its sets go with it).
pub(crate) async fn delete(
    State(state): State<AppState>,
    user: User,
    ApiPath(id): ApiPath<String>,
) -> Result<Response, ApiError> {
    let id = path_id("workout_id", &id)?;
    const SQL: &str = "DELETE FROM fit_workouts WHERE user_id = $1 AND workout_id = $2";
    let n = on_pool!(state.db, |pool| sqlx::query(SQL)
        .bind(&user.id)
        .bind(id)
        .execute(pool)
        .await?
        .rows_affected());
    if n > 0 {
        Ok(axum::Json(json!({ "deleted": { "workout_id": id } })).into_response())
    } else {
        Err(not_found(id))
    }
}

/// Appends one set to the user's workout; `None` when there is no such workout of theirs.
pub(crate) async fn insert_set(
    db: &Db,
    user: &str,
    workout_id: i64,
    s: &NewSet,
) -> Result<Option<Set>, sqlx::Error> {
    // set_no is computed in the same statement; two concurrent appends to one workout can
    // collide on (workout_id, set_no), which the caller answers as 409 (retry).
    const SQL: &str = "INSERT INTO fit_sets (set_id, workout_id, set_no, exercise, reps, weight_kg) \
         SELECT $6, w.workout_id, \
                COALESCE((SELECT MAX(s.set_no) FROM fit_sets s WHERE s.workout_id = w.workout_id), 0) + 1, \
                $3, $4, $5 \
         FROM fit_workouts w WHERE w.workout_id = $1 AND w.user_id = $2 \
         RETURNING workout_id, set_id, set_no, exercise, reps, weight_kg";
    on_pool!(db, |pool| {
        sqlx::query_as::<_, Set>(SQL)
            .bind(workout_id)
            .bind(user)
            .bind(&s.exercise)
            .bind(s.reps)
            .bind(s.weight_kg)
            .bind(crate::ids::random())
            .fetch_optional(pool)
            .await
    })
}

async fn set_count(db: &Db, workout_id: i64) -> Result<i64, sqlx::Error> {
    const SQL: &str = "SELECT COUNT(*) FROM fit_sets WHERE workout_id = $1";
    on_pool!(db, |pool| sqlx::query_scalar(SQL).bind(workout_id).fetch_one(pool).await)
}

/// `POST /training/workouts/{workout_id}/sets`: 201 with the new set (numbered after the
/// last one).
pub(crate) async fn add_set(
    State(state): State<AppState>,
    user: User,
    ApiPath(id): ApiPath<String>,
    ApiJson(input): ApiJson<SetInput>,
) -> Result<Response, ApiError> {
    let id = path_id("workout_id", &id)?;
    let mut c = Checker::new();
    let set = input.check(&mut c, "");
    c.finish()?;
    if set_count(&state.db, id).await? >= MAX_SETS as i64 {
        // Counted before the ownership check on purpose: it reveals nothing, the insert
        // below still answers 404 for a workout that is not the caller's.
        if one(&state.db, &user.id, id).await?.is_some() {
            return Err(ApiError::conflict(format!(
                "workout {id} already has {MAX_SETS} sets, the most allowed"
            )));
        }
        return Err(not_found(id));
    }
    match insert_set(&state.db, &user.id, id, &set).await? {
        Some(s) => {
            Ok((StatusCode::CREATED, axum::Json(json!({ "workout_id": id, "set": s }))).into_response())
        }
        None => Err(not_found(id)),
    }
}
