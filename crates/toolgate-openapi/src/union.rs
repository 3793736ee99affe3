//! A request body that is itself a `oneOf`/`anyOf` of objects becomes one route per branch:
//! the op name suffixed by the branch's name (its discriminator value, `$ref` name, title, or
//! the member only it requires), each route's body the members the body declares beside the
//! union plus the branch's own, with the branch's required ones. A member another branch
//! requires and this one does not declare (OpenAI's `file_ids` | `files`, "mutually
//! exclusive") is left out of this branch's route, so no request matches two branches.

use serde_json::{Map, Value};

use crate::operation::snake_case;
use crate::schema::{flatten, follow};

/// One branch of a union body: the object schema its route sends, and its name.
pub(crate) struct Branch {
    /// The body schema of the branch's route (flattened, without the union).
    pub(crate) schema: Value,
    /// The suffix of the op name, snake_case.
    pub(crate) suffix: String,
    /// How the summary names the branch, e.g. "`CreateFileBatchFromIds`" or "with `file_ids`".
    pub(crate) label: String,
}

/// The body's media type object, chosen as a route chooses it: JSON, else a urlencoded form,
/// else multipart/form-data.
fn media<'a>(root: &'a Value, operation: &'a Value) -> Result<Option<&'a Value>, String> {
    let Some(body) = operation.get("requestBody") else { return Ok(None) };
    let body = match body.get("$ref").and_then(Value::as_str) {
        Some(r) => follow(root, r)?,
        None => body,
    };
    let Some(content) = body.get("content").and_then(Value::as_object) else { return Ok(None) };
    let kind = |media: &str| media.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let preferences: [fn(&str) -> bool; 3] = [
        |m| m == "application/json" || m.ends_with("+json"),
        |m| m == "application/x-www-form-urlencoded",
        |m| m == "multipart/form-data",
    ];
    Ok(preferences.iter().find_map(|is| content.iter().find(|(m, _)| is(&kind(m))).map(|(_, media)| media)))
}

/// The schema a reference chain ends at, unflattened (to read the union's own `$ref` names).
fn resolve<'a>(root: &'a Value, mut schema: &'a Value) -> Result<&'a Value, String> {
    for _ in 0..32 {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => schema = follow(root, r)?,
            None => break,
        }
    }
    Ok(schema)
}

fn names(schema: &Value, key: &str) -> Vec<String> {
    schema
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// The branches of the operation's body when it is a union of objects; `None` when it is not
/// a union; an error when a branch is not an object (such a body has no fields to give).
pub(crate) fn branches(root: &Value, operation: &Value) -> Result<Option<Vec<Branch>>, String> {
    let Some(media) = media(root, operation)? else { return Ok(None) };
    let raw_schema = media.get("schema").unwrap_or(&Value::Null);
    let schema = flatten(root, raw_schema, 0)?;
    let Some((key, parts)) = ["oneOf", "anyOf"].iter().find_map(|k| Some((*k, schema.get(*k)?.as_array()?)))
    else {
        return Ok(None);
    };
    // `null` beside the objects: the body is not sent then, which leaving all out says.
    let parts: Vec<&Value> = parts.iter().filter(|p| p.get("type") != Some(&Value::from("null"))).collect();
    let raw = resolve(root, raw_schema)?;
    let raw_parts: Vec<&Value> = raw
        .get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter(|p| p.get("type") != Some(&Value::from("null"))).collect())
        .unwrap_or_default();
    let mut base = schema.as_object().cloned().unwrap_or_default();
    for k in ["oneOf", "anyOf", "discriminator"] {
        base.remove(k);
    }
    let discriminator = schema.get("discriminator");
    let property = discriminator.and_then(|d| d.get("propertyName")).and_then(Value::as_str);
    let required: Vec<Vec<String>> = parts.iter().map(|p| names(p, "required")).collect();
    let mut out: Vec<Branch> = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let object = part.get("type").is_none_or(|t| t == "object")
            && (part.get("properties").is_some() || part.get("required").is_some());
        if !object {
            return Err(format!(
                "its body is a {key} union with a branch that is not an object (branch {})",
                i + 1
            ));
        }
        let mut merged: Map<String, Value> = base.clone();
        let mut props = merged.remove("properties").and_then(|p| p.as_object().cloned()).unwrap_or_default();
        let own = part.get("properties").and_then(Value::as_object);
        props.extend(own.cloned().unwrap_or_default());
        // Members only other branches require, which this one does not declare itself.
        for (j, theirs) in required.iter().enumerate() {
            for name in theirs {
                let ours = required[i].contains(name) || own.is_some_and(|o| o.contains_key(name));
                let shared = names(&Value::Object(base.clone()), "required").contains(name);
                if j != i && !ours && !shared {
                    props.remove(name);
                }
            }
        }
        let mut all_required = names(&Value::Object(base.clone()), "required");
        for name in &required[i] {
            if !all_required.contains(name) {
                all_required.push(name.clone());
            }
        }
        // The discriminator's property is required, and is the branch's value.
        let reference = raw_parts.get(i).and_then(|p| p.get("$ref")).and_then(Value::as_str);
        let mapped = discriminator
            .and_then(|d| d.get("mapping"))
            .and_then(Value::as_object)
            .and_then(|m| m.iter().find(|(_, target)| reference.is_some_and(|r| *target == r)))
            .map(|(value, _)| value.clone());
        if let Some(property) = property
            && let Some(prop) = props.get_mut(property).and_then(Value::as_object_mut)
        {
            if let (Some(value), None) = (&mapped, prop.get("enum")) {
                prop.insert("enum".into(), Value::Array(vec![value.clone().into()]));
            }
            if !all_required.iter().any(|r| r == property) {
                all_required.push(property.to_owned());
            }
        }
        merged.insert("type".into(), "object".into());
        merged.insert("properties".into(), Value::Object(props));
        merged.insert("required".into(), all_required.iter().map(|n| Value::from(n.as_str())).collect());
        for (k, v) in part.as_object().into_iter().flatten() {
            if !matches!(k.as_str(), "properties" | "required" | "type" | "description" | "title") {
                merged.entry(k.clone()).or_insert(v.clone());
            }
        }
        // The branch's name: its discriminator value, `$ref` name, title, the one value its
        // `type`-like member takes, the member only it requires, or its position.
        let only_required =
            required[i].iter().find(|n| required.iter().enumerate().all(|(j, r)| j == i || !r.contains(n)));
        let constant = property.and_then(|p| {
            let enums = part.get("properties")?.get(p)?.get("enum")?.as_array()?;
            match enums.as_slice() {
                [one] => one.as_str().map(str::to_owned),
                _ => None,
            }
        });
        let reference_name = reference.map(|r| r.rsplit('/').next().unwrap_or(r).to_owned());
        let title = part.get("title").and_then(Value::as_str).map(str::to_owned);
        let (suffix, label) = match (mapped.or(constant), reference_name, title, only_required) {
            (Some(v), ..) => (snake_case(&v), format!("`{v}`")),
            (None, Some(r), ..) => (snake_case(&r), format!("`{r}`")),
            (None, None, Some(t), _) => (snake_case(&t), format!("\"{t}\"")),
            (None, None, None, Some(n)) => (snake_case(n), format!("with `{n}`")),
            (None, None, None, None) => (format!("{}", i + 1), format!("form {} of {}", i + 1, parts.len())),
        };
        out.push(Branch { schema: Value::Object(merged), suffix, label });
    }
    // One object beside `null`: that object, under the operation's own name.
    if let [one] = out.as_mut_slice() {
        one.suffix.clear();
    }
    // Two branches of the same name: told apart by their position.
    let suffixes: Vec<String> = out.iter().map(|b| b.suffix.clone()).collect();
    for (i, branch) in out.iter_mut().enumerate() {
        if suffixes.iter().filter(|s| **s == branch.suffix).count() > 1 {
            branch.suffix = format!("{}_{}", branch.suffix, i + 1);
        }
    }
    Ok(Some(out))
}
