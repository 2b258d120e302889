//! Disk is bounded by nothing per run: `limits.fileSize` bounds one file, and a run writes as many
//! files as the filesystems of its writable roots (and its tool caches' store) hold. Run as root, it
//! also takes the blocks ext4 keeps for root: the reserve is granted by the writer's fsuid, 0 inside
//! a sandbox of root as outside it, and no capability is asked. Found by an attacker's review
//! (xrun43): on a 128 MiB loop ext4, a default workspace-write run of root under `fileSize` 1 MiB
//! wrote 111 files and left 3 MiB free of 114 (an ordinary user's stopped at the reserve), nothing
//! said. No per-run quota exists without a filesystem of the run's own, so it is not prevented; the
//! result says so when such a filesystem ran out while the run lived (`sandboxDetails.notEnforced`),
//! from a `statvfs` call per filesystem before and after a run and each second while it lives
//! (`watch`; a few µs each).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A filesystem counts as run out when less than this share of it (in thousandths) is left to
/// ordinary users, and less than `LOW_BYTES`: a nearly full disk before the run is not the run's.
const LOW_PERMILLE: u64 = 10;
const LOW_BYTES: u64 = 64 << 20;

/// The room one filesystem the run may write had before the run.
#[derive(Clone)]
pub(super) struct Room {
    path: PathBuf,
    dev: u64,
    before: Space,
}

#[derive(Clone, Copy)]
pub(super) struct Space {
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

/// How often `watch` looks while the run lives.
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// The least room each filesystem of a run had at a look while it lived (`watch`), by index.
pub(super) type Lowest = std::sync::Arc<std::sync::Mutex<Vec<Option<Space>>>>;

/// Look at `rooms` every `WATCH_EVERY` until aborted, keeping each one's least room: a run that
/// filled a filesystem and freed it again before it ended (`rm`, `fallocate` then `truncate`)
/// left the host's writers `ENOSPC` meanwhile, and the look after the run saw room (found by an
/// attacker's review, rev44). A fill and free between two looks is still not seen.
pub(super) fn watch(rooms: &[Room]) -> (tokio::task::JoinHandle<()>, Lowest) {
    let lowest: Lowest = std::sync::Arc::new(std::sync::Mutex::new(vec![None; rooms.len()]));
    let (rooms, keep) = (rooms.to_vec(), lowest.clone());
    let task = tokio::spawn(async move {
        while !rooms.is_empty() {
            tokio::time::sleep(WATCH_EVERY).await;
            let rooms = rooms.clone();
            // Off the runtime's workers: a statvfs of a network filesystem may wait.
            let Ok(now) = tokio::task::spawn_blocking(move || rooms.iter().map(|r| Space::of(&r.path)).collect::<Vec<_>>()).await else { return };
            let mut low = keep.lock().unwrap();
            for (kept, seen) in low.iter_mut().zip(now) {
                *kept = least(*kept, seen);
            }
        }
    });
    (task, lowest)
}

fn least(a: Option<Space>, b: Option<Space>) -> Option<Space> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.avail < a.avail { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// What the result says of each filesystem of `rooms` that had room before the run and ran out
/// during it (by the run or by another process: nothing tells them apart): at the end, or at its
/// lowest while the run lived (`lowest`, from `watch`).
pub(super) fn ran_out(rooms: &[Room], lowest: &Lowest) -> Vec<String> {
    let low = lowest.lock().unwrap().clone();
    rooms.iter().enumerate().filter_map(|(i, r)| least(Space::of(&r.path), low.get(i).copied().flatten()).and_then(|seen| said(r, seen))).collect()
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
        "disk: the filesystem of {} had {} MiB available before the run and {} MiB at its lowest{root}: nothing bounds what a run \
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
        assert!(gone.starts_with("disk: the filesystem of /ws had 100 MiB available before the run and 0 MiB at its lowest:"), "{gone}");
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
        let lowest: Lowest = std::sync::Arc::new(std::sync::Mutex::new(vec![None]));
        assert!(ran_out(&rooms, &lowest).is_empty());
        // rev44: the lowest seen while the run lived counts, though there is room after.
        *lowest.lock().unwrap() = vec![Some(Space { size: 1 << 40, free: 0, avail: 0 })];
        assert_eq!(ran_out(&rooms, &lowest).len(), usize::from(!rooms[0].before.low()));
    }
}
