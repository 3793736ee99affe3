//! The itinerary planner: `plan_itinerary` computes every outbound × hotel ×
//! return combination and keeps the full plan in the plan store; the model
//! gets a compact summary and a `plan_id`, and `review_planner_result`
//! judges the proposals from the stored plan.

pub(crate) mod candidates;
pub(crate) mod planner;
pub(crate) mod resource;
pub(crate) mod tools;
