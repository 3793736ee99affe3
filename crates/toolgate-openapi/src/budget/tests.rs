use toolgate_schema::{Field, FieldType, Method, Route, RouteTable};

use super::*;

fn route(op: &str, method: Method, path: &str, words: usize) -> Route {
    let mut fields = vec![Field::new("name", FieldType::String).describe("A name. ".repeat(words))];
    if !method.is_read() {
        fields.push(Field::new("note", FieldType::String).describe("What it is for. ".repeat(words)));
    }
    Route {
        op: op.to_owned(),
        method,
        path: path.to_owned(),
        summary: format!("Operation {op}"),
        fields,
        body: Default::default(),
        body_encoding: Default::default(),
        accept: Vec::new(),
        server: None,
        security: None,
    }
}

fn make(domain: &str, read: bool, routes: Vec<Route>) -> RouteTable {
    RouteTable {
        tool: format!("{}_{domain}", if read { "query" } else { "update" }),
        description: format!(
            "Change {domain}. Operations: {}.",
            routes.iter().map(|r| r.op.as_str()).collect::<Vec<_>>().join(", ")
        ),
        domain: domain.to_owned(),
        required_role: "member".to_owned(),
        tags: vec!["openapi".to_owned()],
        result_template: None,
        routes,
    }
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
