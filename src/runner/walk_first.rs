//! The workspaces whose walk after bwrap's spawn (`overlap`) changed bwrap's own arguments last
//! time: their next runs walk before the spawn. Such a walk sends the helper nothing, kills that
//! bwrap and plans the run again (`SpawnRequest::walk_before_spawn`): a whole bwrap start lost. A
//! nested repository with husky's `core.hooksPath = .husky` (pinned above, which the walk finds)
//! did it to every run in its workspace (found by an attacker's review, ovl38): each run paid two
//! bwraps where the overlap was to save a millisecond. Remembered per walked area (the walk's
//! roots), for `RETRY_AFTER` runs, after which one run overlaps again (the repository may be gone);
//! at most `MAX_AREAS` areas, the oldest forgotten first. Walking first is the order without the
//! overlap: what is remembered here changes how soon a run starts, never what it protects.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Mutex;

/// Runs that walk first before one overlaps again.
const RETRY_AFTER: u32 = 32;
const MAX_AREAS: usize = 64;

/// Per area: its walk's roots and the runs left that walk first.
static AREAS: Areas = Areas::new();

/// The walk of `roots` after the spawn changed bwrap's arguments: its next runs walk first.
pub fn remember(roots: &[PathBuf]) {
    AREAS.remember(roots);
}

/// Whether a run walking `roots` walks before its spawn (one run fewer is left to do so).
pub fn take(roots: &[PathBuf]) -> bool {
    AREAS.take(roots)
}

/// The remembered areas. A type of its own so that the unit tests below fill one of their own:
/// filling the process's `AREAS` past `MAX_AREAS` forgot the area a runner test on another thread
/// had just had remembered (`tests_overlap`'s walked-first test then counted [2, 2, 1] plans).
struct Areas(Mutex<VecDeque<(Vec<PathBuf>, u32)>>);

impl Areas {
    const fn new() -> Areas {
        Areas(Mutex::new(VecDeque::new()))
    }

    fn remember(&self, roots: &[PathBuf]) {
        let mut areas = self.0.lock().unwrap_or_else(|p| p.into_inner());
        areas.retain(|(r, _)| r.as_slice() != roots);
        if areas.len() == MAX_AREAS {
            areas.pop_front();
        }
        areas.push_back((roots.to_vec(), RETRY_AFTER));
    }

    fn take(&self, roots: &[PathBuf]) -> bool {
        let mut areas = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let Some(at) = areas.iter().position(|(r, _)| r.as_slice() == roots) else { return false };
        areas[at].1 -= 1;
        if areas[at].1 == 0 {
            areas.remove(at);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_area_walks_first_for_its_runs_then_overlaps_again() {
        let areas = Areas::new();
        let roots = vec![PathBuf::from("/walk-first-test/a")];
        assert!(!areas.take(&roots));
        areas.remember(&roots);
        for _ in 0..RETRY_AFTER {
            assert!(areas.take(&roots));
        }
        assert!(!areas.take(&roots), "tried with the overlap again");
    }

    #[test]
    fn the_oldest_area_is_forgotten_first() {
        let areas = Areas::new();
        let area = |i: usize| vec![PathBuf::from(format!("/walk-first-test/many/{i}"))];
        for i in 0..=MAX_AREAS {
            areas.remember(&area(i));
        }
        assert_eq!(areas.0.lock().unwrap().len(), MAX_AREAS);
        assert!(!areas.take(&area(0)), "the oldest was forgotten");
        assert!(areas.take(&area(MAX_AREAS)));
    }
}
