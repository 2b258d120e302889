//! sandspawn-helper: the program bwrap runs inside the sandbox in place of the command. It does
//! what must happen inside, in the command's own process (no fork, one thread), and then execs the
//! command, so the launch plan needs nothing from its spawner but argv, environment and stdio.
//!
//! It also has one host-side use: run in front of bwrap in a plan another program runs, it opens
//! `/dev/null` at the descriptors bwrap reads `--ro-bind-data` masks from (`--null-fds`), holds the
//! placeholders' directories, makes bwrap's status socket pair (`--status-pair`), then execs bwrap.
//!
//! On macOS it runs in front of sandbox-exec only, to set the rlimits and take the terminal (see
//! the addon's `plan::limited`); a step only Linux has is refused there (`Steps::linux_only`).
//!
//! Steps (see `protocol`), in this order: arm the parent-death signal, open the null descriptors (and the offline
//! `nsswitch.conf`), lock directories' lock files and create placeholders in them, make bwrap's status pair (host side); inside, wait
//! until bwrap's pid 1 holds its locks on those directories, then close ours; mark the report descriptor close-on-exec; bound the inodes
//! of the sandbox's tmpfs mounts (`tmpfs_inodes`) and the ptys of its devpts (`pty_bound`); mount the private tool
//! caches' overlays, detach the store (`private_mounts`), cover the placeholders of missing
//! protected names and sandspawn's stores (`covers`; the only steps that need capabilities); move into the command's own
//! user namespace and drop every capability (`userns`), so everything after runs with none and
//! the command can borrow nothing of bwrap's pid 1; hand a loopback listener to the host's proxy
//! and set the proxy variables (`listen`); take the terminal on descriptor 0 as the controlling
//! tty (pty runs); in the Landlock mode, become the supervisor (`supervisor`, never with the
//! overlay steps), whose forked command process alone takes the resource limits; otherwise set
//! the resource limits (`rlimit`) here; wait for the coarse clock to reach the reviewed
//! workspace's beginning (`clock_wait`); under bwrap, refuse to go on when bwrap
//! itself is gone by then (`bwrap_alive`: nothing would end its pid 1); join a fresh session keyring, keep FIFOs outside the
//! writable mounts unwritable (`write_guard`, Landlock) and install the
//! seccomp filter (after `PR_SET_NO_NEW_PRIVS`, which seccomp requires without CAP_SYS_ADMIN);
//! `execvp` the command with the environment it was given. Any failure is reported (see `report`) and ends the helper
//! with 125/126/127; the command then never ran.
//!
//! `no_main`: Rust's runtime start-up would set SIGPIPE to "ignore" before `main`, and an ignored
//! signal stays ignored across exec, so every command would run deaf to SIGPIPE (`yes | head` would
//! never end by it). Without that start-up the command inherits the dispositions the helper got.
#![no_main]

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;

use sandspawn_helper::placeholder;
use sandspawn_helper::protocol::{HeldDir, Steps, MARKER, PROTOCOL_TAG, VERSION};
use sandspawn_helper::report::{Failure, Stage};
use sandspawn_helper::rlimit::Rlimit;
#[cfg(target_os = "linux")]
use sandspawn_helper::seccomp;

mod exec_search;
// See setup_alloc.rs: no page mapped and unmapped per parsed line during setup.
#[global_allocator]
static ALLOC: sandspawn_helper::setup_alloc::SetupAlloc = sandspawn_helper::setup_alloc::SetupAlloc;
// Linux only, like the steps they do (see `Steps::linux_only`).
#[cfg(target_os = "linux")]
mod clock_wait;
#[cfg(target_os = "linux")]
mod blocked_carve_out;
#[cfg(target_os = "linux")]
mod confine;
#[cfg(target_os = "linux")]
mod core_memory;
#[cfg(target_os = "linux")]
mod capabilities;
#[cfg(target_os = "linux")]
mod close_batch;
#[cfg(target_os = "linux")]
mod covers;
#[cfg(target_os = "linux")]
mod cwd_on_top;
#[cfg(target_os = "linux")]
mod mount_target;
#[cfg(target_os = "linux")]
mod oom_first;
#[cfg(target_os = "linux")]
mod overlay;
#[cfg(target_os = "linux")]
mod read_only;
#[cfg(target_os = "linux")]
mod review_mount;
#[cfg(target_os = "linux")]
mod listen;
#[cfg(target_os = "linux")]
mod private_mounts;
#[cfg(target_os = "linux")]
mod kernel_mounts;
#[cfg(target_os = "linux")]
mod known_mounts;
#[cfg(target_os = "linux")]
mod host_objects;
#[cfg(target_os = "linux")]
mod kernel_masks;
#[cfg(target_os = "linux")]
mod memory_merge;
#[cfg(target_os = "linux")]
mod planned_mounts;
#[cfg(target_os = "linux")]
mod propagation;
#[cfg(target_os = "linux")]
mod pty_bound;
#[cfg(target_os = "linux")]
mod descendants;
#[cfg(target_os = "linux")]
mod device_copy;
#[cfg(target_os = "linux")]
mod stdio_devices;
#[cfg(target_os = "linux")]
mod stdio_pipes;
#[cfg(target_os = "linux")]
mod stdio_terminals;
#[cfg(target_os = "linux")]
mod supervisor;
#[cfg(target_os = "linux")]
mod tree_end;
#[cfg(target_os = "linux")]
mod tmpfs_inodes;
#[cfg(target_os = "linux")]
mod userns;
#[cfg(target_os = "linux")]
mod user_budgets;
#[cfg(target_os = "linux")]
mod ipc_budgets;
#[cfg(target_os = "linux")]
mod task_budget;
#[cfg(target_os = "linux")]
mod rlimit_shares;
#[cfg(target_os = "linux")]
mod write_guard;

/// Keeps the marker in the binary, where the addon looks for it (see `protocol::MARKER`).
#[used]
static EMBEDDED_MARKER: [u8; MARKER.len()] = marker_bytes();

const fn marker_bytes() -> [u8; MARKER.len()] {
    let mut out = [0u8; MARKER.len()];
    let src = MARKER.as_bytes();
    let mut i = 0;
    while i < src.len() {
        out[i] = src[i];
        i += 1;
    }
    out
}

/// The C entry point: argv comes straight from the kernel (`std::env::args` is not filled in
/// without Rust's start-up on every C library, musl among them).
///
/// # Safety
/// Called only by the C runtime, with `argc` valid C strings in `argv`.
#[no_mangle]
pub unsafe extern "C" fn main(argc: libc::c_int, argv: *const *const libc::c_char) -> libc::c_int {
    let args: Vec<OsString> = (1..argc.max(0) as usize)
        .map(|i| {
            // SAFETY: the kernel's argv holds `argc` NUL-terminated strings.
            let arg = unsafe { std::ffi::CStr::from_ptr(*argv.add(i)) };
            std::ffi::OsStr::from_bytes(arg.to_bytes()).to_os_string()
        })
        .collect();
    run(args);
    0
}

fn run(args: Vec<OsString>) {
    if args.len() == 1 && args[0] == "--version" {
        println!("sandspawn-helper {VERSION} (protocol {PROTOCOL_TAG})");
        return;
    }
    if args.len() == 2 && args[0] == "--resolve" {
        return resolve(&args[1]);
    }
    // The runner's bwrap runs: block until the host has walked the workspace and sends the rest
    // (`args_pipe`); nothing before this, and nothing at all when it never comes.
    let args = match sandspawn_helper::args_pipe::from_argv(&args) {
        None => args,
        Some(Err(message)) => fail(None, Failure { stage: Stage::Setup, errno: 0, message }),
        Some(Ok((from, report_fd))) => match sandspawn_helper::args_pipe::read_from(from) {
            Ok(sent) => sent,
            Err(message) => fail(report_fd, Failure { stage: Stage::Setup, errno: 0, message }),
        },
    };
    let (steps, command) = match Steps::parse(&args) {
        Ok(parsed) => parsed,
        Err(message) => fail(None, Failure { stage: Stage::Setup, errno: 0, message }),
    };
    #[cfg(not(target_os = "linux"))]
    if let Some(flag) = steps.linux_only() {
        let message = format!("{flag} exists only on Linux; this helper was built for {}", std::env::consts::OS);
        fail(steps.report_fd, Failure { stage: Stage::Setup, errno: 0, message });
    }
    // A plan's spawner that dies from now on takes bwrap with it (`status_pair`), first.
    #[cfg(target_os = "linux")]
    if steps.status_pair.is_some() {
        if let Err(failure) = sandspawn_helper::status_pair::arm_parent_death() {
            fail(steps.report_fd, failure);
        }
    }
    for &fd in &steps.null_fds {
        if let Err(failure) = open_null_at(fd) {
            fail(steps.report_fd, failure);
        }
    }
    #[cfg(target_os = "linux")]
    if let Some(fd) = steps.offline_nsswitch_fd {
        if let Err(failure) = open_offline_nsswitch_at(fd) {
            fail(steps.report_fd, failure);
        }
    }
    if !steps.held_dirs.is_empty() {
        if let Err(failure) = hold_dirs(&steps) {
            fail(steps.report_fd, failure);
        }
    }
    // Above every descriptor the steps before open at fixed numbers.
    #[cfg(target_os = "linux")]
    if let Some((status, alive)) = steps.status_pair {
        if let Err(failure) = sandspawn_helper::status_pair::open_at(status, alive) {
            fail(steps.report_fd, failure);
        }
    }
    #[cfg(target_os = "linux")]
    if steps.await_init_locks > 0 {
        if let Err(failure) = await_init_locks(steps.await_init_locks) {
            fail(steps.report_fd, failure);
        }
    }
    for &fd in &steps.close_fds {
        // SAFETY: closing a descriptor number; one that is not open is no error here.
        unsafe { libc::close(fd) };
    }
    if let Some(fd) = steps.report_fd {
        // Not ours to check further: a bad descriptor only means the report cannot be sent.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    #[cfg(target_os = "linux")]
    in_namespaces(&steps);
    if steps.controlling_tty {
        if let Err(failure) = take_terminal() {
            fail(steps.report_fd, failure);
        }
    }
    #[cfg(target_os = "linux")]
    if let Some(ll) = &steps.landlock {
        // The Landlock mode: the helper stays as the supervisor and forks the command, whose
        // process alone takes the limits: under them the supervisor could not end the tree
        // (found by an attacker's review: `openFiles: 6` left it no descriptor for its /proc
        // reads, and the command's grandchildren outlived the run).
        supervisor::run(ll, steps.report_fd, &steps.rlimits, command);
    }
    // Every bwrap run (its own user namespace), after the network bridge's send (`listen`), which
    // needs the inherited descriptor limit; before the plan's limits, which may lower these further.
    #[cfg(target_os = "linux")]
    if steps.own_userns {
        if let Err(failure) = rlimit_shares::lower() {
            fail(steps.report_fd, failure);
        }
    }
    if let Err(failure) = set_rlimits(&steps.rlimits) {
        fail(steps.report_fd, failure);
    }
    // As late as it can be (bwrap's setup has used most of the wait), before the filter.
    #[cfg(target_os = "linux")]
    if let Some(ns) = steps.exec_after_ns {
        if let Err(failure) = clock_wait::wait(ns) {
            fail(steps.report_fd, failure);
        }
    }
    // Last before the filter: the later, the surer bwrap's pid 1 is past arming its own
    // parent-death signal (the check waits for it anyway).
    #[cfg(target_os = "linux")]
    if let Some(ends) = steps.bwrap_alive {
        if let Err(failure) = sandspawn_helper::bwrap_alive::check(ends, steps.report_fd) {
            fail(steps.report_fd, failure);
        }
    }
    #[cfg(target_os = "linux")]
    if let Some(sockets) = steps.filter {
        if let Err(failure) = confine_command(sockets) {
            fail(steps.report_fd, failure);
        }
    }
    let failure = exec(command);
    fail(steps.report_fd, failure)
}

/// Inside bwrap: the mounts that use the capabilities bwrap kept for the helper, the step that
/// drops them, then the network bridge's listener (bound in the sandbox's network namespace).
#[cfg(target_os = "linux")]
fn in_namespaces(steps: &Steps) {
    // Every bwrap plan, first: no mount the host makes from now on reaches the sandbox; what
    // bwrap mounted, before the helper mounts anything of its own; the host's kernel objects
    // bwrap left writable (device binds, global /proc entries) made read-only, and the host kernel's
    // files that reading consumes or leaks (tracefs, the page map) hidden.
    // Then, from the mount table bwrap left: no kernel filesystem writable but its own, and each
    // writable bind where the plan put it, of the directory planned, and the cwd entered again.
    if steps.own_userns {
        let checked = propagation::stop_host_mounts()
            .and_then(|()| sandspawn_helper::mountinfo::read("checking the sandbox's mounts"))
            .and_then(|table| {
                write_guard::note_table(&table);
                known_mounts::note_table(&table);
                kernel_mounts::refuse_writable(&table)
                    .and_then(|()| planned_mounts::check(&steps.writable, steps.cwd.as_ref(), &table))
                    .and_then(|()| host_objects::read_only(&table))
                    .and_then(|()| kernel_masks::mask(&table))
            });
        if let Err(failure) = checked {
            fail(steps.report_fd, failure);
        }
    }
    // First of the helper's own: the host's /dev it uses (bound over a denyRead mask of /dev, when
    // there is one) is detached before any step looks at the sandbox's /dev. Before the terminal is
    // taken (on the reopened descriptor 0).
    if let Some(dir) = &steps.stdio_devices {
        if let Err(failure) = stdio_devices::reopen_all(dir) {
            fail(steps.report_fd, failure);
        }
    }
    // Before anything is written to them (the file covers' scratch file is made in /dev/shm).
    for t in &steps.tmpfs_inodes {
        if let Err(failure) = tmpfs_inodes::bound(t) {
            fail(steps.report_fd, failure);
        }
    }
    // Before the command can open a pty; the remount needs the capabilities dropped below.
    if let Some(max) = steps.devpts_max {
        if let Err(failure) = pty_bound::bound(max) {
            fail(steps.report_fd, failure);
        }
    }
    // The carve-outs below are made on the reviewed workspace's overlay, not under it.
    if let Err(failure) = review_mount::mount_all(&steps.review, &steps.unmount) {
        fail(steps.report_fd, failure);
    }
    for o in &steps.review {
        write_guard::note_writable(&o.root);
        known_mounts::note(o.root.as_bytes());
    }
    if let Err(failure) = read_only::bind_all(&steps.read_only).and_then(|()| cwd_on_top::reenter_below(&steps.read_only)) {
        fail(steps.report_fd, failure);
    }
    for overlay in &steps.overlays {
        if let Err(failure) = private_mounts::mount_overlay(overlay) {
            fail(steps.report_fd, failure);
        }
        write_guard::note_writable(&overlay.target);
    }
    // The binds the caches and the change set were mounted from are gone from their paths before
    // the covers (sandspawn's stores they lie in are among the directories covered): moved into
    // the covers' scratch directory and detached with it, or each detached (`covers::cover`).
    let own_shm = steps.tmpfs_inodes.iter().any(|t| t.path == covers::SHM);
    // Detached with oom_first's copy of proc (below, only with `own_userns`), not on its own.
    if steps.own_userns {
        covers::defer_detach();
    }
    if let Err(failure) = covers::cover(&steps.cover_dirs, &steps.cover_dirs_if_there, &steps.cover_files, &steps.unmount, own_shm).and_then(|()| covers::pin_links(&steps.pin_links)) {
        fail(steps.report_fd, failure);
    }
    // While the capabilities last (see `write_guard::prepare_message_queues`).
    write_guard::prepare_message_queues();
    // Last of the steps that mount: proc is read-only after it (`oom_first`), `core_memory` first.
    if steps.own_userns {
        // Detached with oom_first's copy of proc, in its one RCU grace period, not each on its own.
        let take_along = |at: &std::ffi::CStr| {
            write_guard::park_message_queues(at);
            covers::detach_deferred(at)
        };
        let entered = core_memory::keep_memory_out().and_then(|()| oom_first::keep_the_command_first(&take_along)).and_then(|proc| userns::enter_own(&proc, steps.map_ids, steps.limit_userns));
        if let Err(failure) = entered {
            fail(steps.report_fd, failure);
        }
    }
    if let Some(ctl) = steps.net_listen_fd {
        match listen::bridge(ctl) {
            // Single-threaded, before exec: setting the environment here is safe.
            Ok(port) => {
                let java = std::env::var("JAVA_TOOL_OPTIONS").ok();
                for (k, v) in sandspawn_helper::proxy_env::variables(port, java.as_deref()) {
                    std::env::set_var(k, v);
                }
            }
            Err(failure) => fail(steps.report_fd, failure),
        }
    }
}

pub(crate) fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// The OS's words for `errno`, without Rust's ` (os error N)` suffix.
pub(crate) fn describe(errno: i32) -> String {
    sandspawn_helper::report::os_words(&std::io::Error::from_raw_os_error(errno))
}

/// `/dev/null` at descriptor `fd`, inheritable (bwrap reads it to EOF: an empty file).
fn open_null_at(fd: i32) -> Result<(), Failure> {
    // Not close-on-exec: when `open` returns `fd` itself, that descriptor is the one bwrap reads.
    let null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) };
    if null < 0 || unsafe { libc::dup2(null, fd) } < 0 {
        let e = last_errno();
        return Err(Failure { stage: Stage::Setup, errno: e, message: format!("opening /dev/null at descriptor {fd} failed: {}", describe(e)) });
    }
    if null != fd {
        unsafe { libc::close(null) };
    }
    Ok(())
}

/// Open the held directories' lock files' directory (`--held-locks`) and hold each directory.
fn hold_dirs(steps: &Steps) -> Result<(), Failure> {
    let path = steps.held_locks.as_deref().unwrap_or(std::path::Path::new(""));
    let failed = |errno: i32| Failure {
        stage: Stage::Setup,
        errno,
        message: format!("opening {}, the placeholders' lock files' directory, failed: {}", path.display(), describe(errno)),
    };
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| failed(libc::EINVAL))?;
    let locks = placeholder::open_locks(&c).map_err(|e| failed(e.raw_os_error().unwrap_or(0)))?;
    // Above every held directory's descriptor number, which a lock file is moved to.
    let above = steps.held_dirs.iter().map(|h| h.fd).max().unwrap_or(0) + 1;
    // SAFETY: duplicating our own descriptor; the copy is owned below, close-on-exec.
    let moved = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&locks), libc::F_DUPFD_CLOEXEC, above) };
    if moved < 0 {
        return Err(failed(last_errno()));
    }
    drop(locks);
    // SAFETY: just made, owned by nobody else.
    let locks = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(moved) };
    steps.held_dirs.iter().try_for_each(|held| hold_dir(&locks, held))
}

/// How long a held directory's lock file may be held exclusively before the plan gives up: a
/// cleanup (`placeholders::remove_leftovers` in the addon) holds it for a few system calls.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Lock a directory's lock file (in `locks`) shared at descriptor `held.fd`, inheritable (bwrap
/// keeps it until its pid 1 holds the directory; the helper inside closes it before the command
/// runs), and create its placeholders (see `sandspawn_helper::placeholder`). Never the directory
/// itself, and never waiting without bound: whoever could hold that lock would stall the plan.
fn hold_dir(locks: &std::os::fd::OwnedFd, held: &HeldDir) -> Result<(), Failure> {
    let failed = |errno: i32, what: &str| Failure {
        stage: Stage::Setup,
        errno,
        message: format!("{what} {} for its placeholders failed: {}", held.path.display(), describe(errno)),
    };
    let path = CString::new(std::os::unix::ffi::OsStrExt::as_bytes(held.path.as_os_str())).map_err(|_| failed(libc::EINVAL, "opening"))?;
    let dir = placeholder::open_dir(&path, false).map_err(|e| failed(e.raw_os_error().unwrap_or(0), "opening"))?;
    let deadline = std::time::Instant::now() + LOCK_PATIENCE;
    let lock = loop {
        match placeholder::lock_of(locks, &dir, libc::LOCK_SH | libc::LOCK_NB, true) {
            Ok(fd) => break fd,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                return Err(Failure {
                    stage: Stage::Setup,
                    errno: libc::EWOULDBLOCK,
                    message: format!(
                        "the lock file of {} (for its placeholders) was held exclusively for over {} s: only a sandspawn cleanup \
                         takes it, for moments, or a process of this user that can read sandspawn's state directory",
                        held.path.display(),
                        LOCK_PATIENCE.as_secs()
                    ),
                });
            }
            Err(e) => return Err(failed(e.raw_os_error().unwrap_or(0), "locking")),
        }
    };
    for (name, kind) in &held.placeholders {
        let name = CString::new(name.as_bytes()).map_err(|_| failed(libc::EINVAL, "naming a placeholder in"))?;
        placeholder::create(&dir, &name, *kind);
    }
    // Closed first: it may sit at the number the lock goes to.
    drop(dir);
    // At its descriptor number; the lock belongs to the open file description and stays with it.
    let raw = std::os::unix::io::IntoRawFd::into_raw_fd(lock);
    if raw != held.fd {
        // SAFETY: both descriptors are ours; dup2 leaves the copy without close-on-exec.
        if unsafe { libc::dup2(raw, held.fd) } < 0 {
            return Err(failed(last_errno(), "placing the lock of"));
        }
        unsafe { libc::close(raw) };
    }
    Ok(())
}

/// Wait (a few milliseconds at most in practice, 5 s at worst) until bwrap's pid 1 holds `count`
/// POSIX read locks: the `--lock-file`s it takes right after forking this process. Until then the
/// held directories' lock files' `flock`s, which this process closes next, are all that keeps
/// another run's cleanup from removing a placeholder mounted over in here.
///
/// Read from pid 1's own descriptors (`/proc/1/fdinfo/N` lists the locks of that open file's inode
/// that pid 1 holds, walking that inode's few locks), not from `/proc/locks`: each read(2) of that
/// file walks the machine's whole lock list under the kernel's global file-lock lock, which any
/// command lengthens as it likes (found by an attacker's review, rfix31, of kern31's fix: with
/// 1,000,000 byte-range locks held by another run, each plan's start took 200 ms more, in the
/// kernel, holding that lock against every host process's `flock` and `fcntl` lock meanwhile).
/// `/proc/locks` only where pid 1's descriptors cannot be read.
#[cfg(target_os = "linux")]
fn await_init_locks(count: usize) -> Result<(), Failure> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let locks = placeholder::init_s_locks().unwrap_or_else(|| std::fs::read_to_string("/proc/locks").unwrap_or_default());
        if placeholder::posix_read_locks_of(&locks, 1) >= count {
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            return Err(Failure {
                stage: Stage::Setup,
                errno: 0,
                message: format!("bwrap's pid 1 did not lock the placeholders' directories ({count} --lock-file) within 5 s"),
            });
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// An in-memory file at `fd` holding the offline `nsswitch.conf` (bwrap reads it to EOF).
#[cfg(target_os = "linux")]
fn open_offline_nsswitch_at(fd: i32) -> Result<(), Failure> {
    let setup = |errno: i32, what: &str| Failure { stage: Stage::Setup, errno, message: format!("{what} failed: {}", describe(errno)) };
    let host = std::fs::read_to_string("/etc/nsswitch.conf").unwrap_or_default();
    let text = sandspawn_helper::offline_names::offline_nsswitch(&host);
    let mem = unsafe { libc::memfd_create(c"nsswitch.conf".as_ptr(), 0) };
    if mem < 0 {
        return Err(setup(last_errno(), "memfd_create for the offline nsswitch.conf"));
    }
    let written = unsafe { libc::write(mem, text.as_ptr().cast(), text.len()) };
    if written != text.len() as isize || unsafe { libc::lseek(mem, 0, libc::SEEK_SET) } != 0 {
        return Err(setup(last_errno(), "writing the offline nsswitch.conf"));
    }
    if mem != fd {
        if unsafe { libc::dup2(mem, fd) } < 0 {
            return Err(setup(last_errno(), "placing the offline nsswitch.conf"));
        }
        unsafe { libc::close(mem) };
    }
    Ok(())
}

/// Become a session leader (unless already one: bwrap's `--new-session` and posix_spawn's SETSID
/// made it so) and take the terminal on descriptor 0 as the controlling tty. TIOCSCTTY also makes
/// this process group the terminal's foreground group, so Ctrl-C reaches the command, not bwrap.
fn take_terminal() -> Result<(), Failure> {
    let setup = |errno: i32, message: String| Failure { stage: Stage::Setup, errno, message };
    if unsafe { libc::getsid(0) != libc::getpid() } && unsafe { libc::setsid() } < 0 {
        let e = last_errno();
        return Err(setup(e, format!("setsid() failed: {}", describe(e))));
    }
    if unsafe { libc::isatty(0) } != 1 {
        return Err(setup(libc::ENOTTY, "descriptor 0 is not a terminal, so it cannot become the controlling terminal".into()));
    }
    if unsafe { libc::ioctl(0, libc::TIOCSCTTY as _, 0) } < 0 {
        let e = last_errno();
        let why = if e == libc::EPERM { " (the terminal already controls another session: give the plan the terminal on its stdio without making it controlling)" } else { "" };
        return Err(setup(e, format!("taking the terminal as the controlling tty failed: {}{why}", describe(e))));
    }
    Ok(())
}

/// Lower every limit of `limits` for this process and what it execs: in the process that execs
/// the command, never in the Landlock mode's supervisor.
pub(crate) fn set_rlimits(limits: &[Rlimit]) -> Result<(), Failure> {
    limits.iter().try_for_each(set_rlimit)
}

/// Lower one limit for this process and what it execs; never above the current hard limit (see
/// `Rlimit::within`).
fn set_rlimit(limit: &Rlimit) -> Result<(), Failure> {
    let mut current = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    let name = limit.resource.name();
    let failed = |what: &str| {
        let e = last_errno();
        Failure { stage: Stage::Setup, errno: e, message: format!("{what} of the {name} limit failed: {}", describe(e)) }
    };
    if unsafe { libc::getrlimit(limit.resource.raw(), &mut current) } != 0 {
        return Err(failed("reading"));
    }
    let (soft, hard) = limit.within(current.rlim_max as u64);
    let new = libc::rlimit { rlim_cur: soft as libc::rlim_t, rlim_max: hard as libc::rlim_t };
    if unsafe { libc::setrlimit(limit.resource.raw(), &new) } != 0 {
        return Err(failed("setting"));
    }
    Ok(())
}

/// The last step before exec under bwrap: a fresh session keyring, no memory merged by KSM
/// (`memory_merge`), no_new_privs, the Landlock
/// guard of FIFOs and devices outside the writable mounts (`write_guard`), the filter
/// (baseline, `sockets`, tracing of the own tree); then a check that the filter holds.
#[cfg(target_os = "linux")]
fn confine_command(sockets: seccomp::Sockets) -> Result<(), Failure> {
    let setup = |errno: i32, message: String| Failure { stage: Stage::Setup, errno, message };
    let arch = seccomp::Arch::native().ok_or_else(|| {
        setup(0, format!("no seccomp filter for this architecture ({})", std::env::consts::ARCH))
    })?;
    let filter = sock_filters(seccomp::program(arch, seccomp::Filter { sockets, tracing: seccomp::Tracing::OwnTree, shield: None }));
    userns::fresh_session_keyring()?;
    memory_merge::stop_merging()?;
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("prctl(PR_SET_NO_NEW_PRIVS) failed: {}", describe(e))));
    }
    // After every mount (it grants the writable ones: `write_guard::NOTED`), before the filter: host FIFOs read-only.
    write_guard::apply()?;
    install_filter(&filter)?;
    // SAFETY: unshare with a plain flag; it must fail now.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER) } == 0 {
        return Err(setup(0, "the seccomp filter did not refuse a new user namespace as the sandbox requires".into()));
    }
    Ok(())
}

/// A generated program as the kernel's `struct sock_filter`s.
#[cfg(target_os = "linux")]
pub(crate) fn sock_filters(prog: Vec<seccomp::Insn>) -> Vec<libc::sock_filter> {
    prog.into_iter().map(|(code, jt, jf, k)| libc::sock_filter { code, jt, jf, k }).collect()
}

/// Install a seccomp filter (no_new_privs must already be set). Allocates nothing, so it is safe
/// in the Landlock supervisor's forked child.
#[cfg(target_os = "linux")]
pub(crate) fn install_filter(filter: &[libc::sock_filter]) -> Result<(), Failure> {
    let prog = libc::sock_fprog { len: filter.len() as u16, filter: filter.as_ptr() as *mut libc::sock_filter };
    if unsafe { libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog as *const libc::sock_fprog) } != 0 {
        let e = last_errno();
        return Err(Failure { stage: Stage::Setup, errno: e, message: format!("installing the seccomp filter failed: {}", sandspawn_helper::report::seccomp_refused(e)) });
    }
    Ok(())
}

/// `execvp` the command (`exec_search`, glibc's semantics in every build): a name without `/` is
/// looked up in the `PATH` the command was given, as bwrap did before the helper existed. Returns only on failure.
pub(crate) fn exec(command: &[OsString]) -> Failure {
    let name = String::from_utf8_lossy(command[0].as_bytes()).into_owned();
    let argv: Result<Vec<CString>, _> = command.iter().map(|a| CString::new(a.as_bytes())).collect();
    let Ok(argv) = argv else {
        return Failure { stage: Stage::Setup, errno: libc::EINVAL, message: format!("an argument of '{name}' contains a NUL byte") };
    };
    let errno = exec_search::execvp(&argv);
    Failure { stage: Stage::Exec, errno, message: format!("cannot run '{name}': {}", describe(errno)) }
}

/// Report on stderr and, when the runner asked for it, on the report descriptor; then exit.
/// How long a lookup process may live. The proxy kills it when its caller gives up (after 10 s at
/// most); this bounds one whose proxy died before it could.
const RESOLVE_LIFETIME_SECS: libc::c_uint = 20;

/// `--resolve NAME`, on the host for the addon's proxy: look `name` up and write the answer line
/// (`getaddrinfo::answer_line`) to stdout. Not part of a sandbox's steps.
fn resolve(name: &std::ffi::OsStr) {
    use sandspawn_helper::getaddrinfo::{answer_line, lookup, LookupError};
    use std::io::Write;
    // SAFETY: plain signal and timer calls; SIGALRM's default action ends the process, whatever
    // disposition the spawner left it (an ignored signal stays ignored across exec).
    unsafe {
        libc::signal(libc::SIGALRM, libc::SIG_DFL);
        libc::alarm(RESOLVE_LIFETIME_SECS);
    }
    let answer = match name.to_str() {
        Some(name) => lookup(name),
        None => Err(LookupError::Failed("the name is not UTF-8".into())),
    };
    let _ = std::io::stdout().write_all(answer_line(&answer).as_bytes());
}

pub(crate) fn fail(report_fd: Option<i32>, failure: Failure) -> ! {
    // A changed workspace is the runner's to handle (it plans again): nothing on the output it
    // captures, which the attempt that runs the command must not find anything of this one in.
    if !(failure.stage == Stage::Changed && report_fd.is_some()) {
        let line = format!("sandspawn-helper: {}\n", failure.message);
        unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
    }
    if let Some(fd) = report_fd {
        let record = failure.encode();
        unsafe { libc::write(fd, record.as_ptr().cast(), record.len()) };
    }
    std::process::exit(failure.exit_code())
}
