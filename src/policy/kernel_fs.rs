//! Kernel pseudo-filesystems (procfs, sysfs, cgroupfs, debugfs, ...) are never writable roots.
//! Their files are the host kernel's settings, not a workspace's: when the host runs as root the
//! command runs as uid 0 mapped to the real root, and most of these files are judged by their mode
//! alone (no capability is asked), so a writable root there changed host-wide settings (found by an
//! attacker's review: `writableRoots: ['/sys/kernel/mm/transparent_hugepage/khugepaged']`, then a
//! write to `pages_to_scan`, which the CLI's denial line had suggested). Neither may a root hold
//! one: `/` binds the host's `/proc` and `/sys` along with it.

use std::path::Path;

use crate::error::Result;

// The kernel pseudo-filesystems (the helper's list: its Landlock rules refuse them too).
#[cfg(target_os = "linux")]
use sandspawn_helper::kernel_fs::KERNEL_FILESYSTEMS;

/// The host's mount table, read at most once per resolution: for the kernel filesystems below a
/// root (here) and for a system tree a root reaches through a bind mount (`tree_identity`).
#[derive(Default)]
pub(crate) struct MountTable {
    #[cfg(target_os = "linux")]
    table: std::cell::OnceCell<std::io::Result<Vec<u8>>>,
    /// Its kernel pseudo-filesystems' mount points.
    #[cfg(target_os = "linux")]
    kernel: std::cell::OnceCell<Vec<(std::path::PathBuf, String)>>,
}

/// `ERR_SANDBOX_INVALID_OPTIONS` when the writable root `path` (named by `option`; `path` may not
/// exist yet) lies on a kernel pseudo-filesystem, or under `/proc` or `/sys` (inside the sandbox
/// those are the kernel's whatever the host has there), or holds one. macOS has none of these.
pub(crate) fn refuse_kernel_root(option: &str, path: &Path, mounts: &MountTable) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        // Judged where it leads: a symlink to /sys is /sys.
        let path = super::paths::canonical_lenient(option, path).map_or_else(|_| path.to_path_buf(), |l| l.path);
        if let Some(kind) = kernel_fs_at(&path) {
            return Err(refusal(option, &format!("{} lies on {kind}, a kernel filesystem", path.display())));
        }
        if let Some((at, kind)) = mounts.below(&path)? {
            return Err(refusal(option, &format!("{} holds {} ({kind}, a kernel filesystem)", path.display(), at.display())));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (option, path, mounts);
    Ok(())
}

/// As `refuse_kernel_root`, for a root that exists: `kept`, what `given` resolved to (the path that
/// is bound), is checked in full; `given` by its name alone. A name under `/proc`, `/sys` or `/dev`
/// is refused wherever it leads: `/proc/self/cwd` and `/dev/fd/3` lead through links of /proc,
/// wherever the process following them is, which `refuse_kernel_root` judges by the name too.
pub(crate) fn refuse_kept_root(option: &str, given: &Path, kept: &Path, mounts: &MountTable) -> Result<()> {
    refuse_kernel_root(option, kept, mounts)?;
    #[cfg(target_os = "linux")]
    if let Some(kind) = kernel_fs_named(given) {
        return Err(refusal(option, &format!("{} lies on {kind}, a kernel filesystem", given.display())));
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn refusal(option: &str, what: &str) -> crate::error::SandboxError {
    crate::error::SandboxError::invalid(
        option,
        format!(
            "writable root {what}: its files are the kernel's settings, which are the host's, not the workspace's \
             (a command running as root could change them for the whole host); kernel settings cannot be made writable from a sandbox"
        ),
    )
}

/// The kernel filesystem `path` lies on (its nearest existing directory when it does not exist),
/// if any. Under `/proc` or `/sys`: that one, whatever the host has mounted there. Under `/dev`
/// but not `/dev/shm`: the host's devices (devtmpfs is a tmpfs by its type; a writable `/dev`
/// was bound read-only anyway, with the host's `/dev/pts` and `/dev/mqueue` in it writable).
#[cfg(target_os = "linux")]
fn kernel_fs_at(path: &Path) -> Option<&'static str> {
    let existing = path.ancestors().find(|a| a.symlink_metadata().is_ok())?;
    let magic = statfs_type(existing);
    magic.and_then(sandspawn_helper::kernel_fs::named).or_else(|| kernel_fs_named(path))
}

/// The kernel filesystem `path` lies on by its name: under `/dev` but not `/dev/shm`, `/proc` or `/sys`.
#[cfg(target_os = "linux")]
fn kernel_fs_named(path: &Path) -> Option<&'static str> {
    let devices = (path.starts_with("/dev") && !path.starts_with("/dev/shm")).then_some("devtmpfs");
    devices.or_else(|| [("/proc", "proc"), ("/sys", "sysfs")].into_iter().find(|(top, _)| path.starts_with(top)).map(|(_, name)| name))
}

#[cfg(target_os = "linux")]
fn statfs_type(path: &Path) -> Option<u32> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed statfs is valid; a valid C string.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // f_type's integer type differs between libcs; the magic numbers are 32-bit.
    (unsafe { libc::statfs(c.as_ptr(), &mut st) } == 0).then_some(st.f_type as u32)
}

#[cfg(target_os = "linux")]
impl MountTable {
    /// The table's bytes. One that cannot be read fails the check asking (`what` for): it was
    /// taken as no mount at all.
    pub(crate) fn bytes(&self, what: &str) -> Result<&[u8]> {
        let read = self.table.get_or_init(|| crate::whole_file::read("/proc/self/mountinfo", crate::whole_file::MOUNT_TABLE));
        read.as_deref().map_err(|e| {
            let why = format!("reading /proc/self/mountinfo ({what}): {}", sandspawn_helper::report::os_words(e));
            crate::error::SandboxError::setup_failed_for(why, "mount /proc, or run where the mount table can be read")
        })
    }

    /// A kernel filesystem mounted strictly below `root`, and its kind.
    fn below(&self, root: &Path) -> Result<Option<(&Path, &str)>> {
        let table = self.bytes(&format!("to find kernel filesystems mounted below {}", root.display()))?;
        let mounts = self.kernel.get_or_init(|| kernel_mounts(table));
        Ok(mounts.iter().find(|(at, _)| at != root && at.starts_with(root)).map(|(at, kind)| (at.as_path(), kind.as_str())))
    }
}

/// The mount points in `mountinfo` text whose filesystem is a kernel one.
#[cfg(target_os = "linux")]
fn kernel_mounts(mountinfo: &[u8]) -> Vec<(std::path::PathBuf, String)> {
    use std::os::unix::ffi::OsStringExt;
    let kernel = |fstype: &str| KERNEL_FILESYSTEMS.iter().any(|(_, name)| *name == fstype);
    let all = sandspawn_helper::mountinfo::points_and_types(mountinfo).into_iter();
    all.filter(|(_, t)| kernel(t)).map(|(at, t)| (std::ffi::OsString::from_vec(at).into(), t)).collect()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn refused(p: &str) -> Option<String> {
        refuse_kernel_root("sandbox.writableRoots[0]", Path::new(p), &MountTable::default()).err().map(|e| e.message)
    }

    #[test]
    fn roots_on_kernel_filesystems_are_refused_naming_the_path_and_kind() {
        let m = refused("/sys/kernel/mm").expect("sysfs");
        assert!(m.starts_with("options.sandbox.writableRoots[0]: writable root /sys/kernel/mm lies on sysfs, a kernel filesystem"), "{m}");
        assert!(m.contains("the host's, not the workspace's"), "{m}");
        assert!(refused("/proc/sys/kernel").unwrap().contains("/proc/sys/kernel lies on proc"));
        assert!(refused("/proc/irq").unwrap().contains("lies on proc"));
        assert!(refused("/proc/sandspawn-missing/deeper").unwrap().contains("/proc/sandspawn-missing/deeper lies on proc"), "missing");
        assert!(refused("/sys/kernel/sandspawn-missing").unwrap().contains("lies on sysfs"), "missing");
        // Found by a review: the host's terminals and message queues, and `/dev` itself.
        assert!(refused("/dev/pts").unwrap().contains("/dev/pts lies on devpts"));
        assert!(refused("/dev").unwrap().contains("/dev lies on devtmpfs"));
        assert!(refused("/dev/sandspawn-missing").unwrap().contains("lies on devtmpfs"), "missing");
        if Path::new("/dev/mqueue").is_dir() {
            assert!(refused("/dev/mqueue").unwrap().contains("a kernel filesystem"));
        }
        assert_eq!(refused("/dev/shm"), None, "the host's shared memory is an ordinary tmpfs");
        let whole = refused("/").expect("a root that holds one");
        assert!(whole.contains("writable root / holds /") && whole.contains(", a kernel filesystem)"), "{whole}");
        let t = tempfile::tempdir().unwrap();
        assert_eq!(refused(t.path().to_str().unwrap()), None);
        std::os::unix::fs::symlink("/sys/kernel", t.path().join("k")).unwrap();
        assert!(refused(t.path().join("k/mm").to_str().unwrap()).unwrap().contains("/sys/kernel/mm lies on sysfs"), "through a link");
    }

    #[test]
    fn mountinfo_kernel_mounts_with_escaped_names() {
        let text = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n\
                    23 1 8:1 / /home rw - ext4 /dev/sda1 rw\n\
                    24 1 0:30 / /mnt/my\\040cg rw shared:9 - cgroup2 cgroup2 rw\n";
        assert_eq!(kernel_mounts(text.as_bytes()), vec![(PathBuf::from("/proc"), "proc".into()), (PathBuf::from("/mnt/my cg"), "cgroup2".into())]);
    }

    /// Found by an attacker's review: one mount point that is not UTF-8, anywhere on the host,
    /// made the whole table unread and the check see no kernel mount (a writable root holding a
    /// sysfs passed). Each line is parsed by its bytes; a kernel mount's point keeps its own.
    #[test]
    fn mountinfo_with_names_that_are_not_utf8() {
        use std::os::unix::ffi::OsStrExt;
        let text: &[u8] = b"23 1 8:1 / /mnt/\\377\\376 rw - ext4 /dev/sda1 rw\n\
                            24 1 8:1 / /mnt/\xff\xfe rw - ext4 /dev/sda1 rw\n\
                            25 1 0:22 / /w/\xffroot/sys rw - sysfs sysfs rw\n\
                            26 1 0:30 / /w/c\\040g rw shared:9 - cgroup2 cgroup2 rw\n";
        let sys = PathBuf::from(std::ffi::OsStr::from_bytes(b"/w/\xffroot/sys"));
        assert_eq!(kernel_mounts(text), vec![(sys.clone(), "sysfs".into()), (PathBuf::from("/w/c g"), "cgroup2".into())]);
        let root = PathBuf::from(std::ffi::OsStr::from_bytes(b"/w/\xffroot"));
        let mounts = MountTable { table: Ok(text.to_vec()).into(), ..MountTable::default() };
        assert_eq!(mounts.below(&root).unwrap(), Some((sys.as_path(), "sysfs")), "a root whose name is not UTF-8 holds it");
    }
}
