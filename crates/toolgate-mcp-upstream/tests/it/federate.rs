//! The rest of an upstream's MCP surface through a front toolgate (mcp-server in process, as
//! `toolgate serve` runs it), driven by the official Python SDK client
//! (tests/python/federate_check.py): the Python upstream's prompt, resource, template and
//! completions; its sampling and roots requests and log messages reaching the client of the
//! call; its prompts list_changed re-announced; none of it for a caller below its role.

use std::time::Duration;

use toolgate_mcp::{Exposure, HttpState, KeyStore, serve_http};
use toolgate_mcp_upstream::Upstreams;

use crate::common::{front, python};

const CHECK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/federate_check.py");

#[tokio::test]
async fn prompts_resources_completions_sampling_roots_and_logs_of_an_upstream() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let gateway = front();
    let upstreams = Upstreams::start(&gateway, vec![crate::stdio::config(&python, dir.path())]).await;
    assert!(upstreams.status()[0].connected, "{:?}", upstreams.status());
    assert!(upstreams.collisions().is_empty(), "{:?}", upstreams.collisions());
    let keys = KeyStore::connect(&format!("sqlite:{}", dir.path().join("keys.db").display())).await.unwrap();
    let member = keys.create("mia", "member").await.unwrap().key.expose().to_owned();
    let guest = keys.create("gus", "guest").await.unwrap().key.expose().to_owned();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let state =
        HttpState::new(gateway, keys).with_exposure(Exposure::Direct).with_federation(upstreams.federation());
    tokio::spawn(serve_http(listener, state, std::future::pending()));
    let output = tokio::time::timeout(
        Duration::from_secs(120),
        tokio::process::Command::new(&python)
            .args([CHECK, &url, &member, &guest])
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("federate_check.py finishes within 2 minutes")
    .expect("federate_check.py starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "federate_check.py failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("a guest cannot get"), "{stdout}");
}

/// With `prefix = false` an upstream's tools keep their names, and one that another upstream
/// already has is a collision toolgate refuses to start with.
#[tokio::test]
async fn unprefixed_upstreams_keep_their_names_and_collisions_are_named() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let gateway = front();
    let mut plain = crate::stdio::config(&python, dir.path());
    plain.prefix = false;
    let mut twin = plain.clone();
    twin.name = "twin".into();
    let upstreams = Upstreams::start(&gateway, vec![plain]).await;
    assert!(gateway.spec("get_forecast").is_some(), "kept its name");
    assert!(gateway.spec("weather__get_forecast").is_none());
    assert!(upstreams.collisions().is_empty(), "{:?}", upstreams.collisions());
    let mut upstreams = upstreams;
    upstreams.add(&gateway, vec![twin]).await;
    let collisions = upstreams.collisions();
    assert!(
        collisions
            .iter()
            .any(|c| c.contains("`twin`") && c.contains("get_forecast") && c.contains("prefix = true")),
        "{collisions:?}"
    );
    assert!(collisions.iter().any(|c| c.contains("both have a prompt `summary`")), "{collisions:?}");
}

/// An upstream's sampling or roots request during a call whose caller cannot be sent one
/// (no asker: a client without the capability; or an asker that cannot relay) is answered
/// with an error, and the upstream's tool fails with it; nothing is invented.
#[tokio::test]
async fn sampling_and_roots_without_a_capable_client_are_refused() {
    use crate::common::{call, member};
    use toolgate_core::{Answer, Asker, Question};

    struct OnlyAsks;
    #[toolgate_core::async_trait]
    impl Asker for OnlyAsks {
        async fn ask(&self, _question: &Question) -> Answer {
            Answer::Decline
        }
    }

    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let gateway = front();
    let _upstreams = Upstreams::start(&gateway, vec![crate::stdio::config(&python, dir.path())]).await;
    let asking = member().with_asker(std::sync::Arc::new(OnlyAsks));
    for ctx in [member(), asking] {
        let answer =
            call(&gateway, &ctx, "weather__ask_model", serde_json::json!({"question": "Weather?"})).await;
        assert!(!answer.success, "{answer:?}");
        // Toolgate's own refusal reached the upstream (not rmcp's "method not found").
        let message = answer.error.as_ref().map(|e| e.message.clone()).unwrap_or_default();
        assert!(message.contains("toolgate cannot put this question"), "{message}");
        let answer = call(&gateway, &ctx, "weather__list_my_roots", serde_json::json!({})).await;
        assert!(!answer.success, "{answer:?}");
    }
}
