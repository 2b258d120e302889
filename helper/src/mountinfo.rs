//! Reading `/proc/self/mountinfo`: which mounts lie below a path (the reviewable workspace's
//! overlay must put them back on top, see the helper's `review_mount`), and the options a
//! filesystem was mounted with (a devpts remount must give them again, see `devpts`).

/// The mount points strictly below `root` in `/proc/self/mountinfo`, each once (the visible one of
/// a stack), parents before children (a stable sort by depth keeps the table's order within one).
pub fn points_below(table: &str, root: &str) -> Vec<String> {
    let prefix = if root.ends_with('/') { root.to_string() } else { format!("{root}/") };
    let mut points: Vec<String> = Vec::new();
    for line in table.lines() {
        let Some(point) = line.split(' ').nth(4).map(unescape) else { continue };
        if point.starts_with(&prefix) && !points.contains(&point) {
            points.push(point);
        }
    }
    points.sort_by_key(|p| p.matches('/').count());
    points
}

/// Every mount of `table`: its mount point and its filesystem's type (the addon refuses writable
/// roots that hold a kernel filesystem, see its `policy::kernel_fs`).
pub fn points_and_types(table: &str) -> impl Iterator<Item = (String, &str)> {
    table.lines().filter_map(|line| {
        let point = line.split(' ').nth(4)?;
        // Optional fields come before the ` - ` that separates the filesystem's type; no field holds a space.
        let fstype = line.split(" - ").nth(1)?.split(' ').next()?;
        Some((unescape(point), fstype))
    })
}

/// The super options (the last field: the filesystem's own, not the mount's) of the filesystem on
/// device `major:minor`, as the first of its mounts in `table` shows them.
pub fn super_options(table: &str, (major, minor): (u32, u32)) -> Option<String> {
    let dev = format!("{major}:{minor}");
    table.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(' ').collect();
        // Optional fields come before the `-` that separates the filesystem's type, source, options.
        if fields.get(2) != Some(&dev.as_str()) {
            return None;
        }
        let sep = fields.iter().position(|f| *f == "-")?;
        fields.get(sep + 3).map(|o| unescape(o))
    })
}

/// mountinfo writes space, tab, newline and backslash as `\ooo`.
pub fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                out.push(d.iter().fold(0u8, |acc, b| acc.wrapping_mul(8).wrapping_add(b - b'0')));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_mounts_below_a_root_parents_first() {
        let table = "1 0 8:1 / / rw - ext4 /dev/sda rw\n\
                     5 1 8:1 /w/deep/x /w/deep/x ro - tmpfs t ro\n\
                     3 1 8:1 /w /w rw - ext4 /dev/sda rw\n\
                     4 3 0:5 / /w/a\\040b ro - tmpfs t ro\n\
                     6 1 8:1 / /w2 rw - ext4 /dev/sda rw\n\
                     7 4 0:5 / /w/a\\040b ro - tmpfs t ro\n";
        assert_eq!(points_below(table, "/w"), vec!["/w/a b".to_string(), "/w/deep/x".to_string()]);
        assert!(points_below(table, "/w2").is_empty());
    }

    #[test]
    fn lists_each_mount_point_with_its_type() {
        let table = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n\
                     24 1 0:30 / /mnt/my\\040cg rw shared:9 - cgroup2 cgroup2 rw\n";
        assert_eq!(points_and_types(table).collect::<Vec<_>>(), vec![("/proc".to_string(), "proc"), ("/mnt/my cg".to_string(), "cgroup2")]);
    }

    #[test]
    fn reads_a_filesystems_own_options_by_its_device() {
        let table = "1 0 8:1 / / rw - ext4 /dev/sda rw\n\
                     9 1 0:24 / /dev/pts rw,nosuid shared:4 - devpts devpts rw,gid=5,mode=620,ptmxmode=000\n\
                     12 10 0:73 / /dev/pts rw,nosuid,noexec,relatime - devpts devpts rw,mode=620,ptmxmode=666\n";
        assert_eq!(super_options(table, (0, 73)).as_deref(), Some("rw,mode=620,ptmxmode=666"));
        assert_eq!(super_options(table, (0, 24)).as_deref(), Some("rw,gid=5,mode=620,ptmxmode=000"), "after optional fields");
        assert_eq!(super_options(table, (0, 7)), None);
    }
}
