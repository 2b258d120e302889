//! The host follows no link below the store's root (found by an attacker's review, own18
//! storechain.js): a run that could write a store (one in its writable root, or another run's, in a
//! workspace it may write) replaced a cache's `base` with a symlink to a host directory and
//! `discard` with one to host data; the fold after the run moved the run's file into the host
//! directory and emptied the data. Every entry below the root is now reached from the root's
//! descriptor, one name at a time, never through a link: what is not a directory where the store
//! keeps one is removed (the link itself) and a directory made in its place.

use std::path::{Path, PathBuf};

use super::dir::Dir;
use super::layers::CacheRun;

struct Fixture {
    _t: tempfile::TempDir,
    store: PathBuf,
    scope: PathBuf,
    /// A host directory the run may not write (empty), and host data (`keep.txt`, `sub/more.txt`).
    target: PathBuf,
    data: PathBuf,
}

fn fixture() -> Fixture {
    let t = tempfile::tempdir().unwrap();
    let top = t.path().canonicalize().unwrap();
    let (store, target, data) = (top.join("store"), top.join("host/.vim/plugin"), top.join("host/important"));
    let scope = store.join("workspaces/ws-00-00");
    std::fs::create_dir_all(&target).unwrap();
    std::fs::create_dir_all(data.join("sub")).unwrap();
    std::fs::write(data.join("keep.txt"), "data").unwrap();
    std::fs::write(data.join("sub/more.txt"), "data").unwrap();
    super::scope::create(&store, &scope, None).unwrap();
    Fixture { _t: t, store, scope, target, data }
}

impl Fixture {
    fn host_unchanged(&self) {
        assert_eq!(names(&self.target), Vec::<String>::new(), "the host wrote into a host directory through a link");
        assert_eq!(names(&self.data), ["keep.txt", "sub"], "the host removed host data through a link");
        assert_eq!(names(&self.data.join("sub")), ["more.txt"], "the host removed host data through a link");
    }
}

/// `CacheRun::open` of the cache at `cache` (its scope: the parent directory, opened by its path).
fn open(cache: &Path, run: &str) -> crate::error::Result<CacheRun> {
    CacheRun::open(&Dir::at(cache.parent().unwrap()), cache.file_name().unwrap().to_str().unwrap(), run, &|| false)
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    v.sort();
    v
}

fn link(to: &Path, at: &Path) {
    if at.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        std::fs::rename(at, at.with_extension("old")).unwrap();
    } else {
        let _ = std::fs::remove_file(at);
    }
    std::os::unix::fs::symlink(to, at).unwrap();
}

/// The reproduction's run B: `base` and `discard` replaced by links, a pending layer left.
#[test]
fn a_fold_moves_nothing_into_a_linked_base_and_removes_nothing_through_a_linked_discard() {
    let f = fixture();
    let cache = f.scope.join("npm");
    let a = open(&cache, "a").unwrap();
    std::fs::write(a.upper.join("evil.vim"), "\" planted").unwrap();
    link(&f.target, &cache.join("base"));
    link(&f.data, &cache.join("discard"));
    a.finish();
    f.host_unchanged();
    // The next run of the scope works: the store has its directories again.
    let b = open(&cache, "b").unwrap();
    assert!(cache.join("base").symlink_metadata().unwrap().is_dir());
    b.finish();
    f.host_unchanged();
}

#[test]
fn a_run_s_writes_are_published_into_no_linked_pending_directory() {
    let f = fixture();
    let cache = f.scope.join("npm");
    let mut a = open(&cache, "a").unwrap();
    std::fs::write(a.upper.join("evil.vim"), "\" planted").unwrap();
    link(&f.target, &cache.join("pending"));
    a.publish();
    f.host_unchanged();
    a.finish();
    f.host_unchanged();
}

#[test]
fn a_run_s_directories_are_made_in_no_linked_slot_and_its_lock_in_no_linked_cache() {
    let f = fixture();
    let cache = f.scope.join("npm");
    std::fs::create_dir_all(cache.join("slots")).unwrap();
    link(&f.target, &cache.join("slots/0"));
    let a = open(&cache, "a").unwrap();
    assert!(!a.upper.starts_with(&f.target) && a.upper.symlink_metadata().unwrap().is_dir());
    a.finish();
    f.host_unchanged();
    link(&f.target, &cache);
    if let Ok(b) = open(&cache, "b") {
        b.finish();
    }
    f.host_unchanged();
}

/// Run A of the reproduction planted `workspaces` as a link into the workspace: the scope was made
/// there, where every later run could write it.
#[test]
fn a_scope_is_made_through_no_link() {
    let f = fixture();
    std::fs::remove_dir_all(f.store.join("workspaces")).unwrap();
    std::os::unix::fs::symlink(&f.target, f.store.join("workspaces")).unwrap();
    let _ = super::scope::create(&f.store, &f.scope, None);
    f.host_unchanged();
}

/// The files the host writes in a scope (`last-used` at every run, `workspace` and `roots` at its
/// first) are written to no link's target.
#[test]
fn a_scope_s_files_are_written_through_no_link() {
    let f = fixture();
    let victim = f.data.join("keep.txt");
    for name in ["last-used", "workspace"] {
        link(&victim, &f.scope.join(name));
    }
    let record = super::scope::Record { repository: PathBuf::from("/ws"), roots: b"write 1 2 - /ws\0\n".to_vec() };
    let _ = super::scope::create(&f.store, &f.scope, Some(&record));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "data", "the host wrote host data through a link");
    f.host_unchanged();
}

/// Unused scopes and the earlier layout's caches are removed from the root's directory, never
/// through a linked `workspaces`.
#[test]
fn eviction_removes_nothing_through_a_link() {
    let f = fixture();
    let old = f.data.join("sub");
    std::fs::write(old.join("last-used"), "").unwrap();
    let month_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 86400);
    std::fs::File::options().write(true).open(old.join("last-used")).unwrap().set_modified(month_ago).unwrap();
    std::fs::remove_dir_all(f.store.join("workspaces")).unwrap();
    std::os::unix::fs::symlink(&f.data, f.store.join("workspaces")).unwrap();
    let later = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64 + 40 * 86400;
    super::store::evict_at(&Dir::root(&f.store).unwrap(), std::time::Duration::from_secs(30 * 86400), later);
    assert!(old.join("more.txt").exists(), "the host removed host data through a link");
}
