//! What an operator watches besides `/metrics` calls, with the real binary:
//! spans exported over OTLP/HTTP to a collector (a real HTTP server here,
//! decoding the protobuf as a collector does), and failures of a backend
//! (the weather provider answering 500, then gone) counted in
//! `toolgate_backend_errors_total`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::routing::{any, post};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Attr;
use prost::Message;
use serde_json::json;

use crate::fleet::{day, execute, make_key, serve, wait_until};

/// An HTTP server on 127.0.0.1:0; its URL and a sender that stops it.
async fn spawn(router: axum::Router) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    (url, stop)
}

/// A span as the test reads it: its attributes as text.
fn decode_spans(bodies: &[Bytes]) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut out = Vec::new();
    for body in bodies {
        let request = ExportTraceServiceRequest::decode(body.as_ref()).expect("OTLP protobuf");
        for span in request.resource_spans.iter().flat_map(|r| &r.scope_spans).flat_map(|s| &s.spans) {
            let attributes = span
                .attributes
                .iter()
                .map(|kv| {
                    let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                        Some(Attr::StringValue(s)) => s.clone(),
                        Some(Attr::IntValue(i)) => i.to_string(),
                        Some(Attr::DoubleValue(d)) => d.to_string(),
                        other => format!("{other:?}"),
                    };
                    (kv.key.clone(), value)
                })
                .chain([("span.name".to_owned(), span.name.clone())])
                .collect();
            out.push(attributes);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_reach_a_collector_and_backend_failures_are_counted() {
    let received: Arc<Mutex<Vec<Bytes>>> = Arc::default();
    let sink = received.clone();
    let collector = axum::Router::new().route(
        "/v1/traces",
        post(move |body: Bytes| {
            let sink = sink.clone();
            async move {
                sink.lock().unwrap().push(body);
                StatusCode::OK
            }
        }),
    );
    let (collector_url, _collector) = spawn(collector).await;
    let broken = axum::Router::new().fallback(any(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "down") }));
    let (weather_url, stop_weather) = spawn(broken).await;

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolgate.toml");
    let db = format!("sqlite:{}", dir.path().join("otel.db").display());
    std::fs::write(
        &config,
        format!(
            "[database]\nurl = \"{db}\"\n[weather]\nurl = \"{weather_url}/forecast\"\ntimeout_ms = 2000\n\
             [telemetry]\notlp_endpoint = \"{collector_url}\"\nservice_name = \"toolgate-test\"\n"
        ),
    )
    .unwrap();
    let user = "otel-alice@example.com";
    let (key_id, key) = make_key(&config, user, "member");
    let salt = "salt-of-this-test";
    let env = [("TOOLGATE_TELEMETRY_SALT", salt), ("OTEL_BSP_SCHEDULE_DELAY", "100")];
    let (server, url) = serve(&config, "otel-1", &["--stateless"], &env);
    let client = reqwest::Client::new();

    let (status, ok) = execute(&client, &url, &key, None, "query_travel_order", json!({})).await;
    assert_eq!((status, &ok["success"]), (200, &json!(true)), "{ok}");
    let forecast = json!({"city": "Wuhan", "date": day(1)});
    let (_, failed) = execute(&client, &url, &key, None, "query_weather", forecast.clone()).await;
    assert_eq!(failed["error"]["code"], "EXECUTION_ERROR", "the provider's 500: {failed}");
    let attempts = failed["metadata"]["attempts"].as_u64().unwrap();
    let _ = stop_weather.send(());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, gone) = execute(&client, &url, &key, None, "query_weather", forecast).await;
    assert_eq!(gone["error"]["code"], "UNAVAILABLE", "{gone}");
    let (_, missing) = execute(&client, &url, &key, None, "no_such_tool", json!({})).await;
    assert_eq!(missing["error"]["code"], "TOOL_NOT_FOUND", "{missing}");

    // Every failed attempt of the provider, by kind; the caller's mistake is not one.
    let text = client.get(format!("{url}/metrics")).send().await.unwrap().text().await.unwrap();
    eprintln!("{}", text.lines().filter(|l| l.contains("backend_errors")).collect::<Vec<_>>().join("\n"));
    assert!(
        text.contains(&format!(
            "toolgate_backend_errors_total{{backend=\"weather\",kind=\"http_5xx\"}} {attempts}\n"
        )),
        "{text}"
    );
    assert!(
        text.contains("toolgate_backend_errors_total{backend=\"weather\",kind=\"unavailable\"}"),
        "{text}"
    );
    assert_eq!(text.matches("toolgate_backend_errors_total{").count(), 2, "{text}");

    // One span per call, with the attributes and the user's keyed hash only.
    let expected_hash = toolgate::telemetry::user_hash(salt.as_bytes(), user);
    wait_until("four spans at the collector", Duration::from_secs(15), async || {
        decode_spans(&received.lock().unwrap()).len() >= 4
    })
    .await;
    drop(server);
    let bodies = received.lock().unwrap().clone();
    let spans = decode_spans(&bodies);
    eprintln!("{} spans in {} OTLP requests", spans.len(), bodies.len());
    assert_eq!(spans.len(), 4, "{spans:?}");
    let of = |tool: &str| spans.iter().filter(|s| s["toolgate.tool"] == tool).collect::<Vec<_>>();
    let order = &of("query_travel_order")[0];
    assert_eq!(order["toolgate.code"], "OK");
    assert_eq!(order["toolgate.attempts"], "1");
    assert_eq!(order["toolgate.role"], "member");
    assert_eq!(order["toolgate.user_hash"], expected_hash);
    assert_eq!(order["span.name"], "tool query_travel_order");
    assert!(order["toolgate.duration_ms"].parse::<f64>().unwrap() > 0.0);
    let weather = of("query_weather");
    assert_eq!(weather.len(), 2);
    assert_eq!(weather[0]["toolgate.attempts"], attempts.to_string());
    assert_eq!(weather[1]["toolgate.code"], "UNAVAILABLE");
    assert_eq!(of("no_such_tool")[0]["toolgate.code"], "TOOL_NOT_FOUND");
    for body in &bodies {
        let raw = String::from_utf8_lossy(body);
        assert!(!raw.contains("otel-alice"), "a raw user id was exported");
        assert!(!raw.contains(&key) && !raw.contains(&key_id), "a key was exported");
        assert!(raw.contains("toolgate-test"), "the service name is the configured one");
    }
}
