//! Parameter helpers that collect every problem before answering, so the
//! model gets one `INVALID_PARAMS` listing all of them instead of a fix-one,
//! fail-again loop.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ToolError;

/// One problem with one parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FieldError {
    /// JSON pointer to the value (`/departure_date`, `/items/2/qty`; `""` for the whole object).
    pub pointer: String,
    /// What was expected, in words.
    pub expected: String,
    /// What came (shortened when long); `null` when the value is missing.
    pub actual: Value,
    /// The problem and its fix, for the model.
    pub message: String,
}

impl FieldError {
    /// A field error; `actual` is shortened to keep envelopes small.
    pub fn new(
        pointer: impl Into<String>,
        expected: impl Into<String>,
        actual: &Value,
        message: impl Into<String>,
    ) -> Self {
        Self {
            pointer: pointer.into(),
            expected: expected.into(),
            actual: shorten(actual),
            message: message.into(),
        }
    }
}

/// Keep an echoed value small: long strings are cut, containers summarized.
pub fn shorten(value: &Value) -> Value {
    const MAX: usize = 80;
    match value {
        Value::String(s) if s.chars().count() > MAX => {
            let cut: String = s.chars().take(MAX).collect();
            Value::String(format!("{cut}… ({} chars)", s.chars().count()))
        }
        Value::Array(a) if !a.is_empty() => Value::String(format!("an array of {} items", a.len())),
        Value::Object(o) if !o.is_empty() => Value::String(format!("an object with {} keys", o.len())),
        other => other.clone(),
    }
}

/// The one-line message of an `INVALID_PARAMS` answer.
pub(crate) fn summarize(errors: &[FieldError]) -> String {
    let n = errors.len();
    let head = if n == 1 { "1 invalid parameter".to_string() } else { format!("{n} invalid parameters") };
    let parts: Vec<String> = errors
        .iter()
        .map(|e| {
            let at = if e.pointer.is_empty() { "(root)" } else { &e.pointer };
            format!("{at}: {}", e.message.trim_end_matches('.'))
        })
        .collect();
    format!("{head}: {}. Fix all of them and call again.", parts.join("; "))
}

/// A reader over a parameter object that records every problem it meets.
///
/// ```
/// # use serde_json::json;
/// # use toolgate_core::Params;
/// let params = json!({"city": "Paris", "date": "2026-02-30"});
/// let mut p = Params::new(&params).unwrap();
/// let city = p.required_str("city");
/// let date = p.optional_date("date");
/// let err = p.finish().unwrap_err();
/// assert_eq!(city, Some("Paris"));
/// assert_eq!(date, None);
/// assert!(err.message.contains("/date"));
/// ```
#[derive(Debug)]
pub struct Params<'a> {
    map: &'a Map<String, Value>,
    errors: Vec<FieldError>,
}

impl<'a> Params<'a> {
    /// Start reading; the value must be a JSON object.
    pub fn new(value: &'a Value) -> Result<Self, ToolError> {
        match value {
            Value::Object(map) => Ok(Self { map, errors: Vec::new() }),
            other => Err(ToolError::invalid_params(vec![FieldError::new(
                "",
                "a JSON object",
                other,
                format!("parameters must be a JSON object, got {}", type_name(other)),
            )])),
        }
    }

    /// The raw value of a field.
    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// Record a problem.
    pub fn error(&mut self, name: &str, expected: &str, message: impl Into<String>) {
        let actual = self.map.get(name).cloned().unwrap_or(Value::Null);
        self.errors.push(FieldError::new(pointer(name), expected, &actual, message));
    }

    /// Record a problem when `ok` is false.
    pub fn check(&mut self, ok: bool, name: &str, expected: &str, message: impl Into<String>) {
        if !ok {
            self.error(name, expected, message);
        }
    }

    fn missing(&mut self, name: &str, expected: &str) {
        self.error(name, expected, format!("`{name}` is required ({expected})"));
    }

    /// A required non-empty string.
    pub fn required_str(&mut self, name: &str) -> Option<&'a str> {
        match self.get(name) {
            None => {
                self.missing(name, "a non-empty string");
                None
            }
            Some(_) => self.optional_str(name),
        }
    }

    /// An optional string; present but empty or blank is an error.
    pub fn optional_str(&mut self, name: &str) -> Option<&'a str> {
        match self.get(name)? {
            Value::String(s) if !s.trim().is_empty() => Some(s.as_str()),
            Value::String(_) => {
                self.error(name, "a non-empty string", format!("`{name}` must not be empty"));
                None
            }
            other => {
                let got = type_name(other);
                self.error(name, "a string", format!("`{name}` must be a string, got {got}"));
                None
            }
        }
    }

    /// A required calendar date written `YYYY-MM-DD` (checked by pattern and by a real calendar).
    pub fn required_date(&mut self, name: &str) -> Option<NaiveDate> {
        if self.get(name).is_none() {
            self.missing(name, "a date YYYY-MM-DD");
            return None;
        }
        self.optional_date(name)
    }

    /// An optional `YYYY-MM-DD` date.
    pub fn optional_date(&mut self, name: &str) -> Option<NaiveDate> {
        let value = self.get(name)?;
        let Some(text) = value.as_str() else {
            self.error(name, "a date YYYY-MM-DD", format!("`{name}` must be a date string like 2026-07-15"));
            return None;
        };
        match parse_date(text) {
            Ok(date) => Some(date),
            Err(why) => {
                self.error(name, "a date YYYY-MM-DD", format!("`{name}` {why}"));
                None
            }
        }
    }

    /// A required integer within `[min, max]`.
    pub fn required_int(&mut self, name: &str, min: i64, max: i64) -> Option<i64> {
        if self.get(name).is_none() {
            self.missing(name, &format!("an integer from {min} to {max}"));
            return None;
        }
        self.optional_int(name, min, max)
    }

    /// An optional integer within `[min, max]`.
    pub fn optional_int(&mut self, name: &str, min: i64, max: i64) -> Option<i64> {
        let value = self.get(name)?;
        let expected = format!("an integer from {min} to {max}");
        match value.as_i64() {
            Some(n) if (min..=max).contains(&n) => Some(n),
            Some(n) => {
                self.error(name, &expected, format!("`{name}` is {n}, must be from {min} to {max}"));
                None
            }
            None => {
                self.error(name, &expected, format!("`{name}` must be an integer, got {}", type_name(value)));
                None
            }
        }
    }

    /// An optional number within `[min, max]`.
    pub fn optional_number(&mut self, name: &str, min: f64, max: f64) -> Option<f64> {
        let value = self.get(name)?;
        let expected = format!("a number from {min} to {max}");
        match value.as_f64() {
            Some(n) if n >= min && n <= max => Some(n),
            Some(n) => {
                self.error(name, &expected, format!("`{name}` is {n}, must be from {min} to {max}"));
                None
            }
            None => {
                self.error(name, &expected, format!("`{name}` must be a number, got {}", type_name(value)));
                None
            }
        }
    }

    /// An optional boolean.
    pub fn optional_bool(&mut self, name: &str) -> Option<bool> {
        let value = self.get(name)?;
        match value.as_bool() {
            Some(b) => Some(b),
            None => {
                self.error(
                    name,
                    "true or false",
                    format!("`{name}` must be true or false, got {}", type_name(value)),
                );
                None
            }
        }
    }

    /// A required string that is one of `allowed`.
    pub fn required_enum(&mut self, name: &str, allowed: &[&str]) -> Option<&'a str> {
        if self.get(name).is_none() {
            self.missing(name, &format!("one of {}", allowed.join(", ")));
            return None;
        }
        self.optional_enum(name, allowed)
    }

    /// An optional string that is one of `allowed`.
    pub fn optional_enum(&mut self, name: &str, allowed: &[&str]) -> Option<&'a str> {
        let value = self.get(name)?;
        let expected = format!("one of {}", allowed.join(", "));
        match value.as_str() {
            Some(s) if allowed.contains(&s) => Some(s),
            _ => {
                self.error(name, &expected, format!("`{name}` must be {expected}"));
                None
            }
        }
    }

    /// Whether any problem was recorded so far.
    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Every problem so far, as `INVALID_PARAMS`; `Ok` when there were none.
    pub fn finish(self) -> Result<(), ToolError> {
        if self.errors.is_empty() { Ok(()) } else { Err(ToolError::invalid_params(self.errors)) }
    }
}

/// Parse a `YYYY-MM-DD` date: the pattern first, then the calendar.
pub fn parse_date(text: &str) -> Result<NaiveDate, String> {
    let b = text.as_bytes();
    let shaped = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shaped {
        return Err(format!("must be written YYYY-MM-DD (e.g. 2026-07-15), got {text:?}"));
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .map_err(|_| format!("is not a real calendar date: {text:?} (check the month and the day)"))
}

/// A JSON pointer to a top-level field, escaped per RFC 6901.
pub fn pointer(name: &str) -> String {
    format!("/{}", name.replace('~', "~0").replace('/', "~1"))
}

/// The JSON type name of a value, for messages.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn errors_of(params: Value, read: impl FnOnce(&mut Params<'_>)) -> Vec<FieldError> {
        let mut p = Params::new(&params).unwrap();
        read(&mut p);
        match p.finish() {
            Ok(()) => vec![],
            Err(e) => serde_json::from_value(e.details.unwrap()["errors"].clone()).unwrap(),
        }
    }

    #[test]
    fn dates_are_checked_by_pattern_and_calendar() {
        for (text, ok) in [
            ("2026-07-15", true),
            ("2024-02-29", true),
            ("2026-02-30", false),
            ("2025-02-29", false),
            ("2026/07/15", false),
            ("2026-7-15", false),
            ("", false),
            ("２０２６-07-15", false),
        ] {
            assert_eq!(parse_date(text).is_ok(), ok, "{text}");
        }
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let errors = errors_of(
            json!({"departure_date": "2026-02-30", "return_date": "2026/07/15", "destination": "", "page": 0}),
            |p| {
                p.required_date("departure_date");
                p.required_date("return_date");
                p.required_str("destination");
                p.required_str("purpose");
                p.optional_int("page", 1, 1000);
                p.optional_enum("status", &["DRAFT"]);
            },
        );
        let pointers: Vec<&str> = errors.iter().map(|e| e.pointer.as_str()).collect();
        assert_eq!(pointers, ["/departure_date", "/return_date", "/destination", "/purpose", "/page"]);
        assert_eq!(errors[0].actual, json!("2026-02-30"));
        assert_eq!(errors[3].actual, Value::Null);
    }

    #[test]
    fn non_objects_are_refused() {
        for v in [json!(null), json!([1]), json!(3), json!("x")] {
            let err = Params::new(&v).unwrap_err();
            assert_eq!(err.code, crate::ErrorCode::InvalidParams);
        }
    }

    #[test]
    fn long_values_are_shortened_in_errors() {
        let long = "x".repeat(10_000);
        let e = FieldError::new("/a", "short", &json!(long), "too long");
        assert!(e.actual.as_str().unwrap().len() < 120);
    }
}
