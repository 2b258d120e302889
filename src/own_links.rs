//! The package manager's link to sandspawn's command line: `node_modules/.bin/sandspawn` above
//! the installed package the host loaded (`own_files`), which `npx sandspawn` (and a `package.json`
//! script naming `sandspawn`) runs. Found by an attacker's review (host28): the package itself was
//! kept whole, but a run in a project that installs it repointed that link (`ln -sfn ../.evil`),
//! wrote a script over it, or appended to pnpm's shim (a file), all with `hostRisks: []`, and the
//! host's next `npx sandspawn echo hi` ran the planted script as the user, with no sandbox at all.
//!
//! A symlink cannot be a mount point, and `.bin` is the package manager's to write (every
//! `npm install` in the workspace adds links to it), so neither is kept read-only: the entry is
//! taken before the run (`record`: its symlink target, or a shim's bytes and mode) and looked at
//! after it (`put_back`). One the run changed, removed or replaced (`.bin` itself included) is made
//! again as it was, and reported. What the run left in its place is removed (a file or a link) or,
//! a directory, renamed aside beside it. Equal content is no change: `npm install` in the run makes
//! the same link again.
//!
//! The programs `npx sandspawn` runs from the same `.bin` before sandspawn's code are taken with it
//! (`RUN_FIRST`), absent ones as absent: found by an attacker's review (rfix28), the link was put
//! back but a run planted `.bin/node` (the link's target starts `#!/usr/bin/env node`, and npm puts
//! `.bin` first on PATH) or `.bin/sh` (npm runs a bin through `sh -c`), with `hostRisks: []`, and
//! the host's next `npx sandspawn` ran it with no sandbox. One the run made is removed (a file or a
//! link; a directory renamed aside), one it changed put back, and each reported.

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::planted::{HostRisk, RiskKind};

/// The command's name in the package's `bin`.
pub const BIN: &str = "sandspawn";
/// What `npx sandspawn` runs from the `.bin` that holds sandspawn's link before sandspawn's own
/// code, each found there first: npm's run-script runs the bin with `sh -c` and `.bin` first on
/// `PATH` (`sh`), the link's target starts `#!/usr/bin/env node` and pnpm's shim runs
/// `$basedir/node` when it is executable (`node`), and the shim runs `dirname`, `sed` and `uname`
/// (cmd-shim's `basedir=$(dirname "$(echo "$0" | sed ...)")`, `case `uname``).
const RUN_FIRST: [&str; 5] = ["node", "sh", "dirname", "sed", "uname"];
/// Whether `name` is one of what `npx sandspawn` runs from the bin link's `.bin` before sandspawn's
/// own code (`RUN_FIRST`): judged by name on a change set too (`review::npx_bin`).
pub fn runs_first(name: &OsStr) -> bool {
    RUN_FIRST.iter().any(|n| OsStr::new(n) == name)
}

/// A shim larger than this is no package manager's: not taken.
const MAX_SHIM: u64 = 64 * 1024;

/// One bin entry as it was before the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    path: PathBuf,
    was: Entry,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Entry {
    /// Nothing there (one of `RUN_FIRST`, which must stay absent).
    Absent,
    Link(PathBuf),
    Shim { bytes: Vec<u8>, mode: u32 },
}

/// The bin entries of the installed package `package_dir` (canonical) that exist now, each with
/// the `RUN_FIRST` names of its `.bin` as they are (absent, as a rule; one that is neither a link
/// nor a small file is not taken, as sandspawn's own link is not).
pub fn record(package_dir: Option<&Path>) -> Vec<Recorded> {
    let Some(pkg) = package_dir else { return Vec::new() };
    let mut out = Vec::new();
    for path in bin_paths(pkg) {
        let Some(was) = take(&path) else { continue };
        let run_first: Vec<PathBuf> = RUN_FIRST.iter().map(|n| path.with_file_name(n)).collect();
        // sandspawn's own first: a `.bin` the run replaced is made again, and said, at it.
        out.push(Recorded { path, was });
        out.extend(run_first.into_iter().filter_map(|p| Some(Recorded { was: look(&p)?, path: p })));
    }
    out
}

/// `take`, with nothing there (in a real `.bin`) taken as `Absent`.
fn look(path: &Path) -> Option<Entry> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && real_dir(path.parent()?) => Some(Entry::Absent),
        _ => take(path),
    }
}

/// The bin entries of the installed package `package_dir` (canonical), whether they exist or not:
/// what a review-mode run's change set must not land (`review::store::Meta::own_links`), judged
/// by path, with no system call.
pub fn entries(package_dir: Option<&Path>) -> Vec<PathBuf> {
    let links = package_dir.map(bin_paths).unwrap_or_default();
    // With what npx runs from the same `.bin` first (`RUN_FIRST`): held back as the link is.
    links.iter().flat_map(|link| std::iter::once(link.clone()).chain(RUN_FIRST.iter().map(|n| link.with_file_name(n)))).collect()
}

/// `NM/.bin/sandspawn` for each `node_modules` directory `NM` above the package: npm's layout has
/// one; pnpm's two (its store's, and the project's, where its shim is).
fn bin_paths(pkg: &Path) -> Vec<PathBuf> {
    pkg.ancestors().skip(1).filter(|a| a.file_name() == Some(OsStr::new("node_modules"))).map(|nm| nm.join(".bin").join(BIN)).collect()
}

/// What `path` is, when it is a symlink or a small regular file in a real `.bin` directory.
fn take(path: &Path) -> Option<Entry> {
    if !real_dir(path.parent()?) {
        return None;
    }
    let meta = fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        return Some(Entry::Link(fs::read_link(path).ok()?));
    }
    if meta.file_type().is_file() && meta.len() <= MAX_SHIM {
        return read_shim(path);
    }
    None
}

/// A shim's bytes and mode, read from what the open finds (not from the `lstat` before it: a run
/// going on at the same time in the project swapped in a FIFO, whose open blocked the host for
/// good, or a link to /dev/zero, read forever; found by an attacker's review, rfix28): not
/// following a link, not waiting on a FIFO, a regular file of at most `MAX_SHIM` bytes read no
/// further than that.
fn read_shim(path: &Path) -> Option<Entry> {
    use std::io::Read;
    let f = fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path).ok()?;
    let meta = f.metadata().ok()?;
    if !meta.file_type().is_file() || meta.len() > MAX_SHIM {
        return None;
    }
    let mut bytes = Vec::new();
    f.take(MAX_SHIM + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= MAX_SHIM).then(|| Entry::Shim { bytes, mode: meta.permissions().mode() & 0o7777 })
}

/// Whether `dir` is a directory itself, not a symlink to one.
fn real_dir(dir: &Path) -> bool {
    fs::symlink_metadata(dir).map(|m| m.file_type().is_dir()).unwrap_or(false)
}

/// After the run: each entry the run changed, made again as it was, and reported.
pub fn put_back(recorded: &[Recorded]) -> Vec<HostRisk> {
    recorded.iter().filter_map(check).collect()
}

/// The entry made again as it was and reported, if it changed; what the keeper calls during the run
/// (`planted::keeper`), at once on an event of `.bin`, of its parent or of the entry (`watched`).
pub fn check(r: &Recorded) -> Option<HostRisk> {
    (look(&r.path).as_ref() != Some(&r.was)).then(|| restore(r))
}

/// Whether `r` can change with no inotify event, so that the keeper looks at it every poll too: a
/// shim (a file) written through a shared mapping raises none (`IN_MODIFY` comes from `write(2)`
/// and its kin): found by an attacker's review (fix29), pnpm's shim rewritten so was put back only
/// after the run, and the host's `npx sandspawn` meanwhile ran the planted script. A link, or a
/// name kept absent, changes only by entries made, removed or moved in `.bin`, each an event.
pub fn changes_unheard(r: &Recorded) -> bool {
    matches!(r.was, Entry::Shim { .. })
}

/// What the keeper watches for `r`: its `.bin` (entries made, removed, moved), the `node_modules`
/// above (`.bin` itself replaced), and, for a shim, the file (rewritten in place).
pub fn watched(r: &Recorded) -> (PathBuf, PathBuf, Option<&Path>) {
    let dotbin = r.path.parent().unwrap_or(Path::new("/")).to_path_buf();
    let nm = dotbin.parent().unwrap_or(Path::new("/")).to_path_buf();
    (dotbin, nm, matches!(r.was, Entry::Shim { .. }).then_some(r.path.as_path()))
}

/// Where `r` is.
pub fn path(r: &Recorded) -> &Path {
    &r.path
}

/// Whether an event in a watched directory that names `name` (none: of the watched entry itself)
/// may be of `r`: its own name, or its `.bin`'s (made, removed or replaced in `node_modules`).
pub fn named_by(r: &Recorded, name: &OsStr) -> bool {
    name.is_empty() || Some(name) == r.path.file_name() || name == OsStr::new(".bin")
}

fn restore(r: &Recorded) -> HostRisk {
    let dir = r.path.parent().unwrap_or(Path::new("/"));
    let name = r.path.file_name().unwrap_or_default();
    let outcome = remade(dir).and_then(|d| d.clear(name).and_then(|()| d.make(name, &r.was)));
    let what = if name == OsStr::new(BIN) {
        "sandspawn's command line as the package manager installed it (what `npx sandspawn` runs)".to_string()
    } else {
        let name = name.to_string_lossy();
        format!("{name} beside sandspawn's command line in node_modules/.bin (`npx sandspawn` puts .bin first on PATH and runs {name} from there before sandspawn)")
    };
    let detail = match (outcome, &r.was) {
        (Ok(()), Entry::Absent) => format!("{what} was created during the run: removed (a directory renamed aside)"),
        (Ok(()), _) => format!("{what} was changed during the run: put back as it was"),
        (Err(e), _) => format!("{what} was changed during the run and could not be put back ({e}): `npx sandspawn` there runs what the command left"),
    };
    HostRisk { path: r.path.to_string_lossy().into_owned(), kind: RiskKind::ProtectedNameCreated, detail }
}

/// `.bin` (`dir`), made a directory again where the run replaced it (a symlink to elsewhere, a
/// file), and opened. What is renamed is the entry itself, a link never followed, and everything is
/// done from `node_modules` opened with no symlink on its path: found by an attacker's review
/// (fix29), by path a `node_modules` swapped for a link (a run of another copy pins nothing there)
/// had the put-back rename another directory's `.bin` aside and make an empty one there.
fn remade(dir: &Path) -> std::io::Result<In> {
    let (Some(nm), Some(name)) = (dir.parent(), dir.file_name()) else { return Err(std::io::ErrorKind::InvalidInput.into()) };
    let nm = In::open(nm)?;
    let c = c_name(name)?;
    // SAFETY: a zeroed stat is a valid out-buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: our descriptor, a valid C string and out-buffer.
    let found = unsafe { libc::fstatat(nm.fd(), c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } == 0;
    if !found || st.st_mode & libc::S_IFMT != libc::S_IFDIR {
        if found {
            let to = c_name(&aside(name))?;
            // SAFETY: our descriptor and valid C strings.
            if unsafe { libc::renameat(nm.fd(), c.as_ptr(), nm.fd(), to.as_ptr()) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        // SAFETY: our descriptor and a valid C string.
        if unsafe { libc::mkdirat(nm.fd(), c.as_ptr(), 0o777) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    let fd = crate::no_symlinks::open_at(nm.fd(), &c)?;
    Ok(In(fd))
}

/// The `.bin` directory, opened with no symlink anywhere on its path, and everything done in it
/// through that descriptor: found by an attacker's review (rfix28), the put-back removed what the
/// run left by its path, and a concurrent run that swapped `.bin` for a link to another directory
/// between the look and the removal had the host remove that directory's `sh` (or `sandspawn`).
/// Swapped after the open, the descriptor is still the directory looked at.
struct In(std::os::fd::OwnedFd);

impl In {
    fn open(dir: &Path) -> std::io::Result<In> {
        crate::no_symlinks::open_dir(dir).map(In)
    }

    fn fd(&self) -> i32 {
        std::os::fd::AsRawFd::as_raw_fd(&self.0)
    }

    /// What the run left at `name`: a file or link removed, a directory renamed aside.
    fn clear(&self, name: &OsStr) -> std::io::Result<()> {
        let c = c_name(name)?;
        // SAFETY: a zeroed stat is a valid out-buffer.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: our descriptor, a valid C string and out-buffer.
        if unsafe { libc::fstatat(self.fd(), c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
            let e = std::io::Error::last_os_error();
            return if e.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(e) };
        }
        let rc = if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
            let to = c_name(&aside(name))?;
            // SAFETY: our descriptor and valid C strings.
            unsafe { libc::renameat(self.fd(), c.as_ptr(), self.fd(), to.as_ptr()) }
        } else {
            // SAFETY: our descriptor and a valid C string.
            unsafe { libc::unlinkat(self.fd(), c.as_ptr(), 0) }
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// `name` made again as it `was`.
    fn make(&self, name: &OsStr, was: &Entry) -> std::io::Result<()> {
        let c = c_name(name)?;
        match was {
            Entry::Absent => Ok(()),
            Entry::Link(target) => {
                let t = c_name(target.as_os_str())?;
                // SAFETY: valid C strings and our descriptor.
                if unsafe { libc::symlinkat(t.as_ptr(), self.fd(), c.as_ptr()) } != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            }
            Entry::Shim { bytes, mode } => {
                // O_EXCL: nothing the run left is written through; the mode as it was.
                let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
                // SAFETY: our descriptor and a valid C string.
                let fd = unsafe { libc::openat(self.fd(), c.as_ptr(), flags, *mode as libc::c_uint) };
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // SAFETY: a descriptor just opened, ours alone.
                let mut f = unsafe { <fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
                f.write_all(bytes)?;
                f.set_permissions(fs::Permissions::from_mode(*mode))
            }
        }
    }
}

fn c_name(name: &OsStr) -> std::io::Result<std::ffi::CString> {
    std::ffi::CString::new(name.as_encoded_bytes()).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
}

/// The name a directory the run left at `name` is renamed to, beside it.
fn aside(name: &OsStr) -> std::ffi::OsString {
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let mut to = name.to_os_string();
    to.push(format!(".sandspawn-held-{}-{stamp}", std::process::id()));
    to
}

#[cfg(test)]
mod tests {
    use super::*;

    fn installed() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let nm = t.path().canonicalize().unwrap().join("node_modules");
        let pkg = nm.join("sandspawn");
        fs::create_dir_all(pkg.join("bin")).unwrap();
        fs::create_dir_all(nm.join(".bin")).unwrap();
        let bin = nm.join(".bin").join(BIN);
        (t, pkg, bin)
    }

    #[test]
    fn a_repointed_link_is_put_back_and_reported_an_unchanged_one_is_not() {
        let (_t, pkg, bin) = installed();
        std::os::unix::fs::symlink("../sandspawn/bin/sandspawn.js", &bin).unwrap();
        let rec = record(Some(&pkg));
        assert_eq!(rec.len(), 1 + RUN_FIRST.len(), "the link, and what npx runs first from its .bin");
        assert!(put_back(&rec).is_empty(), "unchanged");
        // The same link made again (npm install): no change.
        fs::remove_file(&bin).unwrap();
        std::os::unix::fs::symlink("../sandspawn/bin/sandspawn.js", &bin).unwrap();
        assert!(put_back(&rec).is_empty(), "the same link again");
        fs::remove_file(&bin).unwrap();
        std::os::unix::fs::symlink("../.evil", &bin).unwrap();
        let risks = put_back(&rec);
        assert_eq!(risks.len(), 1);
        assert_eq!(risks[0].path, bin.to_string_lossy());
        assert!(risks[0].detail.contains("put back as it was"), "{}", risks[0].detail);
        assert_eq!(fs::read_link(&bin).unwrap(), PathBuf::from("../sandspawn/bin/sandspawn.js"));
    }

    #[test]
    fn a_shim_rewritten_a_directory_in_its_place_and_bin_replaced_are_put_back() {
        let (_t, pkg, bin) = installed();
        fs::write(&bin, "#!/bin/sh\nexec node sandspawn.js \"$@\"\n").unwrap();
        fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
        let rec = record(Some(&pkg));
        let mut f = fs::OpenOptions::new().append(true).open(&bin).unwrap();
        f.write_all(b"touch /tmp/pwned\n").unwrap();
        drop(f);
        assert_eq!(put_back(&rec).len(), 1);
        assert_eq!(fs::read_to_string(&bin).unwrap(), "#!/bin/sh\nexec node sandspawn.js \"$@\"\n");
        assert_eq!(fs::symlink_metadata(&bin).unwrap().permissions().mode() & 0o777, 0o755);
        // A directory in its place: renamed aside.
        fs::remove_file(&bin).unwrap();
        fs::create_dir_all(bin.join("x")).unwrap();
        assert_eq!(put_back(&rec).len(), 1);
        assert!(fs::symlink_metadata(&bin).unwrap().is_file());
        // `.bin` made a symlink to a directory of the run's: nothing is written through it.
        let dotbin = bin.parent().unwrap().to_path_buf();
        let elsewhere = dotbin.with_file_name("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        fs::write(elsewhere.join(BIN), "evil").unwrap();
        fs::rename(&dotbin, dotbin.with_file_name("old-bin")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &dotbin).unwrap();
        assert_eq!(put_back(&rec).len(), 1);
        assert!(real_dir(&dotbin));
        assert_eq!(fs::read_to_string(elsewhere.join(BIN)).unwrap(), "evil", "not written through the link");
        assert!(fs::read_to_string(&bin).unwrap().starts_with("#!/bin/sh"));
        // Removed: made again.
        fs::remove_file(&bin).unwrap();
        assert_eq!(put_back(&rec).len(), 1);
        assert!(bin.exists());
    }

    /// Found by an attacker's review (rfix28): `.bin/node` or `.bin/sh` planted beside the link,
    /// which `npx sandspawn` runs before sandspawn's code, was not looked at.
    #[test]
    fn what_npx_runs_first_from_bin_is_kept_absent_or_put_back() {
        let (_t, pkg, bin) = installed();
        std::os::unix::fs::symlink("../sandspawn/bin/sandspawn.js", &bin).unwrap();
        let dotbin = bin.parent().unwrap().to_path_buf();
        std::os::unix::fs::symlink("../node/bin/node", dotbin.join("node")).unwrap();
        let rec = record(Some(&pkg));
        assert_eq!(rec.len(), 1 + RUN_FIRST.len());
        assert!(put_back(&rec).is_empty(), "unchanged");
        fs::write(dotbin.join("sh"), "#!/bin/sh\ntouch /tmp/pwned\n").unwrap();
        fs::create_dir_all(dotbin.join("sed/x")).unwrap();
        fs::remove_file(dotbin.join("node")).unwrap();
        std::os::unix::fs::symlink("../.evil", dotbin.join("node")).unwrap();
        let risks = put_back(&rec);
        let paths: Vec<&str> = risks.iter().map(|r| r.path.as_str()).collect();
        let at = |n: &str| dotbin.join(n).to_string_lossy().into_owned();
        assert_eq!(paths, [at("node"), at("sh"), at("sed")]);
        assert!(risks[1].detail.contains("was created during the run: removed"), "{}", risks[1].detail);
        assert!(!dotbin.join("sh").exists() && !dotbin.join("sed").exists());
        assert_eq!(fs::read_link(dotbin.join("node")).unwrap(), PathBuf::from("../node/bin/node"), "the user's own, put back");
        assert_eq!(fs::read_dir(&dotbin).unwrap().filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("sed.sandspawn-held-")).count(), 1, "a directory renamed aside");
        // Without sandspawn's link in that .bin, nothing there is npx sandspawn's.
        fs::remove_file(&bin).unwrap();
        assert!(record(Some(&pkg)).is_empty());
    }

    /// Found by an attacker's review (rfix28): a concurrent run in the same project swapped a FIFO
    /// (or a link to /dev/zero) with the shim between its `lstat` and its reading, and the host's
    /// reading of it before or after another run blocked in `open` for good (or read forever).
    #[test]
    #[cfg(target_os = "linux")] // renameat2's RENAME_EXCHANGE
    fn a_shim_swapped_for_a_fifo_while_it_is_read_stalls_nothing() {
        let (_t, _pkg, bin) = installed();
        fs::write(&bin, "#!/bin/sh\n").unwrap();
        let swap = bin.with_file_name("swap");
        let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c(&swap).as_ptr(), 0o644) }, 0);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (a, b, halt) = (c(&bin), c(&swap), stop.clone());
        let swapper = std::thread::spawn(move || {
            while !halt.load(std::sync::atomic::Ordering::Relaxed) {
                // SAFETY: valid C strings; RENAME_EXCHANGE swaps the two names atomically.
                unsafe { libc::syscall(libc::SYS_renameat2, libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
            }
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let path = bin.clone();
        std::thread::spawn(move || {
            let until = std::time::Instant::now() + std::time::Duration::from_secs(3);
            while std::time::Instant::now() < until {
                let _ = take(&path);
            }
            let _ = tx.send(());
        });
        let done = rx.recv_timeout(std::time::Duration::from_secs(20));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        swapper.join().unwrap();
        if done.is_err() {
            // Free the reader blocked in open (a writer appears) before failing.
            let _ = fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(&bin);
            let _ = fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(&swap);
        }
        assert!(done.is_ok(), "the reading of the shim blocked in open on a FIFO swapped in after its lstat");
    }

    /// Found by an attacker's review (rfix28): the put-back removed what a run left by its path, so
    /// a concurrent run that swapped `.bin` for a link to another directory between the look and
    /// the removal had the host remove that directory's `sh` (any name taken: `node`, `sandspawn`).
    #[test]
    #[cfg(target_os = "linux")] // renameat2's RENAME_EXCHANGE
    fn a_bin_swapped_for_a_link_during_the_put_back_removes_nothing_elsewhere() {
        let (t, pkg, bin) = installed();
        std::os::unix::fs::symlink("../sandspawn/bin/sandspawn.js", &bin).unwrap();
        let rec = record(Some(&pkg));
        let dotbin = bin.parent().unwrap().to_path_buf();
        let outside = t.path().canonicalize().unwrap().join("outside");
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("sh"), "the host's own").unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (from, halt, to) = (dotbin.clone(), stop.clone(), outside.clone());
        let swapper = std::thread::spawn(move || {
            let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
            let a = c(&from);
            for i in 0.. {
                if halt.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                // A fresh link to `outside` swapped in for `.bin` and back (RENAME_EXCHANGE:
                // atomic); removed after, unless the put-back renamed it aside meanwhile.
                let link = from.with_file_name(format!("l{i}"));
                std::os::unix::fs::symlink(&to, &link).unwrap();
                let b = c(&link);
                for _ in 0..2 {
                    // SAFETY: valid C strings.
                    unsafe { libc::syscall(libc::SYS_renameat2, libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
                    (0..2000).for_each(|_| std::hint::spin_loop());
                }
                if fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()) {
                    let _ = fs::remove_file(&link);
                }
            }
        });
        let until = std::time::Instant::now() + std::time::Duration::from_secs(3);
        let mut removed = false;
        while std::time::Instant::now() < until && !removed {
            let _ = fs::write(dotbin.join("sh"), "planted");
            let _ = put_back(&rec);
            removed = !outside.join("sh").exists();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        swapper.join().unwrap();
        assert!(!removed, "the put-back removed {} through a .bin swapped for a link", outside.join("sh").display());
    }

    /// Found by an attacker's review (fix29): `.bin` made again where a run replaced it was done by
    /// path: with `node_modules` swapped for a link to another directory (by a run of another copy,
    /// which pins nothing there), the put-back renamed that directory's `.bin` aside and made an
    /// empty one in its place, elsewhere than the workspace.
    #[test]
    fn node_modules_swapped_for_a_link_leads_the_put_back_nowhere_else() {
        let (t, pkg, bin) = installed();
        std::os::unix::fs::symlink("../sandspawn/bin/sandspawn.js", &bin).unwrap();
        let rec = record(Some(&pkg));
        let nm = pkg.parent().unwrap().to_path_buf();
        let outside = t.path().canonicalize().unwrap().join("outside");
        fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink("the-host's-own", outside.join(".bin")).unwrap();
        fs::rename(&nm, nm.with_file_name("nm.real")).unwrap();
        std::os::unix::fs::symlink(&outside, &nm).unwrap();
        let risks = put_back(&rec);
        assert!(!risks.is_empty(), "the change is reported");
        assert_eq!(fs::read_link(outside.join(".bin")).ok().as_deref(), Some(Path::new("the-host's-own")), "the put-back moved {}: {risks:?}", outside.join(".bin").display());
        let names: Vec<_> = fs::read_dir(&outside).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [std::ffi::OsString::from(".bin")], "nothing made or moved there");
    }

    #[test]
    fn a_checkout_or_no_bin_entry_records_nothing() {
        let t = tempfile::tempdir().unwrap();
        assert!(record(Some(&t.path().canonicalize().unwrap().join("sandspawn"))).is_empty());
        assert!(record(None).is_empty());
        let (_t, pkg, _bin) = installed();
        assert!(record(Some(&pkg)).is_empty(), "no .bin/sandspawn");
    }
}
