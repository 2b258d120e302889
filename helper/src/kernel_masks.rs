//! The host kernel's state that `/sys` and `/proc` show and no build needs, hidden inside, as
//! Docker's masked paths are. Found by an attacker's review: a run as root read, and so consumed,
//! the host's ftrace buffer (`trace_pipe` on the host's tracefs, which the read-only `/` binds:
//! a read takes the events a host tracer was waiting for), and read `/proc/kpageflags` and its
//! siblings (the host's physical page map, a help to kernel exploits). Read-only mounts stop no
//! read, and reading there has effects or leaks.
//!
//! A directory gets an empty read-only tmpfs over it (its mounts below, tracefs under debugfs, are
//! hidden with it: one mount for the tree), a file the sandbox's `/dev/null` bound read-only (it
//! reads empty). A path this kernel or a `denyRead` mask does not show is left as it is. Every
//! plan, for every user: a user other than root cannot read most of them, but `timer_list` is
//! world-readable, and a dozen mount calls cost microseconds.

use sandspawn_helper::report::Failure;

use crate::mount_target::{c, mount, Kind, Target};

/// Each hidden whole: tracefs (`trace_pipe`, the trace buffers, `trace_marker`), debugfs (tracefs
/// again, and the drivers' and the scheduler's state), the CPUs' energy counters (RAPL's
/// `energy_uj`, root-only since the Platypus side channel: it tells instructions apart).
const DIRS: [&str; 3] = ["/sys/kernel/tracing", "/sys/kernel/debug", "/sys/devices/virtual/powercap"];

/// Each read empty: the physical page map (flags, use counts, cgroups of every page of the host),
/// the keys the caller may view, the host's timers (with the comm and pid of each owner), the
/// scheduler's state (before Linux 5.13), the kernel's memory (also refused without
/// CAP_SYS_RAWIO, which the command never holds).
const FILES: [&str; 7] = ["/proc/kpageflags", "/proc/kpagecount", "/proc/kpagecgroup", "/proc/keys", "/proc/timer_list", "/proc/sched_debug", "/proc/kcore"];

/// The masks; after `host_objects::read_only` (the `/dev/null` bound here is read-only by then,
/// and the proc entries' read-only binds lie below the masks).
pub fn mask() -> Result<(), Failure> {
    let tmpfs = c("tmpfs")?;
    let mode = c("mode=0555")?;
    let hidden = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    for path in DIRS {
        if let Some(dir) = present(path, Kind::Dir)? {
            mount(Some(&tmpfs), &dir.proc_path(), Some(&tmpfs), hidden, Some(&mode), &format!("hiding {path}"))?;
        }
    }
    let null = Target::open("/dev/null", Kind::Any, "the sandbox's /dev/null")?;
    if !null.is_device() {
        return Err(sandspawn_helper::report::setup(libc::ENODEV, "the sandbox's /dev/null is not a device: the host's kernel files cannot be hidden".to_string()));
    }
    for path in FILES {
        if let Some(file) = present(path, Kind::Any)? {
            mount(Some(&null.proc_path()), &file.proc_path(), None, libc::MS_BIND, None, &format!("hiding {path}"))?;
            let bound = Target::open(path, Kind::Any, "the hidden file")?;
            let flags = bound.mount_flags(path)?;
            mount(None, &bound.proc_path(), None, libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags, None, &format!("making {path}'s mask read-only"))?;
        }
    }
    Ok(())
}

/// `path` opened, or None when nothing is there to hide (this kernel has no such entry, or a
/// `denyRead` mask hides it already).
fn present(path: &str, kind: Kind) -> Result<Option<Target>, Failure> {
    match Target::open(path, kind, "the kernel's file") {
        Ok(t) => Ok(Some(t)),
        Err(f) if f.errno == libc::ENOENT => Ok(None),
        Err(f) => Err(f),
    }
}
