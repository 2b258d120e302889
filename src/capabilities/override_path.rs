//! Whether `SANDSPAWN_BWRAP`'s path could be changed by anyone but root and this user, or by a run:
//! every entry met while the kernel resolves it (each directory it names, each symlink, each
//! directory a link's target names, the file) is checked, not only the file it resolves to.
//!
//! Found by an attacker's review: only the resolved file was held read-only during a run. An
//! override naming a symlink, or a path through a linked or renamable directory, in a directory a
//! run may write (a writable root, the default writable /tmp) let one run re-point it, and the next
//! run executed the planted "bwrap" on the host, unsandboxed. And the file had no owner or mode
//! check (PATH candidates get `distrust`, the bundled bwrap its own): a 0777 file another user
//! rewrote ran as root.
//!
//! Two checks, both refusing (`ERR_SANDBOX_UNAVAILABLE`) rather than running:
//! * `loose_entry` at discovery (every call: a few `lstat`s): an entry owned by another user than
//!   root and this one, or writable by its group or others (a sticky directory excepted: there only
//!   the owner of an entry, checked next, may rename it).
//! * `reached_through_writable` per run, where the policy is known: an entry inside a directory
//!   the run may write. Not only bwrap runs: a Landlock run could re-point it for the next bwrap run.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// The environment variable that names the bwrap binary to use instead of searching `PATH`.
pub const BWRAP_OVERRIDE_ENV: &str = "SANDSPAWN_BWRAP";

/// Why the entry `p` (`m`: its `lstat`) could be changed by a user other than root and `uid`: it is
/// owned by another user, or writable by its group or others. A symlink's own mode means nothing (a
/// link cannot be rewritten, only replaced in its directory, which is checked on its own); a sticky
/// directory (`sticky_ok`) lets others rename only their own entries, which the owner rule refuses.
/// Writable by its group alone is no other user when that group is the owner's private group (RHEL,
/// Fedora, Debian with umask 002: a checkout's 0775 directories refused every run; revd39), unless
/// its ACL (whose mask those bits then are) lets another user or group write (rev40).
pub(crate) fn loose(p: &Path, m: &Metadata, uid: u32, sticky_ok: bool) -> Option<String> {
    loose_as(p, m, uid, sticky_ok, false)
}

/// `loose`, and with `unmapped_ok` an owner from outside this user namespace (shown as the
/// overflow uid: the host's root inside Flatpak or a rootless container) taken as root is.
fn loose_as(p: &Path, m: &Metadata, uid: u32, sticky_ok: bool, unmapped_ok: bool) -> Option<String> {
    let outside = unmapped_ok && super::unmapped_owner::is_unmapped(m.uid());
    if m.uid() != 0 && m.uid() != uid && !outside {
        let whose = if uid == 0 { "root".to_string() } else { format!("root or uid {uid}") };
        return Some(format!("{} is owned by uid {}, not {whose}", p.display(), m.uid()));
    }
    let sticky = sticky_ok && m.is_dir() && m.mode() & 0o1000 != 0;
    let owner_s_group = group_write_is_owner_s(m.mode(), outside, || super::private_group::only_member(m.gid(), m.uid()));
    // With an ACL the group bits are its mask: a user or group it names may write too (rev40).
    if owner_s_group && !m.file_type().is_symlink() {
        if let Some(who) = super::acl_writers::other_writer(p) {
            return Some(format!("{} is writable by {who} through its ACL (mode {:o})", p.display(), m.mode() & 0o7777));
        }
    }
    if m.mode() & 0o022 != 0 && !m.file_type().is_symlink() && !sticky && !owner_s_group {
        let who = if m.mode() & 0o002 != 0 { "everyone" } else { "its group" };
        return Some(format!("{} is writable by {who} (mode {:o})", p.display(), m.mode() & 0o7777));
    }
    None
}

/// Whether write by the group alone (`mode`) is the owner's: the group is its private group
/// (`private`, asked only then). Never for an owner from outside this user namespace (`outside`):
/// the group shown is the overflow gid too, whatever group it is on the host (a `root:staff` 2775
/// `/usr/local` there), and the namespace's database says nothing of who is in it; its `nobody`
/// (65534, that group its own alone in Fedora's database) passed as the owner's private group
/// (found by an attacker's review, rev40).
fn group_write_is_owner_s(mode: u32, outside: bool, private: impl FnOnce() -> bool) -> bool {
    mode & 0o022 == 0o020 && !outside && private()
}

/// Symlinks followed before giving up, as the kernel's limit.
const MAX_LINKS: usize = 40;

/// Every entry met resolving the absolute `path` as the kernel does, in order, with its `lstat`:
/// the directories named (canonical, since links are replaced by what they name), each symlink,
/// and the file. `..` after a link goes up from where the link led.
pub fn entries_met(path: &Path) -> std::io::Result<Vec<(PathBuf, Metadata)>> {
    let mut pending: VecDeque<OsString> = parts(path);
    let mut cur = PathBuf::from("/");
    let mut met = vec![(cur.clone(), std::fs::symlink_metadata("/")?)];
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        match part.to_str() {
            Some("/") => cur = PathBuf::from("/"),
            Some(".") => {}
            Some("..") => {
                cur.pop();
            }
            _ => {
                let next = cur.join(&part);
                let meta = std::fs::symlink_metadata(&next)?;
                met.push((next.clone(), meta.clone()));
                if !meta.file_type().is_symlink() {
                    cur = next;
                    continue;
                }
                links += 1;
                if links > MAX_LINKS {
                    return Err(std::io::Error::other(format!("more than {MAX_LINKS} symlinks")));
                }
                let target = std::fs::read_link(&next)?;
                for p in parts(&target).into_iter().rev() {
                    pending.push_front(p);
                }
            }
        }
    }
    Ok(met)
}

/// `path`'s components as names, `/` for the root.
fn parts(path: &Path) -> VecDeque<OsString> {
    path.components()
        .map(|c| match c {
            Component::RootDir | Component::Prefix(_) => OsString::from("/"),
            Component::CurDir => OsString::from("."),
            Component::ParentDir => OsString::from(".."),
            Component::Normal(n) => n.to_os_string(),
        })
        .collect()
}

/// Why the override `shown` (met as `met`) could be changed by another user: the first entry owned
/// by another user than root and this one, or writable by its group or others.
pub fn loose_entry(shown: &Path, met: &[(PathBuf, Metadata)]) -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let why = met.iter().find_map(|(p, m)| loose(p, m, uid, true))?;
    Some(format!(
        "{BWRAP_OVERRIDE_ENV}={} is not used: {why}, so another user could replace the program sandspawn runs on the \
         host; point {BWRAP_OVERRIDE_ENV} at a bwrap whose file and directories (and any symlink on the way) are root's or yours \
         and writable by nobody else",
        shown.display()
    ))
}

/// Why an entry met resolving `path` (the file, every directory above it, each symlink on the way)
/// could be changed by a user other than root and this one: the first such, in words. For the
/// programs sandspawn runs from its own install (the helper, the bundled bwrap): each is checked
/// by its bytes and then executed by its path, so whoever may write the file or rename an entry on
/// its way can swap it in between (found by an attacker's review, self39: a helper another user
/// could write ran their program as root). An owner from outside this user namespace counts as
/// root (`unmapped_owner`: inside Flatpak every run was refused).
pub fn changeable_by_others(path: &Path) -> std::io::Result<Option<String>> {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    Ok(entries_met(path)?.iter().find_map(|(p, m)| loose_as(p, m, uid, true, true)))
}

/// Why the override `shown` (met as `met`) could be changed by a run whatever this run's policy: an
/// entry lies in a shared temporary directory, or the file has another hard link (another name a
/// run may write, found nowhere on the way).
pub fn shared_or_linked(shown: &Path, met: &[(PathBuf, Metadata)]) -> Option<String> {
    let temps = crate::state_dir::shared_temp_dirs(|k| std::env::var_os(k).map(PathBuf::from));
    let in_temp = met.iter().find_map(|(p, _)| temps.iter().find(|t| p.starts_with(t) && p != *t).map(|t| (p, t)));
    let why = if let Some((p, t)) = in_temp {
        format!(
            "{} lies in the shared temporary directory {}, which runs of any sandspawn process on this host could write \
             (whatever this process's runs are allowed)",
            p.display(),
            t.display()
        )
    } else {
        let (file, m) = met.last()?;
        if m.nlink() <= 1 {
            return None;
        }
        format!(
            "{} has {} hard links (names): a run that may write any other name could rewrite this file in place, \
             which no check of this path sees",
            file.display(),
            m.nlink()
        )
    };
    Some(format!(
        "{BWRAP_OVERRIDE_ENV}={} is not used: {why}, and the next run would execute what it put there on the host; \
         copy bwrap to a directory of its own outside every temporary directory (for instance /usr/local/bin or \
         /opt/bubblewrap/bin), as a file with no other name, and point {BWRAP_OVERRIDE_ENV} there",
        shown.display()
    ))
}

/// Refuses a run for which `writable` (canonical paths the run may write) holds an entry met
/// resolving `SANDSPAWN_BWRAP` (when set): the run could re-point or replace it, and the next run
/// would execute what it put there on the host.
pub fn refuse_writable_by_run(writable: &dyn Fn(&Path) -> bool) -> crate::Result<()> {
    let Some(value) = std::env::var_os(BWRAP_OVERRIDE_ENV).filter(|v| !v.is_empty()) else { return Ok(()) };
    let shown = PathBuf::from(value);
    // Discovery refused a path that does not resolve; one gone since is refused here too.
    let met = entries_met(&shown).map_err(|e| crate::error::SandboxError::unavailable(format!("{BWRAP_OVERRIDE_ENV}={}: {e}", shown.display()), fix()))?;
    // Checked here too, not only at discovery: a Landlock run never discovers bwrap, and could plant.
    if let Some(why) = shared_or_linked(&shown, &met) {
        return Err(crate::error::SandboxError::unavailable(why, fix()));
    }
    match reached_through_writable(&met, writable) {
        None => Ok(()),
        Some(entry) => Err(crate::error::SandboxError::unavailable(
            format!(
                "{BWRAP_OVERRIDE_ENV}={} is reached through {}, which this run may write (it lies in one of its writable roots, \
                 or a writable /tmp): the run could replace or re-point it, and the next run would execute its program on the host",
                shown.display(),
                entry.display()
            ),
            fix(),
        )),
    }
}

/// The first entry met (the root directory aside) that `writable` holds.
pub fn reached_through_writable<'a>(met: &'a [(PathBuf, Metadata)], writable: &dyn Fn(&Path) -> bool) -> Option<&'a Path> {
    met.iter().map(|(p, _)| p.as_path()).find(|p| *p != Path::new("/") && writable(p))
}

fn fix() -> String {
    format!(
        "keep bwrap where no run may write (for instance /usr/local/bin) and point {BWRAP_OVERRIDE_ENV} there, \
         and leave that directory out of the run's writable roots"
    )
}

#[cfg(test)]
mod tests {
    /// An unmapped owner's group write is never taken for its private group's (rev40): inside a
    /// user namespace the host's `root:staff` 0775 shows as 65534:65534, which the namespace's
    /// database may show as nobody's group alone. The case is the function's, since this host's
    /// tests run in the initial namespace, where no owner is unmapped.
    #[test]
    fn an_unmapped_owner_s_group_write_is_never_its_private_group_s() {
        assert!(super::group_write_is_owner_s(0o40775, false, || true), "a mapped owner's private group");
        assert!(!super::group_write_is_owner_s(0o40775, true, || true), "an unmapped owner: whatever the database says");
        assert!(!super::group_write_is_owner_s(0o40775, false, || false), "another group");
        assert!(!super::group_write_is_owner_s(0o40777, false, || true), "everyone's write");
    }
}
