//! Undoing what a run created where a protected name must stay absent (a `.git` at the top of a
//! writable root, a protected name at the top of a root or repository, a missing `readOnlyPaths`
//! or `denyRead` entry): the entry is moved aside within its directory, to `NAME.sandspawn-held-<time>-<n>`, where
//! no tool looks for it and nothing of it is lost. A symlink a `denyRead` path is resolved through
//! that the run replaced is put back after that (`restore_link`).
//!
//! Why not prevent it: a mount can only cover a path that exists, so preventing the creation took an
//! empty placeholder on the host for the run's whole life, which `git status`, `git add -A`,
//! `npm pack`, `tar` and `ls -A` showed as the user's data (and committed, and shipped). Plans other
//! programs run (`buildSandboxCommand`) still get placeholders: nobody is there to undo after them.
//!
//! The directory is opened without following any symlink on the way (`openat2`
//! `RESOLVE_NO_SYMLINKS`): a run may have replaced a directory above it with a link, and the host
//! must never be led into moving something elsewhere. A directory a plan another program runs still
//! holds (its placeholders are mounted in that sandbox; moving one would move its cover there) is
//! left alone and said so; held by that sandbox's bwrap, not by whoever else locks the directory
//! (`placeholder::held_by_a_plan`: a run holding a read lock on its workspace left what another run
//! planted there in place, found by an attacker's review).

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What happened to an entry that should not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undone {
    /// Moved to this path.
    MovedTo(PathBuf),
    /// Left where it is, and why.
    Left(String),
    /// No longer there when it was to be moved: a concurrent run's watcher moved it aside (each
    /// run with the same root watches its top), or the command removed it again.
    Gone,
}

/// Move `path` aside within its directory.
pub fn move_aside(path: &Path) -> Undone {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return Undone::Left("it has no parent directory".into()) };
    let dir_fd = match crate::no_symlinks::open_dir(dir) {
        Ok(fd) => fd,
        Err(e) => return Undone::Left(format!("its directory could not be opened without following a symlink ({e})")),
    };
    if sandspawn_helper::placeholder::held_by_a_plan(&dir_fd) {
        return Undone::Left("a sandbox of a plan another program runs still holds its directory".into());
    }
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut held = name.to_os_string();
    held.push(format!(".sandspawn-held-{stamp}-{}-{n}", std::process::id()));
    let (Ok(from), Ok(to)) = (CString::new(name.as_bytes()), CString::new(held.as_bytes())) else {
        return Undone::Left("its name holds a NUL byte".into());
    };
    if let Err(e) = rename_no_replace(&dir_fd, &from, &to) {
        if e.raw_os_error() == Some(libc::ENOENT) {
            return Undone::Gone;
        }
        return Undone::Left(format!("moving it aside failed: {}", sandspawn_helper::report::os_words(&e)));
    }
    Undone::MovedTo(dir.join(held))
}

/// Whether `name` is one `move_aside` gave an entry it moved aside (`NAME.sandspawn-held-
/// <secs>-<pid>-<n>`, reported by the step that moved it): that suffix exactly, not the words
/// anywhere (found by an attacker's review, rfix23c: `zz.sandspawn-held-1.conf`, which
/// `systemd-tmpfiles --user` reads as any `*.conf`, landed unreported).
pub fn is_held_aside(name: &[u8]) -> bool {
    const MARK: &[u8] = b".sandspawn-held-";
    let Some(at) = name.windows(MARK.len()).rposition(|w| w == MARK) else { return false };
    let rest = &name[at + MARK.len()..];
    let parts: Vec<&[u8]> = rest.split(|b| *b == b'-').collect();
    at > 0 && parts.len() == 3 && parts.iter().all(|p| !p.is_empty() && p.iter().all(u8::is_ascii_digit))
}

/// The shallowest symlink on the way to `path` (a path kept absent) below one of `roots`, made at or
/// after `since` (unix seconds): one the run made. A path kept absent is listed canonical up to its
/// first missing component, so any symlink on its way now is new. `move_aside` opens no path through
/// one: found by an attacker's review, `~/.gitconfig` included the missing
/// `~/dotfiles/local/gitconfig`, the run made `local` a link to a directory of its own holding
/// `gitconfig`, and it was reported but left (the host's next `git status` ran its fsmonitor).
/// Moving that link aside undoes the path. An `lstat` per component below the root.
pub fn link_on_the_way(path: &Path, roots: &[PathBuf], since: i64) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let root = roots.iter().filter(|r| path.starts_with(r)).max_by_key(|r| r.as_os_str().len())?;
    let mut on_the_way: Vec<&Path> = path.ancestors().skip(1).take_while(|a| a.starts_with(root) && a != root).collect();
    on_the_way.reverse();
    for dir in on_the_way {
        match dir.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => return (m.ctime() >= since).then(|| dir.to_path_buf()),
            Ok(m) if m.is_dir() => {}
            _ => return None,
        }
    }
    None
}

/// Put the symlink `path` back, pointing to `target` as it did, after moving aside whatever a run
/// put in its place (`moved`: where that went). The directory is opened as `move_aside` opens it;
/// below `root` (the writable root holding it), made again where it is missing (`dir_made_again`).
pub fn restore_link(path: &Path, target: &Path, moved: &Undone, root: Option<&Path>) -> Result<(), String> {
    if let Undone::Left(why) = moved {
        return Err(why.clone());
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return Err("it has no parent directory".into()) };
    let opened = match root {
        Some(root) => dir_made_again(dir, root),
        None => crate::no_symlinks::open_dir(dir),
    };
    let dir_fd = opened.map_err(|e| format!("its directory could not be opened without following a symlink ({e})"))?;
    let (Ok(name), Ok(target)) = (CString::new(name.as_bytes()), CString::new(target.as_os_str().as_bytes())) else {
        return Err("its name holds a NUL byte".into());
    };
    // SAFETY: a valid directory descriptor and two C strings; fails rather than replace an entry.
    if unsafe { libc::symlinkat(target.as_ptr(), dir_fd.as_raw_fd(), name.as_ptr()) } != 0 {
        return Err(format!("making it again failed: {}", sandspawn_helper::report::os_words(&std::io::Error::last_os_error())));
    }
    Ok(())
}

/// `dir` (below `root`) opened without following a symlink, each missing directory on its way made
/// again (`mkdirat` in its parent, opened the same way). For a held link whose directory the run
/// removed, or swapped for a symlink that was moved aside since (`link_on_the_way`): the host
/// reaches the link through these paths, and the link can only be made again in them.
pub fn dir_made_again(dir: &Path, root: &Path) -> std::io::Result<OwnedFd> {
    use std::path::Component;
    let invalid = || std::io::Error::from_raw_os_error(libc::EINVAL);
    let below = dir.strip_prefix(root).map_err(|_| invalid())?;
    let mut fd = crate::no_symlinks::open_dir(root)?;
    for part in below.components() {
        let Component::Normal(part) = part else { return Err(invalid()) };
        let name = CString::new(part.as_bytes()).map_err(|_| invalid())?;
        fd = match crate::no_symlinks::open_at(fd.as_raw_fd(), &name) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                // SAFETY: a valid directory descriptor and C string; the umask applies, as to `mkdir`.
                if unsafe { libc::mkdirat(fd.as_raw_fd(), name.as_ptr(), 0o777) } != 0 {
                    let e = std::io::Error::last_os_error();
                    if e.raw_os_error() != Some(libc::EEXIST) {
                        return Err(e);
                    }
                }
                crate::no_symlinks::open_at(fd.as_raw_fd(), &name)?
            }
            opened => opened?,
        };
    }
    Ok(fd)
}

/// Rename within `dir`, never over an existing entry.
fn rename_no_replace(dir: &OwnedFd, from: &std::ffi::CStr, to: &std::ffi::CStr) -> std::io::Result<()> {
    let fd = dir.as_raw_fd();
    // SAFETY: a valid directory descriptor and two C strings; the flag refuses to overwrite.
    #[cfg(target_os = "linux")]
    let rc = unsafe { libc::renameat2(fd, from.as_ptr(), fd, to.as_ptr(), libc::RENAME_NOREPLACE) };
    #[cfg(target_os = "macos")]
    let rc = unsafe { libc::renameatx_np(fd, from.as_ptr(), fd, to.as_ptr(), libc::RENAME_EXCL) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_names_entries_were_moved_aside_to_are_passed_over() {
        assert!(is_held_aside(b".bashrc.sandspawn-held-1764800000-4242-0"));
        assert!(is_held_aside(b"kak.sandspawn-held-1-2-3"));
        // Found by an attacker's review (rfix23c): the words anywhere in a name a tool reads.
        assert!(!is_held_aside(b"zz.sandspawn-held-1.conf"));
        assert!(!is_held_aside(b"x.sandspawn-held-1-2-3.fish"));
        assert!(!is_held_aside(b".sandspawn-held-1-2-3"));
        assert!(!is_held_aside(b"x.sandspawn-held-1-2"));
        assert!(!is_held_aside(b"x.sandspawn-held-a-2-3"));
    }

    use super::*;

    #[test]
    fn moves_aside_in_place_and_never_through_a_symlink() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("ws/.git/hooks")).unwrap();
        std::fs::write(r.join("ws/.git/config"), "x").unwrap();
        let Undone::MovedTo(to) = move_aside(&r.join("ws/.git")) else { panic!() };
        assert!(!r.join("ws/.git").exists());
        assert_eq!(to.parent(), Some(r.join("ws").as_path()));
        assert!(to.file_name().unwrap().to_string_lossy().starts_with(".git.sandspawn-held-"));
        assert_eq!(std::fs::read_to_string(to.join("config")).unwrap(), "x", "nothing of it is lost");
        // A directory on the way replaced by a symlink: nothing is moved, there or at the target.
        std::fs::create_dir_all(r.join("elsewhere")).unwrap();
        std::fs::write(r.join("elsewhere/.envrc"), "y").unwrap();
        std::os::unix::fs::symlink(r.join("elsewhere"), r.join("link")).unwrap();
        assert!(matches!(move_aside(&r.join("link/.envrc")), Undone::Left(w) if w.contains("symlink")));
        assert!(r.join("elsewhere/.envrc").exists());
        assert_eq!(move_aside(&r.join("ws/missing")), Undone::Gone);
    }

    #[test]
    fn a_link_is_put_back_where_it_was() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir(r.join("other")).unwrap();
        std::os::unix::fs::symlink("other", r.join("cfg")).unwrap();
        let moved = move_aside(&r.join("cfg"));
        assert!(matches!(moved, Undone::MovedTo(_)));
        restore_link(&r.join("cfg"), Path::new("real"), &moved, None).unwrap();
        assert_eq!(std::fs::read_link(r.join("cfg")).unwrap(), PathBuf::from("real"));
        assert!(restore_link(&r.join("cfg"), Path::new("real"), &Undone::Gone, Some(&r)).unwrap_err().contains("exists"), "never over an entry");
        assert!(restore_link(&r.join("x"), Path::new("real"), &Undone::Left("held".into()), Some(&r)).is_err());
        // Its directories gone: made again below the root, never through a symlink.
        restore_link(&r.join("a/b/cfg"), Path::new("../real"), &Undone::Gone, Some(&r)).unwrap();
        assert_eq!(std::fs::read_link(r.join("a/b/cfg")).unwrap(), PathBuf::from("../real"));
        std::os::unix::fs::symlink("other", r.join("l")).unwrap();
        assert!(restore_link(&r.join("l/b/cfg"), Path::new("real"), &Undone::Gone, Some(&r)).unwrap_err().contains("symlink"));
        assert!(!r.join("other/b").exists(), "nothing made where the link leads");
    }

    /// Found by an attacker's review: a run (a dev server) holding a POSIX read lock on the
    /// workspace's top (`lockf`) left what another run planted there (a `.git` with
    /// `core.fsmonitor`) in place, said to be held by a plan's sandbox. Only the lock of a plan's
    /// own sandbox (its bwrap's pid 1: see the real bwrap's tests) leaves an entry now.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_read_lock_of_a_process_that_is_no_plan_s_sandbox_leaves_nothing_in_place() {
        use crate::placeholders::tests::{hold, How};
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        for how in [How::PosixRead, How::OfdRead, How::FlockShared] {
            std::fs::create_dir_all(r.join(".git")).unwrap();
            let other = hold(&r, how);
            let moved = move_aside(&r.join(".git"));
            other.release();
            assert!(matches!(moved, Undone::MovedTo(_)), "{how:?}: {moved:?}");
        }
    }
}
