//! `after_run` on warm runs: what it looks at when the walk kept most listings, and that what a
//! run makes or renames into place is still reported.

use std::path::{Path, PathBuf};

use super::*;
use crate::planted::scan::{self, WalkSpec};

/// A home with `tools` directories in `~/.config`, two below each, and a project beside them.
fn home(tools: usize) -> (tempfile::TempDir, PathBuf, Watched) {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().canonicalize().unwrap();
    for i in 0..tools {
        for sub in ["a", "b"] {
            std::fs::create_dir_all(home.join(format!(".config/t{i}/{sub}"))).unwrap();
        }
    }
    std::fs::create_dir_all(home.join("work/staged/sub")).unwrap();
    std::fs::write(home.join("work/staged/sub/evil.desktop"), "Exec=x").unwrap();
    let w = Watched { homes: vec![home.clone()], config: vec![home.join(".config")], data: vec![home.join(".local/share")] };
    (t, home, w)
}

/// The walk before a run (aged: its listings hold by the stat rule as by the watcher) and the
/// baseline's time.
fn before(home: &Path) -> (WalkSpec, scan::Index, i64) {
    let spec = WalkSpec { roots: vec![home.to_path_buf()], repositories: true, ..WalkSpec::default() };
    let (_, mut index) = scan::walk_reusing(&spec, None);
    index.age();
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i64;
    (spec, index, since)
}

fn after(w: &Watched, spec: &WalkSpec, prior: &scan::Index, since: i64) -> Found {
    let (_, now) = scan::walk_indexed(spec, Some(prior), since);
    let (skip, not_below) = (|_: &Path| false, |_: &Path| false);
    after_run(w, prior, &now, since, &skip, &not_below)
}

/// Last session's cost: every directory within three levels of `~/.config` was looked at after
/// every run (a few hash look-ups each, 3,000 of them a run), though the walk had kept its listing.
#[test]
fn a_warm_run_that_changed_nothing_looks_at_next_to_nothing() {
    let (_t, home, w) = home(60);
    let (spec, prior, since) = before(&home);
    let found = after(&w, &spec, &prior, since);
    assert!(found.entries.is_empty() && found.cut.is_none(), "{found:?}");
    assert!(found.looked <= 3, "looked at {} directories", found.looked);
}

#[test]
fn a_file_made_three_levels_down_is_reported_and_only_its_directory_looked_at() {
    let (_t, home, w) = home(60);
    let (spec, prior, since) = before(&home);
    std::fs::write(home.join(".config/t5/a/autostart"), "@evil").unwrap();
    let found = after(&w, &spec, &prior, since);
    assert_eq!(found.entries, [home.join(".config/t5/a/autostart")]);
    assert!(found.looked <= 4, "looked at {} directories", found.looked);
}

/// A rename of a whole subtree into place changes only the destination's parent: the subtree's
/// directories are read by the walk as new, their parents' listings as changed.
#[test]
fn a_subtree_renamed_into_place_is_reported() {
    for (dest, reported) in [(".config/t7/a/staged", ".config/t7/a/staged"), (".config/newtool", ".config/newtool"), (".local/share/fish", ".local/share")] {
        let (_t, home, w) = home(20);
        std::fs::create_dir_all(home.join(".local")).unwrap();
        let (spec, prior, since) = before(&home);
        if dest.starts_with(".local/share") {
            std::fs::create_dir(home.join(".local/share")).unwrap();
        }
        std::fs::rename(home.join("work/staged"), home.join(dest)).unwrap();
        let found = after(&w, &spec, &prior, since);
        assert_eq!(found.entries, [home.join(reported)], "{dest}");
    }
}

/// Renamed into a kept directory's subdirectory two levels down, the destination's own listing
/// changes and nothing else in `~/.config` does.
#[test]
fn a_subtree_renamed_over_an_empty_directory_is_reported() {
    let (_t, home, w) = home(20);
    let (spec, prior, since) = before(&home);
    std::fs::rename(home.join("work/staged"), home.join(".config/t3/b")).unwrap();
    let found = after(&w, &spec, &prior, since);
    assert_eq!(found.entries, [home.join(".config/t3/b")]);
}
