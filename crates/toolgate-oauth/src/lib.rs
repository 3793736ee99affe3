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

pub mod grant;
pub mod resource;
