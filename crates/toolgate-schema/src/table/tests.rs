//! Unit tests of route tables: patterns, numbers, field locations, wire names, form bodies.

use super::*;

/// A table of the tool `tool` holding `routes` (the TOML `[[routes]]` text), parsed and checked.
pub(super) fn table_of(tool: &str, routes: &str) -> Result<RouteTable> {
    RouteTable::from_toml_str(&format!("tool = \"{tool}\"\ndescription = \"d\"\ndomain = \"x\"\n{routes}"))
}

mod patterns {
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

mod location_tests {
    use super::*;

    fn table(routes: &str) -> Result<RouteTable> {
        super::table_of("update_x", routes)
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
method = "GET"
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
            "`body` applies to POST, PUT, PATCH and DELETE only; a GET sends no body",
        ] {
            assert!(err.contains(expected), "{expected}: {err}");
        }
        let err = table("[[routes]]\nop = \"a\"\nmethod = \"POST\"\npath = \"/a\"\nsummary = \"s\"\nfields = [{ name = \"q\", type = \"string\", in = \"cookie\" }]")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown variant `cookie`"), "{err}");
    }
}

mod wire_tests {
    use super::*;

    fn table(routes: &str) -> Result<RouteTable> {
        super::table_of("query_x", routes)
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
  { name = "o", type = "object", fields = [{ name = "k", type = "string", wire_name = "K" }, { name = "K", type = "string" }] },
  { name = "p", type = "object", fields = [{ name = "n", type = "string", wire_name = "" }] },
  { name = "hs", type = "array", items = { type = "string" }, in = "header", wire_name = "X-Tags" },
  { name = "ho", type = "object", in = "header", wire_name = "X-Obj" },
  { name = "hn", type = "array", items = { type = "object" }, in = "header", wire_name = "X-Nested" },
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
            "field `o`.K: another member is sent as `K` too",
            "field `p`.n: `wire_name` is empty",
            "has a `{variable}`",
            "which the path's fixed query already sets",
            "header field `ho` must be a string, number or boolean, or an array of them",
            "header field `hn` must be a string",
        ] {
            assert!(err.contains(expected), "{expected}: {err}");
        }
        // An array of scalars is a header (sent comma-separated).
        assert!(!err.contains("header field `hs`"), "{err}");
    }
}

mod form_tests {
    use super::*;

    fn table(routes: &str) -> Result<RouteTable> {
        super::table_of("send_messages", routes)
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

    #[test]
    fn unions_maps_and_free_form_values_are_declared_and_checked() {
        let table = RouteTable::from_toml_str(
            r#"
tool = "update_things"
description = "d"
domain = "d"
[[routes]]
op = "put"
method = "PUT"
path = "/things/{ref}"
summary = "s"
[[routes.fields]]
name = "ref"
type = "any"
one_of = [{ type = "integer" }, { type = "string" }]
[[routes.fields]]
name = "labels"
type = "object"
values = { type = "string" }
[[routes.fields]]
name = "anything"
type = "object"
nullable = true
values = { type = "any" }
[[routes.fields]]
name = "size"
type = "any"
nullable = true
any_of = [{ type = "string", enum = ["s"] }, { type = "integer", minimum = 1 }]
"#,
        )
        .unwrap();
        let schema = table.schema();
        let props = &schema["oneOf"][0]["properties"];
        assert_eq!(props["ref"], json!({"oneOf": [{"type": "integer"}, {"type": "string"}]}));
        assert_eq!(props["labels"]["additionalProperties"], json!({"type": "string"}));
        assert_eq!(props["anything"]["type"], json!(["object", "null"]));
        assert_eq!(props["anything"]["additionalProperties"], json!(true));
        assert_eq!(props["size"]["anyOf"][2], json!({"type": "null"}), "a nullable union admits null");
        let v = crate::Validator::new(&table.spec().unwrap().input_schema).unwrap();
        assert!(v.is_valid(
            &json!({"op": "put", "ref": 1, "labels": {"a": "b"}, "anything": {"x": [1]}, "size": null})
        ));
        assert!(!v.is_valid(&json!({"op": "put", "ref": true})));
        assert!(!v.is_valid(&json!({"op": "put", "ref": 1, "labels": {"a": 1}})));

        let err = RouteTable::from_toml_str(
            r#"
tool = "update_things"
description = "d"
domain = "d"
[[routes]]
op = "put"
method = "PUT"
path = "/things/{ref}"
summary = "s"
[[routes.fields]]
name = "ref"
type = "any"
[[routes.fields]]
name = "bare"
type = "object"
[[routes.fields]]
name = "single"
type = "any"
one_of = [{ type = "string" }]
[[routes.fields]]
name = "list"
type = "string"
values = { type = "string" }
"#,
        )
        .unwrap_err()
        .to_string();
        for expected in [
            "path variable `ref` is declared as any; a path variable must be a string, number or boolean",
            "field `bare`: an object needs `fields` (its keys and their types) or `values`",
            "field `single`: `one_of` has one branch",
            "field `list`: `values` applies to objects only",
        ] {
            assert!(err.contains(expected), "{expected}: {err}");
        }
    }
}
