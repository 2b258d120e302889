//! The directories above a canonical path, by slicing at its slashes.

/// `path` (canonical: absolute, no `.`, `..`, `//` or trailing `/`) and each directory above it: as
/// `Path::ancestors`, without parsing components. The helper asks this of every carve-out it
/// attaches (is a carve-out attached before above it?), and with a thousand repositories the
/// component parsing was about a millisecond per run.
pub fn or_self(path: &str) -> impl Iterator<Item = &str> {
    // Cut at ASCII slashes: every piece is valid UTF-8.
    or_self_bytes(path.as_bytes()).map(|b| std::str::from_utf8(b).unwrap_or("/"))
}

/// As `or_self`, for paths that need not be UTF-8 (the addon's canonical paths).
pub fn or_self_bytes(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    let above = path.iter().enumerate().filter(|&(_, &b)| b == b'/').map(move |(i, _)| if i == 0 { &path[..1] } else { &path[..i] });
    std::iter::once(path).chain(above)
}

/// Canonical paths, asked whether one of them is a path or a directory above it (`covers`): the
/// helper's carve-outs attached so far (`read_only::attach_all`). Only an ancestor as long as some
/// path held can be one, so the set is looked up only at those lengths: one hash a carve-out in an
/// ordinary workspace (`ws/deps/rN/.git` has seven ancestors-or-self, of which only itself is as
/// long as the other `.git`s), not one per ancestor (pmount39: hashing every ancestor was most of
/// `attach_all`'s user time with 200 nested repositories).
pub struct Set<'p> {
    paths: std::collections::HashSet<&'p [u8]>,
    /// `lengths[n]`: some path held is `n` bytes long.
    lengths: Vec<bool>,
}

impl<'p> Set<'p> {
    pub fn with_capacity(n: usize) -> Set<'p> {
        Set { paths: std::collections::HashSet::with_capacity(n), lengths: Vec::new() }
    }

    pub fn covers(&self, path: &[u8]) -> bool {
        or_self_bytes(path).any(|a| self.lengths.get(a.len()).copied().unwrap_or(false) && self.paths.contains(a))
    }

    pub fn insert(&mut self, path: &'p [u8]) {
        if self.lengths.len() <= path.len() {
            self.lengths.resize(path.len() + 1, false);
        }
        self.lengths[path.len()] = true;
        self.paths.insert(path);
    }
}

#[cfg(test)]
mod tests {
    use super::{or_self_bytes, Set};

    #[test]
    fn the_same_as_path_ancestors() {
        for p in ["/a/b/.git", "/a", "/", "/w s/x.y/z"] {
            let mut ours: Vec<&str> = super::or_self(p).collect();
            let mut std: Vec<&str> = std::path::Path::new(p).ancestors().map(|a| a.to_str().unwrap()).collect();
            ours.sort_unstable();
            ours.dedup();
            std.sort_unstable();
            assert_eq!(ours, std, "{p}");
        }
    }

    /// The same answers as a lookup of every ancestor-or-self, whatever lengths were attached.
    #[test]
    fn a_set_covers_what_a_lookup_of_every_ancestor_finds() {
        let attached = ["/w/deps/r1/.git", "/w/deps/r17/.git", "/w/a", "/"];
        let asked = ["/w/deps/r1/.git", "/w/deps/r1/.git/hooks", "/w/deps/r17/.git/x/y", "/w/deps/r170/.git", "/w/deps/r1", "/w/ab", "/w/a/b", "/w", "/x"];
        for n in 0..=attached.len() {
            let mut a = Set::with_capacity(n);
            for p in &attached[..n] {
                a.insert(p.as_bytes());
            }
            for q in asked {
                let every = or_self_bytes(q.as_bytes()).any(|x| attached[..n].iter().any(|p| p.as_bytes() == x));
                assert_eq!(a.covers(q.as_bytes()), every, "{q} with {:?}", &attached[..n]);
            }
        }
        let a = Set::with_capacity(0);
        assert!(!a.covers(b"/w"));
    }
}
