//! Route tables: one tool whose operations are rows (op, method, path, fields),
//! read from TOML or JSON data files and turned into one JSON Schema 2020-12.

mod body;
mod build;
mod check;
mod field;
mod method;
mod schema;
mod whole;

use std::collections::HashSet;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolgate_core::names::{is_injected_field, is_tool_name};
use toolgate_core::{Effect, SCHEMA_DIALECT, ToolSpec};

pub use self::body::{Body, BodyEncoding};
use self::build::guest;
use self::check::{
    RESERVED_HEADERS, check_collection_format, check_field, check_form, check_path,
    check_server_and_security, check_wire_names,
};
pub use self::field::{CollectionFormat, Field, FieldType, Items, Location};
pub use self::method::Method;
#[cfg(test)]
use self::schema::number;
use self::schema::route_schema;
use crate::{Error, Result};

/// The property that selects the operation in a route-table schema.
pub const OP_FIELD: &str = "op";

/// A route table: one tool whose operations share one schema (`oneOf`, one
/// branch per operation, the branch chosen by `op`).
///
/// ```
/// let table = toolgate_schema::RouteTable::from_toml_str(r#"
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
#[non_exhaustive]
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
    /// What the source document says about the things the operations act on (the
    /// description of the OpenAPI tag they are filed under, and of the path items they are under): read by discovery's ranking
    /// ([`ToolSpec::about`]), never part of the description the model reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub about: Vec<String>,
}

/// One operation of a route table. Read from a table, or built with [`Route::new`] and its
/// fields set (a route gains keys as tables learn to say more, so it is not built by a literal).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
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
    /// `"multipart"` sends `multipart/form-data` (file uploads), its files the body fields
    /// with `content_encoding = "base64"` ([`BodyEncoding::Multipart`]).
    /// `"binary"` sends the bytes of its [`Route::body_field`], given as base64 text
    /// ([`BodyEncoding::Binary`]); `"text"` that field's text as it is ([`BodyEncoding::Text`]).
    #[serde(default, skip_serializing_if = "BodyEncoding::is_json")]
    pub body_encoding: BodyEncoding,
    /// The one body field whose value is the request body itself (key `body_field`), instead
    /// of an object of the body fields: a JSON array (Petstore's `POST /user/createWithList`
    /// takes `[User, ...]`), a free-form JSON object, or with `body_encoding = "binary"` the
    /// bytes of a base64 field. It must be the route's only body field, required when the body
    /// is (`body = "required"`); with `body = "optional"` the body is sent when it is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_field: Option<String>,
    /// The `Content-Type` of the body when it is not its encoding's default (key
    /// `content_type`): a JSON type for a JSON body (`application/json-patch+json`), any
    /// media type `type/subtype` for a binary one (default `application/octet-stream`) or a
    /// text one (default `text/plain`). Not for form and multipart bodies. See [`Route::content_type_header`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// The media types the operation answers with, e.g. `["application/json",
    /// "application/xml"]`; sent as `Accept`, JSON types first, the others at `q=0.5`. Empty
    /// (the default): `Accept: application/json`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accept: Vec<String>,
    /// The base URL of this operation when it is not its domain's (an OpenAPI operation's or
    /// path's own `servers`, e.g. `https://upload.box.com/api/2.0`): a plain absolute
    /// `http(s)://` URL, which the domain must list under its `servers` (that says where it is
    /// called, and that the domain's credential may go there). Absent: the domain's `base_url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The security schemes the operation takes, in the document's order (its own OpenAPI
    /// `security`): the first one its domain declares a credential for under `schemes` is
    /// sent, else the domain's `auth`. Empty (`security = []`): the operation takes no
    /// credential and none is sent. Absent: the domain's `auth`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<Vec<String>>,
}

impl Route {
    /// The path template without its fixed query: what the `{variables}` are filled into.
    ///
    /// ```
    /// let route: toolgate_schema::Route = toml::from_str(
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
    /// for GET, DELETE and `body = "none"`, else the JSON body. (A DELETE's fields with
    /// `in = "body"` are its JSON body, sent as a write's is by its `body`: always with
    /// `"required"`, `{}` when none is given; with `"optional"` only when one is given.)
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

    /// The `Content-Type` the route's body is sent with: its [`Route::content_type`], else its
    /// encoding's ([`BodyEncoding::content_type`]; a multipart body adds its boundary).
    ///
    /// ```
    /// let route: toolgate_schema::Route = toml::from_str(
    ///     "op = \"put\"\nmethod = \"PUT\"\npath = \"/chunk\"\nsummary = \"s\"\nbody_encoding = \"binary\"",
    /// ).unwrap();
    /// assert_eq!(route.content_type_header(), "application/octet-stream");
    /// ```
    pub fn content_type_header(&self) -> &str {
        self.content_type.as_deref().unwrap_or(self.body_encoding.content_type())
    }

    /// The `Accept` header of the operation: its [`Route::accept`] types, JSON ones
    /// (`application/json`, `*+json`) first, the others at `q=0.5`; `application/json` when
    /// it lists none.
    ///
    /// ```
    /// let mut route: toolgate_schema::Route = toml::from_str(
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
/// assert_eq!(toolgate_schema::path_variables("/users/{id}/posts/{post_id}/{id}"), ["id", "post_id"]);
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
/// assert_eq!(toolgate_schema::merge_required(&a, &b), ["op", "date", "meal"]);
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
            check_server_and_security(route, &at, &mut problems);
            check_collection_format(route, &at, &mut problems);
            let vars = path_variables(route.path_template());
            let writes = matches!(route.method, Method::Post | Method::Put | Method::Patch);
            // A DELETE's body is its `in = "body"` fields (sent as a write's is).
            if route.body != Body::Required && !writes && route.method != Method::Delete {
                problems.push(format!(
                    "{at}: `body` applies to POST, PUT, PATCH and DELETE only; a {} sends no body",
                    route.method
                ));
            }
            if route.body_encoding == BodyEncoding::Form {
                check_form(route, writes, &at, &mut problems);
            }
            if route.body_encoding == BodyEncoding::Multipart {
                body::check_multipart(route, &at, &mut problems);
            }
            whole::check_whole_body(route, &at, &mut problems);
            body::check_content_encoding(route, &at, &mut problems);
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
                if vars.contains(&field.name) && !field.is_scalar() {
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
                    // A DELETE sends a JSON body of its `in = "body"` fields.
                    Some(Location::Body)
                        if (!writes && route.method != Method::Delete) || route.body == Body::None =>
                    {
                        problems.push(format!(
                            "{at}: field `{}` has `in = \"body\"` but the route sends no body (a {} {})",
                            field.name,
                            route.method,
                            if writes { "with `body = \"none\"`" } else { "never has one" }
                        ))
                    }
                    Some(Location::Header)
                        if RESERVED_HEADERS
                            .contains(&field.sent_name().to_ascii_lowercase().replace('-', "_").as_str()) =>
                    {
                        problems.push(format!(
                            "{at}: field `{}` cannot be a header: toolgate sets that header itself",
                            field.name
                        ))
                    }
                    Some(Location::Header) if !field.is_scalar() && !field.is_scalar_list() => problems.push(format!(
                        "{at}: header field `{}` must be a string, number or boolean, or an array of them (sent comma-separated)",
                        field.name
                    )),
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
            .with_tags(self.tags.iter().cloned())
            .with_about(self.about.iter().cloned());
        let spec = match &self.result_template {
            Some(template) => spec.with_result_template(template.clone()),
            None => spec,
        };
        spec.check()?;
        Ok(spec)
    }
}

#[cfg(test)]
mod tests;
