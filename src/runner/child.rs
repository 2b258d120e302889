//! The spawned process and its tree: a dedicated owner thread spawns it and waits for it, and the
//! tree can be signalled from any thread until the owner reaps it.
//!
//! Why a dedicated thread per child: bwrap's `--die-with-parent` uses PR_SET_PDEATHSIG, which fires
//! when the *thread* that spawned bwrap exits, so the spawning thread must live exactly as long as
//! the child. That same thread then blocks in `waitid` for this one pid: no SIGCHLD handler is
//! needed (libuv resets SIGCHLD to SIG_DFL behind everybody's back) and no libuv pool thread is
//! parked for minutes.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use std::thread;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::sync::oneshot;

use crate::limits::ResourceUsage;



/// How the spawned process ended, as `waitid` reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Exited(i32),
    Signaled(i32),
}

/// How the tree below the spawned process is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeKind {
    /// The spawned process leads its own session and process group (no sandbox, Seatbelt).
    ProcessGroup,
    /// The spawned process is bwrap; the command and its descendants live in a PID namespace.
    PidNamespace,
    /// The spawned process is the Landlock mode's supervisor (the helper, a subreaper): it
    /// forwards signals to the tree, and kills all of it when its control pipe is closed.
    Supervisor,
}

#[derive(Debug)]
struct State {
    reaped: bool,
    /// The PID namespace of the sandbox, once bwrap has reported it.
    pid_ns: Option<u64>,
    /// The sandbox's init (bwrap's child, PID 1 inside) as a host pid, once reported.
    init_pid: Option<i32>,
    /// What the process and the descendants it waited for used, once reaped.
    usage: Option<ResourceUsage>,
}

/// A handle on the spawned process that stays valid (never signals a recycled pid) because the
/// owner thread only reaps the zombie while holding the same lock the signallers take.
#[derive(Debug)]
pub struct Child {
    pub pid: Pid,
    pub kind: TreeKind,
    /// The executables that run before the command (bwrap and the helper under a sandbox), to
    /// tell them from the command.
    setup_programs: Vec<std::path::PathBuf>,
    state: Mutex<State>,
    /// Processes of the run that are orphaned onto the host, pinned by pidfd for reaping (only
    /// when the host adopts orphans: see `reap`).
    orphans: Mutex<Vec<OwnedFd>>,
    /// The supervisor's control pipe (write end): closing it kills the whole tree.
    control: Mutex<Option<OwnedFd>>,
}

impl Child {
    pub fn set_pid_namespace(&self, inode: u64) {
        let mut state = self.state.lock().unwrap();
        state.pid_ns = Some(inode);
        self.pin_init(&state);
    }

    /// `wait4`'s account of the process, available once it is reaped (zero before).
    pub fn usage(&self) -> ResourceUsage {
        self.state.lock().unwrap().usage.unwrap_or_default()
    }

    pub fn set_init_pid(&self, pid: i32) {
        let mut state = self.state.lock().unwrap();
        state.init_pid = Some(pid);
        self.pin_init(&state);
    }

    /// Once both the sandbox's init and its namespace are known: pin the init, which bwrap's outer
    /// process orphans when it exits.
    fn pin_init(&self, state: &State) {
        if let (Some(pid), Some(ns)) = (state.init_pid, state.pid_ns) {
            if super::reap::host_adopts_orphans() {
                self.orphans.lock().unwrap().extend(super::reap::pin_sandbox_init(pid, ns));
            }
        }
    }

    /// Keep the supervisor's control pipe (see `TreeKind::Supervisor`).
    pub fn hold_control(&self, fd: OwnedFd) {
        *self.control.lock().unwrap() = Some(fd);
    }

    /// The pinned orphans, for `reap::reap_orphans` once the run has ended.
    pub fn take_orphans(&self) -> Vec<OwnedFd> {
        std::mem::take(&mut *self.orphans.lock().unwrap())
    }

    /// Under bwrap: has the command been executed yet? (Always true for a process group.)
    pub fn command_has_started(&self) -> bool {
        self.kind == TreeKind::ProcessGroup || self.command_started(&self.state.lock().unwrap())
    }

    /// Under bwrap: has the command been executed yet? Before that the sandbox is still being set
    /// up and the only processes are bwrap's own.
    ///
    /// A process counts as the command when its program is not one of setup's, or when it carries
    /// more seccomp filters than this process: the helper installs the command's filter as its
    /// last step before it executes the command, and no process sheds a filter, so a command that
    /// executes the helper's own binary again (visible in the sandbox) is still told apart; by
    /// program alone, it looked like setup and kill() held its signal back.
    fn command_started(&self, state: &State) -> bool {
        let Some(init) = state.init_pid else { return false };
        let Ok(children) = crate::whole_file::read_to_string(format!("/proc/{init}/task/{init}/children"), crate::whole_file::PROC_FILE) else { return false };
        children.split_whitespace().any(|c| {
            std::fs::read_link(format!("/proc/{c}/exe")).is_ok_and(|exe| !self.setup_programs.contains(&exe))
                || seccomp_filters(c).zip(*OWN_FILTERS).is_some_and(|(theirs, ours)| theirs > ours)
        })
    }

    /// End a sandbox that has not started the command: SIGKILL bwrap's children (the sandbox's
    /// init, whose death takes the namespace down) and then bwrap, in the order `setup_kill` gives.
    /// Signalling only bwrap here would strand its child forever: it waits for bwrap's go-ahead,
    /// and --die-with-parent may not be armed yet.
    fn kill_sandbox_in_setup(&self, state: &State) {
        let pinned = super::setup_kill::end_sandbox_in_setup(self.pid, state.init_pid);
        if super::reap::host_adopts_orphans() {
            self.orphans.lock().unwrap().extend(pinned);
        }
    }

    /// Whether the spawned process has exited (not reaped yet: the owner thread does that).
    pub fn has_exited(&self) -> bool {
        let state = self.state.lock().unwrap();
        if state.reaped {
            return true;
        }
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe {
            libc::waitid(libc::P_PID, self.pid.as_raw() as libc::id_t, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT)
        };
        rc == 0 && unsafe { info.si_pid() } != 0
    }

    /// Send `sig` to every process of the tree. Under bwrap that is every process in the sandbox's
    /// PID namespace (the command receives the signal itself, so a `trap ... TERM` runs; signalling
    /// bwrap instead would SIGKILL the sandbox through --die-with-parent without warning).
    /// Returns false, sending nothing, while bwrap is still setting the sandbox up: the caller keeps
    /// the signal pending and retries, so the command gets it as soon as it runs.
    pub fn signal_tree(&self, sig: Signal) -> bool {
        let state = self.state.lock().unwrap();
        if state.reaped {
            return true;
        }
        match (self.kind, state.pid_ns) {
            (TreeKind::ProcessGroup, _) => {
                let _ = killpg(self.pid, sig);
                true
            }
            (TreeKind::PidNamespace, Some(ns)) if self.command_started(&state) => {
                crate::pidns::signal_namespace(ns, sig);
                true
            }
            (TreeKind::PidNamespace, _) => false,
            (TreeKind::Supervisor, _) => {
                let _ = nix::sys::signal::kill(self.pid, sig);
                true
            }
        }
    }

    /// SIGKILL the whole tree, whatever state it is in.
    pub fn force_kill(&self) {
        let state = self.state.lock().unwrap();
        if state.reaped {
            return;
        }
        match (self.kind, state.pid_ns) {
            (TreeKind::ProcessGroup, _) => {
                let _ = killpg(self.pid, Signal::SIGKILL);
            }
            (TreeKind::PidNamespace, Some(ns)) if self.command_started(&state) => {
                crate::pidns::signal_namespace(ns, Signal::SIGKILL);
                // bwrap dying takes the namespace down with it (--die-with-parent on its init).
                let _ = nix::sys::signal::kill(self.pid, Signal::SIGKILL);
            }
            (TreeKind::PidNamespace, _) => self.kill_sandbox_in_setup(&state),
            // Not SIGKILL to the supervisor: it would die before killing the tree. EOF on its
            // control pipe makes it SIGKILL every descendant, then exit.
            (TreeKind::Supervisor, _) => drop(self.control.lock().unwrap().take()),
        }
    }

    /// The Landlock supervisor, still there long after the force kill closed its control pipe
    /// (`until_exit::SUPERVISOR_EXIT_BOUND`): SIGKILL it, so that the run settles. It is our child
    /// and not reaped yet, so its pid is its own. What is left of its tree is re-parented past it
    /// and may outlive the run. Returns whether it was killed here.
    pub fn kill_stuck_supervisor(&self) -> bool {
        let state = self.state.lock().unwrap();
        if state.reaped || self.kind != TreeKind::Supervisor {
            return false;
        }
        nix::sys::signal::kill(self.pid, Signal::SIGKILL).is_ok()
    }
}

/// A run's hold on its tree: dropped while the tree lives, it SIGKILLs the tree, sandbox setup
/// included; once the tree is reaped it does nothing. The driver holds it for the run's life, and
/// it travels from the owner thread inside the channel, so that a driver dropped at any point (a
/// `worker_threads` worker terminated: napi-rs drops its async runtime's tasks) takes the tree
/// with it, rather than leave it running with no timeout for the host's life, or a bwrap in setup
/// to die of SIGPIPE at its status write and strand its init (found by an attacker's review).
pub struct KillOnDrop(pub Arc<Child>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.0.force_kill();
    }
}

/// Spawn on a new owner thread. Resolves with the child, or with the spawn error. `exited`
/// receives the exit status once the process is reaped; by then, for a process group, every
/// process left in the group has been sent SIGKILL.
pub fn spawn_owned(
    spec_builder: Box<dyn FnOnce() -> io::Result<Pid> + Send>,
    kind: TreeKind,
    setup_programs: Vec<std::path::PathBuf>,
) -> io::Result<(oneshot::Receiver<io::Result<KillOnDrop>>, oneshot::Receiver<ExitStatus>)> {
    let (started_tx, started_rx) = oneshot::channel();
    let (exit_tx, exit_rx) = oneshot::channel();
    thread::Builder::new()
        .name("sandspawn-child".into())
        .stack_size(128 * 1024)
        .spawn(move || {
            let pid = match spec_builder() {
                Ok(pid) => pid,
                Err(e) => {
                    let _ = started_tx.send(Err(e));
                    return;
                }
            };
            // Both kinds lead a process group of their own (bwrap's; the unsandboxed command's,
            // which nothing else would end when the host exits: it outlived `process.exit()`).
            let tracked = matches!(kind, TreeKind::PidNamespace | TreeKind::ProcessGroup);
            if tracked {
                super::exit_kill::track(pid.as_raw(), kind == TreeKind::PidNamespace);
            }
            let state = Mutex::new(State { reaped: false, pid_ns: None, init_pid: None, usage: None });
            let child = Arc::new(Child { pid, kind, setup_programs, state, orphans: Mutex::new(Vec::new()), control: Mutex::new(None) });
            // Nobody to take it (the driver is gone): the KillOnDrop sent back is dropped here.
            let _ = started_tx.send(Ok(KillOnDrop(child.clone())));
            let status = wait_exit_no_reap(pid);
            if tracked {
                super::exit_kill::untrack(pid.as_raw());
            }
            let mut state = child.state.lock().unwrap();
            if kind == TreeKind::ProcessGroup {
                // The command is gone; whatever it left in its group goes too, while the zombie
                // still reserves the pid and group id. Pin the members first: their parents die
                // with them, so they may be orphaned onto the host.
                if super::reap::host_adopts_orphans() {
                    child.orphans.lock().unwrap().extend(super::reap::pin_group_members(pid.as_raw()));
                }
                let _ = killpg(pid, Signal::SIGKILL);
            }
            state.usage = reap(pid);
            state.reaped = true;
            child.control.lock().unwrap().take();
            drop(state);
            let _ = exit_tx.send(status);
        })?;
    Ok((started_rx, exit_rx))
}


fn wait_exit_no_reap(pid: Pid) -> ExitStatus {
    loop {
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::waitid(libc::P_PID, pid.as_raw() as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if rc == 0 {
            let status = unsafe { info.si_status() };
            return match info.si_code {
                libc::CLD_EXITED => ExitStatus::Exited(status),
                _ => ExitStatus::Signaled(status),
            };
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            // ECHILD: somebody else reaped it (a host calling waitpid(-1)); report it as killed.
            return ExitStatus::Signaled(libc::SIGKILL);
        }
    }
}

/// Reap `pid` with `wait4`, which also returns what it used (`SpawnResult.resourceUsage`).
fn reap(pid: Pid) -> Option<ResourceUsage> {
    loop {
        let mut status = 0;
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::wait4(pid.as_raw(), &mut status, 0, &mut usage) };
        if rc > 0 {
            return Some(ResourceUsage::from_rusage(&usage));
        }
        if rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return None;
        }
    }
}

/// Seccomp filters on this process (the host's), which every process it spawns inherits.
static OWN_FILTERS: std::sync::LazyLock<Option<u32>> = std::sync::LazyLock::new(|| seccomp_filters("self"));

/// How many seccomp filters `pid` runs under (`Seccomp_filters` in its status, Linux 5.9+);
/// `None` where the kernel does not say or the process is gone.
fn seccomp_filters(pid: &str) -> Option<u32> {
    let status = crate::whole_file::read_to_string(format!("/proc/{pid}/status"), crate::whole_file::PROC_FILE).ok()?;
    status.lines().find_map(|l| l.strip_prefix("Seccomp_filters:")).and_then(|v| v.trim().parse().ok())
}
