//! `submit_travel_approval`: create the order and its approval in one
//! transaction, idempotently (database unique index + `ON CONFLICT`), then
//! read the order back and compare.

use chrono::{NaiveDate, Utc};
use schemars::JsonSchema;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tool_core::{Effect, Params, Signal, ToolError, ToolOutput, ToolResult, ToolSpec};

use super::verify_failed;
use crate::common::{MAX_CITY, MAX_TEXT, Shared, text};
use crate::schema::schema_for;
use crate::store::orders::NewOrder;
use crate::store::policies::city_key;
use crate::store::{OrderRow, SubmitOutcome};

/// Parameters of `submit_travel_approval`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)] // schema only: values are read with tool_core::Params
struct Input {
    /// Where the trip goes, e.g. "Shanghai".
    #[schemars(length(min = 1, max = 100))]
    destination: String,
    /// Where the trip starts, e.g. "Beijing".
    #[schemars(length(min = 1, max = 100))]
    departure_city: String,
    /// First day of the trip, YYYY-MM-DD, today or later.
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"), extend("format" = "date"))]
    departure_date: String,
    /// Last day of the trip, YYYY-MM-DD, on or after departure_date.
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"), extend("format" = "date"))]
    return_date: String,
    /// Why the trip is needed, in the user's words (at most 500 characters).
    #[schemars(length(min = 1, max = 500))]
    purpose: String,
}

const DESCRIPTION: &str = "Submit a business trip for approval: creates the travel order and starts its approval \
process in one step. Call it once the user has confirmed destination, departure city, dates and purpose (check \
conflicts and policy first). Returns `{order_id, process_instance_id, status: \"SUBMITTED\", order: {...}, \
verified: true}`. Safe to repeat: an identical submit while the first order is still active (SUBMITTED or APPROVED) \
creates nothing new and returns the existing order with `duplicate: true` and a `duplicate` signal. Dates are \
YYYY-MM-DD real calendar dates; departure_date must not be in the past and return_date must not precede it; text is \
stored exactly as given. VERIFY_FAILED means the order was written but did not read back as written: do not \
resubmit, show it with query_travel_order. Example: {\"destination\": \"Shanghai\", \"departure_city\": \
\"Beijing\", \"departure_date\": \"2027-03-10\", \"return_date\": \"2027-03-14\", \"purpose\": \"Customer workshop \
at ACME\"}.";

pub(crate) fn spec() -> ToolSpec {
    ToolSpec::new("submit_travel_approval", DESCRIPTION, schema_for::<Input>())
        .with_effect(Effect::Write { idempotent: true })
        .with_role("member")
        .with_tags(["travel", "order", "approval"])
        .with_timeout(std::time::Duration::from_secs(15))
        .with_example(
            "a week in Shanghai",
            json!({
                "destination": "Shanghai",
                "departure_city": "Beijing",
                "departure_date": "2027-03-10",
                "return_date": "2027-03-14",
                "purpose": "Customer workshop at ACME"
            }),
        )
}

/// The idempotency fingerprint: SHA-256 of the canonical parameters (cities
/// case- and space-folded, dates normalized, purpose trimmed), as hex. The
/// user is a separate column of the unique index.
pub(crate) fn fingerprint(
    destination: &str,
    departure_city: &str,
    from: &str,
    to: &str,
    purpose: &str,
) -> String {
    let canonical = json!([
        "submit_travel_approval/v1",
        city_key(destination),
        city_key(departure_city),
        from,
        to,
        purpose.trim()
    ]);
    hex::encode(Sha256::digest(canonical.to_string().as_bytes()))
}

/// Checked parameters.
#[derive(Debug)]
pub(crate) struct Parsed {
    destination: String,
    departure_city: String,
    from: NaiveDate,
    to: NaiveDate,
    purpose: String,
}

pub(crate) fn parse(mut p: Params<'_>) -> Result<Parsed, ToolError> {
    let destination = text(&mut p, "destination", true, MAX_CITY);
    let departure_city = text(&mut p, "departure_city", true, MAX_CITY);
    let from = p.required_date("departure_date");
    let to = p.required_date("return_date");
    let purpose = text(&mut p, "purpose", true, MAX_TEXT);
    let today = Utc::now().date_naive();
    if let Some(from) = from {
        p.check(
            from >= today,
            "departure_date",
            "today or a later date",
            format!("`departure_date` {from} is in the past (today is {today}); trips are submitted before they start"),
        );
    }
    if let (Some(from), Some(to)) = (from, to) {
        p.check(
            from <= to,
            "return_date",
            "a date on or after departure_date",
            format!("`return_date` {to} is before `departure_date` {from}; the trip must end on or after it starts"),
        );
    }
    if let (Some(d), Some(c)) = (destination, departure_city) {
        p.check(
            city_key(d) != city_key(c),
            "destination",
            "a city other than departure_city",
            format!("`destination` {d:?} is the departure city; a trip goes somewhere else"),
        );
    }
    p.finish()?;
    let (Some(destination), Some(departure_city), Some(from), Some(to), Some(purpose)) =
        (destination, departure_city, from, to, purpose)
    else {
        return Err(ToolError::internal());
    };
    Ok(Parsed {
        destination: destination.to_string(),
        departure_city: departure_city.to_string(),
        from,
        to,
        purpose: purpose.to_string(),
    })
}

pub(crate) async fn run(shared: &Shared, user: &str, input: Parsed) -> ToolResult {
    let Parsed { destination, departure_city, from, to, purpose } = input;
    let new = NewOrder {
        user_id: user.to_string(),
        fingerprint: fingerprint(&destination, &departure_city, &from.to_string(), &to.to_string(), &purpose),
        destination,
        departure_city,
        departure_date: from,
        return_date: to,
        purpose,
    };
    let outcome =
        shared.store.submit_order(&new).await.map_err(|e| e.to_tool_error("submitting the travel order"))?;
    match outcome {
        SubmitOutcome::Duplicate(existing) => {
            let order = existing.to_json();
            Ok(ToolOutput::json(answer(&existing, true)).with_signal(Signal::Duplicate {
                message: format!(
                    "an identical active order ({}) already exists, so nothing new was created; tell the user it is \
                     already submitted",
                    existing.id
                ),
                existing: order,
            }))
        }
        SubmitOutcome::Created { written, stored } => {
            // `stored` was read after the commit, in a fresh query.
            let Some(stored) = stored else {
                return Err(verify_failed("the travel order", json!({"order_id": written.id}), Vec::new()));
            };
            let mismatches = compare(&written, &stored);
            if !mismatches.is_empty() {
                return Err(verify_failed("the travel order", stored.to_json(), mismatches));
            }
            Ok(ToolOutput::json(answer(&stored, false)))
        }
    }
}

fn answer(order: &OrderRow, duplicate: bool) -> Value {
    json!({
        "order_id": order.id,
        "process_instance_id": order.process_instance_id,
        "status": order.status,
        "duplicate": duplicate,
        "verified": !duplicate,
        "order": order.to_json(),
    })
}

/// Every field that differs between what was meant to be written and what is stored.
fn compare(written: &OrderRow, stored: &OrderRow) -> Vec<Value> {
    let mut out = Vec::new();
    let mut field = |name: &str, expected: Value, actual: Value| {
        if expected != actual {
            out.push(json!({"field": name, "expected": expected, "actual": actual}));
        }
    };
    field("user", json!(written.user_id), json!(stored.user_id));
    field("fingerprint", json!(written.fingerprint), json!(stored.fingerprint));
    field("destination", json!(written.destination), json!(stored.destination));
    field("departure_city", json!(written.departure_city), json!(stored.departure_city));
    field(
        "departure_date",
        json!(written.departure_date.to_string()),
        json!(stored.departure_date.to_string()),
    );
    field("return_date", json!(written.return_date.to_string()), json!(stored.return_date.to_string()));
    field("purpose", json!(written.purpose), json!(stored.purpose));
    field("status", json!(written.status), json!(stored.status));
    field("approval_id", json!(written.approval_id), json!(stored.approval_id));
    field("process_instance_id", json!(written.process_instance_id), json!(stored.process_instance_id));
    field("approval_status", json!(written.approval_status), json!(stored.approval_status));
    out
}

#[cfg(test)]
mod tests {
    use super::fingerprint;

    #[test]
    fn fingerprints_fold_cities_but_not_purpose_text() {
        let a = fingerprint("Shanghai", "Beijing", "2027-03-10", "2027-03-14", "Workshop");
        assert_eq!(a, fingerprint(" shanghai ", "BEIJING", "2027-03-10", "2027-03-14", "Workshop "));
        assert_ne!(a, fingerprint("Shanghai", "Beijing", "2027-03-10", "2027-03-15", "Workshop"));
        assert_ne!(a, fingerprint("Shanghai", "Beijing", "2027-03-10", "2027-03-14", "workshop"));
        // field boundaries are unambiguous
        assert_ne!(
            fingerprint("a", "b", "2027-03-10", "2027-03-14", "c d"),
            fingerprint("a", "b", "2027-03-10", "2027-03-14 c", "d")
        );
        assert_eq!(a.len(), 64);
    }
}
