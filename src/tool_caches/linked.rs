//! Installs that are hard links into a package manager's store, for `sandboxDetails.notEnforced`.
//!
//! pnpm (`package-import-method: auto` where the filesystem has no reflinks, ext4) makes each file
//! of `node_modules/.pnpm` a hard link to one file of its content-addressed store, which every
//! project of the user links; uv (`link-mode: hardlink`, its default on Linux) does the same from
//! its cache into `.venv`. A run that may write the workspace then writes the store's file, and
//! every other project's copy: found by an attacker's review (a run in workspace A appended code
//! to its `left-pad`, and `require("left-pad")` in workspace B ran it), while the store's overlay
//! (`toolCaches`) promised the host's caches unchanged. Nothing cheap prevents it: the link is the
//! workspace's own file, no overlay over the store reaches it, and keeping each linked file
//! read-only means a walk of tens of thousands of files per run (and `pnpm install` in the sandbox
//! then failing to replace them). So the result says it, before the run, from no walk: the package
//! directory is there, and either a store is on its device (a tool links only within one
//! filesystem; the store found where the environment, the tool's configuration files
//! (`linked_config`) or its defaults put it) or a sampled file of it has other names
//! (`linked_sample`: a store in a place none of those name). A filesystem with reflinks (btrfs,
//! XFS) gets clones, not links: a store found by name is said all the same there (a false alarm
//! costs less than silence), a sampled clone has one name and says nothing.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::linked_config;
use super::linked_sample::{self, Linked};

type Env = BTreeMap<String, String>;

/// What the result says of the directories in `dirs` (the writable roots' tops and the cwd, as the
/// caller chose) whose packages are linked into a store of an environment in `envs` (the command's
/// and the host process's: either may have made the links).
pub fn not_enforced(dirs: &[PathBuf], envs: &[&Env]) -> Vec<String> {
    let mut out = Vec::new();
    for dir in dirs {
        let packages = dir.join("node_modules/.pnpm");
        let pnpm = said(&packages, || pnpm_stores(envs, dir, &packages), || linked_sample::linked_file(&packages)).map(|(s, l)| pnpm_note(&packages, s, l));
        let venv = dir.join(".venv");
        let sample = || linked_sample::site_packages(&venv).iter().find_map(|s| linked_sample::linked_file(s));
        let uv = said(&venv, || uv_caches(envs, dir), sample).map(|(c, l)| uv_note(&venv, c, l));
        for note in pnpm.into_iter().chain(uv) {
            if !out.contains(&note) {
                out.push(note);
            }
        }
    }
    out
}

/// Whether the package directory `installed` is to be said, with the store found on its device
/// and a sampled file with other names (one of them at least). Nothing is read for a directory
/// without packages: the configuration files are read and the files sampled only under one.
fn said(installed: &Path, stores: impl FnOnce() -> Vec<PathBuf>, sample: impl FnOnce() -> Option<Linked>) -> Option<(Option<PathBuf>, Option<Linked>)> {
    if !std::fs::metadata(installed).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let store = linked_store(installed, &stores());
    let linked = sample();
    (store.is_some() || linked.is_some()).then_some((store, linked))
}

/// The first of `stores` that is a directory on the device of the directory `installed`.
fn linked_store(installed: &Path, stores: &[PathBuf]) -> Option<PathBuf> {
    let dev = std::fs::metadata(installed).ok().filter(|m| m.is_dir())?.dev();
    stores.iter().find(|s| std::fs::metadata(s).is_ok_and(|m| m.is_dir() && m.dev() == dev)).cloned()
}

/// Where pnpm keeps its store: `npm_config_store_dir`, `$PNPM_HOME/store`,
/// `$XDG_DATA_HOME/pnpm/store`, `~/.local/share/pnpm/store`, a `store-dir` of the npmrc files pnpm
/// reads for the project in `dir`, and `.pnpm-store` at the top of the filesystem of a project
/// that lies on another one than the home's store.
fn pnpm_stores(envs: &[&Env], dir: &Path, packages: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for env in envs {
        let var = |k: &str| env.get(k).map(PathBuf::from).filter(|p| p.is_absolute());
        out.extend(var("npm_config_store_dir").or_else(|| var("NPM_CONFIG_STORE_DIR")));
        out.extend(var("PNPM_HOME").map(|p| p.join("store")));
        out.extend(var("XDG_DATA_HOME").or_else(|| var("HOME").map(|h| h.join(".local/share"))).map(|d| d.join("pnpm/store")));
    }
    out.extend(linked_config::pnpm_stores(dir, envs));
    out.extend(mount_point(packages).map(|m| m.join(".pnpm-store")));
    out
}

/// Where uv keeps its cache: `$UV_CACHE_DIR`, `$XDG_CACHE_HOME/uv`, `~/.cache/uv`, a `cache-dir`
/// of the files uv reads for the project in `dir`.
fn uv_caches(envs: &[&Env], dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for env in envs {
        let var = |k: &str| env.get(k).map(PathBuf::from).filter(|p| p.is_absolute());
        out.extend(var("UV_CACHE_DIR"));
        out.extend(var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|h| h.join(".cache"))).map(|d| d.join("uv")));
    }
    out.extend(linked_config::uv_caches(dir, envs));
    out
}

/// The top of the filesystem `path` lies on: its last ancestor on the same device.
fn mount_point(path: &Path) -> Option<PathBuf> {
    let dev = std::fs::metadata(path).ok()?.dev();
    let mut top = path;
    while let Some(parent) = top.parent() {
        if std::fs::metadata(parent).map_or(true, |m| m.dev() != dev) {
            break;
        }
        top = parent;
    }
    Some(top.to_path_buf())
}

fn pnpm_note(packages: &Path, store: Option<PathBuf>, linked: Option<Linked>) -> String {
    let fix = "package-import-method=copy (in the project's .npmrc), or check the store with `pnpm store status`";
    note(packages, "pnpm's store", store, linked, fix)
}

fn uv_note(venv: &Path, cache: Option<PathBuf>, linked: Option<Linked>) -> String {
    note(venv, "uv's cache", cache, linked, "UV_LINK_MODE=copy (link-mode = \"copy\"), or run `uv cache clean`")
}

/// The words for one tool: `what` its store, `store` where it was found (if it was), `linked` a
/// file seen with other names (if one was), `fix` how to install instead.
fn note(installed: &Path, what: &str, store: Option<PathBuf>, linked: Option<Linked>, fix: &str) -> String {
    let seen = linked.map(|l| format!("{} has {} names", l.file.display(), l.names));
    let links = match (store, seen) {
        (Some(store), None) => format!("likely hard links to {what} {} (same filesystem)", store.display()),
        (Some(store), Some(seen)) => format!("hard links ({seen}), likely to {what} {} (same filesystem)", store.display()),
        (None, seen) => format!("hard links ({}), likely to {what} in a place sandspawn does not know", seen.unwrap_or_default()),
    };
    format!(
        "hard-linked packages: the files under {} are {links}, which every project linked to it and the host's next install \
         use: the command's write to one changes them all, and toolCaches cannot cover it (the link is the workspace's own file). \
         Install with {fix} after the run",
        installed.display()
    )
}

/// Whether any of `dirs` holds a package directory a tool may have linked (`node_modules/.pnpm`,
/// `.venv`): only then are the environments' stores looked for.
pub fn any_installed(dirs: &[PathBuf]) -> bool {
    dirs.iter().any(|d| d.join("node_modules/.pnpm").is_dir() || d.join(".venv").is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(home: &Path) -> Env {
        [("HOME".to_string(), home.to_string_lossy().into_owned())].into()
    }

    #[test]
    fn said_only_with_a_store_on_the_same_device() {
        let t = tempfile::tempdir().unwrap();
        let (home, ws) = (t.path().join("home"), t.path().join("ws"));
        std::fs::create_dir_all(ws.join("node_modules/.pnpm")).unwrap();
        std::fs::create_dir_all(ws.join(".venv")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        assert!(not_enforced(&[ws.clone()], &[&env(&home)]).is_empty(), "no store: nothing to say");
        std::fs::create_dir_all(home.join(".local/share/pnpm/store")).unwrap();
        std::fs::create_dir_all(home.join(".cache/uv")).unwrap();
        let said = not_enforced(&[ws.clone(), ws.clone()], &[&env(&home)]);
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].contains(&home.join(".local/share/pnpm/store").display().to_string()), "{said:?}");
        assert!(said[1].contains(&home.join(".cache/uv").display().to_string()), "{said:?}");
        // A store on another device (/proc is never where a workspace is): no link can reach it.
        let elsewhere: Env = [("UV_CACHE_DIR".to_string(), "/proc".to_string())].into();
        assert!(not_enforced(&[t.path().join("none")], &[&elsewhere]).is_empty());
        assert_eq!(linked_store(&ws.join(".venv"), &[PathBuf::from("/proc")]), None);
    }

    #[test]
    fn the_filesystems_top_is_found() {
        let t = tempfile::tempdir().unwrap();
        let top = mount_point(t.path()).unwrap();
        assert!(t.path().starts_with(&top), "{top:?}");
        assert_eq!(mount_point(Path::new("/proc/self")).as_deref(), Some(Path::new("/proc")));
    }
}
