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
//! Each path is opened with `O_PATH | O_NOFOLLOW` and used through that descriptor; where it is
//! opened again, it must lead to the same entry (device and inode), or setup fails: a path
//! swapped during setup cannot redirect a mount. Where the plan names the entry a path must be
//! (device and inode, `--read-only-at`), the opened entry is checked against it: a run in the same
//! workspace could have renamed a decoy into place since the host planned. A path that is gone, or
//! leads to another entry, fails setup as `Stage::Changed` (the runner plans again). Where the kernel has the new mount API (5.12+),
//! read-only copies are made detached (`open_tree`, `mount_setattr`: no mount flags to read first,
//! since `mount_setattr` changes only the flag it names), then each attached over its entry
//! (`move_mount`, see `bind_all` for the order); on older kernels a bind, then the bind opened
//! again by path and remounted read-only.

use std::os::fd::AsRawFd;

use sandspawn_helper::protocol::ReadOnly;
use sandspawn_helper::report::{changed, setup, Failure};

use crate::mount_target::{mount, set_mount_attrs, Kind, Target};
use crate::{describe, last_errno};

/// Make each of `paths` (canonical, shallowest first) read-only.
///
/// In two passes over each batch: first every copy is made (and made read-only) while none is
/// attached yet, then all are attached, shallowest first. Copying a path looks at every mount
/// already below the mount it copies from (the writable root's bind; the kernel checks each one
/// for `MNT_LOCKED`, or copies it along), and the carve-outs attached so far are such mounts: one
/// pass copy-and-attach per path made a workspace of 1,000 repositories cost the helper about
/// 9 ms per run in `is_subdir` alone (quadratic). A copy holds two descriptors until it is
/// attached, hence batches within the descriptor limit.
pub fn bind_all(paths: &[ReadOnly]) -> Result<(), Failure> {
    let per_batch = batch_size();
    for (b, batch) in paths.chunks(per_batch).enumerate() {
        let mut copies = Vec::with_capacity(batch.len());
        // Opened per batch: nothing is attached while a batch's copies are made, so a lookup
        // from an anchor finds what the whole path leads to.
        let mut anchors = Anchors::of(batch);
        for (i, path) in batch.iter().enumerate() {
            match copy(path, &mut anchors) {
                Ok(Some(c)) => copies.push(c),
                Ok(None) => {}
                Err(f) if f.errno == libc::ENOSYS => {
                    // A kernel before 5.12 (no `open_tree`, or no `mount_setattr`): this path and
                    // the rest the old way, after the copies made so far (none: the first copy
                    // finds out).
                    attach_all(&copies)?;
                    release(copies, anchors);
                    return paths[b * per_batch + i..].iter().try_for_each(bind);
                }
                Err(f) => return Err(f),
            }
        }
        attach_all(&copies)?;
        release(copies, anchors);
    }
    Ok(())
}

/// The descriptors a batch held (each copy's entry and tree, the anchors), closed together once
/// its copies are attached (`close_batch`: a `close_range` for each run of numbers, not two
/// `close`s a carve-out). On a failure they are dropped one by one, as before.
fn release(copies: Vec<Copy>, anchors: Anchors) {
    use std::os::fd::IntoRawFd;
    let mut fds = Vec::with_capacity(copies.len() * 2 + anchors.dirs.len());
    for c in copies {
        fds.push(c.below.into_raw());
        fds.push(c.tree.into_raw_fd());
    }
    fds.extend(anchors.dirs.into_values().flatten().map(IntoRawFd::into_raw_fd));
    crate::close_batch::close_all(fds);
}

/// Copies held at once (two descriptors each, and at most one anchor each): what the descriptor
/// limit leaves, with room for the helper's others.
fn batch_size() -> usize {
    // SAFETY: a valid rlimit to fill.
    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    let soft = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } == 0 { rl.rlim_cur } else { 0 };
    ((soft.min(1 << 16) as usize).saturating_sub(64) / 3).max(8)
}

/// The directories two levels above the carve-outs of a batch that two or more of them share
/// (`ws/deps` of `ws/deps/r0/.git`, `ws/deps/r1/.git`, ...), each opened once: a carve-out is then
/// looked up from its anchor by its last two names, not from `/` by every name of its path
/// (measured at 200 nested repositories: the helper's `openat`s took about 2.4 µs each by the
/// whole path, most of it in looking up the same leading names again). The lookup follows the
/// symlinks on the way as the whole path's does (the anchor is opened following them), refuses
/// one at the end as it does, and the entry found is checked against the plan's as before.
struct Anchors {
    /// By the anchor's path (bytes: a name need not be UTF-8); `None` until opened, or where it
    /// could not be (then the whole path is looked up, and fails as it would have).
    dirs: std::collections::HashMap<Vec<u8>, Option<std::os::fd::OwnedFd>>,
}

impl Anchors {
    fn of(batch: &[ReadOnly]) -> Anchors {
        let mut seen: std::collections::HashMap<&[u8], u32> = std::collections::HashMap::new();
        for r in batch {
            if let Some((dir, _)) = split_anchor(&r.path) {
                *seen.entry(dir).or_default() += 1;
            }
        }
        // One shared by a single carve-out would cost an open more than it saves.
        let dirs = seen.into_iter().filter(|(_, n)| *n >= 2).map(|(d, _)| (d.to_vec(), None)).collect();
        Anchors { dirs }
    }

    /// Open `r.path` (`Target::open`), from its anchor where it has one.
    fn open(&mut self, r: &ReadOnly) -> Result<Target, Failure> {
        use std::os::fd::{AsRawFd, FromRawFd};
        let Some((dir, rest)) = split_anchor(&r.path) else { return Target::open(&r.path, Kind::DirOrFile, WHAT) };
        let Some(slot) = self.dirs.get_mut(dir) else { return Target::open(&r.path, Kind::DirOrFile, WHAT) };
        if slot.is_none() {
            let Ok(c) = std::ffi::CString::new(dir) else { return Target::open(&r.path, Kind::DirOrFile, WHAT) };
            // `openat`, not `open`: musl's `open` adds an `fcntl` for `O_CLOEXEC` (`Target::open`).
            // SAFETY: a valid C string; returns a descriptor or -1.
            let fd = unsafe { libc::openat(libc::AT_FDCWD, c.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
            if fd < 0 {
                return Target::open(&r.path, Kind::DirOrFile, WHAT);
            }
            // SAFETY: a descriptor open just returned, owned from here.
            *slot = Some(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) });
        }
        let (Some(anchor), Ok(name)) = (slot.as_ref(), std::ffi::CString::new(rest)) else { return Target::open(&r.path, Kind::DirOrFile, WHAT) };
        Target::open_at(anchor.as_raw_fd(), &name, &r.path, Kind::DirOrFile, WHAT)
    }
}

/// `path` (absolute) as its directory two levels up and the last two names (`/a/b/c/.git` as
/// `/a/b` and `c/.git`); `None` for a path with fewer than three names, or one not in the plain
/// form the plan gives (no trailing slash, no empty, `.` or `..` name among the last two).
fn split_anchor(path: &std::path::Path) -> Option<(&[u8], &[u8])> {
    use std::os::unix::ffi::OsStrExt;
    let b = path.as_os_str().as_bytes();
    let last = b.iter().rposition(|&c| c == b'/')?;
    let mid = b[..last].iter().rposition(|&c| c == b'/')?;
    let (leaf, parent) = (&b[last + 1..], &b[mid + 1..last]);
    let plain = |n: &[u8]| !n.is_empty() && n != b"." && n != b"..";
    if mid == 0 || !b.starts_with(b"/") || !plain(leaf) || !plain(parent) {
        return None;
    }
    Some((&b[..mid], &b[mid + 1..]))
}

const WHAT: &str = "the read-only path";

/// A read-only copy of `path`, detached, waiting to be attached over the same entry.
struct Copy<'p> {
    carve: &'p ReadOnly,
    /// The entry copied, still open: where the copy goes unless a copy attached since covers it.
    below: Target,
    tree: std::os::fd::OwnedFd,
}

/// `r` opened as a carve-out; `None`: there is nothing to protect (see below).
fn open_carve_out(r: &ReadOnly) -> Result<Option<Target>, Failure> {
    judged(r, Target::open(&r.path, Kind::DirOrFile, WHAT))
}

/// What the open of `r` (`opened`) means for the carve-out (`open_carve_out`).
fn judged(r: &ReadOnly, opened: Result<Target, Failure>) -> Result<Option<Target>, Failure> {
    let t = match opened {
        // Found by the host's walk (which may run as root) behind a directory the sandbox may not
        // enter: an owner outside the user namespace, so no capability here reaches it. The
        // command, with no more rights than this process and unable to chmod what it does not
        // own, cannot reach the path either: there is nothing to make read-only. Unless the path
        // was made to lead there since the plan (`blocked_carve_out`: a link on the way, or a host
        // user who is not root): then it changed, and skipping it left it writable once put back.
        Err(f) if f.errno == libc::EACCES => {
            if crate::blocked_carve_out::as_planned(&r.path) {
                return Ok(None);
            }
            return Err(changed(f.errno, format!("{} (a directory on its way was replaced since the sandbox was planned)", f.message)));
        }
        // Gone, or no longer a directory or a file (`Target::open` says ENOTDIR then), unless it
        // is the planned entry all along, of a kind no run makes read-only (a fifo, a socket, a
        // device): planning again would find the same.
        Err(f) if matches!(f.errno, libc::ENOENT | libc::ENOTDIR | libc::ELOOP) => {
            if special_as_planned(r) {
                return Err(setup(libc::EINVAL, format!("the read-only path {} is neither a directory nor a regular file (a fifo, a socket or a device): it cannot be made read-only", r.path.display())));
            }
            return Err(changed(f.errno, format!("{} (changed since the sandbox was planned)", f.message)));
        }
        other => other?,
    };
    match r.id {
        Some(id) if t.id != id => Err(changed(libc::EXDEV, format!("the read-only path {} is no longer the entry the sandbox was planned for (renamed or replaced meanwhile)", r.path.display()))),
        _ => Ok(Some(t)),
    }
}

/// Whether `r` names, now, the entry the plan meant (or the plan named none), and that entry is
/// neither a directory, a regular file nor a symlink.
fn special_as_planned(r: &ReadOnly) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(m) = std::fs::symlink_metadata(&r.path) else { return false };
    let t = m.file_type();
    let special = t.is_fifo() || t.is_socket() || t.is_block_device() || t.is_char_device();
    special && r.id.is_none_or(|id| (m.dev(), m.ino()) == id)
}

/// A copy of what `path` names (with the mounts inside it), its top made read-only while
/// detached. `ENOSYS` (a kernel before 5.12): nothing was changed, the caller binds instead.
fn copy<'p>(carve: &'p ReadOnly, anchors: &mut Anchors) -> Result<Option<Copy<'p>>, Failure> {
    use std::os::fd::FromRawFd;
    let path = carve.path.display();
    let Some(below) = judged(carve, anchors.open(carve))? else { return Ok(None) };
    let flags = libc::OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | libc::AT_RECURSIVE as libc::c_uint | libc::AT_EMPTY_PATH as libc::c_uint;
    if let Some(tree) = copied_read_only(carve, &below, flags) {
        return Ok(Some(Copy { carve, below, tree }));
    }
    // SAFETY: open_tree on our own descriptor with an empty path; returns a descriptor or -1.
    let tree = unsafe { libc::syscall(libc::SYS_open_tree, below.fd, c"".as_ptr(), flags) } as i32;
    if tree < 0 {
        let e = last_errno();
        return Err(setup(e, format!("copying the read-only path {path} failed: {}", describe(e))));
    }
    // SAFETY: a descriptor open_tree just returned, owned from here.
    let tree = unsafe { std::os::fd::OwnedFd::from_raw_fd(tree) };
    // The copy's top only, as the remount below: a mount inside (a nested writable root) keeps its flags.
    if let Err(e) = set_mount_attrs(tree.as_raw_fd(), libc::MOUNT_ATTR_RDONLY, 0) {
        return Err(setup(e, format!("making {path} read-only failed: {}", describe(e))));
    }
    Ok(Some(Copy { carve, below, tree }))
}

/// `open_tree_attr` (Linux 6.15), not in the libc crate: the same number on every architecture
/// the helper is built for (the generic table's, past 424).
const SYS_OPEN_TREE_ATTR: libc::c_long = 467;

/// Set once `open_tree_attr` was refused as unknown (`ENOSYS`: a kernel before 6.15) or not allowed
/// (`EPERM`: a container's filter that does not know it): the rest go the two-call way.
static NO_OPEN_TREE_ATTR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The copy of `below` made read-only in the same call (`open_tree_attr`), where that is the same
/// as the two calls of `copy`: with `AT_RECURSIVE` the attribute goes to every mount of the copy,
/// so only for a carve-out with no mount below it (`known_mounts`; a `denyRead` mask or a nested
/// writable root inside keeps its flags by the two calls). `None`: not tried, or refused; the
/// caller makes the copy in two calls (which fail with their own errors where this one did).
/// One `mount_setattr` fewer a carve-out: 200 a run at 200 nested repositories.
fn copied_read_only(carve: &ReadOnly, below: &Target, flags: libc::c_uint) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    use std::sync::atomic::Ordering::Relaxed;
    if NO_OPEN_TREE_ATTR.load(Relaxed) || crate::known_mounts::any_below(&carve.path) {
        return None;
    }
    let attr = libc::mount_attr { attr_set: libc::MOUNT_ATTR_RDONLY, attr_clr: 0, propagation: 0, userns_fd: 0 };
    // SAFETY: our own descriptor, an empty path, a valid attribute struct of the size given.
    let tree = unsafe { libc::syscall(SYS_OPEN_TREE_ATTR, below.fd, c"".as_ptr(), flags, &attr as *const libc::mount_attr, std::mem::size_of::<libc::mount_attr>()) } as i32;
    if tree < 0 {
        if matches!(last_errno(), libc::ENOSYS | libc::EPERM) {
            NO_OPEN_TREE_ATTR.store(true, Relaxed);
        }
        return None;
    }
    // SAFETY: a descriptor open_tree_attr just returned, owned from here.
    Some(unsafe { std::os::fd::OwnedFd::from_raw_fd(tree) })
}

/// Attach each copy over its path, in order. Over the entry it was copied from, unless a copy
/// attached before in this batch lies over that entry (a shallower carve-out, or the same path
/// twice): then over what the path leads to now, which must be the same entry.
fn attach_all(copies: &[Copy]) -> Result<(), Failure> {
    use std::os::unix::ffi::OsStrExt;
    let mut attached = sandspawn_helper::ancestors::Set::with_capacity(copies.len());
    for c in copies {
        // As bytes: a carve-out's name need not be UTF-8.
        let bytes = c.carve.path.as_os_str().as_bytes();
        let path = c.carve.path.display();
        let covered = attached.covers(bytes);
        let reopened;
        let target = if covered {
            let Some(t) = open_carve_out(c.carve)? else { continue };
            if t.id != c.below.id {
                return Err(changed(libc::EXDEV, format!("the read-only path {path} was replaced during setup")));
            }
            reopened = t;
            &reopened
        } else {
            &c.below
        };
        let how = libc::MOVE_MOUNT_F_EMPTY_PATH | libc::MOVE_MOUNT_T_EMPTY_PATH;
        // SAFETY: both descriptors are ours, both paths empty.
        let rc = unsafe { libc::syscall(libc::SYS_move_mount, c.tree.as_raw_fd(), c"".as_ptr(), target.fd, c"".as_ptr(), how) };
        if rc != 0 {
            let e = last_errno();
            return Err(setup(e, format!("putting the read-only copy over {path} failed: {}", describe(e))));
        }
        attached.insert(bytes);
    }
    Ok(())
}

/// The old way (kernels before 5.12): a bind of the path onto itself, then a read-only remount.
fn bind(carve: &ReadOnly) -> Result<(), Failure> {
    let path = carve.path.display();
    let Some(below) = open_carve_out(carve)? else { return Ok(()) };
    let at = below.proc_path();
    mount(Some(&at), &at, None, libc::MS_BIND | libc::MS_REC, None, &format!("binding the read-only path {path}"))?;
    // The path now leads to the bind, which must be the same entry.
    let bound = Target::open(&carve.path, Kind::DirOrFile, WHAT)?;
    if bound.id != below.id {
        return Err(changed(libc::EXDEV, format!("the read-only path {path} was replaced during setup")));
    }
    // The bind's own flags (it took those of the mount it was made from), which a remount in a
    // user namespace must keep; per path, since one filesystem can be mounted with other flags.
    // Read-only is not among them: the remount adds it.
    let flags = bound.mount_flags(&path)?;
    mount(None, &bound.proc_path(), None, libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags, None, &format!("making {path} read-only"))
}
