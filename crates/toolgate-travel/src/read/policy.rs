//! `query_travel_policy`: hotel cap and allowed transport classes for a city, at the caller's level.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_core::{Effect, Tool, ToolError, ToolOutput, ToolResult, ToolSpec};

use crate::model::{DEFAULT_LEVEL, DEFAULT_TIER};
use crate::shared::{Call, MAX_CITY, Shared, tool};
use crate::store::{PolicyRow, Store};

/// Parameters of `query_travel_policy`.
#[derive(Debug, Deserialize, JsonSchema)]
struct Input {
    /// The destination city, e.g. "Shanghai" (case and extra spaces do not matter).
    #[schemars(length(min = 1, max = MAX_CITY), pattern(toolgate_schema::PLAIN_TEXT))]
    city: String,
}

const DESCRIPTION: &str = "Get the travel policy that applies to the caller for a destination city: the most the \
hotel may cost per night and the transport classes allowed (flight and train). Call it before planning or submitting \
a trip. Cities are grouped in tiers (1 = most expensive); a city not on the list is tier 3. The caller's level \
(staff, manager, executive) comes from the signed-in user, never from parameters. Returns `{city, city_listed, tier, \
level, hotel_cap_per_night, currency, allowed_classes: {flight: [...], train: [...]}}`. NOT_FOUND when no policy is \
configured for that tier and level. Example: {\"city\": \"Shanghai\"}.";

pub(crate) fn tool_for(shared: &Arc<Shared>) -> Arc<dyn Tool> {
    let spec = ToolSpec::new("query_travel_policy", DESCRIPTION, json!({}))
        .with_effect(Effect::Read)
        .with_role("member")
        .with_tags(["travel", "policy"])
        .with_example("policy for Shanghai", json!({"city": "Shanghai"}));
    tool(shared, spec, None, run)
}

/// The policy that applies to a user for a city.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedPolicy {
    pub(crate) city: String,
    pub(crate) city_listed: bool,
    pub(crate) policy: PolicyRow,
}

impl ResolvedPolicy {
    pub(crate) fn to_json(&self) -> Value {
        let mut v = self.policy.to_json();
        if let Value::Object(map) = &mut v {
            map.insert("city".into(), json!(self.city));
            map.insert("city_listed".into(), json!(self.city_listed));
        }
        v
    }
}

/// Resolve the policy of `user` for `city`: the city's tier (or the default
/// tier), the user's level (or the default level). `Ok(None)` when no policy
/// row exists for that pair.
pub(crate) async fn resolve(
    store: &Store,
    user: &str,
    city: &str,
) -> Result<Option<ResolvedPolicy>, ToolError> {
    let tier = store.city_tier(city).await.map_err(|e| e.to_tool_error("reading the city tier"))?;
    let (city_name, tier, listed) = match tier {
        Some((name, tier)) => (name, tier, true),
        None => (city.trim().to_string(), DEFAULT_TIER, false),
    };
    let level = store
        .user_level(user)
        .await
        .map_err(|e| e.to_tool_error("reading the traveller level"))?
        .unwrap_or_else(|| DEFAULT_LEVEL.to_string());
    let policy = store.policy(tier, &level).await.map_err(|e| e.to_tool_error("reading the policy"))?;
    Ok(policy.map(|policy| ResolvedPolicy { city: city_name, city_listed: listed, policy }))
}

async fn run(call: Call, input: Input) -> ToolResult {
    let city = input.city.as_str();
    match resolve(&call.shared.store, &call.user, city).await? {
        Some(resolved) => Ok(ToolOutput::json(resolved.to_json())),
        None => Err(ToolError::not_found(format!(
            "no travel policy is configured for {city:?} at your level; ask a travel administrator to load the \
             policies (the demo loads them with seed_demo)"
        ))),
    }
}
