//! Keeping absent names absent while a run is in flight (Linux): a thread of the run watches the
//! tops of its writable roots with inotify and moves aside (`undo`) what the command creates there
//! under a name that must stay absent (a `.git` where there is none, a missing protected name), as
//! soon as the kernel reports it. The host's tools (VS Code's git view, a shell's prompt) would
//! otherwise act on it before the run ends; now the window is the time from the event to the rename.
//! The walk after the run (`detect`) still checks every such path, at the tops of repositories
//! inside the roots too, which are not watched here (one watch per root, whatever the tree holds).
//!
//! A command that keeps re-creating one path gets it moved aside `MAX_MOVES` times; after that it is
//! left until the run ends (the walk after the run moves it once more), so a loop cannot fill the
//! directory with moved copies.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::thread::JoinHandle;

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

/// How often one path is moved aside during a run.
#[cfg(target_os = "linux")]
const MAX_MOVES: usize = 16;

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
    names: HashSet<String>,
}

/// Watch the directories of the `absent` paths that are tops of `roots`, or nothing (`None`) when
/// there are none or inotify is not available (the walk after the run remains). `home`: what the
/// host does with the paths of its home (`home::Bases`), and `names` the protected names, for the
/// reports (any other name kept absent is a missing `readOnlyPaths` or `denyRead` entry).
pub fn start(absent: &[PathBuf], roots: &[PathBuf], home: &Bases, names: &HashSet<String>) -> Option<Keeper> {
    let mut by_dir: HashMap<PathBuf, HashSet<OsString>> = HashMap::new();
    for p in absent {
        let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else { continue };
        if roots.iter().any(|r| r == dir) {
            by_dir.entry(dir.to_path_buf()).or_default().insert(name.to_os_string());
        }
    }
    if by_dir.is_empty() {
        return None;
    }
    watch(by_dir, Said { home: home.clone(), names: names.clone() })
}

/// inotify is Linux's. Elsewhere the walk after the run remains (on macOS the Seatbelt profile
/// denies creating these names in the first place).
#[cfg(not(target_os = "linux"))]
fn watch(_by_dir: HashMap<PathBuf, HashSet<OsString>>, _said: Said) -> Option<Keeper> {
    None
}

#[cfg(target_os = "linux")]
fn watch(by_dir: HashMap<PathBuf, HashSet<OsString>>, said: Said) -> Option<Keeper> {
    // SAFETY: inotify_init1 and pipe2 with plain flags; the descriptors are owned below.
    let ino = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
    if ino < 0 {
        return None;
    }
    let ino = unsafe { OwnedFd::from_raw_fd(ino) };
    let mut wds: HashMap<i32, (PathBuf, HashSet<OsString>)> = HashMap::new();
    for (dir, names) in by_dir {
        let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { continue };
        let mask = libc::IN_CREATE | libc::IN_MOVED_TO | libc::IN_ONLYDIR | libc::IN_DONT_FOLLOW;
        // SAFETY: a valid inotify descriptor and C string.
        let wd = unsafe { libc::inotify_add_watch(ino.as_raw_fd(), c.as_ptr(), mask) };
        if wd >= 0 {
            wds.insert(wd, (dir, names));
        }
    }
    let mut fds = [0i32; 2];
    // SAFETY: a two-element array for pipe2.
    if wds.is_empty() || unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    let (stop_r, stop_w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let (tx, risks) = std::sync::mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("sandspawn-keeper".into())
        .spawn(move || {
            let _ = tx.send(keep(&ino, stop_r, wds, &said));
            // The instance is closed here, after the result went out (see `Keeper::risks`).
            drop(ino);
        })
        .ok()?;
    Some(Keeper { stop: stop_w, risks, thread })
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
fn keep(ino: &OwnedFd, stop: OwnedFd, wds: HashMap<i32, (PathBuf, HashSet<OsString>)>, said: &Said) -> Vec<HostRisk> {
    let mut risks = Vec::new();
    let mut moves: HashMap<PathBuf, usize> = HashMap::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let mut fds = [libc::pollfd { fd: ino.as_raw_fd(), events: libc::POLLIN, revents: 0 }, libc::pollfd { fd: stop.as_raw_fd(), events: libc::POLLIN, revents: 0 }];
        // SAFETY: two valid pollfds.
        if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return risks;
        }
        if fds[0].revents & libc::POLLIN != 0 {
            for (wd, name) in read_events(ino, &mut buf) {
                let Some((dir, names)) = wds.get(&wd) else { continue };
                if !names.contains(&name) {
                    continue;
                }
                let path = dir.join(&name);
                // A placeholder of a plan another program runs, made there meanwhile: its own.
                if path.symlink_metadata().is_ok_and(|m| crate::placeholders::is_placeholder(&path, &m)) {
                    continue;
                }
                let n = moves.entry(path.clone()).or_default();
                if *n >= MAX_MOVES {
                    continue;
                }
                *n += 1;
                // Left in place: the walk after the run finds and reports it. Gone: reported here,
                // or no run would (another run's watcher moved it aside and reported it in that
                // run's result; this run's command may well be the one that made it).
                match undo::move_aside(&path) {
                    undo::Undone::MovedTo(to) => risks.push(risk(&path, &format!("; undone at once: moved aside to {}", to.display()), said)),
                    undo::Undone::Gone => risks.push(risk(&path, super::detect::GONE, said)),
                    undo::Undone::Left(_) => {}
                }
            }
        }
        if fds[1].revents != 0 {
            return risks;
        }
    }
}

/// `(watch descriptor, name)` of every event in the queue now.
#[cfg(target_os = "linux")]
fn read_events(ino: &OwnedFd, buf: &mut [u8]) -> Vec<(i32, OsString)> {
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
            if ev.len > 0 {
                out.push((ev.wd, OsString::from_vec(name_bytes[..end].to_vec())));
            }
            at += header + ev.len as usize;
        }
    }
}

#[cfg(target_os = "linux")]
fn risk(path: &Path, outcome: &str, said: &Said) -> HostRisk {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (kind, what) = if name == ".git" {
        (RiskKind::RepositoryCreated, "a git repository was created at the top of a writable root, where protectGit keeps .git from being created".to_string())
    } else if let Some(what) = said.home.what_it_does(path) {
        (RiskKind::ProtectedNameCreated, format!("{name} was created during the run in the host user's home, which a writable root holds: {what}"))
    } else if said.names.contains(&name) {
        (RiskKind::ProtectedNameCreated, format!("{name} was created during the run where it must stay absent: {}", super::names::what_it_does(&name)))
    } else {
        (RiskKind::ProtectedNameCreated, super::detect::KEPT_ABSENT_BY_PATH.to_string())
    };
    HostRisk { path: path.to_string_lossy().into_owned(), kind, detail: format!("{what}{outcome}") }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> HashSet<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn what_is_created_at_a_watched_top_is_moved_aside_at_once() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        // `cfg`: a missing readOnlyPaths or denyRead entry, no protected name.
        let absent = vec![r.join(".envrc"), r.join(".git"), r.join("deeper/.envrc"), r.join("cfg")];
        let k = start(&absent, &[r.clone()], &Bases::default(), &names(&[".envrc"])).expect("inotify");
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
        let k = start(&[r.join(".envrc"), r.join(".vscode")], &[r.clone()], &Bases::default(), &names(&[".envrc", ".vscode"])).expect("inotify");
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

    #[test]
    fn two_runs_with_one_root_both_report_what_one_of_them_moved_aside() {
        // As two concurrent runs with /tmp writable: either watcher may move the entry first, and
        // the run whose command made it must not come back with nothing to say.
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let (a, b) = (start(&[r.join(".git")], &[r.clone()], &Bases::default(), &HashSet::new()).expect("inotify"), start(&[r.join(".git")], &[r.clone()], &Bases::default(), &HashSet::new()).expect("inotify"));
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

    #[test]
    fn nothing_to_keep_starts_nothing() {
        let t = tempfile::tempdir().unwrap();
        assert!(start(&[t.path().join("a/b")], &[t.path().to_path_buf()], &Bases::default(), &HashSet::new()).is_none(), "not at a root's top");
    }
}
