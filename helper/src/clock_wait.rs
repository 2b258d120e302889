//! `--exec-after=NS`: the command starts only once the kernel's coarse realtime clock reads NS.
//!
//! A reviewed workspace's change set begins at NS, read from the fine realtime clock, and applying
//! it calls a host path a conflict when its ctime is at or after NS (the host changed it while the
//! set was open). The kernel stamps ctimes from its coarse clock (or, once a ctime was read, from
//! the fine one), and the coarse clock lags the fine one by a tick or more (5-7 ms were seen on a
//! tickless VM): a host edit made just after NS may be stamped before it and pass as older.
//! Once the coarse clock has reached NS every later change is stamped at or after NS, and an edit
//! stamped before it was made before the command could read anything: the command sees it
//! through the overlay's lower layer, so nothing it did was based on what the edit replaced.

use sandspawn_helper::report::{Failure, Stage};

/// Longer than any tick the kernel delays; a clock this far behind NS was set back meanwhile.
const MAX_WAIT_NS: i64 = 2_000_000_000;

fn coarse_now_ns() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

/// Sleep in small steps until the coarse clock reads `ns` (usually it already does: bwrap's setup
/// takes longer than a tick). A clock set back by more than `MAX_WAIT_NS` fails the run: ctimes
/// after such a step say nothing about the set's beginning, and waiting for the clock to catch up
/// could take hours.
pub fn wait(ns: i64) -> Result<(), Failure> {
    let now = coarse_now_ns();
    if ns - now > MAX_WAIT_NS {
        return Err(Failure {
            stage: Stage::Setup,
            errno: 0,
            message: format!("the realtime clock went back by {} ms since the change set began; run again", (ns - now) / 1_000_000),
        });
    }
    while coarse_now_ns() < ns {
        let step = libc::timespec { tv_sec: 0, tv_nsec: 250_000 };
        // SAFETY: a valid timespec; an interrupted sleep just checks the clock again.
        unsafe { libc::nanosleep(&step, std::ptr::null_mut()) };
    }
    Ok(())
}
