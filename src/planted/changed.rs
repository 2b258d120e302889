//! What a sandboxed attempt changed in its writable roots, for the question whether to run the
//! command again without the sandbox (`runWithEscalation`): the attempt could have rewritten the
//! very script the retry then runs as the user, and printed a plausible denial to be retried.
//!
//! An entry counts as changed when its ctime is at or after the attempt's start. The kernel sets
//! ctime to now on every change to an inode (content, mode, owner, links, a rename) and user space
//! cannot set it back (unlike mtime: `touch -d`), so nothing the command does hides a change. A
//! directory's ctime changes when an entry is added, removed or renamed in it: a deletion shows as
//! its directory.
//!
//! The walk is bounded and breadth first (shallow entries first): at most `depth` directory levels
//! below a root, `seen` entries looked at and `paths` reported; `truncated` says a bound cut it.
//! It never follows a symlink: each directory is read through one descriptor opened without
//! following (`listing`), each entry `fstatat`'ed in it without following. It runs on the
//! escalation path only (after a denial, before the question), never on a run's.

use std::collections::{HashSet, VecDeque};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use super::listing;

/// How far the walk goes.
pub struct Bounds {
    /// Directory levels below a root that are read.
    pub depth: usize,
    /// Entries looked at, over all roots.
    pub seen: usize,
    /// Changed paths reported.
    pub paths: usize,
}

/// The bounds of `runWithEscalation`'s walk (documented in the README). Measured on a loaded
/// 2-core machine: 0.23 to 0.27 s for 100,000 entries (`/usr`) with the directories cached, 1.6 s
/// cold; paid only when the question is about to be asked.
pub const BOUNDS: Bounds = Bounds { depth: 32, seen: 100_000, paths: 1_000 };

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// The files named first (those changed), then the walk's finds, breadth first; no duplicates.
    pub paths: Vec<PathBuf>,
    /// A bound cut the walk: there may be more.
    pub truncated: bool,
}

fn ctime_ns(sec: i64, nsec: i64) -> i64 {
    sec.saturating_mul(1_000_000_000).saturating_add(nsec)
}

/// What changed at or after `since_ns` (ns since the epoch): `files` (looked at one by one, not
/// followed) and what the walk of `roots` finds. A root inside another root is walked as part of
/// it; a root that is gone has nothing to report; a directory that cannot be listed is reported
/// itself, with `truncated`.
pub fn changed_since(roots: &[PathBuf], files: &[PathBuf], since_ns: i64, bounds: &Bounds) -> Changes {
    let mut found = Found { changes: Changes::default(), listed: HashSet::new(), bound: bounds.paths };
    for f in files {
        if std::fs::symlink_metadata(f).is_ok_and(|m| ctime_ns(m.ctime(), m.ctime_nsec()) >= since_ns) {
            found.report(f.clone());
        }
    }
    let tops: Vec<&PathBuf> = roots.iter().filter(|r| !roots.iter().any(|o| o != *r && r.starts_with(o))).collect();
    let mut queue: VecDeque<(PathBuf, usize)> = tops.into_iter().map(|r| (r.clone(), 0)).collect();
    let mut seen = 0usize;
    while let Some((dir, depth)) = queue.pop_front() {
        if seen >= bounds.seen || found.full() {
            found.changes.truncated = true;
            break;
        }
        // A directory this user cannot list (the attempt can `chmod 300` one and change what is
        // below it) is named, and the answer says it is incomplete.
        let open = match listing::open(&dir) {
            Ok(open) => open,
            Err(e) if listing::is_gone(&e) => continue,
            Err(_) => {
                found.report(dir);
                found.changes.truncated = true;
                continue;
            }
        };
        let mut subdirs = Vec::new();
        // A read error midway leaves what was listed: still worth reporting.
        let _ = open.list(|name, kind, _ino, fd| {
            seen += 1;
            if seen > bounds.seen {
                return;
            }
            let path = dir.join(name);
            if listing::stat_at(fd, name).is_some_and(|st| ctime_ns(st.st_ctime, st.st_ctime_nsec) >= since_ns) {
                found.report(path.clone());
            }
            if kind == listing::EntryKind::Dir {
                subdirs.push(path);
            }
        });
        if depth + 1 >= bounds.depth && !subdirs.is_empty() {
            found.changes.truncated = true;
            continue;
        }
        queue.extend(subdirs.into_iter().map(|d| (d, depth + 1)));
    }
    found.changes.truncated |= seen > bounds.seen;
    found.changes
}

struct Found {
    changes: Changes,
    listed: HashSet<PathBuf>,
    bound: usize,
}

impl Found {
    fn full(&self) -> bool {
        self.changes.paths.len() >= self.bound
    }

    fn report(&mut self, path: PathBuf) {
        if self.full() {
            self.changes.truncated = true;
        } else if self.listed.insert(path.clone()) {
            self.changes.paths.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn now_ns() -> i64 {
        let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
        d.as_nanos() as i64
    }

    /// A tree changed before `since`: `old/a`, `old/deep/b`, `keep.txt`.
    fn tree() -> (tempfile::TempDir, PathBuf, i64) {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        fs::create_dir_all(r.join("old/deep")).unwrap();
        fs::write(r.join("old/a"), "a").unwrap();
        fs::write(r.join("old/deep/b"), "b").unwrap();
        fs::write(r.join("keep.txt"), "k").unwrap();
        // Past the coarse clock's tick, so that what follows is stamped later.
        std::thread::sleep(std::time::Duration::from_millis(30));
        let since = now_ns();
        std::thread::sleep(std::time::Duration::from_millis(30));
        (t, r, since)
    }

    #[test]
    fn reports_what_changed_after_the_start_even_with_an_old_mtime() {
        let (_t, r, since) = tree();
        fs::write(r.join("old/deep/b"), "rewritten").unwrap();
        // An mtime set back does not hide the change: ctime is the kernel's.
        let f = fs::File::options().write(true).open(r.join("old/deep/b")).unwrap();
        f.set_modified(std::time::UNIX_EPOCH).unwrap();
        fs::remove_file(r.join("old/a")).unwrap();
        let c = changed_since(&[r.clone()], &[], since, &BOUNDS);
        assert_eq!(c, Changes { paths: vec![r.join("old"), r.join("old/deep/b")], truncated: false });
    }

    #[test]
    fn nothing_changed_is_nothing_reported_and_files_come_first() {
        let (_t, r, since) = tree();
        assert_eq!(changed_since(&[r.clone()], &[r.join("keep.txt")], since, &BOUNDS), Changes::default());
        fs::write(r.join("keep.txt"), "changed").unwrap();
        let c = changed_since(&[r.join("old"), r.clone()], &[r.join("keep.txt")], since, &BOUNDS);
        assert_eq!(c, Changes { paths: vec![r.join("keep.txt")], truncated: false }, "once, though named and found, and the nested root walked once");
    }

    #[test]
    fn never_follows_a_symlink() {
        let (_t, r, since) = tree();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), r.join("old/link")).unwrap();
        fs::write(elsewhere.path().join("x"), "x").unwrap();
        let c = changed_since(&[r.clone()], &[], since, &BOUNDS);
        assert_eq!(c.paths, vec![r.join("old"), r.join("old/link")], "the link is new; what it points to is not walked");
    }

    #[test]
    fn each_bound_says_truncated() {
        let (_t, r, since) = tree();
        fs::write(r.join("old/deep/b"), "rewritten").unwrap();
        fs::write(r.join("keep.txt"), "changed").unwrap();
        let shallow = changed_since(&[r.clone()], &[], since, &Bounds { depth: 2, ..BOUNDS });
        assert_eq!(shallow, Changes { paths: vec![r.join("keep.txt")], truncated: true }, "old/deep is not read");
        let few = changed_since(&[r.clone()], &[], since, &Bounds { seen: 2, ..BOUNDS });
        assert!(few.truncated);
        let one = changed_since(&[r.clone()], &[], since, &Bounds { paths: 1, ..BOUNDS });
        assert_eq!(one, Changes { paths: vec![r.join("keep.txt")], truncated: true });
    }
}
