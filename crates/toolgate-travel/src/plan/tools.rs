//! `plan_itinerary` and `review_planner_result`: their typed inputs, and the
//! glue between the planner, the policy, the plan store and progress reports.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_core::{Effect, FieldError, Tool, ToolError, ToolOutput, ToolResult, ToolSpec};

use super::candidates::MAX_CANDIDATES;
use super::planner::{self, Hotel, Limits, Outcome, Proposal, Request, Stats, Transport, Weights};
use crate::read::policy::resolve;
use crate::shared::{Call, MAX_CITY, Shared, rule, rule_at, tool};

/// How many unscored ids the summary names (the rest are counted).
const SUMMARY_MISSING_IDS: usize = 5;
/// The CPU quota of one plan: outbound × hotels × return combinations
/// (125,000 take about 20 ms of one core; a million, 0.13 s).
pub(crate) const MAX_COMBINATIONS: usize = 250_000;

/// Parameters of `plan_itinerary`.
#[derive(Debug, Deserialize, JsonSchema)]
struct PlanInput {
    /// The destination city; the caller's travel policy for it is checked.
    #[schemars(length(min = 1, max = MAX_CITY), pattern(toolgate_schema::PLAIN_TEXT))]
    destination: String,
    /// The options to combine: outbound transports, hotels, return transports (1 to 100 each).
    candidates: Candidates,
    /// Your 0-10 scores of how well each candidate fits what the user asked for (10 = perfect).
    scores: Scores,
    /// Relative weights of price, travel time and preference in the balanced pick (default 0.4, 0.3, 0.3).
    weights: Option<WeightsInput>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Candidates {
    /// Transports to the destination.
    #[schemars(length(min = 1, max = MAX_CANDIDATES))]
    outbound: Vec<Transport>,
    /// Hotels at the destination.
    #[schemars(length(min = 1, max = MAX_CANDIDATES))]
    hotels: Vec<Hotel>,
    /// Transports back.
    #[serde(rename = "return")]
    #[schemars(length(min = 1, max = MAX_CANDIDATES))]
    returns: Vec<Transport>,
}

/// A 0-10 score.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
struct Score(#[schemars(range(min = 0, max = 10))] f64);

#[derive(Debug, Deserialize, JsonSchema)]
struct Scores {
    /// Transport id -> score 0-10 (outbound and return).
    transport_scores: BTreeMap<String, Score>,
    /// Hotel id -> score 0-10.
    hotel_scores: BTreeMap<String, Score>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct WeightsInput {
    /// Weight of a low total price, 0-1.
    #[schemars(range(min = 0, max = 1))]
    price: Option<f64>,
    /// Weight of a short travel time, 0-1.
    #[schemars(range(min = 0, max = 1))]
    time: Option<f64>,
    /// Weight of your preference scores, 0-1.
    #[schemars(range(min = 0, max = 1))]
    preference: Option<f64>,
}

impl WeightsInput {
    /// A weight left out counts 0 once weights are given.
    fn weights(&self) -> Weights {
        Weights {
            price: self.price.unwrap_or(0.0),
            time: self.time.unwrap_or(0.0),
            preference: self.preference.unwrap_or(0.0),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct ReviewInput {
    /// The plan_id returned by plan_itinerary.
    #[schemars(length(min = 1, max = 64), pattern(toolgate_schema::PLAIN_TEXT))]
    plan_id: String,
}

const PLAN_DESCRIPTION: &str = "Compute itinerary proposals from candidate transports and hotels. Call it after you \
have gathered options (outbound transports, hotels, return transports) and scored each one 0-10 for how well it \
fits what the user asked for: the tool only computes, the preference scores are yours. It builds every outbound × \
hotel × return combination, drops impossible ones (return leaving before the outbound arrives; hotel check_in not \
the arrival day or check_out not the return day), totals price (tickets + nights × hotel price) and travel time, \
normalizes them, takes preference as the mean of the three scores (a missing score counts as 5 and is reported), \
flags policy breaches for the caller at the destination (hotel over the nightly cap, class not allowed) without \
dropping them, and picks four proposals: cheapest, fastest, best_preference and best_balanced (weights of price, \
time and preference; default 0.4/0.3/0.3). The full plan stays on the server under `plan_id` for a limited time; \
Returns a compact summary `{plan_id, combinations, feasible, dropped, missing_scores, policy, proposals: [{id, \
outbound, hotel, return, total_price, duration_minutes, preference, breaches}], next}`. Then call \
review_planner_result with the plan_id. Limits: 1-100 candidates per list and at most 250000 combinations \
(outbound × hotels × return), ids at most 32 characters. Progress (phases and combination counts) is reported to \
clients that asked for it. Times are \
local YYYY-MM-DDTHH:MM, dates YYYY-MM-DD. Example: {\"destination\": \"Shanghai\", \"candidates\": {\"outbound\": \
[{\"id\": \"MU5101\", \"mode\": \"flight\", \"price\": 1200, \"duration_minutes\": 135, \"depart\": \
\"2027-03-10T08:00\", \"arrive\": \"2027-03-10T10:15\", \"class\": \"economy\"}], \"hotels\": [{\"id\": \"H1\", \
\"price_per_night\": 550, \"check_in\": \"2027-03-10\", \"check_out\": \"2027-03-12\"}], \"return\": [{\"id\": \
\"G2\", \"mode\": \"train\", \"price\": 553, \"duration_minutes\": 290, \"depart\": \"2027-03-12T15:00\", \
\"arrive\": \"2027-03-12T19:50\", \"class\": \"second\"}]}, \"scores\": {\"transport_scores\": {\"MU5101\": 8, \
\"G2\": 7}, \"hotel_scores\": {\"H1\": 6}}}.";

const REVIEW_DESCRIPTION: &str = "Review the proposals of a plan made by plan_itinerary. Call it right after \
plan_itinerary with its plan_id; the full plan is read on the server and never needs to pass through you. Answers, \
for each proposal (cheapest, fastest, best_preference, best_balanced), pass or fail with the reasons (policy \
breaches, impossible timing) and warnings (unscored candidates, low preference), and the `recommended_id`: \
best_balanced when it passes, else the best passing proposal, else `best_compliant` (the best combination without \
breaches, when one exists), else null with what to ask the user. Returns `{plan_id, results: [{id, pass, reasons, \
warnings, outbound, hotel, return, total_price, duration_minutes}], recommended_id, recommended, message}`. A plan is \
visible only to the user who made it and expires (NOT_FOUND then: plan again). Example: {\"plan_id\": \
\"plan_3f2a...\"}.";

/// The four proposals as text; the structured summary is unchanged.
const PLAN_TEMPLATE: &str = "Plan {{ result.plan_id }} for {{ result.destination }}: {{ result.feasible }} of \
{{ result.combinations }} combinations possible.{% if result.proposals %}\n\n| proposal | outbound | hotel | return | \
total price | minutes | preference | breaches |\n|---|---|---|---|---|---|---|---|{% for p in result.proposals %}\n| \
{{ p.id }} | {{ p.outbound }} | {{ p.hotel }} | {{ p.return }} | {{ p.total_price }} | {{ p.duration_minutes }} | \
{{ p.preference }} | {{ p.breaches | join(\", \") }} |{% endfor %}{% endif %}\n\nNext: {{ result.next }}";

pub(crate) fn plan_tool(shared: &Arc<Shared>) -> Arc<dyn Tool> {
    // `long_running`: a 2026-07-28 client that asks may run it as a task (toolgate-mcp's tasks).
    let spec = ToolSpec::new("plan_itinerary", PLAN_DESCRIPTION, json!({}))
        .with_effect(Effect::Read)
        .with_role("member")
        .with_tags(["travel", "planning", "long_running"])
        .with_result_template(PLAN_TEMPLATE);
    tool(shared, spec, Some(plan_rules), run_plan)
}

pub(crate) fn review_tool(shared: &Arc<Shared>) -> Arc<dyn Tool> {
    let spec = ToolSpec::new("review_planner_result", REVIEW_DESCRIPTION, json!({}))
        .with_effect(Effect::Read)
        .with_role("member")
        .with_tags(["travel", "planning"])
        .with_example("review a plan", json!({"plan_id": "plan_0f8e6c4ab1d2469c9a6c2b1f3e5d7a90"}));
    tool(shared, spec, None, run_review)
}

/// What the schema cannot say: unique ids, times in order, weights not all
/// zero, and the CPU quota of the combinations.
fn plan_rules(input: &PlanInput) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let c = &input.candidates;
    let mut transport_ids = HashSet::new();
    let legs = [("outbound", &c.outbound), ("return", &c.returns)];
    for (leg, list) in legs {
        for (i, t) in list.iter().enumerate() {
            let at = format!("/candidates/{leg}/{i}");
            if !transport_ids.insert(t.id.as_str()) {
                errors.push(rule_at(
                    &format!("{at}/id"),
                    "an id unique among all transports",
                    &t.id,
                    format!("transport id `{}` is used twice; outbound and return ids share transport_scores, so each must be unique", t.id),
                ));
            }
            if t.arrive <= t.depart {
                errors.push(rule_at(
                    &format!("{at}/arrive"),
                    "a time after depart",
                    t.arrive.to_string(),
                    "`arrive` must be after `depart`".into(),
                ));
            }
        }
    }
    let mut hotel_ids = HashSet::new();
    for (i, h) in c.hotels.iter().enumerate() {
        let at = format!("/candidates/hotels/{i}");
        if !hotel_ids.insert(h.id.as_str()) {
            errors.push(rule_at(
                &format!("{at}/id"),
                "an id unique among hotels",
                &h.id,
                format!("hotel id `{}` is used twice", h.id),
            ));
        }
        if h.check_out <= h.check_in {
            errors.push(rule_at(
                &format!("{at}/check_out"),
                "a date after check_in",
                h.check_out.to_string(),
                "`check_out` must be at least one night after `check_in`".into(),
            ));
        }
    }
    if let Some(w) = &input.weights {
        let weights = w.weights();
        if weights.price + weights.time + weights.preference <= 0.0 {
            errors.push(rule(
                "weights",
                "at least one weight above 0",
                json!({"price": w.price, "time": w.time, "preference": w.preference}),
                "weights must not all be 0 (omit `weights` for the defaults 0.4/0.3/0.3)".into(),
            ));
        }
    }
    let combinations = c.outbound.len() * c.hotels.len() * c.returns.len();
    if combinations > MAX_COMBINATIONS {
        errors.push(rule(
            "candidates",
            &format!("at most {MAX_COMBINATIONS} combinations (outbound × hotels × return)"),
            format!("{} × {} × {} = {combinations}", c.outbound.len(), c.hotels.len(), c.returns.len()),
            format!(
                "{combinations} combinations exceed the planner's quota of {MAX_COMBINATIONS}; send fewer candidates \
                 (keep the best-scored ones, e.g. 60 of each list)"
            ),
        ));
    }
    errors
}

fn limits_of(policy: &crate::store::PolicyRow) -> Limits {
    Limits {
        hotel_cap_per_night: policy.hotel_cap_per_night as f64,
        currency: policy.currency.clone(),
        flight_classes: policy.allowed_classes("flight").into_iter().map(str::to_string).collect(),
        train_classes: policy.allowed_classes("train").into_iter().map(str::to_string).collect(),
    }
}

async fn run_plan(call: Call, input: PlanInput) -> ToolResult {
    let PlanInput { destination, candidates, scores, weights } = input;
    let request = Request {
        destination,
        outbound: candidates.outbound,
        hotels: candidates.hotels,
        returns: candidates.returns,
        transport_scores: scores.transport_scores.into_iter().map(|(k, v)| (k, v.0)).collect(),
        hotel_scores: scores.hotel_scores.into_iter().map(|(k, v)| (k, v.0)).collect(),
        weights: weights.map(|w| w.weights()).unwrap_or_default(),
    };
    let (shared, user, ctx) = (&*call.shared, call.user.as_str(), &call.ctx);
    let total = request.outbound.len() * request.hotels.len() * request.returns.len();
    ctx.progress(0.0, Some(total as f64), "reading the travel policy");
    let policy = resolve(&shared.store, user, &request.destination).await?;
    let limits = policy.as_ref().map(|p| limits_of(&p.policy));
    // The computation is CPU-bound (up to MAX_COMBINATIONS): keep it off the async workers.
    let (request, outcome) = {
        let limits = limits.clone();
        let ctx = ctx.clone();
        tokio::task::spawn_blocking(move || {
            let report = |done: usize| {
                ctx.progress(
                    done as f64,
                    Some(total as f64),
                    &format!("combined {done} of {total} combinations"),
                )
            };
            let outcome = planner::plan(&request, limits.as_ref(), &report);
            (request, outcome)
        })
        .await
        .map_err(|_| ToolError::internal())?
    };
    ctx.progress(total as f64, Some(total as f64), "saving the plan");
    let plan_id = format!("plan_{}", uuid::Uuid::new_v4().simple());
    let full = json!({
        "version": 1,
        "plan_id": plan_id,
        "created_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "destination": request.destination,
        "policy": limits,
        "weights": request.weights.normalized(),
        "stats": outcome.stats,
        "missing_scores": outcome.missing_scores,
        "proposals": outcome.proposals,
        "best_compliant": outcome.best_compliant,
        "top": outcome.top,
        "request": request,
    });
    let body = full.to_string();
    shared.plans.save(&plan_id, user, &body).await?;
    ctx.progress(total as f64, Some(total as f64), "plan saved");
    tracing::debug!(target: "toolgate_travel::plans", plan_id, store = shared.plans.backend(), bytes = body.len(), "plan saved");
    Ok(ToolOutput::json(summary(&plan_id, &request, &outcome, limits.as_ref())))
}

/// The compact answer: ids and figures only (under 2 KB even for 100 × 100 × 100 candidates).
fn summary(plan_id: &str, request: &Request, outcome: &Outcome, limits: Option<&Limits>) -> Value {
    let s: &Stats = &outcome.stats;
    let proposals: Vec<Value> = outcome
        .proposals
        .iter()
        .map(|p| {
            json!({
                "id": p.label,
                "outbound": p.outbound.id,
                "hotel": p.hotel.id,
                "return": p.ret.id,
                "total_price": p.total_price,
                "duration_minutes": p.duration_minutes,
                "preference": p.preference,
                "breaches": p.breaches.iter().map(|b| b.kind()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let policy = match limits {
        Some(l) => {
            json!({"checked": true, "hotel_cap_per_night": l.hotel_cap_per_night, "currency": l.currency})
        }
        None => json!({"checked": false, "why": "no policy configured for this destination and level"}),
    };
    let next = if outcome.proposals.is_empty() {
        "no combination is possible: check that hotel check_in is the outbound arrival day, check_out the return \
         departure day, and that returns leave after the outbound arrives; then plan again"
    } else {
        "call review_planner_result with this plan_id before presenting a proposal to the user"
    };
    let mut out = json!({
        "plan_id": plan_id,
        "destination": request.destination,
        "combinations": s.combinations,
        "feasible": s.feasible,
        "dropped": {
            "return_before_arrival": s.dropped_return_before_arrival,
            "hotel_nights_mismatch": s.dropped_hotel_nights_mismatch,
        },
        "with_policy_breaches": s.with_breaches,
        "compliant_available": outcome.best_compliant.is_some(),
        "policy": policy,
        "proposals": proposals,
        "next": next,
    });
    if !outcome.missing_scores.is_empty() {
        out["missing_scores"] = json!({
            "count": outcome.missing_scores.len(),
            "ids": outcome.missing_scores.iter().take(SUMMARY_MISSING_IDS).collect::<Vec<_>>(),
            "assumed": planner::NEUTRAL_SCORE,
        });
    }
    out
}

/// The parts of a stored plan the review reads.
#[derive(Deserialize)]
struct StoredPlan {
    plan_id: String,
    policy: Option<Limits>,
    proposals: Vec<Proposal>,
    best_compliant: Option<Proposal>,
}

async fn run_review(call: Call, input: ReviewInput) -> ToolResult {
    let (shared, user) = (&*call.shared, call.user.as_str());
    let plan_id = input.plan_id.as_str();
    let body = shared.plans.load(plan_id.trim(), user).await?;
    let Some(body) = body else {
        return Err(ToolError::not_found(format!(
            "no plan {plan_id:?} for you: it never existed, belongs to someone else, or expired (plans are kept {} \
             minutes); call plan_itinerary again",
            shared.plans.ttl().as_secs() / 60
        )));
    };
    let plan: StoredPlan = serde_json::from_str(&body).map_err(|e| {
        tracing::error!(target: "toolgate_travel::plans", error = %e, plan_id, "stored plan does not parse");
        ToolError::internal()
    })?;
    Ok(ToolOutput::json(review(&plan)))
}

struct Verdict {
    pass: bool,
    json: Value,
}

fn judge(p: &Proposal, limits: Option<&Limits>) -> Verdict {
    let mut reasons = Vec::new();
    let mut warnings = Vec::new();
    if let Err(why) = planner::feasible(&p.outbound, &p.hotel, &p.ret) {
        reasons.push(why);
    }
    match limits {
        Some(l) => {
            reasons.extend(planner::breaches(&p.outbound, &p.hotel, &p.ret, l).iter().map(|b| b.describe()))
        }
        None => warnings.push("no travel policy applies, so the policy was not checked".to_string()),
    }
    if !p.unscored.is_empty() {
        warnings.push(format!(
            "no score for {}; {} of 10 was assumed",
            p.unscored.join(", "),
            planner::NEUTRAL_SCORE
        ));
    }
    if p.preference < 5.0 {
        warnings.push(format!("low preference ({} of 10): it fits the user's wishes poorly", p.preference));
    }
    let pass = reasons.is_empty();
    Verdict {
        pass,
        json: json!({
            "id": p.label,
            "pass": pass,
            "reasons": reasons,
            "warnings": warnings,
            "outbound": p.outbound.id,
            "hotel": p.hotel.id,
            "return": p.ret.id,
            "total_price": p.total_price,
            "duration_minutes": p.duration_minutes,
            "preference": p.preference,
        }),
    }
}

fn review(plan: &StoredPlan) -> Value {
    let limits = plan.policy.as_ref();
    let verdicts: Vec<(&Proposal, Verdict)> = plan.proposals.iter().map(|p| (p, judge(p, limits))).collect();
    let balanced = verdicts.iter().find(|(p, v)| p.label == "best_balanced" && v.pass);
    let best_passing =
        verdicts.iter().filter(|(_, v)| v.pass).max_by(|a, b| a.0.composite.total_cmp(&b.0.composite));
    let compliant = plan.best_compliant.as_ref().filter(|p| judge(p, limits).pass);
    let (recommended, message) = if let Some((p, _)) = balanced.or(best_passing) {
        (Some(*p), format!("recommend {}: it passes every check", p.label))
    } else if let Some(p) = compliant {
        (
            Some(p),
            "none of the four proposals passes; recommend best_compliant, the best combination within policy"
                .into(),
        )
    } else if plan.proposals.is_empty() {
        (None, "the plan has no possible combination; gather other candidates and plan again".into())
    } else {
        (
            None,
            "no combination is within policy; ask the user whether to look for cheaper hotels or allowed classes, \
             or to request a policy exception"
                .into(),
        )
    };
    json!({
        "plan_id": plan.plan_id,
        "results": verdicts.iter().map(|(_, v)| v.json.clone()).collect::<Vec<_>>(),
        "recommended_id": recommended.map(|p| p.label.clone()),
        "recommended": recommended.map(|p| judge(p, limits).json),
        "message": message,
    })
}
