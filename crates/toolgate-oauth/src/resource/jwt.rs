//! JWT access tokens (RFC 9068): checked locally, signature and registered
//! claims, against the issuer's keys; and the time and message helpers that
//! introspected tokens share.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use super::jwks::Selection;
use super::keys::Reason;
use super::{Rejection, ResourceConfig, Verified, Verifier, shown};

impl Verifier {
    /// A JWT access token (RFC 9068), verified against the issuer's keys.
    pub(super) async fn verify_jwt(&self, token: &str) -> Result<Verified, Rejection> {
        let config = &self.inner.config;
        let header = jsonwebtoken::decode_header(token).map_err(|_| {
            Rejection::Invalid(
                "the token's JWT header is malformed or names an algorithm toolgate does not know \
                 (alg \"none\" is never accepted)"
                    .to_owned(),
            )
        })?;
        if let Some(typ) = &header.typ
            && !["at+jwt", "application/at+jwt", "jwt"].iter().any(|ok| typ.eq_ignore_ascii_case(ok))
        {
            return Err(Rejection::Invalid(format!(
                "the token's typ {} is not an access token's (at+jwt, RFC 9068)",
                shown(typ)
            )));
        }
        let alg = header.alg;
        let Some((_, validation)) = self.inner.validations.iter().find(|(allowed, _)| *allowed == alg) else {
            return Err(Rejection::Invalid(format!(
                "the token is signed with {alg:?}, which is not accepted (accepted: {:?})",
                config.algorithms
            )));
        };
        if header.crit.is_some() {
            return Err(Rejection::Invalid(
                "the token's header lists critical extensions (crit) that toolgate does not understand"
                    .to_owned(),
            ));
        }
        let kid = header.kid.as_deref();
        let (keys, seen) = self.keys_for_token().await?;
        let data = match keys.select(kid, alg) {
            Selection::Found(key) => decode(token, key, validation, config)?,
            Selection::Unfit(why) => return Err(Rejection::Invalid(why)),
            Selection::Unknown => match self.refresh(Reason::UnknownKey, seen).await {
                Ok(Some(fresh)) => match fresh.set.as_deref().map(|set| set.select(kid, alg)) {
                    Some(Selection::Found(key)) => decode(token, key, validation, config)?,
                    Some(Selection::Unfit(why)) => return Err(Rejection::Invalid(why)),
                    _ => {
                        return Err(Rejection::Invalid(unknown_key(
                            kid,
                            alg,
                            "even after refetching its JWKS",
                        )));
                    }
                },
                Ok(None) => {
                    return Err(Rejection::Invalid(unknown_key(
                        kid,
                        alg,
                        "(its JWKS was refetched a moment ago)",
                    )));
                }
                Err(e) => return Err(Rejection::Unavailable(e)),
            },
        };
        let claims = data.claims;
        if claims.get("iss").and_then(Value::as_str) != Some(config.issuer.as_str()) {
            return Err(Rejection::Invalid(format!("the token's iss is not the issuer {:?}", config.issuer)));
        }
        let expires_at = seconds_claim(&claims, "exp").and_then(as_time).ok_or_else(|| bad_time("exp"))?;
        self.inner.mapper.verified(config, &claims, true, expires_at)
    }
}

pub(super) const EXPIRED: &str = "the token has expired (exp is past, beyond the allowed clock skew)";
pub(super) const NOT_YET: &str =
    "the token is not valid yet (nbf is in the future, beyond the allowed clock skew)";

/// Check the signature and the registered claims of `token` with `key`.
fn decode(
    token: &str,
    key: &jsonwebtoken::DecodingKey,
    validation: &Validation,
    config: &ResourceConfig,
) -> Result<jsonwebtoken::TokenData<Map<String, Value>>, Rejection> {
    jsonwebtoken::decode::<Map<String, Value>>(token, key, validation).map_err(|e| {
        Rejection::Invalid(match e.kind() {
            ErrorKind::InvalidSignature => "the signature does not verify with the issuer's key".to_owned(),
            ErrorKind::ExpiredSignature => EXPIRED.to_owned(),
            ErrorKind::ImmatureSignature => NOT_YET.to_owned(),
            ErrorKind::InvalidIssuer => format!("the token's iss is not the issuer {:?}", config.issuer),
            ErrorKind::InvalidAudience => wrong_audience(config),
            ErrorKind::MissingRequiredClaim(claim) => format!("the token has no {claim} claim"),
            ErrorKind::InvalidClaimFormat(claim) => format!("the token's {claim} claim is malformed"),
            ErrorKind::InvalidAlgorithm => "the token's alg does not fit the issuer's key".to_owned(),
            ErrorKind::InvalidEcdsaKey | ErrorKind::InvalidEddsaKey | ErrorKind::InvalidRsaKey(_) => {
                "the issuer's key for this token is not a valid public key".to_owned()
            }
            ErrorKind::InvalidKeyFormat => "the issuer's key does not fit the token's alg".to_owned(),
            _ => {
                "the token is not a well-formed JWT (base64url JSON header and claims, signature)".to_owned()
            }
        })
    })
}

pub(super) fn wrong_audience(config: &ResourceConfig) -> String {
    format!("the token is not meant for this server: its aud does not contain {:?}", config.resource)
}

fn unknown_key(kid: Option<&str>, alg: Algorithm, after: &str) -> String {
    match kid {
        Some(kid) => format!("the issuer has no key {} {after}", shown(kid)),
        None => format!("the token names no key (no kid) and the issuer has no {alg:?} key {after}"),
    }
}

/// A NumericDate claim: whole seconds since the epoch (a fraction is dropped).
pub(super) fn seconds_claim(claims: &Map<String, Value>, name: &str) -> Option<u64> {
    let value = claims.get(name)?;
    match value.as_u64() {
        Some(secs) => Some(secs),
        None => {
            let secs = value.as_f64()?;
            (0.0..1e12).contains(&secs).then_some(secs as u64)
        }
    }
}

/// Seconds since the epoch as a time.
pub(super) fn as_time(secs: u64) -> Option<SystemTime> {
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

pub(super) fn bad_time(claim: &str) -> Rejection {
    Rejection::Invalid(format!("the token's {claim} is not a valid time (seconds since 1970)"))
}

/// Whether `token` is a JWS in compact form (three base64url parts, the
/// first a JSON object, so starting with `ey`); anything else is opaque.
pub(super) fn looks_like_jws(token: &str) -> bool {
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let base64url = |part: &str| part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    header.starts_with("ey")
        && !payload.is_empty()
        && base64url(header)
        && base64url(payload)
        && base64url(signature)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jws_shape() {
        assert!(looks_like_jws("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"));
        assert!(looks_like_jws("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."), "alg none is a JWS to refuse");
        assert!(!looks_like_jws("opaque-token_123"));
        assert!(!looks_like_jws("ory_at_abc.def"));
        assert!(!looks_like_jws("abc.def.ghi"), "the header of a JWS is a JSON object");
        assert!(!looks_like_jws("eyJh.eyJ.c2ln.more.parts"));
        assert!(!looks_like_jws("eyJh..c2ln"));
        assert!(!looks_like_jws("eyJh.eyJ+.c2ln"));
    }
}
