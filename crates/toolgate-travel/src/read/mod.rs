//! Read tools: they never change anything (`Effect::Read`) and see only the caller's records.

pub(crate) mod booking;
pub(crate) mod conflicts;
pub(crate) mod order;
pub(crate) mod policy;
pub(crate) mod weather;
