//! Keeping absent names absent while a run is in flight (Linux): a thread of the run watches the
//! tops of its writable roots with inotify and moves aside (`undo`) what the command creates there
//! under a name that must stay absent (a `.git` where there is none, a missing protected name), as
//! soon as the kernel reports it. The host's tools (VS Code's git view, a shell's prompt) would
//! otherwise act on it before the run ends; now the window is the time from the event to the rename.
//! The walk after the run (`detect`) still checks every such path, at the tops of repositories
//! inside the roots too, which are not watched here (one watch per root, whatever the tree holds).
//!
//! An overflow of the event queue (`IN_Q_OVERFLOW`) lost events, a top's among them: every path
//! kept absent is then looked at, as the poll looks at a polled top's (`on_events`).
//!
//! A top inotify cannot watch is polled instead: an `lstat` of each name kept absent there every
//! `POLL_EVERY`. inotify instances are a budget per user (`fs.inotify.max_user_instances`, 128 by
//! default) that every process of the user spends, sandboxed commands included: found by an
//! attacker's review, a run that spent it switched off the keeper of every run started meanwhile,
//! silently, and a planted `.git` stayed on the host for the whole run. A keeper that cannot start
//! at all (no pipe, no thread) says why, and the run's result says so (`notEnforced`).
//!
//! An entry in the shape of a plan's placeholder (empty, mode 1500 or 1400: `placeholders::
//! is_placeholder`) is left where it is, since a plan another program runs may need it there, but
//! not forgotten: found by an attacker's review, a command made `.git` such an empty directory
//! first, then opened it up and filled it (`core.fsmonitor`), and as no event named it again it
//! stayed on the host for the whole run. Such entries, and those there when the keeper starts, are
//! looked at again at every poll and whenever their attributes change (`IN_ATTRIB`: the `chmod`
//! that opens one up), and moved aside once they are placeholders no more. `IN_ATTRIB` is asked of
//! each such entry (a watch of its own), not of the top: a directory's watch for an event of its
//! children makes the kernel mark every dentry it has cached below it, the negative ones included
//! (`fsnotify_set_children_dentry_flags`), at every run. Measured on the shared `/tmp` of a busy
//! machine, a writable root of the default policy: 2.5 ms of every run's host CPU.
//!
//! sandspawn's own bin link (`own_links`: what `npx sandspawn` runs) is kept the other way round:
//! not absent but as it was, put back at once on an event of its `.bin`, of the `node_modules`
//! above or of a shim file (watched with `IN_MASK_ADD`, in case one is a top as well), each
//! put-back counted as a move.
//!
//! The moves are bounded, so that a loop cannot fill the directories with moved copies: one path is
//! moved aside at most `MAX_MOVES` times, and a run's paths `MAX_MOVES_PER_RUN` times in all. The
//! move that reaches a bound also ends the run (`EndRun`: the runner SIGKILLs its whole tree at
//! once, as a timeout does once its grace is over), and nothing more is moved here; the walk after
//! the run moves what the command made meanwhile. Found and reproduced by a fixer: past the bound the path was left
//! until the run ended, so a command that made `.git` 17 times kept a planted repository at the
//! workspace's top for the rest of its run, for the host's `git status` to run its `core.fsmonitor`.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::thread::JoinHandle;
#[cfg(target_os = "linux")]
use std::time::{Duration, Instant};

use super::detect::HostRisk;
use super::home::Bases;
#[cfg(target_os = "linux")]
use {
    super::detect::RiskKind,
    super::undo,
    std::os::fd::{AsRawFd, FromRawFd},
    std::os::unix::ffi::{OsStrExt, OsStringExt},
    std::path::Path,
};

/// How often one path is moved aside during a run: the last of these moves ends the run.
#[cfg(target_os = "linux")]
const MAX_MOVES: usize = 16;

/// How many moves one run's keeper makes in all, over every path: the last ends the run. What the
/// number of paths alone allows is large (a home's top keeps about a hundred names absent: 1,600
/// moved copies), and no command that is not looping makes more than a few of them.
#[cfg(target_os = "linux")]
const MAX_MOVES_PER_RUN: usize = 128;

/// How often the names of a top inotify cannot watch are looked at: the window a planted name has
/// before the host's tools may meet it, as the event's latency is with inotify.
#[cfg(target_os = "linux")]
const POLL_EVERY: Duration = Duration::from_millis(50);
/// After events of the bin entries were handled, the keeper reads no more for this long (the stop
/// still heard at once): meanwhile the kernel merges a repeated event into one. Found by an
/// attacker's review (fix30): pnpm's shim touched in a loop (`IN_ATTRIB`, content unchanged:
/// nothing to put back, no move counted) had every entry looked at and watched again for each
/// touch, 20% of a host core for the run's life; now at most 200 rounds a second, each a few
/// dozen system calls. A change is still put back within this much of its event.
#[cfg(target_os = "linux")]
const OWN_PACE: Duration = Duration::from_millis(5);

/// The time one `lstat` of the poll may take on average, at most: with more names the poll is
/// spaced out (a thousand names every 50 ms, four thousand every 200 ms), so that it never takes
/// more than a few per cent of one core. Measured on a shared 2-core machine: 200 names (a run has
/// a few dozen per top) 0.8% of a core, 1,000 names 2.7%, 4,000 names 2.3%.
#[cfg(target_os = "linux")]
const POLL_BUDGET_PER_NAME: Duration = Duration::from_micros(50);

/// How a keeper ends its run when a move reaches a bound (`MAX_MOVES`, `MAX_MOVES_PER_RUN`): the
/// runner's, which kills the run's whole tree. Called at most once, on the keeper's thread.
pub type EndRun = Box<dyn FnOnce() + Send>;

/// The running keeper of one run.
pub struct Keeper {
    stop: OwnedFd,
    /// What was moved aside, sent when the thread stops: before it closes its inotify instance,
    /// which takes the kernel an RCU grace period (15 ms measured here, on every run's path).
    risks: std::sync::mpsc::Receiver<Vec<HostRisk>>,
    thread: JoinHandle<()>,
}

/// What the reports of a keeper say of a path: what the host does with it. (Read on Linux only:
/// elsewhere there is no keeper.)
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Said {
    home: Bases,
    names: std::sync::Arc<HashSet<String>>,
}

/// Watch (or poll) the directories of the `absent` paths that are tops of `roots`; nothing
/// (`Ok(None)`) when there are none or on a system without inotify (the walk after the run remains),
/// `Err(why)` when no keeper could be started. `home`: what the host does with the paths of its
/// home (`home::Bases`), and `names` the protected names, for the reports (any other name kept
/// absent is a missing `readOnlyPaths` or `denyRead` entry). `end_run` ends the run (see `EndRun`).
///
/// `own`: sandspawn's bin links as they were before the run (`own_links`), put back at once when
/// an event says one may have changed (found while closing host28's hole: a host `npx sandspawn`
/// started while the run went on ran the script the command had put there), within the same bounds.
/// Run on the blocking thread before every sandboxed run, with the ~600 names held absent at the
/// tops: a top is compared and looked up as bytes, its path copied once (not per name), and the
/// names shared, not copied (0.68 samples/run at 1999 Hz, ~0.34 ms of host CPU, with a `PathBuf`
/// made and hashed by component per name and the ~250 protected names cloned every run).
pub fn start(absent: &[PathBuf], roots: &[PathBuf], home: &Bases, names: &std::sync::Arc<HashSet<String>>, own: &[crate::own_links::Recorded], end_run: EndRun) -> Result<Option<Keeper>, String> {
    let mut by_top: HashMap<&OsStr, HashSet<OsString>> = HashMap::new();
    for p in absent {
        let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else { continue };
        let Some(root) = roots.iter().find(|r| r.as_os_str() == dir.as_os_str()) else { continue };
        by_top.entry(root.as_os_str()).or_default().insert(name.to_os_string());
    }
    if by_top.is_empty() && own.is_empty() {
        return Ok(None);
    }
    let by_dir: HashMap<PathBuf, HashSet<OsString>> = by_top.into_iter().map(|(top, names)| (PathBuf::from(top), names)).collect();
    watch(by_dir, own.to_vec(), Said { home: home.clone(), names: std::sync::Arc::clone(names) }, end_run)
}

/// inotify is Linux's. Elsewhere the walk after the run remains (on macOS the Seatbelt profile
/// denies creating these names in the first place).
#[cfg(not(target_os = "linux"))]
fn watch(_by_dir: HashMap<PathBuf, HashSet<OsString>>, _own: Vec<crate::own_links::Recorded>, _said: Said, _end_run: EndRun) -> Result<Option<Keeper>, String> {
    Ok(None)
}

/// For the tests: makes what a keeper needs fail for the keepers whose tops include a directory named
/// here, as a spent budget does (the user's inotify instances, this process's descriptors).
#[cfg(target_os = "linux")]
pub(crate) mod failing {
    use std::path::PathBuf;
    #[cfg(test)]
    use {std::path::Path, std::sync::Mutex};

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    #[cfg_attr(not(test), allow(dead_code))]
    pub enum Fails {
        /// `inotify_init1` fails (EMFILE: the user's `max_user_instances`).
        Inotify,
        /// So does everything else the keeper would need (no descriptor left).
        Everything,
    }

    #[cfg(test)]
    static FAILING: Mutex<Vec<(PathBuf, Fails)>> = Mutex::new(Vec::new());

    #[cfg(test)]
    pub fn set(dir: &Path, fails: Fails) {
        FAILING.lock().unwrap().push((dir.to_path_buf(), fails));
    }

    #[cfg(test)]
    pub fn clear(dir: &Path) {
        FAILING.lock().unwrap().retain(|(d, _)| d != dir);
    }

    #[cfg(test)]
    pub(super) fn of<'a>(mut dirs: impl Iterator<Item = &'a PathBuf>) -> Option<Fails> {
        let failing = FAILING.lock().unwrap();
        dirs.find_map(|d| failing.iter().find(|(f, _)| f == d).map(|(_, fails)| *fails))
    }

    /// Outside the tests nothing is made to fail.
    #[cfg(not(test))]
    pub(super) fn of<'a>(_dirs: impl Iterator<Item = &'a PathBuf>) -> Option<Fails> {
        None
    }
}

/// What the thread of a keeper looks at: the tops inotify watches, and the paths it polls (those of
/// the tops inotify could not watch).
#[cfg(target_os = "linux")]
struct Sight {
    ino: Option<OwnedFd>,
    watched: HashMap<i32, (PathBuf, HashSet<OsString>)>,
    polled: Vec<PathBuf>,
}

#[cfg(target_os = "linux")]
impl Sight {
    /// A watch on each top where inotify can be had (an instance of the user's budget, a watch of
    /// its watches); the rest polled.
    fn of(by_dir: HashMap<PathBuf, HashSet<OsString>>, own: bool, inotify_fails: bool) -> Sight {
        // SAFETY: inotify_init1 with plain flags; the descriptor is owned below.
        let ino = if inotify_fails { -1 } else { unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) } };
        let ino = (ino >= 0).then(|| unsafe { OwnedFd::from_raw_fd(ino) });
        let mut sight = Sight { ino, watched: HashMap::new(), polled: Vec::new() };
        for (dir, names) in by_dir {
            match sight.ino.as_ref().and_then(|ino| add_watch(ino, &dir, TOP_EVENTS)) {
                Some(wd) => drop(sight.watched.insert(wd, (dir, names))),
                None => sight.polled.extend(names.iter().map(|n| dir.join(n))),
            }
        }
        if sight.watched.is_empty() && !own {
            sight.ino = None;
        }
        sight
    }

    /// How long the thread waits for the next event: until the next poll, or for good.
    fn poll_every(&self, placeholders: usize) -> Option<Duration> {
        let n = u32::try_from(self.polled.len().saturating_add(placeholders)).unwrap_or(u32::MAX);
        (n > 0).then(|| POLL_EVERY.max(POLL_BUDGET_PER_NAME.saturating_mul(n)))
    }

    /// The paths kept absent that exist now, with their `lstat`: one listing of each top (a name
    /// it does not hold needs no `lstat`).
    /// A path is made only for a name the listing holds (hundreds of names at `/tmp`'s top).
    fn existing(&self) -> Vec<(PathBuf, std::fs::Metadata)> {
        let mut presence = crate::presence::Presence::default();
        presence.more(self.polled.iter().map(|p| p.as_path()));
        let mut found: Vec<(PathBuf, std::fs::Metadata)> = self.polled.iter().filter_map(|p| presence.symlink_metadata(p).map(|m| (p.clone(), m))).collect();
        for (dir, names) in self.watched.values() {
            presence.list_dir(dir, names.len());
            for name in names.iter().filter(|n| presence.may_hold(dir, n)) {
                let p = dir.join(name);
                if let Ok(m) = p.symlink_metadata() {
                    found.push((p, m));
                }
            }
        }
        found
    }
}

/// The watch descriptor of a watch asking `mask` of the entry at `path` (a top: `TOP_EVENTS`; a
/// placeholder: `PLACEHOLDER_EVENTS`), not followed if it is a symlink.
#[cfg(target_os = "linux")]
fn add_watch(ino: &OwnedFd, path: &Path, mask: u32) -> Option<i32> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a valid inotify descriptor and C string.
    let wd = unsafe { libc::inotify_add_watch(ino.as_raw_fd(), c.as_ptr(), mask) };
    (wd >= 0).then_some(wd)
}

/// What a top's watch asks for: entries made or moved in. No event of its children (`IN_ATTRIB`,
/// `IN_MODIFY`, `IN_OPEN`...): see the module comment; placeholders are watched one by one.
#[cfg(target_os = "linux")]
const TOP_EVENTS: u32 = libc::IN_CREATE | libc::IN_MOVED_TO | libc::IN_ONLYDIR | libc::IN_DONT_FOLLOW;

/// What a placeholder's own watch asks for: a change of its attributes (the `chmod` that opens it up).
#[cfg(target_os = "linux")]
const PLACEHOLDER_EVENTS: u32 = libc::IN_ATTRIB | libc::IN_DONT_FOLLOW;

#[cfg(target_os = "linux")]
fn watch(by_dir: HashMap<PathBuf, HashSet<OsString>>, own: Vec<crate::own_links::Recorded>, said: Said, end_run: EndRun) -> Result<Option<Keeper>, String> {
    let fails = failing::of(by_dir.keys());
    let sight = Sight::of(by_dir, !own.is_empty(), fails.is_some());
    let (stop_r, stop_w) = stop_pipe(fails == Some(failing::Fails::Everything)).map_err(|e| format!("no pipe to stop its thread: {}", sandspawn_helper::report::os_words(&e)))?;
    let (tx, risks) = std::sync::mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("sandspawn-keeper".into())
        .spawn(move || {
            let _ = tx.send(keep(&sight, own, stop_r, &said, end_run));
            // The instance is closed here, after the result went out (see `Keeper::risks`).
            drop(sight);
        })
        .map_err(|e| format!("its thread could not be started: {e}"))?;
    Ok(Some(Keeper { stop: stop_w, risks, thread }))
}

/// `(read end, write end)`: the thread stops at the write end's EOF.
#[cfg(target_os = "linux")]
fn stop_pipe(fails: bool) -> std::io::Result<(OwnedFd, OwnedFd)> {
    if fails {
        return Err(std::io::Error::from_raw_os_error(libc::EMFILE));
    }
    let mut fds = [0i32; 2];
    // SAFETY: a two-element array for pipe2; the descriptors are owned below.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Keeper {
    /// Stop watching (the run is over) and return what was moved aside meanwhile.
    /// The thread ends on its own just after (it closes the inotify instance): not waited for.
    pub fn finish(self) -> Vec<HostRisk> {
        drop(self.stop); // EOF on the thread's end of the pipe
        let risks = self.risks.recv().unwrap_or_default();
        drop(self.thread);
        risks
    }
}

#[cfg(target_os = "linux")]
fn keep(sight: &Sight, own: Vec<crate::own_links::Recorded>, stop: OwnedFd, said: &Said, end_run: EndRun) -> Vec<HostRisk> {
    let mut undoing = Undoing::new(said, sight.ino.as_ref(), end_run);
    undoing.tops = sight.watched.keys().copied().collect();
    undoing.own = own;
    // Watched, then looked at: a change between the record and the watch is not missed.
    undoing.own_heard(0..undoing.own.len());
    // Looked at every poll: all of them without inotify, else those that can change unheard (a
    // shim written through a shared mapping, `own_links::changes_unheard`).
    let own_polled: Vec<usize> = (0..undoing.own.len()).filter(|&i| sight.ino.is_none() || crate::own_links::changes_unheard(&undoing.own[i])).collect();
    let mut buf = vec![0u8; 64 * 1024];
    // The placeholders there already (a plan's, or one made before the watches began): no event of
    // their making will come. Anything else made since the watches began has its event queued.
    for (p, m) in sight.existing() {
        if crate::placeholders::is_placeholder(&p, &m) {
            undoing.track(&p);
        }
    }
    let mut next_poll = Instant::now();
    loop {
        let every = sight.poll_every(undoing.placeholders.len() + own_polled.len());
        if let Some(every) = every.filter(|_| Instant::now() >= next_poll) {
            for path in sight.polled.iter().filter(|p| p.symlink_metadata().is_ok()) {
                undoing.undo(path);
            }
            undoing.look_again();
            for &i in &own_polled {
                undoing.own_changed(i);
            }
            next_poll = Instant::now() + every;
        }
        // Until the next poll (rounded up: never a busy loop), or for good.
        let timeout = every.map_or(-1, |_| next_poll.saturating_duration_since(Instant::now()).as_micros().div_ceil(1000) as i32);
        let ino = sight.ino.as_ref().map_or(-1, |i| i.as_raw_fd()); // poll skips a negative descriptor
        let mut fds = [libc::pollfd { fd: ino, events: libc::POLLIN, revents: 0 }, libc::pollfd { fd: stop.as_raw_fd(), events: libc::POLLIN, revents: 0 }];
        // SAFETY: two valid pollfds.
        if unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout) } < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return undoing.risks;
        }
        if let Some(ino) = sight.ino.as_ref().filter(|_| fds[0].revents & libc::POLLIN != 0) {
            on_events(sight, &mut undoing, read_events(ino, &mut buf));
        }
        if fds[1].revents != 0 || (std::mem::take(&mut undoing.own_were_heard) && stopped_within(&stop, OWN_PACE)) {
            return undoing.risks;
        }
    }
}

/// Whether `stop` is readable within `pace` (the keeper pausing: `OWN_PACE`).
#[cfg(target_os = "linux")]
fn stopped_within(stop: &OwnedFd, pace: Duration) -> bool {
    let mut fd = libc::pollfd { fd: stop.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd. Interrupted: taken for not stopped (the loop polls it again).
    unsafe { libc::poll(&mut fd, 1, pace.as_millis() as i32) > 0 && fd.revents != 0 }
}

/// What the events read (`read_events`) say: an entry made at a top under a name kept absent is
/// moved aside, a placeholder whose attributes changed is looked at again. An overflow of the queue
/// (`IN_Q_OVERFLOW`, of no watch: wd -1) means events were lost, a top's among them: then every
/// path kept absent is looked at, after the events that did come (so that what they name is not
/// moved once and then reported again as gone). Found by an attacker's review: it was ignored, and
/// what was made at a top while events were lost stayed for the whole run.
#[cfg(target_os = "linux")]
fn on_events(sight: &Sight, undoing: &mut Undoing, events: Vec<(i32, u32, OsString)>) {
    let lost = events.iter().any(|(_, mask, _)| mask & libc::IN_Q_OVERFLOW != 0);
    // The bin entries the events may be of, handled once for the whole read (`OWN_PACE`).
    let mut heard = std::collections::BTreeSet::new();
    for (wd, mask, name) in events {
        if let Some((dir, names)) = sight.watched.get(&wd) {
            if names.contains(&name) {
                undoing.undo(&dir.join(&name));
            }
        } else if let Some(path) = undoing.attrib.get(&wd).filter(|_| mask & libc::IN_ATTRIB != 0).cloned() {
            undoing.changed(&path);
        }
        // Also when the directory is a top as well (its watch's mask was added to: IN_MASK_ADD).
        // Only an event of the entry's name (or of the watched entry itself: no name): `npm install`
        // in the run makes thousands of entries in `node_modules`, each an event.
        // A `.bin` holds several recorded entries (the link and what npx runs before it, `node`,
        // `sh`...), and inotify gives one watch per directory: each entry the name may be of.
        if undoing.own_wds.contains(&wd) {
            heard.extend((0..undoing.own.len()).filter(|&i| crate::own_links::named_by(&undoing.own[i], &name)));
        }
    }
    undoing.own_heard(heard.into_iter());
    if lost {
        undoing.own_heard(0..undoing.own.len());
        // A placeholder is kept in sight again (`undo` -> `track`), its lost `IN_ATTRIB` with it.
        for (p, _) in sight.existing() {
            undoing.undo(&p);
        }
    }
}

/// What a keeper moved aside, how often it moved each path and all, and the placeholders it left.
#[cfg(target_os = "linux")]
struct Undoing<'a> {
    said: &'a Said,
    risks: Vec<HostRisk>,
    moves: HashMap<PathBuf, usize>,
    moved: usize,
    /// Taken when a move reaches a bound: from then on the run is being ended, and nothing more is moved.
    end_run: Option<EndRun>,
    /// The entries left as placeholders, looked at again at every poll (see the module comment).
    placeholders: HashSet<PathBuf>,
    /// The thread's inotify instance, when it has one: each placeholder is watched on it for
    /// `IN_ATTRIB` (`track`).
    ino: Option<&'a OwnedFd>,
    /// Those watches: the path each was asked for.
    attrib: HashMap<i32, PathBuf>,
    /// sandspawn's bin links as they were before the run (`own_links`), and the watches whose
    /// events say one may have changed (`own_watch_all`): the index of its link.
    own: Vec<crate::own_links::Recorded>,
    own_wds: HashSet<i32>,
    /// The tops' watches (`Sight::watched`): never removed with a bin entry's.
    tops: HashSet<i32>,
    /// Whether events of the bin entries were handled since the keeper last paused (`OWN_PACE`).
    own_were_heard: bool,
}

#[cfg(target_os = "linux")]
impl<'a> Undoing<'a> {
    fn new(said: &'a Said, ino: Option<&'a OwnedFd>, end_run: EndRun) -> Undoing<'a> {
        Undoing { said, risks: Vec::new(), moves: HashMap::new(), moved: 0, end_run: Some(end_run), placeholders: HashSet::new(), ino, attrib: HashMap::new(), own: Vec::new(), own_wds: HashSet::new(), tops: HashSet::new(), own_were_heard: false }
    }

    /// An event that may be of the bin entries `which` (or none heard: the first look, a lost
    /// queue): every entry watched again first, then those looked at. Not only after a put-back:
    /// found by an attacker's review (fix29), a command swapped `.bin` for a copy holding the same
    /// link (nothing to put back), so the watch stayed on the old directory, and the link it then
    /// repointed in the new one raised no event until after the run (the same for a shim replaced
    /// by an equal file, then rewritten).
    fn own_heard(&mut self, which: impl Iterator<Item = usize>) {
        let which: Vec<usize> = which.collect();
        if which.is_empty() || self.end_run.is_none() {
            return;
        }
        self.own_were_heard = true;
        self.own_watch_all();
        for i in which {
            self.own_changed(i);
        }
    }

    /// The bin link `own[i]` put back if the command changed it, within the bounds of the moves
    /// (a put-back counts as one), and every entry watched again: after a put-back `.bin` or the
    /// entry may be another inode.
    fn own_changed(&mut self, i: usize) {
        if self.end_run.is_none() {
            return; // the run is being ended: the check after it puts the link back
        }
        if let Some(r) = crate::own_links::check(&self.own[i]) {
            let path = PathBuf::from(&r.path);
            self.risks.push(r);
            self.count(&path);
            self.own_watch_all();
        }
    }

    /// Watches for each bin entry: its `.bin` and the `node_modules` above for entries made,
    /// removed or moved (no event of their children: see the module comment), a shim for being
    /// rewritten. A watch left on what is no longer there (a `.bin` swapped away) is removed,
    /// unless it is a top's or a placeholder's too: a command that swapped `.bin` again and again
    /// would otherwise spend the user's inotify watches, which editors' file watchers need.
    fn own_watch_all(&mut self) {
        let Some(ino) = self.ino else { return };
        let dir = libc::IN_CREATE | libc::IN_DELETE | libc::IN_MOVED_FROM | libc::IN_MOVED_TO | libc::IN_ONLYDIR | libc::IN_DONT_FOLLOW | libc::IN_MASK_ADD;
        let mut now = HashSet::new();
        for r in &self.own {
            let (dotbin, nm, shim) = crate::own_links::watched(r);
            let watches = [
                (Some(dotbin.as_path()), dir | libc::IN_DELETE_SELF | libc::IN_MOVE_SELF),
                (Some(nm.as_path()), dir),
                (shim, libc::IN_MODIFY | libc::IN_ATTRIB | libc::IN_DONT_FOLLOW | libc::IN_MASK_ADD),
            ];
            now.extend(watches.into_iter().filter_map(|(path, mask)| path.and_then(|p| add_watch(ino, p, mask))));
        }
        for stale in self.own_wds.difference(&now).filter(|wd| !self.attrib.contains_key(wd) && !self.tops.contains(wd)) {
            // SAFETY: a watch descriptor of this instance.
            unsafe { libc::inotify_rm_watch(ino.as_raw_fd(), *stale) };
        }
        self.own_wds = now;
    }

    /// Move aside `path`, which the command created (an event named it, or the poll found it),
    /// unless it is a placeholder: a plan another program runs may need that there, and empty it
    /// holds nothing a host tool would use. Its shape proves nothing of who made it, so it is kept
    /// in sight (`look_again`).
    fn undo(&mut self, path: &Path) {
        if path.symlink_metadata().is_ok_and(|m| crate::placeholders::is_placeholder(path, &m)) {
            self.track(path);
            return;
        }
        self.move_aside(path);
    }

    /// Keep the placeholder at `path` in sight: its attributes watched, then looked at again, so
    /// that a `chmod` between the first look and the watch is not missed (the poll would find it,
    /// up to `POLL_EVERY` later). Watched again each time it is tracked: inotify gives one watch per
    /// inode, and a placeholder made again at the same path is another inode.
    fn track(&mut self, path: &Path) {
        if let Some(wd) = self.ino.and_then(|ino| add_watch(ino, path, PLACEHOLDER_EVENTS)) {
            self.attrib.insert(wd, path.to_path_buf());
        }
        match path.symlink_metadata() {
            Ok(m) if crate::placeholders::is_placeholder(path, &m) => drop(self.placeholders.insert(path.to_path_buf())),
            Ok(_) => self.move_aside(path),
            Err(_) => {} // gone: made again, an event or the poll names it
        }
    }

    /// Each placeholder left, looked at again (`look_at`).
    fn look_again(&mut self) {
        for path in std::mem::take(&mut self.placeholders) {
            self.look_at(&path);
        }
    }

    /// The attributes of `path` changed (`IN_ATTRIB`): looked at again if it was left as a
    /// placeholder. Anything else there was moved aside when it was made (this event may well come
    /// after that, and is no new entry to report).
    fn changed(&mut self, path: &Path) {
        if self.placeholders.remove(path) {
            self.look_at(path);
        }
    }

    /// A placeholder left at `path`, looked at again: one the command opened up or filled is moved
    /// aside, one gone is forgotten (made again, an event or the poll names it).
    fn look_at(&mut self, path: &Path) {
        if path.symlink_metadata().is_ok() {
            self.undo(path);
        }
    }

    /// Move `path` aside and report it, within the bounds (`MAX_MOVES`, `MAX_MOVES_PER_RUN`): the
    /// move that reaches one ends the run (`end`). A try that found the entry gone counts too (its
    /// report is as much work). One left in place neither moves nor reports anything: the walk after
    /// the run finds and reports it.
    fn move_aside(&mut self, path: &Path) {
        if self.end_run.is_none() {
            return; // the run is being ended: the walk after it moves what is left
        }
        // Gone: reported here, or no run would (another run's watcher moved it aside and reported
        // it in that run's result; this run's command may well be the one that made it).
        let outcome = match undo::move_aside(path) {
            undo::Undone::MovedTo(to) => format!("; undone at once: moved aside to {}", to.display()),
            undo::Undone::Gone => super::detect::GONE.to_string(),
            undo::Undone::Left(_) => return,
        };
        self.risks.push(risk(path, &outcome, self.said));
        self.count(path);
    }

    /// One more move (or put-back) of `path`: the one that reaches a bound ends the run (`end`).
    fn count(&mut self, path: &Path) {
        let n = self.moves.entry(path.to_path_buf()).or_default();
        *n += 1;
        self.moved += 1;
        if *n == MAX_MOVES {
            self.end(path, &format!("; it was made {MAX_MOVES} times during the run, the most times the keeper moves one path aside"));
        } else if self.moved == MAX_MOVES_PER_RUN {
            self.end(path, &format!("; it was the last of {MAX_MOVES_PER_RUN} entries made during the run where names must stay absent, the most the keeper moves aside for one run"));
        }
    }

    /// A bound is reached at `path` (`bound` says which): the run is ended, and its result says so,
    /// first among what the keeper found (the result lists by path: first among the path's entries).
    fn end(&mut self, path: &Path, bound: &str) {
        if let Some(end_run) = self.end_run.take() {
            end_run();
        }
        let why = format!(
            "{bound} (so that a loop cannot fill the directory with moved copies): the run was ended for it, every process of it \
             killed at once, and what it made after is moved aside after the run"
        );
        // sandspawn's bin link is no name kept absent: said as what it is (`own_links`).
        let risk = if self.own.iter().any(|r| crate::own_links::path(r) == path) {
            let what = "sandspawn's command line as the package manager installed it (what `npx sandspawn` runs) was changed during the run, and put back";
            HostRisk { path: path.to_string_lossy().into_owned(), kind: RiskKind::ProtectedNameCreated, detail: format!("{what}{bound}{}", why.trim_start_matches(bound)) }
        } else {
            risk(path, &why, self.said)
        };
        self.risks.insert(0, risk);
    }
}

/// `(watch descriptor, mask, name)` of every event in the queue now.
#[cfg(target_os = "linux")]
fn read_events(ino: &OwnedFd, buf: &mut [u8]) -> Vec<(i32, u32, OsString)> {
    let mut out = Vec::new();
    loop {
        // SAFETY: reading into our own buffer.
        let n = unsafe { libc::read(ino.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return out;
        }
        let mut at = 0usize;
        let header = std::mem::size_of::<libc::inotify_event>();
        while at + header <= n as usize {
            // SAFETY: the kernel wrote whole events; read_unaligned copes with any alignment.
            let ev: libc::inotify_event = unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
            let name_bytes = &buf[at + header..at + header + ev.len as usize];
            let end = name_bytes.iter().position(|&b| b == 0).unwrap_or(name_bytes.len());
            // Nameless: an event of a watched entry itself (a placeholder's `IN_ATTRIB`).
            out.push((ev.wd, ev.mask, OsString::from_vec(name_bytes[..end].to_vec())));
            at += header + ev.len as usize;
        }
    }
}

#[cfg(target_os = "linux")]
fn risk(path: &Path, outcome: &str, said: &Said) -> HostRisk {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (kind, what) = if name == ".git" {
        (RiskKind::RepositoryCreated, format!("a git repository was created {}, where protectGit keeps .git from being created", super::detect::WHERE_GIT_KEPT))
    } else if let Some(what) = said.home.what_it_does(path) {
        (RiskKind::ProtectedNameCreated, format!("{name} was created during the run in the host user's home, which a writable root holds: {what}"))
    } else if said.names.contains(&name) {
        (RiskKind::ProtectedNameCreated, format!("{name} was created during the run where it must stay absent: {}", super::names::what_it_does(&name)))
    } else if name == super::upward::GIT_HEAD.0 {
        (RiskKind::GitDirectoryCreated, super::detect::head_created())
    } else if let Some(what) = super::upward::what_it_does(&name) {
        (RiskKind::ProtectedNameCreated, format!("{name} was created during the run in a directory above a workspace, where tools search for it: {what}"))
    } else {
        (RiskKind::ProtectedNameCreated, super::detect::KEPT_ABSENT_BY_PATH.to_string())
    };
    HostRisk { path: path.to_string_lossy().into_owned(), kind, detail: format!("{what}{outcome}") }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> std::sync::Arc<HashSet<String>> {
        std::sync::Arc::new(n.iter().map(|s| s.to_string()).collect())
    }

    /// A keeper whose run nothing ends (the tests of what it moves).
    fn start(absent: &[PathBuf], roots: &[PathBuf], home: &Bases, names: &std::sync::Arc<HashSet<String>>) -> Result<Option<Keeper>, String> {
        super::start(absent, roots, home, names, &[], Box::new(|| {}))
    }

    /// A keeper of the names `absent` at the top of `r`, and how often it ended its run.
    fn ending_keeper(r: &Path, absent: &[&str]) -> (Keeper, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        let ended = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = ended.clone();
        let end_run: EndRun = Box::new(move || {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
        let absent: Vec<PathBuf> = absent.iter().map(|n| r.join(n)).collect();
        (super::start(&absent, &[r.to_path_buf()], &Bases::default(), &Default::default(), &[], end_run).unwrap().expect("inotify"), ended)
    }

    /// Makes `name` in `r` (a filled directory for `.git`, else a file), once the last one is gone:
    /// false when it is still there after 5 s (the keeper moves nothing more).
    fn make_again(r: &Path, name: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while r.join(name).symlink_metadata().is_ok() {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        // Filled elsewhere and renamed into place: the keeper may move it at once.
        let made = r.join("making");
        if name == ".git" {
            std::fs::create_dir(&made).unwrap();
            std::fs::write(made.join("config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        } else {
            std::fs::write(&made, "evil").unwrap();
        }
        std::fs::rename(&made, r.join(name)).unwrap();
        true
    }

    fn held_in(r: &Path) -> usize {
        std::fs::read_dir(r).unwrap().filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains(".sandspawn-held-")).count()
    }

    /// `ended` counts 1 within 5 s.
    fn ends(ended: &std::sync::atomic::AtomicUsize) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while ended.load(std::sync::atomic::Ordering::SeqCst) == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        ended.load(std::sync::atomic::Ordering::SeqCst) == 1
    }

    /// Found and reproduced by a fixer: past `MAX_MOVES` the keeper left the path where it was until
    /// the run ended (a `.git` made a 17th time stayed for the host's `git status`). Now the move
    /// that reaches the bound ends the run, and nothing more is moved (the walk after it moves what is left).
    #[test]
    fn a_path_made_again_and_again_ends_the_run_at_its_bound() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let (k, ended) = ending_keeper(&r, &[".git", ".envrc"]);
        make_again(&r, ".envrc");
        for i in 0..MAX_MOVES {
            assert_eq!(ended.load(std::sync::atomic::Ordering::SeqCst), 0, "not ended before the {MAX_MOVES}th move");
            assert!(make_again(&r, ".git"), "moved aside the {i}th time");
        }
        assert!(ends(&ended), "the {MAX_MOVES}th move ends the run");
        assert!(make_again(&r, ".git"), "the {MAX_MOVES}th was moved too");
        let risks = k.finish();
        assert_eq!(ended.load(std::sync::atomic::Ordering::SeqCst), 1, "ended once");
        assert!(r.join(".git").exists(), "nothing more is moved while the run is being ended");
        assert_eq!(held_in(&r), MAX_MOVES + 1, "the {MAX_MOVES} copies of .git and one of .envrc");
        assert_eq!(risks.len(), MAX_MOVES + 2, "{risks:#?}");
        let first = &risks[0];
        assert!(first.path == r.join(".git").to_string_lossy() && first.kind == RiskKind::RepositoryCreated, "{risks:#?}");
        assert!(first.detail.contains(&format!("made {MAX_MOVES} times")) && first.detail.contains("the run was ended"), "{first:?}");
    }

    /// A command that cycles over many names stays within `MAX_MOVES_PER_RUN` moves in all: the
    /// last ends the run, whichever path it was.
    #[test]
    fn many_paths_made_again_end_the_run_at_the_run_s_bound() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let names: Vec<String> = (0..MAX_MOVES_PER_RUN / (MAX_MOVES - 4)).map(|i| format!("name{i}")).collect();
        let (k, ended) = ending_keeper(&r, &names.iter().map(String::as_str).collect::<Vec<_>>());
        for i in 0..MAX_MOVES_PER_RUN {
            assert_eq!(ended.load(std::sync::atomic::Ordering::SeqCst), 0, "not ended before the {MAX_MOVES_PER_RUN}th move");
            assert!(make_again(&r, &names[i % names.len()]), "moved aside the {i}th time");
        }
        assert!(ends(&ended), "the {MAX_MOVES_PER_RUN}th move ends the run");
        let risks = k.finish();
        assert_eq!(held_in(&r), MAX_MOVES_PER_RUN);
        assert_eq!(risks.len(), MAX_MOVES_PER_RUN + 1, "one each, and why the run was ended");
        assert!(risks[0].detail.contains(&format!("{MAX_MOVES_PER_RUN} entries")) && risks[0].detail.contains("the run was ended"), "{:?}", risks[0]);
    }

    #[test]
    fn what_is_created_at_a_watched_top_is_moved_aside_at_once() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        // `cfg`: a missing readOnlyPaths or denyRead entry, no protected name.
        let absent = vec![r.join(".envrc"), r.join(".git"), r.join("deeper/.envrc"), r.join("cfg")];
        let k = start(&absent, &[r.clone()], &Bases::default(), &names(&[".envrc"])).unwrap().expect("inotify");
        std::fs::write(r.join(".envrc"), "evil").unwrap();
        std::fs::create_dir(r.join(".git")).unwrap();
        std::os::unix::fs::symlink("elsewhere", r.join("cfg")).unwrap();
        std::fs::write(r.join("ordinary"), "x").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let there = |n: &str| r.join(n).symlink_metadata().is_ok();
        while (there(".envrc") || there(".git") || there("cfg")) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert!(!there(".envrc") && !there(".git") && !there("cfg"), "moved aside while the run goes on");
        let risks = k.finish();
        let mut kinds: Vec<RiskKind> = risks.iter().map(|h| h.kind).collect();
        kinds.sort_by_key(|k| *k as u8);
        assert_eq!(kinds, vec![RiskKind::RepositoryCreated, RiskKind::ProtectedNameCreated, RiskKind::ProtectedNameCreated]);
        let said = |n: &str| risks.iter().find(|h| h.path == r.join(n).to_string_lossy()).map(|h| h.detail.clone()).unwrap_or_default();
        assert!(said(".envrc").contains("direnv"), "{risks:?}");
        assert!(said("cfg").contains("readOnlyPaths or denyRead") && !said("cfg").contains("protectedNames"), "{risks:?}");
        assert!(r.join("ordinary").exists(), "other names are the command's business");
        let held: Vec<String> = std::fs::read_dir(&r).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).filter(|n| n.contains(".sandspawn-held-")).collect();
        assert_eq!(held.len(), 3, "{held:?}");
    }

    #[test]
    fn a_placeholder_made_meanwhile_is_left_alone() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let k = start(&[r.join(".envrc"), r.join(".vscode")], &[r.clone()], &Bases::default(), &names(&[".envrc", ".vscode"])).unwrap().expect("inotify");
        let dir = sandspawn_helper::placeholder::open_dir(&std::ffi::CString::new(r.as_os_str().as_bytes()).unwrap(), false).unwrap();
        sandspawn_helper::placeholder::create(&dir, c".vscode", sandspawn_helper::placeholder::Kind::Dir);
        std::fs::write(r.join(".envrc"), "x").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while r.join(".envrc").exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let risks = k.finish();
        assert!(r.join(".vscode").exists(), "the placeholder stays where its plan needs it");
        assert_eq!(risks.len(), 1, "{risks:?}");
    }

    /// The `names` in `r` are all moved aside within 5 s while `k` runs, and reported so, each once.
    fn assert_undone_at_once(k: Keeper, r: &Path, names: &[&str]) {
        let deadline = Instant::now() + Duration::from_secs(5);
        let there = || names.iter().any(|n| r.join(n).symlink_metadata().is_ok());
        while there() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        let gone = !there();
        let risks = k.finish();
        assert!(gone, "moved aside while the run goes on: {risks:?}");
        assert_eq!(risks.len(), names.len(), "{risks:?}");
        assert!(risks.iter().all(|h| h.detail.contains("undone at once")), "{risks:?}");
    }

    /// An empty file in a placeholder's shape (mode 1400) put at `path` by renaming, and a descriptor
    /// opened for writing before it took the shape: what writes through it raises no event the
    /// keeper watches, as a command's own descriptor would not.
    fn placeholder_file_kept_open(path: &Path) -> std::fs::File {
        use std::os::unix::fs::PermissionsExt;
        let made = path.with_extension("making");
        let f = std::fs::File::create(&made).unwrap();
        std::fs::set_permissions(&made, std::fs::Permissions::from_mode(sandspawn_helper::placeholder::FILE_MODE)).unwrap();
        std::fs::rename(&made, path).unwrap();
        f
    }

    /// Found by an attacker's review: what had a placeholder's shape when the event came was never
    /// looked at again, so a command made `.git` an empty directory of mode 1500 first, then opened
    /// it up and filled it (`core.fsmonitor`), and it stayed for the whole run.
    #[test]
    fn a_placeholder_opened_up_or_filled_later_is_moved_aside() {
        use std::io::Write;
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let k = start(&[r.join(".git"), r.join(".bashrc")], &[r.clone()], &Bases::default(), &names(&[".bashrc"])).unwrap().expect("inotify");
        let dir = sandspawn_helper::placeholder::open_dir(&std::ffi::CString::new(r.as_os_str().as_bytes()).unwrap(), false).unwrap();
        sandspawn_helper::placeholder::create(&dir, c".git", sandspawn_helper::placeholder::Kind::Dir);
        let mut bashrc = placeholder_file_kept_open(&r.join(".bashrc"));
        std::thread::sleep(Duration::from_millis(150));
        let there = |n: &str| r.join(n).symlink_metadata().is_ok();
        assert!(there(".git") && there(".bashrc"), "empty, in a placeholder's shape: left");
        std::fs::set_permissions(r.join(".git"), std::fs::Permissions::from_mode(0o700)).unwrap();
        let _ = std::fs::write(r.join(".git/config"), "[core]\n\tfsmonitor = evil\n");
        bashrc.write_all(b"evil\n").unwrap();
        assert_undone_at_once(k, &r, &[".git", ".bashrc"]);
    }

    /// The same for a placeholder there before the keeper started (a plan's, or one a command of a
    /// run that started just before made).
    #[test]
    fn a_placeholder_there_before_the_keeper_is_looked_at_too() {
        use std::io::Write;
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let mut envrc = placeholder_file_kept_open(&r.join(".envrc"));
        let k = start(&[r.join(".envrc")], &[r.clone()], &Bases::default(), &names(&[".envrc"])).unwrap().expect("inotify");
        std::thread::sleep(Duration::from_millis(100));
        assert!(r.join(".envrc").exists(), "empty, in a placeholder's shape: left");
        envrc.write_all(b"evil\n").unwrap();
        assert_undone_at_once(k, &r, &[".envrc"]);
    }

    /// Found by an attacker's review: an overflow of the event queue (`IN_Q_OVERFLOW`, a flood of
    /// events while the keeper's thread waits for a core) was ignored, and what was made at a top
    /// while events were lost stayed for the whole run. The queue's bound is global
    /// (`fs.inotify.max_queued_events`), so the overflow is the kernel's event, fed here as it
    /// comes; `.git` made before it stands for an entry whose event was lost.
    #[test]
    fn after_an_overflow_every_kept_path_is_looked_at() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let by_dir = HashMap::from([(r.clone(), [".git", ".envrc", ".vscode"].iter().map(OsString::from).collect())]);
        std::fs::create_dir(r.join(".git")).unwrap();
        std::fs::write(r.join(".git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        let dir = sandspawn_helper::placeholder::open_dir(&std::ffi::CString::new(r.as_os_str().as_bytes()).unwrap(), false).unwrap();
        sandspawn_helper::placeholder::create(&dir, c".vscode", sandspawn_helper::placeholder::Kind::Dir);
        let sight = Sight::of(by_dir, false, false);
        assert_eq!(sight.watched.len(), 1, "inotify");
        let said = Said { home: Bases::default(), names: Default::default() };
        let mut undoing = Undoing::new(&said, sight.ino.as_ref(), Box::new(|| {}));
        on_events(&sight, &mut undoing, vec![(-1, libc::IN_Q_OVERFLOW, OsString::new())]);
        assert!(r.join(".git").symlink_metadata().is_err(), "moved aside: {:?}", undoing.risks);
        assert_eq!(undoing.risks.len(), 1, "{:?}", undoing.risks);
        assert!(undoing.risks[0].kind == RiskKind::RepositoryCreated && undoing.risks[0].detail.contains("undone at once"), "{:?}", undoing.risks);
        assert!(r.join(".vscode").exists() && undoing.placeholders.contains(&r.join(".vscode")), "a placeholder is left, in sight");
    }

    /// A top's watch asks for no event of its children: the kernel would mark every dentry cached
    /// below the top at each run's watch (2.5 ms a run on a busy `/tmp`; see the module comment).
    #[test]
    fn a_top_s_watch_asks_for_no_event_of_its_children() {
        let of_children = libc::IN_ACCESS | libc::IN_MODIFY | libc::IN_ATTRIB | libc::IN_CLOSE_WRITE | libc::IN_CLOSE_NOWRITE | libc::IN_OPEN;
        assert_eq!(TOP_EVENTS & of_children, 0);
    }

    #[test]
    fn two_runs_with_one_root_both_report_what_one_of_them_moved_aside() {
        // As two concurrent runs with /tmp writable: either watcher may move the entry first, and
        // the run whose command made it must not come back with nothing to say.
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let (a, b) = (start(&[r.join(".git")], &[r.clone()], &Bases::default(), &Default::default()).unwrap().expect("inotify"), start(&[r.join(".git")], &[r.clone()], &Bases::default(), &Default::default()).unwrap().expect("inotify"));
        std::fs::create_dir(r.join(".git")).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while r.join(".git").exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        std::thread::sleep(std::time::Duration::from_millis(50)); // the slower watcher's turn
        let (ra, rb) = (a.finish(), b.finish());
        assert_eq!((ra.len(), rb.len()), (1, 1), "{ra:?} {rb:?}");
        let held = std::fs::read_dir(&r).unwrap().filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains(".sandspawn-held-")).count();
        assert_eq!(held, 1, "moved aside once");
        assert!(ra.iter().chain(&rb).all(|h| h.kind == RiskKind::RepositoryCreated && h.detail.contains("moved aside")), "{ra:?} {rb:?}");
    }

    /// Found by an attacker's review: another run of the user's that spent its inotify instances
    /// (`max_user_instances`, per user) switched the keeper off, and a planted `.git` stayed on the
    /// host for the whole run.
    #[test]
    fn without_inotify_the_tops_are_polled() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        failing::set(&r, failing::Fails::Inotify);
        let k = start(&[r.join(".git"), r.join(".envrc")], &[r.clone()], &Bases::default(), &names(&[".envrc"]));
        failing::clear(&r);
        let k = k.unwrap().expect("kept by polling");
        std::fs::create_dir(r.join(".git")).unwrap();
        std::fs::write(r.join(".envrc"), "evil").unwrap();
        assert_undone_at_once(k, &r, &[".git", ".envrc"]);
    }

    #[test]
    fn a_keeper_that_cannot_start_says_why() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        failing::set(&r, failing::Fails::Everything);
        let k = start(&[r.join(".git")], &[r.clone()], &Bases::default(), &Default::default());
        failing::clear(&r);
        assert!(matches!(k, Err(ref why) if !why.is_empty()), "{:?}", k.as_ref().map(|k| k.is_some()));
    }

    /// sandspawn's bin link (`own_links`), changed by the command while the run goes on: put back at
    /// once, not only after the run. Found while closing host28's hole: a host `npx sandspawn`
    /// started meanwhile ran the command's script.
    #[test]
    fn the_bin_link_changed_during_the_run_is_put_back_at_once() {
        let t = tempfile::tempdir().unwrap();
        let nm = t.path().canonicalize().unwrap().join("node_modules");
        std::fs::create_dir_all(nm.join("sandspawn")).unwrap();
        std::fs::create_dir_all(nm.join(".bin")).unwrap();
        let bin = nm.join(".bin/sandspawn");
        std::os::unix::fs::symlink("../sandspawn/bin/sandspawn.js", &bin).unwrap();
        let own = crate::own_links::record(Some(&nm.join("sandspawn")));
        let k = super::start(&[], &[], &Bases::default(), &Default::default(), &own, Box::new(|| {})).unwrap().expect("a keeper of the bin link alone");
        let restored = |what: &str| {
            let until = Instant::now() + Duration::from_secs(5);
            while std::fs::read_link(&bin).ok().as_deref() != Some(Path::new("../sandspawn/bin/sandspawn.js")) {
                assert!(Instant::now() < until, "{what}: not put back during the run");
                std::thread::sleep(Duration::from_millis(5));
            }
        };
        // Repointed in one step (a rename over it; a removal alone is put back before any symlink).
        std::os::unix::fs::symlink("../.evil", nm.join("tmp-link")).unwrap();
        std::fs::rename(nm.join("tmp-link"), &bin).unwrap();
        restored("repointed");
        // `.bin` swapped for a link to a directory of the command's: nothing written through it.
        let evil = nm.join("evil");
        std::fs::create_dir(&evil).unwrap();
        std::fs::write(evil.join("sandspawn"), "evil").unwrap();
        // In one step (RENAME_EXCHANGE): `.bin` moved away alone is made again before any link.
        std::os::unix::fs::symlink(&evil, nm.join("old-bin")).unwrap();
        let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
        let (a, b) = (c(&nm.join("old-bin")), c(&nm.join(".bin")));
        // SAFETY: valid C strings.
        assert_eq!(unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) }, 0, "{}", std::io::Error::last_os_error());
        restored(".bin swapped");
        assert!(std::fs::symlink_metadata(nm.join(".bin")).unwrap().is_dir());
        assert_eq!(std::fs::read_to_string(evil.join("sandspawn")).unwrap(), "evil", "not written through the link");
        let risks = k.finish();
        assert!(risks.iter().filter(|r| r.path == bin.to_string_lossy()).count() >= 2, "{risks:?}");
        // Repointed again and again: the put-back that reaches the bound ends the run.
        let own = crate::own_links::record(Some(&nm.join("sandspawn")));
        let ended = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = ended.clone();
        let k = super::start(&[], &[], &Bases::default(), &Default::default(), &own, Box::new(move || {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })).unwrap().unwrap();
        for n in 0..MAX_MOVES {
            restored(&format!("loop {n}"));
            std::os::unix::fs::symlink("../.evil", nm.join("tmp-link")).unwrap();
            std::fs::rename(nm.join("tmp-link"), &bin).unwrap();
        }
        assert!(ends(&ended), "the run is ended at the bound");
        let risks = k.finish();
        assert!(risks[0].detail.contains("npx sandspawn") && risks[0].detail.contains("the run was ended"), "{risks:?}");
    }

    #[test]
    fn nothing_to_keep_starts_nothing() {
        let t = tempfile::tempdir().unwrap();
        assert!(start(&[t.path().join("a/b")], &[t.path().to_path_buf()], &Bases::default(), &Default::default()).is_ok_and(|k| k.is_none()), "not at a root's top");
    }
}
