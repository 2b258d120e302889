//! Finding the bwrap binary, and asking it for its version and features.
//!
//! Rules (security relevant: the sandboxed command may write into its cwd, so a `bwrap` planted in
//! the workspace must never be executed by a later run):
//!
//! 1. `SANDSPAWN_BWRAP`, when set and non-empty, must be an absolute path to an executable regular
//!    file outside the cwd; it is then used, and **PATH is not searched** (an override that does not
//!    work is reported, not silently replaced by something else).
//! 2. Otherwise the first `bwrap` in `PATH` that is an executable regular file and is not inside the
//!    cwd. Empty and relative `PATH` entries (which mean "the current directory") are skipped. Both
//!    the `PATH` directory and the binary are canonicalized (symlinks resolved) and compared with the
//!    canonical cwd; the canonical binary path is returned.
//!
//! A cwd of `/` contains everything; the inside-cwd rule is not applied there (otherwise no bwrap
//! could ever be used for a command run in `/`).

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::probe::run_with_timeout;

/// The environment variable that names the bwrap binary to use instead of searching `PATH`.
pub const BWRAP_OVERRIDE_ENV: &str = "SANDSPAWN_BWRAP";

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
        if inside(&canon, cwd_canon) || inside(p, cwd_canon) {
            return Discovery::OverrideInvalid(format!(
                "{BWRAP_OVERRIDE_ENV}={} lies inside the working directory, where the sandboxed command could replace it",
                p.display()
            ));
        }
        return Discovery::Found(canon);
    }

    let Some(path_env) = path_env else { return Discovery::NotFound };
    for dir in path_env.split(':') {
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
        if inside(&dir_canon, cwd_canon) || inside(&cand_canon, cwd_canon) || inside(dir, cwd_canon) {
            continue;
        }
        return Discovery::Found(cand_canon);
    }
    Discovery::NotFound
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

/// The `bwrap`s on `PATH` that `discover` skipped because they lie inside `cwd` (for messages).
pub fn bwraps_inside_cwd(path_env: Option<&str>, cwd: &Path) -> Vec<PathBuf> {
    let Some(cwd_canon) = std::fs::canonicalize(cwd).ok() else { return Vec::new() };
    let mut found = Vec::new();
    for dir in path_env.unwrap_or("").split(':') {
        let dir = Path::new(dir);
        if dir.as_os_str().is_empty() {
            continue;
        }
        let cand = if dir.is_absolute() { dir.join("bwrap") } else { cwd.join(dir).join("bwrap") };
        if !is_executable_file(&cand) {
            continue;
        }
        if let Ok(c) = std::fs::canonicalize(&cand) {
            if inside(&c, Some(&cwd_canon)) && !found.contains(&c) {
                found.push(c);
            }
        }
    }
    found
}
