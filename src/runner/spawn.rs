//! `posix_spawn` with explicit descriptors. It uses vfork semantics in glibc and musl, so its cost
//! does not grow with the host's heap the way `fork` does (Node's `child_process` forks), and it
//! runs no Rust code in the child (no `pre_exec` closures). The child gets a new session, default
//! signal dispositions (Node ignores SIGPIPE; the child must not inherit that) and an empty mask.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::unistd::Pid;

extern "C" {
    // In glibc >= 2.29, musl >= 1.1.24 and macOS >= 10.15; the libc crate does not bind it everywhere.
    fn posix_spawn_file_actions_addchdir_np(
        actions: *mut libc::posix_spawn_file_actions_t,
        path: *const libc::c_char,
    ) -> libc::c_int;
}

#[cfg(any(target_os = "linux", target_os = "android"))]
const POSIX_SPAWN_SETSID: libc::c_short = 0x80;
#[cfg(target_os = "macos")]
const POSIX_SPAWN_SETSID: libc::c_short = 0x400;

/// What the child's descriptor `target` is connected to.
pub enum ChildFd<'a> {
    /// `/dev/null`, opened in the child.
    DevNull,
    /// A descriptor of ours, duplicated onto `target` in the child.
    Dup(&'a OwnedFd),
}

pub struct SpawnSpec<'a> {
    pub program: &'a Path,
    pub argv: &'a [CString],
    pub envp: &'a [CString],
    pub cwd: &'a Path,
    /// `(target, source)` pairs; targets are 0, 1, 2 and the plan's extra descriptors.
    pub fds: Vec<(RawFd, ChildFd<'a>)>,
}

pub fn cstring(s: impl AsRef<OsStr>) -> io::Result<CString> {
    CString::new(s.as_ref().as_bytes()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte"))
}

/// Make sure no source descriptor sits on a number that a `dup2` of another pair would overwrite
/// before it is read: move low-numbered sources above every target. The copies are CLOEXEC.
pub fn lift_above(fd: OwnedFd, min: RawFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() >= min {
        return Ok(fd);
    }
    let new = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, min) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

/// A CLOEXEC pipe `(read, write)` whose ends are numbered at least `min`.
pub fn pipe_above(min: RawFd) -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(io::Error::from)?;
    Ok((lift_above(r, min)?, lift_above(w, min)?))
}

struct Attr(libc::posix_spawnattr_t);
impl Drop for Attr {
    fn drop(&mut self) {
        unsafe { libc::posix_spawnattr_destroy(&mut self.0) };
    }
}
struct Actions(libc::posix_spawn_file_actions_t);
impl Drop for Actions {
    fn drop(&mut self) {
        unsafe { libc::posix_spawn_file_actions_destroy(&mut self.0) };
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// Spawn the program. Errors are the child's exec errors as `posix_spawn` reports them
/// (ENOENT, EACCES, ENOEXEC, E2BIG, ...).
pub fn spawn(spec: &SpawnSpec) -> io::Result<Pid> {
    let program = cstring(spec.program)?;
    let cwd = cstring(spec.cwd)?;
    let dev_null = c"/dev/null";
    let mut argv: Vec<*mut libc::c_char> = spec.argv.iter().map(|a| a.as_ptr() as *mut _).collect();
    argv.push(std::ptr::null_mut());
    let mut envp: Vec<*mut libc::c_char> = spec.envp.iter().map(|a| a.as_ptr() as *mut _).collect();
    envp.push(std::ptr::null_mut());

    unsafe {
        let mut attr = Attr(std::mem::zeroed());
        check(libc::posix_spawnattr_init(&mut attr.0))?;
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        check(libc::posix_spawnattr_setsigdefault(&mut attr.0, &all))?;
        check(libc::posix_spawnattr_setsigmask(&mut attr.0, &none))?;
        let flags = libc::POSIX_SPAWN_SETSIGDEF as libc::c_short
            | libc::POSIX_SPAWN_SETSIGMASK as libc::c_short
            | POSIX_SPAWN_SETSID;
        check(libc::posix_spawnattr_setflags(&mut attr.0, flags))?;

        let mut actions = Actions(std::mem::zeroed());
        check(libc::posix_spawn_file_actions_init(&mut actions.0))?;
        for (target, source) in &spec.fds {
            match source {
                ChildFd::DevNull => {
                    let mode = if *target == 0 { libc::O_RDONLY } else { libc::O_WRONLY };
                    check(libc::posix_spawn_file_actions_addopen(&mut actions.0, *target, dev_null.as_ptr(), mode, 0))?;
                }
                ChildFd::Dup(fd) => {
                    check(libc::posix_spawn_file_actions_adddup2(&mut actions.0, fd.as_raw_fd(), *target))?;
                }
            }
        }
        check(posix_spawn_file_actions_addchdir_np(&mut actions.0, cwd.as_ptr()))?;

        let mut pid: libc::pid_t = 0;
        check(libc::posix_spawn(&mut pid, program.as_ptr(), &actions.0, &attr.0, argv.as_ptr(), envp.as_ptr()))?;
        Ok(Pid::from_raw(pid))
    }
}
