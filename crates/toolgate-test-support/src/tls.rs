//! A test CA and a server certificate it signed (rcgen), for real TLS
//! servers on 127.0.0.1: HTTPS backends, PostgreSQL with `ssl=on`, Redis's TLS port.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

/// A test CA and a server certificate for `names`, in PEM and DER.
#[derive(Debug)]
pub struct Pki {
    pub ca_pem: String,
    pub cert_pem: String,
    pub key_pem: String,
    pub cert_der: Vec<u8>,
    /// PKCS#8.
    pub key_der: Vec<u8>,
}

impl Pki {
    /// A CA and a certificate valid now for `names` (DNS names or IP addresses).
    pub fn new(names: &[&str]) -> Self {
        Self::issue(names, false)
    }

    /// As [`Pki::new`], but the certificate expired in 2021.
    pub fn expired(names: &[&str]) -> Self {
        Self::issue(names, true)
    }

    fn issue(names: &[&str], expired: bool) -> Self {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, "toolgate test CA");
        let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
        let issuer = Issuer::new(ca, ca_key);
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>()).unwrap();
        if expired {
            params.not_before = rcgen::date_time_ymd(2020, 1, 1);
            params.not_after = rcgen::date_time_ymd(2021, 1, 1);
        }
        let cert = params.signed_by(&key, &issuer).unwrap();
        Self {
            ca_pem,
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            cert_der: cert.der().to_vec(),
            key_der: key.serialize_der(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ca_and_the_certificate_come_in_pem_and_der() {
        let pki = Pki::new(&["localhost", "127.0.0.1"]);
        assert!(pki.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"), "{}", pki.ca_pem);
        assert!(pki.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"), "{}", pki.cert_pem);
        assert!(pki.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        assert_ne!(pki.ca_pem, pki.cert_pem);
        assert!(!pki.cert_der.is_empty() && !pki.key_der.is_empty());
        assert_ne!(Pki::expired(&["localhost"]).cert_der, pki.cert_der);
    }
}
