//! OAuth 2.1 for toolgate, both ways.
//!
//! - Inbound, [`resource`]: toolgate as a resource server (the MCP
//!   authorization spec). Access tokens from the company's identity provider
//!   are verified locally (RFC 9068 JWTs against the issuer's JWKS) or by
//!   introspection (RFC 7662), and their claims become a
//!   [`toolgate_core::Caller`]; the Protected Resource Metadata (RFC 9728) tells
//!   clients where to sign in.
//! - Outbound, [`grant`]: a backend that must see the user gets a token made
//!   for it, by exchanging the caller's token (RFC 8693) or, for one service
//!   identity, by the client-credentials grant; both are
//!   [`toolgate_core::TokenSource`]s. The caller's own token is never sent on.
//!
//! Use it in a server that must accept the access tokens of a company's
//! identity provider, or call backends with tokens minted for them.
//!
//! # Example
//!
//! A [`resource::Verifier`] for one resource: the RFC 9728 metadata document
//! it serves, the `WWW-Authenticate` challenge pointing at it, and a token
//! refused without any network (an opaque token, no introspection
//! configured). The issuer's JWKS is only fetched on the first JWT.
//!
//! ```
//! use toolgate_oauth::resource::{ResourceConfig, Verifier};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), String> {
//! let mut config = ResourceConfig::new("https://idp.example.com", "https://tools.example.com/mcp");
//! config.scopes = vec![("tools.read".into(), "reader".into())];
//! let hierarchy = vec!["member".to_owned(), "admin".to_owned()];
//! let verifier = Verifier::new(config, reqwest::Client::new(), hierarchy)?;
//!
//! assert_eq!(verifier.metadata_path(), "/.well-known/oauth-protected-resource/mcp");
//! let metadata = verifier.metadata();
//! assert_eq!(metadata["resource"], "https://tools.example.com/mcp");
//! assert_eq!(metadata["authorization_servers"][0], "https://idp.example.com");
//! assert_eq!(metadata["scopes_supported"][0], "tools.read");
//!
//! let rejection = verifier.verify("not-a-jwt").await.unwrap_err();
//! assert_eq!(rejection.status(), 401);
//! assert_eq!(rejection.error_code(), Some("invalid_token"));
//! let challenge = verifier.challenge(Some(&rejection));
//! assert!(challenge.starts_with("Bearer "), "{challenge}");
//! assert!(challenge.contains("resource_metadata=\"https://tools.example.com/.well-known/oauth-protected-resource/mcp\""));
//! # Ok(()) }
//! ```
//!
//! # Cargo features
//!
//! None. HTTP goes through the `reqwest::Client` the caller passes in, so the
//! caller decides its TLS roots; JWT signatures are checked with
//! `jsonwebtoken` on aws-lc-rs.

#![deny(missing_docs)]

pub mod grant;
pub mod resource;
