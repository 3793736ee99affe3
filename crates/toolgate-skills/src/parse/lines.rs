//! Paths into the front matter, the checker that collects field errors
//! with their source lines, and deserializer messages made readable.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::error::{ErrorKind, SkillError};

/// A step in a path into the front matter.
#[derive(Debug, Clone, Copy)]
pub(super) enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

pub(super) fn render(path: &[Seg<'_>]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if out.is_empty() => out.push_str(k),
            Seg::Key(k) => {
                let _ = write!(out, ".{k}");
            }
            Seg::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

/// A YAML or field-type error from the deserializer, without its position
/// (the line goes in front) and with the fix.
pub(super) fn yaml_message(raw: &str) -> String {
    let mut msg = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(i) = rest.find(" at line ") {
        msg.push_str(&rest[..i]);
        let after = &rest[i + " at line ".len()..];
        let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let n = digits(after);
        let tail = &after[n..];
        rest = match tail.strip_prefix(" column ") {
            Some(col) if n > 0 => &col[digits(col)..],
            _ => {
                msg.push_str(" at line ");
                after
            }
        };
    }
    msg.push_str(rest);
    if msg.contains("unknown field") {
        format!("{msg}; remove it or fix its spelling")
    } else if msg.contains("invalid type")
        || msg.contains("missing field")
        || msg.contains("unknown variant")
        || msg.contains("invalid value")
    {
        format!("{msg}; fix the value")
    } else {
        format!("the front matter is not valid YAML: {msg}; fix the YAML syntax")
    }
}

/// The field a deserializer message is about: its path prefix
/// (`steps[0]: ...`), extended by the unknown field's name when that is the problem.
pub(super) fn yaml_field(message: &str) -> Option<String> {
    let is_path = |p: &str| {
        !p.is_empty()
            && p.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '[' | ']'))
    };
    let (path, rest) = match message.split_once(": ") {
        Some((p, rest)) if is_path(p) => (Some(p), rest),
        _ => (None, message),
    };
    let unknown = rest
        .strip_prefix("unknown field `")
        .and_then(|r| r.split_once('`'))
        .map(|(name, _)| name)
        .filter(|name| !name.is_empty());
    match (path, unknown) {
        (Some(p), Some(u)) => Some(format!("{p}.{u}")),
        (None, Some(u)) => Some(u.to_string()),
        (Some(p), None) => Some(p.to_string()),
        (None, None) => None,
    }
}

/// Collects field errors and the lines of the fields.
pub(super) struct Checker<'a> {
    pub(super) file: &'a Path,
    pub(super) front: &'a str,
    pub(super) skill: Option<String>,
    pub(super) errors: Vec<SkillError>,
    pub(super) lines: BTreeMap<String, usize>,
}

impl Checker<'_> {
    /// The file line of a field; the front matter starts on line 2.
    pub(super) fn line_of(&self, path: &[Seg<'_>]) -> Option<usize> {
        key_line(self.front, path).map(|i| i + 2)
    }

    /// Remember the line of a field that is written out (not one only implied).
    pub(super) fn note(&mut self, path: &[Seg<'_>]) {
        if let Some((line, depth)) = key_line_depth(self.front, path)
            && depth == path.len()
        {
            self.lines.insert(render(path), line + 2);
        }
    }

    pub(super) fn error(&mut self, path: &[Seg<'_>], kind: ErrorKind, message: String) {
        let line = self.line_of(path);
        self.push(line, &render(path), kind, message);
    }

    pub(super) fn push(&mut self, line: Option<usize>, field: &str, kind: ErrorKind, message: String) {
        self.errors.push(
            SkillError::new(self.file, kind, message)
                .at(Some(line.unwrap_or(1)))
                .field(field)
                .skill(self.skill.as_deref()),
        );
    }
}

/// The 0-based line (in the front matter) of the deepest part of `path`
/// that can be found; `None` when not even the first part is there.
pub(super) fn key_line(front: &str, path: &[Seg<'_>]) -> Option<usize> {
    key_line_depth(front, path).map(|(line, _)| line)
}

/// A small indentation-based walk over block-style YAML: good enough to
/// point at a key in hand-written front matter (flow-style mappings point
/// at their parent key).
pub(super) fn key_line_depth(front: &str, path: &[Seg<'_>]) -> Option<(usize, usize)> {
    let lines: Vec<&str> = front.lines().collect();
    let content = |i: usize| {
        let t = lines[i].trim();
        !t.is_empty() && !t.starts_with('#')
    };
    let mut region = 0..lines.len();
    let mut found = None;
    for (depth, seg) in path.iter().enumerate() {
        let Some(first) = region.clone().find(|&i| content(i)) else { break };
        match *seg {
            Seg::Key(key) => {
                let probe = if bare_dash(lines[first]) {
                    match (first + 1..region.end).find(|&i| content(i)) {
                        Some(next) => next,
                        None => break,
                    }
                } else {
                    first
                };
                let col = key_column(lines[probe]);
                let Some(at) = region.clone().find(|&i| {
                    content(i) && key_column(lines[i]) == col && starts_with_key(&lines[i][col..], key)
                }) else {
                    break;
                };
                found = Some((at, depth + 1));
                let end = (at + 1..region.end)
                    .find(|&i| {
                        content(i) && {
                            let ind = indent(lines[i]);
                            ind < col || (ind == col && !is_dash(lines[i]))
                        }
                    })
                    .unwrap_or(region.end);
                region = at + 1..end;
            }
            Seg::Index(n) => {
                let d = indent(lines[first]);
                let items: Vec<usize> = region
                    .clone()
                    .filter(|&i| content(i) && indent(lines[i]) == d && is_dash(lines[i]))
                    .collect();
                let Some(&at) = items.get(n) else { break };
                found = Some((at, depth + 1));
                region = at..items.get(n + 1).copied().unwrap_or(region.end);
            }
        }
    }
    found
}

pub(super) fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

pub(super) fn is_dash(line: &str) -> bool {
    let t = line.trim_start_matches(' ');
    t == "-" || t.starts_with("- ")
}

pub(super) fn bare_dash(line: &str) -> bool {
    line.trim() == "-"
}

/// The column where a line's mapping key starts (after `- ` for an item).
pub(super) fn key_column(line: &str) -> usize {
    let ind = indent(line);
    if is_dash(line) {
        let after = &line[ind + 1..];
        ind + 1 + (after.len() - after.trim_start_matches(' ').len())
    } else {
        ind
    }
}

pub(super) fn starts_with_key(text: &str, key: &str) -> bool {
    let rest = text
        .strip_prefix(key)
        .or_else(|| {
            text.strip_prefix('"').and_then(|t| t.strip_prefix(key)).and_then(|t| t.strip_prefix('"'))
        })
        .or_else(|| {
            text.strip_prefix('\'').and_then(|t| t.strip_prefix(key)).and_then(|t| t.strip_prefix('\''))
        });
    rest.and_then(|r| r.strip_prefix(':')).is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']))
}
