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
}
