//! The Landlock mode's confinement of the command's process, after fork and before exec:
//! a session of its own, no capabilities, no_new_privs, the Landlock ruleset, the seccomp filter.
//! The ruleset and the filter are built by the supervisor before it forks (`prepare`), so a path
//! that cannot be opened is reported before any command process exists.

use std::path::Path;

use sandspawn_helper::landlock::{self, Handled};
use sandspawn_helper::protocol::LandlockSteps;
use sandspawn_helper::report::{Failure, setup};
use sandspawn_helper::seccomp;

use crate::{describe, last_errno};

const SYS_CREATE_RULESET: libc::c_long = 444;
const SYS_ADD_RULE: libc::c_long = 445;
const SYS_RESTRICT_SELF: libc::c_long = 446;
const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: libc::c_long = 1;

#[repr(C)]
struct RulesetAttr {
    fs: u64,
    net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneath {
    allowed: u64,
    parent_fd: i32,
}

/// The kernel's Landlock ABI (0 when Landlock is absent or disabled).
pub fn kernel_abi() -> u32 {
    let rc = unsafe { libc::syscall(SYS_CREATE_RULESET, std::ptr::null::<RulesetAttr>(), 0usize, CREATE_RULESET_VERSION) };
    if rc < 0 {
        0
    } else {
        rc as u32
    }
}

/// Everything the command's process applies, built in the supervisor.
pub struct Prepared {
    ruleset_fd: i32,
    filter: Vec<libc::sock_filter>,
}

pub fn prepare(ll: &LandlockSteps) -> Result<Prepared, Failure> {
    let kernel = kernel_abi();
    if kernel < ll.abi {
        return Err(setup(0, format!("the kernel's Landlock ABI is {kernel}, the plan needs {}", ll.abi)));
    }
    let abi = ll.abi.min(landlock::MAX_KNOWN_ABI);
    // The network on: the Internet families (with `AF_UNIX`, or without it when the policy
    // refused Unix sockets by name); the Landlock mode's other plans have none of them.
    let network = matches!(ll.sockets, seccomp::Sockets::InetAndUnix | seccomp::Sockets::Inet);
    let Handled { fs, net, scoped } = landlock::handled(abi, network);
    let attr = RulesetAttr { fs, net, scoped };
    let fd = unsafe { libc::syscall(SYS_CREATE_RULESET, &attr as *const RulesetAttr, landlock::ruleset_attr_size(abi), 0u32) };
    if fd < 0 {
        let e = last_errno();
        return Err(setup(e, format!("creating the Landlock ruleset failed: {}", describe(e))));
    }
    let ruleset_fd = fd as i32;
    let rules = ll.list.iter().map(|p| (Path::new(p), None, Access::List)).chain(ll.read.iter().map(|p| (Path::new(p), None, Access::Read)));
    let rules = rules.chain(ll.write.iter().map(|w| (w.path.as_path(), w.id, Access::Write)));
    for (path, id, access) in rules {
        if let Err(f) = add_rule(ruleset_fd, path, id, access, abi) {
            unsafe { libc::close(ruleset_fd) };
            return Err(f);
        }
    }
    let arch = seccomp::Arch::native()
        .ok_or_else(|| setup(0, format!("no seccomp filter for this architecture ({})", std::env::consts::ARCH)))?;
    // Without Landlock's signal scope (ABI 6) the filter keeps the command's signals off this
    // supervisor (about to fork it): it alone ends the command's tree.
    // SAFETY: getpid has no preconditions.
    let shield = (abi < landlock::SIGNAL_SCOPE_ABI).then(|| unsafe { libc::getpid() } as u32);
    let filter = crate::sock_filters(seccomp::program(arch, seccomp::Filter { sockets: ll.sockets, tracing: seccomp::Tracing::Denied, shield }));
    Ok(Prepared { ruleset_fd, filter })
}

/// What a rule grants on its tree.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    /// Listing directories (no file content).
    List,
    /// Reading, listing, executing.
    Read,
    /// Everything the ABI handles.
    Write,
}

/// One rule. A path gone since the plan was built grants nothing. A writable path is opened
/// without following a final symlink, and a symlink is skipped: the plan listed a real entry, and
/// one swapped for a link since must not lend its rights to the link's target (stricter, never
/// weaker). A writable path the plan listed as entry `id` must still be that entry, reached without
/// a link on its path (`open_rule`): another one, renamed into its place since, or a link above it,
/// stops the supervisor before the command (`Stage::Changed`).
fn add_rule(ruleset_fd: i32, path: &Path, id: Option<(u64, u64)>, access: Access, abi: u32) -> Result<(), Failure> {
    let fd = match open_rule(path, id, access) {
        Ok(fd) => fd,
        Err(e) if e == libc::ENOENT => return Ok(()),
        Err(e) if id.is_some() && matches!(e, libc::ELOOP | libc::ENOTDIR) => {
            let message = format!("the writable path {} is reached through a link now (a directory on its path was replaced since the sandbox was planned)", path.display());
            return Err(sandspawn_helper::report::changed(e, message));
        }
        Err(e) => return Err(setup(e, format!("opening {} for a Landlock rule failed: {}", path.display(), describe(e)))),
    };
    let path = path.display();
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let is_dir = unsafe { libc::fstat(fd, &mut st) } == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFDIR;
    let is_link = (st.st_mode & libc::S_IFMT) == libc::S_IFLNK;
    let allowed = match access {
        Access::Write => landlock::write_rights(abi, is_dir),
        Access::Read if is_dir => landlock::READ,
        Access::Read => landlock::READ & landlock::FILE_RIGHTS,
        Access::List if is_dir => landlock::FS_READ_DIR,
        Access::List => 0,
    };
    if is_link || allowed == 0 {
        unsafe { libc::close(fd) };
        return Ok(());
    }
    // The policy refused writable roots on kernel filesystems when it resolved them; a directory
    // above one swapped for a link to `/sys/fs/cgroup` since (the last component alone is opened
    // without following) would lead here all the same (a reviewer's suspicion). Fail closed.
    if access == Access::Write {
        if let Err(refused) = sandspawn_helper::kernel_fs::refuse_writes(fd, &path.to_string()) {
            unsafe { libc::close(fd) };
            return Err(refused);
        }
    }
    // A directory with the planned number on another device: a btrfs subvolume's root, which a
    // listing cannot tell apart either (its parent's device is what the plan knew).
    let subvolume = |id: &(u64, u64)| is_dir && id.1 == st.st_ino;
    if let Some(id) = id.filter(|id| *id != (st.st_dev, st.st_ino) && !subvolume(id) && !mount_root(fd)) {
        unsafe { libc::close(fd) };
        let message = format!("the writable path {path} is no longer the entry the sandbox was planned for (renamed or replaced meanwhile; planned {}:{})", id.0, id.1);
        return Err(sandspawn_helper::report::changed(libc::EXDEV, message));
    }
    let attr = PathBeneath { allowed, parent_fd: fd };
    let rc = unsafe { libc::syscall(SYS_ADD_RULE, ruleset_fd as libc::c_long, RULE_PATH_BENEATH, &attr as *const PathBeneath, 0u32) };
    let e = last_errno();
    unsafe { libc::close(fd) };
    if rc != 0 {
        return Err(setup(e, format!("adding the Landlock rule for {path} failed: {}", describe(e))));
    }
    Ok(())
}

/// The descriptor a rule is made on (`O_PATH`), or the errno. A writable path the plan identified
/// (a root, an entry of a split directory) is opened without following a link anywhere on it: a
/// directory above it swapped for a link since the plan, with the identity taken through that
/// link, led the grant where the link led. One the plan could not identify (a device, the run's
/// own directory behind an administrator's link) without following its last component.
fn open_rule(path: &Path, id: Option<(u64, u64)>, access: Access) -> Result<i32, i32> {
    use std::os::fd::IntoRawFd;
    if id.is_some() {
        return sandspawn_helper::no_symlinks::open(path, libc::O_PATH).map(IntoRawFd::into_raw_fd).map_err(|e| e.raw_os_error().unwrap_or(0));
    }
    let c = crate::mount_target::c_path(path).map_err(|f| f.errno)?;
    let flags = libc::O_PATH | libc::O_CLOEXEC | if access == Access::Write { libc::O_NOFOLLOW } else { 0 };
    // SAFETY: a valid C string.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    if fd < 0 { Err(last_errno()) } else { Ok(fd) }
}

/// Whether `fd` is the top of a mount. The plan identifies an entry of a directory it split by the
/// directory's device and the entry's number in the listing, which for a mount point names what
/// lies below the mount: a mount point's own identity cannot be checked that way, but a mount point
/// cannot be renamed either (`EBUSY`), so no run can have put it there.
fn mount_root(fd: i32) -> bool {
    sandspawn_helper::mount_root::is_mount_root(fd).unwrap_or(false)
}

/// In the command's process: its own session (TIOCSTI aside, a new session keeps it out of the
/// caller's terminal job control), no capabilities (sandspawn may run as root), a fresh session
/// keyring, no memory merged by KSM, no_new_privs, Landlock, seccomp. Any failure stops the command from running.
pub fn apply(p: &Prepared) -> Result<(), Failure> {
    if unsafe { libc::setsid() } < 0 {
        let e = last_errno();
        return Err(setup(e, format!("setsid failed: {}", describe(e))));
    }
    crate::capabilities::drop_all()?;
    crate::userns::fresh_session_keyring()?;
    crate::memory_merge::stop_merging()?;
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("prctl(PR_SET_NO_NEW_PRIVS) failed: {}", describe(e))));
    }
    if unsafe { libc::syscall(SYS_RESTRICT_SELF, p.ruleset_fd as libc::c_long, 0u32) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("landlock_restrict_self failed: {}", describe(e))));
    }
    unsafe { libc::close(p.ruleset_fd) };
    crate::install_filter(&p.filter)
}

pub fn close(p: &Prepared) {
    unsafe { libc::close(p.ruleset_fd) };
}


