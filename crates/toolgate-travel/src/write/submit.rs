//! `submit_travel_approval`: create the order and its approval atomically,
//! idempotently (database unique index + `ON CONFLICT`), then read the order
//! back and compare.

use std::sync::Arc;

use chrono::{NaiveDate, Utc};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use toolgate_core::{Effect, FieldError, Signal, Tool, ToolOutput, ToolResult, ToolSpec};

use super::verify_failed;
use crate::read::conflicts::dates_in_order;
use crate::shared::{Call, MAX_CITY, MAX_TEXT, Shared, rule, tool};
use crate::store::orders::NewOrder;
use crate::store::policies::city_key;
use crate::store::{OrderRow, SubmitOutcome};

/// Parameters of `submit_travel_approval`.
#[derive(Debug, Deserialize, JsonSchema)]
struct Input {
    /// Where the trip goes, e.g. "Shanghai".
    #[schemars(length(min = 1, max = MAX_CITY), pattern(toolgate_schema::PLAIN_TEXT))]
    destination: String,
    /// Where the trip starts, e.g. "Beijing".
    #[schemars(length(min = 1, max = MAX_CITY), pattern(toolgate_schema::PLAIN_TEXT))]
    departure_city: String,
    /// First day of the trip, YYYY-MM-DD, today or later.
    #[schemars(with = "String", regex(pattern = toolgate_schema::DATE_PATTERN), extend("format" = "date"))]
    departure_date: NaiveDate,
    /// Last day of the trip, YYYY-MM-DD, on or after departure_date.
    #[schemars(with = "String", regex(pattern = toolgate_schema::DATE_PATTERN), extend("format" = "date"))]
    return_date: NaiveDate,
    /// Why the trip is needed, in the user's words (at most 500 characters).
    #[schemars(length(min = 1, max = MAX_TEXT))]
    purpose: String,
}

const DESCRIPTION: &str = "Submit a business trip for approval: creates the travel order and starts its approval \
process in one step. Call it once the user has confirmed destination, departure city, dates and purpose (check \
conflicts and policy first). Returns `{order_id, process_instance_id, status: \"SUBMITTED\", order: {...}, \
verified: true}`. Safe to repeat: an identical submit while the first order is still active (SUBMITTED or APPROVED) \
creates nothing new and returns the existing order with `duplicate: true` and a `duplicate` signal. If a submit \
failed saying the outcome is unknown, repeat the identical call: when the order was saved it answers it as a \
success with `recovered: true`. Dates are \
YYYY-MM-DD real calendar dates; departure_date must not be in the past and return_date must not precede it; text is \
stored exactly as given. VERIFY_FAILED means the order was written but did not read back as written: do not \
resubmit, show it with query_travel_order. Example: {\"destination\": \"Shanghai\", \"departure_city\": \
\"Beijing\", \"departure_date\": \"2027-03-10\", \"return_date\": \"2027-03-14\", \"purpose\": \"Customer workshop \
at ACME\"}.";

pub(crate) fn tool_for(shared: &Arc<Shared>) -> Arc<dyn Tool> {
    let spec = ToolSpec::new("submit_travel_approval", DESCRIPTION, json!({}))
        .with_effect(Effect::Write { idempotent: true })
        .with_role("member")
        .with_tags(["travel", "order", "approval"])
        .with_timeout(std::time::Duration::from_secs(15))
        .with_result_template(
            "Order {{ result.order_id }} {% if result.duplicate %}already existed{% else %}submitted{% endif %}: \
             {{ result.order.departure_city }} → {{ result.order.destination }}, {{ result.order.departure_date }} to \
             {{ result.order.return_date }}, status {{ result.status }}, approval {{ result.process_instance_id }}.",
        )
        .with_example(
            "a week in Shanghai",
            json!({
                "destination": "Shanghai",
                "departure_city": "Beijing",
                "departure_date": "2027-03-10",
                "return_date": "2027-03-14",
                "purpose": "Customer workshop at ACME"
            }),
        );
    tool(shared, spec, Some(rules), run)
}

fn rules(input: &Input) -> Vec<FieldError> {
    let (from, to) = (input.departure_date, input.return_date);
    let today = Utc::now().date_naive();
    let mut errors = Vec::new();
    if from < today {
        errors.push(rule(
            "departure_date",
            "today or a later date",
            from.to_string(),
            format!("`departure_date` {from} is in the past (today is {today}); trips are submitted before they start"),
        ));
    }
    errors.extend(dates_in_order(from, to));
    // Free text keeps tabs and newlines, but not NUL (no database stores it) or nothing at all.
    let purpose = &input.purpose;
    if purpose.trim().is_empty() || purpose.contains('\0') {
        errors.push(rule(
            "purpose",
            "text with a visible character and no NUL",
            purpose,
            "`purpose` is blank or contains a NUL (\\u0000) character; say why the trip is needed".into(),
        ));
    }
    if city_key(&input.destination) == city_key(&input.departure_city) {
        let d = &input.destination;
        errors.push(rule(
            "destination",
            "a city other than departure_city",
            d,
            format!("`destination` {d:?} is the departure city; a trip goes somewhere else"),
        ));
    }
    errors
}

/// When a submit finds the caller's identical active order, that order was
/// "just written" by a call that lost its answer (and is answered as this
/// call's success, `recovered: true`) when all of these hold: its creating
/// submit never answered it (the `answered` column is still false), it was
/// created at least [`JUST_WRITTEN_GRACE`] and at most [`JUST_WRITTEN`] ago,
/// and this call is the first to claim it (compare-and-set). Otherwise it is
/// a repeat of an answered submit: `duplicate`.
pub(crate) const JUST_WRITTEN: chrono::Duration = chrono::Duration::minutes(10);
/// How long the creating call has to answer before its order counts as
/// unanswered: submits racing the same trip see it as a duplicate.
pub(crate) const JUST_WRITTEN_GRACE: chrono::Duration = chrono::Duration::seconds(1);

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

async fn run(call: Call, input: Input) -> ToolResult {
    let Input { destination, departure_city, departure_date: from, return_date: to, purpose } = input;
    let new = NewOrder {
        user_id: call.user.clone(),
        fingerprint: fingerprint(&destination, &departure_city, &from.to_string(), &to.to_string(), &purpose),
        destination,
        departure_city,
        departure_date: from,
        return_date: to,
        purpose,
    };
    let store = &call.shared.store;
    let outcome =
        store.submit_order(&new).await.map_err(|e| e.to_tool_error("submitting the travel order"))?;
    match outcome {
        SubmitOutcome::Duplicate(existing) => {
            let now = Utc::now();
            let claimed = store
                .claim_unanswered(&call.user, existing.id, now - JUST_WRITTEN, now - JUST_WRITTEN_GRACE)
                .await
                .map_err(|e| e.to_tool_error("reading the travel order"))?;
            if claimed {
                // An earlier identical call wrote it and never answered: this call's success.
                let mut out = answer(&existing, false);
                out["recovered"] = json!(true);
                return Ok(ToolOutput::json(out));
            }
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
            // `stored` was read after the commit, by the statement that marked it answered.
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
