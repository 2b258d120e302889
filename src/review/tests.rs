//! Change sets without a sandbox: upper directories written by hand as overlayfs writes them (a
//! whiteout as an empty file with `user.overlay.whiteout`, the form that needs no privilege;
//! opaque directories by their xattr), then described and applied against a real host tree.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::apply::{apply, Request};
use super::changes::ChangeKind;
use super::store::{self, ChangeSet, Meta};
use super::summary::summarize;

struct Fixture {
    _t: tempfile::TempDir,
    ws: PathBuf,
    set: ChangeSet,
    lock: store::Lock,
}

fn fixture() -> Fixture {
    let t = tempfile::tempdir().unwrap();
    let base = t.path().canonicalize().unwrap();
    let ws = base.join("ws");
    std::fs::create_dir(&ws).unwrap();
    let meta = Meta { id: String::new(), cwd: ws.clone(), created: 0, begin_ns: 0, roots: vec![ws.clone()], held: Vec::new(), protect_git: true, protected_names: vec![".envrc".into()], reported_names: Vec::new(), homes: Vec::new(), config_homes: Vec::new(), deny_links: Vec::new(), root_modes: Vec::new(), own_links: Vec::new() };
    let (set, lock) = store::create(&base.join("store"), meta).unwrap();
    Fixture { _t: t, ws, set, lock }
}

fn xattr(p: &Path, name: &std::ffi::CStr, value: &[u8]) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: valid strings and buffer.
    assert_eq!(unsafe { libc::lsetxattr(c.as_ptr(), name.as_ptr(), value.as_ptr().cast(), value.len(), 0) }, 0, "{}", std::io::Error::last_os_error());
}

fn whiteout(p: &Path) {
    std::fs::write(p, "").unwrap();
    xattr(p, c"user.overlay.whiteout", b"");
}

fn put(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The set begins now, after what the fixture wrote on the host (whose ctimes are older), and
/// the host's next change is stamped at or after it: what the helper's `--exec-after` waits for
/// before a run's command starts (the coarse clock, which stamps ctimes, reached the beginning).
fn begin_now(f: &mut Fixture) {
    f.set.meta.begin_ns = store::realtime_now_ns();
    let coarse = || {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: a valid timespec to fill.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
        ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
    };
    while coarse() < f.set.meta.begin_ns {
        std::thread::sleep(std::time::Duration::from_micros(250));
    }
}

#[test]
fn describes_and_applies_adds_modifications_deletions_and_replaced_directories() {
    let mut f = fixture();
    put(&f.ws, "keep.txt", "old");
    put(&f.ws, "same.txt", "same");
    put(&f.ws, "gone/a", "a");
    put(&f.ws, "opaque/old", "o");
    std::os::unix::fs::symlink("keep.txt", f.ws.join("link")).unwrap();
    begin_now(&mut f);
    let up = f.set.upper(0);
    put(&up, "keep.txt", "new");
    put(&up, "same.txt", "same");
    put(&up, "new/deep/file", "n");
    std::fs::set_permissions(up.join("new/deep/file"), std::fs::Permissions::from_mode(0o750)).unwrap();
    whiteout(&up.join("gone"));
    put(&up, "opaque/fresh", "f");
    xattr(&up.join("opaque"), c"user.overlay.opaque", b"y");
    std::os::unix::fs::symlink("new", up.join("link")).unwrap();
    let s = summarize(&f.set, &f.lock, 100).unwrap();
    let kinds: Vec<(String, ChangeKind)> = s.changes.iter().map(|c| (c.path.strip_prefix(&*f.ws.to_string_lossy()).unwrap().to_string(), c.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("/gone".to_string(), ChangeKind::Deleted),
            ("/keep.txt".into(), ChangeKind::Modified),
            ("/link".into(), ChangeKind::Modified),
            ("/new".into(), ChangeKind::Added),
            ("/new/deep".into(), ChangeKind::Added),
            ("/new/deep/file".into(), ChangeKind::Added),
            ("/opaque/old".into(), ChangeKind::Deleted),
            ("/opaque/fresh".into(), ChangeKind::Added),
        ]
    );
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(out.conflicts.is_empty() && out.held_back.is_empty(), "{out:?}");
    assert_eq!(std::fs::read_to_string(f.ws.join("keep.txt")).unwrap(), "new");
    assert!(!f.ws.join("gone").exists() && !f.ws.join("opaque/old").exists());
    assert_eq!(std::fs::read_to_string(f.ws.join("opaque/fresh")).unwrap(), "f");
    assert_eq!(std::fs::read_link(f.ws.join("link")).unwrap(), Path::new("new"));
    assert_eq!(std::fs::metadata(f.ws.join("new/deep/file")).unwrap().permissions().mode() & 0o7777, 0o750);
    assert!(!f.set.dir.exists(), "a set applied whole is removed");
}

#[test]
fn host_changes_since_the_beginning_conflict_and_risks_are_held_back() {
    let mut f = fixture();
    put(&f.ws, "a.txt", "base");
    begin_now(&mut f);
    put(&f.ws, "a.txt", "host edit");
    let up = f.set.upper(0);
    put(&up, "a.txt", "set edit");
    put(&up, ".envrc", "evil");
    put(&up, "sub/.git/config", "[core]\n\tfsmonitor = ./x\n");
    put(&up, "b.txt", "b");
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(out.conflicts.iter().map(|c| c.path.clone()).collect::<Vec<_>>(), [f.ws.join("a.txt").to_string_lossy()]);
    let held: Vec<String> = out.held_back.iter().map(|h| h.risk.path.clone()).collect();
    assert_eq!(held, [f.ws.join(".envrc").to_string_lossy().into_owned(), f.ws.join("sub/.git").to_string_lossy().into_owned()]);
    assert_eq!(std::fs::read_to_string(f.ws.join("a.txt")).unwrap(), "host edit");
    assert!(!f.ws.join(".envrc").exists() && !f.ws.join("sub/.git").exists());
    assert_eq!(std::fs::read_to_string(f.ws.join("b.txt")).unwrap(), "b");
    assert!(f.set.dir.exists(), "what is left stays pending");
    let forced = apply(&f.set, &f.lock, &Request { paths: Some(&[f.ws.join(".envrc")]), force: true }).unwrap();
    assert_eq!(forced.applied, [f.ws.join(".envrc").to_string_lossy()]);
}

#[test]
fn a_thousand_files_apply_streamed() {
    let mut f = fixture();
    begin_now(&mut f);
    let up = f.set.upper(0);
    for d in 0..100 {
        for i in 0..10 {
            put(&up, &format!("node_modules/p{d}/lib/f{i}.js"), "x");
        }
    }
    let s = summarize(&f.set, &f.lock, 10).unwrap();
    assert_eq!((s.counts.added, s.changes.len(), s.truncated), (1201, 10, true));
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(out.applied.len(), 1201);
    assert_eq!(std::fs::read_dir(f.ws.join("node_modules")).unwrap().count(), 100);
}

#[test]
fn a_set_applied_piece_by_piece_is_removed_once_nothing_is_left() {
    let mut f = fixture();
    put(&f.ws, "old.txt", "o");
    begin_now(&mut f);
    let up = f.set.upper(0);
    put(&up, "a/one.txt", "1");
    put(&up, "b.txt", "b");
    whiteout(&up.join("old.txt"));
    let first = apply(&f.set, &f.lock, &Request { paths: Some(&[f.ws.join("a")]), force: false }).unwrap();
    assert_eq!(first.applied.len(), 2, "{first:?}");
    assert!(f.set.dir.exists(), "b.txt and the deletion are still pending");
    assert!(!up.join("a").exists(), "what landed left the set");
    let rest = apply(&f.set, &f.lock, &Request { paths: Some(&[f.ws.join("b.txt"), f.ws.join("old.txt")]), force: false }).unwrap();
    assert_eq!(rest.applied.len(), 2, "{rest:?}");
    assert!(!f.ws.join("old.txt").exists() && f.ws.join("b.txt").exists());
    assert!(!f.set.dir.exists(), "nothing left to review: the set is gone");
}

/// The host risks of `f`'s set, as `(path below the workspace, kind)`.
fn risks_of(f: &Fixture) -> Vec<(String, crate::planted::RiskKind)> {
    let s = summarize(&f.set, &f.lock, 100).unwrap();
    let ws = f.ws.to_string_lossy().into_owned();
    s.host_risks.iter().map(|r| (r.path.strip_prefix(&ws).unwrap_or(&r.path).to_string(), r.kind)).collect()
}

/// A host repository at the workspace's top, as `git init` and one commit leave it.
fn host_repo(f: &mut Fixture) {
    put(&f.ws, ".git/HEAD", "ref: refs/heads/main\n");
    put(&f.ws, ".git/config", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n");
    put(&f.ws, ".git/refs/heads/main", "0123456789012345678901234567890123456789\n");
    put(&f.ws, ".git/objects/01/23", "x");
    put(&f.ws, ".git/hooks/pre-commit.sample", "#!/bin/sh\n");
    put(&f.ws, ".git/info/exclude", "secrets/\n");
    begin_now(f);
}

/// Found by a review of the git directory rules: a submodule's name may hold a slash, so the git
/// directory of a submodule named `vendor/objects` is `.git/modules/vendor/objects`, and its config
/// was judged as `objects/config` below a one-word name: plain data, applied, and the host's next
/// `git status` in the superproject ran its fsmonitor. A change is judged below the innermost git
/// directory that holds it, found by what it holds, not by name.
#[test]
fn a_submodule_git_directory_is_found_by_its_content_whatever_its_name() {
    use crate::planted::RiskKind;
    for (kept_on_host, name) in [(true, "vendor/objects"), (false, "vendor/objects"), (true, "a/refs/b"), (true, "m")] {
        let mut f = fixture();
        host_repo(&mut f);
        let sub = format!(".git/modules/{name}");
        let make = |base: &Path| {
            for d in ["objects", "refs"] {
                std::fs::create_dir_all(base.join(&sub).join(d)).unwrap();
            }
            std::fs::write(base.join(&sub).join("HEAD"), "ref: refs/heads/main\n").unwrap();
        };
        if kept_on_host {
            make(&f.ws);
        } else {
            make(&f.set.upper(0));
        }
        put(&f.set.upper(0), &format!("{sub}/config"), "[core]\n\tfsmonitor = \"touch /tmp/x; false\"\n");
        put(&f.set.upper(0), &format!("{sub}/objects/ab/cdef"), "blob");
        let want = format!("/{sub}/config");
        let risks = risks_of(&f);
        assert!(risks.iter().any(|(p, k)| p == &want && *k != RiskKind::ScanIncomplete), "{name} ({kept_on_host}): {risks:?}");
        assert!(!risks.iter().any(|(p, _)| p.ends_with("cdef")), "{name}: its objects are data: {risks:?}");
    }
}

#[test]
fn every_git_directory_change_but_plain_data_is_a_risk() {
    use crate::planted::RiskKind;
    let cases: Vec<(&str, Box<dyn Fn(&Path)>)> = vec![
        // The configuration replaced by a link to a workspace file (git follows it).
        ("/.git/config", Box::new(|up: &Path| {
            put(up, "notes.cfg", "[core]\n\tfsmonitor = \"touch /tmp/x; false\"\n");
            std::fs::create_dir_all(up.join(".git")).unwrap();
            std::os::unix::fs::symlink("../notes.cfg", up.join(".git/config")).unwrap();
        })),
        // Keys no blacklist had.
        ("/.git/config", Box::new(|up: &Path| put(up, ".git/config", "[pager]\n\tstatus = \"touch /tmp/x; cat\"\n"))),
        ("/.git/config", Box::new(|up: &Path| put(up, ".git/config", "[remote \"o\"]\n\turl = .\n\tuploadpack = \"touch /tmp/x; git-upload-pack\"\n"))),
        ("/.git/config", Box::new(|up: &Path| put(up, ".git/config", "[gpg \"ssh\"]\n\tdefaultKeyCommand = \"touch /tmp/x\"\n"))),
        // Another directory's configuration, objects and refs.
        ("/.git/commondir", Box::new(|up: &Path| put(up, ".git/commondir", "../gd\n"))),
        ("/.git/info/attributes", Box::new(|up: &Path| put(up, ".git/info/attributes", "* filter=x\n"))),
        ("/.git/objects/info/alternates", Box::new(|up: &Path| put(up, ".git/objects/info/alternates", "/elsewhere\n"))),
        ("/.git/rebase-merge/git-rebase-todo", Box::new(|up: &Path| put(up, ".git/rebase-merge/git-rebase-todo", "exec touch /tmp/x\n"))),
        ("/.git/HEAD", Box::new(|up: &Path| put(up, ".git/HEAD", "[core]\n\tfsmonitor = x\n"))),
        ("/.git/refs/heads/l", Box::new(|up: &Path| {
            std::fs::create_dir_all(up.join(".git/refs/heads")).unwrap();
            std::os::unix::fs::symlink("/etc/passwd", up.join(".git/refs/heads/l")).unwrap();
        })),
        // The repository replaced by a `gitdir:` file.
        ("/.git", Box::new(|up: &Path| put(up, ".git", "gitdir: elsewhere\n"))),
    ];
    for (want, plant) in cases {
        let mut f = fixture();
        host_repo(&mut f);
        plant(&f.set.upper(0));
        let risks = risks_of(&f);
        assert!(risks.iter().any(|(p, k)| p == want && *k != RiskKind::ScanIncomplete), "{want}: {risks:?}");
        let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
        assert!(out.held_back.iter().any(|h| h.path.ends_with(want)), "{want} held back: {out:?}");
    }
    // A deletion outside the plain data is one too (what git reads is not removed unasked).
    let mut f = fixture();
    host_repo(&mut f);
    std::fs::create_dir_all(f.set.upper(0).join(".git/info")).unwrap();
    whiteout(&f.set.upper(0).join(".git/info/exclude"));
    assert_eq!(risks_of(&f).len(), 1);
}

#[test]
fn what_git_itself_writes_as_data_is_no_risk() {
    let mut f = fixture();
    host_repo(&mut f);
    let up = f.set.upper(0);
    put(&up, ".git/HEAD", "ref: refs/heads/other\n");
    put(&up, ".git/ORIG_HEAD", "0123456789012345678901234567890123456789\n");
    put(&up, ".git/index", "DIRC");
    put(&up, ".git/COMMIT_EDITMSG", "msg\n");
    put(&up, ".git/packed-refs", "# pack-refs with: peeled\n");
    put(&up, ".git/refs/heads/other", "0123456789012345678901234567890123456789\n");
    put(&up, ".git/logs/HEAD", "x\n");
    put(&up, ".git/objects/ab/cdef", "x");
    put(&up, ".git/objects/pack/pack-1.pack", "x");
    put(&up, ".git/objects/info/commit-graph", "x");
    std::fs::create_dir_all(up.join(".git/objects/01")).unwrap();
    whiteout(&up.join(".git/objects/01/23"));
    assert_eq!(risks_of(&f), []);
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(out.held_back.is_empty() && out.conflicts.is_empty(), "{out:?}");
}

#[test]
fn the_workspace_root_turned_into_a_git_directory_is_a_risk() {
    let mut f = fixture();
    begin_now(&mut f);
    let up = f.set.upper(0);
    put(&up, "HEAD", "ref: refs/heads/main\n");
    put(&up, "config", "[core]\n\tworktree = .\n\tfsmonitor = \"touch /tmp/x; false\"\n");
    std::fs::create_dir_all(up.join("objects")).unwrap();
    std::fs::create_dir_all(up.join("refs/heads")).unwrap();
    put(&up, "src/main.c", "int main;\n");
    let risks = risks_of(&f);
    assert_eq!(risks, [(String::new(), crate::planted::RiskKind::GitDirectoryCreated)]);
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(!f.ws.join("config").exists() && !f.ws.join("HEAD").exists(), "{out:?}");
    assert!(f.ws.join("src/main.c").exists(), "the rest lands");
}

#[test]
fn a_directory_with_head_and_commondir_is_a_git_directory() {
    let mut f = fixture();
    put(&f.ws, "sub/HEAD", "not a git dir yet\n");
    begin_now(&mut f);
    let up = f.set.upper(0);
    put(&up, "sub/commondir", "../gd\n");
    assert_eq!(risks_of(&f), [("/sub".to_string(), crate::planted::RiskKind::GitDirectoryCreated)]);
}

#[test]
fn reported_names_are_held_back_like_protected_ones() {
    let mut f = fixture();
    f.set.meta.reported_names = vec![".tool-versions".into(), "mise.toml".into()];
    begin_now(&mut f);
    put(&f.set.upper(0), ".tool-versions", "nodejs 20\n");
    put(&f.set.upper(0), "mise.toml", "[hooks]\nenter = \"touch /tmp/x\"\n");
    let risks = risks_of(&f);
    assert_eq!(risks, [("/.tool-versions".to_string(), crate::planted::RiskKind::ProtectedNameCreated), ("/mise.toml".to_string(), crate::planted::RiskKind::ProtectedNameCreated)]);
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(out.held_back.len(), 2);
    assert!(!f.ws.join("mise.toml").exists());
}

/// An attacker's review: review mode held back `.exrc` and `lefthook-local.yml` but landed the
/// names beside them that the same tools read (`.vimrc`, `.devcontainer.json`,
/// `lefthook-local.yaml`, `pnpm-workspace.yaml` naming a pnpmfile) with a plain apply. The
/// defaults are the direct runs' (`planted::names`): both modes judge the same names.
#[test]
fn the_names_beside_the_listed_ones_are_held_back_by_default() {
    let mut f = fixture();
    f.set.meta.protected_names = crate::planted::names::defaults();
    f.set.meta.reported_names = crate::planted::names::reported_defaults();
    begin_now(&mut f);
    let planted = [".vimrc", "_exrc", ".devcontainer.json", "opencode.jsonc", ".opencode/plugins/p.js", "irb.rc", "lefthook-local.yaml", ".lefthook.toml", ".mise.local.toml", ".rtx.toml", "pnpm-workspace.yaml"];
    for p in planted {
        put(&f.set.upper(0), p, "x\n");
    }
    let risks = risks_of(&f);
    for p in planted {
        let at = format!("/{}", p.split('/').next().unwrap());
        assert!(risks.contains(&(at.clone(), crate::planted::RiskKind::ProtectedNameCreated)), "{at}: {risks:?}");
    }
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert_eq!(out.held_back.len(), planted.len(), "{out:?}");
}

#[test]
fn a_selected_path_does_not_apply_its_parents_own_change() {
    let mut f = fixture();
    std::fs::create_dir(f.ws.join("sub")).unwrap();
    std::fs::set_permissions(f.ws.join("sub"), std::fs::Permissions::from_mode(0o755)).unwrap();
    begin_now(&mut f);
    let up = f.set.upper(0);
    put(&up, "sub/new.txt", "x");
    std::fs::set_permissions(up.join("sub"), std::fs::Permissions::from_mode(0o700)).unwrap();
    put(&up, "fresh/deep/new.txt", "y");
    let out = apply(&f.set, &f.lock, &Request { paths: Some(&[f.ws.join("sub/new.txt"), f.ws.join("fresh/deep/new.txt")]), force: false }).unwrap();
    let ws = f.ws.to_string_lossy().into_owned();
    let mut applied: Vec<String> = out.applied.iter().map(|p| p.strip_prefix(&ws).unwrap().to_string()).collect();
    applied.sort();
    assert_eq!(applied, ["/fresh/deep/new.txt", "/sub/new.txt"]);
    assert_eq!(std::fs::metadata(f.ws.join("sub")).unwrap().permissions().mode() & 0o7777, 0o755, "sub's own change was not asked for");
    assert_eq!(std::fs::metadata(f.ws.join("fresh")).unwrap().permissions().mode() & 0o7022, 0, "a directory made only to pass through is writable by its owner alone");
    assert!(f.set.dir.exists(), "sub's mode change is still pending");
    let s = summarize(&f.set, &f.lock, 100).unwrap();
    assert!(s.changes.iter().any(|c| c.path.ends_with("/sub")), "{s:?}");
}

#[test]
fn a_tree_deeper_than_path_max_is_reported_held_and_removable() {
    let mut f = fixture();
    begin_now(&mut f);
    let up = f.set.upper(0);
    put(&up, "ok.txt", "fine");
    crate::remove_tree::tests::deep_chain(&up, 25, &"x".repeat(200));
    // Deep but within PATH_MAX: stops at the depth bound.
    std::fs::create_dir(up.join("d")).unwrap();
    crate::remove_tree::tests::deep_chain(&up.join("d"), super::entries::MAX_DEPTH + 20, "d");
    let s = summarize(&f.set, &f.lock, 1000).unwrap();
    assert!(s.truncated);
    let incomplete: Vec<&String> = s.host_risks.iter().filter(|r| r.kind == crate::planted::RiskKind::ScanIncomplete).map(|r| &r.path).collect();
    assert_eq!(incomplete.len(), 2, "{:?}", s.host_risks);
    assert!(s.changes.iter().any(|c| c.path.ends_with("/ok.txt")), "{:?}", s.host_risks);
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
    assert!(out.applied.iter().any(|p| p.ends_with("/ok.txt")), "{out:?}");
    assert_eq!(out.held_back.len(), 2, "what was not examined is held back");
    assert!(f.set.dir.exists(), "and stays in the set");
    store::remove(&f.set, &f.lock).unwrap();
    assert!(!f.set.dir.exists(), "a set of any depth can be removed");
}

mod home;
mod deny_links;
mod npx_bin;
mod hard_links;
mod hooks_elsewhere;
mod elsewhere_wording;
mod raw_paths;
mod reading;
mod replaced_dirs;
mod swapped_paths;
mod root_mode;
mod special_files;
mod unreadable;
mod held_view;
mod swapped_frames;
mod revision;
mod written_while_applied;
mod held_open;
