//! `query_booking_record`: the caller's bookings, of one order or all of them.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolgate_core::{Effect, Tool, ToolError, ToolOutput, ToolResult, ToolSpec};

use crate::model::{BookingKind, BookingStatus};
use crate::shared::{Call, Paging, Shared, page_json, tool};
use crate::store::bookings::BookingFilter;

/// Parameters of `query_booking_record`.
#[derive(Debug, Deserialize, JsonSchema)]
struct Input {
    /// Only bookings of this order (one of the caller's orders). Omit for all of the caller's bookings.
    #[schemars(range(min = 1))]
    order_id: Option<i64>,
    /// Only this kind of booking.
    kind: Option<BookingKind>,
    /// Only bookings in this status.
    status: Option<BookingStatus>,
    /// Listing pages.
    #[serde(flatten)]
    paging: Paging,
}

const DESCRIPTION: &str = "List the caller's bookings (flight, hotel, train tickets and rooms). \
Call it to see what is booked for one order (`order_id`) or for the caller overall, e.g. before cancelling a booking \
or after cancelling an order. Optional filters: `kind` (flight, hotel, train) and `status` (RESERVED = held, free to \
cancel; TICKETED = issued or paid, cancelling may cost a fee; CANCELLED; USED). \
Returns `{bookings: [...], page: {page, page_size, total, has_more}}`, trips in date order; each booking has \
booking_id, order_id, kind, status, provider, reference, description, start_date and end_date (YYYY-MM-DD), price \
and currency. Pages default to 10 bookings (page_size at most 50). An order that is not the caller's answers NOT_FOUND. \
Example: {\"order_id\": 42, \"kind\": \"flight\"}.";

/// Bookings as a compact table; the structured result is unchanged.
const TEMPLATE: &str = "{{ result.page.total }} booking(s), page {{ result.page.page }}.{% if result.bookings %}\n\n\
| booking | order | kind | status | description | dates | price |\n|---|---|---|---|---|---|---|\
{% for b in result.bookings %}\n| {{ b.booking_id }} | {{ b.order_id }} | {{ b.kind }} | {{ b.status }} | \
{{ b.description }} | {{ b.start_date }} – {{ b.end_date }} | {{ b.price }} {{ b.currency }} |{% endfor %}{% endif %}";

pub(crate) fn tool_for(shared: &Arc<Shared>) -> Arc<dyn Tool> {
    let spec = ToolSpec::new("query_booking_record", DESCRIPTION, json!({}))
        .with_effect(Effect::Read)
        .with_role("member")
        .with_tags(["travel", "booking"])
        .with_result_template(TEMPLATE)
        .with_example("flights of an order", json!({"order_id": 42, "kind": "flight"}))
        .with_example("all active tickets", json!({"status": "TICKETED"}));
    tool(shared, spec, None, run)
}

async fn run(call: Call, input: Input) -> ToolResult {
    let Input { order_id, kind, status, paging } = input;
    let (store, user) = (&call.shared.store, call.user.as_str());
    if let Some(order_id) = order_id {
        let order =
            store.get_order(user, order_id).await.map_err(|e| e.to_tool_error("reading the order"))?;
        if order.is_none() {
            return Err(ToolError::not_found(format!(
                "no travel order {order_id} among your orders; list your orders with query_travel_order"
            )));
        }
    }
    let (page, size, offset) = paging.resolve();
    let filter = BookingFilter { order_id, kind, status };
    let (rows, total) = store
        .list_bookings(user, &filter, size, offset)
        .await
        .map_err(|e| e.to_tool_error("listing bookings"))?;
    let bookings: Vec<_> = rows.iter().map(|b| b.to_json()).collect();
    let page = page_json(page, size, total, bookings.len());
    Ok(ToolOutput::json(json!({"bookings": bookings, "page": page})))
}
