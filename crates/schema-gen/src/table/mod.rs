//! Route tables: one tool whose operations are rows (op, method, path, fields),
//! read from TOML or JSON data files and turned into one JSON Schema 2020-12.

mod check;
mod field;
mod schema;

use std::collections::HashSet;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_core::names::{is_injected_field, is_tool_name};
use tool_core::{Effect, SCHEMA_DIALECT, ToolSpec};

use self::check::{check_field, check_path};
pub use self::field::{Field, FieldType, Items, Location};
#[cfg(test)]
use self::schema::number;
use self::schema::route_schema;
use crate::{Error, Result};

/// The property that selects the operation in a route-table schema.
pub const OP_FIELD: &str = "op";

fn guest() -> String {
    "guest".to_string()
}

/// A route table: one tool whose operations share one schema (`oneOf`, one
/// branch per operation, the branch chosen by `op`).
///
/// ```
/// let table = schema_gen::RouteTable::from_toml_str(r#"
/// tool = "query_weight"
/// description = "Body weight measurements of the caller."
/// domain = "body"
///
/// [[routes]]
/// op = "get_weight"
/// method = "GET"
/// path = "/body/weight/{date}"
/// summary = "Weight measured on one day"
/// "#).unwrap();
/// let schema = table.schema();
/// assert_eq!(schema["oneOf"][0]["required"], serde_json::json!(["op", "date"]));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteTable {
    /// Tool name, verb_noun, e.g. `query_nutrition`.
    pub tool: String,
    /// What the tool does, for the model.
    pub description: String,
    /// Business domain, e.g. `nutrition`.
    pub domain: String,
    /// Lowest role that may use the tool (default `guest`).
    #[serde(default = "guest")]
    pub required_role: String,
    /// Free tags for discovery.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Optional minijinja template that renders a successful result as the text the model
    /// reads (`result`, `signals` and `metadata` are in scope); the structured result is
    /// unchanged. Declared domains use it to answer readable text without Rust.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_template: Option<String>,
    /// The operations.
    pub routes: Vec<Route>,
}

/// One operation of a route table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// Operation name, snake_case, unique in the table; the value of `op`.
    pub op: String,
    /// HTTP method of the backend call.
    pub method: Method,
    /// Path template with `{variables}`, e.g. `/body/measurements/{date}`. It may end in a
    /// fixed query the route always sends, `?key=value&...` (e.g. `/assistants?beta=true`,
    /// percent-encoded as in a URL; no variables there): see [`Route::path_template`] and
    /// [`Route::fixed_query`].
    pub path: String,
    /// One line for the model: what the operation does.
    pub summary: String,
    /// The parameters besides the path variables (path variables may be
    /// declared here too, to give them a type and a description).
    #[serde(default)]
    pub fields: Vec<Field>,
    /// Whether a POST, PUT or PATCH sends a JSON body (default `required`: always, `{}` when no
    /// body field is given).
    #[serde(default, skip_serializing_if = "Body::is_required")]
    pub body: Body,
    /// How a POST, PUT or PATCH encodes its body (key `body_encoding`): `"json"` (the default)
    /// sends a JSON object with `Content-Type: application/json`; `"form"` sends the body
    /// fields as `application/x-www-form-urlencoded` (`To=%2B1555&Body=hello+world`), as
    /// Twilio and other form APIs take them. A form body holds scalars and arrays of scalars
    /// only (an array repeats its key, `MediaUrl=a&MediaUrl=b`; numbers and booleans as JSON
    /// writes them; `null` leaves the field out), so a form route's body fields may not be
    /// objects or arrays of arrays or objects; the table is refused at load otherwise.
    #[serde(default, skip_serializing_if = "BodyEncoding::is_json")]
    pub body_encoding: BodyEncoding,
    /// The media types the operation answers with, e.g. `["application/json",
    /// "application/xml"]`; sent as `Accept`, JSON types first, the others at `q=0.5`. Empty
    /// (the default): `Accept: application/json`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accept: Vec<String>,
}

/// Whether a write sends a JSON body (route key `body`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Body {
    /// Always: the body fields given, `{}` when none is.
    #[default]
    Required,
    /// Only when the caller gives at least one body field; then every body field marked
    /// `required` must be given too (they are required of the body, not of the call).
    Optional,
    /// Never: the operation takes no body, and its fields without `in` go into the query.
    None,
}

impl Body {
    fn is_required(&self) -> bool {
        *self == Body::Required
    }
}

/// How a write encodes its body (route key `body_encoding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyEncoding {
    /// A JSON object, `Content-Type: application/json`.
    #[default]
    Json,
    /// `application/x-www-form-urlencoded` key/value pairs under the fields' wire names:
    /// scalars and arrays of scalars (repeated keys) only.
    Form,
}

impl BodyEncoding {
    /// `"json"` or `"form"`.
    pub fn as_str(self) -> &'static str {
        match self {
            BodyEncoding::Json => "json",
            BodyEncoding::Form => "form",
        }
    }

    /// The `Content-Type` a body in this encoding is sent with.
    pub fn content_type(self) -> &'static str {
        match self {
            BodyEncoding::Json => "application/json",
            BodyEncoding::Form => "application/x-www-form-urlencoded",
        }
    }

    fn is_json(&self) -> bool {
        *self == BodyEncoding::Json
    }
}

impl Route {
    /// The path template without its fixed query: what the `{variables}` are filled into.
    ///
    /// ```
    /// let route: schema_gen::Route = toml::from_str(
    ///     "op = \"list\"\nmethod = \"GET\"\npath = \"/assistants?beta=true\"\nsummary = \"List\"",
    /// ).unwrap();
    /// assert_eq!(route.path_template(), "/assistants");
    /// assert_eq!(route.fixed_query(), [("beta".to_string(), "true".to_string())]);
    /// ```
    pub fn path_template(&self) -> &str {
        self.path.split_once('?').map_or(self.path.as_str(), |(path, _)| path)
    }

    /// The fixed query of [`Route::path`] (after its `?`), as decoded key and value pairs in
    /// order; sent with every call, before the query fields. Empty when the path has none.
    pub fn fixed_query(&self) -> Vec<(String, String)> {
        let Some((_, query)) = self.path.split_once('?') else { return Vec::new() };
        let decode = |text: &str| {
            let bytes = text.as_bytes();
            let mut out = Vec::with_capacity(bytes.len());
            let mut i = 0;
            while i < bytes.len() {
                let hex = |b: u8| (b as char).to_digit(16);
                match (
                    bytes[i],
                    bytes.get(i + 1).and_then(|b| hex(*b)),
                    bytes.get(i + 2).and_then(|b| hex(*b)),
                ) {
                    (b'%', Some(hi), Some(lo)) => {
                        out.push((hi * 16 + lo) as u8);
                        i += 3;
                    }
                    (b'+', _, _) => {
                        out.push(b' ');
                        i += 1;
                    }
                    (b, _, _) => {
                        out.push(b);
                        i += 1;
                    }
                }
            }
            String::from_utf8_lossy(&out).into_owned()
        };
        query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| match pair.split_once('=') {
                Some((key, value)) => (decode(key), decode(value)),
                None => (decode(pair), String::new()),
            })
            .collect()
    }

    /// The name field `name` is sent under: its [`Field::wire_name`], else `name` itself.
    pub fn wire_name<'a>(&'a self, name: &'a str) -> &'a str {
        self.fields.iter().find(|f| f.name == name).map_or(name, Field::sent_name)
    }

    /// Where field `name` goes: its `in`, else a path variable into the path, else the query
    /// for GET, DELETE and `body = "none"`, else the JSON body.
    pub fn location(&self, name: &str) -> Location {
        if let Some(at) = self.fields.iter().find(|f| f.name == name).and_then(|f| f.location) {
            return at;
        }
        if path_variables(self.path_template()).iter().any(|v| v == name) {
            Location::Path
        } else if self.method.is_read() || self.method == Method::Delete || self.body == Body::None {
            Location::Query
        } else {
            Location::Body
        }
    }

    /// The `Accept` header of the operation: its [`Route::accept`] types, JSON ones
    /// (`application/json`, `*+json`) first, the others at `q=0.5`; `application/json` when
    /// it lists none.
    ///
    /// ```
    /// let mut route: schema_gen::Route = toml::from_str(
    ///     "op = \"login\"\nmethod = \"GET\"\npath = \"/login\"\nsummary = \"Log in\"",
    /// ).unwrap();
    /// assert_eq!(route.accept_header(), "application/json");
    /// route.accept = vec!["application/xml".into(), "application/json".into()];
    /// assert_eq!(route.accept_header(), "application/json, application/xml;q=0.5");
    /// ```
    pub fn accept_header(&self) -> String {
        if self.accept.is_empty() {
            return "application/json".to_owned();
        }
        let is_json = |m: &&String| {
            let m = m.to_ascii_lowercase();
            m == "application/json" || m.ends_with("+json")
        };
        let (json, other): (Vec<&String>, Vec<&String>) = self.accept.iter().partition(is_json);
        json.iter()
            .map(|m| m.to_string())
            .chain(other.iter().map(|m| format!("{m};q=0.5")))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Header names a field may not set: the request's framing, its credentials and what the
/// executor sets itself.
const RESERVED_HEADERS: [&str; 11] = [
    "authorization",
    "proxy_authorization",
    "cookie",
    "host",
    "content_type",
    "content_length",
    "transfer_encoding",
    "connection",
    "accept",
    "user_agent",
    "te",
];

/// The wire names of a route: each one a name HTTP can carry, sent once per location, never
/// a path variable's (its name is not sent), never a fixed query key; no nullable path variable.
fn check_wire_names(route: &Route, vars: &[String], at: &str, problems: &mut Vec<String>) {
    let mut sent = HashSet::new();
    let fixed: Vec<String> = route.fixed_query().into_iter().map(|(k, _)| k).collect();
    for field in &route.fields {
        let location = route.location(&field.name);
        let is_var = vars.contains(&field.name);
        if is_var && field.nullable {
            problems.push(format!(
                "{at}: path variable `{}` cannot be `nullable`; a path needs a value",
                field.name
            ));
        }
        if let Some(wire) = &field.wire_name {
            if is_var {
                problems.push(format!(
                    "{at}: field `{}` is a path variable, whose name is never sent; remove `wire_name` (rename the variable in the path instead)",
                    field.name
                ));
            }
            if wire.is_empty() || wire.len() > 256 || wire.chars().any(char::is_control) {
                problems.push(format!(
                    "{at}: field `{}` has a `wire_name` that is empty, longer than 256 bytes or has a control character",
                    field.name
                ));
            }
            let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
            if location == Location::Header && !wire.bytes().all(token) {
                problems.push(format!(
                    "{at}: header field `{}` has `wire_name` {wire:?}, which is not a header name",
                    field.name
                ));
            }
        }
        if !is_var && !sent.insert((location, field.sent_name())) {
            problems.push(format!(
                "{at}: field `{}` is sent as `{}`, like another field in the {}; each name is sent once",
                field.name,
                field.sent_name(),
                location.as_str()
            ));
        }
        if location == Location::Query && fixed.iter().any(|k| k == field.sent_name()) {
            problems.push(format!(
                "{at}: query field `{}` is sent as `{}`, which the path's fixed query already sets; remove one",
                field.name,
                field.sent_name()
            ));
        }
    }
}

/// A form route (`body_encoding = "form"`): a write with a body, whose body fields are scalars
/// or arrays of scalars.
fn check_form(route: &Route, writes: bool, at: &str, problems: &mut Vec<String>) {
    if !writes || route.body == Body::None {
        problems.push(format!(
            "{at}: `body_encoding = \"form\"` applies to a POST, PUT or PATCH that sends a body; this {} sends none, remove `body_encoding`",
            if writes { "route with `body = \"none\"`" } else { route.method.as_str() }
        ));
        return;
    }
    for field in route.fields.iter().filter(|f| route.location(&f.name) == Location::Body) {
        let nested = match field.ty {
            FieldType::Object => Some("an object"),
            FieldType::Array => match field.items.as_deref().map(|i| i.ty) {
                Some(FieldType::Object) => Some("an array of objects"),
                Some(FieldType::Array) => Some("an array of arrays"),
                _ => None,
            },
            _ => None,
        };
        if let Some(what) = nested {
            problems.push(format!(
                "{at}: body field `{}` is {what}, which a form body (`body_encoding = \"form\"`) cannot hold: it takes strings, numbers, booleans and arrays of them; give each member as a field of its own, or remove `body_encoding` to send JSON",
                field.name
            ));
        }
    }
}

/// HTTP method of a route. Written `GET`, `POST`, ... (lowercase accepted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    /// Read.
    #[serde(alias = "get")]
    Get,
    /// Create (not idempotent).
    #[serde(alias = "post")]
    Post,
    /// Replace (idempotent).
    #[serde(alias = "put")]
    Put,
    /// Partial update (not idempotent).
    #[serde(alias = "patch")]
    Patch,
    /// Delete (idempotent).
    #[serde(alias = "delete")]
    Delete,
}

impl Method {
    /// `"GET"`, `"POST"`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }

    /// Whether the method only reads.
    pub fn is_read(self) -> bool {
        self == Method::Get
    }

    /// Whether repeating the call has the effect of one call (HTTP semantics).
    pub fn is_idempotent(self) -> bool {
        matches!(self, Method::Get | Method::Put | Method::Delete)
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The pattern added to every `format: date` string, so a date is checked
/// by shape even where formats are annotations only.
pub const DATE_PATTERN: &str = r"^\d{4}-\d{2}-\d{2}$";

pub(crate) static PATH_VAR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\{([A-Za-z_][A-Za-z0-9_]*)\}").expect("a literal regex"));

pub(crate) static OP_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z][a-z0-9_]{0,63}$").expect("a literal regex"));

pub(crate) static FIELD_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$").expect("a literal regex"));

/// The `{variables}` of a path template, in order of appearance, each once.
///
/// ```
/// assert_eq!(schema_gen::path_variables("/users/{id}/posts/{post_id}/{id}"), ["id", "post_id"]);
/// ```
pub fn path_variables(path: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for cap in PATH_VAR.captures_iter(path) {
        let name = &cap[1];
        if !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// `first` then `second`, in order, every name once.
///
/// ```
/// let a = ["op".to_string(), "date".to_string()];
/// let b = ["date".to_string(), "meal".to_string()];
/// assert_eq!(schema_gen::merge_required(&a, &b), ["op", "date", "meal"]);
/// ```
pub fn merge_required(first: &[String], second: &[String]) -> Vec<String> {
    let mut seen: HashSet<&str> = HashSet::with_capacity(first.len() + second.len());
    let mut out = Vec::with_capacity(first.len() + second.len());
    for name in first.iter().chain(second) {
        if seen.insert(name.as_str()) {
            out.push(name.clone());
        }
    }
    out
}

impl RouteTable {
    /// Parse a TOML route table and check it.
    pub fn from_toml_str(text: &str) -> Result<Self> {
        let table: Self =
            toml::from_str(text).map_err(|e| Error::Parse { format: "TOML", message: e.to_string() })?;
        table.check()?;
        Ok(table)
    }

    /// Parse a JSON route table and check it.
    pub fn from_json_str(text: &str) -> Result<Self> {
        let table: Self = serde_json::from_str(text)
            .map_err(|e| Error::Parse { format: "JSON", message: e.to_string() })?;
        table.check()?;
        Ok(table)
    }

    /// Read a route table file: `.toml` or `.json` by extension.
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let in_file = |e: Error| Error::File { path: path.to_path_buf(), error: Box::new(e) };
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        let parse: fn(&str) -> Result<Self> = match ext.as_deref() {
            Some("toml") => Self::from_toml_str,
            Some("json") => Self::from_json_str,
            _ => {
                return Err(in_file(Error::Extension));
            }
        };
        let text =
            std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        parse(&text).map_err(in_file)
    }

    /// The route of an operation.
    pub fn route(&self, op: &str) -> Option<&Route> {
        self.routes.iter().find(|r| r.op == op)
    }

    /// The operation names, in table order.
    pub fn ops(&self) -> impl Iterator<Item = &str> {
        self.routes.iter().map(|r| r.op.as_str())
    }

    /// Check everything a table can get wrong, reporting every problem at once.
    pub fn check(&self) -> Result<()> {
        let mut problems = Vec::new();
        if !is_tool_name(&self.tool) {
            problems.push(format!(
                "`tool = {:?}` is not a verb_noun snake_case name (e.g. `query_nutrition`)",
                self.tool
            ));
        }
        if self.result_template.as_deref().is_some_and(|t| t.trim().is_empty()) {
            problems.push("`result_template` is empty; remove it or write the template".to_string());
        }
        for (what, value) in [
            ("description", &self.description),
            ("domain", &self.domain),
            ("required_role", &self.required_role),
        ] {
            if value.trim().is_empty() {
                problems.push(format!("`{what}` is empty"));
            }
        }
        if self.routes.is_empty() {
            problems.push("`routes` is empty; add at least one [[routes]] entry".to_string());
        }
        let mut ops = HashSet::new();
        for (i, route) in self.routes.iter().enumerate() {
            let at = format!("routes[{i}] (op `{}`)", route.op);
            if !OP_NAME.is_match(&route.op) {
                problems.push(format!("{at}: `op` must be snake_case (`[a-z][a-z0-9_]*`, at most 64 chars)"));
            }
            if !ops.insert(route.op.as_str()) {
                problems.push(format!("{at}: op `{}` appears twice; ops must be unique", route.op));
            }
            if route.summary.trim().is_empty() {
                problems.push(format!("{at}: `summary` is empty; write one line for the model"));
            }
            check_path(&route.path, &at, &mut problems);
            let vars = path_variables(route.path_template());
            let writes = matches!(route.method, Method::Post | Method::Put | Method::Patch);
            if route.body != Body::Required && !writes {
                problems.push(format!(
                    "{at}: `body` applies to POST, PUT and PATCH only; a {} sends no body",
                    route.method
                ));
            }
            if route.body_encoding == BodyEncoding::Form {
                check_form(route, writes, &at, &mut problems);
            }
            for media in &route.accept {
                let plain = media.split_once('/').is_some_and(|(t, s)| {
                    let token = |x: &str| {
                        !x.is_empty()
                            && x.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+*".contains(&b))
                    };
                    token(t) && token(s)
                });
                if !plain {
                    problems.push(format!(
                        "{at}: `accept` entry {media:?} is not a media type `type/subtype` (without parameters)"
                    ));
                }
            }
            let mut names = HashSet::new();
            for field in &route.fields {
                if !names.insert(field.name.as_str()) {
                    problems.push(format!("{at}: field `{}` is declared twice", field.name));
                }
                if field.name == OP_FIELD {
                    problems.push(format!("{at}: a field may not be called `op`; it selects the operation"));
                }
                if vars.contains(&field.name) && matches!(field.ty, FieldType::Array | FieldType::Object) {
                    problems.push(format!(
                        "{at}: path variable `{}` is declared as {}; a path variable must be a string, number or boolean",
                        field.name,
                        field.ty.as_str()
                    ));
                }
                check_field(field, &format!("{at}: field `{}`", field.name), &mut problems);
                let is_var = vars.contains(&field.name);
                match field.location {
                    None => {}
                    Some(Location::Path) if is_var => {}
                    Some(Location::Path) => problems.push(format!(
                        "{at}: field `{}` has `in = \"path\"` but the path has no `{{{}}}`",
                        field.name, field.name
                    )),
                    Some(other) if is_var => problems.push(format!(
                        "{at}: field `{}` is a path variable; it cannot be `in = \"{}\"`",
                        field.name,
                        other.as_str()
                    )),
                    Some(Location::Body) if !writes || route.body == Body::None => problems.push(format!(
                        "{at}: field `{}` has `in = \"body\"` but the route sends no body (a {} {})",
                        field.name,
                        route.method,
                        if writes { "with `body = \"none\"`" } else { "never has one" }
                    )),
                    Some(Location::Header)
                        if RESERVED_HEADERS
                            .contains(&field.sent_name().to_ascii_lowercase().replace('-', "_").as_str()) =>
                    {
                        problems.push(format!(
                            "{at}: field `{}` cannot be a header: toolgate sets that header itself",
                            field.name
                        ))
                    }
                    Some(Location::Header)
                        if field.ty == FieldType::Array || field.ty == FieldType::Object =>
                    {
                        problems.push(format!(
                            "{at}: header field `{}` must be a string, number or boolean",
                            field.name
                        ))
                    }
                    Some(_) => {}
                }
            }
            check_wire_names(route, &vars, &at, &mut problems);
            for var in &vars {
                if var == OP_FIELD || is_injected_field(var) {
                    problems.push(format!(
                        "{at}: path variable `{var}` cannot be a parameter (reserved or injected from the call context)"
                    ));
                }
            }
        }
        if problems.is_empty() {
            self.effect().map(|_| ())
        } else {
            Err(Error::Invalid { tool: self.tool.clone(), problems })
        }
    }

    /// The JSON Schema 2020-12 of the tool: root `type: object` with one
    /// `oneOf` branch per operation, `op` locked by `const`, every branch closed.
    pub fn schema(&self) -> Value {
        let branches: Vec<Value> = self.routes.iter().map(route_schema).collect();
        json!({
            "$schema": SCHEMA_DIALECT,
            "type": "object",
            "oneOf": branches,
        })
    }

    /// All GET: `Read`. All writes: `Write`, idempotent when every method is
    /// PUT or DELETE. Reads and writes mixed: an error (they are different tools).
    pub fn effect(&self) -> Result<Effect> {
        let (reads, writes): (Vec<&Route>, Vec<&Route>) =
            self.routes.iter().partition(|r| r.method.is_read());
        match (reads.is_empty(), writes.is_empty()) {
            (_, true) => Ok(Effect::Read),
            (true, false) => {
                Ok(Effect::Write { idempotent: writes.iter().all(|r| r.method.is_idempotent()) })
            }
            (false, false) => Err(Error::MixedEffect {
                tool: self.tool.clone(),
                reads: reads.iter().map(|r| r.op.clone()).collect(),
                writes: writes.iter().map(|r| format!("{} ({})", r.op, r.method)).collect(),
            }),
        }
    }

    /// The tool's spec: schema, effect, role, domain and tags; checked with
    /// [`ToolSpec::check`].
    pub fn spec(&self) -> Result<ToolSpec> {
        self.check()?;
        let spec = ToolSpec::new(self.tool.clone(), self.description.clone(), self.schema())
            .with_effect(self.effect()?)
            .with_role(self.required_role.clone())
            .with_domain(self.domain.clone())
            .with_tags(self.tags.iter().cloned());
        let spec = match &self.result_template {
            Some(template) => spec.with_result_template(template.clone()),
            None => spec,
        };
        spec.check()?;
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regexes_compile() {
        assert!(PATH_VAR.is_match("{a}"));
        assert!(OP_NAME.is_match("get_x"));
        assert!(FIELD_NAME.is_match("_x1"));
    }

    #[test]
    fn numbers_print_without_fraction_when_whole() {
        assert_eq!(number(1.0), json!(1));
        assert_eq!(number(-2.5), json!(-2.5));
        assert_eq!(number(1e300), json!(1e300));
    }
}

#[cfg(test)]
mod location_tests {
    use super::*;

    fn table(routes: &str) -> Result<RouteTable> {
        RouteTable::from_toml_str(&format!(
            "tool = \"update_x\"\ndescription = \"d\"\ndomain = \"x\"\n{routes}"
        ))
    }

    #[test]
    fn locations_and_bodies_that_cannot_hold_are_refused_with_the_fix() {
        let err = table(
            r#"
[[routes]]
op = "a"
method = "POST"
path = "/a/{id}"
summary = "s"
body = "none"
accept = ["application/json; charset=utf-8"]
fields = [
  { name = "id", type = "string", in = "query" },
  { name = "b", type = "string", in = "body" },
  { name = "c", type = "string", in = "path" },
  { name = "Authorization", type = "string", in = "header" },
  { name = "o", type = "object", fields = [{ name = "k", type = "string", in = "query" }] },
]
[[routes]]
op = "d"
method = "DELETE"
path = "/d"
summary = "s"
body = "optional"
"#,
        )
        .unwrap_err()
        .to_string();
        for expected in [
            "`id` is a path variable; it cannot be `in = \"query\"`",
            "`b` has `in = \"body\"` but the route sends no body",
            "`c` has `in = \"path\"` but the path has no `{c}`",
            "`Authorization` cannot be a header",
            "`in` applies to a route's own fields",
            "\"application/json; charset=utf-8\" is not a media type",
            "`body` applies to POST, PUT and PATCH only",
        ] {
            assert!(err.contains(expected), "{expected}: {err}");
        }
        let err = table("[[routes]]\nop = \"a\"\nmethod = \"POST\"\npath = \"/a\"\nsummary = \"s\"\nfields = [{ name = \"q\", type = \"string\", in = \"cookie\" }]")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown variant `cookie`"), "{err}");
    }
}

#[cfg(test)]
mod wire_tests {
    use super::*;

    fn table(routes: &str) -> Result<RouteTable> {
        RouteTable::from_toml_str(&format!(
            "tool = \"query_x\"\ndescription = \"d\"\ndomain = \"x\"\n{routes}"
        ))
    }

    #[test]
    fn a_nullable_field_admits_null_in_its_schema_and_enum() {
        let t = table(
            r#"
[[routes]]
op = "a"
method = "GET"
path = "/a"
summary = "s"
fields = [
  { name = "size", type = "string", enum = ["s", "m"], nullable = true },
  { name = "tags", type = "array", items = { type = "string" }, nullable = true },
]
"#,
        )
        .unwrap();
        let branch = &t.schema()["oneOf"][0]["properties"];
        assert_eq!(branch["size"]["type"], json!(["string", "null"]));
        assert_eq!(branch["size"]["enum"], json!(["s", "m", null]));
        assert_eq!(branch["tags"]["type"], json!(["array", "null"]));
        let v = crate::Validator::new(&t.schema()).unwrap();
        v.validate(&json!({"op": "a", "size": null, "tags": null})).unwrap();
        assert!(v.validate(&json!({"op": "a", "size": "xl"})).is_err());
        let back: RouteTable = toml::from_str(&toml::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t, "nullable survives TOML");
    }

    #[test]
    fn wire_names_fixed_queries_and_fragments_are_checked() {
        let t = table(
            r#"
[[routes]]
op = "a"
method = "GET"
path = "/a/{id}?beta=true&x=a%20b"
summary = "s"
fields = [{ name = "StartTime_lt", type = "string", wire_name = "StartTime<" }]
"#,
        )
        .unwrap();
        let route = &t.routes[0];
        assert_eq!(route.path_template(), "/a/{id}");
        assert_eq!(
            route.fixed_query(),
            [("beta".to_owned(), "true".to_owned()), ("x".to_owned(), "a b".to_owned())]
        );
        assert_eq!((route.wire_name("StartTime_lt"), route.wire_name("id")), ("StartTime<", "id"));
        assert_eq!(path_variables(route.path_template()), ["id"]);
        let err = table(
            r#"
[[routes]]
op = "a"
method = "POST"
path = "/a/{id}#frag"
summary = "s"
fields = [
  { name = "id", type = "string", wire_name = "ID", nullable = true },
  { name = "a", type = "string", wire_name = "b" },
  { name = "b", type = "string" },
  { name = "h", type = "string", in = "header", wire_name = "Authorization" },
  { name = "o", type = "object", fields = [{ name = "k", type = "string", wire_name = "K" }] },
]
[[routes]]
op = "b"
method = "GET"
path = "/b?beta=true&q={q}"
summary = "s"
fields = [{ name = "beta_", type = "string", wire_name = "beta" }]
"#,
        )
        .unwrap_err()
        .to_string();
        for expected in [
            "has a `#fragment`, which is never sent",
            "path variable `id` cannot be `nullable`",
            "`id` is a path variable, whose name is never sent",
            "field `b` is sent as `b`, like another field in the body",
            "`h` cannot be a header",
            "`wire_name` applies to a route's own fields",
            "has a `{variable}`",
            "which the path's fixed query already sets",
        ] {
            assert!(err.contains(expected), "{expected}: {err}");
        }
    }
}

#[cfg(test)]
mod form_tests {
    use super::*;

    fn table(routes: &str) -> Result<RouteTable> {
        RouteTable::from_toml_str(&format!(
            "tool = \"send_messages\"\ndescription = \"d\"\ndomain = \"x\"\n{routes}"
        ))
    }

    #[test]
    fn a_form_route_reads_and_writes_back_and_json_stays_the_default() {
        let t = table(
            r#"
[[routes]]
op = "send"
method = "POST"
path = "/Messages.json"
summary = "s"
body_encoding = "form"
fields = [
  { name = "To", type = "string", required = true },
  { name = "MediaUrl", type = "array", items = { type = "string" } },
  { name = "n", type = "integer" },
  { name = "ok", type = "boolean" },
]
[[routes]]
op = "plain"
method = "POST"
path = "/plain"
summary = "s"
"#,
        )
        .unwrap();
        assert_eq!(t.routes[0].body_encoding, BodyEncoding::Form);
        assert_eq!(t.routes[0].body_encoding.content_type(), "application/x-www-form-urlencoded");
        assert_eq!(t.routes[1].body_encoding, BodyEncoding::Json, "no key: JSON, as before");
        let text = toml::to_string(&t).unwrap();
        assert_eq!(text.matches("body_encoding = \"form\"").count(), 1, "{text}");
        assert!(!text.contains("\"json\""), "the default is not written: {text}");
        assert_eq!(RouteTable::from_toml_str(&text).unwrap(), t);
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(RouteTable::from_json_str(&json).unwrap(), t);
        let err = table("[[routes]]\nop = \"a\"\nmethod = \"POST\"\npath = \"/a\"\nsummary = \"s\"\nbody_encoding = \"xml\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown variant `xml`"), "{err}");
    }

    #[test]
    fn nested_values_in_a_form_body_and_forms_without_a_body_are_refused_with_the_fix() {
        let err = table(
            r#"
[[routes]]
op = "a"
method = "POST"
path = "/a"
summary = "s"
body_encoding = "form"
fields = [
  { name = "To", type = "string" },
  { name = "meta", type = "object", fields = [{ name = "k", type = "string" }] },
  { name = "rows", type = "array", items = { type = "array", items = { type = "string" } } },
  { name = "items", type = "array", items = { type = "object", fields = [{ name = "k", type = "string" }] } },
  { name = "filter", type = "object", in = "query", fields = [{ name = "k", type = "string" }] },
]
[[routes]]
op = "b"
method = "POST"
path = "/b"
summary = "s"
body = "none"
body_encoding = "form"
[[routes]]
op = "c"
method = "DELETE"
path = "/c"
summary = "s"
body_encoding = "form"
"#,
        )
        .unwrap_err()
        .to_string();
        for expected in [
            "routes[0] (op `a`): body field `meta` is an object, which a form body (`body_encoding = \"form\"`) cannot hold",
            "body field `rows` is an array of arrays",
            "body field `items` is an array of objects",
            "give each member as a field of its own, or remove `body_encoding` to send JSON",
            "routes[1] (op `b`): `body_encoding = \"form\"` applies to a POST, PUT or PATCH that sends a body; this route with `body = \"none\"` sends none",
            "routes[2] (op `c`): `body_encoding = \"form\"` applies to a POST, PUT or PATCH that sends a body; this DELETE sends none",
        ] {
            assert!(err.contains(expected), "{expected}: {err}");
        }
        assert!(!err.contains("`To`") && !err.contains("`filter`"), "scalars and query fields pass: {err}");
        assert_eq!(err.matches("cannot hold").count(), 3, "{err}");
    }
}
