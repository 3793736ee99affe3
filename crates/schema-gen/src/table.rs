//! Route tables: one tool whose operations are rows (op, method, path, fields),
//! read from TOML or JSON data files and turned into one JSON Schema 2020-12.

use std::collections::HashSet;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tool_core::names::{is_injected_field, is_tool_name};
use tool_core::{Effect, SCHEMA_DIALECT, ToolSpec};

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
    /// Path template with `{variables}`, e.g. `/body/measurements/{date}`.
    pub path: String,
    /// One line for the model: what the operation does.
    pub summary: String,
    /// The parameters besides the path variables (path variables may be
    /// declared here too, to give them a type and a description).
    #[serde(default)]
    pub fields: Vec<Field>,
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

/// JSON type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    /// A string (see `format`, `enum`, `pattern`).
    #[default]
    String,
    /// A whole number.
    Integer,
    /// Any number.
    Number,
    /// true or false.
    Boolean,
    /// A list; `items` says of what.
    Array,
    /// An object; `fields` says which fields it has.
    Object,
}

impl FieldType {
    /// The JSON Schema `type` name.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldType::String => "string",
            FieldType::Integer => "integer",
            FieldType::Number => "number",
            FieldType::Boolean => "boolean",
            FieldType::Array => "array",
            FieldType::Object => "object",
        }
    }

    fn is_numeric(self) -> bool {
        matches!(self, FieldType::Integer | FieldType::Number)
    }
}

/// One parameter of an operation.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    /// Parameter name (`[A-Za-z_][A-Za-z0-9_]*`, at most 64 characters).
    pub name: String,
    /// JSON type.
    #[serde(rename = "type")]
    pub ty: FieldType,
    /// String format: `date` (YYYY-MM-DD, also enforced by a pattern),
    /// `date-time`, `time`, `email`, `uuid`, `uri`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The allowed values.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<Value>>,
    /// For the model: meaning, unit, example.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the operation needs it.
    #[serde(default)]
    pub required: bool,
    /// Lowest allowed number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// Highest allowed number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// Element type of an array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<Items>>,
    /// Regular expression a string must match (ECMA 262 dialect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Shortest allowed string, in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Longest allowed string, in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Fewest array items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most array items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// Fields of an object (closed: no other keys allowed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<Field>,
}

impl Field {
    /// A field of the given name and type; optional, no constraints.
    pub fn new(name: impl Into<String>, ty: FieldType) -> Self {
        Self { name: name.into(), ty, ..Self::default() }
    }

    /// Make it required.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// Set the description.
    pub fn describe(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// Set the format.
    pub fn format(mut self, format: impl Into<String>) -> Self {
        self.format = Some(format.into());
        self
    }

    fn shape(&self) -> Shape<'_> {
        Shape {
            ty: self.ty,
            format: self.format.as_deref(),
            enum_values: self.enum_values.as_deref(),
            description: self.description.as_deref(),
            minimum: self.minimum,
            maximum: self.maximum,
            items: self.items.as_deref(),
            pattern: self.pattern.as_deref(),
            min_length: self.min_length,
            max_length: self.max_length,
            min_items: self.min_items,
            max_items: self.max_items,
            fields: &self.fields,
        }
    }
}

/// The element type of an array field: a field without a name.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Items {
    /// JSON type.
    #[serde(rename = "type")]
    pub ty: FieldType,
    /// String format, as for [`Field::format`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The allowed values.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<Value>>,
    /// For the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Lowest allowed number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// Highest allowed number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// Element type of a nested array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<Items>>,
    /// Regular expression a string must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Shortest allowed string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Longest allowed string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Fewest items of a nested array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most items of a nested array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// Fields of an object element.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<Field>,
}

impl Items {
    /// Elements of the given type.
    pub fn new(ty: FieldType) -> Self {
        Self { ty, ..Self::default() }
    }

    fn shape(&self) -> Shape<'_> {
        Shape {
            ty: self.ty,
            format: self.format.as_deref(),
            enum_values: self.enum_values.as_deref(),
            description: self.description.as_deref(),
            minimum: self.minimum,
            maximum: self.maximum,
            items: self.items.as_deref(),
            pattern: self.pattern.as_deref(),
            min_length: self.min_length,
            max_length: self.max_length,
            min_items: self.min_items,
            max_items: self.max_items,
            fields: &self.fields,
        }
    }
}

/// The type part shared by [`Field`] and [`Items`].
struct Shape<'a> {
    ty: FieldType,
    format: Option<&'a str>,
    enum_values: Option<&'a [Value]>,
    description: Option<&'a str>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    items: Option<&'a Items>,
    pattern: Option<&'a str>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    fields: &'a [Field],
}

/// The pattern added to every `format: date` string, so a date is checked
/// by shape even where formats are annotations only.
pub const DATE_PATTERN: &str = r"^\d{4}-\d{2}-\d{2}$";

static PATH_VAR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\{([A-Za-z_][A-Za-z0-9_]*)\}").expect("a literal regex"));

static OP_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z][a-z0-9_]{0,63}$").expect("a literal regex"));

static FIELD_NAME: LazyLock<Regex> =
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
            let vars = path_variables(&route.path);
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
            }
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

fn check_path(path: &str, at: &str, problems: &mut Vec<String>) {
    if !path.starts_with('/') {
        problems.push(format!("{at}: `path` {path:?} must start with `/`"));
    }
    let rest = PATH_VAR.replace_all(path, "");
    if rest.contains('{') || rest.contains('}') {
        problems.push(format!(
            "{at}: `path` {path:?} has a malformed variable; write `{{name}}` with name `[A-Za-z_][A-Za-z0-9_]*`"
        ));
    }
}

fn check_field(field: &Field, at: &str, problems: &mut Vec<String>) {
    if !FIELD_NAME.is_match(&field.name) {
        problems.push(format!("{at}: the name must match `[A-Za-z_][A-Za-z0-9_]*` (at most 64 characters)"));
    }
    if is_injected_field(&field.name) {
        problems.push(format!(
            "{at}: `{}` comes from the call context (caller identity), never from the model; remove the field",
            field.name
        ));
    }
    check_shape(&field.shape(), at, problems);
}

fn check_shape(shape: &Shape<'_>, at: &str, problems: &mut Vec<String>) {
    let ty = shape.ty;
    if shape.format.is_some() && ty != FieldType::String {
        problems.push(format!("{at}: `format` applies to strings only, the type is {}", ty.as_str()));
    }
    if (shape.minimum.is_some() || shape.maximum.is_some()) && !ty.is_numeric() {
        problems
            .push(format!("{at}: `minimum`/`maximum` apply to numbers only, the type is {}", ty.as_str()));
    }
    for (name, v) in [("minimum", shape.minimum), ("maximum", shape.maximum)] {
        if v.is_some_and(|v| !v.is_finite()) {
            problems.push(format!("{at}: `{name}` must be a finite number"));
        }
    }
    if let (Some(lo), Some(hi)) = (shape.minimum, shape.maximum)
        && lo > hi
    {
        problems.push(format!("{at}: `minimum` {lo} is above `maximum` {hi}"));
    }
    if (shape.pattern.is_some() || shape.min_length.is_some() || shape.max_length.is_some())
        && ty != FieldType::String
    {
        problems.push(format!("{at}: `pattern`/`min_length`/`max_length` apply to strings only"));
    }
    if let (Some(lo), Some(hi)) = (shape.min_length, shape.max_length)
        && lo > hi
    {
        problems.push(format!("{at}: `min_length` {lo} is above `max_length` {hi}"));
    }
    if let Some(pattern) = shape.pattern
        && jsonschema::draft202012::new(&json!({ "pattern": pattern })).is_err()
    {
        problems.push(format!("{at}: `pattern` {pattern:?} is not a valid regular expression"));
    }
    if (shape.min_items.is_some() || shape.max_items.is_some()) && ty != FieldType::Array {
        problems.push(format!("{at}: `min_items`/`max_items` apply to arrays only"));
    }
    if let (Some(lo), Some(hi)) = (shape.min_items, shape.max_items)
        && lo > hi
    {
        problems.push(format!("{at}: `min_items` {lo} is above `max_items` {hi}"));
    }
    if let Some(values) = shape.enum_values {
        if values.is_empty() {
            problems.push(format!("{at}: `enum` is empty"));
        }
        for v in values {
            let fits = match ty {
                FieldType::String => v.is_string(),
                FieldType::Integer => v.is_i64() || v.is_u64(),
                FieldType::Number => v.is_number(),
                FieldType::Boolean => v.is_boolean(),
                FieldType::Array | FieldType::Object => false,
            };
            if !fits {
                problems.push(format!("{at}: `enum` value {v} is not of type {}", ty.as_str()));
            }
        }
    }
    match ty {
        FieldType::Array => match shape.items {
            None => problems.push(format!(
                "{at}: an array needs `items` (e.g. `items = {{ type = \"string\" }}`); models need exact types"
            )),
            Some(items) => check_shape(&items.shape(), &format!("{at} items"), problems),
        },
        _ if shape.items.is_some() => problems.push(format!("{at}: `items` applies to arrays only")),
        _ => {}
    }
    match ty {
        FieldType::Object if shape.fields.is_empty() => problems.push(format!(
            "{at}: an object needs `fields` (its keys and their types); models need exact schemas"
        )),
        FieldType::Object => {
            let mut names = HashSet::new();
            for f in shape.fields {
                if !names.insert(f.name.as_str()) {
                    problems.push(format!("{at}: field `{}` is declared twice", f.name));
                }
                check_field(f, &format!("{at}.{}", f.name), problems);
            }
        }
        _ if !shape.fields.is_empty() => problems.push(format!("{at}: `fields` applies to objects only")),
        _ => {}
    }
}

fn route_schema(route: &Route) -> Value {
    let vars = path_variables(&route.path);
    let mut properties = Map::new();
    properties.insert(OP_FIELD.to_string(), json!({ "const": route.op, "description": route.summary }));
    for var in &vars {
        if !route.fields.iter().any(|f| f.name == *var) {
            properties.insert(
                var.clone(),
                json!({ "type": "string", "minLength": 1, "description": format!("Path parameter `{var}`.") }),
            );
        }
    }
    for field in &route.fields {
        properties.insert(field.name.clone(), shape_schema(&field.shape()));
    }
    let declared: Vec<String> = route.fields.iter().filter(|f| f.required).map(|f| f.name.clone()).collect();
    let mut head = Vec::with_capacity(1 + vars.len());
    head.push(OP_FIELD.to_string());
    head.extend(vars);
    let required = merge_required(&head, &declared);
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// A number as JSON: whole numbers without a fraction (`1`, not `1.0`).
pub(crate) fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

fn shape_schema(shape: &Shape<'_>) -> Value {
    let mut s = Map::new();
    s.insert("type".into(), shape.ty.as_str().into());
    if let Some(d) = shape.description {
        s.insert("description".into(), d.into());
    }
    if let Some(f) = shape.format {
        s.insert("format".into(), f.into());
    }
    match (shape.pattern, shape.format) {
        (Some(p), _) => {
            s.insert("pattern".into(), p.into());
        }
        (None, Some("date")) => {
            s.insert("pattern".into(), DATE_PATTERN.into());
        }
        _ => {}
    }
    if let Some(values) = shape.enum_values {
        s.insert("enum".into(), Value::Array(values.to_vec()));
    }
    if let Some(n) = shape.minimum {
        s.insert("minimum".into(), number(n));
    }
    if let Some(n) = shape.maximum {
        s.insert("maximum".into(), number(n));
    }
    if let Some(n) = shape.min_length {
        s.insert("minLength".into(), n.into());
    }
    if let Some(n) = shape.max_length {
        s.insert("maxLength".into(), n.into());
    }
    if let Some(n) = shape.min_items {
        s.insert("minItems".into(), n.into());
    }
    if let Some(n) = shape.max_items {
        s.insert("maxItems".into(), n.into());
    }
    if let Some(items) = shape.items {
        s.insert("items".into(), shape_schema(&items.shape()));
    }
    if shape.ty == FieldType::Object {
        let props: Map<String, Value> =
            shape.fields.iter().map(|f| (f.name.clone(), shape_schema(&f.shape()))).collect();
        let required: Vec<&str> =
            shape.fields.iter().filter(|f| f.required).map(|f| f.name.as_str()).collect();
        s.insert("properties".into(), Value::Object(props));
        s.insert("required".into(), json!(required));
        s.insert("additionalProperties".into(), false.into());
    }
    Value::Object(s)
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
