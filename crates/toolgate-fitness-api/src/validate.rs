//! Input checks shared by the handlers: calendar dates, ids, numbers in range, text length.
//! Every check records a `FieldError` instead of returning early, so one answer lists them all.

use axum::http::StatusCode;
use chrono::NaiveDate;

use crate::error::{ApiError, FieldError};

/// Longest accepted name (meal, item, workout, exercise).
pub(crate) const MAX_NAME: usize = 200;
/// Longest accepted free text (notes).
pub(crate) const MAX_NOTE: usize = 2000;

/// Parses `YYYY-MM-DD` strictly (zero-padded, a real calendar day).
pub(crate) fn parse_date(value: &str) -> Result<NaiveDate, String> {
    let b = value.as_bytes();
    let shaped = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shaped {
        return Err(format!("expected a date as YYYY-MM-DD, got {value:?}"));
    }
    let year: i32 = value[0..4].parse().map_err(|_| format!("bad year in {value:?}"))?;
    let month: u32 = value[5..7].parse().map_err(|_| format!("bad month in {value:?}"))?;
    let day: u32 = value[8..10].parse().map_err(|_| format!("bad day in {value:?}"))?;
    NaiveDate::from_ymd_opt(year, month, day)
        .ok_or_else(|| format!("{value} is not a calendar date (month 01-12, day within that month)"))
}

/// A date from the path: 400 naming the variable.
pub(crate) fn path_date(field: &str, value: &str) -> Result<NaiveDate, ApiError> {
    parse_date(value).map_err(|m| ApiError::bad_request(field, m))
}

/// A positive integer id from the path: 400 naming the variable.
pub(crate) fn path_id(field: &str, value: &str) -> Result<i64, ApiError> {
    match value.parse::<i64>() {
        Ok(id) if id > 0 => Ok(id),
        _ => Err(ApiError::bad_request(field, format!("expected a positive integer id, got {value:?}"))),
    }
}

/// Collects refused fields; `finish` answers 422 with all of them, or Ok.
#[derive(Debug, Default)]
pub(crate) struct Checker {
    errors: Vec<FieldError>,
}

impl Checker {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn fail(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.errors.push(FieldError { field: field.into(), message: message.into() });
    }

    pub(crate) fn date(&mut self, field: &str, value: &str) -> Option<NaiveDate> {
        match parse_date(value) {
            Ok(d) => Some(d),
            Err(m) => {
                self.fail(field, m);
                None
            }
        }
    }

    /// `min <= value <= max`.
    pub(crate) fn number(&mut self, field: &str, value: f64, min: f64, max: f64) {
        if !(min..=max).contains(&value) {
            self.fail(field, format!("must be between {min} and {max}, got {value}"));
        }
    }

    pub(crate) fn opt_number(&mut self, field: &str, value: Option<f64>, min: f64, max: f64) {
        if let Some(v) = value {
            self.number(field, v, min, max);
        }
    }

    pub(crate) fn integer(&mut self, field: &str, value: i64, min: i64, max: i64) {
        if !(min..=max).contains(&value) {
            self.fail(field, format!("must be an integer between {min} and {max}, got {value}"));
        }
    }

    /// A required name: trimmed, not empty, at most `MAX_NAME` characters.
    pub(crate) fn name(&mut self, field: &str, value: &str) -> String {
        let trimmed = value.trim();
        if trimmed.is_empty() {
            self.fail(field, "must not be empty");
        } else if trimmed.chars().count() > MAX_NAME {
            self.fail(field, format!("at most {MAX_NAME} characters"));
        }
        trimmed.to_owned()
    }

    /// Optional free text, at most `MAX_NOTE` characters.
    pub(crate) fn note(&mut self, field: &str, value: Option<&str>) {
        if value.is_some_and(|v| v.chars().count() > MAX_NOTE) {
            self.fail(field, format!("at most {MAX_NOTE} characters"));
        }
    }

    /// 422 listing every refused field, or Ok when there is none.
    pub(crate) fn finish(self) -> Result<(), ApiError> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::fields(StatusCode::UNPROCESSABLE_ENTITY, self.errors))
        }
    }
}

/// A `from`/`to` query range; either end may be open. 400 naming the parameter.
pub(crate) fn date_range(
    from: Option<&str>,
    to: Option<&str>,
) -> Result<(Option<NaiveDate>, Option<NaiveDate>), ApiError> {
    let from = from.map(|v| parse_date(v).map_err(|m| ApiError::bad_request("from", m))).transpose()?;
    let to = to.map(|v| parse_date(v).map_err(|m| ApiError::bad_request("to", m))).transpose()?;
    if let (Some(f), Some(t)) = (from, to)
        && f > t
    {
        return Err(ApiError::bad_request("from", format!("from ({f}) is after to ({t})")));
    }
    Ok((from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_strict() {
        assert_eq!(parse_date("2026-02-28"), Ok(NaiveDate::from_ymd_opt(2026, 2, 28).unwrap()));
        assert_eq!(parse_date("2024-02-29"), Ok(NaiveDate::from_ymd_opt(2024, 2, 29).unwrap()));
        for bad in
            ["2026-02-30", "2026-13-01", "2026-2-3", "26-02-03", "2026/02/03", "", "2026-02-0a", "+026-02-03"]
        {
            assert!(parse_date(bad).is_err(), "{bad} accepted");
        }
        assert!(parse_date("2026-02-30").unwrap_err().contains("not a calendar date"));
    }

    #[test]
    fn ids_must_be_positive_integers() {
        assert_eq!(path_id("meal_id", "12").unwrap(), 12);
        for bad in ["0", "-1", "abc", "1.5", "", "../admin", "99999999999999999999"] {
            let err = path_id("meal_id", bad).unwrap_err();
            assert_eq!(err.status(), StatusCode::BAD_REQUEST);
        }
    }

    #[test]
    fn checker_collects_every_error() {
        let mut c = Checker::new();
        c.number("grams", -1.0, 0.0, 10.0);
        c.name("name", "  ");
        c.integer("reps", 5, 1, 10);
        let err = c.finish().unwrap_err();
        assert_eq!(err.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let text = format!("{err:?}");
        assert!(text.contains("grams") && text.contains("name") && !text.contains("reps"), "{text}");
    }

    #[test]
    fn ranges_must_be_ordered() {
        assert!(date_range(Some("2026-01-02"), Some("2026-01-01")).is_err());
        assert!(date_range(Some("2026-01-01"), None).is_ok());
        assert!(date_range(None, Some("2026-02-30")).is_err());
    }
}
