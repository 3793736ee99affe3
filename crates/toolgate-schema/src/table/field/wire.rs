//! How a [`Field`] is read and written: its own `name` and `required` side by
//! side with its shape's members, as one flat table.
//!
//! serde's `flatten` would say this in one attribute, but it cannot be
//! combined with `deny_unknown_fields`, so a misspelt key would be dropped
//! without a word. Instead the field's map is read here: `name` and
//! `required` are taken out, every other key goes to the code derived for
//! [`Items`], and a key neither knows is refused with the whole list.

use std::fmt;
use std::sync::LazyLock;

use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Field, Items, Location};

/// Every key a field may have: its own (`name`, `required`, `in`, `wire_name`), then its shape's (as the derive
/// for [`Items`] declares them, so the list is not written twice).
static FIELD_KEYS: LazyLock<&'static [&'static str]> = LazyLock::new(|| {
    let mut keys = vec!["name", "required", "in", "wire_name"];
    keys.extend(struct_keys::<Items>());
    Box::leak(keys.into_boxed_slice())
});

/// The member names a derived `Deserialize` hands to `deserialize_struct`,
/// noted by a deserializer that stops right there.
fn struct_keys<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    struct Note<'a>(&'a mut &'static [&'static str]);
    impl<'de> Deserializer<'de> for Note<'_> {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("only a struct's keys are noted"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("keys noted"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut keys: &'static [&'static str] = &[];
    let _ = T::deserialize(Note(&mut keys));
    keys
}

impl Serialize for Field {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Flat<'a> {
            name: &'a str,
            required: bool,
            #[serde(rename = "in", skip_serializing_if = "Option::is_none")]
            location: Option<Location>,
            #[serde(skip_serializing_if = "Option::is_none")]
            wire_name: Option<&'a str>,
            #[serde(flatten)]
            shape: &'a Items,
        }
        Flat {
            name: &self.name,
            required: self.required,
            location: self.location,
            wire_name: self.wire_name.as_deref(),
            shape: &self.shape,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(FieldVisitor)
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = Field;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct Field")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Field, A::Error> {
        let mut own = OwnKeys { map, name: None, required: None, location: None, wire_name: None };
        let shape = Items::deserialize(de::value::MapAccessDeserializer::new(&mut own))?;
        let name = own.name.ok_or_else(|| de::Error::missing_field("name"))?;
        Ok(Field {
            name,
            required: own.required.unwrap_or(false),
            location: own.location,
            wire_name: own.wire_name,
            shape,
        })
    }
}

/// A field's map as [`Items`] sees it: `name` and `required` are read into
/// here on the way past.
struct OwnKeys<A> {
    map: A,
    name: Option<String>,
    required: Option<bool>,
    location: Option<Location>,
    wire_name: Option<String>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for OwnKeys<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        let mut seed = Some(seed);
        loop {
            match self.map.next_key_seed(Route(&mut seed))? {
                None => return Ok(None),
                Some(Key::Shape(key)) => return Ok(Some(key)),
                Some(Key::Name) if self.name.is_some() => return Err(de::Error::duplicate_field("name")),
                Some(Key::Name) => self.name = Some(self.map.next_value()?),
                Some(Key::Required) if self.required.is_some() => {
                    return Err(de::Error::duplicate_field("required"));
                }
                Some(Key::Required) => self.required = Some(self.map.next_value()?),
                Some(Key::In) if self.location.is_some() => return Err(de::Error::duplicate_field("in")),
                Some(Key::In) => self.location = Some(self.map.next_value()?),
                Some(Key::WireName) if self.wire_name.is_some() => {
                    return Err(de::Error::duplicate_field("wire_name"));
                }
                Some(Key::WireName) => self.wire_name = Some(self.map.next_value()?),
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// A key of a field's map: one of its own, or one of its shape's.
enum Key<T> {
    Name,
    Required,
    In,
    WireName,
    Shape(T),
}

/// Reads one key and sends it where it belongs. It runs inside the format's
/// own key reading, so a refusal carries the format's position (TOML's line).
struct Route<'s, K>(&'s mut Option<K>);

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for Route<'_, K> {
    type Value = Key<K::Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de, K: DeserializeSeed<'de>> Visitor<'de> for Route<'_, K> {
    type Value = Key<K::Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        match key {
            "name" => Ok(Key::Name),
            "required" => Ok(Key::Required),
            "in" => Ok(Key::In),
            "wire_name" => Ok(Key::WireName),
            _ if !FIELD_KEYS.contains(&key) => Err(E::unknown_field(key, *FIELD_KEYS)),
            _ => {
                let seed = self.0.take().ok_or_else(|| E::custom("a field key was routed twice"))?;
                seed.deserialize(de::value::StrDeserializer::<E>::new(key)).map(Key::Shape)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FieldType;

    #[test]
    fn the_key_list_is_the_fields_own_and_its_shapes() {
        assert_eq!(&FIELD_KEYS[..5], ["name", "required", "in", "wire_name", "type"]);
        assert!(FIELD_KEYS.contains(&"max_items") && FIELD_KEYS.contains(&"enum"), "{:?}", *FIELD_KEYS);
    }

    #[test]
    fn a_field_reads_its_keys_in_any_order_and_refuses_unknown_ones() {
        let field: Field = toml::from_str(
            "type = \"array\"\nrequired = true\nitems = { type = \"integer\", minimum = 1 }\nname = \"ids\"",
        )
        .unwrap();
        assert_eq!((field.name.as_str(), field.required, field.ty), ("ids", true, FieldType::Array));
        assert_eq!(field.items.as_ref().and_then(|i| i.minimum), Some(1.0));
        let err = toml::from_str::<Field>("name = \"a\"\ntype = \"string\"\nrequried = true").unwrap_err();
        let err = err.to_string();
        assert!(
            err.contains(
                "unknown field `requried`, expected one of `name`, `required`, `in`, `wire_name`, `type`"
            ),
            "{err}"
        );
        assert!(err.contains("line 3"), "the refusal points at the key: {err}");
        let err = toml::from_str::<Field>("type = \"string\"").unwrap_err().to_string();
        assert!(err.contains("missing field `name`"), "{err}");
        let err = toml::from_str::<Field>("name = \"a\"").unwrap_err().to_string();
        assert!(err.contains("missing field `type`"), "{err}");
        let err =
            serde_json::from_str::<Field>(r#"{"name": "a", "name": "b", "type": "string"}"#).unwrap_err();
        assert!(err.to_string().contains("duplicate field `name`"), "{err}");
        let err = serde_json::from_str::<Field>(r#"{"name": "a", "type": "string", "required": "yes"}"#)
            .unwrap_err();
        assert!(err.to_string().contains("expected a boolean"), "{err}");
    }
}
