//! The carve-outs inside writable roots made read-only by the helper, inside the sandbox: the
//! repositories' git directories and hooks, protected names that exist, `readOnlyPaths`. A bind
//! of each onto itself (recursive: a `denyRead` mask bwrap made inside stays), then a read-only
//! remount of that bind.
//!
//! Why here and not in bwrap: each `--ro-bind` of bwrap rereads the whole mount table (about
//! 0.17 ms here, more as mounts accumulate), so a workspace with hundreds of repositories paid
//! tens of milliseconds per run. Two `mount` calls each cost a few microseconds. The flags a remount
//! must keep (nosuid, nodev, ... locked by the user namespace) come from `fstatvfs` of the bind.
//!
//! Each path is opened with `O_PATH | O_NOFOLLOW`, and everything after goes through that
//! descriptor, never the path again: a path swapped during setup cannot redirect the mount. Where
//! the kernel has the new mount API (5.12+), a read-only copy is made detached and attached over
//! exactly that entry (`open_tree`, `mount_setattr`, `move_mount`: three calls, no mount flags to
//! read first, since `mount_setattr` changes only the flag it names); on older kernels a bind,
//! then the bind opened again by path (it must be the same entry) and remounted read-only.

use sandspawn_helper::report::{Failure, setup};

use crate::mount_target::{mount, Kind, Target};
use crate::{describe, last_errno};

/// Make each of `paths` (canonical, shallowest first) read-only.
pub fn bind_all(paths: &[String]) -> Result<(), Failure> {
    for p in paths {
        bind(p)?;
    }
    Ok(())
}

fn bind(path: &str) -> Result<(), Failure> {
    const WHAT: &str = "the read-only path";
    let below = match Target::open(path, Kind::DirOrFile, WHAT) {
        // Found by the host's walk (which may run as root) behind a directory the sandbox may not
        // enter: an owner outside the user namespace, so no capability here reaches it. The
        // command, with no more rights than this process and unable to chmod what it does not
        // own, cannot reach the path either: there is nothing to make read-only.
        Err(f) if f.errno == libc::EACCES => return Ok(()),
        other => other?,
    };
    match attach_read_only_copy(&below, path) {
        Err(f) if f.errno == libc::ENOSYS => {}
        done => return done,
    }
    let at = below.proc_path();
    mount(Some(&at), &at, None, libc::MS_BIND | libc::MS_REC, None, &format!("binding the read-only path {path}"))?;
    // The path now leads to the bind, which must be the same entry.
    let bound = Target::open(path, Kind::DirOrFile, WHAT)?;
    if bound.id != below.id {
        return Err(setup(libc::EXDEV, format!("the read-only path {path} was replaced during setup")));
    }
    // The bind's own flags (it took those of the mount it was made from), which a remount in a
    // user namespace must keep; per path, since one filesystem can be mounted with other flags.
    let flags = locked_flags(&bound, path)?;
    mount(None, &bound.proc_path(), None, libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags, None, &format!("making {path} read-only"))
}

/// A copy of what `below` names (with the mounts inside it), its top made read-only while
/// detached, attached over exactly that entry. `ENOSYS` (a kernel before 5.12): nothing was changed, the caller binds instead.
fn attach_read_only_copy(below: &Target, path: &str) -> Result<(), Failure> {
    let flags = libc::OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | libc::AT_RECURSIVE as libc::c_uint | libc::AT_EMPTY_PATH as libc::c_uint;
    // SAFETY: open_tree on our own descriptor with an empty path; returns a descriptor or -1.
    let tree = unsafe { libc::syscall(libc::SYS_open_tree, below.fd, c"".as_ptr(), flags) } as i32;
    if tree < 0 {
        let e = last_errno();
        return Err(setup(e, format!("copying the read-only path {path} failed: {}", describe(e))));
    }
    let attr = libc::mount_attr { attr_set: libc::MOUNT_ATTR_RDONLY, attr_clr: 0, propagation: 0, userns_fd: 0 };
    // The copy's top only, as the remount below: a mount inside (a nested writable root) keeps its flags.
    let at_flags = libc::AT_EMPTY_PATH as libc::c_uint;
    // SAFETY: our own descriptor, a valid attribute struct of the size given.
    let rc = unsafe { libc::syscall(libc::SYS_mount_setattr, tree, c"".as_ptr(), at_flags, &attr as *const libc::mount_attr, std::mem::size_of::<libc::mount_attr>()) };
    let result = if rc != 0 {
        let e = last_errno();
        Err(setup(e, format!("making {path} read-only failed: {}", describe(e))))
    } else {
        let how = libc::MOVE_MOUNT_F_EMPTY_PATH | libc::MOVE_MOUNT_T_EMPTY_PATH;
        // SAFETY: both descriptors are ours, both paths empty.
        let rc = unsafe { libc::syscall(libc::SYS_move_mount, tree, c"".as_ptr(), below.fd, c"".as_ptr(), how) };
        if rc != 0 {
            let e = last_errno();
            Err(setup(e, format!("putting the read-only copy over {path} failed: {}", describe(e))))
        } else {
            Ok(())
        }
    };
    // SAFETY: our own descriptor.
    unsafe { libc::close(tree) };
    result
}

/// The mount flags of the mount `t` is on, as `MS_*` (a bind remount must keep those a user
/// namespace locked, or the kernel refuses it), read-only dropped: the remount adds it.
fn locked_flags(t: &Target, path: &str) -> Result<libc::c_ulong, Failure> {
    // SAFETY: a zeroed statvfs is valid; `t.fd` is open.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatvfs(t.fd, &mut st) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("reading the mount flags of {path} failed: {}", describe(e))));
    }
    let map = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    Ok(map.iter().filter(|(st_flag, _)| st.f_flag & st_flag != 0).fold(0, |acc, (_, ms)| acc | ms))
}
