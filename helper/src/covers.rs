//! The covers over the placeholders of missing protected names, mounted inside the sandbox: an
//! empty read-only directory over each directory placeholder, an empty read-only file over each
//! file placeholder (see the addon's `plan::mount_targets` for the placeholders themselves); and
//! the same empty directory over sandspawn's stores, those still there (`cover_store`).
//!
//! Why here and not in bwrap: every bwrap bind or remount rereads the whole mount table (about
//! 0.17 ms each here), and a repository-rich workspace has dozens of placeholders. The helper mounts
//! one read-only source per kind and binds it over the rest: a bind clones the source mount's flags,
//! read-only included, so each further placeholder costs one `mount`. Runs while the helper still
//! holds the capabilities bwrap kept for it (`--cap-add`), before `disable_userns_and_drop_caps`.
//!
//! Each target is opened with `O_PATH | O_NOFOLLOW` and checked to be what its placeholder is, and
//! the mount goes onto that descriptor (`/proc/self/fd/N`): a placeholder replaced by a symlink is
//! refused, never followed.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use sandspawn_helper::report::{changed, setup, Failure, Stage};

use crate::mount_target::{c, c_path, mount, Kind, Target};
use crate::{describe, last_errno};

/// The flags every cover ends up with.
const COVER_FLAGS: libc::c_ulong = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;

/// Where the empty file all file covers show is made: the sandbox's own `/dev/shm` tmpfs (`/dev`
/// itself is read-only by then). It is unlinked once every cover is bound, so the command finds no
/// trace of it.
const SCRATCH_FILE: &str = "/dev/shm/.sandspawn-cover";

/// The sandbox's memory-backed directory the scratch entries are made in, where it is its own.
pub const SHM: &str = "/dev/shm";

/// Cover every directory placeholder in `dirs`, every store of `stores` that is still a directory
/// (see `cover_store`), and every file placeholder in `files`.
///
/// `detach`: the binds the overlays were mounted from (`Steps::unmount`), still attached. Each is
/// moved into the scratch directory's tmpfs before any cover is bound (gone from its path, as a
/// detach would leave it) and detached with it, in one `umount2`: every detach waits for an RCU
/// grace period (`synchronize_rcu_expedited`), a move none. Where there is no scratch directory,
/// or a move fails, each is detached on its own first, as before.
///
/// `own_shm`: whether `/dev/shm` is the sandbox's own tmpfs (the plan bounds its inodes), the one
/// place the scratch entries are made. Otherwise (a writable root at `/dev/shm` or above it, a
/// `denyRead` mask, a read-only cwd there) there are none, as without a `/dev/shm`: the host's,
/// which a writable root brings, is shared by every process of the machine (1777), and any of them
/// could hold the scratch file's name (every plan with file placeholders failed setup, `File
/// exists`) or replace either entry by its name while the sandbox was set up (found by an
/// attacker's review, kern36).
pub fn cover(dirs: &[PathBuf], stores: &[PathBuf], files: &[PathBuf], detach: &[String], own_shm: bool) -> Result<(), Failure> {
    cover_dirs(dirs, stores, detach, own_shm)?;
    let Some((first, rest)) = files.split_first() else { return Ok(()) };
    let scratch = if own_shm { scratch_file()? } else { None };
    let bound = cover_first(scratch.as_ref(), first).and_then(|source| bind_rest(&source.proc_path(), Kind::FilePlaceholder, rest));
    if let Some(scratch) = scratch {
        // SAFETY: a valid C string. The mounts keep the file; its name goes either way (only now:
        // a file with no name left cannot be the source of a bind).
        unsafe { libc::unlink(scratch.as_ptr()) };
    }
    bound
}

/// Bind each symlink of `links` over itself and make that mount read-only: a mount point the
/// command can neither remove, rename nor replace (`EBUSY`), still leading where it led. Found by
/// an attacker's review (revc37): a run holds these links and puts a changed one back after it,
/// but a plan another program runs has nobody after it, and its command repointed a nested
/// repository's `.git -> ../../gitdirs/sub` at a repository of its own. One that is no longer a
/// symlink fails setup as a workspace changed since it was planned.
pub fn pin_links(links: &[PathBuf]) -> Result<(), Failure> {
    for l in links {
        let t = Target::open(l, Kind::Link, "the held symlink").map_err(removed_is_changed)?;
        mount(Some(&t.proc_path()), &t.proc_path(), None, libc::MS_BIND, None, &format!("pinning the symlink {}", l.display()))?;
        let root = Target::open(l, Kind::Link, "the held symlink")?;
        mount(None, &root.proc_path(), None, libc::MS_REMOUNT | libc::MS_BIND | COVER_FLAGS, None, &format!("making the pin of {} read-only", l.display()))?;
    }
    Ok(())
}

/// The empty file the file covers show, made at `SCRATCH_FILE`; `None` where the sandbox has no
/// `/dev/shm` to make it in (a `denyRead` mask over `/dev`: every plan with file placeholders
/// failed setup so, found in the twenty-seventh session).
fn scratch_file() -> Result<Option<CString>, Failure> {
    let scratch = c(SCRATCH_FILE)?;
    // SAFETY: a valid C string; the descriptor is closed at once.
    let fd = unsafe { libc::open(scratch.as_ptr(), libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC, 0o444) };
    if fd < 0 {
        let e = last_errno();
        if e == libc::ENOENT {
            return Ok(None);
        }
        return Err(setup(e, format!("creating the empty file for the placeholders ({SCRATCH_FILE}) failed: {}", describe(e))));
    }
    // SAFETY: our own descriptor.
    unsafe { libc::close(fd) };
    Ok(Some(scratch))
}

/// Bind `scratch` over the placeholder `first`, or, without one, the placeholder over itself (its
/// plan made it empty; one written since is a workspace changed, planned again), and make that
/// mount read-only. Returns the cover, open: the source of the other placeholders' binds.
fn cover_first(scratch: Option<&CString>, first: &Path) -> Result<Target, Failure> {
    let t = Target::open(first, Kind::FilePlaceholder, "the placeholder").map_err(removed_is_changed)?;
    let from = match scratch {
        Some(s) => s.clone(),
        // A placeholder's symlink bound over itself stays what it is on the host: a name that
        // leads nowhere, now a read-only mount point the command can neither remove nor replace.
        None if t.is_link() || t.is_empty() => t.proc_path(),
        None => return Err(changed(libc::EEXIST, format!("the placeholder {} was written since the sandbox was planned", first.display()))),
    };
    mount(Some(&from), &t.proc_path(), None, libc::MS_BIND, None, &format!("covering the placeholder {}", first.display())).map_err(removed_is_changed)?;
    // The mount now at `first`, made read-only.
    let root = Target::open(first, Kind::FilePlaceholder, "the placeholder")?;
    mount(None, &root.proc_path(), None, libc::MS_REMOUNT | libc::MS_BIND | COVER_FLAGS, None, &format!("making the cover of {} read-only", first.display()))?;
    Target::open(first, Kind::FilePlaceholder, "the placeholder")
}

/// The directory covers: an empty read-only tmpfs mounted on the first placeholder, bound over the
/// other placeholders and the stores. With no placeholder, the tmpfs is mounted on a directory of
/// the sandbox's own (`SCRATCH_DIR`), detached and removed once bound: never on a store, which its
/// process may remove at any moment (its removal on the host detaches every mount on it, and a
/// bind from a detached mount fails).
fn cover_dirs(dirs: &[PathBuf], stores: &[PathBuf], detach: &[String], own_shm: bool) -> Result<(), Failure> {
    if dirs.is_empty() && stores.is_empty() {
        return detach.iter().try_for_each(|p| crate::private_mounts::unmount(p));
    }
    let (scratch, moved) = match dirs.is_empty() && own_shm {
        true => ScratchDir::make(detach)?.map_or((None, 0), |(s, moved)| (Some(s), moved)),
        false => (None, 0),
    };
    detach[moved..].iter().try_for_each(|p| crate::private_mounts::unmount(p))?;
    // No placeholder and no `/dev/shm` of the sandbox's own (a `denyRead` mask over `/dev`, the
    // host's at a writable root): the first store still there
    // carries the tmpfs, as before the scratch directory (its removal meanwhile fails the binds
    // from it: the run fails, never runs uncovered).
    let carrier = if dirs.is_empty() && scratch.is_none() { first_store_there(stores)? } else { None };
    let Some(first) = dirs.first().or(scratch.as_ref().map(|s| &s.cover)).or(carrier.as_ref()) else { return Ok(()) };
    let what = if dirs.is_empty() { "the stores' cover" } else { "the placeholder" };
    let t = Target::open(first, Kind::Dir, what).map_err(removed_is_changed)?;
    // An empty tmpfs, read-only from the start: `mkdir` inside reports a read-only file system.
    let (tmpfs, mode) = (c("tmpfs")?, c("mode=0555")?);
    mount(Some(&tmpfs), &t.proc_path(), Some(&tmpfs), COVER_FLAGS, Some(&mode), &format!("covering {what} {}", first.display())).map_err(removed_is_changed)?;
    // Open (and kept open) while its `/proc/self/fd` path is the source of the binds.
    let source = Target::open(first, Kind::Dir, what)?;
    let from = source.proc_path();
    bind_rest(&from, Kind::Dir, &dirs[dirs.len().min(1)..])?;
    for p in stores.iter().filter(|p| Some(*p) != carrier.as_ref()) {
        cover_store(&from, p)?;
    }
    drop(source);
    scratch.map_or(Ok(()), ScratchDir::remove)
}

/// The first of `stores` that is still a directory (see `cover_store` for what is passed over).
fn first_store_there(stores: &[PathBuf]) -> Result<Option<PathBuf>, Failure> {
    for p in stores {
        match Target::open(p, Kind::Dir, "the store") {
            Ok(_) => return Ok(Some(p.clone())),
            Err(f) if f.errno == libc::ENOENT || f.errno == libc::ENOTDIR => {}
            Err(f) => return Err(f),
        }
    }
    Ok(None)
}

/// How often a store the kernel refuses to cover as removed is looked at before the run is planned
/// again (`Stage::Changed`): a directory made again at its path each time.
const STORE_LOOKS: usize = 3;

/// Bind the cover at `from` over the store at `p` while a directory is there. Another process may
/// remove its store at any moment (found last session: another agent's temporary tool cache, listed
/// in `known-stores`, went while a run started, whose setup failed with "covering the placeholder
/// ...: No such file or directory": the kernel refuses a mount onto a removed directory with
/// ENOENT). What is gone holds nothing to protect: no path (`ENOENT`), or no longer a directory
/// (`ENOTDIR`: it, or a directory on its way, replaced by a file or a symlink, which no cover
/// follows: a link planted there leads nowhere a cover goes). Refused with ENOENT, the path is
/// looked at again: a directory made there since is covered; the same directory, removed (its
/// link count 0: no entry can be made in it, and a path leads to it only through a process's
/// working directory or descriptor), is passed over. Any other error fails as a placeholder's
/// would, and a store refused every look has the run planned again.
fn cover_store(from: &CString, p: &Path) -> Result<(), Failure> {
    let mut refused = None;
    for _ in 0..STORE_LOOKS {
        let t = match Target::open(p, Kind::Dir, "the store") {
            Ok(t) => t,
            Err(f) if f.errno == libc::ENOENT || f.errno == libc::ENOTDIR => return Ok(()),
            Err(f) => return Err(f),
        };
        if refused == Some(t.id) && t.is_removed() {
            return Ok(());
        }
        match mount(Some(from), &t.proc_path(), None, libc::MS_BIND, None, &format!("covering the store {}", p.display())) {
            Err(f) if f.errno == libc::ENOENT => refused = Some(t.id),
            done => return done,
        }
    }
    Err(changed(libc::ENOENT, format!("the store {} was refused as removed at each of {STORE_LOOKS} looks while the sandbox was set up", p.display())))
}

/// Where the directory covers' tmpfs is mounted when there is no placeholder: in the sandbox's own
/// `/dev/shm` tmpfs, as the file covers' `SCRATCH_FILE`, under a name of its own (never the host's,
/// which a writable root brings: see `cover`'s `own_shm`).
const SCRATCH_DIR: &str = "/dev/shm/.sandspawn-cover-";

/// A directory under `SCRATCH_DIR`, made; detached and removed by `remove`, so the command finds
/// no trace of it. With binds to detach, a writable tmpfs is mounted there holding the cover's
/// directory (`cover/`, which the covers' tmpfs is mounted on: it stays empty) and each bind moved
/// in (`0/`, `1/`, ...), so that `remove`'s one detach takes them all.
struct ScratchDir {
    path: PathBuf,
    /// Where the covers' tmpfs goes: `path` itself, or `path/cover`.
    cover: PathBuf,
}

impl ScratchDir {
    /// `None` where the sandbox has no `/dev/shm` to make it in (a `denyRead` mask over `/dev`).
    /// Otherwise with how many of `detach` it took in (the first ones); the caller detaches the
    /// rest one by one (none where the kernel lets each be moved).
    fn make(detach: &[String]) -> Result<Option<(ScratchDir, usize)>, Failure> {
        let mut random = [0u8; 8];
        // SAFETY: a buffer of the length given. Short or failed, the name is only less unique.
        unsafe { libc::getrandom(random.as_mut_ptr().cast(), random.len(), libc::GRND_NONBLOCK) };
        let path = PathBuf::from(format!("{SCRATCH_DIR}{:016x}", u64::from_ne_bytes(random)));
        // SAFETY: a valid C string.
        if unsafe { libc::mkdir(c_path(&path)?.as_ptr(), 0o500) } != 0 {
            let e = last_errno();
            if e == libc::ENOENT || e == libc::EROFS || e == libc::ENOTDIR {
                return Ok(None);
            }
            return Err(setup(e, format!("creating the directory for the stores' cover ({}) failed: {}", path.display(), describe(e))));
        }
        let plain = ScratchDir { cover: path.clone(), path: path.clone() };
        if detach.is_empty() || holding(&path).is_err() {
            return Ok(Some((plain, 0)));
        }
        let scratch = ScratchDir { cover: path.join("cover"), path };
        let moved = detach.iter().enumerate().take_while(|(n, bind)| scratch.take_in(*n, bind).is_ok()).count();
        Ok(Some((scratch, moved)))
    }

    /// Move the bind at `bind` into `path/n`.
    fn take_in(&self, n: usize, bind: &str) -> Result<(), Failure> {
        let to = self.path.join(n.to_string());
        made(&to)?;
        mount(Some(&c(bind)?), &c_path(&to)?, None, libc::MS_MOVE, None, &format!("moving {bind} aside to detach it"))
    }

    fn remove(self) -> Result<(), Failure> {
        if let Ok(mut later) = LATER.lock() {
            if let Some(slot) = later.as_mut() {
                *slot = Some(self.path);
                return Ok(());
            }
        }
        detach_and_remove(&self.path)
    }
}

/// Where `defer_detach` is in force, the scratch directory `ScratchDir::remove` left for
/// `detach_deferred` (`Some(None)`: none yet); `None`: it is detached at once.
static LATER: std::sync::Mutex<Option<Option<PathBuf>>> = std::sync::Mutex::new(None);

/// Leave the scratch directory's detach to `detach_deferred` (`oom_first`, which detaches a copy of
/// proc anyway): moved onto that copy, it leaves with it, in one RCU grace period for both. Every
/// detach waits for one (`synchronize_rcu_expedited`, off the CPU: 1 to 7 ms each at load 6 on the
/// 2-core VM), a move none. Only the helper's own process exists meanwhile (the command is not
/// started), so the binds moved in stay out of any other's reach, as detached ones would be.
pub fn defer_detach() {
    if let Ok(mut later) = LATER.lock() {
        *later = Some(None);
    }
}

/// The scratch directory left by `ScratchDir::remove`, if any, moved onto `onto` (a directory of
/// what the caller detaches next) and its directory removed; where the move is refused, detached
/// on its own, as before. Either way no longer deferred.
pub fn detach_deferred(onto: &std::ffi::CStr) -> Result<(), Failure> {
    let Some(path) = LATER.lock().ok().and_then(|mut l| l.take()).flatten() else { return Ok(()) };
    let p = c_path(&path)?;
    // SAFETY: valid C strings.
    if unsafe { libc::mount(p.as_ptr(), onto.as_ptr(), std::ptr::null(), libc::MS_MOVE, std::ptr::null()) } != 0 {
        return detach_and_remove(&path);
    }
    // SAFETY: a valid C string; the directory the mount was moved from, empty now.
    if unsafe { libc::rmdir(p.as_ptr()) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("removing the directory of the stores' cover ({}) failed: {}", path.display(), describe(e))));
    }
    Ok(())
}

/// The scratch directory at `path` detached (with what is mounted below it) and removed.
fn detach_and_remove(path: &Path) -> Result<(), Failure> {
    let p = c_path(path)?;
    // SAFETY: a valid C string. The binds made from the mount keep their own; what is mounted
    // below it (the covers' tmpfs, the binds moved in) is detached with it.
    if unsafe { libc::umount2(p.as_ptr(), libc::MNT_DETACH) } != 0 || unsafe { libc::rmdir(p.as_ptr()) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("removing the directory of the stores' cover ({}) failed: {}", path.display(), describe(e))));
    }
    Ok(())
}

/// A writable tmpfs mounted at the scratch directory `path`, holding `path/cover` (for the covers'
/// tmpfs, which stays empty). Undone where it fails midway: the plain layout is used then.
fn holding(path: &Path) -> Result<(), Failure> {
    let (tmpfs, mode, at) = (c("tmpfs")?, c("mode=0700")?, c_path(path)?);
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    mount(Some(&tmpfs), &at, Some(&tmpfs), flags, Some(&mode), "mounting the stores' cover's scratch directory")?;
    made(&path.join("cover")).inspect_err(|_| {
        // SAFETY: a valid C string; what was just mounted there, empty.
        unsafe { libc::umount2(at.as_ptr(), libc::MNT_DETACH) };
    })
}

/// `mkdir(p, 0500)`.
fn made(p: &Path) -> Result<(), Failure> {
    // SAFETY: a valid C string.
    if unsafe { libc::mkdir(c_path(p)?.as_ptr(), 0o500) } != 0 {
        let e = last_errno();
        return Err(setup(e, format!("creating {} failed: {}", p.display(), describe(e))));
    }
    Ok(())
}

/// Bind the read-only cover at `from` (a source's `/proc/self/fd` path) over each of `rest`, each
/// of `kind` (the clone keeps the source mount's flags).
fn bind_rest(from: &CString, kind: Kind, rest: &[PathBuf]) -> Result<(), Failure> {
    for p in rest {
        let t = Target::open(p, kind, "the placeholder").map_err(removed_is_changed)?;
        mount(Some(from), &t.proc_path(), None, libc::MS_BIND, None, &format!("covering the placeholder {}", p.display())).map_err(removed_is_changed)?;
    }
    Ok(())
}

/// A placeholder gone (ENOENT: removed before its open, or under its mount) leaves its name
/// uncovered, so the command must not run; but it is a workspace changed since the plan (another
/// process removed it: a user's `git clean -fdx`), not a broken setup: the run is planned again,
/// which makes it anew, as for a read-only path removed (see `read_only`).
fn removed_is_changed(f: Failure) -> Failure {
    match f.stage {
        Stage::Setup if f.errno == libc::ENOENT => changed(f.errno, format!("{} (removed since the sandbox was planned)", f.message)),
        _ => f,
    }
}
