//! A read-only file with other names, and whether the run wrote it (`hook_risks`, `home_hard`,
//! `config_hard`): kept apart so that `repo` can make one without importing what imports it.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// A file the plan keeps read-only that is a hard link (a hook, a home file, a repository's config),
/// as it was when the run was planned: a write through any of its names changes its ctime, which no
/// command can set back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HardLinked {
    pub path: PathBuf,
    pub id: (u64, u64),
    pub changed_at: (i64, i64),
    pub names: u64,
}

impl HardLinked {
    /// `path` as `m` (its `stat`) says it is now.
    pub fn of(path: &std::path::Path, m: &std::fs::Metadata) -> HardLinked {
        HardLinked { path: path.to_path_buf(), id: (m.dev(), m.ino()), changed_at: (m.ctime(), m.ctime_nsec()), names: m.nlink() }
    }

    /// Whether it is the same file still, written or changed since (its ctime moved). `follow`:
    /// through a symlink at its path (`stat`), else `lstat`.
    pub fn written(&self, follow: bool) -> bool {
        let m = if follow { self.path.metadata() } else { self.path.symlink_metadata() };
        m.is_ok_and(|m| (m.dev(), m.ino()) == self.id && (m.ctime(), m.ctime_nsec()) != self.changed_at)
    }
}
