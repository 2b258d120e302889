//! The reviewable workspace's overlays (the addon's `review`): each reviewed writable root is
//! covered, inside the sandbox, by an overlay whose lower layer is the root as bwrap bound it and
//! whose upper directory is the change set's. The command sees its own writes; the host's tree is
//! never written.
//!
//! An overlay's lower layer is one mount: what bwrap mounted *below* the root (a `denyRead` mask,
//! a nested root's pin, a read-only own file) is not visible through it, so mounting the overlay
//! alone would undo those rules. Each such mount is therefore cloned first (`open_tree`), and the
//! clones are attached again on top of the overlay, shallowest first. A clone that is still
//! writable afterwards would let the command write past the review (another filesystem mounted in
//! the workspace on the host): the run is refused instead, unless a later step detaches that mount
//! (the private tool caches' store, see `unmount`).

use sandspawn_helper::mountinfo;
use sandspawn_helper::protocol::ReviewOverlay;
use sandspawn_helper::report::{Failure, setup};

use crate::mount_target::c;
use crate::{describe, last_errno};

/// Mount every reviewed root's overlay. `detached_later`: mounts a later step removes.
pub fn mount_all(overlays: &[ReviewOverlay], detached_later: &[String]) -> Result<(), Failure> {
    if overlays.is_empty() {
        return Ok(());
    }
    let table = mountinfo::read("mounting the reviewed workspace")?;
    for o in overlays {
        let below = mountinfo::points_below(&table, &o.root).map_err(|point| {
            let point = String::from_utf8_lossy(&point).into_owned();
            setup(libc::EINVAL, format!("the mount at {point} inside the reviewed workspace {} has a name that is not UTF-8: the reviewable workspace cannot keep it; run without workspace: 'review'", o.root))
        })?;
        let reachable = sandspawn_helper::writable_mounts::reachable_points(&mountinfo::text(&table));
        let below: Vec<String> = below.into_iter().filter(|p| reachable.contains(p)).collect();
        mount_one(o, &below, detached_later)?;
    }
    reenter_cwd()
}

/// The working directory bwrap gave is the directory *under* the new overlay: relative paths would
/// write to the host's tree directly. Entering it again by its path lands on the overlay.
fn reenter_cwd() -> Result<(), Failure> {
    let failed = |what: &str| {
        let e = last_errno();
        setup(e, format!("{what} the working directory on the reviewed workspace failed: {}", describe(e)))
    };
    let cwd = std::env::current_dir().map_err(|_| failed("reading"))?;
    let p = c(&cwd.to_string_lossy())?;
    // SAFETY: a valid C string.
    if unsafe { libc::chdir(p.as_ptr()) } != 0 {
        return Err(failed("entering"));
    }
    Ok(())
}

fn mount_one(o: &ReviewOverlay, below: &[String], detached_later: &[String]) -> Result<(), Failure> {
    let clones = below.iter().map(|p| clone(p).map(|fd| (p, fd))).collect::<Result<Vec<_>, _>>()?;
    crate::overlay::mount(&o.root, &[&o.root], &o.upper, &o.work, "", "the reviewed workspace")?;
    for (path, fd) in clones {
        attach(fd, path)?;
        if !detached_later.contains(path) && writable(path)? {
            return Err(setup(
                libc::EXDEV,
                format!("{path} is another mount inside the reviewed workspace {}: its writes could not be reviewed", o.root),
            ));
        }
    }
    Ok(())
}

/// A detached copy of the mount at `path` (that mount alone: its children are cloned on their own).
fn clone(path: &str) -> Result<i32, Failure> {
    let p = c(path)?;
    let flags = libc::OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | libc::AT_SYMLINK_NOFOLLOW as libc::c_uint;
    // SAFETY: open_tree with a valid path; returns a descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, p.as_ptr(), flags) } as i32;
    if fd < 0 {
        let e = last_errno();
        if e == libc::ENOSYS {
            // Linux before 5.2: no way to lift a mount off the workspace and put it back on top.
            return Err(setup(
                e,
                format!(
                    "the reviewable workspace cannot keep the mount at {path} (a denyRead path or another mount inside the workspace) on this kernel: it needs open_tree and move_mount (Linux 5.2 or later); run without workspace: 'review', or without mounts inside the workspace"
                ),
            ));
        }
        return Err(setup(e, format!("keeping the mount at {path} for the reviewed workspace failed: {}", describe(e))));
    }
    Ok(fd)
}

/// Attach a detached mount at `path` (on top of the overlay) and close its descriptor.
fn attach(fd: i32, path: &str) -> Result<(), Failure> {
    let p = c(path)?;
    // SAFETY: move_mount from our own descriptor to a valid path.
    let rc = unsafe { libc::syscall(libc::SYS_move_mount, fd, c"".as_ptr(), libc::AT_FDCWD, p.as_ptr(), libc::MOVE_MOUNT_F_EMPTY_PATH) };
    let e = last_errno();
    // SAFETY: our own descriptor.
    unsafe { libc::close(fd) };
    if rc != 0 {
        return Err(setup(e, format!("putting the mount at {path} back over the reviewed workspace failed: {}", describe(e))));
    }
    Ok(())
}

fn writable(path: &str) -> Result<bool, Failure> {
    let p = c(path)?;
    // SAFETY: a zeroed statvfs is valid; a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(p.as_ptr(), &mut st) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("reading the mount flags of {path} failed: {}", describe(e))));
    }
    Ok(st.f_flag & libc::ST_RDONLY == 0)
}
