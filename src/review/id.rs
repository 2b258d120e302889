//! Change set ids: `cs-` and 16 lowercase hex digits. An id names a directory in the store, so
//! anything else (`..`, a slash, another length) is refused before any path is built from it.

use crate::error::{Result, SandboxError};

/// A new id: the time and a counter mixed with the process id, hashed (unique among this user's
/// sets; the store creates its directory exclusively, so a collision fails, never merges).
pub fn new() -> String {
    use sha2::{Digest, Sha256};
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let mut random = [0u8; 8];
    // SAFETY: into a buffer of the size passed; failure leaves zeros (still unique by time).
    // musl has no getentropy, macOS no getrandom.
    #[cfg(target_os = "linux")]
    unsafe { libc::getrandom(random.as_mut_ptr().cast(), random.len(), 0) };
    #[cfg(not(target_os = "linux"))]
    unsafe { libc::getentropy(random.as_mut_ptr().cast(), random.len()) };
    let seed = format!("{nanos}-{}-{}-{:?}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed), random);
    let digest = Sha256::digest(seed.as_bytes());
    format!("cs-{}", digest.iter().take(8).map(|b| format!("{b:02x}")).collect::<String>())
}

/// `id` if it is well-formed, else `ERR_SANDBOX_INVALID_OPTIONS`.
pub fn check(id: &str) -> Result<&str> {
    let hex = id.strip_prefix("cs-").filter(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    match hex {
        Some(_) => Ok(id),
        None => Err(SandboxError::invalid("changeSet", format!("{id:?} is not a change set id (cs- and 16 hex digits)"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_ids_are_well_formed_and_distinct() {
        let (a, b) = (new(), new());
        assert!(check(&a).is_ok() && check(&b).is_ok());
        assert_ne!(a, b);
    }

    #[test]
    fn refuses_what_could_name_another_path() {
        for bad in ["", "cs-", "../cs-0123456789abcdef", "cs-0123456789abcdef/..", "cs-0123456789ABCDEF", "cs-0123456789abcde", "cs-0123456789abcdef0", "/etc", "cs-../../../../etc", "cs-0123456789abcde\0"] {
            assert!(check(bad).is_err(), "{bad:?}");
        }
    }
}
