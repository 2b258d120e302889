//! protect() and detect() on real trees (no sandbox: the tree is changed directly, as a command
//! would change it through its writable bind).

use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;
use crate::platform::Platform;
use crate::policy::{resolve_policy, PolicyContext, ResolvedPolicy, WritableRoot};

/// The workspace-write policy for `cwd` (no /tmp), resolved and walked as a run does.
fn policy(cwd: &Path, v: serde_json::Value) -> ResolvedPolicy {
    let mut v = v;
    v["mode"] = json!("workspace-write");
    v["tmp"] = json!("read-only");
    let mut p = resolve_policy(Some(&v), &PolicyContext { cwd: cwd.to_path_buf(), tmpdir: None, platform: Platform::Linux, env: Default::default() }).unwrap();
    p.walk_and_protect(crate::planted::Absent::Placeholders);
    p
}

fn run(root: &Path, list: &[&str]) -> (Vec<WritableRoot>, Baseline) {
    let p = policy(root, json!({ "protectedNames": list }));
    (p.writable_roots.clone(), (*p.planted).clone())
}

fn missing(roots: &[WritableRoot]) -> Vec<(PathBuf, PlaceholderKind)> {
    roots.iter().flat_map(|r| r.missing_read_only.iter().map(|m| (m.path.clone(), m.kind))).collect()
}

pub(super) fn init_repo(dir: &Path) {
    std::fs::create_dir_all(dir.join(".git/hooks")).unwrap();
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
}

/// Directories no path can name: a chain of long names below `r` down to the deepest directory a
/// path still names (returned), then `n` directories in it whose paths are longer than PATH_MAX
/// (`open` and `lstat` fail with ENAMETOOLONG, root's too), each made through descriptors.
pub(super) fn past_path_max(r: &Path, n: usize) -> (PathBuf, Vec<String>) {
    let long = "a".repeat(250);
    let mut top = r.join("long");
    std::fs::create_dir(&top).unwrap();
    while top.as_os_str().len() + 1 + long.len() < libc::PATH_MAX as usize {
        top.push(&long);
        std::fs::create_dir(&top).unwrap();
    }
    let names: Vec<String> = (0..n).map(|i| format!("{}-{i:03}", "c".repeat(250))).collect();
    for name in &names {
        mkdirs_at(&top, name);
        assert!(top.join(name).symlink_metadata().is_err_and(|e| e.raw_os_error() == Some(libc::ENAMETOOLONG)));
    }
    (top, names)
}

/// `mkdir -p rel` in the directory `at`, one component at a time through descriptors: no path is
/// ever too long.
pub(super) fn mkdirs_at(at: &Path, rel: &str) {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let mut dir: OwnedFd = std::fs::File::open(at).unwrap().into();
    for part in rel.split('/') {
        let name = std::ffi::CString::new(part).unwrap();
        // SAFETY: `dir` is an open directory and `name` a NUL-terminated string.
        let made = unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o755) };
        assert!(made == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST));
        // SAFETY: as above; the new descriptor is owned at once.
        let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), libc::O_DIRECTORY | libc::O_CLOEXEC) };
        assert!(fd >= 0, "{part}: {}", std::io::Error::last_os_error());
        // SAFETY: a descriptor just opened, owned by nothing else.
        dir = unsafe { OwnedFd::from_raw_fd(fd) };
    }
}

#[test]
fn nested_repositories_hooks_and_names_are_carved() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let deep = r.join("a/b/c/d/e");
    init_repo(&r);
    init_repo(&deep);
    std::fs::write(deep.join(".git/config"), "[core]\n\thooksPath = .husky/_\n").unwrap();
    std::fs::create_dir_all(deep.join(".husky")).unwrap();
    std::fs::write(deep.join(".envrc"), "use nix").unwrap();
    let (roots, b) = run(&r, &[".envrc", ".vscode"]);
    let ro = &roots[0].read_only;
    for p in [r.join(".git"), deep.join(".git"), deep.join(".husky"), deep.join(".envrc")] {
        assert!(ro.contains(&p), "{} not read-only in {ro:?}", p.display());
    }
    let m = missing(&roots);
    for (p, kind) in [(r.join(".envrc"), PlaceholderKind::File), (r.join(".vscode"), PlaceholderKind::Dir), (deep.join(".vscode"), PlaceholderKind::Dir)] {
        assert!(m.contains(&(p.clone(), kind)), "{} not a placeholder in {m:?}", p.display());
    }
    assert!(!m.iter().any(|(p, _)| p.starts_with(deep.join(".husky"))), "nothing is created inside a read-only .husky: {m:?}");
    assert!(!b.truncated);
    assert_eq!(b.git.len(), 2);
    assert!(b.named.contains_key(&deep.join(".envrc")));
}

#[test]
fn a_missing_hooks_directory_cannot_be_created() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    init_repo(&r);
    std::fs::write(r.join(".git/config"), "[core]\n\thooksPath = .husky/_\n").unwrap();
    let (roots, _) = run(&r, &[]);
    assert_eq!(missing(&roots), vec![(r.join(".husky"), PlaceholderKind::Dir)]);
}

/// An attacker's review: the user's global git configuration set a relative `core.hooksPath`
/// (hooks kept in each repository's `.githooks`); only the repository's own configuration was
/// read, so `.githooks` was writable and the host's `git commit` ran what the run wrote there.
/// The repository's own setting wins, as in git; a nested repository is covered too.
#[test]
fn a_relative_hooks_path_of_the_global_configuration_is_carved() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    std::fs::create_dir_all(home.join(".config/git")).unwrap();
    std::fs::write(home.join(".config/git/config"), "[core]\n\thooksPath = .xdg-hooks\n").unwrap();
    std::fs::write(home.join(".gitconfig"), "[include]\n\tpath = more.inc\n").unwrap();
    std::fs::write(home.join("more.inc"), "[core]\n\thooksPath = .githooks\n").unwrap();
    let _home = home::test_home::set(home.clone());
    let ws = r.join("ws");
    let nested = ws.join("sub");
    init_repo(&ws);
    init_repo(&nested);
    std::fs::create_dir_all(ws.join(".githooks")).unwrap();
    std::fs::write(nested.join(".git/config"), "[core]\n\thooksPath = own-hooks\n").unwrap();
    let (roots, _) = run(&ws, &[]);
    assert!(roots[0].read_only.contains(&ws.join(".githooks")), "{:?}", roots[0].read_only);
    let m = missing(&roots);
    assert!(m.contains(&(nested.join("own-hooks"), PlaceholderKind::Dir)), "{m:?}");
    assert!(!m.iter().any(|(p, _)| p == &nested.join(".githooks") || p.ends_with(".xdg-hooks")), "{m:?}");
}

#[test]
fn submodule_gitdir_and_symlinked_names() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    init_repo(&r);
    std::fs::create_dir_all(r.join("ext/.git-modules-target")).unwrap();
    std::fs::create_dir_all(r.join("store/modules/sub")).unwrap();
    std::fs::create_dir_all(r.join("libs/sub")).unwrap();
    std::fs::write(r.join("libs/sub/.git"), "gitdir: ../../store/modules/sub\n").unwrap();
    std::fs::write(r.join("shared-envrc"), "x").unwrap();
    std::os::unix::fs::symlink("shared-envrc", r.join(".envrc")).unwrap();
    let (roots, _) = run(&r, &[".envrc"]);
    let ro = &roots[0].read_only;
    assert!(ro.contains(&r.join("libs/sub/.git")) && ro.contains(&r.join("store/modules/sub")), "{ro:?}");
    assert!(ro.contains(&r.join("shared-envrc")) && !ro.contains(&r.join(".envrc")), "a symlink's target is protected: {ro:?}");
}

#[test]
fn no_names_and_no_git_protect_nothing() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    init_repo(&r.join("x"));
    let p = policy(&r, json!({ "protectGit": false, "protectedNames": [], "reportedNames": [] }));
    let (roots, b) = (&p.writable_roots, &p.planted);
    assert!(roots[0].read_only.is_empty() && roots[0].missing_read_only.is_empty());
    assert_eq!(*b.index, scan::Index::default(), "nothing to look for: nothing walked");
    std::fs::create_dir_all(r.join("y/.git/hooks")).unwrap();
    std::fs::write(r.join("y/.git/config"), "[core]\n\tfsmonitor = ./x\n").unwrap();
    assert!(detect(b).is_empty(), "protectGit false: new repositories are not reported");
}

#[test]
fn detects_planted_repositories_hooks_and_names() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    init_repo(&r.join("old"));
    std::fs::write(r.join("old/.envrc"), "old").unwrap();
    let (_, b) = run(&r, &[".envrc", ".vscode"]);
    assert!(detect(&b).is_empty(), "nothing changed");

    // What a command could do through its bind.
    let sub = r.join("new/sub");
    init_repo(&sub);
    std::fs::write(sub.join(".git/config"), "[core]\n\tfsmonitor = \"touch /tmp/pwned\"\n").unwrap();
    std::fs::write(sub.join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
    std::fs::write(sub.join(".git/hooks/pre-push.sample"), "#!/bin/sh\n").unwrap();
    std::fs::create_dir_all(r.join("fresh/.vscode")).unwrap();
    std::fs::write(r.join("fresh/.vscode/tasks.json"), "{}").unwrap();
    std::fs::write(r.join("fresh/.envrc"), "").unwrap(); // empty: runs nothing (and looks like a placeholder)
    std::fs::create_dir_all(r.join("empty/.git")).unwrap();
    let risks = detect(&b);
    assert!(super::baseline::recall(&b.spec).is_some_and(|i| i.holds(&sub)), "the walk after the run is the next run's prior walk");
    let got: Vec<(String, RiskKind)> = risks.iter().map(|h| (h.path.clone(), h.kind)).collect();
    let s = |p: PathBuf| p.to_string_lossy().into_owned();
    assert_eq!(
        got,
        vec![
            (s(r.join("fresh/.vscode")), RiskKind::ProtectedNameCreated),
            (s(sub.join(".git")), RiskKind::RepositoryCreated),
            (s(sub.join(".git/hooks")), RiskKind::HooksWritten),
        ]
    );
    assert!(risks[0].detail.contains("VS Code"), "{}", risks[0].detail);
    assert!(risks[1].detail.contains("core.fsmonitor"), "{}", risks[1].detail);
    assert!(risks[2].detail.contains("pre-commit") && !risks[2].detail.contains("sample"), "{}", risks[2].detail);

    // An existing name deeper down replaced by another file is reported too.
    // (Written beside it, then renamed over it: a new inode, never the old one reused.)
    std::fs::write(r.join("old/envrc.tmp"), "new").unwrap();
    std::fs::rename(r.join("old/envrc.tmp"), r.join("old/.envrc")).unwrap();
    assert!(detect(&b).iter().any(|h| h.path == s(r.join("old/.envrc")) && h.detail.contains("replaced")));
}

/// Found by an attacker's review: a report-only name that existed before the run and was rewritten
/// in place (`cat > .pre-commit-config.yaml`: the same inode) was not reported; only a creation or
/// a new inode was. A chmod counts too (a change of its ctime); a name left alone does not.
#[test]
fn a_reported_name_changed_in_place_is_reported() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    init_repo(&r);
    std::fs::write(r.join(".pre-commit-config.yaml"), "repos: []\n").unwrap();
    std::fs::write(r.join("lefthook.yml"), "pre-commit: {}\n").unwrap();
    std::fs::write(r.join(".nvmrc"), "20\n").unwrap();
    let p = policy(&r, json!({}));
    let b = (*p.planted).clone();
    assert!(detect(&b).is_empty(), "nothing changed");
    std::thread::sleep(std::time::Duration::from_millis(20));
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(r.join(".pre-commit-config.yaml")).unwrap();
    f.write_all(b"repos: [{repo: local, hooks: [{id: x, entry: 'touch /tmp/pwned', language: system}]}]\n").unwrap();
    drop(f);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(r.join("lefthook.yml"), std::fs::Permissions::from_mode(0o777)).unwrap();
    // A new entry beside them: the walk lists their directory again, and they are still seen.
    std::fs::write(r.join("notes.txt"), "x").unwrap();
    let risks = detect(&b);
    let s = |p: PathBuf| p.to_string_lossy().into_owned();
    let got: Vec<&str> = risks.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(got, [s(r.join(".pre-commit-config.yaml")), s(r.join("lefthook.yml"))], "{risks:?}");
    assert!(risks.iter().all(|h| h.kind == RiskKind::ProtectedNameCreated && h.detail.contains("was changed during the run")), "{risks:?}");
}

/// Issue 28: a nested repository swapped by renaming a directory above it, a folder turned into a
/// git directory, the workspace itself moved away, and a walk blinded by its bound: each reported
/// by the run that did it.
#[test]
fn detects_swapped_repositories_planted_git_directories_replaced_roots_and_a_blinded_walk() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let s = |p: PathBuf| p.to_string_lossy().into_owned();
    init_repo(&r.join("sub/repo"));
    std::fs::create_dir_all(r.join("src/x")).unwrap();
    std::fs::create_dir_all(r.join("bare.git/objects")).unwrap();
    std::fs::create_dir_all(r.join("bare.git/refs")).unwrap();
    std::fs::write(r.join("bare.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let (roots, b) = run(&r, &[]);
    assert!(b.git_dirs.contains_key(&r.join("bare.git")), "an existing bare repository is the baseline's");
    assert!(roots[0].read_only.contains(&r.join("bare.git")), "and read-only, as a .git is: {:?}", roots[0].read_only);
    assert!(b.entry_id(&r.join("bare.git")).is_some(), "checked by its identity when mounted");
    assert!(detect(&b).is_empty(), "nothing changed");

    // The swap: the repository's parent renamed away, the same path recreated with a new one.
    std::fs::rename(r.join("sub"), r.join("sub.real")).unwrap();
    init_repo(&r.join("sub/repo"));
    std::fs::write(r.join("sub/repo/.git/config"), "[core]\n\tfsmonitor = \"touch /tmp/pwned\"\n").unwrap();
    // A folder turned into a git directory.
    std::fs::create_dir_all(r.join("src/objects")).unwrap();
    std::fs::create_dir_all(r.join("src/refs")).unwrap();
    std::fs::write(r.join("src/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(r.join("src/config"), "[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = x\n").unwrap();
    let risks = detect(&b);
    let got: Vec<(String, RiskKind)> = risks.iter().map(|h| (h.path.clone(), h.kind)).collect();
    assert!(got.contains(&(s(r.join("sub/repo/.git")), RiskKind::RepositoryCreated)), "{got:?}");
    assert!(got.contains(&(s(r.join("src")), RiskKind::GitDirectoryCreated)), "{got:?}");
    let planted = risks.iter().find(|h| h.kind == RiskKind::GitDirectoryCreated).unwrap();
    assert!(planted.detail.contains("core.fsmonitor"), "{}", planted.detail);
    assert!(!got.iter().any(|(p, _)| p == &s(r.join("bare.git"))), "the bare repository that was there is not new");

    // The bare repository swapped for another (in a sandbox its mount keeps it from being renamed,
    // but not a directory above it): reported as replaced.
    let (_, b) = run(&r, &[]);
    std::fs::rename(r.join("bare.git"), r.join("bare.old")).unwrap();
    for d in ["bare.git/objects", "bare.git/refs"] {
        std::fs::create_dir_all(r.join(d)).unwrap();
    }
    std::fs::write(r.join("bare.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let risks = detect(&b);
    let swapped = risks.iter().find(|h| h.path == s(r.join("bare.git")) && h.kind == RiskKind::GitDirectoryCreated);
    assert!(swapped.is_some_and(|h| h.detail.contains("replaced")), "{risks:?}");

    // The root itself replaced.
    let (_, b) = run(&r, &[]);
    std::fs::rename(&r, r.with_extension("moved")).unwrap();
    std::fs::create_dir(&r).unwrap();
    let risks = detect(&b);
    std::fs::remove_dir(&r).unwrap();
    std::fs::rename(r.with_extension("moved"), &r).unwrap();
    assert!(risks.iter().any(|h| h.kind == RiskKind::WorkspaceReplaced && h.path == s(r.clone())), "{risks:?}");
}

#[test]
fn a_walk_stopped_by_its_bound_names_the_area_it_did_not_examine() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let (_, b) = run(&r, &[".envrc"]);
    let mut deep = r.join("d");
    for i in 0..scan::MAX_DEPTH + 2 {
        deep.push(format!("{i}"));
    }
    init_repo(&deep);
    let risks = detect(&b);
    let incomplete: Vec<&HostRisk> = risks.iter().filter(|h| h.kind == RiskKind::ScanIncomplete).collect();
    assert_eq!(incomplete.len(), 1, "{risks:?}");
    assert!(deep.starts_with(&incomplete[0].path), "{} names where the walk stopped, above the repository", incomplete[0].path);
    assert!(incomplete[0].detail.contains("bound"), "{}", incomplete[0].detail);
}

/// An attacker's review: files the global git configuration consists of, inside the cwd, stayed
/// writable, and a run appended `core.fsmonitor` to them (the host's next `git status` anywhere ran
/// it). (A) the cwd is $HOME and `~/.gitconfig` includes the missing `~/.gitconfig.local`; (B) the
/// cwd is `~/dotfiles`, which `~/.gitconfig` includes; (C) `~/.gitconfig` links into it (stow).
#[test]
fn files_the_global_git_configuration_reads_are_kept() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    let dots = home.join("dotfiles");
    std::fs::create_dir_all(&dots).unwrap();
    let _home = home::test_home::set(home.clone());
    std::fs::write(home.join(".gitconfig"), "[include]\n\tpath = ~/.gitconfig.local\n").unwrap();
    let (roots, _) = run(&home, &[]);
    assert!(missing(&roots).contains(&(home.join(".gitconfig.local"), PlaceholderKind::File)), "A: {:?}", missing(&roots));
    std::fs::write(home.join(".gitconfig"), "[include]\n\tpath = ~/dotfiles/gitconfig\n[includeIf \"gitdir:~/w/\"]\n\tpath = dotfiles/work\n").unwrap();
    std::fs::write(dots.join("gitconfig"), "").unwrap();
    let (roots, _) = run(&dots, &[]);
    assert!(roots[0].read_only.contains(&dots.join("gitconfig")), "B: {:?}", roots[0].read_only);
    assert!(missing(&roots).contains(&(dots.join("work"), PlaceholderKind::File)), "B, includeIf: {:?}", missing(&roots));
    std::fs::remove_file(home.join(".gitconfig")).unwrap();
    std::os::unix::fs::symlink("dotfiles/gitconfig", home.join(".gitconfig")).unwrap();
    let (roots, _) = run(&dots, &[]);
    assert!(roots[0].read_only.contains(&dots.join("gitconfig")), "C: {:?}", roots[0].read_only);
}

fn carve_home(root: &Path, bases: &home::Bases, placeholders: bool) -> WritableRoot {
    let mut roots = vec![WritableRoot { root: root.to_path_buf(), read_only: Vec::new(), missing_read_only: Vec::new(), id: None }];
    let names = [".bashrc".to_string()];
    let linked = super::home_links::linked(bases, &names);
    Carver::new(&mut roots, &[], None).home(bases, &names, &linked, placeholders, &[], &[]);
    roots.remove(0)
}

/// An attacker's review: a run with the cwd at $HOME wrote ~/.config/git/config (its fsmonitor ran
/// on the host's next git anywhere), ~/.local/bin/git and ~/.ssh/authorized_keys.
#[test]
fn a_home_inside_a_root_keeps_what_the_host_runs_from_it() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".config/git")).unwrap();
    std::fs::create_dir_all(home.join(".local")).unwrap();
    std::fs::write(home.join(".bashrc"), "x").unwrap();
    let bases = home::Bases::of([home.clone()].into_iter(), Some(r.join("xdg")));
    assert_eq!(bases.config, vec![home.join(".config"), r.join("xdg")]);
    let root = carve_home(&r, &bases, false);
    for p in [".ssh", ".config/git", ".bashrc"] {
        assert!(root.read_only.contains(&home.join(p)), "{p} in {:?}", root.read_only);
    }
    let missing: Vec<PathBuf> = root.missing_read_only.iter().map(|m| m.path.clone()).collect();
    for p in [home.join(".local/bin"), home.join(".config/systemd"), home.join(".vimrc"), r.join("xdg/git")] {
        assert!(missing.contains(&p), "{} in {missing:?}", p.display());
    }
    assert!(bases.what_it_does(&home.join(".config/git")).is_some_and(|w| w.contains("fsmonitor")));
    // A plan another program runs: a placeholder where one can be made.
    let missing: Vec<PathBuf> = carve_home(&r, &bases, true).missing_read_only.iter().map(|m| m.path.clone()).collect();
    assert!(missing.contains(&home.join(".local/bin")) && missing.contains(&r.join("xdg")), "{missing:?}");
    assert!(!missing.contains(&r.join("xdg/git")), "{missing:?}");
    // A home outside every writable root is left alone.
    let elsewhere = tempfile::tempdir().unwrap();
    let root = carve_home(&elsewhere.path().canonicalize().unwrap(), &bases, false);
    assert!(root.read_only.is_empty() && root.missing_read_only.is_empty());
}

/// An attacker's review: with the cwd at $HOME, a run linked a toolchain into ~/.rustup and made it
/// rustup's default (the host's next `cargo` anywhere ran it), and wrote ~/.ipython's
/// ipython_config.py beside the startup directory kept. The rest of each tool's directory, and the
/// desktop's: Jupyter's config, systemd's and D-Bus's user units, desktop entries and the MIME
/// handlers that pick them.
#[test]
fn a_held_home_keeps_rustup_ipython_jupyter_and_the_desktops_handlers() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    std::fs::create_dir_all(home.join(".rustup/toolchains")).unwrap();
    std::fs::create_dir_all(home.join(".ipython/profile_default/startup")).unwrap();
    std::fs::create_dir_all(home.join(".local/share")).unwrap();
    std::fs::create_dir_all(home.join(".config")).unwrap();
    let bases = home::Bases::of([home.clone()].into_iter(), None);
    let root = carve_home(&r, &bases, false);
    for p in [".rustup", ".ipython"] {
        assert!(root.read_only.contains(&home.join(p)), "{p} in {:?}", root.read_only);
    }
    let missing = missing(std::slice::from_ref(&root));
    for (p, kind) in [
        (".jupyter", PlaceholderKind::Dir),
        (".local/share/systemd", PlaceholderKind::Dir),
        (".local/share/dbus-1", PlaceholderKind::Dir),
        (".local/share/applications", PlaceholderKind::Dir),
        (".config/mimeapps.list", PlaceholderKind::File),
    ] {
        assert!(missing.contains(&(home.join(p), kind)), "{p} in {missing:?}");
    }
    assert!(bases.what_it_does(&home.join(".rustup")).is_some_and(|w| w.contains("toolchain")));
}

/// An attacker's review (cwd = $HOME, and HOME=/tmp with the default writable /tmp): a run wrote
/// ~/.mavenrc (mvn sources it), ~/.gdbearlyinit and ~/.config/gdb/gdbinit (gdb runs them),
/// ~/.lesskey (its #env LESSOPEN ran on the next less), ~/.lessfilter, ~/.perldb, a hook in
/// ~/.pyenv/pyenv.d (pyenv exec sourced it) and ~/.bash_aliases (Debian's .bashrc sources it),
/// all unreported. Existing ones are read-only, missing ones kept absent (no mount: a stat).
#[test]
fn a_held_home_keeps_the_host_tools_rc_files_and_version_managers() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    std::fs::create_dir_all(home.join(".pyenv/pyenv.d/exec")).unwrap();
    std::fs::create_dir_all(home.join(".config/gdb")).unwrap();
    std::fs::write(home.join(".bash_aliases"), "alias ll='ls -l'\n").unwrap();
    let bases = home::Bases::of([home.clone()].into_iter(), None);
    let root = carve_home(&r, &bases, false);
    for p in [".pyenv", ".bash_aliases", ".config/gdb"] {
        assert!(root.read_only.contains(&home.join(p)), "{p} in {:?}", root.read_only);
    }
    let missing = missing(std::slice::from_ref(&root));
    for (p, kind) in [
        (".mavenrc", PlaceholderKind::File),
        (".gdbearlyinit", PlaceholderKind::File),
        (".lesskey", PlaceholderKind::File),
        (".lessfilter", PlaceholderKind::File),
        (".perldb", PlaceholderKind::File),
        (".bash_completion", PlaceholderKind::File),
        (".psqlrc", PlaceholderKind::File),
        (".Renviron", PlaceholderKind::File),
        (".nvm", PlaceholderKind::Dir),
        (".sdkman", PlaceholderKind::Dir),
        ("miniconda3", PlaceholderKind::Dir),
        (".vscode-server", PlaceholderKind::Dir),
        (".local/share/bash-completion", PlaceholderKind::Dir),
        (".config/lesskey", PlaceholderKind::File),
        (".config/lessfilter", PlaceholderKind::File),
    ] {
        assert!(missing.contains(&(home.join(p), kind)), "{p} in {missing:?}");
    }
    // What is missing costs no mount: only what exists is bound read-only.
    assert_eq!(root.read_only.len(), 3, "{:?}", root.read_only);
    assert!(bases.what_it_does(&home.join(".mavenrc")).is_some_and(|w| w.contains("mvn")));
}

/// An attacker's review: the walk after the run kept at most 24 directories it could not list, and
/// the report then dropped each it could not `lstat`. 30 directories past PATH_MAX filled the 24
/// and were dropped, and so was the `chmod 300` directory beyond them in which a repository was
/// planted: `hostRisks` was empty. Every one is counted now, and those no path names are reported
/// at the nearest directory one does.
#[test]
fn directories_no_path_can_name_are_reported_however_many_at_the_nearest_one_named() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let (_, b) = run(&r, &[".envrc"]);
    let (top, names) = past_path_max(&r, 30);
    mkdirs_at(&top, &format!("{}/x/.git/hooks", names[7]));
    let risks = detect(&b);
    let incomplete: Vec<&HostRisk> = risks.iter().filter(|h| h.kind == RiskKind::ScanIncomplete).collect();
    assert_eq!(incomplete.len(), 1, "{risks:?}");
    assert_eq!(incomplete[0].path, top.to_string_lossy(), "the nearest directory a path names");
    assert!(incomplete[0].detail.contains("30 directories"), "{}", incomplete[0].detail);
}

/// An attacker's review: with the cwd at $HOME (no repository), `init.templateDir = ~/.git-templates`
/// and `core.hooksPath = ~/.githooks` in the global configuration left both writable: a run wrote
/// `.git-templates/hooks/post-checkout` (the host's next `git clone` ran it) and
/// `.githooks/pre-commit` (its next `git commit` anywhere ran it). Both are kept whole, a missing
/// one uncreatable; a relative template directory is taken from its file's directory.
#[test]
fn the_global_template_directory_and_an_absolute_global_hooks_path_are_kept() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    std::fs::create_dir_all(home.join(".git-templates/hooks")).unwrap();
    let _home = home::test_home::set(home.clone());
    std::fs::write(home.join(".gitconfig"), "[init]\n\ttemplateDir = ~/.git-templates\n[core]\n\thooksPath = ~/.githooks\n").unwrap();
    let (roots, _) = run(&home, &[]);
    assert!(roots[0].read_only.contains(&home.join(".git-templates")), "{:?}", roots[0].read_only);
    assert!(missing(&roots).contains(&(home.join(".githooks"), PlaceholderKind::Dir)), "{:?}", missing(&roots));
    std::fs::create_dir_all(home.join("dots/tmpl")).unwrap();
    std::fs::write(home.join("dots/inc"), "[init]\n\ttemplateDir = tmpl\n").unwrap();
    std::fs::write(home.join(".gitconfig"), "[init]\n\ttemplateDir = ~/.git-templates\n[include]\n\tpath = dots/inc\n").unwrap();
    let (roots, _) = run(&home.join("dots"), &[]);
    assert!(roots[0].read_only.contains(&home.join("dots/tmpl")), "the last wins, from its file's directory: {:?}", roots[0].read_only);
}

/// An attacker's review: a repository's own configuration included a file of its worktree
/// (`git config include.path ../tools/gitconfig`, as projects share settings); only
/// `core.hooksPath` was read from it, so a run appended `core.fsmonitor` to `tools/gitconfig` and
/// the host's next `git status` in the repository ran it. Every file a repository's `config` or
/// `config.worktree` includes (nested, `includeIf` whatever its condition, relative to the
/// including file) is kept read-only, absent when missing; so is a nested repository's.
#[test]
fn files_a_repositorys_own_configuration_includes_are_kept() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let _home = home::test_home::set(r.join("home"));
    let ws = r.join("ws");
    init_repo(&ws);
    std::fs::write(ws.join(".git/config"), "[include]\n\tpath = ../tools/gitconfig\n[includeIf \"onbranch:main\"]\n\tpath = ../tools/branch\n").unwrap();
    std::fs::create_dir(ws.join("tools")).unwrap();
    std::fs::write(ws.join("tools/gitconfig"), "[alias]\n\tst = status\n[include]\n\tpath = nested\n").unwrap();
    let sub = ws.join("sub");
    init_repo(&sub);
    std::fs::write(sub.join(".git/config.worktree"), "[include]\n\tpath = ../local.inc\n").unwrap();
    let (roots, _) = run(&ws, &[]);
    assert!(roots[0].read_only.contains(&ws.join("tools/gitconfig")), "{:?}", roots[0].read_only);
    let m = missing(&roots);
    for p in [ws.join("tools/nested"), ws.join("tools/branch"), sub.join("local.inc")] {
        assert!(m.contains(&(p.clone(), PlaceholderKind::File)), "{}: {m:?}", p.display());
    }
}

/// An attacker's review: `~/.gitconfig` included the missing `~/dotfiles/local/gitconfig`, kept
/// absent by path; the run (cwd `~/dotfiles`) made `local` a link to a directory of its own holding
/// `gitconfig`, and moving that aside failed (a symlink on its way), so it stayed, and the host's
/// next `git status` ran its fsmonitor. The link in the way is moved aside instead.
#[test]
fn a_link_made_on_the_way_to_a_path_kept_absent_is_moved_aside() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    let dots = home.join("dotfiles");
    std::fs::create_dir_all(&dots).unwrap();
    let _home = home::test_home::set(home.clone());
    std::fs::write(home.join(".gitconfig"), "[include]\n\tpath = ~/dotfiles/local/gitconfig\n").unwrap();
    let v = json!({ "mode": "workspace-write", "tmp": "read-only" });
    let mut p = resolve_policy(Some(&v), &PolicyContext { cwd: dots.clone(), tmpdir: None, platform: Platform::Linux, env: Default::default() }).unwrap();
    p.walk_and_protect(crate::planted::Absent::UndoneAfter);
    std::fs::create_dir(dots.join("sub")).unwrap();
    std::fs::write(dots.join("sub/gitconfig"), "[core]\n\tfsmonitor = x\n").unwrap();
    std::os::unix::fs::symlink("sub", dots.join("local")).unwrap();
    let risks = detect(&p.planted);
    let risk = risks.iter().find(|h| h.path == dots.join("local/gitconfig").to_string_lossy()).expect("reported");
    assert!(risk.detail.contains("undone"), "{}", risk.detail);
    assert!(!risk.detail.contains("NOT undone"), "{}", risk.detail);
    assert!(dots.join("local").symlink_metadata().is_err(), "the link in the way was moved aside");
    assert!(dots.join("sub/gitconfig").exists(), "what it led to is left, nothing git reads");
}

/// An attacker's review (stow-style dotfiles): with `~/.bashrc`, `~/.ssh/config` and `~/bin`
/// links into `~/dotfiles` and the run working there, only the global `.gitconfig` was kept; the
/// run appended to `.bashrc`, added a `ProxyCommand` to `.ssh/config` and rewrote `bin/fsmon`, and
/// the host ran them. Each home path and name that leads into a root is kept there now, a
/// dangling one absent; one leading elsewhere is left alone.
#[test]
fn home_paths_linked_into_a_root_are_kept_wherever_the_home_is() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    let dots = home.join("dotfiles");
    for d in ["bash", "ssh", "bin", "vim"] {
        std::fs::create_dir_all(dots.join(d)).unwrap();
    }
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(r.join("elsewhere")).unwrap();
    std::fs::write(dots.join("bash/.bashrc"), "").unwrap();
    std::fs::write(dots.join("ssh/config"), "").unwrap();
    std::fs::write(r.join("elsewhere/vimrc"), "").unwrap();
    std::os::unix::fs::symlink("dotfiles/bash/.bashrc", home.join(".bashrc")).unwrap();
    std::os::unix::fs::symlink("../dotfiles/ssh/config", home.join(".ssh/config")).unwrap();
    std::os::unix::fs::symlink("dotfiles/bin", home.join("bin")).unwrap();
    std::os::unix::fs::symlink("dotfiles/vim/missing", home.join(".emacs")).unwrap();
    std::os::unix::fs::symlink("../elsewhere/vimrc", home.join(".vimrc")).unwrap();
    let bases = home::Bases::of([home.clone()].into_iter(), None);
    let root = carve_home(&dots, &bases, false);
    for p in ["bash/.bashrc", "ssh/config", "bin"] {
        assert!(root.read_only.contains(&dots.join(p)), "{p} in {:?}", root.read_only);
    }
    let missing: Vec<PathBuf> = root.missing_read_only.iter().map(|m| m.path.clone()).collect();
    assert_eq!(missing, vec![dots.join("vim/missing")], "a dangling link's target is kept absent");
    assert!(!root.read_only.iter().any(|p| p.ends_with("vimrc")), "{:?}", root.read_only);
}

/// Where a home link leads is remembered between plans (`home_links::ways`, vouched for by the
/// directory watcher): a link that led elsewhere and then, retargeted (or through a link on its way
/// retargeted), leads into the root is kept there on the next plan, not skipped on a stale answer.
#[test]
fn a_home_link_retargeted_into_a_root_is_kept_on_the_next_plan() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    let dots = home.join("dotfiles");
    std::fs::create_dir_all(dots.join("bin")).unwrap();
    std::fs::create_dir_all(r.join("elsewhere")).unwrap();
    std::fs::create_dir_all(home.join(".cargo/bin")).unwrap();
    std::fs::write(r.join("elsewhere/rustup"), "").unwrap();
    std::fs::write(dots.join("bin/rustup"), "").unwrap();
    std::os::unix::fs::symlink("rustup", home.join(".cargo/bin/cargo")).unwrap();
    std::os::unix::fs::symlink("../../../elsewhere/rustup", home.join(".cargo/bin/rustup")).unwrap();
    std::os::unix::fs::symlink("../elsewhere", home.join("via")).unwrap();
    std::os::unix::fs::symlink("../../via/rustup", home.join(".cargo/bin/rustc")).unwrap();
    let bases = home::Bases::of([home.clone()].into_iter(), None);
    let kept = |root: &WritableRoot| root.read_only.iter().any(|p| p.ends_with("bin/rustup"));
    for _ in 0..2 {
        assert!(!kept(&carve_home(&dots, &bases, false)), "nothing leads into the root yet");
    }
    // A link on the way of `cargo` (its target `rustup`) and one on `rustc`'s (`~/via`) retargeted.
    std::fs::remove_file(home.join(".cargo/bin/rustup")).unwrap();
    std::os::unix::fs::symlink("../../dotfiles/bin/rustup", home.join(".cargo/bin/rustup")).unwrap();
    assert!(kept(&carve_home(&dots, &bases, false)), "the retargeted link is kept where it leads now");
    std::fs::remove_file(home.join(".cargo/bin/rustup")).unwrap();
    std::fs::remove_file(home.join(".cargo/bin/cargo")).unwrap();
    std::fs::remove_file(home.join("via")).unwrap();
    std::os::unix::fs::symlink("dotfiles/bin", home.join("via")).unwrap();
    assert!(kept(&carve_home(&dots, &bases, false)), "a link on the way retargeted");
}

/// An attacker's review of that (stow2.sh): `~/.config -> dotfiles/cfg` with `cfg` not there yet,
/// and `~/.bashrc -> dotfiles/gone/.bashrc` with `gone` missing too; the run made
/// `cfg/git/config` (its fsmonitor ran on the host's next `git status`) and `gone/.bashrc`. Where
/// a dangling link leads is followed through its missing directories: kept absent there.
#[test]
fn dangling_home_links_into_a_root_are_kept_absent_through_missing_directories() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    let dots = home.join("dotfiles");
    std::fs::create_dir_all(&dots).unwrap();
    std::os::unix::fs::symlink("dotfiles/gone/.bashrc", home.join(".bashrc")).unwrap();
    std::os::unix::fs::symlink("dotfiles/cfg", home.join(".config")).unwrap();
    let bases = home::Bases::of([home.clone()].into_iter(), None);
    let root = carve_home(&dots, &bases, false);
    let missing: Vec<PathBuf> = root.missing_read_only.iter().map(|m| m.path.clone()).collect();
    for p in ["gone/.bashrc", "cfg/git", "cfg/systemd"] {
        assert!(missing.contains(&dots.join(p)), "{p} in {missing:?}");
    }
    // A plan another program runs: the first missing directory gets the placeholder.
    let root = carve_home(&dots, &bases, true);
    let missing: Vec<PathBuf> = root.missing_read_only.iter().map(|m| m.path.clone()).collect();
    for p in ["gone", "cfg"] {
        assert!(missing.contains(&dots.join(p)), "{p} in {missing:?}");
    }
}

/// The same review: `core.fsmonitor = ~/bin/fsmon` in the global configuration, a program git runs
/// in every repository, was writable in the root `~/bin` leads into; so were the programs other
/// keys name by path. Each is kept as the configuration's files are; a bare name is not a path.
#[test]
fn programs_the_global_git_configuration_names_by_path_are_kept() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    let tools = r.join("ws/tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(tools.join("fsmon"), "").unwrap();
    let _home = home::test_home::set(home.clone());
    std::fs::create_dir_all(&home).unwrap();
    let config = format!("[core]\n\tfsmonitor = ~/tools/fsmon\n\tpager = {0}/pager -R\n[credential]\n\thelper = !{0}/cred get\n\thelper = store\n[gpg]\n\tprogram = gpg2\n", tools.display());
    std::fs::write(home.join(".gitconfig"), config).unwrap();
    std::os::unix::fs::symlink(&tools, home.join("tools")).unwrap();
    let (roots, _) = run(&r.join("ws"), &[]);
    assert!(roots[0].read_only.contains(&tools.join("fsmon")), "{:?}", roots[0].read_only);
    let m = missing(&roots);
    for p in ["pager", "cred"] {
        assert!(m.contains(&(tools.join(p), PlaceholderKind::File)), "{p} in {m:?}");
    }
    assert!(!m.iter().any(|(p, _)| p.ends_with("store") || p.ends_with("gpg2")), "{m:?}");
}

/// An attacker's review (globalprog.sh): `~/.gitconfig` named programs of the dotfiles checkout a
/// run worked in as a later word (`sh ~/…/fsmon.sh`, `env A=1 …`), quoted, or under keys not read
/// (`pager.log`, `interactive.diffFilter`, the tools' `cmd`s); the run rewrote them, and the host's
/// `git status`/`git log` ran them. Every path word of such a value is kept, as a shell splits it.
#[test]
fn every_program_path_word_the_global_git_configuration_names_is_kept() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    let bin = home.join("dotfiles/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let _home = home::test_home::set(home.clone());
    let names = ["fsmon.sh", "pager", "editor", "logpager", "filter", "keycmd", "difftool", "mergetool", "browser", "inner", "quoted"];
    for n in names {
        std::fs::write(bin.join(n), "").unwrap();
    }
    let b = bin.display();
    let config = format!(
        "[core]\n\tfsmonitor = sh ~/dotfiles/bin/fsmon.sh\n\tpager = \"{b}/pager\"\n\teditor = env A=1 {b}/editor\n[pager]\n\tlog = {b}/logpager\n[interactive]\n\tdiffFilter = {b}/filter --color\n[gpg \"ssh\"]\n\tdefaultKeyCommand = {b}/keycmd\n[difftool \"x\"]\n\tcmd = {b}/difftool \\\"$LOCAL\\\"\n[mergetool \"x\"]\n\tcmd = {b}/mergetool\n[browser \"x\"]\n\tcmd = {b}/browser\n[alias]\n\tq = !sh -c '{b}/inner \"$@\"' -\n\tr = !'{b}/quoted'\n"
    );
    std::fs::write(home.join(".gitconfig"), config).unwrap();
    let (roots, _) = run(&home.join("dotfiles"), &[]);
    for n in names {
        assert!(roots[0].read_only.contains(&bin.join(n)), "{n} in {:?}", roots[0].read_only);
    }
}

/// An attacker's review (gitspell.sh): `~/.gitconfig` named programs of the dotfiles checkout a run
/// worked in as `$HOME/…`, `${HOME}/…`, inside `"!\"$HOME/…\""`, after a backslash-newline, and an
/// include as `~/dotfiles/\` + newline + `gitconfig.local`; git (and the shell it hands programs
/// to) resolves them all, and the run rewrote them. Each is kept now (`~user/` is
/// `git_paths`'s test: the user database's home is not this test's).
#[test]
fn program_and_include_spellings_git_resolves_are_kept() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    let dots = home.join("dotfiles");
    std::fs::create_dir_all(dots.join("bin")).unwrap();
    let _home = home::test_home::set(home.clone());
    let names = ["fsmon", "pager", "sshcmd", "cred", "inc-prog"];
    for n in names {
        std::fs::write(dots.join("bin").join(n), "").unwrap();
    }
    std::fs::write(dots.join("gitconfig.local"), "[core]\n\teditor = $HOME/dotfiles/bin/inc-prog\n").unwrap();
    let config = "[core]\n\tfsmonitor = $HOME/dotfiles/bin/fsmon\n\tpager = ${HOME}/dotfiles/bin/pager\n\tsshCommand = \\\n\t\t~/dotfiles/bin/sshcmd\n[credential]\n\thelper = \"!\\\"$HOME/dotfiles/bin/cred\\\"\"\n[include]\n\tpath = ~/dotfiles/\\\ngitconfig.local\n";
    std::fs::write(home.join(".gitconfig"), config).unwrap();
    let (roots, _) = run(&dots, &[]);
    for p in names.map(|n| dots.join("bin").join(n)).into_iter().chain([dots.join("gitconfig.local")]) {
        assert!(roots[0].read_only.contains(&p), "{} in {:?}", p.display(), roots[0].read_only);
    }
}

/// An attacker's review (repoprog.sh): a repository's own `.git/config` named a program of its
/// worktree (`core.fsmonitor = <repo>/tools/fsmon`); the run rewrote it and the host's next
/// `git status` ran it. Kept now, a relative path too (git runs it from the worktree's top), a
/// missing one whose directory exists absent; a relative word that names no directory is not a path.
#[test]
fn programs_a_repositorys_own_configuration_names_are_kept() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let _home = home::test_home::set(r.join("home"));
    let ws = r.join("ws");
    init_repo(&ws);
    std::fs::create_dir(ws.join("tools")).unwrap();
    for n in ["fsmon", "pager", "inc-prog"] {
        std::fs::write(ws.join("tools").join(n), "").unwrap();
    }
    std::fs::write(ws.join("tools/gitconfig"), "[pager]\n\tlog = tools/inc-prog\n").unwrap();
    let config = format!("[core]\n\tfsmonitor = {}/tools/fsmon\n\tpager = \"tools/pager\" -R\n[alias]\n\tx = !sed s/a/b/ ./tools/missing\n[include]\n\tpath = ../tools/gitconfig\n", ws.display());
    std::fs::write(ws.join(".git/config"), config).unwrap();
    let (roots, _) = run(&ws, &[]);
    for n in ["fsmon", "pager", "inc-prog"] {
        assert!(roots[0].read_only.contains(&ws.join("tools").join(n)), "{n} in {:?}", roots[0].read_only);
    }
    let m = missing(&roots);
    assert!(m.contains(&(ws.join("tools/missing"), PlaceholderKind::File)), "{m:?}");
    assert!(!m.iter().any(|(p, _)| p.starts_with(ws.join("s"))), "{m:?}");
}

/// `v` resolved for `cwd` and walked as a run of the runner's is (what it creates is undone after).
fn walked(cwd: &Path, v: serde_json::Value) -> ResolvedPolicy {
    let mut p = resolve_policy(Some(&v), &PolicyContext { cwd: cwd.to_path_buf(), tmpdir: None, platform: Platform::Linux, env: Default::default() }).unwrap();
    p.walk_and_protect(crate::planted::Absent::UndoneAfter);
    p
}

/// A stow home whose links reach their files through a link inside the root (`linkchain.sh`):
/// `~/.bashrc -> dotfiles/active/bashrc -> ../pkgs/bash/bashrc`, `~/.gitconfig` likewise.
fn chained_home(r: &Path) -> (PathBuf, PathBuf) {
    let home = r.join("home");
    let dots = home.join("dotfiles");
    for d in ["pkgs/bash", "pkgs/git", "active"] {
        std::fs::create_dir_all(dots.join(d)).unwrap();
    }
    std::fs::write(dots.join("pkgs/bash/bashrc"), "# mine\n").unwrap();
    std::fs::write(dots.join("pkgs/git/config"), "[user]\n\tname = me\n").unwrap();
    std::os::unix::fs::symlink("../pkgs/bash/bashrc", dots.join("active/bashrc")).unwrap();
    std::os::unix::fs::symlink("../pkgs/git/config", dots.join("active/gitconfig")).unwrap();
    std::os::unix::fs::symlink("dotfiles/active/bashrc", home.join(".bashrc")).unwrap();
    std::os::unix::fs::symlink("dotfiles/active/gitconfig", home.join(".gitconfig")).unwrap();
    (home, dots)
}

/// An attacker's review (linkchain.sh): with a home link reaching its file through a link inside
/// the root, only the chain's end was kept; the run did `ln -sf evil-bashrc active/bashrc` (and
/// the same for the global `.gitconfig`), nothing was reported, and the host's next interactive
/// shell and `git status` ran the planted files. Each link on the way is put back after the run.
#[test]
fn a_link_on_the_way_of_a_home_link_replaced_during_the_run_is_put_back() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let (home, dots) = chained_home(&r);
    let _home = home::test_home::set(home.clone());
    let v = json!({ "mode": "workspace-write", "tmp": "read-only" });
    let p = walked(&dots, v);
    assert!(p.writable_roots[0].read_only.contains(&dots.join("pkgs/bash/bashrc")), "{:?}", p.writable_roots[0].read_only);
    for (link, evil) in [("bashrc", "evil-bashrc"), ("gitconfig", "evil-git")] {
        std::fs::write(dots.join("active").join(evil), "planted\n").unwrap();
        std::fs::remove_file(dots.join("active").join(link)).unwrap();
        std::os::unix::fs::symlink(evil, dots.join("active").join(link)).unwrap();
    }
    let risks = detect(&p.planted);
    for (link, was) in [("bashrc", "../pkgs/bash/bashrc"), ("gitconfig", "../pkgs/git/config")] {
        let at = dots.join("active").join(link);
        let risk = risks.iter().find(|h| h.path == at.to_string_lossy()).unwrap_or_else(|| panic!("{link} reported: {risks:?}"));
        assert!(risk.detail.contains("undone") && !risk.detail.contains("NOT undone"), "{}", risk.detail);
        assert_eq!(std::fs::read_link(&at).unwrap(), PathBuf::from(was), "{link} put back");
    }
    assert_eq!(std::fs::read_to_string(home.join(".bashrc")).unwrap(), "# mine\n");
}

/// An attacker's review (fixes18/dirswap.sh): the run left the held link `active/bashrc` alone and
/// swapped the DIRECTORY holding it for a link to one of its own (`mv active active.old; ln -s evil
/// active`); the link could not be put back through a symlink ("NOT undone"), and the host's next
/// shell ran `evil/bashrc`. The plans pin that directory (`plan::pins::held_links`); should a run
/// swap it all the same, the symlink it made is moved aside, the directories made again and the link
/// with them. The same two levels up (`mv dotfiles/a ...` above `a/b/gitconfig`), and for a link
/// whose directory was removed.
#[test]
fn a_directory_above_a_held_link_swapped_for_a_symlink_is_undone() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let (home, dots) = chained_home(&r);
    std::fs::create_dir_all(dots.join("a/b")).unwrap();
    std::fs::remove_file(dots.join("active/gitconfig")).unwrap();
    std::os::unix::fs::symlink("../../pkgs/git/config", dots.join("a/b/gitconfig")).unwrap();
    std::fs::remove_file(home.join(".gitconfig")).unwrap();
    std::os::unix::fs::symlink("dotfiles/a/b/gitconfig", home.join(".gitconfig")).unwrap();
    let _home = home::test_home::set(home.clone());
    let v = json!({ "mode": "workspace-write", "tmp": "read-only" });
    let mut p = resolve_policy(Some(&v), &PolicyContext { cwd: dots.clone(), tmpdir: None, platform: Platform::Linux, env: Default::default() }).unwrap();
    p.walk_and_protect(crate::planted::Absent::UndoneAfter);
    let held = crate::plan::pins::held_links(&p);
    assert_eq!(held, [dots.join("a/b/gitconfig"), dots.join("active/bashrc")]);
    let pins = crate::plan::pins::plan(&p.writable_roots, &[], &[], &crate::plan::pins::kept(&p), &[]).unwrap();
    for d in ["active", "a", "a/b"] {
        assert!(pins.dirs[0].contains(&dots.join(d)), "{d} pinned: {:?}", pins.dirs);
    }
    let grants = crate::plan::landlock_grants::grants(&p, &[], &[]).unwrap();
    for d in ["", "active", "a", "a/b"] {
        assert!(grants.split.contains(&dots.join(d)), "{d} split: {grants:?}");
    }
    // The run, as the plans would not let it.
    std::fs::create_dir_all(dots.join("evil/b")).unwrap();
    std::fs::write(dots.join("evil/bashrc"), "planted\n").unwrap();
    std::fs::write(dots.join("evil/b/gitconfig"), "planted\n").unwrap();
    for top in ["active", "a"] {
        std::fs::rename(dots.join(top), dots.join(format!("{top}.old"))).unwrap();
        std::os::unix::fs::symlink("evil", dots.join(top)).unwrap();
    }
    let risks = detect(&p.planted);
    for (link, was) in [("active/bashrc", "../pkgs/bash/bashrc"), ("a/b/gitconfig", "../../pkgs/git/config")] {
        let at = dots.join(link);
        let risk = risks.iter().find(|h| h.path == at.to_string_lossy()).unwrap_or_else(|| panic!("{link} reported: {risks:?}"));
        assert!(risk.detail.contains("undone") && !risk.detail.contains("NOT undone"), "{}", risk.detail);
        assert_eq!(std::fs::read_link(&at).unwrap(), PathBuf::from(was), "{link} put back");
        let top = dots.join(link.split('/').next().unwrap());
        assert!(top.symlink_metadata().unwrap().is_dir(), "{}", top.display());
    }
    assert_eq!(std::fs::read_to_string(home.join(".bashrc")).unwrap(), "# mine\n");
    assert_eq!(std::fs::read_to_string(home.join(".gitconfig")).unwrap(), "[user]\n\tname = me\n");
    assert!(std::fs::read_dir(&dots).unwrap().flatten().any(|e| e.file_name().to_string_lossy().starts_with("active.sandspawn-held-")), "the run's link moved aside");
    // Removed with its directory: the directory is made again, and the link in it.
    let mut p = resolve_policy(Some(&v), &PolicyContext { cwd: dots.clone(), tmpdir: None, platform: Platform::Linux, env: Default::default() }).unwrap();
    p.walk_and_protect(crate::planted::Absent::UndoneAfter);
    std::fs::remove_dir_all(dots.join("active")).unwrap();
    let risks = detect(&p.planted);
    assert!(risks.iter().any(|h| h.path.ends_with("active/bashrc") && h.detail.contains("undone") && !h.detail.contains("NOT undone")), "{risks:?}");
    assert_eq!(std::fs::read_to_string(home.join(".bashrc")).unwrap(), "# mine\n");
}

/// An attacker's review (renamename.sh): `~/.bashrc -> dotfiles/bash/.bashrc` was kept read-only,
/// but its directory was not pinned (its name is a protected one, which the walk finds wherever a
/// rename puts it); the run renamed `bash` away and made a new `bash/.bashrc`, reported but left,
/// and the host's next shell ran it. A path a home link or the global git configuration names
/// stays where it is: the directories above it are pinned, whatever its name.
#[test]
fn the_directories_above_a_home_links_target_with_a_protected_name_are_pinned() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    let dots = home.join("dotfiles");
    std::fs::create_dir_all(dots.join("bash")).unwrap();
    std::fs::create_dir_all(dots.join("git")).unwrap();
    std::fs::write(dots.join("bash/.bashrc"), "# mine\n").unwrap();
    std::fs::write(dots.join("git/.gitconfig"), "[user]\n\tname = me\n").unwrap();
    std::os::unix::fs::symlink("dotfiles/bash/.bashrc", home.join(".bashrc")).unwrap();
    std::os::unix::fs::symlink("dotfiles/git/.gitconfig", home.join(".gitconfig")).unwrap();
    let _home = home::test_home::set(home.clone());
    let v = json!({ "mode": "workspace-write", "tmp": "read-only" });
    let p = walked(&dots, v);
    let kept = crate::plan::pins::kept(&p);
    for f in ["bash/.bashrc", "git/.gitconfig"] {
        assert!(kept.contains(&dots.join(f)), "{f} in {kept:?}");
    }
    // The home in a writable root too (a HOME under /tmp): its names are kept first, as the home's.
    let v = json!({ "mode": "workspace-write", "tmp": "read-only", "writableRoots": [r.to_string_lossy()] });
    let p = walked(&dots, v);
    let kept = crate::plan::pins::kept(&p);
    assert!(kept.contains(&dots.join("bash/.bashrc")), "{kept:?}");
}

/// An attacker's review (bounds17, names_index.sh): 115 names, empty, in each of 1,000 directories
/// at a 3.6 KB path cost the host 1.6 GB, and every later run seconds. The walk keeps the first
/// `scan::MAX_NAMED` entries; the rest are said: before the run in `notEnforced`, after it as
/// `scan-incomplete`. A name at a repository's top past the bound is still found (`lstat`ed) and
/// kept read-only.
#[test]
fn names_past_the_walks_bound_are_said_before_and_after_the_run() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let s = |p: PathBuf| p.to_string_lossy().into_owned();
    let names = [".envrc", ".vscode", ".idea", ".npmrc"];
    let dirs = scan::MAX_NAMED / names.len() + 5;
    let flood = |at: &Path, content: &str| {
        for d in 0..dirs {
            let dir = at.join(format!("a{d:05}"));
            std::fs::create_dir_all(&dir).unwrap();
            for n in names {
                std::fs::write(dir.join(n), content).unwrap();
            }
        }
    };
    flood(&r.join("before"), "");
    // Deeper than the flood: walked after it, past the bound.
    let repo = r.join("z/y/repo");
    init_repo(&repo);
    std::fs::write(repo.join(".envrc"), "use nix").unwrap();
    // The walk after the run trusts a directory unchanged by its ctime only when that ctime is
    // older than the second the walk started (or by its inotify watch, which other tests running
    // at once can leave this one without: 128 instances per user). So the walk starts in a later
    // second than the flood, or some of the flood is read again and counted past the bound (seen
    // in a full `cargo test --lib` on a loaded machine: 2,273 past it instead of 20).
    let flooded = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    while std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() == flooded {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let (roots, b) = run(&r, &names);
    assert_eq!((b.named.len(), b.named_unkept.count), (scan::MAX_NAMED, 21));
    assert!(roots[0].read_only.contains(&repo.join(".envrc")), "{:?}", roots[0].read_only);
    let said = b.not_enforced().unwrap_or_default();
    assert!(said.contains("more than 10000 entries named like protected names (21 past them"), "{said}");

    flood(&r.join("after"), "x");
    let risks = detect(&b);
    let unkept: Vec<&HostRisk> = risks.iter().filter(|h| h.detail.contains("entries named like protected names")).collect();
    assert_eq!(unkept.len(), 1, "{unkept:?}");
    assert!(unkept[0].kind == RiskKind::ScanIncomplete && unkept[0].path.starts_with(&s(r.join("after/a"))), "{:?}", unkept[0]);
    assert!(unkept[0].detail.contains("the 20 past them"), "{}", unkept[0].detail);
}

/// An attacker's review (bounds17, links_memory.sh): the walk after a run kept the path of every
/// symlink in the directories it read (100,000 at a 3.6 KB path: 700 MB in the host) before at
/// most `MAX_LINKS_JUDGED` were judged. It keeps those the run made, as many as are judged; the
/// rest are said as before.
#[test]
fn links_past_those_judged_are_said() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let links = r.join("links");
    std::fs::create_dir(&links).unwrap();
    for i in 0..5 {
        std::os::unix::fs::symlink("t", links.join(format!("old{i}"))).unwrap();
    }
    let (_, b) = run(&r, &[]);
    std::thread::sleep(std::time::Duration::from_millis(50));
    for i in 0..MAX_LINKS_JUDGED + 3 {
        std::os::unix::fs::symlink("t", links.join(format!("{i:06}"))).unwrap();
    }
    let all = detect(&b);
    // Past `scan::MAX_LINKS_VIA` too, whose ways are not followed: said apart.
    let (risks, via): (Vec<&HostRisk>, Vec<&HostRisk>) = all.iter().partition(|h| !h.detail.contains("text names no node_modules"));
    assert_eq!((risks.len(), via.len()), (1, 1), "{all:?}");
    assert_eq!((risks[0].path.as_str(), risks[0].kind), (links.to_str().unwrap(), RiskKind::ScanIncomplete));
    assert!(risks[0].detail.contains("the run made more than 10000 symlinks"), "{}", risks[0].detail);
}

/// An attacker's review (incif_hooks.js, spell.js): a `core.hooksPath` set in a file an
/// `[includeIf "..."]` names was not taken, so the hooks directory it names stayed writable, a run
/// planted `pre-commit` there, and the host's next `git commit` (the condition met: `gitdir:`,
/// `onbranch:`, `hasconfig:remote.*.url`) ran it. One from an `includeIf` is taken as possibly
/// applying, the repository's own and the global configuration's alike: its directory is kept
/// as a plain one's is (protecting one git may not use costs nothing).
#[test]
fn a_hooks_path_from_a_conditional_include_is_kept() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let home = r.join("home");
    std::fs::create_dir(&home).unwrap();
    let _home = home::test_home::set(home.clone());
    std::fs::write(home.join(".gitconfig"), "[includeIf \"gitdir:~/elsewhere/\"]\n\tpath = work.inc\n").unwrap();
    std::fs::write(home.join("work.inc"), "[core]\n\thooksPath = .work-hooks\n").unwrap();
    let ws = r.join("ws");
    init_repo(&ws);
    std::fs::write(ws.join(".git/config"), "[includeIf \"gitdir:/\"]\n\tpath = ../git-local.cfg\n").unwrap();
    std::fs::write(ws.join("git-local.cfg"), "[core]\n\thooksPath = tools/hk\n").unwrap();
    std::fs::create_dir(ws.join("tools")).unwrap();
    let sub = ws.join("sub");
    init_repo(&sub);
    std::fs::write(sub.join(".git/config"), "[core]\n\thooksPath = plain\n[includeIf \"onbranch:**\"]\n\tpath = branch.inc\n").unwrap();
    std::fs::write(sub.join(".git/branch.inc"), "[core]\n\thooksPath = .branch-hooks\n").unwrap();
    let (roots, _) = run(&ws, &[]);
    let m = missing(&roots);
    for p in [ws.join("tools/hk"), ws.join(".work-hooks"), sub.join("plain"), sub.join(".branch-hooks")] {
        assert!(m.contains(&(p.clone(), PlaceholderKind::Dir)), "{}: {m:?}", p.display());
    }
}

/// An attacker's review (bigcfg.js): a repository's `.git/config`, or a file it includes, of more
/// than 1 MiB was not read at all (git reads it), and nothing said so: the `core.hooksPath` past
/// the first MiB stayed writable and the host's next `git commit` ran the run's hook. Read now up
/// to `global_git::MAX_BYTES` for a configuration in all; past that the result says so.
#[test]
fn a_large_configuration_is_read_and_one_past_the_bound_is_said() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let _home = home::test_home::set(r.join("home"));
    let ws = r.join("ws");
    init_repo(&ws);
    std::fs::create_dir(ws.join("tools")).unwrap();
    let big = format!("{}[core]\n\thooksPath = tools/hk\n", format!("#{}\n", "x".repeat(99)).repeat(11_000));
    std::fs::write(ws.join(".git/config"), format!("[include]\n\tpath = ../tools/inc\n{big}")).unwrap();
    // The include's hooks path loses to the config's, read after it: its program counts.
    std::fs::write(ws.join("tools/inc"), big.replace("hooksPath = tools/hk", "fsmonitor = tools/fsmon")).unwrap();
    let (roots, baseline) = run(&ws, &[]);
    let m = missing(&roots);
    assert!(m.contains(&(ws.join("tools/hk"), PlaceholderKind::Dir)), "{m:?}");
    assert!(m.contains(&(ws.join("tools/fsmon"), PlaceholderKind::File)), "{m:?}");
    assert!(baseline.hook_links.configs_capped.is_empty(), "{:?}", baseline.hook_links.configs_capped);
    // Past the bound (sparse: nothing written): not read, and said.
    std::fs::File::create(ws.join("tools/inc")).unwrap().set_len(global_git::MAX_BYTES + 1).unwrap();
    let (_, baseline) = run(&ws, &[]);
    assert_eq!(baseline.hook_links.configs_capped, vec![ws.join(".git")]);
    assert!(baseline.hook_links.not_enforced().iter().any(|n| n.contains(&ws.join(".git").display().to_string())));
}

/// An attacker's review (manyinc_fsmon.js): a repository's configuration included 70 files, and
/// those past the 64th were neither kept read-only nor said; a run appended `core.fsmonitor` to
/// the 70th and the host's next `git status` ran it. More are read now, and past the bound the
/// result says so.
#[test]
fn includes_past_the_bound_are_said() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let _home = home::test_home::set(r.join("home"));
    let ws = r.join("ws");
    init_repo(&ws);
    std::fs::create_dir(ws.join("tools")).unwrap();
    let includes = |n: usize| (0..n).map(|i| format!("[include]\n\tpath = ../tools/i{i}\n")).collect::<String>();
    for i in 0..300 {
        std::fs::write(ws.join(format!("tools/i{i}")), "# empty\n").unwrap();
    }
    std::fs::write(ws.join(".git/config"), includes(70)).unwrap();
    let (roots, baseline) = run(&ws, &[]);
    assert!(roots[0].read_only.contains(&ws.join("tools/i69")), "{:?}", roots[0].read_only);
    assert!(baseline.hook_links.configs_capped.is_empty());
    std::fs::write(ws.join(".git/config"), includes(300)).unwrap();
    let (_, baseline) = run(&ws, &[]);
    assert_eq!(baseline.hook_links.configs_capped, vec![ws.join(".git")]);
}

/// Found by an attacker's review (quiet22, nm_link.js): a symlink into `node_modules` (the host's,
/// made before the run) led to nothing; the run planted a repository there, which no walk sees.
#[test]
fn a_repository_planted_where_a_link_into_node_modules_leads_is_reported_and_an_existing_one_kept() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    init_repo(&r);
    std::fs::create_dir_all(r.join("src")).unwrap();
    std::fs::create_dir_all(r.join("node_modules/x")).unwrap();
    std::fs::create_dir_all(r.join("node_modules/y")).unwrap();
    // Whole repositories, which git takes (`links::discover`): `init_repo`'s lacks `objects`, `refs`.
    let full = |d: &Path| {
        init_repo(d);
        std::fs::create_dir_all(d.join(".git/objects")).unwrap();
        std::fs::create_dir_all(d.join(".git/refs")).unwrap();
    };
    full(&r.join("node_modules/y"));
    std::os::unix::fs::symlink("../node_modules/x", r.join("src/lib")).unwrap();
    std::os::unix::fs::symlink("../node_modules/y", r.join("src/old")).unwrap();
    // The links older than the baseline by more than `listing::changed_since`'s slack.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let p = policy(&r, json!({}));
    let read_only: Vec<&PathBuf> = p.writable_roots.iter().flat_map(|w| &w.read_only).collect();
    assert!(read_only.contains(&&r.join("node_modules/y/.git")), "kept as the walk's: {read_only:?}");
    full(&r.join("node_modules/x"));
    std::fs::write(r.join("node_modules/x/.git/config"), "[core]\n\tfsmonitor = x\n").unwrap();
    let risks = detect(&p.planted);
    let at: Vec<_> = risks.iter().filter(|h| h.path.ends_with("src/lib")).collect();
    assert_eq!(at.len(), 1, "{risks:#?}");
    assert_eq!(at[0].kind, RiskKind::GitDirectoryCreated);
    assert!(at[0].detail.contains("core.fsmonitor"), "{}", at[0].detail);
    // Unchanged, but a run with another cwd (`node_modules/y`'s package) writes it unseen: said as
    // not judged (found by an attacker's review, rfix23, nm_nested_workspace.js).
    let old: Vec<_> = risks.iter().filter(|h| h.path.ends_with("src/old")).collect();
    assert_eq!(old.len(), 1, "{risks:#?}");
    assert_eq!(old[0].kind, RiskKind::ScanIncomplete);
    assert!(old[0].detail.contains("another working directory"), "{}", old[0].detail);
}

/// Found by an attacker's review (rfix23c, nm_alias.js): `lib -> alias/x`, `alias -> node_modules`;
/// only `alias`, whose own text names `node_modules`, was kept, and a repository a later run
/// planted at `node_modules/x` was not reported at `lib`. Decided by where a link leads now.
#[test]
fn a_link_into_node_modules_through_another_link_is_kept_and_judged() {
    let alias = |r: &Path| std::os::unix::fs::symlink("node_modules", r.join("alias")).unwrap();
    let risk = planted_behind_src_lib(&alias, "../alias/x", &|_| ());
    assert!(risk.detail.contains("core.fsmonitor"), "{}", risk.detail);
}

/// The same way made by the run itself, below an old link: `src/lib -> ../sub/d/x` led into a
/// plain directory before the run, which replaced `sub/d` with a link into `node_modules` and
/// planted a repository there. The old link is judged by where it leads after the run too.
#[test]
fn an_old_link_the_run_led_into_node_modules_is_judged() {
    let reroute = |r: &Path| {
        std::fs::remove_dir_all(r.join("sub/d")).unwrap();
        std::os::unix::fs::symlink("../node_modules", r.join("sub/d")).unwrap();
    };
    let plain = |r: &Path| std::fs::create_dir_all(r.join("sub/d/x")).unwrap();
    planted_behind_src_lib(&plain, "../sub/d/x", &reroute);
}

/// A workspace with `node_modules/x`, `src/lib -> lib_to` and what `before` makes (older than the
/// baseline); the run does `during` and plants a repository at `node_modules/x`. The one risk
/// said at `src/lib`, which must be `git-directory-created`.
fn planted_behind_src_lib(before: &dyn Fn(&Path), lib_to: &str, during: &dyn Fn(&Path)) -> HostRisk {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    init_repo(&r);
    std::fs::create_dir_all(r.join("node_modules/x")).unwrap();
    std::fs::create_dir_all(r.join("src")).unwrap();
    before(&r);
    std::os::unix::fs::symlink(lib_to, r.join("src/lib")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    let p = policy(&r, json!({}));
    during(&r);
    plant_fsmonitor(&r.join("node_modules/x"));
    let risks = detect(&p.planted);
    let at: Vec<_> = risks.iter().filter(|h| h.path.ends_with("src/lib")).collect();
    assert_eq!(at.len(), 1, "{risks:#?}");
    assert_eq!(at[0].kind, RiskKind::GitDirectoryCreated);
    at[0].clone()
}

/// Found by an attacker's review (host25, nm_dirlink.js): a run put `.cargo/config.toml` (a
/// `rustc-wrapper`) and `.envrc` in `node_modules/y`, where names are neither protected nor
/// reported, and made `tools -> node_modules/y` (and `src/tools`): the host's `cd tools && cargo
/// build` ran the wrapper, with no risk said. A link the run makes outside `node_modules` to a
/// directory inside one is said, whatever is there (a later run may fill it); one to a file is not.
#[test]
fn a_link_the_run_makes_into_a_directory_in_node_modules_is_reported() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    init_repo(&r);
    std::fs::create_dir_all(r.join("src")).unwrap();
    std::fs::create_dir_all(r.join("node_modules/.bin")).unwrap();
    std::fs::write(r.join("node_modules/.bin/tool"), "#!/bin/sh\n").unwrap();
    std::fs::create_dir_all(r.join("node_modules/old")).unwrap();
    std::os::unix::fs::symlink("node_modules/old", r.join("old")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    let p = policy(&r, json!({}));
    let y = r.join("node_modules/y");
    std::fs::create_dir_all(y.join(".cargo")).unwrap();
    std::fs::write(y.join(".cargo/config.toml"), "[build]\nrustc-wrapper = \"./w.sh\"\n").unwrap();
    std::fs::write(y.join(".envrc"), "touch /tmp/pwn\n").unwrap();
    std::os::unix::fs::symlink("node_modules/y", r.join("tools")).unwrap();
    std::os::unix::fs::symlink("../node_modules/y", r.join("src/tools")).unwrap();
    std::os::unix::fs::symlink("node_modules/later", r.join("empty")).unwrap();
    std::os::unix::fs::symlink("node_modules/.bin/tool", r.join("tool")).unwrap();
    let risks = detect(&p.planted);
    let at = |l: &str| risks.iter().filter(|h| h.path == r.join(l).to_string_lossy()).collect::<Vec<_>>();
    for link in ["tools", "src/tools", "empty"] {
        // A `tools` link is also bazelisk's pattern's parent made a link (rev44): said beside.
        let said: Vec<_> = at(link).into_iter().filter(|h| h.kind != RiskKind::ProtectedNameCreated || !link.ends_with("tools")).collect();
        assert_eq!(said.len(), 1, "{link}: {risks:#?}");
        assert!(said[0].detail.contains("node_modules") && said[0].detail.contains("not protected"), "{}", said[0].detail);
    }
    assert!(at("tool").is_empty() && at("old").is_empty(), "a link to a file, an old link: {risks:#?}");
}

/// A whole repository at `d` (git takes it: `links::discover`) whose configuration runs a program.
fn plant_fsmonitor(d: &Path) {
    init_repo(d);
    std::fs::create_dir_all(d.join(".git/objects")).unwrap();
    std::fs::create_dir_all(d.join(".git/refs")).unwrap();
    std::fs::write(d.join(".git/config"), "[core]\n\tfsmonitor = x\n").unwrap();
}

/// An attacker's review (rev22/g3_gitdir_in_tmp.js): a nested repository's `gitdir:` named a git
/// directory in the shared temporary directory, which a run in another workspace wrote. Reported
/// after every run; a git directory inside the walked roots is not (the workspace may lie in /tmp).
#[test]
fn a_git_directory_in_a_shared_place_is_reported_after_every_run() {
    with_shared_place(|ws, g| {
        std::fs::create_dir_all(g.join("objects")).unwrap();
        std::fs::create_dir_all(g.join("refs")).unwrap();
        std::fs::write(g.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir(ws.join("sub")).unwrap();
        std::fs::write(ws.join("sub/.git"), format!("gitdir: {}\n", g.display())).unwrap();
        for _ in 0..2 {
            let (_, baseline) = run(ws, &[]);
            assert_eq!(baseline.hook_links.shared_git_dirs, vec![(ws.join("sub/.git"), g.to_path_buf())]);
            let found = baseline.hook_links.after_run();
            assert!(found.iter().any(|f| f.shared && f.path == ws.join("sub/.git") && f.detail.contains(&g.display().to_string())), "{found:?}");
        }
    })
}

/// An attacker's review (rfix23/tmp_config_refs.js): the repository's own config named an included
/// file, a hooks directory and a program in the shared temporary directory, which a run in another
/// workspace wrote. Each is reported after every run, at the repository's `.git`, naming it.
#[test]
fn what_a_repository_config_names_in_a_shared_place_is_reported_after_every_run() {
    with_shared_place(|ws, g| {
        std::fs::create_dir(g.join("hooks")).unwrap();
        std::fs::write(g.join("inc.cfg"), "[user]\n\tname = x\n").unwrap();
        std::fs::write(g.join("fsmon"), "#!/bin/sh\nexit 1\n").unwrap();
        let config = format!("[include]\n\tpath = {0}/inc.cfg\n[core]\n\thooksPath = {0}/hooks\n\tfsmonitor = {0}/fsmon\n", g.display());
        std::fs::write(ws.join(".git/config"), config).unwrap();
        for _ in 0..2 {
            let (_, baseline) = run(ws, &[]);
            let found = baseline.hook_links.after_run();
            for named in ["inc.cfg", "hooks", "fsmon"] {
                let named = g.join(named).display().to_string();
                assert!(found.iter().any(|f| f.shared && f.path == ws.join(".git") && f.detail.contains(&named)), "{named}: {found:?}");
            }
        }
    })
}

/// A workspace repository and, outside it, a directory in the host's temporary directory (a shared
/// place): `f(ws, g)`, with the test's home set.
fn with_shared_place(f: impl FnOnce(&Path, &Path)) {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let _home = home::test_home::set(r.join("home"));
    let ws = r.join("ws");
    init_repo(&ws);
    let g = tempfile::tempdir().unwrap();
    let g = g.path().canonicalize().unwrap();
    assert!(links::in_shared_place(&g, &[ws.clone()]), "tempfile's directory is the host's temporary one");
    f(&ws, &g);
}

/// Found by an attacker's review (rfix24, chain_dos.js): a repository named through a symlink
/// (`ws/a9/a9/a9/.git`, `a9` a link) was given to the carver, and setup refused it on every later
/// run. The carver keeps only those named canonically, and reports the others.
#[test]
fn a_repository_named_through_a_symlink_is_not_carved() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    std::fs::create_dir_all(r.join("ws/.git")).unwrap();
    std::fs::create_dir_all(r.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(".", r.join("ws/a0")).unwrap();
    std::os::unix::fs::symlink("../elsewhere", r.join("ws/.git-link")).unwrap();
    assert!(named_canonically(&r.join("ws/.git")));
    assert!(!named_canonically(&r.join("ws/a0/.git")));
    assert!(!named_canonically(&r.join("ws/a0/a0")), "a git directory itself, through a link");
    assert!(!named_canonically(&r.join("ws/.git-link")), "a link, not a `.git`");
    std::os::unix::fs::symlink("../elsewhere", r.join("elsewhere/.git")).unwrap_or(());
    assert!(named_canonically(&r.join("elsewhere/.git")), "a `.git` that is a link: its directory is named");
}

/// An attacker's review (rfix26): tools search upward from their cwd (npm's `node_modules/.bin`
/// and `workspaces`, ESLint, pytest, cargo, go): those names are kept in the directories above a
/// workspace that a shared temporary directory covers, and at its top, not at the workspace's own
/// top, nor at the top of a `writableRoots` entry of the caller's holding the cwd (a monorepo's).
#[test]
fn upward_searched_names_are_kept_above_the_workspace_only() {
    let t = tempfile::tempdir().unwrap();
    let base = t.path().canonicalize().unwrap();
    let (ws, mono) = (base.join("tmp/outer/proj"), base.join("mono"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(mono.join("packages/a")).unwrap();
    std::fs::write(base.join("tmp/outer/package.json"), "{}").unwrap();
    let v = json!({"mode": "workspace-write", "tmp": "writable"});
    let ctx = PolicyContext { cwd: ws.clone(), tmpdir: Some(base.join("tmp").to_string_lossy().into_owned()), platform: Platform::Linux, env: Default::default() };
    let p = resolve_policy(Some(&v), &ctx).unwrap();
    let kept = missing(&p.writable_roots);
    let absent = |path: PathBuf| kept.iter().any(|(m, _)| *m == path);
    assert!(absent(base.join("tmp/outer/node_modules")) && absent(base.join("tmp/outer/eslint.config.js")), "between: {kept:?}");
    assert!(absent(base.join("tmp/node_modules")) && absent(base.join("tmp/package.json")), "TMPDIR's top, above the cwd: {kept:?}");
    assert!(p.writable_roots.iter().any(|r| r.read_only.contains(&base.join("tmp/outer/package.json"))), "there before: read-only");
    assert!(!kept.iter().any(|(m, _)| m.starts_with(&ws) && m.file_name().is_some_and(|n| n == "node_modules" || n == "package.json")), "the workspace's own top: {kept:?}");

    let v = json!({"mode": "workspace-write", "tmp": "read-only", "writableRoots": [mono.to_str().unwrap()]});
    let ctx = PolicyContext { cwd: mono.join("packages/a"), tmpdir: None, platform: Platform::Linux, env: Default::default() };
    let kept = missing(&resolve_policy(Some(&v), &ctx).unwrap().writable_roots);
    assert!(kept.iter().any(|(m, _)| *m == mono.join(".envrc")), "protected names stay: {kept:?}");
    assert!(!kept.iter().any(|(m, _)| *m == mono.join("node_modules") || *m == mono.join("package.json")), "the caller's monorepo root is the project's: {kept:?}");
    assert!(kept.iter().any(|(m, _)| *m == mono.join("packages/node_modules")), "between the roots: {kept:?}");

    // A cwd elsewhere: the shared temporary directory's top is above the workspaces nested in it
    // all the same (an attacker's review, rfix26b: `$TMPDIR/package.json` with `workspaces` and a
    // `postinstall`, written by a run in another workspace).
    let v = json!({"mode": "workspace-write", "tmp": "writable"});
    let ctx = PolicyContext { cwd: mono.clone(), tmpdir: Some(base.join("tmp").to_string_lossy().into_owned()), platform: Platform::Linux, env: Default::default() };
    let kept = missing(&resolve_policy(Some(&v), &ctx).unwrap().writable_roots);
    assert!(kept.iter().any(|(m, _)| *m == base.join("tmp/package.json")) && kept.iter().any(|(m, _)| *m == base.join("tmp/go.work")), "TMPDIR's top: {kept:?}");
    assert!(!kept.iter().any(|(m, _)| *m == mono.join("package.json")), "the workspace's own top: {kept:?}");
}

/// An attacker's review (gitabove26): a run in `/tmp/<x>/outer/proj` made `outer/.git` with a
/// `core.fsmonitor`, which the host's `git status` in the workspace found by walking up. With
/// protectGit a missing `.git` is kept absent in the directories between the roots, as at a root's
/// top; an existing one there is left to `repositories_above` (read-only, carved once); without
/// protectGit nothing of it is kept.
#[test]
fn a_missing_git_is_kept_absent_between_roots() {
    let t = tempfile::tempdir().unwrap();
    let base = t.path().canonicalize().unwrap();
    let ws = base.join("tmp/x/outer/proj");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(base.join("tmp/x/.git")).unwrap();
    let ctx = PolicyContext { cwd: ws.clone(), tmpdir: Some(base.join("tmp").to_string_lossy().into_owned()), platform: Platform::Linux, env: Default::default() };
    let p = resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "writable"})), &ctx).unwrap();
    let kept = missing(&p.writable_roots);
    assert!(kept.contains(&(base.join("tmp/x/outer/.git"), PlaceholderKind::Dir)), "between: {kept:?}");
    assert!(!kept.iter().any(|(m, _)| *m == base.join("tmp/x/.git")), "there already: {kept:?}");
    let p = resolve_policy(Some(&json!({"mode": "workspace-write", "tmp": "writable", "protectGit": false})), &ctx).unwrap();
    assert!(!missing(&p.writable_roots).iter().any(|(m, _)| m.ends_with(".git")), "protectGit off");
}

/// Found by an attacker's review (revb36): a protected name that is a dangling symlink had no
/// target to keep (`canonicalize` failed) and was left unheld: a run made where it leads
/// (`tools/envrc`), the host's `.envrc` read it. Where it leads is kept absent, at the first
/// missing directory on its way, at the top and at a nested repository's.
#[test]
fn a_protected_name_that_is_a_dangling_symlink_keeps_where_it_leads_absent() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let sub = r.join("sub");
    init_repo(&r);
    init_repo(&sub);
    std::fs::create_dir(r.join("cfg")).unwrap();
    std::os::unix::fs::symlink("tools/envrc", r.join(".envrc")).unwrap();
    std::os::unix::fs::symlink("cfg/mcp.json", r.join(".mcp.json")).unwrap();
    std::os::unix::fs::symlink("../gone/.vscode", sub.join(".vscode")).unwrap();
    // A way with `..` after a missing name: its first missing name is kept absent (rev37: the run
    // made `nowhere/` and `x`, and the link read the run's file).
    std::os::unix::fs::symlink("nowhere/../x", sub.join(".envrc")).unwrap();
    let (roots, _) = run(&r, &[".envrc", ".mcp.json", ".vscode"]);
    let m = missing(&roots);
    for (p, kind) in [(r.join("tools"), PlaceholderKind::Dir), (r.join("cfg/mcp.json"), PlaceholderKind::File), (r.join("gone"), PlaceholderKind::Dir), (sub.join("nowhere"), PlaceholderKind::Dir)] {
        assert!(m.contains(&(p.clone(), kind)), "{} not a placeholder in {m:?}", p.display());
    }
    assert!(!m.iter().any(|(p, _)| p == &r.join(".envrc") || p == &sub.join(".envrc") || p.ends_with("x")), "no placeholder at a link itself: {m:?}");
}

/// Found by an attacker's review (rev37): the symlinks past a protected name on its way were not
/// held, and a run replaced `a` of `.envrc -> a -> real` (or of a loop `.envrc -> a -> .envrc`)
/// with a file of its own. They are held now; the name itself is not (replaced, it is reported).
#[test]
fn the_links_past_a_symlinked_protected_name_are_held() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    init_repo(&r);
    std::fs::write(r.join("real"), "ok").unwrap();
    std::os::unix::fs::symlink("a", r.join(".envrc")).unwrap();
    std::os::unix::fs::symlink("real", r.join("a")).unwrap();
    std::os::unix::fs::symlink("b", r.join(".mcp.json")).unwrap();
    std::os::unix::fs::symlink(".mcp.json", r.join("b")).unwrap();
    let (_, baseline) = run(&r, &[".envrc", ".mcp.json"]);
    let mut held: Vec<PathBuf> = baseline.links_on_the_way.iter().map(|h| h.path.clone()).collect();
    held.sort();
    assert_eq!(held, vec![r.join("a"), r.join("b")]);
}

/// The same review: where the dangling link leads is a placeholder a plan or a killed run left
/// (`cfg/mcp.json -> /dev/null/sandspawn-held`): the chain ends nowhere that can be kept absent
/// (`/dev/null/...`), so the placeholder itself is the name kept absent, as one at a top is.
#[test]
fn a_dangling_protected_name_leading_to_a_leftover_placeholder_keeps_the_placeholder() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    init_repo(&r);
    std::fs::create_dir(r.join("cfg")).unwrap();
    std::os::unix::fs::symlink("/dev/null/sandspawn-held", r.join("cfg/mcp.json")).unwrap();
    std::os::unix::fs::symlink("cfg/mcp.json", r.join(".mcp.json")).unwrap();
    let (roots, _) = run(&r, &[".mcp.json"]);
    let m = missing(&roots);
    assert!(m.contains(&(r.join("cfg/mcp.json"), PlaceholderKind::File)), "{m:?}");
}

/// The same review: a plan kept `tools` absent with a directory placeholder (mode 1500); the
/// next run found `tools` there, kept `tools/envrc` absent below it, and the leftover stayed for
/// good. A placeholder directory on the way is the name kept absent (and removed after the run).
#[test]
fn a_dangling_protected_name_through_a_leftover_placeholder_directory_keeps_that_directory() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    init_repo(&r);
    std::fs::create_dir(r.join("tools")).unwrap();
    std::fs::set_permissions(r.join("tools"), std::fs::Permissions::from_mode(0o1500)).unwrap();
    std::os::unix::fs::symlink("tools/envrc", r.join(".envrc")).unwrap();
    let (roots, _) = run(&r, &[".envrc"]);
    let m = missing(&roots);
    assert!(m.contains(&(r.join("tools"), PlaceholderKind::Dir)), "{m:?}");
    assert!(!m.iter().any(|(p, _)| p != &r.join("tools") && p.starts_with(r.join("tools"))), "{m:?}");
}

/// What the walk found at a nested repository's top is what `Carver::names` and `nested_name` carve,
/// in both kinds of run (the set of found entries is looked up by the path's bytes): an existing
/// protected name and `.github/hooks` read-only, a missing `.github/hooks` kept absent where
/// `.github` exists (placeholders), nothing through a `.github` that is a symlink.
#[test]
fn a_nested_repositorys_found_names_and_github_hooks_are_carved_in_both_kinds_of_run() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    init_repo(&r);
    let (with_hooks, without, linked) = (r.join("deps/a"), r.join("deps/b"), r.join("deps/c"));
    for d in [&with_hooks, &without, &linked] {
        init_repo(d);
        std::fs::write(d.join(".envrc"), "use nix").unwrap();
    }
    std::fs::create_dir_all(with_hooks.join(".github/hooks")).unwrap();
    std::fs::create_dir_all(without.join(".github")).unwrap();
    std::fs::create_dir_all(r.join("ci-meta/hooks")).unwrap();
    std::os::unix::fs::symlink("../../ci-meta", linked.join(".github")).unwrap();
    for absent in [crate::planted::Absent::Placeholders, crate::planted::Absent::UndoneAfter] {
        let v = json!({ "mode": "workspace-write", "tmp": "read-only", "protectedNames": [".envrc"] });
        let mut p = resolve_policy(Some(&v), &PolicyContext { cwd: r.clone(), tmpdir: None, platform: Platform::Linux, env: Default::default() }).unwrap();
        p.walk_and_protect(absent);
        let ro = &p.writable_roots[0].read_only;
        for q in [with_hooks.join(".github/hooks"), with_hooks.join(".envrc"), without.join(".envrc"), linked.join(".envrc")] {
            assert!(ro.contains(&q), "{absent:?}: {} not read-only in {ro:?}", q.display());
        }
        let m = missing(&p.writable_roots);
        let kept_absent = m.contains(&(without.join(".github/hooks"), PlaceholderKind::Dir));
        assert_eq!(kept_absent, absent == crate::planted::Absent::Placeholders, "{absent:?}: {m:?}");
        assert!(!ro.iter().chain(m.iter().map(|(q, _)| q)).any(|q| q.starts_with(linked.join(".github")) || q.starts_with(r.join("ci-meta"))), "{absent:?}: nothing through the linked .github: {ro:?} {m:?}");
    }
}

/// A `.git` at a root's top that is another program's plan's placeholder (an empty directory of
/// mode 1500 at the shared `/tmp`'s top) is no repository of the root's: removed during the run
/// (the next run's cleanup of placeholders, another process's), it is no replaced `.git` (found by
/// tmpflake42: landlock.test.js's runs with `/tmp` writable reported `workspace-replaced
/// /tmp/.git` whenever a plan's leftover there was cleaned up during them). Replaced by a real one,
/// it is a repository created there.
#[test]
fn a_placeholder_git_removed_during_the_run_is_no_replaced_root() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let r = t.path().canonicalize().unwrap();
    let git = r.join(".git");
    std::fs::create_dir(&git).unwrap();
    std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o1500)).unwrap();
    let (_, b) = run(&r, &[]);
    std::fs::remove_dir(&git).unwrap();
    let risks = detect(&b);
    assert!(!risks.iter().any(|h| h.kind == RiskKind::WorkspaceReplaced), "{risks:?}");

    // The placeholder there again, then replaced by a repository during the run: reported.
    std::fs::create_dir(&git).unwrap();
    std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o1500)).unwrap();
    let (_, b) = run(&r, &[]);
    std::fs::remove_dir(&git).unwrap();
    init_repo(&r);
    let risks = detect(&b);
    assert!(risks.iter().any(|h| h.path == git.to_string_lossy() && h.kind == RiskKind::RepositoryCreated), "{risks:?}");
}
