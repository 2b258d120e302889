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

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub use super::link_looks::Cut;
use super::link_looks::{Dirs, Stop};
use super::links_via;
use crate::policy::path_walk;
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
    /// The repositories the carver found named through a symlink (`Carver::unwalked_repositories`):
    /// not kept read-only, whose setup would refuse them on every run; said, and reported after
    /// every run, as those past `MAX_CARVED`.
    pub unbound: HashSet<PathBuf>,
    /// Those the look before the run left out, past its budget: not judged after the run either,
    /// said in `notEnforced`.
    unlooked: Option<Cut>,
    /// Those whose way the look before the run could not follow (`Stop::Unfollowed`): kept, looked
    /// at again after the run (and reported then if still so), the first said in `notEnforced`.
    unfollowed: Option<(PathBuf, path_walk::Unjudged)>,
    /// The other links past `scan::MAX_LINKS_VIA`, whose ways were not followed; said in `notEnforced`.
    pub via_unkept: scan::Unkept,
    /// The other links past the budget of following their ways (`links_via`), said in `notEnforced`.
    unsorted: Option<Cut>,
    /// The other links that lead into a `node_modules`, or may (`links_via::Sorted::into`), past
    /// `scan::MAX_LINKS_OUT` with those whose text names one: not judged after the run, said in
    /// `notEnforced` as what they are (found by an attacker's review, rfix24, links_cost.js: 4,000
    /// dangling links were said as "symlinks into node_modules").
    via_unroomed: scan::Unkept,
    /// The budget of each look (`MAX_LOOK_STEPS`).
    steps: usize,
}

/// Steps (components of the links' ways looked up, directories git's discovery looks at from
/// where they lead, each once per look) the look before the run, and again the one after it,
/// take at most. Found by an attacker's review (rfix23, nm_deep_links.js): 1,000 links, each down
/// its own chain of 60 directories in `node_modules`, cost every later run of the workspace a
/// second or more, with nothing said. A link costs its way's components (a dozen or two) and the
/// directories above its target not looked at yet: a thousand ordinary links fit. Past it the
/// links left are not looked at, and the result says so (`notEnforced`, `scan-incomplete`).
/// Then found again (rfix23, after 20,000): within it the same links still cost every later run
/// half a second, each step ~15 µs. A step is now a few `*at` system calls (`link_looks`), and
/// the workspace's way is walked once a look, not once a link: an ordinary link
/// (`lib -> ../node_modules/x/lib`) costs its target's components and the few directories new to
/// the look, under ten steps, so the thousand links the walk keeps (`scan::MAX_LINKS_OUT`) still
/// fit in 10,000, and links a run can plant cost a look ~2 µs a step.
pub const MAX_LOOK_STEPS: usize = 10_000;

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
    /// Named through a symlink, which the run's setup cannot bind (`Kept::unbound`).
    NotCanonical,
    /// In a `node_modules` outside the run's roots (another workspace's): its runs write it.
    Elsewhere,
    /// In a `node_modules` inside the run's roots, unchanged by this run: a run with another cwd
    /// (a monorepo's package, the package itself) writes it, unseen by its walk and this one's.
    OtherRuns,
}

/// What the look after the run found, and where its budget (`MAX_LOOK_STEPS`) cut it.
#[derive(Default)]
pub struct AfterRun {
    pub found: Vec<Found>,
    pub cut: Option<Cut>,
    /// The links whose way cannot be followed now (at most the links kept): reported, not judged.
    pub unfollowed: Vec<(PathBuf, path_walk::Unjudged)>,
    /// The other links (`links_via`) whose ways were past the budget: not judged.
    pub unsorted: Option<Cut>,
}


impl Kept {
    /// `links`: the walk's `links_out`; `unkept`: those past its bound.
    #[cfg(test)]
    pub fn of(links: &[PathBuf], unkept: scan::Unkept) -> Kept {
        Kept::within(links, unkept, MAX_LOOK_STEPS)
    }

    /// The links into `node_modules` the walk found: by their text (`links_out`), and those of the
    /// other links whose way leads there now (`links_via::sort`), kept alike within
    /// `scan::MAX_LINKS_OUT`.
    pub fn of_walk(found: &scan::Found) -> Kept {
        let mut links = found.links_out.clone();
        let mut via_unroomed = scan::Unkept::default();
        let sorted = links_via::sort(&found.links_via, MAX_LOOK_STEPS, &|_| false);
        let room = scan::MAX_LINKS_OUT.saturating_sub(links.len());
        for (i, link) in sorted.into.iter().enumerate() {
            match i < room {
                true => links.push(link.clone()),
                false => via_unroomed.add(link.parent().unwrap_or(Path::new("/")), 1),
            }
        }
        let kept = Kept::within(&links, found.links_out_unkept.clone(), MAX_LOOK_STEPS);
        Kept { via_unkept: found.links_via_unkept.clone(), unsorted: sorted.cut, via_unroomed, ..kept }
    }

    /// `of`, each look taking at most `steps`.
    fn within(links: &[PathBuf], unkept: scan::Unkept, steps: usize) -> Kept {
        let mut dirs = Dirs::new(steps);
        let (mut looked, mut unlooked, mut unfollowed) = (Vec::new(), None, None);
        for (i, link) in links.iter().enumerate() {
            let git = match dirs.leads_to(link) {
                Ok(git) => git,
                Err(Stop::Spent) => {
                    unlooked = Some(Cut { first: link.clone(), count: links.len() - i });
                    break;
                }
                Err(Stop::Unfollowed(why)) => {
                    unfollowed = unfollowed.or(Some((link.clone(), why)));
                    Vec::new()
                }
            };
            looked.push(Before { link: link.clone(), git: git.iter().filter_map(|g| with_id(g)).collect() });
        }
        Kept { links: looked, unkept, uncarved: HashSet::new(), unbound: HashSet::new(), unlooked, unfollowed, via_unkept: scan::Unkept::default(), unsorted: None, via_unroomed: scan::Unkept::default(), steps }
    }

    #[cfg(test)]
    fn with_steps(self, steps: usize) -> Kept {
        Kept { steps, ..self }
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
        if let Some(git) = self.unbound.iter().min() {
            said.push(format!(
                "planted configuration: a symlink leads to a repository the walk does not find, named {} through a symlink \
                 (and {} other such): it is not kept read-only during the run, and is reported after every run \
                 (scan-incomplete): what git runs there may have been changed",
                git.display(),
                self.unbound.len() - 1
            ));
        }
        said.extend(self.unkept_said());
        said.extend(self.via_said());
        if let Some((link, why)) = &self.unfollowed {
            said.push(format!(
                "planted configuration: the symlink into node_modules at {} (and any other such) has a way that {}: where it leads \
                 is not known, so a repository there is not kept read-only; it is reported after every run while so",
                link.display(),
                why.why()
            ));
        }
        if let Some(cut) = &self.unlooked {
            said.push(format!(
                "planted configuration: looking at the symlinks into node_modules took more than {MAX_LOOK_STEPS} steps (components \
                 of their ways, directories git's discovery looks at); the {} from {} on are not judged after the run: a repository \
                 a run plants where one leads is not reported",
                cut.count,
                cut.first.display()
            ));
        }
        said
    }

    /// The other links whose ways were not followed (past `scan::MAX_LINKS_VIA`, or the budget).
    fn via_said(&self) -> Vec<String> {
        let mut said = Vec::new();
        if let Some(area) = &self.via_unkept.first_dir {
            said.push(format!(
                "planted configuration: the walk found more than {} symlinks whose text names no node_modules ({} past them, \
                 the first in {}); whether those past them lead into a node_modules through another link is not known, and they \
                 are not judged after the run: a repository a run plants where one leads is not reported",
                scan::MAX_LINKS_VIA,
                self.via_unkept.count,
                area.display()
            ));
        }
        if let Some(area) = &self.via_unroomed.first_dir {
            said.push(format!(
                "planted configuration: more than {} symlinks are judged after every run; past them, {} whose text names no \
                 node_modules but whose way leads into one now, does not exist whole (a link or directory made later on its missing \
                 part may lead into one) or cannot be followed, the first in {}, are not judged after the run: a repository a \
                 run plants where one leads is not reported",
                scan::MAX_LINKS_OUT,
                self.via_unroomed.count,
                area.display()
            ));
        }
        if let Some(cut) = &self.unsorted {
            said.push(format!(
                "planted configuration: following the ways of the symlinks whose text names no node_modules took more than \
                 {MAX_LOOK_STEPS} steps; whether the {} from {} on lead into a node_modules through another link is not known, \
                 and they are not judged after the run: a repository a run plants where one leads is not reported",
                cut.count,
                cut.first.display()
            ));
        }
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
    /// repository no run keeps read-only, or that runs with another cwd write (`Unjudged`),
    /// whatever changed. Those `judged` already are left out (`detect::links_made`: the run made
    /// them). Not told by the link's own ctime: a link an earlier run made a few milliseconds
    /// before this run's baseline looks made by this one, and was judged by neither (found running
    /// nm_link.js). Within the look's budget (`MAX_LOOK_STEPS`): the links past it are `cut`.
    ///
    /// `via`: the other links the walk after the run found (`scan::Found::links_via`); those not
    /// kept before the run that lead into `node_modules` now are judged as links that led to no
    /// repository before it: a run that replaced a directory on an old link's way (`lib -> sub/d/x`,
    /// `sub/d` made a link into `node_modules`) led it to what it planted there.
    pub fn after_run(&self, since_ns: i64, roots: &[PathBuf], known: &dyn Fn(&Path) -> bool, judged: &dyn Fn(&Path) -> bool, via: &[PathBuf]) -> AfterRun {
        // The shared places found once for every link (each look is a few `lstat`s).
        let shared = links::SharedPlaces::now();
        let judge = Judge { since_ns, roots, shared, uncarved: &self.uncarved, unbound: &self.unbound };
        let mut after = AfterRun::default();
        let mut dirs = Dirs::new(self.steps);
        let kept: HashSet<&Path> = self.links.iter().map(|b| b.link.as_path()).collect();
        let sorted = links_via::sort(via, self.steps, &|l| kept.contains(l) || judged(l));
        after.unsorted = sorted.cut;
        let led: Vec<Before> = sorted.into.into_iter().map(|link| Before { link, git: Vec::new() }).collect();
        let links: Vec<&Before> = self.links.iter().filter(|b| !judged(&b.link)).chain(&led).collect();
        for (i, before) in links.iter().enumerate() {
            let Ok(target) = std::fs::read_link(&before.link) else { continue };
            let leads = match dirs.leads_to(&before.link) {
                Ok(leads) => leads,
                Err(Stop::Spent) => {
                    after.cut = Some(Cut { first: before.link.clone(), count: links.len() - i });
                    break;
                }
                Err(Stop::Unfollowed(why)) => {
                    after.unfollowed.push((before.link.clone(), why));
                    continue;
                }
            };
            let said: Vec<(PathBuf, Option<Unjudged>)> = leads.into_iter().filter(|g| !known(g)).filter_map(|g| judge.of(before, &g).map(|v| (g, v))).collect();
            // The nearest one changed (or unjudged) said; else the nearest other runs could write.
            let Some((git, unjudged)) = said.iter().find(|(_, v)| *v != Some(Unjudged::OtherRuns)).or(said.first()).cloned() else { continue };
            let config = repo::configured(&links::git_dirs_of(&git));
            after.found.push(Found { link: before.link.clone(), target, git, config, unjudged });
        }
        after
    }
}

/// What the look after the run says of a repository a link leads to (`Kept::after_run`).
struct Judge<'a> {
    since_ns: i64,
    roots: &'a [PathBuf],
    shared: links::SharedPlaces,
    uncarved: &'a HashSet<PathBuf>,
    unbound: &'a HashSet<PathBuf>,
}

impl Judge<'_> {
    /// `None`: nothing to say; `Some(None)`: changed since the baseline; `Some(Some(why))`: unjudged.
    fn of(&self, before: &Before, git: &Path) -> Option<Option<Unjudged>> {
        let plantable = self.roots.iter().any(|r| git.starts_with(r)) || self.shared.hold(git, self.roots);
        let in_node_modules = git.components().any(|c| c.as_os_str() == "node_modules");
        if !plantable {
            return in_node_modules.then_some(Some(Unjudged::Elsewhere));
        }
        if self.uncarved.contains(git) {
            return Some(Some(Unjudged::PastTheBound));
        }
        if self.unbound.contains(git) {
            return Some(Some(Unjudged::NotCanonical));
        }
        let same = before.git.iter().any(|(g, id)| g == git && with_id(git).is_some_and(|(_, now)| now == *id));
        if !same || changed_since(git, self.since_ns) {
            return Some(None);
        }
        // Kept read-only by this workspace's runs, not by a run with another cwd (a package of a
        // monorepo, the package itself), whose walk skips `node_modules` and holds no such link:
        // what it planted there before this run's baseline is this run's "before" (found by an
        // attacker's review, rfix23, nm_nested_workspace.js).
        in_node_modules.then_some(Some(Unjudged::OtherRuns))
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
        // Nothing changed: the one there is said all the same (`Unjudged::OtherRuns`).
        let found = kept.after_run(since, &roots, &|_| false, &|_| false, &[]).found;
        let got: Vec<_> = found.iter().map(|f| (f.link.clone(), f.unjudged)).collect();
        assert_eq!(got, [(r.join("other"), Some(Unjudged::OtherRuns))]);
        repo(&r.join("node_modules/x/.git"));
        std::fs::write(r.join("node_modules/x/.git/config"), "[core]\n\tfsmonitor = x\n").unwrap();
        let found = kept.after_run(since, &roots, &|_| false, &|_| false, &[]).found;
        let got: Vec<_> = found.iter().map(|f| (f.link.clone(), f.git.clone(), f.unjudged)).collect();
        assert_eq!(got[0], (r.join("lib"), r.join("node_modules/x/.git"), None), "planted where nothing was");
        assert_eq!(found[0].config.keys, ["core.fsmonitor"]);
        assert!(kept.after_run(since, &roots, &|g| g.starts_with(r.join("node_modules")), &|_| false, &[]).found.is_empty(), "known ones are not judged");
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
        let look = |kept: &Kept| kept.after_run(i64::MAX, &roots, &|_| false, &|_| false, &[]).found.into_iter().map(|f| (f.git, f.unjudged)).collect::<Vec<_>>();
        for _ in 0..2 {
            assert_eq!(look(&kept), [(g.clone(), Some(Unjudged::Elsewhere)), (mine.clone(), Some(Unjudged::OtherRuns))], "every run");
        }
        kept.uncarved.insert(mine.clone());
        assert_eq!(look(&kept), [(g.clone(), Some(Unjudged::Elsewhere)), (mine.clone(), Some(Unjudged::PastTheBound))]);
        assert!(kept.not_enforced()[0].contains("reported after every run"), "{:?}", kept.not_enforced());
    }

    /// Found by an attacker's review (rfix23, nm_nested_workspace.js): `W/lib -> pkg/node_modules/x`;
    /// a run with cwd `W/pkg` planted `x/.git` (its walk skips `node_modules`, no link there), and
    /// W's next run took it as its baseline. A repository found where a link leads, in a
    /// `node_modules` inside the roots, is said after every run too: a run with another cwd writes
    /// it unseen. One this run planted or changed is `git-directory-created` as before.
    #[test]
    fn a_repository_in_node_modules_a_run_with_another_cwd_planted_is_said_by_every_later_run() {
        let t = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
        let w = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(w.join("pkg/node_modules/x")).unwrap();
        std::os::unix::fs::symlink("pkg/node_modules/x", w.join("lib")).unwrap();
        let roots = [w.clone()];
        let look = || {
            let kept = Kept::of(&[w.join("lib")], scan::Unkept::default());
            kept.after_run(i64::MAX, &roots, &|_| false, &|_| false, &[]).found.into_iter().map(|f| (f.git, f.unjudged)).collect::<Vec<_>>()
        };
        assert_eq!(look(), [], "nothing there");
        // The run in W/pkg, between W's runs.
        let g = w.join("pkg/node_modules/x/.git");
        for d in ["objects", "refs"] {
            std::fs::create_dir_all(g.join(d)).unwrap();
        }
        std::fs::write(g.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        for _ in 0..2 {
            assert_eq!(look(), [(g.clone(), Some(Unjudged::OtherRuns))], "W's next runs, whose baseline holds it");
        }
    }

    /// Found by an attacker's review (rfix23, nm_deep_links.js): 1,000 links, each down its own
    /// chain of 60 directories, cost every later run a second. A look takes at most `steps`; the
    /// links past them are not looked at, and the result says so.
    #[test]
    fn links_past_the_budget_of_a_look_are_not_looked_at_and_said() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let chain = ["d"; 20].join("/");
        let links: Vec<PathBuf> = (0..4).map(|i| r.join(format!("l{i}"))).collect();
        for (i, l) in links.iter().enumerate() {
            std::fs::create_dir_all(r.join(format!("node_modules/p{i}/{chain}"))).unwrap();
            std::os::unix::fs::symlink(format!("node_modules/p{i}/{chain}"), l).unwrap();
        }
        // A link costs its way's components (`rc + 21`) and discovery's new directories (21); the
        // first one the directories above `node_modules` too (`rc + 1`). Half a link's more.
        let rc = r.components().count();
        let steps = |n: usize| n * (rc + 42) + rc + 1 + (rc + 42) / 2;
        let all = Kept::within(&links, scan::Unkept::default(), steps(4));
        assert!(all.not_enforced().is_empty(), "{:?}", all.not_enforced());
        let kept = Kept::within(&links, scan::Unkept::default(), steps(2));
        let said = kept.not_enforced().join("\n");
        assert!(said.contains("not judged after the run") && said.contains(&links[2].display().to_string()), "{said}");
        assert_eq!(kept.links.len(), 2, "only those looked at are kept");
        // After the run: what the budget left out is said, once, at the first link past it.
        let cut = Kept::within(&links, scan::Unkept::default(), steps(4)).with_steps(steps(1));
        let after = cut.after_run(i64::MAX, &[r.clone()], &|_| false, &|_| false, &[]);
        assert!(after.found.is_empty());
        assert_eq!(after.cut, Some(Cut { first: links[1].clone(), count: 3 }));
    }

    /// Found by an attacker's review (rfix23b, nm_long_way.js): a link whose way is longer than
    /// `path_walk::MAX_STEPS` (three links of 1,900 `./` each, which the kernel follows) led, for
    /// the look, nowhere, and the repository a run planted there was never said. Now it is said
    /// before the run and reported after it, while its way cannot be followed.
    #[test]
    fn a_link_whose_way_cannot_be_followed_is_said_and_reported_not_taken_for_leading_nowhere() {
        let t = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
        let w = t.path().canonicalize().unwrap();
        let nm = w.join("node_modules");
        std::fs::create_dir_all(nm.join("real/x/.git/hooks")).unwrap();
        std::fs::create_dir_all(nm.join("real/x/.git/objects")).unwrap();
        std::fs::create_dir_all(nm.join("real/x/.git/refs")).unwrap();
        std::fs::write(nm.join("real/x/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let dots = "./".repeat(1_900);
        std::os::unix::fs::symlink(format!("{dots}real"), nm.join("s1")).unwrap();
        std::os::unix::fs::symlink(format!("{dots}s1"), nm.join("s2")).unwrap();
        std::os::unix::fs::symlink(format!("{dots}s2"), nm.join("s3")).unwrap();
        std::os::unix::fs::symlink("s3/x", nm.join("x")).unwrap();
        assert!(nm.join("x/.git/HEAD").exists(), "the kernel follows the way");
        let link = w.join("lib");
        std::os::unix::fs::symlink("node_modules/x", &link).unwrap();
        let kept = Kept::of(std::slice::from_ref(&link), scan::Unkept::default());
        let said = kept.not_enforced().join("\n");
        assert!(said.contains(&link.display().to_string()) && said.contains("longer than"), "{said}");
        let after = kept.after_run(i64::MAX, &[w.clone()], &|_| false, &|_| false, &[]);
        assert_eq!(after.unfollowed, vec![(link.clone(), path_walk::Unjudged::TooLong)]);
        assert_eq!(after.cut, None);
    }

    /// Found by an attacker's review (rfix24, chain_dos.js): `a0 -> .`, `a1 -> a0` ... `a9 -> a8`,
    /// and `l0 -> a9/a9/a9/a9/a9/a9/a9/x0`, more than `path_walk::MAX_LINKS` hops. The walk stopped
    /// at the hop bound and appended the rest as written: `ws/a9/a9/a9/.git` (symlinks on it) was
    /// taken for a repository to keep read-only, and every later run's setup refused it. A way
    /// that stops on the hop bound is not followed, as one too long: said, reported, never carved.
    #[test]
    fn a_link_whose_way_takes_more_hops_than_the_kernel_s_is_unfollowed_not_taken_as_written() {
        let t = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
        let w = t.path().canonicalize().unwrap();
        for d in [".git/objects", ".git/refs"] {
            std::fs::create_dir_all(w.join(d)).unwrap();
        }
        std::fs::write(w.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::os::unix::fs::symlink(".", w.join("a0")).unwrap();
        for i in 1..10 {
            std::os::unix::fs::symlink(format!("a{}", i - 1), w.join(format!("a{i}"))).unwrap();
        }
        let link = w.join("l0");
        std::os::unix::fs::symlink(format!("{}/node_modules/x0", ["a9"; 7].join("/")), &link).unwrap();
        let kept = Kept::of(std::slice::from_ref(&link), scan::Unkept::default());
        let gits: Vec<_> = kept.repositories().collect();
        assert!(gits.is_empty(), "nothing to carve through symlinks: {gits:?}");
        let said = kept.not_enforced().join("\n");
        assert!(said.contains(&link.display().to_string()) && said.contains("more than 40 symlinks"), "{said}");
        let after = kept.after_run(i64::MAX, &[w.clone()], &|_| false, &|_| false, &[]);
        assert_eq!(after.unfollowed, vec![(link.clone(), path_walk::Unjudged::TooManyLinks)]);
        assert!(after.found.is_empty());
        // The same link whose text names no node_modules (`links_via`): kept, as one not followed.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(format!("{}/x0", ["a9"; 7].join("/")), &link).unwrap();
        let sorted = super::links_via::sort(std::slice::from_ref(&link), MAX_LOOK_STEPS, &|_| false);
        assert_eq!(sorted.into, [link.clone()]);
        assert!(Kept::of(&sorted.into, scan::Unkept::default()).repositories().next().is_none());
    }

    /// Found fixing rfix24 (chain_dos.js): the part of a way past a missing name was appended as
    /// written, `..` taken away lexically, so `missing/../sub` named `ws/sub`, a symlink, and
    /// discovery through it a "repository" at `ws/sub/.git` whose setup fails on every later run.
    /// Every repository a look gives the carver is canonical.
    #[test]
    fn a_way_past_a_missing_name_never_gives_a_repository_through_a_symlink() {
        let t = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
        let w = t.path().canonicalize().unwrap();
        let g = w.join("node_modules/p/.git");
        for d in ["objects", "refs"] {
            std::fs::create_dir_all(g.join(d)).unwrap();
        }
        std::fs::write(g.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::os::unix::fs::symlink("node_modules/p", w.join("sub")).unwrap();
        let links: Vec<PathBuf> = ["missing/../sub", "missing/../sub/node_modules/x", "sub/missing/../../sub"]
            .iter()
            .enumerate()
            .map(|(i, to)| {
                let l = w.join(format!("l{i}"));
                std::os::unix::fs::symlink(to, &l).unwrap();
                l
            })
            .collect();
        let kept = Kept::of(&links, scan::Unkept::default());
        for git in kept.repositories() {
            assert_eq!(git.canonicalize().ok().as_deref(), Some(git), "canonical");
        }
    }

    /// Found by an attacker's review (rfix24, links_cost.js): 4,000 dangling links (`l$i ->
    /// nothing/here/$i`), kept because their way does not exist whole, made `notEnforced` say "more
    /// than 1000 symlinks into node_modules": none names or leads into one. Said as what they are.
    #[test]
    fn links_past_the_bound_whose_text_names_no_node_modules_are_said_as_what_they_are() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let n = scan::MAX_LINKS_OUT + 3;
        let links_via: Vec<PathBuf> = (0..n).map(|i| r.join(format!("l{i}"))).collect();
        for (i, l) in links_via.iter().enumerate() {
            std::os::unix::fs::symlink(format!("nothing/here/{i}"), l).unwrap();
        }
        let found = scan::Found { links_via, ..Default::default() };
        let kept = Kept::of_walk(&found);
        let said = kept.not_enforced().join("\n");
        assert!(!said.contains("symlinks into node_modules"), "{said}");
        assert!(said.contains("whose text names no node_modules") && said.contains("past them, 3 whose") && said.contains("does not exist whole"), "{said}");
    }

    /// Found by an attacker's review (rfix23, nm_deep_links.js, again after the budget): a look
    /// resolved each link's way from `/` (the key of its cache, the link's directory and its
    /// target's, differed for every link), and each step cost time in the depth of the way. Now
    /// the workspace's way is walked once a look, and a link spends its target's components and
    /// the directories new to the look: ten links, each `../node_modules/pN/d/d` from a workspace
    /// 100 directories deep, fit in what the first costs and eight steps each.
    #[test]
    fn a_look_spends_on_each_link_its_own_way_not_the_workspace_s_again() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap().join(["w"; 100].join("/"));
        std::fs::create_dir_all(r.join("links")).unwrap();
        let links: Vec<PathBuf> = (0..10).map(|i| r.join(format!("links/l{i}"))).collect();
        for (i, l) in links.iter().enumerate() {
            std::fs::create_dir_all(r.join(format!("node_modules/p{i}/d/d"))).unwrap();
            std::os::unix::fs::symlink(format!("../node_modules/p{i}/d/d"), l).unwrap();
        }
        // The first: `r/links` walked (`rc + 1` components, `rc` directories entered), its way (5
        // components, 4 directories new: `node_modules`, `p0`, `d`, `d`) and `/` for discovery.
        // Each later one: 5 components, 3 directories (`pN`, `d`, `d`).
        let rc = r.components().count();
        let first = 2 * rc + 1 + 5 + 4 + 1;
        let kept = Kept::within(&links, scan::Unkept::default(), first + 9 * 8);
        assert!(kept.not_enforced().is_empty(), "{:?}", kept.not_enforced());
        assert_eq!(kept.links.len(), 10);
        let short = Kept::within(&links, scan::Unkept::default(), first + 9 * 8 - 1);
        assert_eq!(short.unlooked, Some(Cut { first: links[9].clone(), count: 1 }), "a step short: the last one left out");
    }
}
