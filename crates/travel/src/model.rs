//! Domain vocabulary: order and booking statuses and the transitions allowed between them.

use std::fmt;

/// The life of a travel order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrderStatus {
    /// Created, not yet submitted (only ever visible inside the submit transaction, or in seed data).
    Draft,
    /// Submitted for approval; an approval process is pending.
    Submitted,
    /// Approved by the approver.
    Approved,
    /// Rejected by the approver.
    Rejected,
    /// The trip took place.
    Completed,
    /// Cancelled by the traveller.
    Cancelled,
}

impl OrderStatus {
    /// Every status, in life-cycle order.
    pub const ALL: [OrderStatus; 6] = [
        OrderStatus::Draft,
        OrderStatus::Submitted,
        OrderStatus::Approved,
        OrderStatus::Rejected,
        OrderStatus::Completed,
        OrderStatus::Cancelled,
    ];

    /// The wire and database name, e.g. `SUBMITTED`.
    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Draft => "DRAFT",
            OrderStatus::Submitted => "SUBMITTED",
            OrderStatus::Approved => "APPROVED",
            OrderStatus::Rejected => "REJECTED",
            OrderStatus::Completed => "COMPLETED",
            OrderStatus::Cancelled => "CANCELLED",
        }
    }

    /// Parse a wire name.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// The wire names of every status.
    pub fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|s| s.as_str()).collect()
    }

    /// Whether the order still holds the trip (and its fingerprint): DRAFT, SUBMITTED or APPROVED.
    pub fn is_active(self) -> bool {
        matches!(self, OrderStatus::Draft | OrderStatus::Submitted | OrderStatus::Approved)
    }
}

impl fmt::Display for OrderStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The state of a booking (a ticket or a room).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BookingStatus {
    /// Held, not paid: cancelling is free.
    Reserved,
    /// Ticket issued or room paid: cancelling may cost a fee, so it needs confirmation.
    Ticketed,
    /// Cancelled.
    Cancelled,
    /// Already used: cannot be cancelled.
    Used,
}

impl BookingStatus {
    /// Every status.
    pub const ALL: [BookingStatus; 4] =
        [BookingStatus::Reserved, BookingStatus::Ticketed, BookingStatus::Cancelled, BookingStatus::Used];

    /// The wire and database name.
    pub fn as_str(self) -> &'static str {
        match self {
            BookingStatus::Reserved => "RESERVED",
            BookingStatus::Ticketed => "TICKETED",
            BookingStatus::Cancelled => "CANCELLED",
            BookingStatus::Used => "USED",
        }
    }

    /// Parse a wire name.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// The wire names of every status.
    pub fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|s| s.as_str()).collect()
    }

    /// Whether the booking still holds a seat or room.
    pub fn is_active(self) -> bool {
        matches!(self, BookingStatus::Reserved | BookingStatus::Ticketed)
    }
}

impl fmt::Display for BookingStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a booking is for.
pub const BOOKING_KINDS: [&str; 3] = ["flight", "hotel", "train"];

/// The traveller levels policies are written for, lowest first. A user
/// without a level row is `staff`.
pub const LEVELS: [&str; 3] = ["staff", "manager", "executive"];

/// The level of a user without an entry in `travel_user_levels`.
pub const DEFAULT_LEVEL: &str = "staff";

/// The tier of a city that is not in `travel_city_tiers`.
pub const DEFAULT_TIER: i64 = 3;
