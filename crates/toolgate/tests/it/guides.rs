//! Every shipped skill's guide, rendered at two roles (insta snapshots), and
//! the shipped skills checked against the tools the binary serves.

use toolgate::{App, Config};
use toolgate_core::Caller;

#[tokio::test]
async fn shipped_guides_at_two_roles() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.database.url = format!("sqlite:{}", dir.path().join("g.db").display());
    let app = App::start(&config).await.unwrap();
    assert!(app.skill_problems.iter().all(|p| !p.is_error()), "{:?}", app.skill_problems);
    let ids: Vec<String> = toolgate::wiring::SHIPPED_SKILLS.iter().map(|(id, _)| id.to_string()).collect();
    assert_eq!(app.gateway.skill_set().len(), ids.len(), "a shipped skill was left out");
    for id in &ids {
        for role in ["member", "admin"] {
            let guide = app.gateway.skill_guide(&Caller::new("u", role), id).unwrap();
            insta::assert_snapshot!(format!("{id}@{role}"), guide);
        }
        let err = app.gateway.skill_guide(&Caller::new("u", "guest"), id).unwrap_err();
        assert_eq!(err.code, toolgate_core::ErrorCode::PermissionDenied, "{id} must be hidden from guests");
    }
}
