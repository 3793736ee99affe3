//! The last step for a tool still over the budget once its texts are clipped as far as they
//! go (one operation whose schema alone is that large: OpenAI's `createResponse`): its deepest
//! nested schemas are cut to free-form values, as the importer cuts a schema that nests deeper
//! than [`crate::schema::MAX_DEPTH`] levels, at a lower depth each step: the deepest level
//! first, its largest subtrees first, until the tool is within the limit. A cut schema keeps
//! its type (a free-form object takes any keys, an array any items) and its description says
//! what was left out; the value is taken and sent as given.
//!
//! Only a JSON or multipart body is cut (a query, a header or a form holds scalars), in a
//! multipart body only inside a part (an object part is sent as JSON text); never a branch of
//! a union on its own (the other branches would overlap it: the union as a whole is cut), nor
//! a schema holding a file (a multipart body's base64 member changes what is sent).

use toolgate_schema::{BodyEncoding, FieldType, Items, Location, Route, RouteTable};
use toolgate_tokens::Memo;

use super::measure;
use crate::schema::{cut_note, with_note};

/// The fewest bytes (of the shape's serialized form) a cut must free: a smaller one would
/// cost the model about as much in its note as it saves.
const MIN_SAVED: usize = 200;

/// How many member names a cut object's note lists.
const NAMES_SHOWN: usize = 6;

/// A step from a shape to one inside it.
#[derive(Debug, Clone, Copy)]
enum Step {
    Field(usize),
    Items,
    Values,
    OneOf(usize),
    AnyOf(usize),
}

/// A shape that may be cut: where it is (a route's field, then the steps inside it), how deep
/// (a field's own shape is level 1), and how many bytes cutting it frees.
struct Candidate {
    route: usize,
    field: usize,
    steps: Vec<Step>,
    depth: usize,
    saved: usize,
}

/// `table` with its deepest shapes cut, level by level and largest first, until it is within
/// `limit` tokens; how many shapes were cut, and whether it fits.
pub(super) fn cut(
    memo: &Memo,
    table: RouteTable,
    limit: usize,
    build: &dyn Fn(&str, Vec<Route>) -> RouteTable,
) -> (RouteTable, usize, bool) {
    let mut tokens = measure(memo, &table);
    if tokens <= limit {
        return (table, 0, true);
    }
    let name = table.tool.clone();
    let mut routes = table.routes.clone();
    let mut table = table;
    let mut cuts = 0;
    let deepest = candidates(&routes, limit).iter().map(|c| c.depth).max().unwrap_or(0);
    for depth in (1..=deepest).rev() {
        let mut level: Vec<Candidate> =
            candidates(&routes, limit).into_iter().filter(|c| c.depth == depth).collect();
        // Largest first; equal ones in the document's order (the sort is stable).
        level.sort_by_key(|c| std::cmp::Reverse(c.saved));
        // Tokens per serialized byte, to know when enough is cut to count again.
        let mut ratio = tokens as f64 / bytes_of(&routes).max(1) as f64;
        let mut freed = 0.0;
        let mut counted = true;
        while !level.is_empty() {
            // The largest, unless a smaller one alone frees what is still needed: then the
            // smallest such, so that no more is cut than must be.
            let needed = tokens.saturating_sub(limit) as f64 - freed;
            let pick = level.iter().rposition(|c| c.saved as f64 * ratio >= needed).unwrap_or(0);
            let candidate = level.remove(pick);
            apply(&mut routes, &candidate, limit);
            cuts += 1;
            counted = false;
            freed += candidate.saved as f64 * ratio;
            if freed >= tokens.saturating_sub(limit) as f64 {
                table = build(&name, routes.clone());
                tokens = measure(memo, &table);
                counted = true;
                if tokens <= limit {
                    return (table, cuts, true);
                }
                ratio = tokens as f64 / bytes_of(&routes).max(1) as f64;
                freed = 0.0;
            }
        }
        if !counted {
            table = build(&name, routes.clone());
            tokens = measure(memo, &table);
            if tokens <= limit {
                return (table, cuts, true);
            }
        }
    }
    (table, cuts, false)
}

/// Every shape of `routes` that may be cut and frees enough when it is.
fn candidates(routes: &[Route], limit: usize) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (r, route) in routes.iter().enumerate() {
        let shallowest = match route.body_encoding {
            BodyEncoding::Json => 1,
            BodyEncoding::Multipart => 2,
            _ => continue,
        };
        for (f, field) in route.fields.iter().enumerate() {
            if route.location(&field.name) != Location::Body {
                continue;
            }
            let mut walk = Walk { route: r, field: f, shallowest, limit, steps: Vec::new(), out: &mut out };
            walk.shape(&field.shape, 1, true);
        }
    }
    out
}

struct Walk<'a> {
    route: usize,
    field: usize,
    shallowest: usize,
    limit: usize,
    steps: Vec<Step>,
    out: &'a mut Vec<Candidate>,
}

impl Walk<'_> {
    fn shape(&mut self, items: &Items, depth: usize, may_cut: bool) {
        if may_cut && depth >= self.shallowest && !holds_file(items) {
            let saved = bytes(items).saturating_sub(bytes(&cut_shape(items, self.limit)));
            if saved >= MIN_SAVED {
                self.out.push(Candidate {
                    route: self.route,
                    field: self.field,
                    steps: self.steps.clone(),
                    depth,
                    saved,
                });
            }
        }
        let inner = |walk: &mut Self, step: Step, items: &Items, may_cut: bool| {
            walk.steps.push(step);
            walk.shape(items, depth + 1, may_cut);
            walk.steps.pop();
        };
        for (i, field) in items.fields.iter().enumerate() {
            inner(self, Step::Field(i), &field.shape, true);
        }
        if let Some(each) = items.items.as_deref() {
            inner(self, Step::Items, each, true);
        }
        if let Some(values) = items.values.as_deref() {
            inner(self, Step::Values, values, true);
        }
        for (i, branch) in items.one_of.iter().enumerate() {
            inner(self, Step::OneOf(i), branch, false);
        }
        for (i, branch) in items.any_of.iter().enumerate() {
            inner(self, Step::AnyOf(i), branch, false);
        }
    }
}

/// Cut the candidate's shape in `routes`.
fn apply(routes: &mut [Route], candidate: &Candidate, limit: usize) {
    let mut items = &mut routes[candidate.route].fields[candidate.field].shape;
    for step in &candidate.steps {
        items = match *step {
            Step::Field(i) => &mut items.fields[i].shape,
            Step::Items => items.items.as_deref_mut().expect("a candidate's items"),
            Step::Values => items.values.as_deref_mut().expect("a candidate's values"),
            Step::OneOf(i) => &mut items.one_of[i],
            Step::AnyOf(i) => &mut items.any_of[i],
        };
    }
    *items = cut_shape(items, limit);
}

/// What a shape becomes when it is cut: its type, nullability and description kept, its
/// members', items' or branches' schemas left out (any value there), the description saying
/// which.
fn cut_shape(items: &Items, limit: usize) -> Items {
    let budget = format!("to keep this tool within the {limit}-token limit");
    let (left_out, what) = match items.ty {
        FieldType::Object if items.fields.is_empty() => {
            ("the schema of its values is left out".to_owned(), "any JSON object")
        }
        FieldType::Object => {
            let names: Vec<String> =
                items.fields.iter().take(NAMES_SHOWN).map(|f| format!("`{}`", f.sent_name())).collect();
            let more = match items.fields.len() {
                n if n > NAMES_SHOWN => format!(", … {n} in all"),
                _ => String::new(),
            };
            (
                format!("the schemas of its members ({}{more}) are left out", names.join(", ")),
                "any JSON object",
            )
        }
        FieldType::Array => ("the schema of its items is left out".to_owned(), "any items"),
        _ => {
            let n = items.one_of.len() + items.any_of.len();
            (format!("the schemas of its {n} alternatives are left out"), "any value")
        }
    };
    let note = cut_note(&format!("{left_out} {budget}"), what);
    let mut out = match items.ty {
        FieldType::Object => {
            let mut out = Items::new(FieldType::Object);
            out.values = Some(Box::new(Items::new(FieldType::Any)));
            out
        }
        FieldType::Array => {
            let mut out = Items::new(FieldType::Array);
            out.items = Some(Box::new(Items::new(FieldType::Any)));
            (out.min_items, out.max_items) = (items.min_items, items.max_items);
            out
        }
        // A scalar or any value with branches: the branches go, its own limits stay.
        _ => {
            let mut out = items.clone();
            out.fields = Vec::new();
            (out.items, out.values) = (None, None);
            (out.one_of, out.any_of) = (Vec::new(), Vec::new());
            out
        }
    };
    out.nullable = items.nullable;
    out.description = Some(with_note(items.description.as_deref(), note));
    out
}

/// Whether a shape is or holds a file (a multipart body's `content_encoding` member).
fn holds_file(items: &Items) -> bool {
    items.content_encoding.is_some()
        || items.fields.iter().any(|f| holds_file(&f.shape))
        || items.items.as_deref().is_some_and(holds_file)
        || items.values.as_deref().is_some_and(holds_file)
        || items.one_of.iter().chain(&items.any_of).any(holds_file)
}

/// The size of a shape, in bytes of its serialized form.
fn bytes(items: &Items) -> usize {
    serde_json::to_vec(items).map_or(0, |v| v.len())
}

fn bytes_of(routes: &[Route]) -> usize {
    routes.iter().flat_map(|r| &r.fields).map(|f| bytes(&f.shape)).sum()
}
