//! Which mount points lie below a path: the helper's read-only carve-outs ask it of each path they
//! copy, to tell whether the copy's read-only attribute may go to the whole copy at once
//! (`open_tree_attr` with `AT_RECURSIVE`, one call) or must go to its top alone (`open_tree`, then
//! `mount_setattr`: a nested writable root below keeps its flags). Pure code, for a unit test.

/// The mount points known (as bytes, unescaped: a name need not be UTF-8), sorted.
#[derive(Default)]
pub struct MountPoints {
    sorted: Vec<Vec<u8>>,
}

impl MountPoints {
    /// Every mount point of a `/proc/self/mountinfo` table.
    pub fn of_table(table: &[u8]) -> MountPoints {
        let mut sorted: Vec<Vec<u8>> = crate::mountinfo::points_and_types(table).into_iter().map(|(p, _)| p).collect();
        sorted.sort_unstable();
        MountPoints { sorted }
    }

    /// One more, made since the table was read.
    pub fn add(&mut self, point: &[u8]) {
        let at = self.sorted.partition_point(|p| p.as_slice() < point);
        self.sorted.insert(at, point.to_vec());
    }

    /// Whether a mount point lies strictly below `path` (absolute, without a trailing slash; `/`
    /// has every other point below it). Those below `/a/b` are those that start with `/a/b/`: in
    /// sorted order they come first among the points not less than it.
    pub fn any_below(&self, path: &[u8]) -> bool {
        if path.len() <= 1 {
            return self.sorted.iter().any(|p| p.as_slice() != b"/");
        }
        let mut prefix = path.to_vec();
        prefix.push(b'/');
        let at = self.sorted.partition_point(|p| p.as_slice() < prefix.as_slice());
        self.sorted.get(at).is_some_and(|p| p.starts_with(&prefix))
    }
}

#[cfg(test)]
mod tests {
    use super::MountPoints;

    const TABLE: &str = "\
22 1 0:20 / / rw - ext4 /dev/root rw
30 22 0:20 /ws /ws rw,nosuid - ext4 /dev/root rw
31 30 0:20 /ws/a/b /ws/a/b rw,nosuid - ext4 /dev/root rw
32 30 0:33 / /ws/deps/r2/.git/sec ro,nosuid - tmpfs tmpfs ro
33 30 0:20 /ws/sp\\040ace/in /ws/sp\\040ace/in rw,nosuid - ext4 /dev/root rw
";

    #[test]
    fn points_strictly_below_only() {
        let m = MountPoints::of_table(TABLE.as_bytes());
        assert!(m.any_below(b"/ws/a"), "the nested writable root");
        assert!(m.any_below(b"/ws/deps/r2/.git"), "the mask inside a .git");
        assert!(m.any_below(b"/ws/deps/r2"));
        assert!(!m.any_below(b"/ws/a/b"), "a point is not below itself");
        assert!(!m.any_below(b"/ws/deps/r1/.git"));
        assert!(!m.any_below(b"/ws/a/bc"));
        assert!(!m.any_below(b"/ws/a.git"), "a name sorting between /ws/a and /ws/a/ is not below");
        assert!(m.any_below(b"/ws/sp ace"), "an escaped name, unescaped");
        assert!(m.any_below(b"/"));
        assert!(m.any_below(b"/ws"));
    }

    #[test]
    fn points_added_later() {
        let mut m = MountPoints::of_table(TABLE.as_bytes());
        assert!(!m.any_below(b"/ws/deps/r5/.git"));
        m.add(b"/ws/deps/r5/.git/hooks");
        assert!(m.any_below(b"/ws/deps/r5/.git"));
        assert!(!MountPoints::default().any_below(b"/ws"));
    }
}
