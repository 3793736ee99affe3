//! What every travel tool shares: the store, the configuration, the plan
//! store, the HTTP client; the one [`TravelTool`] type that dispatches to
//! the read/write/plan modules; and parameter helpers.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use tool_core::names::is_injected_field;
use tool_core::{ErrorCode, FieldError, Params, Tool, ToolContext, ToolError, ToolResult, ToolSpec};

use crate::config::{TravelConfig, WEATHER_TIMEOUT};
use crate::crypto::{Cipher, NoCipher};
use crate::plan::store::PlanStore;
use crate::schema::property_names;
use crate::store::Store;
use crate::{plan, read, write};

/// Longest free text accepted (destination, purpose, ...), in characters.
pub(crate) const MAX_TEXT: usize = 500;
/// Longest city name accepted, in characters.
pub(crate) const MAX_CITY: usize = 100;
/// Default and largest page size of listings.
pub(crate) const DEFAULT_PAGE_SIZE: i64 = 10;
pub(crate) const MAX_PAGE_SIZE: i64 = 50;

/// State shared by all travel tools of one [`crate::tools`] call.
pub(crate) struct Shared {
    pub(crate) store: Store,
    pub(crate) config: TravelConfig,
    pub(crate) plans: PlanStore,
    pub(crate) http: Option<reqwest::Client>,
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
        let http = match reqwest::Client::builder().timeout(WEATHER_TIMEOUT).build() {
            Ok(client) => Some(client),
            Err(e) => {
                tracing::error!(target: "travel::weather", error = %e, "could not build the HTTP client");
                None
            }
        };
        let cipher = Cipher::from_secret(config.secret_key.as_ref());
        if matches!(cipher, Err(NoCipher::Malformed)) {
            tracing::warn!(target: "travel::crypto", "the configured API-key encryption key is not 64 hex characters");
        }
        let plans = PlanStore::new(&config.plan_store, store.clone());
        Self { store, config, plans, http, cipher }
    }
}

/// Which tool a [`TravelTool`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    QueryTravelOrder,
    QueryBookingRecord,
    CheckTravelOrderConflicts,
    QueryTravelPolicy,
    QueryWeather,
    SubmitTravelApproval,
    CancelTravelOrder,
    CancelBooking,
    SaveFlightApiKey,
    PlanItinerary,
    ReviewPlannerResult,
}

impl Kind {
    pub(crate) const ALL: [Kind; 11] = [
        Kind::QueryTravelOrder,
        Kind::QueryBookingRecord,
        Kind::CheckTravelOrderConflicts,
        Kind::QueryTravelPolicy,
        Kind::QueryWeather,
        Kind::SubmitTravelApproval,
        Kind::CancelTravelOrder,
        Kind::CancelBooking,
        Kind::SaveFlightApiKey,
        Kind::PlanItinerary,
        Kind::ReviewPlannerResult,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::QueryTravelOrder => "query_travel_order",
            Kind::QueryBookingRecord => "query_booking_record",
            Kind::CheckTravelOrderConflicts => "check_travel_order_conflicts",
            Kind::QueryTravelPolicy => "query_travel_policy",
            Kind::QueryWeather => "query_weather",
            Kind::SubmitTravelApproval => "submit_travel_approval",
            Kind::CancelTravelOrder => "cancel_travel_order",
            Kind::CancelBooking => "cancel_booking",
            Kind::SaveFlightApiKey => "save_flight_api_key",
            Kind::PlanItinerary => "plan_itinerary",
            Kind::ReviewPlannerResult => "review_planner_result",
        }
    }

    fn spec(self) -> ToolSpec {
        let spec = match self {
            Kind::QueryTravelOrder => read::order::spec(),
            Kind::QueryBookingRecord => read::booking::spec(),
            Kind::CheckTravelOrderConflicts => read::conflicts::spec(),
            Kind::QueryTravelPolicy => read::policy::spec(),
            Kind::QueryWeather => read::weather::spec(),
            Kind::SubmitTravelApproval => write::submit::spec(),
            Kind::CancelTravelOrder => write::cancel::order_spec(),
            Kind::CancelBooking => write::cancel::booking_spec(),
            Kind::SaveFlightApiKey => write::api_key::spec(),
            Kind::PlanItinerary => plan::tools::plan_spec(),
            Kind::ReviewPlannerResult => plan::tools::review_spec(),
        };
        debug_assert_eq!(spec.name, self.name());
        spec.with_domain(crate::DOMAIN)
    }
}

/// One travel tool: a spec and the shared state; `call` dispatches on the kind.
pub(crate) struct TravelTool {
    kind: Kind,
    spec: ToolSpec,
    allowed: Vec<String>,
    shared: Arc<Shared>,
}

impl fmt::Debug for TravelTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TravelTool").field("name", &self.spec.name).finish_non_exhaustive()
    }
}

impl TravelTool {
    pub(crate) fn new(kind: Kind, shared: Arc<Shared>) -> Self {
        let spec = kind.spec();
        let allowed = property_names(&spec.input_schema);
        Self { kind, spec, allowed, shared }
    }
}

/// The checked parameters of one call, by tool.
#[derive(Debug)]
enum Parsed {
    QueryTravelOrder(read::order::Parsed),
    QueryBookingRecord(read::booking::Parsed),
    CheckTravelOrderConflicts(read::conflicts::Parsed),
    QueryTravelPolicy(read::policy::Parsed),
    QueryWeather(read::weather::Parsed),
    SubmitTravelApproval(write::submit::Parsed),
    CancelTravelOrder(write::cancel::Parsed),
    CancelBooking(write::cancel::Parsed),
    SaveFlightApiKey(write::api_key::Parsed),
    PlanItinerary(plan::planner::Request),
    ReviewPlannerResult(plan::tools::ReviewParsed),
}

impl TravelTool {
    /// Check every parameter (no I/O): every problem at once, as INVALID_PARAMS.
    fn parse(&self, params: &Value) -> Result<Parsed, ToolError> {
        let allowed = &self.allowed;
        Ok(match self.kind {
            // These two read by hand: nested pointers, and values never echoed.
            Kind::PlanItinerary => Parsed::PlanItinerary(plan::tools::parse_plan(params, allowed)?),
            Kind::SaveFlightApiKey => Parsed::SaveFlightApiKey(write::api_key::parse(params, allowed)?),
            kind => {
                let p = open_params(params, allowed)?;
                match kind {
                    Kind::QueryTravelOrder => Parsed::QueryTravelOrder(read::order::parse(p)?),
                    Kind::QueryBookingRecord => Parsed::QueryBookingRecord(read::booking::parse(p)?),
                    Kind::CheckTravelOrderConflicts => {
                        Parsed::CheckTravelOrderConflicts(read::conflicts::parse(p)?)
                    }
                    Kind::QueryTravelPolicy => Parsed::QueryTravelPolicy(read::policy::parse(p)?),
                    Kind::QueryWeather => Parsed::QueryWeather(read::weather::parse(p)?),
                    Kind::SubmitTravelApproval => Parsed::SubmitTravelApproval(write::submit::parse(p)?),
                    Kind::CancelTravelOrder => {
                        Parsed::CancelTravelOrder(write::cancel::parse(p, "order_id")?)
                    }
                    Kind::CancelBooking => Parsed::CancelBooking(write::cancel::parse(p, "booking_id")?),
                    Kind::ReviewPlannerResult => Parsed::ReviewPlannerResult(plan::tools::parse_review(p)?),
                    Kind::PlanItinerary | Kind::SaveFlightApiKey => return Err(ToolError::internal()),
                }
            }
        })
    }
}

#[async_trait::async_trait]
impl Tool for TravelTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, ctx: &ToolContext, params: Value) -> ToolResult {
        let user = caller_user(ctx)?;
        let parsed = self.parse(&params)?;
        let shared = &*self.shared;
        match parsed {
            Parsed::QueryTravelOrder(input) => read::order::run(shared, user, input).await,
            Parsed::QueryBookingRecord(input) => read::booking::run(shared, user, input).await,
            Parsed::CheckTravelOrderConflicts(input) => read::conflicts::run(shared, user, input).await,
            Parsed::QueryTravelPolicy(input) => read::policy::run(shared, user, input).await,
            Parsed::QueryWeather(input) => read::weather::run(shared, input).await,
            Parsed::SubmitTravelApproval(input) => write::submit::run(shared, user, input).await,
            Parsed::CancelTravelOrder(input) => write::cancel::run_order(shared, user, input).await,
            Parsed::CancelBooking(input) => write::cancel::run_booking(shared, user, input).await,
            Parsed::SaveFlightApiKey(input) => write::api_key::run(shared, user, input).await,
            Parsed::PlanItinerary(request) => plan::tools::run_plan(shared, user, request).await,
            Parsed::ReviewPlannerResult(input) => plan::tools::run_review(shared, user, input).await,
        }
    }

    fn check_params(&self, params: &Value) -> Vec<FieldError> {
        match self.parse(params) {
            Err(e) if e.code == ErrorCode::InvalidParams => e
                .details
                .and_then(|d| serde_json::from_value::<Vec<FieldError>>(d["errors"].clone()).ok())
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}

/// The user the call acts for; a call without one is refused.
pub(crate) fn caller_user(ctx: &ToolContext) -> Result<&str, ToolError> {
    let user = ctx.caller.user_id.as_str();
    if user.trim().is_empty() {
        return Err(ToolError::new(
            ErrorCode::PermissionDenied,
            "this travel tool acts for a signed-in user, and the call carries none; sign in and call again",
        ));
    }
    Ok(user)
}

/// Problems with parameter names: unknown ones, and ones the session supplies.
pub(crate) fn name_errors(params: &Value, allowed: &[String]) -> Vec<FieldError> {
    let Value::Object(map) = params else { return Vec::new() };
    map.iter()
        .filter(|(key, _)| !allowed.iter().any(|a| a == *key))
        .map(|(key, value)| {
            let pointer = tool_core::params::pointer(key);
            if is_injected_field(key) {
                FieldError::new(
                    pointer,
                    "nothing: the session supplies it",
                    value,
                    format!("`{key}` comes from the signed-in session, not from parameters; remove it"),
                )
            } else {
                FieldError::new(
                    pointer,
                    "no such parameter",
                    value,
                    format!("unknown parameter `{key}`; this tool takes only: {}", allowed.join(", ")),
                )
            }
        })
        .collect()
}

/// Start reading parameters, with unknown and session-supplied names already recorded.
pub(crate) fn open_params<'a>(params: &'a Value, allowed: &[String]) -> Result<Params<'a>, ToolError> {
    let mut p = Params::new(params)?;
    for e in name_errors(params, allowed) {
        let name = e.pointer.trim_start_matches('/').replace("~1", "/").replace("~0", "~");
        p.error(&name, &e.expected, e.message);
    }
    Ok(p)
}

/// A text field: non-empty (by Params), at most `max` characters, no NUL
/// (databases cannot store it). Anything else, including SQL metacharacters
/// and any UTF-8, is kept verbatim.
pub(crate) fn text<'a>(p: &mut Params<'a>, name: &str, required: bool, max: usize) -> Option<&'a str> {
    let value = if required { p.required_str(name) } else { p.optional_str(name) }?;
    let chars = value.chars().count();
    if chars > max {
        p.error(
            name,
            &format!("at most {max} characters"),
            format!("`{name}` has {chars} characters; at most {max}"),
        );
        return None;
    }
    if value.contains('\0') {
        p.error(
            name,
            "text without NUL characters",
            format!("`{name}` contains a NUL (\\u0000) character; remove it"),
        );
        return None;
    }
    Some(value)
}

/// `page` (from 1) and `page_size` (1 to 50), as LIMIT and OFFSET.
pub(crate) fn paging(p: &mut Params<'_>) -> (i64, i64, i64) {
    let page = p.optional_int("page", 1, 10_000).unwrap_or(1);
    let size = p.optional_int("page_size", 1, MAX_PAGE_SIZE).unwrap_or(DEFAULT_PAGE_SIZE);
    (page, size, (page - 1) * size)
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
