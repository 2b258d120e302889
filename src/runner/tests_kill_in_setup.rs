//! A sandbox killed while bwrap sets it up (`Child::kill_sandbox_in_setup`, the kill of every run cut
//! during the overlap's walk and of a forced kill before bwrap's status is read) leaves no process.
//!
//! bwrap's sandbox init (its child, PID 1 of the sandbox) leaves bwrap's process group at
//! `--new-session`'s setsid, and only later, in `do_init` after its fork of the command, arms
//! `--die-with-parent` (PR_SET_PDEATHSIG, with no getppid check: a parent already gone is never
//! noticed). An init between the two is out of reach of the group kill, and if bwrap dies before
//! the host has read bwrap's children, it is orphaned onto the host's reaper and lives on, its
//! command with it (issue #36's `.ci/run`: a `sleep` left 3 s after 500 runs, its parent not a
//! descendant of the host). The stand-in here is that init: bwrap's child in a session of its own,
//! no parent-death signal; the hook makes bwrap's death win the race, as a loaded host can.

use std::ffi::CString;
use std::path::Path;
use std::time::{Duration, Instant};

use super::child::{spawn_owned, TreeKind};
use super::setup_kill::group_killed;
use super::spawn::{spawn, ChildFd, SpawnSpec};

/// Field `n` (1-based, as proc(5) counts) of `/proc/PID/stat`, from field 3 on.
fn stat_field(pid: i32, n: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.split_whitespace().nth(n - 3).map(str::to_owned)
}

fn children(pid: i32) -> Vec<i32> {
    let list = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    list.split_whitespace().filter_map(|c| c.parse().ok()).collect()
}

fn alive(pid: i32) -> bool {
    stat_field(pid, 3).is_some_and(|state| state != "Z" && state != "X")
}

fn until(what: &str, bound: Duration, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + bound;
    while !done() {
        assert!(Instant::now() < end, "{what} within {bound:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn an_init_out_of_bwrap_s_group_dies_with_a_sandbox_killed_in_setup_even_when_bwrap_dies_first() {
    let argv: Vec<CString> = ["sh", "-c", "setsid sleep 1000 & wait"].iter().map(|a| CString::new(*a).unwrap()).collect();
    let spawn_closure = Box::new(move || {
        let fds = vec![(0, ChildFd::DevNull), (1, ChildFd::DevNull), (2, ChildFd::DevNull)];
        spawn(&SpawnSpec { program: Path::new("/bin/sh"), argv: &argv, envp: &[], cwd: Path::new("/"), fds })
    });
    let (started, _exited) = spawn_owned(spawn_closure, TreeKind::PidNamespace, vec![]).unwrap();
    let tree = started.blocking_recv().unwrap().unwrap();
    let bwrap = tree.0.pid.as_raw();
    // The init's place: bwrap's child, past its setsid (its own session), before its prctl.
    let mut init = 0;
    until("the stand-in's init in a session of its own", Duration::from_secs(10), || {
        init = children(bwrap).into_iter().find(|&c| stat_field(c, 6) == Some(c.to_string())).unwrap_or(0);
        init != 0
    });
    // bwrap dies of the group kill before the host looks at its children.
    group_killed::set(|bwrap| {
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        unsafe { libc::waitid(libc::P_PID, bwrap.as_raw() as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
    });
    drop(tree);
    group_killed::clear();
    let end = Instant::now() + Duration::from_secs(3);
    while alive(init) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    let survived = alive(init);
    if survived {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(init), nix::sys::signal::Signal::SIGKILL);
    }
    assert!(!survived, "the sandbox's init (pid {init}, its parent now {:?}) outlived the kill by 3 s", stat_field(init, 4));
}

/// The pid a pidfd refers to (its `Pid:` line in fdinfo).
fn pidfd_pid(fd: &std::os::fd::OwnedFd) -> Option<i32> {
    use std::os::fd::AsRawFd;
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).ok()?;
    info.lines().find_map(|l| l.strip_prefix("Pid:")).and_then(|p| p.trim().parse().ok())
}

/// A run cut during the overlap's walk is killed in setup before bwrap's status is read, so its
/// init was never pinned from bwrap's report; a host that adopts orphans (Node as PID 1 of a
/// container) kept it as a zombie (`reaping.test.js`: 11 zombie `bwrap`s after 300 mixed runs).
/// The kill now hands back pidfds on bwrap's children, taken while bwrap is stopped.
#[test]
fn a_sandbox_killed_in_setup_hands_back_its_init_for_reaping() {
    let mut bwrap = std::process::Command::new("/bin/sh").args(["-c", "sleep 1000 & wait"]).spawn().unwrap();
    let pid = bwrap.id() as i32;
    let mut init = Vec::new();
    until("the stand-in's init", Duration::from_secs(10), || {
        init = children(pid);
        !init.is_empty()
    });
    let pinned = super::setup_kill::end_sandbox_in_setup(nix::unistd::Pid::from_raw(pid), None);
    let _ = bwrap.wait();
    assert_eq!(pinned.iter().map(pidfd_pid).collect::<Vec<_>>(), init.iter().map(|&c| Some(c)).collect::<Vec<_>>());
}
