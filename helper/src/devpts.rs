//! The options the helper remounts the sandbox's devpts with (see `pty_bound` in the helper): its
//! share of the machine's pseudo-terminals, `max=N`, and the modes bwrap gave it.
//!
//! bwrap's `--dev` mounts a devpts instance of the sandbox's own at `/dev/pts`. Every instance but
//! the one the host mounted first draws on one pool, `kernel.pty.max` less `kernel.pty.reserve`
//! (3,072 by default), shared by every sandbox, container and flatpak on the machine, and an
//! instance without `max` may take all of it: one run held 3,066 ptys, and every other sandbox's
//! `openpty` then failed (found by an attacker's review).

/// Where bwrap's `--dev` mounts the sandbox's devpts instance.
pub const PATH: &str = "/dev/pts";

/// The most ptys a bound may allow: the kernel's own ceiling (`NR_UNIX98_PTY_MAX`, 1 << 20); at it
/// and above, devpts takes `max` for no bound at all.
pub const MAX_PTYS: u32 = 1 << 20;

/// The data of a remount of the instance whose super options (mountinfo's last field) are
/// `current`, bounding it at `max` ptys. A devpts remount resets every option it is not given (the
/// modes would fall to 600 and 000, and nobody could open `/dev/ptmx`), so the modes are kept as
/// they are. `uid=` and `gid=` are shown in the initial user namespace's ids, which the sandbox's
/// namespace would read as other ids: an instance with either is refused (bwrap sets neither), as
/// is any option the helper does not know. The error names the option.
pub fn remount_data(current: &str, max: u32) -> Result<String, String> {
    let mut kept = Vec::new();
    for option in current.split(',') {
        if option.starts_with("mode=") || option.starts_with("ptmxmode=") {
            kept.push(option.to_string());
        } else if !(option == "rw" || option == "ro" || option.starts_with("max=")) {
            return Err(option.to_string());
        }
    }
    kept.push(format!("max={max}"));
    Ok(kept.join(","))
}

/// The bound the instance whose super options are `current` has, if any.
pub fn max_of(current: &str) -> Option<u32> {
    current.split(',').find_map(|o| o.strip_prefix("max=")).and_then(|n| n.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_modes_and_sets_the_bound() {
        assert_eq!(remount_data("rw,mode=620,ptmxmode=666", 256).unwrap(), "mode=620,ptmxmode=666,max=256");
        assert_eq!(remount_data("rw,mode=620,ptmxmode=666,max=9", 256).unwrap(), "mode=620,ptmxmode=666,max=256", "a bound is replaced");
        assert_eq!(remount_data("rw,gid=5,mode=620,ptmxmode=666", 256).unwrap_err(), "gid=5");
        assert_eq!(remount_data("rw,mode=620,ptmxmode=666,newopt", 256).unwrap_err(), "newopt");
        assert_eq!(max_of("rw,mode=620,ptmxmode=666,max=256"), Some(256));
        assert_eq!(max_of("rw,mode=620,ptmxmode=666"), None);
    }
}
