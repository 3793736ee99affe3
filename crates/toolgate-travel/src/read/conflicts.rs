//! `check_travel_order_conflicts`: does a proposed trip overlap the caller's active orders?

use std::sync::Arc;

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolgate_core::{Effect, FieldError, Tool, ToolOutput, ToolResult, ToolSpec};

use crate::shared::{Call, MAX_CITY, Shared, rule, tool};
use crate::store::policies::city_key;

/// Parameters of `check_travel_order_conflicts`.
#[derive(Debug, Deserialize, JsonSchema)]
struct Input {
    /// First day of the proposed trip, YYYY-MM-DD.
    #[schemars(with = "String", regex(pattern = toolgate_schema::DATE_PATTERN), extend("format" = "date"))]
    departure_date: NaiveDate,
    /// Last day of the proposed trip, YYYY-MM-DD, not before departure_date.
    #[schemars(with = "String", regex(pattern = toolgate_schema::DATE_PATTERN), extend("format" = "date"))]
    return_date: NaiveDate,
    /// Destination of the proposed trip; when given, an active order to the same place on overlapping dates is marked `same_destination`.
    #[schemars(length(min = 1, max = MAX_CITY), pattern(toolgate_schema::PLAIN_TEXT))]
    destination: Option<String>,
}

const DESCRIPTION: &str = "Check a proposed trip against the caller's active travel orders (DRAFT, SUBMITTED, APPROVED). \
Call it before submit_travel_approval, with the dates the user wants. Two trips conflict when their date ranges \
overlap (both ends inclusive). Returns `{has_conflicts, conflicts: [{order_id, status, destination, departure_date, \
return_date, same_destination}], checked: {departure_date, return_date}}`. It changes nothing. Dates are YYYY-MM-DD \
and real calendar dates; return_date may equal departure_date but not precede it. \
Example: {\"departure_date\": \"2027-03-10\", \"return_date\": \"2027-03-14\", \"destination\": \"Shanghai\"}.";

pub(crate) fn tool_for(shared: &Arc<Shared>) -> Arc<dyn Tool> {
    let spec = ToolSpec::new("check_travel_order_conflicts", DESCRIPTION, json!({}))
        .with_effect(Effect::Read)
        .with_role("member")
        .with_tags(["travel", "order"])
        .with_example(
            "a week in Shanghai",
            json!({"departure_date": "2027-03-10", "return_date": "2027-03-14", "destination": "Shanghai"}),
        );
    tool(shared, spec, Some(rules), run)
}

/// The trip ends on or after it starts (shared with submit_travel_approval).
pub(crate) fn dates_in_order(from: NaiveDate, to: NaiveDate) -> Option<FieldError> {
    (to < from).then(|| {
        rule(
            "return_date",
            "a date on or after departure_date",
            to.to_string(),
            format!("`return_date` {to} is before `departure_date` {from}; the trip must end on or after it starts"),
        )
    })
}

fn rules(input: &Input) -> Vec<FieldError> {
    dates_in_order(input.departure_date, input.return_date).into_iter().collect()
}

async fn run(call: Call, input: Input) -> ToolResult {
    let Input { departure_date: from, return_date: to, destination } = input;
    let rows = call
        .shared
        .store
        .overlapping_orders(&call.user, from, to)
        .await
        .map_err(|e| e.to_tool_error("checking conflicts"))?;
    let wanted = destination.as_deref().map(city_key);
    let conflicts: Vec<_> = rows
        .iter()
        .map(|o| {
            json!({
                "order_id": o.id,
                "status": o.status,
                "destination": o.destination,
                "departure_date": o.departure_date.to_string(),
                "return_date": o.return_date.to_string(),
                "same_destination": wanted.as_deref().is_some_and(|w| city_key(&o.destination) == w),
            })
        })
        .collect();
    Ok(ToolOutput::json(json!({
        "has_conflicts": !conflicts.is_empty(),
        "conflicts": conflicts,
        "checked": {"departure_date": from.to_string(), "return_date": to.to_string()},
    })))
}
