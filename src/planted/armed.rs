//! Watches that vouch for what `repo::facts` read of a repository, so that a run in a workspace of
//! many repositories looks at none of them while nothing changed: no `lstat` of `.git`, no `stat` of
//! its configuration or of `.husky`. Those were three system calls per repository per run, about
//! 7 µs each on this machine's long paths, 1.4 ms a run with 200 repositories (`perf`).
//!
//! Armed only for the common shape: `.git` a real directory, the one the walk saw (`walk_ino`),
//! without `commondir` (it is its own only git directory), `config` and `config.worktree` regular
//! files or absent, `.husky` not a symlink. Watched, each before anything is read:
//! - the top: `.git` or `.husky` added, removed or renamed, the top itself moved or deleted;
//! - `.git`: `config`, `config.worktree` or `commondir` added, replaced by a rename (as git writes
//!   them) or removed;
//! - each of `config` and `config.worktree` present, on its inode: written or truncated through any
//!   of its names (hard links included), its attributes changed, deleted;
//! - the hooks directories (`.git/hooks`, `core.hooksPath`, `.husky`) and each directory on the way
//!   to them from the top: a hook added, removed or renamed; and each hook, on its inode: another
//!   name made for it (`hook_links`). Not armed when a hook is a symlink or has other names.
//!
//! Which repository a path names is the walk's to say: the inode of `.git` in its listing of the
//! top, read again or vouched for by its own watches down from the root. A directory renamed higher
//! up puts another repository at the same path, with another `.git`: not vouched.
//!
//! What the watches cannot tell, and then `facts` falls back to its stat rule: events lost or the
//! mount table changed (`Vouch::Unknown`), a watch refused (the budget) or gone. Writes through a
//! shared `mmap` raise no inotify event; git writes its configuration with `write` and `rename`.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use super::hook_links::HookLinks;
use super::watch::{self, Watch};

/// The watches of one repository, armed at `read_at` for the `.git` with inode `ino`.
pub struct Armed {
    ino: u64,
    read_at: u64,
    watches: Vec<Watch>,
}

impl Armed {
    /// Nothing the repository's facts were read from changed since they were armed, and `.git` is
    /// still the inode the walk sees now.
    pub fn vouches(&self, walk_ino: u64) -> bool {
        let Some(w) = watch::global() else { return false };
        self.ino == walk_ino && w.all_unchanged(&self.watches, self.read_at)
    }
}

/// Arm the watches of the repository whose `.git` is `dot_git` (inode `walk_ino` in the walk's
/// listing), before its facts are read. `None`: not of the common shape, or a watch was refused.
pub fn arm(dot_git: &Path, walk_ino: u64) -> Option<Armed> {
    let w = watch::global()?;
    let top = open(None, dot_git.parent()?, libc::O_DIRECTORY)?;
    let git = open(Some(&top), Path::new(".git"), libc::O_DIRECTORY)?;
    let mut armed = Armed { ino: walk_ino, read_at: u64::MAX, watches: Vec::new() };
    let mut add = |(at, watch): (u64, Option<Watch>)| -> Option<()> {
        armed.read_at = armed.read_at.min(at);
        armed.watches.push(watch?);
        Some(())
    };
    add(w.watch(top.as_raw_fd(), None))?;
    add(w.watch(git.as_raw_fd(), None))?;
    // Checked once watched: what changes from here on raises an event.
    let kind = |dir: &OwnedFd, name: &str| stat_at(dir, name).map(|st| st.st_mode & libc::S_IFMT);
    let git_now = stat_at(&git, "")?;
    if git_now.st_mode & libc::S_IFMT != libc::S_IFDIR || git_now.st_ino != walk_ino {
        return None;
    }
    if kind(&top, ".husky") == Some(libc::S_IFLNK) || kind(&git, "commondir").is_some() {
        return None;
    }
    for name in ["config", "config.worktree"] {
        match kind(&git, name) {
            None => {} // its arrival is an entry added to `.git`
            Some(libc::S_IFREG) => {
                let file = open(Some(&git), Path::new(name), libc::O_NONBLOCK)?;
                add(w.watch_file(file.as_raw_fd()))?;
                // The inode watched is the one named now (not replaced between the stat and the open).
                if stat_at(&file, "")?.st_mode & libc::S_IFMT != libc::S_IFREG {
                    return None;
                }
            }
            Some(_) => return None,
        }
    }
    Some(armed)
}

/// `armed` with watches on the hooks directories `dirs` (`hook_links::dirs`), before they are
/// listed: each directory from the top down to each one (an entry added, removed or renamed there;
/// where one is missing, its arrival is an entry added to the directory above). `None` when one
/// lies outside the top or is reached through a symlink (its target can change without an event on
/// anything watched).
pub fn with_hook_dirs(mut armed: Armed, top: &Path, dirs: &[PathBuf]) -> Option<Armed> {
    let w = watch::global()?;
    for dir in dirs {
        let mut at = open(None, top, libc::O_DIRECTORY)?;
        for c in dir.strip_prefix(top).ok()?.components() {
            let Component::Normal(name) = c else { return None };
            match open_or_missing(&at, name)? {
                Some(next) => at = next,
                None => break,
            }
            let (read_at, watch) = w.watch(at.as_raw_fd(), None);
            armed.read_at = armed.read_at.min(read_at);
            armed.watches.push(watch?);
        }
    }
    Some(armed)
}

/// `armed` with a watch on each hook `links` lists (`hook_links::read`), once listed: written
/// through any of its names, or another name made (its link count is an attribute). `None` unless
/// every hook is a plain file with one name (`HookLinks::is_plain`): one that leads elsewhere is
/// checked by the stat rule on every run.
pub fn with_hooks(mut armed: Armed, links: &HookLinks) -> Option<Armed> {
    if !links.is_plain() {
        return None;
    }
    let w = watch::global()?;
    for hook in &links.entries {
        let file = open(None, hook, libc::O_NONBLOCK)?;
        let (read_at, watch) = w.watch_file(file.as_raw_fd());
        armed.read_at = armed.read_at.min(read_at);
        armed.watches.push(watch?);
        // Checked once watched: still a file with one name.
        let st = stat_at(&file, "")?;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG || st.st_nlink != 1 {
            return None;
        }
    }
    Some(armed)
}

/// The directory `name` in `dir`, opened without following a symlink; `Some(None)` when there is
/// none, `None` when it is something else (a symlink, a file) or cannot be opened.
fn open_or_missing(dir: &OwnedFd, name: &std::ffi::OsStr) -> Option<Option<OwnedFd>> {
    match open(Some(dir), Path::new(name), libc::O_DIRECTORY) {
        Some(fd) => Some(Some(fd)),
        None => (std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT)).then_some(None),
    }
}

/// `openat(dir, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | flags)`; `None` for any failure.
fn open(dir: Option<&OwnedFd>, path: &Path, flags: libc::c_int) -> Option<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    let at = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: a valid C string; the descriptor returned is owned below.
    let fd = unsafe { libc::openat(at, c.as_ptr(), libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | flags) };
    // SAFETY: a fresh descriptor nothing else owns.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`, `fstat(dir)` for `""`; `None` for any failure.
fn stat_at(dir: &OwnedFd, name: &str) -> Option<libc::stat> {
    if !name.is_empty() {
        return super::listing::stat_at(dir.as_raw_fd(), std::ffi::OsStr::new(name));
    }
    // SAFETY: an all-zero `stat` is a valid value for fstat to overwrite.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and a writable `stat`.
    (unsafe { libc::fstat(dir.as_raw_fd(), &mut st) } == 0).then_some(st)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::os::unix::fs::MetadataExt;
    use std::path::PathBuf;

    use super::super::repo::{facts, vouched};

    /// A repository under `deps/` whose `.git` and config are old enough for `facts` to remember,
    /// and the inode of its `.git` (what the walk's listing of its top says).
    fn repository(hooks_path: Option<&str>) -> (tempfile::TempDir, PathBuf, u64) {
        let made = unaged(hooks_path);
        std::thread::sleep(std::time::Duration::from_millis(1100)); // ctime (now) must be older too
        made
    }

    fn unaged(hooks_path: Option<&str>) -> (tempfile::TempDir, PathBuf, u64) {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap().join("deps/r");
        std::fs::create_dir_all(r.join(".git/hooks")).unwrap();
        let hp = hooks_path.map(|h| format!("\thooksPath = {h}\n")).unwrap_or_default();
        std::fs::write(r.join(".git/config"), format!("[core]\n{hp}")).unwrap();
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(5);
        for p in [r.join(".git/config"), r.join(".git")] {
            std::fs::File::open(&p).unwrap().set_modified(past).unwrap();
        }
        let ino = std::fs::symlink_metadata(r.join(".git")).unwrap().ino();
        (t, r, ino)
    }

    /// The facts as a run after the walk gets them: vouched for, or read (and armed again).
    fn run(r: &std::path::Path, ino: u64) -> (bool, Vec<PathBuf>) {
        super::watch::global().unwrap().drain();
        let dot_git = r.join(".git");
        match vouched(&dot_git, ino, &[]) {
            Some(f) => (true, f.hooks.clone()),
            None => (false, facts(&dot_git, None, Some(ino), &[]).hooks.clone()),
        }
    }

    #[test]
    fn nothing_changed_is_vouched_for_without_a_system_call() {
        let _table = crate::test_mount_table::unchanged();
        let (_t, r, ino) = repository(None);
        assert_eq!(run(&r, ino), (false, vec![]), "the first run reads");
        assert_eq!(run(&r, ino), (true, vec![]), "the next ones do not");
        assert_eq!(run(&r, ino), (true, vec![]));
        assert!(vouched(&r.join(".git"), ino + 1, &[]).is_none(), "another .git at that path (the walk's inode) is not vouched for");
    }

    /// Each way the host (never the run: `.git` is read-only in it) can change what git runs.
    #[test]
    fn every_change_of_the_hooks_directory_is_seen() {
        let _table = crate::test_mount_table::unchanged();
        type Change = fn(&std::path::Path);
        let changes: [(&str, Change); 6] = [
            ("config written in place", |r| std::fs::write(r.join(".git/config"), "[core]\n\thooksPath = new\n").unwrap()),
            ("config replaced by a rename, as git writes it", |r| {
                std::fs::write(r.join(".git/config.lock"), "[core]\n\thooksPath = new\n").unwrap();
                std::fs::rename(r.join(".git/config.lock"), r.join(".git/config")).unwrap();
            }),
            ("config written through a hard link elsewhere", |r| {
                std::fs::hard_link(r.join(".git/config"), r.join("../elsewhere")).unwrap();
                std::io::Write::write_all(&mut std::fs::OpenOptions::new().append(true).open(r.join("../elsewhere")).unwrap(), b"\thooksPath = new\n").unwrap();
            }),
            ("config.worktree added", |r| std::fs::write(r.join(".git/config.worktree"), "[core]\n\thooksPath = new\n").unwrap()),
            (".husky added at the top", |r| std::fs::create_dir(r.join(".husky")).unwrap()),
            ("commondir added", |r| {
                std::fs::create_dir_all(r.join("../common/.git")).unwrap();
                std::fs::write(r.join("../common/.git/config"), "[core]\n\thooksPath = ../r/new\n").unwrap();
                std::fs::write(r.join(".git/commondir"), "../../common/.git\n").unwrap();
            }),
        ];
        let repos: Vec<_> = changes.iter().map(|_| unaged(None)).collect();
        std::thread::sleep(std::time::Duration::from_millis(1100));
        for ((what, change), (_t, r, ino)) in changes.into_iter().zip(repos) {
            run(&r, ino);
            assert!(run(&r, ino).0, "{what}: vouched for before");
            change(&r);
            let (vouched, hooks) = run(&r, ino);
            assert!(!vouched, "{what}: not vouched for after");
            assert!(!hooks.is_empty(), "{what}: the new hooks directory is found: {hooks:?}");
        }
    }

    /// The host making a hook a link between two runs (`hook_links`): the remembered facts are not
    /// vouched for, and the link is found.
    #[test]
    fn a_hook_made_a_link_is_seen() {
        let _table = crate::test_mount_table::unchanged();
        type Change = fn(&std::path::Path);
        let changes: [(&str, Change); 4] = [
            ("a symlinked hook added", |r| std::os::unix::fs::symlink("../../scripts/pre-commit", r.join(".git/hooks/pre-commit")).unwrap()),
            ("a hard-linked hook added", |r| std::fs::hard_link(r.join("scripts/pre-commit"), r.join(".git/hooks/pre-commit")).unwrap()),
            ("another name made for a hook", |r| std::fs::hard_link(r.join(".git/hooks/commit-msg"), r.join("scripts/commit-msg")).unwrap()),
            ("a symlinked hook added in .husky", |r| std::os::unix::fs::symlink("../scripts/pre-commit", r.join(".husky/pre-commit")).unwrap()),
        ];
        let repos: Vec<_> = changes
            .iter()
            .map(|_| {
                let made = unaged(None);
                std::fs::create_dir_all(made.1.join("scripts")).unwrap();
                std::fs::create_dir_all(made.1.join(".husky")).unwrap();
                std::fs::write(made.1.join("scripts/pre-commit"), "#!/bin/sh\n").unwrap();
                std::fs::write(made.1.join(".git/hooks/commit-msg"), "#!/bin/sh\n").unwrap();
                made
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(1100));
        for ((what, change), (_t, r, ino)) in changes.into_iter().zip(repos) {
            run(&r, ino);
            assert!(run(&r, ino).0, "{what}: vouched for before");
            change(&r);
            assert!(!run(&r, ino).0, "{what}: not vouched for after");
            let links = facts(&r.join(".git"), None, Some(ino), &[]).links.clone();
            assert!(!links.is_plain(), "{what}: found: {links:?}");
            assert!(!run(&r, ino).0, "{what}: a hook that is a link is not vouched for");
        }
    }

    #[test]
    fn another_repository_at_the_same_path_is_read() {
        let _table = crate::test_mount_table::unchanged();
        let (_t, r, ino) = repository(None);
        run(&r, ino);
        assert!(run(&r, ino).0);
        // The directory above renamed, another one with a repository moved in: every watch is
        // on the old inodes, and saw nothing. The walk's listing has the new `.git`'s inode.
        let deps = r.parent().unwrap().to_path_buf();
        std::fs::rename(&deps, deps.with_file_name("old-deps")).unwrap();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::write(r.join(".git/config"), "[core]\n\thooksPath = other\n").unwrap();
        let new_ino = std::fs::symlink_metadata(r.join(".git")).unwrap().ino();
        assert_eq!(run(&r, new_ino), (false, vec![r.join("other")]));
    }

    #[test]
    fn a_file_at_the_top_costs_one_reading_and_the_watches_are_armed_again() {
        let _table = crate::test_mount_table::unchanged();
        let (_t, r, ino) = repository(Some("hooks"));
        run(&r, ino);
        std::fs::write(r.join("build.log"), "").unwrap();
        assert_eq!(run(&r, ino), (false, vec![r.join("hooks")]));
        assert_eq!(run(&r, ino), (true, vec![r.join("hooks")]), "armed again");
    }

    #[test]
    fn other_shapes_are_never_vouched_for() {
        let _table = crate::test_mount_table::unchanged();
        let (_t, r, ino) = repository(None);
        // A symlinked configuration: its target can change without an event on anything watched.
        std::fs::write(r.join("../real-config"), "[core]\n").unwrap();
        std::fs::remove_file(r.join(".git/config")).unwrap();
        std::os::unix::fs::symlink("../../real-config", r.join(".git/config")).unwrap();
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(5);
        std::fs::File::open(r.join(".git")).unwrap().set_modified(past).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1100));
        for _ in 0..3 {
            assert!(!run(&r, ino).0);
        }
        std::fs::write(r.join("../real-config"), "[core]\n\thooksPath = new\n").unwrap();
        assert_eq!(run(&r, ino), (false, vec![r.join("new")]), "the stat rule follows the link");
    }
}
