//! Which directory keeps this user from looking a path up: shared by the lookups that must tell
//! "nothing is there" from "something is there, out of sight" (`plan::store_lookup` for the state
//! stores, `policy::hidden` for the policy's `readOnlyPaths` and `denyRead`). Found by attackers'
//! reviews (rfix25, stmode25): a run can `chmod 000` a directory of its own, and a lookup that took
//! the EACCES that follows for absence planned the next run without the rule over what it hid.

use std::path::{Path, PathBuf};

/// An error that says nothing is there: a missing entry, or a non-directory on the way.
pub fn absent(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR))
}

/// A directory this user may not search.
pub struct Blocker {
    pub dir: PathBuf,
    pub mode: u32,
    /// This user's: a run (the same user) may have changed its mode, and may change it back.
    pub owned: bool,
}

impl Blocker {
    pub fn describe(&self) -> String {
        format!("{} (mode {:03o}) denies this user search permission", self.dir.display(), self.mode & 0o7777)
    }
}

/// Why `p`, whose lookup failed with `err`, is out of sight and what makes it reachable again, as
/// `(why, fix)`; `None` when nothing is there (`absent`), or when the directory that denies the
/// search is another user's: a run can neither change its mode nor pass it. The one judgment of
/// both lookups that fail closed (`plan::store_lookup`, `policy::hidden`).
pub fn hidden(p: &Path, err: &std::io::Error) -> Option<(String, String)> {
    if absent(err) {
        return None;
    }
    match blocker(p) {
        Some(b) if !b.owned => None,
        Some(b) => Some((b.describe(), format!("chmod u+rwx {}", b.dir.display()))),
        None => Some((format!("{err}"), format!("make {} reachable by this user again", p.display()))),
    }
}

/// The shallowest directory strictly above `p` that this user (the effective one) may not search.
pub fn blocker(p: &Path) -> Option<Blocker> {
    // The usual case in one call. The directory holding `p` can be searched: so could every one on
    // its way (a lookup needs search permission at each). Or a name on its way is missing: the
    // lookup found that out past every directory above it, each searched (a directory denying the
    // search fails a lookup with EACCES before anything below it is looked for). Nothing blocks.
    if let Some(parent) = p.parent() {
        match search_errno(parent) {
            0 | libc::ENOENT | libc::ENOTDIR => return None,
            _ => {}
        }
    }
    let mut above: Vec<&Path> = p.ancestors().skip(1).collect();
    above.reverse();
    above.into_iter().find_map(|dir| {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(dir).ok()?;
        (meta.is_dir() && !searchable(dir)).then(|| Blocker {
            dir: dir.to_path_buf(),
            mode: meta.mode(),
            // SAFETY: geteuid has no preconditions.
            owned: meta.uid() == unsafe { libc::geteuid() },
        })
    })
}

/// `blocker` of each of `paths`, in their order (`None` where nothing blocks), the same answers for paths that share
/// a grandparent with many others (a workspace's nested repositories, `deps/r0/.git` ..
/// `deps/r199/.git`): their usual case, the directory holding each searchable, is asked relative to
/// one descriptor of that grandparent, a lookup of one name instead of a path walk from `/` each.
/// The descriptor's open walked the grandparent's ancestors, each searched then; each relative
/// lookup searches the grandparent and the directory itself at its time. Any other answer is asked
/// again from `/`, by `blocker`.
pub fn blockers(paths: &[&Path]) -> Vec<Option<Blocker>> {
    use std::collections::HashMap;
    let mut by_grandparent: HashMap<&Path, Vec<usize>> = HashMap::new();
    for (i, p) in paths.iter().enumerate() {
        if let Some(g) = p.parent().and_then(Path::parent) {
            by_grandparent.entry(g).or_default().push(i);
        }
    }
    // Asked group by group, one descriptor open at a time, whatever order the paths came in.
    let mut nothing_blocks = vec![false; paths.len()];
    for (g, at) in by_grandparent.into_iter().filter(|(_, at)| at.len() >= MANY_SIBLINGS) {
        let Some(fd) = open_path(g) else { continue };
        for i in at {
            let name = paths[i].parent().and_then(Path::file_name);
            nothing_blocks[i] = name.is_some_and(|n| search_errno_at(&fd, n) == 0);
        }
    }
    paths.iter().zip(nothing_blocks).map(|(&p, clear)| if clear { None } else { blocker(p) }).collect()
}

/// Paths sharing a grandparent below this many are each asked from `/`: one open is not worth it.
const MANY_SIBLINGS: usize = 8;

/// An `O_PATH` descriptor of the directory `dir`, or `None`: always on macOS (no `O_PATH`; an
/// `O_RDONLY` open would need read permission, which a search does not), where each path is asked
/// from `/`.
#[cfg(not(target_os = "linux"))]
fn open_path(_dir: &Path) -> Option<std::os::fd::OwnedFd> {
    None
}

/// An `O_PATH` descriptor of the directory `dir`, or `None`.
#[cfg(target_os = "linux")]
fn open_path(dir: &Path) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: a valid NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    // SAFETY: a descriptor just opened, owned by nothing else.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// 0 when this user may search the entry `name` of the directory `at` (and so `at` itself), else
/// the errno of `faccessat(X_OK)`.
fn search_errno_at(at: &std::os::fd::OwnedFd, name: &std::ffi::OsStr) -> i32 {
    use std::os::fd::AsRawFd;
    access_errno(at.as_raw_fd(), name)
}

fn searchable(dir: &Path) -> bool {
    search_errno(dir) == 0
}

/// 0 when this user may search `dir`, else the errno of `faccessat(X_OK)`.
fn search_errno(dir: &Path) -> i32 {
    access_errno(libc::AT_FDCWD, dir.as_os_str())
}

/// `faccessat(at, path, X_OK, AT_EACCESS)`: 0, or its errno.
fn access_errno(at: std::os::fd::RawFd, path: &std::ffi::OsStr) -> i32 {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_bytes()) else { return libc::EINVAL };
    // SAFETY: a valid NUL-terminated path, and `at` AT_FDCWD or an open directory descriptor.
    match unsafe { libc::faccessat(at, c.as_ptr(), libc::X_OK, libc::AT_EACCESS) } {
        0 => 0,
        _ => std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grouped answers are `blocker`'s, in the paths' order: for siblings that exist, one that
    /// does not, and paths without a grandparent. (EACCES needs an ordinary user: path-modes.test.js.)
    #[test]
    fn blockers_answer_as_blocker_does_in_order() {
        let top = tempfile::tempdir().unwrap();
        let mut owned: Vec<PathBuf> = (0..10).map(|i| top.path().join(format!("r{i}")).join(".git")).collect();
        for p in &owned {
            std::fs::create_dir_all(p).unwrap();
        }
        owned.insert(3, top.path().join("gone").join(".git"));
        owned.push(PathBuf::from("/x"));
        let paths: Vec<&Path> = owned.iter().map(PathBuf::as_path).collect();
        let got: Vec<Option<PathBuf>> = blockers(&paths).into_iter().map(|b| b.map(|b| b.dir)).collect();
        let want: Vec<Option<PathBuf>> = paths.iter().map(|&p| blocker(p).map(|b| b.dir)).collect();
        assert_eq!(got, want);
        assert_eq!(got.len(), 12);
    }
}
