//! The files of a change set that a process outside its runs holds open for writing when a run
//! ends, dropped from the set.
//!
//! Why: runs that may use Unix sockets can pass each other descriptors (SCM_RIGHTS). A review run
//! that opens a file of its overlay for writing and hands it to a process of another run leaves
//! that process a way to rewrite the set's file after the run has ended, whatever lock the set
//! has. 9abe940 made the apply refuse a file whose ctime moved after the apply began, and the
//! revision covers ctimes; but a write through a shared mapping of the file stamps nothing once
//! its page is writable (ext4 stamps the first write fault, then none until the page is written
//! back, 30 s later by default; tmpfs stamps no mapped write at all). Found by an attacker's review
//! (revd38): the receiver mapped the file and touched it before the run ended, rewrote it through
//! the mapping after `showChangeSet`, and `applyChangeSet({ revision })` landed what nobody was
//! shown. When a run ends nothing but such a process can hold a file of the set open (the run's
//! processes are gone, the upper directory is in no sandbox, bwrap's write guard and the Landlock
//! mode refuse an open for writing through a passed directory), and a mapping holds its file
//! open. The kernel tells whether any process holds an inode open for writing: a read lease is
//! refused then (`EAGAIN`). Such a file is unlinked from the set (the process keeps an inode no
//! set names) and reported; a legitimate run never leaves one. A file the host cannot open, or
//! that lies where it cannot look (the command's permissions), or whose read lease the kernel
//! refuses for another reason than a writer (`fs.leases-enable` 0, a filesystem without leases),
//! cannot be asked: it is recorded (`unasked`), and never applied.

use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};


use super::entries::{self, Event, Kind};
use super::store::ChangeSet;
use super::unasked::Id;
use crate::planted::{HostRisk, RiskKind};

/// What asking the kernel about one file of the set told.
#[derive(Debug, PartialEq, Eq)]
enum Held {
    No,
    ForWriting,
    /// It could not be opened (its permissions, or its directory's): nothing was asked.
    Unasked,
    /// The read lease was refused for another reason (leases disabled, a filesystem without them).
    Unknown(i32),
}

/// Whether a process holds `path` open for writing: a read lease is granted only when none does.
/// Opened without blocking: a lease another process holds on it would make the open wait for
/// that process (up to `lease-break-time`, 45 s) and is itself a holder outside the runs.
fn held(path: &Path) -> Held {
    let file = match std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY).open(path) {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::EWOULDBLOCK) => return Held::ForWriting,
        // Gone: nothing to apply.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Held::No,
        // Unreadable now; a holder of a descriptor of it, or of its directory, may give the mode
        // back once this check has passed (found by an attacker's review, rev39).
        Err(_) => return Held::Unasked,
    };
    // SAFETY: our own descriptor; F_SETLEASE takes an int.
    // Granted: the close that follows gives it back (a lease is its open file's). Only Linux has
    // leases, and review mode (no set is ever made elsewhere).
    #[cfg(target_os = "linux")]
    let leased = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, libc::F_RDLCK as libc::c_int) } == 0;
    #[cfg(not(target_os = "linux"))]
    let leased = file.as_raw_fd() >= 0;
    if leased {
        return Held::No;
    }
    match std::io::Error::last_os_error().raw_os_error().unwrap_or(0) {
        libc::EAGAIN => Held::ForWriting,
        e => Held::Unknown(e),
    }
}

/// Unlink every file of `set` some process holds open for writing (see the module) and record
/// what could not be asked (`unasked`); the risks that say so, and one when the kernel could not
/// tell for some file. Called once the run's sandbox is gone, under the set's lock, before the set
/// is described (which says what the record names).
pub fn drop_held_open(set: &ChangeSet) -> Vec<HostRisk> {
    let mut risks = Vec::new();
    let mut unasked: Vec<Id> = Vec::new();
    for (i, root) in set.meta.roots.iter().enumerate() {
        let upper = set.upper(i);
        let (mut held_open, mut unknown): (Vec<PathBuf>, Option<i32>) = (Vec::new(), None);
        // The directories entered, the upper's top first: an entry that cannot be looked at is
        // recorded by its directory.
        let mut dirs: Vec<Id> = super::unasked::id_of(&upper).into_iter().collect();
        let _ = entries::walk(&upper, root, |ev| -> std::io::Result<bool> {
            match &ev {
                Event::Enter(e, _) => dirs.push(e.inode),
                Event::Leave(_) => {
                    dirs.pop();
                }
                Event::Leaf(e) if matches!(e.kind, Kind::File) => match held(&upper.join(&e.rel)) {
                    Held::No => {}
                    Held::ForWriting => held_open.push(e.rel.clone()),
                    Held::Unasked => unasked.push(e.inode),
                    // Not asked either (leases disabled, a filesystem without them): recorded
                    // like a file that could not be opened, never applied (found by an attacker's
                    // review, left40: only the run's result said it, and the apply landed it).
                    Held::Unknown(errno) => {
                        unasked.push(e.inode);
                        unknown = unknown.or(Some(errno));
                    }
                },
                // Unreadable (not past the walk's bounds, which nothing ever applies): the entry
                // itself when it can be looked at (a directory that cannot be listed), else the
                // directory it is in (which cannot be searched).
                Event::Beyond(rel, Some(_)) => unasked.extend(super::unasked::id_of(&upper.join(rel)).ok().or(dirs.last().copied())),
                _ => {}
            }
            Ok(true)
        });
        for rel in held_open {
            let dropped = std::fs::remove_file(upper.join(&rel)).map_or_else(|e| format!("unlinking it failed ({}); it stays in the set", sandspawn_helper::report::os_words(&e)), |()| "dropped from the change set".into());
            let detail = format!("a process outside the run held this file of the change set open for writing when the run ended (a descriptor passed on), and could have rewritten it after the set was shown: {dropped}");
            risks.push(HostRisk { path: super::changes::shown(&root.join(&rel)), kind: RiskKind::ScanIncomplete, detail });
        }
        if let Some(errno) = unknown {
            let e = std::io::Error::from_raw_os_error(errno);
            let detail = format!("whether a process outside the run holds a file of the change set open for writing could not be told (a read lease was refused: {}): such a file is never applied (a holder could rewrite it through a mapping after the set is shown) and stays in the change set until a later run of the set can ask", sandspawn_helper::report::os_words(&e));
            risks.push(HostRisk { path: super::changes::shown(root), kind: RiskKind::ScanIncomplete, detail });
        }
    }
    // Said where the set is described (`summary`), and refused by the apply.
    if let Err(e) = super::unasked::record(set, &unasked) {
        let root = set.meta.roots.first().map(|r| r.as_path()).unwrap_or(std::path::Path::new("/"));
        let detail = format!("which entries of the change set could not be asked whether a process held them open for writing could not be recorded ({}): an entry made unreadable could be rewritten after the set is shown", sandspawn_helper::report::os_words(&e));
        risks.push(HostRisk { path: super::changes::shown(root), kind: RiskKind::ScanIncomplete, detail });
    }
    risks
}
