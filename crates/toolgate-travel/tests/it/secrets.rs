//! `save_flight_api_key`: sealed at rest, and the key appears nowhere: not in
//! the answer, not in errors, not in logs, not in the gateway's trace, not in
//! the database in clear.

use crate::common;

use crate::common::{Tools, backends, envelope, json, logs, user};
use serde_json::json;
use toolgate_core::{Caller, ErrorCode, Secret, ToolContext};
use toolgate_gateway::{CallOptions, Gateway};
use toolgate_travel::TravelConfig;

const KEY: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

fn config() -> TravelConfig {
    TravelConfig::default().with_secret_key(Secret::new(KEY))
}

#[tokio::test]
async fn the_key_is_stored_sealed_and_never_shown() {
    let logs = logs();
    for b in backends() {
        let store = b.store().await;
        let tools = Tools::new(store.clone(), config());
        let u = user("keys");
        let api_key = format!("sk-live-{}", uuid::Uuid::new_v4().simple());

        let result =
            tools.call(&u, "save_flight_api_key", json!({"provider": "Amadeus", "api_key": api_key})).await;
        let env = envelope("save_flight_api_key", &result);
        let out = result.unwrap();
        assert_eq!(json(&out)["stored"], true, "{b:?}");
        assert_eq!(json(&out)["replaced"], false);
        assert_eq!(json(&out)["provider"], "amadeus");
        // Replace it.
        let newer = format!("sk-live-{}", uuid::Uuid::new_v4().simple());
        let again =
            tools.call(&u, "save_flight_api_key", json!({"provider": "amadeus", "api_key": newer})).await;
        let env2 = envelope("save_flight_api_key", &again);
        assert_eq!(json(&again.unwrap())["replaced"], true);

        // Errors never echo it either (wrong field name, too long, wrong type).
        let bad = tools
            .call(
                &u,
                "save_flight_api_key",
                json!({"provider": "", "apikey": api_key, "api_key": api_key.repeat(200)}),
            )
            .await;
        let env3 = envelope("save_flight_api_key", &bad);
        assert_eq!(bad.unwrap_err().code, ErrorCode::InvalidParams);

        // It opens with the configured key, and only for its owner.
        let opened = toolgate_travel::open_api_key(&store, &config(), &u, "AMADEUS").await.unwrap().unwrap();
        assert_eq!(opened.expose(), newer);
        assert!(
            toolgate_travel::open_api_key(&store, &config(), &user("x"), "amadeus").await.unwrap().is_none()
        );
        let wrong = TravelConfig::default().with_secret_key(Secret::new("11".repeat(32)));
        assert!(toolgate_travel::open_api_key(&store, &wrong, &u, "amadeus").await.unwrap().is_none());

        // At rest: nonce + ciphertext, nothing readable.
        let raw = b.raw().await;
        let dump: Vec<(Vec<u8>, Vec<u8>)> = match &raw {
            common::Raw::Sqlite(p) => {
                sqlx::query_as("SELECT nonce, ciphertext FROM travel_api_keys WHERE user_id = $1")
                    .bind(&u)
                    .fetch_all(p)
                    .await
                    .unwrap()
            }
            common::Raw::Postgres(p) => {
                sqlx::query_as("SELECT nonce, ciphertext FROM travel_api_keys WHERE user_id = $1")
                    .bind(&u)
                    .fetch_all(p)
                    .await
                    .unwrap()
            }
        };
        assert_eq!(dump.len(), 1);
        assert_eq!(dump[0].0.len(), 12, "96-bit nonce");
        for secret in [&api_key, &newer] {
            assert!(
                !dump[0].1.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{b:?}: clear text at rest"
            );
            for text in [env.to_value().to_string(), env2.to_value().to_string(), env3.to_value().to_string()]
            {
                assert!(!text.contains(secret.as_str()), "{b:?}: leaked in an answer: {text}");
                assert!(!text.contains(&secret[..20]), "{b:?}: a prefix leaked in an answer: {text}");
            }
            let logged = logs.text();
            assert!(!logged.is_empty(), "the capture works");
            assert!(!logged.contains(secret.as_str()), "{b:?}: leaked in the logs");
            assert!(!logged.contains(&secret[8..24]), "{b:?}: part of the key leaked in the logs");
        }
    }
}

#[tokio::test]
async fn through_the_gateway_the_trace_shows_no_key() {
    let logs = logs();
    let b = common::sqlite();
    let gw = Gateway::builder().tools(toolgate_travel::tools(b.store().await, config())).build().unwrap();
    let mut trace = gw.subscribe();
    let u = user("gwkeys");
    let api_key = format!("sk-test-{}", uuid::Uuid::new_v4().simple());
    let ctx = ToolContext::new(Caller::new(&u, "member"));
    let env = gw
        .execute(
            &ctx,
            "save_flight_api_key",
            json!({"provider": "sabre", "api_key": api_key}),
            &CallOptions::default(),
        )
        .await;
    assert!(env.success, "{env:?}");
    let event = trace.recv().await.unwrap();
    let text = format!("{} {} {:?}", env.to_value(), serde_json::to_string(&event.params).unwrap(), event);
    assert!(!text.contains(&api_key), "{text}");
    assert!(!logs.text().contains(&api_key));
    assert_eq!(event.params["provider"], "sabre");
}

#[tokio::test]
async fn without_a_configured_key_it_is_unavailable_and_says_how_to_set_it() {
    let b = common::sqlite();
    for config in [TravelConfig::default(), TravelConfig::default().with_secret_key(Secret::new("not-hex"))] {
        let tools = Tools::new(b.store().await, config);
        let err = tools
            .err(&user("k"), "save_flight_api_key", json!({"provider": "amadeus", "api_key": "sk-1"}))
            .await;
        assert_eq!(err.code, ErrorCode::Unavailable);
        assert!(!err.transient, "retrying cannot help");
        assert!(
            err.message.contains(toolgate_travel::ENV_SECRET_KEY) && err.message.contains("64 hex"),
            "{}",
            err.message
        );
        assert!(err.signals.iter().any(|s| s.kind() == "unavailable"));
        assert!(!format!("{err:?}").contains("sk-1"));
    }
}
