//! Whether the first command of a new change set may start at once, or must first wait for the
//! kernel's coarse clock to reach the set's beginning (the helper's `--exec-after`, see
//! `store::Meta::begin_ns`). That wait cost 4 to 8 ms here whenever the sandbox was set up within
//! the coarse clock's lag (an empty workspace: most runs).
//!
//! Linux 6.13's multigrain timestamps (ext4, xfs, btrfs, tmpfs) stamp a change from a *floor*:
//! the latest fine-grained timestamp the kernel handed out, or the coarse clock if later. A
//! fine-grained one is handed out for a change to a file whose ctime was read since its last
//! change, within the same tick. So the set's own `last-used` file is read, changed and read again:
//! once its ctime is at or after the beginning, every later change on a multigrain filesystem is
//! stamped at or after it too, and nothing the host changes from then on can pass as older.
//! Measured on 6.18/ext4 (a file created without a stat, appended to right after the beginning):
//! stamped before the beginning 300 times in 300 without the floor, 0 in 300 with it.
//!
//! Where this cannot be shown the command waits as before: an older kernel or a filesystem without
//! multigrain timestamps (the probe's ctime stays behind), or a reviewed root on another filesystem
//! than the set's directory (the probe says nothing about that filesystem).

use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Whether every change made from now on under `roots` is stamped at or after `begin_ns`.
pub fn floor_reached(probe: &Path, begin_ns: i64, roots: &[PathBuf]) -> bool {
    let Ok(file) = std::fs::OpenOptions::new().write(true).open(probe) else { return false };
    // Reading the ctime (statx) is what makes the next change fine-grained.
    let Ok(mut m) = file.metadata() else { return false };
    if !roots.iter().all(|r| std::fs::metadata(r).is_ok_and(|rm| rm.dev() == m.dev())) {
        return false;
    }
    let reached = |m: &std::fs::Metadata| super::changed_at::ctime_ns(m) >= begin_ns;
    // Two changes at most: one in the tick after the read is stamped coarse; the next is not.
    for _ in 0..2 {
        if reached(&m) {
            return true;
        }
        // SAFETY: our own open descriptor; null times mean "now".
        if unsafe { libc::futimens(file.as_raw_fd(), std::ptr::null()) } != 0 {
            return false;
        }
        match file.metadata() {
            Ok(next) => m = next,
            Err(_) => return false,
        }
    }
    reached(&m)
}

/// Longer than any tick the kernel delays; a clock this far behind was set back meanwhile.
const MAX_SEAL_WAIT_NS: i64 = 2_000_000_000;

fn coarse_now_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // Only Linux stamps from a coarse clock (and only Linux has review mode).
    #[cfg(target_os = "linux")]
    let clock = libc::CLOCK_REALTIME_COARSE;
    #[cfg(not(target_os = "linux"))]
    let clock = libc::CLOCK_REALTIME;
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

/// A moment such that every change from now on is stamped at or after it: the fine clock's now,
/// once the kernel's coarse clock (from which ctimes are stamped, or from a later floor) has
/// reached it, a tick at most. What an apply reads of the set must be older: a change at or after
/// it was made while the apply held the set (see `apply`).
pub fn sealed_now() -> i64 {
    let sealed = super::store::realtime_now_ns();
    let began = coarse_now_ns();
    while coarse_now_ns() < sealed && coarse_now_ns() - began < MAX_SEAL_WAIT_NS && sealed - began < MAX_SEAL_WAIT_NS {
        let step = libc::timespec { tv_sec: 0, tv_nsec: 250_000 };
        // SAFETY: a valid timespec; an interrupted sleep just checks the clock again.
        unsafe { libc::nanosleep(&step, std::ptr::null_mut()) };
    }
    sealed
}

// Linux only: review mode is (and multigrain timestamps are Linux's).
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Whether this kernel and the temporary directory's filesystem are known to stamp from a
    /// floor (Linux 6.13 or newer on ext4): there the floor must be reached.
    fn multigrain_expected(dir: &Path) -> bool {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let mut v = release.split(['.', '-']).map(|x| x.parse::<u32>().unwrap_or(0));
        let (major, minor) = (v.next().unwrap_or(0), v.next().unwrap_or(0));
        let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a zeroed statfs is valid; a valid C string.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        let ext4 = unsafe { libc::statfs(c.as_ptr(), &mut st) } == 0 && st.f_type == libc::EXT4_SUPER_MAGIC;
        (major, minor) >= (6, 13) && ext4
    }

    #[test]
    fn once_reached_no_later_change_is_stamped_before_the_beginning() {
        let dir = tempfile::tempdir().unwrap();
        let probe = dir.path().join("last-used");
        let mut reached = 0;
        for i in 0..100 {
            // A host file changed before the beginning, its ctime never read since (no stat: no
            // fine-grained stamp for it of its own accord).
            let edited = dir.path().join(format!("f{i}"));
            std::fs::write(&edited, b"x").unwrap();
            std::fs::write(&probe, b"").unwrap();
            let begin = super::super::store::realtime_now_ns();
            if !floor_reached(&probe, begin, &[dir.path().to_path_buf()]) {
                continue;
            }
            reached += 1;
            let mut f = std::fs::OpenOptions::new().append(true).open(&edited).unwrap();
            std::io::Write::write_all(&mut f, b"y").unwrap();
            let m = std::fs::metadata(&edited).unwrap();
            assert!(super::super::changed_at::ctime_ns(&m) >= begin, "round {i}: a change after the beginning passed as older");
        }
        if multigrain_expected(dir.path()) {
            assert_eq!(reached, 100, "Linux 6.13+ on ext4 stamps from a floor");
        }
    }

    #[test]
    fn a_root_on_another_filesystem_is_not_vouched_for() {
        let dir = tempfile::tempdir().unwrap();
        let probe = dir.path().join("last-used");
        std::fs::write(&probe, b"").unwrap();
        assert!(!floor_reached(&probe, 0, &[PathBuf::from("/proc")]));
        assert!(floor_reached(&probe, 0, &[dir.path().to_path_buf()]), "a beginning long past is reached at once");
        assert!(!floor_reached(&dir.path().join("missing"), 0, &[]));
    }
}
