//! The host's `getaddrinfo`, keeping what kind of failure it reported: the proxy must tell "the
//! name does not exist" (an authoritative answer) from "the lookup failed" (a timeout, a failing
//! name server), which `std`'s `ToSocketAddrs` folds into one error whose text is localised.
//!
//! The helper makes the call (`sandspawn-helper --resolve NAME`), in a process of its own that the
//! proxy kills when nobody waits for the answer any more: a thread blocked in `getaddrinfo` cannot
//! be stopped, and would hold its lookup slots until the system resolver gives up. The answer
//! travels as one line (`answer_line`, `parse_answer`).

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

/// The addresses of `name` (blocking: the helper's `--resolve`).
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

/// The answer as the helper writes it: `ok ADDR...`, `not_found WHY` or `failed WHY`, one line.
pub fn answer_line(answer: &Result<Vec<IpAddr>, LookupError>) -> String {
    let one_line = |why: &str| why.replace(['\n', '\r'], " ");
    match answer {
        Ok(addrs) => addrs.iter().fold("ok".to_string(), |line, a| format!("{line} {a}")) + "\n",
        Err(LookupError::NotFound(why)) => format!("not_found {}\n", one_line(why)),
        Err(LookupError::Failed(why)) => format!("failed {}\n", one_line(why)),
    }
}

/// What `answer_line` wrote. Anything else (the helper killed mid-write, a stray byte) is a failed
/// lookup, never "does not exist": only an authoritative answer may say that.
pub fn parse_answer(text: &str) -> Result<Vec<IpAddr>, LookupError> {
    let garbled = || LookupError::Failed("the lookup gave no answer".into());
    let line = text.strip_suffix('\n').filter(|l| !l.contains('\n')).ok_or_else(garbled)?;
    let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
    match kind {
        "ok" => {
            let addrs = rest.split(' ').map(str::parse).collect::<Result<Vec<IpAddr>, _>>().map_err(|_| garbled())?;
            if addrs.is_empty() {
                return Err(garbled());
            }
            Ok(addrs)
        }
        "not_found" => Err(LookupError::NotFound(rest.to_string())),
        "failed" => Err(LookupError::Failed(rest.to_string())),
        _ => Err(garbled()),
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

    #[test]
    fn answers_cross_as_one_line_and_anything_else_is_a_failure() {
        let addrs = vec![IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1)), IpAddr::V6(Ipv6Addr::LOCALHOST)];
        let answers = [Ok(addrs), Err(LookupError::NotFound("Name or service not known".into())), Err(LookupError::Failed("Temporary failure".into()))];
        for answer in answers {
            assert_eq!(parse_answer(&answer_line(&answer)), answer);
        }
        assert_eq!(answer_line(&Err(LookupError::Failed("a\nb".into()))), "failed a b\n");
        for garbled in ["", "ok", "ok\n", "ok 192.0.2.1", "ok 192.0.2.1 x\n", "not_found x\nmore\n", "maybe\n", "not_fou"] {
            assert!(matches!(parse_answer(garbled), Err(LookupError::Failed(_))), "{garbled:?}");
        }
    }
}
