//! What a change set's judging made of a git configuration file of its upper directory that has
//! other names (hard links), kept by the file's identity so that its other names cost a lookup,
//! not another read and parse of up to 1 MiB. Found by an attacker's review (cross33): a review
//! run made 2,000 names `.git/x/configN` of one 1 MiB config (no disk: hard links), and each was
//! read and parsed for the keys that run programs: 5.7 s of host CPU after the run (0.12 s of the
//! command's), and again in every `listChangeSets`, `showChangeSet` and apply; 1,000 new
//! repositories sharing one config the same.
//!
//! Only files with more than one name are kept (a file of one name is judged once anyway), and
//! at most `MOST` of them: past that the list starts again empty, so a file read again costs the
//! command `MOST` other linked files judged in between, not one name. A set's upper directory
//! does not change while it is judged (its lock is held), and the identity includes the ctime.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::rc::Rc;

/// Linked files whose judging is kept (each at most a few KiB: `few_named` bounds the text).
const MOST: usize = 4096;

/// Device, inode, size and ctime of a regular file.
type Identity = (u64, u64, u64, i64, i64);

#[derive(Default)]
pub struct LinkedConfigs {
    judged: HashMap<Identity, Option<Rc<str>>>,
}

impl LinkedConfigs {
    /// What `judge` makes of the file at `path` (not followed if a symlink), from an earlier name
    /// of the same file when it has more than one.
    pub fn judged(&mut self, path: &Path, judge: impl FnOnce() -> Option<Rc<str>>) -> Option<Rc<str>> {
        let Some(id) = linked_identity(path) else { return judge() };
        if let Some(kept) = self.judged.get(&id) {
            return kept.clone();
        }
        let made = judge();
        if self.judged.len() >= MOST {
            self.judged.clear();
        }
        self.judged.insert(id, made.clone());
        made
    }
}

fn linked_identity(path: &Path) -> Option<Identity> {
    let m = path.symlink_metadata().ok()?;
    (m.is_file() && m.nlink() > 1).then(|| (m.dev(), m.ino(), m.size(), m.ctime(), m.ctime_nsec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_file_is_judged_once_and_a_single_one_each_time() {
        let t = tempfile::tempdir().unwrap();
        let (a, b, single) = (t.path().join("a"), t.path().join("b"), t.path().join("single"));
        std::fs::write(&a, "x").unwrap();
        std::fs::hard_link(&a, &b).unwrap();
        std::fs::write(&single, "y").unwrap();
        let mut kept = LinkedConfigs::default();
        let mut calls = 0;
        for p in [&a, &b, &a, &single, &single] {
            kept.judged(p, || {
                calls += 1;
                Some("d".into())
            });
        }
        assert_eq!(calls, 3, "a and b once between them, the single file each time");
    }

    #[test]
    fn past_the_bound_the_list_starts_again() {
        let t = tempfile::tempdir().unwrap();
        let mut kept = LinkedConfigs::default();
        for i in 0..MOST + 1 {
            let p = t.path().join(i.to_string());
            std::fs::write(&p, "x").unwrap();
            std::fs::hard_link(&p, t.path().join(format!("{i}-2"))).unwrap();
            kept.judged(&p, || None);
        }
        assert_eq!(kept.judged.len(), 1);
    }
}
