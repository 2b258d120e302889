//! The command's own user namespace, entered by the helper as its last privileged step in every
//! bwrap plan, and the capabilities dropped on the way in.
//!
//! Why: bwrap's pid 1 (its namespace init) runs without the command's seccomp filter, as the
//! command's uid, dumpable, in the sandbox's user namespace. A command in that same namespace can
//! `ptrace` it, write its `/proc/1/mem`, or copy its descriptors with `pidfd_getfd`, and so make it
//! do what the filter refuses the command (a `socket(AF_UNIX)` connected to a host service). The
//! kernel checks every access of that family (`ptrace_may_access`) against the target's user
//! namespace: a process in a child namespace holds no CAP_SYS_PTRACE in the parent, whatever its
//! uid. So the command, below pid 1's namespace, can reach nothing that runs without its filter,
//! while it still traces its own children (gdb, strace).
//!
//! bwrap's own `--disable-userns` cannot be used for this: it moves pid 1 into its nested namespace
//! too, and leaves no room for another. New user namespaces after this one are refused by the
//! seccomp filter in every plan; where the plan kept capabilities for the helper's mounts, the
//! sysctl bwrap uses is also set (`limit`), as a second wall.

use sandspawn_helper::report::{Failure, setup};

use crate::oom_first::WritableProc;
use crate::private_mounts::write_file;
use crate::{describe, last_errno};

/// Enter a new user namespace, map the command's ids, drop every capability.
///
/// `map_ids`: the ids the command runs as in its namespace, mapped onto the helper's own. A host
/// user other than root needs it when the plan mounts: bwrap then runs the helper as uid 0
/// (`--uid 0`), since for any other uid it would itself move the sandbox into a nested user
/// namespace (to mount devpts as root first), from which nothing could be mounted.
///
/// Mapping uid 0 (a root host user) needs CAP_SETFCAP in the parent namespace, which the plan keeps
/// for the helper alone (see the addon's `plan::bwrap::helper_identity`).
///
/// Its writes in proc go through `proc`, a writable copy: the sandbox's own is read-only by now
/// (`oom_first`).
pub fn enter_own(proc: &WritableProc, map_ids: Option<(u32, u32)>, limit: bool) -> Result<(), Failure> {
    // SAFETY: getuid and getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let (inner_uid, inner_gid) = map_ids.unwrap_or((uid, gid));
    // In the sandbox's IPC and pid namespaces, which this namespace owns: the command's will not.
    crate::ipc_budgets::limit(&proc.path("sys"))?;
    crate::task_budget::limit(&proc.path("sys"))?;
    if limit {
        // The count of user namespaces is charged to every ancestor: with a limit of 1 here, the
        // one created next uses it up and none can be created below it.
        limit_user_namespaces(proc)?;
    }
    // SAFETY: unshare with a plain flag.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("entering the command's own user namespace failed: {}", describe(e))));
    }
    write_file(&proc.path("self/uid_map"), &format!("{inner_uid} {uid} 1"))?;
    write_file(&proc.path("self/setgroups"), "deny")?;
    write_file(&proc.path("self/gid_map"), &format!("{inner_gid} {gid} 1"))?;
    crate::capabilities::drop_all()?;
    // SAFETY: as above.
    if limit && unsafe { libc::unshare(libc::CLONE_NEWUSER) } == 0 {
        return Err(setup(0, "creating user namespaces was not disabled as the sandbox requires".into()));
    }
    Ok(())
}

/// `user.max_user_namespaces` set to 1 for this namespace, and its share of the per-user budgets
/// (`user_budgets`), every mount of the plan's left as it is.
///
/// The plan covers `/proc/sys` with a read-only bind, and a `denyRead` mask may lie on it or below
/// it (`/proc/sys`, `/proc/sys/kernel/hostname`). This step once detached `/proc/sys` for the write
/// and bound it again, which took every such mask with it: the command read what they hid (found
/// by an attacker's review), and a mask on `/proc/sys` itself failed every run (the cover under it
/// is read-only). Then the sandbox's own proc was bound over `/proc/sys` for the one write; now the
/// writes go through `proc`, such a copy detached from the tree (`oom_first`): every mount of the
/// plan's is left as it is. Nothing else runs in the sandbox yet.
fn limit_user_namespaces(proc: &WritableProc) -> Result<(), Failure> {
    write_file(&proc.path("sys/user/max_user_namespaces"), "1")?;
    crate::user_budgets::limit(&proc.path("sys"))
}

/// A new anonymous session keyring for the command: keyrings are not namespaced, and the session
/// keyring bwrap inherited is the caller's. The filter refuses the keyring calls themselves; this
/// also keeps the kernel's own lookups on the command's behalf (filesystems, upcalls) away from the
/// caller's keys. A kernel without keyrings (ENOSYS) has nothing to isolate.
pub fn fresh_session_keyring() -> Result<(), Failure> {
    const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
    // SAFETY: keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL) takes no pointer we own.
    if unsafe { libc::syscall(libc::SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, std::ptr::null::<libc::c_char>()) } < 0 {
        let e = last_errno();
        if e != libc::ENOSYS {
            return Err(setup(e, format!("joining a fresh session keyring failed: {}", describe(e))));
        }
    }
    Ok(())
}
