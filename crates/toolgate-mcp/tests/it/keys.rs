//! The API key store against real databases: an SQLite file in a tempdir,
//! and PostgreSQL when `TOOLGATE_TEST_PG_URL` is set (required when
//! `TOOLGATE_REQUIRE_PG=1`).

use toolgate_mcp::{Error, KEY_PREFIX, KeyStore};

/// Every behaviour the store promises, on one backend. `tag` makes the
/// users unique so that runs sharing a PostgreSQL database do not collide.
async fn check(store: &KeyStore, tag: &str) {
    let alice = format!("alice-{tag}");
    let bob = format!("bob-{tag}");
    let a = store.create(&alice, "member").await.unwrap();
    let b = store.create(&bob, "admin").await.unwrap();
    let key = a.key.expose().to_owned();
    assert!(key.starts_with(KEY_PREFIX) && key.len() == KEY_PREFIX.len() + 64, "{}", key.len());
    assert_ne!(a.key.expose(), b.key.expose());
    assert!(!format!("{a:?}").contains(&key), "Debug never shows the key");

    let verified = store.verify(&key).await.unwrap().expect("a fresh key verifies");
    assert_eq!(verified.id, a.id);
    assert_eq!(verified.caller.user_id, alice);
    assert_eq!(verified.caller.role, "member");
    assert!(verified.caller.credentials.is_empty(), "the API key is not passed to tools as a credential");
    assert_eq!(store.verify(&key).await.unwrap().unwrap().id, a.id, "a cached answer is the same");

    // Wrong, malformed and look-alike keys.
    let mut wrong = key.clone().into_bytes();
    let last = wrong.len() - 1;
    wrong[last] = if wrong[last] == b'0' { b'1' } else { b'0' };
    let wrong = String::from_utf8(wrong).unwrap();
    for bad in [wrong.as_str(), "", "tg_", "Bearer x", &key.to_uppercase(), &format!("{key} "), &key[..20]] {
        assert!(store.verify(bad).await.unwrap().is_none(), "{bad:.24} verified");
    }

    let listed = store.list().await.unwrap();
    let mine: Vec<_> = listed.iter().filter(|k| k.user_id == alice || k.user_id == bob).collect();
    assert_eq!(mine.len(), 2);
    assert!(mine.iter().all(|k| k.revoked_at.is_none()));
    let json = serde_json::to_string(&listed).unwrap();
    assert!(!json.contains(&key) && !json.contains(b.key.expose()), "list shows no secret");
    assert!(!json.contains(&key[KEY_PREFIX.len()..]));

    assert!(store.revoke(&a.id).await.unwrap());
    assert!(!store.revoke(&a.id).await.unwrap(), "revoking twice says so");
    assert!(!store.revoke("key_nonexistent").await.unwrap());
    assert!(store.verify(&key).await.unwrap().is_none(), "a revoked key is refused at once");
    assert!(store.verify(b.key.expose()).await.unwrap().is_some(), "other keys still work");
    let revoked = store.list().await.unwrap().into_iter().find(|k| k.id == a.id).unwrap();
    assert!(revoked.revoked_at.is_some());

    for (user, role) in [("", "member"), ("a b", "member"), ("alice", ""), ("alice", "ad\nmin")] {
        assert!(
            matches!(store.create(user, role).await, Err(Error::Invalid(_))),
            "{user:?}/{role:?} accepted"
        );
    }
}

#[tokio::test]
async fn sqlite_file_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys.db");
    let url = format!("sqlite:{}", path.display());
    let store = KeyStore::connect(&url).await.unwrap();
    check(&store, "sqlite").await;

    // The plaintext key is nowhere in the database files.
    let kept = store.create("carol", "guest").await.unwrap();
    store.close().await;
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        bytes.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    let secret = &kept.key.expose()[KEY_PREFIX.len()..];
    assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()), "the key was stored in plaintext");

    // Reopening runs the migrations again (a no-op) and keys survive.
    let again = KeyStore::connect(&url).await.unwrap();
    again.migrate().await.unwrap();
    let verified = again.verify(kept.key.expose()).await.unwrap().unwrap();
    assert_eq!(verified.caller.user_id, "carol");
}

#[tokio::test]
async fn memory_store_and_bad_urls() {
    let store = KeyStore::connect("sqlite::memory:").await.unwrap();
    check(&store, "memory").await;
    let err = KeyStore::connect("mysql://root:hunter2@db/keys").await.unwrap_err();
    assert!(matches!(err, Error::UnsupportedUrl));
    assert!(!err.to_string().contains("hunter2"), "the URL (and its password) is not repeated");
}

#[tokio::test]
async fn postgres_store() {
    let Some(url) = toolgate_test_support::pg::url() else { return };
    let store = KeyStore::connect(&url).await.unwrap();
    // Several test binaries may migrate at once; a second run is a no-op.
    store.migrate().await.unwrap();
    check(&store, &uuid::Uuid::new_v4().simple().to_string()).await;
    store.close().await;
}
