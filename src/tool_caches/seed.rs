//! Making a macOS cache's store directory (see `macos`) the first time a workspace uses it, seeded
//! from the host's cache: built under a temporary name, then renamed into place without replacing
//! anything, so concurrent first runs agree on one directory and a half-made one is never used.
//!
//! The store directory is the command's to write, so it may be anything when a later run looks at
//! it: a run may have replaced it with a link to the host's cache or another workspace's store.
//! Such an entry is removed and the directory made anew; the profile names the directory's own
//! path, which Seatbelt compares with the real path of what is written, so a link put there
//! during a run leads nowhere writable either.

use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use super::macos::Seed;

/// Copies `from` to `to` (absent) copy-on-write: `clonefile` on macOS. Injected so that what
/// surrounds it runs in the Linux tests too.
pub type CloneFn<'a> = dyn Fn(&Path, &Path) -> io::Result<()> + 'a;

/// The store directory `dir` of a cache whose host copy is `host`, made if it is not a directory
/// (`run` names this run's temporary entries). `Ok(true)` when the host's content is in it (or
/// the host has none): a fresh seed, or an earlier one recorded in `marker`.
pub fn ensure(dir: &Path, host: &Path, seed: Seed, marker: &Path, run: &str, clone: &CloneFn<'_>) -> io::Result<bool> {
    match dir.symlink_metadata() {
        Ok(m) if m.is_dir() => return Ok(seed == Seed::ReadsHost || marker.exists()),
        Ok(_) => std::fs::remove_file(dir)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.with_file_name(format!(".{name}.seed-{run}"));
    let seeded = fill(&tmp, host, seed, clone)?;
    match rename_no_replace(&tmp, dir) {
        Ok(()) => {
            if seeded {
                std::fs::write(marker, b"")?;
            } else {
                let _ = std::fs::remove_file(marker);
            }
            Ok(seeded)
        }
        // A concurrent first run was quicker: its directory is the one.
        Err(e) if matches!(e.raw_os_error(), Some(libc::EEXIST | libc::ENOTEMPTY)) => {
            super::store::remove_tree(&tmp)?;
            Ok(seed == Seed::ReadsHost || marker.exists())
        }
        Err(e) => {
            let _ = super::store::remove_tree(&tmp);
            Err(e)
        }
    }
}

/// `tmp` made from `host`; `false` when the host had content that could not be cloned (then
/// `tmp` is an empty directory: the tool fills it as it would a new cache).
fn fill(tmp: &Path, host: &Path, seed: Seed, clone: &CloneFn<'_>) -> io::Result<bool> {
    let mkdir = |p: &Path| std::fs::DirBuilder::new().mode(0o700).create(p);
    let cloned = match seed {
        Seed::ReadsHost => None,
        Seed::Whole => host.is_dir().then(|| clone(host, tmp)),
        Seed::Parts { clone: parts, link } => {
            mkdir(tmp)?;
            for l in link {
                if host.join(l).symlink_metadata().is_ok() {
                    std::os::unix::fs::symlink(host.join(l), tmp.join(l))?;
                }
            }
            parts.iter().filter(|p| host.join(p).is_dir()).map(|p| clone(&host.join(p), &tmp.join(p))).find(|r| r.is_err())
        }
    };
    match cloned {
        None | Some(Ok(())) => {
            if !tmp.exists() {
                mkdir(tmp)?;
            }
            Ok(true)
        }
        Some(Err(_)) => {
            // Not on the same APFS volume, or not APFS: start empty rather than copy gigabytes.
            super::store::remove_tree(tmp)?;
            mkdir(tmp)?;
            Ok(false)
        }
    }
}

/// Rename, failing with `EEXIST`/`ENOTEMPTY` rather than replacing what is at `to`.
fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL));
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: two valid C strings; the flag refuses to replace.
    #[cfg(target_os = "linux")]
    let rc = unsafe { libc::renameat2(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::RENAME_NOREPLACE) };
    #[cfg(target_os = "macos")]
    let rc = unsafe { libc::renamex_np(from.as_ptr(), to.as_ptr(), libc::RENAME_EXCL) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// APFS `clonefile(2)` of a file or a whole directory tree (not following a link at `from`, owned
/// by the caller rather than copying the owner).
#[cfg(target_os = "macos")]
pub fn clone_tree(from: &Path, to: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    // <sys/clonefile.h>; not in the libc crate.
    const CLONE_NOFOLLOW: u32 = 0x0001;
    const CLONE_NOOWNERCOPY: u32 = 0x0002;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL));
    // SAFETY: two valid C strings.
    if unsafe { libc::clonefile(c(from)?.as_ptr(), c(to)?.as_ptr(), CLONE_NOFOLLOW | CLONE_NOOWNERCOPY) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Only macOS plans have store directories to seed.
#[cfg(not(target_os = "macos"))]
pub fn clone_tree(_from: &Path, _to: &Path) -> io::Result<()> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "clonefile exists only on macOS"))
}

/// Where `ensure` records that a directory was seeded (beside it: the command cannot write there).
pub fn marker(dir: &Path) -> PathBuf {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    dir.with_file_name(format!("{name}.seeded"))
}

/// What `clonefile` does, the slow way (a recursive copy keeping links), for the tests on Linux.
#[cfg(test)]
pub(super) fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    let m = from.symlink_metadata()?;
    if m.file_type().is_symlink() {
        return std::os::unix::fs::symlink(std::fs::read_link(from)?, to);
    }
    if !m.is_dir() {
        return std::fs::copy(from, to).map(|_| ());
    }
    std::fs::create_dir(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        copy_tree(&e.path(), &to.join(e.file_name()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    use super::copy_tree as copy;

    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let host = r.join("host");
        std::fs::create_dir_all(host.join("registry/cache")).unwrap();
        std::fs::write(host.join("registry/cache/a.crate"), "crate").unwrap();
        std::fs::write(host.join("config.toml"), "[net]").unwrap();
        std::fs::write(host.join("credentials.toml"), "token").unwrap();
        std::fs::create_dir(r.join("scope")).unwrap();
        (t, r.join("scope"), host)
    }

    #[test]
    fn a_clone_of_the_whole_cache_or_of_its_parts() {
        let (_t, scope, host) = setup();
        let dir = scope.join("npm");
        assert!(ensure(&dir, &host, Seed::Whole, &marker(&dir), "r1", &copy).unwrap());
        assert_eq!(std::fs::read_to_string(dir.join("registry/cache/a.crate")).unwrap(), "crate");
        assert!(marker(&dir).exists());
        std::fs::write(dir.join("registry/cache/a.crate"), "changed").unwrap();
        assert_eq!(std::fs::read_to_string(host.join("registry/cache/a.crate")).unwrap(), "crate", "the host's copy is not the store's");
        // Parts: the caches cloned, settings linked, the rest (credentials) not there.
        let cargo = scope.join("cargo-home");
        let seed = Seed::Parts { clone: &["registry", "git"], link: &["config.toml", "config"] };
        assert!(ensure(&cargo, &host, seed, &marker(&cargo), "r1", &copy).unwrap());
        assert!(cargo.join("registry/cache/a.crate").is_file() && !cargo.join("git").exists());
        assert_eq!(std::fs::read_link(cargo.join("config.toml")).unwrap(), host.join("config.toml"));
        assert!(!cargo.join("credentials.toml").exists() && !cargo.join("config").exists());
        assert!(std::fs::read_dir(&scope).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().contains(".seed-")), "no temporary left");
    }

    #[test]
    fn the_next_run_keeps_what_is_there_and_a_failed_clone_starts_empty() {
        let (_t, scope, host) = setup();
        let dir = scope.join("pip");
        let calls = Cell::new(0);
        let counting = |f: &Path, t: &Path| {
            calls.set(calls.get() + 1);
            copy(f, t)
        };
        assert!(ensure(&dir, &host, Seed::Whole, &marker(&dir), "r1", &counting).unwrap());
        std::fs::write(dir.join("mine"), "x").unwrap();
        assert!(ensure(&dir, &host, Seed::Whole, &marker(&dir), "r2", &counting).unwrap());
        assert_eq!(calls.get(), 1, "seeded once");
        assert!(dir.join("mine").exists());
        let fails = |_: &Path, t: &Path| {
            std::fs::create_dir(t)?;
            std::fs::write(t.join("partial"), "")?;
            Err(io::Error::from_raw_os_error(libc::EXDEV))
        };
        let other = scope.join("uv");
        assert!(!ensure(&other, &host, Seed::Whole, &marker(&other), "r1", &fails).unwrap(), "the host's content is hidden");
        assert!(other.is_dir() && std::fs::read_dir(&other).unwrap().count() == 0 && !marker(&other).exists());
        // Nothing at the host: nothing hidden.
        let none = scope.join("go-build");
        assert!(ensure(&none, &scope.join("no-such-cache"), Seed::Whole, &marker(&none), "r1", &fails).unwrap());
        assert!(ensure(&scope.join("go-mod"), &host, Seed::ReadsHost, &marker(&scope.join("go-mod")), "r1", &fails).unwrap());
    }

    #[test]
    fn a_link_a_run_left_in_its_place_is_replaced_not_followed() {
        let (_t, scope, host) = setup();
        let dir = scope.join("npm");
        std::os::unix::fs::symlink(&host, &dir).unwrap();
        assert!(ensure(&dir, &host, Seed::Whole, &marker(&dir), "r1", &copy).unwrap());
        assert!(!dir.symlink_metadata().unwrap().file_type().is_symlink() && dir.is_dir());
        assert!(host.join("config.toml").exists(), "the link's target is untouched");
    }

    #[test]
    fn concurrent_first_runs_agree_on_one_directory() {
        let (_t, scope, host) = setup();
        let dir = scope.join("npm");
        // Another run renamed its directory into place while this one was cloning.
        let racing = |f: &Path, t: &Path| {
            copy(f, t)?;
            std::fs::create_dir(&dir)?;
            std::fs::write(dir.join("theirs"), "")
        };
        assert!(!ensure(&dir, &host, Seed::Whole, &marker(&dir), "r1", &racing).unwrap(), "theirs left no marker yet");
        assert!(dir.join("theirs").exists() && !dir.join("registry").exists());
        assert!(std::fs::read_dir(&scope).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().contains(".seed-")));
    }
}
