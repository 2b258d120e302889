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
//! set names) and reported; a legitimate run never leaves one.

use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};


use super::entries::{self, Event, Kind};
use super::store::ChangeSet;
use crate::planted::{HostRisk, RiskKind};

/// What asking the kernel about one file of the set told.
#[derive(Debug, PartialEq, Eq)]
enum Held {
    No,
    ForWriting,
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
        // Gone or unreadable: the apply reads it no better, and says so.
        Err(_) => return Held::No,
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

/// Unlink every file of `set` some process holds open for writing (see the module); the risks that
/// say so, and one when the kernel could not tell for some file. Called once the run's sandbox is
/// gone, under the set's lock, before the set is described.
pub fn drop_held_open(set: &ChangeSet) -> Vec<HostRisk> {
    let mut risks = Vec::new();
    for (i, root) in set.meta.roots.iter().enumerate() {
        let upper = set.upper(i);
        let (mut held_open, mut unknown): (Vec<PathBuf>, Option<i32>) = (Vec::new(), None);
        let _ = entries::walk(&upper, root, |ev| -> std::io::Result<bool> {
            if let Event::Leaf(e) = &ev {
                if matches!(e.kind, Kind::File) {
                    match held(&upper.join(&e.rel)) {
                        Held::No => {}
                        Held::ForWriting => held_open.push(e.rel.clone()),
                        Held::Unknown(errno) => unknown = unknown.or(Some(errno)),
                    }
                }
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
            let detail = format!("whether a process outside the run holds a file of the change set open for writing could not be told (a read lease was refused: {}): such a file could be rewritten after the set is shown", sandspawn_helper::report::os_words(&e));
            risks.push(HostRisk { path: super::changes::shown(root), kind: RiskKind::ScanIncomplete, detail });
        }
    }
    risks
}
