//! The host's `getaddrinfo`, keeping what kind of failure it reported: the proxy must tell "the
//! name does not exist" (an authoritative answer) from "the lookup failed" (a timeout, a failing
//! name server), which `std`'s `ToSocketAddrs` folds into one error whose text is localised.

use std::ffi::{CStr, CString};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why a lookup gave no address. The difference matters through the user's proxy: only a name the
/// host's resolver says does not exist may be handed over unresolved (`dial`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupError {
    /// The name server answered that the name does not exist, or has no address (NXDOMAIN, no data).
    NotFound(String),
    /// No answer about the name: a timeout (waiting for a lookup slot included), a failing server.
    Failed(String),
}

impl std::fmt::Display for LookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LookupError::NotFound(why) | LookupError::Failed(why) => f.write_str(why),
        }
    }
}

/// The addresses of `name` (blocking: call it in a thread of its own).
pub fn lookup(name: &str) -> Result<Vec<IpAddr>, LookupError> {
    let c_name = CString::new(name).map_err(|_| LookupError::Failed("the name holds a NUL byte".into()))?;
    // SAFETY: an all-zero addrinfo is a valid "no hints" value; the fields set below are plain ints.
    let mut hints: libc::addrinfo = unsafe { std::mem::zeroed() };
    hints.ai_family = libc::AF_UNSPEC;
    hints.ai_socktype = libc::SOCK_STREAM;
    let mut list: *mut libc::addrinfo = std::ptr::null_mut();
    // SAFETY: valid NUL-terminated name, no service, valid hints, and an out pointer we own.
    let code = unsafe { libc::getaddrinfo(c_name.as_ptr(), std::ptr::null(), &hints, &mut list) };
    if code != 0 {
        return Err(classify(code));
    }
    let mut addrs = Vec::new();
    let mut entry = list;
    while !entry.is_null() {
        // SAFETY: `entry` is a node of the list getaddrinfo returned, not yet freed.
        let ai = unsafe { &*entry };
        if let Some(a) = address_of(ai) {
            if !addrs.contains(&a) {
                addrs.push(a);
            }
        }
        entry = ai.ai_next;
    }
    // SAFETY: the list getaddrinfo returned, freed once; nothing points into it any more.
    unsafe { libc::freeaddrinfo(list) };
    if addrs.is_empty() {
        return Err(LookupError::NotFound("the name has no IPv4 or IPv6 address".into()));
    }
    Ok(addrs)
}

/// A failure code as the kind of answer it is. Only "no such name" and "no address of that kind"
/// are authoritative; every other code (EAI_AGAIN: a timeout or a failing server; EAI_FAIL,
/// EAI_SYSTEM, EAI_MEMORY...) says nothing about the name.
fn classify(code: libc::c_int) -> LookupError {
    let why = if code == libc::EAI_SYSTEM {
        std::io::Error::last_os_error().to_string()
    } else {
        // SAFETY: gai_strerror returns a static NUL-terminated string for any code.
        unsafe { CStr::from_ptr(libc::gai_strerror(code)) }.to_string_lossy().into_owned()
    };
    if code == libc::EAI_NONAME || code == libc::EAI_NODATA {
        LookupError::NotFound(why)
    } else {
        LookupError::Failed(why)
    }
}

fn address_of(ai: &libc::addrinfo) -> Option<IpAddr> {
    if ai.ai_addr.is_null() {
        return None;
    }
    match ai.ai_family {
        libc::AF_INET if ai.ai_addrlen as usize >= std::mem::size_of::<libc::sockaddr_in>() => {
            // SAFETY: family and length say the address is a sockaddr_in.
            let sin = unsafe { &*(ai.ai_addr as *const libc::sockaddr_in) };
            Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr))))
        }
        libc::AF_INET6 if ai.ai_addrlen as usize >= std::mem::size_of::<libc::sockaddr_in6>() => {
            // SAFETY: family and length say the address is a sockaddr_in6.
            let sin6 = unsafe { &*(ai.ai_addr as *const libc::sockaddr_in6) };
            Some(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_resolve_and_failure_codes_are_classified() {
        // Numeric hosts never leave the process (no name server is asked).
        assert_eq!(lookup("127.0.0.1").unwrap(), vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        assert_eq!(lookup("::1").unwrap(), vec![IpAddr::V6(Ipv6Addr::LOCALHOST)]);
        assert!(matches!(classify(libc::EAI_NONAME), LookupError::NotFound(_)));
        assert!(matches!(classify(libc::EAI_NODATA), LookupError::NotFound(_)));
        assert!(matches!(classify(libc::EAI_AGAIN), LookupError::Failed(_)));
        assert!(matches!(classify(libc::EAI_FAIL), LookupError::Failed(_)));
        assert!(matches!(lookup("a\0b"), Err(LookupError::Failed(_))));
    }
}
