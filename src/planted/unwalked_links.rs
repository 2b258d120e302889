//! Symlinks into `node_modules`, where the walk never reads (`scan`), judged again after every run,
//! whoever made them and whenever. Found by an attacker's review (quiet22, nm_link.js): one run
//! made `src/lib -> ../node_modules/x` (nothing there yet: nothing to report), the next planted
//! `node_modules/x/.git` with `core.fsmonitor`, and the host's `cd src/lib && git status` ran it;
//! a link is judged by where it leads only by the run that made it (`links::made_since`), and no
//! walk sees a repository planted in `node_modules` later. A link the host made before any run is
//! the same case.
//!
//! Before the run: the links the walk found (`scan::Found::links_out`, bounded), each with the
//! repository git's discovery finds from where it leads (`links::discover`), which the run's plan
//! keeps read-only (`mod.rs`). After the run: each looked at again; a repository that is another
//! one now, or whose git directory, configuration or hooks were changed since the baseline, is
//! reported at the link. The cost follows the number of such links only: a workspace without them
//! pays nothing but the walk's `readlinkat` per symlink in the directories it reads.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{links, listing, repo, scan};

/// The links into `node_modules` the walk before the run found, as they led then.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Kept {
    links: Vec<Before>,
    /// Those past `scan::MAX_LINKS_OUT`: not judged after the run, said in `notEnforced`.
    pub unkept: scan::Unkept,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Before {
    link: PathBuf,
    /// The `.git` entry or git directory discovery found from where it led, with its identity.
    git: Option<(PathBuf, (u64, u64))>,
}

/// One link that leads to a repository the run planted or changed.
pub struct Found {
    pub link: PathBuf,
    pub target: PathBuf,
    pub git: PathBuf,
    pub config: repo::Configured,
}

impl Kept {
    /// `links`: the walk's `links_out`; `unkept`: those past its bound.
    pub fn of(links: &[PathBuf], unkept: scan::Unkept) -> Kept {
        let links = links.iter().map(|link| Before { link: link.clone(), git: leads_to(link).and_then(|g| with_id(&g)) }).collect();
        Kept { links, unkept }
    }

    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// The repositories the links lead to now (the run's plan keeps them read-only).
    pub fn repositories(&self) -> impl Iterator<Item = &Path> {
        self.links.iter().filter_map(|b| b.git.as_ref().map(|(g, _)| g.as_path()))
    }

    /// What `unkept` leaves unjudged, for `sandboxDetails.notEnforced`.
    pub fn not_enforced(&self) -> Option<String> {
        let area = self.unkept.first_dir.as_ref()?;
        Some(format!(
            "planted configuration: the walk found more than {} symlinks into node_modules ({} past them, the first in {}); \
             those past them are not judged after the run: a repository a run plants where one leads is not reported",
            scan::MAX_LINKS_OUT,
            self.unkept.count,
            area.display()
        ))
    }

    /// The links that lead, after the run, to a repository the run could have planted (below one
    /// of `roots`, or in a shared place) that is not `known` (the walk saw it, same inode) and is
    /// another one than before the run, or was changed since `since_ns`. Those `judged` already
    /// are left out (`detect::links_made`: the run made them). Not told by the link's own ctime: a
    /// link an earlier run made a few milliseconds before this run's baseline looks made by this
    /// one, and was judged by neither (found running nm_link.js).
    pub fn after_run(&self, since_ns: i64, roots: &[PathBuf], known: &dyn Fn(&Path) -> bool, judged: &dyn Fn(&Path) -> bool) -> Vec<Found> {
        let plantable = |g: &Path| roots.iter().any(|r| g.starts_with(r)) || links::in_shared_place(g, roots);
        let mut found = Vec::new();
        for before in self.links.iter().filter(|b| !judged(&b.link)) {
            let Ok(target) = std::fs::read_link(&before.link) else { continue };
            let Some(git) = leads_to(&before.link).filter(|g| plantable(g) && !known(g)) else { continue };
            let same = before.git.as_ref().is_some_and(|(g, id)| *g == git && with_id(&git).is_some_and(|(_, now)| now == *id));
            if same && !changed_since(&git, since_ns) {
                continue;
            }
            let config = repo::configured(&links::git_dirs_of(&git));
            found.push(Found { link: before.link.clone(), target, git, config });
        }
        found
    }
}

/// What git's discovery finds from where `link` leads now, if anything.
fn leads_to(link: &Path) -> Option<PathBuf> {
    let target = std::fs::read_link(link).ok()?;
    links::discover(&links::resolve(link, &target).ok()?)
}

fn with_id(p: &Path) -> Option<(PathBuf, (u64, u64))> {
    p.symlink_metadata().ok().map(|m| (p.to_path_buf(), (m.dev(), m.ino())))
}

/// At most this many hooks looked at per git directory.
const MAX_HOOKS: usize = 64;

/// Whether `git` (a `.git` entry or a git directory), its git directories' configuration and
/// hooks changed since `since_ns` (their ctimes: an entry added or removed changes its directory's,
/// a file rewritten in place its own; neither can be set back).
fn changed_since(git: &Path, since_ns: i64) -> bool {
    let changed = |p: &Path| p.symlink_metadata().is_ok_and(|m| listing::changed_since((m.ctime(), m.ctime_nsec()), since_ns));
    let dirs = links::git_dirs_of(git);
    let files = dirs.iter().flat_map(|d| ["", "config", "config.worktree", "commondir", "hooks"].map(|n| d.join(n)));
    if changed(git) || files.into_iter().any(|f| changed(&f)) {
        return true;
    }
    let hooks = dirs.iter().filter_map(|d| std::fs::read_dir(d.join("hooks")).ok());
    // Past the bound: taken as changed, which reports it rather than nothing.
    hooks.flat_map(|entries| entries.take(MAX_HOOKS + 1).enumerate()).any(|(i, e)| i >= MAX_HOOKS || e.is_ok_and(|e| changed(&e.path())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repository_planted_or_changed_where_a_kept_link_leads_is_found_and_an_unchanged_one_is_not() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("node_modules/x")).unwrap();
        std::fs::create_dir_all(r.join("node_modules/y/.git")).unwrap();
        std::fs::write(r.join("node_modules/y/.git/config"), "").unwrap();
        std::os::unix::fs::symlink("node_modules/x", r.join("lib")).unwrap();
        std::os::unix::fs::symlink("node_modules/y", r.join("other")).unwrap();
        let kept = Kept::of(&[r.join("lib"), r.join("other")], scan::Unkept::default());
        assert_eq!(kept.repositories().collect::<Vec<_>>(), [r.join("node_modules/y/.git")]);
        // The baseline, later than everything made so far by more than `changed_since`'s slack.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i64;
        let roots = [r.clone()];
        assert!(kept.after_run(since, &roots, &|_| false, &|_| false).is_empty(), "nothing changed");
        std::fs::create_dir_all(r.join("node_modules/x/.git")).unwrap();
        std::fs::write(r.join("node_modules/x/.git/config"), "[core]\n\tfsmonitor = x\n").unwrap();
        let found = kept.after_run(since, &roots, &|_| false, &|_| false);
        let got: Vec<_> = found.iter().map(|f| (f.link.clone(), f.git.clone())).collect();
        assert_eq!(got[0], (r.join("lib"), r.join("node_modules/x/.git")), "planted where nothing was");
        assert_eq!(found[0].config.keys, ["core.fsmonitor"]);
        assert!(kept.after_run(since, &roots, &|g| g.starts_with(r.join("node_modules")), &|_| false).is_empty(), "known ones are not judged");
    }
}
