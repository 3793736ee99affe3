//! Below every travel tool: the state they share ([`Shared`]), the one
//! adapter that makes a typed tool of an input type and an async function
//! ([`tool`]), and the limits and helpers several tools use. It knows no
//! tool: `lib.rs` lists them.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::Either;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolgate_core::{ErrorCode, FieldError, Tool, ToolContext, ToolError, ToolResult, ToolSpec};

use crate::config::TravelConfig;
use crate::crypto::{Cipher, NoCipher};
use crate::plan_store::PlanStore;
use crate::store::Store;

/// Longest free text accepted (purpose, ...), in characters.
pub(crate) const MAX_TEXT: u32 = 500;
/// Longest city name accepted, in characters.
pub(crate) const MAX_CITY: u32 = 100;
/// Default and largest page size of listings.
pub(crate) const DEFAULT_PAGE_SIZE: i64 = 10;
pub(crate) const MAX_PAGE_SIZE: i64 = 50;
/// Largest page number of listings.
pub(crate) const MAX_PAGE: i64 = 10_000;

/// State shared by all travel tools of one [`crate::tools`] call.
pub(crate) struct Shared {
    pub(crate) store: Store,
    pub(crate) config: TravelConfig,
    pub(crate) plans: PlanStore,
    pub(crate) weather: Option<Result<crate::read::weather::Provider, String>>,
    pub(crate) cipher: Result<Cipher, NoCipher>,
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("store", &self.store.kind())
            .field("weather_url", &self.config.weather_url)
            .field("plans", &self.plans)
            .field("cipher", &self.cipher.is_ok())
            .finish_non_exhaustive()
    }
}

impl Shared {
    pub(crate) fn new(store: Store, config: TravelConfig) -> Self {
        let weather = crate::read::weather::provider(&config);
        let cipher = Cipher::from_secret(config.secret_key.as_ref());
        if matches!(cipher, Err(NoCipher::Malformed)) {
            tracing::warn!(target: "toolgate_travel::crypto", "the configured API-key encryption key is not 64 hex characters");
        }
        let plans = PlanStore::new(&config.plan_store, store.clone());
        Self { store, config, plans, weather, cipher }
    }
}

/// One call of a travel tool: the shared state, the signed-in user and the context.
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) shared: Arc<Shared>,
    pub(crate) user: String,
    pub(crate) ctx: ToolContext,
}

/// A travel tool from a spec, an input type and `async fn(Call, I)`: the
/// schema comes from `I`, the domain is set, and a call without a signed-in
/// user is refused before the function runs.
pub(crate) fn tool<I, F, Fut>(
    shared: &Arc<Shared>,
    spec: ToolSpec,
    rules: Option<fn(&I) -> Vec<FieldError>>,
    run: F,
) -> Arc<dyn Tool>
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(Call, I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolResult> + Send + 'static,
{
    let shared = shared.clone();
    let typed =
        toolgate_schema::tool_fn(spec.with_domain(crate::DOMAIN), move |ctx: ToolContext, input: I| {
            // No async block around `run`: one holding its future (and the
            // `Result` it came in) would lay it out three times over, and the
            // whole is copied each time the call's future moves.
            match caller_user(&ctx).map(str::to_owned) {
                Ok(user) => Either::Left(run(Call { shared: shared.clone(), user, ctx }, input)),
                Err(refused) => Either::Right(std::future::ready(Err(refused))),
            }
        });
    match rules {
        Some(rules) => Arc::new(typed.with_rules(rules)),
        None => Arc::new(typed),
    }
}

/// The user the call acts for; a call without one is refused.
fn caller_user(ctx: &ToolContext) -> Result<&str, ToolError> {
    let user = ctx.caller.user_id.as_str();
    if user.trim().is_empty() {
        return Err(ToolError::new(
            ErrorCode::PermissionDenied,
            "this travel tool acts for a signed-in user, and the call carries none; sign in and call again",
        ));
    }
    Ok(user)
}

/// `page` and `page_size` of a listing, declared once for every listing tool.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub(crate) struct Paging {
    /// Page number, from 1 (default 1).
    #[schemars(range(min = 1, max = MAX_PAGE))]
    pub(crate) page: Option<i64>,
    /// Entries per page, 1 to 50 (default 10).
    #[schemars(range(min = 1, max = MAX_PAGE_SIZE))]
    pub(crate) page_size: Option<i64>,
}

impl Paging {
    /// `(page, size, offset)` with the defaults applied.
    pub(crate) fn resolve(self) -> (i64, i64, i64) {
        let page = self.page.unwrap_or(1);
        let size = self.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
        (page, size, (page - 1) * size)
    }
}

/// The page block of a listing result.
pub(crate) fn page_json(page: i64, size: i64, total: i64, shown: usize) -> Value {
    serde_json::json!({
        "page": page,
        "page_size": size,
        "total": total,
        "has_more": (page - 1) * size + (shown as i64) < total,
    })
}

/// A field error from a cross-field rule, about a top-level `field`.
pub(crate) fn rule(
    field: &str,
    expected: &str,
    actual: impl serde::Serialize,
    message: String,
) -> FieldError {
    rule_at(&toolgate_core::params::pointer(field), expected, actual, message)
}

/// A field error from a cross-field rule, at a JSON `pointer` (`/candidates/hotels/0/id`).
pub(crate) fn rule_at(
    pointer: &str,
    expected: &str,
    actual: impl serde::Serialize,
    message: String,
) -> FieldError {
    let actual = serde_json::to_value(actual).unwrap_or(Value::Null);
    FieldError::new(pointer, expected, &actual, message)
}
