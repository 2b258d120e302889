//! The sandbox receives no mount the host makes after setup.
//!
//! bwrap makes its mount namespace a slave of the host's (`MS_SLAVE | MS_REC`), on purpose, so
//! that a mount the host makes later still appears inside. On an ordinary host (systemd makes `/`
//! shared at boot) that meant a USB stick, an sshfs, a container's rootfs mounted while a run was
//! alive appeared in the sandbox writable, outside every writable root (the read-only flags were
//! set on the mounts that existed at setup only), and a mount onto a `denyRead` path's parent
//! showed what the mask hid (found by an attacker's review). The tree made private here receives
//! nothing more: the sandbox sees the host's mounts as they were when it was set up.
//!
//! First of the helper's steps in every bwrap plan, while it holds CAP_SYS_ADMIN in the sandbox's
//! user namespace (which owns the mount namespace bwrap made); bwrap has no option for it.

use sandspawn_helper::report::Failure;

use crate::mount_target::{c, mount};

pub fn stop_host_mounts() -> Result<(), Failure> {
    mount(None, &c("/")?, None, libc::MS_REC | libc::MS_PRIVATE, None, "keeping the host's later mounts out of the sandbox (making its mounts private)")
}
