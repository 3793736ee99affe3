//! Any text as a path variable stays inside its one segment and decodes back to itself; any JSON
//! as parameters gets a request or a structured refusal, never a panic.

use percent_encoding::percent_decode_str;
use proptest::prelude::*;
use serde_json::{Value, json};
use toolgate_http::{HttpExecutor, HttpOptions};
use toolgate_schema::{Method, Route};
use toolgate_test_support::json::Shape;

fn route(op: &str) -> Route {
    let (method, path) = match op {
        "get" => (Method::Get, "/a/{x}/b"),
        _ => (Method::Put, "/a/{x}/b/{y}"),
    };
    Route::new(op, method, path, "test")
}

/// One executor for every case: building a client loads the system's TLS roots, which is
/// done once per backend in a deployment and would dominate a thousand cases here.
fn executor() -> &'static HttpExecutor {
    static EXECUTOR: std::sync::LazyLock<HttpExecutor> = std::sync::LazyLock::new(|| {
        HttpExecutor::new("http://127.0.0.1:9/prefix", HttpOptions::default()).unwrap()
    });
    &EXECUTOR
}

fn arb_json() -> impl Strategy<Value = Value> {
    let keys = "[a-z_]{0,6}|x|y|op";
    toolgate_test_support::json::value(Shape {
        text: ".{0,20}",
        keys,
        depth: 4,
        size: 32,
        width: 6,
        ..Shape::default()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_text_stays_in_its_segment(value in "\\PC{0,24}|[./%2eEfF\\\\?#;]{0,8}") {
        let got = executor().prepare(&route("get"), &json!({"op": "get", "x": value, "extra": value}));
        if value.is_empty() || value == "." || value == ".." {
            prop_assert!(got.is_err());
        } else {
            let prepared = got.unwrap();
            let segments: Vec<&str> = prepared.url.path_segments().unwrap().collect();
            prop_assert_eq!(segments.len(), 4, "{:?} -> {}", value, prepared.url);
            prop_assert_eq!(segments[0], "prefix");
            prop_assert_eq!(segments[1], "a");
            prop_assert_eq!(segments[3], "b");
            prop_assert_eq!(percent_decode_str(segments[2]).decode_utf8().unwrap(), value.as_str());
            // The query carries the other field, the URL nothing else.
            prop_assert!(prepared.url.fragment().is_none());
            let pairs: Vec<(String, String)> = prepared.url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
            prop_assert_eq!(pairs, vec![("extra".to_owned(), value.clone())]);
            prop_assert!(prepared.body.is_none());
        }
    }

    #[test]
    fn any_json_is_prepared_or_refused(params in arb_json()) {
        for op in ["get", "put"] {
            match executor().prepare(&route(op), &params) {
                Ok(prepared) => {
                    prop_assert!(prepared.url.as_str().starts_with("http://127.0.0.1:9/prefix/a/"));
                    prop_assert_eq!(prepared.body.is_some(), op == "put");
                    if let Some(body) = prepared.body {
                        prop_assert!(!body.contains_key("op") && !body.contains_key("x") && !body.contains_key("y"));
                    }
                }
                Err(e) => prop_assert_eq!(e.code, toolgate_core::ErrorCode::InvalidParams),
            }
        }
    }
}
