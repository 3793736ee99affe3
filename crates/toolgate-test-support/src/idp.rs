//! A small identity provider on 127.0.0.1 for tests of token verification:
//! OpenID discovery (`/.well-known/openid-configuration`) and a JWKS
//! (`/jwks`) over real HTTP, and ES256 access tokens signed with its key.
//! The end-to-end tests use a real provider (panva's `oidc-provider`); this
//! one lets a crate's own tests mint tokens with any claims, including
//! broken ones.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::routing::get;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

/// A signing key and its public JWK.
pub struct SigningKey {
    /// The key id (`kid`).
    pub kid: String,
    key: EncodingKey,
    jwk: Value,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey").field("kid", &self.kid).finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A fresh P-256 key named `kid`.
    pub fn generate(kid: &str) -> Self {
        let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("a P-256 key");
        let key = EncodingKey::from_ec_der(&pair.serialize_der());
        let point = pair.public_key_raw();
        // Uncompressed SEC1: 0x04, then 32 bytes of x and 32 of y.
        let (x, y) = point[1..].split_at(32);
        let jwk = json!({
            "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": kid,
            "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y),
        });
        Self { kid: kid.to_owned(), key, jwk }
    }

    /// Its public JWK.
    pub fn jwk(&self) -> Value {
        self.jwk.clone()
    }

    /// Its public JWK without `kid`.
    pub fn jwk_without_kid(&self) -> Value {
        let mut jwk = self.jwk.clone();
        if let Some(jwk) = jwk.as_object_mut() {
            jwk.remove("kid");
        }
        jwk
    }

    /// `claims` signed with this key as an RFC 9068 access token (`typ: at+jwt`).
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        header.typ = Some("at+jwt".into());
        self.sign_with(&header, claims)
    }

    /// `claims` signed with this key under `header`.
    pub fn sign_with(&self, header: &Header, claims: &Value) -> String {
        jsonwebtoken::encode(header, claims, &self.key).expect("signing a test token")
    }
}

/// The running provider.
#[derive(Debug)]
pub struct Idp {
    /// Its issuer, `http://127.0.0.1:PORT`, as its metadata writes it.
    pub issuer: String,
    /// The key its JWKS publishes.
    pub key: SigningKey,
    jwks_fetches: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Idp {
    /// Start a provider whose JWKS holds one fresh key (`kid` `k1`).
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port for the test IdP");
        let issuer = format!("http://{}", listener.local_addr().expect("its address"));
        let key = SigningKey::generate("k1");
        let jwks = json!({ "keys": [key.jwk()] });
        let metadata = json!({
            "issuer": issuer,
            "jwks_uri": format!("{issuer}/jwks"),
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
        });
        let jwks_fetches = Arc::new(AtomicUsize::new(0));
        let counter = jwks_fetches.clone();
        let app = axum::Router::new()
            .route("/.well-known/openid-configuration", get(move || async move { Json(metadata) }))
            .route(
                "/jwks",
                get(move || async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    Json(jwks)
                }),
            );
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { issuer, key, jwks_fetches, task }
    }

    /// Access-token claims of `sub` for `aud`, valid for `ttl_secs` from now, with `extra`
    /// claims (e.g. `groups`, `scope`) merged in.
    pub fn claims(&self, sub: &str, aud: &str, ttl_secs: i64, extra: Value) -> Value {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
        let mut claims = json!({
            "iss": self.issuer, "sub": sub, "aud": aud, "iat": now, "exp": now + ttl_secs,
            "client_id": "test-client", "jti": crate::unique("jti"),
        });
        if let (Some(claims), Value::Object(extra)) = (claims.as_object_mut(), extra) {
            claims.extend(extra);
        }
        claims
    }

    /// A token of `sub` for `aud` with `extra` claims, signed with the published key.
    pub fn token(&self, sub: &str, aud: &str, ttl_secs: i64, extra: Value) -> String {
        self.key.sign(&self.claims(sub, aud, ttl_secs, extra))
    }

    /// How often the JWKS was fetched.
    pub fn jwks_fetches(&self) -> usize {
        self.jwks_fetches.load(Ordering::SeqCst)
    }
}

impl Drop for Idp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The header and claims of a compact JWS, decoded (no signature check).
pub fn decode(token: &str) -> (Value, Value) {
    let mut parts = token.split('.');
    let mut part = || -> Value {
        let bytes = URL_SAFE_NO_PAD.decode(parts.next().expect("a JWS part")).expect("base64url");
        serde_json::from_slice(&bytes).expect("a JSON part")
    };
    let header = part();
    (header, part())
}

/// `token`'s claims signed with `key` instead, under the same `kid` and `typ`: a
/// forgery a verifier must refuse.
pub fn resigned(token: &str, key: &SigningKey) -> String {
    let (header, claims) = decode(token);
    let mut forged = Header::new(Algorithm::ES256);
    forged.kid = header["kid"].as_str().map(str::to_owned);
    forged.typ = header["typ"].as_str().map(str::to_owned);
    key.sign_with(&forged, &claims)
}

/// `token`'s claims with `alg: none` and no signature.
pub fn unsigned(token: &str) -> String {
    let (mut header, claims) = decode(token);
    header["alg"] = json!("none");
    format!("{}.{}.", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()))
}
