//! Removing a directory tree of any depth, and finding the newest change in one
//! (`newest_ctime_at`): every step relative to an open directory descriptor
//! (never a path longer than one name, so a tree deeper than PATH_MAX, which a sandboxed command
//! can make with relative `mkdir`/`cd`, goes too), no recursion (its depth is the command's
//! choice), one descriptor open at a time (climbing back through `..`), never following a symlink.
//! Directories without owner access (overlayfs's `work/work` is 000, Go's module cache read-only)
//! are made accessible first.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::dir_names::names;

fn check(rc: libc::c_int) -> std::io::Result<libc::c_int> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// The entry `name` in `dir` is a directory (not following a symlink); `None`: it is gone.
fn is_dir_at(dir: &OwnedFd, name: &CStr) -> std::io::Result<Option<bool>> {
    match sandspawn_helper::stat_at::stat_at(dir.as_raw_fd(), name) {
        Ok(st) => Ok(Some(st.st_mode as u32 & libc::S_IFMT as u32 == libc::S_IFDIR as u32)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// A directory of the tree that is a mount point (another filesystem, or a bind mount of another
/// directory, maybe one outside the tree): neither walk goes into it. Found by an attacker's review
/// (mode39): a change set deleted the workspace's `data`; the host bind-mounted a directory from
/// outside the workspace there before applying; the apply's walk for the newest change went
/// through the mount (its files were older than the set), and the removal emptied that outside
/// directory, then failed at the mount point (EBUSY), reported as a mere conflict.
#[derive(Debug)]
pub struct MountPointMet(String);

impl std::fmt::Display for MountPointMet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is a mount point (another filesystem, or a bind mount, is mounted there): nothing in it is removed", self.0)
    }
}

impl std::error::Error for MountPointMet {}

/// `e` is a `MountPointMet`.
pub fn met_a_mount_point(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<MountPointMet>())
}

/// The id of the mount `fd` (any descriptor, `O_PATH` too) lies on; `None` where it cannot be told
/// (before Linux 5.8; macOS, which has no statx).
#[cfg(target_os = "linux")]
fn mount_id(fd: &OwnedFd) -> Option<u64> {
    // SAFETY: a zeroed statx is valid; a valid descriptor and an empty C string (AT_EMPTY_PATH).
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statx(fd.as_raw_fd(), c"".as_ptr(), libc::AT_EMPTY_PATH, libc::STATX_MNT_ID, &mut stx) };
    (rc == 0 && stx.stx_mask & libc::STATX_MNT_ID != 0).then_some(stx.stx_mnt_id)
}

#[cfg(not(target_os = "linux"))]
fn mount_id(_fd: &OwnedFd) -> Option<u64> {
    None
}

/// `Err(MountPointMet)` when `sub`, opened as `name` in `dir`, lies on another mount than `dir`.
pub(crate) fn same_mount(dir: &OwnedFd, sub: &OwnedFd, name: &CStr) -> std::io::Result<()> {
    let at = |fd: &OwnedFd| (mount_id(fd), device(fd));
    if other_mount(at(dir), at(sub)) {
        return Err(std::io::Error::other(MountPointMet(name.to_string_lossy().into_owned())));
    }
    Ok(())
}

/// Whether two directories, each as (mount id, device), lie on different mounts: by the ids where
/// both are given; else (Linux before 5.8, macOS) by the device, which tells another filesystem
/// but not a bind mount of the same one (found by a review of mode39's fix, revd39: without the
/// ids every mount point passed). A device that cannot be read tells nothing.
fn other_mount(a: (Option<u64>, Option<u64>), b: (Option<u64>, Option<u64>)) -> bool {
    match (a, b) {
        ((Some(x), _), (Some(y), _)) => x != y,
        ((_, Some(x)), (_, Some(y))) => x != y,
        _ => false,
    }
}

/// The device `fd`'s file lies on.
fn device(fd: &OwnedFd) -> Option<u64> {
    // SAFETY: a zeroed stat buffer is valid; our own descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0).then_some(st.st_dev as u64)
}

/// The subdirectory `name` of `dir`, given owner access first where it lacks it. The mode is
/// changed through a descriptor of exactly that directory (`O_PATH | O_NOFOLLOW`), never by name:
/// `fchmodat` follows a symlink, and one swapped in for the directory by a run writing the same
/// tree would have had the host change the mode of whatever it led to. Never another mount's.
fn enter(dir: &OwnedFd, name: &CStr) -> std::io::Result<OwnedFd> {
    match crate::no_symlinks::open_at(dir.as_raw_fd(), name) {
        Err(e) if e.raw_os_error() == Some(libc::EACCES) => {}
        Ok(fd) => {
            same_mount(dir, &fd, name)?;
            writable(&fd);
            return Ok(fd);
        }
        other => return other,
    }
    give_access(dir, name)
}

/// An opened directory its owner may not write (`chmod 500`: Go's module cache makes every module
/// 0555) made writable, or nothing in it can be removed: a review found such a run directory left
/// for good, the sweep failing on it each time.
fn writable(fd: &OwnedFd) {
    // SAFETY: a zeroed stat buffer is valid; our own descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0 && st.st_mode & 0o700 != 0o700 {
        // SAFETY: our own descriptor (opened for reading: fchmod takes it).
        unsafe { libc::fchmod(fd.as_raw_fd(), (st.st_mode & 0o7777) | 0o700) };
    }
}

#[cfg(target_os = "linux")]
fn give_access(dir: &OwnedFd, name: &CStr) -> std::io::Result<OwnedFd> {
    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: valid descriptor and C string.
    let at = check(unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) })?;
    // SAFETY: the descriptor openat just returned, owned from here.
    let at = unsafe { OwnedFd::from_raw_fd(at) };
    same_mount(dir, &at, name)?;
    let by_fd = CString::new(format!("/proc/self/fd/{}", at.as_raw_fd())).expect("no NUL");
    // SAFETY: a valid C string; the magic link leads to exactly the directory opened.
    unsafe { libc::chmod(by_fd.as_ptr(), 0o700) };
    crate::no_symlinks::open_at(at.as_raw_fd(), c".")
}

/// macOS: `AT_SYMLINK_NOFOLLOW` changes a link's own mode, never its target's.
#[cfg(not(target_os = "linux"))]
fn give_access(dir: &OwnedFd, name: &CStr) -> std::io::Result<OwnedFd> {
    // SAFETY: valid descriptor and C string.
    unsafe { libc::fchmodat(dir.as_raw_fd(), name.as_ptr(), 0o700, libc::AT_SYMLINK_NOFOLLOW) };
    crate::no_symlinks::open_at(dir.as_raw_fd(), name)
}


/// One directory on the way down: its name in its parent, the subdirectories still to empty, and
/// its parent's identity (device, inode), which the climb back through `..` must find.
struct Level {
    name: CString,
    todo: Vec<CString>,
    parent: (u64, u64),
}

fn identity(fd: &OwnedFd) -> std::io::Result<(u64, u64)> {
    // SAFETY: a zeroed stat to fill, a valid descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    check(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) })?;
    Ok((st.st_dev as u64, st.st_ino as u64))
}

/// `..` of `cur`, which must be the directory `expected` names: a tree moved while it is removed
/// (a run writing the same workspace while the host applies a change set there: `mv a/b b` while
/// `a/b` is emptied) must not lead the climb elsewhere, where the rest of the walk would take the
/// entries of another directory for the tree's (found by an attacker's review).
fn climb(cur: &OwnedFd, expected: (u64, u64)) -> std::io::Result<OwnedFd> {
    let up = crate::no_symlinks::open_at(cur.as_raw_fd(), c"..")?;
    if identity(&up)? != expected {
        return Err(std::io::Error::other("the tree being removed was moved meanwhile: the removal stopped there"));
    }
    Ok(up)
}

/// Empty `dir` of everything but subdirectories; returns those.
fn clear(dir: &OwnedFd) -> std::io::Result<Vec<CString>> {
    let mut subdirs = Vec::new();
    for n in names(dir)? {
        match is_dir_at(dir, &n)? {
            Some(true) => subdirs.push(n),
            // SAFETY: valid descriptor and C string.
            Some(false) => check(unsafe { libc::unlinkat(dir.as_raw_fd(), n.as_ptr(), 0) }).map(drop)?,
            None => {}
        }
    }
    Ok(subdirs)
}

/// Remove the directory `name` in `parent` with everything in it (`name` must be a directory, not
/// a link: the caller checked it, in a tree nobody else writes while it is removed).
pub fn remove_dir_at(parent: OwnedFd, name: &CStr) -> std::io::Result<()> {
    let top_parent = identity(&parent)?;
    let mut cur = enter(&parent, name)?;
    drop(parent);
    let mut path = vec![Level { name: name.to_owned(), todo: clear(&cur)?, parent: top_parent }];
    while let Some(level) = path.last_mut() {
        if let Some(sub) = level.todo.pop() {
            let parent = identity(&cur)?;
            cur = enter(&cur, &sub)?;
            #[cfg(test)]
            tests::ENTERED.with(|h| h.borrow_mut().as_mut().map(|f| f(&sub)));
            let todo = clear(&cur)?;
            path.push(Level { name: sub, todo, parent });
            continue;
        }
        let done = path.pop().expect("a level");
        cur = climb(&cur, done.parent)?;
        // SAFETY: valid descriptor and C string.
        check(unsafe { libc::unlinkat(cur.as_raw_fd(), done.name.as_ptr(), libc::AT_REMOVEDIR) })?;
    }
    Ok(())
}

/// `st_ctime` in nanoseconds.
fn ctime_ns(st: &libc::stat) -> i64 {
    st.st_ctime as i64 * 1_000_000_000 + st.st_ctime_nsec as i64
}

/// The newest ctime (nanoseconds) at or below `name` in `parent`, not following links; `None`
/// when it is gone. Walked as `remove_dir_at` walks (one descriptor at a time, no recursion): the
/// host's tree below a directory a change set replaces can be as deep as a run made it, and a
/// recursive walk there overflowed the stack of the process applying the set. Unlike removal, it
/// gives no directory access it lacks: an unreadable one is an error, and so is a mount point
/// (`MountPointMet`).
pub fn newest_ctime_at(parent: &OwnedFd, name: &CStr) -> std::io::Result<Option<i64>> {
    let st = match sandspawn_helper::stat_at::stat_at(parent.as_raw_fd(), name) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        other => other?,
    };
    let mut newest = ctime_ns(&st);
    if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
        return Ok(Some(newest));
    }
    let mut cur = crate::no_symlinks::open_at(parent.as_raw_fd(), name)?;
    same_mount(parent, &cur, name)?;
    // Each level: the subdirectories still to look at, and the identity of its parent.
    let mut path = vec![(scan(&cur, &mut newest)?, (0, 0))];
    while let Some((todo, _)) = path.last_mut() {
        if let Some(sub) = todo.pop() {
            let parent = identity(&cur)?;
            match crate::no_symlinks::open_at(cur.as_raw_fd(), &sub) {
                Ok(fd) => {
                    same_mount(&cur, &fd, &sub)?;
                    cur = fd
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            }
            let todo = scan(&cur, &mut newest)?;
            path.push((todo, parent));
            continue;
        }
        let (_, parent) = path.pop().expect("a level");
        if !path.is_empty() {
            cur = climb(&cur, parent)?;
        }
    }
    Ok(Some(newest))
}

/// Fold the ctimes of `dir`'s entries into `newest`; returns its subdirectories.
fn scan(dir: &OwnedFd, newest: &mut i64) -> std::io::Result<Vec<CString>> {
    let mut subdirs = Vec::new();
    for n in names(dir)? {
        let st = match sandspawn_helper::stat_at::stat_at(dir.as_raw_fd(), &n) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            other => other?,
        };
        *newest = (*newest).max(ctime_ns(&st));
        if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
            subdirs.push(n);
        }
    }
    Ok(subdirs)
}

/// Remove `p` (a tree, a file or a link); missing is fine.
pub fn remove_tree(p: &Path) -> std::io::Result<()> {
    let m = match std::fs::symlink_metadata(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
        Ok(m) => m,
    };
    if !m.is_dir() {
        return std::fs::remove_file(p);
    }
    let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else { return Err(std::io::Error::from_raw_os_error(libc::EINVAL)) };
    let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
    let dir = std::fs::File::open(parent)?;
    let name = CString::new(name.as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: the descriptor is the File's, handed over.
    remove_dir_at(unsafe { OwnedFd::from_raw_fd(std::os::fd::IntoRawFd::into_raw_fd(dir)) }, &name)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Found by a review of mode39's fix (revd39): before Linux 5.8 statx gives no mount id, and
    /// the check let every mount point pass (apply emptied another filesystem mounted in the
    /// workspace, as before the fix). The device then tells another filesystem (not a bind mount of
    /// the same one, which only the id tells).
    #[test]
    fn another_device_is_another_mount_when_no_mount_id_is_given() {
        assert!(other_mount((Some(1), Some(7)), (Some(2), Some(7))), "the ids differ");
        assert!(!other_mount((Some(1), Some(7)), (Some(1), Some(7))));
        assert!(!other_mount((Some(1), Some(7)), (Some(1), Some(8))), "the id decides where it is given (a btrfs subvolume)");
        assert!(other_mount((None, Some(7)), (None, Some(8))), "no id (Linux < 5.8): another device is another filesystem");
        assert!(!other_mount((None, Some(7)), (None, Some(7))), "a bind mount of the same filesystem: not told without the id");
    }

    type Hook = Box<dyn FnMut(&CStr)>;
    thread_local! {
        /// Called on this thread when `remove_dir_at` has entered a subdirectory (its name).
        pub static ENTERED: std::cell::RefCell<Option<Hook>> = const { std::cell::RefCell::new(None) };
    }

    /// Found by an attacker's review: the climb back through `..` trusted that nobody moved the
    /// tree meanwhile. A run writing the same workspace while the host applied a change set
    /// there could move the directory being emptied up to the workspace's top (`mv a/b b`): the
    /// climb then landed at the top, and the rest of `a`'s subdirectories were taken by name from
    /// there (the workspace's own `x1`, `x2`, ... emptied and removed).
    #[test]
    fn a_directory_moved_out_during_removal_stops_it_there() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().join("ws");
        for i in 0..20 {
            std::fs::create_dir_all(ws.join("a").join(format!("x{i}"))).unwrap();
            std::fs::create_dir_all(ws.join(format!("x{i}"))).unwrap();
            std::fs::write(ws.join(format!("x{i}/precious")), "p").unwrap();
        }
        let moved = std::cell::Cell::new(false);
        let ws2 = ws.clone();
        ENTERED.with(|h| {
            *h.borrow_mut() = Some(Box::new(move |name: &CStr| {
                if !moved.replace(true) {
                    let name = std::ffi::OsStr::from_bytes(name.to_bytes());
                    std::fs::rename(ws2.join(name), ws2.join("aside")).unwrap();
                    std::fs::rename(ws2.join("a").join(name), ws2.join(name)).unwrap();
                }
            }))
        });
        let result = remove_tree(&ws.join("a"));
        ENTERED.with(|h| h.borrow_mut().take());
        let kept = (0..20).filter(|i| ws.join(format!("x{i}/precious")).exists()).count();
        assert_eq!(kept, 19, "only the one moved out went: nothing of the top was taken for the tree's");
        assert!(result.is_err(), "the removal stops where the tree changed under it");
    }

    /// A chain of `depth` directories named `name` below `top`, made relative to descriptors.
    pub fn deep_chain(top: &Path, depth: usize, name: &str) {
        let name = CString::new(name).unwrap();
        let mut fd = crate::no_symlinks::open_dir(top).unwrap();
        for _ in 0..depth {
            // SAFETY: valid descriptor and C string.
            assert_eq!(unsafe { libc::mkdirat(fd.as_raw_fd(), name.as_ptr(), 0o755) }, 0);
            fd = crate::no_symlinks::open_at(fd.as_raw_fd(), &name).unwrap();
        }
        // SAFETY: as above.
        let f = unsafe { libc::openat(fd.as_raw_fd(), c"f".as_ptr(), libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC, 0o600) };
        assert!(f >= 0);
        // SAFETY: ours.
        unsafe { libc::close(f) };
        // An inaccessible directory at the bottom, as overlayfs leaves `work/work`.
        unsafe { libc::mkdirat(fd.as_raw_fd(), c"locked".as_ptr(), 0) };
    }

    #[test]
    fn removes_trees_deeper_than_path_max_without_following_links() {
        let t = tempfile::tempdir().unwrap();
        let tree = t.path().join("tree");
        std::fs::create_dir(&tree).unwrap();
        deep_chain(&tree, 30, &"x".repeat(200));
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), "k").unwrap();
        std::os::unix::fs::symlink(&outside, tree.join("link")).unwrap();
        remove_tree(&tree).unwrap();
        assert!(!tree.exists());
        assert!(outside.join("keep").exists(), "nothing through the link");
        remove_tree(&tree).unwrap();
        let file = t.path().join("file");
        std::fs::write(&file, "").unwrap();
        remove_tree(&file).unwrap();
        assert!(!file.exists());
    }
}
