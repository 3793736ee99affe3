//! "Did you mean": the one function every surface uses to propose close
//! names (tool and skill names in the gateway, operations, fields and enum
//! values here), so the same typo gets the same suggestion everywhere.

/// Names longer than this are not compared: nobody mistypes a name that
/// long, and a huge one must not cost time.
const MAX_COMPARED: usize = 128;

/// How close two names must be (Jaro-Winkler, after folding) to be offered.
const THRESHOLD: f64 = 0.8;

/// Up to three of `candidates` close to `wanted`, best first (ties by name).
///
/// Close means: the same after folding case, `_` and `-`; the same words in
/// another order (`order_travel_query` for `query_travel_order`); one
/// containing the other; or a Jaro-Winkler similarity of at least 0.8.
///
/// ```
/// let names = ["query_travel_order", "cancel_travel_order", "query_weather"];
/// assert_eq!(toolgate_schema::suggest("query_order", names)[0], "query_travel_order");
/// assert_eq!(toolgate_schema::suggest("Meal_Type", ["meal_type"]), ["meal_type"]);
/// assert!(toolgate_schema::suggest("zebra", ["date", "meal"]).is_empty());
/// ```
pub fn suggest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    if wanted.is_empty() || wanted.chars().count() > MAX_COMPARED {
        return Vec::new();
    }
    let folded = fold(wanted);
    let words = sorted_words(wanted);
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .filter_map(|name| {
            let other = fold(name);
            let score = if other == folded || sorted_words(name) == words {
                1.0
            } else if !folded.is_empty() && (other.contains(&folded) || folded.contains(&other)) {
                0.9
            } else {
                strsim::jaro_winkler(&folded, &other)
            };
            (score >= THRESHOLD).then_some((score, name))
        })
        .collect();
    scored.sort_by(|x, y| y.0.total_cmp(&x.0).then_with(|| x.1.cmp(y.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, n)| n.to_owned()).collect()
}

/// Lower case without `_` and `-`.
fn fold(s: &str) -> String {
    s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

fn sorted_words(s: &str) -> Vec<String> {
    let mut words: Vec<String> =
        s.split(['_', '-']).filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
    words.sort_unstable();
    words
}

#[cfg(test)]
mod tests {
    use super::suggest;

    fn check(wanted: &str, names: &[&str], expect: &[&str]) {
        assert_eq!(suggest(wanted, names.iter().copied()), expect, "for {wanted:?}");
    }

    #[test]
    fn close_names_are_offered() {
        let tools = ["query_travel_order", "cancel_travel_order", "query_booking_record", "query_weather"];
        assert_eq!(suggest("query_order", tools)[0], "query_travel_order");
        assert_eq!(suggest("order_travel_query", tools)[0], "query_travel_order");
        check("zzzz", &tools, &[]);
        assert!(suggest("query", tools).len() <= 3);
        check("dat", &["date", "meal"], &["date"]);
        check("Meal_Type", &["meal_type"], &["meal_type"]);
        check("zebra", &["date", "meal"], &[]);
        check("list_meal", &["get_daily_summary", "list_meals", "search_foods"], &["list_meals"]);
        check("Lunch", &["breakfast", "lunch", "dinner", "snack"], &["lunch"]);
        check("side", &["site", "cm"], &["site"]);
        check(&"x".repeat(1000), &["xxx"], &[]);
        check("", &["a"], &[]);
    }
}
