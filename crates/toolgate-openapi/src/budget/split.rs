//! Splitting a table's operations by sub-resource: the path segments that are neither
//! variables nor versions, compared level by level from the first one where the operations
//! differ.

use toolgate_schema::{Route, RouteTable};
use toolgate_tokens::Memo;

use super::measure;
use crate::operation::snake_case;

/// Longest tool name, in characters (`toolgate_core::names::is_tool_name`).
const NAME_MAX: usize = 64;

/// One operation with what it adds to a table's tokens.
struct Costed {
    /// Its place in the table, to keep the document's order in every part.
    index: usize,
    route: Route,
    /// The resource segments of its path (`/v2/databases/{id}/users` → databases, users).
    segments: Vec<String>,
    cost: usize,
}

/// The table's operations in parts by sub-resource, each part (name, operations) in the
/// document's order; a part may still be over `limit` where its operations share every path
/// segment (then [`chunks`] cuts it) or one operation alone is that large.
pub(super) fn split(
    memo: &Memo,
    name: &str,
    routes: Vec<Route>,
    limit: usize,
    build: &dyn Fn(&str, Vec<Route>) -> RouteTable,
) -> Vec<(String, Vec<Route>)> {
    // A table's tokens are close to its header (name, sentence, the `oneOf` around the
    // branches) plus what each operation adds: measured once per operation, summed per part.
    let header = measure(memo, &build(name, Vec::new()));
    let costed: Vec<Costed> = routes
        .into_iter()
        .enumerate()
        .map(|(index, route)| {
            let cost = measure(memo, &build(name, vec![route.clone()])).saturating_sub(header);
            Costed { index, segments: segments(route.path_template()), route, cost }
        })
        .collect();
    let mut out = Vec::new();
    part(name.to_owned(), costed, 0, limit.saturating_sub(header), &mut out);
    out.into_iter()
        .map(|(name, mut ops)| {
            ops.sort_by_key(|c| c.index);
            (name, ops.into_iter().map(|c| c.route).collect())
        })
        .collect()
}

fn total(ops: &[Costed]) -> usize {
    ops.iter().map(|c| c.cost).sum()
}

/// Split `ops` (named `name`) at the first level from `depth` where their segments differ,
/// within `room` tokens besides the header.
fn part(name: String, ops: Vec<Costed>, depth: usize, room: usize, out: &mut Vec<(String, Vec<Costed>)>) {
    if total(&ops) <= room || ops.len() <= 1 {
        out.push((name, ops));
        return;
    }
    let deepest = ops.iter().map(|c| c.segments.len()).max().unwrap_or(0);
    let Some(level) =
        (depth..deepest).find(|&d| ops.iter().any(|c| c.segments.get(d) != ops[0].segments.get(d)))
    else {
        out.push((name, ops));
        return;
    };
    // Groups in order of first appearance; no segment at this level (or the one the name
    // already ends with: `update_pets` over `/pets/...`) is the resource itself, the base.
    let mut base: Vec<Costed> = Vec::new();
    let mut groups: Vec<(String, Vec<Costed>)> = Vec::new();
    for c in ops {
        match c.segments.get(level).filter(|s| !names_it(&name, s)).cloned() {
            None => base.push(c),
            Some(s) => match groups.iter_mut().find(|(g, _)| *g == s) {
                Some((_, members)) => members.push(c),
                None => groups.push((s, vec![c])),
            },
        }
    }
    // Sub-resources go back into the base, smallest first, while it has room: a table just
    // over the limit loses a large sub-resource or two, not all of them.
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&i| (total(&groups[i].1), i));
    let mut used = total(&base);
    let mut merged = vec![false; groups.len()];
    for i in order {
        let size = total(&groups[i].1);
        // Leave one sub-resource at least on its own, else nothing would be split.
        if used + size <= room && merged.iter().filter(|m| !**m).count() > 1 {
            used += size;
            merged[i] = true;
        }
    }
    let mut rest = Vec::new();
    for ((segment, members), merged) in groups.into_iter().zip(merged) {
        if merged {
            base.extend(members);
        } else {
            rest.push((segment, members));
        }
    }
    if !base.is_empty() {
        // Without a segment at this level the base cannot be split by path any further.
        out.push((name.clone(), base));
    }
    for (segment, members) in rest {
        part(join(&name, &segment), members, level + 1, room, out);
    }
}

/// Whether `name` already ends with the resource `segment` (singular or plural).
fn names_it(name: &str, segment: &str) -> bool {
    let stem = |w: &str| w.trim_end_matches('s').to_owned();
    name.rsplit('_').next().is_some_and(|last| stem(last) == stem(segment))
        || name.ends_with(&format!("_{segment}"))
}

/// The resource segments of a path: neither `{variables}` nor versions (`v2`) nor `api`,
/// in snake_case.
fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty() && !s.contains('{') && !is_version(s) && *s != "api")
        .map(snake_case)
        .collect()
}

fn is_version(segment: &str) -> bool {
    segment.len() > 1 && segment.starts_with('v') && segment[1..].chars().all(|c| c.is_ascii_digit())
}

/// `name_suffix`, at most [`NAME_MAX`] characters: the name is cut at a word so the suffix
/// is kept (it is what tells the parts apart).
pub(super) fn join(name: &str, suffix: &str) -> String {
    let suffix: String = suffix.chars().take(NAME_MAX / 2).collect();
    let mut head = name.to_owned();
    while head.len() + 1 + suffix.len() > NAME_MAX {
        match head.rfind('_') {
            Some(cut) if cut > 0 => head.truncate(cut),
            _ => head.truncate(NAME_MAX - 1 - suffix.len()),
        }
    }
    format!("{head}_{suffix}")
}

/// Cut operations that share their path segments into consecutive parts within `limit`
/// (`name`, `name_2`, `name_3`, ...), each with one operation at least.
pub(super) fn chunks(
    memo: &Memo,
    name: &str,
    routes: Vec<Route>,
    limit: usize,
    build: &dyn Fn(&str, Vec<Route>) -> RouteTable,
) -> Vec<RouteTable> {
    let mut parts: Vec<Vec<Route>> = Vec::new();
    let mut current: Vec<Route> = Vec::new();
    for route in routes {
        current.push(route);
        if current.len() > 1
            && !super::within(memo, &build(name, current.clone()), limit).0
            && let Some(last) = current.pop()
        {
            parts.push(std::mem::replace(&mut current, vec![last]));
        }
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
        .into_iter()
        .enumerate()
        .map(|(i, routes)| match i {
            0 => build(name, routes),
            _ => build(&join(name, &(i + 1).to_string()), routes),
        })
        .collect()
}
