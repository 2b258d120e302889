//! Planted configuration, judged on a change set before it lands (the `hostRisks` checks of
//! `planted`, on the set instead of the host's tree afterwards): a new repository (`.git`
//! created, or a folder, the workspace root too, turned into a git directory), any change in a
//! git directory but its plain data (`git_layout`: configuration, hooks, `info/`, `commondir`,
//! symlinks, the `.git` itself replaced; deletions too), hooks written into husky's `.husky` or a
//! configured `core.hooksPath`, a protected or report-only name created or changed at the top of
//! a root or repository, a path the policy kept read-only. Other deletions run nothing and are
//! never risks. Each risk names the entry that carries it; every change at or below that entry is
//! held back with it.
//!
//! "At the top of a repository" is judged on the set's view (the host's tree with the set on
//! top), so a repository the run created has tops too.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

use super::changes::{Change, ChangeKind, EntryType};
use super::entries::{self, Kind};
use super::git_layout::{self, Verdict};
use super::store::Meta;
use crate::planted::{gitconfig, names, HostRisk, RiskKind};

/// Judges the changes under one root of a set. Changes come in the walk's order (depth first),
/// so the facts of the directories above one change are kept on a stack and computed once per
/// directory, not once per change and prefix (which made a deep tree cubic).
pub struct Judge<'a> {
    meta: &'a Meta,
    root: PathBuf,
    upper: PathBuf,
    /// The directories above the last change judged: the root first.
    levels: Vec<Level>,
    /// A new `.git` (below the root) → the keys of its configuration that run programs.
    new_repo_keys: HashMap<PathBuf, Vec<String>>,
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
    /// For a top: husky's `.husky` and a `core.hooksPath` below it (computed when first needed).
    hooks: Option<Vec<PathBuf>>,
}

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
        format!("; its configuration sets {}, each of which makes git run a program", keys.join(", "))
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

impl<'a> Judge<'a> {
    pub fn new(meta: &'a Meta, root: &Path, upper: &Path) -> Judge<'a> {
        Judge { meta, root: root.to_path_buf(), upper: upper.to_path_buf(), levels: Vec::new(), new_repo_keys: HashMap::new() }
    }

    /// The risk a change carries, if any.
    pub fn judge(&mut self, change: &Change) -> Option<HostRisk> {
        // The real bytes: `change.path` is lossy, and below a name that is not UTF-8 it names
        // nothing in the upper directory, so every level there would be judged empty.
        let rel = change.rel.clone();
        let parts: Vec<&OsStr> = rel.components().filter_map(|c| if let Component::Normal(n) = c { Some(n) } else { None }).collect();
        if parts.is_empty() {
            return None;
        }
        self.descend(&parts[..parts.len() - 1]);
        if self.meta.protect_git {
            if let Some(k) = parts.iter().position(|p| *p == ".git") {
                return self.in_git(change, &parts, k);
            }
            if let Some(r) = self.in_git_dir(change, &parts) {
                return Some(r);
            }
        }
        if change.kind == ChangeKind::Deleted {
            return None;
        }
        if let Some(h) = self.meta.held.iter().find(|h| self.root.join(&change.rel).starts_with(h)) {
            return Some(risk(h.clone(), RiskKind::ProtectedNameCreated, "was created in the change set although the policy keeps this path read-only (readOnlyPaths)".into()));
        }
        for i in 0..parts.len() {
            if i > 0 && !self.levels[i].top {
                continue;
            }
            if let Some(r) = self.at_top(i, &parts[i..]) {
                return Some(r);
            }
        }
        None
    }

    /// Make `levels` the root and the directories `dirs` below it, keeping what is shared with
    /// the last change's.
    fn descend(&mut self, dirs: &[&OsStr]) {
        if self.levels.is_empty() {
            let host_visible = self.root.symlink_metadata().is_ok_and(|m| m.is_dir());
            let root = self.level(OsString::new(), PathBuf::new(), host_visible);
            self.levels.push(root);
        }
        let same = self.levels[1..].iter().zip(dirs).take_while(|(l, d)| l.name == **d).count();
        self.levels.truncate(same + 1);
        for d in &dirs[same..] {
            let parent = self.levels.last().expect("the root's level");
            let rel = parent.rel.join(d);
            let up = entries::read(&self.upper.join(&rel), rel.clone()).ok().map(|e| e.kind);
            let host_visible = parent.host_visible && matches!(up, None | Some(Kind::Dir { opaque: false }));
            let level = self.level(d.to_os_string(), rel, host_visible);
            self.levels.push(level);
        }
    }

    fn level(&self, name: OsString, rel: PathBuf, host_visible: bool) -> Level {
        let view = |n: &str| self.in_view(&rel.join(n), host_visible);
        let top = view(".git").is_some();
        let git = if name == ".git" || !git_layout::is_git_dir(view) {
            GitDir::No
        } else if git_layout::is_git_dir(|n| self.root.join(&rel).join(n).symlink_metadata().ok().map(|m| kind_of(&m))) {
            GitDir::Kept
        } else {
            GitDir::Made
        };
        Level { name, rel, host_visible, top, git, hooks: None }
    }

    /// What is at `rel` in the set's view, its parent's host side showing through or not.
    fn in_view(&self, rel: &Path, host_visible: bool) -> Option<Kind> {
        if let Ok(e) = entries::read(&self.upper.join(rel), rel.to_path_buf()) {
            return (e.kind != Kind::Whiteout).then_some(e.kind);
        }
        host_visible.then(|| self.root.join(rel).symlink_metadata().ok().map(|m| kind_of(&m))).flatten()
    }

    /// A change inside a `.git` at `parts[..k]`.
    fn in_git(&mut self, change: &Change, parts: &[&OsStr], k: usize) -> Option<HostRisk> {
        let dot_git: PathBuf = parts[..=k].iter().collect();
        if self.root.join(&dot_git).symlink_metadata().is_err() {
            if change.kind == ChangeKind::Deleted {
                return None;
            }
            let keys = self.new_repo_keys(&dot_git);
            let detail = format!("a git repository was created in the change set; git run in this directory on the host would use its configuration and hooks{}", keys_detail(&keys));
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
            let keys = self.read_upper(file).map(|t| gitconfig::risky_keys(&t)).unwrap_or_default();
            format!("the repository's configuration was changed in the change set: much of git's configuration makes it run programs{}", keys_detail(&keys))
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
                    let keys = self.read_view(&dir.join("config")).map(|t| gitconfig::risky_keys(&t)).unwrap_or_default();
                    let detail = format!("became a git directory in the change set: git run in it on the host uses its configuration and hooks{}", keys_detail(&keys));
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

    /// A change at or below `rest[0]` in the top `levels[i]`: a protected or reported name, or a
    /// hooks directory.
    fn at_top(&mut self, i: usize, rest: &[&OsStr]) -> Option<HostRisk> {
        let top = self.levels[i].rel.clone();
        let first = rest[0].to_string_lossy();
        if self.meta.protected_names.iter().chain(&self.meta.reported_names).any(|n| *n == first) {
            let detail = format!("{first} was created or changed in the change set: {}", names::what_it_does(&first));
            return Some(risk(self.root.join(&top).join(rest[0]), RiskKind::ProtectedNameCreated, detail));
        }
        if !self.meta.protect_git || rest.len() < 2 || rest.last().is_some_and(|n| n.to_string_lossy().ends_with(".sample")) {
            return None;
        }
        let below: PathBuf = rest.iter().collect();
        let hooks = self.hooks_of(i);
        let dir = hooks.iter().find(|h| below.starts_with(h) && below != **h)?;
        Some(risk(self.root.join(top).join(dir), RiskKind::HooksWritten, "hooks were written in the change set into a directory git or husky runs hooks from".into()))
    }

    /// husky's `.husky` and the repository's `core.hooksPath` (when it lies below the top).
    fn hooks_of(&mut self, i: usize) -> Vec<PathBuf> {
        if let Some(h) = &self.levels[i].hooks {
            return h.clone();
        }
        let top = self.levels[i].rel.clone();
        let mut dirs = vec![PathBuf::from(".husky")];
        let configured = self.read_view(&top.join(".git/config")).and_then(|t| gitconfig::hooks_path(&t));
        if let Some(p) = configured.map(PathBuf::from) {
            let rel = if p.is_absolute() { p.strip_prefix(self.root.join(&top)).ok().map(Path::to_path_buf) } else { Some(p) };
            dirs.extend(rel.filter(|r| r.components().all(|c| matches!(c, Component::Normal(_)))));
        }
        self.levels[i].hooks = Some(dirs.clone());
        dirs
    }

    fn new_repo_keys(&mut self, dot_git: &Path) -> Vec<String> {
        if let Some(k) = self.new_repo_keys.get(dot_git) {
            return k.clone();
        }
        let keys = self.read_view(&dot_git.join("config")).map(|t| gitconfig::risky_keys(&t)).unwrap_or_default();
        self.new_repo_keys.insert(dot_git.to_path_buf(), keys.clone());
        keys
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

    /// A small text file of the set's view (a git config), at most 1 MiB.
    fn read_view(&self, rel: &Path) -> Option<String> {
        match self.merged(rel)? {
            Kind::File => self.read_upper(rel).or_else(|| small_text(&self.root.join(rel))),
            _ => None,
        }
    }

    /// The upper's file at `rel`, at most 1 MiB.
    fn read_upper(&self, rel: &Path) -> Option<String> {
        small_text(&self.upper.join(rel))
    }
}

/// A regular file's text (not through a symlink), at most 1 MiB.
fn small_text(path: &Path) -> Option<String> {
    let m = path.symlink_metadata().ok()?;
    if !m.is_file() || m.len() > 1 << 20 {
        return None;
    }
    std::fs::read_to_string(path).ok()
}
