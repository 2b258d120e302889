//! A writable root that reaches one of the system's trees (`host_code::SYSTEM_TREES`) through a
//! bind mount. Names alone (canonical paths) missed it: with `/etc` bound elsewhere (a container's
//! hostPath, a chroot's bind, a backup tool's view) and the cwd there, a run as root appended to
//! `/etc/profile.d` (found by an attacker's review, fixes18/bindroot.sh); nor could `keep_host_code`
//! keep a tree read-only by name in a root that holds it by another (a bind of `/` or `/var`).
//!
//! Judged by where each mount visible in the root (its own, and every one below it) shows its
//! filesystem from (the mount's root field in `/proc/self/mountinfo`, a path within that filesystem):
//! a mount of a tree's filesystem other than the one the tree itself is reached through, showing a
//! directory in the tree (the tree itself, `/etc/profile.d`), or one above it (`/`, `/var`), is the
//! tree by another name. Showing only a place the tree allows (`/usr/src`) is fine, as by name; the
//! tree's own mount is left to the names (a root of `/home` beside `/etc` on one filesystem).
//!
//! Cost per spawn: one `statx` per root and per tree (their mounts' ids), over the mount table the
//! kernel-filesystem check has read already (`MountTable`). Nothing is kept across spawns: a mount
//! made between two of them changes the answer.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sandspawn_helper::mountinfo::{sources, Source};

/// A tree as found now: its index in the caller's list, the mount it is reached through, and
/// it and the places it allows as paths within that mount's filesystem.
struct Tree {
    index: usize,
    mount: u64,
    device: String,
    within: PathBuf,
    allowed: Vec<PathBuf>,
}

/// The trees that exist, with the mount table they were found in.
pub(super) struct Trees {
    table: Vec<Source>,
    found: Vec<Tree>,
}

impl Trees {
    /// `trees`: each canonical, with where in it a root may lie; `table`: `/proc/self/mountinfo`.
    pub(super) fn find(trees: &[(PathBuf, Vec<PathBuf>)], table: &[u8]) -> Trees {
        let table = sources(table);
        let found = trees.iter().enumerate().filter_map(|(index, (tree, allowed))| {
            let mount = mount_of(&table, tree)?;
            let on_its_filesystem = |a: &PathBuf| mount_of(&table, a).filter(|m| m.device == mount.device).and_then(|m| within(m, a));
            let allowed = allowed.iter().filter_map(on_its_filesystem).collect();
            Some(Tree { index, mount: mount.id, device: mount.device.clone(), within: within(mount, tree)?, allowed })
        });
        let found = found.collect();
        Trees { table, found }
    }

    /// The index of a tree `root` (canonical, existing) reaches through a mount of its own or one
    /// below it, if any.
    pub(super) fn reached_from(&self, root: &Path) -> Option<usize> {
        let views = self.views(root)?;
        let shows = |t: &Tree, (m, shown): &(&Source, PathBuf)| {
            let in_tree = shown.starts_with(&t.within) && !t.allowed.iter().any(|a| shown.starts_with(a));
            m.id != t.mount && m.device == t.device && (in_tree || t.within.starts_with(shown))
        };
        self.found.iter().find(|t| views.iter().any(|v| shows(t, v))).map(|t| t.index)
    }

    /// The index of a tree `root` (canonical, existing) shows whole, the tree itself or a directory
    /// above it, through a mount other than the tree's own (of its own or one below it), if any. For
    /// the home: a place below it reached by another name (a project) holds none of its own files.
    pub(super) fn shown_whole_from(&self, root: &Path) -> Option<usize> {
        let views = self.views(root)?;
        let shows = |t: &Tree, (m, shown): &(&Source, PathBuf)| m.id != t.mount && m.device == t.device && t.within.starts_with(shown);
        self.found.iter().find(|t| views.iter().any(|v| shows(t, v))).map(|t| t.index)
    }

    /// What `root` shows of each filesystem: its own mount's view of it, and each mount below it
    /// whole (its root field).
    fn views(&self, root: &Path) -> Option<Vec<(&Source, PathBuf)>> {
        let own = mount_of(&self.table, root)?;
        let below = self.table.iter().filter(|m| { let at = as_path(&m.point); at != root && at.starts_with(root) });
        Some(within(own, root).map(|w| (own, w)).into_iter().chain(below.map(|m| (m, as_path(&m.root).to_path_buf()))).collect())
    }
}

/// The mount `path` (canonical) is reached through: by its id (`statx`), or, before Linux 5.8,
/// the last mount of the deepest mount point above `path` (the one on top).
pub(super) fn mount_of<'t>(table: &'t [Source], path: &Path) -> Option<&'t Source> {
    if let Some(id) = mount_id(path) {
        return table.iter().find(|m| m.id == id);
    }
    let holding = table.iter().filter(|m| path.starts_with(as_path(&m.point)));
    holding.fold(None, |top: Option<&Source>, m| match top {
        Some(t) if t.point.len() > m.point.len() => Some(t),
        _ => Some(m),
    })
}

/// The id of the mount `path` is reached through, symlinks followed.
fn mount_id(path: &Path) -> Option<u64> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed statx is valid; a valid C string; the kernel writes at most the struct.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statx(libc::AT_FDCWD, c.as_ptr(), 0, libc::STATX_MNT_ID, &mut stx) };
    (rc == 0 && stx.stx_mask & libc::STATX_MNT_ID != 0).then_some(stx.stx_mnt_id)
}

/// `path` (on `mount`) as a path within its filesystem: the mount's root, then what lies below
/// the mount point.
pub(super) fn within(mount: &Source, path: &Path) -> Option<PathBuf> {
    let below = path.strip_prefix(as_path(&mount.point)).ok()?;
    Some(as_path(&mount.root).join(below))
}

pub(super) fn as_path(bytes: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(bytes))
}
