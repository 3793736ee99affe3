//! `cancel_travel_order` and `cancel_booking`: confirm dangerous transitions,
//! refuse impossible ones naming the current status, report what is left
//! behind, and read the CANCELLED state back.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolgate_core::{Effect, ErrorCode, Signal, Tool, ToolError, ToolOutput, ToolResult, ToolSpec};

use super::verify_failed;
use crate::model::{BookingStatus, OrderStatus};
use crate::shared::{Call, Shared, tool};
use crate::store::orders::CancelOutcome;

/// Parameters of `cancel_travel_order`.
#[derive(Debug, Deserialize, JsonSchema)]
struct OrderInput {
    /// The order to cancel (one of the caller's orders).
    #[schemars(range(min = 1))]
    order_id: i64,
    /// Set to true only after the user confirmed cancelling an APPROVED order (default false).
    force: Option<bool>,
}

/// Parameters of `cancel_booking`.
#[derive(Debug, Deserialize, JsonSchema)]
struct BookingInput {
    /// The booking to cancel (one of the caller's bookings).
    #[schemars(range(min = 1))]
    booking_id: i64,
    /// Set to true only after the user confirmed cancelling a TICKETED booking, which may cost a fee (default false).
    force: Option<bool>,
}

const ORDER_DESCRIPTION: &str = "Cancel one of the caller's travel orders. Call it when the user asks to cancel a \
trip, after showing the order (query_travel_order). DRAFT and SUBMITTED orders are cancelled at once (the pending \
approval is withdrawn). An APPROVED order is not changed unless `force` is true: the first call answers \
`cancelled: false` with a `need_confirm` signal; ask the user, then call again with force=true. REJECTED or \
COMPLETED orders cannot be cancelled (CONFLICT naming the current status). Cancelling an already cancelled order \
succeeds with `already_cancelled: true`. Returns `{order_id, status, cancelled, already_cancelled}`; bookings still \
active on the order are listed in a `related_items` signal (cancel them with cancel_booking if the user wants). \
Example: {\"order_id\": 42} then, if confirmed, {\"order_id\": 42, \"force\": true}.";

const BOOKING_DESCRIPTION: &str = "Cancel one of the caller's bookings (flight, hotel or train). Call it when the \
user asks to cancel a ticket or room, after showing it (query_booking_record). RESERVED bookings are cancelled at \
once. A TICKETED booking (issued or paid; a fee may apply) is not changed unless `force` is true: the first call \
answers `cancelled: false` with a `need_confirm` signal; ask the user, then call again with force=true. A USED \
booking cannot be cancelled (CONFLICT naming the current status). Cancelling an already cancelled booking succeeds \
with `already_cancelled: true`. Returns `{booking_id, status, cancelled, already_cancelled}`; other bookings still \
active on the same order are listed in a `related_items` signal. Example: {\"booking_id\": 7} then, if confirmed, \
{\"booking_id\": 7, \"force\": true}.";

const CANCEL_TEMPLATE: &str = "{% if result.cancelled %}{% if result.already_cancelled %}It was already \
cancelled; nothing changed.{% else %}Cancelled (was {{ result.previous_status }}).{% endif %}{% else %}Not cancelled: \
status {{ result.status }}, confirmation needed.{% endif %}";

pub(crate) fn order_tool(shared: &Arc<Shared>) -> Arc<dyn Tool> {
    let spec = ToolSpec::new("cancel_travel_order", ORDER_DESCRIPTION, json!({}))
        .with_effect(Effect::Write { idempotent: true })
        .with_role("member")
        .with_tags(["travel", "order"])
        .with_result_template(format!("Order {{{{ result.order_id }}}}: {CANCEL_TEMPLATE}"))
        .with_example("cancel a submitted order", json!({"order_id": 42}))
        .with_example(
            "cancel an approved order after the user confirmed",
            json!({"order_id": 42, "force": true}),
        );
    tool(shared, spec, None, |call, input: OrderInput| {
        run_order(call, input.order_id, input.force.unwrap_or(false))
    })
}

pub(crate) fn booking_tool(shared: &Arc<Shared>) -> Arc<dyn Tool> {
    let spec = ToolSpec::new("cancel_booking", BOOKING_DESCRIPTION, json!({}))
        .with_effect(Effect::Write { idempotent: true })
        .with_role("member")
        .with_tags(["travel", "booking"])
        .with_result_template(format!("Booking {{{{ result.booking_id }}}}: {CANCEL_TEMPLATE}"))
        .with_example("cancel a reservation", json!({"booking_id": 7}))
        .with_example(
            "cancel an issued ticket after the user confirmed",
            json!({"booking_id": 7, "force": true}),
        );
    tool(shared, spec, None, |call, input: BookingInput| {
        run_booking(call, input.booking_id, input.force.unwrap_or(false))
    })
}

fn conflict(what: &str, id: i64, status: &str, allowed: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Conflict,
        format!(
            "{what} {id} is {status} and cannot be cancelled; only {allowed} can be. Nothing was changed."
        ),
    )
    .with_details(json!({"id": id, "current_status": status}))
}

async fn run_order(call: Call, order_id: i64, force: bool) -> ToolResult {
    let (store, user) = (&call.shared.store, call.user.as_str());
    let outcome = store
        .cancel_order(user, order_id, force)
        .await
        .map_err(|e| e.to_tool_error("cancelling the order"))?;
    let (order, already) = match outcome {
        CancelOutcome::NotFound => {
            return Err(ToolError::not_found(format!(
                "no travel order {order_id} among your orders; list them with query_travel_order"
            )));
        }
        CancelOutcome::Conflict(order) => {
            return Err(conflict(
                "order",
                order_id,
                order.status.as_str(),
                "DRAFT, SUBMITTED or APPROVED orders",
            ));
        }
        CancelOutcome::NeedConfirm(order) => {
            let out = json!({"order_id": order_id, "status": order.status, "cancelled": false, "already_cancelled": false});
            return Ok(ToolOutput::json(out).with_signal(Signal::NeedConfirm {
                message: format!(
                    "order {order_id} ({} to {}, {} to {}) is already APPROVED; cancelling withdraws the approval and \
                     cannot be undone",
                    order.departure_city, order.destination, order.departure_date, order.return_date
                ),
                confirm_param: "force".into(),
                confirm_value: json!(true),
            }));
        }
        CancelOutcome::AlreadyCancelled(order) => (order, true),
        CancelOutcome::Cancelled(order) => (order, false),
    };
    // Read the new state back in a fresh query.
    let stored = store
        .get_order(user, order_id)
        .await
        .map_err(|e| e.to_tool_error("reading back the cancelled order"))?;
    match &stored {
        Some(s) if s.status == OrderStatus::Cancelled => {}
        Some(s) => {
            return Err(verify_failed(
                "the cancellation",
                s.to_json(),
                vec![json!({"field": "status", "expected": OrderStatus::Cancelled, "actual": s.status})],
            ));
        }
        None => return Err(verify_failed("the cancellation", json!({"order_id": order.id}), Vec::new())),
    }
    let left = store
        .active_bookings_of_order(user, order_id)
        .await
        .map_err(|e| e.to_tool_error("reading the order's bookings"))?;
    let mut out = ToolOutput::json(json!({
        "order_id": order_id,
        "status": OrderStatus::Cancelled,
        "cancelled": true,
        "already_cancelled": already,
        "previous_status": if already { None } else { Some(order.status) },
    }));
    if !left.is_empty() {
        out = out.with_signal(Signal::RelatedItems {
            message: format!(
                "{} booking(s) of order {order_id} are still active and were not cancelled; ask the user whether to \
                 cancel them with cancel_booking",
                left.len()
            ),
            items: left.iter().map(|b| b.to_brief()).collect(),
        });
    }
    Ok(out)
}

async fn run_booking(call: Call, booking_id: i64, force: bool) -> ToolResult {
    let (store, user) = (&call.shared.store, call.user.as_str());
    let outcome = store
        .cancel_booking(user, booking_id, force)
        .await
        .map_err(|e| e.to_tool_error("cancelling the booking"))?;
    let (booking, already) = match outcome {
        CancelOutcome::NotFound => {
            return Err(ToolError::not_found(format!(
                "no booking {booking_id} among your bookings; list them with query_booking_record"
            )));
        }
        CancelOutcome::Conflict(b) => {
            return Err(conflict("booking", booking_id, b.status.as_str(), "RESERVED or TICKETED bookings"));
        }
        CancelOutcome::NeedConfirm(b) => {
            let out = json!({"booking_id": booking_id, "status": b.status, "cancelled": false, "already_cancelled": false});
            return Ok(ToolOutput::json(out).with_signal(Signal::NeedConfirm {
                message: format!(
                    "booking {booking_id} ({} {}: {}) is TICKETED: it is issued or paid and cancelling may cost a \
                     fee",
                    b.kind, b.provider, b.description
                ),
                confirm_param: "force".into(),
                confirm_value: json!(true),
            }));
        }
        CancelOutcome::AlreadyCancelled(b) => (b, true),
        CancelOutcome::Cancelled(b) => (b, false),
    };
    let stored = store
        .get_booking(user, booking_id)
        .await
        .map_err(|e| e.to_tool_error("reading back the cancelled booking"))?;
    match &stored {
        Some(s) if s.status == BookingStatus::Cancelled => {}
        Some(s) => {
            return Err(verify_failed(
                "the cancellation",
                s.to_json(),
                vec![json!({"field": "status", "expected": BookingStatus::Cancelled, "actual": s.status})],
            ));
        }
        None => return Err(verify_failed("the cancellation", json!({"booking_id": booking.id}), Vec::new())),
    }
    let mut out = ToolOutput::json(json!({
        "booking_id": booking_id,
        "status": BookingStatus::Cancelled,
        "cancelled": true,
        "already_cancelled": already,
        "previous_status": if already { None } else { Some(booking.status) },
    }));
    if let Some(order_id) = booking.order_id {
        let left = store
            .active_bookings_of_order(user, order_id)
            .await
            .map_err(|e| e.to_tool_error("reading the order's bookings"))?;
        if !left.is_empty() {
            out = out.with_signal(Signal::RelatedItems {
                message: format!(
                    "order {order_id} still has {} active booking(s); tell the user, and cancel the order itself \
                     with cancel_travel_order if the whole trip is off",
                    left.len()
                ),
                items: left.iter().map(|b| b.to_brief()).collect(),
            });
        }
    }
    Ok(out)
}
