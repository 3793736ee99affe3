//! Full plans as resources: a `plan_itinerary` result links to
//! `toolgate://plans/<plan_id>`, which the user who made the plan reads with
//! `resources/read` (another user: not found), so the whole plan (every
//! proposal, the top combinations, the request) never has to pass through the model.

use serde_json::Value;
use toolgate_core::{BoxFuture, Caller, ResourceLink, ResourceTemplate, ResourceText, Resources, ToolError};

use crate::config::TravelConfig;
use crate::plan_store::PlanStore;
use crate::store::Store;

/// The URI of every stored plan: this prefix and its plan_id.
pub const PLAN_URI_PREFIX: &str = "toolgate://plans/";
const MIME: &str = "application/json";

/// The plan store read as resources.
#[derive(Debug)]
pub struct PlanResources {
    plans: PlanStore,
}

impl PlanResources {
    /// The plans kept in `store` (or in Redis, as `config` says).
    pub fn new(store: Store, config: &TravelConfig) -> Self {
        Self { plans: PlanStore::new(&config.plan_store, store) }
    }
}

/// The URI of one plan.
pub fn plan_uri(plan_id: &str) -> String {
    format!("{PLAN_URI_PREFIX}{plan_id}")
}

fn valid_id(id: &str) -> bool {
    id.starts_with("plan_") && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl Resources for PlanResources {
    fn templates(&self) -> Vec<ResourceTemplate> {
        vec![ResourceTemplate {
            uri_template: format!("{PLAN_URI_PREFIX}{{plan_id}}"),
            name: "itinerary_plan".into(),
            description:
                "A full itinerary plan made by plan_itinerary (every proposal, the top combinations, \
                          the policy and the request), readable only by the user who made it until it expires"
                    .into(),
            mime_type: MIME.into(),
        }]
    }

    fn link_for(&self, tool: &str, result: &Value) -> Option<ResourceLink> {
        if tool != "plan_itinerary" {
            return None;
        }
        let plan_id = result.get("plan_id")?.as_str().filter(|id| valid_id(id))?;
        Some(ResourceLink {
            uri: plan_uri(plan_id),
            name: plan_id.to_owned(),
            description: format!(
                "The full plan {plan_id}: read it for every proposal and the top combinations; kept {} minutes",
                self.plans.ttl().as_secs() / 60
            ),
            mime_type: MIME.into(),
            size: None,
        })
    }

    fn read<'a>(
        &'a self,
        caller: &'a Caller,
        uri: &'a str,
    ) -> Option<BoxFuture<'a, Result<ResourceText, ToolError>>> {
        let plan_id = uri.strip_prefix(PLAN_URI_PREFIX)?;
        Some(Box::pin(async move {
            let user = caller.user_id.as_str();
            let body = if valid_id(plan_id) && !user.trim().is_empty() {
                self.plans.load(plan_id, user).await?
            } else {
                None
            };
            let Some(text) = body else {
                return Err(ToolError::not_found(format!(
                    "no plan {plan_id:?} for you: it never existed, belongs to someone else, or expired; call \
                     plan_itinerary again"
                )));
            };
            Ok(ResourceText { uri: uri.to_owned(), mime_type: MIME.into(), text })
        }))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const ID: &str = "plan_0f8e6c4ab1d2469c9a6c2b1f3e5d7a90";

    async fn resources() -> PlanResources {
        let store = Store::connect("sqlite::memory:").await.unwrap();
        PlanResources::new(store, &TravelConfig::default())
    }

    #[tokio::test]
    async fn only_a_plan_itinerary_result_with_a_well_formed_id_links() {
        let r = resources().await;
        let link = r.link_for("plan_itinerary", &json!({"plan_id": ID})).expect("a link");
        assert_eq!(link.uri, format!("toolgate://plans/{ID}"));
        assert_eq!(link.mime_type, "application/json");
        assert!(r.link_for("review_planner_result", &json!({"plan_id": ID})).is_none());
        assert!(r.link_for("plan_itinerary", &json!({"plan_id": "../etc/passwd"})).is_none());
        assert!(r.link_for("plan_itinerary", &json!({})).is_none());
    }

    #[tokio::test]
    async fn a_plan_is_read_by_its_user_only() {
        let r = resources().await;
        r.plans.save(ID, "alice", r#"{"plan_id":"x"}"#).await.unwrap();
        let (alice, bob) = (Caller::new("alice", "member"), Caller::new("bob", "member"));
        let uri = plan_uri(ID);
        assert!(r.read(&alice, "file:///etc/passwd").is_none(), "not one of ours");
        let read = r.read(&alice, &uri).expect("ours").await.unwrap();
        assert_eq!((read.text.as_str(), read.mime_type.as_str()), (r#"{"plan_id":"x"}"#, "application/json"));
        let other = r.read(&bob, &uri).expect("ours").await.unwrap_err();
        assert_eq!(other.code, toolgate_core::ErrorCode::NotFound);
        let bad = r.read(&alice, "toolgate://plans/nope").expect("ours").await.unwrap_err();
        assert_eq!(bad.code, toolgate_core::ErrorCode::NotFound);
    }
}
