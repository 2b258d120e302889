//! Closing the descriptors a step held, many at once: `close_range` over each run of consecutive
//! numbers among them, instead of a `close` each. The read-only carve-outs held two descriptors
//! each until attached (the entry and its copy): at 200 nested repositories 400 `close`s a run,
//! where the numbers, handed out lowest first, form one or a few runs. Only the descriptors given
//! are closed: a number between two of them that is not theirs splits the run there.

/// Close every descriptor of `fds` (each open and owned by the caller, who forgets it).
pub(crate) fn close_all(mut fds: Vec<i32>) {
    fds.sort_unstable();
    fds.dedup();
    let mut start = 0;
    while start < fds.len() {
        let mut end = start;
        while end + 1 < fds.len() && fds[end + 1] == fds[end] + 1 {
            end += 1;
        }
        close_run(&fds[start..=end]);
        start = end + 1;
    }
}

/// `run`: consecutive descriptor numbers. One open alone is closed by `close` (the same call count).
fn close_run(run: &[i32]) {
    let (first, last) = (run[0], run[run.len() - 1]);
    if first < 0 {
        return;
    }
    if first != last {
        // SAFETY: closing descriptors the caller owns and forgets; no pointer is passed.
        let rc = unsafe { libc::syscall(libc::SYS_close_range, first as libc::c_uint, last as libc::c_uint, 0 as libc::c_uint) };
        if rc == 0 {
            return;
        }
        // ENOSYS: a kernel before 5.9. Nothing was closed then: one at a time.
    }
    for &fd in run {
        // SAFETY: as above.
        unsafe { libc::close(fd) };
    }
}
