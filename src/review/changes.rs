//! What a change set's upper directory means for the host's tree: each entry against the host path
//! it covers, as the `Change`s the result lists. A file copied up but left as it was (same
//! content and mode) is no change; a directory is one only when it is new, replaces something
//! else, or changed mode. Below an opaque directory (removed and made again) the host's entries
//! that the upper does not have are deleted. A host directory a file or symlink replaces is
//! deleted (one change, as `rm -rf` of it is), then the file or symlink added.

use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::entries::{Entry, Event, Kind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryType {
    File,
    Directory,
    Symlink,
}

/// One entry of `ChangeSet.changes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// Absolute, on the host, as `shown`: what people and JavaScript see, and the key `readChange`,
    /// `diffChange` and `applyChangeSet({ paths })` look a change up by (`content::resolve`).
    pub path: String,
    /// Below the root, the real bytes: what the judge and apply look at (never `path`, which for a
    /// name that is not UTF-8 is an escaped form).
    #[serde(skip)]
    pub rel: PathBuf,
    pub kind: ChangeKind,
    #[serde(rename = "type")]
    pub entry_type: EntryType,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// A path as the review shows and names it: itself where it is UTF-8, else each byte that is not
/// written `\xhh`. Never lossy (a lossy form showed `hook\xFF.pth` as the benign `hook\u{FFFD}.pth`
/// beside it, and `readChange` read that one: found by an attacker's review); only a UTF-8 name
/// that spells such an escape itself is shown like another, and the lookups refuse that key.
pub fn shown(path: &Path) -> String {
    use std::fmt::Write;
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for chunk in path.as_os_str().as_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// How the host side looks at one directory level of the walk.
#[derive(Clone, Copy)]
struct Level {
    /// The host has a real directory here (not a symlink), whose entries the upper's cover.
    host_dir: bool,
    /// This directory or one above it is opaque: the host's entries the upper lacks are deleted.
    replaced: bool,
}

/// Turns the walk's events under one root into changes.
pub struct Differ {
    root: PathBuf,
    levels: Vec<Level>,
    /// What comparing a file of the set under several names found, by its inode and the host
    /// file's inode, ctime and mtime: each pair is read once, not once per name (`compared`).
    compared: std::collections::HashMap<((u64, u64), [i64; 4]), bool>,
}

/// A host entry's type as a change reports it (`None`: a fifo, socket or device).
pub fn type_of(m: &std::fs::Metadata) -> Option<EntryType> {
    let ft = m.file_type();
    if ft.is_symlink() {
        Some(EntryType::Symlink)
    } else if ft.is_dir() {
        Some(EntryType::Directory)
    } else if ft.is_file() {
        Some(EntryType::File)
    } else {
        None
    }
}

impl Differ {
    pub fn new(root: &Path) -> Differ {
        let host_dir = root.symlink_metadata().is_ok_and(|m| m.is_dir());
        Differ { root: root.to_path_buf(), levels: vec![Level { host_dir, replaced: false }], compared: Default::default() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn level(&self) -> Level {
        *self.levels.last().expect("the root's level")
    }

    /// The host's entry at `rel`, where the host side still counts.
    pub fn host(&self, rel: &Path) -> Option<std::fs::Metadata> {
        self.level().host_dir.then(|| self.root.join(rel).symlink_metadata().ok()).flatten()
    }

    fn change(&self, rel: &Path, kind: ChangeKind, entry_type: EntryType, mode: u32, size: Option<u64>, target: Option<&Path>) -> Change {
        // The root's own change is named by the root (`join("")` would add a slash).
        let path = if rel.as_os_str().is_empty() { self.root.clone() } else { self.root.join(rel) };
        Change {
            path: shown(&path),
            rel: rel.to_path_buf(),
            kind,
            entry_type,
            mode: Some(mode),
            size,
            target: target.map(shown),
        }
    }

    /// The changes one event stands for, given to `emit`; returns whether to go into a directory.
    pub fn event(&mut self, ev: &Event, upper: &Path, emit: &mut dyn FnMut(Change)) -> std::io::Result<bool> {
        match ev {
            Event::Enter(e, names) => {
                let host = self.host(&e.rel);
                let opaque = matches!(e.kind, Kind::Dir { opaque: true });
                let level = Level { host_dir: host.as_ref().is_some_and(|m| m.is_dir()), replaced: self.level().replaced || opaque };
                if let Some(c) = self.dir_change(e, host.as_ref()) {
                    emit(c);
                }
                if level.replaced && level.host_dir {
                    self.deleted_below(&e.rel, names, emit);
                }
                self.levels.push(level);
                Ok(true)
            }
            Event::Leave(_) => {
                self.levels.pop();
                Ok(true)
            }
            Event::Leaf(e) => {
                let host = self.host(&e.rel);
                // A directory a file or symlink replaces is a deletion of its own, listed first:
                // the review shows the directory goes, and apply compares everything below it with
                // the set's beginning (as for any deleted directory). The entry is then added.
                let host = match (&e.kind, host) {
                    (Kind::File | Kind::Symlink(_), Some(m)) if m.is_dir() => {
                        if let Some(c) = self.deleted(&e.rel, &m) {
                            emit(c);
                        }
                        None
                    }
                    (_, host) => host,
                };
                if let Some(c) = self.leaf_change(e, host, &upper.join(&e.rel))? {
                    emit(c);
                }
                Ok(true)
            }
            // Past the walk's bounds: not described (the caller reports it).
            Event::Beyond(..) => Ok(false),
        }
    }

    /// The root's own mode change: the upper directory's top (what the run saw as the root, and
    /// changed with `chmod .`) against `kept`, its mode when the set was made (`store::create`
    /// set it to the host root's). `None` for a set made before that was kept.
    pub fn root_change(&self, upper: &Path, kept: Option<u32>) -> Option<Change> {
        let mode = upper.symlink_metadata().ok()?.permissions().mode() & 0o7777;
        (kept? != mode).then(|| self.change(Path::new(""), ChangeKind::Modified, EntryType::Directory, mode, None, None))
    }

    fn dir_change(&self, e: &Entry, host: Option<&std::fs::Metadata>) -> Option<Change> {
        let kind = match host {
            None => ChangeKind::Added,
            Some(m) if !m.is_dir() => ChangeKind::Modified,
            Some(m) if m.permissions().mode() & 0o7777 != e.mode => ChangeKind::Modified,
            Some(_) => return None,
        };
        Some(self.change(&e.rel, kind, EntryType::Directory, e.mode, None, None))
    }

    /// Below a replaced directory: the host's entries the upper does not have.
    fn deleted_below(&self, rel: &Path, upper_names: &[OsString], emit: &mut dyn FnMut(Change)) {
        let Ok(host_names) = super::entries::names(&self.root.join(rel)) else { return };
        for name in host_names.iter().filter(|n| upper_names.binary_search(n).is_err()) {
            let child = rel.join(name);
            if let Some(c) = self.root.join(&child).symlink_metadata().ok().and_then(|m| self.deleted(&child, &m)) {
                emit(c);
            }
        }
    }

    fn deleted(&self, rel: &Path, m: &std::fs::Metadata) -> Option<Change> {
        let t = type_of(m)?;
        let size = (t == EntryType::File).then_some(m.len());
        let target = if t == EntryType::Symlink { std::fs::read_link(self.root.join(rel)).ok() } else { None };
        Some(self.change(rel, ChangeKind::Deleted, t, m.mode() & 0o7777, size, target.as_deref()))
    }

    /// The change of a non-directory entry over the host's `host`.
    fn leaf_change(&mut self, e: &Entry, host: Option<std::fs::Metadata>, upper_path: &Path) -> std::io::Result<Option<Change>> {
        let c = match (&e.kind, host) {
            (Kind::Whiteout | Kind::Special(_), None) | (Kind::Dir { .. }, _) => None,
            // A fifo, socket or device covers the host's entry as a whiteout does: that entry is
            // deleted. The special file itself is not a change the set can carry (`summary::special`).
            (Kind::Whiteout | Kind::Special(_), Some(m)) => self.deleted(&e.rel, &m),
            (Kind::File, None) => Some(self.change(&e.rel, ChangeKind::Added, EntryType::File, e.mode, Some(e.size), None)),
            (Kind::File, Some(m)) => {
                let same = m.is_file() && m.permissions().mode() & 0o7777 == e.mode && m.len() == e.size && self.same(e, &m, upper_path)?;
                (!same).then(|| self.change(&e.rel, ChangeKind::Modified, EntryType::File, e.mode, Some(e.size), None))
            }
            (Kind::Symlink(t), None) => Some(self.change(&e.rel, ChangeKind::Added, EntryType::Symlink, 0o777, None, Some(t))),
            (Kind::Symlink(t), Some(m)) => {
                let same = m.file_type().is_symlink() && std::fs::read_link(self.root.join(&e.rel)).is_ok_and(|h| &h == t);
                (!same).then(|| self.change(&e.rel, ChangeKind::Modified, EntryType::Symlink, 0o777, None, Some(t)))
            }
        };
        Ok(c)
    }
}

impl Differ {
    /// `same_content` of the set's file `e` and the host's (`m`), read once for a pair of a file
    /// the set has under several names and a host file (a run's 16 MiB linked 65,000 times over
    /// the host's links of one file would else be read 65,000 times).
    fn same(&mut self, e: &Entry, m: &std::fs::Metadata, upper_path: &Path) -> std::io::Result<bool> {
        use std::os::unix::fs::MetadataExt;
        let key = (e.inode, [m.dev() as i64, m.ino() as i64, super::changed_at::ctime_ns(m), m.mtime() * 1_000_000_000 + m.mtime_nsec()]);
        if let Some(&same) = self.compared.get(&key) {
            return Ok(same);
        }
        let same = same_content(upper_path, &self.root.join(&e.rel))?;
        if e.nlink > 1 && m.nlink() > 1 {
            self.compared.insert(key, same);
        }
        Ok(same)
    }
}

/// At most this many bytes of a file are compared with the host's (where either holds data):
/// a file the run copied up larger than this is listed as changed, not called the same. The
/// comparison runs after the command, on the host, unbounded by the run's timeout; and the run
/// wrote what it compares with, so this bounds only what a run could not have paid for itself.
const COMPARED_AT_MOST: u64 = 256 << 20;

/// Whether two regular files hold the same bytes (read side by side, never whole; only where one
/// of them holds data, a hole being zeros). `false` past `COMPARED_AT_MOST`: an unchanged file
/// that large is listed, where a changed one must never be hidden.
pub fn same_content(a: &Path, b: &Path) -> std::io::Result<bool> {
    let open = |p: &Path| {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(p)
    };
    let (fa, fb) = match (open(a), open(b)) {
        (Ok(x), Ok(y)) => (x, y),
        _ => return Ok(false),
    };
    same_data(&fa, &fb, COMPARED_AT_MOST)
}

/// `same_content` of two open files, comparing at most `bound` bytes of data.
fn same_data(a: &std::fs::File, b: &std::fs::File, bound: u64) -> std::io::Result<bool> {
    let (ma, mb) = (a.metadata()?, b.metadata()?);
    if !ma.is_file() || !mb.is_file() || ma.len() != mb.len() {
        return Ok(false);
    }
    let len = ma.len();
    let (mut pos, mut left) = (0, bound);
    while let Some(stretch) = super::sparse::next_data_of_either(a, b, pos, len)? {
        let Some(rest) = left.checked_sub(stretch.end - stretch.start) else { return Ok(false) };
        if !same_stretch(a, b, stretch.clone())? {
            return Ok(false);
        }
        (pos, left) = (stretch.end, rest);
    }
    Ok(true)
}

/// Whether `a` and `b` read the same over `stretch` (a file that shrank meanwhile does not).
fn same_stretch(a: &std::fs::File, b: &std::fs::File, stretch: std::ops::Range<u64>) -> std::io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let (mut ba, mut bb) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    let mut at = stretch.start;
    while at < stretch.end {
        let n = (stretch.end - at).min(ba.len() as u64) as usize;
        for (f, buf) in [(a, &mut ba[..n]), (b, &mut bb[..n])] {
            match f.read_exact_at(buf, at) {
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(false),
                read => read?,
            }
        }
        if ba[..n] != bb[..n] {
            return Ok(false);
        }
        at += n as u64;
    }
    Ok(true)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::os::unix::fs::FileExt;

    /// Bytes this thread has read through read(2) and its kin so far (Linux's per-thread `rchar`).
    #[cfg(target_os = "linux")]
    pub(crate) fn bytes_read_by_this_thread() -> u64 {
        let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
        io.lines().find_map(|l| l.strip_prefix("rchar: ")).unwrap().trim().parse().unwrap()
    }

    fn sparse(path: &std::path::Path, len: u64, data: &[(u64, &[u8])]) {
        let f = std::fs::File::create(path).unwrap();
        f.set_len(len).unwrap();
        for (at, bytes) in data {
            f.write_all_at(bytes, *at).unwrap();
        }
    }

    /// A review run's `truncate -s 32G` over a sparse host file of that size was compared by
    /// reading 64 GiB of zeros, 33 s of host CPU after a 12 ms command, unbounded by its timeout
    /// (found by an attacker's review). Only where either file has data is read.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_large_sparse_pair_is_compared_without_reading_its_holes() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        let len = 2 << 30;
        sparse(&a, len, &[(1 << 30, b"same bytes")]);
        sparse(&b, len, &[(1 << 30, b"same bytes")]);
        let before = bytes_read_by_this_thread();
        assert!(super::same_content(&a, &b).unwrap());
        let read = bytes_read_by_this_thread() - before;
        assert!(read < 16 << 20, "{read} bytes read to compare two sparse files of 10 data bytes");
    }

    /// Past the bound a pair is not called the same, however alike: listed for the user to see.
    #[test]
    fn past_the_bound_a_pair_is_not_called_the_same() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        let data = vec![7u8; 1 << 20];
        sparse(&a, 8 << 20, &[(0, &data), (4 << 20, &data)]);
        sparse(&b, 8 << 20, &[(0, &data), (4 << 20, &data)]);
        let (fa, fb) = (std::fs::File::open(&a).unwrap(), std::fs::File::open(&b).unwrap());
        assert!(super::same_data(&fa, &fb, 2 << 20).unwrap());
        assert!(!super::same_data(&fa, &fb, (1 << 20) + (512 << 10)).unwrap());
        assert!(super::same_content(&a, &b).unwrap());
    }

    /// A hole reads as zeros: it equals written zeros, and differs from any other byte.
    #[test]
    fn a_hole_equals_zeros_written_and_nothing_else() {
        let t = tempfile::tempdir().unwrap();
        let (hole, zeros, other) = (t.path().join("hole"), t.path().join("zeros"), t.path().join("other"));
        let len = 64 << 20;
        sparse(&hole, len, &[(0, b"head"), (len - 4, b"tail")]);
        sparse(&zeros, len, &[(0, b"head"), (len - 4, b"tail"), (32 << 20, &vec![0u8; 1 << 20])]);
        sparse(&other, len, &[(0, b"head"), (len - 4, b"tail"), (40 << 20, b"\x01")]);
        assert!(super::same_content(&hole, &zeros).unwrap());
        assert!(super::same_content(&zeros, &hole).unwrap());
        assert!(!super::same_content(&hole, &other).unwrap());
        assert!(!super::same_content(&other, &zeros).unwrap());
    }

    #[test]
    fn a_name_is_shown_as_itself_when_utf8_else_with_its_invalid_bytes_escaped() {
        use std::os::unix::ffi::OsStrExt;
        let shown = |b: &[u8]| super::shown(std::path::Path::new(std::ffi::OsStr::from_bytes(b)));
        assert_eq!(shown("/w/hook\u{FFFD}.pth".as_bytes()), "/w/hook\u{FFFD}.pth");
        assert_eq!(shown(b"/w/hook\xFF.pth"), "/w/hook\\xff.pth");
        assert_eq!(shown(b"/w/d\xFE/caf\xC3\xA9\xC3"), "/w/d\\xfe/caf\u{e9}\\xc3");
    }
}
