//! How the host's git spells a path in its configuration, and where it looks for its system file:
//! an include's path as git's `interpolate_path` expands it (`~/`, `~user/`, `%(prefix)/`), and a
//! program's word as the shell git hands it to expands it (`~/`, `~user/`; `$HOME` is given as
//! `~` by `gitconfig::program_paths`). Found by an attacker's review: `~atkfx17/dotfiles/…`, read
//! as a relative path, named nothing kept, and a run rewrote it.
//!
//! Which home `~/` is: the host's git takes `$HOME`, the user's own shells the user database's
//! home; both are taken (`home::Bases`), as a path kept that git does not read costs nothing.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use super::home::Bases;

/// The homes `~/` may mean: the host process's `$HOME` and the user database's, canonical.
pub fn homes() -> Vec<PathBuf> {
    Bases::of_host().homes
}

/// `p` as git expands an include's path: `~/` (and `~`) from each home, `~user/` from the user
/// database, `%(prefix)/` from each git's prefix (`prefixes`), a relative one from `dir` (the
/// including file's). Nothing for an unknown user (git fails to read the file then).
pub fn include(p: &str, dir: &Path, homes: &[PathBuf]) -> Vec<PathBuf> {
    if let Some(rest) = p.strip_prefix("%(prefix)/") {
        return prefixes().into_iter().map(|pre| pre.join(rest)).collect();
    }
    match p.starts_with('~') {
        true => tilde(p, homes),
        false => vec![dir.join(p)],
    }
}

/// `~/rest`, `~`, `~user/rest`, `~user` expanded, as the shell and git do; `p` itself when it
/// starts with no `~`.
pub fn tilde(p: &str, homes: &[PathBuf]) -> Vec<PathBuf> {
    let Some(after) = p.strip_prefix('~') else { return vec![PathBuf::from(p)] };
    let (user, rest) = after.split_once('/').unwrap_or((after, ""));
    let rest = rest.trim_start_matches('/');
    let join = |h: &Path| if rest.is_empty() { h.to_path_buf() } else { h.join(rest) };
    match user {
        "" => homes.iter().map(|h| join(h)).collect(),
        user => user_home(user).iter().map(|h| join(h)).collect(),
    }
}

/// `user`'s home in the user database.
fn user_home(user: &str) -> Option<PathBuf> {
    super::home::home_in_database(Some(&CString::new(user).ok()?))
}

/// The system files git reads: `/etc/gitconfig` (a distribution's git, prefix `/usr`), Homebrew's,
/// and `<prefix>/etc/gitconfig` of every other `git` on the host's `PATH` (`/usr/local/bin/git`
/// reads `/usr/local/etc/gitconfig`), missing ones too (a run could create them).
pub fn system_files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ["/etc/gitconfig", "/opt/homebrew/etc/gitconfig", "/usr/local/etc/gitconfig"].map(PathBuf::from).to_vec();
    for pre in prefixes() {
        let f = if pre == Path::new("/usr") { PathBuf::from("/etc/gitconfig") } else { pre.join("etc/gitconfig") };
        if !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

/// The prefix of each `git` on the host's `PATH`: its real path's directory's parent
/// (`/usr/local/bin/git` → `/usr/local`).
pub fn prefixes() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect::<Vec<_>>()).unwrap_or_default() {
        // One `lstat` tells most directories have no `git` (every run looks, twice): resolving the
        // missing name cost a `readlink` per component of the directory's path. Where `lstat`
        // fails, so would the resolution.
        let candidate = dir.join("git");
        if std::fs::symlink_metadata(&candidate).is_err() {
            continue;
        }
        let Ok(git) = std::fs::canonicalize(candidate) else { continue };
        if let Some(pre) = git.parent().and_then(Path::parent).map(Path::to_path_buf).filter(|p| !out.contains(p)) {
            out.push(pre);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The user database's name and home of this process's user, as `~user/` takes them.
    fn me() -> Option<(String, PathBuf)> {
        let uid = unsafe { libc::geteuid() };
        // SAFETY: getpwuid's static result, read at once on this thread.
        let pw = unsafe { libc::getpwuid(uid) };
        if pw.is_null() {
            return None;
        }
        let name = unsafe { std::ffi::CStr::from_ptr((*pw).pw_name) }.to_str().ok()?.to_string();
        Some((name.clone(), user_home(&name)?))
    }

    #[test]
    fn a_tilde_is_each_home_or_a_users_from_the_user_database() {
        let homes = [PathBuf::from("/h1"), PathBuf::from("/h2")];
        assert_eq!(tilde("~/d/x", &homes), vec![PathBuf::from("/h1/d/x"), PathBuf::from("/h2/d/x")]);
        assert_eq!(tilde("~", &homes), homes.to_vec());
        assert_eq!(tilde("/abs", &homes), vec![PathBuf::from("/abs")]);
        assert!(tilde("~no-such-user-sandspawn/x", &homes).is_empty(), "git fails on an unknown user");
        if let Some((name, home)) = me() {
            assert_eq!(tilde(&format!("~{name}/d/x"), &homes), vec![home.join("d/x")]);
            assert_eq!(include(&format!("~{name}/d/x"), Path::new("/inc"), &homes), vec![home.join("d/x")]);
        }
        assert_eq!(include("rel/x", Path::new("/inc"), &homes), vec![PathBuf::from("/inc/rel/x")]);
        assert_eq!(include("$HOME/x", Path::new("/inc"), &homes), vec![PathBuf::from("/inc/$HOME/x")], "git does not expand variables in a path");
    }
}
