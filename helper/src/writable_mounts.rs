//! Which mount of the sandbox's mount table (`/proc/self/mountinfo` inside bwrap, before the
//! helper's own mounts) holds a kernel filesystem or the host's devices writable, other than the
//! sandbox's own: the helper's `kernel_mounts` refuses to go on when one does.
//!
//! Why: bwrap binds a writable root wherever its path leads when bwrap runs. A directory above
//! the root swapped for a relative link after the addon's policy refused such roots (a concurrent
//! run with that directory in its own writable root can do it) made the sandbox hold the host's
//! sysfs writable (as root, the host kernel's settings), and, in a review of the first version of
//! this check, the host's `/dev` (its devpts, so root's terminals, and `/dev/net/tun`). Whatever
//! the path led to, the mount table says what was mounted.

use crate::kernel_fs::KERNEL_FILESYSTEMS;
use crate::mountinfo::{mounts, Mount};

/// The device nodes bwrap's `--dev` binds from the host's `/dev`, each at its own name.
const BWRAP_DEVICES: [&str; 6] = ["null", "zero", "full", "random", "urandom", "tty"];

/// The first mount the sandbox can reach that holds a kernel filesystem (or the host's devtmpfs)
/// writable and is not the sandbox's own (`sandbox_own`), as (mount point, filesystem).
pub fn writable_in_table(table: &str) -> Option<(String, &'static str)> {
    let mounts: Vec<Mount> = mounts(table).collect();
    let reachable = reachable(&mounts);
    let visible = || mounts.iter().zip(&reachable).filter(|(_, r)| **r).map(|(m, _)| m);
    let dev = visible().find(|m| m.point == "/dev").filter(|m| bwrap_s_dev(m, &mounts)).map(|m| m.id);
    visible().filter(|m| m.writable).find_map(|m| {
        let kind = kind_of(m.fstype)?;
        (!sandbox_own(m, kind, dev)).then(|| (m.point.clone(), kind))
    })
}

/// bwrap's `--dev`, the parent of every device it binds and of its devpts: a tmpfs it made, so
/// a superblock no other mount shows (the host's `/dev`, even a tmpfs one, also lies under the
/// read-only copy of `/`), and read-only (every bwrap plan ends with `--remount-ro /dev`). Found
/// by an attacker's review: any tmpfs at `/dev` passed, so on a host whose `/dev` is a tmpfs, a
/// root swapped onto it made the host's devpts and devices pass as the sandbox's own.
fn bwrap_s_dev(m: &Mount, mounts: &[Mount]) -> bool {
    m.fstype == "tmpfs" && !m.writable && mounts.iter().filter(|o| o.device == m.device).count() == 1
}

/// A kernel filesystem's name, or `devtmpfs` (the host's devices: a tmpfs by its `statfs` type,
/// so only its mount table name tells it).
fn kind_of(fstype: &str) -> Option<&'static str> {
    KERNEL_FILESYSTEMS.iter().map(|(_, name)| *name).chain(["devtmpfs"]).find(|name| *name == fstype)
}

/// bwrap's own writable kernel mounts: its proc whole at `/proc` (the helper checks that it shows
/// the sandbox's own processes), and in its `/dev` tmpfs (`dev`) its devpts whole at `/dev/pts`,
/// the terminal on its standard input at `/dev/console` (a host pty, the command's own: one node,
/// its root like `/3`, never a whole devpts, whose root is `/`), and the host's device nodes it
/// binds each at its own name.
fn sandbox_own(m: &Mount, kind: &str, dev: Option<&str>) -> bool {
    let in_dev = dev == Some(m.parent);
    match (kind, m.point.as_str()) {
        ("proc", "/proc") => m.root == "/",
        ("devpts", "/dev/pts") => in_dev && m.root == "/",
        ("devpts", "/dev/console") => in_dev && m.root != "/",
        ("devtmpfs", point) => in_dev && point.strip_prefix("/dev/").is_some_and(|n| BWRAP_DEVICES.contains(&n) && m.root.strip_prefix('/') == Some(n)),
        _ => false,
    }
}

/// The mount points of `table` that a path reaches (`reachable`): the review mode puts back on top
/// of its overlay only mounts a path leads to. A mount covered by one on a directory above it
/// (a host's `/usr/bin/bwrap` hidden by a bind, then `/usr` overlaid whole) is no mount inside the
/// reviewed workspace any more; taken for one, its path led to the cover's directory, writable,
/// and the run was refused.
pub fn reachable_points(table: &str) -> Vec<String> {
    let mounts: Vec<Mount> = mounts(table).collect();
    mounts.iter().zip(reachable(&mounts)).filter(|(_, r)| *r).map(|(m, _)| m.point.clone()).collect()
}

/// Whether each mount can be reached by a path: not covered whole by another (a child at the same
/// point), nor lying in a mount that is (the host's `/dev/pts` in the host's `/dev`, which bwrap's
/// `/dev` covers; the host's `/proc` under bwrap's with `unshare --pid --mount-proc`). The mount
/// that covers another is reached where the covered one would have been.
///
/// Nor shadowed: a mount beside it (the same parent) on a directory above it was mounted later and
/// hides it (`/usr/bin` mounted, then `/usr` overlaid whole: paths reach the overlay's `bin`). Had
/// that one been mounted first, this one would lie in it, its parent.
fn reachable(mounts: &[Mount]) -> Vec<bool> {
    let above = |outer: &str, inner: &str| outer != inner && (outer == "/" || inner.strip_prefix(outer).is_some_and(|rest| rest.starts_with('/')));
    let shadowed = |m: &Mount| mounts.iter().any(|c| c.parent == m.parent && c.id != m.id && c.id != m.parent && above(&c.point, &m.point));
    let covered = |m: &Mount| shadowed(m) || mounts.iter().any(|c| c.parent == m.id && c.point == m.point && c.id != m.id);
    let parent = |m: &Mount| mounts.iter().find(|p| p.id == m.parent && p.id != m.id);
    let walk = |m: &Mount| {
        let (mut at, mut covering) = (m, false);
        // A chain longer than the table is a cycle, which no real table has: not reachable.
        for _ in 0..=mounts.len() {
            if !covering && covered(at) {
                return false;
            }
            let Some(p) = parent(at) else { return true };
            covering = at.point == p.point;
            at = p;
        }
        false
    };
    mounts.iter().map(walk).collect()
}

#[cfg(test)]
mod tests {
    use super::{reachable_points, writable_in_table};

    /// Found by CI: a host whose `/usr/bin` is a mount (`.ci/without-system-bwrap` overlays it),
    /// with `/usr` then overlaid whole (a test's private namespace): review mode took the hidden
    /// `/usr/bin` for a mount inside the reviewed `/usr` and refused the run.
    #[test]
    fn a_mount_hidden_by_a_later_one_above_it_is_not_reachable() {
        let table = "1 0 8:1 / / rw - ext4 /dev/sda rw\n\
                     2 1 0:30 / /usr/bin ro - overlay o ro\n\
                     3 1 0:31 / /usr rw - overlay o rw\n\
                     4 3 0:32 / /usr/src/m ro - tmpfs t ro\n\
                     5 1 0:33 / /usrx ro - tmpfs t ro\n";
        assert_eq!(reachable_points(table), vec!["/", "/usr", "/usr/src/m", "/usrx"]);
    }

    /// A workspace-write sandbox as bwrap leaves it: the host's `/` read-only with the host's
    /// `/dev` (and its devpts, rw) covered by bwrap's `/dev` tmpfs (read-only: its `--remount-ro
    /// /dev`), bwrap's device binds, devpts, `/dev/shm`, its `/proc`, a writable root.
    const SANDBOX: &str = "1 0 0:40 / / ro,nosuid,nodev,relatime - ext4 /dev/vda rw\n\
                           2 1 0:5 / /dev ro,nosuid,relatime - devtmpfs udev rw\n\
                           3 2 0:26 / /dev/pts rw,nosuid,noexec,relatime - devpts devpts rw\n\
                           4 2 0:45 / /dev ro,nosuid,nodev - tmpfs tmpfs rw\n\
                           5 4 0:5 /null /dev/null rw,nosuid,relatime - devtmpfs udev rw\n\
                           6 4 0:5 /tty /dev/tty rw,nosuid,relatime - devtmpfs udev rw\n\
                           7 4 0:50 / /dev/pts rw,nosuid,noexec,relatime - devpts devpts rw\n\
                           8 4 0:51 / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw\n\
                           9 1 0:52 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n\
                           10 9 0:52 /sys /proc/sys ro,nosuid,nodev,noexec,relatime - proc proc rw\n\
                           11 1 0:21 / /sys ro,nosuid,nodev,noexec,relatime master:7 - sysfs sysfs rw\n\
                           12 1 0:40 /w /w rw,nosuid,nodev,relatime - ext4 /dev/vda rw\n";

    #[test]
    fn bwrap_s_own_mounts_are_not_refused() {
        assert_eq!(writable_in_table(SANDBOX), None);
        let console = format!("{SANDBOX}13 4 0:26 /3 /dev/console rw,nosuid,noexec,relatime - devpts devpts rw\n");
        assert_eq!(writable_in_table(&console), None, "bwrap binds the terminal it was given there");
        // Node as pid 1 of its own pid namespace with its own /proc (`unshare --pid --mount-proc`):
        // the host's proc below, rw, covered whole by that /proc and bwrap's.
        let stacked = SANDBOX.replacen("9 1 0:52", "9 21 0:52", 1) + "20 1 0:22 / /proc rw - proc proc rw\n21 20 0:23 / /proc ro - proc proc rw\n";
        assert_eq!(writable_in_table(&stacked), None);
    }

    #[test]
    fn a_writable_root_swapped_onto_a_kernel_filesystem_is_refused() {
        let refused = |extra: &str| writable_in_table(&format!("{SANDBOX}{extra}\n"));
        let sysfs = refused("13 11 0:21 /kernel/mm /sys/kernel/mm rw,nosuid,nodev,relatime - sysfs sysfs rw");
        assert_eq!(sysfs, Some(("/sys/kernel/mm".to_string(), "sysfs")));
        let proc_sys = refused("13 10 0:22 /sys/kernel /proc/sys/kernel rw,relatime - proc proc rw");
        assert_eq!(proc_sys, Some(("/proc/sys/kernel".to_string(), "proc")));
        let cgroup = refused("13 12 0:30 / /w/a\\040b rw,relatime - cgroup2 cgroup2 rw");
        assert_eq!(cgroup, Some(("/w/a b".to_string(), "cgroup2")));
        let terminals = refused("13 12 0:26 / /w/pts rw,relatime - devpts devpts rw");
        assert_eq!(terminals, Some(("/w/pts".to_string(), "devpts")));
    }

    /// Found by a review of the first version, which let any devtmpfs and any devpts at
    /// `/dev/pts` pass: a root swapped onto the host's `/dev` (bwrap's `--remount-ro /dev` makes
    /// it read-only, not its submounts: the host's devpts, so root's terminals, and `/dev/shm`),
    /// or onto `/dev/net`.
    #[test]
    fn the_host_s_devices_swapped_in_are_refused() {
        let whole = format!("{SANDBOX}13 4 0:5 / /dev ro,nosuid,relatime - devtmpfs udev rw\n14 13 0:26 / /dev/pts rw,nosuid,noexec,relatime - devpts devpts rw\n15 13 0:27 / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw\n");
        assert_eq!(writable_in_table(&whole), Some(("/dev/pts".to_string(), "devpts")));
        let net = format!("{SANDBOX}13 4 0:5 /net /dev/net rw,nosuid,relatime - devtmpfs udev rw\n");
        assert_eq!(writable_in_table(&net), Some(("/dev/net".to_string(), "devtmpfs")));
        let elsewhere = format!("{SANDBOX}13 12 0:5 / /w/dev rw,nosuid,relatime - devtmpfs udev rw\n");
        assert_eq!(writable_in_table(&elsewhere), Some(("/w/dev".to_string(), "devtmpfs")));
        let null_elsewhere = format!("{SANDBOX}13 4 0:5 /sda /dev/null2 rw,nosuid,relatime - devtmpfs udev rw\n");
        assert!(writable_in_table(&null_elsewhere).is_some());
    }

    /// Found by an attacker's review of the check above, which took the first tmpfs at `/dev` for
    /// bwrap's: on a host whose own `/dev` is a tmpfs (a container, a nested sandbox), a root
    /// swapped onto the host's `/dev` made the host's tmpfs pass as bwrap's, and with it the host's
    /// devpts (root's terminals), its device nodes and a devpts at `/dev/console`. The table is
    /// the one seen on such a host: its `/dev` (0:40) under the read-only copy of `/` and bound
    /// again over bwrap's (0:45).
    const HOST_TMPFS_DEV: &str = "108 75 254:0 / / ro,nosuid,nodev,relatime - ext4 /dev/vda rw\n\
                                  123 108 0:6 / /dev ro,nosuid,nodev,relatime - devtmpfs devtmpfs rw\n\
                                  128 123 0:40 / /dev ro,nosuid,nodev,relatime - tmpfs tmpfs rw,mode=755\n\
                                  135 128 0:41 / /dev/pts ro,nosuid,nodev,relatime - devpts devpts rw,mode=620,ptmxmode=666\n\
                                  137 128 0:45 / /dev rw,nosuid,nodev,relatime - tmpfs tmpfs rw,mode=755\n\
                                  138 137 0:6 /null /dev/null rw,nosuid,relatime - devtmpfs devtmpfs rw\n\
                                  144 137 0:46 / /dev/pts rw,nosuid,noexec,relatime - devpts devpts rw,mode=620,ptmxmode=666,max=256\n\
                                  152 137 0:48 / /dev/shm rw,nosuid,nodev,relatime - tmpfs tmpfs rw\n\
                                  160 137 0:40 / /dev rw,nosuid,nodev,relatime - tmpfs tmpfs rw,mode=755\n\
                                  161 160 0:6 /null /dev/null rw,nosuid,nodev,relatime - devtmpfs devtmpfs rw\n\
                                  162 160 0:41 / /dev/pts rw,nosuid,nodev,relatime - devpts devpts rw,mode=620,ptmxmode=666\n\
                                  163 160 0:42 / /dev/shm rw,nosuid,nodev,relatime - tmpfs tmpfs rw\n\
                                  164 160 0:43 /3 /dev/console rw,nosuid,nodev,relatime - devpts devpts rw\n";

    #[test]
    fn a_host_s_tmpfs_dev_swapped_in_does_not_pass_as_bwrap_s() {
        let null = Some(("/dev/null".to_string(), "devtmpfs"));
        assert_eq!(writable_in_table(HOST_TMPFS_DEV), null, "the host's device node");
        let no_null = HOST_TMPFS_DEV.replacen("/dev/null rw", "/dev/null ro", 2);
        assert_eq!(writable_in_table(&no_null), Some(("/dev/pts".to_string(), "devpts")), "the host's devpts");
        // As bwrap really leaves it: its last `--remount-ro /dev` made the host's bind read-only
        // (not what it holds); its own tmpfs, covered, stayed writable.
        let remounted = HOST_TMPFS_DEV.replacen("160 137 0:40 / /dev rw", "160 137 0:40 / /dev ro", 1);
        assert_eq!(writable_in_table(&remounted), null);
        // A tmpfs of its own at `/dev` but left writable is not bwrap's either (bwrap's is read-only).
        let writable_own = SANDBOX.replacen("4 2 0:45 / /dev ro", "4 2 0:45 / /dev rw", 1);
        assert_eq!(writable_in_table(&writable_own), Some(("/dev/null".to_string(), "devtmpfs")));
    }

    /// bwrap binds one pty at `/dev/console` (its root a single node, like `/3`), never a whole
    /// devpts: that would hold every terminal of its instance.
    #[test]
    fn a_whole_devpts_at_dev_console_is_refused() {
        let whole = format!("{SANDBOX}13 4 0:26 / /dev/console rw,nosuid,noexec,relatime - devpts devpts rw\n");
        assert_eq!(writable_in_table(&whole), Some(("/dev/console".to_string(), "devpts")));
    }
}
