//! The entries of a change set that could not be asked, when its last run ended, whether a process
//! outside the set's runs held them open for writing (`held_open`): a file the host could not open
//! or whose read lease the kernel refused for another reason than a writer, a directory it could not
//! list or search. Kept in the set's directory by their device and inode,
//! so that they are never applied and are said so when the set is described, whatever their
//! permissions are by then.
//!
//! Why: the question is asked by opening the file (a read lease on an open file), and the command
//! decides the permissions. A process given a descriptor of the file or of its directory (passed
//! from a review run) made one unreadable before that run ended, gave the mode back once the check
//! had passed, rewrote the file through a shared mapping after the set was shown (no ctime), and
//! the apply of the shown revision landed it (found by an attacker's review, rev39; a user other
//! than root, whom no mode stops). Only the runs of the set change its entries (bwrap's write guard
//! refuses a passed descriptor any change but a write to an open file), so an entry is the same
//! inode from one run's end to the next, where the record is made again.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::store::ChangeSet;
use crate::planted::{HostRisk, RiskKind};

/// The record, in the set's directory: one `device inode` a line; absent when there is none.
const RECORD: &str = "unasked";
const RECORD_TMP: &str = "unasked.tmp";

/// An entry's identity, as `entries::Entry::inode` holds it.
pub type Id = (u64, u64);

/// The identity of what `path` names (not followed).
pub fn id_of(path: &Path) -> std::io::Result<Id> {
    std::fs::symlink_metadata(path).map(|m| (m.dev(), m.ino()))
}

/// Replace the set's record with `ids` (under the set's lock).
pub fn record(set: &ChangeSet, ids: &[Id]) -> std::io::Result<()> {
    let path = set.dir.join(RECORD);
    if ids.is_empty() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    let text: String = ids.iter().map(|(dev, ino)| format!("{dev} {ino}\n")).collect();
    let tmp = set.dir.join(RECORD_TMP);
    std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &path))
}

/// The set's record (empty without one). A record that cannot be read is an error: what it names
/// must not land.
pub fn read(set: &ChangeSet) -> std::io::Result<HashSet<Id>> {
    let text = match std::fs::read_to_string(set.dir.join(RECORD)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
        r => r?,
    };
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "a line of the change set's unasked record is not 'device inode'");
    text.lines()
        .map(|l| {
            let (dev, ino) = l.split_once(' ').ok_or_else(bad)?;
            Ok((dev.parse().map_err(|_| bad())?, ino.parse().map_err(|_| bad())?))
        })
        .collect()
}

/// Why an entry the record names is not applied.
pub const WHY: &str = "when the change set's last run ended, this entry could not be opened (its permissions, as the command left them, or a directory's above it) or the kernel refused the read lease that asks (leases disabled by fs.leases-enable, or a filesystem without them), so whether a process outside the run held it open for writing (a descriptor passed on, which can rewrite it unseen through a mapping) could not be asked: it is never applied, and stays in the change set until a later run of the set can ask (it leaves it readable, the kernel grants the lease), or the set is discarded";

/// The risk of the entry at `rel` below `root` that the record names.
pub fn risk(root: &Path, rel: &Path) -> HostRisk {
    let path = if rel.as_os_str().is_empty() { root.to_path_buf() } else { root.join(rel) };
    HostRisk { path: super::changes::shown(&path), kind: RiskKind::ScanIncomplete, detail: WHY.into() }
}

/// The risk of the record itself when it cannot be read (`read`), at `root`.
pub fn unreadable(root: &Path, e: &std::io::Error) -> HostRisk {
    let detail = format!("which entries of the change set could not be asked whether a process held them open for writing could not be read ({}): nothing of the set is applied", sandspawn_helper::report::os_words(e));
    HostRisk { path: super::changes::shown(root), kind: RiskKind::ScanIncomplete, detail }
}
