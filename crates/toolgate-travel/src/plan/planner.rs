//! The pure planning computation: combinations, feasibility, normalization,
//! policy flags and the four proposals. No I/O.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

pub(crate) use super::candidates::{Hotel, Mode, Transport};

/// Weights of the composite score; normalized to sum to 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Weights {
    pub(crate) price: f64,
    pub(crate) time: f64,
    pub(crate) preference: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Self { price: 0.4, time: 0.3, preference: 0.3 }
    }
}

impl Weights {
    pub(crate) fn normalized(self) -> Self {
        let sum = self.price + self.time + self.preference;
        if sum <= 0.0 {
            return Self::default();
        }
        Self { price: self.price / sum, time: self.time / sum, preference: self.preference / sum }
    }
}

/// The policy limits a plan is checked against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Limits {
    pub(crate) hotel_cap_per_night: f64,
    pub(crate) currency: String,
    pub(crate) flight_classes: Vec<String>,
    pub(crate) train_classes: Vec<String>,
}

impl Limits {
    fn class_allowed(&self, mode: Mode, class: &str) -> bool {
        self.allowed(mode).iter().any(|c| c.eq_ignore_ascii_case(class.trim()))
    }

    fn allowed(&self, mode: Mode) -> &[String] {
        match mode {
            Mode::Train => &self.train_classes,
            Mode::Flight => &self.flight_classes,
        }
    }
}

/// Everything the planner needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Request {
    pub(crate) destination: String,
    pub(crate) outbound: Vec<Transport>,
    pub(crate) hotels: Vec<Hotel>,
    #[serde(rename = "return")]
    pub(crate) returns: Vec<Transport>,
    pub(crate) transport_scores: BTreeMap<String, f64>,
    pub(crate) hotel_scores: BTreeMap<String, f64>,
    pub(crate) weights: Weights,
}

/// A policy breach of one combination; flagged, never dropped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Breach {
    HotelOverCap { hotel_id: String, price_per_night: f64, cap: f64, currency: String },
    ClassNotAllowed { leg: String, transport_id: String, mode: String, class: String, allowed: Vec<String> },
}

impl Breach {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Breach::HotelOverCap { .. } => "hotel_over_cap",
            Breach::ClassNotAllowed { .. } => "class_not_allowed",
        }
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Breach::HotelOverCap { hotel_id, price_per_night, cap, currency } => {
                format!(
                    "hotel {hotel_id} costs {price_per_night} {currency} per night, over the cap of {cap} {currency}"
                )
            }
            Breach::ClassNotAllowed { leg, transport_id, mode, class, allowed } => format!(
                "{leg} {mode} {transport_id} is {class} class; allowed: {}",
                if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") }
            ),
        }
    }
}

/// One chosen combination, with everything needed to judge it later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Proposal {
    pub(crate) label: String,
    pub(crate) outbound: Transport,
    pub(crate) hotel: Hotel,
    #[serde(rename = "return")]
    pub(crate) ret: Transport,
    pub(crate) nights: i64,
    pub(crate) total_price: f64,
    pub(crate) duration_minutes: i64,
    /// Mean of the three scores, 0 to 10.
    pub(crate) preference: f64,
    /// Weighted score, 0 to 1 (higher is better).
    pub(crate) composite: f64,
    pub(crate) breaches: Vec<Breach>,
    /// Ids of this combination that had no score (5 was assumed).
    pub(crate) unscored: Vec<String>,
}

/// Counts of the computation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stats {
    pub(crate) combinations: u64,
    pub(crate) feasible: u64,
    pub(crate) dropped_return_before_arrival: u64,
    pub(crate) dropped_hotel_nights_mismatch: u64,
    pub(crate) with_breaches: u64,
}

/// The planner's full result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Outcome {
    pub(crate) stats: Stats,
    /// Candidate ids without a score (5 of 10 assumed), sorted.
    pub(crate) missing_scores: Vec<String>,
    /// cheapest, fastest, best_preference, best_balanced (absent when nothing is feasible).
    pub(crate) proposals: Vec<Proposal>,
    /// The best combination without any breach, when one exists.
    pub(crate) best_compliant: Option<Proposal>,
    /// The ten best combinations by composite score.
    pub(crate) top: Vec<Proposal>,
}

/// The score assumed for a candidate the model did not score.
pub(crate) const NEUTRAL_SCORE: f64 = 5.0;

#[derive(Clone, Copy)]
struct Combo {
    o: u32,
    h: u32,
    r: u32,
    total: f64,
    duration: i64,
    preference: f64,
    compliant: bool,
}

/// Plan: build every combination, drop the impossible ones, score the rest,
/// pick the proposals. `limits: None` skips the policy checks. `report` hears
/// how many combinations are done, once per outbound candidate.
pub(crate) fn plan(req: &Request, limits: Option<&Limits>, report: &dyn Fn(usize)) -> Outcome {
    let weights = req.weights.normalized();
    let t_score = |id: &str| req.transport_scores.get(id).copied();
    let h_score = |id: &str| req.hotel_scores.get(id).copied();

    let mut missing = BTreeSet::new();
    for t in req.outbound.iter().chain(&req.returns) {
        if t_score(&t.id).is_none() {
            missing.insert(t.id.clone());
        }
    }
    for h in &req.hotels {
        if h_score(&h.id).is_none() {
            missing.insert(h.id.clone());
        }
    }

    // Per-candidate facts, computed once.
    let o_ok: Vec<bool> = req.outbound.iter().map(|t| transport_ok(t, limits)).collect();
    let r_ok: Vec<bool> = req.returns.iter().map(|t| transport_ok(t, limits)).collect();
    let h_ok: Vec<bool> = req
        .hotels
        .iter()
        .map(|h| limits.is_none_or(|l| h.price_per_night <= l.hotel_cap_per_night))
        .collect();
    let o_s: Vec<f64> = req.outbound.iter().map(|t| t_score(&t.id).unwrap_or(NEUTRAL_SCORE)).collect();
    let r_s: Vec<f64> = req.returns.iter().map(|t| t_score(&t.id).unwrap_or(NEUTRAL_SCORE)).collect();
    let h_s: Vec<f64> = req.hotels.iter().map(|h| h_score(&h.id).unwrap_or(NEUTRAL_SCORE)).collect();

    let mut stats = Stats {
        combinations: (req.outbound.len() * req.hotels.len() * req.returns.len()) as u64,
        feasible: 0,
        dropped_return_before_arrival: 0,
        dropped_hotel_nights_mismatch: 0,
        with_breaches: 0,
    };
    let mut combos: Vec<Combo> = Vec::new();
    for (oi, o) in req.outbound.iter().enumerate() {
        for (hi, h) in req.hotels.iter().enumerate() {
            let check_in_ok = h.check_in == o.arrive.date();
            for (ri, r) in req.returns.iter().enumerate() {
                if r.depart <= o.arrive {
                    stats.dropped_return_before_arrival += 1;
                    continue;
                }
                if !check_in_ok || h.check_out != r.depart.date() {
                    stats.dropped_hotel_nights_mismatch += 1;
                    continue;
                }
                let nights = (h.check_out - h.check_in).num_days();
                let compliant = o_ok[oi] && h_ok[hi] && r_ok[ri];
                if !compliant {
                    stats.with_breaches += 1;
                }
                combos.push(Combo {
                    o: oi as u32,
                    h: hi as u32,
                    r: ri as u32,
                    total: o.price + h.price_per_night * nights as f64 + r.price,
                    duration: o.duration_minutes + r.duration_minutes,
                    preference: (o_s[oi] + h_s[hi] + r_s[ri]) / 3.0,
                    compliant,
                });
            }
        }
        report((oi + 1) * req.hotels.len() * req.returns.len());
    }
    stats.feasible = combos.len() as u64;
    let missing_scores: Vec<String> = missing.into_iter().collect();
    if combos.is_empty() {
        return Outcome {
            stats,
            missing_scores,
            proposals: Vec::new(),
            best_compliant: None,
            top: Vec::new(),
        };
    }

    let (min_p, max_p) = min_max(combos.iter().map(|c| c.total));
    let (min_t, max_t) = min_max(combos.iter().map(|c| c.duration as f64));
    let norm = |v: f64, lo: f64, hi: f64| if hi > lo { (v - lo) / (hi - lo) } else { 0.0 };
    let composite = |c: &Combo| {
        weights.price * (1.0 - norm(c.total, min_p, max_p))
            + weights.time * (1.0 - norm(c.duration as f64, min_t, max_t))
            + weights.preference * (c.preference / 10.0)
    };
    let scored: Vec<(Combo, f64)> = combos.into_iter().map(|c| (c, composite(&c))).collect();

    // Ties are broken by the composite, then by input order (stable, deterministic).
    type Scored = (Combo, f64);
    let pick = |better: &dyn Fn(&Scored, &Scored) -> bool| -> Scored {
        let mut best = scored[0];
        for s in &scored[1..] {
            if better(s, &best) {
                best = *s;
            }
        }
        best
    };
    let cheapest = pick(&|a, b| a.0.total < b.0.total || (a.0.total == b.0.total && a.1 > b.1));
    let fastest = pick(&|a, b| a.0.duration < b.0.duration || (a.0.duration == b.0.duration && a.1 > b.1));
    let preferred =
        pick(&|a, b| a.0.preference > b.0.preference || (a.0.preference == b.0.preference && a.1 > b.1));
    let balanced = pick(&|a, b| a.1 > b.1);
    let best_compliant =
        scored.iter().filter(|s| s.0.compliant).fold(None::<(Combo, f64)>, |acc, s| match acc {
            Some(b) if b.1 >= s.1 => Some(b),
            _ => Some(*s),
        });

    let make = |label: &str, (c, comp): (Combo, f64)| proposal(req, limits, label, c, comp);
    let proposals = vec![
        make("cheapest", cheapest),
        make("fastest", fastest),
        make("best_preference", preferred),
        make("best_balanced", balanced),
    ];
    let mut ranked = scored;
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    let top = ranked.iter().take(10).enumerate().map(|(i, s)| make(&format!("top_{}", i + 1), *s)).collect();
    Outcome {
        stats,
        missing_scores,
        proposals,
        best_compliant: best_compliant.map(|s| make("best_compliant", s)),
        top,
    }
}

fn transport_ok(t: &Transport, limits: Option<&Limits>) -> bool {
    limits.is_none_or(|l| l.class_allowed(t.mode, &t.class))
}

fn min_max(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)))
}

fn proposal(req: &Request, limits: Option<&Limits>, label: &str, c: Combo, composite: f64) -> Proposal {
    let o = &req.outbound[c.o as usize];
    let h = &req.hotels[c.h as usize];
    let r = &req.returns[c.r as usize];
    let mut unscored = Vec::new();
    for (id, scored) in [
        (&o.id, req.transport_scores.contains_key(&o.id)),
        (&h.id, req.hotel_scores.contains_key(&h.id)),
        (&r.id, req.transport_scores.contains_key(&r.id)),
    ] {
        if !scored {
            unscored.push(id.clone());
        }
    }
    Proposal {
        label: label.to_string(),
        outbound: o.clone(),
        hotel: h.clone(),
        ret: r.clone(),
        nights: (h.check_out - h.check_in).num_days(),
        total_price: round2(c.total),
        duration_minutes: c.duration,
        preference: round2(c.preference),
        composite: (composite * 1000.0).round() / 1000.0,
        breaches: limits.map(|l| breaches(o, h, r, l)).unwrap_or_default(),
        unscored,
    }
}

/// Every policy breach of a combination.
pub(crate) fn breaches(o: &Transport, h: &Hotel, r: &Transport, limits: &Limits) -> Vec<Breach> {
    let mut out = Vec::new();
    if h.price_per_night > limits.hotel_cap_per_night {
        out.push(Breach::HotelOverCap {
            hotel_id: h.id.clone(),
            price_per_night: h.price_per_night,
            cap: limits.hotel_cap_per_night,
            currency: limits.currency.clone(),
        });
    }
    for (leg, t) in [("outbound", o), ("return", r)] {
        if !limits.class_allowed(t.mode, &t.class) {
            out.push(Breach::ClassNotAllowed {
                leg: leg.into(),
                transport_id: t.id.clone(),
                mode: t.mode.as_str().into(),
                class: t.class.clone(),
                allowed: limits.allowed(t.mode).to_vec(),
            });
        }
    }
    out
}

/// Whether a combination is possible: the return leaves after the outbound
/// arrives, and the hotel is booked from the arrival day to the return day.
pub(crate) fn feasible(o: &Transport, h: &Hotel, r: &Transport) -> Result<(), String> {
    if r.depart <= o.arrive {
        return Err(format!(
            "return {} leaves at {} before outbound {} arrives at {}",
            r.id, r.depart, o.id, o.arrive
        ));
    }
    if h.check_in != o.arrive.date() || h.check_out != r.depart.date() {
        return Err(format!(
            "hotel {} ({} to {}) does not cover the nights from arrival {} to return {}",
            h.id,
            h.check_in,
            h.check_out,
            o.arrive.date(),
            r.depart.date()
        ));
    }
    Ok(())
}

pub(crate) fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDateTime;

    use super::*;

    fn dt(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M").unwrap()
    }

    fn t(id: &str, price: f64, minutes: i64, depart: &str, arrive: &str, class: &str) -> Transport {
        Transport {
            id: id.into(),
            mode: Mode::Flight,
            price,
            duration_minutes: minutes,
            depart: dt(depart),
            arrive: dt(arrive),
            class: class.into(),
        }
    }

    fn h(id: &str, ppn: f64, from: &str, to: &str) -> Hotel {
        Hotel {
            id: id.into(),
            name: None,
            price_per_night: ppn,
            check_in: from.parse().unwrap(),
            check_out: to.parse().unwrap(),
        }
    }

    fn limits() -> Limits {
        Limits {
            hotel_cap_per_night: 600.0,
            currency: "CNY".into(),
            flight_classes: vec!["economy".into()],
            train_classes: vec!["second".into()],
        }
    }

    fn request() -> Request {
        Request {
            destination: "Shanghai".into(),
            outbound: vec![
                t("O1", 800.0, 130, "2027-03-10T08:00", "2027-03-10T10:10", "economy"),
                t("O2", 2500.0, 120, "2027-03-10T09:00", "2027-03-10T11:00", "business"),
            ],
            hotels: vec![
                h("H1", 450.0, "2027-03-10", "2027-03-12"),
                h("H2", 900.0, "2027-03-10", "2027-03-12"),
                h("H3", 300.0, "2027-03-11", "2027-03-12"),
            ],
            returns: vec![
                t("R1", 700.0, 140, "2027-03-12T18:00", "2027-03-12T20:20", "economy"),
                t("R2", 600.0, 135, "2027-03-10T09:00", "2027-03-10T11:15", "economy"),
            ],
            transport_scores: [("O1", 6.0), ("O2", 9.0), ("R1", 7.0)].map(|(k, v)| (k.to_string(), v)).into(),
            hotel_scores: [("H1", 7.0), ("H2", 9.5)].map(|(k, v)| (k.to_string(), v)).into(),
            weights: Weights::default(),
        }
    }

    #[test]
    fn drops_impossible_combinations_and_flags_breaches() {
        let out = plan(&request(), Some(&limits()), &|_| {});
        assert_eq!(out.stats.combinations, 12);
        // R2 leaves before any arrival: 2 × 3 dropped; H3 starts the day after arrival: 2 × 1 dropped.
        assert_eq!(out.stats.dropped_return_before_arrival, 6);
        assert_eq!(out.stats.dropped_hotel_nights_mismatch, 2);
        assert_eq!(out.stats.feasible, 4);
        assert_eq!(out.missing_scores, vec!["H3", "R2"]);
        let cheapest = &out.proposals[0];
        assert_eq!((cheapest.outbound.id.as_str(), cheapest.hotel.id.as_str()), ("O1", "H1"));
        assert_eq!(cheapest.total_price, 800.0 + 2.0 * 450.0 + 700.0);
        assert!(cheapest.breaches.is_empty());
        let fastest = &out.proposals[1];
        assert_eq!(fastest.outbound.id, "O2");
        assert!(fastest.breaches.iter().any(|b| b.kind() == "class_not_allowed"));
        let preferred = &out.proposals[2];
        assert_eq!((preferred.outbound.id.as_str(), preferred.hotel.id.as_str()), ("O2", "H2"));
        assert_eq!(preferred.breaches.len(), 2, "{:?}", preferred.breaches);
        let compliant = out.best_compliant.unwrap();
        assert_eq!((compliant.outbound.id.as_str(), compliant.hotel.id.as_str()), ("O1", "H1"));
        assert_eq!(out.stats.with_breaches, 3);
    }

    #[test]
    fn weights_move_the_balanced_pick() {
        let mut req = request();
        req.weights = Weights { price: 0.0, time: 0.0, preference: 1.0 };
        let out = plan(&req, None, &|_| {});
        assert_eq!(out.proposals[3].hotel.id, "H2");
        req.weights = Weights { price: 1.0, time: 0.0, preference: 0.0 };
        let out = plan(&req, None, &|_| {});
        assert_eq!(out.proposals[3].hotel.id, "H1");
        assert!(out.proposals.iter().all(|p| p.breaches.is_empty()), "no limits, no breaches");
    }

    #[test]
    fn nothing_feasible_gives_no_proposals() {
        let mut req = request();
        req.returns.truncate(0);
        req.returns.push(t("R2", 600.0, 135, "2027-03-10T09:00", "2027-03-10T11:15", "economy"));
        let out = plan(&req, Some(&limits()), &|_| {});
        assert_eq!(out.stats.feasible, 0);
        assert!(out.proposals.is_empty() && out.best_compliant.is_none());
    }
}
