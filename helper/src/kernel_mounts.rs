//! Inside bwrap, before the helper's own mounts: the sandbox holds no kernel filesystem or host
//! devices writable but bwrap's own (see `sandspawn_helper::writable_mounts` for the swaps that
//! made bwrap bind the host's sysfs and `/dev` writable). The addon's policy refuses such writable
//! roots by path, and the Landlock supervisor by the opened path (`confine`); bwrap binds by path
//! after both, so the mount table it left is what is checked here.

use sandspawn_helper::mountinfo;
use sandspawn_helper::report::{changed, Failure};
use sandspawn_helper::writable_mounts::writable_in_table;

/// Fails as `Stage::Changed` (the runner plans again, and its policy then refuses the root the
/// path now leads to) when bwrap left a kernel filesystem or the host's devices writable. `table`:
/// the sandbox's mount table as bwrap left it.
pub fn refuse_writable(table: &[u8]) -> Result<(), Failure> {
    match writable_in_table(&mountinfo::text(table)) {
        None => own_proc(),
        Some((point, kind)) => Err(changed(
            libc::EPERM,
            format!("a writable path led onto {kind}, {}, mounted writable at {point}: refused (a directory above it was replaced by a link after the plan)", what_it_holds(kind)),
        )),
    }
}

/// What the files of `kind` (a kernel filesystem's name, or `devtmpfs`) are, for the refusal.
fn what_it_holds(kind: &str) -> &'static str {
    match kind {
        "devtmpfs" => "the host's device nodes",
        "devpts" => "a kernel filesystem whose files are the host's terminals",
        _ => "a kernel filesystem whose files are the host kernel's settings",
    }
}

/// The proc at `/proc` is the sandbox's own (bwrap's `--proc`), not the host's bound over it:
/// `/proc/self` names this process as its own pid namespace numbers it.
fn own_proc() -> Result<(), Failure> {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    match std::fs::read_link("/proc/self") {
        Ok(p) if p.as_os_str() == pid.to_string().as_str() => Ok(()),
        // No proc at all (a plan that masks it) holds nothing writable.
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(()),
        _ => Err(changed(libc::EPERM, "the sandbox's /proc is not its own (another proc was mounted over it): refused".to_string())),
    }
}
