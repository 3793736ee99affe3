//! Claims to callers: roles from groups, the user and tenant, scopes to toolsets.

use serde_json::{Value, json};
use toolgate_oauth::resource::{Rejection, ResourceConfig, Verifier};

use crate::idp::{Idp, Key};
use crate::{accepted, client, config, hierarchy, rejected};

async fn setup() -> (Idp, Key) {
    let idp = Idp::start().await;
    let key = Key::generate("k1");
    idp.publish(vec![key.jwk()]);
    (idp, key)
}

fn token(idp: &Idp, key: &Key, extra: Value) -> String {
    let mut claims = idp.claims();
    for (name, value) in extra.as_object().unwrap() {
        if value.is_null() {
            claims.as_object_mut().unwrap().remove(name);
        } else {
            claims[name] = value.clone();
        }
    }
    key.sign(&claims)
}

#[track_caller]
fn assert_no_role(rejection: &Rejection, needle: &str) {
    match rejection {
        Rejection::NoRole(message) => {
            assert!(message.contains(needle), "{message:?} does not say {needle:?}")
        }
        other => panic!("expected NoRole, got {other:?}"),
    }
    assert_eq!(rejection.status(), 403);
    assert_eq!(rejection.error_code(), None, "not insufficient_scope");
}

#[tokio::test]
async fn groups_map_to_roles_and_the_highest_wins() {
    let (idp, key) = setup().await;
    let verifier = crate::verifier(config(&idp));
    let role = |groups: Value| {
        let token = token(&idp, &key, json!({ "groups": groups }));
        let verifier = verifier.clone();
        async move { verifier.verify(&token).await.map(|v| v.role) }
    };
    assert_eq!(role(json!(["staff"])).await.unwrap(), "member");
    assert_eq!(role(json!("admins")).await.unwrap(), "admin", "a string claim");
    assert_eq!(role(json!(["staff", "admins", "viewers"])).await.unwrap(), "admin");
    assert_eq!(role(json!(["admins", "staff"])).await.unwrap(), "admin", "order does not matter");
    assert_eq!(role(json!(["viewers", "unmapped"])).await.unwrap(), "viewer");
    assert_eq!(role(json!(["unmapped", 7, {"x": 1}, "staff"])).await.unwrap(), "member");
    // nothing maps and there is no default role
    assert_no_role(&role(json!(["contractors"])).await.unwrap_err(), "\"contractors\"");
    assert_no_role(&role(json!([])).await.unwrap_err(), "no `groups` value");
    assert_no_role(&role(json!(42)).await.unwrap_err(), "no default role");
    let missing = token(&idp, &key, json!({ "groups": null }));
    assert_no_role(&rejected(&verifier, &missing).await, "no `groups` value");
}

#[tokio::test]
async fn an_unmapped_token_gets_the_default_role() {
    let (idp, key) = setup().await;
    let mut config = config(&idp);
    config.default_role = Some("viewer".to_owned());
    let verifier = crate::verifier(config);
    for groups in [json!(["contractors"]), json!(null)] {
        let verified = accepted(&verifier, &token(&idp, &key, json!({ "groups": groups }))).await;
        assert_eq!(verified.role, "viewer");
    }
    // a mapped group still wins over the default
    let verified = accepted(&verifier, &token(&idp, &key, json!({ "groups": ["admins"] }))).await;
    assert_eq!(verified.role, "admin");
}

#[tokio::test]
async fn role_claim_user_claim_and_tenant_claim_are_configurable() {
    let (idp, key) = setup().await;
    let mut config = config(&idp);
    config.role_claim = "realm_access.roles".to_owned();
    config.roles = vec![("gateway-admin".to_owned(), "admin".to_owned())];
    config.user_claim = "email".to_owned();
    config.tenant_claim = Some("org".to_owned());
    let verifier = crate::verifier(config);
    let admin = token(
        &idp,
        &key,
        json!({
            "realm_access": {"roles": ["offline_access", "gateway-admin"]},
            "email": "alice@example.com",
            "org": "acme",
        }),
    );
    let verified = accepted(&verifier, &admin).await;
    assert_eq!(verified.role, "admin");
    assert_eq!(verified.user_id, "alice@example.com");
    assert_eq!(verified.subject, "alice");
    assert_eq!(verified.tenant.as_deref(), Some("acme"));

    // no email: no user to be
    let anonymous = token(&idp, &key, json!({"realm_access": {"roles": ["gateway-admin"]}, "email": null}));
    assert_no_role(&rejected(&verifier, &anonymous).await, "`email`");
}

#[tokio::test]
async fn scopes_narrow_to_a_toolset() {
    let (idp, key) = setup().await;
    let mut config = config(&idp);
    config.scopes = [("toolgate.read", "readonly"), ("toolgate.travel", "travel"), ("toolgate.all", "all")]
        .map(|(scope, toolset)| (scope.to_owned(), toolset.to_owned()))
        .to_vec();
    let verifier = crate::verifier(config);
    let toolset = |scopes: Value| {
        let token = token(&idp, &key, scopes);
        let verifier = verifier.clone();
        async move { verifier.verify(&token).await.map(|v| (v.toolset, v.scopes)) }
    };
    let (set, scopes) = toolset(json!({"scope": "openid toolgate.travel"})).await.unwrap();
    assert_eq!(set.as_deref(), Some("travel"));
    assert_eq!(scopes, ["openid", "toolgate.travel"]);
    // several mapped: the first listed in the configuration wins, whatever the token's order
    let (set, _) = toolset(json!({"scope": "toolgate.all toolgate.travel toolgate.read"})).await.unwrap();
    assert_eq!(set.as_deref(), Some("readonly"));
    // `scp` as an array (and no `scope`)
    let (set, scopes) = toolset(json!({"scope": null, "scp": ["toolgate.all"]})).await.unwrap();
    assert_eq!(set.as_deref(), Some("all"));
    assert_eq!(scopes, ["toolgate.all"]);

    // a scope mapped to `*` narrows nothing, and beats a narrower one the token also carries
    let mut wide = crate::config(&idp);
    wide.scopes = vec![("toolgate.read".into(), "readonly".into()), ("toolgate.full".into(), "*".into())];
    let wide = crate::verifier(wide);
    let both =
        wide.verify(&token(&idp, &key, json!({"scope": "toolgate.read toolgate.full"}))).await.unwrap();
    assert_eq!(both.toolset, None);
    let read = wide.verify(&token(&idp, &key, json!({"scope": "toolgate.read"}))).await.unwrap();
    assert_eq!(read.toolset.as_deref(), Some("readonly"));

    for scopes in [json!({"scope": "openid profile"}), json!({"scope": null}), json!({"scope": "toolgate"})] {
        let rejection = toolset(scopes).await.unwrap_err();
        let Rejection::InsufficientScope(message) = &rejection else { panic!("{rejection:?}") };
        assert!(message.contains("toolgate.read toolgate.travel toolgate.all"), "{message}");
        assert_eq!(rejection.status(), 403);
        assert_eq!(rejection.error_code(), Some("insufficient_scope"));
    }

    // a missing role is reported before a missing scope
    let token = token(&idp, &key, json!({"groups": ["nobody"], "scope": "openid"}));
    assert_no_role(&rejected(&verifier, &token).await, "\"nobody\"");
}

#[tokio::test]
async fn without_configured_scopes_there_is_no_toolset() {
    let (idp, key) = setup().await;
    let verifier = crate::verifier(config(&idp));
    let verified = accepted(&verifier, &token(&idp, &key, json!({"scope": null}))).await;
    assert_eq!(verified.toolset, None);
    assert!(verified.scopes.is_empty());
}

#[tokio::test]
async fn roles_outside_the_hierarchy_are_a_configuration_error() {
    let idp = Idp::start().await;
    let new = |config: ResourceConfig| Verifier::new(config, client(), hierarchy());

    let mut bad = config(&idp);
    bad.roles.push(("ops".to_owned(), "superuser".to_owned()));
    let error = new(bad).unwrap_err();
    assert!(error.contains("\"superuser\"") && error.contains("viewer, member, admin"), "{error}");

    let mut bad = config(&idp);
    bad.default_role = Some("guest".to_owned());
    assert!(new(bad).unwrap_err().contains("default_role \"guest\""));

    let mut bad = config(&idp);
    bad.roles.push(("".to_owned(), "admin".to_owned()));
    assert!(new(bad).unwrap_err().contains("may be empty"));

    let mut bad = config(&idp);
    bad.default_role = Some(String::new());
    assert!(new(bad).unwrap_err().contains("default_role"));

    let error = Verifier::new(config(&idp), client(), Vec::new()).unwrap_err();
    assert!(error.contains("hierarchy is empty"), "{error}");
    assert_eq!(idp.requests(), Vec::<String>::new(), "building a verifier fetches nothing");
}
