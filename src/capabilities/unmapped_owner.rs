//! Whether a file's owner, as `stat` shows it, is no user of this process's user namespace.
//!
//! Inside Flatpak (VS Code's Flathub build), a rootless container or another sandbox, the host's
//! root owns `/`, `/usr`, `/home` and a global npm prefix, and the kernel shows every owner that has
//! no uid here as the overflow uid (65534 by default). The rule that sandspawn's own programs and
//! the directories above them be root's or this user's (self39) then refused every run there, the
//! Landlock fallback included, though no process of this namespace can be that owner: only a
//! process outside it, usually the host's root, can. Such an owner is taken as root is, and the
//! entry must still be writable by nobody else. In the initial namespace every uid is mapped, so a
//! file of the real `nobody` (65534, which daemons run as) is refused as before.

use std::sync::OnceLock;

/// Whether `owner` is the overflow uid and that uid is mapped by no line of this process's
/// `uid_map`: the kernel's way of showing an owner from outside the namespace.
pub fn is_unmapped(owner: u32) -> bool {
    static OVERFLOW_UNMAPPED: OnceLock<Option<u32>> = OnceLock::new();
    let found = OVERFLOW_UNMAPPED.get_or_init(|| {
        let overflow = std::fs::read_to_string("/proc/sys/kernel/overflowuid").ok()?.trim().parse::<u32>().ok()?;
        let map = std::fs::read_to_string("/proc/self/uid_map").ok()?;
        (!maps(&map, overflow)).then_some(overflow)
    });
    *found == Some(owner)
}

/// Whether a `uid_map` text (lines of: first uid inside, first uid outside, count) maps `uid`
/// inside. An unreadable line maps nothing, which only keeps an owner refused.
fn maps(uid_map: &str, uid: u32) -> bool {
    uid_map.lines().any(|line| {
        let f: Vec<u64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
        f.len() == 3 && f[0] <= u64::from(uid) && u64::from(uid) < f[0] + f[2]
    })
}

#[cfg(test)]
mod tests {
    use super::maps;

    #[test]
    fn the_initial_namespace_maps_every_uid_and_a_user_namespace_only_its_lines() {
        assert!(maps("         0          0 4294967295\n", 65534), "the initial namespace");
        assert!(!maps("      1000       1000          1\n", 65534), "Flatpak's: only the user");
        assert!(!maps("         0       1000          1\n         1     100000      65534\n", 65535), "past the last line");
        assert!(maps("         0       1000          1\n         1     100000      65536\n", 65534), "a rootless container's subuids");
        assert!(!maps("", 65534), "no map read");
        assert!(!maps("garbage\n", 65534));
    }
}
