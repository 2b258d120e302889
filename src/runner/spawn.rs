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

type AddChdir = unsafe extern "C" fn(*mut libc::posix_spawn_file_actions_t, *const libc::c_char) -> libc::c_int;
type AddCloseFrom = unsafe extern "C" fn(*mut libc::posix_spawn_file_actions_t, libc::c_int) -> libc::c_int;

/// The `_np` file actions are looked up at run time, not linked: `addchdir_np` needs glibc 2.29 and
/// `addclosefrom_np` glibc 2.34, and a hard reference would stop the addon from loading at all on
/// an older glibc (the release build targets glibc 2.17).
fn lookup<T: Copy>(name: &std::ffi::CStr) -> Option<T> {
    let ptr = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if ptr.is_null() {
        None
    } else {
        Some(unsafe { std::mem::transmute_copy::<*mut libc::c_void, T>(&ptr) })
    }
}

fn addchdir() -> Option<AddChdir> {
    static F: std::sync::OnceLock<Option<AddChdir>> = std::sync::OnceLock::new();
    *F.get_or_init(|| lookup(c"posix_spawn_file_actions_addchdir_np"))
}

fn addclosefrom() -> Option<AddCloseFrom> {
    static F: std::sync::OnceLock<Option<AddCloseFrom>> = std::sync::OnceLock::new();
    *F.get_or_init(|| lookup(c"posix_spawn_file_actions_addclosefrom_np"))
}

/// Apple's flag: close every descriptor not named in the file actions.
#[cfg(target_os = "macos")]
const POSIX_SPAWN_CLOEXEC_DEFAULT: libc::c_short = 0x4000;

#[cfg(any(target_os = "linux", target_os = "android"))]
const POSIX_SPAWN_SETSID: libc::c_short = 0x80;
#[cfg(target_os = "macos")]
const POSIX_SPAWN_SETSID: libc::c_short = 0x400;

/// What the child's descriptor `target` is connected to.
#[derive(Clone, Copy)]
pub enum ChildFd<'a> {
    /// `/dev/null`, opened in the child.
    DevNull,
    /// A descriptor of ours, duplicated onto `target` in the child.
    Dup(&'a OwnedFd),
    /// A terminal opened by path in the child, read-write and without `O_NOCTTY`: opened by the
    /// session leader POSIX_SPAWN_SETSID made (glibc and musl run setsid before the file actions),
    /// it becomes the child's controlling terminal. Linux only (XNU runs setsid after them).
    ControllingTerminal(&'a std::ffi::CStr),
    /// The child's own descriptor `fd` (set up by an earlier pair), duplicated onto `target`.
    SameAs(RawFd),
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
    let (r, w) = super::cloexec::pipe()?;
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
        #[allow(unused_mut)]
        let mut flags = libc::POSIX_SPAWN_SETSIGDEF as libc::c_short
            | libc::POSIX_SPAWN_SETSIGMASK as libc::c_short
            | POSIX_SPAWN_SETSID;
        #[cfg(target_os = "macos")]
        {
            flags |= POSIX_SPAWN_CLOEXEC_DEFAULT;
        }
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
                ChildFd::ControllingTerminal(path) => {
                    check(libc::posix_spawn_file_actions_addopen(&mut actions.0, *target, path.as_ptr(), libc::O_RDWR, 0))?;
                }
                ChildFd::SameAs(fd) => {
                    check(libc::posix_spawn_file_actions_adddup2(&mut actions.0, *fd, *target))?;
                }
            }
        }
        // Descriptors the host left without CLOEXEC (inherited by Node from its parent, or opened
        // by other native code) must not reach an untrusted command: close all above ours.
        if let Some(closefrom) = addclosefrom() {
            let first_free = spec.fds.iter().map(|(t, _)| *t).max().unwrap_or(2) + 1;
            check(closefrom(&mut actions.0, first_free))?;
        }
        let chdir = addchdir().ok_or_else(|| {
            io::Error::new(io::ErrorKind::Unsupported, "the C library lacks posix_spawn_file_actions_addchdir_np (needs glibc >= 2.29, musl >= 1.1.24 or macOS >= 10.15)")
        })?;
        check(chdir(&mut actions.0, cwd.as_ptr()))?;

        let mut pid: libc::pid_t = 0;
        check(libc::posix_spawn(&mut pid, program.as_ptr(), &actions.0, &attr.0, argv.as_ptr(), envp.as_ptr()))?;
        Ok(Pid::from_raw(pid))
    }
}
