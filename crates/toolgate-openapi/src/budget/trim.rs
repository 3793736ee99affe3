//! Clipping long texts of a table that is over the budget: each operation's summary (kept
//! first: only its tail goes) and field descriptions, at every depth, cut at a sentence or a
//! word and marked with [`NOTE`]; at the last steps the descriptions of nested fields, then
//! of all fields, are left out (a body as large as DigitalOcean's app spec).

use toolgate_schema::{Items, Route};

/// What ends a clipped text.
pub(super) const NOTE: &str = " … (clipped)";

/// How long texts may be, in characters, at one step of clipping; 0: left out.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tier {
    summary: usize,
    /// A parameter's own description.
    field: usize,
    /// The descriptions inside a parameter (an object's fields, an array's items).
    nested: usize,
}

/// The steps, gentlest first: a table is clipped only as far as it must be.
pub(super) const TIERS: [Tier; 5] = [
    Tier { summary: 200, field: 400, nested: 400 },
    Tier { summary: 120, field: 160, nested: 160 },
    Tier { summary: 80, field: 60, nested: 60 },
    Tier { summary: 80, field: 60, nested: 0 },
    Tier { summary: 60, field: 0, nested: 0 },
];

/// Clip the summaries and field descriptions of `routes` to `tier`; how many descriptions
/// were left out.
pub(super) fn routes(routes: &mut [Route], tier: Tier) -> usize {
    let mut removed = 0;
    for route in routes {
        if let Some(short) = clip(&route.summary, tier.summary) {
            route.summary = short;
        }
        for field in &mut route.fields {
            removed += shape(&mut field.shape, tier.field, tier.nested);
        }
    }
    removed
}

fn shape(items: &mut Items, max: usize, nested: usize) -> usize {
    let mut removed = 0;
    if max == 0 {
        removed += usize::from(items.description.take().is_some());
    } else if let Some(short) = items.description.as_deref().and_then(|d| clip(d, max)) {
        items.description = Some(short);
    }
    if let Some(inner) = items.items.as_deref_mut() {
        removed += shape(inner, nested, nested);
    }
    for field in &mut items.fields {
        removed += shape(&mut field.shape, nested, nested);
    }
    // A union's branches (`oneOf`/`anyOf`) are nested too.
    for branch in items.one_of.iter_mut().chain(items.any_of.iter_mut()) {
        removed += shape(branch, nested, nested);
    }
    removed
}

/// How many texts of `routes` are clipped.
pub(super) fn count_clipped(routes: &[Route]) -> usize {
    fn in_shape(items: &Items) -> usize {
        usize::from(items.description.as_deref().is_some_and(|d| d.ends_with(NOTE)))
            + items.items.as_deref().map_or(0, in_shape)
            + items.fields.iter().map(|f| in_shape(&f.shape)).sum::<usize>()
            + items.one_of.iter().chain(&items.any_of).map(in_shape).sum::<usize>()
    }
    routes
        .iter()
        .map(|r| {
            usize::from(r.summary.ends_with(NOTE))
                + r.fields.iter().map(|f| in_shape(&f.shape)).sum::<usize>()
        })
        .sum()
}

/// `text` cut to at most `max` characters with [`NOTE`] after it, at the last sentence end or
/// else the last space of its second half; `None` when it is short enough.
fn clip(text: &str, max: usize) -> Option<String> {
    let whole = text.strip_suffix(NOTE).unwrap_or(text);
    if text.chars().count() <= max {
        return None;
    }
    let keep = max.saturating_sub(NOTE.chars().count()).max(1);
    let head: String = whole.chars().take(keep).collect();
    let half = head.len() / 2;
    let cut = head
        .rfind(". ")
        .filter(|&i| i >= half)
        .map(|i| i + 1)
        .or_else(|| head.rfind(char::is_whitespace).filter(|&i| i >= half))
        .unwrap_or(head.len());
    Some(format!("{}{NOTE}", head[..cut].trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_cut_at_a_sentence_or_a_word_with_the_note() {
        assert_eq!(clip("Short.", 100), None);
        let text = "Lists the users. Each user has a name, a role and the date it was added to the cluster.";
        assert_eq!(clip(text, 40).unwrap(), "Lists the users. … (clipped)");
        let words = "Create a new database user with the given name and password for the cluster";
        let short = clip(words, 40).unwrap();
        assert_eq!(short, "Create a new database user … (clipped)");
        assert!(short.chars().count() <= 40);
        // Clipped again at a lower step: one note, still within the limit.
        let shorter = clip(&short, 25).unwrap();
        assert_eq!(shorter, "Create a new … (clipped)");
        assert_eq!(clip(&shorter, 40), None);
        // No space to cut at: cut where the limit falls, on a character boundary.
        let long = "é".repeat(50);
        assert_eq!(clip(&long, 20).unwrap(), format!("{}{NOTE}", "é".repeat(8)));
    }

    #[test]
    fn nested_descriptions_are_clipped_and_counted() {
        let mut route: Route =
            toml::from_str("op = \"post_x\"\nmethod = \"POST\"\npath = \"/x\"\nsummary = \"Create an x\"")
                .unwrap();
        let mut inner = toolgate_schema::Field::new("leaf", toolgate_schema::FieldType::String)
            .describe("word ".repeat(100));
        inner.shape.items = None;
        let mut outer =
            toolgate_schema::Field::new("node", toolgate_schema::FieldType::Object).describe("short");
        outer.shape.fields.push(inner);
        route.fields.push(outer);
        let mut all = vec![route];
        assert_eq!(count_clipped(&all), 0);
        routes(&mut all, TIERS[0]);
        assert_eq!(count_clipped(&all), 1);
        let leaf = all[0].fields[0].shape.fields[0].shape.description.clone().unwrap();
        assert!(leaf.ends_with(NOTE) && leaf.chars().count() <= 400, "{leaf}");
        assert_eq!(all[0].fields[0].shape.description.as_deref(), Some("short"));
        // The last steps leave out nested descriptions, then every one, and say how many.
        assert_eq!(routes(&mut all, TIERS[3]), 1);
        assert_eq!(all[0].fields[0].shape.fields[0].shape.description, None);
        assert_eq!(all[0].fields[0].shape.description.as_deref(), Some("short"));
        assert_eq!(routes(&mut all, TIERS[4]), 1);
        assert_eq!(all[0].fields[0].shape.description, None);
    }

    #[test]
    fn a_unions_branches_are_clipped_too() {
        let mut route: Route =
            toml::from_str("op = \"post_x\"\nmethod = \"POST\"\npath = \"/x\"\nsummary = \"Create an x\"")
                .unwrap();
        let mut field = toolgate_schema::Field::new("input", toolgate_schema::FieldType::Object);
        let mut branch = Items::new(toolgate_schema::FieldType::String);
        branch.description = Some("word ".repeat(100));
        field.shape.one_of.push(branch.clone());
        field.shape.any_of.push(branch);
        route.fields.push(field);
        let mut all = vec![route];
        routes(&mut all, TIERS[0]);
        assert_eq!(count_clipped(&all), 2);
        assert_eq!(routes(&mut all, TIERS[3]), 2, "left out at the nested step");
        assert_eq!(count_clipped(&all), 0);
    }
}
