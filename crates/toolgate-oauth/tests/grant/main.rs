//! Outbound tokens against a real OAuth token endpoint on 127.0.0.1 (axum,
//! ephemeral port) that checks the client's Basic authentication and the
//! form, counts the requests and issues tokens per subject: the token
//! exchange (RFC 8693) and the client-credentials grant, their caches,
//! single flight and errors. No mocks of our own code.

mod exchange;
mod idp;
mod service;
