//! A backend that refuses the credential it was sent (HTTP 401 and 403, a real axum server on
//! 127.0.0.1:0): whose problem that is depends on whose credential it was. Only the caller's
//! own (`bearer_from_caller`) is the user's to fix by signing in again; a static credential, or
//! none, is the operator's configuration.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use serde_json::json;
use toolgate_core::{Caller, ErrorCode, Secret, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_http::{Auth, HttpExecutor, HttpOptions};
use toolgate_schema::RouteTable;

const TABLE: &str = r#"
tool = "query_refusals"
description = "Test reads of a backend that refuses its credential."
domain = "test"

[[routes]]
op = "refuse"
method = "GET"
path = "/refuse/{status}"
summary = "Answers `status`"
"#;

async fn backend() -> (String, Arc<AtomicU32>) {
    let hits = Arc::new(AtomicU32::new(0));
    let app = Router::new()
        .route(
            "/refuse/{status}",
            get(|State(hits): State<Arc<AtomicU32>>, Path(status): Path<u16>| async move {
                hits.fetch_add(1, Ordering::SeqCst);
                (
                    StatusCode::from_u16(status).unwrap(),
                    axum::Json(json!({"error": {"message": "invalid api key"}})),
                )
            }),
        )
        .with_state(hits.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, hits)
}

fn gateway(base: &str, auth: Auth) -> Gateway {
    let options = HttpOptions::default().backend_name("the refusing API").backend_id("test").auth(auth);
    let executor = Arc::new(HttpExecutor::new(base, options).unwrap());
    let tools = executor.tools([RouteTable::from_toml_str(TABLE).unwrap()]).unwrap();
    Gateway::builder().tools(tools).build().unwrap()
}

#[tokio::test]
async fn a_refused_credential_is_the_users_to_fix_only_when_it_is_the_callers_own() {
    let (base, hits) = backend().await;
    let ctx =
        ToolContext::new(Caller::new("alice", "guest").with_credential("test", "caller-token-for-test"));
    let setups = [
        ("static", Auth::Static { header: "X-Api-Key".into(), value: Secret::new("sk_operator_key") }, false),
        ("none", Auth::None, false),
        ("bearer_from_caller", Auth::BearerFromCaller, true),
    ];
    let mut calls = 0;
    for (kind, auth, callers) in setups {
        let gw = gateway(&base, auth);
        for status in [401, 403] {
            let got = gw
                .execute(
                    &ctx,
                    "query_refusals",
                    json!({"op": "refuse", "status": status.to_string()}),
                    &CallOptions::default(),
                )
                .await;
            calls += 1;
            let case = format!("{kind} at HTTP {status}");
            let error = got.error.clone().unwrap_or_else(|| panic!("{case}: {got:?}"));
            assert_eq!(got.metadata.attempts, 1, "{case}: not retried");
            assert!(error.message.contains(&format!("HTTP {status}")), "{case}: {}", error.message);
            if callers {
                assert_eq!(error.code, ErrorCode::PermissionDenied, "{case}");
                assert!(error.message.contains("sign in again"), "{case}: {}", error.message);
            } else {
                assert_eq!(error.code, ErrorCode::ExecutionError, "{case}: {}", error.message);
                assert!(
                    error.message.contains("refused the credential toolgate is configured with")
                        && error.message.contains("operator must check this domain's credential")
                        && error.message.contains("do not ask the user to sign in"),
                    "{case}: {}",
                    error.message
                );
                assert!(!error.message.contains("caller's credentials"), "{case}: {}", error.message);
            }
        }
    }
    assert_eq!(hits.load(Ordering::SeqCst), calls, "every call reached the backend");
}
