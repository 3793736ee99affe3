//! TLS: the roots a client trusts (system roots plus the operator's CAs) and certificate
//! failures told apart from other connection failures, so the model and the operator read
//! "certificate problem, here is the fix" instead of a raw error chain.

use std::error::Error as StdError;

use crate::{Error, Result};

/// Parse a PEM bundle (one or more `-----BEGIN CERTIFICATE-----` blocks) into certificates a
/// client trusts besides the system roots. A bundle with no certificate is an error: an
/// operator who names a CA file means to trust something.
pub fn parse_ca_bundle(pem: &str) -> Result<Vec<reqwest::Certificate>> {
    let bad = |reason: String| Error::CaBundle { reason };
    let certs = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
        .map_err(|e| bad(format!("not a PEM certificate bundle ({e})")))?;
    if certs.is_empty() {
        return Err(bad("no `-----BEGIN CERTIFICATE-----` block found".to_owned()));
    }
    Ok(certs)
}

/// When `error` (or anything in its source chain) is a refused certificate, the sentence that
/// says what is wrong with `backend`'s certificate and how to fix it; `None` for any other
/// failure. For other TLS clients of toolgate (the upstream MCP client) that must say the
/// same thing as the HTTP tools.
pub fn certificate_problem(error: &(dyn StdError + 'static), backend: &str) -> Option<String> {
    cert_problem(error).map(|problem| problem.explain(backend))
}

/// What is wrong with a backend's certificate, in words an operator can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CertProblem {
    /// Signed by a CA nobody here trusts (self-signed, private CA).
    Untrusted,
    /// Out of its validity period.
    Expired,
    /// Issued for another host name.
    WrongHost,
    /// Revoked, malformed, or refused for another reason.
    Other,
}

impl CertProblem {
    /// The sentence that says what is wrong and how to fix it.
    pub(crate) fn explain(self, backend: &str) -> String {
        let what = match self {
            CertProblem::Untrusted => {
                "its TLS certificate is not trusted (issued by an unknown or private certificate authority). Fix: add that CA's PEM file as `[tls] ca_file` in toolgate.toml, or give the backend a certificate from a public CA"
            }
            CertProblem::Expired => {
                "its TLS certificate has expired or is not yet valid. Fix: renew the backend's certificate (and check both clocks)"
            }
            CertProblem::WrongHost => {
                "its TLS certificate was issued for another host name. Fix: use the host name the certificate names in `base_url`, or reissue the certificate for this one"
            }
            CertProblem::Other => {
                "its TLS certificate was refused (revoked, malformed or unsupported). Fix: check the backend's certificate chain"
            }
        };
        format!(
            "{backend} cannot be used securely: {what}. This is a certificate problem, not an outage; retrying will not help, so tell the user the service is misconfigured."
        )
    }
}

/// The certificate problem somewhere in an error's source chain, if any.
pub(crate) fn cert_problem(error: &(dyn StdError + 'static)) -> Option<CertProblem> {
    let mut next: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(e) = next {
        if let Some(problem) = rustls_problem(e) {
            return Some(problem);
        }
        // hyper wraps the rustls error in io::Errors nested inside each other, and an
        // io::Error's `source` skips its own payload: descend into the payload instead.
        next = match e.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()) {
            Some(inner) => Some(inner as &(dyn StdError + 'static)),
            None => e.source(),
        };
    }
    None
}

fn rustls_problem(e: &(dyn StdError + 'static)) -> Option<CertProblem> {
    use rustls::CertificateError as C;
    match e.downcast_ref::<rustls::Error>()? {
        rustls::Error::InvalidCertificate(cert) => Some(match cert {
            C::UnknownIssuer | C::BadSignature => CertProblem::Untrusted,
            C::Expired | C::NotValidYet => CertProblem::Expired,
            C::ExpiredContext { .. } | C::NotValidYetContext { .. } => CertProblem::Expired,
            C::NotValidForName | C::NotValidForNameContext { .. } => CertProblem::WrongHost,
            _ => CertProblem::Other,
        }),
        rustls::Error::NoCertificatesPresented => Some(CertProblem::Other),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_without_certificates_is_refused() {
        assert!(matches!(parse_ca_bundle("hello"), Err(Error::CaBundle { .. })));
        assert!(matches!(parse_ca_bundle(""), Err(Error::CaBundle { .. })));
    }

    #[test]
    fn rustls_errors_are_found_inside_io_errors() {
        let inner = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        // As hyper hands it over: an io::Error holding an io::Error holding the rustls error.
        let io = std::io::Error::other(std::io::Error::new(std::io::ErrorKind::InvalidData, inner));
        assert_eq!(cert_problem(&io), Some(CertProblem::Untrusted));
        let expired = rustls::Error::InvalidCertificate(rustls::CertificateError::Expired);
        assert_eq!(cert_problem(&expired), Some(CertProblem::Expired));
        let plain = std::io::Error::other("connection reset");
        assert_eq!(cert_problem(&plain), None);
        let message = CertProblem::Untrusted.explain("the CRM");
        assert!(message.contains("certificate problem") && message.contains("ca_file"), "{message}");
    }
}
