//! Provider API keys sealed at rest with ChaCha20-Poly1305 (RustCrypto):
//! a random 96-bit nonce per record, and the owner and provider bound in as
//! associated data so a sealed key cannot be moved to another row.

use std::fmt;

use chacha20poly1305::aead::{Aead, Generate, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Nonce};
use toolgate_core::{ErrorCode, Secret, Signal, ToolError};

use crate::config::{ENV_SECRET_KEY, TravelConfig};
use crate::error::Result;
use crate::store::Store;
use crate::store::keys::SealedKey;

/// How an operator enables key storage; part of every "no key" answer.
pub(crate) fn how_to_set_key() -> String {
    format!(
        "set {ENV_SECRET_KEY} to 64 hex characters (32 random bytes, e.g. the output of `openssl rand -hex 32`) \
         or TravelConfig::secret_key, then restart the server"
    )
}

/// The AEAD cipher built from the configured key. Its `Debug` shows nothing of the key.
#[derive(Clone)]
pub(crate) struct Cipher(ChaCha20Poly1305);

impl fmt::Debug for Cipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Cipher([redacted])")
    }
}

/// Why there is no cipher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NoCipher {
    /// No key configured.
    Missing,
    /// A key is configured but is not 64 hex characters.
    Malformed,
}

impl NoCipher {
    pub(crate) fn to_tool_error(&self) -> ToolError {
        let (reason, message) = match self {
            NoCipher::Missing => (
                "no encryption key is configured for stored API keys",
                format!(
                    "API keys cannot be stored: no encryption key is configured. An operator must {}",
                    how_to_set_key()
                ),
            ),
            NoCipher::Malformed => (
                "the configured encryption key is not 64 hex characters",
                format!(
                    "API keys cannot be stored: the configured encryption key is malformed. An operator must {}",
                    how_to_set_key()
                ),
            ),
        };
        // Not transient: retrying cannot help until an operator configures the key.
        ToolError::new(ErrorCode::Unavailable, message)
            .transient(false)
            .with_signal(Signal::Unavailable { reason: reason.into(), how_to_enable: how_to_set_key() })
    }
}

impl Cipher {
    /// The cipher of the configured key.
    pub(crate) fn from_secret(secret: Option<&Secret>) -> Result<Self, NoCipher> {
        let secret = secret.ok_or(NoCipher::Missing)?;
        let text = secret.expose().trim();
        if text.len() != 64 {
            return Err(NoCipher::Malformed);
        }
        let bytes = hex::decode(text).map_err(|_| NoCipher::Malformed)?;
        ChaCha20Poly1305::new_from_slice(&bytes).map(Cipher).map_err(|_| NoCipher::Malformed)
    }

    fn aad(user_id: &str, provider: &str) -> Vec<u8> {
        // Length-prefixed so that ("ab", "c") and ("a", "bc") differ.
        let mut aad = Vec::with_capacity(user_id.len() + provider.len() + 16);
        aad.extend_from_slice(&(user_id.len() as u64).to_be_bytes());
        aad.extend_from_slice(user_id.as_bytes());
        aad.extend_from_slice(provider.as_bytes());
        aad
    }

    /// Seal a key for (user, provider) with a fresh random nonce.
    pub(crate) fn seal(
        &self,
        user_id: &str,
        provider: &str,
        plaintext: &Secret,
    ) -> Result<SealedKey, ToolError> {
        let nonce = Nonce::try_generate().map_err(|_| {
            tracing::error!(target: "toolgate_travel::crypto", "the system random number generator failed");
            ToolError::internal()
        })?;
        let aad = Self::aad(user_id, provider);
        let ciphertext = self
            .0
            .encrypt(&nonce, Payload { msg: plaintext.expose().as_bytes(), aad: &aad })
            .map_err(|_| ToolError::internal())?;
        Ok(SealedKey { nonce: nonce.to_vec(), ciphertext })
    }

    /// Open a sealed key; `None` when it does not authenticate (wrong key, moved row, tampering).
    pub(crate) fn open(&self, user_id: &str, provider: &str, sealed: &SealedKey) -> Option<Secret> {
        let nonce = Nonce::try_from(sealed.nonce.as_slice()).ok()?;
        let aad = Self::aad(user_id, provider);
        let plain = self.0.decrypt(&nonce, Payload { msg: &sealed.ciphertext, aad: &aad }).ok()?;
        String::from_utf8(plain).ok().map(Secret::new)
    }
}

/// Read back and decrypt the stored API key of (user, provider), for the
/// code that calls the flight provider. `Ok(None)` when none is stored or it
/// does not authenticate with the configured key.
pub async fn open_api_key(
    store: &Store,
    config: &TravelConfig,
    user_id: &str,
    provider: &str,
) -> Result<Option<Secret>, ToolError> {
    let cipher = Cipher::from_secret(config.secret_key.as_ref()).map_err(|e| e.to_tool_error())?;
    let provider = provider.trim().to_lowercase();
    let sealed =
        store.sealed_api_key(user_id, &provider).await.map_err(|e| e.to_tool_error("reading the API key"))?;
    Ok(sealed.and_then(|s| cipher.open(user_id, &provider, &s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    #[test]
    fn seal_and_open_round_trip_with_fresh_nonces() {
        let cipher = Cipher::from_secret(Some(&Secret::new(KEY))).unwrap();
        let secret = Secret::new("sk-live-abc");
        let a = cipher.seal("alice", "amadeus", &secret).unwrap();
        let b = cipher.seal("alice", "amadeus", &secret).unwrap();
        assert_ne!(a.nonce, b.nonce);
        assert_ne!(a.ciphertext, b.ciphertext);
        assert!(!String::from_utf8_lossy(&a.ciphertext).contains("sk-live-abc"));
        assert_eq!(cipher.open("alice", "amadeus", &a).unwrap().expose(), "sk-live-abc");
        // bound to its row
        assert!(cipher.open("bob", "amadeus", &a).is_none());
        assert!(cipher.open("alice", "sabre", &a).is_none());
    }

    #[test]
    fn bad_keys_are_refused() {
        assert_eq!(Cipher::from_secret(None).unwrap_err(), NoCipher::Missing);
        for bad in ["", "abc", &"zz".repeat(32), &"00".repeat(31)] {
            assert_eq!(
                Cipher::from_secret(Some(&Secret::new(bad))).unwrap_err(),
                NoCipher::Malformed,
                "{bad}"
            );
        }
        let wrong = Cipher::from_secret(Some(&Secret::new("ff".repeat(32)))).unwrap();
        let right = Cipher::from_secret(Some(&Secret::new(KEY))).unwrap();
        let sealed = right.seal("u", "p", &Secret::new("k")).unwrap();
        assert!(wrong.open("u", "p", &sealed).is_none());
        let err = NoCipher::Missing.to_tool_error();
        assert_eq!(err.code, ErrorCode::Unavailable);
        assert!(err.message.contains(ENV_SECRET_KEY));
    }
}
