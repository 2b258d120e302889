//! The per-run proxy credential (macOS). There the proxy listens on the host's own loopback, where
//! any local process can connect to it; the credential, which only the run's command is given (in
//! the proxy URLs of its environment), is what makes the proxy the run's alone: a request without
//! it is refused before any policy decision, so no other process can reach the run's allowed hosts
//! (or its `allowPrivateAddresses`) through it, nor fill the run's `networkDenials`. HTTP clients
//! send it as `Proxy-Authorization: Basic` (RFC 7617), SOCKS5 clients as user name and password
//! (RFC 1929). On Linux the proxy's listener lives in the sandbox's own network namespace, which
//! no other process can reach, so there is none.

use std::io::Read;

/// The user name in the proxy URL (fixed: the secret is the password).
pub const USER: &str = "sandspawn";

/// A run's secret: 128 bits from the OS, as 32 lowercase hex digits (nothing in a URL to escape).
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    secret: String,
}

// Never printed: a debug dump of a plan or request must not carry it.
impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credential(..)")
    }
}

impl Credential {
    /// A fresh credential from `/dev/urandom`.
    pub fn generate() -> std::io::Result<Credential> {
        let mut bytes = [0u8; 16];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
        Ok(Credential { secret: bytes.iter().map(|b| format!("{b:02x}")).collect() })
    }

    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// `true` for a `Proxy-Authorization` value carrying this credential (`Basic`, any case).
    pub fn accepts_header(&self, value: &[u8]) -> bool {
        let Ok(text) = std::str::from_utf8(value) else { return false };
        let mut parts = text.trim().splitn(2, char::is_whitespace);
        let (Some(scheme), Some(token)) = (parts.next(), parts.next()) else { return false };
        scheme.eq_ignore_ascii_case("basic") && same(token.trim().as_bytes(), base64(format!("{USER}:{}", self.secret).as_bytes()).as_bytes())
    }

    /// `true` for SOCKS5 user name and password carrying this credential.
    pub fn accepts_pair(&self, user: &[u8], password: &[u8]) -> bool {
        // Both compared, always: the time taken does not tell which one was wrong.
        same(user, USER.as_bytes()) & same(password, self.secret.as_bytes())
    }
}

/// Byte strings compared in a time that depends on their lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Standard base64 with padding (RFC 4648 §4), as `Basic` credentials are sent.
pub(crate) fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = (u32::from(chunk[0]) << 16) | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8) | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
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
    fn base64_matches_rfc_4648_vectors() {
        for (plain, encoded) in [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")] {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain:?}");
        }
    }

    #[test]
    fn fresh_secret_each_time_and_never_printed() {
        let (a, b) = (Credential::generate().unwrap(), Credential::generate().unwrap());
        assert_ne!(a.secret(), b.secret());
        assert_eq!(a.secret().len(), 32);
        assert!(a.secret().bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert!(!format!("{a:?}").contains(a.secret()));
    }

    #[test]
    fn only_this_credential_is_accepted() {
        let c = Credential { secret: "0123456789abcdef0123456789abcdef".into() };
        let good = base64(format!("sandspawn:{}", c.secret()).as_bytes());
        assert!(c.accepts_header(format!("Basic {good}").as_bytes()));
        assert!(c.accepts_header(format!("basic   {good} ").as_bytes()));
        for bad in [
            String::new(),
            format!("Bearer {good}"),
            format!("Basic {}", base64(b"sandspawn:0123456789abcdef0123456789abcdee")),
            format!("Basic {}", base64(b"other:0123456789abcdef0123456789abcdef")),
            format!("Basic {}", base64(b"sandspawn:")),
            "Basic".into(),
            format!("Basic {good}x"),
        ] {
            assert!(!c.accepts_header(bad.as_bytes()), "{bad:?}");
        }
        assert!(!c.accepts_header(&[0xff, 0xfe]));
        assert!(c.accepts_pair(b"sandspawn", c.secret().as_bytes()));
        assert!(!c.accepts_pair(b"sandspawn", b"0123456789abcdef0123456789abcdeF"));
        assert!(!c.accepts_pair(b"sandspawnx", c.secret().as_bytes()));
        assert!(!c.accepts_pair(b"", b""));
    }
}
