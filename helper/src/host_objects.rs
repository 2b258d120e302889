//! The host's kernel objects that every process and every later sandbox shares, kept read-only
//! inside, so that a command running as root cannot change their modes or owners for the host.
//!
//! Found by an attacker's review: a root run's `chmod 640 /dev/full` changed the host's `/dev/full`
//! (bwrap's `--dev` binds the host's device nodes, read-write, and `--remount-ro /dev` covers only
//! its tmpfs, not the binds on it); `chmod 444 /proc/slabinfo` wrote the mode into the kernel's one
//! `proc_dir_entry`, which every proc mounted later shows (other runs, containers). The command is
//! uid 0 and owns them, and needs no capability for either. A read-only mount refuses `chmod` and
//! `chown` (EROFS) while a device on it still reads and writes (the kernel asks no write access of
//! the mount for a device's I/O), and procfs files keep working for reading.
//!
//! The `/proc` entries are those the sandbox's own proc lists at setup, so none is missed on
//! another kernel: each one but the pid directories (the command's own processes' entries, whose
//! modes are their own) and the symlinks (`self`, `thread-self`, `mounts`, `net`, which lead into
//! them) is bound onto itself read-only. An entry a module adds during the run is not covered.

use std::os::unix::ffi::OsStrExt;

use sandspawn_helper::mountinfo;
use sandspawn_helper::report::Failure;

use crate::mount_target::{mount, Kind, Target};

/// Both steps; after every bwrap mount (`--dev`, `--proc` and the covers bwrap binds over /proc),
/// from `table`, the mount table as bwrap left it (read once for every check of it: reading it
/// again costs every run a tenth of a millisecond, and nothing mounts between the two).
pub fn read_only(table: &[u8]) -> Result<(), Failure> {
    let table = mountinfo::text(table);
    device_binds(&table)?;
    proc_entries(&table)
}

/// Every device node bound into `/dev` that is still writable (bwrap's `null`, `zero`, `full`,
/// `random`, `urandom`, `tty`, and `console`, the host's terminal), remounted read-only. Those a
/// later mount hides (a `denyRead` mask over `/dev`, and the host's `/dev` bound over that mask for
/// `stdio_devices`) are out of reach: their path leads into what hides them, no mount's root.
fn device_binds(table: &str) -> Result<(), Failure> {
    let reachable = sandspawn_helper::writable_mounts::reachable_points(table);
    for m in mountinfo::mounts(table).filter(|m| m.writable && m.point.starts_with("/dev/") && reachable.contains(&m.point)) {
        let target = match Target::open(&m.point, Kind::Any, "the device node") {
            Ok(t) => t,
            // Under a mask a later mount made (a `denyRead` of `/dev`): out of reach already.
            Err(f) if f.errno == libc::ENOENT => continue,
            Err(f) => return Err(f),
        };
        if target.is_device() {
            remount_read_only(&target, &m.point)?;
        }
    }
    Ok(())
}

/// Every top-level entry of the sandbox's `/proc` but the pid directories and symlinks, and those
/// a mount covers already (bwrap's read-only covers, a `denyRead` mask), bound read-only; only
/// where the command could change them at all (`owned_here`).
fn proc_entries(table: &str) -> Result<(), Failure> {
    if !owned_here() {
        return Ok(());
    }
    let Ok(entries) = std::fs::read_dir("/proc") else { return Ok(()) };
    let covered: std::collections::HashSet<String> = mountinfo::mounts(table).map(|m| m.point).collect();
    if !covered.contains("/proc") {
        // A plan that masks /proc (a `denyRead` above it): no proc here.
        return Ok(());
    }
    let mut flags = None;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let is_pid = name.as_bytes().iter().all(u8::is_ascii_digit);
        let path = format!("/proc/{}", name.to_string_lossy());
        if is_pid || entry.file_type().map_or(true, |t| t.is_symlink()) || covered.contains(&path) {
            continue;
        }
        let below = Target::open(&path, Kind::Any, "the proc entry")?;
        let at = below.proc_path();
        // With the mounts below it: a `denyRead` mask there (`/proc/tty/drivers`) stays on top.
        // Without MS_REC the bind showed the entry's own tree and the command read what the mask
        // hid (found by an attacker's review). The remount below makes this bind alone read-only;
        // each mask copied with it keeps its own flags (bwrap made every one read-only).
        mount(Some(&at), &at, None, libc::MS_BIND | libc::MS_REC, None, &format!("binding {path} read-only"))?;
        let bound = Target::open(&path, Kind::Any, "the proc entry")?;
        // Every entry is on the one proc: its flags are read once.
        let kept = match flags {
            Some(f) => f,
            None => *flags.insert(bound.mount_flags(&path)?),
        };
        mount(None, &bound.proc_path(), None, libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | kept, None, &format!("making {path} read-only"))?;
    }
    Ok(())
}

/// Whether the global /proc entries belong to this process's uid, the one the command gets (or,
/// for a host user other than root, the one mapped back to the user's, which owns no more). They
/// belong to the host's root: only a run as root owns them; for any other user they show as the
/// overflow uid, and changing their mode needs a capability the command never has. About a
/// hundred mount calls a run (half a millisecond) are spared to every run but a root one.
fn owned_here() -> bool {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a valid stat to fill.
    let found = unsafe { libc::stat(c"/proc/version".as_ptr(), &mut st) } == 0;
    // Unknown: bind them (the cost, not a hole).
    !found || st.st_uid == unsafe { libc::getuid() }
}

/// `target`, a mount's root, remounted read-only with the flags it has (which a remount in a user
/// namespace must keep).
fn remount_read_only(target: &Target, path: &str) -> Result<(), Failure> {
    let flags = target.mount_flags(path)?;
    mount(None, &target.proc_path(), None, libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags, None, &format!("making the device node {path} read-only"))
}
