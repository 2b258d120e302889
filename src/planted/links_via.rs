//! Symlinks whose own text names no `node_modules` but whose way leads into one through another
//! link. Found by an attacker's review (rfix23c, nm_alias.js): a run made `alias -> node_modules`
//! and `lib -> alias/x`; only `alias`, told by its text (`listing::link_into_node_modules`), was
//! kept, a later run planted `node_modules/x/.git` with `core.fsmonitor`, and the host's
//! `cd lib && git status` ran it. Which of the walk's other links (`scan::Found::links_via`) lead
//! into a `node_modules` is told by following each one's way now (`link_looks`), before the run and
//! again after it, within a budget of steps: the links of one directory share its way.

use std::path::{Path, PathBuf};

use super::link_looks::{Cut, Dirs, Stop};

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
    for (i, link) in links.iter().enumerate() {
        let into = match dirs.way(link) {
            Ok(None) => false,
            Ok(Some((to, whole))) => !whole || in_node_modules(&to),
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
}
