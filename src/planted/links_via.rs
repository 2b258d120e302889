//! Symlinks whose own text names no `node_modules` but whose way leads into one through another
//! link. Found by an attacker's review (rfix23c, nm_alias.js): a run made `alias -> node_modules`
//! and `lib -> alias/x`; only `alias`, told by its text (`listing::link_into_node_modules`), was
//! kept, a later run planted `node_modules/x/.git` with `core.fsmonitor`, and the host's
//! `cd lib && git status` ran it. Which of the walk's other links (`scan::Found::links_via`) lead
//! into a `node_modules` is told by following each one's way now (`link_looks`), before the run and
//! again after it, within a budget of steps: the links of one directory share its way.

use std::path::{Path, PathBuf};

use super::dangling_memo;
use super::link_looks::{Cut, Dirs, Stop};

#[cfg(test)]
thread_local! {
    /// The links whose ways this thread's sorts followed (tests count work, not time).
    static JUDGED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// What following the other links' ways told.
#[derive(Default)]
pub(super) struct Sorted {
    /// Those that lead into a `node_modules` now, or whose way cannot be followed or does not
    /// exist whole: a link or directory made later on the missing part may lead there, unseen by
    /// any walk (`alias -> node_modules/q/r` while `q` is missing, `lib -> alias/x`).
    pub(super) into: Vec<PathBuf>,
    /// Those past the budget, not followed.
    pub(super) cut: Option<Cut>,
}

/// `links` sorted within `steps` (`unwalked_links::MAX_LOOK_STEPS`); `skip`: those judged already.
pub(super) fn sort(links: &[PathBuf], steps: usize, skip: &dyn Fn(&Path) -> bool) -> Sorted {
    let mut dirs = Dirs::new(steps);
    let mut sorted = Sorted::default();
    let links: Vec<&PathBuf> = links.iter().filter(|l| !skip(l)).collect();
    let mut memo = dangling_memo::Check::new();
    for (i, link) in links.iter().enumerate() {
        // Dangling at its first name, and nothing in its directory changed since: judged so again
        // without a look (`dangling_memo`).
        if memo.still_dangling(link) {
            sorted.into.push(link.to_path_buf());
            continue;
        }
        #[cfg(test)]
        JUDGED.with(|j| j.set(j.get() + 1));
        let into = match dirs.way(link) {
            Ok(None) => false,
            Ok(Some((_, false))) => {
                dangling_memo::remember(link);
                true
            }
            Ok(Some((to, true))) => in_node_modules(&to),
            // Kept: where it leads is said not known (`unwalked_links::Kept`), not taken for nowhere.
            Err(Stop::Unfollowed(_)) => true,
            Err(Stop::Spent) => {
                sorted.cut = Some(Cut { first: link.to_path_buf(), count: links.len() - i });
                break;
            }
        };
        if into {
            sorted.into.push(link.to_path_buf());
        }
    }
    sorted
}

/// In any case: a case-insensitive filesystem's `Node_Modules` is the same directory, and the
/// walk skips neither; taking too many costs a look each, too few a planted repository unseen.
fn in_node_modules(p: &Path) -> bool {
    p.components().any(|c| c.as_os_str().as_encoded_bytes().eq_ignore_ascii_case(b"node_modules"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_through_another_link_into_node_modules_are_told_by_their_way() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("node_modules/x")).unwrap();
        std::fs::create_dir_all(r.join("src")).unwrap();
        let link = |to: &str, at: &str| std::os::unix::fs::symlink(to, r.join(at)).unwrap();
        link("node_modules", "alias");
        link("../alias/x", "src/lib");
        link("src", "plain");
        link("alias/missing/deeper", "dangling_in");
        link("nothing/here", "dangling");
        let all: Vec<PathBuf> = ["src/lib", "plain", "dangling_in", "dangling"].iter().map(|l| r.join(l)).collect();
        let sorted = sort(&all, 1_000, &|_| false);
        assert_eq!(sorted.into, [r.join("src/lib"), r.join("dangling_in"), r.join("dangling")]);
        assert!(sorted.cut.is_none());
        let sorted = sort(&all, 1_000, &|l| l.ends_with("src/lib"));
        assert_eq!(sorted.into, [r.join("dangling_in"), r.join("dangling")]);
        let sorted = sort(&all, 2, &|_| false);
        assert!(sorted.cut.is_some_and(|c| c.count >= 2), "past the budget, said");
    }

    fn judged() -> usize {
        JUDGED.with(|j| j.get())
    }

    /// Found by a review of per-run cost (issue #36): 4,000 links dangling at their first name
    /// were followed again by every warm run, before it and after it. Counted, not timed.
    #[cfg(target_os = "linux")]
    #[test]
    fn links_dangling_at_their_first_name_are_not_followed_again_while_nothing_changed() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let all: Vec<PathBuf> = (0..50).map(|i| r.join(format!("d{i}"))).collect();
        for (i, l) in all.iter().enumerate() {
            std::os::unix::fs::symlink(format!("nothing{i}/here"), l).unwrap();
        }
        assert!(crate::planted::watch::global().is_some(), "the test needs the directory watcher");
        let before = judged();
        assert_eq!(sort(&all, 1_000, &|_| false).into, all);
        assert_eq!(judged() - before, 50);
        let again = judged();
        assert_eq!(sort(&all, 1_000, &|_| false).into, all, "still kept");
        assert_eq!(judged() - again, 0, "none followed again");
    }

    /// What the memory of dangling links must not hide: a missing name made later (a directory, a
    /// link into `node_modules`), a link given another text, its directory's path swapped for a
    /// symlink to another directory. Each is followed again and judged by where it leads now.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_dangling_link_whose_way_appears_is_judged_again() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let ws = r.join("top/ws");
        std::fs::create_dir_all(r.join("node_modules/x")).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        let all: Vec<PathBuf> = (0..4).map(|i| ws.join(format!("d{i}"))).collect();
        for (i, l) in all.iter().enumerate() {
            std::os::unix::fs::symlink(format!("nothing{i}/here"), l).unwrap();
        }
        assert_eq!(sort(&all, 1_000, &|_| false).into, all);
        assert_eq!(sort(&all, 1_000, &|_| false).into, all);
        // A directory where the first leads, a link into node_modules where the second does.
        std::fs::create_dir_all(ws.join("nothing0/here")).unwrap();
        std::os::unix::fs::symlink("../../node_modules", ws.join("nothing1")).unwrap();
        std::fs::create_dir(r.join("node_modules/here")).unwrap();
        let before = judged();
        assert_eq!(sort(&all, 1_000, &|_| false).into, all[1..], "the live one is no longer kept");
        assert!(judged() - before >= 2, "followed again");
        // The third given a text that leads somewhere real.
        std::fs::remove_file(&all[2]).unwrap();
        std::os::unix::fs::symlink("nothing0", &all[2]).unwrap();
        assert_eq!(sort(&all, 1_000, &|_| false).into, [all[1].clone(), all[3].clone()]);
        // A directory above it (no event on the link's own directory) made a symlink to another
        // holding a live link of the same name.
        let other = r.join("other");
        std::fs::create_dir_all(other.join("ws/real")).unwrap();
        std::os::unix::fs::symlink("real", other.join("ws/d3")).unwrap();
        std::fs::rename(r.join("top"), r.join("top-moved")).unwrap();
        std::os::unix::fs::symlink(&other, r.join("top")).unwrap();
        assert_eq!(sort(&all[3..], 1_000, &|_| false).into, Vec::<PathBuf>::new(), "the link now named is judged");
    }
}
