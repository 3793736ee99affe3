//! The whole document: parsed (JSON or YAML), checked to be OpenAPI 3.0/3.1, its operations
//! grouped by domain into one read and one write table each, the skipped ones reported.

use std::collections::BTreeMap;
use std::fmt;

use schema_gen::{Field, FieldType, Route, RouteTable};
use serde_json::{Map, Value, json};

use crate::auth::AuthHint;
use crate::operation::{Op, snake_case};
use crate::{Error, Result};

/// What names a domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DomainBy {
    /// The operation's first tag (the first path segment when it has none).
    #[default]
    Tag,
    /// The first path segment that is not a variable.
    Path,
}

/// How to import.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// What names a domain.
    pub domain_by: DomainBy,
    /// The role the tools require (default `member`).
    pub required_role: Option<String>,
}

/// An operation left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path template.
    pub path: String,
    /// Why it could not be mapped.
    pub reason: String,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.method, self.path, self.reason)
    }
}

/// The result of an import.
#[derive(Debug, Clone)]
pub struct Import {
    /// The API's title.
    pub title: String,
    /// A short name for the API, for the `[[domains]]` entry.
    pub name: String,
    /// `servers[0].url`, when it is absolute.
    pub base_url: Option<String>,
    /// The tables, each checked.
    pub tables: Vec<RouteTable>,
    /// The operations left out.
    pub skipped: Vec<Skipped>,
    /// The suggested `auth`.
    pub auth: AuthHint,
}

impl Import {
    /// Operations imported.
    pub fn ops(&self) -> usize {
        self.tables.iter().map(|t| t.routes.len()).sum()
    }

    /// The `[[domains]]` entry to paste into toolgate.toml, `routes` pointing at `routes_dir`.
    pub fn domain_snippet(&self, routes_dir: &str) -> String {
        let base = self.base_url.clone().unwrap_or_else(|| "https://CHANGE-ME.example".to_owned());
        let mut out = format!(
            "[[domains]]\nname = \"{}\"\nbase_url = \"{base}\"\nroutes = \"{}\"\nauth = {}\ntimeout_ms = 10000\n",
            self.name,
            routes_dir.replace('\\', "/"),
            self.auth.to_toml()
        );
        match &self.auth {
            AuthHint::Static { env, note, .. } => {
                out.push_str(&format!(
                    "# set {env} in the environment{}\n",
                    note.as_ref().map(|n| format!(": {n}")).unwrap_or_default()
                ));
            }
            AuthHint::None { note: Some(note) } => out.push_str(&format!("# {note}\n")),
            _ => {}
        }
        if self.base_url.is_none() {
            out.push_str("# the document names no absolute server URL: set base_url\n");
        }
        out
    }

    /// The summary: tools, ops, skipped with reasons.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "{}: {} tool(s), {} operation(s) imported, {} skipped\n",
            self.title,
            self.tables.len(),
            self.ops(),
            self.skipped.len()
        );
        for t in &self.tables {
            out.push_str(&format!(
                "  {} ({} ops): {}\n",
                t.tool,
                t.routes.len(),
                t.ops().collect::<Vec<_>>().join(", ")
            ));
        }
        for s in &self.skipped {
            out.push_str(&format!("  skipped {s}\n"));
        }
        out
    }
}

const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

fn parse(text: &str) -> Result<Value> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        return serde_json::from_str(text).map_err(|e| Error::Parse(format!("JSON: {e}")));
    }
    serde_norway::from_str(text).map_err(|e| Error::Parse(format!("YAML: {e}")))
}

/// Import a document.
pub fn import(text: &str, options: &Options) -> Result<Import> {
    let doc = parse(text)?;
    let version = doc.get("openapi").and_then(Value::as_str).unwrap_or_default();
    if !(version.starts_with("3.0") || version.starts_with("3.1")) {
        let found = doc
            .get("swagger")
            .map(|v| format!("Swagger {v}"))
            .unwrap_or_else(|| format!("openapi {version:?}"));
        return Err(Error::Version(format!(
            "only OpenAPI 3.0 and 3.1 documents are imported, this one is {found}; convert it first (e.g. with swagger2openapi)"
        )));
    }
    let title = doc.pointer("/info/title").and_then(Value::as_str).unwrap_or("API").trim().to_owned();
    let name = snake_case(&title).chars().take(32).collect::<String>().trim_end_matches('_').to_owned();
    let role = options.required_role.clone().unwrap_or_else(|| "member".to_owned());
    let mut skipped = Vec::new();
    // (domain, is_write) -> routes, in document order; the read tool of a domain comes first.
    let mut groups: BTreeMap<(String, bool), Vec<Route>> = BTreeMap::new();
    let empty = Map::new();
    for (path, item) in doc.get("paths").and_then(Value::as_object).unwrap_or(&empty) {
        let item = match item.get("$ref").and_then(Value::as_str) {
            Some(r) => crate::schema::follow(&doc, r).unwrap_or(item),
            None => item,
        };
        for method in METHODS {
            let Some(operation) = item.get(method) else { continue };
            let op = Op { path, method, item, operation };
            let skip = |reason: String| Skipped { method: method.to_uppercase(), path: path.clone(), reason };
            let route = match op.route(&doc) {
                Ok(route) => route,
                Err(reason) => {
                    skipped.push(skip(reason));
                    continue;
                }
            };
            let domain = snake_case(&match (options.domain_by, op.tag()) {
                (DomainBy::Tag, Some(tag)) => tag.to_owned(),
                _ => first_segment(path),
            });
            let read = route.method.is_read();
            let routes = groups.entry((domain.clone(), !read)).or_default();
            let mut route = route;
            let base = route.op.clone();
            let mut n = 2;
            while routes.iter().any(|r| r.op == route.op) {
                route.op = format!("{}_{n}", base.chars().take(60).collect::<String>());
                n += 1;
            }
            // The table's own check is the judge: a route it refuses is skipped, not written.
            let probe = table(&domain, read, vec![route.clone()], &role, &title);
            match probe.check() {
                Ok(()) => routes.push(route),
                Err(e) => skipped.push(skip(e.to_string().replace('\n', " "))),
            }
        }
    }
    let tables: Vec<RouteTable> = groups
        .into_iter()
        .filter(|(_, r)| !r.is_empty())
        .map(|((domain, write), routes)| table(&domain, !write, routes, &role, &title))
        .collect();
    if tables.is_empty() {
        return Err(Error::Nothing { skipped });
    }
    let base_url = doc
        .pointer("/servers/0")
        .and_then(server_url)
        .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
        .map(|u| u.trim_end_matches('/').to_owned());
    let auth = AuthHint::from_document(&doc, &name);
    Ok(Import { title, name, base_url, tables, skipped, auth })
}

/// `servers[0].url` with its variables replaced by their defaults.
fn server_url(server: &Value) -> Option<String> {
    let mut url = server.get("url")?.as_str()?.to_owned();
    for (name, var) in server.get("variables").and_then(Value::as_object).into_iter().flatten() {
        if let Some(default) = var.get("default").and_then(Value::as_str) {
            url = url.replace(&format!("{{{name}}}"), default);
        }
    }
    Some(url)
}

fn first_segment(path: &str) -> String {
    path.split('/')
        .find(|s| !s.is_empty() && !s.starts_with('{') && !is_version(s) && *s != "api")
        .unwrap_or("root")
        .to_owned()
}

fn is_version(segment: &str) -> bool {
    segment.len() > 1 && segment.starts_with('v') && segment[1..].chars().all(|c| c.is_ascii_digit())
}

fn table(domain: &str, read: bool, routes: Vec<Route>, role: &str, title: &str) -> RouteTable {
    let (verb, what) = if read { ("query", "Read") } else { ("update", "Change") };
    let ops: Vec<String> =
        routes.iter().map(|r| format!("`{}` ({})", r.op, r.summary.trim_end_matches('.'))).collect();
    let example = routes.first().map(example).unwrap_or_default();
    let description = format!(
        "{what} {domain} in {title}. Operations: {}. Choose one with `op`; path and query values and the JSON body fields are parameters. Example: {example}.",
        ops.join("; ")
    );
    RouteTable {
        tool: format!("{verb}_{domain}"),
        description,
        domain: domain.to_owned(),
        required_role: role.to_owned(),
        tags: vec!["openapi".to_owned()],
        result_template: None,
        routes,
    }
}

/// The parameters of a valid call: `op` and every required field with a value of its type.
fn example(route: &Route) -> String {
    let mut params = Map::new();
    params.insert("op".into(), json!(route.op));
    for f in route.fields.iter().filter(|f| f.required) {
        params.insert(f.name.clone(), sample(f));
    }
    Value::Object(params).to_string()
}

fn sample(f: &Field) -> Value {
    if let Some(first) = f.enum_values.as_ref().and_then(|v| v.first()) {
        return first.clone();
    }
    let low = f.minimum.unwrap_or(1.0).max(f.maximum.map_or(f64::MIN, |m| m.min(1.0)));
    match f.ty {
        FieldType::String => match f.format.as_deref() {
            Some("date") => json!("2026-03-14"),
            Some("date-time") => json!("2026-03-14T09:00:00Z"),
            Some("uuid") => json!("123e4567-e89b-12d3-a456-426614174000"),
            Some("email") => json!("user@example.com"),
            _ if f.pattern.is_some() || f.min_length.is_some_and(|n| n > 5) => json!("..."),
            _ => json!("text"),
        },
        FieldType::Integer => json!(low.ceil() as i64),
        FieldType::Number => json!(low),
        FieldType::Boolean => json!(true),
        FieldType::Array => json!([]),
        FieldType::Object => Value::Object(
            f.fields.iter().filter(|f| f.required).map(|f| (f.name.clone(), sample(f))).collect(),
        ),
    }
}
