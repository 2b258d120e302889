//! How far a path resolves, as `realpath` resolves it, in time linear in its components and
//! bounded. Found by an attacker's review: a hook symlinked to `../a/a/...(500).../x/x/...(480)`
//! was judged by popping the missing components one at a time and calling `realpath` on each
//! prefix left, and `realpath` reads every prefix of its path again (`readlink` of each): seconds
//! of host time per hook, on every run, after the command had exited. Here each component is
//! looked up once, from the descriptor of the directory before it.

use std::ffi::{CString, OsStr};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use super::procfs::Followed;

/// Symlinks one resolution follows at most, as `realpath` and the kernel (`MAXSYMLINKS`).
pub(crate) const MAX_LINKS: usize = 40;

/// Components (those of the path and of the links' targets, `.` and `..` included) one resolution
/// looks up at most: a path no program uses is deeper, and each costs a few system calls.
pub(crate) const MAX_STEPS: usize = 4096;

thread_local! {
    /// What is left of the current run's budget (`RunBudget`) on this thread, if one is set.
    static RUN_STEPS: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// A budget of steps (components looked up, hooks directory entries listed) for all of one run's
/// hook checks on this thread, set while it lives: `MAX_STEPS` bounds one path, but a workspace can
/// hold a thousand repositories with 256 hooks each (found by an attacker's review: every later
/// run paid seconds of host time for what one run planted). Past it, what is left is not judged,
/// and the callers say so (`notEnforced`, `scan-incomplete`).
pub(crate) struct RunBudget(Option<usize>);

impl RunBudget {
    pub(crate) fn set(steps: usize) -> RunBudget {
        RunBudget(RUN_STEPS.with(|b| b.replace(Some(steps))))
    }
}

impl Drop for RunBudget {
    fn drop(&mut self) {
        RUN_STEPS.with(|b| b.set(self.0));
    }
}

/// Spend `n` steps of the run's budget: false (nothing spent) when fewer are left. Always true
/// where no budget is set.
pub(crate) fn spend(n: usize) -> bool {
    RUN_STEPS.with(|b| match b.get() {
        None => true,
        Some(left) if left >= n => {
            b.set(Some(left - n));
            true
        }
        Some(_) => false,
    })
}

/// What is left of the run's budget on this thread, if one is set.
pub(crate) fn left() -> Option<usize> {
    RUN_STEPS.with(|b| b.get())
}

/// Why a path's way could not be judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unjudged {
    /// Past `MAX_STEPS`, or past the run's budget (`RunBudget`).
    TooLong,
    /// Through more than `MAX_LINKS` symlinks, where the kernel stops (`ELOOP`): the rest of the
    /// way is not looked up, and taking it as written names a "canonical" path through symlinks
    /// (found by an attacker's review, rfix24, chain_dos.js).
    TooManyLinks,
    /// Through a symlink on procfs (`/proc/self`, `/proc/<pid>/cwd`, `/dev/fd` on the way to them):
    /// each leads wherever the process following it is (`procfs`), so where this process's walk
    /// ends is not where a host tool's, from its own cwd, root and descriptors, does.
    ThroughProc,
    /// Not followed: the links judged before it took up the steps all the links of one judgement
    /// may take (`planted::links_budget`: a run's links made, a change set's).
    Spent,
}

impl Unjudged {
    /// Why, for a message: "its way ...".
    pub fn why(self) -> String {
        match self {
            Unjudged::TooLong => format!("is longer than {MAX_STEPS} components (its target and the symlinks on it)"),
            Unjudged::TooManyLinks => format!("goes through more than {MAX_LINKS} symlinks, where the kernel stops following them"),
            Unjudged::ThroughProc => "goes through a symlink of /proc (/proc/self, /proc/<pid>/cwd, root or fd/N, /dev/fd, /dev/stdin), \
                                      which leads wherever the process following it is (its own working directory, root and open files)"
                .to_string(),
            Unjudged::Spent => "was not followed: the symlinks judged before it took up all the steps those of one run (or change set) may take".to_string(),
        }
    }
}

/// The longest prefix of a path that resolves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prefix {
    /// Its canonical path (empty when not even the first component of a relative path resolves).
    pub canonical: PathBuf,
    /// How many of the path's components (`Path::components`) it holds: all of them when the
    /// whole path resolves.
    pub resolved: usize,
}

/// Where `realpath` of each prefix of `p` (by `Path::components`) succeeds, the longest of them:
/// each prefix resolves as the one before it and one more component, so one walk finds it. An error
/// past `MAX_STEPS`, or through a symlink on procfs: the path could not be judged.
pub(crate) fn longest_resolving(p: &Path) -> Result<Prefix, Unjudged> {
    match open_without_links(p) {
        Some(Ok(())) => return Ok(Prefix { canonical: p.components().collect(), resolved: p.components().count() }),
        Some(Err(e)) if e.raw_os_error() == Some(libc::ENOENT) => {
            if let Some(prefix) = existing_prefix(p) {
                return Ok(prefix);
            }
        }
        _ => {}
    }
    walk(p, false)
}

/// For `p` that `openat2` with `RESOLVE_NO_SYMLINKS` found missing (`ENOENT`: a name missing
/// before any symlink, which it refuses with `ELOOP`): its longest prefix that opens the same way,
/// shortest last, `/` itself at worst. What `walk` finds: no link before the missing name, so each
/// prefix is its own canonical form, and the walk stops at the first name missing. Measured
/// (perf45, `strace -f`): the missing system paths a writable root's policy asks of every run
/// (`/var/spool/cron`, `/usr/lib32`, `/lib32`, `/etc/ld.so.preload`, ...) cost the walk 3 calls a
/// component from `/`; this, an `openat2` and a close for the parent. `None` (walk instead) where a
/// prefix says anything but `ENOENT` (a link or a file put there since, no search permission) or
/// the path is past the walk's bound.
fn existing_prefix(p: &Path) -> Option<Prefix> {
    let parts: Vec<Component> = p.components().collect();
    if parts.len() > MAX_STEPS {
        return None;
    }
    for n in (1..parts.len()).rev() {
        let prefix: PathBuf = parts[..n].iter().collect();
        if n == 1 {
            return Some(Prefix { canonical: prefix, resolved: 1 });
        }
        match open_without_links(&prefix)? {
            Ok(()) => return Some(Prefix { canonical: prefix, resolved: n }),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
            Err(_) => return None,
        }
    }
    None
}

/// Whether `p` opens with no symlink on its way (`openat2` with `RESOLVE_NO_SYMLINKS`, which
/// refuses magic links too): where it does, `p` is absolute, names no `.` or `..`, exists and is
/// its own canonical path, as `realpath` and `walk` would say, for one system call and a close
/// instead of three a component (measured: writable roots resolve ~35 system paths on the
/// JavaScript thread every run, `host_code`, nearly all of them without a link). `None` for a
/// relative path or one naming `.` or `..`, and where the kernel lacks `openat2`: resolve it the
/// long way.
fn open_without_links(p: &Path) -> Option<std::io::Result<()>> {
    let mut parts = p.components();
    if parts.next() != Some(Component::RootDir) || !parts.all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    #[cfg(target_os = "linux")]
    {
        use sandspawn_helper::no_symlinks::{openat2, RESOLVE_NO_MAGICLINKS, RESOLVE_NO_SYMLINKS};
        let c = CString::new(p.as_os_str().as_bytes()).ok()?;
        // No `O_NOFOLLOW`: a trailing symlink is refused (`ELOOP`) rather than opened itself.
        Some(openat2(&c, libc::O_PATH, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)?.map(drop))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// `std::fs::canonicalize`, for one system call where `open_without_links` finds the path is.
/// A component missing before any symlink (`ENOENT` under `RESOLVE_NO_SYMLINKS`, which stops at the
/// first link with `ELOOP`) is missing for `realpath` too: that error, without walking it again.
pub(crate) fn canonicalize(p: &Path) -> std::io::Result<PathBuf> {
    match open_without_links(p) {
        Some(Ok(())) => Ok(p.components().collect()),
        Some(Err(e)) if e.raw_os_error() == Some(libc::ENOENT) => Err(e),
        _ => std::fs::canonicalize(p),
    }
}

/// As `longest_resolving`, each step also spent from the run's budget (`RunBudget`): `TooLong` once
/// it has run out, and `TooManyLinks` past `MAX_LINKS` symlinks (not the prefix before them). For
/// what a run can multiply (hooks' ways), not for the policy's own paths.
pub(crate) fn longest_resolving_within_budget(p: &Path) -> Result<Prefix, Unjudged> {
    walk(p, true)
}

/// As `longest_resolving_within_budget` for `start.join(rel)`, `start` a canonical directory, walked
/// from a descriptor of it: not from `/` again (found by an attacker's review, rfix23,
/// nm_deep_links.js: a thousand links of one directory each had its way resolved from `/`). Each
/// directory entered is shown to `visit` with a descriptor of it, for what it looks at there by
/// `*at` calls (a lookup from `/` per name cost time in the depth of the way); `false` from it
/// stops the walk (`TooLong`). `resolved` counts `rel`'s components. Past `MAX_LINKS` symlinks:
/// `TooManyLinks`, as `longest_resolving_within_budget`.
pub(crate) fn longest_resolving_from(start: &Path, rel: &Path, visit: &mut Visit) -> Result<Prefix, Unjudged> {
    let parts: Vec<Component> = rel.components().collect();
    let at = if rel.is_absolute() { Place::root() } else { Place::at(start) };
    let Some(at) = at else { return Ok(Prefix { canonical: PathBuf::new(), resolved: 0 }) };
    walk_on(at, &parts, false, true, visit)
}

/// What `longest_resolving_from` shows each directory it enters (its canonical path, a descriptor).
pub(crate) type Visit<'a> = dyn FnMut(&Path, BorrowedFd) -> bool + 'a;

fn walk(p: &Path, budgeted: bool) -> Result<Prefix, Unjudged> {
    let parts: Vec<Component> = p.components().collect();
    let nothing = Prefix { canonical: PathBuf::new(), resolved: 0 };
    let Some(at) = Place::start(p.is_absolute()).filter(|_| !parts.is_empty()) else { return Ok(nothing) };
    walk_on(at, &parts, !p.is_absolute(), budgeted, &mut |_, _| true)
}

/// `walk` from `at`; `from_cwd`: `parts` are relative to the working directory (a prefix that does
/// not resolve at all is empty, as `realpath` of nothing).
fn walk_on(mut at: Place, parts: &[Component], from_cwd: bool, budgeted: bool, visit: &mut Visit) -> Result<Prefix, Unjudged> {
    // Components of links' targets still to look up, the next one last; while there are some, the
    // path's component `i - 1` is not resolved yet, and `before` is where the prefix before it led.
    let mut pending: Vec<Vec<u8>> = Vec::new();
    let mut before = PathBuf::new();
    let (mut links, mut steps, mut i) = (0, 0, 0);
    while i < parts.len() || !pending.is_empty() {
        steps += 1;
        if steps > MAX_STEPS || (budgeted && !spend(1)) {
            return Err(Unjudged::TooLong);
        }
        let of_the_path = pending.is_empty();
        let name = match pending.pop() {
            Some(name) => name,
            None => {
                i += 1;
                match parts[i - 1] {
                    // Where `start` began.
                    Component::RootDir | Component::Prefix(_) => continue,
                    c => c.as_os_str().as_bytes().to_vec(),
                }
            }
        };
        let failed = match at.step(&name) {
            Err(Stop::ThroughProc) => return Err(Unjudged::ThroughProc),
            Err(Stop::Unresolved) => {
                if of_the_path {
                    before = std::mem::take(&mut at.path);
                }
                true
            }
            Ok(None) => {
                // A directory entered (`.` and `..` too; `visit` tells those it has seen).
                if at.is_dir && at.dir.as_ref().is_some_and(|d| !visit(&at.path, d.as_fd())) {
                    return Err(Unjudged::TooLong);
                }
                false
            }
            Ok(Some(target)) => {
                if of_the_path {
                    before = at.path.clone();
                }
                links += 1;
                if links > MAX_LINKS && budgeted {
                    // What follows was not looked up: a caller taking it as written (`link_looks`,
                    // `hook_links::resolve`) names a path through symlinks. `realpath` fails the
                    // same; the policy's own paths keep the prefix (`longest_resolving`).
                    return Err(Unjudged::TooManyLinks);
                }
                pending.extend(target_parts(&target));
                match target.starts_with(b"/") {
                    true => Place::root().map(|root| at = root).is_none() || links > MAX_LINKS,
                    false => links > MAX_LINKS,
                }
            }
        };
        if failed {
            let canonical = if i <= 1 && from_cwd { PathBuf::new() } else { before };
            return Ok(Prefix { canonical, resolved: i - 1 });
        }
    }
    Ok(Prefix { canonical: at.path, resolved: parts.len() })
}

/// A link's target as components to look up, the first one last; a trailing `/` asks for a
/// directory (`.`), as the kernel does.
fn target_parts(target: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    let dir_asked = target.ends_with(b"/").then(|| b".".to_vec());
    let names = target.split(|b| *b == b'/').filter(|n| !n.is_empty()).map(<[u8]>::to_vec);
    names.chain(dir_asked).collect::<Vec<_>>().into_iter().rev()
}

/// What `p` leads to, followed as a host tool follows it (`procfs::follow_by_kernel`); where the
/// kernel cannot refuse magic links (before Linux 5.6), walked here, a way through procfs or past
/// `MAX_STEPS` unjudged.
pub(crate) fn follow(p: &Path) -> Followed {
    if let Some(followed) = super::procfs::follow_by_kernel(p) {
        return followed;
    }
    match longest_resolving(p) {
        Err(_) => Followed::Unjudged,
        Ok(prefix) if prefix.resolved == p.components().count() => prefix.canonical.symlink_metadata().map_or(Followed::Nowhere, Followed::To),
        Ok(_) => Followed::Nowhere,
    }
}

/// Why a step stopped.
enum Stop {
    /// The name cannot be resolved (missing, not a directory where one is needed, not searchable).
    Unresolved,
    /// It is a symlink on procfs (`Unjudged::ThroughProc`).
    ThroughProc,
}

/// Where a walk is: a canonical path, and a descriptor of the last directory on it.
struct Place {
    path: PathBuf,
    dir: Option<OwnedFd>,
    /// Whether `path` is that directory (not a file in it).
    is_dir: bool,
}

/// What a directory is opened with to look up names in it: on Linux `O_PATH`, which needs no read
/// permission (a directory one may only search is walked through, as `realpath` does).
#[cfg(target_os = "linux")]
const LOOKUP: i32 = libc::O_PATH;
#[cfg(not(target_os = "linux"))]
const LOOKUP: i32 = libc::O_RDONLY;

impl Place {
    /// `/`, or for a relative path the working directory.
    fn start(absolute: bool) -> Option<Place> {
        if absolute {
            return Place::root();
        }
        let path = std::env::current_dir().ok()?;
        let dir = open(libc::AT_FDCWD, OsStr::new(".").as_bytes())?;
        Some(Place { path, dir: Some(dir), is_dir: true })
    }

    /// The canonical directory `path`, opened by its path (it holds no symlink).
    fn at(path: &Path) -> Option<Place> {
        let dir = open(libc::AT_FDCWD, path.as_os_str().as_bytes())?;
        Some(Place { path: path.to_path_buf(), dir: Some(dir), is_dir: true })
    }

    fn root() -> Option<Place> {
        Some(Place { path: PathBuf::from("/"), dir: Some(open(libc::AT_FDCWD, b"/")?), is_dir: true })
    }

    /// One component looked up: moved on to it (`Ok(None)`), or it is a symlink and its target is
    /// returned (the place stays), or it cannot be resolved, or it is a symlink on procfs, whose
    /// target this process reads for itself.
    fn step(&mut self, name: &[u8]) -> Result<Option<Vec<u8>>, Stop> {
        let Some(dir) = self.dir.as_ref().filter(|_| self.is_dir) else { return Err(Stop::Unresolved) };
        match name {
            b"." => return Ok(None),
            b".." => {
                // `path` holds no link: its parent is the directory's.
                self.dir = Some(open(dir.as_raw_fd(), b"..").ok_or(Stop::Unresolved)?);
                self.path.pop();
                return Ok(None);
            }
            _ => {}
        }
        // A directory first, opened without following (`O_DIRECTORY | O_NOFOLLOW` refuses a link
        // at the name, with `ENOTDIR` or `ELOOP`): most components are, and then the `fstatat`
        // that would have said so is not needed; anything else is looked at as before.
        if let Some(sub) = open(dir.as_raw_fd(), name) {
            self.dir = Some(sub);
            self.path.push(OsStr::from_bytes(name));
            return Ok(None);
        }
        let c_name = CString::new(name).map_err(|_| Stop::Unresolved)?;
        // SAFETY: a zeroed stat is valid; a valid descriptor and C string.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstatat(dir.as_raw_fd(), c_name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
            return Err(Stop::Unresolved);
        }
        match st.st_mode & libc::S_IFMT {
            libc::S_IFLNK if super::procfs::on_procfs(dir.as_raw_fd()) => Err(Stop::ThroughProc),
            libc::S_IFLNK => {
                let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
                // SAFETY: the buffer is as long as said.
                let n = unsafe { libc::readlinkat(dir.as_raw_fd(), c_name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
                if n <= 0 || n as usize == buf.len() {
                    return Err(Stop::Unresolved);
                }
                buf.truncate(n as usize);
                Ok(Some(buf))
            }
            libc::S_IFDIR => {
                // Opened without following: swapped for a link meanwhile, it fails.
                self.dir = Some(open(dir.as_raw_fd(), name).ok_or(Stop::Unresolved)?);
                self.path.push(OsStr::from_bytes(name));
                Ok(None)
            }
            _ => {
                self.path.push(std::ffi::OsString::from_vec(name.to_vec()));
                self.is_dir = false;
                Ok(None)
            }
        }
    }
}

/// The directory `name` in `dir`, for looking up names in, never through a symlink.
fn open(dir: i32, name: &[u8]) -> Option<OwnedFd> {
    let name = CString::new(name).ok()?;
    // SAFETY: a valid descriptor (or AT_FDCWD) and C string.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), LOOKUP | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    // SAFETY: a descriptor just opened, owned by nobody else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `p` where it opens with no symlink on its way (what `longest_resolving` answers in one call).
    fn already_canonical(p: &Path) -> Option<PathBuf> {
        open_without_links(p)?.ok().map(|()| p.components().collect())
    }

    fn canonicalize_each(p: &Path) -> Prefix {
        let parts: Vec<Component> = p.components().collect();
        for n in (0..=parts.len()).rev() {
            let prefix: PathBuf = parts[..n].iter().collect();
            if let Ok(canonical) = std::fs::canonicalize(&prefix) {
                return Prefix { canonical, resolved: n };
            }
        }
        Prefix { canonical: PathBuf::new(), resolved: 0 }
    }

    /// A scratch directory (canonical) holding `d/e` and the file `d/file`.
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("d/e")).unwrap();
        std::fs::write(r.join("d/file"), "").unwrap();
        (t, r)
    }

    /// As `realpath` of each prefix, the way the callers did it before.
    #[test]
    fn as_realpath_of_each_prefix() {
        let (_t, r) = tree();
        let link = |to: &str, at: &str| std::os::unix::fs::symlink(to, r.join(at)).unwrap();
        link("d", "rel");
        link(r.join("d/e").to_str().unwrap(), "abs");
        link("missing/deeper", "dangling");
        link("d/file/", "file-as-dir");
        link("d/file", "to-file");
        link("loop", "loop");
        link("rel/../rel/e/../../d/./e", "winding");
        let mut chain = "d".to_string();
        for n in 0..MAX_LINKS + 1 {
            link(&chain, &format!("c{n}"));
            chain = format!("c{n}");
        }
        let cases = [
            "", "d", "d/e", "rel/e", "abs", "abs/..", "abs/../..", "abs/missing/x", "rel/../d/e/../../rel", "dangling", "dangling/x",
            "d/file", "d/file/x", "d/file/..", "file-as-dir", "to-file", "to-file/..", "loop", "loop/x", "winding", "winding/x/../y",
            "missing/x", "c39", "c39/e", "c40", "c40/e", "d/../../..", "missing", "d/missing", "d/e/missing/deeper/x", "rel/missing",
        ];
        for case in cases {
            let p = r.join(case);
            assert_eq!(longest_resolving(&p), Ok(canonicalize_each(&p)), "{case}");
        }
        assert_eq!(longest_resolving(Path::new("/")), Ok(Prefix { canonical: "/".into(), resolved: 1 }));
    }

    /// `canonicalize` (one `openat2` where no symlink is on the way) says what `realpath` says, and
    /// `already_canonical` answers only for a path that is its own canonical form: a link anywhere
    /// on the way, the last component included, `..`, a missing name or a relative path is left to
    /// the walk (measured: the system paths a writable root resolves every run, `host_code`).
    #[test]
    fn the_one_call_way_agrees_with_realpath() {
        let (_t, r) = tree();
        let link = |to: &str, at: &str| std::os::unix::fs::symlink(to, r.join(at)).unwrap();
        link("d", "rel");
        link("d/file", "to-file");
        link("missing", "dangling");
        for case in ["", "d", "d/e", "d/file", "rel", "rel/e", "to-file", "dangling", "dangling/x", "missing", "missing/x", "d/file/x", "d/e/..", "d/./e"] {
            let p = r.join(case);
            let (ours, theirs) = (canonicalize(&p), std::fs::canonicalize(&p));
            assert_eq!(ours.as_ref().ok(), theirs.as_ref().ok(), "{case}");
            assert_eq!(ours.err().map(|e| e.kind()), theirs.err().map(|e| e.kind()), "{case}");
            let own_form = ["", "d", "d/e", "d/file", "d/./e"].contains(&case);
            #[cfg(target_os = "linux")]
            assert_eq!(already_canonical(&p), own_form.then(|| std::fs::canonicalize(&p).unwrap()), "{case}");
            assert_eq!(longest_resolving(&p), Ok(canonicalize_each(&p)), "{case}");
            #[cfg(not(target_os = "linux"))]
            let _ = own_form;
        }
        assert_eq!(already_canonical(Path::new("d")), None, "relative");
        #[cfg(target_os = "linux")]
        assert_eq!(already_canonical(Path::new("/proc/self/cwd")), None, "a magic link on the way");
    }

    #[test]
    fn bounded() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let deep = "./".repeat(MAX_STEPS);
        assert_eq!(longest_resolving(&r.join(&deep)).unwrap().resolved, r.components().count(), "`.` dropped as Path does");
        // Targets of 2,000 components each: three are past the bound, two are not.
        let winding = "./".repeat(2000);
        std::os::unix::fs::symlink(&winding, r.join("l0")).unwrap();
        std::os::unix::fs::symlink(format!("{winding}l0"), r.join("l1")).unwrap();
        std::os::unix::fs::symlink(format!("{winding}l1"), r.join("l2")).unwrap();
        assert_eq!(longest_resolving(&r.join("l1")), Ok(Prefix { canonical: r.clone(), resolved: r.components().count() + 1 }));
        assert_eq!(longest_resolving(&r.join("l2")), Err(Unjudged::TooLong));
    }

    /// Found by an attacker's review (rfix24, chain_dos.js): past `MAX_LINKS` symlinks the walks
    /// that judge what a run planted gave the prefix before the link, and their callers appended
    /// the rest as written, symlinks and all. They say `TooManyLinks`; the policy's own walk, as
    /// `realpath`, keeps the prefix.
    #[test]
    fn past_the_kernel_s_symlinks_a_judging_walk_says_so() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(".", r.join("a0")).unwrap();
        for i in 1..10 {
            std::os::unix::fs::symlink(format!("a{}", i - 1), r.join(format!("a{i}"))).unwrap();
        }
        let within = "a9/a9/a9/a9/x";
        assert_eq!(longest_resolving_within_budget(&r.join(within)), longest_resolving(&r.join(within)), "40 hops");
        let past = "a9/a9/a9/a9/a9/x";
        assert_eq!(longest_resolving(&r.join(past)).unwrap().canonical, r);
        assert_eq!(longest_resolving_within_budget(&r.join(past)), Err(Unjudged::TooManyLinks));
        assert_eq!(longest_resolving_from(&r, Path::new(past), &mut |_, _| true), Err(Unjudged::TooManyLinks));
    }

    /// Found by an attacker's review: `lib -> /proc/self/cwd/../../tmp/x` was resolved from this
    /// process's cwd, not from that of the host tool that follows it later. A symlink on procfs
    /// on the way (`/proc/self`, a process's `cwd` or `root`, `/dev/fd` leading to them) makes the
    /// way unjudged; procfs entered through a directory, and plain links elsewhere, do not.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_way_through_a_symlink_of_proc_is_unjudged() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let ups = "../".repeat(r.components().count());
        let link = |to: &str, at: &str| std::os::unix::fs::symlink(to, r.join(at)).unwrap();
        link(&format!("/proc/self/cwd/{ups}tmp"), "lib");
        link("/proc/self/root/tmp", "root");
        link(&format!("/proc/{}/cwd", std::process::id()), "pid-cwd");
        link("/proc/thread-self/cwd", "thread");
        link("../../../../../../../../../../proc/self/fd/0", "fd");
        for case in ["lib", "lib/x", "root", "pid-cwd", "thread", "fd"] {
            assert_eq!(longest_resolving(&r.join(case)), Err(Unjudged::ThroughProc), "{case}");
            assert_eq!(longest_resolving_within_budget(&r.join(case)), Err(Unjudged::ThroughProc), "{case}");
        }
        assert_eq!(longest_resolving(Path::new("/proc/self/cwd")), Err(Unjudged::ThroughProc));
        if Path::new("/dev/fd").symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
            assert_eq!(longest_resolving(Path::new("/dev/fd/0")), Err(Unjudged::ThroughProc), "/dev/fd -> /proc/self/fd");
        }
        let pid_dir = PathBuf::from(format!("/proc/{}", std::process::id()));
        assert_eq!(longest_resolving(&pid_dir), Ok(Prefix { canonical: pid_dir.clone(), resolved: 3 }), "no symlink on the way");
        link("/tmp", "tmp");
        assert_eq!(longest_resolving(&r.join("tmp")).map(|p| p.canonical), Ok(Path::new("/tmp").canonicalize().unwrap()));
    }

    /// A name followed as a host tool follows it (`follow`): through a magic link, or onto procfs, it
    /// is unjudged; a link elsewhere is followed.
    #[cfg(target_os = "linux")]
    #[test]
    fn follow_refuses_procfs_and_follows_the_rest() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let ups = "../".repeat(r.components().count());
        std::fs::write(r.join("file"), "x").unwrap();
        let link = |to: &str, at: &str| std::os::unix::fs::symlink(to, r.join(at)).unwrap();
        link(&format!("/proc/self/cwd/{ups}{}", r.join("file").display()), "magic");
        link("/proc/self/environ", "environ");
        link("file", "plain");
        link("missing", "dangling");
        link("loop", "loop");
        assert!(matches!(follow(&r.join("magic")), Followed::Unjudged));
        assert!(matches!(follow(&r.join("environ")), Followed::Unjudged));
        assert!(matches!(follow(&r.join("plain")), Followed::To(m) if m.is_file() && m.len() == 1));
        assert!(matches!(follow(&r.join("dangling")), Followed::Nowhere));
        assert!(matches!(follow(&r.join("loop")), Followed::Nowhere));
    }
}
