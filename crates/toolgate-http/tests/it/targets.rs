//! Per-route servers and security schemes: a route with its own `server` is sent to the base
//! URL the executor maps that server to (a second real backend), never to an undeclared one;
//! a route naming its `security` schemes sends the first one the executor holds a credential
//! for, `security = []` sends none, and the others send the executor's own auth.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use serde_json::json;
use toolgate_core::{Caller, Secret, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_http::{Auth, Error, HttpExecutor, HttpOptions};
use toolgate_schema::RouteTable;

const TABLE: &str = r#"
tool = "query_files"
description = "Files, with uploads on their own host."
domain = "files"

[[routes]]
op = "get_file"
method = "GET"
path = "/files/{id}"
summary = "Read a file"

[[routes]]
op = "get_upload"
method = "GET"
path = "/files/{id}/content"
summary = "Read an uploaded file"
server = "https://upload.example.com/api/2.0"

[[routes]]
op = "get_inventory"
method = "GET"
path = "/inventory"
summary = "Counts by status, with an API key"
security = ["api_key", "oauth"]

[[routes]]
op = "get_status"
method = "GET"
path = "/status"
summary = "Public, no credential"
security = []
"#;

/// (host it reached, path and query, the credential headers sent)
type Seen = (String, String, Option<String>, Option<String>);

async fn backend(name: &'static str, log: Arc<Mutex<Vec<Seen>>>) -> String {
    let app = Router::new()
        .fallback(move |State(log): State<Arc<Mutex<Vec<Seen>>>>, uri: Uri, headers: HeaderMap| async move {
            let header = |n: &str| headers.get(n).map(|v| v.to_str().unwrap().to_owned());
            let target = uri.path_and_query().map(ToString::to_string).unwrap_or_default();
            log.lock().unwrap().push((name.to_owned(), target, header("authorization"), header("api_key")));
            "{}"
        })
        .with_state(log);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

fn options(upload: &str) -> HttpOptions {
    HttpOptions::default()
        .auth(Auth::Static { header: "Authorization".into(), value: Secret::new("Bearer main-token") })
        .scheme("api_key", Auth::Static { header: "api_key".into(), value: Secret::new("key-123") })
        .server("https://upload.example.com/api/2.0", format!("{upload}/upload-prefix"))
}

#[tokio::test]
async fn each_route_goes_to_its_own_server_with_its_own_scheme() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let main = backend("main", log.clone()).await;
    let upload = backend("upload", log.clone()).await;
    let executor = Arc::new(HttpExecutor::new(&main, options(&upload)).unwrap());
    let table = RouteTable::from_toml_str(TABLE).unwrap();
    let gateway = Gateway::builder().tools(executor.tools([table]).unwrap()).build().unwrap();
    let ctx = ToolContext::new(Caller::new("alice", "member"));
    for params in [
        json!({"op": "get_file", "id": "f1"}),
        json!({"op": "get_upload", "id": "f1"}),
        json!({"op": "get_inventory"}),
        json!({"op": "get_status"}),
    ] {
        let envelope = gateway.execute(&ctx, "query_files", params, &CallOptions::default().retries(0)).await;
        assert!(envelope.success, "{}", serde_json::to_string(&envelope).unwrap());
    }
    let seen = log.lock().unwrap().clone();
    let bearer = Some("Bearer main-token".to_owned());
    assert_eq!(
        seen,
        vec![
            ("main".into(), "/files/f1".into(), bearer.clone(), None),
            // The mapped base URL's own path prefix, then the route's path.
            ("upload".into(), "/upload-prefix/files/f1/content".into(), bearer, None),
            // The first scheme with a credential: the API key, and only it.
            ("main".into(), "/inventory".into(), None, Some("key-123".into())),
            // No credential at all.
            ("main".into(), "/status".into(), None, None),
        ]
    );
}

#[tokio::test]
async fn a_route_whose_server_is_not_declared_is_refused_before_any_request() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let main = backend("main", log.clone()).await;
    let executor = Arc::new(HttpExecutor::new(&main, HttpOptions::default().auth(Auth::None)).unwrap());
    let table = RouteTable::from_toml_str(TABLE).unwrap();
    let error = executor.tool(table).expect_err("an undeclared server is refused");
    assert!(matches!(error, Error::UndeclaredServer { ref op, .. } if op == "get_upload"), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("https://upload.example.com/api/2.0") && message.contains("`servers`"),
        "{message}"
    );
    assert!(log.lock().unwrap().is_empty());
    // A mapped base URL is checked like the main one: no credentials in it.
    let bad =
        HttpOptions::default().server("https://upload.example.com/api/2.0", "https://user:pw@evil.example");
    let error = HttpExecutor::new(&main, bad).expect_err("credentials in a server URL are refused");
    assert!(!error.to_string().contains("pw@"), "{error}");
}

#[test]
fn a_route_server_or_scheme_that_is_not_plain_is_refused_by_the_table_check() {
    for (line, expected) in [
        ("server = \"https://h.example/a?x=1\"", "not a plain absolute URL"),
        ("server = \"ftp://h.example\"", "not a plain absolute URL"),
        ("server = \"https://u@h.example\"", "not a plain absolute URL"),
        ("security = [\"a b\"]", "not a scheme name"),
    ] {
        let table = TABLE.replace("security = []", line);
        let error = RouteTable::from_toml_str(&table).err().unwrap_or_else(|| panic!("{line} accepted"));
        assert!(error.to_string().contains(expected), "{line}: {error}");
    }
}

#[tokio::test]
async fn a_query_array_is_joined_as_its_collection_format_says() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let main = backend("main", log.clone()).await;
    let table = r#"
tool = "query_tasks"
description = "Tasks, with comma-separated field lists."
domain = "tasks"

[[routes]]
op = "list_tasks"
method = "GET"
path = "/tasks"
summary = "List tasks"
fields = [
  { name = "opt_fields", type = "array", items = { type = "string" }, collection_format = "csv" },
  { name = "words", type = "array", items = { type = "string" }, collection_format = "ssv" },
  { name = "ids", type = "array", items = { type = "integer" }, collection_format = "pipes" },
  { name = "tags", type = "array", items = { type = "string" } },
]
"#;
    let executor = Arc::new(HttpExecutor::new(&main, HttpOptions::default().auth(Auth::None)).unwrap());
    let table = RouteTable::from_toml_str(table).unwrap();
    let gateway = Gateway::builder().tools(executor.tools([table]).unwrap()).build().unwrap();
    let ctx = ToolContext::new(Caller::new("alice", "member"));
    let params = json!({"op": "list_tasks", "opt_fields": ["name", "notes,x"], "words": ["a", "b"], "ids": [1, 2], "tags": ["x", "y"]});
    let envelope = gateway.execute(&ctx, "query_tasks", params, &CallOptions::default().retries(0)).await;
    assert!(envelope.success, "{}", serde_json::to_string(&envelope).unwrap());
    let seen = log.lock().unwrap().clone();
    // The separators as OpenAPI writes them; a comma inside an item stays encoded.
    assert_eq!(seen[0].1, "/tasks?tags=x&tags=y&opt_fields=name,notes%2Cx&words=a%20b&ids=1%7C2");
    // Only a query array of scalars may be joined.
    let bad = r#"
tool = "update_tasks"
description = "d"
domain = "tasks"

[[routes]]
op = "create_task"
method = "POST"
path = "/tasks"
summary = "Create"
fields = [{ name = "ids", type = "array", items = { type = "string" }, collection_format = "csv" }]
"#;
    let error = RouteTable::from_toml_str(bad).expect_err("a body array cannot be joined");
    assert!(error.to_string().contains("in the query only"), "{error}");
}
