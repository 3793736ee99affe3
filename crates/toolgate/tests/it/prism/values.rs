//! Arguments for one operation, made from the JSON Schema toolgate publishes for it (the
//! `oneOf` branch of its `op`): the first enum value, a format's canonical example, a string
//! matching a simple `pattern`, the minimum of a range, one item of a list. `Fill::Required`
//! gives only what the operation requires; `Fill::Every` every field, optional ones too
//! (nullable fields as `null`, so both ways of a nullable field are sent).

use serde_json::{Map, Value, json};

/// Which fields to give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fill {
    /// Only the required ones (and `op`).
    Required,
    /// Every field; an optional nullable one as `null`.
    Every,
}

/// The arguments of `branch` (one operation's schema), or why none could be made.
pub(crate) fn arguments(branch: &Value, fill: Fill) -> Result<Value, String> {
    object(branch, fill, 0)
}

fn object(schema: &Value, fill: Fill, depth: usize) -> Result<Value, String> {
    let mut out = Map::new();
    let required: Vec<&str> =
        schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            let needed = required.contains(&name.as_str());
            if !needed && (fill == Fill::Required || depth > 3) {
                continue;
            }
            if !needed && nullable(property) {
                out.insert(name.clone(), Value::Null);
                continue;
            }
            let value = value(property, fill, depth + 1).map_err(|e| format!("{name}: {e}"))?;
            out.insert(name.clone(), value);
        }
    }
    Ok(Value::Object(out))
}

fn nullable(schema: &Value) -> bool {
    schema["type"].as_array().is_some_and(|t| t.contains(&json!("null")))
}

fn ty(schema: &Value) -> Option<&str> {
    match &schema["type"] {
        Value::String(t) => Some(t),
        Value::Array(types) => types.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    }
}

fn value(schema: &Value, fill: Fill, depth: usize) -> Result<Value, String> {
    if let Some(v) = schema.get("const") {
        return Ok(v.clone());
    }
    if let Some(values) = schema["enum"].as_array() {
        return values.iter().find(|v| !v.is_null()).cloned().ok_or_else(|| "an enum of only null".into());
    }
    for union in ["oneOf", "anyOf"] {
        if let Some(first) = schema[union].as_array().and_then(|b| b.iter().find(|b| b["type"] != "null")) {
            return value(first, fill, depth);
        }
    }
    match ty(schema) {
        Some("string") => string(schema),
        Some("integer") => Ok(number(schema).map(|n| json!(n.ceil() as i64))?),
        Some("number") => Ok(json!(number(schema)?)),
        Some("boolean") => Ok(json!(true)),
        Some("array") => {
            let item = value(&schema["items"], fill, depth)?;
            let n = schema["minItems"].as_u64().unwrap_or(1).max(1);
            let n = schema["maxItems"].as_u64().map_or(n, |max| n.min(max));
            Ok(Value::Array(vec![item; n as usize]))
        }
        Some("object") => object(schema, fill, depth),
        // A free-form value: any JSON; a string is the plainest.
        None => Ok(json!("value")),
        Some(other) => Err(format!("type {other}")),
    }
}

fn number(schema: &Value) -> Result<f64, String> {
    let min = schema["minimum"].as_f64();
    let max = schema["maximum"].as_f64();
    let n = match (min, max) {
        (Some(min), _) if min >= 1.0 => min,
        (Some(min), Some(max)) if min <= 1.0 && max >= 1.0 => 1.0,
        (Some(min), None) if min <= 1.0 => 1.0,
        (None, Some(max)) if max < 1.0 => max,
        (None, _) => 1.0,
        (Some(min), _) => min,
    };
    if max.is_some_and(|max| n > max) { Err(format!("no number in {min:?}..{max:?}")) } else { Ok(n) }
}

fn string(schema: &Value) -> Result<Value, String> {
    // A file given as base64 text (a multipart route's file part): `hello`.
    if schema["contentEncoding"] == "base64" {
        return Ok(json!("aGVsbG8="));
    }
    let text = match (schema["pattern"].as_str(), schema["format"].as_str()) {
        (Some(pattern), Some("date")) if pattern.contains("\\d{4}") => "2024-01-31".to_owned(),
        (Some(pattern), _) => matching(pattern)?,
        (None, Some(format)) => match format {
            "date-time" => "2024-01-31T10:00:00Z",
            "date" => "2024-01-31",
            "time" => "10:00:00Z",
            "email" => "ada@example.com",
            "uri" | "url" | "uri-reference" | "iri" => "https://example.com/a",
            "uuid" => "3fa85f64-5717-4562-b3fc-2c963f66afa6",
            "ipv4" => "192.0.2.1",
            "ipv6" => "2001:db8::1",
            "hostname" => "example.com",
            "byte" => "aGVsbG8=",
            "binary" => "hello",
            "duration" => "P1D",
            "phone-number" => "+15551234567",
            _ => "text",
        }
        .to_owned(),
        (None, None) => "text".to_owned(),
    };
    let min = schema["minLength"].as_u64().unwrap_or(0) as usize;
    let max = schema["maxLength"].as_u64().map(|m| m as usize);
    let mut text = text;
    if schema["pattern"].is_null() && schema["format"].is_null() {
        while text.chars().count() < min {
            text.push('x');
        }
        if let Some(max) = max {
            text = text.chars().take(max).collect();
        }
    }
    Ok(Value::String(text))
}

/// A string matching a simple regular expression: literals, escapes (`\d`, `\w`, `\.`),
/// classes (`[A-Za-z0-9_-]`), groups with alternatives (the first is taken) and the
/// quantifiers `? * + {n} {n,} {n,m}` (their least count, at least one for `*`/`+`-free
/// mandatory parts). Anything else is an error: the operation is then not called.
pub(crate) fn matching(pattern: &str) -> Result<String, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut at = 0;
    let out = sequence(&chars, &mut at)?;
    if at < chars.len() {
        return Err(format!("pattern {pattern:?}: unexpected {:?}", chars[at]));
    }
    Ok(out)
}

fn sequence(p: &[char], at: &mut usize) -> Result<String, String> {
    let mut out = String::new();
    while *at < p.len() && p[*at] != ')' && p[*at] != '|' {
        let atom = atom(p, at)?;
        let (min, _) = quantifier(p, at)?;
        for _ in 0..min {
            out.push_str(&atom);
        }
    }
    // Alternatives after the first: skipped.
    while *at < p.len() && p[*at] == '|' {
        *at += 1;
        sequence(p, at)?;
    }
    Ok(out)
}

fn atom(p: &[char], at: &mut usize) -> Result<String, String> {
    let c = p[*at];
    *at += 1;
    Ok(match c {
        '^' | '$' => String::new(),
        '.' => "a".into(),
        '(' => {
            if p.get(*at) == Some(&'?') {
                // (?: ...) only.
                if p.get(*at + 1) != Some(&':') {
                    return Err("a look-around group".into());
                }
                *at += 2;
            }
            let inner = sequence(p, at)?;
            if p.get(*at) != Some(&')') {
                return Err("an unclosed group".into());
            }
            *at += 1;
            inner
        }
        '[' => class(p, at)?.to_string(),
        '\\' => {
            let e = *p.get(*at).ok_or("a trailing backslash")?;
            *at += 1;
            match e {
                'd' => "1".into(),
                'w' => "a".into(),
                's' => " ".into(),
                'D' | 'W' | 'S' => "-".into(),
                'b' | 'B' => String::new(),
                _ => e.to_string(),
            }
        }
        c => c.to_string(),
    })
}

/// The first character a class allows (`[^...]`: a letter not in it).
fn class(p: &[char], at: &mut usize) -> Result<char, String> {
    let negated = p.get(*at) == Some(&'^');
    if negated {
        *at += 1;
    }
    let mut members = Vec::new();
    let mut first = true;
    while *at < p.len() && (p[*at] != ']' || first) {
        first = false;
        let mut c = p[*at];
        *at += 1;
        if c == '\\' {
            let e = *p.get(*at).ok_or("a trailing backslash")?;
            *at += 1;
            c = match e {
                'd' => '1',
                'w' => 'a',
                's' => ' ',
                _ => e,
            };
        }
        if p.get(*at) == Some(&'-') && p.get(*at + 1).is_some_and(|n| *n != ']') {
            let end = p[*at + 1];
            *at += 2;
            members.push((c, end));
        } else {
            members.push((c, c));
        }
    }
    if p.get(*at) != Some(&']') {
        return Err("an unclosed class".into());
    }
    *at += 1;
    if negated {
        return "aZ1x_"
            .chars()
            .find(|c| !members.iter().any(|(a, b)| a <= c && c <= b))
            .ok_or("a class".into());
    }
    members.first().map(|(a, _)| *a).ok_or_else(|| "an empty class".into())
}

fn quantifier(p: &[char], at: &mut usize) -> Result<(usize, Option<usize>), String> {
    let q = match p.get(*at) {
        Some('?') | Some('*') => (0, None),
        Some('+') => (1, None),
        Some('{') => {
            let end = p[*at..].iter().position(|c| *c == '}').ok_or("an unclosed {")? + *at;
            let body: String = p[*at + 1..end].iter().collect();
            *at = end;
            let mut parts = body.splitn(2, ',');
            let min = parts.next().unwrap_or("").trim().parse().map_err(|_| format!("{{{body}}}"))?;
            let max = parts.next().and_then(|m| m.trim().parse().ok());
            (min, max)
        }
        _ => return Ok((1, Some(1))),
    };
    *at += 1;
    // A lazy or possessive mark.
    if matches!(p.get(*at), Some('?') | Some('+')) {
        *at += 1;
    }
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_patterns_have_a_match() {
        assert_eq!(matching("^AC[0-9a-fA-F]{32}$").unwrap(), format!("AC{}", "0".repeat(32)));
        assert_eq!(matching(r"^\d+(\.\d+)?$").unwrap(), "1");
        assert_eq!(matching("^(foo|bar)-[^/]+$").unwrap(), "foo-a");
        assert!(matching("(?=x)").is_err());
    }
}
