//! The per-user store that receives what sandboxed commands write into their caches.
//!
//! Location: `$SANDSPAWN_TOOL_CACHE_DIR`, else `$XDG_STATE_HOME/sandspawn/tool-caches`, else
//! `$HOME/.local/state/sandspawn/tool-caches` (the command's environment decides, like the cache
//! locations themselves). Not under `$XDG_CACHE_HOME`: `~/.cache` is itself overlaid, and an
//! overlay's upper directory cannot lie inside its lower one.
//!
//! Layout: `workspaces/KEY/` per workspace (`KEY`: the workspace directory's name and a hash of its
//! path; `workspace` inside records the path, `last-used`'s time the last run), `shared/` for runs
//! that opted into sharing (`toolCaches: 'shared'`), and in each, per cache location `NAME`, its
//! layers (see `layers`). Why per workspace: package managers trust what they extracted earlier
//! (cargo compiles `~/.cargo/registry/src`, npx runs `~/.npm/_npx`), so a store shared by every
//! workspace let a command in one repository plant code that a build in another one ran.
//! Directories are created with mode 0700.

use std::collections::BTreeMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use super::dir::Dir;
use crate::error::{Result, SandboxError};
use crate::policy::WritableRoot;

/// The variables `root` reads (whoever builds an environment just for it needs no others).
pub const ROOT_VARIABLES: [&str; 3] = ["SANDSPAWN_TOOL_CACHE_DIR", "XDG_STATE_HOME", "HOME"];

/// The store's root for this environment, or `None` when neither the override nor `HOME` is an
/// absolute path.
pub fn root(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    let var = |k: &str| env.get(k).map(PathBuf::from);
    if let Some(dir) = var("SANDSPAWN_TOOL_CACHE_DIR").filter(|p| p.is_absolute()) {
        return Some(dir);
    }
    crate::state_dir::path(var, "tool-caches")
}

/// The store's root for the host process's own environment (where its runs keep their caches):
/// made, covered and pinned in every sandbox (`plan::stores`).
pub fn host_root() -> Option<PathBuf> {
    #[cfg(test)]
    if let Some(root) = test_host::get() {
        return Some(root);
    }
    // Only the variables `root` reads (this runs on every run's path).
    let host_env: BTreeMap<String, String> = ROOT_VARIABLES.into_iter().filter_map(|k| Some((k.to_string(), std::env::var_os(k)?.into_string().ok()?))).collect();
    root(&host_env)
}

/// Tests stand for the host process with a home of their own: `root` is the host's store on this
/// thread until the guard drops.
#[cfg(test)]
pub mod test_host {
    use std::cell::RefCell;
    use std::path::PathBuf;

    thread_local!(static ROOT: RefCell<Option<PathBuf>> = const { RefCell::new(None) });

    pub fn set(root: PathBuf) -> impl Drop {
        ROOT.with(|r| *r.borrow_mut() = Some(root));
        struct Unset;
        impl Drop for Unset {
            fn drop(&mut self) {
                ROOT.with(|r| *r.borrow_mut() = None);
            }
        }
        Unset
    }

    pub(super) fn get() -> Option<PathBuf> {
        ROOT.with(|r| r.borrow().clone())
    }
}

/// The writable root of a run that holds the store at `root` (or lies in it), by its path or by the
/// real path of what exists of it; `None` when none does, or when it is the host process's own
/// store (`host`), which is made, covered and pinned in every sandbox. Another store in a writable
/// root is one the run could make or change (found by an attacker's review: with HOME in the
/// workspace, a run made the store, its `workspaces` a link into the workspace, and the host's fold
/// after the next run moved and removed host files through what that run put there).
pub fn writable_by_the_run(root: &Path, roots: &[WritableRoot], host: Option<&Path>) -> Option<PathBuf> {
    if host == Some(root) {
        return None;
    }
    let real = root.ancestors().find_map(|a| Some(a.canonicalize().ok()?.join(root.strip_prefix(a).ok()?))).unwrap_or_else(|| root.to_path_buf());
    let overlaps = |r: &Path| super::locations::overlaps(root, r) || super::locations::overlaps(&real, r);
    roots.iter().find(|r| overlaps(&r.root)).map(|r| r.root.clone())
}

/// A name for one run's work directories, unique among concurrent runs on this host.
pub fn run_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{}-{}-{}", std::process::id(), nanos, NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The repository a cwd belongs to: the nearest directory at or above it that holds a `.git`, else
/// the cwd. It names a scope for people; the writable roots key it (`scope`). A `.git` that is a
/// placeholder (an empty one a plan's helper holds absent while its run lasts: `/tmp/.git` above a
/// workspace in `/tmp`) is no repository: taken for one, a run in `/tmp/x` beside another run
/// named its scope `/tmp` (found as a unit test failing under a parallel run of the suite).
pub fn workspace_of(cwd: &Path) -> PathBuf {
    let repository = |d: &Path| {
        let git = d.join(".git");
        git.symlink_metadata().is_ok_and(|m| !crate::placeholders::is_placeholder(&git, &m))
    };
    cwd.ancestors().find(|d| repository(d)).unwrap_or(cwd).to_path_buf()
}

/// Where the caches of runs that opted into sharing across workspaces live.
pub fn shared_dir(root: &Path) -> PathBuf {
    root.join("shared")
}

/// Create the store's root and a scope's directory in it (idempotent, safe for concurrent runs),
/// and record the scope's use (`last-used`), which `evict_unused` goes by (what the scope is, is
/// recorded by `scope::create`). The store must be a real directory owned by this user: a store
/// another user could write to would let them plant what the next build installs. Returns both
/// opened (`Dir`): everything below the root is reached from its descriptor, never through a link.
pub fn create(root: &Path, scope: &Path) -> Result<(Dir, Dir)> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true).mode(0o700);
    // Before anything is made through a planted link.
    check_links(root)?;
    builder.create(root).map_err(|e| failed(root, e))?;
    check_owned(root)?;
    let top = Dir::root(root).map_err(|e| failed(root, e))?;
    // What is held is what was checked (not a directory put at the path since).
    let st = top.own_stat().map_err(|e| failed(root, e))?;
    // SAFETY: geteuid has no preconditions.
    if st.st_uid != unsafe { libc::geteuid() } || st.st_mode & 0o022 != 0 {
        return Err(failed(root, std::io::Error::other("it changed while it was checked")));
    }
    let rel = scope.strip_prefix(root).map_err(|_| failed(scope, std::io::Error::from_raw_os_error(libc::EINVAL)))?;
    let dir = top.dirs(rel).map_err(|e| failed(scope, e))?;
    let _ = dir.write("last-used", b"");
    Ok((top, dir))
}

/// The error of a store or scope directory that cannot be made.
pub(super) fn failed(p: &Path, e: std::io::Error) -> SandboxError {
    SandboxError::setup_failed(format!("cannot create the private tool cache store at {}: {e}", p.display()), "")
}

/// Scopes of the store not used for `max_age`, removed (a scope a run holds now is always used
/// recently: its `last-used` was written when the run started). Checked at most once an hour per
/// process, so it costs a run nothing.
pub fn evict_unused(root: &Dir, max_age: std::time::Duration) {
    static LAST: std::sync::Mutex<Option<std::time::Instant>> = std::sync::Mutex::new(None);
    if hour_passed(&LAST) {
        evict_now(root, max_age);
    }
}

/// Whether an hour passed since the chore whose time `last` keeps (or it never ran); if so, its
/// time is now. For clean-ups that walk a whole store: at most once an hour per process.
pub fn hour_passed(last: &std::sync::Mutex<Option<std::time::Instant>>) -> bool {
    let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
    if last.is_some_and(|t| t.elapsed() < std::time::Duration::from_secs(3600)) {
        return false;
    }
    *last = Some(std::time::Instant::now());
    true
}

/// `evict_unused` without its hourly throttle, as of now.
pub(super) fn evict_now(root: &Dir, max_age: std::time::Duration) {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    evict_at(root, max_age, now);
}

/// `evict_now` as if it were `now` (unix seconds). Also removes the caches of the earlier layout
/// (`<root>/<cache>/upper`, one store shared by every workspace): what they hold may have been
/// planted by a run in any workspace, so they are dropped, not migrated. From the root's
/// descriptor, through no link (`Dir`). A scope's use is the last change of its `last-used`: the
/// ctime, which no process sets, not the mtime, which a Landlock command in another workspace set
/// back (`touch -d`: the mode does not govern file times) to have the next run drop the scope
/// (found by an attacker's review, cross31; `review::store::evict_at` likewise).
pub(super) fn evict_at(root: &Dir, max_age: std::time::Duration, now: i64) {
    if let Ok(scopes) = root.open("workspaces") {
        for name in scopes.names().unwrap_or_default() {
            let used = scopes.open(&name).ok().and_then(|s| s.stat("last-used").ok().flatten()).map(|st| st.st_ctime as i64);
            if used.is_some_and(|t| now - t > max_age.as_secs() as i64) {
                let _ = scopes.remove(&name);
            }
        }
    }
    for name in root.names().unwrap_or_default() {
        let legacy = !matches!(name.to_str(), Some("workspaces" | "shared")) && root.open(&name).is_ok_and(|d| d.has_dir("upper"));
        if legacy {
            let _ = root.remove(&name);
        }
    }
}

/// The bytes the store's files take (for `doctor`), not following links.
pub fn size(root: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if let Ok(m) = e.path().symlink_metadata() {
                total += m.blocks() * 512;
                if m.is_dir() {
                    stack.push(e.path());
                }
            }
        }
    }
    total
}

fn check_owned(root: &Path) -> Result<()> {
    let meta = std::fs::symlink_metadata(root)
        .map_err(|e| SandboxError::setup_failed(format!("cannot inspect the tool cache store {}: {e}", root.display()), ""))?;
    if !crate::state_dir::is_private(&meta) {
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        return Err(SandboxError::setup_failed(
            format!(
                "the tool cache store {} must be a directory owned by uid {uid} and writable by nobody else; \
                 fix or remove it, or set SANDSPAWN_TOOL_CACHE_DIR",
                root.display()
            ),
            "",
        ));
    }
    Ok(())
}

/// No symlink this user owns on the store's path: one a run planted above the store (a cwd of
/// $HOME) would put every workspace's caches where that run chose (found by an attacker's review of
/// the change sets' store, kept alike).
fn check_links(root: &Path) -> Result<()> {
    no_own_link("tool cache store", root, "SANDSPAWN_TOOL_CACHE_DIR")
}

/// Refuses sandspawn's `what` at `root` when a symlink this user owns is on its path (see
/// `no_symlinks::own_link_on`); `variable` names where to put it instead.
pub fn no_own_link(what: &str, root: &Path, variable: &str) -> Result<()> {
    let Some(link) = crate::no_symlinks::own_link_on(root) else { return Ok(()) };
    Err(SandboxError::setup_failed(
        format!(
            "the {what} {} is reached through the symlink {}, which a sandboxed run could have planted; \
             remove the link (and check what it points to), or set {variable}",
            root.display(),
            link.display()
        ),
        "",
    ))
}

/// Remove a tree the kernel or a tool made hard to remove: overlayfs leaves `work/work` with mode
/// 000, Go's module cache is read-only. Missing is fine.
pub fn remove_tree(p: &Path) -> std::io::Result<()> {
    // At any depth, relative to directory descriptors (a change set's tree can be deeper than
    // PATH_MAX).
    crate::remove_tree::remove_tree(p)
}

/// Everything in the store, for `sandspawn cache clean`. Refuses a path that is not a store
/// (no `upper` directories inside), so a wrong variable cannot make it delete something else.
pub fn clean(root: &Path) -> Result<bool> {
    let entries = match std::fs::read_dir(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(SandboxError::setup_failed(format!("cannot read the tool cache store {}: {e}", root.display()), "")),
        Ok(d) => d,
    };
    for entry in entries.flatten() {
        let p = entry.path();
        let ours = matches!(entry.file_name().to_str(), Some("workspaces" | "shared")) || p.join("upper").is_dir();
        if !ours {
            return Err(SandboxError::invalid(
                "store",
                format!("{} does not look like a sandspawn tool cache store ({} is not a cache); nothing was removed", root.display(), p.display()),
            ));
        }
    }
    remove_tree(root).map_err(|e| SandboxError::setup_failed(format!("removing {} failed: {e}", root.display()), ""))?;
    Ok(true)
}

/// What `doctor` and `toolCacheStore()` say about the store.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub path: Option<PathBuf>,
    pub bytes: u64,
    /// Workspaces with caches of their own (the shared scope not counted).
    pub workspaces: usize,
    pub removed: bool,
}

/// The store of this environment, measured, and emptied first when `clean` is set.
pub fn report(env: &BTreeMap<String, String>, clean: bool) -> Result<Report> {
    let Some(root) = self::root(env) else {
        return Ok(Report { path: None, bytes: 0, workspaces: 0, removed: false });
    };
    super::releasing::settle();
    let removed = if clean { self::clean(&root)? } else { false };
    let workspaces = std::fs::read_dir(root.join("workspaces")).map(|d| d.flatten().count()).unwrap_or(0);
    Ok(Report { bytes: size(&root), workspaces, removed, path: Some(root) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn root_follows_xdg() {
        assert_eq!(root(&env(&[("HOME", "/h")])), Some(PathBuf::from("/h/.local/state/sandspawn/tool-caches")));
        assert_eq!(root(&env(&[("HOME", "/h"), ("XDG_STATE_HOME", "/s")])), Some(PathBuf::from("/s/sandspawn/tool-caches")));
        assert_eq!(root(&env(&[("HOME", "/h"), ("SANDSPAWN_TOOL_CACHE_DIR", "/x")])), Some(PathBuf::from("/x")));
        assert_eq!(root(&env(&[("HOME", "rel")])), None);
        assert_eq!(root(&env(&[])), None);
    }

    #[test]
    fn create_is_private_and_idempotent_and_clean_removes_it() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().join("store");
        let scope = r.join("workspaces/myapp-00-00");
        create(&r, &scope).unwrap();
        create(&r, &scope).unwrap();
        assert_eq!(std::fs::metadata(&r).unwrap().permissions().mode() & 0o777, 0o700);
        assert!(scope.join("last-used").exists());
        // A byte of content: on tmpfs the directories and the empty last-used take no blocks.
        std::fs::write(scope.join("some-cache"), "x").unwrap();
        assert!(size(&r) > 0);
        // What overlayfs leaves behind: a mode-000 directory.
        let w = scope.join("npm/slots/0/work/work");
        std::fs::create_dir_all(&w).unwrap();
        std::fs::set_permissions(&w, std::fs::Permissions::from_mode(0o000)).unwrap();
        assert!(clean(&r).unwrap());
        assert!(!r.exists());
        assert!(!clean(&r).unwrap(), "nothing to clean");
    }

    #[test]
    fn refuses_a_loose_store_and_a_non_store() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().join("store");
        std::fs::create_dir(&r).unwrap();
        std::fs::set_permissions(&r, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(create(&r, &r.join("shared")).unwrap_err().message.contains("writable by nobody else"));
        std::fs::set_permissions(&r, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::create_dir(r.join("not-a-cache")).unwrap();
        assert_eq!(clean(&r).unwrap_err().code.as_str(), "ERR_SANDBOX_INVALID_OPTIONS");
        assert!(r.join("not-a-cache").exists());
    }

    #[test]
    fn the_workspace_is_the_repository_around_the_cwd_and_unused_scopes_go() {
        let t = tempfile::tempdir().unwrap();
        let repo = t.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        assert_eq!(workspace_of(&repo.join("src/deep")), repo);
        let plain = t.path().join("plain");
        std::fs::create_dir(&plain).unwrap();
        assert_eq!(workspace_of(&plain), plain, "no repository around: the cwd");
        // A placeholder `.git` above it (another run's plan holds the name absent) is none.
        let held = t.path().join("held");
        std::fs::create_dir_all(held.join("ws")).unwrap();
        std::fs::create_dir(held.join(".git")).unwrap();
        std::fs::set_permissions(held.join(".git"), std::fs::Permissions::from_mode(sandspawn_helper::placeholder::DIR_MODE)).unwrap();
        assert_eq!(workspace_of(&held.join("ws")), held.join("ws"), "a placeholder is no repository");
        let r = t.path().join("store");
        let (old, new) = (r.join("workspaces/old-00-00"), r.join("workspaces/new-00-00"));
        create(&r, &old).unwrap();
        let (top, _) = create(&r, &new).unwrap();
        let month_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 86400);
        // An mtime set back (`touch -d`) is no sign of disuse: the ctime says when it was used.
        std::fs::File::options().write(true).open(old.join("last-used")).unwrap().set_modified(month_ago).unwrap();
        std::fs::create_dir_all(r.join("npm/upper/_cacache")).unwrap();
        std::fs::create_dir_all(r.join("npm/work")).unwrap();
        evict_now(&top, std::time::Duration::from_secs(30 * 86400));
        assert!(old.exists() && new.exists(), "an mtime set back keeps a scope in use");
        assert!(!r.join("npm").exists(), "the earlier layout's shared caches go");
        // Forty days on, the scopes not used since go (a scope is used at every run's start).
        let later = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64 + 40 * 86400;
        evict_at(&top, std::time::Duration::from_secs(30 * 86400), later);
        assert!(!old.exists() && top.has_dir("workspaces"));
    }
}

