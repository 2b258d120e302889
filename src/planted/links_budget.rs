//! The steps one judgement of many symlinks takes in all: a run's links made (`detect::links_made`)
//! or a change set's (`review::risks::link_out`), each judged by where it leads (`links`).
//!
//! Why: one link's way is bounded (`path_walk::MAX_STEPS`, the symlinks each walk follows counted:
//! `hook_links::resolve`), but a run judges up to `MAX_LINKS_JUDGED` links, and git's discovery
//! went up to 256 directories above where each leads. Found by an attacker's review (fix30): a run
//! making 10,000 links `ls/lN -> ../M/yN` (`M -> L/L/`, `L` 800 `d/../` pairs: 3,200 steps each,
//! within the bound) cost the host 25 s of CPU, its result 41 s late; 2,000 links to a directory
//! 250 levels deep cost 7 s; and in review mode every later `listChangeSets`, `showChangeSet` or
//! apply judged the set's links again at the same cost; nothing was said. Now the ways and the
//! directories discovery looks at spend from one budget of `STEPS` for the whole judgement (after a
//! run, a directory is looked at once for all its links, as their ways up share them), and a link
//! met past it is not judged, and said.

use std::path::{Path, PathBuf};

use super::links::{self, Looked};
use crate::policy::path_walk::{self, RunBudget, Unjudged};

/// Steps (components of the links' ways, directories git's discovery looks at) for all the links
/// of one judgement: ordinary links take under ten each, so 10,000 of them fit; a core spends about
/// 0.3 s on them all (~0.8 us a step, measured).
pub const STEPS: usize = 400_000;

/// What is left of one judgement's steps, and the directories its discoveries looked at.
pub struct LinksBudget {
    left: usize,
    looked: Looked,
    /// Whether a directory looked at for one link stands for the next links too.
    keep_looked: bool,
}

impl LinksBudget {
    /// For the links a run made, judged after it: a directory is looked at once for all of them.
    pub fn after_run() -> LinksBudget {
        LinksBudget::with(STEPS, true)
    }

    /// For a change set's links: each link's discovery looks afresh, since an apply lands entries
    /// between two links' judgings (a directory looked at before one landed may differ after).
    pub fn on_a_set() -> LinksBudget {
        LinksBudget::with(STEPS, false)
    }

    pub fn with(steps: usize, keep_looked: bool) -> LinksBudget {
        LinksBudget { left: steps, looked: Looked::new(), keep_looked }
    }

    /// Whether nothing is left: the links met from here are not judged.
    pub fn spent(&self) -> bool {
        self.left == 0
    }

    /// Where `link` (holding `target`) leads (`links::resolve`), its walks spending from what is
    /// left (`Unjudged::Spent` when that ran out on the way).
    pub fn resolve(&mut self, link: &Path, target: &Path) -> Result<PathBuf, Unjudged> {
        if self.spent() {
            return Err(Unjudged::Spent);
        }
        let budget = RunBudget::set(self.left);
        let resolved = links::resolve(link, target);
        self.left = path_walk::left().unwrap_or(0);
        drop(budget);
        match resolved {
            Err(Unjudged::TooLong) if self.spent() => Err(Unjudged::Spent),
            other => other,
        }
    }

    /// What git's discovery may use from `dir` (`links::discover_in`), each directory not looked at
    /// yet (in this judgement, or for this link: `keep_looked`) paid one step: `None` when what is
    /// left ran out on the way.
    pub fn discover(&mut self, dir: &Path) -> Option<Vec<PathBuf>> {
        if !self.keep_looked {
            self.looked.clear();
        }
        let left = &mut self.left;
        links::discover_in(dir, &mut self.looked, &mut || match *left {
            0 => false,
            _ => {
                *left -= 1;
                true
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by an attacker's review (fix30): each link within its own bound, all of them without
    /// one. Links of 1,200 steps each spend one budget; once it is out, the next is `Spent`, and a
    /// directory's discovery is paid once for every link that leads there.
    #[test]
    fn the_links_of_one_judgement_spend_one_budget() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir(r.join("d")).unwrap();
        std::os::unix::fs::symlink("d/../".repeat(600), r.join("L")).unwrap();
        let mut b = LinksBudget::with(3_000, true);
        assert_eq!(b.resolve(&r.join("l0"), Path::new("L/y")), Ok(r.join("y")));
        assert_eq!(b.resolve(&r.join("l1"), Path::new("L/y")), Ok(r.join("y")));
        assert_eq!(b.resolve(&r.join("l2"), Path::new("L/y")), Err(Unjudged::Spent), "600 steps were left");
        assert!(b.spent());
        assert_eq!(b.resolve(&r.join("l3"), Path::new("y")), Err(Unjudged::Spent));
        let deep = r.join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        let mut b = LinksBudget::with(10_000, true);
        assert!(b.discover(&deep).is_some());
        let (left, paid) = (b.left, 10_000 - b.left);
        assert!(b.discover(&deep).is_some());
        assert_eq!(b.left, left, "the directories looked at are paid once");
        let mut b = LinksBudget::with(10_000, false);
        assert!(b.discover(&deep).is_some() && b.discover(&deep).is_some());
        assert_eq!(b.left, 10_000 - 2 * paid, "each link's discovery looks afresh, and pays");
        assert_eq!(LinksBudget::with(2, true).discover(&deep), None, "more directories than steps");
    }
}
