//! The names of one kind a directory's listing keeps (its protected names, its symlinks of either
//! kind): at most as many as the walk that read it could report from its place in the walk, the
//! rest counted. Found by an attacker's review (cross30): a listing kept every such name of its
//! directory, however many, for the host process's life (the index of each of 8 areas), where a
//! walk reports at most `MAX_NAMED`, `MAX_LINKS_OUT` and `MAX_LINKS_VIA` in all: a run that made
//! 1,000,000 symlinks with 250-byte names left the host holding 295 MB after it ended.

use std::ffi::{OsStr, OsString};

#[derive(Debug, PartialEq, Eq, Default, Clone)]
pub(super) struct KeptNames {
    kept: Vec<OsString>,
    /// The names past the room there was: counted, not kept.
    more: usize,
}

impl KeptNames {
    /// `name`, kept while fewer than `room` are.
    pub(super) fn push(&mut self, name: &OsStr, room: usize) {
        match self.kept.len() < room {
            true => self.kept.push(name.to_os_string()),
            false => self.more += 1,
        }
    }

    /// How many names there were, kept or counted.
    pub(super) fn len(&self) -> usize {
        self.kept.len() + self.more
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The names kept, in the listing's order.
    pub(super) fn iter(&self) -> std::slice::Iter<'_, OsString> {
        self.kept.iter()
    }

    /// A walk with `room` left would report names this listing did not keep: it must be read again.
    pub(super) fn short_of(&self, room: usize) -> bool {
        self.more > 0 && self.kept.len() < room
    }

    /// It keeps more than a walk with `room` left reports.
    pub(super) fn over(&self, room: usize) -> bool {
        self.kept.len() > room
    }

    /// The first `room` names kept, the rest counted.
    pub(super) fn trimmed(&self, room: usize) -> KeptNames {
        let kept: Vec<OsString> = self.kept.iter().take(room).cloned().collect();
        KeptNames { more: self.len() - kept.len(), kept }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_within_the_room_and_counts_the_rest() {
        let mut n = KeptNames::default();
        for i in 0..5 {
            n.push(OsStr::new(&format!("n{i}")), 3);
        }
        assert_eq!((n.iter().count(), n.len()), (3, 5));
        assert!(n.short_of(4) && !n.short_of(3) && n.over(2) && !n.over(3));
        let t = n.trimmed(1);
        assert_eq!((t.iter().cloned().collect::<Vec<_>>(), t.len()), (vec![OsString::from("n0")], 5));
    }
}
