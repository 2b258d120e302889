//! Under bwrap, last before the seccomp filter: a Landlock ruleset that handles every change of the
//! filesystem Landlock judges (`landlock::write_guard_rights`: writing a file, making, removing,
//! linking or renaming an entry, truncating) and none of reading, granted on every writable mount
//! the sandbox has, on `/dev` and on the descriptors the command inherits for writing.
//!
//! Why writing: a read-only mount refuses writing only regular files (and directories); the
//! kernel's `may_open` lets a FIFO (or a device) be opened for writing on one all the same. So a
//! host FIFO outside every writable root (`/run/initctl`, a host program's control pipe) was
//! writable through the sandbox's read-only view, and `O_RDWR` opened its read side without
//! blocking (found by an attacker's review). Landlock's `file_open` hook asks WRITE_FILE for
//! opening any non-directory for writing, FIFOs included.
//!
//! Why the rest: a mount is the sandbox's only as long as the paths reach it. A descriptor of a
//! directory keeps the mount it was opened on, and runs that may use Unix sockets (`network: true`,
//! `allowUnixSockets`) can pass descriptors to each other (SCM_RIGHTS): another run's writable bind
//! of its workspace, or its review overlay, received by this one, let this run (read-only too)
//! make, rename, remove and truncate there after that run had ended and been judged (found by an
//! attacker's review, mode38: `.npmrc` made in the other run's workspace, a symlink added to a
//! change set nobody held). With every change judged, what the command may change is what lies
//! beneath its own writable mounts, whatever descriptor it holds. On the mounts it has, nothing
//! changes: the grants cover them whole, and a read-only carve-out refuses as its mount does.
//!
//! The grants are taken from the writable mounts the sandbox has once the helper made its own (see
//! `NOTED` for how they are known without reading the table again): a mount the
//! command can write regular files on may hold FIFOs it writes too, so nothing that works on a
//! writable root, a tool cache's overlay, a private `/tmp`, a review overlay or `/dev/shm` changes.
//! `/` is never granted (a rule covers everything beneath it). A rule covers what lies beneath its
//! directory, mounts included, so a FIFO in a read-only carve-out inside a writable root stays
//! writable (the README says so). Pipes and sockets reached through `/proc/self/fd` live on
//! internal filesystems Landlock does not judge. Not covered: a file another run opened for writing
//! and passed on stays writable through that descriptor (Landlock judges the open, not the write).

use std::ffi::CString;
use sandspawn_helper::landlock::{write_guard_file_rights, write_guard_rights, WRITE_GUARD_MIN_ABI};
use sandspawn_helper::report::{setup, Failure};

use crate::{describe, last_errno};

const SYS_CREATE_RULESET: libc::c_long = 444;
const SYS_ADD_RULE: libc::c_long = 445;
const SYS_RESTRICT_SELF: libc::c_long = 446;
const RULE_PATH_BENEATH: libc::c_long = 1;

#[repr(C, packed)]
struct PathBeneath {
    allowed: u64,
    parent_fd: i32,
}

/// Apply the guard (no_new_privs must be set). A kernel without Landlock ABI 2 skips it: the
/// addon said so in the run's `notEnforced` when it planned (`plan::bwrap::WRITE_GUARD_NOT_ENFORCED`).
/// A kernel with it that refuses the ruleset stops the command from running.
pub fn apply() -> Result<(), Failure> {
    let abi = crate::confine::kernel_abi();
    if abi < WRITE_GUARD_MIN_ABI {
        return Ok(());
    }
    // REFER is handled by every domain anyway; naming it lets the writable mounts grant it back.
    let fs: u64 = write_guard_rights(abi);
    // `struct landlock_ruleset_attr`'s first field alone: every ABI accepts the 8-byte struct.
    let fd = unsafe { libc::syscall(SYS_CREATE_RULESET, &fs as *const u64, 8usize, 0u32) };
    if fd < 0 {
        let e = last_errno();
        return Err(setup(e, format!("creating the Landlock ruleset that keeps host FIFOs read-only failed: {}", describe(e))));
    }
    let ruleset = fd as i32;
    let granted = grant_mounts(ruleset, abi).and_then(|()| grant_inherited(ruleset, abi)).map(|()| grant_message_queues(ruleset, abi));
    // The root `prepare_message_queues` kept: close-on-exec, closed here all the same.
    let queues = MESSAGE_QUEUES.swap(-1, std::sync::atomic::Ordering::Relaxed);
    if queues >= 0 {
        unsafe { libc::close(queues) };
    }
    let rc = granted.map(|()| unsafe { libc::syscall(SYS_RESTRICT_SELF, ruleset as libc::c_long, 0u32) });
    let e = last_errno();
    unsafe { libc::close(ruleset) };
    match rc {
        Ok(0) => Ok(()),
        Ok(_) => Err(setup(e, format!("landlock_restrict_self (the guard of host FIFOs) failed: {}", describe(e)))),
        Err(f) => Err(f),
    }
}

/// WRITE_FILE and REFER on `/dev` (the sandbox's own devices, read-only as a mount but writable
/// as devices) and on every mount point whose visible mount is writable, except `/` (REFER is
/// checked from a rename's directories up to their mount's top: the rule must be there); a mount table that
/// cannot be read stops the command.
fn grant_mounts(ruleset: i32, abi: u32) -> Result<(), Failure> {
    // Only the points of mounts the table says are writable are opened: every carve-out is a
    // read-only mount point (200 repositories, 200 of them), and an open and `fstatvfs` each
    // cost every run about 1 µs a repository.
    let noted = NOTED.lock().ok().and_then(|mut n| n.take());
    let writable = match noted {
        Some(points) => points,
        None => sandspawn_helper::mountinfo::writable_points(&sandspawn_helper::mountinfo::read("granting the writable mounts their FIFOs")?),
    };
    let points = std::iter::once(b"/dev".to_vec()).chain(writable.into_iter().filter(|p| p != b"/" && p != b"/dev"));
    for point in points {
        let dev = point == b"/dev";
        let Ok(c) = CString::new(point) else { continue };
        // SAFETY: a valid C string. The command has not run yet: nothing in here was swapped.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | libc::O_NOFOLLOW) };
        if fd < 0 {
            // Covered by another mount's file, or gone: what the path reaches is judged on its own.
            continue;
        }
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        let writable = unsafe { libc::fstatvfs(fd, &mut st) } == 0 && st.f_flag & libc::ST_RDONLY == 0;
        // A grant refused (a file of an unusual filesystem) only leaves its FIFOs unwritable:
        // stricter, never weaker, so no run is stopped for it.
        if dev || writable {
            add_rule(ruleset, fd, rights_on(fd, abi));
        }
        unsafe { libc::close(fd) };
    }
    Ok(())
}

/// The writable mount points as the helper noted them (`note_table`, `note_writable`), or `None`:
/// the guard reads the mount table itself. Why not read it at the end: the kernel writes a line for
/// every mount, and ext4's options cost about 2 µs a line, so the table the helper leaves (a
/// read-only carve-out per repository) cost every run in a workspace of 200 repositories about
/// 0.45 ms more than the one bwrap left. Every mount the helper makes after bwrap's is read-only
/// (carve-outs, covers, kernel masks, the host's objects) or noted here (tool-cache overlays, the
/// reviewed workspace); a point noted whose mount is read-only by now is looked at and left out.
static NOTED: std::sync::Mutex<Option<Vec<Vec<u8>>>> = std::sync::Mutex::new(None);

/// The writable points of the mount table bwrap left, read before the helper mounts anything.
pub fn note_table(table: &[u8]) {
    if let Ok(mut n) = NOTED.lock() {
        *n = Some(sandspawn_helper::mountinfo::writable_points(table));
    }
}

/// A writable mount the helper made at `point` since `note_table`.
pub fn note_writable(point: &str) {
    if let Ok(mut n) = NOTED.lock() {
        if let Some(points) = n.as_mut() {
            points.push(point.as_bytes().to_vec());
        }
    }
}

/// The root of a detached mount of the IPC namespace's mqueue filesystem, made by
/// `prepare_message_queues` while the helper still has its capabilities; -1 when there is none.
static MESSAGE_QUEUES: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

/// Called before the helper gives up its capabilities (`userns::enter_own`): mounting the mqueue
/// filesystem needs them over the IPC namespace. See `grant_message_queues`.
pub fn prepare_message_queues() {
    // SAFETY: plain system calls on our own descriptors and C strings.
    unsafe {
        let fs = libc::syscall(libc::SYS_fsopen, c"mqueue".as_ptr(), libc::FSOPEN_CLOEXEC) as i32;
        if fs < 0 {
            return;
        }
        let made = libc::syscall(libc::SYS_fsconfig, fs, libc::FSCONFIG_CMD_CREATE, std::ptr::null::<libc::c_char>(), std::ptr::null::<libc::c_void>(), 0) == 0;
        let root = if made { libc::syscall(libc::SYS_fsmount, fs, libc::FSMOUNT_CLOEXEC, 0) as i32 } else { -1 };
        libc::close(fs);
        MESSAGE_QUEUES.store(root, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The mount `prepare_message_queues` made, attached at `at` (a directory of the copy of proc that
/// `oom_first` detaches right after): detached with that copy, in the same `umount2`, its
/// descriptor then holds a mount no namespace has, whose close waits for nothing. Why: a detached
/// mount's last descriptor closed dissolves it, and every dissolve or detach waits for an RCU grace
/// period (`synchronize_rcu_expedited`, off the CPU: measured 1 to 7 ms each at load 6 on the
/// 2-core VM, five a run before this). The descriptor still names the filesystem's root, which is
/// all `grant_message_queues` needs. Not moved (an older kernel, a refusal): the close pays the
/// wait, as before.
pub fn park_message_queues(at: &std::ffi::CStr) {
    let root = MESSAGE_QUEUES.load(std::sync::atomic::Ordering::Relaxed);
    if root >= 0 {
        // SAFETY: our own descriptor, an empty path and a valid C string.
        unsafe { libc::syscall(libc::SYS_move_mount, root, c"".as_ptr(), libc::AT_FDCWD, at.as_ptr(), libc::MOVE_MOUNT_F_EMPTY_PATH) };
    }
}

/// The guard's rights on the sandbox's POSIX message queues: `mq_open` opens a file of the IPC namespace's
/// own mqueue filesystem, mounted nowhere the table shows, and Landlock judges that open as any
/// other (CI found `mq_open(O_CREAT|O_RDWR)` refused once the guard came). A detached mount of that
/// filesystem (`prepare_message_queues`: no mount point needed) has the same root, one per IPC
/// namespace, and a rule is the inode's. A kernel that refused the mount only leaves the queues
/// unwritable: stricter, never weaker.
fn grant_message_queues(ruleset: i32, abi: u32) {
    let root = MESSAGE_QUEUES.load(std::sync::atomic::Ordering::Relaxed);
    if root >= 0 {
        add_rule(ruleset, root, write_guard_rights(abi));
    }
}

/// WRITE_FILE on each non-directory the command inherits open for writing: `/dev/stdout` reopens
/// it by its own path (a host pty, a log file the caller redirected to), which may lie anywhere.
/// It could write there already; a pipe or socket (internal filesystems) needs no rule and gets none.
fn grant_inherited(ruleset: i32, abi: u32) -> Result<(), Failure> {
    let fds: Vec<i32> = match std::fs::read_dir("/proc/self/fd") {
        Ok(dir) => dir.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect(),
        Err(e) => return Err(setup(e.raw_os_error().unwrap_or(0), format!("listing the inherited descriptors failed: {}", sandspawn_helper::report::os_words(&e)))),
    };
    for fd in fds {
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        let fd_flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags < 0 || fd_flags < 0 || fd_flags & libc::FD_CLOEXEC != 0 || flags & libc::O_ACCMODE == libc::O_RDONLY {
            continue;
        }
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut st) } != 0 || st.st_mode & libc::S_IFMT == libc::S_IFDIR {
            continue;
        }
        // EBADFD for a pipe or socket: nothing to grant. Any other refusal only makes the reopen
        // stricter, never the guard weaker. TRUNCATE too: `> /dev/stdout` opens it with O_TRUNC.
        add_rule(ruleset, fd, write_guard_file_rights(abi));
    }
    Ok(())
}

/// The guard's rights for a rule on `fd`: all of them beneath a directory, the file rights alone on
/// a file (a single file bound writable), where the kernel refuses the rest with the whole rule.
fn rights_on(fd: i32, abi: u32) -> u64 {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: our own descriptor and a zeroed stat buffer.
    let dir = unsafe { libc::fstat(fd, &mut st) } != 0 || st.st_mode & libc::S_IFMT == libc::S_IFDIR;
    if dir { write_guard_rights(abi) } else { write_guard_file_rights(abi) }
}

/// `landlock_add_rule` granting `allowed` beneath `fd` (or on it, a file; the kernel refuses
/// REFER there, which changes nothing: a mount point is not renamed); its return code.
fn add_rule(ruleset: i32, fd: i32, allowed: u64) -> libc::c_long {
    let attr = PathBeneath { allowed, parent_fd: fd };
    unsafe { libc::syscall(SYS_ADD_RULE, ruleset as libc::c_long, RULE_PATH_BENEATH, &attr as *const PathBeneath, 0u32) }
}
