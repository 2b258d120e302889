//! The inode bounds of the sandbox's memory-backed filesystems (bwrap's `--tmpfs` at `/dev/shm`
//! and at a private `/tmp`), which the helper sets by remounting them (see its `tmpfs_inodes`):
//! bwrap bounds their bytes only, and an empty file takes kernel memory but no byte.

use std::path::Path;

use sandspawn_helper::protocol::TmpfsInodes;

use crate::policy::ResolvedPolicy;

/// One inode per 4 KiB page of the byte cap: as many files as the cap holds when each has any
/// content at all (tmpfs gives every non-empty file a page), so the bound refuses only empty files,
/// directories, symlinks and links beyond that. Each takes at most about 1.5 KiB of kernel memory
/// (inode, dentry, a 255-byte name), so a full inode table adds less than 40% to the byte cap.
pub const BYTES_PER_INODE: u64 = 4096;

/// The inode bound of a tmpfs of `bytes`: at least 1, since `nr_inodes=0` means none to tmpfs.
pub fn inodes(bytes: u64) -> u64 {
    (bytes / BYTES_PER_INODE).max(1)
}

/// The bound for the tmpfs of `bytes` mounted at `path`, unless nothing can reach it: a mount at
/// or above `path` that bwrap makes after it hides it whole (a `denyRead` mask, a writable root's
/// bind, the read-only bind of a cwd that is `path` itself), and the helper would remount that one.
pub fn bound(policy: &ResolvedPolicy, cwd: &Path, path: &str, bytes: u64) -> Option<TmpfsInodes> {
    let p = Path::new(path);
    let hidden = policy.deny_read.iter().any(|d| p.starts_with(d))
        || policy.writable_roots.iter().any(|r| p.starts_with(&r.root))
        || cwd == p;
    (!hidden).then(|| TmpfsInodes { path: path.to_string(), inodes: inodes(bytes) })
}
