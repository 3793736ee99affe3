//! jsonschema's errors turned into field errors written for the model.

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;
use toolgate_core::FieldError;
use toolgate_core::names::is_injected_field;
use toolgate_core::params::type_name;

use crate::describe::{closest, describe, format_words, list, show};
use crate::table::DATE_PATTERN;
use crate::walk::{escape, resolve, unescape};

/// Turns jsonschema errors into field errors.
pub(super) struct Report<'a> {
    /// The document the validator was compiled from (schema paths point into it).
    pub(super) doc: &'a Value,
    /// The dispatch property and the chosen operation, when there is one.
    pub(super) op: Option<(&'a str, &'a str)>,
}

impl Report<'_> {
    pub(super) fn collect<'i>(&self, errors: impl Iterator<Item = ValidationError<'i>>) -> Vec<FieldError> {
        let mut out = Vec::new();
        for error in errors {
            self.convert(&error, &mut out);
        }
        out
    }

    /// The schema object that holds the failing keyword.
    fn keyword_parent(&self, error: &ValidationError<'_>) -> &Value {
        let path = error.schema_path().as_str();
        let parent = path.rsplit_once('/').map_or("", |(p, _)| p);
        lookup(self.doc, parent).unwrap_or(&Value::Null)
    }

    fn convert(&self, error: &ValidationError<'_>, out: &mut Vec<FieldError>) {
        let ptr = error.instance_path().as_str();
        let actual: &Value = error.instance().as_ref();
        let parent = self.keyword_parent(error);
        let label = label(ptr);
        let expected = || describe(self.doc, parent);
        let mut push = |pointer: String, expected: String, actual: &Value, message: String| {
            out.push(FieldError::new(pointer, expected, actual, message));
        };
        match error.kind() {
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                let pointer = format!("{ptr}/{}", escape(name));
                let schema = parent.get("properties").and_then(|p| p.get(name)).unwrap_or(&Value::Bool(true));
                let expected = describe(self.doc, schema);
                let whose = match (ptr, self.op) {
                    ("", Some((_, op))) => format!(" by op `{op}`"),
                    _ => String::new(),
                };
                let message =
                    format!("{} is required{whose} but missing; send {expected}", self::label(&pointer));
                push(pointer, expected, &Value::Null, message);
            }
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                let allowed: Vec<&str> = parent
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| {
                        p.keys().map(String::as_str).filter(|k| Some(*k) != self.op.map(|o| o.0)).collect()
                    })
                    .unwrap_or_default();
                let allowed_text = if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") };
                for name in unexpected {
                    let pointer = format!("{ptr}/{}", escape(name));
                    let value = actual.get(name).unwrap_or(&Value::Null);
                    let owner = match (ptr, self.op) {
                        ("", Some((_, op))) => format!("a parameter of op `{op}`"),
                        ("", None) => "a parameter of this tool".to_string(),
                        _ => format!("a field of {label}"),
                    };
                    let hint = if is_injected_field(name) {
                        " It is filled in by the system from the caller's identity: remove it.".to_string()
                    } else if let Some(c) = closest(name, allowed.iter().copied()) {
                        format!(" Did you mean `{c}`?")
                    } else {
                        " Remove it.".to_string()
                    };
                    let message = format!("`{name}` is not {owner}; allowed: {allowed_text}.{hint}");
                    push(pointer, format!("one of the known fields: {allowed_text}"), value, message);
                }
            }
            ValidationErrorKind::Type { .. } => {
                let expected = expected();
                let message = if ptr.is_empty() {
                    format!("the parameters must be {expected}, got {}", type_name(actual))
                } else {
                    format!("{label} must be {expected}, got {}{}", got(actual), type_hint(parent, actual))
                };
                push(ptr.to_string(), expected, actual, message);
            }
            ValidationErrorKind::Enum { options } => {
                let options = options.as_array().map(Vec::as_slice).unwrap_or_default();
                let hint = actual
                    .as_str()
                    .and_then(|s| closest(s, options.iter().filter_map(Value::as_str)))
                    .map(|c| format!("; did you mean {c:?}?"))
                    .unwrap_or_default();
                let expected = format!("one of {}", list(options));
                let message = format!("{label} must be {expected}; got {}{hint}", show(actual));
                push(ptr.to_string(), expected, actual, message);
            }
            ValidationErrorKind::Constant { expected_value } => {
                let expected = format!("exactly {}", show(expected_value));
                let message = format!("{label} must be {expected}; got {}", show(actual));
                push(ptr.to_string(), expected, actual, message);
            }
            ValidationErrorKind::Minimum { limit } => {
                let message = format!("{label} must be at least {limit}; got {}", show(actual));
                push(ptr.to_string(), expected(), actual, message);
            }
            ValidationErrorKind::ExclusiveMinimum { limit } => {
                let message = format!("{label} must be greater than {limit}; got {}", show(actual));
                push(ptr.to_string(), expected(), actual, message);
            }
            ValidationErrorKind::Maximum { limit } => {
                let message = format!("{label} must be at most {limit}; got {}", show(actual));
                push(ptr.to_string(), expected(), actual, message);
            }
            ValidationErrorKind::ExclusiveMaximum { limit } => {
                let message = format!("{label} must be less than {limit}; got {}", show(actual));
                push(ptr.to_string(), expected(), actual, message);
            }
            ValidationErrorKind::MultipleOf { multiple_of } => {
                let message = format!("{label} must be a multiple of {multiple_of}; got {}", show(actual));
                push(ptr.to_string(), expected(), actual, message);
            }
            ValidationErrorKind::MinLength { limit } => {
                let n = actual.as_str().map_or(0, |s| s.chars().count());
                let message = if *limit == 1 {
                    format!("{label} must not be empty")
                } else {
                    format!("{label} must be at least {limit} characters long; it has {n}")
                };
                push(ptr.to_string(), expected(), actual, message);
            }
            ValidationErrorKind::MaxLength { limit } => {
                let n = actual.as_str().map_or(0, |s| s.chars().count());
                let message =
                    format!("{label} must be at most {limit} characters long; it has {n}, shorten it");
                push(ptr.to_string(), expected(), actual, message);
            }
            ValidationErrorKind::MinItems { limit } => {
                let n = actual.as_array().map_or(0, Vec::len);
                let message = format!("{label} needs at least {limit} items; it has {n}");
                push(ptr.to_string(), expected(), actual, message);
            }
            ValidationErrorKind::MaxItems { limit } => {
                let n = actual.as_array().map_or(0, Vec::len);
                let message = format!("{label} may have at most {limit} items; it has {n}");
                push(ptr.to_string(), expected(), actual, message);
            }
            ValidationErrorKind::MinProperties { limit } => {
                let message = format!("{label} needs at least {limit} fields");
                push(ptr.to_string(), expected(), actual, message);
            }
            ValidationErrorKind::MaxProperties { limit } => {
                let message = format!("{label} may have at most {limit} fields");
                push(ptr.to_string(), expected(), actual, message);
            }
            ValidationErrorKind::UniqueItems => {
                let message = format!("{label} has duplicate items; send each item once");
                push(ptr.to_string(), expected(), actual, message);
            }
            ValidationErrorKind::Pattern { pattern } => {
                let format = parent.get("format").and_then(Value::as_str);
                let (expected, message) = if format == Some("date") || pattern == DATE_PATTERN {
                    let words = format_words("date").unwrap_or("a date YYYY-MM-DD");
                    (words.to_string(), format!("{label} must be {words}; got {}", show(actual)))
                } else if pattern == crate::PLAIN_TEXT {
                    let words = format!("text {}", crate::tool::PLAIN_TEXT_WORDS);
                    let message = format!(
                        "{label} is blank, or contains a control character or a bidirectional mark (U+202E and the \
                         like), which can make text read differently from what it is; send the text without them"
                    );
                    (words, message)
                } else {
                    (expected(), format!("{label} must match the pattern {pattern}; got {}", show(actual)))
                };
                push(ptr.to_string(), expected, actual, message);
            }
            ValidationErrorKind::Format { format } => {
                let words = format_words(format).map_or_else(|| format!("a valid {format}"), str::to_string);
                let shaped = format == "date" && actual.as_str().is_some_and(date_shaped);
                let message = if shaped {
                    format!(
                        "{label} {} is not a real calendar date; check the month and the day",
                        show(actual)
                    )
                } else if format == "date" {
                    // same text as the pattern error, so the two merge into one
                    format!("{label} must be {words}; got {}", show(actual))
                } else {
                    format!("{label} must be {words}; got {}", show(actual))
                };
                push(ptr.to_string(), words, actual, message);
            }
            ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } => {
                self.union(ptr, actual, parent, context, out);
            }
            ValidationErrorKind::OneOfMultipleValid { .. } => {
                let message = format!(
                    "{label} matches more than one of the allowed shapes ({}); make it match exactly one",
                    expected()
                );
                push(ptr.to_string(), expected(), actual, message);
            }
            ValidationErrorKind::FalseSchema => {
                let message = format!("{label} is not allowed here; remove it");
                push(ptr.to_string(), "nothing (not allowed)".into(), actual, message);
            }
            ValidationErrorKind::Not { .. } => {
                let message = format!("{label} has a value that is not allowed here; choose another value");
                push(ptr.to_string(), "another value".into(), actual, message);
            }
            ValidationErrorKind::PropertyNames { error } => {
                let message = format!("{label} has a key that is not allowed: {}", clip(&error.to_string()));
                push(ptr.to_string(), "allowed key names".into(), actual, message);
            }
            ValidationErrorKind::Contains => {
                let what = parent
                    .get("contains")
                    .map_or_else(|| "the documented shape".into(), |c| describe(self.doc, c));
                let message = format!("{label} must contain at least one item that is {what}");
                push(ptr.to_string(), format!("an array with an item that is {what}"), actual, message);
            }
            _ => {
                let message = format!("{label}: {}", clip(&error.to_string()));
                push(ptr.to_string(), expected(), actual, message);
            }
        }
    }

    /// A failed `oneOf`/`anyOf`: report the branch the model most likely
    /// meant, never the union error itself.
    fn union(
        &self,
        ptr: &str,
        actual: &Value,
        parent: &Value,
        context: &[Vec<ValidationError<'static>>],
        out: &mut Vec<FieldError>,
    ) {
        let label = label(ptr);
        let expected = describe(self.doc, parent);
        let simple = context.iter().flatten().all(|e| e.instance_path().as_str() == ptr);
        if context.is_empty() || simple {
            // scalar alternatives (a string or null, an enum or a number): one error
            let message = format!("{label} must be {expected}; got {}", show(actual));
            out.push(FieldError::new(ptr, expected, actual, message));
            return;
        }
        // a branch is ruled out by a `const`/`enum` mismatch on one of the
        // value's own fields (its tag) or by having the wrong type altogether
        let tag_mismatch = |errors: &[ValidationError<'static>]| {
            errors.iter().any(|e| {
                matches!(e.kind(), ValidationErrorKind::Constant { .. } | ValidationErrorKind::Enum { .. })
                    && is_child(e.instance_path().as_str(), ptr)
            })
        };
        let wrong_type = |errors: &[ValidationError<'static>]| {
            errors.iter().any(|e| {
                matches!(e.kind(), ValidationErrorKind::Type { .. }) && e.instance_path().as_str() == ptr
            })
        };
        let best = context
            .iter()
            .enumerate()
            .min_by_key(|(_, errors)| (wrong_type(errors), tag_mismatch(errors), errors.len()))
            .map(|(i, _)| i);
        let Some(best) = best else { return };
        let errors = &context[best];
        if tag_mismatch(errors) || wrong_type(errors) {
            // every branch is ruled out: name the tag and its valid values
            let mut tags: Vec<(String, Value)> = Vec::new();
            for e in context.iter().flatten() {
                if let ValidationErrorKind::Constant { expected_value } = e.kind()
                    && is_child(e.instance_path().as_str(), ptr)
                {
                    tags.push((e.instance_path().as_str().to_string(), (**expected_value).clone()));
                }
            }
            if let Some((tag_ptr, _)) = tags.first().cloned() {
                let values: Vec<Value> =
                    tags.into_iter().filter(|(p, _)| *p == tag_ptr).map(|(_, v)| v).collect();
                let got = lookup(actual, &tag_ptr[ptr.len()..]).unwrap_or(&Value::Null);
                let expected = format!("one of {}", list(&values));
                let message = format!("{} must be {expected}; got {}", self::label(&tag_ptr), show(got));
                out.push(FieldError::new(tag_ptr, expected, got, message));
            } else {
                let message = format!("{label} must be {expected}; got {}", show(actual));
                out.push(FieldError::new(ptr, expected, actual, message));
            }
            return;
        }
        for e in errors {
            self.convert(e, out);
        }
    }
}

/// Look a JSON pointer up in `doc`, following `$ref`s met on the way.
pub(super) fn lookup<'a>(doc: &'a Value, pointer: &str) -> Option<&'a Value> {
    let mut current = doc;
    if pointer.is_empty() {
        return Some(current);
    }
    for segment in pointer.strip_prefix('/')?.split('/') {
        let segment = unescape(segment);
        current = match current {
            Value::Object(map) => match map.get(&segment) {
                Some(v) => v,
                None if segment == "$ref" => resolve(doc, current),
                None => return None,
            },
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
        if segment == "$ref"
            && let Value::String(r) = current
        {
            current = doc.pointer(r.strip_prefix('#')?)?;
        }
    }
    Some(current)
}

/// Whether `child` is a direct child location of `parent`.
pub(super) fn is_child(child: &str, parent: &str) -> bool {
    child
        .strip_prefix(parent)
        .is_some_and(|rest| rest.len() > 1 && rest.starts_with('/') && !rest[1..].contains('/'))
}

/// A location for the model: `` `date` ``, `` `items[2].qty` ``; the whole object is "the parameters".
pub(super) fn label(pointer: &str) -> String {
    if pointer.is_empty() {
        return "the parameters".into();
    }
    let mut out = String::new();
    for (i, segment) in pointer.split('/').skip(1).enumerate() {
        let segment = unescape(segment);
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) && i > 0 {
            out.push_str(&format!("[{segment}]"));
        } else {
            if i > 0 {
                out.push('.');
            }
            out.push_str(&segment);
        }
    }
    format!("`{out}`")
}

/// A value with its type, for "got ...": `a string "5"`, `null`, `an array of 2 items`.
pub(super) fn got(actual: &Value) -> String {
    match actual {
        Value::Null | Value::Array(_) | Value::Object(_) => show(actual),
        other => format!("{} {}", type_name(other), show(other)),
    }
}

/// Advice for the commonest type slips of models.
pub(super) fn type_hint(schema: &Value, actual: &Value) -> &'static str {
    let wants = |t: &str| match schema.get("type") {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(ts)) => ts.iter().any(|x| x == t),
        _ => false,
    };
    match actual {
        Value::String(s) if (wants("integer") || wants("number")) && s.trim().parse::<f64>().is_ok() => {
            "; send it as a JSON number, without quotes"
        }
        Value::String(s) if wants("boolean") && matches!(s.as_str(), "true" | "false") => {
            "; send true or false without quotes"
        }
        Value::Number(_) if wants("integer") => "; send a whole number",
        Value::Number(_) | Value::Bool(_) if wants("string") => "; send it as a string, in quotes",
        Value::Null => "; send a value, or leave the field out if it is optional",
        _ if wants("array") => "; send a JSON array, e.g. [\"a\", \"b\"]",
        _ => "",
    }
}

pub(super) fn date_shaped(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

pub(super) fn clip(text: &str) -> String {
    const MAX: usize = 200;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}…")
    }
}
