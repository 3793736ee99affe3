//! The candidates `plan_itinerary` combines, typed once: the schema the
//! model reads, the value serde builds and what the planner and the stored
//! plan use.

use chrono::{NaiveDate, NaiveDateTime};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Largest number of candidates per list.
pub(crate) const MAX_CANDIDATES: usize = 100;
/// Longest candidate id, so that summaries stay small.
pub(crate) const MAX_ID: u32 = 32;
/// The pattern of a local date-time, YYYY-MM-DDTHH:MM (seconds optional).
const DATETIME_PATTERN: &str = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$";

/// flight or train.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Mode {
    Flight,
    Train,
}

impl Mode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Mode::Flight => "flight",
            Mode::Train => "train",
        }
    }
}

/// A flight or train (outbound or return leg).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Transport {
    /// Unique among all transports (outbound and return), at most 32 characters, e.g. "CA1501".
    #[schemars(length(min = 1, max = MAX_ID), pattern(toolgate_schema::PLAIN_TEXT))]
    pub(crate) id: String,
    /// flight or train.
    pub(crate) mode: Mode,
    /// Ticket price in the policy currency.
    #[schemars(range(min = 0, max = 10_000_000))]
    pub(crate) price: f64,
    /// Door-to-door travel time in minutes.
    #[schemars(range(min = 1, max = 10000))]
    pub(crate) duration_minutes: i64,
    /// Local departure time, YYYY-MM-DDTHH:MM.
    #[serde(deserialize_with = "datetime")]
    #[schemars(with = "String", regex(pattern = DATETIME_PATTERN))]
    pub(crate) depart: NaiveDateTime,
    /// Local arrival time, YYYY-MM-DDTHH:MM.
    #[serde(deserialize_with = "datetime")]
    #[schemars(with = "String", regex(pattern = DATETIME_PATTERN))]
    pub(crate) arrive: NaiveDateTime,
    /// Travel class, e.g. economy, premium_economy, business, first (flights) or second, first, business (trains).
    #[schemars(length(min = 1, max = MAX_ID), pattern(toolgate_schema::PLAIN_TEXT))]
    pub(crate) class: String,
}

/// A hotel stay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Hotel {
    /// Unique among hotels, at most 32 characters.
    #[schemars(length(min = 1, max = MAX_ID), pattern(toolgate_schema::PLAIN_TEXT))]
    pub(crate) id: String,
    /// Hotel name, for the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 200), pattern(toolgate_schema::PLAIN_TEXT))]
    pub(crate) name: Option<String>,
    /// Price per night in the policy currency.
    #[schemars(range(min = 0, max = 1_000_000))]
    pub(crate) price_per_night: f64,
    /// First night, YYYY-MM-DD: must be the outbound arrival day.
    #[schemars(with = "String", regex(pattern = toolgate_schema::DATE_PATTERN), extend("format" = "date"))]
    pub(crate) check_in: NaiveDate,
    /// Check-out day, YYYY-MM-DD: must be the return departure day.
    #[schemars(with = "String", regex(pattern = toolgate_schema::DATE_PATTERN), extend("format" = "date"))]
    pub(crate) check_out: NaiveDate,
}

/// `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS`, local time of the place.
pub(crate) fn parse_datetime(text: &str) -> Option<NaiveDateTime> {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M")
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S"))
        .ok()
}

fn datetime<'de, D: serde::Deserializer<'de>>(d: D) -> Result<NaiveDateTime, D::Error> {
    let text = String::deserialize(d)?;
    parse_datetime(&text).ok_or_else(|| serde::de::Error::custom("not a date-time YYYY-MM-DDTHH:MM"))
}
