//! sandspawn's directories in the user's state directory (`$XDG_STATE_HOME/sandspawn/NAME`, else
//! `~/.local/state/sandspawn/NAME`): the tool caches' store, the change sets' and the Landlock
//! mode's run directories. Where each is, and whether one found there is private.

use std::path::PathBuf;

/// `STATE/sandspawn/name`, with the variables `var` reads (the host process's environment, or the
/// command's); a relative value counts as unset. `None` when neither variable is absolute.
pub fn path(var: impl Fn(&str) -> Option<PathBuf>, name: &str) -> Option<PathBuf> {
    Some(base(var)?.join(name))
}

/// `STATE/sandspawn`, which holds them all (see `path`).
pub fn base(var: impl Fn(&str) -> Option<PathBuf>) -> Option<PathBuf> {
    let var = |k: &str| var(k).filter(|p| p.is_absolute());
    let state = var("XDG_STATE_HOME").or_else(|| var("HOME").map(|h| h.join(".local/state")))?;
    Some(state.join("sandspawn"))
}

/// Whether `path` lies under `/tmp`, as named or where what exists of it leads: every
/// workspace-write run of any process may write there (`tmp: 'writable'`, the default), and no
/// run of another process covers a store there (`plan::known_stores` lists none), so none of
/// sandspawn's stores is kept there (found by an attacker's review, land27, for the change sets,
/// and cross39 for the tool caches: another process's run planted in a workspace's npm cache).
pub fn under_shared_tmp(path: &std::path::Path) -> bool {
    let tmp = std::fs::canonicalize("/tmp").unwrap_or_else(|_| PathBuf::from("/tmp"));
    let under = |p: &std::path::Path| p.starts_with(&tmp) || p.starts_with("/tmp");
    under(path) || real(path).is_some_and(|real| under(&real))
}

/// The temporary directories every sandspawn run on the host may share (canonical), with the
/// variables `var` reads: `/tmp` and `$TMPDIR` are writable roots of every default run of any
/// process that has them (`tmp: 'writable'`), `/dev/shm` is writable by everyone in the Landlock
/// mode. Not `/var/tmp`: read-only in every run unless a writable root holds it (as any directory
/// may be for some run), and sticky, so no other user replaces this user's entries there.
pub fn shared_temp_dirs(var: impl Fn(&str) -> Option<PathBuf>) -> Vec<PathBuf> {
    let tmpdir = var("TMPDIR").filter(|t| !t.as_os_str().is_empty());
    let named = ["/tmp", "/dev/shm"].iter().map(PathBuf::from).chain(tmpdir);
    named.filter(|t| t.is_absolute()).map(|t| crate::canonical_memo::canonicalize(&t).unwrap_or(t)).filter(|t| t != std::path::Path::new("/")).collect()
}

/// Why `host_path` has no directory, for a refusal or a `notEnforced` line.
pub const NO_HOST_PATH: &str =
    "neither XDG_STATE_HOME nor HOME is an absolute path outside the shared temporary directories (/tmp, /dev/shm, $TMPDIR), nor is the user database's home";

/// `STATE/sandspawn/name` from the host process's environment, for the state that says what the
/// host does to the user's files later: the held links' records (`held-links`: the link as it was
/// found, which the host puts back), the held directories' locks (`held-dirs`) and the Landlock
/// mode's run directories (`runs`: a run's own `TMPDIR` and npm cache). Where that lies under
/// `/tmp` (`under_shared_tmp`: `HOME` or `XDG_STATE_HOME` there, as some CI and agent harnesses
/// run), `/dev/shm` or this process's `$TMPDIR` (`shared_temp_dirs`), another process's default run may write it, and no run of another process covers it: a
/// forged record there had the host "put back" a `writableRoots` link to the forger's target (found
/// by an attacker's review, crossb39). Then the user database home's default (`home_base`) instead,
/// which every run of this process covers (`plan::stores`), and where every such process of this
/// user meets the others (so a link held by two of them stays one record, rfix27's). `None` when
/// that lies under `/tmp` too, or neither is absolute: the callers refuse or say what they lack.
pub fn host_path(name: &str) -> Option<PathBuf> {
    host_path_with(|k| std::env::var_os(k).map(PathBuf::from), crate::planted::home::database_home, name)
}

/// `host_path` with the variables `var` reads and the user database's home `database` looks up.
fn host_path_with(var: impl Fn(&str) -> Option<PathBuf>, database: impl FnOnce() -> Option<PathBuf>, name: &str) -> Option<PathBuf> {
    // Not only /tmp: a harness's TMPDIR elsewhere (CI runners' temporary directory with HOME below
    // it) is a writable root of every default run of every process it starts, and the Landlock
    // mode's runs write /dev/shm (found by an attacker's review of crossb39's fix, rev40).
    let shared = shared_temp_dirs(&var);
    let named = path(&var, name)?;
    if !under_shared_tmp_or_any(&named, &shared) {
        return Some(named);
    }
    Some(home_base(database())?.join(name)).filter(|p| !under_shared_tmp_or_any(p, &shared))
}

/// Whether `path` lies under `/tmp` (`under_shared_tmp`) or in one of `shared` (`shared_temp_dirs`),
/// as named or where what exists of it leads. What exists of it is resolved once for both (every
/// run asks this of its state directories several times: 6 `readlink`s fewer each time for
/// `~/.local/state/sandspawn/NAME`, resolved twice before).
fn under_shared_tmp_or_any(path: &std::path::Path, shared: &[PathBuf]) -> bool {
    let tmp = crate::canonical_memo::canonicalize(std::path::Path::new("/tmp")).unwrap_or_else(|_| PathBuf::from("/tmp"));
    let under = |p: &std::path::Path| p.starts_with(&tmp) || p.starts_with("/tmp") || shared.iter().any(|s| p.starts_with(s));
    under(path) || real(path).is_some_and(|real| under(&real))
}

/// What exists of `path` resolved (its longest existing ancestor's canonical form), the rest as named.
fn real(path: &std::path::Path) -> Option<PathBuf> {
    path.ancestors().find_map(|a| Some(crate::canonical_memo::canonicalize(a).ok()?.join(path.strip_prefix(a).ok()?)))
}

/// `home`'s default `STATE/sandspawn` (`~/.local/state/sandspawn`), where a process of this user
/// without `XDG_STATE_HOME` keeps its state; `None` for a relative or missing home.
pub fn home_base(home: Option<PathBuf>) -> Option<PathBuf> {
    Some(home.filter(|h| h.is_absolute())?.join(".local/state/sandspawn"))
}

/// `dir`, one of sandspawn's directories in the state directory (`held-dirs`, `held-links`,
/// `runs`, a store's root), whose metadata `meta` shows it is this user's and lacks the owner's
/// bits: given them back through a handle from its parent, opened with no symlink on the way
/// (`sandspawn_helper::own_mode`). Found by an attacker's review (store29): the Landlock mode does
/// not govern modes, and its command, which reads the state directory, could `chmod 0` them, and
/// every later run that needed one failed or went without it. Whether they were given back.
pub fn give_back_if_taken(dir: &std::path::Path, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    if !meta.is_dir() || meta.uid() != unsafe { libc::geteuid() } || meta.mode() & 0o700 == 0o700 {
        return false;
    }
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else { return false };
    let (Ok(parent), Ok(name)) = (crate::no_symlinks::open_dir(parent), std::ffi::CString::new(name.as_bytes())) else { return false };
    sandspawn_helper::own_mode::give_back_at(&parent, &name, sandspawn_helper::own_mode::Kind::Dir, 0o700).unwrap_or(false)
}

/// A directory of this user's that nobody else may write: whoever else could write one of these
/// would choose what the host keeps, runs or applies from it.
pub fn is_private(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    meta.is_dir() && meta.uid() == unsafe { libc::geteuid() } && meta.mode() & 0o022 == 0
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    /// A state directory under /tmp is not where the held links' records go: the user database's
    /// home's is, or none when that is under /tmp too (crossb39: another process's run forged a
    /// record there); one elsewhere is used as named.
    #[test]
    fn a_host_state_path_is_never_under_the_shared_tmp() {
        let env = |home: &'static str| move |k: &str| (k == "HOME").then(|| PathBuf::from(home));
        let db = |h: &'static str| move || Some(PathBuf::from(h));
        let at = |p: &str| Some(PathBuf::from(p));
        assert_eq!(super::host_path_with(env("/var/tmp/h"), db("/home/u"), "held-links"), at("/var/tmp/h/.local/state/sandspawn/held-links"));
        assert_eq!(super::host_path_with(env("/tmp/h"), db("/home/u"), "held-links"), at("/home/u/.local/state/sandspawn/held-links"));
        assert_eq!(super::host_path_with(env("/tmp/h"), db("/tmp/u"), "runs"), None);
        assert_eq!(super::host_path_with(env("/tmp/h"), || None, "held-dirs"), None);
        // rev40: a TMPDIR outside /tmp holding the home, and /dev/shm, are shared as /tmp is.
        let with_tmpdir = |home: &'static str, tmpdir: &'static str| {
            move |k: &str| match k {
                "HOME" => Some(PathBuf::from(home)),
                "TMPDIR" => Some(PathBuf::from(tmpdir)),
                _ => None,
            }
        };
        let held = with_tmpdir("/var/tmp/ci/home", "/var/tmp/ci");
        assert_eq!(super::host_path_with(held, db("/home/u"), "held-links"), at("/home/u/.local/state/sandspawn/held-links"));
        let beside = with_tmpdir("/var/tmp/h", "/var/tmp/ci");
        assert_eq!(super::host_path_with(beside, db("/home/u"), "held-links"), at("/var/tmp/h/.local/state/sandspawn/held-links"));
        assert_eq!(super::host_path_with(with_tmpdir("/var/tmp/ci/h", "/var/tmp/ci"), db("/var/tmp/ci/u"), "runs"), None);
        assert_eq!(super::host_path_with(env("/dev/shm/h"), db("/home/u"), "runs"), at("/home/u/.local/state/sandspawn/runs"));
    }

    /// A home whose `.local` is a link under /tmp, or under a `TMPDIR` elsewhere, is shared as
    /// one named there is: what exists of the path is resolved (once, for both checks).
    #[test]
    fn a_host_state_path_leading_into_a_shared_temp_dir_is_not_used() {
        let shared_tmp = tempfile::tempdir_in("/tmp").unwrap();
        let var_tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let tmpdir = var_tmp.path().join("tmpdir");
        let (home, other) = (var_tmp.path().join("home"), var_tmp.path().join("other"));
        for d in [&tmpdir, &home, &other] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::os::unix::fs::symlink(shared_tmp.path(), home.join(".local")).unwrap();
        std::os::unix::fs::symlink(&tmpdir, other.join(".local")).unwrap();
        let var = |home: PathBuf, tmpdir: PathBuf| {
            move |k: &str| match k {
                "HOME" => Some(home.clone()),
                "TMPDIR" => Some(tmpdir.clone()),
                _ => None,
            }
        };
        let db = || Some(PathBuf::from("/home/u"));
        let fallback = Some(PathBuf::from("/home/u/.local/state/sandspawn/runs"));
        assert_eq!(super::host_path_with(var(home.clone(), "/nonexistent".into()), db, "runs"), fallback, "~/.local leads under /tmp");
        assert_eq!(super::host_path_with(var(other.clone(), tmpdir.clone()), db, "runs"), fallback, "~/.local leads into TMPDIR");
        let plain = var_tmp.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        assert_eq!(super::host_path_with(var(plain.clone(), tmpdir), db, "runs"), Some(plain.join(".local/state/sandspawn/runs")));
    }
}
