//! Disk is bounded by nothing per run: `limits.fileSize` bounds one file, and a run writes as many
//! files as the filesystems of its writable roots (and its tool caches' store) hold. Run as root, it
//! also takes the blocks ext4 keeps for root: the reserve is granted by the writer's fsuid, 0 inside
//! a sandbox of root as outside it, and no capability is asked. Found by an attacker's review
//! (xrun43): on a 128 MiB loop ext4, a default workspace-write run of root under `fileSize` 1 MiB
//! wrote 111 files and left 3 MiB free of 114 (an ordinary user's stopped at the reserve), nothing
//! said. No per-run quota exists without a filesystem of the run's own, so it is not prevented; the
//! result says so when such a filesystem ran out while the run lived (`sandboxDetails.notEnforced`),
//! from two `statvfs` calls per filesystem a run (a few µs).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A filesystem counts as run out when less than this share of it (in thousandths) is left to
/// ordinary users, and less than `LOW_BYTES`: a nearly full disk before the run is not the run's.
const LOW_PERMILLE: u64 = 10;
const LOW_BYTES: u64 = 64 << 20;

/// The room one filesystem the run may write had before the run.
pub(super) struct Room {
    path: PathBuf,
    dev: u64,
    before: Space,
}

#[derive(Clone, Copy)]
struct Space {
    size: u64,
    /// Every free byte, root's reserve included.
    free: u64,
    /// The free bytes an ordinary user may take.
    avail: u64,
}

impl Space {
    fn of(path: &Path) -> Option<Space> {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
        // SAFETY: an all-zero `statvfs` is a valid value for the call to overwrite.
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: a NUL-terminated path and a writable `statvfs`.
        if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
            return None;
        }
        #[allow(clippy::unnecessary_cast)] // the fields' types differ between Linux and macOS
        let (unit, blocks, free, avail) = (s.f_frsize as u64, s.f_blocks as u64, s.f_bfree as u64, s.f_bavail as u64);
        Some(Space { size: blocks.saturating_mul(unit), free: free.saturating_mul(unit), avail: avail.saturating_mul(unit) })
    }

    fn low(&self) -> bool {
        self.avail < LOW_BYTES && self.avail < self.size / 1000 * LOW_PERMILLE
    }
}

/// The room of each filesystem among `paths` (the first path seen names it), as it is now.
pub(super) fn before<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Vec<Room> {
    let mut rooms: Vec<Room> = Vec::new();
    for path in paths {
        let Ok(dev) = std::fs::metadata(path).map(|m| m.dev()) else { continue };
        if rooms.iter().any(|r| r.dev == dev) {
            continue;
        }
        if let Some(before) = Space::of(path) {
            rooms.push(Room { path: path.to_path_buf(), dev, before });
        }
    }
    rooms
}

/// What the result says of each filesystem of `rooms` that had room before the run and ran out
/// during it (by the run or by another process: nothing tells them apart).
pub(super) fn ran_out(rooms: &[Room]) -> Vec<String> {
    rooms.iter().filter_map(|r| Space::of(&r.path).and_then(|after| said(r, after))).collect()
}

fn said(r: &Room, after: Space) -> Option<String> {
    if r.before.low() || !after.low() {
        return None;
    }
    let mib = |b: u64| b >> 20;
    let reserve = r.before.free.saturating_sub(r.before.avail);
    let taken = reserve.saturating_sub(after.free);
    let root = if reserve > 0 && taken > reserve / 4 {
        format!(", and {} MiB of the {} MiB it kept for root were taken (a run of root takes them as root does)", mib(taken), mib(reserve))
    } else {
        String::new()
    };
    Some(format!(
        "disk: the filesystem of {} had {} MiB available before the run and {} MiB after{root}: nothing bounds what a run \
         writes (limits.fileSize bounds one file); see README Limits, 'Disk is not bounded per run'",
        r.path.display(),
        mib(r.before.avail),
        mib(after.avail)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1 << 20;

    fn room(size: u64, free: u64, avail: u64) -> Room {
        Room { path: PathBuf::from("/ws"), dev: 1, before: Space { size, free, avail } }
    }

    #[test]
    fn a_filesystem_that_ran_out_is_said_and_a_full_one_before_is_not() {
        let r = room(1 << 40, 600 * M, 100 * M);
        let gone = said(&r, Space { size: 1 << 40, free: 500 * M, avail: 0 }).unwrap();
        assert!(gone.starts_with("disk: the filesystem of /ws had 100 MiB available before the run and 0 MiB after:"), "{gone}");
        let root = said(&r, Space { size: 1 << 40, free: 10 * M, avail: 0 }).unwrap();
        assert!(root.contains("490 MiB of the 500 MiB it kept for root were taken"), "{root}");
        assert_eq!(said(&r, Space { size: 1 << 40, free: 550 * M, avail: 65 * M }), None, "room left");
        assert_eq!(said(&room(1 << 40, 10 * M, M), Space { size: 1 << 40, free: 0, avail: 0 }), None, "full before");
        // A small filesystem runs out below a hundredth of its size.
        assert!(said(&room(64 * M, 50 * M, 45 * M), Space { size: 64 * M, free: 4 * M, avail: 200 << 10 }).is_some());
    }

    #[test]
    fn one_room_per_filesystem() {
        let t = tempfile::tempdir().unwrap();
        let rooms = before([t.path(), t.path(), Path::new("/nonexistent-xrun43")]);
        assert_eq!(rooms.len(), 1);
        assert!(ran_out(&rooms).is_empty());
    }
}
