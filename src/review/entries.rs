//! Walking a change set's upper directory: every entry overlayfs left there, in a stable order
//! (names sorted within a directory), one directory's names in memory at a time (an explicit
//! stack, no recursion: an upper tree can be as deep as the command made it).
//!
//! What overlayfs writes (with `userxattr`): a *whiteout* (a character device 0/0, or an empty
//! file with `user.overlay.whiteout`) for a deleted lower entry; an *opaque* directory
//! (`user.overlay.opaque = y`) for a directory removed and made again, which hides everything the
//! lower layer had below it; else files, directories and symlinks as the command left them (a
//! modified lower file is copied up whole). Nothing here follows a symlink.

use std::ffi::OsString;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// The lower entry at this path was deleted.
    Whiteout,
    /// `opaque`: the lower directory here was removed and this one made in its place.
    Dir { opaque: bool },
    File,
    Symlink(PathBuf),
    /// A fifo, socket or device the command made (which of them): nothing a change set can carry
    /// into a workspace. Never applied; reported and held back (`summary::special`), and the host
    /// entry it covers is deleted like one a whiteout covers.
    Special(&'static str),
}

#[derive(Debug, Clone)]
pub struct Entry {
    /// The path below the upper directory (and so below the root it covers).
    pub rel: PathBuf,
    pub kind: Kind,
    /// Permission bits (`0o7777`).
    pub mode: u32,
    pub size: u64,
    pub mtime: (i64, i64),
    /// Its change time: set by the kernel on every change of the entry, never by a command (what
    /// a set's `revision` rests on, where a rewrite keeps the size and puts the mtime back).
    pub ctime: (i64, i64),
    /// Its device and inode, and how many names the inode had when read: a file the command linked
    /// under several names lands as one file with those names (`apply`, `links`).
    pub inode: (u64, u64),
    pub nlink: u64,
}

/// What the walk reports, in order: a directory when entered (with its children's names) and
/// when left, every other entry once; `Beyond` for an entry past the walk's bounds (its path `""`:
/// the walk stopped at `MAX_ENTRIES`), or that could not be read (with the error: a directory the
/// command made unreadable, `chmod 000`), neither described nor applied.
pub enum Event<'a> {
    Enter(&'a Entry, &'a [OsString]),
    Leave(&'a Entry),
    Leaf(&'a Entry),
    Beyond(&'a Path, Option<&'a std::io::Error>),
}

/// How deep a set's tree is walked. A command can make a tree as deep as it likes (with relative
/// `mkdir`/`cd`, past PATH_MAX): what lies deeper is reported (`scan-incomplete`) and stays in the
/// set, rather than the description failing or taking time cubic in the depth.
pub const MAX_DEPTH: usize = 256;
/// How many entries a walk reads at most.
pub const MAX_ENTRIES: usize = 1_000_000;
/// The longest path the kernel takes, and the longest name.
const PATH_MAX: usize = 4095;
const NAME_MAX: usize = 255;

#[cfg(target_os = "linux")]
fn xattr(path: &Path, name: &std::ffi::CStr) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let p = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut buf = [0u8; 8];
    // SAFETY: a valid path and name; the buffer's size is passed.
    let n = unsafe { libc::lgetxattr(p.as_ptr(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    (n >= 0).then(|| buf[..n as usize].to_vec())
}

/// Only Linux's overlayfs writes upper directories (macOS refuses the review mode): none here.
#[cfg(not(target_os = "linux"))]
fn xattr(_path: &Path, _name: &std::ffi::CStr) -> Option<Vec<u8>> {
    None
}

/// The entry at `path` (in an upper directory), `rel` naming it.
pub fn read(path: &Path, rel: PathBuf) -> std::io::Result<Entry> {
    let m = std::fs::symlink_metadata(path)?;
    let ft = m.file_type();
    let kind = if ft.is_char_device() && m.rdev() == 0 {
        Kind::Whiteout
    } else if ft.is_dir() {
        Kind::Dir { opaque: xattr(path, c"user.overlay.opaque").as_deref() == Some(b"y") }
    } else if ft.is_symlink() {
        Kind::Symlink(std::fs::read_link(path)?)
    } else if ft.is_file() {
        let xwhiteout = m.len() == 0 && xattr(path, c"user.overlay.whiteout").is_some();
        if xwhiteout { Kind::Whiteout } else { Kind::File }
    } else if ft.is_fifo() {
        Kind::Special("fifo")
    } else if ft.is_socket() {
        Kind::Special("socket")
    } else {
        Kind::Special("device")
    };
    Ok(Entry { rel, kind, mode: m.mode() & 0o7777, size: m.len(), mtime: (m.mtime(), m.mtime_nsec()), ctime: (m.ctime(), m.ctime_nsec()), inode: (m.dev(), m.ino()), nlink: m.nlink() })
}

/// The names in a directory, sorted.
pub fn names(dir: &Path) -> std::io::Result<Vec<OsString>> {
    let mut names: Vec<OsString> = std::fs::read_dir(dir)?.map(|e| e.map(|e| e.file_name())).collect::<std::io::Result<_>>()?;
    names.sort();
    Ok(names)
}

struct Frame {
    entry: Entry,
    names: Vec<OsString>,
    next: usize,
}

/// Walk the tree below `upper` (not `upper` itself), which covers `host_root`: no directory is
/// entered whose entries' paths, below either, could be longer than the kernel takes. `visit`
/// returns, for `Enter`, whether to go into that directory (a `Leave` follows either way); its
/// other answers are ignored. An error of `visit` stops the walk and is returned. What cannot be
/// read is reported (`Beyond`), never an error: an apply must not stop halfway through a set
/// (found by an attacker's review: a run's `chmod 000 locked` made `applyChangeSet` of a user's
/// set reject after landing the entries before it).
pub fn walk<E: From<std::io::Error>>(upper: &Path, host_root: &Path, mut visit: impl FnMut(Event) -> Result<bool, E>) -> Result<(), E> {
    let top = Entry { rel: PathBuf::new(), kind: Kind::Dir { opaque: false }, mode: 0, size: 0, mtime: (0, 0), ctime: (0, 0), inode: (0, 0), nlink: 0 };
    let budget = PATH_MAX.saturating_sub(upper.as_os_str().len().max(host_root.as_os_str().len()) + 1);
    let top_names = match names(upper) {
        Ok(n) => n,
        Err(e) => {
            visit(Event::Beyond(&top.rel, Some(&e)))?;
            return Ok(());
        }
    };
    let mut stack = vec![Frame { entry: top.clone(), names: top_names, next: 0 }];
    let mut seen = 0usize;
    while !stack.is_empty() {
        seen += 1;
        if seen > MAX_ENTRIES {
            visit(Event::Beyond(&top.rel, None))?;
            while let Some(done) = stack.pop().filter(|_| !stack.is_empty()) {
                visit(Event::Leave(&done.entry))?;
            }
            break;
        }
        let frame = stack.last_mut().expect("a frame");
        let Some(name) = frame.names.get(frame.next).cloned() else {
            let done = stack.pop().expect("a frame");
            if !stack.is_empty() {
                visit(Event::Leave(&done.entry))?;
            }
            continue;
        };
        frame.next += 1;
        let rel = frame.entry.rel.join(&name);
        let path = upper.join(&rel);
        let entry = match read(&path, rel.clone()) {
            Ok(e) => e,
            // Gone meanwhile (an apply removes what it applied): nothing to report.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            // In a directory that can be listed but not searched (`chmod 400`).
            Err(e) => {
                visit(Event::Beyond(&rel, Some(&e)))?;
                continue;
            }
        };
        if matches!(entry.kind, Kind::Dir { .. }) {
            if stack.len() > MAX_DEPTH || entry.rel.as_os_str().len() + 1 + NAME_MAX > budget {
                visit(Event::Beyond(&entry.rel, None))?;
                continue;
            }
            let children = match names(&path) {
                Ok(n) => n,
                Err(e) => {
                    visit(Event::Beyond(&entry.rel, Some(&e)))?;
                    continue;
                }
            };
            if visit(Event::Enter(&entry, &children))? {
                stack.push(Frame { entry, names: children, next: 0 });
            } else {
                visit(Event::Leave(&entry))?;
            }
        } else {
            visit(Event::Leaf(&entry))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_in_order_without_following_links() {
        let t = tempfile::tempdir().unwrap();
        let u = t.path();
        std::fs::create_dir_all(u.join("b/c")).unwrap();
        std::fs::write(u.join("b/c/f"), "x").unwrap();
        std::fs::write(u.join("a"), "").unwrap();
        std::os::unix::fs::symlink("/", u.join("b/l")).unwrap();
        let mut seen = Vec::new();
        walk::<std::io::Error>(u, u, |ev| {
            seen.push(match ev {
                Event::Enter(e, names) => format!("enter {} {}", e.rel.display(), names.len()),
                Event::Leave(e) => format!("leave {}", e.rel.display()),
                Event::Leaf(e) => format!("{} {:?}", e.rel.display(), e.kind),
                Event::Beyond(rel, _) => format!("beyond {}", rel.display()),
            });
            Ok(true)
        })
        .unwrap();
        assert_eq!(seen, ["a File", "enter b 2", "enter b/c 1", "b/c/f File", "leave b/c", "b/l Symlink(\"/\")", "leave b"]);
    }
}
