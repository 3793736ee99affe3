//! A conversation is bound to the scope it was started with (role, toolset,
//! domains), not only to its user: the same user continuing it from a
//! narrower scope is refused before the model hears anything, so what the
//! wider scope's tools returned never reaches the narrower one's context.

use serde_json::json;
use toolgate_agent::{Agent, ConversationStore, StopReason};
use toolgate_core::Caller;

use crate::model_server::{ModelServer, calls, text};
use crate::{direct, member, run, run_in, test_gateway};

#[tokio::test]
async fn a_conversation_continues_only_in_the_scope_it_was_started_with() {
    for backend in toolgate_test_support::pg::Backend::all("agent-scope.db") {
        let url = backend.url.clone();
        let store = ConversationStore::connect(&url).await.unwrap();
        let server = ModelServer::start(vec![
            calls(&[("c1", "query_weather", json!({"city": "Oslo"}))]),
            text("21 degrees in Oslo."),
            text("Still 21."),
        ])
        .await;
        let agent = Agent::new(test_gateway(1), direct(&server)).unwrap().with_store(store.clone());
        let (first, _) = run(&agent, member(), "Weather in Oslo?").await;
        let id = first.unwrap().conversation_id;

        // The same user with a narrower key: another domain, a toolset, a lower role.
        let mut nutrition = member();
        nutrition.domains = Some(vec!["nutrition".into()]);
        let mut read_only = member();
        read_only.toolset = Some("read_only".into());
        let before = server.received().len();
        for narrower in [nutrition, read_only, Caller::new("mia", "guest")] {
            let (refused, events) =
                run_in(&agent, narrower.clone(), "What did you find?", Some(id.clone())).await;
            let err = refused.unwrap_err();
            assert_eq!(err.code(), "PERMISSION_DENIED", "{url}: {narrower:?}: {err}");
            assert!(err.public_message().contains("another role or scope"), "{err}");
            assert!(events.is_empty(), "{events:?}");
        }
        assert_eq!(server.received().len(), before, "{url}: the model heard nothing of the refused runs");
        assert_eq!(store.messages(&id, "mia").await.unwrap().len(), 4, "{url}: nothing was added");

        // The scope it was started with continues it; the order of domains does not matter.
        let (again, _) = run_in(&agent, member(), "And now?", Some(id.clone())).await;
        let again = again.unwrap();
        assert_eq!((again.conversation_id.as_str(), again.stop_reason), (id.as_str(), StopReason::Answer));
        let mut two = member();
        two.domains = Some(vec!["weather".into(), "nutrition".into()]);
        let mut two_again = member();
        two_again.domains = Some(vec!["nutrition".into(), "weather".into()]);
        let scoped = store.create(&two).await.unwrap();
        assert!(store.messages_for(&scoped, &two_again).await.unwrap().is_empty(), "{url}");
        let wider = store.messages_for(&scoped, &member()).await.unwrap_err();
        assert!(matches!(wider, toolgate_agent::StoreError::ScopeMismatch(_)), "{url}: {wider}");
        // Another user still cannot tell it exists.
        let other = store.messages_for(&scoped, &Caller::new("eve", "member")).await.unwrap_err();
        assert!(matches!(other, toolgate_agent::StoreError::NotFound(_)), "{other}");
    }
}
