//! The issuer's signing keys: a JWKS (RFC 7517) parsed into verification
//! keys, and the choice of the key a token's header points at.

use std::str::FromStr;

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyOperations, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey};
use serde::Deserialize;

use super::shown;

/// One signature verification key of the issuer.
#[derive(Debug)]
pub(crate) struct Key {
    kid: Option<String>,
    /// The key's `alg`, when it names one.
    alg: Option<Algorithm>,
    family: AlgorithmFamily,
    /// For EC and OKP keys, the curve.
    curve: Option<EllipticCurve>,
    key: DecodingKey,
}

impl Key {
    /// Whether this key may verify a signature made with `alg`.
    fn fits(&self, alg: Algorithm) -> bool {
        if alg.family() != self.family || self.alg.is_some_and(|own| own != alg) {
            return false;
        }
        match alg {
            Algorithm::ES256 => self.curve == Some(EllipticCurve::P256),
            Algorithm::ES384 => self.curve == Some(EllipticCurve::P384),
            Algorithm::EdDSA => self.curve == Some(EllipticCurve::Ed25519),
            _ => true,
        }
    }
}

/// The verification keys of one JWKS fetch.
#[derive(Debug, Default)]
pub(crate) struct KeySet {
    keys: Vec<Key>,
}

/// What a token's header found in the key set.
#[derive(Debug)]
pub(crate) enum Selection<'a> {
    /// The one key to verify the signature with.
    Found(&'a DecodingKey),
    /// No key with the token's `kid` (or, without a `kid`, none that fits
    /// its `alg`): the issuer may have rotated its keys since the last fetch.
    Unknown,
    /// Keys were found but none can be used: refuse the token (why).
    Unfit(String),
}

impl KeySet {
    /// Parse a JWKS document fetched from `url`. Keys toolgate cannot use for
    /// verifying signatures (encryption keys, symmetric keys, curves
    /// jsonwebtoken does not verify, malformed entries) are skipped, each
    /// noted at debug level.
    pub(crate) fn parse(body: &[u8], url: &str) -> Result<Self, String> {
        #[derive(Deserialize)]
        struct Raw {
            keys: Vec<serde_json::Value>,
        }
        let raw: Raw = serde_json::from_slice(body)
            .map_err(|e| format!("the JWKS at {url} is not a JSON Web Key Set ({{\"keys\": [...]}}): {e}"))?;
        let mut keys = Vec::with_capacity(raw.keys.len());
        for value in raw.keys {
            let kid = value.get("kid").and_then(|k| k.as_str()).map(shown);
            match serde_json::from_value::<Jwk>(value).map_err(|e| e.to_string()).and_then(|jwk| usable(&jwk))
            {
                Ok(Some(key)) => keys.push(key),
                Ok(None) => tracing::debug!(%url, kid = ?kid, "JWKS key skipped: not a signature key"),
                Err(reason) => tracing::debug!(%url, kid = ?kid, %reason, "JWKS key skipped"),
            }
        }
        if keys.is_empty() {
            tracing::warn!(%url, "the JWKS holds no signature key toolgate can use");
        }
        Ok(Self { keys })
    }

    /// How many usable keys the set holds.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The key for a token whose header says `kid` and `alg`: the key with
    /// that `kid`, or without a `kid` the only key that fits `alg`.
    pub(crate) fn select(&self, kid: Option<&str>, alg: Algorithm) -> Selection<'_> {
        match kid {
            Some(kid) => {
                let mut named = self.keys.iter().filter(|k| k.kid.as_deref() == Some(kid)).peekable();
                if named.peek().is_none() {
                    return Selection::Unknown;
                }
                let named: Vec<&Key> = named.collect();
                match named.iter().find(|k| k.fits(alg)) {
                    Some(key) => Selection::Found(&key.key),
                    None => Selection::Unfit(format!(
                        "the issuer's key {} is not a {alg:?} key (it is {})",
                        shown(kid),
                        describe(named[0])
                    )),
                }
            }
            None => {
                let fitting: Vec<&Key> = self.keys.iter().filter(|k| k.fits(alg)).collect();
                match fitting.as_slice() {
                    [] => Selection::Unknown,
                    [key] => Selection::Found(&key.key),
                    more => Selection::Unfit(format!(
                        "the token names no key (no kid in its header) and {} of the issuer's keys fit {alg:?}",
                        more.len()
                    )),
                }
            }
        }
    }
}

/// `jwk` as a verification key, `None` when it is not one (encryption or
/// symmetric key), an error when it is malformed or of an unsupported kind.
fn usable(jwk: &Jwk) -> Result<Option<Key>, String> {
    let common = &jwk.common;
    if matches!(common.public_key_use, Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))) {
        return Ok(None);
    }
    if let Some(ops) = &common.key_operations
        && !ops.contains(&KeyOperations::Verify)
    {
        return Ok(None);
    }
    let alg = match common.key_algorithm {
        None => None,
        Some(named) => match Algorithm::from_str(&named.to_string()) {
            Ok(alg) if alg.family() != AlgorithmFamily::Hmac => Some(alg),
            // HS* keys, encryption algorithms (RSA-OAEP...), unknown ones
            _ => return Ok(None),
        },
    };
    let (family, curve) = match &jwk.algorithm {
        AlgorithmParameters::OctetKey(_) => return Ok(None),
        AlgorithmParameters::RSA(_) => (AlgorithmFamily::Rsa, None),
        AlgorithmParameters::EllipticCurve(params) => match params.curve {
            EllipticCurve::P256 | EllipticCurve::P384 => (AlgorithmFamily::Ec, Some(params.curve.clone())),
            _ => return Err(format!("curve {:?} is not supported for EC keys", params.curve)),
        },
        AlgorithmParameters::OctetKeyPair(params) => match params.curve {
            EllipticCurve::Ed25519 => (AlgorithmFamily::Ed, Some(EllipticCurve::Ed25519)),
            _ => return Err(format!("curve {:?} is not supported for OKP keys", params.curve)),
        },
    };
    if alg.is_some_and(|alg| alg.family() != family) {
        return Err(format!("its alg {alg:?} does not match its key type"));
    }
    let key = DecodingKey::from_jwk(jwk).map_err(|e| format!("not a valid public key: {e}"))?;
    Ok(Some(Key { kid: common.key_id.clone(), alg, family, curve, key }))
}

fn describe(key: &Key) -> String {
    match (key.alg, &key.curve) {
        (Some(alg), _) => format!("{alg:?}"),
        (None, Some(curve)) => format!("a {:?} {curve:?} key", key.family),
        (None, None) => format!("a {:?} key", key.family),
    }
}
