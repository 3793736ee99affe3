//! Reading `plan_itinerary` parameters into a planner [`Request`], reporting
//! every problem (with its JSON pointer) in one INVALID_PARAMS answer.

use std::collections::{BTreeMap, HashSet};

use chrono::NaiveDateTime;
use serde_json::{Map, Value};
use tool_core::params::{parse_date, type_name};
use tool_core::{FieldError, ToolError};

use super::planner::{Hotel, Request, Transport, Weights};

/// Most candidates per list.
pub(crate) const MAX_CANDIDATES: usize = 100;
/// Longest candidate id, so that summaries stay small.
pub(crate) const MAX_ID: usize = 32;
/// Most field errors listed; the rest are counted.
const MAX_ERRORS: usize = 25;

struct Collector {
    errors: Vec<FieldError>,
    more: usize,
}

impl Collector {
    fn push(&mut self, pointer: String, expected: &str, actual: &Value, message: String) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(FieldError::new(pointer, expected, actual, message));
        } else {
            self.more += 1;
        }
    }

    fn finish(mut self) -> Result<(), ToolError> {
        if self.errors.is_empty() {
            return Ok(());
        }
        if self.more > 0 {
            let more = self.more;
            self.errors.push(FieldError::new(
                "",
                "valid candidates",
                &Value::Null,
                format!("and {more} more problems of the same kinds; fix the ones listed and check the rest"),
            ));
        }
        Err(ToolError::invalid_params(self.errors))
    }
}

fn all<T>(items: Vec<Option<T>>) -> Option<Vec<T>> {
    items.into_iter().collect()
}

fn unknown_keys(c: &mut Collector, map: &Map<String, Value>, at: &str, allowed: &[&str]) {
    for (k, v) in map {
        if !allowed.contains(&k.as_str()) {
            let pointer = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
            c.push(
                pointer,
                "no such field",
                v,
                format!("unknown field `{k}`; allowed: {}", allowed.join(", ")),
            );
        }
    }
}

fn text(
    c: &mut Collector,
    map: &Map<String, Value>,
    at: &str,
    key: &str,
    max: usize,
    required: bool,
) -> Option<String> {
    let pointer = format!("{at}/{key}");
    match map.get(key) {
        None | Some(Value::Null) => {
            if required {
                c.push(pointer, "a non-empty string", &Value::Null, format!("`{key}` is required"));
            }
            None
        }
        Some(Value::String(s)) if s.trim().is_empty() => {
            c.push(
                pointer,
                "a non-empty string",
                &Value::String(s.clone()),
                format!("`{key}` must not be empty"),
            );
            None
        }
        Some(Value::String(s)) if s.chars().count() > max || s.contains('\0') => {
            c.push(
                pointer,
                &format!("at most {max} characters, no NUL"),
                &Value::String(s.clone()),
                format!("`{key}` is too long (at most {max} characters) or contains NUL"),
            );
            None
        }
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => {
            c.push(pointer, "a string", v, format!("`{key}` must be a string, got {}", type_name(v)));
            None
        }
    }
}

fn number(
    c: &mut Collector,
    map: &Map<String, Value>,
    at: &str,
    key: &str,
    min: f64,
    max: f64,
) -> Option<f64> {
    let pointer = format!("{at}/{key}");
    let expected = format!("a number from {min} to {max}");
    match map.get(key) {
        None | Some(Value::Null) => {
            c.push(pointer, &expected, &Value::Null, format!("`{key}` is required"));
            None
        }
        Some(v) => match v.as_f64() {
            Some(n) if n.is_finite() && n >= min && n <= max => Some(n),
            _ => {
                c.push(pointer, &expected, v, format!("`{key}` must be {expected}"));
                None
            }
        },
    }
}

fn integer(
    c: &mut Collector,
    map: &Map<String, Value>,
    at: &str,
    key: &str,
    min: i64,
    max: i64,
) -> Option<i64> {
    let pointer = format!("{at}/{key}");
    let expected = format!("an integer from {min} to {max}");
    match map.get(key) {
        None | Some(Value::Null) => {
            c.push(pointer, &expected, &Value::Null, format!("`{key}` is required"));
            None
        }
        Some(v) => match v.as_i64() {
            Some(n) if (min..=max).contains(&n) => Some(n),
            _ => {
                c.push(pointer, &expected, v, format!("`{key}` must be {expected}"));
                None
            }
        },
    }
}

/// `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS`, local time of the place.
pub(crate) fn parse_datetime(text: &str) -> Option<NaiveDateTime> {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M")
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S"))
        .ok()
}

fn datetime(c: &mut Collector, map: &Map<String, Value>, at: &str, key: &str) -> Option<NaiveDateTime> {
    let pointer = format!("{at}/{key}");
    let expected = "a local date-time YYYY-MM-DDTHH:MM";
    match map.get(key) {
        None | Some(Value::Null) => {
            c.push(pointer, expected, &Value::Null, format!("`{key}` is required"));
            None
        }
        Some(v) => match v.as_str().and_then(parse_datetime) {
            Some(t) => Some(t),
            None => {
                c.push(
                    pointer,
                    expected,
                    v,
                    format!("`{key}` must be a real date and time like 2027-03-10T08:30"),
                );
                None
            }
        },
    }
}

fn date(c: &mut Collector, map: &Map<String, Value>, at: &str, key: &str) -> Option<chrono::NaiveDate> {
    let pointer = format!("{at}/{key}");
    match map.get(key) {
        None | Some(Value::Null) => {
            c.push(pointer, "a date YYYY-MM-DD", &Value::Null, format!("`{key}` is required"));
            None
        }
        Some(v) => match v.as_str().map(parse_date) {
            Some(Ok(d)) => Some(d),
            Some(Err(why)) => {
                c.push(pointer, "a date YYYY-MM-DD", v, format!("`{key}` {why}"));
                None
            }
            None => {
                c.push(
                    pointer,
                    "a date YYYY-MM-DD",
                    v,
                    format!("`{key}` must be a date string like 2027-03-10"),
                );
                None
            }
        },
    }
}

fn list<'a>(c: &mut Collector, map: &'a Map<String, Value>, at: &str, key: &str) -> &'a [Value] {
    let pointer = format!("{at}/{key}");
    let expected = format!("an array of 1 to {MAX_CANDIDATES} candidates");
    match map.get(key) {
        Some(Value::Array(items)) if !items.is_empty() && items.len() <= MAX_CANDIDATES => items,
        Some(Value::Array(items)) => {
            c.push(
                pointer,
                &expected,
                &Value::Null,
                format!("`{key}` has {} candidates; give 1 to {MAX_CANDIDATES}", items.len()),
            );
            &[]
        }
        None | Some(Value::Null) => {
            c.push(pointer, &expected, &Value::Null, format!("`{key}` is required"));
            &[]
        }
        Some(v) => {
            c.push(pointer, &expected, v, format!("`{key}` must be an array, got {}", type_name(v)));
            &[]
        }
    }
}

fn object<'a>(
    c: &mut Collector,
    value: &'a Value,
    pointer: &str,
    what: &str,
) -> Option<&'a Map<String, Value>> {
    match value {
        Value::Object(map) => Some(map),
        other => {
            c.push(pointer.to_string(), what, other, format!("must be {what}, got {}", type_name(other)));
            None
        }
    }
}

const TRANSPORT_FIELDS: [&str; 7] = ["id", "mode", "price", "duration_minutes", "depart", "arrive", "class"];
const HOTEL_FIELDS: [&str; 5] = ["id", "name", "price_per_night", "check_in", "check_out"];

fn transport(c: &mut Collector, value: &Value, at: &str, ids: &mut HashSet<String>) -> Option<Transport> {
    let map = object(c, value, at, "a transport object")?;
    unknown_keys(c, map, at, &TRANSPORT_FIELDS);
    let id = text(c, map, at, "id", MAX_ID, true);
    if let Some(id) = &id
        && !ids.insert(id.clone())
    {
        c.push(format!("{at}/id"), "an id unique among all transports", &Value::String(id.clone()), format!("transport id `{id}` is used twice; outbound and return ids share transport_scores, so each must be unique"));
    }
    let mode = match map.get("mode").and_then(Value::as_str) {
        Some(m @ ("flight" | "train")) => Some(m.to_string()),
        _ => {
            let actual = map.get("mode").cloned().unwrap_or(Value::Null);
            c.push(format!("{at}/mode"), "flight or train", &actual, "`mode` must be flight or train".into());
            None
        }
    };
    let price = number(c, map, at, "price", 0.0, 10_000_000.0);
    let duration = integer(c, map, at, "duration_minutes", 1, 10_000);
    let depart = datetime(c, map, at, "depart");
    let arrive = datetime(c, map, at, "arrive");
    if let (Some(d), Some(a)) = (depart, arrive)
        && a <= d
    {
        c.push(
            format!("{at}/arrive"),
            "a time after depart",
            &Value::String(a.to_string()),
            "`arrive` must be after `depart`".into(),
        );
    }
    let class = text(c, map, at, "class", MAX_ID, true);
    Some(Transport {
        id: id?,
        mode: mode?,
        price: price?,
        duration_minutes: duration?,
        depart: depart?,
        arrive: arrive?,
        class: class?.trim().to_lowercase(),
    })
}

fn hotel(c: &mut Collector, value: &Value, at: &str, ids: &mut HashSet<String>) -> Option<Hotel> {
    let map = object(c, value, at, "a hotel object")?;
    unknown_keys(c, map, at, &HOTEL_FIELDS);
    let id = text(c, map, at, "id", MAX_ID, true);
    if let Some(id) = &id
        && !ids.insert(id.clone())
    {
        c.push(
            format!("{at}/id"),
            "an id unique among hotels",
            &Value::String(id.clone()),
            format!("hotel id `{id}` is used twice"),
        );
    }
    let name = text(c, map, at, "name", 200, false);
    let price = number(c, map, at, "price_per_night", 0.0, 1_000_000.0);
    let check_in = date(c, map, at, "check_in");
    let check_out = date(c, map, at, "check_out");
    if let (Some(i), Some(o)) = (check_in, check_out)
        && o <= i
    {
        c.push(
            format!("{at}/check_out"),
            "a date after check_in",
            &Value::String(o.to_string()),
            "`check_out` must be at least one night after `check_in`".into(),
        );
    }
    Some(Hotel { id: id?, name, price_per_night: price?, check_in: check_in?, check_out: check_out? })
}

fn scores(c: &mut Collector, map: &Map<String, Value>, at: &str, key: &str) -> BTreeMap<String, f64> {
    let pointer = format!("{at}/{key}");
    let mut out = BTreeMap::new();
    match map.get(key) {
        None | Some(Value::Null) => c.push(
            pointer,
            "an object {id: score}",
            &Value::Null,
            format!("`{key}` is required (may be {{}} when nothing is scored)"),
        ),
        Some(Value::Object(entries)) => {
            for (id, v) in entries {
                match v.as_f64() {
                    Some(n) if (0.0..=10.0).contains(&n) => {
                        out.insert(id.clone(), n);
                    }
                    _ => c.push(
                        format!("{pointer}/{}", id.replace('~', "~0").replace('/', "~1")),
                        "a number from 0 to 10",
                        v,
                        format!("score of `{id}` must be a number from 0 to 10"),
                    ),
                }
            }
        }
        Some(v) => c.push(
            pointer,
            "an object {id: score}",
            v,
            format!("`{key}` must be an object mapping ids to scores 0-10"),
        ),
    }
    out
}

/// Read and check the whole request; `name_errors` are the top-level unknown/injected names already found.
pub(crate) fn read(params: &Value, name_errors: Vec<FieldError>) -> Result<Request, ToolError> {
    let mut c = Collector { errors: name_errors, more: 0 };
    let Some(root) = object(&mut c, params, "", "a JSON object") else {
        c.finish()?;
        return Err(ToolError::internal());
    };
    let destination = text(&mut c, root, "", "destination", 100, true);

    let (mut outbound, mut hotels, mut returns) = (Vec::new(), Vec::new(), Vec::new());
    match root.get("candidates") {
        Some(Value::Object(cands)) => {
            unknown_keys(&mut c, cands, "/candidates", &["outbound", "hotels", "return"]);
            let mut t_ids = HashSet::new();
            let mut h_ids = HashSet::new();
            for (i, v) in list(&mut c, cands, "/candidates", "outbound").iter().enumerate() {
                outbound.push(transport(&mut c, v, &format!("/candidates/outbound/{i}"), &mut t_ids));
            }
            for (i, v) in list(&mut c, cands, "/candidates", "hotels").iter().enumerate() {
                hotels.push(hotel(&mut c, v, &format!("/candidates/hotels/{i}"), &mut h_ids));
            }
            for (i, v) in list(&mut c, cands, "/candidates", "return").iter().enumerate() {
                returns.push(transport(&mut c, v, &format!("/candidates/return/{i}"), &mut t_ids));
            }
        }
        None | Some(Value::Null) => c.push(
            "/candidates".into(),
            "an object {outbound, hotels, return}",
            &Value::Null,
            "`candidates` is required".into(),
        ),
        Some(v) => c.push(
            "/candidates".into(),
            "an object {outbound, hotels, return}",
            v,
            "`candidates` must be an object with outbound, hotels and return arrays".into(),
        ),
    }

    let (mut transport_scores, mut hotel_scores) = (BTreeMap::new(), BTreeMap::new());
    match root.get("scores") {
        Some(Value::Object(s)) => {
            unknown_keys(&mut c, s, "/scores", &["transport_scores", "hotel_scores"]);
            transport_scores = scores(&mut c, s, "/scores", "transport_scores");
            hotel_scores = scores(&mut c, s, "/scores", "hotel_scores");
        }
        None | Some(Value::Null) => c.push(
            "/scores".into(),
            "an object {transport_scores, hotel_scores}",
            &Value::Null,
            "`scores` is required: score every candidate 0-10 for how well it fits the user's wishes".into(),
        ),
        Some(v) => c.push(
            "/scores".into(),
            "an object {transport_scores, hotel_scores}",
            v,
            "`scores` must be an object".into(),
        ),
    }

    let mut weights = Weights::default();
    match root.get("weights") {
        None | Some(Value::Null) => {}
        Some(Value::Object(w)) => {
            unknown_keys(&mut c, w, "/weights", &["price", "time", "preference"]);
            let get = |c: &mut Collector, key: &str, default: f64| match w.get(key) {
                None | Some(Value::Null) => Some(default),
                Some(_) => number(c, w, "/weights", key, 0.0, 1.0),
            };
            let price = get(&mut c, "price", 0.0);
            let time = get(&mut c, "time", 0.0);
            let preference = get(&mut c, "preference", 0.0);
            if let (Some(price), Some(time), Some(preference)) = (price, time, preference) {
                if price + time + preference <= 0.0 {
                    c.push(
                        "/weights".into(),
                        "at least one weight above 0",
                        &Value::Object(w.clone()),
                        "weights must not all be 0 (omit `weights` for the defaults 0.4/0.3/0.3)".into(),
                    );
                }
                weights = Weights { price, time, preference };
            }
        }
        Some(v) => c.push(
            "/weights".into(),
            "an object {price, time, preference}",
            v,
            "`weights` must be an object".into(),
        ),
    }
    c.finish()?;
    match (destination, all(outbound), all(hotels), all(returns)) {
        (Some(destination), Some(outbound), Some(hotels), Some(returns)) => {
            Ok(Request { destination, outbound, hotels, returns, transport_scores, hotel_scores, weights })
        }
        _ => Err(ToolError::internal()),
    }
}
