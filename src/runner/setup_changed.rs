//! bwrap stopped during its setup at a path the plan named that another process has removed or
//! replaced since the plan: the workspace changed, and the run is planned again from what is there.
//!
//! Since bwrap starts while the host walks and plans (`overlap`), a removal or swap can land in the
//! middle of bwrap's setup, between its looks at one path, and bwrap dies in words that depend on
//! the step and its version (0.8, a distribution's, says `/oldroot/P` and `/newroot/P`; the bundled
//! 0.12 says `P`): "Can't find source path P", "Can't open source P", "Can't get type of source P",
//! "Can't mkdir parents for P", "Can't mkdir P", "Can't create file [at] P", "Can't get type of
//! dest P", "Can't mount on symlink destination P", "Destination is not a directory P", "Can't bind
//! mount S on D: ...", "Can't remount readonly on D: ...", "Can't mount tmpfs on D: ...", "Can't
//! reopen D", "Unable to open lock file P", "Can't chdir to P" (every die of bubblewrap.c's
//! `setup_newroot`, `resolve_symlinks_in_ops`, the lock files and the chdir). The words are not
//! read: the line must name one of the plan's paths as a whole word, and that path must have
//! changed, which the host checks itself.

use std::io;
use std::path::Path;

use crate::error::SandboxError;
use crate::policy::WritableRoot;

/// The error of a changed workspace when bwrap's one line `stderr` names a path of `planned` (the
/// plan's arguments) that is gone now, or, at or under one of `roots`, reached through a symlink
/// now; or when a root is no longer the directory the policy resolved (renamed away and made
/// again, or a link now), whatever the line names. `None` for any other failure: a path that is
/// there as planned (bwrap failed for another reason, said as a setup failure in its words), or
/// anything besides bwrap's one line (a command that ran could print the same words, and planning
/// again would run it twice). A wrong match only plans the run again, from what is there then.
pub(super) fn changed(stderr: &str, planned: &[String], roots: &[WritableRoot]) -> Option<SandboxError> {
    let mut lines = stderr.trim().lines();
    let (only, None) = (lines.next()?, lines.next()) else { return None };
    let said = only.strip_prefix("bwrap: ")?;
    let named = |arg: &&String| arg.starts_with('/') && names(said, arg);
    let path = planned.iter().filter(named).max_by_key(|arg| arg.len());
    // A root swapped before bwrap resolved its sources has bwrap name where the link led.
    let what = path.and_then(|p| how_changed(Path::new(p), roots)).or_else(|| replaced_root(roots))?;
    let why = format!("the workspace changed while the sandbox was set up (another process renamed or removed what it protects): {what} since the sandbox was planned");
    Some(SandboxError::setup_failed(format!("sandbox setup failed before the command ran: {why}"), stderr.trim()))
}

/// How `path` differs from the plan, if it does (see `changed`).
fn how_changed(path: &Path, roots: &[WritableRoot]) -> Option<String> {
    if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) {
        return Some(format!("{} was removed", path.display()));
    }
    // Inside a writable root every planned path is canonical (the root, its pins, the cwd), so a
    // link on one is a swap (a concurrent run can rename in its own writable root); outside them
    // a planned path may lead through an administrator's link, and a run cannot change it.
    if roots.iter().any(|r| path.starts_with(&r.root)) {
        if let Some(link) = crate::no_symlinks::any_link_on(path) {
            return Some(format!("{} is a symlink now", link.display()));
        }
    }
    None
}

/// The first of `roots` that is not the directory the policy resolved any more.
fn replaced_root(roots: &[WritableRoot]) -> Option<String> {
    let replaced = roots.iter().find(|r| r.id.is_some_and(|id| crate::no_symlinks::identity(&r.root).ok() != Some(id)))?;
    Some(format!("the writable root {} was replaced", replaced.root.display()))
}

/// Whether bwrap's line `said` names `path` as a whole word: after a blank, and before ": ", a
/// blank or the line's end ("Can't mount on symlink destination P"), as the host's path or inside
/// bwrap's new or old root (`/newroot/P`, `/oldroot/P`: bwrap 0.8's words).
fn names(said: &str, path: &str) -> bool {
    ["", "/newroot", "/oldroot"].iter().any(|root| {
        let whole = format!("{root}{path}");
        said.match_indices(whole.as_str()).any(|(at, _)| {
            let after = &said[at + whole.len()..];
            said[..at].ends_with(' ') && (after.is_empty() || after.starts_with(": ") || after.starts_with(' '))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::changed;
    use crate::policy::WritableRoot;
    use std::path::{Path, PathBuf};

    /// Every line of bwrap's setup that names a path it was to mount, make or enter: 0.12's (the
    /// bundled one, `P` as given) then 0.8's (a distribution's, `/oldroot/P` and `/newroot/P`).
    /// `{P}` is the path; the tail is what bwrap adds after it.
    const LINES: &[&str] = &[
        "Can't find source path {P}: No such file or directory",
        "Can't open source {P}: No such file or directory",
        "Can't get type of source {P}: No such file or directory",
        "Can't mkdir parents for {P}: Read-only file system",
        "Can't create file {P}: Read-only file system",
        "Can't get type of dest {P}: No such file or directory",
        "Can't mount on symlink destination {P}",
        "Destination is not a directory {P}",
        "Destination is not a file {P}",
        "Can't bind mount {P} on {P}: Unable to mount source on destination: No such file or directory",
        "Can't bind mount {P} on {P}: Unable to find \"/newroot{P}\" in mount table",
        "Can't bind mount {P} on {P}: Unable to remount destination \"/newroot{P}\" with correct flags: No such file or directory",
        "Can't bind mount {P} on {P}: readlink(/proc/self/fd/N) for \"/proc/self/fd/7\": No such file or directory",
        "Can't bind mount tmpfile on {P}: Unable to mount source on destination: No such file or directory",
        "Can't remount readonly on {P}: Unable to find \"/newroot{P}\" in mount table",
        "Can't mount tmpfs on {P}: No such file or directory",
        "Can't reopen {P}: No such file or directory",
        "Unable to open lock file {P}: No such file or directory",
        "Can't chdir to {P}: No such file or directory",
        // 0.8
        "Can't mkdir {P}: Read-only file system",
        "Can't create file at {P}: Read-only file system",
        "Can't bind mount /oldroot{P} on /newroot{P}: Unable to mount source on destination: No such file or directory",
        "Can't bind mount /oldroot{P} on /newroot{P}: realpath(destination): No such file or directory",
        "Can't bind mount /oldroot{P} on /newroot{P}: open(\"/newroot{P}\", O_PATH): No such file or directory",
        "Can't bind mount /oldroot{P} on /newroot{P}: Unable to apply mount flags: remount \"/newroot{P}/sub\": Invalid argument",
        "Can't bind mount /bindfileAbC123 on /newroot{P}: Unable to mount source on destination: No such file or directory",
        "Can't remount readonly on /newroot{P}: Unable to find \"/newroot{P}\" in mount table",
        "Can't remount readonly on /newroot{P}: realpath(destination): No such file or directory",
        "Can't mount tmpfs on /newroot{P}: No such file or directory",
    ];

    fn line(template: &str, p: &Path) -> String {
        format!("bwrap: {}\n", template.replace("{P}", &p.display().to_string()))
    }

    fn plan(p: &Path) -> Vec<String> {
        ["--ro-bind", "/", "/", "--bind", &p.display().to_string(), &p.display().to_string(), "--chdir", "/"].map(str::to_string).to_vec()
    }

    fn root(dir: &Path) -> WritableRoot {
        WritableRoot { root: dir.to_path_buf(), read_only: Vec::new(), missing_read_only: Vec::new(), id: crate::no_symlinks::identity(dir).ok() }
    }

    fn scratch() -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().canonicalize().unwrap();
        (t, p)
    }

    #[test]
    fn each_line_of_bwrap_s_setup_naming_a_removed_path_plans_again() {
        let (_t, top) = scratch();
        let gone = top.join("store");
        for template in LINES {
            let e = changed(&line(template, &gone), &plan(&gone), &[]).unwrap_or_else(|| panic!("not planned again: {template}"));
            assert!(e.message.contains("was removed since the sandbox was planned"), "{template}: {}", e.message);
        }
    }

    #[test]
    fn each_line_naming_a_path_of_a_writable_root_swapped_for_a_link_plans_again() {
        let (_t, top) = scratch();
        let (_o, other) = scratch();
        std::fs::create_dir_all(top.join("a/bin")).unwrap();
        let roots = [root(&top.join("a/bin"))];
        // A directory above the root, then the root itself, moved aside and made a link.
        std::fs::rename(top.join("a"), top.join("a.real")).unwrap();
        std::os::unix::fs::symlink(&other, top.join("a")).unwrap();
        std::fs::create_dir(other.join("bin")).unwrap();
        for template in LINES {
            let e = changed(&line(template, &top.join("a/bin")), &plan(&top.join("a/bin")), &roots).unwrap_or_else(|| panic!("not planned again: {template}"));
            assert!(e.message.contains(&format!("{} is a symlink now", top.join("a").display())), "{template}: {}", e.message);
        }
    }

    #[test]
    fn a_writable_root_moved_aside_and_made_again_plans_again_whatever_path_the_line_names() {
        let (_t, top) = scratch();
        std::fs::create_dir(top.join("ws")).unwrap();
        let roots = [root(&top.join("ws"))];
        std::fs::rename(top.join("ws"), top.join("ws.real")).unwrap();
        std::fs::create_dir(top.join("ws")).unwrap();
        let e = changed(&line(LINES[0], &top.join("ws")), &plan(&top.join("ws")), &roots).expect("planned again");
        assert!(e.message.contains("the writable root") && e.message.contains("was replaced"), "{}", e.message);
        // bwrap resolved the root's source where a link led then: it names that path, not the plan's.
        let e = changed(&line(LINES[2], &top.join("elsewhere")), &plan(&top.join("ws")), &roots).expect("planned again");
        assert!(e.message.contains("was replaced"), "{}", e.message);
        // The same root as planned: a setup failure in bwrap's words.
        assert!(changed(&line(LINES[0], &top.join("ws.real")), &plan(&top.join("ws.real")), &[root(&top.join("ws.real"))]).is_none());
    }

    #[test]
    fn a_path_that_is_there_as_planned_or_not_the_plan_s_or_more_than_bwrap_s_line_is_a_setup_failure() {
        let (_t, top) = scratch();
        let gone = top.join("store");
        let there = top.clone();
        let roots = [root(&top)];
        for template in LINES {
            assert!(changed(&line(template, &there), &plan(&there), &roots).is_none(), "{template}");
        }
        // Outside the writable roots a planned path may lead through a link (an administrator's).
        std::os::unix::fs::symlink(&top, top.join("link")).unwrap();
        assert!(changed(&line(LINES[0], &top.join("link")), &plan(&top.join("link")), &[]).is_none());
        // A path the plan did not name, or only the end or the start of one it named.
        assert!(changed(&line(LINES[0], &gone.join("x")), &plan(&gone), &[]).is_none());
        assert!(changed(&line(LINES[0], Path::new("/nonexistent/x/store")), &plan(Path::new("/store")), &[]).is_none());
        assert!(changed(&format!("bwrap: Can't remount readonly on /elsewhere{}: No such file or directory", gone.display()), &plan(&gone), &[]).is_none());
        assert!(changed(&format!("bwrap: Can't find source path {}x: No such file or directory", gone.display()), &plan(&gone), &[]).is_none());
        // Anything else printed: a command may have run and said the same words.
        assert!(changed(&format!("hello\n{}", line(LINES[0], &gone)), &plan(&gone), &[]).is_none());
        assert!(changed(&line(LINES[0], &gone).replace("bwrap: ", ""), &plan(&gone), &[]).is_none());
    }
}
