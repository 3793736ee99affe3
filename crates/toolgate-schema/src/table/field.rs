//! The parameters of an operation: their JSON types, formats and limits.

mod wire;

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// An object; `fields` says which fields it has, `values` what its other keys hold.
    Object,
    /// Any JSON value (no `type` in the schema): an OpenAPI union of several types (with
    /// `one_of`/`any_of` saying which) or a schema that names no type at all.
    Any,
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
            FieldType::Any => "any",
        }
    }

    pub(crate) fn is_numeric(self) -> bool {
        matches!(self, FieldType::Integer | FieldType::Number)
    }
}

/// Where a route's field goes in the HTTP request: TOML key `in`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Location {
    /// A `{variable}` of the path template.
    Path,
    /// The query string.
    Query,
    /// A request header named as the field.
    Header,
    /// A member of the JSON body (POST, PUT and PATCH; a DELETE's only when written `in = "body"`).
    Body,
}

impl Location {
    /// `"path"`, `"query"`, `"header"`, `"body"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Header => "header",
            Location::Body => "body",
        }
    }
}

/// One parameter of an operation: a name, whether the operation needs it,
/// where it goes in the request, and its [`Items`] (type, format and limits), which an array's element
/// type has too. In a route table the three are written side by side
/// (`name = "date"`, `required = true`, `type = "string"`, ...); the shape's
/// members are read through [`std::ops::Deref`], so `field.ty` works.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Field {
    /// Parameter name (`[A-Za-z_][A-Za-z0-9_]*`, at most 64 characters).
    pub name: String,
    /// Whether the operation needs it.
    pub required: bool,
    /// Where it goes (TOML key `in`); `None`, the default: a path variable into the path,
    /// the other fields of GET and DELETE into the query, of POST, PUT and PATCH into the
    /// JSON body (into the query where the route has `body = "none"`).
    pub location: Option<Location>,
    /// The name sent to the backend (TOML key `wire_name`), when it differs from `name`, the
    /// name the model sees: an API's `StartTime<`, `filter.name` or `$top`, or a name toolgate
    /// reserves (`user_id`) renamed for the model. A route's fields in the query, a header or
    /// the body, and the members of an object field (the key the object is sent with, at any
    /// depth); a path variable's name is never sent, so it is renamed in the path instead.
    pub wire_name: Option<String>,
    /// JSON type and constraints.
    pub shape: Items,
}

impl Field {
    /// A field of the given name and type; optional, no constraints.
    pub fn new(name: impl Into<String>, ty: FieldType) -> Self {
        Self { name: name.into(), required: false, location: None, wire_name: None, shape: Items::new(ty) }
    }

    /// Make it required.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// Send it in `location`.
    pub fn located(mut self, location: Location) -> Self {
        self.location = Some(location);
        self
    }

    /// Send it to the backend as `wire_name` (see [`Field::wire_name`]).
    pub fn wire(mut self, wire_name: impl Into<String>) -> Self {
        self.wire_name = Some(wire_name.into());
        self
    }

    /// The name sent to the backend: [`Field::wire_name`], else [`Field::name`].
    pub fn sent_name(&self) -> &str {
        self.wire_name.as_deref().unwrap_or(&self.name)
    }

    /// Set the description.
    pub fn describe(mut self, text: impl Into<String>) -> Self {
        self.shape.description = Some(text.into());
        self
    }

    /// Set the format.
    pub fn format(mut self, format: impl Into<String>) -> Self {
        self.shape.format = Some(format.into());
        self
    }
}

impl std::ops::Deref for Field {
    type Target = Items;

    fn deref(&self) -> &Items {
        &self.shape
    }
}

impl std::ops::DerefMut for Field {
    fn deref_mut(&mut self) -> &mut Items {
        &mut self.shape
    }
}

/// How an array in the query string is written (Swagger 2.0's `collectionFormat`; OpenAPI's
/// `style` and `explode` of a query parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CollectionFormat {
    /// The key once per item, `ids=a&ids=b` (OpenAPI `style: form`, `explode: true`).
    #[default]
    Multi,
    /// One key, the items joined by commas, `ids=a,b` (`style: form`, `explode: false`).
    Csv,
    /// Joined by spaces, `ids=a b` (`style: spaceDelimited`).
    Ssv,
    /// Joined by `|`, `ids=a|b` (`style: pipeDelimited`).
    Pipes,
}

impl CollectionFormat {
    /// What joins the items: `None` for [`CollectionFormat::Multi`] (the key repeats).
    pub fn separator(self) -> Option<char> {
        match self {
            CollectionFormat::Multi => None,
            CollectionFormat::Csv => Some(','),
            CollectionFormat::Ssv => Some(' '),
            CollectionFormat::Pipes => Some('|'),
        }
    }
}

/// The type and limits of a value: an array's element type, and the shape
/// of every [`Field`]. The one declaration of these members: a field's are
/// read and written through this struct (see `field/wire.rs`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Items {
    /// JSON type.
    #[serde(rename = "type")]
    pub ty: FieldType,
    /// Whether `null` is a value too (OpenAPI 3.0 `nullable: true`, 3.1 `type: [T, "null"]`):
    /// the schema admits it, a body sends it as JSON `null`, and in a query or header it means
    /// "not given". A path variable cannot be nullable.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nullable: bool,
    /// String format: `date` (YYYY-MM-DD, also enforced by a pattern),
    /// `date-time`, `time`, `email`, `uuid`, `uri`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// How a string holds binary data (JSON Schema `contentEncoding`; TOML key
    /// `content_encoding`): only `"base64"` is taken. In a multipart route
    /// ([`crate::BodyEncoding::Multipart`]) a body field with it (or an array of such) is a
    /// file: the model gives the file's bytes as base64 text, and they are decoded and sent as
    /// a file part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_encoding: Option<String>,
    /// How an array in the query is written (TOML key `collection_format`; query arrays of
    /// scalars only): see [`CollectionFormat`]. `None`: repeated keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection_format: Option<CollectionFormat>,
    /// The allowed values.
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<Value>>,
    /// For the model: meaning, unit, example.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
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
    /// Fields of an object (closed: no other keys allowed, unless `values` says what they hold).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<Field>,
    /// What an object's keys besides its `fields` hold (JSON Schema `additionalProperties`):
    /// `values = { type = "string" }` for a map of strings, `values = { type = "any" }` for a
    /// free-form object (OpenAPI `additionalProperties: true`). `None`: no other keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Box<Items>>,
    /// The value is valid under exactly one of these shapes (JSON Schema `oneOf`), besides the
    /// field's own `type` (`"any"` when the branches differ in type).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub one_of: Vec<Items>,
    /// The value is valid under at least one of these shapes (JSON Schema `anyOf`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub any_of: Vec<Items>,
}

impl Items {
    /// Elements of the given type.
    pub fn new(ty: FieldType) -> Self {
        Self { ty, ..Self::default() }
    }

    /// Whether every value is a string, number or boolean (what a path or a header can hold):
    /// a scalar type, or a union whose branches all are.
    pub fn is_scalar(&self) -> bool {
        match self.ty {
            FieldType::String | FieldType::Integer | FieldType::Number | FieldType::Boolean => true,
            FieldType::Any => {
                let branches = self.one_of.iter().chain(&self.any_of);
                !(self.one_of.is_empty() && self.any_of.is_empty()) && branches.clone().all(Items::is_scalar)
            }
            FieldType::Array | FieldType::Object => false,
        }
    }

    /// Whether this is an array of strings, numbers or booleans (what a header can hold as
    /// a comma-separated list, OpenAPI's `simple` style).
    pub fn is_scalar_list(&self) -> bool {
        self.ty == FieldType::Array && self.items.as_deref().is_some_and(Items::is_scalar)
    }
}
