//! Read tools: they never change anything (`Effect::Read`) and see only the caller's records.

pub(crate) mod booking;
pub(crate) mod conflicts;
pub(crate) mod order;
pub(crate) mod policy;
pub(crate) mod weather;

use schemars::JsonSchema;

/// An order status as a schema enum.
#[derive(JsonSchema)]
#[schemars(rename_all = "SCREAMING_SNAKE_CASE")]
#[allow(dead_code)] // schema only
pub(crate) enum OrderStatusName {
    Draft,
    Submitted,
    Approved,
    Rejected,
    Completed,
    Cancelled,
}

/// A booking status as a schema enum.
#[derive(JsonSchema)]
#[schemars(rename_all = "SCREAMING_SNAKE_CASE")]
#[allow(dead_code)] // schema only
pub(crate) enum BookingStatusName {
    Reserved,
    Ticketed,
    Cancelled,
    Used,
}

/// A booking kind as a schema enum.
#[derive(JsonSchema)]
#[schemars(rename_all = "lowercase")]
#[allow(dead_code)] // schema only
pub(crate) enum BookingKindName {
    Flight,
    Hotel,
    Train,
}
