//! The configuration files inside a version-control store below the tops (`sub/.hg/hgrc`, Sapling's
//! `.sl/config`, jj's `.jj/repo/config.toml` and `.jj/repo` pointer, Pijul's `.pijul/config`, darcs' `_darcs/prefs/defaults`),
//! looked at before and after a run. A store at a root's or repository's top is read-only in the
//! sandbox; one below them (a Mercurial repository inside the workspace) is as writable as the rest,
//! and is not stamped whole as other protected names there are (`stamped_names`: each holds its
//! history, past the stamp's bound). Found by an attacker's review (host32): a run appended
//! `[hooks] pre-status = ...` to an existing `sub/.hg/hgrc` with `hostRisks: []` in bwrap and
//! Landlock mode, and the host's next `hg status` in `sub` ran it. Only these few files are looked
//! at, by path: what the tools do to the rest of the store as they work (a commit, the dirstate
//! renamed into place) is not reported.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::policy::procfs::Followed;

/// Each store's name and the paths inside it whose contents make its tool run programs: the
/// repository's configuration (hooks, extensions, aliases, diff and merge tools), and what tells
/// the tool to read another's (Mercurial's and Sapling's `sharedpath` with `requires` naming
/// `shared`; a jj workspace's `repo` file, the path of the repository it shares).
const CONFIGS: &[(&str, &[&str])] = &[
    (".hg", &["hgrc", "hgrc-not-shared", "sharedpath", "requires"]),
    (".sl", &["config", "hgrc", "sharedpath", "requires"]),
    (".jj", &["repo", "repo/config.toml"]),
    (".pijul", &["config"]),
    // Found by an attacker's review (host41): darcs takes `COMMAND posthook CMD` (or `ALL`) and
    // `run-posthook` (no prompt) from a repository's `_darcs/prefs/defaults`, and the test command
    // `darcs record` runs from `_darcs/prefs/prefs`.
    ("_darcs", &["prefs/defaults", "prefs/prefs"]),
];

/// Configuration paths looked at per run, before and after it: past them the first store left is
/// reported as not examined (`Kept::unexamined`), as every later run's is while it is there.
pub const MAX_PATHS: usize = 4096;

/// Whether `name` is a store's (a protected name not stamped whole: `stamped_names`).
pub fn is_store(name: &[u8]) -> bool {
    CONFIGS.iter().any(|(s, _)| s.as_bytes() == name)
}

/// One configuration path as it was: absent, or its own `(device, inode)` and ctime, and what it
/// leads to as a host tool follows it (itself, or a symlink's target).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Absent,
    Present { own: (u64, u64, i64, i64), target: Target },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    To(u64, u64, i64, i64),
    Nowhere,
    /// Through a magic link of /proc: it leads elsewhere for each process, so it is never judged
    /// unchanged.
    Unjudged,
}

/// A directory is stamped by its identity alone (jj's `.jj/repo` of a repository that is no
/// workspace's): an entry made in it changes its ctime, and what matters there (`config.toml`) is
/// looked at by its own path.
fn state(p: &Path) -> State {
    let Ok(m) = p.symlink_metadata() else { return State::Absent };
    let stamp = |m: &std::fs::Metadata| match m.is_dir() {
        true => (m.dev(), m.ino(), 0, 0),
        false => (m.dev(), m.ino(), m.ctime(), m.ctime_nsec()),
    };
    let target = match m.file_type().is_symlink() {
        false => {
            let (d, i, s, n) = stamp(&m);
            Target::To(d, i, s, n)
        }
        true => match crate::policy::path_walk::follow(p) {
            Followed::To(t) => {
                let (d, i, s, n) = stamp(&t);
                Target::To(d, i, s, n)
            }
            Followed::Nowhere => Target::Nowhere,
            Followed::Unjudged => Target::Unjudged,
        },
    };
    State::Present { own: stamp(&m), target }
}

/// The stores' configuration paths as they were before the run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Kept {
    paths: Vec<(PathBuf, &'static str, State)>,
    /// The first store past `MAX_PATHS`, and how many were not looked at.
    unexamined: Option<(PathBuf, usize)>,
}

/// A configuration path the run created, replaced or changed (or one through /proc).
pub struct Changed<'a> {
    pub path: &'a Path,
    /// The path from the store on (`.hg/hgrc`, `.jj/repo/config.toml`).
    pub shown: String,
    pub what: &'static str,
    pub judged: bool,
}

impl Kept {
    /// The configuration paths of `stores` (entries named `.hg`, `.sl`, `.jj`, `.pijul` below the
    /// tops), by path so that the bound falls at the same stores run after run.
    pub fn of<'a>(stores: impl Iterator<Item = &'a Path>) -> Kept {
        let mut stores: Vec<&Path> = stores.collect();
        stores.sort();
        let mut kept = Kept::default();
        for (i, store) in stores.iter().enumerate() {
            let name = store.file_name().unwrap_or_default().as_encoded_bytes();
            let Some((_, files)) = CONFIGS.iter().find(|(s, _)| s.as_bytes() == name) else { continue };
            if kept.paths.len() + files.len() > MAX_PATHS {
                kept.unexamined = Some((store.to_path_buf(), stores.len() - i));
                break;
            }
            let what = super::names::what_it_does(&String::from_utf8_lossy(name));
            kept.paths.extend(files.iter().map(|f| {
                let p = store.join(f);
                let s = state(&p);
                (p, what, s)
            }));
        }
        kept
    }

    /// The paths that now exist and are not as they were (created, replaced, rewritten, or a
    /// symlink's target changed), and those through /proc (`judged` false). A removed one is
    /// not: the tool then runs less, not more.
    pub fn changed(&self) -> Vec<Changed<'_>> {
        let mut out = Vec::new();
        for (p, what, before) in &self.paths {
            let now = state(p);
            let unjudged = |s: &State| matches!(s, State::Present { target: Target::Unjudged, .. });
            if now == State::Absent || (now == *before && !unjudged(&now)) {
                continue;
            }
            let store = p.ancestors().find(|a| a.file_name().is_some_and(|n| is_store(n.as_encoded_bytes())));
            let shown = store.and_then(|s| s.parent()).and_then(|top| p.strip_prefix(top).ok()).unwrap_or(p);
            let shown = shown.to_string_lossy().into_owned();
            out.push(Changed { path: p, shown, what, judged: !unjudged(&now) && !unjudged(before) });
        }
        out
    }

    /// The first store not looked at (past `MAX_PATHS`), and how many were not.
    pub fn unexamined(&self) -> Option<&(PathBuf, usize)> {
        self.unexamined.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn a_config_rewritten_created_or_repointed_is_changed_the_store_s_work_is_not() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        write(&w.join("a/.hg/hgrc"), "[paths]\n");
        write(&w.join("a/.hg/store/data/x"), "x");
        write(&w.join("b/.sl/requires"), "store\n");
        write(&w.join("c/.jj/repo"), "../d/.jj/repo\n");
        write(&w.join("e/.pijul/config"), "");
        write(&w.join("f/.jj/repo/store/x"), "x");
        let stores = ["a/.hg", "b/.sl", "c/.jj", "e/.pijul", "f/.jj"].map(|s| w.join(s));
        let kept = Kept::of(stores.iter().map(PathBuf::as_path));
        assert!(kept.changed().is_empty());
        std::thread::sleep(std::time::Duration::from_millis(20));
        // The store's own work: files beside the configuration, a rename into the store.
        write(&w.join("a/.hg/store/data/x"), "y");
        write(&w.join("a/.hg/dirstate.tmp"), "d");
        std::fs::rename(w.join("a/.hg/dirstate.tmp"), w.join("a/.hg/dirstate")).unwrap();
        std::fs::remove_file(w.join("e/.pijul/config")).unwrap();
        write(&w.join("f/.jj/repo/op_heads"), "x");
        assert!(kept.changed().is_empty(), "removed, or the store's own files");
        write(&w.join("a/.hg/hgrc"), "[hooks]\npre-status = x\n");
        write(&w.join("b/.sl/config"), "[hooks]\n");
        write(&w.join("c/.jj/repo"), "../elsewhere/.jj/repo\n");
        write(&w.join("f/.jj/repo/config.toml"), "[aliases]\n");
        let changed: Vec<String> = kept.changed().iter().map(|c| c.shown.clone()).collect();
        assert_eq!(changed, [".hg/hgrc", ".sl/config", ".jj/repo", ".jj/repo/config.toml"]);
    }

    #[test]
    fn a_link_s_target_rewritten_is_changed_and_one_through_proc_never_judged() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        write(&w.join("shared/rc"), "[paths]\n");
        std::fs::create_dir_all(w.join("a/.hg")).unwrap();
        std::os::unix::fs::symlink("../../shared/rc", w.join("a/.hg/hgrc")).unwrap();
        std::fs::create_dir_all(w.join("b/.hg")).unwrap();
        // Through /proc/self/cwd, which leads wherever the follower's cwd is (here, to shared/rc).
        let ups = "../".repeat(std::env::current_dir().unwrap().components().count());
        std::os::unix::fs::symlink(format!("/proc/self/cwd/{ups}{}", w.join("shared/rc").display()), w.join("b/.hg/hgrc")).unwrap();
        let stores = [w.join("a/.hg"), w.join("b/.hg")];
        let kept = Kept::of(stores.iter().map(PathBuf::as_path));
        let unjudged: Vec<&Path> = kept.changed().iter().filter(|c| !c.judged).map(|c| c.path).collect();
        assert_eq!(unjudged, [w.join("b/.hg/hgrc")]);
        std::thread::sleep(std::time::Duration::from_millis(20));
        write(&w.join("shared/rc"), "[hooks]\n");
        let changed: Vec<(PathBuf, bool)> = kept.changed().iter().map(|c| (c.path.to_path_buf(), c.judged)).collect();
        assert_eq!(changed, [(w.join("a/.hg/hgrc"), true), (w.join("b/.hg/hgrc"), false)]);
    }

    #[test]
    fn stores_past_the_bound_are_unexamined() {
        let stores: Vec<PathBuf> = (0..MAX_PATHS).map(|i| PathBuf::from(format!("/nonexistent-host32/{i:05}/.hg"))).collect();
        let kept = Kept::of(stores.iter().map(PathBuf::as_path));
        assert_eq!(kept.paths.len(), MAX_PATHS);
        let (first, count) = kept.unexamined().unwrap();
        assert_eq!((first.as_path(), *count), (stores[MAX_PATHS / 4].as_path(), MAX_PATHS - MAX_PATHS / 4));
    }
}
