//! The links `links_via::sort` found dangling at their first name, remembered per directory while
//! the directory watcher (`watch`) vouches that nothing in it was added, removed or renamed.
//! Found by a review of per-run cost (issue #36): 4,000 links `dN -> nothingN/here` in a workspace
//! cost every warm run four system calls each, before the run and again after it (20 to 89 ms
//! under load), though none of them could lead anywhere new.
//!
//! Such a link's judgment (`into`: kept, its way looked at as one into `node_modules`) rests on
//! its own directory only: its text (a symlink's text changes only by a new entry at its name)
//! and the missing first name of its way, looked up in that same directory. While the watch on
//! that directory vouches `Unchanged`, and its path still names the same inode (an ancestor
//! renamed, or swapped for a symlink to elsewhere, is seen by a `stat`, one per directory a sort),
//! the answer holds. The missing name made later (by the run, or the next) is an entry added: the
//! watch says `Changed`, and the link is judged again. Without a watcher nothing is remembered.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use super::watch::{self, Watch};

/// One directory's remembered dangling links, and what vouches for them.
struct Dir {
    id: (u64, u64),
    watch: Watch,
    read_at: u64,
    names: HashSet<OsString>,
}

/// Links remembered at most (past it all is forgotten, and learned again): the host process lives
/// long and visits many workspaces; a sort keeps at most `scan::MAX_LINKS_VIA`.
const MAX_NAMES: usize = 4 * super::scan::MAX_LINKS_VIA;

type Memo = Mutex<Option<(HashMap<PathBuf, Dir>, usize)>>;

/// The host process's memory of dangling links.
#[cfg(not(test))]
fn memo() -> &'static Memo {
    static MEMO: Memo = Mutex::new(None);
    &MEMO
}

/// Each test thread's own memory: past `MAX_NAMES` a `remember` forgets every other directory, so
/// the tests that make thousands of dangling links (`planted::tests`, `scan`) made another test's
/// directory forgotten between its two sorts when they ran beside it, and that test's "none
/// followed again" failed (50 of 50 followed; seen under load in full runs, and every time with
/// 20,000 links remembered by another thread between the sorts). A memory of its own changes
/// nothing of what a test of the rules sees; forgetting only ever costs a look again.
#[cfg(test)]
fn memo() -> &'static Memo {
    thread_local! {
        static MEMO: &'static Memo = Box::leak(Box::new(Mutex::new(None)));
    }
    MEMO.with(|m| *m)
}

/// What one sort asks: each directory's vouching decided once.
pub(super) struct Check {
    vouched: HashMap<PathBuf, bool>,
}

impl Check {
    pub(super) fn new() -> Check {
        if let Some(w) = watch::global() {
            w.drain();
        }
        Check { vouched: HashMap::new() }
    }

    /// Whether `link` was found dangling at its first name and nothing in its directory changed.
    pub(super) fn still_dangling(&mut self, link: &Path) -> bool {
        let (Some(dir), Some(name)) = (link.parent(), link.file_name()) else { return false };
        let mut guard = memo().lock().unwrap_or_else(|e| e.into_inner());
        let Some((dirs, _)) = guard.as_mut() else { return false };
        let Some(d) = dirs.get(dir) else { return false };
        let ok = *self.vouched.entry(dir.to_path_buf()).or_insert_with(|| vouched(dir, d));
        if !ok {
            if let Some((old, count)) = dirs.remove(dir).zip(guard.as_mut().map(|g| &mut g.1)) {
                *count = count.saturating_sub(old.names.len());
            }
            return false;
        }
        d.names.contains(name)
    }
}

fn vouched(dir: &Path, d: &Dir) -> bool {
    let Some(w) = watch::global() else { return false };
    w.owns(&d.watch) && w.vouch(&d.watch, d.read_at) == super::vouch::Vouch::Unchanged && std::fs::metadata(dir).is_ok_and(|m| (m.dev(), m.ino()) == d.id)
}

/// Remember `link` when, seen now under a watch of its directory, its text's first name is missing
/// there (a `..` or absolute text, or a name that exists, is not remembered: its way crosses more).
pub(super) fn remember(link: &Path) {
    let (Some(dir), Some(name)) = (link.parent(), link.file_name()) else { return };
    let Some(w) = watch::global() else { return };
    let Ok(file) = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY).open(dir) else { return };
    let Ok(meta) = file.metadata() else { return };
    let id = (meta.dev(), meta.ino());
    let mut guard = memo().lock().unwrap_or_else(|e| e.into_inner());
    let (dirs, count) = guard.get_or_insert_with(Default::default);
    let current = dirs.get(dir).is_some_and(|d| d.id == id && w.owns(&d.watch) && w.vouch(&d.watch, d.read_at) == super::vouch::Vouch::Unchanged);
    if !current {
        // Watched before the link is looked at: a change from here on is seen.
        let (read_at, Some(watch)) = w.watch(file.as_raw_fd(), dirs.get(dir).map(|d| &d.watch)) else { return };
        if let Some(old) = dirs.insert(dir.to_path_buf(), Dir { id, watch, read_at, names: HashSet::new() }) {
            *count = count.saturating_sub(old.names.len());
        }
    }
    if !dangles_at_first_name(&file, name) {
        return;
    }
    if *count >= MAX_NAMES {
        dirs.retain(|d, _| d == dir);
        *count = dirs.get(dir).map_or(0, |d| d.names.len());
    }
    if let Some(d) = dirs.get_mut(dir) {
        *count += d.names.insert(name.to_os_string()) as usize;
    }
}

/// Whether `name` in the open directory `dir` is a symlink whose text's first component is a name
/// missing in `dir`.
fn dangles_at_first_name(dir: &std::fs::File, name: &OsStr) -> bool {
    let Ok(name) = std::ffi::CString::new(name.as_bytes()) else { return false };
    let mut buf = [0u8; 4096];
    // SAFETY: a valid descriptor, a NUL-terminated name, a writable buffer of its length.
    let n = unsafe { libc::readlinkat(dir.as_raw_fd(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n <= 0 || n as usize >= buf.len() {
        return false;
    }
    let text = Path::new(OsStr::from_bytes(&buf[..n as usize]));
    let Some(Component::Normal(first)) = text.components().next() else { return false };
    let Ok(first) = std::ffi::CString::new(first.as_bytes()) else { return false };
    // SAFETY: a zeroed stat is valid; a valid descriptor and a NUL-terminated name.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::fstatat(dir.as_raw_fd(), first.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT)
}
