//! Domain vocabulary, declared once: each enum is the schema enum the tools
//! publish, the value serde reads and writes, and the TEXT the database
//! stores (`sqlx::Type`), so the three cannot drift apart.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Derives shared by every vocabulary enum. Variants carry no doc comments
/// (hence the `allow(missing_docs)`): documented variants would make schemars
/// publish a `oneOf` of constants instead of a plain `enum`, so each enum's
/// own doc names what every value means.
macro_rules! vocabulary {
    ($(#[$meta:meta])* $name:ident, $case:literal { $($variant:ident => $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, sqlx::Type)]
        #[serde(rename_all = $case)]
        #[sqlx(type_name = "text", rename_all = $case)]
        #[allow(missing_docs)]
        pub enum $name { $($variant,)+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The wire and database name.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

vocabulary! {
    /// The life of a travel order: DRAFT (only in seed data; a submit writes
    /// SUBMITTED at once), SUBMITTED (approval pending), APPROVED, REJECTED,
    /// COMPLETED (the trip took place), CANCELLED.
    OrderStatus, "SCREAMING_SNAKE_CASE" {
        Draft => "DRAFT",
        Submitted => "SUBMITTED",
        Approved => "APPROVED",
        Rejected => "REJECTED",
        Completed => "COMPLETED",
        Cancelled => "CANCELLED",
    }
}

impl OrderStatus {
    /// Whether the order still holds the trip (and its fingerprint): DRAFT, SUBMITTED or APPROVED.
    pub fn is_active(self) -> bool {
        matches!(self, OrderStatus::Draft | OrderStatus::Submitted | OrderStatus::Approved)
    }
}

vocabulary! {
    /// The state of a booking: RESERVED (held, cancelling is free), TICKETED
    /// (issued or paid: cancelling may cost a fee, so it needs
    /// confirmation), CANCELLED, USED (cannot be cancelled).
    BookingStatus, "SCREAMING_SNAKE_CASE" {
        Reserved => "RESERVED",
        Ticketed => "TICKETED",
        Cancelled => "CANCELLED",
        Used => "USED",
    }
}

impl BookingStatus {
    /// Whether the booking still holds a seat or room.
    pub fn is_active(self) -> bool {
        matches!(self, BookingStatus::Reserved | BookingStatus::Ticketed)
    }
}

vocabulary! {
    /// What a booking is for: a flight, a hotel stay or a train ride.
    BookingKind, "lowercase" {
        Flight => "flight",
        Hotel => "hotel",
        Train => "train",
    }
}

vocabulary! {
    /// The approval bound to an order: PENDING (awaiting the approver),
    /// APPROVED, REJECTED, or WITHDRAWN (the order was cancelled first).
    ApprovalStatus, "SCREAMING_SNAKE_CASE" {
        Pending => "PENDING",
        Approved => "APPROVED",
        Rejected => "REJECTED",
        Withdrawn => "WITHDRAWN",
    }
}

/// The traveller levels policies are written for, lowest first. A user
/// without a level row is `staff`.
pub const LEVELS: [&str; 3] = ["staff", "manager", "executive"];

/// The level of a user without an entry in `travel_user_levels`.
pub const DEFAULT_LEVEL: &str = "staff";

/// The tier of a city that is not in `travel_city_tiers`.
pub const DEFAULT_TIER: i64 = 3;
