//! Nutrition subdomain: meals of a day, each with food items (grams, kcal, macros), and the
//! day's totals.

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
use crate::extract::{ApiJson, ApiPath};
use crate::routes::AppState;
use crate::validate::{Checker, path_date, path_id};

/// Most items one meal may hold.
const MAX_ITEMS: usize = 50;

/// Body of `POST /nutrition/days/{date}/meals`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MealInput {
    /// Meal name, unique per day, e.g. "breakfast" (1 to 200 characters).
    #[schemars(length(min = 1, max = 200))]
    pub(crate) name: String,
    /// The foods eaten, 1 to 50 items.
    #[schemars(length(min = 1, max = 50))]
    pub(crate) items: Vec<ItemInput>,
}

/// One food item of a meal.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ItemInput {
    /// Food name, e.g. "oatmeal" (1 to 200 characters).
    #[schemars(length(min = 1, max = 200))]
    pub(crate) name: String,
    /// Amount in grams, 0 to 5000.
    #[schemars(range(min = 0, max = 5000))]
    pub(crate) grams: f64,
    /// Energy in kcal, 0 to 10000.
    #[schemars(range(min = 0, max = 10000))]
    pub(crate) kcal: f64,
    /// Protein in grams, 0 to 1000 (default 0).
    #[schemars(range(min = 0, max = 1000))]
    pub(crate) protein_g: Option<f64>,
    /// Carbohydrates in grams, 0 to 1000 (default 0).
    #[schemars(range(min = 0, max = 1000))]
    pub(crate) carbs_g: Option<f64>,
    /// Fat in grams, 0 to 1000 (default 0).
    #[schemars(range(min = 0, max = 1000))]
    pub(crate) fat_g: Option<f64>,
}

/// A checked meal, ready to store.
#[derive(Debug, Clone)]
pub(crate) struct NewMeal {
    pub(crate) name: String,
    pub(crate) items: Vec<NewItem>,
}

#[derive(Debug, Clone)]
pub(crate) struct NewItem {
    pub(crate) name: String,
    pub(crate) grams: f64,
    pub(crate) kcal: f64,
    pub(crate) protein_g: f64,
    pub(crate) carbs_g: f64,
    pub(crate) fat_g: f64,
}

impl MealInput {
    fn check(self) -> Result<NewMeal, ApiError> {
        let mut c = Checker::new();
        let name = c.name("name", &self.name);
        if self.items.is_empty() || self.items.len() > MAX_ITEMS {
            c.fail("items", format!("give 1 to {MAX_ITEMS} items, got {}", self.items.len()));
        }
        let items = self
            .items
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                let field = |f: &str| format!("items[{i}].{f}");
                let name = c.name(&field("name"), &item.name);
                c.number(&field("grams"), item.grams, 0.0, 5000.0);
                c.number(&field("kcal"), item.kcal, 0.0, 10000.0);
                c.opt_number(&field("protein_g"), item.protein_g, 0.0, 1000.0);
                c.opt_number(&field("carbs_g"), item.carbs_g, 0.0, 1000.0);
                c.opt_number(&field("fat_g"), item.fat_g, 0.0, 1000.0);
                NewItem {
                    name,
                    grams: item.grams,
                    kcal: item.kcal,
                    protein_g: item.protein_g.unwrap_or(0.0),
                    carbs_g: item.carbs_g.unwrap_or(0.0),
                    fat_g: item.fat_g.unwrap_or(0.0),
                }
            })
            .collect();
        c.finish()?;
        Ok(NewMeal { name, items })
    }
}

#[derive(Debug, sqlx::FromRow)]
struct MealRow {
    meal_id: i64,
    date: NaiveDate,
    name: String,
}

#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub(crate) struct Item {
    #[serde(skip)]
    meal_id: i64,
    item_id: i64,
    name: String,
    grams: f64,
    kcal: f64,
    protein_g: f64,
    carbs_g: f64,
    fat_g: f64,
}

/// Sums of a set of items, rounded to 0.01.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub(crate) struct Totals {
    pub(crate) grams: f64,
    pub(crate) kcal: f64,
    pub(crate) protein_g: f64,
    pub(crate) carbs_g: f64,
    pub(crate) fat_g: f64,
}

impl Totals {
    fn of<'a>(items: impl IntoIterator<Item = &'a Item>) -> Self {
        let mut t = Totals::default();
        for i in items {
            t.grams += i.grams;
            t.kcal += i.kcal;
            t.protein_g += i.protein_g;
            t.carbs_g += i.carbs_g;
            t.fat_g += i.fat_g;
        }
        let round = |v: f64| (v * 100.0).round() / 100.0;
        Totals {
            grams: round(t.grams),
            kcal: round(t.kcal),
            protein_g: round(t.protein_g),
            carbs_g: round(t.carbs_g),
            fat_g: round(t.fat_g),
        }
    }
}

/// A meal as answered: its items and their totals.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Meal {
    pub(crate) meal_id: i64,
    pub(crate) date: NaiveDate,
    pub(crate) name: String,
    pub(crate) items: Vec<Item>,
    pub(crate) totals: Totals,
}

/// Every meal of the user's day, items in the order they were given.
pub(crate) async fn day_meals(db: &Db, user: &str, date: NaiveDate) -> Result<Vec<Meal>, sqlx::Error> {
    const MEALS: &str =
        "SELECT meal_id, date, name FROM fit_meals WHERE user_id = $1 AND date = $2 ORDER BY meal_id";
    const ITEMS: &str = "SELECT i.meal_id, i.item_id, i.name, i.grams, i.kcal, i.protein_g, i.carbs_g, i.fat_g \
         FROM fit_meal_items i JOIN fit_meals m ON m.meal_id = i.meal_id \
         WHERE m.user_id = $1 AND m.date = $2 ORDER BY i.meal_id, i.position";
    let (meals, items) = on_pool!(db, |pool| {
        let meals = sqlx::query_as::<_, MealRow>(MEALS).bind(user).bind(date).fetch_all(pool).await?;
        let items = sqlx::query_as::<_, Item>(ITEMS).bind(user).bind(date).fetch_all(pool).await?;
        (meals, items)
    });
    Ok(assemble(meals, items))
}

async fn one_meal(db: &Db, user: &str, meal_id: i64) -> Result<Option<Meal>, sqlx::Error> {
    const MEAL: &str = "SELECT meal_id, date, name FROM fit_meals WHERE user_id = $1 AND meal_id = $2";
    const ITEMS: &str = "SELECT meal_id, item_id, name, grams, kcal, protein_g, carbs_g, fat_g \
         FROM fit_meal_items WHERE meal_id = $1 ORDER BY position";
    let (meal, items) = on_pool!(db, |pool| {
        let meal = sqlx::query_as::<_, MealRow>(MEAL).bind(user).bind(meal_id).fetch_optional(pool).await?;
        let items = match meal {
            Some(_) => sqlx::query_as::<_, Item>(ITEMS).bind(meal_id).fetch_all(pool).await?,
            None => Vec::new(),
        };
        (meal, items)
    });
    Ok(meal.and_then(|m| assemble(vec![m], items).pop()))
}

fn assemble(meals: Vec<MealRow>, items: Vec<Item>) -> Vec<Meal> {
    let mut by_meal: BTreeMap<i64, Vec<Item>> = BTreeMap::new();
    for item in items {
        by_meal.entry(item.meal_id).or_default().push(item);
    }
    meals
        .into_iter()
        .map(|m| {
            let items = by_meal.remove(&m.meal_id).unwrap_or_default();
            let totals = Totals::of(&items);
            Meal { meal_id: m.meal_id, date: m.date, name: m.name, items, totals }
        })
        .collect()
}

/// Inserts the meal and its items in one transaction; returns the new meal id.
/// A meal of the same name on that day is a unique violation (the caller answers 409).
pub(crate) async fn insert_meal(
    db: &Db,
    user: &str,
    date: NaiveDate,
    meal: &NewMeal,
) -> Result<i64, sqlx::Error> {
    const MEAL: &str = "INSERT INTO fit_meals (meal_id, user_id, date, name) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (meal_id) DO NOTHING RETURNING meal_id";
    const ITEM: &str = "INSERT INTO fit_meal_items (item_id, meal_id, position, name, grams, kcal, protein_g, carbs_g, fat_g) \
         VALUES ($9, $1, $2, $3, $4, $5, $6, $7, $8)";
    on_pool!(db, |pool| {
        let mut tx = pool.begin().await?;
        let mut meal_id = None;
        for _ in 0..crate::ids::ATTEMPTS {
            meal_id = sqlx::query_scalar(MEAL)
                .bind(crate::ids::time_ordered())
                .bind(user)
                .bind(date)
                .bind(&meal.name)
                .fetch_optional(&mut *tx)
                .await?;
            if meal_id.is_some() {
                break;
            }
        }
        let Some(meal_id): Option<i64> = meal_id else {
            return Err(sqlx::Error::Protocol("no free meal id".into()));
        };
        for (position, item) in (1_i32..).zip(&meal.items) {
            sqlx::query(ITEM)
                .bind(meal_id)
                .bind(position)
                .bind(&item.name)
                .bind(item.grams)
                .bind(item.kcal)
                .bind(item.protein_g)
                .bind(item.carbs_g)
                .bind(item.fat_g)
                .bind(crate::ids::random())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(meal_id)
    })
}

async fn meal_id_by_name(
    db: &Db,
    user: &str,
    date: NaiveDate,
    name: &str,
) -> Result<Option<i64>, sqlx::Error> {
    const SQL: &str = "SELECT meal_id FROM fit_meals WHERE user_id = $1 AND date = $2 AND name = $3";
    on_pool!(db, |pool| sqlx::query_scalar(SQL).bind(user).bind(date).bind(name).fetch_optional(pool).await)
}

/// `GET /nutrition/days/{date}/meals`
pub(crate) async fn list_meals(
    State(state): State<AppState>,
    user: User,
    ApiPath(date): ApiPath<String>,
) -> Result<Response, ApiError> {
    let date = path_date("date", &date)?;
    let meals = day_meals(&state.db, &user.id, date).await?;
    Ok(axum::Json(json!({ "date": date, "meals": meals })).into_response())
}

/// `POST /nutrition/days/{date}/meals`: 201 with the meal; 409 when the day already has a
/// meal of that name.
pub(crate) async fn create_meal(
    State(state): State<AppState>,
    user: User,
    ApiPath(date): ApiPath<String>,
    ApiJson(input): ApiJson<MealInput>,
) -> Result<Response, ApiError> {
    let date = path_date("date", &date)?;
    let meal = input.check()?;
    let meal_id = match insert_meal(&state.db, &user.id, date, &meal).await {
        Ok(id) => id,
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            let existing = meal_id_by_name(&state.db, &user.id, date, &meal.name).await?;
            let id = existing.map(|id| format!(" (meal_id {id})")).unwrap_or_default();
            return Err(ApiError::conflict(format!(
                "a meal named {:?} already exists on {date}{id}; pick another name or delete that meal first",
                meal.name
            )));
        }
        Err(e) => return Err(e.into()),
    };
    match one_meal(&state.db, &user.id, meal_id).await? {
        Some(m) => Ok((StatusCode::CREATED, axum::Json(m)).into_response()),
        None => Err(ApiError::internal(&"meal vanished right after insert")),
    }
}

/// `GET /nutrition/days/{date}/summary`: totals of the day (zeros when nothing was logged)
/// beside the user's daily goals (`null` when none were set), so a reader can show both.
pub(crate) async fn summary(
    State(state): State<AppState>,
    user: User,
    ApiPath(date): ApiPath<String>,
) -> Result<Response, ApiError> {
    let date = path_date("date", &date)?;
    let meals = day_meals(&state.db, &user.id, date).await?;
    let totals = Totals::of(meals.iter().flat_map(|m| &m.items));
    let item_count: usize = meals.iter().map(|m| m.items.len()).sum();
    let goals = crate::goals::get_goals(&state.db, &user.id).await?;
    Ok(axum::Json(json!({
        "date": date,
        "meal_count": meals.len(),
        "item_count": item_count,
        "totals": totals,
        "goals": goals,
    }))
    .into_response())
}

/// `DELETE /nutrition/meals/{meal_id}` (its items go with it).
pub(crate) async fn delete_meal(
    State(state): State<AppState>,
    user: User,
    ApiPath(meal_id): ApiPath<String>,
) -> Result<Response, ApiError> {
    let meal_id = path_id("meal_id", &meal_id)?;
    const SQL: &str = "DELETE FROM fit_meals WHERE user_id = $1 AND meal_id = $2";
    let n = on_pool!(state.db, |pool| sqlx::query(SQL)
        .bind(&user.id)
        .bind(meal_id)
        .execute(pool)
        .await?
        .rows_affected());
    if n > 0 {
        Ok(axum::Json(json!({ "deleted": { "meal_id": meal_id } })).into_response())
    } else {
        Err(ApiError::not_found(format!("no meal {meal_id}")))
    }
}
