//! Finding the bwrap binary, and asking it for its version and features.
//!
//! Rules (security relevant: the sandboxed command may write into its cwd, so a `bwrap` planted in
//! the workspace must never be executed by a later run):
//!
//! 1. `SANDSPAWN_BWRAP`, when set and non-empty, must be an absolute path to an executable regular
//!    file outside the cwd, and nothing met resolving it (see `override_path`) may be another user's
//!    or writable by anyone but root and this user; it is then used, and **PATH is not searched** (an
//!    override that does not work is reported, not silently replaced by something else). A run that
//!    may write an entry on its way is refused (`override_path::refuse_writable_by_run`).
//! 2. Otherwise the first `bwrap` in `PATH` that is an executable regular file that this user could
//!    not have planted (`distrust`): in one of the system's own program directories
//!    (`SYSTEM_PROGRAM_DIRS`) or a Nix or Guix store (`/nix/store/<name>/bin`), canonically; outside
//!    the cwd, owned by root and writable by nobody else, with no other hard link, in directories
//!    (every one up to `/`, symlinks resolved) owned by root and writable by nobody else, and not under `HOME` or a
//!    temporary directory. A sandboxed run writes only what its user may write, so such a file was
//!    not written by one; a bwrap in `~/.cargo/bin` (a run given `writableRoots: ['~/.cargo']` could
//!    have put it there) or in a workspace's `node_modules/.bin` is not used, and the bundled one is
//!    (`SANDSPAWN_BWRAP` names one anywhere else).
//!    Empty and relative `PATH` entries (which mean "the current directory") are skipped. The
//!    canonical binary path is returned, and nothing is executed before it passed.
//!
//! A cwd of `/` contains everything; the inside-cwd rule is not applied there (otherwise no bwrap
//! could ever be used for a command run in `/`). Root owns everything it plants, so for root the
//! directory rule carries the weight (found by review: a root run in a monorepo at `/app` wrote
//! `/app/node_modules/.bin/bwrap`, which a later `npm run` below it found first on PATH); a run as
//! root that was given a system program directory as a writable root could still plant one there.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::timed_run::run_with_timeout;

pub use super::override_path::BWRAP_OVERRIDE_ENV;
use super::override_path::loose;

/// The result of looking for bwrap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Discovery {
    Found(PathBuf),
    /// `SANDSPAWN_BWRAP` is set but unusable; the string says why.
    OverrideInvalid(String),
    NotFound,
}

fn is_executable_file(p: &Path) -> bool {
    match std::fs::metadata(p) {
        Ok(m) => m.is_file() && m.permissions().mode() & 0o111 != 0,
        Err(_) => false,
    }
}

/// `p` (canonical) lies inside `cwd` (canonical), unless cwd is `/`.
fn inside(p: &Path, cwd: Option<&Path>) -> bool {
    match cwd {
        Some(c) if c != Path::new("/") => p.starts_with(c),
        _ => false,
    }
}

/// Find bwrap: `SANDSPAWN_BWRAP` first, then `PATH` (see the module docs).
pub fn find_bwrap(path_env: Option<&str>, cwd: &Path) -> Option<PathBuf> {
    match discover(std::env::var_os(BWRAP_OVERRIDE_ENV).as_deref(), path_env, cwd) {
        Discovery::Found(p) => Some(p),
        _ => None,
    }
}

/// `find_bwrap` with the override value passed in (testable without touching the process env).
pub fn discover(override_env: Option<&OsStr>, path_env: Option<&str>, cwd: &Path) -> Discovery {
    // A cwd that cannot be canonicalized (deleted?) is compared lexically.
    let cwd_canon = std::fs::canonicalize(cwd).ok().or_else(|| cwd.is_absolute().then(|| cwd.to_path_buf()));
    let cwd_canon = cwd_canon.as_deref();

    if let Some(ov) = override_env.filter(|v| !v.is_empty()) {
        let p = Path::new(ov);
        if !p.is_absolute() {
            return Discovery::OverrideInvalid(format!("{BWRAP_OVERRIDE_ENV}={} is not an absolute path", p.display()));
        }
        if !is_executable_file(p) {
            return Discovery::OverrideInvalid(format!(
                "{BWRAP_OVERRIDE_ENV}={} is not an executable regular file",
                p.display()
            ));
        }
        let canon = match std::fs::canonicalize(p) {
            Ok(c) => c,
            Err(e) => return Discovery::OverrideInvalid(format!("{BWRAP_OVERRIDE_ENV}={}: {e}", p.display())),
        };
        // Every entry on the way, not only the file: see `override_path`.
        match super::override_path::entries_met(p) {
            Err(e) => return Discovery::OverrideInvalid(format!("{BWRAP_OVERRIDE_ENV}={}: {e}", p.display())),
            Ok(met) => {
                let why = super::override_path::loose_entry(p, &met).or_else(|| super::override_path::shared_or_linked(p, &met));
                if let Some(why) = why {
                    return Discovery::OverrideInvalid(why);
                }
            }
        }
        if inside(&canon, cwd_canon) || inside(p, cwd_canon) {
            return Discovery::OverrideInvalid(format!(
                "{BWRAP_OVERRIDE_ENV}={} lies inside the working directory, where the sandboxed command could replace it",
                p.display()
            ));
        }
        return Discovery::Found(canon);
    }

    match candidates(path_env, cwd).into_iter().find(|(_, why)| why.is_none()) {
        Some((found, None)) => Discovery::Found(found),
        _ => Discovery::NotFound,
    }
}

/// Every `bwrap` on `PATH` (absolute entries), canonical, in order, with why it is not trusted.
fn candidates(path_env: Option<&str>, cwd: &Path) -> Vec<(PathBuf, Option<String>)> {
    let cwd_canon = std::fs::canonicalize(cwd).ok().or_else(|| cwd.is_absolute().then(|| cwd.to_path_buf()));
    let trust = Trust::of_process();
    let mut out: Vec<(PathBuf, Option<String>)> = Vec::new();
    for dir in path_env.unwrap_or("").split(':') {
        let dir = Path::new(dir);
        if dir.as_os_str().is_empty() || !dir.is_absolute() {
            continue;
        }
        let cand = dir.join("bwrap");
        if !is_executable_file(&cand) {
            continue;
        }
        let (Ok(dir_canon), Ok(cand_canon)) = (std::fs::canonicalize(dir), std::fs::canonicalize(&cand)) else {
            continue;
        };
        if out.iter().any(|(p, _)| *p == cand_canon) {
            continue;
        }
        let why = if inside(&dir_canon, cwd_canon.as_deref()) || inside(&cand_canon, cwd_canon.as_deref()) || inside(dir, cwd_canon.as_deref()) {
            Some("it lies inside the working directory, where the sandboxed command could have written it".to_string())
        } else {
            distrust(&cand_canon, &trust)
        };
        out.push((cand_canon, why));
    }
    out
}

/// What the trust rule needs to know about this process.
#[derive(Debug, Clone)]
pub struct Trust {
    pub home: Option<PathBuf>,
    /// The temporary directories (`/tmp`, `/var/tmp`, `$TMPDIR`), canonical.
    pub temp: Vec<PathBuf>,
}

impl Trust {
    pub fn of_process() -> Trust {
        let canon = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| canon(PathBuf::from(h)));
        let mut temp: Vec<PathBuf> = ["/tmp", "/var/tmp"].iter().map(|t| canon(PathBuf::from(t))).collect();
        temp.extend(std::env::var_os("TMPDIR").filter(|t| !t.is_empty()).map(|t| canon(PathBuf::from(t))));
        Trust { home, temp }
    }
}

/// The directories a bwrap found on `PATH` may be in (canonical): the system's own program
/// directories. A prefix such as `/usr/` or `/opt/` would not do: `/usr/src/app` is a common
/// workspace in Docker images, and root's runs write there.
pub const SYSTEM_PROGRAM_DIRS: [&str; 6] = ["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/local/sbin"];

/// `dir` (canonical) is a system program directory, or `/nix/store/<name>/bin` or
/// `/gnu/store/<name>/bin` (where NixOS's `/run/current-system/sw/bin/bwrap` and Guix's resolve).
pub fn is_system_program_dir(dir: &Path) -> bool {
    if SYSTEM_PROGRAM_DIRS.iter().any(|d| dir == Path::new(d)) {
        return true;
    }
    let parts: Vec<&OsStr> = dir.iter().collect();
    match parts[..] {
        [root, store_top, store, name, bin] => {
            root == "/" && (store_top == "nix" || store_top == "gnu") && store == "store" && bin == "bin" && name != "." && name != ".."
        }
        _ => false,
    }
}

/// Why the canonical file `bwrap` may have been planted by a sandboxed run of this user (`None`:
/// it cannot have been): it is not in a system program directory (for root every file a run writes
/// is root's, so ownership alone proves nothing), or it or a directory above it is not root's, or is
/// writable by others, or it has another hard link, or it lies under `HOME` or a temporary directory.
pub fn distrust(bwrap: &Path, trust: &Trust) -> Option<String> {
    #[cfg(test)]
    if test_trusted(bwrap) {
        return None;
    }
    if !bwrap.parent().is_some_and(is_system_program_dir) {
        return Some(format!(
            "it is not in a system program directory ({}) or a Nix or Guix store, and a sandboxed run could have written it \
             there; to use it anyway, set {BWRAP_OVERRIDE_ENV}=/path/to/bwrap",
            SYSTEM_PROGRAM_DIRS.join(", ")
        ));
    }
    not_roots_alone(bwrap, trust)
}

/// The ownership part of `distrust`: `bwrap` or a directory above it is not root's, or is writable
/// by others, or it lies under `HOME` or a temporary directory.
pub(crate) fn not_roots_alone(bwrap: &Path, trust: &Trust) -> Option<String> {
    let owner = |p: &Path| -> Result<(), String> {
        let m = std::fs::symlink_metadata(p).map_err(|e| format!("{} cannot be examined: {e}", p.display()))?;
        loose(p, &m, 0, false).map_or(Ok(()), Err)
    };
    let checked = std::iter::once(bwrap).chain(bwrap.ancestors().skip(1)).try_for_each(owner).and_then(|()| one_name(bwrap));
    let why = match checked {
        Err(e) => Some(e),
        Ok(()) => match (&trust.home, trust.temp.iter().find(|t| bwrap.starts_with(t))) {
            (_, Some(t)) => Some(format!("it lies under the temporary directory {}", t.display())),
            (Some(h), _) if h != Path::new("/") && bwrap.starts_with(h) => Some(format!("it lies under HOME ({})", h.display())),
            _ => None,
        },
    };
    why.map(|w| format!("{w}; only a bwrap that no sandboxed run of this user could have written is used"))
}

/// `Err` when the file `bwrap` has another hard link: a run that may write that other name (a root
/// run in a workspace holding one) could rewrite the file in place, which no check of this path
/// sees (found by an attacker's review, with `SANDSPAWN_BWRAP`). A store that deduplicates by hard
/// links (Nix's `auto-optimise-store`, ostree) makes such a bwrap skipped; the bundled one runs.
fn one_name(bwrap: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no failure mode.
    let euid = unsafe { libc::geteuid() };
    match std::fs::symlink_metadata(bwrap) {
        // Another name is a way in only for a user who may write the file (root, or its owner):
        // an ordinary user's runs cannot write root's bwrap by any name.
        Ok(m) if m.nlink() > 1 && (euid == 0 || m.uid() == euid) => Err(format!(
            "it has {} hard links (names), and a run that may write another of them could rewrite it in place",
            m.nlink()
        )),
        Ok(_) => Ok(()),
        Err(e) => Err(format!("{} cannot be examined: {e}", bwrap.display())),
    }
}

/// Directories the Rust tests make fake bwraps in, trusted like root's own (the real rule is
/// tested on its own, with real files).
#[cfg(test)]
pub(crate) static TEST_TRUSTED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

#[cfg(test)]
fn test_trusted(p: &Path) -> bool {
    TEST_TRUSTED.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|d| p.starts_with(d))
}

/// `bwrap --version` → `0.8.0` (the `bubblewrap ` prefix removed). `None` when it does not answer
/// within 5 s or prints something else.
pub fn bwrap_version(path: &Path) -> Option<String> {
    let out = run_with_timeout(path, &["--version"], Duration::from_secs(5)).ok()?;
    if out.timed_out {
        return None;
    }
    parse_version_output(&out.stdout).or_else(|| parse_version_output(&out.stderr))
}

pub(crate) fn parse_version_output(text: &str) -> Option<String> {
    let line = text.lines().find(|l| !l.trim().is_empty())?.trim();
    let v = line.strip_prefix("bubblewrap").map(str::trim).unwrap_or(line);
    let v = v.split_whitespace().next()?;
    v.chars().next()?.is_ascii_digit().then(|| v.to_string())
}

/// `0.8.0` → (0, 8, 0). Missing parts count as 0; a non-numeric part ends parsing.
pub fn parse_version(v: &str) -> Option<(u32, u32, u32)> {
    let mut it = v.split('.').map(|p| p.chars().take_while(char::is_ascii_digit).collect::<String>());
    let major = it.next()?.parse().ok()?;
    let minor = it.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let patch = it.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    Some((major, minor, patch))
}

/// Does this bwrap understand `--disable-userns` (bubblewrap >= 0.8.0)? Decided by `version` when
/// it parses, else by looking for the option in `bwrap --help`.
pub fn supports_disable_userns(path: &Path, version: Option<&str>) -> bool {
    if let Some(v) = version.and_then(parse_version) {
        return v >= (0, 8, 0);
    }
    help_mentions(path, "--disable-userns")
}

/// `bwrap --help` lists `option`.
pub fn help_mentions(path: &Path, option: &str) -> bool {
    match run_with_timeout(path, &["--help"], Duration::from_secs(5)) {
        Ok(out) if !out.timed_out => out.stdout.contains(option) || out.stderr.contains(option),
        _ => false,
    }
}

/// The `bwrap`s on `PATH` that `discover` did not use, and why (for messages and `attempts`).
/// Relative entries (the current directory) count too: they are never searched.
pub fn skipped_bwraps(path_env: Option<&str>, cwd: &Path) -> Vec<(PathBuf, String)> {
    let mut skipped: Vec<(PathBuf, String)> = candidates(path_env, cwd).into_iter().filter_map(|(p, why)| Some((p, why?))).collect();
    for dir in path_env.unwrap_or("").split(':').map(Path::new).filter(|d| !d.is_absolute()) {
        let cand = cwd.join(dir).join("bwrap");
        if let (true, Ok(c)) = (is_executable_file(&cand), std::fs::canonicalize(&cand)) {
            if !skipped.iter().any(|(p, _)| *p == c) {
                skipped.push((c, "it lies inside the working directory, where the sandboxed command could have written it".into()));
            }
        }
    }
    skipped
}
