//! Hooks a repository runs from outside its own top: they lie anywhere in a reviewed root, not at or
//! below a top the walk of the set's changes passes. Left open by the tenth session: a repository
//! `a/` with `core.hooksPath = ../hooks` (or an absolute path elsewhere in the root, or a `.husky`
//! that is a link to `../x`) got a hook written there unflagged, and the host's `git commit` ran it.

use super::*;
use crate::planted::RiskKind;

/// A host repository at `a/` whose configuration is `config` (as `git init` leaves one).
fn repo_at_a(f: &mut Fixture, config: &str) {
    put(&f.ws, "a/.git/HEAD", "ref: refs/heads/main\n");
    put(&f.ws, "a/.git/config", config);
    std::fs::create_dir_all(f.ws.join("a/.git/objects")).unwrap();
    std::fs::create_dir_all(f.ws.join("a/.git/refs/heads")).unwrap();
    put(&f.ws, "a/src/main.c", "");
}

fn hooks_path(p: &str) -> String {
    format!("[core]\n\tbare = false\n\thooksPath = {p}\n")
}

#[test]
fn hooks_written_where_a_repository_runs_them_from_outside_its_top_are_a_risk() {
    // (core.hooksPath, `.husky` a link on the host, the hooks directory below the root, the risk:
    // husky's `.husky/_` runs the scripts in `.husky`, which is guarded whole)
    let cases = [
        ("../hooks".to_string(), None, "hooks", "/hooks"),
        ("ABS/shared/hooks".into(), None, "shared/hooks", "/shared/hooks"),
        (".husky/_".into(), Some("../x"), "x/_", "/x"),
        (".husky".into(), Some("../x"), "x", "/x"),
        // The root itself: every file written in it is held back (fail closed).
        ("..".into(), None, ".", ""),
    ];
    for (configured, link, dir, at) in cases {
        let mut f = fixture();
        let config = hooks_path(&configured.replace("ABS", &f.ws.to_string_lossy()));
        repo_at_a(&mut f, &config);
        std::fs::create_dir_all(f.ws.join(dir)).unwrap();
        if let Some(l) = link {
            std::os::unix::fs::symlink(l, f.ws.join("a/.husky")).unwrap();
        }
        begin_now(&mut f);
        let up = f.set.upper(0);
        put(&up, &format!("{dir}/pre-commit"), "#!/bin/sh\ntouch /tmp/pwned\n");
        put(&up, &format!("{dir}/pre-push.sample"), "");
        put(&up, "notes.txt", "fine\n");
        assert_eq!(risks_of(&f), [(at.to_string(), RiskKind::HooksWritten)], "{configured} {link:?}");
        let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
        assert!(!f.ws.join(dir).join("pre-commit").exists(), "{configured}: {out:?}");
        assert_eq!(f.ws.join("notes.txt").exists(), !at.is_empty(), "the rest lands, unless the root is the hooks directory");
    }
}

#[test]
fn a_hooks_directory_outside_the_top_swapped_for_a_symlink_is_a_risk() {
    let mut f = fixture();
    repo_at_a(&mut f, &hooks_path("../tools/hooks"));
    put(&f.ws, "tools/hooks/pre-commit", "npm test\n");
    begin_now(&mut f);
    let up = f.set.upper(0);
    std::os::unix::fs::symlink("build-cache", up.join("tools")).unwrap();
    put(&up, "build-cache/hooks/pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n");
    // The swap, and the hook where the set's link leads.
    assert_eq!(risks_of(&f), [("/build-cache/hooks".to_string(), RiskKind::HooksWritten), ("/tools".into(), RiskKind::HooksWritten)]);
}

#[test]
fn a_repository_without_hooks_outside_its_top_guards_nothing_there() {
    let mut f = fixture();
    repo_at_a(&mut f, &hooks_path("tools/hooks"));
    std::fs::create_dir_all(f.ws.join("hooks")).unwrap();
    begin_now(&mut f);
    put(&f.set.upper(0), "hooks/pre-commit", "a script of the project's\n");
    assert_eq!(risks_of(&f), []);
}

/// An attacker's review: the host's `.git/hooks/pre-commit` a symlink to `../../scripts/pre-commit`
/// (and a `.git/hooks` that is a link to `../.githooks`). The set rewrote the file git runs through
/// its other path; nothing was a risk, and apply landed it.
#[test]
fn a_file_a_hook_links_to_written_or_swapped_is_a_risk() {
    let cases: [(&str, fn(&std::path::Path)); 4] = [
        ("/scripts/pre-commit", |up| put(up, "scripts/pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n")),
        ("/scripts", |up| std::os::unix::fs::symlink("elsewhere", up.join("scripts")).unwrap()),
        ("/scripts/post-checkout", |up| put(up, "scripts/post-checkout", "#!/bin/sh\ntouch /tmp/pwned\n")),
        ("/.githooks", |up| put(up, ".githooks/pre-push", "#!/bin/sh\ntouch /tmp/pwned\n")),
    ];
    for (at, change) in cases {
        let mut f = fixture();
        repo_at_a(&mut f, "[core]\n\tbare = false\n");
        put(&f.ws, "scripts/pre-commit", "npm test\n");
        std::fs::create_dir_all(f.ws.join("a/.git/hooks")).unwrap();
        std::os::unix::fs::symlink("../../../scripts/pre-commit", f.ws.join("a/.git/hooks/pre-commit")).unwrap();
        // Missing yet: the set creating it is as much a risk.
        std::os::unix::fs::symlink("../../../scripts/post-checkout", f.ws.join("a/.git/hooks/post-checkout")).unwrap();
        std::fs::create_dir_all(f.ws.join(".githooks")).unwrap();
        put(&f.ws, "b/.git/HEAD", "ref: refs/heads/main\n");
        std::fs::create_dir_all(f.ws.join("b/.git/objects")).unwrap();
        std::os::unix::fs::symlink("../../.githooks", f.ws.join("b/.git/hooks")).unwrap();
        begin_now(&mut f);
        let up = f.set.upper(0);
        change(&up);
        put(&up, "notes.txt", "fine\n");
        assert_eq!(risks_of(&f), [(at.to_string(), RiskKind::HooksWritten)], "{at}");
        let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
        assert_eq!(std::fs::read_to_string(f.ws.join("scripts/pre-commit")).unwrap(), "npm test\n", "{at}: {out:?}");
        assert!(f.ws.join("notes.txt").exists(), "the rest lands");
    }
}

/// An attacker's review: the user's global git configuration named a relative `core.hooksPath`
/// (each repository's `.githooks`), which only the repository's own configuration was read for; a
/// set wrote `.githooks/pre-commit`, a plain apply landed it, and the host's `git commit` ran it.
/// The repository's own setting still wins over the global one, as in git.
#[test]
fn hooks_written_where_the_global_configuration_runs_them_are_a_risk() {
    let home = tempfile::tempdir().unwrap();
    let _home = crate::planted::home::test_home::set(home.path().canonicalize().unwrap());
    put(home.path(), ".gitconfig", "[user]\n\tname = a\n[core]\n\thooksPath = .githooks\n");
    for (config, dir, risky) in [("[core]\n\tbare = false\n", ".githooks", true), (hooks_path("tools/hooks").as_str(), "tools/hooks", true), (hooks_path("tools/hooks").as_str(), ".githooks", false)] {
        let mut f = fixture();
        repo_at_a(&mut f, config);
        begin_now(&mut f);
        put(&f.set.upper(0), &format!("a/{dir}/pre-commit"), "#!/bin/sh\nid\n");
        let risks = risks_of(&f);
        let at = format!("/a/{dir}");
        assert_eq!(risks.contains(&(at.clone(), RiskKind::HooksWritten)), risky, "{config}: {at}: {risks:?}");
    }
}

/// An attacker's review (review mode too): a repository's own configuration included a file of its
/// worktree (`include.path = ../tools/gitconfig`); the set appended `core.fsmonitor` there with no
/// risk, a plain apply landed it, and the host's next `git status` in the repository ran it. What
/// a repository's configuration includes is guarded from the root, a missing file too.
#[test]
fn files_a_repositorys_configuration_includes_are_risks() {
    let mut f = fixture();
    repo_at_a(&mut f, "[core]\n\tbare = false\n[include]\n\tpath = ../tools/gitconfig\n[includeIf \"onbranch:x\"]\n\tpath = ../../shared.inc\n");
    put(&f.ws, "a/tools/gitconfig", "[alias]\n\tst = status\n");
    begin_now(&mut f);
    let up = f.set.upper(0);
    put(&up, "a/tools/gitconfig", "[alias]\n\tst = status\n[core]\n\tfsmonitor = touch /tmp/pwned\n");
    put(&up, "shared.inc", "[core]\n\tfsmonitor = touch /tmp/pwned\n");
    put(&up, "notes.txt", "fine\n");
    let risks = risks_of(&f);
    for at in ["/a/tools/gitconfig", "/shared.inc"] {
        assert!(risks.contains(&(at.to_string(), RiskKind::ProtectedNameCreated)), "{at}: {risks:?}");
    }
    assert_eq!(risks.len(), 2, "{risks:?}");
    apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(std::fs::read_to_string(f.ws.join("a/tools/gitconfig")).unwrap(), "[alias]\n\tst = status\n");
    assert!(!f.ws.join("shared.inc").exists());
    assert!(f.ws.join("notes.txt").exists());
}

/// An attacker's review (repoprog.sh, review mode): a repository's configuration named a program
/// of its worktree (`core.fsmonitor = tools/fsmon`); the set rewrote it, apply landed it unflagged,
/// and the host's next `git status` ran it. Guarded from the root as the included files are.
#[test]
fn programs_a_repositorys_configuration_names_are_risks() {
    let mut f = fixture();
    let abs = f.ws.join("a/tools/pager");
    repo_at_a(&mut f, &format!("[core]\n\tfsmonitor = tools/fsmon\n\tpager = \"{}\" -R\n", abs.display()));
    put(&f.ws, "a/tools/fsmon", "exit 1\n");
    put(&f.ws, "a/tools/pager", "exit 1\n");
    begin_now(&mut f);
    let up = f.set.upper(0);
    put(&up, "a/tools/fsmon", "touch /tmp/pwned\n");
    put(&up, "a/tools/pager", "touch /tmp/pwned\n");
    put(&up, "notes.txt", "fine\n");
    let risks = risks_of(&f);
    for at in ["/a/tools/fsmon", "/a/tools/pager"] {
        assert!(risks.contains(&(at.to_string(), RiskKind::ProtectedNameCreated)), "{at}: {risks:?}");
    }
    assert_eq!(risks.len(), 2, "{risks:?}");
}
