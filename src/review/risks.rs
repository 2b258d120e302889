//! Planted configuration, judged on a change set before it lands (the `hostRisks` checks of
//! `planted`, on the set instead of the host's tree afterwards): a new repository (`.git`
//! created, or a folder, the workspace root too, turned into a git directory), any change in a
//! git directory but its plain data (`git_layout`: configuration, hooks, `info/`, `commondir`,
//! symlinks, the `.git` itself replaced; deletions too), hooks written into husky's `.husky` or a
//! configured `core.hooksPath`, a protected or report-only name created or changed at the top of
//! a root or repository, a path the policy kept read-only, what the host runs from a home of its
//! user's that a root holds (`planted::home`: any change, a deletion too, as a direct run finds
//! them read-only). Other deletions run nothing and are never risks. Each risk names the entry
//! that carries it; every change at or below that entry is held back with it.
//!
//! "At the top of a repository" is judged on the set's view (the host's tree with the set on
//! top), so a repository the run created has tops too, and on the host: a change that would end
//! a repository or a git directory (its `.git` deleted, its `HEAD` made a directory) may be held
//! back or fail to land while the rest lands (`level`). A report-only name is judged at every
//! depth, as direct runs report it (`reported_below`); modes are judged in git directories too.
//!
//! A guarded path is judged by where it leads after apply, not by its name alone: a change that
//! swaps a directory at or above it (a symlink, a file or a deletion there; `swaps`) is a risk of
//! the same kind, and so is one below where a symlink on its way leads (`.husky` a link to
//! `build-cache`: a hook written into `build-cache/_`). Found by an attacker's review: a run copied
//! `.husky` aside, wrote the hook into the copy and replaced `.husky` by a link to it, and nothing
//! was judged a risk; the same with the directory above a missing `readOnlyPaths` entry.
//!
//! A directory's mode opened to other users, or the root's taken from its owner, is a risk too
//! (`dir_modes`).
//!
//! Guarded from the root, wherever they lie: the hooks directories repositories run from outside
//! their top (`elsewhere`), and the host's symlinks a `denyRead` path is resolved through
//! (`Meta::deny_links`: removed or replaced, the next run's mask would land elsewhere).

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use super::changes::{Change, ChangeKind, EntryType};
use super::elsewhere::Elsewhere;
use super::entries::{self, Kind};
use super::git_layout::{self, Verdict};
use super::host_fs::Dir;
use super::store::Meta;
use crate::planted::home::Bases;
use crate::planted::{gitconfig, names, small_file, HostRisk, RiskKind};

/// Judges the changes under one root of a set. Changes come in the walk's order (depth first),
/// so the facts of the directories above one change are kept on a stack and computed once per
/// directory, not once per change and prefix (which made a deep tree cubic).
pub struct Judge<'a> {
    meta: &'a Meta,
    root: PathBuf,
    upper: PathBuf,
    /// The directories above the last change judged: the root first.
    levels: Vec<Level>,
    /// The new `.git` (below the root) whose changes are being judged, and what its risk says of
    /// the keys of its configuration that run programs (`config_detail`). One: the walk is depth
    /// first, so every change below a `.git` comes in a row. Not every repository's keys until
    /// the judging ends: 1,000 sharing a config of 10,000 such keys (hard links) grew the host by
    /// 544 MB, and each change in one cloned all of them (found by an attacker's review, cross33).
    new_repo: Option<(PathBuf, Rc<str>)>,
    /// What was made of the upper's configuration files that have other names (`linked_configs`):
    /// the keys that run programs, and `core.hooksPath`.
    linked_configs: super::linked_configs::LinkedConfigs,
    linked_hooks_paths: super::linked_configs::LinkedConfigs,
    /// Symlinks judged by where they lead (`link_out`), and the steps all of them may take.
    links_judged: usize,
    links_budget: crate::planted::links_budget::LinksBudget,
    /// The hooks directories repositories of the set's roots run from outside their top, and the
    /// hooks the host's hooks directories link to (`elsewhere::hooks_elsewhere`), absolute:
    /// guarded from the root.
    elsewhere: &'a Elsewhere,
    /// The host's global and system git configuration, read once for the judging (each
    /// repository's top consults its hooks path).
    global_git: crate::planted::global_git::Global,
    /// Where the host user's homes and configuration directories lie in the root (`home_config`),
    /// found when first needed.
    home_places: Option<super::home_config::Places>,
}

/// What the set's view and the host say about one directory.
struct Level {
    name: OsString,
    /// Below the root.
    rel: PathBuf,
    /// The host's entries below show through (nothing of the upper replaced this directory).
    host_visible: bool,
    /// A `.git` is here in the set's view (the top of a repository).
    top: bool,
    git: GitDir,
    /// For a top: what is guarded below it (computed when first needed).
    guarded: Option<Rc<[Guarded]>>,
    /// For a directory made a git directory: what its risk says of its configuration's keys
    /// (`config_detail`), read when first needed and then kept for every change below it.
    config_detail: Option<Rc<str>>,
}

/// What the judge guards at a top.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Guard {
    /// A protected or report-only name.
    Name(String),
    /// husky's `.husky` or a `core.hooksPath`: git or husky runs what is in it.
    Hooks,
    /// A file git runs as a hook: a host's hooks directory holds a symlink to it (`hook_links`).
    Hook,
    /// A path of the host user's home that the host runs or trusts (`planted::home`), guarded
    /// from the root: what the host does with it.
    Home(&'static str),
    /// A file a repository's configuration includes or names as a program, or another tool's
    /// configuration names (`elsewhere`), guarded from the root: any change, a deletion too, as a
    /// direct run finds it read-only. What the host does with it (`elsewhere::By`).
    Included(&'static str),
    /// sandspawn's bin link beside the installed package that ran the set (`Meta::own_links`),
    /// guarded from the root: any change, a deletion too, as a direct run puts it back (`npx_bin`).
    OwnLink,
}

/// A guarded path below a top: as written (`.husky`), or where it leads in the set's view
/// (`build-cache/_` when `.husky` is a link to `build-cache`).
#[derive(Debug, Clone)]
struct Guarded {
    path: PathBuf,
    /// Its first component: a change whose first differs is neither in nor above it (compared
    /// first, for every change below a top).
    first: OsString,
    guard: Guard,
}

impl Guarded {
    fn new(path: PathBuf, guard: Guard) -> Guarded {
        let first = path.components().next().map(|c| c.as_os_str().to_os_string()).unwrap_or_default();
        Guarded { path, first, guard }
    }
}

/// At most this many symlinks are followed on one path (as the kernel's limit).
const MAX_LINKS: usize = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GitDir {
    No,
    /// A git directory in the set's view that the host's was not.
    Made,
    /// One on the host and in the set's view.
    Kept,
}

fn risk(path: PathBuf, kind: RiskKind, detail: String) -> HostRisk {
    HostRisk { path: super::changes::shown(&path), kind, detail }
}

fn keys_detail(keys: &[String]) -> String {
    if keys.is_empty() {
        String::new()
    } else {
        // A few, each cut to a bound (`few_named`): a run writes the config, keys and all.
        format!("; its configuration sets {}, each of which makes git run a program", crate::planted::few_named::listed(keys))
    }
}

fn kind_of(m: &std::fs::Metadata) -> Kind {
    if m.is_dir() {
        Kind::Dir { opaque: false }
    } else if m.file_type().is_symlink() {
        Kind::Symlink(PathBuf::new())
    } else {
        Kind::File
    }
}

/// As `kind_of`, for an entry seen through an open directory.
fn kind_of_stat(s: &super::host_fs::Stat) -> Kind {
    if s.is_dir() {
        Kind::Dir { opaque: false }
    } else if s.is_symlink() {
        Kind::Symlink(PathBuf::new())
    } else {
        Kind::File
    }
}

impl<'a> Judge<'a> {
    /// `elsewhere`: `elsewhere::hooks_elsewhere` of the set (found once for all its roots).
    pub fn new(meta: &'a Meta, root: &Path, upper: &Path, elsewhere: &'a Elsewhere) -> Judge<'a> {
        Judge { meta, root: root.to_path_buf(), upper: upper.to_path_buf(), levels: Vec::new(), new_repo: None, linked_configs: Default::default(), linked_hooks_paths: Default::default(), links_judged: 0, links_budget: crate::planted::links_budget::LinksBudget::on_a_set(), elsewhere, global_git: crate::planted::global_git::now(), home_places: None }
    }

    /// The risk a change carries, if any.
    pub fn judge(&mut self, change: &Change) -> Option<HostRisk> {
        self.judge_through(change, &[])
    }

    /// As `judge`, the host's side of each directory above the change seen through `dirs` (the
    /// root's first, then each level's; a missing one by path): the directories apply writes
    /// through. Judged by path, a directory swapped between the judging and the opening was one
    /// thing to the judge and another to apply. Found by an attacker's review: a direct run
    /// exchanged the plain `docs` with `repos`, holding a bare repository it cannot write, while
    /// the set's `docs/remote.git/hooks/post-receive` was applied; it was judged in no git
    /// directory and landed in the bare repository's hooks.
    pub fn judge_through(&mut self, change: &Change, dirs: &[Option<&Dir>]) -> Option<HostRisk> {
        // The real bytes: `change.path` is lossy, and below a name that is not UTF-8 it names
        // nothing in the upper directory, so every level there would be judged empty.
        let rel = change.rel.clone();
        let parts: Vec<&OsStr> = rel.components().filter_map(|c| if let Component::Normal(n) = c { Some(n) } else { None }).collect();
        // The root's own change is its mode, judged as any directory's.
        if parts.is_empty() {
            return super::dir_modes::risk(&self.root, change);
        }
        debug_assert!(dirs.is_empty() || dirs.len() == parts.len(), "one directory a level");
        self.descend(&parts[..parts.len() - 1], dirs);
        if self.meta.protect_git {
            // A mode opened in a git directory lets other users plant hooks there (`dir_modes`).
            if let Some(k) = parts.iter().position(|p| *p == ".git") {
                return self.in_git(change, &parts, k).or_else(|| super::dir_modes::risk(&self.root, change));
            }
            if let Some(r) = self.in_git_dir(change, &parts) {
                return Some(r);
            }
        }
        if let Some(r) = self.held_path(change) {
            return Some(r);
        }
        if let Some(r) = self.deny_link_changed(change) {
            return Some(r);
        }
        if let Some(r) = self.top_replaced(change) {
            return Some(r);
        }
        for i in 0..parts.len() {
            if i > 0 && !self.levels[i].top {
                continue;
            }
            if let Some(r) = self.at_top(i, &parts[i..], change) {
                return Some(r);
            }
        }
        if let Some(r) = super::npx_bin::by_name(&self.root, &parts, change) {
            return Some(r);
        }
        if let Some(r) = self.reported_below(&parts, change) {
            return Some(r);
        }
        if let Some(r) = self.venv_file(&parts, change).or_else(|| self.venv_way(&parts, change)) {
            return Some(r);
        }
        if let Some(r) = self.home_config(change) {
            return Some(r);
        }
        super::dir_modes::risk(&self.root, change).or_else(|| self.link_out(change))
    }

    /// A symlink made or changed in the set, judged by where it leads on the host once applied
    /// (`planted::links`): git run there would use a repository outside the reviewed roots that a
    /// run could have planted (one in `/tmp`), or it leads into a shared temporary directory. Found
    /// by an attacker's review: `rm -rf lib && ln -s /tmp/x lib`, `/tmp/x` a git directory with
    /// `core.fsmonitor`. Past `MAX_LINKS_JUDGED` links a link is held back unjudged.
    fn link_out(&mut self, change: &Change) -> Option<HostRisk> {
        if change.entry_type != EntryType::Symlink {
            return None;
        }
        let link = self.root.join(&change.rel);
        self.links_judged += 1;
        if self.links_judged > crate::planted::MAX_LINKS_JUDGED {
            let detail = format!("the change set makes more than {} symlinks; this one was not judged by where it leads", crate::planted::MAX_LINKS_JUDGED);
            return Some(risk(link, RiskKind::ScanIncomplete, detail));
        }
        // Past the steps all the set's links may take (found by an attacker's review, fix30: 2,000
        // links of 3,200 steps each cost every later `listChangeSets` 5 s of CPU), held back unjudged.
        if self.links_budget.spent() {
            let detail = format!("the change set's symlinks judged before this one took up all the steps judging them may take ({}); this one was not judged by where it leads", crate::planted::links_budget::STEPS);
            return Some(risk(link, RiskKind::ScanIncomplete, detail));
        }
        let target = std::fs::read_link(self.upper.join(&change.rel)).ok()?;
        let roots = &self.meta.roots;
        // A repository in a reviewed root is the host's (what the set makes there is judged on
        // the set), but not one inside a `node_modules`: no walk enters one, so an earlier direct
        // run could have planted it unseen there, and a direct run making this link reports it
        // (found by an attacker's review, mode28: `lib -> node_modules/pkg` landed, and the host's
        // `cd lib && git status` ran the planted `core.fsmonitor`).
        let known = |g: &Path| roots.iter().any(|r| g.strip_prefix(r).is_ok_and(|rel| !rel.components().any(|c| c.as_os_str() == "node_modules")));
        let risk = crate::planted::judge_link(&link, &target, &crate::planted::links::Places { roots, known: &known }, &mut self.links_budget);
        risk.filter(|r| self.meta.protect_git || r.kind != RiskKind::GitDirectoryCreated)
    }

    /// The change leaves something else than the host's directory at its path: a deletion, a
    /// symlink, a file, or a directory where the host has none. A path below it then leads after
    /// apply to what the set chose (a link's target) or to nothing. A directory made where there
    /// was nothing, or one whose mode changed, swaps nothing: what lands in it is judged itself.
    fn swaps(&self, change: &Change) -> bool {
        match (change.kind, change.entry_type) {
            (ChangeKind::Deleted, _) | (_, EntryType::Symlink | EntryType::File) => true,
            (ChangeKind::Added, EntryType::Directory) => false,
            (ChangeKind::Modified, EntryType::Directory) => !self.root.join(&change.rel).symlink_metadata().is_ok_and(|m| m.is_dir()),
        }
    }

    /// A missing `readOnlyPaths` or `denyRead` entry created (a change at or below it), or swapped away from
    /// under the policy (a change above it that `swaps`: `config` replaced by a link to a copy
    /// holding `config/production.json`).
    fn held_path(&self, change: &Change) -> Option<HostRisk> {
        let path = self.root.join(&change.rel);
        for h in &self.meta.held {
            if path.starts_with(h) && change.kind != ChangeKind::Deleted {
                return Some(risk(h.clone(), RiskKind::ProtectedNameCreated, "was created in the change set where the policy keeps a missing path absent (a readOnlyPaths or denyRead entry)".into()));
            }
            if h.starts_with(&path) && *h != path && self.swaps(change) {
                let detail = format!("was replaced or removed in the change set, a directory above {}, which the policy keeps absent (a missing readOnlyPaths or denyRead entry): after apply that path would lead to what the change set put there", h.display());
                return Some(risk(path, RiskKind::ProtectedNameCreated, detail));
            }
        }
        None
    }

    /// A host symlink a `denyRead` path is resolved through (`Meta::deny_links`) removed or replaced:
    /// a change at it (the set has something else there, or nothing), or one above it that `swaps`.
    /// Once applied, the next run's mask would land where the set points the path (or nowhere), and
    /// what the link led to would be readable. Direct runs put such a link back after the run.
    fn deny_link_changed(&self, change: &Change) -> Option<HostRisk> {
        let path = self.root.join(&change.rel);
        let link = self.meta.deny_links.iter().find(|l| **l == path || (l.starts_with(&path) && self.swaps(change)))?;
        let at = if *link == path { "was removed or replaced in the change set".to_string() } else { format!("was removed or replaced in the change set, a directory above {}", link.display()) };
        let detail = format!("{at}: a denyRead path is resolved through that host symlink, and after apply the next run's mask would land where the change set points it, leaving what the link led to readable");
        Some(risk(path, RiskKind::ProtectedNameCreated, detail))
    }

    /// A repository's top on the host replaced by a symlink or a file. Its `.git` goes, and what
    /// is judged at its top (protected names, hooks directories) would lead after apply to what
    /// the link's target holds: a directory of the set's, where nothing is a top's. Removing it
    /// alone leaves nothing there and is no risk. Judged on the directory's deletion, which comes
    /// first (apply lands the new entry only once that landed).
    fn top_replaced(&self, change: &Change) -> Option<HostRisk> {
        if change.kind != ChangeKind::Deleted || change.entry_type != EntryType::Directory {
            return None;
        }
        if !self.meta.protect_git && self.meta.protected_names.is_empty() && self.meta.reported_names.is_empty() {
            return None;
        }
        let path = self.root.join(&change.rel);
        let replaced = matches!(entries::read(&self.upper.join(&change.rel), change.rel.clone()).map(|e| e.kind), Ok(Kind::File | Kind::Symlink(_)));
        if !replaced || path.join(".git").symlink_metadata().is_err() {
            return None;
        }
        let kind = if self.meta.protect_git { RiskKind::WorkspaceReplaced } else { RiskKind::ProtectedNameCreated };
        let detail = "a repository was replaced by a symlink or a file in the change set: its .git, its hooks and the names protected at its top would be what that leads to".into();
        Some(risk(path, kind, detail))
    }

    /// Make `levels` the root and the directories `dirs` below it, keeping what is shared with
    /// the last change's.
    /// `through`: the host's directories of the levels (`judge_through`). A level is kept while
    /// the walk stays below it, as apply keeps the directory it opened for it.
    fn descend(&mut self, dirs: &[&OsStr], through: &[Option<&Dir>]) {
        let at = |k: usize| through.get(k).copied().flatten();
        if self.levels.is_empty() {
            let host_visible = self.root.symlink_metadata().is_ok_and(|m| m.is_dir());
            let root = self.level(OsString::new(), PathBuf::new(), host_visible, at(0));
            self.levels.push(root);
        }
        let same = self.levels[1..].iter().zip(dirs).take_while(|(l, d)| l.name == **d).count();
        self.levels.truncate(same + 1);
        for d in &dirs[same..] {
            let parent = self.levels.last().expect("the root's level");
            let rel = parent.rel.join(d);
            let up = entries::read(&self.upper.join(&rel), rel.clone()).ok().map(|e| e.kind);
            let host_visible = parent.host_visible && matches!(up, None | Some(Kind::Dir { opaque: false }));
            let level = self.level(d.to_os_string(), rel, host_visible, at(self.levels.len()));
            self.levels.push(level);
        }
    }

    /// A top, or a git directory, in the set's view or on the host: apply may hold back or fail
    /// to land the change that makes it none (a deleted `.git` is held back; a `HEAD` made a
    /// directory cannot replace the host's file), and the rest of the set lands beside what
    /// stayed. Found by an attacker's review: `rm -rf sub/.git` (held back) and `sub/.envrc`
    /// (judged below no top, landed); `mirror.git/HEAD` made a directory of mode 0777 (held
    /// back) and `mirror.git/hooks/pre-receive` (judged in no git directory, landed).
    /// `dir`: the host's directory at `rel`, open (else it is looked at by path).
    fn level(&self, name: OsString, rel: PathBuf, host_visible: bool, dir: Option<&Dir>) -> Level {
        let host = |n: &str| match dir {
            Some(d) => d.stat(OsStr::new(n)).ok().flatten().map(|s| kind_of_stat(&s)),
            None => self.root.join(&rel).join(n).symlink_metadata().ok().map(|m| kind_of(&m)),
        };
        let view = |n: &str| self.upper_or(&rel.join(n), host_visible, || host(n));
        let top = view(".git").is_some() || host(".git").is_some();
        let git = if name == ".git" {
            GitDir::No
        } else if git_layout::is_git_dir(host) {
            GitDir::Kept
        } else if git_layout::is_git_dir(view) {
            GitDir::Made
        } else {
            GitDir::No
        };
        Level { name, rel, host_visible, top, git, guarded: None, config_detail: None }
    }

    /// What is at `rel` in the set's view, its parent's host side showing through or not.
    fn in_view(&self, rel: &Path, host_visible: bool) -> Option<Kind> {
        self.upper_or(rel, host_visible, || self.root.join(rel).symlink_metadata().ok().map(|m| kind_of(&m)))
    }

    /// As `in_view`, the host's side told by `host`.
    fn upper_or(&self, rel: &Path, host_visible: bool, host: impl FnOnce() -> Option<Kind>) -> Option<Kind> {
        if let Ok(e) = entries::read(&self.upper.join(rel), rel.to_path_buf()) {
            return (e.kind != Kind::Whiteout).then_some(e.kind);
        }
        if host_visible { host() } else { None }
    }

    /// A change inside a `.git` at `parts[..k]`.
    fn in_git(&mut self, change: &Change, parts: &[&OsStr], k: usize) -> Option<HostRisk> {
        let dot_git: PathBuf = parts[..=k].iter().collect();
        if self.root.join(&dot_git).symlink_metadata().is_err() {
            if change.kind == ChangeKind::Deleted {
                return None;
            }
            let keys = self.new_repo_detail(&dot_git);
            let detail = format!("a git repository was created in the change set; git run in this directory on the host would use its configuration and hooks{keys}");
            return Some(risk(self.root.join(dot_git), RiskKind::RepositoryCreated, detail));
        }
        let file: PathBuf = parts.iter().collect();
        // Below the innermost git directory that holds the change, found by what it holds (a
        // submodule's name may hold slashes: `modules/vendor/objects` is one, whose `config` is no
        // object); levels[j + 1] is the directory parts[..=j].
        let inner = (k + 1..parts.len().saturating_sub(1)).rev().find(|&j| self.levels[j + 1].git != GitDir::No);
        match inner {
            Some(j) => {
                let git_dir: PathBuf = parts[..=j].iter().collect();
                self.git_dir_content(change, &file, &parts[j + 1..], &git_dir)
            }
            None => self.git_dir_content(change, &file, &parts[k + 1..], &dot_git),
        }
    }

    /// A change at `file` (`rest` below the git directory `git_dir`), judged as `git_layout` says.
    fn git_dir_content(&mut self, change: &Change, file: &Path, rest: &[&OsStr], git_dir: &Path) -> Option<HostRisk> {
        if rest.is_empty() {
            let detail = "the repository's .git was replaced, removed or changed in the change set: git on the host would use what is there instead".into();
            return Some(risk(self.root.join(file), RiskKind::WorkspaceReplaced, detail));
        }
        match git_layout::judge(rest, change.kind, change.entry_type) {
            Verdict::Data => return None,
            Verdict::Head if self.read_upper(file).is_some_and(|t| git_layout::head_holds_a_ref(&t)) => return None,
            _ => {}
        }
        let name = rest.last().map(|n| n.to_string_lossy()).unwrap_or_default();
        if let Some(h) = rest.iter().position(|p| *p == "hooks").filter(|h| h + 1 < rest.len() && change.kind != ChangeKind::Deleted) {
            let hook = git_dir.join(rest[..h + 2].iter().collect::<PathBuf>());
            return Some(risk(self.root.join(hook), RiskKind::HooksWritten, "a git hook was written in the change set: git on the host runs it (e.g. on commit, checkout, merge)".into()));
        }
        let detail = if change.entry_type == EntryType::Symlink {
            "a symlink in a git directory was made in the change set: git on the host follows it (to configuration, hooks or objects of the link's choosing)".to_string()
        } else if name.starts_with("config") && change.kind != ChangeKind::Deleted {
            let keys = self.upper_config_detail(file).unwrap_or_else(|| "".into());
            format!("the repository's configuration was changed in the change set: much of git's configuration makes it run programs{keys}")
        } else {
            format!("{} in a git directory was {} in the change set: git on the host reads it (configuration, hooks, or where to find other files), it is not plain data", name, match change.kind {
                ChangeKind::Deleted => "deleted",
                ChangeKind::Added => "created",
                ChangeKind::Modified => "changed",
            })
        };
        Some(risk(self.root.join(file), RiskKind::HooksWritten, detail))
    }

    /// A change in a directory that is a git directory without being named `.git` (the root too).
    fn in_git_dir(&mut self, change: &Change, parts: &[&OsStr]) -> Option<HostRisk> {
        for i in 0..parts.len() {
            let (git, dir) = (self.levels[i].git, self.levels[i].rel.clone());
            let known = parts[i].to_str().is_some_and(|n| git_layout::GIT_READS.contains(&n));
            match git {
                GitDir::Made if known && change.kind != ChangeKind::Deleted => {
                    let keys = self.made_git_dir_detail(i);
                    let detail = format!("became a git directory in the change set: git run in it on the host uses its configuration and hooks{keys}");
                    // The root itself, not `root/`.
                    let at = if dir.as_os_str().is_empty() { self.root.clone() } else { self.root.join(dir) };
                    return Some(risk(at, RiskKind::GitDirectoryCreated, detail));
                }
                GitDir::Kept if known => {
                    let file: PathBuf = parts.iter().collect();
                    return self.git_dir_content(change, &file, &parts[i..], &dir);
                }
                _ => {}
            }
        }
        None
    }

    /// A protected or report-only name made or changed at any depth, as a direct run reports one
    /// anywhere in a writable root (`at_top` judges them at tops first, where protected names are
    /// kept). Found by attackers' reviews: `sub/mise.toml` with an `enter` hook, and then
    /// `pkg/.vscode/tasks.json`, `pkg/.envrc`, `pkg/.cargo/config.toml` (`pkg` no repository),
    /// were reported by a direct run and landed from a review.
    fn reported_below(&self, parts: &[&OsStr], change: &Change) -> Option<HostRisk> {
        if change.kind == ChangeKind::Deleted {
            return None;
        }
        // `.git` is judged as a repository (`in_git`, `git_directory`), not as a name.
        let named = |p: &OsStr| p != ".git" && self.meta.reported_names.iter().chain(&self.meta.protected_names).any(|n| OsStr::new(n) == p);
        // The patterns (`name_patterns`: `*.code-workspace`, `.github/hooks`), as the walk matches them.
        let any_names = !self.meta.reported_names.is_empty() || !self.meta.protected_names.is_empty();
        let patterned = |k: usize| any_names.then(|| crate::planted::name_patterns::what_it_does(k.checked_sub(1).map(|j| parts[j]), parts[k])).flatten();
        // And a pattern's parent made a symlink (`of_link`: `.trunk`, `.direnv`, `bin`), which the
        // parent compare cannot see (found by an attacker's review, rev44: `ln -s tmeta .trunk` landed).
        let linked = |k: usize| (any_names && k + 1 == parts.len() && change.entry_type == EntryType::Symlink).then(|| crate::planted::name_patterns::of_link(parts[k])).flatten();
        let patterned = |k: usize| patterned(k).or_else(|| linked(k));
        let k = (0..parts.len()).find(|&k| named(parts[k]) || patterned(k).is_some())?;
        let name = parts[k].to_string_lossy();
        let what = patterned(k).unwrap_or_else(|| names::what_it_does(&name));
        let detail = format!("{name} was created or changed in the change set: {what}");
        Some(risk(self.root.join(parts[..=k].iter().collect::<PathBuf>()), RiskKind::ProtectedNameCreated, detail))
    }

    /// A file of a virtual environment one level below the root or a repository's top
    /// (`planted::venv`): what a direct run keeps read-only or reports (a `.pth` in site-packages,
    /// `bin/activate`, `pyvenv.cfg`) is held back. Found by an attacker's review: they landed, and
    /// the host's next start of `.venv/bin/python` ran them.
    fn venv_file(&self, parts: &[&OsStr], change: &Change) -> Option<HostRisk> {
        if change.kind == ChangeKind::Deleted {
            return None;
        }
        let k = crate::planted::venv::in_parts(parts)?;
        if k > 0 && !self.levels.get(k).is_some_and(|l| l.top) {
            return None;
        }
        // A `pip.conf` has no place of its own (any directory may hold one): only an environment's,
        // the host's (its `pyvenv.cfg`), as `venv_way` asks.
        let env_cfg = || self.root.join(parts[..=k].iter().collect::<PathBuf>()).join(crate::planted::venv::CONFIG);
        if parts.len() == k + 2 && *parts.last()? == crate::planted::venv::PIP_CONFIG && env_cfg().symlink_metadata().is_err() {
            return None;
        }
        let name = parts.last()?.to_string_lossy();
        let detail = format!("{name} was created or changed in the change set: {}", crate::planted::venv::WHAT_IT_DOES);
        Some(risk(self.root.join(parts.iter().collect::<PathBuf>()), RiskKind::ProtectedNameCreated, detail))
    }

    /// A directory on the way from a virtual environment at a top to its site-packages (`lib`,
    /// `lib64`, `lib/pythonX.Y`, `site-packages`: `planted::venv_way`) made a link or removed (a
    /// rename): after apply Python would run the `.pth` files where it leads, which were judged as
    /// no environment's. Found by an attacker's review: `mv lib lib2; ln -s lib2 lib`, the `.pth`
    /// under `lib2`. The environment is the host's (its `pyvenv.cfg`), looked at for such a change only.
    fn venv_way(&self, parts: &[&OsStr], change: &Change) -> Option<HostRisk> {
        if change.entry_type != EntryType::Symlink && change.kind != ChangeKind::Deleted {
            return None;
        }
        let on_way = |rest: &[&OsStr]| match rest {
            [lib, more @ ..] if *lib == "lib" || *lib == "lib64" => match more {
                [] => true,
                [v] => v.as_encoded_bytes().starts_with(b"python"),
                [v, s] => v.as_encoded_bytes().starts_with(b"python") && *s == "site-packages",
                _ => false,
            },
            _ => false,
        };
        let k = (0..parts.len().saturating_sub(1)).find(|&k| (k == 0 || self.levels.get(k).is_some_and(|l| l.top)) && on_way(&parts[k + 1..]))?;
        let env = self.root.join(parts[..=k].iter().collect::<PathBuf>());
        if env.join(crate::planted::venv::CONFIG).symlink_metadata().is_err() {
            return None;
        }
        let detail = format!(
            "was made a symlink or removed in the change set, on the way from {} to its site-packages: after apply Python would run the .pth files where it leads ({})",
            env.display(),
            crate::planted::venv::WHAT_IT_DOES
        );
        Some(risk(self.root.join(&change.rel), RiskKind::ProtectedNameCreated, detail))
    }

    /// A change at `rest` below the top `levels[i]`, judged against what is guarded there: in or
    /// below a guarded path (a name: any change but a deletion; a hooks directory: a hook written
    /// in it), or above it swapping what the path leads to (`swaps`; at a hooks directory too).
    fn at_top(&mut self, i: usize, rest: &[&OsStr], change: &Change) -> Option<HostRisk> {
        let top = self.levels[i].rel.clone();
        let below: PathBuf = rest.iter().collect();
        let sample = rest.last().is_some_and(|n| n.to_string_lossy().ends_with(".sample"));
        // An empty path is the root itself (a `core.hooksPath` of `..` from a repository at the top).
        for g in self.guarded_of(i).iter().filter(|g| g.first.as_os_str() == rest[0] || g.first.is_empty()) {
            let within = below.starts_with(&g.path);
            let above = g.path.starts_with(&below);
            let written = change.kind != ChangeKind::Deleted;
            let (at, kind, detail) = match &g.guard {
                Guard::Name(n) if within && written => (g.path.clone(), RiskKind::ProtectedNameCreated, format!("{n} was created or changed in the change set: {}", names::what_at(Path::new(n)))),
                // Removing the directory a nested one (`.github/hooks`) lies in plants nothing.
                Guard::Name(n) if above && !within && self.swaps(change) && !(n.contains('/') && change.kind == ChangeKind::Deleted) => {
                    let detail = format!("was replaced or removed in the change set, above {}: after apply that would lead to what the change set put there ({})", g.path.display(), names::what_at(Path::new(n)));
                    (below.clone(), RiskKind::ProtectedNameCreated, detail)
                }
                Guard::Hooks if above && self.swaps(change) => {
                    let detail = format!("was replaced or removed in the change set, at or above {}: git or husky would run the hooks of what it leads to after apply", g.path.display());
                    (below.clone(), RiskKind::HooksWritten, detail)
                }
                Guard::Hooks if within && !above && written && !sample => {
                    (g.path.clone(), RiskKind::HooksWritten, "hooks were written in the change set into a directory git or husky runs hooks from".into())
                }
                Guard::Hook if within && written => {
                    let detail = "a file git runs as a hook was written in the change set: a hooks directory on the host holds a symlink to it, and git on the host runs it (e.g. on commit, checkout, merge)";
                    (g.path.clone(), RiskKind::HooksWritten, detail.into())
                }
                Guard::Hook if above && !within && self.swaps(change) => {
                    let detail = format!("was replaced or removed in the change set, above {}, a file git runs as a hook (a hooks directory on the host links to it): git would run what that leads to after apply", g.path.display());
                    (below.clone(), RiskKind::HooksWritten, detail)
                }
                // Any change, a deletion too: a direct run finds these read-only.
                Guard::Home(what) if within => {
                    (g.path.clone(), RiskKind::ProtectedNameCreated, format!("was created, changed or removed in the change set in the host user's home, which a reviewed root holds: {what}"))
                }
                Guard::Included(by) if within || (above && self.swaps(change)) => {
                    let detail = format!("was created, changed, removed or swapped in the change set: {by}");
                    (if within { g.path.clone() } else { below.clone() }, RiskKind::ProtectedNameCreated, detail)
                }
                Guard::OwnLink if within || (above && self.swaps(change)) => {
                    let how = if within { "was created, changed or removed in the change set" } else { "was replaced or removed in the change set, above it" };
                    (if within { g.path.clone() } else { below.clone() }, RiskKind::ProtectedNameCreated, format!("{how}: {}", super::npx_bin::WHAT_IT_DOES))
                }
                Guard::Home(what) if above && self.swaps(change) => {
                    let detail = format!("was replaced or removed in the change set, above {} in the host user's home: after apply that would lead to what the change set put there ({what})", g.path.display());
                    (below.clone(), RiskKind::ProtectedNameCreated, detail)
                }
                _ => continue,
            };
            // Collected again: the root itself (`at` and `top` empty) without a trailing slash.
            return Some(risk(self.root.join(&top).join(at).components().collect(), kind, detail));
        }
        None
    }

    /// What is guarded below the top `levels[i]`: the protected and report-only names; with
    /// `protectGit`, husky's `.husky` and the repository's `core.hooksPath` or the global one (when it lies below
    /// the top); at the root, what the host runs from a home of its user's that the root holds
    /// (`home_guarded`) and the hooks directories outside their repository's top (`elsewhere`);
    /// and where each of them leads in the set's view when a symlink on its way goes elsewhere
    /// below the top (one leading outside the top is not followed, as a `core.hooksPath` outside
    /// it is not: those are guarded from the root).
    fn guarded_of(&mut self, i: usize) -> Rc<[Guarded]> {
        if let Some(g) = &self.levels[i].guarded {
            return g.clone();
        }
        let top = self.levels[i].rel.clone();
        let names = self.meta.protected_names.iter().chain(&self.meta.reported_names);
        let mut guarded: Vec<Guarded> = names.map(|n| Guarded::new(PathBuf::from(n), Guard::Name(n.clone()))).collect();
        // `.github/hooks` (`name_patterns::NESTED`) as a name, so that a `.github` made a symlink
        // (above it, `swaps`) and where one leads (below) are judged as the name would be. Found by
        // an attacker's review: `ln -s ci-meta .github` with `ci-meta/hooks/evil.json` landed, as
        // the parent compare (`reported_below`) saw `ci-meta`.
        if !guarded.is_empty() {
            let nested = crate::planted::name_patterns::NESTED;
            guarded.push(Guarded::new(PathBuf::from(nested), Guard::Name(nested.to_string())));
        }
        if self.meta.protect_git {
            let mut dirs = vec![PathBuf::from(".husky")];
            // The repository's, in the set's view and on the host (apply may hold the set's back:
            // git on the host then reads the host's), and the host's global and system
            // configuration's (`global_git`; the set may make the view's config a FIFO or a
            // directory that never lands, where the global one would win). Found by an
            // attacker's review: the set named `decoy-hooks` and wrote into the host's `githooks`.
            let config = top.join(".git/config");
            let view = self.view_hooks_path(&config);
            let host = small_file::text(&self.root.join(&config)).and_then(|t| gitconfig::hooks_path(&t));
            // The repository's own setting wins over the global one, as in git: that one counts
            // where either config sets none.
            // Those of its `includeIf` files may apply as well (`global_git::Global::hooks`).
            let global = if view.is_none() || host.is_none() { self.global_git.hooks.clone() } else { Vec::new() };
            for p in [view, host].into_iter().flatten().chain(global).map(PathBuf::from) {
                let rel = if p.is_absolute() { p.strip_prefix(self.root.join(&top)).ok().map(Path::to_path_buf) } else { Some(p) };
                // `./tools/hooks` is `tools/hooks`; one with `..` is not judged below the top.
                let rel = rel.map(|r| r.components().filter(|c| *c != Component::CurDir).collect::<PathBuf>());
                dirs.extend(rel.filter(|r| !r.as_os_str().is_empty() && r.components().all(|c| matches!(c, Component::Normal(_)))));
            }
            dirs.sort();
            dirs.dedup();
            guarded.extend(dirs.into_iter().map(|path| Guarded::new(path, Guard::Hooks)));
        }
        if i == 0 {
            guarded.extend(self.home_guarded());
            let under_root = |list: &'a [PathBuf], guard: Guard| list.iter().filter_map(|h| h.strip_prefix(&self.root).ok()).map(move |rel| Guarded::new(rel.to_path_buf(), guard.clone()));
            guarded.extend(under_root(&self.elsewhere.dirs, Guard::Hooks));
            guarded.extend(under_root(&self.elsewhere.hooks, Guard::Hook));
            let configs = self.elsewhere.configs.iter().filter_map(|(c, by)| Some(Guarded::new(c.strip_prefix(&self.root).ok()?.to_path_buf(), Guard::Included(by))));
            guarded.extend(configs);
            guarded.extend(under_root(&self.meta.own_links, Guard::OwnLink));
        }
        // Where each leads on the host as it is and in the set's view: a set applied in part
        // (`paths`) may leave the host's links and land the rest.
        let mut led: Vec<Guarded> = Vec::new();
        for g in &guarded {
            for in_set in [false, true] {
                for to in self.resolve(&top.join(&g.path), in_set) {
                    let Ok(rel) = to.strip_prefix(&top) else { continue };
                    if rel != g.path && !rel.as_os_str().is_empty() && !led.iter().any(|l| l.path == rel && l.guard == g.guard) {
                        led.push(Guarded::new(rel.to_path_buf(), g.guard.clone()));
                    }
                }
            }
        }
        guarded.extend(led);
        let guarded: Rc<[Guarded]> = guarded.into();
        self.levels[i].guarded = Some(guarded.clone());
        guarded
    }

    /// What the host runs or trusts in each home of the host user's that the root holds: the
    /// protected and report-only names at the home (at the root's top they are guarded already),
    /// and the paths below it and below its XDG configuration directory (`planted::home`) that a
    /// direct run finds read-only. Before, review mode left them to the set: a run wrote
    /// `~/.ssh/authorized_keys`, `~/.bashrc` and `~/.config/git/config` with no risk, and a plain
    /// apply landed them. Whose home: the set's runs' (`Meta::homes`) and this process's.
    fn home_guarded(&self) -> Vec<Guarded> {
        let bases = Bases::of_host().and(&self.meta.homes, &self.meta.config_homes);
        // Each base the root holds, and where it lies in it (most sets hold none).
        let held: HashMap<&Path, PathBuf> = bases.homes.iter().chain(&bases.config).filter_map(|b| Some((b.as_path(), self.below_root(b)?))).collect();
        let names = self.meta.protected_names.iter().chain(&self.meta.reported_names);
        let homes: Vec<&PathBuf> = bases.homes.iter().filter_map(|h| held.get(h.as_path())).filter(|h| !h.as_os_str().is_empty()).collect();
        let mut guarded: Vec<Guarded> = names.flat_map(|n| homes.iter().map(move |h| Guarded::new(h.join(n), Guard::Name(n.clone())))).collect();
        for (base, below, _, what) in bases.below_bases(|b| held.contains_key(b)) {
            guarded.push(Guarded::new(held[base].join(below), Guard::Home(what)));
        }
        guarded.extend(super::home_links::guarded(&self.root, &bases, self.meta, &self.global_git).into_iter().map(|(rel, what)| Guarded::new(rel, Guard::Home(what))));
        // The files the host's global git configuration consists of (`global_git`: includes,
        // `includeIf` targets, where a top file links to), as a direct run keeps them.
        for f in &self.global_git.files {
            if let Some(rel) = self.below_root(f).filter(|r| !r.as_os_str().is_empty()) {
                guarded.push(Guarded::new(rel, Guard::Home("git reads it as the host user's global configuration (core.fsmonitor and aliases run commands in every repository)")));
            }
        }
        // The template directory `git init`/`clone` copy hooks from, and an absolute or `~/` global
        // `core.hooksPath` (`Global::host_dirs`): anything at or below them, repository or not.
        for d in &self.global_git.host_dirs {
            if let Some(rel) = self.below_root(d).filter(|r| !r.as_os_str().is_empty()) {
                guarded.push(Guarded::new(rel, Guard::Home("git copies or runs hooks from it for the host user (its template directory or global core.hooksPath)")));
            }
        }
        guarded
    }

    /// An entry made in a held home's configuration directory or at its top, beyond the guarded
    /// list (`home_config`).
    fn home_config(&mut self, change: &Change) -> Option<HostRisk> {
        if self.home_places.is_none() {
            let bases = Bases::of_host().and(&self.meta.homes, &self.meta.config_homes);
            self.home_places = Some(super::home_config::Places::of(&bases, |p| self.below_root(p)));
        }
        self.home_places.as_ref()?.risk(&self.root, change)
    }

    /// Where a path of the host lies below the root: as written (the links on its way are
    /// followed by `resolve`), else where it resolves on the host, missing components kept.
    fn below_root(&self, p: &Path) -> Option<PathBuf> {
        if let Ok(rel) = p.strip_prefix(&self.root) {
            return Some(rel.to_path_buf());
        }
        let resolved = crate::policy::paths::canonical_lenient("HOME", p).ok()?.path;
        resolved.strip_prefix(&self.root).ok().map(Path::to_path_buf)
    }

    /// Where `rel` leads on the host (`in_set` false) or in the set's view: each symlink on its
    /// way followed (a relative target from the link's directory, an absolute one when it lies in
    /// the root), at most `MAX_LINKS`. Each link passed (its own path: swapping a directory above
    /// it changes where `rel` leads too), then where it ends unless that lies outside the root.
    fn resolve(&self, rel: &Path, in_set: bool) -> Vec<PathBuf> {
        let mut passed = Vec::new();
        let mut done = PathBuf::new();
        // What is left to walk, the next component last.
        let mut todo: Vec<PathBuf> = rel.components().rev().map(|c| PathBuf::from(c.as_os_str())).collect();
        while let Some(part) = todo.pop() {
            match part.components().next() {
                Some(Component::ParentDir) => {
                    if !done.pop() {
                        return passed;
                    }
                }
                Some(Component::Normal(_)) => {
                    let next = done.join(&part);
                    let target = if in_set { self.link_in_view(&next) } else { self.link_on_host(&next) };
                    let Some(target) = target else {
                        done = next;
                        continue;
                    };
                    passed.push(next);
                    if passed.len() > MAX_LINKS {
                        return passed;
                    }
                    let target = if target.is_absolute() {
                        done = PathBuf::new();
                        match target.strip_prefix(&self.root) {
                            Ok(t) => t.to_path_buf(),
                            Err(_) => return passed,
                        }
                    } else {
                        target
                    };
                    todo.extend(target.components().rev().map(|c| PathBuf::from(c.as_os_str())));
                }
                _ => {}
            }
        }
        passed.push(done);
        passed
    }

    /// The target of the host's symlink at `rel` (whose directories `resolve` walked), if any.
    fn link_on_host(&self, rel: &Path) -> Option<PathBuf> {
        let p = self.root.join(rel);
        p.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()).then(|| std::fs::read_link(&p).ok()).flatten()
    }

    /// The target of the symlink at `rel` in the set's view (the upper's, else the host's), if
    /// one is there. `rel`'s directories are directories in the view (`resolve` walks them).
    fn link_in_view(&self, rel: &Path) -> Option<PathBuf> {
        match self.merged(rel)? {
            Kind::Symlink(_) => std::fs::read_link(self.upper.join(rel)).or_else(|_| std::fs::read_link(self.root.join(rel))).ok(),
            _ => None,
        }
    }

    /// `config_detail` of the new `.git` at `dot_git`, read once for the changes below it.
    fn new_repo_detail(&mut self, dot_git: &Path) -> Rc<str> {
        if let Some((at, detail)) = &self.new_repo {
            if at == dot_git {
                return detail.clone();
            }
        }
        let detail = self.config_detail(&dot_git.join("config"));
        self.new_repo = Some((dot_git.to_path_buf(), detail.clone()));
        detail
    }

    /// `config_detail` of the directory `levels[i]`, made a git directory, read once for the
    /// changes below it. Found by an attacker's review (cross33): its 1 MiB config was read and
    /// parsed again for each of them, and 3,000 empty files in its `objects` cost the host 8 s.
    fn made_git_dir_detail(&mut self, i: usize) -> Rc<str> {
        if let Some(detail) = &self.levels[i].config_detail {
            return detail.clone();
        }
        let detail = self.config_detail(&self.levels[i].rel.join("config"));
        self.levels[i].config_detail = Some(detail.clone());
        detail
    }

    /// What a risk says of the keys of the configuration at `config` (in the set's view) that make
    /// git run a program: a few of them named (`keys_detail`), never all of them kept. Read from
    /// the set's view: where that holds a file, the upper's (one of several names of it judged
    /// once, `upper_config_detail`), else the host's; at most 1 MiB (`small_text`).
    fn config_detail(&mut self, config: &Path) -> Rc<str> {
        if self.merged(config) != Some(Kind::File) {
            return "".into();
        }
        if let Some(detail) = self.upper_config_detail(config) {
            return detail;
        }
        let keys = small_text(&self.root.join(config)).map(|t| gitconfig::risky_keys(&t)).unwrap_or_default();
        keys_detail(&keys).into()
    }

    /// `config_detail` of the upper's file at `rel` (`None` when it cannot be read there), judged
    /// once for all its names (`linked_configs`).
    fn upper_config_detail(&mut self, rel: &Path) -> Option<Rc<str>> {
        let path = self.upper.join(rel);
        self.linked_configs.judged(&path, || small_text(&path).map(|t| keys_detail(&gitconfig::risky_keys(&t)).into()))
    }

    /// The `core.hooksPath` of the configuration at `config` in the set's view, read as
    /// `config_detail` reads it, from an earlier name of the upper's file when it has others (`linked_configs`):
    /// found by an attacker's review (cross33), 1,000 repositories sharing a 1 MiB config by hard
    /// links, each with an `.envrc` at its top, had every entry of it looked at for each, 13 s of
    /// host CPU.
    fn view_hooks_path(&mut self, config: &Path) -> Option<String> {
        if self.merged(config) != Some(Kind::File) {
            return None;
        }
        let path = self.upper.join(config);
        // Kept as text, none as "" (`hooks_path` never gives an empty value).
        let upper = self.linked_hooks_paths.judged(&path, || small_text(&path).map(|t| gitconfig::hooks_path(&t).unwrap_or_default().into()));
        match upper {
            Some(found) => (!found.is_empty()).then(|| found.to_string()),
            None => small_text(&self.root.join(config)).and_then(|t| gitconfig::hooks_path(&t)),
        }
    }

    /// The kind of what is at `rel` in the set's view (the upper's entry, else the host's where
    /// nothing above hides it), or `None`. For the few lookups off the walk's path.
    fn merged(&self, rel: &Path) -> Option<Kind> {
        for a in rel.ancestors().skip(1).filter(|a| !a.as_os_str().is_empty()) {
            match entries::read(&self.upper.join(a), a.to_path_buf()).map(|e| e.kind) {
                Ok(Kind::Dir { opaque: false }) | Err(_) => {}
                Ok(_) => return self.in_view(rel, false),
            }
        }
        self.in_view(rel, true)
    }

    /// The upper's file at `rel`, at most 1 MiB.
    fn read_upper(&self, rel: &Path) -> Option<String> {
        small_text(&self.upper.join(rel))
    }
}

/// A regular file's text (not through a symlink), at most 1 MiB, read as a direct run's git files
/// are (`small_file`: no FIFO opened, no byte past the bound read, whatever the file became since
/// the `lstat`).
fn small_text(path: &Path) -> Option<String> {
    if path.symlink_metadata().ok()?.file_type().is_symlink() {
        return None;
    }
    // Lossy (`small_file` decodes so): git reads a config with a byte that is not UTF-8 all the same.
    small_file::text(path)
}
