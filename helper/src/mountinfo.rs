//! Reading `/proc/self/mountinfo` (`read`), one parser of its lines (`Mount`), and what the helper
//! and the addon ask of it: which mounts lie below a path (the reviewable workspace's overlay must
//! put them back on top, see the helper's `review_mount`), every mount's type (the addon's
//! `policy::kernel_fs`; the helper's `writable_mounts`), and the options a filesystem was mounted
//! with (a devpts remount must give them again, see `devpts`).

use crate::report::{os_words, setup, Failure};

/// The sandbox's mount table; reading it failing fails `what` (a setup step).
pub fn read(what: &str) -> Result<Vec<u8>, Failure> {
    read_file("/proc/self/mountinfo", what)
}

/// A mount table as bytes. The kernel writes a mount point's bytes as they are: read as text, one
/// mount point anywhere on the host that is not UTF-8 (a USB stick whose label is Latin-1, under
/// `/media`; bwrap's read-only `/` carries the host's mounts in) failed every run at setup. `text`
/// gives the lines the parser reads, `points_below` the paths as they are.
pub fn read_file(path: &str, what: &str) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| setup(e.raw_os_error().unwrap_or(0), format!("{what} failed: reading {path}: {}", os_words(&e))))
}

/// `table` for `mounts` and `super_options`: a byte that is not UTF-8 is replaced, never a space or a
/// newline, so every line and field stays where it was; only such a path's own bytes change, and
/// `points_below` (the one user that opens the paths) reads the bytes.
pub fn text(table: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(table)
}

/// One line of a mount table: `id parent major:minor root point options [optional...] - type
/// source super-options`. Paths are unescaped (mountinfo writes space, tab, newline and backslash
/// as `\ooo`); the filesystem's type and the device are compared as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount<'t> {
    pub id: &'t str,
    pub parent: &'t str,
    /// `major:minor` of the filesystem.
    pub device: &'t str,
    /// The directory of the filesystem that is mounted (`/` for its whole).
    pub root: String,
    pub point: String,
    /// The mount's own options include `rw`.
    pub writable: bool,
    pub fstype: &'t str,
    /// The filesystem's own options (the last field), not the mount's.
    pub super_options: String,
}

impl<'t> Mount<'t> {
    /// `None` for a line that is not a mount table's.
    pub fn parse(line: &'t str) -> Option<Self> {
        let fields: Vec<&str> = line.split(' ').collect();
        // Optional fields (`shared:9`, any number) come after the sixth and before the `-` that
        // separates the filesystem's type, source and options; no field holds a space.
        let sep = 6 + fields.get(6..)?.iter().position(|f| *f == "-")?;
        Some(Mount {
            id: fields.first()?,
            parent: fields.get(1)?,
            device: fields.get(2)?,
            root: unescape(fields.get(3)?),
            point: unescape(fields.get(4)?),
            writable: fields.get(5)?.split(',').any(|o| o == "rw"),
            fstype: fields.get(sep + 1)?,
            super_options: unescape(fields.get(sep + 3)?),
        })
    }
}

/// Every mount of `table`, in its order.
pub fn mounts(table: &str) -> impl Iterator<Item = Mount<'_>> {
    table.lines().filter_map(Mount::parse)
}

/// The mount points strictly below `root` in `/proc/self/mountinfo`, each once (the visible one of
/// a stack), parents before children (a stable sort by depth keeps the table's order within one).
/// `Err` holds the first such point that is not UTF-8 (the helper names paths as text).
pub fn points_below(table: &[u8], root: &str) -> Result<Vec<String>, Vec<u8>> {
    let prefix = if root.ends_with('/') { root.to_string() } else { format!("{root}/") };
    let mut points: Vec<String> = Vec::new();
    for (point, _) in points_and_types(table) {
        if !point.starts_with(prefix.as_bytes()) {
            continue;
        }
        let point = String::from_utf8(point).map_err(|e| e.into_bytes())?;
        if !points.contains(&point) {
            points.push(point);
        }
    }
    points.sort_by_key(|p| p.matches('/').count());
    Ok(points)
}

/// Every mount of `table`, read as bytes: its mount point's own bytes and its filesystem's type
/// (the addon refuses writable roots that hold a kernel filesystem, see its `policy::kernel_fs`).
/// The kernel writes a mount point's bytes as they are (only space, tab, newline and backslash
/// escaped): read as text, one that is not UTF-8 anywhere on the host made the whole table fail
/// to read and the check see no mount (found by an attacker's review). Each line is parsed on its
/// own; a lossy decoding replaces bytes but never a space, so the raw line's fields are the parsed one's.
pub fn points_and_types(table: &[u8]) -> Vec<(Vec<u8>, String)> {
    let parsed = |line: &[u8]| {
        let text = String::from_utf8_lossy(line);
        let fstype = Mount::parse(&text)?.fstype.to_string();
        Some((unescape_bytes(line.split(|b| *b == b' ').nth(4)?), fstype))
    };
    table.split(|b| *b == b'\n').filter_map(parsed).collect()
}

/// Every mount of `table` as `points_and_types` gives it, with the directory of its filesystem
/// that is mounted (`/` for its whole, `/locks` for a bind of `/proc/locks` alone), as bytes: the
/// helper hides a kernel file wherever a procfs or sysfs shows it (`kernel_masks`).
pub fn points_types_and_roots(table: &[u8]) -> Vec<(Vec<u8>, String, Vec<u8>)> {
    let parsed = |line: &[u8]| {
        let text = String::from_utf8_lossy(line);
        let fstype = Mount::parse(&text)?.fstype.to_string();
        let mut fields = line.split(|b| *b == b' ');
        let root = unescape_bytes(fields.nth(3)?);
        Some((unescape_bytes(fields.next()?), fstype, root))
    };
    table.split(|b| *b == b'\n').filter_map(parsed).collect()
}

/// Where the mounts of `table` of type `fstype` show the paths of `fixed` that lie below `prefix`
/// (the place that filesystem has: `/proc` for procfs), other than at those paths themselves, each
/// once: a mount is looked at by the directory of its filesystem it shows (`/` for the whole,
/// `/sys/vm` or `/locks` for a bind of a part). A path inside the mount is given at its place
/// below the mount point, and the mount point itself when the mount lies inside a path (a bind of
/// `/proc/fs/ext4` for `/proc/fs`). For the helper's kernel masks (`kernel_masks`): a build
/// chroot's `/proc` showed every file they hide at `/proc` (found by an attacker's review, fix32).
pub fn shown_elsewhere(table: &[u8], fstype: &str, prefix: &str, fixed: &[&str]) -> Vec<Vec<u8>> {
    let mut paths: Vec<Vec<u8>> = Vec::new();
    for (point, kind, root) in points_types_and_roots(table) {
        if kind != fstype {
            continue;
        }
        for path in fixed.iter().map(|f| f.as_bytes()) {
            let Some(rel) = path.strip_prefix(prefix.as_bytes()).filter(|r| r.starts_with(b"/")) else { continue };
            let Some(at) = shown_at(&point, &root, rel) else { continue };
            if at != path && !paths.contains(&at) {
                paths.push(at);
            }
        }
    }
    paths
}

/// Where a mount at `point` of a filesystem's directory `root` shows that filesystem's path `rel`
/// (or the part of it the mount holds: the point itself, when `root` lies inside `rel`).
fn shown_at(point: &[u8], root: &[u8], rel: &[u8]) -> Option<Vec<u8>> {
    let inside = |outer: &[u8], inner: &[u8]| inner.strip_prefix(outer).is_some_and(|r| r.is_empty() || r.starts_with(b"/"));
    let root = root.strip_suffix(b"/").unwrap_or(root);
    let point = point.strip_suffix(b"/").unwrap_or(point);
    if inside(root, rel) {
        return Some([point, &rel[root.len()..]].concat());
    }
    inside(rel, root).then(|| point.to_vec())
}

/// The mount points of `table` with a mount whose own options include `rw`, each once, as their
/// bytes (see `points_and_types`): where the write guard (`write_guard`) looks further. A point
/// whose visible mount is read-only may be among them (a stack); the caller asks the mount itself.
pub fn writable_points(table: &[u8]) -> Vec<Vec<u8>> {
    let parsed = |line: &[u8]| {
        let mut fields = line.split(|b| *b == b' ');
        let point = fields.nth(4)?;
        fields.next()?.split(|b| *b == b',').any(|o| o == b"rw").then(|| unescape_bytes(point))
    };
    let mut seen = std::collections::HashSet::new();
    table.split(|b| *b == b'\n').filter_map(parsed).filter(|p| seen.insert(p.clone())).collect()
}

/// One mount of a table as bytes: what `policy::tree_identity` (the addon's) asks to tell where a
/// bind mount comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The mount's id (`statx`'s `stx_mnt_id`).
    pub id: u64,
    /// `major:minor` of the filesystem.
    pub device: String,
    /// The directory of the filesystem that is mounted (`/` for its whole), unescaped.
    pub root: Vec<u8>,
    /// Where, unescaped.
    pub point: Vec<u8>,
}

/// Every mount of `table` as a `Source`, in its order; paths as their bytes (see `points_and_types`).
pub fn sources(table: &[u8]) -> Vec<Source> {
    let parsed = |line: &[u8]| {
        let mut fields = line.split(|b| *b == b' ');
        let id = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
        let device = String::from_utf8(fields.nth(1)?.to_vec()).ok()?;
        Some(Source { id, device, root: unescape_bytes(fields.next()?), point: unescape_bytes(fields.next()?) })
    };
    table.split(|b| *b == b'\n').filter_map(parsed).collect()
}

/// The super options (the last field: the filesystem's own, not the mount's) of the filesystem on
/// device `major:minor`, as the first of its mounts in `table` shows them.
pub fn super_options(table: &str, (major, minor): (u32, u32)) -> Option<String> {
    let dev = format!("{major}:{minor}");
    mounts(table).find(|m| m.device == dev).map(|m| m.super_options)
}

/// mountinfo writes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> String {
    String::from_utf8_lossy(&unescape_bytes(field.as_bytes())).into_owned()
}

fn unescape_bytes(bytes: &[u8]) -> Vec<u8> {
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
    out
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
        assert_eq!(points_below(table.as_bytes(), "/w"), Ok(vec!["/w/a b".to_string(), "/w/deep/x".to_string()]));
        assert_eq!(points_below(table.as_bytes(), "/w2"), Ok(vec![]));
        let odd: &[u8] = b"1 0 8:1 / / rw - ext4 /dev/sda rw\n3 1 0:5 / /m\xff ro - tmpfs t ro\n4 1 0:5 / /w/\xfe\\040x ro - tmpfs t ro\n";
        assert_eq!(points_below(odd, "/m"), Ok(vec![]), "a point elsewhere that is not UTF-8 is none of the root's");
        assert_eq!(points_below(odd, "/w"), Err(b"/w/\xfe x".to_vec()), "one below it is named as it is");
    }

    #[test]
    fn a_point_that_is_not_utf8_hides_no_mount() {
        // The exploit: a mount point of the host's that is not UTF-8 failed every run's setup.
        let dir = std::env::temp_dir().join(format!("mountinfo-test-{}", std::process::id()));
        std::fs::write(&dir, b"1 0 8:1 / /media/u/cl\xe9 rw - vfat /dev/sdb rw\n2 1 0:21 / /proc rw - proc proc rw\n").unwrap();
        let table = read_file(dir.to_str().unwrap(), "reading a test table").map_err(|_| "read failed");
        std::fs::remove_file(&dir).unwrap();
        let table = table.unwrap();
        let types: Vec<_> = mounts(&text(&table)).map(|m| (m.point, m.fstype.to_string())).collect();
        assert_eq!(types, vec![("/media/u/cl\u{fffd}".to_string(), "vfat".to_string()), ("/proc".to_string(), "proc".to_string())]);
    }

    #[test]
    fn reads_each_mounts_id_device_root_and_point_as_bytes() {
        let table: &[u8] = b"1 0 8:1 / / rw - ext4 /dev/sda rw\n37 1 8:1 /etc/a\\040b /w/e\xff rw shared:9 - ext4 /dev/sda rw\nnot a table\n";
        let source = |id, root: &[u8], point: &[u8]| Source { id, device: "8:1".into(), root: root.to_vec(), point: point.to_vec() };
        assert_eq!(sources(table), vec![source(1, b"/", b"/"), source(37, b"/etc/a b", b"/w/e\xff")]);
    }

    #[test]
    fn lists_the_points_of_writable_mounts_once() {
        let table = b"1 0 8:1 / / ro,relatime - ext4 /dev/sda1 rw\n2 1 8:1 /w /w\\040x rw,nosuid - ext4 /dev/sda1 rw\n3 1 0:5 / /dev rw - tmpfs tmpfs rw\n4 2 8:1 /w/.git /w\\040x/.git ro,nosuid - ext4 /dev/sda1 rw\n5 1 0:6 / /dev rw - tmpfs tmpfs rw\n";
        assert_eq!(writable_points(table), [b"/w x".to_vec(), b"/dev".to_vec()]);
    }

    #[test]
    fn lists_each_mount_point_with_its_type() {
        let table = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n\
                     24 1 0:30 / /mnt/my\\040cg rw shared:9 - cgroup2 cgroup2 rw\n";
        assert_eq!(points_and_types(table.as_bytes()), vec![(b"/proc".to_vec(), "proc".to_string()), (b"/mnt/my cg".to_vec(), "cgroup2".to_string())]);
        // A point that is not UTF-8 keeps its bytes, and hides no other line.
        let table: &[u8] = b"1 0 8:1 / /m\xff\\134 rw - ext4 /dev/sda rw\n2 0 0:5 / /s\xfe rw - sysfs sysfs rw\n";
        assert_eq!(points_and_types(table), vec![(b"/m\xff\\".to_vec(), "ext4".to_string()), (b"/s\xfe".to_vec(), "sysfs".to_string())]);
    }

    #[test]
    fn lists_each_mount_point_with_its_type_and_root() {
        let table: &[u8] = b"22 1 0:21 / /proc rw,nosuid - proc proc rw\n40 1 0:21 /locks /srv/ch\\040r/l\xff ro shared:3 - proc proc rw\nnot a table\n";
        let got = points_types_and_roots(table);
        assert_eq!(got, vec![(b"/proc".to_vec(), "proc".to_string(), b"/".to_vec()), (b"/srv/ch r/l\xff".to_vec(), "proc".to_string(), b"/locks".to_vec())]);
    }

    #[test]
    fn a_path_is_found_wherever_a_mount_of_its_filesystem_shows_it() {
        assert_eq!(shown_at(b"/srv/ch/proc", b"/", b"/locks"), Some(b"/srv/ch/proc/locks".to_vec()));
        assert_eq!(shown_at(b"/x", b"/sys/vm", b"/sys/vm/stat_refresh"), Some(b"/x/stat_refresh".to_vec()));
        assert_eq!(shown_at(b"/x", b"/locks", b"/locks"), Some(b"/x".to_vec()), "a file bound alone");
        assert_eq!(shown_at(b"/x", b"/fs/ext4", b"/fs"), Some(b"/x".to_vec()), "a mount inside a path");
        assert_eq!(shown_at(b"/x", b"/sys", b"/locks"), None);
        assert_eq!(shown_at(b"/x", b"/lo", b"/locks"), None, "a prefix of a name is no parent");
        let table = b"22 1 0:21 / /proc rw - proc proc rw\n23 22 0:21 /sys /proc/sys ro - proc proc rw\n24 1 0:21 / /srv/ch/proc rw - proc proc rw\n25 1 0:22 / /srv/ch/sys rw - sysfs sysfs rw\n26 1 0:21 /fs/ext4 /e rw - proc proc rw\n";
        let fixed = ["/proc/locks", "/proc/fs", "/proc/sys/vm/stat_refresh", "/sys/kernel/slab"];
        let procs = shown_elsewhere(table, "proc", "/proc", &fixed);
        assert_eq!(procs, [b"/srv/ch/proc/locks".to_vec(), b"/srv/ch/proc/fs".to_vec(), b"/srv/ch/proc/sys/vm/stat_refresh".to_vec(), b"/e".to_vec()], "not the fixed paths themselves");
        assert_eq!(shown_elsewhere(table, "sysfs", "/sys", &fixed), [b"/srv/ch/sys/kernel/slab".to_vec()]);
    }

    #[test]
    fn parses_a_line_with_optional_fields_and_escaped_paths() {
        let m = Mount::parse("36 35 98:0 /mnt\\134x /a\\040b\\011c ro,nosuid master:1 shared:2 - ext3 /dev/r\\040oot rw,errors=a\\040b").unwrap();
        let expect = Mount {
            id: "36",
            parent: "35",
            device: "98:0",
            root: "/mnt\\x".to_string(),
            point: "/a b\tc".to_string(),
            writable: false,
            fstype: "ext3",
            super_options: "rw,errors=a b".to_string(),
        };
        assert_eq!(m, expect);
        assert!(Mount::parse("22 1 0:21 / /proc rw,nosuid - proc proc rw").is_some_and(|m| m.writable && m.fstype == "proc"), "no optional field");
        assert_eq!(Mount::parse("22 1 0:21 / /proc rw,nosuid proc proc rw"), None, "no separator");
        assert_eq!(Mount::parse("22 1 0:21 / /proc rw -"), None, "nothing after it");
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
