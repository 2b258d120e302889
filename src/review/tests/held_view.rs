//! What the judge decides from the set's view against what apply lands. Found by an attacker's
//! review: the judge took tops, hooks directories and git directories from the view (the host's
//! tree as if the whole set had landed), while apply holds some changes back or cannot land them.
//! A change that would not land (a nested repository's `.git` deleted, `core.hooksPath` rewritten,
//! a bare repository's `HEAD` made a directory) changed the view so that what the host's git runs
//! was judged harmless and landed; the host's next `git commit` or `git push` ran it.

use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::planted::RiskKind;

fn has(risks: &[(String, RiskKind)], path: &str, kind: RiskKind) -> bool {
    risks.iter().any(|(p, k)| p == path && *k == kind)
}

/// `sub`, a repository of its own inside the host's.
fn nested_repo(f: &mut Fixture) {
    put(&f.ws, "sub/.git/HEAD", "ref: refs/heads/main\n");
    put(&f.ws, "sub/.git/config", "[core]\n\tbare = false\n");
    put(&f.ws, "sub/.git/refs/heads/main", "0123456789012345678901234567890123456789\n");
    put(&f.ws, "sub/.git/objects/01/23", "x");
    put(&f.ws, "sub/f", "s\n");
    host_repo(f);
}

#[test]
fn a_nested_repository_whose_git_is_deleted_keeps_its_top() {
    for opaque in [false, true] {
        let mut f = fixture();
        nested_repo(&mut f);
        let up = f.set.upper(0);
        if opaque {
            // `rm -rf sub && mkdir sub`.
            put(&up, "sub/.envrc", "touch /tmp/x\n");
            xattr(&up.join("sub"), c"user.overlay.opaque", b"y");
        } else {
            std::fs::create_dir_all(up.join("sub")).unwrap();
            whiteout(&up.join("sub/.git"));
            put(&up, "sub/.envrc", "touch /tmp/x\n");
        }
        let risks = risks_of(&f);
        assert!(has(&risks, "/sub/.git", RiskKind::WorkspaceReplaced), "{opaque}: {risks:?}");
        assert!(has(&risks, "/sub/.envrc", RiskKind::ProtectedNameCreated), "{opaque}: {risks:?}");
        apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
        assert!(!f.ws.join("sub/.envrc").exists() && f.ws.join("sub/.git/HEAD").exists());
    }
}

#[test]
fn the_host_s_hooks_path_is_guarded_whatever_the_set_makes_of_the_config() {
    for config in ["rewritten", "fifo", "directory"] {
        let mut f = fixture();
        put(&f.ws, "githooks/.keep", "");
        host_repo(&mut f);
        put(&f.ws, ".git/config", "[core]\n\tbare = false\n\thooksPath = githooks\n");
        let up = f.set.upper(0);
        std::fs::create_dir_all(up.join(".git")).unwrap();
        match config {
            "rewritten" => put(&up, ".git/config", "[core]\n\thooksPath = decoy-hooks\n"),
            "fifo" => {
                let c = std::ffi::CString::new(up.join(".git/config").into_os_string().into_encoded_bytes()).unwrap();
                // SAFETY: a valid path.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            }
            _ => std::fs::create_dir(up.join(".git/config")).unwrap(),
        }
        put(&up, "githooks/pre-commit", "#!/bin/sh\ntouch /tmp/x\n");
        let risks = risks_of(&f);
        assert!(has(&risks, "/githooks", RiskKind::HooksWritten), "{config}: {risks:?}");
        apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
        assert!(!f.ws.join("githooks/pre-commit").exists(), "{config}");
    }
}

/// A bare repository `mirror.git` on the host; the set makes its `HEAD` a directory of mode 0777
/// (held back for its mode, and apply cannot replace the host's file by it) and writes a hook.
#[test]
fn a_git_directory_on_the_host_stays_one_whatever_the_view_shows() {
    let mut f = fixture();
    put(&f.ws, "mirror.git/HEAD", "ref: refs/heads/main\n");
    put(&f.ws, "mirror.git/config", "[core]\n\tbare = true\n");
    put(&f.ws, "mirror.git/refs/heads/main", "0123456789012345678901234567890123456789\n");
    put(&f.ws, "mirror.git/objects/01/23", "x");
    put(&f.ws, "mirror.git/hooks/pre-receive.sample", "#!/bin/sh\n");
    begin_now(&mut f);
    let up = f.set.upper(0);
    std::fs::create_dir_all(up.join("mirror.git/HEAD")).unwrap();
    std::fs::set_permissions(up.join("mirror.git/HEAD"), std::fs::Permissions::from_mode(0o777)).unwrap();
    put(&up, "mirror.git/hooks/pre-receive", "#!/bin/sh\ntouch /tmp/x\n");
    put(&up, "mirror.git/config", "[core]\n\tsshCommand = touch /tmp/x\n");
    let risks = risks_of(&f);
    assert!(has(&risks, "/mirror.git/hooks/pre-receive", RiskKind::HooksWritten), "{risks:?}");
    assert!(has(&risks, "/mirror.git/config", RiskKind::HooksWritten), "{risks:?}");
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(!f.ws.join("mirror.git/hooks/pre-receive").exists(), "{out:?}");
    // The conflict names the entry, not a path of its name at the root.
    let head = f.ws.join("mirror.git/HEAD").to_string_lossy().into_owned();
    assert!(out.conflicts.iter().all(|c| c.path == head), "{out:?}");
}

#[test]
fn modes_in_a_git_directory_are_judged() {
    let mut f = fixture();
    host_repo(&mut f);
    put(&f.ws, ".git/index", "DIRC");
    std::fs::set_permissions(f.ws.join(".git/index"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(f.ws.join(".git/hooks"), std::fs::Permissions::from_mode(0o755)).unwrap();
    begin_now(&mut f);
    let up = f.set.upper(0);
    std::fs::create_dir_all(up.join(".git/hooks")).unwrap();
    std::fs::set_permissions(up.join(".git/hooks"), std::fs::Permissions::from_mode(0o777)).unwrap();
    put(&up, ".git/index", "DIRC");
    std::fs::set_permissions(up.join(".git/index"), std::fs::Permissions::from_mode(0o666)).unwrap();
    let risks = risks_of(&f);
    assert!(has(&risks, "/.git/hooks", RiskKind::PermissionsChanged), "{risks:?}");
    assert!(has(&risks, "/.git/index", RiskKind::PermissionsChanged), "{risks:?}");
    apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(std::fs::metadata(f.ws.join(".git/hooks")).unwrap().permissions().mode() & 0o777, 0o755);
}

/// Direct runs report a report-only name wherever it is made in a writable root; review mode
/// judged it only at the top of the root or of a repository.
#[test]
fn report_only_names_are_judged_at_every_depth() {
    let mut f = fixture();
    f.set.meta.reported_names = vec!["mise.toml".into(), ".bundle".into()];
    put(&f.ws, "sub/keep", "");
    begin_now(&mut f);
    let up = f.set.upper(0);
    put(&up, "sub/mise.toml", "[hooks]\nenter = \"touch /tmp/x\"\n");
    put(&up, "sub/deeper/.bundle/config", "BUNDLE_GEMFILE: /tmp/x\n");
    put(&up, "sub/plain.txt", "p\n");
    let risks = risks_of(&f);
    assert!(has(&risks, "/sub/mise.toml", RiskKind::ProtectedNameCreated), "{risks:?}");
    assert!(has(&risks, "/sub/deeper/.bundle", RiskKind::ProtectedNameCreated), "{risks:?}");
    assert_eq!(risks.len(), 2, "{risks:?}");
}

/// Direct runs report a protected name made below a directory that is no repository's top
/// (`pkg/.vscode`, `pkg/.envrc`); review mode landed them (an attacker's review, later17's
/// probe_ws.sh).
#[test]
fn protected_names_below_no_top_are_judged_as_direct_runs_report_them() {
    let mut f = fixture();
    f.set.meta.protected_names = vec![".vscode".into(), ".envrc".into(), ".cargo".into()];
    put(&f.ws, "pkg/keep", "");
    begin_now(&mut f);
    let up = f.set.upper(0);
    put(&up, "pkg/.vscode/tasks.json", "{\"tasks\":[{\"runOptions\":{\"runOn\":\"folderOpen\"}}]}\n");
    put(&up, "pkg/deeper/.envrc", "touch /tmp/x\n");
    put(&up, "pkg/.cargo/config.toml", "[build]\nrustc-wrapper = \"/tmp/x\"\n");
    put(&up, "pkg/plain.txt", "p\n");
    let risks = risks_of(&f);
    assert!(has(&risks, "/pkg/.vscode", RiskKind::ProtectedNameCreated), "{risks:?}");
    assert!(has(&risks, "/pkg/deeper/.envrc", RiskKind::ProtectedNameCreated), "{risks:?}");
    assert!(has(&risks, "/pkg/.cargo", RiskKind::ProtectedNameCreated), "{risks:?}");
    assert_eq!(risks.len(), 3, "{risks:?}");
}
