//! `check_travel_order_conflicts`: does a proposed trip overlap the caller's active orders?

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde_json::json;
use tool_core::{Effect, Params, ToolError, ToolOutput, ToolResult, ToolSpec};

use crate::common::{MAX_CITY, Shared, text};
use crate::schema::schema_for;
use crate::store::policies::city_key;

/// Parameters of `check_travel_order_conflicts`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)] // schema only: values are read with tool_core::Params
struct Input {
    /// First day of the proposed trip, YYYY-MM-DD.
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"), extend("format" = "date"))]
    departure_date: String,
    /// Last day of the proposed trip, YYYY-MM-DD, not before departure_date.
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"), extend("format" = "date"))]
    return_date: String,
    /// Destination of the proposed trip; when given, an active order to the same place on overlapping dates is marked `same_destination`.
    #[schemars(length(min = 1, max = 100))]
    destination: Option<String>,
}

const DESCRIPTION: &str = "Check a proposed trip against the caller's active travel orders (DRAFT, SUBMITTED, APPROVED). \
Call it before submit_travel_approval, with the dates the user wants. Two trips conflict when their date ranges \
overlap (both ends inclusive). Returns `{has_conflicts, conflicts: [{order_id, status, destination, departure_date, \
return_date, same_destination}], checked: {departure_date, return_date}}`. It changes nothing. Dates are YYYY-MM-DD \
and real calendar dates; return_date may equal departure_date but not precede it. \
Example: {\"departure_date\": \"2027-03-10\", \"return_date\": \"2027-03-14\", \"destination\": \"Shanghai\"}.";

pub(crate) fn spec() -> ToolSpec {
    ToolSpec::new("check_travel_order_conflicts", DESCRIPTION, schema_for::<Input>())
        .with_effect(Effect::Read)
        .with_role("member")
        .with_tags(["travel", "order"])
        .with_example(
            "a week in Shanghai",
            json!({"departure_date": "2027-03-10", "return_date": "2027-03-14", "destination": "Shanghai"}),
        )
}

/// Checked parameters.
#[derive(Debug)]
pub(crate) struct Parsed {
    from: NaiveDate,
    to: NaiveDate,
    destination: Option<String>,
}

pub(crate) fn parse(mut p: Params<'_>) -> Result<Parsed, ToolError> {
    let from = p.required_date("departure_date");
    let to = p.required_date("return_date");
    let destination = text(&mut p, "destination", false, MAX_CITY);
    if let (Some(from), Some(to)) = (from, to) {
        p.check(
            from <= to,
            "return_date",
            "a date on or after departure_date",
            format!("`return_date` {to} is before `departure_date` {from}; the trip must end on or after it starts"),
        );
    }
    p.finish()?;
    let (Some(from), Some(to)) = (from, to) else { return Err(ToolError::internal()) };
    Ok(Parsed { from, to, destination: destination.map(str::to_string) })
}

pub(crate) async fn run(shared: &Shared, user: &str, input: Parsed) -> ToolResult {
    let Parsed { from, to, destination } = input;
    let rows = shared
        .store
        .overlapping_orders(user, from, to)
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
