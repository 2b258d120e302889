//! The Landlock mode's pure half: which access rights exist at each Landlock ABI, the rights the
//! helper grants for a read or write rule, and which guarantees an ABI cannot give. The system
//! calls are in the binary (`confine.rs`); the addon uses `not_enforced` for `sandboxDetails`.

/// The oldest ABI the Landlock mode accepts: before ABI 3 Landlock cannot refuse truncation, so a
/// "read-only" file could still be emptied (`open(O_RDONLY|O_TRUNC)`).
pub const MIN_ABI: u32 = 3;
/// The first ABI the bwrap plans' guard of FIFOs outside the writable mounts runs on (the
/// helper's `write_guard`): every Landlock domain refuses linking or renaming a file into another
/// directory (`FS_REFER`, handled whether asked or not) unless a rule grants it, which ABI 1
/// cannot; there the guard would break `mv a/f b/` in the workspace. Below it the addon says so.
pub const WRITE_GUARD_MIN_ABI: u32 = 2;
/// The newest ABI whose rights this build knows; a newer kernel is used at this level.
pub const MAX_KNOWN_ABI: u32 = 7;

// `LANDLOCK_ACCESS_FS_*` (linux/landlock.h).
pub const FS_EXECUTE: u64 = 1 << 0;
pub const FS_WRITE_FILE: u64 = 1 << 1;
pub const FS_READ_FILE: u64 = 1 << 2;
pub const FS_READ_DIR: u64 = 1 << 3;
const FS_ABI1_ALL: u64 = (1 << 13) - 1; // EXECUTE .. MAKE_SYM
pub const FS_REFER: u64 = 1 << 13; // ABI 2
/// Removing and making entries of every kind (`REMOVE_DIR`, `REMOVE_FILE`, `MAKE_CHAR` .. `MAKE_SYM`).
pub const FS_ENTRIES: u64 = FS_ABI1_ALL & !(FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR);
pub const FS_TRUNCATE: u64 = 1 << 14; // ABI 3
pub const FS_IOCTL_DEV: u64 = 1 << 15; // ABI 5
// `LANDLOCK_ACCESS_NET_*` (ABI 4): handled with no rule, so no TCP bind or connect at all (seccomp
// already refuses the sockets; this is a second lock on the same door).
pub const NET_BIND_TCP: u64 = 1 << 0;
pub const NET_CONNECT_TCP: u64 = 1 << 1;
// `LANDLOCK_SCOPE_*` (ABI 6).
pub const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
pub const SCOPE_SIGNAL: u64 = 1 << 1;
/// The first ABI with scopes (signals, abstract Unix sockets).
pub const SIGNAL_SCOPE_ABI: u32 = 6;

/// What bwrap plans' write guard (the helper's `write_guard`) handles at `abi`: every change of
/// the filesystem Landlock judges (writing a file, making, removing, linking or renaming an entry,
/// truncating), none of reading or executing.
pub fn write_guard_rights(abi: u32) -> u64 {
    let truncate = if abi >= 3 { FS_TRUNCATE } else { 0 };
    FS_WRITE_FILE | FS_ENTRIES | FS_REFER | truncate
}

/// Of `write_guard_rights`, those a rule on a file (not a directory) may carry.
pub fn write_guard_file_rights(abi: u32) -> u64 {
    write_guard_rights(abi) & (FS_WRITE_FILE | FS_TRUNCATE)
}

/// What a ruleset handles at `abi` (everything that ABI can restrict).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handled {
    pub fs: u64,
    pub net: u64,
    pub scoped: u64,
}

pub fn handled(abi: u32, network: bool) -> Handled {
    let mut fs = FS_ABI1_ALL;
    if abi >= 2 {
        fs |= FS_REFER;
    }
    if abi >= 3 {
        fs |= FS_TRUNCATE;
    }
    if abi >= 5 {
        fs |= FS_IOCTL_DEV;
    }
    let net = if abi >= 4 && !network { NET_BIND_TCP | NET_CONNECT_TCP } else { 0 };
    let scoped = if abi >= SIGNAL_SCOPE_ABI { SCOPE_SIGNAL | if network { 0 } else { SCOPE_ABSTRACT_UNIX_SOCKET } } else { 0 };
    Handled { fs, net, scoped }
}

/// Rights of a readable tree: read, list, execute.
pub const READ: u64 = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;
/// Rights that make sense on a file (the kernel refuses directory rights on a file rule).
pub const FILE_RIGHTS: u64 = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV;

/// The rights of a writable rule at `abi`: everything handled (on a file, only file rights).
pub fn write_rights(abi: u32, is_dir: bool) -> u64 {
    let all = handled(abi, false).fs;
    if is_dir {
        all
    } else {
        all & FILE_RIGHTS
    }
}

/// The ruleset attribute's size for `abi` (`struct landlock_ruleset_attr` grew a field at ABI 4
/// and 6; an older kernel refuses the longer struct only if the extra fields are non-zero).
pub fn ruleset_attr_size(abi: u32) -> usize {
    match abi {
        0..=3 => 8,
        4 | 5 => 16,
        _ => 24,
    }
}

/// Guarantees of the bwrap mode that the Landlock mode at `abi` does not give (`notEnforced`).
pub fn not_enforced(abi: u32) -> Vec<&'static str> {
    // `file-modes` and `file-times`: Landlock does not govern them, and the filter cannot tell a
    // path in a writable root from another; refusing them would break `git init` (which gives its
    // config's lock file the config's mode), `touch`, `tar`. Owners and extended attributes are
    // refused by the filter instead, and so are the IPC syscalls (no IPC namespace of its own),
    // another process's scheduling and a file's inode attributes (no Landlock hook for either):
    // see `seccomp::LANDLOCK_GAPS`. The set-ID bits are refused in every mode (`SET_ID_MODES`).
    // `host-kernel-files` (found by an attacker's review): the files every bwrap plan hides
    // (`kernel_masks`: tracefs and debugfs, whose `trace_pipe` read consumes the host's trace
    // buffer; `/proc/kpageflags`; `zram-control/hot_add`, whose read adds a host block device;
    // `vm/stat_refresh`; `pagetypeinfo`, `slabinfo`, `vmallocinfo`, `locks`, `/proc/fs` and
    // `/sys/kernel/slab`, whose reads hold global locks; `/sys/kernel/mm/page_idle`) are read here
    // (`locks` and `/proc/fs` by every user, the rest as root). Landlock grants reads by inode, beneath a granted
    // directory: `/proc` cannot be granted entry by entry (the pid directories of the command and
    // its children are new inodes, so `/proc/self` would go), and granting `/proc` grants all of it.
    let mut out = vec!["pid-isolation", "private-proc", "file-modes", "file-times", "host-kernel-files"];
    if abi < 5 {
        out.push("device-ioctl");
    }
    if abi < 6 {
        out.push("signal-scope");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rights_follow_the_abi() {
        assert_eq!(handled(3, false).fs, (1 << 15) - 1);
        assert_eq!(handled(3, false).net, 0);
        assert_eq!(handled(4, false).net, 3);
        assert_eq!(handled(4, true).net, 0, "network: true handles no network right");
        assert_eq!(handled(5, false).fs, (1 << 16) - 1);
        assert_eq!(handled(5, false).scoped, 0);
        assert_eq!(handled(6, false).scoped, 3);
        assert_eq!(handled(7, true).scoped, SCOPE_SIGNAL);
        assert_eq!(write_rights(3, false), FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE);
        assert_eq!(write_rights(5, false) & FS_IOCTL_DEV, FS_IOCTL_DEV);
        assert_eq!(write_rights(2, true) & FS_TRUNCATE, 0);
        assert_eq!(ruleset_attr_size(3), 8);
        assert_eq!(ruleset_attr_size(5), 16);
        assert_eq!(ruleset_attr_size(7), 24);
    }

    #[test]
    fn the_write_guard_handles_every_change_and_no_read() {
        // Bits 1 and 4..=14: WRITE_FILE, REMOVE_*, MAKE_*, REFER, TRUNCATE.
        assert_eq!(write_guard_rights(3), 0b111_1111_1111_0010);
        assert_eq!(write_guard_rights(2), 0b011_1111_1111_0010, "no TRUNCATE before ABI 3");
        assert_eq!(write_guard_rights(7) & (FS_EXECUTE | FS_READ_FILE | FS_READ_DIR | FS_IOCTL_DEV), 0);
        assert_eq!(write_guard_file_rights(3), FS_WRITE_FILE | FS_TRUNCATE);
        assert_eq!(write_guard_file_rights(2), FS_WRITE_FILE);
    }

    #[test]
    fn not_enforced_shrinks_with_newer_abis() {
        assert!(not_enforced(3).contains(&"signal-scope") && not_enforced(3).contains(&"device-ioctl"));
        assert!(!not_enforced(5).contains(&"device-ioctl") && not_enforced(5).contains(&"signal-scope"));
        assert_eq!(not_enforced(7), ["pid-isolation", "private-proc", "file-modes", "file-times", "host-kernel-files"]);
    }
}
