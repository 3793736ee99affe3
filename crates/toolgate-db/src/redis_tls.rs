//! Redis clients that honour `[tls] ca_file`, and certificate failures told apart from
//! outages. Written once here because both Redis users (the travel plan store and the
//! fleet's rate counters) must trust the same CA and say the same thing when they cannot.

use std::error::Error as StdError;

/// A client for `url`. For `rediss://` with `ca_pem` (a PEM bundle), the server's certificate
/// must chain to one of those CAs: redis-rs takes a single root store, so the bundle replaces
/// the system roots for Redis (a private Redis is what a private CA is for). Without a CA, or
/// for plain `redis://`, the URL alone decides.
pub fn redis_client(url: &str, ca_pem: Option<&str>) -> redis::RedisResult<redis::Client> {
    match ca_pem {
        Some(pem) if url.starts_with("rediss://") => {
            let certs = redis::TlsCertificates { client_tls: None, root_cert: Some(pem.as_bytes().to_vec()) };
            redis::Client::build_with_tls(url, certs)
        }
        _ => redis::Client::open(url),
    }
}

/// When a Redis error is the server's certificate being refused, the sentence that says so
/// and how to fix it; `None` for any other failure.
pub fn redis_certificate_problem(error: &redis::RedisError) -> Option<String> {
    let mut text = error.to_string();
    let mut next: Option<&(dyn StdError + 'static)> = error.source();
    while let Some(e) = next {
        text.push(' ');
        text.push_str(&e.to_string());
        next = e.source();
    }
    let lower = text.to_lowercase();
    (lower.contains("certificate") || lower.contains("unknownissuer")).then(|| {
        "Redis cannot be used securely: its TLS certificate is not trusted (unknown or private CA, expired, or issued for another host). Fix: add that CA's PEM file as `[tls] ca_file` in toolgate.toml, or connect with the host name the certificate names. This is a certificate problem, not an outage".to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_applies_to_rediss_only() {
        assert!(redis_client("redis://127.0.0.1:6379/0", Some("not a pem")).is_ok());
        assert!(redis_client("rediss://127.0.0.1:6380/0", None).is_ok());
    }
}
