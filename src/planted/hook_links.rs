//! Hooks git runs through a link: a hook that is a symlink (`ln -s ../../scripts/pre-commit
//! .git/hooks/pre-commit`, the classic setup), a `.git/hooks` that is one, or a hook file with other
//! names (a hard link). Found by an attacker's review: `.git` and the hooks directories were
//! read-only, but the file git runs was writable through its other path in the work tree; the run
//! rewrote `scripts/pre-commit`, reported nothing, and the host's next `git commit` ran it.
//!
//! What is done with them (`Carver::hook_links`, `hook_risks`): where a symlink leads, as the
//! kernel resolves it from the hooks directory on the host, is kept read-only (or kept absent, when
//! it does not exist yet), in whichever writable root holds it; one that leads into a shared
//! temporary directory is reported too (any process on the host can write there). A hard-linked hook cannot be protected:
//! its other names are unknown (finding them needs a walk that stats every file), and a read-only
//! mount of one name does not protect the inode written through another. The run's result says so
//! (`notEnforced`), and a write to it during the run is reported after it (`hooks-written`).
//!
//! Read with the repository's facts (`repo::facts`) and remembered with them: an unchanged hooks
//! directory costs nothing per run (`armed::with_hooks` watches it).

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use crate::policy::path_walk::Unjudged;

/// At most this many entries of one hooks directory are looked at (a hooks directory holds a few
/// dozen); past them, the result says the rest was not (`notEnforced`).
pub const MAX_ENTRIES: usize = 256;

/// What a repository's hooks directories hold that leads elsewhere.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HookLinks {
    /// A git directory's `hooks` that is a symlink: protected as a `core.hooksPath` is.
    pub linked_dirs: Vec<PathBuf>,
    /// Hooks that are symlinks, each with where it leads on the host (`led_to`).
    pub symlinks: Vec<(PathBuf, PathBuf)>,
    /// Hooks that are symlinks whose way is past `path_walk`'s bounds, or goes through a symlink of
    /// /proc (which leads wherever the process following it is: git's, not this one): where they
    /// lead could not be judged (nor kept read-only).
    pub unjudged: Vec<PathBuf>,
    /// Hook files with other names (more than one link), with their `(device, inode)`.
    pub hard: Vec<(PathBuf, (u64, u64))>,
    /// Hooks directories with more than `MAX_ENTRIES` entries: those past them were not looked at.
    pub unlisted: Vec<PathBuf>,
    /// The entries git would run (neither `*.sample` nor a directory), for `repo::facts`'s stat rule
    /// and watches.
    pub entries: Vec<PathBuf>,
}

impl HookLinks {
    /// Nothing leads elsewhere, and every entry was looked at: what `armed` can vouch for.
    pub fn is_plain(&self) -> bool {
        self.linked_dirs.is_empty() && self.symlinks.is_empty() && self.unjudged.is_empty() && self.hard.is_empty() && self.unlisted.is_empty()
    }
}

/// The hooks directories of a repository whose git directories are `git_dirs` and whose configured
/// hooks directories are `hooks` (`repo::hooks_dirs`): each git directory's `hooks`, then those.
/// Absolute, possibly missing.
pub fn dirs(git_dirs: &[PathBuf], hooks: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = git_dirs.iter().map(|d| d.join("hooks")).collect();
    out.extend(hooks.iter().filter(|h| !out.contains(h)).cloned().collect::<Vec<_>>());
    out
}

/// What the hooks directories (`dirs`) of a repository whose git directories are `git_dirs` hold.
pub fn read(git_dirs: &[PathBuf], hooks: &[PathBuf]) -> HookLinks {
    let mut out = HookLinks::default();
    for dir in dirs(git_dirs, hooks) {
        let of_a_git_dir = dir.parent().is_some_and(|d| git_dirs.iter().any(|g| g == d));
        if of_a_git_dir && dir.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
            out.linked_dirs.push(dir.clone());
        }
        list(&dir, &mut out);
    }
    out
}

/// One hooks directory's entries (through a symlink to it: git follows it too), at most `MAX_ENTRIES`.
fn list(dir: &Path, out: &mut HookLinks) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for (n, e) in entries.flatten().enumerate() {
        if n == MAX_ENTRIES || !crate::policy::path_walk::spend(1) {
            out.unlisted.push(dir.to_path_buf());
            return;
        }
        // git runs no `*.sample` (what `git init` writes), and cannot run a directory.
        let name = e.file_name();
        let Ok(kind) = e.file_type() else { continue };
        if std::os::unix::ffi::OsStrExt::as_bytes(name.as_os_str()).ends_with(b".sample") || kind.is_dir() {
            continue;
        }
        let path = dir.join(&name);
        if kind.is_symlink() {
            if let Ok(target) = std::fs::read_link(&path) {
                match led_to(&path, &target) {
                    Some(to) => out.symlinks.push((path.clone(), to)),
                    None => out.unjudged.push(path.clone()),
                }
            }
        } else if let Some(m) = path.symlink_metadata().ok().filter(|m| m.is_file() && m.nlink() > 1) {
            out.hard.push((path.clone(), (m.dev(), m.ino())));
        }
        out.entries.push(path);
    }
}

/// Where the symlink at `link` (holding `target`) leads on the host, as the kernel resolves it from
/// the link's directory: canonical, or (a target missing yet) its existing part canonical and the
/// rest appended (`resolve`: the link's directory and then its target is the way the kernel goes
/// through the link). `None` when it could not be judged (`path_walk`'s bounds, or through /proc).
pub fn led_to(link: &Path, target: &Path) -> Option<PathBuf> {
    resolve(link, target).ok()
}

/// `target` as the kernel would resolve it from `link`'s directory: the longest part that exists
/// made canonical, the rest appended as written (`..` taken away lexically). A link to a place that
/// does not exist yet is judged by where it will lead (`links`), a hook by where it will run from.
/// An error past `path_walk`'s bounds (a way thousands of components deep, a hostile one), or
/// through a symlink of /proc (`/proc/self/cwd/...`), which this process would follow for itself.
///
/// A `..` that takes the way back out of what does not exist yet returns to a directory that does:
/// what follows is resolved again from there, so a host symlink on it is followed (found by an
/// attacker's review, mode28: a change set's `sub/b.sh -> ../cache/b.sh`, `sub` new in the set and
/// `cache` the host's link into /tmp, was judged as `cache/b.sh` in the workspace and landed).
pub fn resolve(link: &Path, target: &Path) -> Result<PathBuf, Unjudged> {
    // The rounds' walks spend from one budget of `MAX_STEPS` (the caller's, if smaller), which the
    // caller's budget is then charged with: the way's own components were counted, not the
    // symlinks each walk followed again (found by an attacker's review, fix29: `L/x/../` 40 times,
    // `L` leading through 3,600 steps, was walked whole 40 times, 110 ms of CPU per link).
    use crate::policy::path_walk::{left, spend, RunBudget, MAX_STEPS};
    let own = left().map_or(MAX_STEPS, |outer| outer.min(MAX_STEPS));
    let budget = RunBudget::set(own);
    let resolved = rounds(link, target);
    let spent = own - left().unwrap_or(0);
    drop(budget);
    spend(spent);
    resolved
}

/// `resolve`'s rounds, each walk spending from the thread's budget.
fn rounds(link: &Path, target: &Path) -> Result<PathBuf, Unjudged> {
    let mut way = match link.parent() {
        Some(dir) if target.is_relative() => dir.join(target),
        _ => target.to_path_buf(),
    };
    // Each round takes at least one missing component and its `..` off the way's tail, so the
    // rounds are bounded by the target's length (and each walk by `path_walk`'s budget); each
    // walks the whole way again, so what they take up in all is bounded too (`MAX_STEPS`): a
    // target of 800 `x/../` took 800 walks of up to 1,600 components, 73 ms per link, and a run
    // that made 2,000 cost the host 161 s of CPU (found by an attacker's review, lock28).
    let mut taken = 0usize;
    loop {
        taken += way.components().count();
        if taken > crate::policy::path_walk::MAX_STEPS {
            return Err(Unjudged::TooLong);
        }
        // One walk, not one `realpath` per missing component (each reading every prefix again).
        let prefix = crate::policy::path_walk::longest_resolving_within_budget(&way)?;
        let rest: Vec<Component> = way.components().skip(prefix.resolved).collect();
        match lexical_until_back(prefix.canonical, &rest) {
            (out, Some(after)) => way = rest[after..].iter().fold(out, |p, c| p.join(c)),
            (out, None) => return Ok(out),
        }
    }
}

/// `rest` (what does not resolve) appended to `out` as written, each `..` taking one component
/// off; stopped, with the index of what follows, where a `..` has taken off every missing
/// component and more of the way is left: from there on it leads through what exists again.
fn lexical_until_back(mut out: PathBuf, rest: &[Component]) -> (PathBuf, Option<usize>) {
    let mut missing = 0usize;
    for (i, c) in rest.iter().enumerate() {
        match c {
            Component::ParentDir => {
                out.pop();
                if missing > 0 {
                    missing -= 1;
                    if missing == 0 && i + 1 < rest.len() {
                        return (out, Some(i + 1));
                    }
                }
            }
            Component::Normal(n) => {
                out.push(n);
                missing += 1;
            }
            _ => {}
        }
    }
    (out, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_way_back_out_of_what_is_missing_follows_the_links_after_it() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(r.join("elsewhere"), r.join("cache")).unwrap();
        assert_eq!(resolve(&r.join("sub/b.sh"), Path::new("../cache/b.sh")), Ok(r.join("elsewhere/b.sh")));
        assert_eq!(resolve(&r.join("sub/deeper/c.sh"), Path::new("../../cache/c.sh")), Ok(r.join("elsewhere/c.sh")));
        assert_eq!(resolve(&r.join("l"), Path::new("no/such/../../cache/x")), Ok(r.join("elsewhere/x")));
        assert_eq!(resolve(&r.join("l"), Path::new("no/such/../x")), Ok(r.join("no/x")), "still missing: appended");
        assert_eq!(resolve(&r.join("l"), Path::new("no/../../x")), Ok(t.path().canonicalize().unwrap().parent().unwrap().join("x")));
    }

    #[test]
    fn symlinks_hard_links_and_samples() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(r.join("scripts")).unwrap();
        std::fs::write(r.join("scripts/pre-commit"), "#!/bin/sh\n").unwrap();
        std::fs::write(r.join("scripts/pre-push"), "#!/bin/sh\n").unwrap();
        std::fs::write(r.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
        std::fs::write(r.join(".git/hooks/commit-msg"), "#!/bin/sh\n").unwrap();
        std::os::unix::fs::symlink("../../scripts/pre-commit", r.join(".git/hooks/pre-commit")).unwrap();
        std::os::unix::fs::symlink("../../scripts/post-checkout", r.join(".git/hooks/post-checkout")).unwrap();
        std::fs::hard_link(r.join("scripts/pre-push"), r.join(".git/hooks/pre-push")).unwrap();
        let l = read(&[r.join(".git")], &[r.join("missing-hooks")]);
        let mut symlinks = l.symlinks.clone();
        symlinks.sort();
        assert_eq!(symlinks, [(r.join(".git/hooks/post-checkout"), r.join("scripts/post-checkout")), (r.join(".git/hooks/pre-commit"), r.join("scripts/pre-commit"))]);
        assert_eq!(l.hard.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>(), [r.join(".git/hooks/pre-push")]);
        assert_eq!(l.entries.len(), 4, "the sample is not one: {:?}", l.entries);
        assert!(!l.is_plain());
    }

    #[test]
    fn a_linked_hooks_directory_and_the_bound() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::create_dir_all(r.join(".githooks")).unwrap();
        std::os::unix::fs::symlink("../.githooks", r.join(".git/hooks")).unwrap();
        for i in 0..MAX_ENTRIES + 1 {
            std::fs::write(r.join(format!(".githooks/h{i}")), "").unwrap();
        }
        let l = read(&[r.join(".git")], &[]);
        assert_eq!(l.linked_dirs, [r.join(".git/hooks")]);
        assert_eq!(l.unlisted, [r.join(".git/hooks")]);
        assert_eq!(l.entries.len(), MAX_ENTRIES);
    }

    /// Found by an attacker's review: a thousand planted repositories naming hooks directories of
    /// 256 links each made every later run pay seconds of host time. One run's hook checks share a
    /// budget; past it, what is left is said (`unlisted`, `unjudged`), not looked at.
    #[test]
    fn one_run_s_hook_checks_share_a_budget() {
        use crate::policy::path_walk::RunBudget;
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(r.join("scripts")).unwrap();
        for i in 0..20 {
            std::os::unix::fs::symlink(format!("../../scripts/h{i}"), r.join(format!(".git/hooks/h{i}"))).unwrap();
        }
        let whole = read(&[r.join(".git")], &[]);
        assert_eq!((whole.symlinks.len(), whole.unjudged.len(), whole.unlisted.len()), (20, 0, 0), "no budget set: all of it");
        {
            let _budget = RunBudget::set(30);
            let first = read(&[r.join(".git")], &[]);
            assert!(first.symlinks.len() < 20 && !(first.unjudged.is_empty() && first.unlisted.is_empty()), "{first:?}");
            let second = read(&[r.join(".git")], &[]);
            assert_eq!((second.symlinks.len(), second.unlisted.len()), (0, 1), "the budget is the run's, not each repository's: {second:?}");
        }
        assert_eq!(read(&[r.join(".git")], &[]).symlinks.len(), 20, "the budget ends with its run");
    }
}

#[cfg(test)]
mod deep_chain_tests {
    use super::*;

    /// Hooks that are symlinks into a deep chain of directories with a long missing tail (an
    /// attacker's review: `sub/.git/a/a/...` 500 deep, the tail 480 more): each was resolved with one
    /// `realpath` per missing component, each reading every prefix, seconds of host time per hook on
    /// every later run, after the command had exited. Now a walk of each component once.
    /// A repository whose three hooks lead `../` + 300 existing `a/` + `tail`, and the least host
    /// time of three reads and judgings of it (the least: the others waited for a CPU).
    fn deep_chain(tail: &str) -> (tempfile::TempDir, HookLinks, Vec<String>, std::time::Duration) {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join(".git/hooks")).unwrap();
        let depth = 300;
        std::fs::create_dir_all(r.join(".git").join("a/".repeat(depth))).unwrap();
        let target = format!("../{}{tail}", "a/".repeat(depth));
        for h in 0..3 {
            std::os::unix::fs::symlink(&target, r.join(format!(".git/hooks/h{h}"))).unwrap();
        }
        let mut least = std::time::Duration::MAX;
        let mut last = None;
        for _ in 0..3 {
            let started = std::time::Instant::now();
            let links = read(&[r.join(".git")], &[]);
            let mut kept = super::super::hook_risks::Kept::default();
            kept.add(&links, &[r.clone()]);
            let risks: Vec<String> = kept.after_run().iter().map(|h| format!("{h:?}")).collect();
            least = least.min(started.elapsed());
            last = Some((links, risks));
        }
        let (links, risks) = last.unwrap();
        (t, links, risks, least)
    }

    #[test]
    fn hooks_linked_into_a_deep_chain_are_read_in_linear_time() {
        let (missing, tail) = (300, "x/".repeat(300));
        let (t, links, risks, took) = deep_chain(&tail);
        let led = t.path().canonicalize().unwrap().join(".git").join("a/".repeat(300)).join("x/".repeat(missing));
        assert_eq!(links.symlinks.len(), 3);
        assert!(links.symlinks.iter().all(|(_, to)| *to == led), "{:?}", links.symlinks.first());
        assert!(risks.is_empty(), "{risks:?}");
        // Speed as a ratio to the same chain without the missing tail (which the quadratic way
        // resolved in one realpath too), under the same load: a bound of 500 ms failed at 531 ms in
        // a parallel run of the suite beside other builds. The quadratic way took seconds a hook.
        let (_u, _, _, whole) = deep_chain("");
        assert!(took < whole * 10 + std::time::Duration::from_millis(100), "took {took:?}, {whole:?} with no missing tail");
    }

    /// A way past `path_walk`'s bound is not followed: the hook is said to be unjudged.
    #[test]
    fn a_hook_whose_way_is_past_the_bound_is_unjudged() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let hooks = r.join(".git/hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        let winding = "./".repeat(2000);
        std::os::unix::fs::symlink(&winding, hooks.join("w0")).unwrap();
        std::os::unix::fs::symlink(format!("{winding}w0"), hooks.join("w1")).unwrap();
        std::os::unix::fs::symlink(format!("{winding}w1"), hooks.join("w2")).unwrap();
        // The hook's own target is joined to its directory as a path (its `.`s dropped): the links
        // it goes through are looked up one component at a time.
        std::os::unix::fs::symlink(format!("{winding}w2"), hooks.join("w3")).unwrap();
        let links = read(&[r.join(".git")], &[]);
        assert_eq!(links.unjudged, [hooks.join("w3")]);
        assert_eq!(links.symlinks.len(), 3);
        let mut kept = super::super::hook_risks::Kept::default();
        kept.add(&links, &[r.clone()]);
        let said = kept.not_enforced();
        assert!(said.iter().any(|s| s.contains("w3") && s.contains("could not be judged")), "{said:?}");
        assert!(kept.after_run().is_empty());
    }

    /// Found by an attacker's review: a way through /proc (`/proc/self/cwd/...`) was followed from
    /// this process's cwd; git follows it from its own. Unjudged, and said.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_hook_whose_way_goes_through_proc_is_unjudged() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let hooks = r.join(".git/hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        std::os::unix::fs::symlink("/proc/self/cwd/scripts/pre-commit", hooks.join("pre-commit")).unwrap();
        std::os::unix::fs::symlink("/dev/fd/3/pre-push", hooks.join("pre-push")).unwrap();
        let links = read(&[r.join(".git")], &[]);
        let mut unjudged = links.unjudged.clone();
        unjudged.sort();
        let expected = if Path::new("/dev/fd").is_symlink() { vec![hooks.join("pre-commit"), hooks.join("pre-push")] } else { vec![hooks.join("pre-commit")] };
        assert_eq!(unjudged, expected);
        let mut kept = super::super::hook_risks::Kept::default();
        kept.add(&links, &[r.clone()]);
        let said = kept.not_enforced();
        assert!(said.iter().any(|s| s.contains("pre-commit") && s.contains("/proc") && s.contains("could not be judged")), "{said:?}");
    }
}
#[cfg(test)]
mod tests_rounds {
    use super::*;

    /// Found by an attacker's review (lock28): each `..` out of a missing component restarted the
    /// walk with the whole rest of the way (mode28's change), a round per pair: a target of 800
    /// `x/../` (4 KiB) took 800 walks of up to 1,600 components, 73 ms of the host's CPU per link,
    /// spent from no budget; a run that made 2,000 such links cost the host 161 s of CPU (174 s
    /// before its result came), with hostRisks []. The rounds are bounded by the components they
    /// take up in all (`MAX_STEPS`), past which the link is unjudged.
    #[test]
    fn a_way_back_out_of_what_is_missing_again_and_again_is_not_walked_again_and_again() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let target = "x/../".repeat(800) + "y";
        assert_eq!(resolve(&r.join("l"), Path::new(&target)), Err(Unjudged::TooLong));
        assert_eq!(resolve(&r.join("l"), Path::new(&("x/../".repeat(8) + "y"))), Ok(r.join("y")), "a few rounds are still walked");
    }

    /// Found by an attacker's review (fix29): the bound counted the way's own components only, not
    /// what each round's walk took up following the symlinks on it. A link through `L`, a symlink
    /// whose target is 600 `d/../` pairs (1,200 steps), then `x/../` again and again, walked `L`
    /// once a round: 40 rounds of 3,600 steps (`L` three links deep) were judged whole, 110 ms of
    /// the host's CPU per link from no budget; a workspace-write run making 200 such links had
    /// its result 56 s late (22 s of CPU), hostRisks [], where the README says 4,096 components in
    /// all.
    #[test]
    fn the_links_on_a_way_walked_again_and_again_count_toward_the_bound() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir(r.join("d")).unwrap();
        std::os::unix::fs::symlink("d/../".repeat(600), r.join("L")).unwrap();
        assert_eq!(resolve(&r.join("l"), Path::new("L/y")), Ok(r.join("y")), "one walk through L is judged");
        let target = "L/x/../".repeat(10) + "y";
        assert_eq!(resolve(&r.join("l"), Path::new(&target)), Err(Unjudged::TooLong), "ten walks through L, 12,000 steps");
        // The budget of a caller that has one is spent as before (`RunBudget`).
        let _budget = crate::policy::path_walk::RunBudget::set(100_000);
        assert_eq!(resolve(&r.join("l"), Path::new("L/y")), Ok(r.join("y")));
        let left = crate::policy::path_walk::left().unwrap();
        assert!(left < 100_000 - 1_200, "the caller's budget was spent: {left} left");
    }
}
