//! The other names a `denyRead` path has through the host's other mounts of its filesystem. A mask
//! covers a path; the same files shown by a second mount (a bind mount, or on btrfs the
//! filesystem's top mounted beside a subvolume: btrbk's `/mnt/btr_pool` holding `home/you/.ssh`
//! while `/home` is the subvolume `home`) stayed readable there. Found by an attacker's review
//! (revd40): with `/home` a subvolume mount and the top mounted elsewhere, a default workspace-write
//! run with `denyRead: [~/.ssh]` read `~/.ssh/key` through the top's mount.
//!
//! Judged as `tree_identity` judges a system tree: where each mount shows its filesystem from (its
//! root field in `/proc/self/mountinfo`). Another mount of the same device showing the denied path
//! (its root at or above it) names it at the matching place below its mount point; one showing a
//! directory inside it (its root below it) names that directory at its mount point. Each such name
//! is masked too when it leads to the very file the denied path names (device and inode), which
//! leaves out a name another mount hides or a symlink on its way turns elsewhere.
//!
//! Cost: nothing without `denyRead`; with it, the mount table parsed once (read already for the
//! writable roots' checks when there are some), one `statx` per denied path and one `stat` per
//! other mount of its filesystem.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use sandspawn_helper::mountinfo::{sources, Source};

use super::tree_identity::{as_path, mount_of, within};

/// Every other name of each path of `denied` (canonical, existing) through the mounts of `table`
/// (`/proc/self/mountinfo`), each checked to lead to the same file.
pub(super) fn other_names(denied: &[PathBuf], table: &[u8]) -> Vec<PathBuf> {
    let table = sources(table);
    let mut names = Vec::new();
    for path in denied {
        let Some(mount) = mount_of(&table, path) else { continue };
        let Some(shown) = within(mount, path) else { continue };
        for (name, inside) in candidates(&table, mount, &shown) {
            let same = |a: &Path, b: &Path| match (std::fs::metadata(a), std::fs::metadata(b)) {
                (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
                _ => false,
            };
            let canonical = std::fs::canonicalize(&name).is_ok_and(|c| c == name);
            if canonical && !names.contains(&name) && !denied.contains(&name) && same(&name, &below(path, &inside)) {
                names.push(name);
            }
        }
    }
    names
}

/// The names the mounts of `table` other than `mount` give to `shown` (a path within `mount`'s
/// filesystem), each with the path below `shown` it names (empty for `shown` itself).
fn candidates(table: &[Source], mount: &Source, shown: &Path) -> Vec<(PathBuf, PathBuf)> {
    let others = table.iter().filter(|m| m.id != mount.id && m.device == mount.device);
    others
        .filter_map(|m| {
            let (root, point) = (as_path(&m.root), as_path(&m.point));
            match (shown.strip_prefix(root), root.strip_prefix(shown)) {
                // It shows the denied path (its root at or above it): the same place below its point.
                (Ok(inside), _) => Some((below(point, inside), PathBuf::new())),
                // It shows a directory inside the denied path: that directory, at its point.
                (_, Ok(inside)) => Some((point.to_path_buf(), inside.to_path_buf())),
                _ => None,
            }
        })
        .collect()
}

/// `path` and `rest` below it; `path` itself for an empty `rest`. `Path::join` of an empty path
/// adds a trailing slash (`key/`), which a file does not answer (`ENOTDIR`): every other name of
/// a denied file was taken for one leading elsewhere and left readable (found by an attacker's
/// review, rev41), and a name so written is no file's mask.
fn below(path: &Path, rest: &Path) -> PathBuf {
    if rest.as_os_str().is_empty() {
        path.to_path_buf()
    } else {
        path.join(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(id: u64, device: &str, root: &str, point: &str) -> Source {
        Source { id, device: device.into(), root: root.as_bytes().to_vec(), point: point.as_bytes().to_vec() }
    }

    /// Found by an attacker's review (revd40): `/home` the btrfs subvolume `home`, the filesystem's
    /// top mounted at `/mnt/pool`; `/home/u/.ssh` is `/mnt/pool/home/u/.ssh` too, and a bind of
    /// `/home/u/.ssh/keys` at `/srv/k` shows part of it. Another filesystem's mount, and one of the
    /// same filesystem showing something beside the path, name nothing.
    #[test]
    fn the_other_mounts_of_a_denied_path_s_filesystem_name_it_or_part_of_it() {
        let home = source(2, "0:45", "/home", "/home");
        let table = [
            source(1, "8:1", "/", "/"),
            home.clone(),
            source(3, "0:45", "/", "/mnt/pool"),
            source(4, "0:45", "/home/u/.ssh/keys", "/srv/k"),
            source(5, "0:45", "/home/v", "/srv/v"),
            source(6, "0:46", "/", "/mnt/other"),
            source(7, "0:45", "/home/u", "/srv/u"),
        ];
        let got = candidates(&table, &home, Path::new("/home/u/.ssh"));
        assert_eq!(
            got,
            [
                (PathBuf::from("/mnt/pool/home/u/.ssh"), PathBuf::new()),
                (PathBuf::from("/srv/k"), PathBuf::from("keys")),
                (PathBuf::from("/srv/u/.ssh"), PathBuf::new()),
            ]
        );
        assert_eq!(candidates(&table, &home, Path::new("/home/w")), [(PathBuf::from("/mnt/pool/home/w"), PathBuf::new())], "only the top shows /home/w");
    }

    /// rev41: a denied file shown whole by another mount (a bind of the file) is named at that
    /// mount's point as it is, with no trailing slash (`/srv/f/` is no file's name).
    #[test]
    fn a_mount_showing_the_denied_path_itself_names_its_point_without_a_trailing_slash() {
        let table = [source(1, "8:1", "/", "/"), source(2, "8:1", "/data/f", "/srv/f")];
        let got = candidates(&table, &table[1], Path::new("/data/f"));
        assert_eq!(got, [(PathBuf::from("/data/f"), PathBuf::new())]);
        let got = candidates(&table, &table[0], Path::new("/data/f"));
        assert_eq!(got[0].0.as_os_str(), "/srv/f", "{got:?}");
        assert_eq!(below(Path::new("/data/f"), Path::new("")).as_os_str(), "/data/f");
    }
}
