//! The walk with a watcher (inotify): what it skips, what it still sees, and that it finds what a
//! walk without one finds.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;

const NAMES: [&str; 2] = [".envrc", ".vscode"];

fn spec(root: &Path) -> WalkSpec {
    WalkSpec { roots: vec![root.to_path_buf()], skip: vec![], names: NAMES.iter().map(|s| s.to_string()).collect(), repositories: true, fold_case: false }
}

/// A root one level below the temporary directory (so that a test can move the root's parent).
fn root() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap().join("ws");
    std::fs::create_dir(&r).unwrap();
    (t, r)
}

fn watcher(cap: usize) -> Arc<Watcher> {
    Watcher::new(cap).expect("inotify is available on the test machine")
}

fn watched(s: &WalkSpec, prior: Option<&Index>, w: &Arc<Watcher>) -> (Found, Index) {
    walk_with(s, prior, true, Some(w))
}

/// What a walk reports, in an order that does not depend on which directories were kept.
fn seen(f: &Found) -> (Vec<PathBuf>, Vec<PathBuf>, bool) {
    let (mut git, mut named) = (f.git_entries.clone(), f.named.clone());
    git.sort();
    named.sort();
    (git, named, f.truncated)
}

fn fresh(s: &WalkSpec) -> (Vec<PathBuf>, Vec<PathBuf>, bool) {
    seen(&walk_with(s, None, true, None).0)
}

fn mkdirs(r: &Path, dirs: &[&str]) {
    for d in dirs {
        std::fs::create_dir_all(r.join(d)).unwrap();
    }
}

#[test]
fn nothing_changed_nothing_read_and_nothing_looked_at_but_the_root() {
    let _table = crate::test_mount_table::unchanged();
    let (_t, r) = root();
    mkdirs(&r, &["a/b/c/.git", "x/y"]);
    std::fs::write(r.join("a/.envrc"), "x").unwrap();
    let s = spec(&r);
    let w = watcher(100);
    let (first, index) = watched(&s, None, &w);
    assert_eq!((first.dirs_read, w.watch_count()), (6, 6), "root, a, b, c, x, y read and watched");
    let (again, index2) = watched(&s, Some(&index), &w);
    assert_eq!((again.dirs_read, again.dirs_checked), (0, 1), "only the root's path is lstat'ed");
    assert_eq!(seen(&again), seen(&first), "kept directories are reported");
    let (after, _) = walk_with(&s, Some(&index2), false, Some(&w));
    assert_eq!((after.dirs_read, after.git_entries.len(), after.named.len()), (0, 0, 0), "the walk after a run reports only what changed");
}

#[test]
fn changes_are_seen() {
    let _table = crate::test_mount_table::unchanged();
    let (_t, r) = root();
    mkdirs(&r, &["a/b/c", "x/y", "p/k/m", "q/k/m", "s/t"]);
    std::fs::write(r.join("a/.envrc"), "x").unwrap();
    std::fs::write(r.join("p/k/m/.envrc"), "x").unwrap();
    std::fs::create_dir(r.join("q/k/m/.git")).unwrap();
    let s = spec(&r);
    let w = watcher(100);
    let (_, mut index) = watched(&s, None, &w);
    let mut step = |what: &str, reads: usize| {
        let (found, next) = watched(&s, Some(&index), &w);
        assert_eq!(seen(&found), fresh(&s), "{what}");
        assert_eq!(found.dirs_read, reads, "{what}: directories read");
        index = next;
        found
    };

    mkdirs(&r, &["a/b/c/d/e/.git"]);
    let f = step("a new .git deep down", 3);
    assert!(f.git_entries.contains(&r.join("a/b/c/d/e/.git")));

    std::fs::write(r.join("x/y/.vscode"), "{}").unwrap();
    let f = step("a new protected name", 1);
    assert!(f.named.contains(&r.join("x/y/.vscode")));

    std::fs::remove_file(r.join("a/.envrc")).unwrap();
    let f = step("a removed name", 1);
    assert!(!f.named.contains(&r.join("a/.envrc")));

    std::fs::rename(r.join("a/b"), r.join("a/B")).unwrap();
    let f = step("a renamed directory: a, and the renamed subtree under its new path", 5);
    assert!(f.git_entries.contains(&r.join("a/B/c/d/e/.git")) && !f.git_entries.contains(&r.join("a/b/c/d/e/.git")));

    std::fs::remove_dir_all(r.join("x/y")).unwrap();
    std::os::unix::fs::symlink(r.join("a/B"), r.join("x/y")).unwrap();
    let f = step("a directory replaced by a symlink, not followed", 1);
    assert!(!f.named.contains(&r.join("x/y/.vscode")) && !f.git_entries.iter().any(|g| g.starts_with(r.join("x"))));

    // p and q swap places: p/k and q/k raise no event themselves, but their paths now lead to the
    // other one (caught by the inode number the parents' new listings give).
    std::fs::rename(r.join("p"), r.join("tmp")).unwrap();
    std::fs::rename(r.join("q"), r.join("p")).unwrap();
    std::fs::rename(r.join("tmp"), r.join("q")).unwrap();
    let f = step("two directories swapped", 7);
    assert!(f.git_entries.contains(&r.join("p/k/m/.git")) && f.named.contains(&r.join("q/k/m/.envrc")));

    // The root's parent moved away and another root made: no watch sees that (the root's parents
    // are not watched), the root's lstat does.
    let parent = r.parent().unwrap().to_path_buf();
    let moved = parent.with_extension("old");
    std::fs::rename(&parent, &moved).unwrap();
    std::fs::create_dir_all(r.join("s/.git")).unwrap();
    let f = step("the root replaced", 2);
    assert_eq!(f.git_entries, vec![r.join("s/.git")]);
    std::fs::remove_dir_all(&moved).unwrap();
}

#[test]
fn a_change_between_the_watch_and_the_listing_is_seen() {
    let _table = crate::test_mount_table::unchanged();
    let (_t, r) = root();
    mkdirs(&r, &["x"]);
    let s = spec(&r);
    let w = watcher(100);
    let x = r.join("x");
    let target = x.clone();
    hooks::set(move |step, dir| {
        if dir != target {
            return;
        }
        match step {
            // Before the listing: listed now, and (conservatively) read again next time.
            hooks::Step::Watched => std::fs::create_dir(dir.join(".git")).unwrap(),
            // After it: only the watch can tell.
            hooks::Step::Listed => std::fs::write(dir.join(".envrc"), "x").unwrap(),
        }
    });
    let (first, index) = watched(&s, None, &w);
    hooks::clear();
    assert_eq!((first.git_entries, first.named), (vec![x.join(".git")], vec![]));
    let (again, index) = watched(&s, Some(&index), &w);
    assert_eq!(again.dirs_read, 1, "x is read again");
    assert_eq!(seen(&again), fresh(&s));
    assert_eq!(again.named, vec![x.join(".envrc")]);
    let (quiet, _) = watched(&s, Some(&index), &w);
    assert_eq!(quiet.dirs_read, 0);
}

/// The root, a, a/b, x and x/y, walked once with a watcher of their own.
fn five_watched() -> (tempfile::TempDir, PathBuf, WalkSpec, Arc<Watcher>, Index) {
    let (t, r) = root();
    mkdirs(&r, &["a/b", "x/y"]);
    let s = spec(&r);
    let w = watcher(100);
    let (_, index) = watched(&s, None, &w);
    (t, r, s, w, index)
}

#[test]
fn lost_events_fall_back_to_the_stat_rule_once() {
    let _table = crate::test_mount_table::unchanged();
    let (_t, r, s, w, mut index) = five_watched();
    index.age();
    std::fs::write(r.join("x/.envrc"), "x").unwrap();
    w.lose_queued_events();
    let (found, index) = watched(&s, Some(&index), &w);
    assert_eq!(found.named, vec![r.join("x/.envrc")], "x's ctime tells");
    assert_eq!((found.dirs_read, found.dirs_checked), (1, 5), "every kept directory lstat'ed once, x read");
    let (quiet, index) = watched(&s, Some(&index), &w);
    assert_eq!((quiet.dirs_read, quiet.dirs_checked), (0, 1), "vouched for again");
    std::fs::write(r.join("a/b/.vscode"), "x").unwrap();
    let (found, _) = watched(&s, Some(&index), &w);
    assert_eq!((found.dirs_read, found.named.len()), (1, 2), "and changes are seen again");
}

#[test]
fn a_removed_watch_means_read_again() {
    let _table = crate::test_mount_table::unchanged();
    let (_t, r, s, w, index) = five_watched();
    let x = index.get(&r.join("x")).unwrap();
    w.remove_in_kernel(x.watch.as_ref().unwrap());
    // Not seen by any watch now: only the removal itself tells.
    std::fs::write(r.join("x/.vscode"), "x").unwrap();
    let (found, index) = watched(&s, Some(&index), &w);
    assert_eq!((found.dirs_read, found.named.clone()), (1, vec![r.join("x/.vscode")]));
    assert_eq!(w.watch_count(), 5, "x is watched again");
    std::fs::write(r.join("x/.envrc"), "x").unwrap();
    let (found, _) = watched(&s, Some(&index), &w);
    assert_eq!((found.dirs_read, found.named.len()), (1, 2));
}

#[test]
fn a_cap_of_three_watches_still_walks_everything() {
    let _table = crate::test_mount_table::unchanged();
    let (_t, r) = root();
    mkdirs(&r, &["a/b/c", "d/e", "f", "g/h/i"]);
    let s = spec(&r);
    let w = watcher(3);
    let (first, mut index) = watched(&s, None, &w);
    assert_eq!((first.dirs_read, w.watch_count()), (10, 3));
    index.age(); // the seven unwatched directories keep the stat rule
    let (again, index2) = watched(&s, Some(&index), &w);
    assert_eq!((again.dirs_read, again.dirs_checked), (0, 8), "the root and the seven unwatched directories lstat'ed");
    // Breadth first, the root and two of its subdirectories got the watches.
    let watched_dir = index.dirs.iter().find(|(p, d)| d.watch.is_some() && p.to_path_buf() != r).map(|(p, _)| p.to_path_buf()).unwrap();
    let unwatched_dir = index.dirs.iter().find(|(_, d)| d.watch.is_none()).map(|(p, _)| p.to_path_buf()).unwrap();
    std::fs::write(watched_dir.join(".envrc"), "x").unwrap();
    std::fs::create_dir(unwatched_dir.join(".git")).unwrap();
    let (changed, index3) = watched(&s, Some(&index2), &w);
    assert_eq!(seen(&changed), fresh(&s));
    assert_eq!((changed.dirs_read, w.watch_count()), (2, 3));
    // At the cap, a directory read again keeps its watch (the same one: index3 holds it too). A
    // watch goes when no index holds it any more.
    drop((index, index2));
    assert_eq!(w.watch_count(), 3);
    drop(index3);
    assert_eq!(w.watch_count(), 0);
}

/// A small deterministic pseudo-random generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n.max(1)
    }

    fn pick<'a, T>(&mut self, v: &'a [T]) -> Option<&'a T> {
        (!v.is_empty()).then(|| &v[self.below(v.len())])
    }
}

/// The directories below `dir` (not following symlinks, not inside `.git`), in a stable order.
fn dirs_below(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut subdirs: Vec<PathBuf> = entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir()) && e.file_name() != ".git").map(|e| e.path()).collect();
    subdirs.sort();
    for d in subdirs {
        out.push(d.clone());
        dirs_below(&d, out);
    }
}

/// One random change of the kind a command makes: directories made, moved, swapped, removed or
/// replaced by symlinks; `.git` and protected names created and removed.
fn change(r: &Path, rng: &mut Rng, n: usize) {
    let mut dirs = vec![r.to_path_buf()];
    dirs_below(r, &mut dirs);
    let below_root = &dirs[1..];
    let dir = rng.pick(&dirs).unwrap().clone();
    // Mostly additions, so that the tree keeps its size.
    match rng.below(20) {
        0..=5 => drop(std::fs::create_dir(dir.join(format!("d{n}")))),
        6..=10 => {
            let name = [".git", ".envrc", ".vscode", "plain", "node_modules"][rng.below(5)];
            let p = dir.join(name);
            if rng.below(2) == 0 {
                let _ = std::fs::create_dir_all(p.join("inside/.git"));
            } else {
                let _ = std::fs::write(p, "x");
            }
        }
        11..=13 => {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).map(|e| e.flatten().filter(|e| e.file_type().is_ok_and(|t| !t.is_dir())).map(|e| e.path()).collect()).unwrap_or_default();
            files.sort();
            if let Some(f) = rng.pick(&files) {
                let _ = std::fs::remove_file(f);
            }
        }
        14 | 15 => {
            let Some(from) = rng.pick(below_root).cloned() else { return };
            let to_parent = rng.pick(&dirs).unwrap().clone();
            if !to_parent.starts_with(&from) {
                let _ = std::fs::rename(&from, to_parent.join(format!("m{n}")));
            }
        }
        16 => {
            let Some(d) = rng.pick(below_root).cloned() else { return };
            let _ = std::fs::remove_dir_all(&d);
            let _ = std::os::unix::fs::symlink(r, &d);
        }
        17 => {
            if let Some(d) = rng.pick(below_root) {
                let _ = std::fs::remove_dir_all(d);
            }
        }
        _ => {
            let (Some(a), Some(b)) = (rng.pick(below_root).cloned(), rng.pick(below_root).cloned()) else { return };
            if !a.starts_with(&b) && !b.starts_with(&a) {
                let tmp = r.join(format!("swap{n}"));
                let _ = std::fs::rename(&a, &tmp).and_then(|_| std::fs::rename(&b, &a)).and_then(|_| std::fs::rename(&tmp, &b));
            }
        }
    }
}

/// A root holding 4 × 4 × 3 directories after 40 random changes; its spec; the generator.
fn random_area(seed: u64) -> (tempfile::TempDir, PathBuf, WalkSpec, Rng) {
    let (t, r) = root();
    for a in 0..4 {
        for b in 0..4 {
            mkdirs(&r, &[&format!("a{a}/b{b}/c0"), &format!("a{a}/b{b}/c1"), &format!("a{a}/b{b}/c2")]);
        }
    }
    let mut rng = Rng(seed);
    for i in 0..40 {
        change(&r, &mut rng, i);
    }
    let s = spec(&r);
    (t, r, s, rng)
}

#[test]
fn with_and_without_a_watcher_the_walks_find_the_same_as_a_fresh_walk() {
    let _table = crate::test_mount_table::unchanged();
    let (_t, r, s, mut rng) = random_area(0x5eed_1234_abcd_0001);
    let w = watcher(1000);
    let small = watcher(5);
    let (_, mut with_watcher) = watched(&s, None, &w);
    let (_, mut capped) = watched(&s, None, &small);
    let (_, mut without) = walk_with(&s, None, true, None);
    let mut reads = (0, 0);
    for round in 0..50 {
        for k in 0..1 + rng.below(4) {
            change(&r, &mut rng, 1000 + round * 10 + k);
        }
        let expected = fresh(&s);
        let (a, next) = watched(&s, Some(&with_watcher), &w);
        let (b, next_capped) = watched(&s, Some(&capped), &small);
        let (c, next_without) = walk_with(&s, Some(&without), true, None);
        assert_eq!(seen(&a), expected, "round {round}: with a watcher");
        assert_eq!(seen(&b), expected, "round {round}: with a watcher capped at 5 watches");
        assert_eq!(seen(&c), expected, "round {round}: without a watcher");
        reads.0 += a.dirs_read;
        reads.1 += walk_with(&s, None, true, None).0.dirs_read;
        (with_watcher, capped, without) = (next, next_capped, next_without);
    }
    assert!(reads.0 * 3 < reads.1, "the watcher spares most reads: {} of {}", reads.0, reads.1);
}

#[test]
fn changes_made_while_walking_are_seen_by_the_next_walk() {
    let _table = crate::test_mount_table::unchanged();
    let (_t, r, s, _) = random_area(0x0dd_ba11);
    let w = watcher(1000);
    let (_, mut index) = watched(&s, None, &w);
    for round in 0..20 {
        let root = r.clone();
        let mut thread_rng = Rng(0xfeed + round as u64);
        let changer = std::thread::spawn(move || {
            for k in 0..30 {
                change(&root, &mut thread_rng, 10_000 + round * 100 + k);
            }
        });
        let (_, during) = watched(&s, Some(&index), &w);
        changer.join().unwrap();
        let (after, next) = watched(&s, Some(&during), &w);
        assert_eq!(seen(&after), fresh(&s), "round {round}");
        index = next;
    }
}

#[test]
fn a_quiet_watcher_skips_the_walk_but_not_what_no_watch_vouches_for() {
    let _table = crate::test_mount_table::unchanged();
    let (_t, r) = root();
    mkdirs(&r, &["a/b/c/.git", "x/y", "u/v"]);
    std::fs::write(r.join("x/.envrc"), "x").unwrap();
    let s = spec(&r);
    // Room for four watches: the root and three of its directories by breadth; the rest unwatched.
    let w = watcher(4);
    let (first, mut index) = watched(&s, None, &w);
    assert_eq!(first.dirs_read, 8);
    index.age();
    let (quiet, kept) = watched(&s, Some(&index), &w);
    assert_eq!(seen(&quiet), seen(&first), "everything reported");
    assert_eq!((quiet.dirs_read, quiet.dirs_checked), (0, 5), "the root and the four unwatched directories lstat'ed, nothing else");
    assert!(Arc::ptr_eq(&kept.dirs, &index.dirs), "no walk: the index itself is kept");
    let index = kept;
    // A change no watch sees (in an unwatched directory) still makes a full walk that finds it.
    let unwatched = index.dirs.iter().find(|(p, d)| d.watch.is_none() && p.to_path_buf() != r).map(|(p, _)| p.to_path_buf()).unwrap();
    std::fs::create_dir(unwatched.join(".vscode")).unwrap();
    let (found, index) = watched(&s, Some(&index), &w);
    assert_eq!(seen(&found), fresh(&s));
    assert!(found.named.contains(&unwatched.join(".vscode")));
    // And one a watch sees: an event ends the quiet, and the changed directory is read again.
    std::fs::write(r.join("a/.envrc"), "x").unwrap();
    let (found, _) = watched(&s, Some(&index), &w);
    assert_eq!(seen(&found), fresh(&s));
    assert!(found.dirs_read >= 1, "a was read again");
}

#[test]
fn a_quiet_watcher_still_checks_the_root_itself() {
    let _table = crate::test_mount_table::unchanged();
    let (t, r) = root();
    mkdirs(&r, &["a/.git"]);
    let s = spec(&r);
    let w = watcher(100);
    let (_, index) = watched(&s, None, &w);
    // The root replaced by another directory of the same name (moved from elsewhere): its parent
    // is not watched, so only the root's own inode tells.
    let other = t.path().canonicalize().unwrap().join("other");
    mkdirs(&other, &["b/.git"]);
    std::fs::rename(&r, t.path().join("old")).unwrap();
    std::fs::rename(&other, &r).unwrap();
    let (found, _) = watched(&s, Some(&index), &w);
    assert_eq!(seen(&found), fresh(&s));
    assert_eq!(found.git_entries, vec![r.join("b/.git")]);
}

/// A directory the walk could not open is not watched: what is planted in it raises no event, nor
/// does a `chmod` of it. A watcher that saw nothing since the last walk of the area does not mean
/// nothing changed there: the walk after a run must look at such a directory again (found by an
/// attacker's review: a repository planted in one was never reported).
#[test]
fn a_quiet_watcher_does_not_vouch_for_a_directory_the_walk_could_not_open() {
    let _table = crate::test_mount_table::unchanged();
    let (_t, r) = root();
    let (top, names) = crate::planted::tests::past_path_max(&r, 1);
    let s = spec(&r);
    let w = watcher(100);
    let (first, mut index) = watched(&s, None, &w);
    assert!(first.unreadable == vec![top.join(&names[0])], "{} unreadable", first.unreadable.len());
    index.age();
    crate::planted::tests::mkdirs_at(&top, &format!("{}/x/.git/hooks", names[0]));
    let (after, _) = walk_with(&s, Some(&index), false, Some(&w));
    assert!(after.unreadable == vec![top.join(&names[0])], "looked at again, and still not readable: {} unreadable", after.unreadable.len());
}
