//! Which directories changed since the walk read them (Linux, inotify), so that a later walk skips
//! the ones that did not without looking at them at all.
//!
//! One inotify instance per process, created on first use and shared by every walk (walks run on
//! blocking threads, possibly side by side). A counter orders what happened: draining the queue
//! gives each event's watch `changed_at = ++counter`. The walk reads a directory by opening it,
//! taking `read_at = counter`, adding a watch on the open directory (through `/proc/self/fd/N`, so
//! the watch is on the inode being read, whatever its path names later) and then listing it. A later
//! walk may keep that listing while the watch is still the same watch and no event for it was
//! drained with a counter above `read_at`. An event between the watch and the listing only costs a
//! read the next time.
//!
//! Why that is enough: fsnotify events are queued by the very syscall that adds, removes or renames
//! an entry, before it returns. The walk after a run starts once the sandboxed process tree is dead,
//! so every change it made is already in the queue, and the walk drains the queue before it decides
//! anything. Watched: entries created, deleted, moved in or out, and the directory itself deleted or
//! moved (the walk reads names and types only, and stat never changes them).
//!
//! What the watch cannot tell, and what then happens:
//! - events lost to a full queue (`IN_Q_OVERFLOW`), a change of the mount table (polled on
//!   `/proc/self/mountinfo`: a mount over a watched path hides the inode the watch is on), or a
//!   queue that cannot be read: every listing read before it is `Unknown`, and the walk confirms it
//!   by today's stat rule once (`scan`);
//! - a watch gone (`IN_IGNORED`: the directory was deleted, or its filesystem unmounted): `Changed`;
//! - filesystems where changes can be made by another machine or kernel (NFS, SMB, FUSE, 9p,
//!   virtiofs, ...): not watched at all, only local ones are (`sees_every_change`);
//! - no inotify instance (`EMFILE`: the user's instance budget), a watch refused (`ENOSPC`: the
//!   user's watch budget; `EACCES`), or this process's own cap reached: not watched.
//!
//! A directory not watched keeps today's stat rule.
//!
//! The user's watch budget is shared with editors and file watchers: this process never holds more
//! than `min(262144, max_user_watches / 2)` watches (a 60,000-directory workspace fits in the
//! budgets of current kernels, which scale `max_user_watches` with memory), and past a floor it
//! adds more only while the user's watches in all, every other process's counted (`watch_budget`),
//! stay within half of the budget. A watch is removed as soon as no index of any
//! walk holds a listing that relies on it (`Watch` is reference-counted per watch descriptor:
//! inotify gives the same descriptor for the same inode).

use std::collections::HashMap;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use super::vouch::Vouch;

const MASK: u32 = libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR
    // Not IN_DONT_FOLLOW: the watch is added through `/proc/self/fd/N`, a symlink that has to be
    // followed (the directory was opened with O_NOFOLLOW already).
    | libc::IN_EXCL_UNLINK;

/// What a watch on a file (not a directory) reports: its content written or truncated through any
/// of its names, its attributes, the file itself deleted or moved (`armed`).
const FILE_MASK: u32 = libc::IN_MODIFY | libc::IN_ATTRIB | libc::IN_DELETE_SELF | libc::IN_MOVE_SELF;

/// The most watches this process holds, whatever `max_user_watches` allows.
const MAX_WATCHES: usize = 262_144;
/// The watches a process holds before it counts what the user's other processes hold: a small
/// workspace never pays for the count.
const FLOOR: usize = 4_096;
/// The fewest watches added between two counts of the user's other processes' watches. A count
/// grants half of the room it finds (at least this): a count reads every descriptor of the user's
/// processes (tens of thousands on a desktop with an editor and a browser, ~100 ms), so counts
/// come a logarithmic number of times in a large walk, not once per `STEP` watches (a 100,000-
/// directory walk: about 6, not 47).
const STEP: usize = 2_048;
/// How long a watcher refused more watches waits before it counts again (another process may have
/// let go of some meanwhile).
const RECOUNT_AFTER: Duration = Duration::from_secs(10);

pub struct Watcher {
    inotify: OwnedFd,
    /// Polled for changes of the mount table (`POLLPRI`); the poll itself rearms it.
    mounts: File,
    cap: usize,
    /// The user's whole watch budget (`watch_budget::budget`), when it can be read: past
    /// `floor` this process adds watches only while the user's, in all, stay within half of it.
    budget: Option<usize>,
    floor: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    counter: u64,
    /// Listings read before this are `Unknown` (events lost, mounts changed).
    unknown_before: u64,
    /// The queue could not be read: nothing is vouched for, nothing more is watched.
    broken: bool,
    /// The counter at the latest event of any kind (or change of the mount table).
    last_change: u64,
    watches: HashMap<i32, Entry>,
    /// Tells a watch from a later one that got the same descriptor.
    generations: u64,
    /// Watches may be added without counting again until this many are held (`has_room`).
    room_until: usize,
    /// When the last count found the user's half of the budget spent.
    refused_at: Option<Instant>,
}

struct Entry {
    generation: u64,
    /// `Watch` values that hold this watch.
    holders: usize,
    changed_at: u64,
}

/// One listing's hold on a watch: removes the watch when the last holder goes.
pub struct Watch {
    watcher: Arc<Watcher>,
    wd: i32,
    generation: u64,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Watch({})", self.wd)
    }
}

impl PartialEq for Watch {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.watcher, &other.watcher) && self.wd == other.wd && self.generation == other.generation
    }
}

impl Eq for Watch {}

/// How long after a failed attempt the process's watcher is not tried again.
const RETRY_AFTER: Duration = Duration::from_secs(10);

/// The process's watcher, or `None` when inotify cannot be used here now (then every directory
/// keeps the stat rule).
pub fn global() -> Option<&'static Arc<Watcher>> {
    static GLOBAL: Retried = Retried::new();
    GLOBAL.get(Instant::now(), make_global)
}

#[cfg(not(test))]
fn make_global() -> io::Result<Arc<Watcher>> {
    Watcher::new(default_cap())
}

/// The test binary's watcher runs under a budget of its own (`watch_test_budget`): nothing other
/// processes of the user hold counts against it.
#[cfg(test)]
fn make_global() -> io::Result<Arc<Watcher>> {
    Watcher::made(instance()?, default_cap(), None)
}

/// A fresh inotify instance of this process.
fn instance() -> io::Result<OwnedFd> {
    #[cfg(test)]
    return super::watch_test_budget::instance(libc::IN_NONBLOCK | libc::IN_CLOEXEC);
    #[cfg(not(test))]
    {
        // SAFETY: plain syscall; the descriptor it returns is owned by `OwnedFd` below.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor that nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

/// A watcher made on first use whose failure is not kept for good: `EMFILE` is the user's instance
/// budget, which any process of the user may have spent for a while (another run's command), and
/// the host would otherwise walk by the slower stat rule for its whole life. Tried again
/// `RETRY_AFTER` after a failure, not before (a failed `inotify_init1` costs little, but every walk
/// asks).
struct Retried {
    made: OnceLock<Arc<Watcher>>,
    failed_at: Mutex<Option<Instant>>,
}

impl Retried {
    const fn new() -> Retried {
        Retried { made: OnceLock::new(), failed_at: Mutex::new(None) }
    }

    fn get(&self, now: Instant, make: impl FnOnce() -> io::Result<Arc<Watcher>>) -> Option<&Arc<Watcher>> {
        if let Some(w) = self.made.get() {
            return Some(w);
        }
        // Held while making it: one attempt at a time, one instance made.
        let mut failed_at = self.failed_at.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = self.made.get() {
            return Some(w);
        }
        if failed_at.is_some_and(|at| now.saturating_duration_since(at) < RETRY_AFTER) {
            return None;
        }
        match make() {
            Ok(w) => Some(self.made.get_or_init(|| w)),
            Err(_) => {
                *failed_at = Some(now);
                None
            }
        }
    }
}

/// How many watches this process may hold before it counts again, after a count found `elsewhere`
/// held by the user's other processes while it holds `held`: half of the room left within half of
/// `budget`, `STEP` at least; `None` when not even `STEP` is left.
fn room_until(budget: usize, elsewhere: usize, held: usize) -> Option<usize> {
    let room = (budget / 2).checked_sub(elsewhere + held).filter(|&r| r >= STEP)?;
    Some(held + (room / 2).max(STEP))
}

fn default_cap() -> usize {
    super::watch_budget::budget().map_or(8192, |m| MAX_WATCHES.min(m / 2))
}

impl Watcher {
    pub fn new(cap: usize) -> io::Result<Arc<Watcher>> {
        Watcher::made(instance()?, cap, super::watch_budget::budget())
    }

    /// A watcher on `inotify` that takes at most `cap` watches, and past its floor only while the
    /// user's watches stay within half of `budget` (none: no such rule).
    fn made(inotify: OwnedFd, cap: usize, budget: Option<usize>) -> io::Result<Arc<Watcher>> {
        let mounts = File::open("/proc/self/mountinfo")?;
        let floor = budget.map_or(FLOOR, |b| FLOOR.min(b / 16));
        Ok(Arc::new(Watcher { inotify, mounts, cap, budget, floor, state: Mutex::new(State::default()) }))
    }

    /// Whether one more watch keeps the user's watches, this process's and every other's, within
    /// half of the budget: below the floor always; past it counted again once half of the room the
    /// last count found is taken, and not again for `RECOUNT_AFTER` once refused.
    fn has_room(&self, s: &mut State) -> bool {
        let held = s.watches.len();
        let Some(budget) = self.budget else { return true };
        if held < self.floor || held < s.room_until {
            return true;
        }
        if s.refused_at.is_some_and(|at| at.elapsed() < RECOUNT_AFTER) {
            return false;
        }
        let elsewhere = super::watch_budget::held_elsewhere(self.inotify.as_raw_fd());
        if let Some(until) = room_until(budget, elsewhere, held) {
            s.room_until = until;
            s.refused_at = None;
            true
        } else {
            s.refused_at = Some(Instant::now());
            false
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding it; a poisoned state is still consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Take in every event queued so far (and a change of the mount table).
    pub fn drain(&self) {
        let mut s = self.lock();
        let mut buf = [0u8; 4096];
        loop {
            // SAFETY: `buf` is writable for its whole length.
            let n = unsafe { libc::read(self.inotify.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                match io::Error::last_os_error().raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EAGAIN) => break,
                    _ => {
                        s.broken = true;
                        break;
                    }
                }
            }
            if n == 0 {
                break;
            }
            let mut events = &buf[..n as usize];
            // struct inotify_event: wd (i32), mask, cookie, len (u32), then `len` bytes of name.
            while events.len() >= 16 {
                let word = |i: usize| [events[i], events[i + 1], events[i + 2], events[i + 3]];
                let (wd, mask, len) = (i32::from_ne_bytes(word(0)), u32::from_ne_bytes(word(4)), u32::from_ne_bytes(word(12)) as usize);
                s.note(wd, mask);
                events = events.get(16 + len..).unwrap_or_default();
            }
        }
        if self.mounts_changed() {
            s.counter += 1;
            s.unknown_before = s.counter;
            s.last_change = s.counter;
        }
    }

    fn mounts_changed(&self) -> bool {
        let mut p = libc::pollfd { fd: self.mounts.as_raw_fd(), events: libc::POLLPRI, revents: 0 };
        // SAFETY: one valid pollfd, no waiting.
        let n = unsafe { libc::poll(&mut p, 1, 0) };
        n > 0 && p.revents & (libc::POLLPRI | libc::POLLERR) != 0
    }

    /// What the watcher says of a listing taken at `read_at` under `watch`.
    pub fn vouch(&self, watch: &Watch, read_at: u64) -> Vouch {
        self.lock().vouch(watch, read_at)
    }

    /// Whether every one of `watches` vouches `Unchanged` for what was read at `read_at` (one lock
    /// for all: a repository's facts have a few).
    pub fn all_unchanged(&self, watches: &[Watch], read_at: u64) -> bool {
        let s = self.lock();
        watches.iter().all(|w| s.vouch(w, read_at) == Vouch::Unchanged)
    }

    /// The counter now: a listing known to be current at this point can be vouched for from here.
    pub fn now(&self) -> u64 {
        self.lock().counter
    }

    /// No event at all, on any watch, and no change of the mount table, since `counter` (call after
    /// `drain`): every listing this watcher vouched for then still holds.
    pub fn quiet_since(&self, counter: u64) -> bool {
        let s = self.lock();
        !s.broken && s.last_change <= counter
    }

    /// Watch the open directory `dir` before it is listed. Returns the listing's `read_at` and its
    /// watch, or no watch (the stat rule then applies to it). `known`: the watch an earlier listing
    /// of the same inode holds (inotify gives it again, so it is not one more watch for the cap).
    pub fn watch(self: &Arc<Self>, dir: RawFd, known: Option<&Watch>) -> (u64, Option<Watch>) {
        self.add(dir, MASK, known)
    }

    /// Watch the open file `file` before it is read (`FILE_MASK`): as `watch`.
    pub fn watch_file(self: &Arc<Self>, file: RawFd) -> (u64, Option<Watch>) {
        self.add(file, FILE_MASK, None)
    }

    /// `IN_MASK_ADD`: the same inode watched for more (a file) keeps what each asked for.
    fn add(self: &Arc<Self>, dir: RawFd, mask: u32, known: Option<&Watch>) -> (u64, Option<Watch>) {
        let sees_all = sees_every_change(dir);
        let mut s = self.lock();
        let read_at = s.counter;
        let at_cap = s.watches.len() >= self.cap || !self.has_room(&mut *s);
        let held = known.filter(|k| Arc::ptr_eq(&k.watcher, self) && s.watches.get(&k.wd).is_some_and(|e| e.generation == k.generation));
        if s.broken || !sees_all || (at_cap && held.is_none()) {
            return (read_at, None);
        }
        let Ok(path) = CString::new(format!("/proc/self/fd/{dir}")) else { return (read_at, None) };
        // SAFETY: valid descriptor and NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(self.inotify.as_raw_fd(), path.as_ptr(), mask | libc::IN_MASK_ADD) };
        if wd < 0 {
            #[cfg(test)]
            super::watch_test_budget::refused(&io::Error::last_os_error());
            return (read_at, None);
        }
        let s = &mut *s;
        if at_cap && !s.watches.contains_key(&wd) {
            // Not the inode `known` was on after all: one watch too many.
            // SAFETY: plain syscall on the watch just made.
            unsafe { libc::inotify_rm_watch(self.inotify.as_raw_fd(), wd) };
            return (read_at, None);
        }
        let entry = s.watches.entry(wd).or_insert_with(|| {
            s.generations += 1;
            Entry { generation: s.generations, holders: 0, changed_at: 0 }
        });
        entry.holders += 1;
        let generation = entry.generation;
        (read_at, Some(Watch { watcher: Arc::clone(self), wd, generation }))
    }

    fn release(&self, wd: i32, generation: u64) {
        let mut s = self.lock();
        let Some(e) = s.watches.get_mut(&wd).filter(|e| e.generation == generation) else { return };
        e.holders -= 1;
        if e.holders == 0 {
            s.watches.remove(&wd);
            // SAFETY: plain syscall; a watch the kernel dropped already just fails with EINVAL.
            unsafe { libc::inotify_rm_watch(self.inotify.as_raw_fd(), wd) };
        }
    }

    pub fn owns(self: &Arc<Self>, watch: &Watch) -> bool {
        Arc::ptr_eq(self, &watch.watcher)
    }
}

impl State {
    fn vouch(&self, watch: &Watch, read_at: u64) -> Vouch {
        if self.broken {
            return Vouch::Unknown;
        }
        match self.watches.get(&watch.wd) {
            Some(e) if e.generation == watch.generation && e.changed_at <= read_at => {
                if read_at < self.unknown_before {
                    Vouch::Unknown
                } else {
                    Vouch::Unchanged
                }
            }
            _ => Vouch::Changed,
        }
    }

    fn note(&mut self, wd: i32, mask: u32) {
        self.counter += 1;
        self.last_change = self.counter;
        if mask & libc::IN_Q_OVERFLOW != 0 {
            self.unknown_before = self.counter;
        } else if mask & libc::IN_IGNORED != 0 {
            self.watches.remove(&wd);
        } else if let Some(e) = self.watches.get_mut(&wd) {
            e.changed_at = self.counter;
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.watcher.release(self.wd, self.generation);
    }
}

/// Filesystems where every change goes through this kernel, so inotify sees it. Not network or
/// FUSE filesystems (NFS, SMB, sshfs, 9p and virtiofs of WSL and VMs, container shares): a change
/// made on the other side raises no event there.
fn sees_every_change(dir: RawFd) -> bool {
    const LOCAL: [u32; 9] = [
        0xEF53,     // ext2, ext3, ext4
        0x5846_5342, // xfs
        0x9123_683E, // btrfs
        0x0102_1994, // tmpfs
        0x8584_58F6, // ramfs
        0xF2F5_2010, // f2fs
        0x2FC1_2FC1, // zfs
        0xCA45_1A4E, // bcachefs
        0x794C_7630, // overlayfs (changed through the overlay; its layers are not changed under it)
    ];
    // SAFETY: an all-zero `statfs` is a valid value for fstatfs to overwrite.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `dir` is an open descriptor and `st` is writable.
    let rc = unsafe { libc::fstatfs(dir, &mut st) };
    // f_type's integer type differs between libcs; the magic numbers are 32-bit.
    rc == 0 && LOCAL.contains(&(st.f_type as u32))
}

#[cfg(test)]
impl Watcher {
    /// As if the queue had overflowed: the events queued so far are lost.
    pub fn lose_queued_events(&self) {
        let mut buf = [0u8; 4096];
        // SAFETY: `buf` is writable for its whole length.
        while unsafe { libc::read(self.inotify.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
        self.lock().note(-1, libc::IN_Q_OVERFLOW);
    }

    /// Remove a watch behind the walk's back (the kernel does so when its directory is deleted or
    /// its filesystem unmounted).
    pub fn remove_in_kernel(&self, watch: &Watch) {
        // SAFETY: plain syscall.
        unsafe { libc::inotify_rm_watch(self.inotify.as_raw_fd(), watch.wd) };
    }

    pub fn watch_count(&self) -> usize {
        self.lock().watches.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by an attacker's review: the first use's `EMFILE` (the user's inotify instances spent
    /// by another run for a while) was kept for the process's whole life.
    #[test]
    fn a_watcher_that_could_not_be_made_is_tried_again_later() {
        let r = Retried::new();
        let t0 = Instant::now();
        let spent = || Err(io::Error::from_raw_os_error(libc::EMFILE));
        assert!(r.get(t0, spent).is_none());
        assert!(r.get(t0 + Duration::from_secs(1), || panic!("not tried again at once")).is_none());
        let w = r.get(t0 + RETRY_AFTER, || Watcher::new(16)).expect("made once the budget is back");
        let again = r.get(t0 + RETRY_AFTER * 2, || panic!("made once")).unwrap();
        assert!(Arc::ptr_eq(w, again));
    }


    /// Each count grants half of the room it finds: the counts in a walk that fills the room are
    /// logarithmic in it (a count reads every descriptor of the user's processes).
    #[test]
    fn counts_grant_half_of_the_room_they_find() {
        assert_eq!(room_until(4_000, 1_900, 250), None, "not a STEP left");
        assert_eq!(room_until(200_000, 0, 4_096), Some(4_096 + 47_952));
        let (mut held, mut counts) = (4_096, 0);
        while let Some(until) = room_until(200_000, 0, held) {
            (held, counts) = (until, counts + 1);
        }
        assert!(held <= 100_000 && held > 100_000 - STEP, "filled the half: {held}");
        assert!(counts <= 8, "{counts} counts to fill 96,000 watches");
    }

    /// Found by an attacker's review (cross29): the process's cap was half of the user's budget
    /// whoever else held watches, and a watch stays as long as the walk that made it is kept, after
    /// its run: one run making 100,000 directories left the host process holding 96,273 of the
    /// user's 192,546 watches, and two such processes (two agents of one user) held all of them,
    /// so the user's editors and every other run's file watchers got `ENOSPC`. Here, in a user
    /// namespace of its own with a budget of 4,000 (its `user.max_inotify_watches`, writable
    /// there), another program holds 1,900 watches when sandspawn walks 3,000 directories: the
    /// user's editor must still be able to add its 1,000.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_watches_leave_the_user_half_of_the_budget_whoever_holds_the_rest() {
        const NAME: &str = "planted::watch::tests::the_watches_leave_the_user_half_of_the_budget_whoever_holds_the_rest";
        if std::env::var_os("SANDSPAWN_WATCH_BUDGET_INNER").is_none() {
            let exe = std::env::current_exe().unwrap();
            let run = std::process::Command::new("unshare")
                .args(["--user", "--map-root-user"])
                .arg(exe)
                .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
                .env("SANDSPAWN_WATCH_BUDGET_INNER", "1")
                .output();
            let Ok(out) = run else { return eprintln!("skipped: no unshare(1) here") };
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            if !out.status.success() && text.contains("unshare failed") {
                return eprintln!("skipped: no user namespaces here: {text}");
            }
            assert!(out.status.success() && text.contains("1 passed"), "in its own user namespace:\n{text}");
            return;
        }
        std::fs::write("/proc/sys/user/max_inotify_watches", "4000").expect("the namespace's own budget is writable there");
        let t = tempfile::tempdir().unwrap();
        let dirs: Vec<File> = (0..3_000)
            .map(|i| {
                let d = t.path().join(format!("d{i}"));
                std::fs::create_dir(&d).unwrap();
                File::open(&d).unwrap()
            })
            .collect();
        let instance = || {
            // SAFETY: plain syscall; the descriptor is owned from here.
            let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
            assert!(fd >= 0, "an inotify instance: {}", io::Error::last_os_error());
            unsafe { OwnedFd::from_raw_fd(fd) }
        };
        let add = |to: &OwnedFd, d: &File| {
            let path = CString::new(format!("/proc/self/fd/{}", d.as_raw_fd())).unwrap();
            // SAFETY: valid descriptor and path.
            unsafe { libc::inotify_add_watch(to.as_raw_fd(), path.as_ptr(), MASK) >= 0 }
        };
        let other = instance();
        assert!(dirs[..1_900].iter().all(|d| add(&other, d)), "another program's 1,900 watches");
        let w = Watcher::new(default_cap()).unwrap();
        let held: Vec<Watch> = dirs.iter().filter_map(|d| w.watch(d.as_raw_fd(), None).1).collect();
        let editor = instance();
        let added = dirs[..1_000].iter().filter(|d| add(&editor, d)).count();
        assert_eq!(added, 1_000, "sandspawn took {} watches; the user's editor could add {added} of 1,000", held.len());
    }
}
