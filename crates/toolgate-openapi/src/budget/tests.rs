use toolgate_schema::{Field, FieldType, Method, Route, RouteTable};

use super::*;

fn route(op: &str, method: Method, path: &str, words: usize) -> Route {
    let mut fields = vec![Field::new("name", FieldType::String).describe("A name. ".repeat(words))];
    if !method.is_read() {
        fields.push(Field::new("note", FieldType::String).describe("What it is for. ".repeat(words)));
    }
    let mut route = Route::new(op, method, path, format!("Operation {op}"));
    route.fields = fields;
    route
}

fn make(domain: &str, read: bool, routes: Vec<Route>) -> RouteTable {
    let description = format!(
        "Change {domain}. Operations: {}.",
        routes.iter().map(|r| r.op.as_str()).collect::<Vec<_>>().join(", ")
    );
    let tool = format!("{}_{domain}", if read { "query" } else { "update" });
    let mut table = RouteTable::new(tool, description, domain, routes);
    table.required_role = "member".to_owned();
    table.tags = vec!["openapi".to_owned()];
    table
}

/// A write table of `databases`: cluster operations and four sub-resources, the users one the
/// largest.
fn databases() -> RouteTable {
    let mut routes = vec![
        route("create_cluster", Method::Post, "/v2/databases", 20),
        route("delete_cluster", Method::Delete, "/v2/databases/{id}", 5),
    ];
    for (sub, size) in [("users", 60), ("pools", 30), ("firewall", 5), ("replicas", 30)] {
        routes.push(route(&format!("add_{sub}"), Method::Post, &format!("/v2/databases/{{id}}/{sub}"), size));
        routes.push(route(
            &format!("update_{sub}"),
            Method::Put,
            &format!("/v2/databases/{{id}}/{sub}/{{name}}"),
            size,
        ));
    }
    routes.push(route("reset_users_auth", Method::Post, "/v2/databases/{id}/users/{name}/reset_auth", 40));
    make("databases", false, routes)
}

#[test]
fn a_table_within_the_limit_is_left_as_it_is() {
    let table = databases();
    let (tables, report) = fit(vec![table.clone()], 1_000_000, make);
    assert_eq!(tables, [table]);
    assert!(report.is_empty());
    assert_eq!(report.to_string(), "");
}

#[test]
fn a_table_over_the_limit_is_split_by_sub_resource_every_part_within_it() {
    let table = databases();
    let whole = table_tokens(&table);
    let limit = whole / 2;
    let (tables, report) = fit(vec![table.clone()], limit, make);
    let names: Vec<&str> = tables.iter().map(|t| t.tool.as_str()).collect();
    // The largest sub-resource has its own tool; small ones stay with the cluster operations.
    assert!(names.contains(&"update_databases"), "{names:?}");
    assert!(names.contains(&"update_databases_users"), "{names:?}");
    assert!(!names.contains(&"update_databases_firewall"), "a small sub-resource stays: {names:?}");
    for t in &tables {
        t.check().unwrap_or_else(|e| panic!("{}: {e}", t.tool));
        assert!(table_tokens(t) <= limit, "{} is {} tokens, limit {limit}", t.tool, table_tokens(t));
        assert_eq!(t.domain, "databases");
        assert!(toolgate_core::names::is_tool_name(&t.tool), "{}", t.tool);
    }
    // Every operation is in exactly one part, each part in the document's order.
    let mut ops: Vec<&str> = tables.iter().flat_map(|t| t.ops()).collect();
    ops.sort_unstable();
    let mut all: Vec<&str> = table.ops().collect();
    all.sort_unstable();
    assert_eq!(ops, all);
    let users = tables.iter().find(|t| t.tool == "update_databases_users").unwrap();
    assert_eq!(users.ops().collect::<Vec<_>>(), ["add_users", "update_users", "reset_users_auth"]);
    // Nothing was clipped: splitting was enough.
    assert_eq!(report.changes.len(), 1);
    let change = &report.changes[0];
    assert_eq!((change.tool.as_str(), change.tokens), ("update_databases", whole));
    assert!(change.into.iter().all(|p| p.clipped == 0), "{report:?}");
    assert_eq!(report.over().count(), 0);
    let text = report.to_string();
    assert!(
        text.starts_with(&format!(
            "  split update_databases ({whole} tokens, over the {limit}-token limit) into "
        )),
        "{text}"
    );
    // The same document gives the same tools.
    assert_eq!(fit(vec![databases()], limit, make).0, tables);
}

#[test]
fn a_part_still_too_large_has_its_long_texts_clipped_and_one_huge_operation_is_reported() {
    let huge = make("files", true, vec![route("get_file", Method::Get, "/files/{id}", 400)]);
    let before = table_tokens(&huge);
    let limit = before / 3;
    let (tables, report) = fit(vec![huge], limit, make);
    assert_eq!(tables.len(), 1);
    let description = tables[0].routes[0].fields[0].description.clone().unwrap();
    assert!(description.ends_with(trim::NOTE), "{description}");
    assert!(description.starts_with("A name. A name."), "{description}");
    assert!(table_tokens(&tables[0]) <= limit);
    assert_eq!(report.changes[0].into[0].clipped, 1);
    assert!(report.to_string().contains("trimmed query_files"), "{report}");

    // Too large even when clipped as far as it goes: kept, and said.
    let (tables, report) =
        fit(vec![make("files", true, vec![route("get_file", Method::Get, "/files/{id}", 400)])], 10, make);
    assert_eq!(tables.len(), 1);
    assert_eq!(report.over().count(), 1);
    assert!(report.to_string().contains("still over the 10-token limit: query_files"), "{report}");
}

#[test]
fn operations_sharing_their_path_are_cut_into_numbered_parts() {
    let routes: Vec<Route> =
        (0..6).map(|i| route(&format!("search_{i}"), Method::Get, "/search", 30)).collect();
    let table = make("search", true, routes);
    let limit = table_tokens(&table) / 3;
    let (tables, _) = fit(vec![table], limit, make);
    let names: Vec<&str> = tables.iter().map(|t| t.tool.as_str()).collect();
    assert!(names.len() >= 3, "{names:?}");
    assert_eq!(&names[..3], ["query_search", "query_search_2", "query_search_3"]);
    assert!(tables.iter().all(|t| table_tokens(t) <= limit));
}

#[test]
fn a_part_never_takes_another_tables_name() {
    let table = databases();
    let taken = make("databases_users", false, vec![route("other", Method::Post, "/other", 1)]);
    let limit = table_tokens(&table) / 2;
    let (tables, _) = fit(vec![table, taken], limit, make);
    let mut names: Vec<&str> = tables.iter().map(|t| t.tool.as_str()).collect();
    assert!(names.contains(&"update_databases_users_2"), "{names:?}");
    names.sort_unstable();
    let n = names.len();
    names.dedup();
    assert_eq!(names.len(), n, "names are unique");
}

#[test]
fn names_stay_within_64_characters() {
    let long = "a".repeat(30);
    let name = split::join(&format!("update_{long}_{long}"), "users");
    assert!(name.len() <= 64 && name.ends_with("_users"), "{name}");
    assert!(toolgate_core::names::is_tool_name(&name), "{name}");
}

/// An object nesting `levels` deep: at each level a `kind` string with a long enum (which no
/// clipping of texts shortens) and two children one level less deep.
fn nested(levels: usize) -> toolgate_schema::Items {
    let mut shape = toolgate_schema::Items::new(FieldType::Object);
    let mut kind = Field::new("kind", FieldType::String).describe("What it is.");
    kind.shape.enum_values = Some((0..12).map(|i| format!("kind_number_{i}").into()).collect());
    shape.fields.push(kind);
    if levels > 1 {
        for child in ["left", "right"] {
            let mut field = Field::new(child, FieldType::Object);
            field.shape = nested(levels - 1);
            shape.fields.push(field);
        }
    }
    shape
}

/// Where the first cut shape is under `items`: the member names leading to it.
fn first_cut(items: &toolgate_schema::Items, at: &mut Vec<String>) -> bool {
    if items.description.as_deref().is_some_and(|d| d.contains("(Cut: the schemas of its members")) {
        return true;
    }
    for field in &items.fields {
        at.push(field.name.clone());
        if first_cut(&field.shape, at) {
            return true;
        }
        at.pop();
    }
    false
}

#[test]
fn an_operation_over_the_limit_with_its_texts_clipped_has_its_deepest_schemas_cut_until_it_fits() {
    let mut create = route("create_tree", Method::Post, "/trees", 2);
    let mut tree = Field::new("tree", FieldType::Object).required();
    tree.shape = nested(6);
    create.fields.push(tree);
    let table = make("trees", false, vec![create]);
    let before = table_tokens(&table);
    let limit = before / 3;
    let (tables, report) = fit(vec![table], limit, make);
    assert_eq!(tables.len(), 1, "one operation stays one tool");
    let cut = &tables[0];
    cut.check().unwrap();
    let tokens = table_tokens(cut);
    assert!(tokens <= limit, "{tokens} tokens, limit {limit}");
    assert_eq!(report.over().count(), 0, "{report}");
    let part = &report.changes[0].into[0];
    assert!(part.cut > 0, "{report:?}");
    assert!(report.to_string().contains("nested schema(s) cut to free-form values"), "{report}");
    // The deepest levels went first: the body's own members are still there.
    let shape = &cut.routes[0].fields.iter().find(|f| f.name == "tree").unwrap().shape;
    let members: Vec<&str> = shape.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(members, ["kind", "left", "right"]);
    let mut at = Vec::new();
    assert!(first_cut(shape, &mut at), "a cut shape under `tree`");
    assert!(at.len() >= 2, "cut at {at:?}");
    let mut spot = shape;
    for name in &at {
        spot = &spot.fields.iter().find(|f| f.name == *name).unwrap().shape;
    }
    // A free-form object whose description says what was cut and why.
    assert_eq!(spot.ty, FieldType::Object);
    assert!(spot.fields.is_empty());
    assert_eq!(spot.values.as_deref(), Some(&toolgate_schema::Items::new(FieldType::Any)));
    let note = spot.description.as_deref().unwrap();
    assert!(note.contains("`kind`, `left`, `right`"), "{note}");
    assert!(note.contains(&format!("within the {limit}-token limit")), "{note}");
    assert!(note.contains("any JSON object here as given"), "{note}");
    // It takes any members, and what is given there is the body as sent.
    let validator = toolgate_schema::Validator::new(&cut.schema()).unwrap();
    let mut value = serde_json::json!({"anything": [1, {"deep": true}], "kind": "not in the enum"});
    for name in at.iter().rev() {
        value = serde_json::json!({ name.as_str(): value });
    }
    let call = serde_json::json!({"op": "create_tree", "name": "n", "tree": value});
    validator.validate(&call).unwrap_or_else(|e| panic!("{call}: {e:?}"));
    // The same document gives the same tool.
    let mut again = route("create_tree", Method::Post, "/trees", 2);
    let mut tree = Field::new("tree", FieldType::Object).required();
    tree.shape = nested(6);
    again.fields.push(tree);
    assert_eq!(fit(vec![make("trees", false, vec![again])], limit, make).0, tables);
}
