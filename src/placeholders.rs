//! Placeholders on the host, owned here: the mount points a plan another program runs
//! (`buildSandboxCommand`) needs for missing read-only paths, which the helper in front of bwrap creates and holds (see
//! `sandspawn_helper::placeholder`), and their cleanup, which the runner does after its own runs.
//!
//! The runner's own runs make none: a placeholder is visible as the user's data while it exists
//! (`git status`, `git add -A`, `npm pack`, `tar`, `ls -A`), so what a run creates at such a path
//! is moved aside after it instead (`planted::undo`).

use std::collections::BTreeMap;
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use sandspawn_helper::placeholder;

use crate::policy::MissingReadOnly;
use crate::presence::Presence;

/// The placeholders by the directory they are made in, each as its name there and its kind (the
/// runner locks and fills each directory once; so does the helper for a plan another program runs).
pub fn by_directory<'a>(targets: impl IntoIterator<Item = &'a MissingReadOnly>) -> BTreeMap<&'a Path, Vec<(&'a OsStr, placeholder::Kind)>> {
    let mut by_dir: BTreeMap<&Path, Vec<(&OsStr, placeholder::Kind)>> = BTreeMap::new();
    for t in targets {
        // Hundreds of paths after every run: split from their bytes, not parsed twice (`path_split`).
        let Some((dir, name)) = crate::path_split::parent_and_name(&t.path) else { continue };
        by_dir.entry(dir).or_default().push((name, t.kind.into()));
    }
    by_dir
}

/// The directory of the held directories' lock files (`STATE/sandspawn/held-dirs`, from the host
/// process's environment), which the helper in front of bwrap locks while it makes a plan's
/// placeholders (see `sandspawn_helper::placeholder::lock_of`). Beside sandspawn's stores, so
/// covered in every bwrap sandbox and kept read-only in a Landlock run (`plan::stores`).
pub fn locks_root() -> Option<std::path::PathBuf> {
    crate::state_dir::host_path("held-dirs")
}

/// `locks_root`, made (mode 0700) when missing, for a plan that holds directories: one this user
/// does not own, or that others may write, is refused (whoever could write it could hold or
/// replace the locks).
pub fn ensure_locks_root() -> crate::error::Result<std::path::PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let refused = |why: String| crate::error::SandboxError::unsupported(format!("a plan that keeps placeholders needs sandspawn's state directory for their locks: {why}"));
    let root = locks_root().ok_or_else(|| refused(crate::state_dir::NO_HOST_PATH.into()))?;
    let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&root);
    let meta = root.symlink_metadata().map_err(|e| refused(format!("{}: {e}", root.display())))?;
    // The owner's bits a sandboxed command took (`chmod 0`), given back.
    crate::state_dir::give_back_if_taken(&root, &meta);
    if !crate::state_dir::is_private(&meta) {
        return Err(refused(format!("{} is not a directory of this user's that only it may write", root.display())));
    }
    Ok(root)
}

/// Remove the placeholders at these paths that no sandbox uses any more: left by a plan another
/// program ran (`buildSandboxCommand`), or by a run of an earlier version that was killed (see
/// `remove_leftovers_with`). Without the lock files' directory nothing is removed.
pub fn remove_leftovers(targets: &[MissingReadOnly]) {
    remove_leftovers_listed(targets, &mut Presence::default());
}

/// `remove_leftovers`, with the listings the check after the run took of the same directories
/// (`planted::detect_after_listed`) standing in for its own: a name such a listing misses was made
/// after it, by a running plan, which keeps its placeholder anyway (as one made after a listing of
/// its own would be). A directory not listed yet is listed here.
pub fn remove_leftovers_listed<'a>(targets: impl IntoIterator<Item = &'a MissingReadOnly>, presence: &mut Presence) {
    if let Some(root) = locks_root() {
        remove_leftovers_in(&root, targets, presence);
        sweep_locks_now_and_then(&root);
    }
}

/// Remove the lock files nobody holds (`placeholder::sweep_locks`), at most once an hour per host
/// process: one per directory ever cleaned or held piled up in the state directory (428 on the
/// machine that found it). The first cleanup of a process pays a listing of the directory.
fn sweep_locks_now_and_then(root: &Path) {
    static LAST: std::sync::Mutex<Option<std::time::Instant>> = std::sync::Mutex::new(None);
    {
        let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_some_and(|t| t.elapsed() < std::time::Duration::from_secs(3600)) {
            return;
        }
        *last = Some(std::time::Instant::now());
    }
    sweep_locks_in(root);
}

/// Every lock file in `root` that nobody holds, removed; how many.
pub fn sweep_locks_in(root: &Path) -> usize {
    let Ok(c) = CString::new(root.as_os_str().as_bytes()) else { return 0 };
    let (Ok(locks), Ok(listing)) = (placeholder::open_locks(&c), std::fs::read_dir(root)) else { return 0 };
    let names = listing.filter_map(|e| CString::new(e.ok()?.file_name().as_bytes()).ok());
    placeholder::sweep_locks(&locks, names)
}

/// Remove them, with the lock files in `locks`: only under the directory's lock file's exclusive
/// lock, taken without waiting (the helper in front of bwrap holds it shared while it makes a
/// plan's placeholders), and only when no sandbox of such a plan holds the directory (its bwrap's
/// `--lock-file`): removing a placeholder a sandbox has mounted over would detach the cover there.
/// Another process's lock on the directory itself keeps nothing: any process may take one.
pub fn remove_leftovers_with(locks: &Path, targets: &[MissingReadOnly]) {
    remove_leftovers_in(locks, targets, &mut Presence::default());
}

/// `remove_leftovers_with`, the directories' listings taken from or added to `presence`.
fn remove_leftovers_in<'a>(locks: &Path, targets: impl IntoIterator<Item = &'a MissingReadOnly>, presence: &mut Presence) {
    let Ok(locks) = CString::new(locks.as_os_str().as_bytes()) else { return };
    let Ok(locks) = placeholder::open_locks(&locks) else { return };
    for (dir, names) in by_directory(targets) {
        // At `/tmp`'s top a run keeps some 250 names absent (protected and upward-searched ones):
        // one listing says which may be there, not an `fstatat` of each after every run. A name
        // the listing misses was made after it: a running plan's placeholder, which it keeps anyway.
        // No path made per name.
        presence.list_dir(dir, names.len());
        let names: Vec<_> = names.into_iter().filter(|(name, _)| presence.may_hold(dir, name)).collect();
        // The directory is opened only to look at names that may be there (nearly every run: none).
        if names.is_empty() {
            continue;
        }
        let Ok(c) = CString::new(dir.as_os_str().as_bytes()) else { continue };
        let Ok(fd) = placeholder::open_dir(&c, false) else { continue };
        // Looked at first without a lock, which only removing needs: nearly every directory holds
        // none, and locking made a lock file per directory per run (they piled up in the state
        // directory, and cost each run system calls per repository). One made meanwhile is a
        // running plan's, which keeps it anyway.
        let names: Vec<(CString, placeholder::Kind)> = names
            .into_iter()
            .filter_map(|(name, kind)| CString::new(name.as_bytes()).ok().map(|n| (n, kind)))
            .filter(|(name, _)| placeholder::placeholder_at(&fd, name).is_some())
            .collect();
        if names.is_empty() {
            continue;
        }
        // A sandbox running there: nothing to do, and no lock taken. A lock of ours lives on in any
        // child this process forks before it is dropped, until that child execs: taken for
        // nothing, it could turn away the next cleanup or plan for that long.
        if placeholder::held_by_a_plan(&fd) {
            continue;
        }
        let Ok(_lock) = placeholder::lock_of(&locks, &fd, libc::LOCK_EX | libc::LOCK_NB, false).map(sandspawn_helper::file_lock::WholeFileHeld) else { continue };
        // Again under the lock: a plan that began meanwhile has its sandbox's lock by now.
        if placeholder::held_by_a_plan(&fd) {
            continue;
        }
        for (name, kind) in names {
            placeholder::remove_if_placeholder(&fd, &name, kind);
        }
    }
}

/// Whether the entry at `path` (`meta` its `lstat`) is a placeholder of a plan another program
/// runs, or one left by a killed run: the placeholder's mode and nothing in it. Any user's: a shared
/// `/tmp` holds other users' plans. The mode alone proves nothing, since a command can give its own
/// `.git` mode 1500 after filling it; empty, a placeholder holds nothing a host tool would read.
pub fn is_placeholder(path: &Path, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let mode = meta.mode() & 0o7777;
    // A file-like name's (`placeholder::LINK_TARGET`): it leads nowhere, whoever made it.
    if meta.file_type().is_symlink() {
        return std::fs::read_link(path).is_ok_and(|t| placeholder::is_link_target(t.as_os_str().as_bytes()));
    }
    if meta.is_file() {
        return meta.len() == 0 && mode == placeholder::FILE_MODE;
    }
    meta.is_dir() && mode == placeholder::DIR_MODE && holds_nothing_readable(std::fs::read_dir(path).map(|mut d| d.next().is_none()))
}

/// Whether a directory with a placeholder's mode holds nothing this user's tools could read: it is
/// empty, or this process may not list it. The second is another user's plan, its owner alone
/// having r-x (or, for root in a user namespace, an owner not mapped there): taken for a run's
/// plant, it was moved aside while that plan was being set up, and the plan failed ("opening the
/// placeholder /tmp/.agents failed") whenever a root sandspawn in a user namespace shared `/tmp`
/// with it (seen as flaky test runs). What this user cannot list, git run as this user cannot use.
fn holds_nothing_readable(listing: std::io::Result<bool>) -> bool {
    match listing {
        Ok(empty) => empty,
        Err(e) => e.kind() == std::io::ErrorKind::PermissionDenied,
    }
}

// Linux only: the holders below are Linux processes (`pipe2`, `O_PATH`), as are placeholders.
#[cfg(all(test, target_os = "linux"))]
pub(crate) mod tests {
    use super::*;
    use crate::policy::PlaceholderKind;
    use std::os::unix::io::OwnedFd;

    #[test]
    fn a_placeholder_this_user_may_not_list_holds_nothing_it_could_read() {
        use std::io::{Error, ErrorKind};
        assert!(holds_nothing_readable(Ok(true)));
        assert!(!holds_nothing_readable(Ok(false)), "filled: a run's plant");
        assert!(holds_nothing_readable(Err(Error::from(ErrorKind::PermissionDenied))), "another user's plan");
        assert!(!holds_nothing_readable(Err(Error::from(ErrorKind::NotFound))), "gone or unknown: not taken for one");
    }
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    fn target(p: &Path, kind: PlaceholderKind) -> Vec<MissingReadOnly> {
        vec![MissingReadOnly { path: p.to_path_buf(), kind }]
    }

    fn c(p: &Path) -> CString {
        CString::new(p.as_os_str().as_bytes()).unwrap()
    }

    /// A placeholder as the helper in front of bwrap makes it for a plan another program runs,
    /// through a descriptor that holds no lock.
    fn make_placeholder(dir: &Path, name: &str, kind: placeholder::Kind) {
        // SAFETY: a valid C string; the descriptor is owned below.
        let raw = unsafe { libc::open(c(dir).as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        assert!(raw >= 0);
        // SAFETY: just opened, owned by nobody else.
        let fd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw) };
        placeholder::create(&fd, &CString::new(name).unwrap(), kind);
    }

    /// A lock on a file or directory held by another process: as the plan's helper holds its
    /// directory's lock file (`flock`, shared), or as any other process may lock the directory
    /// itself. Not through a descriptor of this process: other tests here spawn children all the
    /// time, and a child forked while such a descriptor is open keeps the lock until it execs, so
    /// releasing it would not be releasing it (this test failed so, once in CI).
    pub(crate) struct Holder {
        pid: libc::pid_t,
        release: OwnedFd,
    }

    #[derive(Clone, Copy, Debug)]
    pub(crate) enum How {
        FlockShared,
        FlockExclusive,
        /// A POSIX read lock (`fcntl(F_SETLK)`, `lockf`), as bwrap's `--lock-file` takes, held by
        /// a process that is no plan's sandbox.
        PosixRead,
        OfdRead,
    }

    pub(crate) fn hold(dir: &Path, how: How) -> Holder {
        let path = c(dir);
        let (mut ready, mut release) = ([0; 2], [0; 2]);
        // SAFETY: arrays of two descriptors to fill.
        assert!(unsafe { libc::pipe2(ready.as_mut_ptr(), libc::O_CLOEXEC) == 0 && libc::pipe2(release.as_mut_ptr(), libc::O_CLOEXEC) == 0 });
        // SAFETY: a zeroed flock is valid.
        let mut l: libc::flock = unsafe { std::mem::zeroed() };
        l.l_type = libc::F_RDLCK as libc::c_short;
        // SAFETY: the child makes only async-signal-safe calls (a forked copy of a threaded
        // process), on memory prepared before the fork, and ends with `_exit`.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe {
                // Every descriptor but its two pipe ends closed: a fork that never execs keeps
                // the others open (close-on-exec or not), other tests' locks among them.
                let (keep_low, keep_high) = (ready[1].min(release[0]) as libc::c_uint, ready[1].max(release[0]) as libc::c_uint);
                for (first, last) in [(0, keep_low.checked_sub(1)), (keep_low + 1, keep_high.checked_sub(1)), (keep_high + 1, Some(libc::c_uint::MAX))] {
                    if let Some(last) = last.filter(|&last| last >= first) {
                        libc::syscall(libc::SYS_close_range, first, last, 0);
                    }
                }
                let fd = libc::open(path.as_ptr(), libc::O_RDONLY);
                let ok = fd >= 0
                    && match how {
                        How::FlockShared => libc::flock(fd, libc::LOCK_SH) == 0,
                        How::FlockExclusive => libc::flock(fd, libc::LOCK_EX) == 0,
                        How::PosixRead => libc::fcntl(fd, libc::F_SETLK, &l) == 0,
                        How::OfdRead => libc::fcntl(fd, libc::F_OFD_SETLK, &l) == 0,
                    };
                libc::write(ready[1], if ok { b"1".as_ptr() } else { b"0".as_ptr() }.cast(), 1);
                let mut byte = 0u8;
                // Until every copy of the write end is closed: the release.
                libc::read(release[0], (&mut byte as *mut u8).cast(), 1);
                libc::_exit(0);
            }
        }
        assert!(pid > 0);
        let mut answer = 0u8;
        // SAFETY: our descriptors; one byte into a byte.
        unsafe {
            libc::close(ready[1]);
            libc::close(release[0]);
            libc::read(ready[0], (&mut answer as *mut u8).cast(), 1);
            libc::close(ready[0]);
        }
        assert_eq!(answer, b'1', "the holder took its lock");
        // SAFETY: the write end, owned from here.
        Holder { pid, release: unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(release[1]) } }
    }

    impl Holder {
        /// Release the lock: the holder sees the end of its pipe and exits; waited for.
        pub(crate) fn release(self) {
            drop(self.release);
            let mut status = 0;
            // SAFETY: our own child.
            unsafe { libc::waitpid(self.pid, &mut status, 0) };
        }
    }

    /// A private directory for the held directories' lock files, as `locks_root` is.
    fn locks() -> tempfile::TempDir {
        let l = tempfile::tempdir().unwrap();
        std::fs::set_permissions(l.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        l
    }

    /// The lock file the helper in front of bwrap holds for `dir` while it makes its placeholders.
    fn lock_file_of(locks: &Path, dir: &Path) -> PathBuf {
        use std::os::unix::fs::MetadataExt;
        let m = dir.metadata().unwrap();
        let f = locks.join(placeholder::lock_file_name(m.dev(), m.ino()));
        std::fs::File::create(&f).unwrap();
        f
    }

    #[test]
    fn leftovers_are_removed_once_nobody_holds_them() {
        let (t, l) = (tempfile::tempdir().unwrap(), locks());
        let git = t.path().join(".git");
        make_placeholder(t.path(), ".git", placeholder::Kind::Dir);
        let held = hold(&lock_file_of(l.path(), t.path()), How::OfdRead);
        assert!(is_placeholder(&git, &git.symlink_metadata().unwrap()));
        remove_leftovers_with(l.path(), &target(&git, PlaceholderKind::Dir));
        assert!(git.exists(), "kept while the plan's helper holds the directory's lock file");
        held.release();
        remove_leftovers_with(l.path(), &target(&git, PlaceholderKind::Dir));
        assert!(!git.exists(), "removed once nobody holds it");
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0, "and nothing else is left");
    }

    /// Found by an attacker's review: every run's cleanup made a lock file for each directory it
    /// kept a name absent in, and nothing removed them (hundreds piled up in the state directory).
    /// A directory with no placeholder is not locked now, and lock files nobody holds are swept.
    #[test]
    fn lock_files_are_made_only_to_remove_and_swept_when_nobody_holds_them() {
        let (t, l) = (tempfile::tempdir().unwrap(), locks());
        let count = || std::fs::read_dir(l.path()).unwrap().count();
        remove_leftovers_with(l.path(), &target(&t.path().join(".envrc"), PlaceholderKind::Dir));
        assert_eq!(count(), 0, "no placeholder there: no lock, no lock file");

        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let held = hold(&lock_file_of(l.path(), a.path()), How::OfdRead);
        lock_file_of(l.path(), b.path());
        std::fs::write(l.path().join("stray"), "").unwrap();
        assert_eq!(sweep_locks_in(l.path()), 2, "the two nobody holds");
        assert_eq!(std::fs::read_dir(l.path()).unwrap().map(|e| e.unwrap().file_name()).collect::<Vec<_>>(), vec![lock_file_of(l.path(), a.path()).file_name().unwrap().to_owned()], "the held one stays");
        held.release();

        // A plan's lock after a sweep is on a file the name still leads to.
        let open = |p: &Path| placeholder::open_dir(&c(p), false).unwrap();
        let plan = placeholder::lock_of(&open(l.path()), &open(b.path()), libc::LOCK_SH | libc::LOCK_NB, false).unwrap();
        assert_eq!(sweep_locks_in(l.path()), 1, "a's, no longer held; b's is held by the plan");
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor and buffer.
        assert_eq!(unsafe { libc::fstat(std::os::fd::AsRawFd::as_raw_fd(&plan), &mut st) }, 0);
        assert_eq!(st.st_nlink, 1, "the plan's lock file is still linked");
    }

    /// Found by an attacker's review: any process that held a lock on the directory itself (a
    /// run's `flock`, another user's on the shared /tmp, a run's POSIX read lock) kept the
    /// leftovers for as long as it liked. Only the lock file in sandspawn's state directory and the
    /// POSIX read lock of a plan's own sandbox (see the real bwrap's tests) keep them now.
    #[test]
    fn a_lock_any_other_process_holds_on_the_directory_keeps_nothing() {
        let (t, l) = (tempfile::tempdir().unwrap(), locks());
        let d = t.path().join(".envrc");
        for how in [How::FlockShared, How::FlockExclusive, How::PosixRead, How::OfdRead] {
            make_placeholder(t.path(), ".envrc", placeholder::Kind::Dir);
            let other = hold(t.path(), how);
            remove_leftovers_with(l.path(), &target(&d, PlaceholderKind::Dir));
            other.release();
            assert!(!d.exists(), "removed although another process holds the directory ({how:?})");
        }
    }

    /// Found in CI (a_lock_any_other_process_holds_on_the_directory_keeps_nothing failed once, its
    /// OfdRead round: the placeholder kept): a holder is a fork that never execs, so it kept a copy
    /// of every descriptor this test process had open when it forked, another test's OFD lock on a
    /// lock file among them, and that lock lived on with the holder. A holder keeps only its own:
    /// its two pipe ends and the descriptor it locks through. Counted in its `/proc/PID/fd`, not
    /// through a lock of this test's: another test's paused child (`review::store`'s,
    /// `tool_caches::layers`') may hold a copy of that one as well (this test failed so, once).
    #[test]
    fn a_holder_keeps_none_of_this_process_s_descriptors() {
        let t = tempfile::tempdir().unwrap();
        let ours: Vec<std::fs::File> = (0..8).map(|_| std::fs::File::open(t.path()).unwrap()).collect();
        let holder = hold(t.path(), How::OfdRead);
        let held = std::fs::read_dir(format!("/proc/{}/fd", holder.pid)).unwrap().count();
        holder.release();
        drop(ours);
        assert!(held <= 3, "the holder has {held} descriptors open, not only its two pipe ends and its own");
    }

    /// The cleanup's exclusive lock is free once dropped, though a child forked meanwhile (as a
    /// concurrent spawn's, until it execs) keeps a copy of its descriptor.
    #[test]
    fn a_cleanup_s_lock_is_free_once_dropped_while_a_forked_child_keeps_a_copy() {
        let (t, l) = (tempfile::tempdir().unwrap(), locks());
        let open = |p: &Path| placeholder::open_dir(&c(p), false).unwrap();
        let (locks_fd, dir) = (open(l.path()), open(t.path()));
        let ours = placeholder::lock_of(&locks_fd, &dir, libc::LOCK_EX | libc::LOCK_NB, false).map(sandspawn_helper::file_lock::WholeFileHeld).unwrap();
        // SAFETY: the child calls only async-signal-safe functions until killed.
        let child = unsafe { libc::fork() };
        if child == 0 {
            loop {
                unsafe { libc::pause() };
            }
        }
        assert!(child > 0);
        drop(ours);
        let again = placeholder::lock_of(&locks_fd, &dir, libc::LOCK_EX | libc::LOCK_NB, false);
        // SAFETY: our own child, killed and reaped.
        unsafe {
            libc::kill(child, libc::SIGKILL);
            libc::waitpid(child, std::ptr::null_mut(), 0);
        }
        assert!(again.is_ok(), "dropped, but held through the child's copy: {again:?}");
    }

    /// Found by a fixer: a Landlock-mode command can read sandspawn's state directory, and its
    /// `flock -x` on a directory's lock file made every plan there fail after 2 s. The locks are
    /// OFD locks now: a `flock` does not meet them, and the exclusive one needs a descriptor opened
    /// for writing, which such a command cannot get. Its shared lock keeps leftovers (harmless).
    #[test]
    fn a_command_that_can_only_read_the_lock_file_keeps_no_plan_out() {
        let (t, l) = (tempfile::tempdir().unwrap(), locks());
        let file = lock_file_of(l.path(), t.path());
        let open = |p: &Path| placeholder::open_dir(&c(p), false).unwrap();
        for how in [How::FlockExclusive, How::FlockShared, How::OfdRead] {
            let other = hold(&file, how);
            let plan = placeholder::lock_of(&open(l.path()), &open(t.path()), libc::LOCK_SH | libc::LOCK_NB, false);
            assert!(plan.is_ok(), "a plan's shared lock while another process holds the lock file ({how:?}): {plan:?}");
            other.release();
        }
    }

    #[test]
    fn a_placeholder_is_its_mode_and_nothing_in_it() {
        let t = tempfile::tempdir().unwrap();
        let git = t.path().join(".git");
        std::fs::create_dir(&git).unwrap();
        std::fs::write(git.join("config"), "[core]\n\tfsmonitor = x\n").unwrap();
        std::fs::set_permissions(&git, std::fs::Permissions::from_mode(placeholder::DIR_MODE)).unwrap();
        assert!(!is_placeholder(&git, &git.symlink_metadata().unwrap()), "a filled .git with the mode is no placeholder");
        let empty = t.path().join(".vscode");
        std::fs::create_dir(&empty).unwrap();
        std::fs::set_permissions(&empty, std::fs::Permissions::from_mode(placeholder::DIR_MODE)).unwrap();
        assert!(is_placeholder(&empty, &empty.symlink_metadata().unwrap()));
        let f = t.path().join(".envrc");
        std::fs::write(&f, "echo hi").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(placeholder::FILE_MODE)).unwrap();
        assert!(!is_placeholder(&f, &f.symlink_metadata().unwrap()), "a file with content");
        std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o700)).unwrap();
    }

    /// Many names in one directory (`/tmp`'s top): one listing says which to look at, and the
    /// placeholders among them are removed as when each is looked at.
    #[test]
    fn a_directory_of_many_names_is_listed_and_its_placeholders_removed() {
        let (t, held_locks) = (tempfile::tempdir().unwrap(), locks());
        make_placeholder(t.path(), ".envrc", placeholder::Kind::File);
        make_placeholder(t.path(), ".vscode", placeholder::Kind::Dir);
        let names: Vec<String> = (0..20).map(|i| format!("name{i}")).chain([".envrc".to_string(), ".vscode".to_string()]).collect();
        let kind = |n: &str| if n == ".vscode" { PlaceholderKind::Dir } else { PlaceholderKind::File };
        let all: Vec<MissingReadOnly> = names.iter().flat_map(|n| target(&t.path().join(n), kind(n))).collect();
        remove_leftovers_with(held_locks.path(), &all);
        assert!(t.path().join(".envrc").symlink_metadata().is_err() && t.path().join(".vscode").symlink_metadata().is_err(), "both removed");
    }

    /// The cleanup after a run takes the listing the check after the run made of the same
    /// directory (`remove_leftovers_listed`): the leftovers there at that listing are removed, with
    /// no listing of its own; a directory it was not given is listed here.
    #[test]
    fn a_listing_taken_after_the_run_serves_the_cleanup_too() {
        let (t, other, held_locks) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), locks());
        make_placeholder(t.path(), ".envrc", placeholder::Kind::File);
        make_placeholder(other.path(), ".idea", placeholder::Kind::Dir);
        let names: Vec<String> = (0..20).map(|i| format!("name{i}")).chain([".envrc".to_string(), ".idea".to_string()]).collect();
        let kind = |n: &str| if n == ".idea" { PlaceholderKind::Dir } else { PlaceholderKind::File };
        let at = |dir: &Path| -> Vec<MissingReadOnly> { names.iter().flat_map(|n| target(&dir.join(n), kind(n))).collect() };
        let mut listed = Presence::of(at(t.path()).iter().map(|m| m.path.as_path()));
        let all: Vec<MissingReadOnly> = at(t.path()).into_iter().chain(at(other.path())).collect();
        remove_leftovers_in(held_locks.path(), &all, &mut listed);
        assert!(t.path().join(".envrc").symlink_metadata().is_err(), "there at the shared listing: removed");
        assert!(other.path().join(".idea").symlink_metadata().is_err(), "a directory not listed before: listed and cleaned");
        assert!(!listed.may_exist(&other.path().join(".git")), "and its listing kept");
    }

    #[test]
    fn changed_placeholders_and_the_users_own_entries_and_symlinks_are_untouched() {
        let (t, held_locks) = (tempfile::tempdir().unwrap(), locks());
        // An earlier version's file placeholder (empty, mode 1400), written since.
        let f = t.path().join("ro");
        std::fs::write(&f, "data").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(placeholder::FILE_MODE)).unwrap();
        // A symlink that leads anywhere but a placeholder's nowhere.
        let other = t.path().join(".envrc");
        std::os::unix::fs::symlink("/dev/null/x", &other).unwrap();
        let d = t.path().join(".vscode");
        std::fs::create_dir(&d).unwrap(); // the user's own empty directory, mode 755
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(placeholder::DIR_MODE)).unwrap();
        let l = t.path().join("link");
        std::os::unix::fs::symlink(&elsewhere, &l).unwrap();
        let all: Vec<MissingReadOnly> = [(&f, PlaceholderKind::File), (&d, PlaceholderKind::Dir), (&l, PlaceholderKind::Dir), (&other, PlaceholderKind::File)]
            .iter()
            .flat_map(|(p, k)| target(p, *k))
            .collect();
        remove_leftovers_with(held_locks.path(), &all);
        assert!(f.exists(), "a file with content is never removed");
        assert!(d.exists(), "the user's own empty dir stays");
        assert!(l.symlink_metadata().is_ok() && elsewhere.exists(), "symlinks are never removed or followed");
        assert!(other.symlink_metadata().is_ok(), "a symlink with another target is no placeholder");
    }

    /// A file placeholder is a symlink that leads nowhere on the host (`placeholder::LINK_TARGET`):
    /// the host's tools take the name for absent (an empty file broke node, npm and cargo above
    /// it). Recognized as a placeholder, and removed by the cleanup, as is an earlier version's.
    #[test]
    fn a_file_placeholder_is_a_symlink_that_leads_nowhere_and_is_removed_as_the_old_one() {
        let (t, held_locks) = (tempfile::tempdir().unwrap(), locks());
        make_placeholder(t.path(), "package.json", placeholder::Kind::File);
        let p = t.path().join("package.json");
        assert_eq!(std::fs::read_link(&p).unwrap(), Path::new("/dev/null/sandspawn-held"));
        assert_eq!(std::fs::metadata(&p).unwrap_err().raw_os_error(), Some(libc::ENOTDIR), "nothing there for a host tool");
        assert!(is_placeholder(&p, &p.symlink_metadata().unwrap()));
        let old = t.path().join("Cargo.toml");
        std::fs::write(&old, "").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(placeholder::FILE_MODE)).unwrap();
        assert!(is_placeholder(&old, &old.symlink_metadata().unwrap()), "an earlier version's");
        let all: Vec<MissingReadOnly> = [&p, &old].iter().flat_map(|p| target(p, PlaceholderKind::File)).collect();
        remove_leftovers_with(held_locks.path(), &all);
        assert!(p.symlink_metadata().is_err() && old.symlink_metadata().is_err(), "both removed");
    }
}
