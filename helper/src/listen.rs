//! The helper's network step (`--net-listen=FD`): the in-sandbox half of the allow-list bridge.
//!
//! Inside bwrap's empty network namespace only `lo` exists. The helper binds a TCP listener on
//! `127.0.0.1:0` (and the same port on `[::1]` when IPv6 is there), sends the listening descriptors
//! to the host over the inherited `AF_UNIX` descriptor with SCM_RIGHTS, closes its copies and
//! returns the port. The host's proxy then accepts on those listeners: every accepted connection
//! lives in the sandbox's namespace, so no proxy port exists on the host, and nothing of ours keeps
//! running inside. `sendmsg` on an inherited socket is not `socket(AF_UNIX)`, so the seccomp filter
//! that blocks Unix sockets does not stand in the way. No `SO_REUSEPORT`: the command cannot bind
//! the proxy's port to intercept it.

use sandspawn_helper::report::{Failure, Stage};

use crate::last_errno;

fn failure(what: &str) -> Failure {
    let e = last_errno();
    Failure { stage: Stage::Setup, errno: e, message: format!("network bridge: {what} failed: {}", sandspawn_helper::report::scm_rights_refused(e)) }
}

/// Bind, listen, hand the listeners to the host; returns the port the command must use.
pub fn bridge(ctl: i32) -> Result<u16, Failure> {
    let v4 = listen_v4()?;
    let port = local_port(v4)?;
    // Best effort: a kernel without IPv6 has no `::1`; clients are given 127.0.0.1 anyway.
    let v6 = listen_v6(port);
    let mut fds = vec![v4];
    fds.extend(v6);
    let sent = send(ctl, port, &fds);
    for fd in fds {
        unsafe { libc::close(fd) };
    }
    unsafe { libc::close(ctl) };
    sent.map(|()| port)
}

fn listen_v4() -> Result<i32, Failure> {
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(failure("socket(AF_INET)"));
    }
    let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    addr.sin_family = libc::AF_INET as libc::sa_family_t;
    addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    if unsafe { libc::bind(fd, (&addr as *const libc::sockaddr_in).cast(), len) } != 0 {
        return Err(failure("binding 127.0.0.1"));
    }
    if unsafe { libc::listen(fd, 1024) } != 0 {
        return Err(failure("listen"));
    }
    Ok(fd)
}

fn listen_v6(port: u16) -> Option<i32> {
    let fd = unsafe { libc::socket(libc::AF_INET6, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return None;
    }
    let one: libc::c_int = 1;
    let mut addr: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
    addr.sin6_family = libc::AF_INET6 as libc::sa_family_t;
    addr.sin6_port = port.to_be();
    addr.sin6_addr.s6_addr = std::net::Ipv6Addr::LOCALHOST.octets();
    let len = std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t;
    let ok = unsafe {
        libc::setsockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, (&one as *const libc::c_int).cast(), 4) == 0
            && libc::bind(fd, (&addr as *const libc::sockaddr_in6).cast(), len) == 0
            && libc::listen(fd, 1024) == 0
    };
    if ok {
        Some(fd)
    } else {
        unsafe { libc::close(fd) };
        None
    }
}

fn local_port(fd: i32) -> Result<u16, Failure> {
    let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    if unsafe { libc::getsockname(fd, (&mut addr as *mut libc::sockaddr_in).cast(), &mut len) } != 0 {
        return Err(failure("getsockname"));
    }
    Ok(u16::from_be(addr.sin_port))
}

/// One message `v1 port=P` carrying the listeners (see `network::bridge` in the addon).
fn send(ctl: i32, port: u16, fds: &[i32]) -> Result<(), Failure> {
    let text = format!("v1 port={port}");
    let mut iov = libc::iovec { iov_base: text.as_ptr() as *mut libc::c_void, iov_len: text.len() };
    let data_len = std::mem::size_of_val(fds) as u32;
    let space = unsafe { libc::CMSG_SPACE(data_len) } as usize;
    let mut control = vec![0u8; space];
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(data_len) as _;
        std::ptr::copy_nonoverlapping(fds.as_ptr().cast::<u8>(), libc::CMSG_DATA(cmsg), data_len as usize);
    }
    let _full = FullNofile::raise();
    loop {
        let n = unsafe { libc::sendmsg(ctl, &msg, libc::MSG_NOSIGNAL) };
        if n >= 0 {
            return Ok(());
        }
        if last_errno() != libc::EINTR {
            return Err(failure("sending the listener to the host"));
        }
    }
}

/// The soft `RLIMIT_NOFILE` raised to the hard one while it lives, restored after: the kernel
/// refuses the send when the user's descriptors in flight exceed the soft limit, and every run's
/// command has a hard limit well below this one (`rlimit::nofile_share`), so no run can fill the
/// count to here. Restored so the command keeps the soft limit it was given. Best effort: if the
/// limit cannot be read or raised, the send is tried as it is, and a refusal says why (`report::scm_rights_refused`).
struct FullNofile(Option<libc::rlimit>);

impl FullNofile {
    fn raise() -> FullNofile {
        let mut was = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut was) } != 0 || was.rlim_cur == was.rlim_max {
            return FullNofile(None);
        }
        let full = libc::rlimit { rlim_cur: was.rlim_max, rlim_max: was.rlim_max };
        FullNofile((unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &full) } == 0).then_some(was))
    }
}

impl Drop for FullNofile {
    fn drop(&mut self) {
        if let Some(was) = self.0 {
            // Lowering a soft limit never fails.
            unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &was) };
        }
    }
}
