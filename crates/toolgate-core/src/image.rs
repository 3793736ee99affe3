//! [`Image`]: a picture a tool answers beside its structured result (a chart,
//! a screenshot an upstream MCP server returned). MCP carries it as an
//! `ImageContent` block; the envelope keeps it under `images`.

use serde::{Deserialize, Serialize};

/// An image, base64-encoded as MCP carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// The media type, e.g. `image/png`.
    pub mime_type: String,
    /// The bytes, standard base64 with padding.
    pub data: String,
}

impl Image {
    /// An image from bytes already encoded as base64.
    pub fn from_base64(mime_type: impl Into<String>, data: impl Into<String>) -> Self {
        Self { mime_type: mime_type.into(), data: data.into() }
    }

    /// A PNG from its raw bytes.
    pub fn png(bytes: &[u8]) -> Self {
        Self { mime_type: "image/png".into(), data: base64_encode(bytes) }
    }
}

/// Standard base64 with padding, written here because this crate keeps no
/// dependency beyond serde for one 20-line function.
fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_examples() {
        for (raw, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64_encode(raw.as_bytes()), encoded);
        }
        let image = Image::png(&[0x89, b'P', b'N', b'G']);
        assert_eq!(image.mime_type, "image/png");
        assert_eq!(image.data, "iVBORw==");
    }
}
