//! The whole document: parsed (JSON or YAML), checked to be OpenAPI 3.0/3.1, its operations
//! grouped by domain into one read and one write table each, the skipped ones reported.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize as _;
use serde_json::{Map, Value, json};
use toolgate_schema::{FieldType, Route, RouteTable};

use crate::auth::{AuthHint, toml_value};
use crate::names::{first_segment, shared_words, short_name};
use crate::operation::{Op, snake_case};
use crate::servers::{plain_url, server_url};
use crate::{Error, Result};

/// What names a domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DomainBy {
    /// The operation's first tag (the first path segment when it has none).
    #[default]
    Tag,
    /// The first path segment that is not a variable.
    Path,
}

/// How to import: [`Options::default`] (domains by tag, role `member`, the default token
/// limit) and the `with_*` methods.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Options {
    /// What names a domain.
    pub domain_by: DomainBy,
    /// The role the tools require (default `member`).
    pub required_role: Option<String>,
    /// The most tokens one generated tool may cost (its name, description and input schema,
    /// as [`toolgate_tokens::tool`] counts them); a table over it is split by sub-resource and its long
    /// texts clipped ([`crate::budget`]). `None`: [`crate::budget::DEFAULT_TOOL_TOKENS`].
    pub max_tool_tokens: Option<usize>,
}

impl Options {
    /// The same options naming domains by `domain_by`.
    pub fn with_domain_by(mut self, domain_by: DomainBy) -> Self {
        self.domain_by = domain_by;
        self
    }

    /// The same options with the tools requiring `role`.
    pub fn with_required_role(mut self, role: impl Into<String>) -> Self {
        self.required_role = Some(role.into());
        self
    }

    /// The same options with at most `tokens` per generated tool (`usize::MAX`: no limit).
    pub fn with_max_tool_tokens(mut self, tokens: usize) -> Self {
        self.max_tool_tokens = Some(tokens);
        self
    }
}

/// An operation left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skipped {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path template.
    pub path: String,
    /// Why it could not be mapped.
    pub reason: String,
}

impl fmt::Display for Skipped {
    /// One line: the path and reason come from the document, so their line breaks and control
    /// characters are shown escaped (a path cannot print a line of its own).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.method, one_line(&self.path), one_line(&self.reason))
    }
}

/// Document text as one terminal line: control, line-separator and bidirectional-format
/// characters escaped (`\n`, `\u{202e}`), everything else as it is.
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let format = matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}');
        if c.is_control() || format {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The result of an import.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Import {
    /// The API's title.
    pub title: String,
    /// A short name for the API, for the `[[domains]]` entry.
    pub name: String,
    /// `servers[0].url` (its variables replaced by their defaults), when it is a plain
    /// absolute `http(s)://` URL.
    pub base_url: Option<String>,
    /// Why `servers[0].url` was left out although the document has an absolute one: it is
    /// not a plain http(s) URL. The reason holds no document text.
    pub base_url_refused: Option<&'static str>,
    /// The tables, each checked.
    pub tables: Vec<RouteTable>,
    /// The operations left out.
    pub skipped: Vec<Skipped>,
    /// The suggested `auth`.
    pub auth: AuthHint,
    /// The tables the per-tool token limit split or trimmed ([`Options::max_tool_tokens`]).
    pub budget: crate::budget::Report,
    /// The operations' own servers ([`toolgate_schema::Route::server`]), each once: the
    /// `servers` a domain must declare.
    pub servers: Vec<String>,
    /// Whether the document was Swagger 2.0, imported as the OpenAPI 3.0 document it maps to.
    pub from_swagger2: bool,
    /// The security schemes operations name besides the main one
    /// ([`toolgate_schema::Route::security`]), each with the `auth` it suggests.
    pub schemes: Vec<(String, AuthHint)>,
}

impl Import {
    /// Operations imported.
    pub fn ops(&self) -> usize {
        self.tables.iter().map(|t| t.routes.len()).sum()
    }

    /// The `[[domains]]` entry to paste into toolgate.toml, `routes` pointing at `routes_dir`.
    ///
    /// Every value is written by the `toml` serializer (a name, URL or header from the
    /// document cannot end its string), and the comment lines carry no document text except
    /// names made only of RFC 9110 token characters.
    pub fn domain_snippet(&self, routes_dir: &str) -> String {
        let base = self.base_url.clone().unwrap_or_else(|| "https://CHANGE-ME.example".to_owned());
        let mut out = String::from("[[domains]]\n");
        for (key, value) in [
            ("name", toml_value(&self.name)),
            ("base_url", toml_value(&base)),
            ("routes", toml_value(&routes_dir.replace('\\', "/"))),
            ("auth", self.auth.to_toml()),
            ("timeout_ms", toml_value(&10_000)),
        ] {
            out.push_str(key);
            out.push_str(" = ");
            out.push_str(&value);
            out.push('\n');
        }
        if !self.servers.is_empty() {
            // Each server called where the document says; an operator may point one elsewhere.
            let servers: BTreeMap<&str, &str> =
                self.servers.iter().map(|s| (s.as_str(), s.as_str())).collect();
            out.push_str(&format!("servers = {}\n", toml_value(&servers)));
        }
        let (static_schemes, other_schemes): (Vec<_>, Vec<_>) =
            self.schemes.iter().partition(|(_, hint)| matches!(hint, AuthHint::Static { .. }));
        if !static_schemes.is_empty() {
            out.push_str(&format!("schemes = {}\n", crate::auth::schemes_toml(&static_schemes)));
            for (_, hint) in &static_schemes {
                if let AuthHint::Static { env, note, .. } = hint {
                    let note = note.as_ref().map(|n| format!(": {n}")).unwrap_or_default();
                    comment(&mut out, &format!("set {env} in the environment{note}"));
                }
            }
        }
        for (name, hint) in other_schemes {
            let why = match hint {
                AuthHint::None { note: Some(note) } => note.clone(),
                _ => "it takes a bearer token: without an entry under `schemes` these operations send the domain's auth".to_owned(),
            };
            comment(&mut out, &format!("scheme `{}` of some operations: {why}", crate::auth::shown(name)));
        }
        match &self.auth {
            AuthHint::Static { env, note, .. } => {
                comment(
                    &mut out,
                    &format!(
                        "set {env} in the environment{}",
                        note.as_ref().map(|n| format!(": {n}")).unwrap_or_default()
                    ),
                );
            }
            AuthHint::None { note: Some(note) } => comment(&mut out, note),
            AuthHint::BearerFromCaller => {
                let upper = self.name.to_ascii_uppercase();
                let env = format!("{upper}_API_KEY");
                let example =
                    AuthHint::Static { header: "Authorization".into(), env: env.clone(), note: None };
                comment(
                    &mut out,
                    "a bearer/OAuth API needs a token made for this backend (no caller's token for toolgate or another system is ever sent); pick one:",
                );
                comment(
                    &mut out,
                    &format!(
                        "- each signed-in user's own (with [auth.oauth]): auth = {{ kind = \"token_exchange\", token_url = \"<your identity provider's token endpoint>\", audience = \"<this API's audience>\", client_id = \"toolgate\", client_secret = {{ env = \"{upper}_CLIENT_SECRET\" }} }}"
                    ),
                );
                comment(
                    &mut out,
                    &format!(
                        "- one service identity: auth = {{ kind = \"client_credentials\", token_url = \"<token endpoint>\", client_id = \"toolgate\", client_secret = {{ env = \"{upper}_CLIENT_SECRET\" }} }}"
                    ),
                );
                comment(
                    &mut out,
                    &format!(
                        "- one fixed token: auth = {} with {env} holding `Bearer <token>`",
                        example.to_toml()
                    ),
                );
            }
            AuthHint::None { note: None } => {}
        }
        match (self.base_url_refused, &self.base_url) {
            (Some(reason), _) => {
                comment(&mut out, &format!("servers[0].url was left out: {reason}; set base_url"))
            }
            (None, None) => comment(&mut out, "the document names no absolute server URL: set base_url"),
            (None, Some(_)) => {}
        }
        out
    }

    /// The summary: tools, ops, skipped with reasons.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "{}: {} tool(s), {} operation(s) imported, {} skipped\n",
            one_line(&self.title),
            self.tables.len(),
            self.ops(),
            self.skipped.len()
        );
        if self.from_swagger2 {
            out.push_str("  read as OpenAPI 3.0 from Swagger 2.0\n");
        }
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
        out.push_str(&self.budget.to_string());
        if let Some(reason) = self.base_url_refused {
            out.push_str(&format!("  left out servers[0].url: {reason}\n"));
        }
        out
    }
}

const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

pub(crate) fn parse(text: &str) -> Result<Value> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        return serde_json::from_str(text).map_err(|e| Error::Parse(format!("JSON: {e}")));
    }
    // serde_json refuses deep nesting at once; the YAML parser would take time quadratic in
    // the depth before its own limit, so the same limit is checked first, in one pass.
    toolgate_core::nesting::check_yaml(text).map_err(Error::TooDeep)?;
    // Read through `Lenient`: an integer beyond i64/u64 becomes an f64, as in JSON (serde_json's
    // own `Value` refuses the i128 the YAML parser hands it, and with it the whole document).
    serde_norway::from_str::<Lenient>(text).map(|l| l.0).map_err(|e| Error::Parse(format!("YAML: {e}")))
}

/// A JSON value read from YAML, integers outside i64/u64 taken as f64 like serde_json does.
struct Lenient(Value);

impl<'de> serde::Deserialize<'de> for Lenient {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor).map(Lenient)
    }
}

struct LenientVisitor;

impl<'de> serde::de::Visitor<'de> for LenientVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_i128<E>(self, v: i128) -> std::result::Result<Value, E> {
        Ok(i64::try_from(v).map(Value::from).unwrap_or_else(|_| float(v as f64)))
    }
    fn visit_u128<E>(self, v: u128) -> std::result::Result<Value, E> {
        Ok(u64::try_from(v).map(Value::from).unwrap_or_else(|_| float(v as f64)))
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Value, E> {
        Ok(float(v))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_none<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        Lenient::deserialize(d).map(|l| l.0)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Lenient(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Value, A::Error> {
        // Keys as strings, as serde_json's `Value` reads them (`200:` is the key "200").
        let mut out = Map::new();
        while let Some((key, Lenient(v))) = map.next_entry::<String, Lenient>()? {
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// A float as JSON holds it: NaN and the infinities (YAML's `.nan`, `.inf`) are null.
fn float(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// Import a document given as text: only references inside it are resolved (a file `$ref`
/// skips the operation that needs it, saying so; [`import_file`] reads such files).
pub fn import(text: &str, options: &Options) -> Result<Import> {
    import_value(&parse(text)?, options)
}

/// Import the document in the file at `path`, with the files its `$ref`s name relative to it
/// (a multi-file source such as DigitalOcean's `DigitalOcean-public.v2.yaml`) read from its
/// folder: never over the network, never outside that folder, at most
/// [`crate::MAX_FILES`] files and [`crate::MAX_TOTAL_BYTES`] bytes in all.
pub fn import_file(path: &std::path::Path, options: &Options) -> Result<Import> {
    import_value(&crate::bundle::load(path)?, options)
}

fn import_value(doc: &Value, options: &Options) -> Result<Import> {
    // A Swagger 2.0 document is read as the OpenAPI 3.0 one it maps to.
    let from_swagger2 = crate::swagger2::is_swagger2(doc);
    let converted = from_swagger2.then(|| crate::swagger2::convert(doc));
    let doc = converted.as_ref().unwrap_or(doc);
    let version = doc.get("openapi").and_then(Value::as_str).unwrap_or_default();
    if !(version.starts_with("3.0") || version.starts_with("3.1")) {
        let found = doc
            .get("swagger")
            .map(|v| format!("Swagger {v}"))
            .unwrap_or_else(|| format!("openapi {version:?}"));
        return Err(Error::Version(format!(
            "only OpenAPI 3.0 and 3.1 (and Swagger 2.0) documents are imported, this one is {found}"
        )));
    }
    let title = doc.pointer("/info/title").and_then(Value::as_str).unwrap_or("API").trim().to_owned();
    let name = short_name(&snake_case(&title));
    let role = options.required_role.clone().unwrap_or_else(|| "member".to_owned());
    let mut skipped = Vec::new();
    // (domain, is_write) -> routes, in document order; the read tool of a domain comes first.
    let mut groups: BTreeMap<(String, bool), Vec<Route>> = BTreeMap::new();
    // What each imported route's path item says of its operations (see `about`), by method and path.
    let mut path_about: std::collections::HashMap<(toolgate_schema::Method, String), Vec<String>> =
        std::collections::HashMap::new();
    let empty = Map::new();
    for (path, item) in doc.get("paths").and_then(Value::as_object).unwrap_or(&empty) {
        // A path item or operation that is a reference is followed; one that cannot be is
        // reported, never imported empty.
        let item = match item.get("$ref").and_then(Value::as_str) {
            Some(r) => match crate::schema::follow(doc, r) {
                Ok(target) => target,
                Err(reason) => {
                    skipped.push(Skipped { method: "*".into(), path: path.clone(), reason });
                    continue;
                }
            },
            None => item,
        };
        for method in METHODS {
            let Some(operation) = item.get(method) else { continue };
            let skip = |reason: String| Skipped { method: method.to_uppercase(), path: path.clone(), reason };
            let operation = match operation.get("$ref").and_then(Value::as_str) {
                Some(r) => match crate::schema::follow(doc, r) {
                    Ok(target) => target,
                    Err(reason) => {
                        skipped.push(skip(reason));
                        continue;
                    }
                },
                None => operation,
            };
            let op = Op { path, method, item, operation };
            // One route, or one per branch of a union body.
            let found = match op.routes(doc) {
                Ok(found) => found,
                Err(reason) => {
                    skipped.push(skip(reason));
                    continue;
                }
            };
            for route in found {
                let domain = snake_case(&match (options.domain_by, op.tag()) {
                    (DomainBy::Tag, Some(tag)) => tag.to_owned(),
                    _ => first_segment(route.path_template()),
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
                    Ok(()) => {
                        let texts = crate::about::path_item_texts(item);
                        if !texts.is_empty() {
                            path_about.insert((route.method, route.path.clone()), texts);
                        }
                        routes.push(route);
                    }
                    Err(e) => skipped.push(skip(e.to_string().replace('\n', " "))),
                }
            }
        }
    }
    // A word every tag's name starts with (Twilio's `Api20100401`) tells the tables apart in
    // nothing: it is left out of their names.
    let shared = match options.domain_by {
        DomainBy::Tag => shared_words(groups.keys().map(|(domain, _)| domain.as_str())),
        DomainBy::Path => String::new(),
    };
    let tables: Vec<RouteTable> = groups
        .into_iter()
        .map(|((domain, write), routes)| {
            let name = domain.strip_prefix(shared.as_str()).unwrap_or(&domain).to_owned();
            ((name, write), routes)
        })
        .filter(|(_, r)| !r.is_empty())
        .map(|((domain, write), routes)| table(&domain, !write, routes, &role, &title))
        .collect();
    if tables.is_empty() {
        return Err(Error::Nothing { skipped });
    }
    let limit = options.max_tool_tokens.unwrap_or(crate::budget::DEFAULT_TOOL_TOKENS);
    let (mut tables, budget) =
        crate::budget::fit(tables, limit, |domain, read, routes| table(domain, read, routes, &role, &title));
    if options.domain_by == DomainBy::Tag {
        let about = crate::about::tag_descriptions(doc);
        for table in &mut tables {
            let tag = format!("{shared}{}", table.domain);
            table.about.extend(about.get(&tag).cloned());
        }
    }
    for table in &mut tables {
        for route in &table.routes {
            for text in path_about.get(&(route.method, route.path.clone())).into_iter().flatten() {
                if !table.about.contains(text) {
                    table.about.push(text.clone());
                }
            }
        }
    }
    let (mut base_url, mut base_url_refused) = (None, None);
    if let Some(url) = doc.pointer("/servers/0").and_then(server_url) {
        match plain_url(&url) {
            Ok(()) => base_url = Some(url.trim_end_matches('/').to_owned()),
            Err(reason) => base_url_refused = reason,
        }
    }
    let auth = AuthHint::from_document(doc, &name);
    let routes = || tables.iter().flat_map(|t| &t.routes);
    let servers: std::collections::BTreeSet<String> = routes().filter_map(|r| r.server.clone()).collect();
    let named: std::collections::BTreeSet<&String> =
        routes().flat_map(|r| r.security.iter().flatten()).collect();
    let upper = name.to_ascii_uppercase();
    let schemes = named
        .into_iter()
        .filter(|s| crate::servers::main_scheme(doc) != Some(s.as_str()))
        .map(|s| {
            let env = format!("{upper}_{}_CREDENTIAL", snake_case(s).to_ascii_uppercase());
            (s.clone(), AuthHint::of_scheme(doc, s, env))
        })
        .collect();
    let servers = servers.into_iter().collect();
    Ok(Import {
        title,
        name,
        base_url,
        base_url_refused,
        tables,
        skipped,
        auth,
        budget,
        servers,
        from_swagger2,
        schemes,
    })
}

/// A comment line: `# ` and the text, any control character (a line break above all) made `?`.
fn comment(out: &mut String, text: &str) {
    out.push_str("# ");
    out.extend(text.chars().map(|c| if c.is_control() { '?' } else { c }));
    out.push('\n');
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
    let mut table = RouteTable::new(format!("{verb}_{domain}"), description, domain, routes);
    table.required_role = role.to_owned();
    table.tags = vec!["openapi".to_owned()];
    table
}

/// The parameters of a valid call: `op` and every required field with a value of its type.
fn example(route: &Route) -> String {
    let mut params = Map::new();
    params.insert("op".into(), json!(route.op));
    for f in route.fields.iter().filter(|f| f.required) {
        params.insert(f.name.clone(), sample(&f.shape));
    }
    Value::Object(params).to_string()
}

fn sample(f: &toolgate_schema::Items) -> Value {
    // A union: a value of its first branch.
    if let Some(branch) = f.one_of.first().or(f.any_of.first()) {
        return sample(branch);
    }
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
            f.fields.iter().filter(|f| f.required).map(|f| (f.name.clone(), sample(&f.shape))).collect(),
        ),
        FieldType::Any => json!("text"),
    }
}
