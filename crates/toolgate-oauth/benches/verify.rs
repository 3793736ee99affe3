//! What verifying a bearer token costs a request.
//!
//! - `cached`: a token verified before (a SHA-256 of the token and a map
//!   lookup): the cost of every request after a client's first.
//! - `uncached`: a token never seen (ES256 signature check, claims, role
//!   mapping, cache insertion): a client's first request with a new token.
//!
//! The identity provider is a real HTTP server on 127.0.0.1 (metadata and
//! JWKS), fetched once before measuring; the tokens are signed outside the
//! measured part.

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::routing::get;
use axum::{Json, Router};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;
use toolgate_oauth::resource::{ResourceConfig, Verifier};

const RESOURCE: &str = "https://mcp.example.com/mcp";

struct Setup {
    rt: tokio::runtime::Runtime,
    verifier: Verifier,
    key: EncodingKey,
    issuer: String,
}

impl Setup {
    /// An access token with Keycloak-like claims (about 700 bytes) and a fresh `jti`.
    fn token(&self, n: u64) -> String {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        let claims = json!({
            "iss": self.issuer, "aud": [RESOURCE, "account"], "sub": "f3a1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
            "client_id": "claude-desktop", "iat": now, "exp": now + 3600, "jti": format!("jti-{n}"),
            "scope": "openid profile email toolgate.read", "email": "alice@example.com",
            "groups": ["/staff", "/staff/engineering", "/admins"], "tenant": "acme",
        });
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some("bench-key".to_owned());
        header.typ = Some("at+jwt".to_owned());
        jsonwebtoken::encode(&header, &claims, &self.key).unwrap()
    }
}

fn setup() -> Setup {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let key = EncodingKey::from_ec_der(&pair.serialize_der());
    let (x, y) = pair.public_key_raw()[1..].split_at(32);
    let jwk = json!({
        "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": "bench-key",
        "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y),
    });
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let metadata = json!({ "issuer": issuer, "jwks_uri": format!("{issuer}/jwks") });
    let app = Router::new()
        .route("/.well-known/openid-configuration", get(move || async move { Json(metadata) }))
        .route("/jwks", get(move || async move { Json(json!({ "keys": [jwk] })) }));
    rt.spawn(async move { axum::serve(listener, app).await.unwrap() });

    let mut config = ResourceConfig::new(&issuer, RESOURCE);
    config.user_claim = "email".to_owned();
    config.tenant_claim = Some("tenant".to_owned());
    config.roles =
        vec![("/staff".to_owned(), "member".to_owned()), ("/admins".to_owned(), "admin".to_owned())];
    config.scopes = vec![("toolgate.read".to_owned(), "readonly".to_owned())];
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let hierarchy = ["viewer", "member", "admin"].map(String::from).to_vec();
    let verifier = Verifier::new(config, client, hierarchy).unwrap();
    rt.block_on(verifier.discover()).unwrap();
    Setup { rt, verifier, key, issuer }
}

fn bench(c: &mut Criterion) {
    let setup = setup();
    let mut group = c.benchmark_group("verify");
    group.measurement_time(Duration::from_secs(5));

    let token = setup.token(0);
    let verified = setup.rt.block_on(setup.verifier.verify(&token)).unwrap();
    assert_eq!(verified.role, "admin");
    group.bench_function("cached", |b| {
        b.iter_custom(|iters| {
            setup.rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(setup.verifier.verify(black_box(&token)).await.unwrap());
                }
                start.elapsed()
            })
        })
    });

    let mut n = 1;
    group.bench_function("uncached", |b| {
        b.iter_batched(
            || {
                n += 1;
                setup.token(n)
            },
            |token| black_box(setup.rt.block_on(setup.verifier.verify(&token)).unwrap()),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
