//! `query_booking_record`: the caller's bookings, of one order or all of them.

use schemars::JsonSchema;
use serde_json::json;
use tool_core::{Effect, Params, ToolError, ToolOutput, ToolResult, ToolSpec};

use super::{BookingKindName, BookingStatusName};
use crate::common::{Shared, page_json, paging};
use crate::model::{BOOKING_KINDS, BookingStatus};
use crate::schema::schema_for;
use crate::store::bookings::BookingFilter;

/// Parameters of `query_booking_record`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)] // schema only: values are read with tool_core::Params
struct Input {
    /// Only bookings of this order (one of the caller's orders). Omit for all of the caller's bookings.
    #[schemars(range(min = 1))]
    order_id: Option<i64>,
    /// Only this kind of booking.
    kind: Option<BookingKindName>,
    /// Only bookings in this status.
    status: Option<BookingStatusName>,
    /// Page number, from 1 (default 1).
    #[schemars(range(min = 1, max = 10000))]
    page: Option<i64>,
    /// Bookings per page, 1 to 50 (default 10).
    #[schemars(range(min = 1, max = 50))]
    page_size: Option<i64>,
}

const DESCRIPTION: &str = "List the caller's bookings (flight, hotel, train tickets and rooms). \
Call it to see what is booked for one order (`order_id`) or for the caller overall, e.g. before cancelling a booking \
or after cancelling an order. Optional filters: `kind` (flight, hotel, train) and `status` (RESERVED = held, free to \
cancel; TICKETED = issued or paid, cancelling may cost a fee; CANCELLED; USED). \
Returns `{bookings: [...], page: {page, page_size, total, has_more}}`, trips in date order; each booking has \
booking_id, order_id, kind, status, provider, reference, description, start_date and end_date (YYYY-MM-DD), price \
and currency. Pages default to 10 bookings (page_size at most 50). An order that is not the caller's answers NOT_FOUND. \
Example: {\"order_id\": 42, \"kind\": \"flight\"}.";

pub(crate) fn spec() -> ToolSpec {
    ToolSpec::new("query_booking_record", DESCRIPTION, schema_for::<Input>())
        .with_effect(Effect::Read)
        .with_role("member")
        .with_tags(["travel", "booking"])
        .with_example("flights of an order", json!({"order_id": 42, "kind": "flight"}))
        .with_example("all active tickets", json!({"status": "TICKETED"}))
}

/// Checked parameters.
#[derive(Debug)]
pub(crate) struct Parsed {
    order_id: Option<i64>,
    kind: Option<String>,
    status: Option<String>,
    page: i64,
    size: i64,
    offset: i64,
}

pub(crate) fn parse(mut p: Params<'_>) -> Result<Parsed, ToolError> {
    let order_id = p.optional_int("order_id", 1, i64::MAX);
    let kind = p.optional_enum("kind", &BOOKING_KINDS).map(str::to_string);
    let status = p.optional_enum("status", &BookingStatus::names()).map(str::to_string);
    let (page, size, offset) = paging(&mut p);
    p.finish()?;
    Ok(Parsed { order_id, kind, status, page, size, offset })
}

pub(crate) async fn run(shared: &Shared, user: &str, input: Parsed) -> ToolResult {
    let Parsed { order_id, kind, status, page, size, offset } = input;
    let store = &shared.store;
    if let Some(order_id) = order_id {
        let order =
            store.get_order(user, order_id).await.map_err(|e| e.to_tool_error("reading the order"))?;
        if order.is_none() {
            return Err(ToolError::not_found(format!(
                "no travel order {order_id} among your orders; list your orders with query_travel_order"
            )));
        }
    }
    let filter = BookingFilter { order_id, kind: kind.as_deref(), status: status.as_deref() };
    let (rows, total) = store
        .list_bookings(user, &filter, size, offset)
        .await
        .map_err(|e| e.to_tool_error("listing bookings"))?;
    let bookings: Vec<_> = rows.iter().map(|b| b.to_json()).collect();
    let page = page_json(page, size, total, bookings.len());
    Ok(ToolOutput::json(json!({"bookings": bookings, "page": page})))
}
