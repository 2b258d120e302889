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
//! reported at the link; one no run keeps read-only (past `MAX_CARVED`, or in another workspace's
//! `node_modules`) is reported after every run, since what a run changed there is not judged. The
//! cost follows the number of such links only: a workspace without them pays nothing but the
//! walk's `readlinkat` per symlink in the directories it reads.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::{links, listing, repo, scan};

/// The links into `node_modules` the walk before the run found, as they led then.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Kept {
    links: Vec<Before>,
    /// Those past `scan::MAX_LINKS_OUT`: not judged after the run, said in `notEnforced`.
    pub unkept: scan::Unkept,
    /// The repositories past `MAX_CARVED` (`Carver::unwalked_repositories` lists them): not kept
    /// read-only during the run; said in `notEnforced`, and reported after every run.
    pub uncarved: HashSet<PathBuf>,
}

/// At most this many repositories the walk did not find are kept read-only for the links. Found by an attacker's
/// review (rfix22, nm_many_dos.js): 1,000 links to 1,000 repositories cost every later run two
/// thousand mounts, 1.8 s. Past it each link to one is reported after every run (`Unjudged`).
pub const MAX_CARVED: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Before {
    link: PathBuf,
    /// The `.git` entries and git directories discovery found from where it led, with their
    /// identities (`links::discover`: more than one where git may take either).
    git: Vec<(PathBuf, (u64, u64))>,
}

/// One link that leads to a repository the run planted or changed.
pub struct Found {
    pub link: PathBuf,
    pub target: PathBuf,
    pub git: PathBuf,
    pub config: repo::Configured,
    /// Not kept read-only, so not judged: past `MAX_CARVED`, or in another `node_modules` outside
    /// the run's roots, which runs elsewhere write. Reported after every run, whatever changed.
    /// Found by an attacker's review (rfix22b): judging them by the ctimes of their git directory,
    /// config and hooks missed a `core.hooksPath` outside it (husky's `.husky`), a submodule's
    /// config under `.git/modules`, an index rewritten in place to name a planted checkout.
    pub unjudged: Option<Unjudged>,
}

/// Why a repository a link leads to is neither kept read-only nor judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unjudged {
    /// Past `MAX_CARVED` repositories behind such links.
    PastTheBound,
    /// In a `node_modules` outside the run's roots (another workspace's): its runs write it.
    Elsewhere,
}

impl Kept {
    /// `links`: the walk's `links_out`; `unkept`: those past its bound.
    pub fn of(links: &[PathBuf], unkept: scan::Unkept) -> Kept {
        let mut dirs = Dirs::default();
        let links = links.iter().map(|link| Before { link: link.clone(), git: dirs.leads_to(link).iter().filter_map(|g| with_id(g)).collect() }).collect();
        Kept { links, unkept, uncarved: HashSet::new() }
    }

    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// The repositories the links lead to now (the run's plan keeps the first `MAX_CARVED` the walk
    /// did not find read-only).
    pub fn repositories(&self) -> impl Iterator<Item = &Path> {
        self.links.iter().flat_map(|b| b.git.iter().map(|(g, _)| g.as_path()))
    }

    /// What `unkept` leaves unjudged and `uncarved` writable, for `sandboxDetails.notEnforced`.
    pub fn not_enforced(&self) -> Vec<String> {
        let mut said = Vec::new();
        if !self.uncarved.is_empty() {
            said.push(format!(
                "planted configuration: symlinks into node_modules lead to more than {MAX_CARVED} repositories the walk does not \
                 find; the {} past them are not kept read-only during the run, and each is reported after every run \
                 (scan-incomplete): what git runs there may have been changed",
                self.uncarved.len()
            ));
        }
        said.extend(self.unkept_said());
        said
    }

    fn unkept_said(&self) -> Option<String> {
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
    /// another one than before the run, or was changed since `since_ns`; and every link to a
    /// repository no run keeps read-only (`Unjudged`), whatever changed. Those `judged` already
    /// are left out (`detect::links_made`: the run made them). Not told by the link's own ctime: a
    /// link an earlier run made a few milliseconds before this run's baseline looks made by this
    /// one, and was judged by neither (found running nm_link.js).
    pub fn after_run(&self, since_ns: i64, roots: &[PathBuf], known: &dyn Fn(&Path) -> bool, judged: &dyn Fn(&Path) -> bool) -> Vec<Found> {
        // The shared places found once for every link (each look is a few `lstat`s).
        let shared = links::SharedPlaces::now();
        let plantable = |g: &Path| roots.iter().any(|r| g.starts_with(r)) || shared.hold(g, roots);
        let unjudged = |g: &Path| {
            if !plantable(g) {
                g.components().any(|c| c.as_os_str() == "node_modules").then_some(Unjudged::Elsewhere)
            } else {
                self.uncarved.contains(g).then_some(Unjudged::PastTheBound)
            }
        };
        let mut found = Vec::new();
        let mut dirs = Dirs::default();
        for before in self.links.iter().filter(|b| !judged(&b.link)) {
            let Ok(target) = std::fs::read_link(&before.link) else { continue };
            let changed = |git: &Path| {
                let same = || before.git.iter().any(|(g, id)| g == git && with_id(git).is_some_and(|(_, now)| now == *id));
                unjudged(git).is_some() || (plantable(git) && (!same() || changed_since(git, since_ns)))
            };
            // The nearest changed (or unjudged) one said.
            let now: Vec<PathBuf> = dirs.leads_to(&before.link).into_iter().filter(|g| !known(g)).filter(|g| changed(g)).collect();
            let Some(git) = now.into_iter().next() else { continue };
            let config = repo::configured(&links::git_dirs_of(&git));
            let unjudged = unjudged(&git);
            found.push(Found { link: before.link.clone(), target, git, config, unjudged });
        }
        found
    }
}

/// The directories links lead into, resolved once per look (a link's directory and its target's
/// but the last name): the many links of one directory into one `node_modules` share it. Found by
/// an attacker's review (rfix22, nm_many_dos.js): resolving each link whole, before and after
/// each run, was twenty `openat`s a link. With what discovery found in each directory
/// (`links::Looked`): the workspace's `HEAD` was read once a link.
#[derive(Default)]
struct Dirs(HashMap<(PathBuf, PathBuf), Option<PathBuf>>, links::Looked);

impl Dirs {
    /// What git's discovery may use from where `link` leads now (`links::discover`).
    fn leads_to(&mut self, link: &Path) -> Vec<PathBuf> {
        let Ok(target) = std::fs::read_link(link) else { return Vec::new() };
        let Some(dir) = self.resolve(link, &target) else { return Vec::new() };
        links::discover_in(&dir, &mut self.1)
    }

    /// `links::resolve`, the target's directory from the cache; its last name, when a symlink
    /// (or `.`, `..`), resolved whole as before.
    fn resolve(&mut self, link: &Path, target: &Path) -> Option<PathBuf> {
        let whole = || links::resolve(link, target).ok();
        let (Some(dir), Some(name), Some(at)) = (target.parent(), target.file_name(), link.parent()) else { return whole() };
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        let key = (at.to_path_buf(), dir.to_path_buf());
        let resolved = self.0.entry(key).or_insert_with(|| links::resolve(link, dir).ok()).clone()?;
        let p = resolved.join(name);
        if p.symlink_metadata().is_ok_and(|m| m.is_symlink()) { whole() } else { Some(p) }
    }
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
        let repo = |g: &Path| {
            std::fs::create_dir_all(g.join("objects")).unwrap();
            std::fs::create_dir_all(g.join("refs")).unwrap();
            std::fs::write(g.join("HEAD"), "ref: refs/heads/main\n").unwrap();
            std::fs::write(g.join("config"), "").unwrap();
        };
        repo(&r.join("node_modules/y/.git"));
        std::os::unix::fs::symlink("node_modules/x", r.join("lib")).unwrap();
        std::os::unix::fs::symlink("node_modules/y", r.join("other")).unwrap();
        let kept = Kept::of(&[r.join("lib"), r.join("other")], scan::Unkept::default());
        assert_eq!(kept.repositories().collect::<Vec<_>>(), [r.join("node_modules/y/.git")]);
        assert!(kept.not_enforced().is_empty());
        // The baseline, later than everything made so far by more than `changed_since`'s slack.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i64;
        let roots = [r.clone()];
        assert!(kept.after_run(since, &roots, &|_| false, &|_| false).is_empty(), "nothing changed");
        repo(&r.join("node_modules/x/.git"));
        std::fs::write(r.join("node_modules/x/.git/config"), "[core]\n\tfsmonitor = x\n").unwrap();
        let found = kept.after_run(since, &roots, &|_| false, &|_| false);
        let got: Vec<_> = found.iter().map(|f| (f.link.clone(), f.git.clone())).collect();
        assert_eq!(got[0], (r.join("lib"), r.join("node_modules/x/.git")), "planted where nothing was");
        assert_eq!(found[0].config.keys, ["core.fsmonitor"]);
        assert!(kept.after_run(since, &roots, &|g| g.starts_with(r.join("node_modules")), &|_| false).is_empty(), "known ones are not judged");
    }

    /// Found by attackers' reviews (rfix22, nm_link_other_ws.js; then rfix22b: a check of its git
    /// directory's files missed an index rewritten in place): a repository in another workspace's
    /// `node_modules`, which no run here keeps read-only, is said after every run, and so is one past
    /// `MAX_CARVED`, whatever changed.
    #[test]
    fn a_repository_no_run_keeps_read_only_is_found_after_every_run() {
        // Not in /tmp, a shared place, which is judged otherwise.
        let t = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
        let r = t.path().canonicalize().unwrap();
        let repo = |g: &Path| {
            for d in ["objects", "refs", "hooks"] {
                std::fs::create_dir_all(g.join(d)).unwrap();
            }
            std::fs::write(g.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        };
        let (g, mine) = (r.join("b/node_modules/x/.git"), r.join("a/node_modules/y/.git"));
        repo(&g);
        repo(&mine);
        std::os::unix::fs::symlink(r.join("b/node_modules/x"), r.join("a/lib")).unwrap();
        std::os::unix::fs::symlink("node_modules/y", r.join("a/own")).unwrap();
        let mut kept = Kept::of(&[r.join("a/lib"), r.join("a/own")], scan::Unkept::default());
        let roots = [r.join("a")];
        let look = |kept: &Kept| kept.after_run(i64::MAX, &roots, &|_| false, &|_| false).into_iter().map(|f| (f.git, f.unjudged)).collect::<Vec<_>>();
        for _ in 0..2 {
            assert_eq!(look(&kept), [(g.clone(), Some(Unjudged::Elsewhere))], "every run; its own one, kept read-only, unchanged");
        }
        kept.uncarved.insert(mine.clone());
        assert_eq!(look(&kept), [(g.clone(), Some(Unjudged::Elsewhere)), (mine.clone(), Some(Unjudged::PastTheBound))]);
        assert!(kept.not_enforced()[0].contains("reported after every run"), "{:?}", kept.not_enforced());
    }
}
