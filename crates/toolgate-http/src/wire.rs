//! The members of object fields under the names the backend knows: a member's `wire_name`
//! ([`toolgate_schema::Field::wire_name`]; Box's `partner_item.tenant_id`, which the model sees
//! as `target_tenant_id`, a name toolgate reserves for the caller's identity) is the key its
//! object is sent with, at any depth: in objects, arrays' items, maps' values and the branches
//! of a union.

use serde_json::{Map, Value};
use toolgate_schema::{Field, Items, Route};

/// The value of field `name` of `route` as sent: its objects' members under their wire names.
pub(crate) fn sent_value(route: &Route, name: &str, value: &Value) -> Value {
    match route.fields.iter().find(|f| f.name == name) {
        Some(field) if renames(&field.shape) => to_wire(value, &field.shape),
        _ => value.clone(),
    }
}

/// Whether a member anywhere inside `shape` has a wire name (most have none: then the value
/// is sent as given, without being rebuilt).
fn renames(shape: &Items) -> bool {
    shape.fields.iter().any(|f| f.wire_name.is_some() || renames(&f.shape))
        || shape.items.as_deref().is_some_and(renames)
        || shape.values.as_deref().is_some_and(renames)
        || shape.one_of.iter().chain(&shape.any_of).any(renames)
}

/// The branches of a union shape, none when it is not one.
fn branches(shape: &Items) -> impl Iterator<Item = &Items> {
    shape.one_of.iter().chain(&shape.any_of)
}

fn to_wire(value: &Value, shape: &Items) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, member) in map {
                // The member as the object declares it, else as a union branch does.
                let declared: Option<&Field> = shape
                    .fields
                    .iter()
                    .chain(branches(shape).flat_map(|b| b.fields.iter()))
                    .find(|f| f.name == *key);
                match declared {
                    Some(field) => {
                        out.insert(field.sent_name().to_owned(), to_wire(member, &field.shape));
                    }
                    None => {
                        let values = shape
                            .values
                            .as_deref()
                            .or_else(|| branches(shape).find_map(|b| b.values.as_deref()));
                        let member = values.map_or_else(|| member.clone(), |values| to_wire(member, values));
                        out.insert(key.clone(), member);
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            match shape.items.as_deref().or_else(|| branches(shape).find_map(|b| b.items.as_deref())) {
                Some(inner) => Value::Array(items.iter().map(|v| to_wire(v, inner)).collect()),
                None => value.clone(),
            }
        }
        _ => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolgate_schema::RouteTable;

    use super::sent_value;

    #[test]
    fn members_are_sent_under_their_wire_names_at_any_depth() {
        let table = RouteTable::from_toml_str(
            r#"
tool = "update_mappings"
description = "d"
domain = "box"
[[routes]]
op = "post_mapping"
method = "POST"
path = "/mappings"
summary = "s"
fields = [
  { name = "partner_item", type = "object", fields = [
    { name = "id", type = "string" },
    { name = "target_tenant_id", type = "string", wire_name = "tenant_id" },
  ] },
  { name = "items", type = "array", items = { type = "object", fields = [
    { name = "pg_role", type = "string", wire_name = "pg.role" },
    { name = "inner", type = "object", values = { type = "object", fields = [{ name = "a_b", type = "string", wire_name = "a-b" }] } },
  ] } },
  { name = "plain", type = "object", fields = [{ name = "x", type = "string" }] },
]
"#,
        )
        .unwrap();
        let route = &table.routes[0];
        let item = json!({"id": "19:abc", "target_tenant_id": "t-1"});
        assert_eq!(sent_value(route, "partner_item", &item), json!({"id": "19:abc", "tenant_id": "t-1"}));
        let items = json!([{"pg_role": "r", "inner": {"k": {"a_b": "v"}}}, {"pg_role": null}]);
        assert_eq!(
            sent_value(route, "items", &items),
            json!([{"pg.role": "r", "inner": {"k": {"a-b": "v"}}}, {"pg.role": null}])
        );
        // Nothing renamed inside: as given.
        assert_eq!(sent_value(route, "plain", &json!({"x": "1"})), json!({"x": "1"}));
        assert_eq!(
            sent_value(route, "undeclared", &json!({"target_tenant_id": 1})),
            json!({"target_tenant_id": 1})
        );
    }
}
