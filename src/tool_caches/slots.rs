//! One cache location's run directories (an overlay's upper and work directory), kept for the next
//! run when the run that used them wrote nothing, which is what most runs write into most caches.
//!
//! Making a run's directories (`mkdir` of the run, `upper`, `work`) and removing them afterwards
//! (overlayfs leaves a mode-000 `work/work` and the volatile marker below it: a dozen `chmod`s and
//! `rmdir`s) cost about 1 ms of CPU per workspace-write run with three caches (`perf`, mostly the
//! ext4 journal), a third of what workspace-write cost over read-only in an empty workspace.
//!
//! ```text
//! CACHE/slots/N/lock   held (locked exclusively, `lock::set`) by the run using slot N, until its sandbox is gone
//! CACHE/slots/N/upper  the run's writes; a run that wrote moves it away (a pending layer)
//! CACHE/slots/N/work   overlayfs's scratch directory, emptied when the run lets go
//! ```
//!
//! A run takes the first slot nobody holds (a lock is never waited for) or makes the next one. A
//! slot's directories are used again only as they were made: empty, of this user, mode 0700, no
//! extended attribute. Anything else, such as what a run killed with its host left, is removed and
//! made again. What a run can still leave for the next one there is the upper directory's times,
//! less than it leaves in the cache's contents, which that next run mounts anyway.

use std::os::fd::AsRawFd;
use std::path::PathBuf;

use super::dir::Dir;

/// Slots kept when a fold finds the cache idle; more are made while more runs overlap.
const KEPT: usize = 4;
/// More slots than this at once means something is wrong (each is an overlapping run).
const MOST: usize = 4096;

/// A run's hold on one slot: its directories, ready to mount.
pub struct Slot {
    /// The slot's directory (`CACHE/slots/N`), held open: the run's writes are published and its
    /// work directory emptied from it, through no link (`dir`).
    dir: Dir,
    pub upper: PathBuf,
    pub work: PathBuf,
    /// Exclusive lock (`lock::set`) on the slot's `lock`, for the run's life.
    _lock: super::lock::Held,
}

/// Take the first free slot in `slots`, or make one, with a clean upper directory.
pub fn claim(slots: &Dir) -> std::io::Result<Slot> {
    for n in 0..MOST {
        if let Some((dir, lock)) = try_lock(slots, &n.to_string())? {
            ready(&dir, "upper")?;
            ready(&dir, "work")?;
            let (upper, work) = (dir.join("upper"), dir.join("work"));
            return Ok(Slot { dir, upper, work, _lock: lock });
        }
    }
    Err(std::io::Error::other(format!("all {MOST} run directories of {} are in use", slots.path().display())))
}

/// The slot `name` (made if missing) and its lock (`lock::lock_file`), taken without waiting
/// (`None`: another run holds it).
fn try_lock(slots: &Dir, name: &str) -> std::io::Result<Option<(Dir, super::lock::Held)>> {
    let dir = slots.dir(name)?;
    match super::lock::lock_file(&dir, libc::LOCK_EX | libc::LOCK_NB) {
        Err(e) if super::lock::is_held(&e) => Ok(None),
        other => other.map(|lock| Some((dir, lock))),
    }
}

impl Slot {
    /// The run is over: what it wrote (if anything) moved into `pending` as `name` (one rename).
    /// Whether there was anything to move.
    pub fn publish(&self, pending: &Dir, name: &str) -> bool {
        // The upper directory is what the run made of its cache's mount point: a `chmod 555` of it
        // made the rename fail (it moves to another parent), a `chmod 000` the listing, and the
        // run's writes were lost (`owner_access`).
        let _ = super::owner_access::open_up(&self.dir, "upper");
        let wrote = self.dir.open("upper").and_then(|u| u.names()).is_ok_and(|n| !n.is_empty());
        wrote && self.dir.rename("upper", pending, name).is_ok()
    }

    /// Let go of the slot, its work directory as empty as a new one. What overlayfs left there
    /// (`work/work`, mode 000, and the volatile marker in it) is removed here, after the run's
    /// result, rather than by the kernel when the next run mounts, on that run's path. By name when
    /// it is exactly that (`work_leftovers`: 13 system calls instead of ~90), else by the walk.
    pub fn release(self) {
        if let Ok(work) = self.dir.open("work") {
            if !super::work_leftovers::remove(work.fd()) {
                let _ = work.remove("work");
            }
        }
    }
}

/// Make `name` in `slot` an empty directory of this user with mode 0700 and no extended attribute.
fn ready(slot: &Dir, name: &str) -> std::io::Result<()> {
    match slot.open(name) {
        Ok(d) if clean(&d) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        // Used, or not a directory of ours (a link, a file): removed (the link itself).
        _ => slot.remove(name)?,
    }
    slot.dir(name).map(drop)
}

fn clean(d: &Dir) -> bool {
    // SAFETY: geteuid cannot fail.
    let ours = d.own_stat().is_ok_and(|st| st.st_uid == unsafe { libc::geteuid() } && st.st_mode & 0o7777 == 0o700);
    ours && no_attributes(d) && d.names().is_ok_and(|n| n.is_empty())
}

fn no_attributes(d: &Dir) -> bool {
    let fd = d.fd().as_raw_fd();
    // SAFETY: our descriptor; a null buffer of size 0 asks only for the size.
    #[cfg(target_os = "linux")]
    let size = unsafe { libc::flistxattr(fd, std::ptr::null_mut(), 0) };
    // SAFETY: as above.
    #[cfg(not(target_os = "linux"))]
    let size = unsafe { libc::flistxattr(fd, std::ptr::null_mut(), 0, 0) };
    size == 0
}

/// Remove the slots past the first `KEPT`; the caller holds the cache exclusively (no run does).
pub fn trim(slots: &Dir) {
    for name in slots.names().unwrap_or_default() {
        let keep = name.to_str().and_then(|n| n.parse::<usize>().ok()).is_some_and(|n| n < KEPT);
        if !keep {
            let _ = slots.remove(&name);
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    /// `DIR/slots`, made and opened.
    fn slots_in(dir: &std::path::Path) -> Dir {
        std::fs::create_dir_all(dir.join("slots")).unwrap();
        Dir::at(&dir.join("slots"))
    }

    /// A lock let go of is free at once, whatever copies of its descriptor the children that other
    /// tests fork all the time hold (`lock::Held`): before, these tests ran in a process of their own.
    #[test]
    fn a_free_slot_is_taken_again_and_a_held_one_never() {
        let t = tempfile::tempdir().unwrap();
        let slots = slots_in(t.path());
        let a = claim(&slots).unwrap();
        let b = claim(&slots).unwrap();
        assert_ne!(a.upper, b.upper, "held by a: b gets another");
        let (upper, ino) = (a.upper.clone(), std::fs::metadata(&a.upper).unwrap().ino());
        a.release();
        let c = claim(&slots).unwrap();
        assert_eq!((c.upper.clone(), std::fs::metadata(&c.upper).unwrap().ino()), (upper, ino), "the same directory, not made again");
    }

    #[test]
    fn a_used_upper_directory_is_made_again() {
        let t = tempfile::tempdir().unwrap();
        let slots = slots_in(t.path());
        let a = claim(&slots).unwrap();
        let (upper, work) = (a.upper.clone(), a.work.clone());
        drop(a);
        // What a run killed with its host leaves, or what a run could change without writing.
        std::fs::write(upper.join("left"), "x").unwrap();
        std::fs::create_dir(work.join("work")).unwrap();
        let b = claim(&slots).unwrap();
        assert_eq!(std::fs::read_dir(&b.upper).unwrap().count(), 0, "emptied");
        assert_eq!(std::fs::read_dir(&b.work).unwrap().count(), 0, "emptied");
        drop(b);
        std::fs::set_permissions(&upper, std::fs::Permissions::from_mode(0o755)).unwrap();
        let c = claim(&slots).unwrap();
        assert_eq!(std::fs::metadata(&c.upper).unwrap().permissions().mode() & 0o7777, 0o700);
        // What overlayfs leaves in a work directory, mode 000 included, is gone when a run lets go.
        std::fs::create_dir_all(c.work.join("work/incompat/volatile")).unwrap();
        std::fs::set_permissions(c.work.join("work"), std::fs::Permissions::from_mode(0)).unwrap();
        let work = c.work.clone();
        c.release();
        assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);
        let x = std::ffi::CString::new(upper.to_str().unwrap()).unwrap();
        // SAFETY: valid C strings and buffer.
        assert_eq!(unsafe { libc::setxattr(x.as_ptr(), c"user.overlay.opaque".as_ptr(), b"y".as_ptr().cast(), 1, 0) }, 0);
        let d = claim(&slots).unwrap();
        assert!(no_attributes(&Dir::at(&d.upper)), "an upper directory with an attribute is made again");
        drop(d);
        std::fs::remove_dir(&upper).unwrap();
        std::os::unix::fs::symlink(t.path(), &upper).unwrap();
        let e = claim(&slots).unwrap();
        assert!(!std::fs::symlink_metadata(&e.upper).unwrap().file_type().is_symlink(), "a symlink is replaced");
        assert!(t.path().join("slots").exists(), "and its target untouched");
    }

    #[test]
    fn trim_keeps_the_first_slots() {
        let t = tempfile::tempdir().unwrap();
        let slots = slots_in(t.path());
        let held: Vec<Slot> = (0..KEPT + 2).map(|_| claim(&slots).unwrap()).collect();
        drop(held);
        trim(&slots);
        let mut left: Vec<String> = std::fs::read_dir(slots.path()).unwrap().flatten().map(|e| e.file_name().into_string().unwrap()).collect();
        left.sort();
        assert_eq!(left, (0..KEPT).map(|n| n.to_string()).collect::<Vec<_>>());
    }
}
