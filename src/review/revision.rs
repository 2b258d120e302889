//! A change set's `revision`: a token naming what the set holds, so that an apply lands only what
//! was shown (found by an attacker's review, land27: a set shown, then continued by another run
//! that added `evil.sh`, was applied whole, `evil.sh` with it).
//!
//! It changes whenever the set's content can have changed: it is the count of runs that have
//! written the set (`store::Lock::writes`: every continuing run, even one that wrote nothing,
//! or one that rewrote a file within the clock tick of the shown state) and a SHA-256 over the set's
//! metadata and every entry of its upper directories as the walk reads them: name, type, mode,
//! size, symlink target, mtime, **ctime**, device and inode, link count, and what the walk could not
//! read. A command can put back a file's size and mtime, but not its ctime, which the kernel sets on
//! every change. Computed in the same walk that describes a set (`summary`), and again by
//! `applyChangeSet` under the set's lock (`of`), which then holds the set for the whole apply.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use sha2::{Digest as _, Sha256};

use super::entries::{self, Entry, Event, Kind};
use super::store::{ChangeSet, Lock};
use crate::error::{ErrorCode, Result, SandboxError};

/// The revision being computed over one walk of each root.
pub struct Revision {
    writes: u64,
    hash: Sha256,
}

impl Revision {
    /// Begun for `set`, written by `writes` runs: its metadata (how it is judged) is part of it.
    pub fn new(set: &ChangeSet, writes: u64) -> Revision {
        let mut hash = Sha256::new();
        hash.update(serde_json::to_vec(&set.meta).unwrap_or_default());
        Revision { writes, hash }
    }

    /// The `i`th root's upper directory itself (its mode is a change of the root; its ctime moves
    /// with every name made or removed at its top).
    pub fn root(&mut self, i: usize, upper: &Path) {
        self.field(b"root", &(i as u64).to_le_bytes());
        match std::fs::symlink_metadata(upper) {
            Ok(m) => {
                for n in [m.mode() as i64, m.ctime(), m.ctime_nsec(), m.mtime(), m.mtime_nsec(), m.ino() as i64, m.dev() as i64] {
                    self.hash.update(n.to_le_bytes());
                }
            }
            Err(e) => self.field(b"unreadable", e.to_string().as_bytes()),
        }
    }

    /// One event of the walk of that root.
    pub fn event(&mut self, ev: &Event) {
        match ev {
            Event::Enter(e, _) => self.entry(b"enter", e),
            Event::Leaf(e) => self.entry(b"leaf", e),
            Event::Leave(e) => self.field(b"leave", e.rel.as_os_str().as_bytes()),
            Event::Beyond(rel, unread) => {
                self.field(b"beyond", rel.as_os_str().as_bytes());
                self.field(b"why", unread.map(|e| e.to_string()).unwrap_or_default().as_bytes());
            }
        }
    }

    fn entry(&mut self, tag: &[u8], e: &Entry) {
        self.field(tag, e.rel.as_os_str().as_bytes());
        let kind: Vec<u8> = match &e.kind {
            Kind::Whiteout => b"whiteout".to_vec(),
            Kind::Dir { opaque } => if *opaque { b"opaque".to_vec() } else { b"dir".to_vec() },
            Kind::File => b"file".to_vec(),
            Kind::Symlink(t) => [b"symlink:".as_slice(), t.as_os_str().as_bytes()].concat(),
            Kind::Special(what) => what.as_bytes().to_vec(),
        };
        self.field(b"kind", &kind);
        for n in [e.mode as u64, e.size, e.mtime.0 as u64, e.mtime.1 as u64, e.ctime.0 as u64, e.ctime.1 as u64, e.inode.0, e.inode.1, e.nlink] {
            self.hash.update(n.to_le_bytes());
        }
    }

    /// A tagged, length-prefixed field: no two sequences of fields hash alike.
    fn field(&mut self, tag: &[u8], bytes: &[u8]) {
        self.hash.update((tag.len() as u64).to_le_bytes());
        self.hash.update(tag);
        self.hash.update((bytes.len() as u64).to_le_bytes());
        self.hash.update(bytes);
    }

    /// The token: `<runs>-<hex>`.
    pub fn finish(self) -> String {
        let digest = self.hash.finalize();
        let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
        format!("{}-{hex}", self.writes)
    }
}

/// The set's revision now, by a walk of its own (`set` held by `lock`).
pub fn of(set: &ChangeSet, lock: &Lock) -> String {
    let mut rev = Revision::new(set, lock.writes());
    for (i, root) in set.meta.roots.iter().enumerate() {
        let upper = set.upper(i);
        rev.root(i, &upper);
        let _ = entries::walk::<std::io::Error>(&upper, root, |ev| {
            rev.event(&ev);
            Ok(true)
        });
    }
    rev.finish()
}

/// Refuse to go on with `set` unless it is still the revision `shown` (held by `lock`, so no run
/// continues it from here on).
pub fn check(set: &ChangeSet, lock: &Lock, shown: &str) -> Result<()> {
    let now = of(set, lock);
    if now == shown {
        return Ok(());
    }
    Err(SandboxError::new(
        ErrorCode::ChangeSetChanged,
        format!(
            "change set {} changed since revision {shown} was shown (it is {now} now: a run continued it, or its files changed); nothing was applied. Show it again (showChangeSet, sandspawn review show), review what it holds now, and apply that revision",
            set.meta.id
        ),
    ))
}
