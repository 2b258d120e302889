//! Planted configuration, judged on a change set before it lands (the `hostRisks` checks of
//! `planted`, on the set instead of the host's tree afterwards): a new repository (`.git`
//! created, or a folder turned into a git directory), hooks written (a repository's hooks
//! directory, husky's `.husky`, a configured `core.hooksPath`), a repository's configuration
//! changed to make git run a program (`core.fsmonitor`, `core.hooksPath`, ...), a protected name
//! created or changed at the top of a root or repository, a path the policy kept read-only.
//! Deletions run nothing and are never risks. Each risk names the entry that carries it; every
//! change at or below that entry is held back with it.
//!
//! "At the top of a repository" is judged on the set's view (the host's tree with the set on
//! top), so a repository the run created has tops too.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use super::changes::{Change, ChangeKind};
use super::entries::{self, Kind};
use super::store::Meta;
use crate::planted::{gitconfig, names, HostRisk, RiskKind};

/// What git reads in a directory it takes for a git directory (see `planted::scan`).
const GIT_DIR_PARTS: &[&str] = &["HEAD", "config", "objects", "refs", "hooks", "packed-refs", "commondir", "info"];

/// Judges the changes under one root of a set, remembering what it looked up.
pub struct Judge<'a> {
    meta: &'a Meta,
    root: PathBuf,
    upper: PathBuf,
    /// Directory (below the root) → whether a `.git` is there in the set's view.
    tops: HashMap<PathBuf, bool>,
    /// Top → its hooks directories (below the top) other than `.git/hooks`.
    hooks: HashMap<PathBuf, Vec<PathBuf>>,
    /// Directory → whether the set made it a git directory.
    git_dirs: HashMap<PathBuf, bool>,
}

fn risk(path: PathBuf, kind: RiskKind, detail: String) -> HostRisk {
    HostRisk { path: path.to_string_lossy().into_owned(), kind, detail }
}

fn keys_detail(keys: &[String]) -> String {
    if keys.is_empty() {
        String::new()
    } else {
        format!("; its configuration sets {}, each of which makes git run a program", keys.join(", "))
    }
}

impl<'a> Judge<'a> {
    pub fn new(meta: &'a Meta, root: &Path, upper: &Path) -> Judge<'a> {
        Judge { meta, root: root.to_path_buf(), upper: upper.to_path_buf(), tops: HashMap::new(), hooks: HashMap::new(), git_dirs: HashMap::new() }
    }

    /// The risk a change carries, if any.
    pub fn judge(&mut self, change: &Change) -> Option<HostRisk> {
        if change.kind == ChangeKind::Deleted {
            return None;
        }
        let rel = Path::new(&change.path).strip_prefix(&self.root).ok()?.to_path_buf();
        let parts: Vec<&std::ffi::OsStr> = rel.components().filter_map(|c| if let Component::Normal(n) = c { Some(n) } else { None }).collect();
        if let Some(h) = self.meta.held.iter().find(|h| Path::new(&change.path).starts_with(h)) {
            return Some(risk(h.clone(), RiskKind::ProtectedNameCreated, "was created in the change set although the policy keeps this path read-only (readOnlyPaths)".into()));
        }
        if self.meta.protect_git {
            if let Some(k) = parts.iter().position(|p| *p == ".git") {
                return self.in_git(&parts, k);
            }
        }
        for i in 0..parts.len() {
            let top: PathBuf = parts[..i].iter().collect();
            if i > 0 && !self.is_top(&top) {
                continue;
            }
            if let Some(r) = self.at_top(&top, &parts[i..]) {
                return Some(r);
            }
        }
        if self.meta.protect_git {
            for i in 1..parts.len() {
                let dir: PathBuf = parts[..i].iter().collect();
                if GIT_DIR_PARTS.iter().any(|p| parts[i] == *p) && self.made_git_dir(&dir) {
                    let keys = self.read_merged(&dir.join("config")).map(|t| gitconfig::risky_keys(&t)).unwrap_or_default();
                    let detail = format!("became a git directory in the change set: git run in it on the host uses its configuration and hooks{}", keys_detail(&keys));
                    return Some(risk(self.root.join(dir), RiskKind::GitDirectoryCreated, detail));
                }
            }
        }
        None
    }

    /// A change inside a `.git` at `parts[..k]`.
    fn in_git(&mut self, parts: &[&std::ffi::OsStr], k: usize) -> Option<HostRisk> {
        let top: PathBuf = parts[..k].iter().collect();
        let dot_git = top.join(".git");
        if self.root.join(&dot_git).symlink_metadata().is_err() {
            let keys = self.read_merged(&dot_git.join("config")).map(|t| gitconfig::risky_keys(&t)).unwrap_or_default();
            let detail = format!("a git repository was created in the change set; git run in this directory on the host would use its configuration and hooks{}", keys_detail(&keys));
            return Some(risk(self.root.join(dot_git), RiskKind::RepositoryCreated, detail));
        }
        let rest = &parts[k + 1..];
        let name = rest.last()?.to_string_lossy();
        if let Some(h) = rest.iter().position(|p| *p == "hooks").filter(|h| h + 1 < rest.len()) {
            if !name.ends_with(".sample") {
                let hook: PathBuf = parts[..k + 2 + h + 1].iter().collect();
                return Some(risk(self.root.join(hook), RiskKind::HooksWritten, "a git hook was written in the change set: git on the host runs it (e.g. on commit, checkout, merge)".into()));
            }
        }
        if name == "config" || name == "config.worktree" {
            let file: PathBuf = parts.iter().collect();
            let keys = self.read_merged(&file).map(|t| gitconfig::risky_keys(&t)).unwrap_or_default();
            if !keys.is_empty() {
                let detail = format!("the repository's configuration was changed in the change set{}", keys_detail(&keys));
                return Some(risk(self.root.join(file), RiskKind::HooksWritten, detail));
            }
        }
        None
    }

    /// A change at or below `rest[0]` in the top `top`: a protected name, or a hooks directory.
    fn at_top(&mut self, top: &Path, rest: &[&std::ffi::OsStr]) -> Option<HostRisk> {
        let first = rest[0].to_string_lossy();
        if self.meta.protected_names.iter().any(|n| *n == first) {
            let detail = format!("{first} was created or changed in the change set: {}", names::what_it_does(&first));
            return Some(risk(self.root.join(top).join(rest[0]), RiskKind::ProtectedNameCreated, detail));
        }
        if !self.meta.protect_git || rest.len() < 2 || rest.last().is_some_and(|n| n.to_string_lossy().ends_with(".sample")) {
            return None;
        }
        let below: PathBuf = rest.iter().collect();
        let hooks = self.hooks_of(top);
        let dir = hooks.iter().find(|h| below.starts_with(h) && below != **h)?;
        Some(risk(self.root.join(top).join(dir), RiskKind::HooksWritten, "hooks were written in the change set into a directory git or husky runs hooks from".into()))
    }

    fn is_top(&mut self, dir: &Path) -> bool {
        if let Some(t) = self.tops.get(dir) {
            return *t;
        }
        let t = self.merged(&dir.join(".git")).is_some();
        self.tops.insert(dir.to_path_buf(), t);
        t
    }

    /// husky's `.husky` and the repository's `core.hooksPath` (when it lies below the top).
    fn hooks_of(&mut self, top: &Path) -> Vec<PathBuf> {
        if let Some(h) = self.hooks.get(top) {
            return h.clone();
        }
        let mut dirs = vec![PathBuf::from(".husky")];
        let configured = self.read_merged(&top.join(".git/config")).and_then(|t| gitconfig::hooks_path(&t));
        if let Some(p) = configured.map(PathBuf::from) {
            let rel = if p.is_absolute() { p.strip_prefix(self.root.join(top)).ok().map(Path::to_path_buf) } else { Some(p) };
            dirs.extend(rel.filter(|r| r.components().all(|c| matches!(c, Component::Normal(_)))));
        }
        self.hooks.insert(top.to_path_buf(), dirs.clone());
        dirs
    }

    /// Whether the set made `dir` a git directory (`HEAD`, `objects/`, `refs/`), which the host's
    /// `dir` was not.
    fn made_git_dir(&mut self, dir: &Path) -> bool {
        if let Some(g) = self.git_dirs.get(dir) {
            return *g;
        }
        let is_dir = |k: Option<Kind>| matches!(k, Some(Kind::Dir { .. }));
        let g = dir.file_name().is_some_and(|n| n != ".git")
            && self.root.join(dir).join("HEAD").symlink_metadata().is_err()
            && self.merged(&dir.join("HEAD")).is_some()
            && is_dir(self.merged(&dir.join("objects")))
            && is_dir(self.merged(&dir.join("refs")));
        self.git_dirs.insert(dir.to_path_buf(), g);
        g
    }

    /// The kind of what is at `rel` in the set's view (the upper's entry, else the host's where
    /// nothing above hides it), or `None`.
    fn merged(&self, rel: &Path) -> Option<Kind> {
        if let Ok(e) = entries::read(&self.upper.join(rel), rel.to_path_buf()) {
            return (e.kind != Kind::Whiteout).then_some(e.kind);
        }
        for a in rel.ancestors().skip(1).filter(|a| !a.as_os_str().is_empty()) {
            match entries::read(&self.upper.join(a), a.to_path_buf()).map(|e| e.kind) {
                Ok(Kind::Dir { opaque: false }) | Err(_) => {}
                Ok(_) => return None,
            }
        }
        let m = self.root.join(rel).symlink_metadata().ok()?;
        Some(if m.is_dir() { Kind::Dir { opaque: false } } else if m.file_type().is_symlink() { Kind::Symlink(PathBuf::new()) } else { Kind::File })
    }

    /// A small text file of the set's view (a git config), at most 1 MiB.
    fn read_merged(&self, rel: &Path) -> Option<String> {
        let path = match self.merged(rel)? {
            Kind::File => {
                let up = self.upper.join(rel);
                if up.symlink_metadata().is_ok() { up } else { self.root.join(rel) }
            }
            _ => return None,
        };
        if path.symlink_metadata().ok()?.len() > 1 << 20 {
            return None;
        }
        std::fs::read_to_string(path).ok()
    }
}
