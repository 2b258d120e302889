//! What the sandspawn addon and its in-sandbox helper share: the helper's versioned command line
//! (`protocol`), the resource limits it sets (`rlimit`), the seccomp filter generator (`seccomp`),
//! the failure report the helper sends back (`report`) and the proxy variables of the network
//! allow-list (`proxy_env`), the options of the sandbox's devpts (`devpts`), the Landlock rules
//! (`landlock`), the `/proc/<pid>/stat` reader (`proc_stat`) and the offline `nsswitch.conf`
//! (`offline_names`). Pure code: the binary in
//! `main.rs` does the system calls, except for the placeholders over missing protected names
//! (`placeholder`), whose few calls the addon and the helper must make alike, `fstatat` without
//! following links (`stat_at`), which both make in their descriptor-relative walks, opening a path
//! without following a link anywhere on it (`no_symlinks`), where both take and check the identity
//! of a writable root, whether a descriptor is a mount's root (`mount_root`, Linux only), and `flock`
//! retried on a signal (`file_lock`), which both take, a thread's capability sets (`capability_sets`,
//! Linux only), which the helper drops and the addon's tests lower, and signalling a process met in `/proc`
//! through a pidfd (`pid_signal`, Linux only), a process's state from its threads (`threads`,
//! Linux only), reading a user namespace's id map (`id_map`) and telling terminals apart (`terminal_identity`, Linux only), kept here so that a unit test can reach them; and `getaddrinfo`, which the helper
//! calls for the addon's proxy (`--resolve`) and whose answer format both sides read.

/// Tests that fork hold this shared; tests that judge a pipe by who holds its ends hold it alone.
/// A forked child holds every descriptor of the test binary while it lives (a `sleep` spawned
/// by another test, too, until its exec), so a pipe's end closed by one test stayed open in a
/// child of another: one CI run of the helper's tests failed so.
#[cfg(test)]
pub(crate) fn forks(alone: bool) -> ForkGuard {
    static FORKS: std::sync::RwLock<()> = std::sync::RwLock::new(());
    if alone {
        ForkGuard::Alone(FORKS.write().unwrap_or_else(std::sync::PoisonError::into_inner))
    } else {
        ForkGuard::Shared(FORKS.read().unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

/// What `forks` holds until dropped.
#[cfg(test)]
pub(crate) enum ForkGuard {
    Alone(#[allow(dead_code)] std::sync::RwLockWriteGuard<'static, ()>),
    Shared(#[allow(dead_code)] std::sync::RwLockReadGuard<'static, ()>),
}

pub mod ancestors;
pub mod args_pipe;
/// The last check before the command runs under bwrap (the binary's step).
#[cfg(target_os = "linux")]
pub mod bwrap_alive;
#[cfg(target_os = "linux")]
pub mod capability_sets;
pub mod devpts;
pub mod file_lock;
pub mod getaddrinfo;
pub mod id_map;
pub mod kernel_fs;
pub mod kernel_release;
pub mod landlock;
pub mod mountinfo;
pub mod mount_points;
#[cfg(target_os = "linux")]
pub mod mount_root;
pub mod no_symlinks;
pub mod offline_names;
pub mod own_mode;
#[cfg(target_os = "linux")]
pub mod pid_signal;
pub mod placeholder;
pub mod proc_stat;
pub mod protocol;
pub mod proxy_env;
pub mod report;
pub mod rlimit;
pub mod seccomp;
/// What a plan's helper in front of bwrap makes for `bwrap_alive` (the binary's step).
#[cfg(target_os = "linux")]
pub mod status_pair;
/// The helper binary's global allocator (declared in main.rs only; inert in the addon).
pub mod setup_alloc;
pub mod stat_at;
#[cfg(target_os = "linux")]
pub mod terminal_identity;
#[cfg(target_os = "linux")]
pub mod threads;
pub mod writable_mounts;
