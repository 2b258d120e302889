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
//!
//! Each tracefs and debugfs mounted elsewhere (perf's or trace-cmd's setups, an admin's
//! `/mnt/trace`) is hidden too, wherever the sandbox's mount table shows one (found by an
//! attacker's review: a tracefs mounted at a directory of the host's own was read, and its
//! `trace_pipe` consumed, from inside): the table the helper read to check bwrap's mounts, no
//! second read.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use sandspawn_helper::mountinfo::{points_and_types, shown_elsewhere};
use sandspawn_helper::report::Failure;

use crate::mount_target::{c, mount, Kind, Target};

/// Each hidden whole: tracefs (`trace_pipe`, the trace buffers, `trace_marker`), debugfs (tracefs
/// again, and the drivers' and the scheduler's state), the CPUs' energy counters (RAPL's
/// `energy_uj`, root-only since the Platypus side channel: it tells instructions apart), zram's
/// control (a READ of `hot_add` makes the host kernel add a block device, `/dev/zramN` and a
/// uevent, one per read, outliving the run: found by an attacker's review; a real directory of
/// the class, not a link into `/sys/devices`), and SLUB's caches (`/sys/kernel/slab`: every
/// cache's object and slab counts, what `slabinfo` below shows, root-only on the host as it is;
/// a read of `objects` or `objects_partial` walks each node's whole partial list holding its list
/// lock with interrupts off, the walk Linux 6.10 bounded for `slabinfo` alone, and the command can
/// make that list long: found by an attacker's review), and idle page tracking
/// (`/sys/kernel/mm/page_idle/bitmap`, root-only: the twin of `/proc/kpageflags` below, by physical
/// page, and a read clears the accessed bits of the host processes' page tables that map each page
/// it looks at; absent where the kernel lacks `CONFIG_IDLE_PAGE_TRACKING`), and the filesystems'
/// own state (`/proc/fs`, which bwrap binds read-only: ext4's `es_shrinker_info` walks every
/// in-memory inode of the filesystem that has cached extents holding the filesystem's spinlock,
/// which each first extent lookup of an inode and memory reclaim take, on a list the command
/// lengthens by reading files of its own there: found by an attacker's review, kern31, with 154,000
/// on the list host processes pinned to a CPU woke up to 25 ms late while one idle-priority reader
/// looped; `mb_groups` loads every block group's bitmaps from the disk; no build reads them).
const DIRS: [&str; 7] = [
    "/sys/kernel/tracing",
    "/sys/kernel/debug",
    "/sys/devices/virtual/powercap",
    "/sys/class/zram-control",
    "/sys/kernel/slab",
    "/sys/kernel/mm/page_idle",
    "/proc/fs",
];

/// Each read empty: the physical page map (flags, use counts, cgroups of every page of the host),
/// the keys the caller may view, the host's timers (with the comm and pid of each owner), the
/// scheduler's state (before Linux 5.13), the kernel's memory (also refused without
/// CAP_SYS_RAWIO, which the command never holds), `vm.stat_refresh` (each read, not only a write,
/// queues work on every host CPU and waits for it all: found by an attacker's review), and three
/// files the host keeps root-only because a read holds a global lock across the whole walk:
/// `pagetypeinfo` walks every zone's free lists with the zone lock held and interrupts off (made
/// root-only in Linux 5.4; 2.3 to 2.7 ms a read here, found by an attacker's review), `slabinfo`
/// every slab cache under the slab mutex, `vmallocinfo` every vmalloc area under its lock (and it
/// shows kernel addresses). And `locks`, world-readable: each read takes the machine's file-lock
/// lock for writing (every `flock` and `fcntl` lock of every process takes it to read) and a
/// spinlock, and walks every lock of the machine from the first to where the read starts in one
/// hold, on a list the command lengthens as it likes with byte-range locks of its own (found by an
/// attacker's review, kern31: 1,000,000 of them and reads at a deep offset, at idle priority, held
/// it 0.55 s a read; host lock calls waited up to 622 ms, and host processes pinned to either CPU
/// woke up to 327 ms late). `lslocks` lists nothing inside. No build reads them.
const FILES: [&str; 12] = [
    "/proc/kpageflags",
    "/proc/kpagecount",
    "/proc/kpagecgroup",
    "/proc/keys",
    "/proc/timer_list",
    "/proc/sched_debug",
    "/proc/kcore",
    "/proc/sys/vm/stat_refresh",
    "/proc/pagetypeinfo",
    "/proc/slabinfo",
    "/proc/vmallocinfo",
    "/proc/locks",
];

/// The filesystems hidden wherever they are mounted: reading tracefs consumes the host's trace
/// buffer, debugfs holds tracefs again and the drivers' state. (securityfs and bpf are left where
/// they are: their reads take nothing from the host, and `/sys/kernel/security` is shown at its
/// own place too.) And hugetlbfs (found by an attacker's review, rfix32): a file of one mounted
/// outside `/dev` (DPDK's `/mnt/huge`, Kubernetes' `/hugepages-2Mi`) mapped private and writable,
/// from a descriptor opened only for reading, reserves its range from the machine's huge page pool
/// with no flag the seccomp filter could refuse (`MAP_HUGETLB`): a read-only run took a pool of two
/// pages and the host's own `mmap(MAP_HUGETLB)` got ENOMEM while it lived.
const KINDS: [&str; 3] = ["tracefs", "debugfs", "hugetlbfs"];

/// The masks; after `host_objects::read_only` (the `/dev/null` bound here is read-only by then,
/// and the proc entries' read-only binds lie below the masks). `table`: the sandbox's mount table
/// as bwrap left it.
pub fn mask(table: &[u8]) -> Result<(), Failure> {
    for path in DIRS {
        if let Some(dir) = present(path, Kind::Dir)? {
            hide_dir(&dir, path)?;
        }
    }
    let null = Target::open("/dev/null", Kind::Any, "the sandbox's /dev/null")?;
    if !null.is_device() {
        return Err(sandspawn_helper::report::setup(libc::ENODEV, "the sandbox's /dev/null is not a device: the host's kernel files cannot be hidden".to_string()));
    }
    for path in FILES {
        if let Some(file) = present(path, Kind::Any)? {
            hide_file(&null, &file, path)?;
        }
    }
    for point in elsewhere(table).into_iter().chain(mirrored(table)) {
        let shown = Path::new(OsStr::from_bytes(&point));
        let name = shown.display().to_string();
        // Hidden already when below a mask above (tracefs under debugfs): ENOENT then.
        let Some(found) = reachable(shown)? else { continue };
        match found.is_dir() {
            true => hide_dir(&found, &name)?,
            false => hide_file(&null, &found, &name)?,
        }
    }
    Ok(())
}

/// An empty read-only tmpfs over the directory `dir` (at `path`).
fn hide_dir(dir: &Target, path: &str) -> Result<(), Failure> {
    let tmpfs = c("tmpfs")?;
    let mode = c("mode=0555")?;
    let hidden = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    mount(Some(&tmpfs), &dir.proc_path(), Some(&tmpfs), hidden, Some(&mode), &format!("hiding {path}"))
}

/// The sandbox's `/dev/null` (`null`) bound read-only over `file` (at `path`).
///
/// A bind mount copies its source mount's flags, and `host_objects::read_only` made `/dev/null`'s
/// read-only before: the fresh bind is read-only already and the remount changed nothing, one mount
/// call a file (a dozen a run, each taking the kernel's mount locks that every sandbox on the
/// machine takes). The bind's own flags are read, not assumed: one that is not read-only (a plan
/// whose `/dev/null` is writable) is still remounted.
fn hide_file(null: &Target, file: &Target, path: &str) -> Result<(), Failure> {
    mount(Some(&null.proc_path()), &file.proc_path(), None, libc::MS_BIND, None, &format!("hiding {path}"))?;
    let bound = Target::open(path, Kind::Any, "the hidden file")?;
    if bound.is_read_only(path)? {
        return Ok(());
    }
    let flags = bound.mount_flags(path)?;
    mount(None, &bound.proc_path(), None, libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags, None, &format!("making {path}'s mask read-only"))
}

/// The mount points of `KINDS` in `table` but `DIRS` (hidden already), each once (a stack of them
/// is hidden by one mask).
fn elsewhere(table: &[u8]) -> Vec<Vec<u8>> {
    let mut points: Vec<Vec<u8>> = Vec::new();
    for (point, kind) in points_and_types(table) {
        let fixed = DIRS.iter().any(|d| d.as_bytes() == point.as_slice());
        if KINDS.contains(&kind.as_str()) && !fixed && !points.contains(&point) {
            points.push(point);
        }
    }
    points
}

/// Where another procfs or sysfs of `table` shows a file or directory of `DIRS` and `FILES`: the
/// masks are paths below `/proc` and `/sys`, and a procfs or sysfs mounted elsewhere (a build
/// chroot's `/proc` and `/sys`, as schroot, pbuilder and debootstrap set up, which bwrap's
/// read-only `/` carries in) showed each of them again (found by an attacker's review, fix32: its
/// `locks` walked the machine's whole lock list, its `sys/vm/stat_refresh` queued work on every
/// host CPU). See `mountinfo::shown_elsewhere`; a path missing there is skipped (`reachable`).
fn mirrored(table: &[u8]) -> Vec<Vec<u8>> {
    let fixed: Vec<&str> = DIRS.iter().chain(FILES.iter()).copied().collect();
    let mut paths = shown_elsewhere(table, "proc", "/proc", &fixed);
    paths.extend(shown_elsewhere(table, "sysfs", "/sys", &fixed));
    paths
}

/// A mount point of the table opened; None when it is gone from sight (below a mask above) or
/// the helper, which holds more than the command ever does, cannot reach it (a tracefs in a
/// directory only its owner may enter, when the sandbox maps no such owner): the command cannot
/// either, and failing every run on such a host would refuse what it cannot read anyway.
fn reachable(path: &Path) -> Result<Option<Target>, Failure> {
    match Target::open(path, Kind::Any, "a kernel filesystem's mount point") {
        Ok(t) => Ok(Some(t)),
        Err(f) if f.errno == libc::ENOENT || f.errno == libc::EACCES => Ok(None),
        Err(f) => Err(f),
    }
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

