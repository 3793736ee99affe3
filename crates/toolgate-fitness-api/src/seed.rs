//! Demo data: two weeks of body measurements, today's meals and a few workouts for one user.

use chrono::{Days, NaiveDate};

use crate::body::{self, Measurement};
use crate::db::Db;
use crate::error::{Error, Result};
use crate::nutrition::{self, NewItem, NewMeal};
use crate::training::{self, NewSet, NewWorkout};

/// What [`seed_demo`] added (rows already there are left alone and not counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SeedSummary {
    /// Body measurements written (upserted).
    pub measurements: usize,
    /// Meals created.
    pub meals: usize,
    /// Workouts created.
    pub workouts: usize,
}

fn is_duplicate(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

fn item(name: &str, grams: f64, kcal: f64, protein_g: f64, carbs_g: f64, fat_g: f64) -> NewItem {
    NewItem { name: name.into(), grams, kcal, protein_g, carbs_g, fat_g }
}

fn set(exercise: &str, reps: i32, weight_kg: Option<f64>) -> NewSet {
    NewSet { exercise: exercise.into(), reps, weight_kg }
}

/// Fills demo data for the existing user `user_id`, dated relative to `today`. Running it
/// again changes nothing (same measurements; meals and workouts of the same name are skipped).
pub async fn seed_demo(db: &Db, user_id: &str, today: NaiveDate) -> Result<SeedSummary> {
    let exists = crate::db::on_pool!(db, |pool| {
        sqlx::query_scalar::<_, String>("SELECT user_id FROM fit_users WHERE user_id = $1")
            .bind(user_id)
            .fetch_optional(pool)
            .await?
    });
    if exists.is_none() {
        return Err(Error::Invalid {
            field: "user_id",
            message: format!("no user {user_id:?}; create it first"),
        });
    }
    let day = |back: u64| today.checked_sub_days(Days::new(back)).unwrap_or(today);
    let mut summary = SeedSummary::default();

    for back in 0..14_u64 {
        let step = back as f64;
        let m = Measurement {
            date: day(back),
            weight_kg: Some(((80.0 + step * 0.15) * 10.0).round() / 10.0),
            body_fat_pct: (back % 7 == 0).then_some(((18.0 + step * 0.05) * 10.0).round() / 10.0),
            waist_cm: (back % 7 == 0).then_some(86.0 + step * 0.1),
            note: (back == 0).then(|| "morning, before breakfast".to_owned()),
        };
        body::upsert_row(db, user_id, &m).await?;
        summary.measurements += 1;
    }

    let meals = [
        NewMeal {
            name: "breakfast".into(),
            items: vec![
                item("oatmeal", 80.0, 300.0, 10.5, 54.0, 5.5),
                item("milk", 200.0, 128.0, 6.8, 9.6, 7.0),
                item("banana", 120.0, 107.0, 1.3, 27.0, 0.4),
            ],
        },
        NewMeal {
            name: "lunch".into(),
            items: vec![
                item("chicken breast", 150.0, 248.0, 46.5, 0.0, 5.4),
                item("rice", 180.0, 234.0, 4.9, 51.0, 0.5),
                item("broccoli", 100.0, 34.0, 2.8, 7.0, 0.4),
            ],
        },
    ];
    for meal in &meals {
        match nutrition::insert_meal(db, user_id, today, meal).await {
            Ok(_) => summary.meals += 1,
            Err(e) if is_duplicate(&e) => {}
            Err(e) => return Err(e.into()),
        }
    }

    let workouts = [
        NewWorkout {
            date: day(2),
            name: "leg day".into(),
            duration_min: Some(60),
            notes: Some("felt strong".into()),
            sets: vec![
                set("squat", 5, Some(100.0)),
                set("squat", 5, Some(100.0)),
                set("squat", 5, Some(100.0)),
                set("romanian deadlift", 8, Some(80.0)),
                set("romanian deadlift", 8, Some(80.0)),
            ],
        },
        NewWorkout {
            date: day(1),
            name: "upper body".into(),
            duration_min: Some(45),
            notes: None,
            sets: vec![
                set("bench press", 5, Some(75.0)),
                set("bench press", 5, Some(75.0)),
                set("pull-up", 8, None),
                set("pull-up", 7, None),
            ],
        },
    ];
    for w in &workouts {
        match training::insert(db, user_id, w).await {
            Ok(_) => summary.workouts += 1,
            Err(e) if is_duplicate(&e) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(summary)
}
