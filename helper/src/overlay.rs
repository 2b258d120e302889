//! Mounting one overlayfs from inside the sandbox: the options both kinds of overlay share (the
//! private tool caches' and the reviewed workspace's), their escaping, and `volatile`.
//!
//! Why `volatile`: without it, overlayfs's `sync_fs` syncs the upper directory's *whole
//! filesystem* when the overlay goes away with the run's mount namespace, and the exiting process
//! waits for it. Every run then wrote back every dirty page on the host's disk, its own and every
//! build's: 50 to 110 ms per run while something wrote, 0.5 ms on an idle machine (measured,
//! `__test__/security/resources.test.js`). With `volatile` a run's writes are written back as any
//! ordinary write is, by the kernel's flusher; what is lost is only that an `fsync` inside the
//! sandbox does not force the upper directory to disk (it never forced the host's workspace in
//! review mode anyway: nothing lands there before apply).
//!
//! A volatile overlay leaves `WORK/work/incompat/volatile` behind, and the kernel refuses to mount
//! over that work directory again ("a crash may have lost writes"). A reviewed root's work
//! directory is used again by every run that continues its change set, so the marker of the run
//! before is removed first; the change set's files are the ones that run left in the page cache.

use sandspawn_helper::report::{Failure, setup};

use crate::mount_target::c;
use crate::{describe, last_errno};

/// Mount an overlay over `target`: `lowers` uppermost first, `extra` more options (`index=off`),
/// `what` names it in errors ("the private tool cache").
///
/// Each lower directory is named by a descriptor (`/proc/self/fd/N`, about 17 bytes), not by its
/// path: the options must fit in one page (4,096 bytes), and a cache's pending layers, each a path
/// of 150 bytes or more deep in the store, overflowed it once 20 concurrent runs had left theirs
/// (the kernel cut the list, and a cut path failed the run with ENOENT; found when a longer scope
/// name made the test with 20 runs fail). The descriptors are closed when the mount is made.
pub fn mount(target: &str, lowers: &[&str], upper: &str, work: &str, extra: &str, what: &str) -> Result<(), Failure> {
    forget_volatile_marker(work)?;
    let opened = lowers.iter().map(|l| open_dir(l, what)).collect::<Result<Vec<_>, Failure>>()?;
    let lowers: Vec<String> = opened.iter().map(|fd| format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(fd))).collect();
    // `userxattr`: the only xattr namespace a user namespace may use.
    let options = format!("lowerdir={},upperdir={},workdir={},userxattr,volatile{extra}", lowers.join(":"), escape(upper), escape(work));
    let path = c(target)?;
    // `uuid=off`: since Linux 6.6 a new overlay (`uuid=auto`) stores an identity as an extended
    // attribute on the upper directory: a write on every run's path, and a private cache's slot
    // that carries an attribute is made again by the next run (`tool_caches::slots`), so every
    // run paid an `rmdir` and a `mkdir` per cache. Kernels before 5.12 do not know the option.
    let (without, with) = (c(&options)?, c(&format!("{options},uuid=off"))?);
    let mut e = mount_with(&path, &with);
    if e == Some(libc::EINVAL) {
        e = mount_with(&path, &without);
    }
    match e {
        None => Ok(()),
        Some(e) => Err(setup(e, format!("mounting {what}'s overlay over {target} failed: {}", describe(e)))),
    }
}

/// Mount an overlay with these options over `path`: the error number when it failed.
fn mount_with(path: &std::ffi::CStr, data: &std::ffi::CStr) -> Option<i32> {
    // SAFETY: valid C strings.
    let rc = unsafe { libc::mount(c"overlay".as_ptr(), path.as_ptr(), c"overlay".as_ptr(), libc::MS_NOSUID | libc::MS_NODEV, data.as_ptr().cast()) };
    (rc != 0).then(last_errno)
}

/// `path` opened as a directory (`O_PATH`, following links as the mount's own lookup would).
fn open_dir(path: &str, what: &str) -> Result<std::os::fd::OwnedFd, Failure> {
    use std::os::fd::FromRawFd;
    let p = c(path)?;
    // SAFETY: a valid C string; the descriptor returned is owned from here.
    let fd = unsafe { libc::open(p.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        let e = last_errno();
        return Err(setup(e, format!("opening {what}'s layer {path} failed: {}", describe(e))));
    }
    // SAFETY: just opened, owned by nobody else.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// Remove the marker an earlier volatile mount of this work directory left (see the module's doc).
/// The work directory is sandspawn's own state, never visible to a command.
fn forget_volatile_marker(work: &str) -> Result<(), Failure> {
    // `dirty` is a file, `volatile` the directory holding it.
    for (entry, flags) in [("work/incompat/volatile/dirty", 0), ("work/incompat/volatile", libc::AT_REMOVEDIR)] {
        let p = c(&format!("{work}/{entry}"))?;
        // SAFETY: a valid C string.
        if unsafe { libc::unlinkat(libc::AT_FDCWD, p.as_ptr(), flags) } != 0 && last_errno() != libc::ENOENT {
            let e = last_errno();
            return Err(setup(e, format!("removing the last run's marker {work}/{entry} failed: {}", describe(e))));
        }
    }
    Ok(())
}

/// overlayfs splits its options at `,` and layer lists at `:`; both are escaped with `\`.
fn escape(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for ch in p.chars() {
        if matches!(ch, ',' | ':' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}
