//! Path checks shared by every policy field: absolute, no NUL, canonical.

use std::path::{Component, Path, PathBuf};

use crate::error::{Result, SandboxError};

/// A user-given path, checked to be absolute and free of NUL bytes (which the OS would truncate,
/// silently turning one path into another).
pub(crate) fn absolute(option: &str, raw: &str) -> Result<PathBuf> {
    if raw.contains('\0') {
        return Err(SandboxError::invalid(option, "path contains a NUL byte"));
    }
    let p = PathBuf::from(raw);
    if !p.is_absolute() {
        return Err(SandboxError::invalid(option, format!("path must be absolute, got {raw:?}")));
    }
    Ok(p)
}

/// The canonical path plus, when the path does not exist, its first missing component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lenient {
    /// Canonical existing prefix with the missing rest appended verbatim.
    pub path: PathBuf,
    /// `None` when `path` exists; else the shallowest component of `path` that does not exist.
    pub first_missing: Option<PathBuf>,
}

/// Canonicalize a path that may not exist: resolve symlinks in the longest existing prefix and
/// append the rest. `.` and `..` in the missing rest cannot be resolved honestly (the symlinks they
/// would cross do not exist yet), so they are an error. A dangling symlink "exists" as a link but
/// does not resolve: it counts as missing, so nothing is ever bound through it. One walk of the
/// path (`path_walk`), not one `realpath` per missing component: a path past its bounds is an error,
/// and so is one through a symlink of /proc (`/proc/self/cwd/...`: where it leads depends on the
/// process that follows it, and what this process finds is not what the host's tools find).
pub(crate) fn canonical_lenient(option: &str, p: &Path) -> Result<Lenient> {
    let prefix = super::path_walk::longest_resolving(p).map_err(|why| SandboxError::invalid(option, format!("cannot resolve {}: its way {}", p.display(), why.why())))?;
    let rest: Vec<&std::ffi::OsStr> = p.components().skip(prefix.resolved).map(|c| c.as_os_str()).collect();
    if rest.is_empty() {
        return Ok(Lenient { path: prefix.canonical, first_missing: None });
    }
    if p.components().any(|c| matches!(c, Component::ParentDir | Component::CurDir)) {
        return Err(SandboxError::invalid(option, format!("cannot resolve `..` in the missing path {}", p.display())));
    }
    if prefix.resolved == 0 {
        return Err(SandboxError::invalid(option, format!("cannot resolve {}: nothing of it exists", p.display())));
    }
    let mut path = prefix.canonical;
    let mut first_missing = None;
    for name in rest {
        path.push(name);
        if first_missing.is_none() {
            first_missing = Some(path.clone());
        }
    }
    Ok(Lenient { path, first_missing })
}

/// `p.starts_with(base)` (whole components), by bytes where both are in the form
/// `Path::components` gives back (absolute, no empty or `.` name, no trailing `/`): then the
/// components of one begin with the other's exactly when its bytes do, up to a `/`. Anything else
/// is compared as `Path::starts_with` does. Asked of every nested repository's git directories
/// against each shared place and walked root every run (`links::SharedPlaces::hold`), where the
/// parse of both paths' components was ~2,500 instructions a repository (callgrind, perf41).
pub(crate) fn starts_with(p: &Path, base: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (a, b) = (p.as_os_str().as_bytes(), base.as_os_str().as_bytes());
    if !plain(a) || !plain(b) {
        return p.starts_with(base);
    }
    a.starts_with(b) && (a.len() == b.len() || b == b"/" || a[b.len()] == b'/')
}

/// Whether `b` is a path in the form `Path::components` gives back: `/`, or `/` then names, none
/// empty (no `//`, no trailing `/`) and none `.`.
fn plain(b: &[u8]) -> bool {
    b == b"/" || (b.first() == Some(&b'/') && b[1..].split(|&c| c == b'/').all(|n| !n.is_empty() && n != b"."))
}

/// A symlink a path is resolved through, as it was when the policy was resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkOnTheWay {
    /// Its canonical directory joined with its name.
    pub path: PathBuf,
    /// What it points to, as written in it.
    pub target: PathBuf,
    /// `(device, inode)`: a symlink cannot be changed in place, but one removed and made again at
    /// once gets the inode it freed back (the file system hands out the lowest free one), so the
    /// inode alone took a swapped link for the same; hence `changed_at` and `target` too.
    pub id: (u64, u64),
    /// Its ctime `(seconds, nanoseconds)`: a link made again has a new one, which no command can set back.
    pub changed_at: (i64, i64),
}

impl LinkOnTheWay {
    /// The symlink at `path` as it is now, read through its directory opened without following a
    /// symlink (a run may have swapped a directory above it for one); `None` when there is none.
    pub fn read(path: &Path) -> Option<LinkOnTheWay> {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::{OsStrExt, OsStringExt};
        let (dir, name) = (path.parent()?, path.file_name()?);
        let dir = crate::no_symlinks::open_dir(dir).ok()?;
        let name = std::ffi::CString::new(name.as_bytes()).ok()?;
        // SAFETY: a zeroed stat is valid; a valid descriptor and C string.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 || st.st_mode & libc::S_IFMT != libc::S_IFLNK {
            return None;
        }
        let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
        // SAFETY: the buffer is as long as said.
        let n = unsafe { libc::readlinkat(dir.as_raw_fd(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 || n as usize == buf.len() {
            return None;
        }
        buf.truncate(n as usize);
        #[allow(clippy::unnecessary_cast)] // the types differ between Linux and macOS
        let (id, changed_at) = ((st.st_dev as u64, st.st_ino as u64), (st.st_ctime as i64, st.st_ctime_nsec as i64));
        Some(LinkOnTheWay { path: path.to_path_buf(), target: std::ffi::OsString::from_vec(buf).into(), id, changed_at })
    }

    /// Whether the same link is still there, leading to the same place.
    pub fn is_still_there(&self) -> bool {
        LinkOnTheWay::read(&self.path).as_ref() == Some(self)
    }
}

/// Where a path's walk through its symlinks ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WalkEnd {
    /// At this path, every component of which exists and none is a symlink.
    At(PathBuf),
    /// At this component, which does not exist (nor does anything below it).
    Missing(PathBuf),
    /// Past 40 symlinks, as the kernel bounds a lookup.
    TooManyLinks,
}

/// `p` resolved as `realpath` resolves it, and the symlinks met on the way, in that order; except
/// that where `recorded` knows a link, the walk goes the way the recorded one led, whatever is at
/// its path now (`held_links`: a run that changed it while it lives must not move the masks of
/// runs that start meanwhile).
pub(crate) fn walk_links(p: &Path, recorded: &dyn Fn(&Path) -> Option<LinkOnTheWay>) -> (WalkEnd, Vec<LinkOnTheWay>) {
    // The components still to resolve, the next one last.
    fn pending(p: &Path) -> Vec<std::ffi::OsString> {
        p.components().filter(|c| !matches!(c, Component::RootDir | Component::Prefix(_))).map(|c| c.as_os_str().to_os_string()).rev().collect()
    }
    let (mut links, mut at, mut rest) = (Vec::new(), PathBuf::from("/"), pending(p));
    while let Some(name) = rest.pop() {
        match name.to_str() {
            Some(".") => continue,
            // `at` holds no link: going up is lexical.
            Some("..") => {
                at.pop();
                continue;
            }
            _ => {}
        }
        let next = at.join(&name);
        let link = match recorded(&next) {
            Some(link) => link,
            None => match next.symlink_metadata() {
                Err(_) => return (WalkEnd::Missing(next), links),
                Ok(meta) if !meta.file_type().is_symlink() => {
                    at = next;
                    continue;
                }
                Ok(_) => match LinkOnTheWay::read(&next) {
                    Some(link) => link,
                    None => return (WalkEnd::Missing(next), links),
                },
            },
        };
        if links.len() == 40 {
            return (WalkEnd::TooManyLinks, links);
        }
        if link.target.is_absolute() {
            at = PathBuf::from("/");
        }
        rest.extend(pending(&link.target));
        links.push(link);
    }
    (WalkEnd::At(at), links)
}

/// Sort shallowest first (fewest components), then by bytes, and drop duplicates.
pub(crate) fn sort_shallowest_first(paths: &mut Vec<PathBuf>) {
    sort_shallowest_first_by(paths, |p| p);
    // As bytes, as sorted: equal paths are adjacent equal bytes.
    paths.dedup_by(|a, b| a.as_os_str() == b.as_os_str());
}

/// Sort `items` by their `path`, shallowest first, then by bytes (stable). Each depth is counted
/// once, not twice per comparison, and paths compare as bytes, not component by component: the
/// carve-outs of hundreds of repositories are sorted on every run, and the comparator was a third
/// of the planning's time there. (Paths that differ only in redundant separators would not sort
/// together; the callers' paths are canonical or normalized.)
pub(crate) fn sort_shallowest_first_by<T>(items: &mut Vec<T>, path: impl Fn(&T) -> &Path) {
    use std::os::unix::ffi::OsStrExt;
    let mut keyed: Vec<(usize, T)> = items.drain(..).map(|t| (depth(path(&t)), t)).collect();
    keyed.sort_by(|(da, a), (db, b)| da.cmp(db).then_with(|| path(a).as_os_str().as_bytes().cmp(path(b).as_os_str().as_bytes())));
    items.extend(keyed.into_iter().map(|(_, t)| t));
}

/// The number of components. An absolute path's are counted on its bytes (its root, then each
/// segment that is neither empty nor `.`, as `components` skips them there): sorting the ~600
/// paths held absent at a run's tops parsed each into components (0.19 samples/run at 1999 Hz,
/// about 0.1 ms of the JavaScript thread a workspace-write run). A relative path keeps `components`
/// (a leading `.` is one there).
pub(crate) fn depth(p: &Path) -> usize {
    use std::os::unix::ffi::OsStrExt;
    let bytes = p.as_os_str().as_bytes();
    if !bytes.starts_with(b"/") {
        return p.components().count();
    }
    1 + bytes.split(|b| *b == b'/').filter(|s| !s.is_empty() && *s != b".").count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_as_components_do() {
        for p in ["/", "//", "/a", "/a/", "/a//b", "/a/./b", "/./a/.", "/a/../b", "/a/b/c/.git", "a", "./a", "a/./b", "../a", ""] {
            assert_eq!(depth(Path::new(p)), Path::new(p).components().count(), "{p}");
        }
    }

    #[test]
    fn absolute_rejects_relative_and_nul() {
        assert!(absolute("sandbox.denyRead[0]", "rel/x").unwrap_err().message.contains("must be absolute"));
        assert!(absolute("sandbox.denyRead[0]", "/a\0b").unwrap_err().message.contains("NUL"));
        assert_eq!(absolute("x", "/a b").unwrap(), PathBuf::from("/a b"));
    }

    #[test]
    fn lenient_canonicalizes_existing_prefix() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("d")).unwrap();
        std::os::unix::fs::symlink(real.join("d"), real.join("link")).unwrap();
        let l = canonical_lenient("x", &real.join("link/missing/deeper")).unwrap();
        assert_eq!(l.path, real.join("d/missing/deeper"));
        assert_eq!(l.first_missing, Some(real.join("d/missing")));
        let l = canonical_lenient("x", &real.join("link")).unwrap();
        assert_eq!(l, Lenient { path: real.join("d"), first_missing: None });
        assert!(canonical_lenient("x", &real.join("nope/../x")).is_err());
        // Where it leads depends on who follows it (an attacker's review): refused, and said why.
        #[cfg(target_os = "linux")]
        {
            std::os::unix::fs::symlink("/proc/self/cwd", real.join("magic")).unwrap();
            let e = canonical_lenient("sandbox.readOnlyPaths[0]", &real.join("magic/missing")).unwrap_err();
            assert!(e.message.contains("symlink of /proc"), "{}", e.message);
        }
    }

    #[test]
    fn links_on_the_way_are_those_realpath_meets() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("real/sub")).unwrap();
        std::os::unix::fs::symlink("real", r.join("a")).unwrap();
        std::os::unix::fs::symlink(r.join("a/sub"), r.join("b")).unwrap();
        let walk = |p: &Path| walk_links(p, &|_| None);
        let seen = |p: &Path| walk(p).1.into_iter().map(|l| (l.path, l.target)).collect::<Vec<_>>();
        assert_eq!(seen(&r.join("b/missing/x")), vec![(r.join("b"), r.join("a/sub")), (r.join("a"), PathBuf::from("real"))]);
        assert_eq!(walk(&r.join("b/missing/x")).0, WalkEnd::Missing(r.join("real/sub/missing")));
        assert_eq!(seen(&r.join("real/../a/./sub")), vec![(r.join("a"), PathBuf::from("real"))]);
        assert_eq!(walk(&r.join("real/../a/./sub")).0, WalkEnd::At(r.join("real/sub")));
        assert_eq!(seen(&r.join("real/sub")), vec![]);
        std::os::unix::fs::symlink("loop", r.join("loop")).unwrap();
        assert_eq!(walk(&r.join("loop")), (WalkEnd::TooManyLinks, vec![LinkOnTheWay::read(&r.join("loop")).unwrap(); 40]), "bounded");
    }

    #[test]
    fn a_recorded_link_is_followed_as_it_led() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("real")).unwrap();
        std::fs::create_dir_all(r.join("other")).unwrap();
        std::os::unix::fs::symlink("real", r.join("cfg")).unwrap();
        let was = LinkOnTheWay::read(&r.join("cfg")).unwrap();
        std::fs::remove_file(r.join("cfg")).unwrap();
        std::os::unix::fs::symlink("other", r.join("cfg")).unwrap();
        assert_eq!(walk_links(&r.join("cfg"), &|_| None).0, WalkEnd::At(r.join("other")));
        let recorded = |p: &Path| (p == was.path).then(|| was.clone());
        assert_eq!(walk_links(&r.join("cfg"), &recorded), (WalkEnd::At(r.join("real")), vec![was.clone()]));
        std::fs::remove_file(r.join("cfg")).unwrap();
        assert_eq!(walk_links(&r.join("cfg"), &recorded).0, WalkEnd::At(r.join("real")), "removed: still as it led");
    }

    /// A link made again at once can get the inode it freed: its target and ctime tell it apart.
    #[test]
    fn a_link_made_again_on_the_same_inode_is_not_the_same_link() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::os::unix::fs::symlink("real", r.join("cfg")).unwrap();
        let was = LinkOnTheWay::read(&r.join("cfg")).unwrap();
        assert!(was.is_still_there());
        std::fs::remove_file(r.join("cfg")).unwrap();
        std::os::unix::fs::symlink("other", r.join("cfg")).unwrap();
        let now = LinkOnTheWay::read(&r.join("cfg")).unwrap();
        // Whether or not the file system gave the inode back, a record of that inode with the
        // old target is not this link.
        assert!(!LinkOnTheWay { id: now.id, ..was.clone() }.is_still_there(), "same inode, another target");
        assert!(now.is_still_there());
        assert!(!LinkOnTheWay { changed_at: (0, 0), ..now.clone() }.is_still_there(), "another ctime");
        assert!(!was.is_still_there());
        std::fs::remove_file(r.join("cfg")).unwrap();
        std::fs::create_dir(r.join("cfg")).unwrap();
        assert_eq!(LinkOnTheWay::read(&r.join("cfg")), None);
        std::fs::create_dir(r.join("d")).unwrap();
        std::os::unix::fs::symlink("real", r.join("d/cfg")).unwrap();
        std::os::unix::fs::symlink("d", r.join("up")).unwrap();
        assert_eq!(LinkOnTheWay::read(&r.join("up/cfg")), None, "never through a link above it");
    }

    #[test]
    fn sorting() {
        let mut v = vec![PathBuf::from("/a/b/c"), PathBuf::from("/z"), PathBuf::from("/a/b"), PathBuf::from("/z")];
        sort_shallowest_first(&mut v);
        assert_eq!(v, vec![PathBuf::from("/z"), PathBuf::from("/a/b"), PathBuf::from("/a/b/c")]);
        let mut pairs = vec![("/b/c", 1), ("/a", 2), ("/a/c", 3), ("/a/b", 4), ("/a", 5)];
        sort_shallowest_first_by(&mut pairs, |(p, _)| Path::new(p));
        assert_eq!(pairs, vec![("/a", 2), ("/a", 5), ("/a/b", 4), ("/a/c", 3), ("/b/c", 1)], "stable, depth then bytes");
    }

    /// The same answer as `Path::starts_with` for plain and odd forms alike (`//`, trailing `/`,
    /// `.`, `..`, relative, empty), each against each.
    #[test]
    fn starts_with_agrees_with_path_starts_with() {
        let forms = ["/", "", "/a", "/a/", "/a//b", "/a/./b", "/a/b", "/a/b/", "/a/b/.", "/a/bc", "/a/b/c", "/ab", "/a/..", "/a/../b", "a", "a/b", "//a", "/.", "/a/b/c/.git", "/a/b/c/.git/hooks", "/a/b/.git"];
        for p in forms {
            for base in forms {
                let (p, base) = (Path::new(p), Path::new(base));
                assert_eq!(super::starts_with(p, base), p.starts_with(base), "{} starts with {}", p.display(), base.display());
            }
        }
        // Names that are not UTF-8 (a byte 0xff), compared as bytes all the same.
        use std::os::unix::ffi::OsStrExt;
        let odd: [&[u8]; 6] = [b"/a/\xff", b"/a/\xff/b", b"/a/\xffc", b"/a/\xff/", b"/\xff", b"/a/\xff/./b"];
        for p in odd {
            for base in odd.iter().copied().chain(forms.iter().map(|f| f.as_bytes())) {
                let (p, base) = (Path::new(std::ffi::OsStr::from_bytes(p)), Path::new(std::ffi::OsStr::from_bytes(base)));
                assert_eq!(super::starts_with(p, base), p.starts_with(base), "{} starts with {}", p.display(), base.display());
                assert_eq!(super::starts_with(base, p), base.starts_with(p), "{} starts with {}", base.display(), p.display());
            }
        }
    }
}
