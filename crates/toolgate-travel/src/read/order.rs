//! `query_travel_order`: one order of the caller, or a page of them by status.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolgate_core::{Effect, FieldError, Tool, ToolError, ToolOutput, ToolResult, ToolSpec};

use crate::model::OrderStatus;
use crate::shared::{Call, Paging, Shared, page_json, rule, tool};
use crate::store::bookings::BookingFilter;

/// Parameters of `query_travel_order`.
#[derive(Debug, Deserialize, JsonSchema)]
struct Input {
    /// One order by its id (from submit_travel_approval or an earlier listing); then give no listing filters (status, page, page_size). Omit it to list orders.
    #[schemars(range(min = 1))]
    order_id: Option<i64>,
    /// List only orders in this status. Not allowed together with order_id.
    status: Option<OrderStatus>,
    /// Listing pages (not allowed together with order_id).
    #[serde(flatten)]
    paging: Paging,
}

const DESCRIPTION: &str = "Look up the caller's travel orders. \
Call it to show one order by `order_id` (from submit_travel_approval or an earlier listing), or to list the caller's \
orders newest first, optionally only one `status` (DRAFT, SUBMITTED, APPROVED, REJECTED, COMPLETED, CANCELLED). \
Returns, for one order: `{order, bookings}`; for a listing: `{orders: [...], page: {page, page_size, total, has_more}}`. \
An order has order_id, status, destination, departure_city, departure_date and return_date (YYYY-MM-DD), purpose, \
process_instance_id and approval_status. Listings default to page 1 with 10 orders (page_size at most 50). \
Only the caller's own orders exist for this tool: any other id answers NOT_FOUND. \
Examples: {\"order_id\": 42} or {\"status\": \"APPROVED\", \"page\": 1, \"page_size\": 10}.";

/// Orders as a compact table; the structured result is unchanged.
const TEMPLATE: &str = "{% if result.order %}Order {{ result.order.order_id }}: {{ result.order.departure_city }} → \
{{ result.order.destination }}, {{ result.order.departure_date }} to {{ result.order.return_date }}, \
{{ result.order.status }} (approval {{ result.order.approval_status }}). Purpose: {{ result.order.purpose }}.\
{% if result.bookings %}\n\n| booking | kind | status | description |\n|---|---|---|---|\
{% for b in result.bookings %}\n| {{ b.booking_id }} | {{ b.kind }} | {{ b.status }} | {{ b.description }} |{% endfor %}\
{% endif %}{% else %}{{ result.page.total }} order(s), page {{ result.page.page }}.\
{% if result.orders %}\n\n| order | status | route | dates |\n|---|---|---|---|\
{% for o in result.orders %}\n| {{ o.order_id }} | {{ o.status }} | {{ o.departure_city }} → {{ o.destination }} | \
{{ o.departure_date }} – {{ o.return_date }} |{% endfor %}{% endif %}{% endif %}";

pub(crate) fn tool_for(shared: &Arc<Shared>) -> Arc<dyn Tool> {
    let spec = ToolSpec::new("query_travel_order", DESCRIPTION, json!({}))
        .with_effect(Effect::Read)
        .with_role("member")
        .with_tags(["travel", "order"])
        .with_result_template(TEMPLATE)
        .with_example("one order", json!({"order_id": 42}))
        .with_example(
            "approved orders, first page",
            json!({"status": "APPROVED", "page": 1, "page_size": 10}),
        );
    tool(shared, spec, Some(rules), run)
}

/// An order id excludes the listing filters.
fn rules(input: &Input) -> Vec<FieldError> {
    if input.order_id.is_none() {
        return Vec::new();
    }
    let given = [
        ("status", input.status.map(|s| json!(s))),
        ("page", input.paging.page.map(|p| json!(p))),
        ("page_size", input.paging.page_size.map(|p| json!(p))),
    ];
    given
        .into_iter()
        .filter_map(|(name, value)| {
            value.map(|v| {
                rule(
                    name,
                    "absent when order_id is given",
                    v,
                    format!("`{name}` filters a listing; give either order_id alone or the listing filters"),
                )
            })
        })
        .collect()
}

async fn run(call: Call, input: Input) -> ToolResult {
    let (store, user) = (&call.shared.store, call.user.as_str());
    if let Some(order_id) = input.order_id {
        let order =
            store.get_order(user, order_id).await.map_err(|e| e.to_tool_error("reading the order"))?;
        let Some(order) = order else {
            return Err(ToolError::not_found(format!(
                "no travel order {order_id} among your orders; list your orders with query_travel_order without order_id"
            )));
        };
        let filter = BookingFilter { order_id: Some(order_id), ..Default::default() };
        let (bookings, _) = store
            .list_bookings(user, &filter, 50, 0)
            .await
            .map_err(|e| e.to_tool_error("reading the order's bookings"))?;
        let bookings: Vec<_> = bookings.iter().map(|b| b.to_brief()).collect();
        return Ok(ToolOutput::json(json!({"order": order.to_json(), "bookings": bookings})));
    }
    let (page, size, offset) = input.paging.resolve();
    let (rows, total) = store
        .list_orders(user, input.status, size, offset)
        .await
        .map_err(|e| e.to_tool_error("listing orders"))?;
    let orders: Vec<_> = rows.iter().map(|o| o.to_json()).collect();
    let page = page_json(page, size, total, orders.len());
    Ok(ToolOutput::json(json!({"orders": orders, "page": page})))
}
