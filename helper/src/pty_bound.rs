//! The sandbox's share of the machine's pseudo-terminals: its devpts instance remounted with
//! `max` (see `sandspawn_helper::devpts` for why), keeping the flags and modes bwrap gave it.

use sandspawn_helper::devpts;
use sandspawn_helper::mountinfo;
use sandspawn_helper::report::{Failure, setup};

use crate::mount_target::{c, mount, Kind, Target};

/// devpts's `f_type` (`DEVPTS_SUPER_MAGIC`, which the libc crate does not name).
const DEVPTS_MAGIC: i64 = 0x1cd1;

/// Remount the devpts at `/dev/pts` with at most `max` ptys, and check that it took.
pub fn bound(max: u32) -> Result<(), Failure> {
    let what = format!("bounding the pseudo-terminals of {} at {max}", devpts::PATH);
    // The root of the mount itself, never a symlink's target (bwrap made it; nothing ran since).
    let target = Target::open(devpts::PATH, Kind::Dir, "the sandbox's devpts")?;
    let dev = device(&target, &what)?;
    let options = super_options(dev, &what)?;
    let data = devpts::remount_data(&options, max).map_err(|option| {
        setup(libc::EINVAL, format!("{what} failed: its option {option} could not be given again (a remount resets it)"))
    })?;
    let flags = target.mount_flags(devpts::PATH)?;
    mount(None, &target.proc_path(), None, libc::MS_REMOUNT | flags, Some(&c(&data)?), &what)?;
    let now = super_options(dev, &what)?;
    if devpts::max_of(&now) != Some(max) {
        return Err(setup(0, format!("{what} failed: its options are {now} after the remount")));
    }
    Ok(())
}

/// The device of the devpts `target` is the root of, checked to be a devpts (bwrap's `--dev`).
fn device(target: &Target, what: &str) -> Result<(u32, u32), Failure> {
    if target.statfs(what)?.f_type as i64 != DEVPTS_MAGIC {
        return Err(setup(libc::EINVAL, format!("{what} failed: it is not the devpts bwrap mounted there")));
    }
    Ok((libc::major(target.id.0), libc::minor(target.id.0)))
}

/// The options of the devpts on `dev`, from the sandbox's mount table.
fn super_options(dev: (u32, u32), what: &str) -> Result<String, Failure> {
    let table = mountinfo::read(what)?;
    mountinfo::super_options(&mountinfo::text(&table), dev).ok_or_else(|| setup(0, format!("{what} failed: /proc/self/mountinfo has no mount of it")))
}
