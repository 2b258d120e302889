//! The held links' records shared with this user's other processes (`held_links` keeps them per
//! process): one file per link in sandspawn's state directory (`STATE/sandspawn/held-links`), which
//! each process holding the link keeps open under a shared `flock` for as long as it holds it.
//!
//! Why: a run in another process (a second agent session, the CLI in another terminal) repointed a
//! `writableRoots` link while a run here started; this run's writable root was where that run
//! pointed it (it wrote there, `hostRisks: []`), and, outliving the other run, it "put back" the
//! repointed link after the other had restored the user's: the link stayed repointed, the writable
//! root of every later run (found by an attacker's review, rfix27). Now the first holder of a link
//! on the host writes the link as it found it; a process that starts holding it while the file is
//! locked takes the record from the file, as a run of the same process takes the in-process one.
//! A file nobody holds a lock on is a record of the past: the next holder writes it anew.
//!
//! The locks are on a file of their own beside the record (`NAME.lock`, mode 0200), write locks
//! only (`file_lock::writers_only`: a shared hold is a write lock on one byte of the holder's own),
//! let go of explicitly, not by closing. Found by an attacker's review (cross28): the Landlock mode
//! restricts no reads, and its command opened a record for reading, took it shared with `flock`
//! while another run held the link (so that run, ending, left the file) and then exclusive: the next
//! run through the link waited in its policy's resolution, on the host's main thread and holding
//! the process's lock on the held links, for as long as the command lived. Any lock a reader can
//! take (a read lock) would still make a record look held, so that it stayed and a later run took
//! the link as it recorded; a file of mode 0200 it cannot open at all (the Landlock command has no
//! capability that passes over a mode, root's neither; bwrap runs do not see the state directory).

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::paths::LinkOnTheWay;

/// The records' directory, from the host process's environment; never one under the shared `/tmp`
/// (`state_dir::host_path`: another process's run forged a record there, crossb39).
fn dir() -> Option<PathBuf> {
    crate::state_dir::host_path("held-links")
}

/// Why this process's held links are held per process only (their records shared with no other
/// process): its state directory lies under the shared `/tmp`, and so does the user database's
/// home (`state_dir::host_path`). `None` when they are shared, or no state directory is named at all.
pub(crate) fn unshared_why() -> Option<String> {
    let named = crate::state_dir::path(|k| std::env::var_os(k).map(PathBuf::from), "held-links")?;
    dir().is_none().then(|| {
        format!(
            "held links: sandspawn's state directory ({}) and the user database's home lie under the shared /tmp, where other processes' runs write, \
             so the symlinks this run's paths are resolved through are held in this process only: a run of another process that repoints one meanwhile is not seen \
             (set XDG_STATE_HOME to a directory outside /tmp)",
            named.parent().unwrap_or(&named).display()
        )
    })
}

/// A link's record file name: FNV-1a of its path (the path is in the file too, and compared).
fn file_name(link: &Path) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in link.as_os_str().as_bytes() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

/// The names in the records' directory: one listing per policy resolved, so that the walk of its
/// paths opens a record only where one may exist (none, nearly always).
pub(crate) fn listed() -> HashSet<String> {
    dir().map(|d| listed_in(&d)).unwrap_or_default()
}

fn listed_in(d: &Path) -> HashSet<String> {
    // The owner's bits a sandboxed command took (`chmod 0`: the listing failed, and no record was
    // looked at) are given back first.
    let Some(meta) = d.symlink_metadata().ok().filter(crate::state_dir::is_private) else { return HashSet::new() };
    crate::state_dir::give_back_if_taken(d, &meta);
    let Ok(entries) = std::fs::read_dir(d) else { return HashSet::new() };
    entries.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect()
}

/// The records' directory, made (mode 0700) when missing; one this user does not own, or that
/// others may write, is not used (whoever could write it could forge a record).
fn private_dir(d: PathBuf) -> Option<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&d);
    let meta = d.symlink_metadata().ok().filter(crate::state_dir::is_private)?;
    crate::state_dir::give_back_if_taken(&d, &meta);
    Some(d)
}

/// Lock or unlock a record's lock file as `flock(op)` would, with write locks only (see the module
/// comment).
fn flock(f: &File, op: libc::c_int) -> bool {
    sandspawn_helper::file_lock::writers_only(f, op).is_ok()
}

/// The lock file of the record at `at` (`NAME.lock`).
fn lock_path(at: &Path) -> PathBuf {
    let mut name = at.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// The lock file at `lock_at` held exclusively (`Some(Some)`), held by another holder
/// (`Some(None)`); `None` if it cannot be used.
fn exclusive(lock_at: &Path) -> Option<Option<File>> {
    let dir = File::open(lock_at.parent()?).ok()?;
    let name = std::ffi::CString::new(lock_at.file_name()?.as_bytes()).ok()?;
    Some(sandspawn_helper::file_lock::exclusive_at(&dir, &name).ok()?.map(File::from))
}

/// Whether the exclusive hold `flock` refused is refused by a reader's lock alone (no holder's):
/// nobody holds the record (lock28).
fn readers_only(lock: &File) -> bool {
    sandspawn_helper::file_lock::write_locked(lock).is_ok_and(|held| !held)
}

/// Whether `f` is the file at `p` (not one removed or replaced since it was opened).
fn is_at(f: &File, p: &Path) -> bool {
    match (f.metadata(), p.symlink_metadata()) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

fn encode(l: &LinkOnTheWay) -> Vec<u8> {
    let mut out = l.path.as_os_str().as_bytes().to_vec();
    out.push(0);
    out.extend_from_slice(l.target.as_os_str().as_bytes());
    out.push(0);
    out.extend_from_slice(format!("{} {} {} {}", l.id.0, l.id.1, l.changed_at.0, l.changed_at.1).as_bytes());
    out
}

fn decode(bytes: &[u8], path: &Path) -> Option<LinkOnTheWay> {
    let mut parts = bytes.splitn(3, |b| *b == 0);
    let (p, target, nums) = (parts.next()?, parts.next()?, parts.next()?);
    if p != path.as_os_str().as_bytes() {
        return None;
    }
    let n: Vec<i128> = std::str::from_utf8(nums).ok()?.split(' ').map(|s| s.parse().ok()).collect::<Option<_>>()?;
    let [dev, ino, s, ns] = n[..] else { return None };
    let target = PathBuf::from(OsString::from_vec(target.to_vec()));
    Some(LinkOnTheWay { path: path.to_path_buf(), target, id: (dev as u64, ino as u64), changed_at: (s as i64, ns as i64) })
}

fn read_record(f: &mut File, path: &Path) -> Option<LinkOnTheWay> {
    let mut bytes = Vec::new();
    f.rewind().ok()?;
    f.take(2 * libc::PATH_MAX as u64 + 128).read_to_end(&mut bytes).ok()?;
    decode(&bytes, path)
}

/// The record of `link` another process keeps while it holds it; `None` when none does.
pub(crate) fn recorded(listed: &HashSet<String>, link: &Path) -> Option<LinkOnTheWay> {
    recorded_in(&dir()?, listed, link)
}

fn recorded_in(d: &Path, listed: &HashSet<String>, link: &Path) -> Option<LinkOnTheWay> {
    let name = file_name(link);
    if !listed.contains(&name) {
        return None;
    }
    let at = d.join(name);
    // Its owner's bits given back if a reader took them (`chmod 0`, fix29), as the lock file's.
    let mut f = sandspawn_helper::file_lock::open_own(&at, libc::O_RDONLY, 0o600).ok()?;
    // No lock file: nobody holds it (a holder makes it before it writes the record).
    let lock = sandspawn_helper::file_lock::open_write_only(&lock_path(&at), false).ok()?;
    // Taken at once: nobody holds it (a lock of this process's own is on another description).
    if flock(&lock, libc::LOCK_EX | libc::LOCK_NB) {
        flock(&lock, libc::LOCK_UN);
        return None;
    }
    if readers_only(&lock) {
        return None;
    }
    read_record(&mut f, link)
}

/// This process's hold on a link's shared record: the file, locked shared until dropped.
#[derive(Debug)]
pub(crate) struct Shared {
    file: File,
    /// The record's lock file (`lock_path`), held shared (`file_lock::writers_only`).
    lock: File,
    /// The link's path, and the record file's.
    path: PathBuf,
    at: PathBuf,
}

impl Shared {
    /// Hold `link`'s record: the first holder on the host writes `found` (the link as this process
    /// found it); a later one joins it. Second: the record another process wrote, if it did.
    /// `None` where the state directory cannot be used (held per process then, as before).
    pub(crate) fn hold(found: &LinkOnTheWay) -> Option<(Shared, Option<LinkOnTheWay>)> {
        Shared::hold_in(dir()?, found)
    }

    fn hold_in(d: PathBuf, found: &LinkOnTheWay) -> Option<(Shared, Option<LinkOnTheWay>)> {
        let d = private_dir(d)?;
        let at = d.join(file_name(&found.path));
        // A file removed or replaced between the open and the lock is not the record: again.
        for _ in 0..4 {
            let lock_at = lock_path(&at);
            // Exclusive at once: the first holder (a lock file a reader spoiled, `chmod u+r` and a
            // read lock, replaced: `file_lock::exclusive_at`, lock28). Else after a shared lock,
            // once more: another process's `recorded` takes it exclusive for a moment to learn
            // that nobody holds it.
            let (lock, first) = match exclusive(&lock_at)? {
                Some(lock) => (lock, true),
                None => {
                    let lock = sandspawn_helper::file_lock::open_write_only(&lock_at, true).ok()?;
                    if !flock(&lock, libc::LOCK_SH) {
                        return None;
                    }
                    let first = flock(&lock, libc::LOCK_EX | libc::LOCK_NB);
                    (lock, first)
                }
            };
            // Its owner's bits given back if a reader took them (`chmod 0`: the record was held per
            // process then, for good; found by an attacker's review, fix29), as the lock file's.
            let mut file = sandspawn_helper::file_lock::open_own(&at, libc::O_RDWR | libc::O_CREAT, 0o600).ok()?;
            if !is_at(&file, &at) || !is_at(&lock, &lock_at) {
                flock(&lock, libc::LOCK_UN);
                continue;
            }
            let theirs = match first {
                true => {
                    let written = file.set_len(0).is_ok() && file.rewind().is_ok() && file.write_all(&encode(found)).is_ok();
                    // Shared from here: other holders join; none may write it while this one holds.
                    if !written || sandspawn_helper::file_lock::exclusive_to_shared(&lock).is_err() {
                        flock(&lock, libc::LOCK_UN);
                        return None;
                    }
                    None
                }
                false => read_record(&mut file, &found.path),
            };
            return Some((Shared { file, lock, path: found.path.clone(), at }, theirs));
        }
        None
    }

    /// The record as it is in the file now: another process that put the link back wrote the link
    /// it made again there (`rewrite`).
    pub(crate) fn reread(&mut self) -> Option<LinkOnTheWay> {
        read_record(&mut self.file, &self.path)
    }

    /// After this process put the link back: the link made again (a new inode and ctime), for the
    /// other holders to compare with.
    pub(crate) fn rewrite(&mut self, now: &LinkOnTheWay) {
        let _ = self.file.set_len(0).is_ok() && self.file.rewind().is_ok() && self.file.write_all(&encode(now)).is_ok();
    }
}

/// The last holder on the host removes the record (one file per link ever held piled up in the
/// state directory): only when no other process holds it, and only the file it holds (a holder
/// that opened it meanwhile finds it gone from its path after its lock, and makes it anew: `hold`).
impl Drop for Shared {
    fn drop(&mut self) {
        // The last holder, also when a reader's read lock refuses it the exclusive hold (lock28).
        if flock(&self.lock, libc::LOCK_EX | libc::LOCK_NB) || readers_only(&self.lock) {
            let lock_at = lock_path(&self.at);
            if is_at(&self.file, &self.at) && is_at(&self.lock, &lock_at) {
                let _ = std::fs::remove_file(&self.at);
                let _ = std::fs::remove_file(&lock_at);
            }
        }
        // Let go of explicitly: a child another thread forked holds a copy of the descriptor (and
        // so the lock) until its exec.
        flock(&self.lock, libc::LOCK_UN);
    }
}

#[cfg(test)]
#[path = "held_links_shared_tests.rs"]
mod tests;
