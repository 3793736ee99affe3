//! `query_travel_order`: one order of the caller, or a page of them by status.

use schemars::JsonSchema;
use serde_json::json;
use tool_core::{Effect, Params, ToolError, ToolOutput, ToolResult, ToolSpec};

use super::OrderStatusName;
use crate::common::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, Shared, page_json};
use crate::model::OrderStatus;
use crate::schema::schema_for;

/// Parameters of `query_travel_order`.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)] // schema only: values are read with tool_core::Params, which reports every problem at once
struct Input {
    /// One order by its id (from submit_travel_approval or an earlier listing). Omit it to list orders.
    #[schemars(range(min = 1))]
    order_id: Option<i64>,
    /// List only orders in this status. Not allowed together with order_id.
    status: Option<OrderStatusName>,
    /// Page number, from 1 (default 1). Not allowed together with order_id.
    #[schemars(range(min = 1, max = 10000))]
    page: Option<i64>,
    /// Orders per page, 1 to 50 (default 10). Not allowed together with order_id.
    #[schemars(range(min = 1, max = 50))]
    page_size: Option<i64>,
}

const DESCRIPTION: &str = "Look up the caller's travel orders. \
Call it to show one order by `order_id` (from submit_travel_approval or an earlier listing), or to list the caller's \
orders newest first, optionally only one `status` (DRAFT, SUBMITTED, APPROVED, REJECTED, COMPLETED, CANCELLED). \
Returns, for one order: `{order, bookings}`; for a listing: `{orders: [...], page: {page, page_size, total, has_more}}`. \
An order has order_id, status, destination, departure_city, departure_date and return_date (YYYY-MM-DD), purpose, \
process_instance_id and approval_status. Listings default to page 1 with 10 orders (page_size at most 50). \
Only the caller's own orders exist for this tool: any other id answers NOT_FOUND. \
Examples: {\"order_id\": 42} or {\"status\": \"APPROVED\", \"page\": 1, \"page_size\": 10}.";

pub(crate) fn spec() -> ToolSpec {
    ToolSpec::new("query_travel_order", DESCRIPTION, schema_for::<Input>())
        .with_effect(Effect::Read)
        .with_role("member")
        .with_tags(["travel", "order"])
        .with_example("one order", json!({"order_id": 42}))
        .with_example(
            "approved orders, first page",
            json!({"status": "APPROVED", "page": 1, "page_size": 10}),
        )
}

/// Checked parameters.
#[derive(Debug)]
pub(crate) struct Parsed {
    order_id: Option<i64>,
    status: Option<String>,
    page: i64,
    size: i64,
}

pub(crate) fn parse(mut p: Params<'_>) -> Result<Parsed, ToolError> {
    let order_id = p.optional_int("order_id", 1, i64::MAX);
    let status = p.optional_enum("status", &OrderStatus::names());
    let page = p.optional_int("page", 1, 10_000);
    let size = p.optional_int("page_size", 1, MAX_PAGE_SIZE);
    if order_id.is_some() {
        // Only fields that are valid on their own: a bad one is already reported.
        let given = [("status", status.is_some()), ("page", page.is_some()), ("page_size", size.is_some())];
        for (other, _) in given.into_iter().filter(|(_, valid)| *valid) {
            p.error(
                other,
                "absent when order_id is given",
                format!("`{other}` filters a listing; give either order_id alone or the listing filters"),
            );
        }
    }
    p.finish()?;
    Ok(Parsed {
        order_id,
        status: status.map(str::to_string),
        page: page.unwrap_or(1),
        size: size.unwrap_or(DEFAULT_PAGE_SIZE),
    })
}

pub(crate) async fn run(shared: &Shared, user: &str, input: Parsed) -> ToolResult {
    let Parsed { order_id, status, page, size } = input;
    let offset = (page - 1) * size;
    let store = &shared.store;
    if let Some(order_id) = order_id {
        let order =
            store.get_order(user, order_id).await.map_err(|e| e.to_tool_error("reading the order"))?;
        let Some(order) = order else {
            return Err(ToolError::not_found(format!(
                "no travel order {order_id} among your orders; list your orders with query_travel_order without order_id"
            )));
        };
        let bookings = store
            .list_bookings(
                user,
                &crate::store::bookings::BookingFilter { order_id: Some(order_id), ..Default::default() },
                50,
                0,
            )
            .await
            .map_err(|e| e.to_tool_error("reading the order's bookings"))?
            .0;
        let bookings: Vec<_> = bookings.iter().map(|b| b.to_brief()).collect();
        return Ok(ToolOutput::json(json!({"order": order.to_json(), "bookings": bookings})));
    }
    let (rows, total) = store
        .list_orders(user, status.as_deref(), size, offset)
        .await
        .map_err(|e| e.to_tool_error("listing orders"))?;
    let orders: Vec<_> = rows.iter().map(|o| o.to_json()).collect();
    let page = page_json(page, size, total, orders.len());
    Ok(ToolOutput::json(json!({"orders": orders, "page": page})))
}
