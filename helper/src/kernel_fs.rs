//! The kernel pseudo-filesystems (procfs, sysfs, cgroupfs, ...), whose files are the host kernel's
//! settings: never a writable root. Shared by the addon's policy (`policy::kernel_fs`, which refuses
//! such roots when it resolves them) and the helper's Landlock rules (`confine`, which refuses to
//! grant writes on one, for a path swapped into a link to one after the policy was resolved).

/// `statfs` `f_type` and the name `mountinfo` gives, of each kernel filesystem.
pub const KERNEL_FILESYSTEMS: [(u32, &str); 22] = [
    (0x9fa0, "proc"),             // PROC_SUPER_MAGIC
    (0x6265_6572, "sysfs"),       // SYSFS_MAGIC
    (0x0027_e0eb, "cgroup"),      // CGROUP_SUPER_MAGIC
    (0x6367_7270, "cgroup2"),     // CGROUP2_SUPER_MAGIC
    (0x6462_6720, "debugfs"),     // DEBUGFS_MAGIC
    (0x7472_6163, "tracefs"),     // TRACEFS_MAGIC
    (0x7363_6673, "securityfs"),  // SECURITYFS_MAGIC
    (0xcafe_4a11, "bpf"),         // BPF_FS_MAGIC
    (0x6265_6570, "configfs"),    // CONFIGFS_MAGIC
    (0xde5e_81e4, "efivarfs"),    // EFIVARFS_MAGIC
    (0x6165_676c, "pstore"),      // PSTOREFS_MAGIC
    (0x4249_4e4d, "binfmt_misc"), // BINFMTFS_MAGIC: `register` adds a host-wide interpreter
    (0xf97c_ff8c, "selinuxfs"),   // SELINUX_MAGIC
    (0x6573_5543, "fusectl"),     // FUSE_CTL_SUPER_MAGIC
    // Not settings, but the host's objects by another name (found by an attacker's review): the
    // host's POSIX message queues (the sandbox has an IPC namespace of its own), its huge pages,
    // its terminals (a writable `/dev/pts` let a command `chmod 666` root's terminal).
    (0x1980_0202, "mqueue"),      // MQUEUE_MAGIC
    (0x9584_58f6, "hugetlbfs"),   // HUGETLBFS_MAGIC
    (0x1cd1, "devpts"),           // DEVPTS_SUPER_MAGIC
    (0x6759_6969, "rpc_pipefs"),  // RPCAUTH_GSSMAGIC
    (0x6e66_7364, "nfsd"),        // NFSD_MAGIC
    (0x0765_5821, "resctrl"),     // RDTGROUP_SUPER_MAGIC
    (0x6c6f_6f70, "binder"),      // BINDERFS_SUPER_MAGIC
    (0x4341_5d53, "smackfs"),     // SMACK_MAGIC
];

/// The kernel filesystem with this `statfs` type, if it is one.
pub fn named(f_type: u32) -> Option<&'static str> {
    KERNEL_FILESYSTEMS.iter().find(|(m, _)| *m == f_type).map(|(_, name)| *name)
}

/// The kernel filesystem the open descriptor `fd` lies on, if any (`fstatfs`).
#[cfg(target_os = "linux")]
pub fn of_fd(fd: std::os::fd::RawFd) -> Option<&'static str> {
    // SAFETY: a zeroed statfs is valid for fstatfs to fill.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // f_type's integer type differs between libcs; the magic numbers are 32-bit.
    (unsafe { libc::fstatfs(fd, &mut st) } == 0).then(|| named(st.f_type as u32)).flatten()
}

/// Setup fails (`Stage::Changed`: the path is not what the policy resolved) when the writable path
/// `path`, open at `fd`, lies on a kernel filesystem.
#[cfg(target_os = "linux")]
pub fn refuse_writes(fd: std::os::fd::RawFd, path: &str) -> Result<(), crate::report::Failure> {
    match of_fd(fd) {
        None => Ok(()),
        Some(kind) => Err(crate::report::changed(
            libc::EPERM,
            format!("the writable path {path} leads onto {kind}, a kernel filesystem, whose files are the host kernel's settings: refused"),
        )),
    }
}

/// The first mount the sandbox can reach, in its mount table `table` (`/proc/self/mountinfo`
/// inside bwrap), that holds a kernel filesystem writable, as (mount point, filesystem), other
/// than a proc mounted whole at `/proc` (the sandbox's own, bwrap's `--proc`, which bwrap covers
/// with read-only binds of `/proc/sys` and the like; the helper checks that it shows the sandbox's
/// own processes, see its `kernel_mounts`) and a devpts whole at `/dev/pts` (bwrap's `--dev`
/// mounts one of the sandbox's own there; one bound over it fails the helper's remount of it,
/// which needs the capabilities of the user namespace that mounted it), and bwrap's bind of the
/// terminal on its standard input (a host pty, the command's own) at `/dev/console`. A mount another covers whole (a child at the same
/// point: the host's `/proc` under bwrap's when the host has one of its own stacked there, which
/// bwrap's read-only remount of `/` does not reach) cannot be reached and is not looked at.
///
/// Why: bwrap binds a writable root wherever its path leads when bwrap runs. A directory above
/// the root swapped for a link into `/sys` or `/proc` after the addon's policy refused such roots
/// (a concurrent run with that directory in its own writable root can do it) made the sandbox hold
/// the host's sysfs writable, which as root are the host kernel's settings. Whatever the path led
/// to, the mount table says what was mounted.
pub fn writable_in_table(table: &str) -> Option<(String, &'static str)> {
    let mounts: Vec<Mount> = table.lines().filter_map(Mount::parse).collect();
    let covered = |m: &Mount| mounts.iter().any(|c| c.parent == m.id && c.point == m.point && c.id != m.id);
    mounts.iter().filter(|m| m.writable && !covered(m)).find_map(|m| {
        let kind = KERNEL_FILESYSTEMS.iter().find(|(_, name)| *name == m.fstype).map(|(_, name)| *name)?;
        let sandbox_own = (m.root == "/" && matches!((kind, m.point), ("proc", "/proc") | ("devpts", "/dev/pts")))
            || (kind, m.point) == ("devpts", "/dev/console");
        (!sandbox_own).then(|| (crate::mountinfo::unescape(m.point), kind))
    })
}

/// One line of a mount table, as far as `writable_in_table` needs it.
struct Mount<'t> {
    id: &'t str,
    parent: &'t str,
    root: &'t str,
    point: &'t str,
    writable: bool,
    fstype: &'t str,
}

impl<'t> Mount<'t> {
    fn parse(line: &'t str) -> Option<Self> {
        let fields: Vec<&str> = line.split(' ').collect();
        // Optional fields come before the `-` that separates the filesystem's type.
        let sep = fields.iter().position(|f| *f == "-")?;
        Some(Mount {
            id: fields.first()?,
            parent: fields.get(1)?,
            root: fields.get(3)?,
            point: fields.get(4)?,
            writable: fields.get(5)?.split(',').any(|o| o == "rw"),
            fstype: fields.get(sep + 1)?,
        })
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn proc_and_sys_are_kernel_filesystems_and_tmp_is_not() {
        use std::os::fd::AsRawFd;
        let kind = |p: &str| std::fs::File::open(p).ok().and_then(|f| super::of_fd(f.as_raw_fd()));
        assert_eq!(kind("/proc/self"), Some("proc"));
        assert_eq!(kind("/sys/kernel"), Some("sysfs"));
        assert_eq!(kind(std::env::temp_dir().to_str().unwrap()), None);
    }

    /// The Landlock supervisor's check (`confine::add_rule`): a writable path that leads onto a
    /// kernel filesystem (a directory above it swapped for a link to one after the policy refused
    /// such roots: a reviewer's suspicion) gets no write rule.
    #[test]
    fn writes_onto_a_kernel_filesystem_are_refused() {
        use std::os::fd::AsRawFd;
        for path in ["/sys/kernel/mm", "/proc/sys/fs"] {
            let f = std::fs::File::open(path).unwrap();
            let refused = super::refuse_writes(f.as_raw_fd(), path).expect_err(path);
            assert!(refused.message.contains("a kernel filesystem"), "{}", refused.message);
        }
        let tmp = std::fs::File::open(std::env::temp_dir()).unwrap();
        assert!(super::refuse_writes(tmp.as_raw_fd(), "/tmp").is_ok());
    }

    /// What bwrap's own mounts look like in a workspace-write sandbox (its `/proc`, devices,
    /// tmpfs, a writable root): nothing to refuse. A writable root bound onto sysfs, or onto proc
    /// anywhere but whole at `/proc`, is refused; one covered by another is not looked at.
    #[test]
    fn only_the_sandbox_s_own_proc_may_be_a_writable_kernel_filesystem() {
        let sandbox = "1 0 0:40 / / ro,nosuid,nodev,relatime - ext4 /dev/vda rw\n\
                       2 1 0:5 /null /dev/null rw,nosuid,relatime - devtmpfs udev rw\n\
                       3 1 0:50 / /dev/pts rw,nosuid,noexec,relatime - devpts devpts rw\n\
                       4 1 0:51 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n\
                       5 4 0:51 /sys /proc/sys ro,nosuid,nodev,noexec,relatime - proc proc rw\n\
                       6 1 0:21 / /sys ro,nosuid,nodev,noexec,relatime master:7 - sysfs sysfs rw\n\
                       7 1 0:40 /w /w rw,nosuid,nodev,relatime - ext4 /dev/vda rw\n";
        assert_eq!(super::writable_in_table(sandbox), None);
        let console = format!("{sandbox}8 2 0:24 /3 /dev/console rw,nosuid,noexec,relatime - devpts devpts rw\n");
        assert_eq!(super::writable_in_table(&console), None, "bwrap binds the terminal it was given there");
        let sysfs = format!("{sandbox}8 6 0:21 /kernel/mm /sys/kernel/mm rw,nosuid,nodev,relatime - sysfs sysfs rw\n");
        assert_eq!(super::writable_in_table(&sysfs), Some(("/sys/kernel/mm".to_string(), "sysfs")));
        let proc_sys = format!("{sandbox}8 5 0:22 /sys/kernel /proc/sys/kernel rw,relatime - proc proc rw\n");
        assert_eq!(super::writable_in_table(&proc_sys), Some(("/proc/sys/kernel".to_string(), "proc")));
        // Node as pid 1 of its own pid namespace with its own /proc (`unshare --pid --mount-proc`):
        // the host's proc below, rw, covered whole by that /proc and bwrap's.
        let stacked = format!("0 1 0:21 / /proc rw,relatime - proc proc rw\n9 0 0:40 / /proc ro,relatime - proc proc rw\n{}", sandbox.replacen("4 1 0:51", "4 9 0:51", 1));
        assert_eq!(super::writable_in_table(&stacked), None);
        let terminals = format!("{sandbox}8 7 0:24 / /w/pts rw,relatime - devpts devpts rw\n");
        assert_eq!(super::writable_in_table(&terminals), Some(("/w/pts".to_string(), "devpts")));
        let cgroup = format!("{sandbox}8 7 0:30 / /w/a\\040b rw,relatime - cgroup2 cgroup2 rw\n");
        assert_eq!(super::writable_in_table(&cgroup), Some(("/w/a b".to_string(), "cgroup2")));
    }
}
