//! The private tool caches' overlays, mounted inside the sandbox before the command runs, and the
//! steps that then take every privilege away again.
//!
//! Why here and not in bwrap: bwrap 0.8 has no overlay support (`--overlay` came in 0.9), but the
//! kernel (5.11+) lets a process mount overlayfs in a user namespace it owns. So the plan keeps
//! CAP_SYS_ADMIN and CAP_DAC_OVERRIDE (the kernel creates the overlay's `work/work` with mode 000)
//! and CAP_SYS_RESOURCE (for `user.max_user_namespaces`) and CAP_SETFCAP (to map uid 0 into the nested
//! user namespace) for the helper alone, and leaves out
//! bwrap's `--disable-userns`: bwrap implements it by moving the sandbox into a nested user
//! namespace, which does not own the mount namespace, so nothing could be mounted after it.
//! `disable_userns_and_drop_caps` does the same thing afterwards, then drops every capability, so
//! the command ends up exactly as bwrap would have left it: no capabilities, no new user
//! namespaces, and mounts it cannot undo (they belong to the parent user namespace).

use std::ffi::CString;

use sandspawn_helper::protocol::Overlay;
use sandspawn_helper::report::{Failure, Stage};

use crate::{describe, last_errno};

fn setup(errno: i32, message: String) -> Failure {
    Failure { stage: Stage::Setup, errno, message }
}

fn c_path(p: &str) -> Result<CString, Failure> {
    CString::new(p).map_err(|_| setup(libc::EINVAL, format!("path {p:?} contains a NUL byte")))
}

/// Create the run's work directory and mount one overlay over its target.
pub fn mount_overlay(o: &Overlay) -> Result<(), Failure> {
    let work = c_path(&o.work)?;
    if unsafe { libc::mkdir(work.as_ptr(), 0o700) } != 0 && last_errno() != libc::EEXIST {
        let e = last_errno();
        return Err(setup(e, format!("creating the tool cache work directory {} failed: {}", o.work, describe(e))));
    }
    // `userxattr`: the only xattr namespace a user namespace may use. `index=off`: concurrent runs
    // share UPPER, which the kernel allows (with a warning) only without the inode index.
    let data = format!("lowerdir={},upperdir={},workdir={},userxattr,index=off", escape(&o.target), escape(&o.upper), escape(&o.work));
    let data = c_path(&data)?;
    let target = c_path(&o.target)?;
    let rc = unsafe {
        libc::mount(c"overlay".as_ptr(), target.as_ptr(), c"overlay".as_ptr(), libc::MS_NOSUID | libc::MS_NODEV, data.as_ptr().cast())
    };
    if rc != 0 {
        let e = last_errno();
        return Err(setup(e, format!("mounting the private tool cache over {} failed: {}", o.target, describe(e))));
    }
    Ok(())
}

/// overlayfs splits its options at `,` and layer lists at `:`; both are escaped with `\`.
fn escape(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for c in p.chars() {
        if matches!(c, ',' | ':' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Detach a bind mount that was there only for the overlays (the writable store).
pub fn unmount(path: &str) -> Result<(), Failure> {
    let p = c_path(path)?;
    if unsafe { libc::umount2(p.as_ptr(), libc::MNT_DETACH) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("detaching {path} failed: {}", describe(e))));
    }
    Ok(())
}

/// bwrap's `--disable-userns`, then no capabilities at all. Verified at the end: if a user
/// namespace can still be created, the helper fails instead of running the command.
///
/// `map_ids`: the ids the command runs as in the nested user namespace, mapped onto the helper's
/// own. A host user other than root needs it: bwrap runs the helper as uid 0 (`--uid 0`), since
/// for any other uid it would itself move the sandbox into a nested user namespace (to mount
/// devpts as root first), from which nothing could be mounted; the helper then does that move,
/// after its mounts, back to the user's ids.
pub fn disable_userns_and_drop_caps(map_ids: Option<(u32, u32)>) -> Result<(), Failure> {
    // SAFETY: getuid and getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let (inner_uid, inner_gid) = map_ids.unwrap_or((uid, gid));
    // The count of user namespaces is charged to every ancestor: with a limit of 1 here, the one
    // created next uses it up and none can be created below it.
    // The plan covers /proc/sys with a read-only bind; it is lifted for this one write and put
    // back as bwrap made it (read-only, nosuid, nodev) before anything else runs.
    unmount("/proc/sys")?;
    let written = write_file("/proc/sys/user/max_user_namespaces", "1");
    bind_read_only("/proc/sys")?;
    written?;
    if unsafe { libc::unshare(libc::CLONE_NEWUSER) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("entering the nested user namespace failed: {}", describe(e))));
    }
    write_file("/proc/self/uid_map", &format!("{inner_uid} {uid} 1"))?;
    write_file("/proc/self/setgroups", "deny")?;
    write_file("/proc/self/gid_map", &format!("{inner_gid} {gid} 1"))?;
    crate::capabilities::drop_all()?;
    if unsafe { libc::unshare(libc::CLONE_NEWUSER) } == 0 {
        return Err(setup(0, "creating user namespaces was not disabled as the sandbox requires".into()));
    }
    Ok(())
}

fn bind_read_only(path: &str) -> Result<(), Failure> {
    let p = c_path(path)?;
    let flags = libc::MS_BIND | libc::MS_REC;
    let ro = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
    if unsafe { libc::mount(p.as_ptr(), p.as_ptr(), std::ptr::null(), flags, std::ptr::null()) } != 0
        || unsafe { libc::mount(std::ptr::null(), p.as_ptr(), std::ptr::null(), ro, std::ptr::null()) } != 0
    {
        let e = last_errno();
        return Err(setup(e, format!("making {path} read-only again failed: {}", describe(e))));
    }
    Ok(())
}

fn write_file(path: &str, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| {
        let errno = e.raw_os_error().unwrap_or(0);
        setup(errno, format!("writing {path} failed: {}", describe(errno)))
    })
}

