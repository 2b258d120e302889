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

/// For a test that mounts: whether this process is the one to mount in, a child of the test binary
/// running that test alone in a mount namespace of its own (`unshare --mount`, private
/// propagation). Otherwise the child is run here and must pass, and the caller returns. The lock
/// above serializes this process's tests only: other processes on the host (another cargo test of
/// this crate, a CI pass, another agent's) saw every such mount in the host's table, and each one
/// made their watchers' listings `Unknown` (a test asserting a vouched-for repository failed under
/// load: `armed`'s `another_repository_at_the_same_path_is_read`). `name`: the test's whole path.
pub fn in_own_mount_namespace(name: &str) -> bool {
    const INNER: &str = "SANDSPAWN_TEST_OWN_MOUNT_NAMESPACE";
    if std::env::var_os(INNER).is_some() {
        return true;
    }
    let out = std::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "--"])
        .arg(std::env::current_exe().expect("the test binary"))
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(INNER, "1")
        .output()
        .expect("unshare(1) runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("1 passed"), "in a mount namespace of its own:\n{text}");
    false
}
