//! The parameters of an operation: their JSON types, formats and limits.

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

    pub(crate) fn is_numeric(self) -> bool {
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

    pub(crate) fn shape(&self) -> Shape<'_> {
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

    pub(crate) fn shape(&self) -> Shape<'_> {
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
pub(crate) struct Shape<'a> {
    pub(crate) ty: FieldType,
    pub(crate) format: Option<&'a str>,
    pub(crate) enum_values: Option<&'a [Value]>,
    pub(crate) description: Option<&'a str>,
    pub(crate) minimum: Option<f64>,
    pub(crate) maximum: Option<f64>,
    pub(crate) items: Option<&'a Items>,
    pub(crate) pattern: Option<&'a str>,
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    pub(crate) min_items: Option<u64>,
    pub(crate) max_items: Option<u64>,
    pub(crate) fields: &'a [Field],
}
