//! Daily nutrition goals: one set per user (calories, protein, carbs, fat), holding for every
//! day, so a day's summary can show what was eaten against what was aimed at.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::auth::User;
use crate::db::{Db, on_pool};
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::routes::AppState;
use crate::validate::Checker;

/// Largest daily energy goal, kcal.
const MAX_KCAL: f64 = 20_000.0;
/// Largest daily goal for one macronutrient, grams.
const MAX_MACRO_G: f64 = 2_000.0;

/// Body of `PUT /nutrition/goals`: the whole set (an absent goal is no goal for that quantity).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GoalsInput {
    /// Energy per day in kcal, 0 to 20000.
    #[schemars(range(min = 0, max = 20000))]
    pub(crate) kcal: Option<f64>,
    /// Protein per day in grams, 0 to 2000.
    #[schemars(range(min = 0, max = 2000))]
    pub(crate) protein_g: Option<f64>,
    /// Carbohydrates per day in grams, 0 to 2000.
    #[schemars(range(min = 0, max = 2000))]
    pub(crate) carbs_g: Option<f64>,
    /// Fat per day in grams, 0 to 2000.
    #[schemars(range(min = 0, max = 2000))]
    pub(crate) fat_g: Option<f64>,
}

/// The user's goals as stored; `None` is no goal for that quantity.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, PartialEq)]
pub(crate) struct Goals {
    pub(crate) kcal: Option<f64>,
    pub(crate) protein_g: Option<f64>,
    pub(crate) carbs_g: Option<f64>,
    pub(crate) fat_g: Option<f64>,
}

impl GoalsInput {
    fn check(self) -> Result<Goals, ApiError> {
        let mut c = Checker::new();
        c.opt_number("kcal", self.kcal, 0.0, MAX_KCAL);
        c.opt_number("protein_g", self.protein_g, 0.0, MAX_MACRO_G);
        c.opt_number("carbs_g", self.carbs_g, 0.0, MAX_MACRO_G);
        c.opt_number("fat_g", self.fat_g, 0.0, MAX_MACRO_G);
        if [self.kcal, self.protein_g, self.carbs_g, self.fat_g].iter().all(Option::is_none) {
            c.fail("body", "give at least one of kcal, protein_g, carbs_g, fat_g");
        }
        c.finish()?;
        Ok(Goals { kcal: self.kcal, protein_g: self.protein_g, carbs_g: self.carbs_g, fat_g: self.fat_g })
    }
}

/// The user's goals, `None` when they never set any.
pub(crate) async fn get_goals(db: &Db, user: &str) -> Result<Option<Goals>, sqlx::Error> {
    const SQL: &str = "SELECT kcal, protein_g, carbs_g, fat_g FROM fit_nutrition_goals WHERE user_id = $1";
    on_pool!(db, |pool| sqlx::query_as::<_, Goals>(SQL).bind(user).fetch_optional(pool).await)
}

/// Inserts or replaces the user's goals; answers whether a set existed before. The read is
/// only for the status code (as for body measurements); the upsert is one atomic statement,
/// so two concurrent writes never fail on the primary key.
async fn upsert_goals(db: &Db, user: &str, g: &Goals) -> Result<bool, sqlx::Error> {
    const SQL: &str = "INSERT INTO fit_nutrition_goals (user_id, kcal, protein_g, carbs_g, fat_g) \
         VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (user_id) DO UPDATE SET kcal = excluded.kcal, protein_g = excluded.protein_g, \
         carbs_g = excluded.carbs_g, fat_g = excluded.fat_g";
    let existed = get_goals(db, user).await?.is_some();
    on_pool!(db, |pool| sqlx::query(SQL)
        .bind(user)
        .bind(g.kcal)
        .bind(g.protein_g)
        .bind(g.carbs_g)
        .bind(g.fat_g)
        .execute(pool)
        .await
        .map(|_| ()))?;
    Ok(existed)
}

/// `PUT /nutrition/goals`: create or replace the daily goals; 201 when created, 200 when
/// replaced, with the goals as stored.
pub(crate) async fn put(
    State(state): State<AppState>,
    user: User,
    ApiJson(input): ApiJson<GoalsInput>,
) -> Result<Response, ApiError> {
    let goals = input.check()?;
    let existed = upsert_goals(&state.db, &user.id, &goals).await?;
    let status = if existed { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, axum::Json(goals)).into_response())
}
