//! The payload of a JSON Web Token, for the few claims a login store keeps only there
//! (Codex's plan and expiry). The signature is not checked: agent does not trust the token,
//! it only reads what the CLI's own store says about itself, and never sends it anywhere.

use serde_json::Value;

/// The decoded payload (the middle part) of `token`; `None` when it is not a JWT.
pub fn payload(token: &str) -> Option<Value> {
    let mut parts = token.split('.');
    let (_header, payload, _signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    serde_json::from_slice(&base64url_decode(payload)?).ok()
}

/// Base64url (RFC 4648 §5) without or with padding.
pub fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buffer: u32 = 0;
    let mut bits = 0;
    for byte in text.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((buffer >> bits) & 0xff).expect("masked to a byte"));
        }
    }
    // A single leftover character carries fewer than 8 bits: not a valid encoding.
    (bits < 6).then_some(out)
}

/// Base64url without padding, for test fixtures that build tokens.
#[cfg(test)]
pub fn base64url_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_round_trips_every_length_and_refuses_other_alphabets() {
        let mut rng = fastrand::Rng::with_seed(7);
        for len in 0..200 {
            let bytes: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
            let text = base64url_encode(&bytes);
            assert_eq!(
                base64url_decode(&text).as_deref(),
                Some(&bytes[..]),
                "{text}"
            );
        }
        assert_eq!(base64url_decode("aGk=").unwrap(), b"hi");
        assert!(base64url_decode("a+b/").is_none());
        assert!(base64url_decode("a").is_none());
    }

    #[test]
    fn the_payload_is_read_without_the_signature() {
        let body = base64url_encode(br#"{"exp":1789400000,"sub":"u"}"#);
        let token = format!("eyJhbGciOiJSUzI1NiJ9.{body}.bm90LWNoZWNrZWQ");
        assert_eq!(payload(&token).unwrap()["exp"], 1_789_400_000);
        assert!(payload("not-a-jwt").is_none());
        assert!(payload(&format!("a.{body}.c.d")).is_none());
    }
}
