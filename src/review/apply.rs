//! `applyChangeSet`: the set's changes written into the host's workspace, path by path, in one
//! streamed walk of each root's upper directory (a directory's own change, and the deletions below
//! a replaced one, before what is in it). What lands is removed from the set; a set with nothing
//! left is removed.
//!
//! - **Selection**: with `paths`, only changes at or below a listed path (the directories above
//!   them are made as needed).
//! - **Held back**: a change with a host risk (`risks`) stays in the set unless `force` is given
//!   and a listed path lies at or below the entry the risk names (naming that very entry, not a
//!   whole workspace, is what lets planted configuration through).
//! - **Conflicts**: a path the host changed since the set began (its ctime is not older than the
//!   beginning; for a directory deleted or replaced by a file or symlink, anything below it) or
//!   created meanwhile stays as the host has it, unless `force`.
//! - **Safety**: every write goes through `host_fs` (no symlink followed, files renamed into place).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::changes::{shown, Change, ChangeKind, Differ, EntryType};
use super::entries::{self, Event, Kind};
use super::host_fs::Dir;
use super::links::Links;
use super::risks::Judge;
use super::store::{ChangeSet, Lock};
use crate::error::{Result, SandboxError};
use crate::planted::{HostRisk, RiskKind};

#[derive(Debug, Clone, Serialize)]
pub struct Conflict {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Held {
    pub path: String,
    pub risk: HostRisk,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    pub applied: Vec<String>,
    pub conflicts: Vec<Conflict>,
    pub held_back: Vec<Held>,
}

/// What the caller asked for.
pub struct Request<'a> {
    /// By their real names (`content::resolve`), never the shown ones.
    pub paths: Option<&'a [PathBuf]>,
    pub force: bool,
}

impl Request<'_> {
    /// `path` is asked for (at or below a listed path).
    fn selects(&self, path: &Path) -> bool {
        self.paths.is_none_or(|ps| ps.iter().any(|p| path.starts_with(p)))
    }

    /// Something at or below directory `path` is asked for.
    fn reaches(&self, path: &Path) -> bool {
        self.paths.is_none_or(|ps| ps.iter().any(|p| path.starts_with(p) || p.starts_with(path)))
    }

    /// A held-back change may land: forced, with a listed path at or below the risky entry (whose
    /// path is shown, as the caller named it: `changes::shown`).
    fn overrides(&self, risk: &HostRisk) -> bool {
        self.force && self.paths.is_some_and(|ps| ps.iter().any(|p| Path::new(&shown(p)).starts_with(&risk.path)))
    }
}

/// Apply `req` of `set` (held by `lock`). Returns what landed, what conflicted, what was held back.
pub fn apply(set: &ChangeSet, lock: &Lock, req: &Request) -> Result<Outcome> {
    apply_sealed(set, lock, req, super::clock_floor::sealed_now())
}

/// As `apply`, landing no file of the set changed at or after `sealed_ns` (taken by the caller
/// before it checked the set's revision: `clock_floor::sealed_now`). The set's lock keeps runs out,
/// not a descriptor of a file of it that a run opened for writing and passed to a process that
/// outlived it: what that process wrote after the check was never shown.
pub fn apply_sealed(set: &ChangeSet, lock: &Lock, req: &Request, sealed_ns: i64) -> Result<Outcome> {
    let mut out = Outcome::default();
    // Whether some root's upper directory still holds something (its top frame not clean).
    let mut left = false;
    let elsewhere = super::elsewhere::hooks_elsewhere(&set.meta);
    // Never applied: what its last run's end could not ask whether it was held open (`unasked`).
    let unasked = super::unasked::read(set).map_err(|e| SandboxError::setup_failed(format!("applying change set {} failed: {}", set.meta.id, super::unasked::unreadable(&set.meta.cwd, &e).detail), ""))?;
    for (i, root) in set.meta.roots.iter().enumerate() {
        if super::unasked::id_of(&set.upper(i)).is_ok_and(|id| unasked.contains(&id)) {
            out.conflicts.push(Conflict { path: shown(root), reason: super::unasked::WHY.into() });
            left = true;
            continue;
        }
        let dir = match Dir::open_root(root) {
            Ok(d) => d,
            Err(e) => {
                let reason = format!("the workspace root cannot be opened without following a symlink ({}): it was moved, removed or replaced", sandspawn_helper::report::os_words(&e));
                out.conflicts.push(Conflict { path: shown(root), reason });
                left = true;
                continue;
            }
        };
        let mut root_apply = RootApply { set, req, sealed_ns, unasked: &unasked, upper: set.upper(i), differ: Differ::new(root), judge: Judge::new(&set.meta, root, &set.upper(i), &elsewhere), stack: vec![Frame { dir: Some(dir), clean: true }], links: Links::default(), top_unread: false, out: &mut out };
        let root_mode = root_apply.root_mode_judged(set.meta.root_modes.get(i).copied())?;
        entries::walk(&set.upper(i), root, |ev| root_apply.event(ev)).map_err(|e| SandboxError::setup_failed(format!("applying change set {} failed: {e}", set.meta.id), ""))?;
        if let Some(c) = root_mode {
            root_apply.root_mode_lands(&c);
        }
        left |= !root_apply.stack.first().is_some_and(|f| f.clean);
    }
    // Applied whole, or piece by piece until nothing is left: a set with nothing to review is gone.
    // Only when nothing is left: what did not land without a word (a fifo was such) must not go
    // with a set said to be applied.
    if !left && out.conflicts.is_empty() && out.held_back.is_empty() {
        super::store::remove(set, lock)?;
    } else {
        set.touch();
    }
    Ok(out)
}

// Tests: called with a directory's name right before (`false`) and after (`true`) `make_dir`
// opens it, to move directories on the host between what is judged and what is written.
#[cfg(test)]
thread_local! {
    pub static AROUND_CHILD: std::cell::RefCell<Option<Box<dyn FnMut(&std::ffi::OsStr, bool)>>> = const { std::cell::RefCell::new(None) };
}

#[cfg(test)]
fn around_child(name: &std::ffi::OsStr, after: bool) {
    AROUND_CHILD.with(|h| {
        if let Some(h) = h.borrow_mut().as_mut() {
            h(name, after)
        }
    });
}

#[cfg(not(test))]
fn around_child(_: &std::ffi::OsStr, _: bool) {}

/// One directory level of the walk: its host directory (`None` when it could not be made: nothing
/// below lands) and whether all of its subtree landed (else its upper directory stays).
struct Frame {
    dir: Option<Dir>,
    clean: bool,
}

struct RootApply<'a, 'o> {
    set: &'a ChangeSet,
    req: &'a Request<'a>,
    /// No file changed at or after this lands (`apply_sealed`).
    sealed_ns: i64,
    /// Nothing these name lands, nor anything below them (`unasked`).
    unasked: &'a std::collections::HashSet<super::unasked::Id>,
    upper: PathBuf,
    differ: Differ,
    judge: Judge<'a>,
    stack: Vec<Frame>,
    /// Where the set's files under several names landed (`links`).
    links: Links,
    /// The walk could not read the upper's top, or stopped there (`Beyond` of `""`): the root's
    /// mode then does not land (a run's `chmod 000 .` was said held back and applied, and landed).
    top_unread: bool,
    out: &'o mut Outcome,
}

/// Whether a change may land as things are on the host now.
enum Verdict {
    Land,
    Skip,
    Conflict(String),
}

impl RootApply<'_, '_> {
    fn event(&mut self, ev: Event) -> std::io::Result<bool> {
        let mut changes: Vec<Change> = Vec::new();
        self.differ.event(&ev, &self.upper, &mut |c| changes.push(c))?;
        match ev {
            Event::Enter(e, _) | Event::Leaf(e) if self.unasked.contains(&e.inode) && !matches!(e.kind, Kind::Symlink(_) | Kind::Whiteout | Kind::Special(_)) => Ok(self.unasked(e)),
            Event::Enter(e, _) => self.enter(e, changes),
            Event::Leave(e) => self.leave(e),
            Event::Leaf(e) => {
                self.leaf(e, changes);
                Ok(true)
            }
            // Past the walk's bounds, or unreadable: not applied, held back as not examined.
            Event::Beyond(rel, unread) => {
                self.top_unread |= rel.as_os_str().is_empty();
                let risk = super::summary::incomplete(self.differ.root(), rel, &super::summary::beyond_why(rel, unread));
                self.out.held_back.push(Held { path: risk.path.clone(), risk });
                self.unclean();
                Ok(false)
            }
        }
    }

    /// An entry its set's last run's end could not ask whether it was held open for writing
    /// (`unasked`): nothing of it lands, nothing below it is entered (the walk's `Leave` follows a
    /// directory's `Enter` either way).
    fn unasked(&mut self, e: &entries::Entry) -> bool {
        let path = self.host_path(&e.rel);
        if self.req.reaches(&path) {
            self.out.conflicts.push(Conflict { path: shown(&path), reason: super::unasked::WHY.into() });
        }
        if matches!(e.kind, Kind::Dir { .. }) {
            return self.skip_dir();
        }
        self.unclean();
        true
    }

    fn host_path(&self, rel: &Path) -> PathBuf {
        self.differ.root().join(rel)
    }

    fn unclean(&mut self) {
        if let Some(f) = self.stack.last_mut() {
            f.clean = false;
        }
    }

    /// The change carries a host risk the request does not override (recorded as held back).
    fn held(&mut self, c: &Change) -> bool {
        self.held_for(c).is_some()
    }

    /// As `held`: the kind of the risk that holds it back.
    fn held_for(&mut self, c: &Change) -> Option<RiskKind> {
        // Judged through the directories this apply writes through (`Judge::judge_through`).
        let dirs: Vec<Option<&Dir>> = self.stack.iter().map(|f| f.dir.as_ref()).collect();
        match self.judge.judge_through(c, &dirs) {
            Some(risk) if !self.req.overrides(&risk) => {
                let kind = risk.kind;
                self.out.held_back.push(Held { path: c.path.clone(), risk });
                Some(kind)
            }
            _ => None,
        }
    }

    /// Whether the host's entry `name` (in the current directory) still is as the set found it.
    fn verdict(&self, c: &Change, name: &std::ffi::OsStr) -> std::io::Result<Verdict> {
        let Some(dir) = self.stack.last().and_then(|f| f.dir.as_ref()) else { return Ok(Verdict::Skip) };
        let host = dir.stat(name)?;
        if self.req.force {
            return Ok(Verdict::Land);
        }
        let begin = self.set.meta.begin_ns;
        let since = "changed on the host since the change set began";
        Ok(match (c.kind, host) {
            (ChangeKind::Added, Some(h)) if !(h.is_dir() && c.entry_type == EntryType::Directory) => {
                Verdict::Conflict("created on the host since the change set began".into())
            }
            (ChangeKind::Modified, None) => Verdict::Conflict("deleted on the host since the change set began".into()),
            // A directory's own change (its mode, or it replaces a file) keeps what is in it; a
            // file replaced by another is one entry.
            (ChangeKind::Modified, Some(h)) if c.entry_type == EntryType::Directory || !h.is_dir() => {
                if h.ctime_ns >= begin { Verdict::Conflict(since.into()) } else { Verdict::Land }
            }
            // Else what the host has there goes, a directory with all that is in it: a change
            // anywhere below since the beginning is one to the directory.
            (ChangeKind::Deleted | ChangeKind::Modified, Some(_)) => match dir.newest_ctime(name) {
                Ok(newest) if newest >= begin => Verdict::Conflict(since.into()),
                Ok(_) => Verdict::Land,
                // A filesystem mounted there since: what is in it is not the workspace's to remove.
                Err(e) if crate::remove_tree::met_a_mount_point(&e) => Verdict::Conflict(e.to_string()),
                Err(e) => return Err(e),
            },
            _ => Verdict::Land,
        })
    }

    fn enter(&mut self, e: &entries::Entry, changes: Vec<Change>) -> std::io::Result<bool> {
        let name = e.rel.file_name().unwrap_or_default().to_os_string();
        let path = self.host_path(&e.rel);
        let mut deletions = changes.into_iter();
        let own = deletions.as_slice().first().filter(|c| c.rel == e.rel).cloned();
        if own.is_some() {
            deletions.next();
        }
        if !self.req.reaches(&path) || self.stack.last().is_none_or(|f| f.dir.is_none()) {
            return Ok(self.skip_dir());
        }
        // A directory only passed through (something below it is asked for, not it) is made if
        // missing, owner-writable only; its own change (a mode, a file it replaces) is not
        // applied and stays in the set.
        let mut through = !self.req.selects(&path);
        let verdict = match &own {
            None => Verdict::Land,
            Some(c) => match self.held_for(c) {
                // Only its mode is held back (`dir_modes`): what is in it lands, as through a
                // directory only passed through.
                Some(RiskKind::PermissionsChanged) => {
                    through = true;
                    Verdict::Land
                }
                Some(_) => Verdict::Skip,
                None => self.verdict(c, &name)?,
            },
        };
        let dir = match verdict {
            Verdict::Land if through => self.make_dir(&e.rel, e.mode & 0o755, None),
            Verdict::Land => self.make_dir(&e.rel, e.mode, own.as_ref()),
            Verdict::Skip => None,
            Verdict::Conflict(reason) => {
                let c = own.as_ref().expect("a verdict of a change");
                self.out.conflicts.push(Conflict { path: c.path.clone(), reason });
                self.unclean();
                // A directory whose own change conflicts is still entered where it is one.
                self.stack.last().and_then(|f| f.dir.as_ref()).and_then(|d| d.child(&name).ok())
            }
        };
        if dir.is_none() {
            return Ok(self.skip_dir());
        }
        // Its own change left pending keeps its upper directory in the set.
        self.stack.push(Frame { dir, clean: !(through && own.is_some()) });
        for d in deletions {
            self.land(&d, |dir, n| dir.remove(n))?;
        }
        Ok(true)
    }

    /// Nothing below this directory lands.
    fn skip_dir(&mut self) -> bool {
        self.unclean();
        self.stack.push(Frame { dir: None, clean: false });
        false
    }

    /// The host directory for an upper one: made (or, for its own change `own`, the entry there
    /// replaced) when the set says so.
    fn make_dir(&mut self, rel: &Path, mode: u32, own: Option<&Change>) -> Option<Dir> {
        let name = rel.file_name().unwrap_or_default();
        let parent = self.stack.last()?.dir.as_ref()?;
        let made = (|| -> std::io::Result<Dir> {
            match parent.stat(name)? {
                Some(s) if s.is_dir() => {}
                // Only passed through: what the host has there is not replaced.
                Some(_) if own.is_none() => return Err(std::io::Error::from_raw_os_error(libc::ENOTDIR)),
                Some(_) => {
                    parent.remove(name)?;
                    parent.mkdir(name, mode)?;
                }
                None => parent.mkdir(name, mode)?,
            }
            around_child(name, false);
            let d = parent.child(name);
            around_child(name, true);
            let d = d?;
            if own.is_some() {
                d.chmod(mode)?;
            }
            Ok(d)
        })();
        match made {
            Ok(d) => {
                if let Some(c) = own {
                    self.out.applied.push(c.path.clone());
                }
                Some(d)
            }
            Err(err) => {
                let path = own.map(|c| c.path.clone()).unwrap_or_else(|| shown(&self.host_path(rel)));
                self.out.conflicts.push(Conflict { path, reason: format!("could not be made a directory: {}", sandspawn_helper::report::os_words(&err)) });
                None
            }
        }
    }

    fn leave(&mut self, e: &entries::Entry) -> std::io::Result<bool> {
        let Some(frame) = self.stack.pop() else { return Ok(true) };
        if frame.clean {
            // Everything below landed: the host has it all, the set nothing more here.
            let _ = std::fs::remove_dir(self.upper.join(&e.rel));
        } else {
            self.unclean();
        }
        Ok(true)
    }

    /// `changes`: the entry's own change, after the deletion of a host directory it replaces.
    fn leaf(&mut self, e: &entries::Entry, changes: Vec<Change>) {
        let path = self.host_path(&e.rel);
        if let Kind::Special(what) = e.kind {
            return self.special(e, what, changes);
        }
        let Some((c, replaced)) = changes.split_last() else {
            // A copy the run left unchanged: nothing to land; dropped when selected.
            if self.req.selects(&path) {
                let _ = std::fs::remove_file(self.upper.join(&e.rel));
            } else {
                self.unclean();
            }
            return;
        };
        let src = self.upper.join(&e.rel);
        // The replaced directory goes first, judged as a deletion; the entry lands only if it went.
        let mut landed = Ok(true);
        for d in replaced {
            landed = self.land(d, |dir, n| dir.remove(n));
            if !matches!(landed, Ok(true)) {
                break;
            }
        }
        if matches!(landed, Ok(true)) {
            landed = match &e.kind {
                Kind::File => {
                    let (mut links, root, sealed) = (std::mem::take(&mut self.links), self.differ.root().to_path_buf(), self.sealed_ns);
                    let landed = self.land(c, |dir, n| links.land(&root, dir, n, &src, e, sealed));
                    self.links = links;
                    landed
                }
                Kind::Symlink(t) => self.land(c, |dir, n| dir.symlink(n, t)),
                Kind::Whiteout => self.land(c, |dir, n| dir.remove(n)),
                _ => Ok(false),
            };
        }
        match landed {
            Ok(true) => {
                let _ = std::fs::remove_file(&src);
            }
            Ok(false) => {}
            Err(err) => {
                self.out.conflicts.push(Conflict { path: c.path.clone(), reason: format!("its state on the host could not be read: {}", sandspawn_helper::report::os_words(&err)) });
                self.unclean();
            }
        }
    }

    /// A fifo, socket or device of the set (`what`): the host entry it covers is deleted (`deletions`,
    /// judged like any deletion), the special file is never made; it stays in the set, held back.
    fn special(&mut self, e: &entries::Entry, what: &str, deletions: Vec<Change>) {
        for d in &deletions {
            if let Err(err) = self.land(d, |dir, n| dir.remove(n)) {
                self.out.conflicts.push(Conflict { path: d.path.clone(), reason: format!("its state on the host could not be read: {}", sandspawn_helper::report::os_words(&err)) });
            }
        }
        self.unclean();
        if self.req.selects(&self.host_path(&e.rel)) {
            let risk = super::summary::special(self.differ.root(), &e.rel, what);
            self.out.held_back.push(Held { path: risk.path.clone(), risk });
        }
    }

    /// The root's own mode change (`Differ::root_change` of its `kept` mode), if it is to land:
    /// judged before anything else lands. Else it stays pending. It conflicts when the host's root
    /// no longer has the `kept` mode: not by its ctime, which every entry made or removed in the
    /// root moves (a partial apply of the set's own made the root's mode conflict ever after).
    fn root_mode_judged(&mut self, kept: Option<u32>) -> Result<Option<Change>> {
        let Some(c) = self.differ.root_change(&self.upper, kept) else { return Ok(None) };
        if !self.req.selects(self.differ.root()) || self.held(&c) {
            self.unclean();
            return Ok(None);
        }
        let Some(dir) = self.stack.first().and_then(|f| f.dir.as_ref()) else { return Ok(None) };
        let host = dir.stat(std::ffi::OsStr::new(".")).map_err(|e| SandboxError::setup_failed(format!("applying change set {} failed: {e}", self.set.meta.id), ""))?;
        if self.req.force || host.is_some_and(|h| Some(h.mode & 0o7777) == kept) {
            return Ok(Some(c));
        }
        self.out.conflicts.push(Conflict { path: c.path.clone(), reason: "its mode was changed on the host since the change set began".into() });
        self.unclean();
        Ok(None)
    }

    /// Land the root's mode change, after all that lands below it (a root made `0500` would take
    /// no more), as any directory's mode lands (`Dir::chmod`: no set-id bits).
    fn root_mode_lands(&mut self, c: &Change) {
        if self.top_unread {
            return;
        }
        let Some(dir) = self.stack.first().and_then(|f| f.dir.as_ref()) else { return };
        match dir.chmod(c.mode.unwrap_or(0o700)) {
            Ok(()) => self.out.applied.push(c.path.clone()),
            Err(err) => {
                self.out.conflicts.push(Conflict { path: c.path.clone(), reason: format!("could not be written: {}", sandspawn_helper::report::os_words(&err)) });
                self.unclean();
            }
        }
    }

    /// Land one change with `act` on its directory, if asked for, not held back and not
    /// conflicting; what does not land leaves its directory in the set.
    fn land(&mut self, c: &Change, act: impl FnOnce(&Dir, &std::ffi::OsStr) -> std::io::Result<()>) -> std::io::Result<bool> {
        // The real bytes (`c.path` is lossy: a name that is not UTF-8 would land as another).
        let name = c.rel.file_name().unwrap_or_default().to_os_string();
        if !self.req.selects(&self.host_path(&c.rel)) || self.held(c) {
            self.unclean();
            return Ok(false);
        }
        let reason = match self.verdict(c, &name)? {
            Verdict::Land => {
                let Some(dir) = self.stack.last().and_then(|f| f.dir.as_ref()) else { return Ok(false) };
                match act(dir, &name) {
                    Ok(()) => {
                        self.out.applied.push(c.path.clone());
                        return Ok(true);
                    }
                    Err(err) => format!("could not be written: {}", sandspawn_helper::report::os_words(&err)),
                }
            }
            Verdict::Skip => String::new(),
            Verdict::Conflict(reason) => reason,
        };
        if !reason.is_empty() {
            self.out.conflicts.push(Conflict { path: c.path.clone(), reason });
        }
        self.unclean();
        Ok(false)
    }
}
