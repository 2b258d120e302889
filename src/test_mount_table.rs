//! Test-only: the host's mount table, shared by every test of this process. A change of it makes
//! every inotify watcher's listings `Unknown` (rightly: a mount can hide the inode a watch is on,
//! see `planted::watch`), so a test that counts what a quiet watcher vouches for failed when a
//! test beside it mounted something on the host (CI's `a_mount_over_a_git...`, under load). The
//! test that changes the table holds this lock for writing; those that need it still hold it for
//! reading.

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static TABLE: RwLock<()> = RwLock::new(());

/// Held by a test while it needs the host's mount table unchanged.
pub fn unchanged() -> RwLockReadGuard<'static, ()> {
    // A test that panicked holding it changed nothing by that: the lock guards no data.
    TABLE.read().unwrap_or_else(|e| e.into_inner())
}

/// Held by a test while it mounts or unmounts on the host.
pub fn changing() -> RwLockWriteGuard<'static, ()> {
    TABLE.write().unwrap_or_else(|e| e.into_inner())
}
