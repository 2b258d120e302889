//! A workspace changed between the host's plan and the helper's mounts (what a concurrent run in
//! the same workspace can do): the run is planned again, the entry the plan protects is the one
//! protected, and a workspace that keeps changing fails the run without running the command.
//! The change is made by a hook the runner calls after each plan (`test_hooks`), so the race is
//! hit every time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;

use super::{launch, test_hooks, ProcessHandle, RunResult};
use crate::error::ErrorCode;
use crate::options::{parse_spawn_options, Entry, HostContext};

/// A workspace under the target directory (not the shared /tmp, whose top every run protects).
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let t = tempfile::Builder::new().prefix("changed-").tempdir_in(base).unwrap();
    let ws = t.path().canonicalize().unwrap();
    (t, ws)
}

fn repository(at: &Path) {
    std::fs::create_dir_all(at.join(".git/hooks")).unwrap();
    std::fs::write(at.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
}

/// Start `cmd` in `ws` with `opts` (as `startSandboxed`, which takes every option used here).
fn start_in(ws: &Path, cmd: serde_json::Value, opts: serde_json::Value, input: Option<&[u8]>) -> ProcessHandle {
    let host = HostContext { cwd: ws.to_path_buf(), env: BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]), package_dir: None };
    let req = parse_spawn_options(&cmd, &opts, &host, Entry::Start, input.map(<[u8]>::to_vec)).expect("valid options");
    let (handle, driver) = launch(req, None);
    tokio::spawn(driver);
    handle
}

/// The run's result; the hook of `ws` is cleared once it has ended.
async fn finish(ws: &Path, handle: ProcessHandle) -> crate::Result<RunResult> {
    let r = handle.wait().await;
    test_hooks::clear(ws);
    r
}

/// `cmd` run to the end in `ws` in workspace-write.
async fn run_in(ws: &Path, cmd: serde_json::Value, input: Option<&[u8]>) -> crate::Result<RunResult> {
    finish(ws, start_in(ws, cmd, json!({ "sandbox": "workspace-write" }), input)).await
}

/// Calls `change(n)` after the n-th plan (from 1) of runs in `ws`; returns the count of plans.
fn after_each_plan(ws: &Path, mut change: impl FnMut(usize) + Send + 'static) -> Arc<AtomicUsize> {
    let plans = Arc::new(AtomicUsize::new(0));
    let counted = plans.clone();
    test_hooks::after_plan(ws, move || change(counted.fetch_add(1, Ordering::SeqCst) + 1));
    plans
}

/// A nested repository in `ws` whose `.git` is removed once the first plan is made.
fn nested_repository_removed_after_the_first_plan(ws: &Path) -> Arc<AtomicUsize> {
    repository(&ws.join("sub"));
    let gone = ws.join("sub/.git");
    after_each_plan(ws, move |n| {
        if n == 1 {
            std::fs::remove_dir_all(&gone).unwrap();
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_removed_after_the_plan_is_planned_again_and_the_input_sent_again() {
    let (_t, ws) = workspace();
    let plans = nested_repository_removed_after_the_first_plan(&ws);
    let handle = start_in(&ws, json!(["cat"]), json!({ "sandbox": "workspace-write" }), Some(b"the input"));
    // Started once the command runs: in the second attempt, never the stopped first one.
    let started = handle.started().await.expect("started");
    let r = finish(&ws, handle).await.expect("planned again, then run");
    assert_eq!((r.exit_code, r.stdout.as_str(), r.stderr.as_str()), (Some(0), "the input", ""), "nothing of the first attempt shows");
    assert_eq!(started, r.pid, "started() named the stopped attempt's process");
    assert_eq!(plans.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decoy_renamed_into_place_after_the_plan_is_not_what_is_protected() {
    let (_t, ws) = workspace();
    repository(&ws.join("repo"));
    let w = ws.clone();
    // The attack: once the host planned `repo/.git` read-only, the real repository moves away and
    // a decoy takes its name. Without the helper's check of the entry, the decoy is protected and
    // the real `.git` is writable at its new name for the whole run.
    let plans = after_each_plan(&ws, move |n| {
        if n == 1 {
            std::fs::rename(w.join("repo"), w.join("real")).unwrap();
            repository(&w.join("repo"));
        }
    });
    let write = "echo 'touch /tmp/pwned' > real/.git/hooks/pre-commit; echo rc=$?";
    let r = run_in(&ws, json!(["sh", "-c", write]), None).await;
    let r = r.expect("planned again, then run");
    assert!(!ws.join("real/.git/hooks/pre-commit").exists(), "the real repository's hooks were writable: {}", r.stdout);
    assert!(r.stdout.starts_with("rc=") && r.stdout != "rc=0\n", "{}", r.stdout);
    assert_eq!(plans.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_that_changes_under_every_plan_fails_the_run_and_runs_nothing() {
    let (_t, ws) = workspace();
    repository(&ws.join("a"));
    let w = ws.clone();
    let plans = after_each_plan(&ws, move |n| {
        let (from, to) = if n % 2 == 1 { ("a", "b") } else { ("b", "a") };
        std::fs::rename(w.join(from), w.join(to)).unwrap();
    });
    let r = run_in(&ws, json!(["touch", "ran"]), None).await;
    let e = r.expect_err("no plan held");
    assert_eq!(e.code, ErrorCode::SetupFailed);
    assert!(e.message.contains("the workspace changed") && e.message.contains("each of 3 attempts"), "{}", e.message);
    assert!(!ws.join("ran").exists(), "the command ran");
    assert_eq!(plans.load(Ordering::SeqCst), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workspaces_own_git_removed_after_the_plan_is_resolved_again() {
    let (_t, ws) = workspace();
    repository(&ws);
    let gone = ws.join(".git");
    // The top's carve-outs are made when the options are resolved, not by the walk: planning again
    // must resolve them again, or every attempt names the same missing `.git`.
    let plans = after_each_plan(&ws, move |n| {
        if n == 1 {
            std::fs::remove_dir_all(&gone).unwrap();
        }
    });
    let r = run_in(&ws, json!(["true"]), None).await;
    assert_eq!(r.expect("resolved and planned again").exit_code, Some(0));
    assert_eq!(plans.load(Ordering::SeqCst), 2);
}

/// Unmounts (lazily) when dropped, so a failed assertion leaves no mount on the host.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// A mount made over a `.git` on the host changes what the path leads to without changing the
/// directory that lists it, so the walk's kept listing still names the entry below the mount.
/// Planning again must read the workspace afresh, not fail the same way three times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mount_over_a_git_after_the_plan_is_planned_again_from_a_fresh_walk() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: a mount on the host needs root (.ci/run runs cargo test as root)");
        return;
    }
    if !crate::test_mount_table::in_own_mount_namespace("runner::tests_changed::a_mount_over_a_git_after_the_plan_is_planned_again_from_a_fresh_walk") {
        return;
    }
    let _table = crate::test_mount_table::changing();
    // Shared, as a host's `/` is (systemd): the run walks while bwrap sets up (`runner::overlap`),
    // so the mount below is made once bwrap has its namespace, and reaches the sandbox as it does
    // on a host, by propagation (until the helper makes the sandbox's mounts private). In this
    // test's private namespace only.
    let shared = std::process::Command::new("mount").args(["--make-rshared", "/"]).status().is_ok_and(|s| s.success());
    assert!(shared, "mount --make-rshared / failed");
    let (_t, ws) = workspace();
    let (_o, other) = workspace();
    repository(&ws.join("repo"));
    repository(&other);
    // Walked, and walked again, before the change: the listing of `repo` is one the next walk keeps.
    for _ in 0..2 {
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        assert_eq!(run_in(&ws, json!(["true"]), None).await.unwrap().exit_code, Some(0));
    }
    let (source, target) = (other.join(".git"), ws.join("repo/.git"));
    let mounted: Arc<std::sync::Mutex<Option<Mounted>>> = Arc::default();
    let hold = mounted.clone();
    let plans = after_each_plan(&ws, move |n| {
        if n == 1 {
            let ok = std::process::Command::new("mount").arg("--bind").arg(&source).arg(&target).status().is_ok_and(|s| s.success());
            assert!(ok, "mount --bind failed");
            *hold.lock().unwrap() = Some(Mounted(target.clone()));
        }
    });
    let r = run_in(&ws, json!(["true"]), None).await;
    drop(mounted.lock().unwrap().take());
    assert_eq!(r.expect("planned again from a fresh walk").exit_code, Some(0));
    assert_eq!(plans.load(Ordering::SeqCst), 2);
}

/// With `stdin: 'pipe'` what the caller wrote went to the attempt that stopped: no second plan,
/// the run fails at once, saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_stdin_a_pipe_a_changed_workspace_fails_the_run_at_once() {
    let (_t, ws) = workspace();
    let plans = nested_repository_removed_after_the_first_plan(&ws);
    let handle = start_in(&ws, json!(["cat"]), json!({ "sandbox": "workspace-write", "stdin": "pipe" }), None);
    let _ = handle.write(b"early").await;
    let e = finish(&ws, handle).await.expect_err("not planned again");
    assert_eq!(e.code, ErrorCode::SetupFailed);
    assert!(e.message.contains("the workspace changed") && !e.message.contains("attempts"), "{}", e.message);
    assert_eq!(plans.load(Ordering::SeqCst), 1);
}

/// A read-only path that is a fifo all along is no change of the workspace: the run fails at once,
/// saying what the path is, not planned again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_fifo_fails_at_once_and_says_why() {
    let (_t, ws) = workspace();
    let fifo = ws.join("pipe");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let plans = after_each_plan(&ws, |_| {});
    let opts = json!({ "sandbox": { "mode": "workspace-write", "readOnlyPaths": [fifo.to_str().unwrap()] } });
    let e = finish(&ws, start_in(&ws, json!(["true"]), opts, None)).await.expect_err("a fifo cannot be made read-only");
    assert_eq!(e.code, ErrorCode::SetupFailed);
    assert!(e.message.contains("neither a directory nor a regular file") && !e.message.contains("the workspace changed"), "{}", e.message);
    assert_eq!(plans.load(Ordering::SeqCst), 1);
}

/// The Landlock mode grants a directory that holds a read-only path entry by entry, each granted
/// whole. A repository renamed into the place of a granted directory between the plan and the
/// grants would have its `.git` granted with it; the grant is checked against the entry planned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_landlock_mode_a_repository_renamed_into_a_granted_place_is_not_granted() {
    let (_t, ws) = workspace();
    let (_o, other) = workspace();
    repository(&ws);
    std::fs::create_dir(ws.join("plain")).unwrap();
    repository(&other.join("victim"));
    let (w, victim) = (ws.clone(), other.join("victim"));
    let plans = after_each_plan(&ws, move |n| {
        if n == 1 {
            std::fs::rename(w.join("plain"), w.join("plain-away")).unwrap();
            std::fs::rename(&victim, w.join("plain")).unwrap();
        }
    });
    let opts = json!({ "sandbox": "workspace-write", "linux": { "allow": ["landlock"] } });
    let write = "echo 'touch /tmp/pwned' > plain/.git/hooks/pre-commit; echo rc=$?";
    let r = finish(&ws, start_in(&ws, json!(["sh", "-c", write]), opts, None)).await;
    let r = r.expect("planned again, then run");
    assert_eq!(r.sandbox_type, crate::platform::SandboxType::Landlock);
    assert!(!ws.join("plain/.git/hooks/pre-commit").exists(), "the renamed repository's hooks were writable: {}", r.stdout);
    assert_eq!(plans.load(Ordering::SeqCst), 2);
}

/// Once the first plan of runs in `ws` is made, `other/a` is moved aside and becomes a link to
/// `/{to}`: relative, with as many `..` as `other` is deep, so it leads there on the host and in
/// bwrap's old and new roots alike (an absolute link would resolve in bwrap's own root).
fn swap_for_a_link_after_the_first_plan(ws: &Path, other: &Path, to: &str) -> Arc<AtomicUsize> {
    let link = format!("{}{to}", "../".repeat(other.components().count() - 1));
    let o = other.to_path_buf();
    after_each_plan(ws, move |n| {
        if n == 1 {
            std::fs::rename(o.join("a"), o.join("a.real")).unwrap();
            std::os::unix::fs::symlink(&link, o.join("a")).unwrap();
        }
    })
}

/// A directory above a writable root swapped for a link into `/sys` once the policy (which refuses
/// writable roots on kernel filesystems) has resolved it, before bwrap binds the root: bwrap binds
/// whatever the path leads to then, so the sandbox held the host's sysfs writable (as root, the
/// host kernel's settings; a concurrent run with the directory above in its writable root can do
/// this). The helper now refuses to go on when the
/// sandbox holds a kernel filesystem writable anywhere but its own `/proc`, and the run is planned
/// again, which refuses the root.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writable_root_swapped_onto_a_kernel_filesystem_after_the_plan_is_never_bound_writable() {
    let (_t, ws) = workspace();
    let (_o, other) = workspace();
    std::fs::create_dir_all(other.join("a/mm")).unwrap();
    let plans = swap_for_a_link_after_the_first_plan(&ws, &other, "sys/kernel");
    let root = other.join("a/mm");
    // What the command sees of any mount whose point ends in `/mm`: its point, its options, its type.
    let show = r#"awk '$5 ~ /\/mm$/ { for (i = 7; $i != "-"; i++); print $5, $6, $(i + 1) }' /proc/self/mountinfo"#;
    let opts = json!({ "sandbox": { "mode": "workspace-write", "writableRoots": [root] } });
    let r = finish(&ws, start_in(&ws, json!(["sh", "-c", show]), opts, None)).await;
    assert!(other.join("a").read_link().is_ok(), "the swap was not made");
    match r {
        Ok(r) => panic!("the command ran; its mounts ending in /mm: {:?} (stderr {:?})", r.stdout, r.stderr),
        Err(e) => {
            assert_eq!(e.code, ErrorCode::InvalidOptions, "{}", e.message);
            assert!(e.message.contains("kernel"), "{}", e.message);
        }
    }
    assert_eq!(plans.load(Ordering::SeqCst), 1, "the policy refused the root when planning again, before a plan");
}

/// Found by a review of the check above, which passed the host's devices: the same swap onto the
/// host's `/dev` (a root named `dev` whose parent became a link to `/`). bwrap's `--remount-ro
/// /dev` made that mount read-only but not what it holds: the host's devpts (as root, `chmod 666`
/// of root's terminal) and `/dev/shm` stayed writable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writable_root_swapped_onto_the_host_s_dev_after_the_plan_is_never_bound() {
    let (_t, ws) = workspace();
    let (_o, other) = workspace();
    std::fs::create_dir_all(other.join("a/dev")).unwrap();
    let plans = swap_for_a_link_after_the_first_plan(&ws, &other, "");
    let opts = json!({ "sandbox": { "mode": "workspace-write", "writableRoots": [other.join("a/dev")] } });
    let show = r#"awk '$5 ~ /^\/dev/ { for (i = 7; $i != "-"; i++); print $4, $5, $6, $(i + 1) }' /proc/self/mountinfo"#;
    let r = finish(&ws, start_in(&ws, json!(["sh", "-c", show]), opts, None)).await;
    assert!(other.join("a").read_link().is_ok(), "the swap was not made");
    match r {
        Ok(r) => panic!("the command ran; its mounts under /dev: {:?} (stderr {:?})", r.stdout, r.stderr),
        Err(e) => {
            assert_eq!(e.code, ErrorCode::InvalidOptions, "{}", e.message);
            assert!(e.message.contains("/dev lies on devtmpfs"), "{}", e.message);
        }
    }
    assert_eq!(plans.load(Ordering::SeqCst), 1, "the policy refused the root when planning again, before a plan");
}

/// How a run ended, in a line: its exit and output, or its error.
fn brief(r: &crate::Result<RunResult>) -> String {
    match r {
        Ok(r) => format!("exit {:?}, stdout {:?}, stderr {:?}", r.exit_code, r.stdout, r.stderr),
        Err(e) => format!("{:?}: {}", e.code, e.message),
    }
}

/// A relative link placed in `dir` that leads to the absolute path `to` on the host and in bwrap's
/// old and new roots alike (an absolute link would resolve in bwrap's own root).
fn relative_link(dir: &Path, to: &Path) -> String {
    format!("{}{}", "../".repeat(dir.components().count() - 1), to.strip_prefix("/").unwrap().display())
}

/// After the first plan of runs in `cwd`, `dir/a` is moved aside and becomes a link to `to`: what
/// a concurrent run flipping `a` back and forth does, hit each time.
fn swap_for_a_link_after_the_first_plan_to(cwd: &Path, dir: &Path, to: &Path) -> Arc<AtomicUsize> {
    let (link, d) = (relative_link(dir, to), dir.to_path_buf());
    after_each_plan(cwd, move |n| {
        if n == 1 {
            std::fs::rename(d.join("a"), d.join("a.real")).unwrap();
            std::os::unix::fs::symlink(&link, d.join("a")).unwrap();
        }
    })
}

/// The run in `cwd` (workspace-write) of a command writing `target`, after which `dir/a`, which a
/// hook replaced by a link, is put back. Nothing may have been written, and the run fails as a
/// setup failure that names the root.
async fn write_with_a_link_swapped_in(cwd: &Path, dir: &Path, target: &Path, plans: Arc<AtomicUsize>) {
    let write = format!("echo planted > {}; echo rc=$?", target.display());
    let r = finish(cwd, start_in(cwd, json!(["sh", "-c", write]), json!({ "sandbox": "workspace-write" }), None)).await;
    let swapped = dir.join("a").read_link().is_ok();
    if swapped {
        std::fs::remove_file(dir.join("a")).unwrap();
        std::fs::rename(dir.join("a.real"), dir.join("a")).unwrap();
    }
    assert!(swapped, "the swap was not made");
    assert!(!target.exists(), "the link's target was bound writable: {}", brief(&r));
    let e = r.expect_err("the run went on where a directory on its root's path is a link");
    assert_eq!(e.code, ErrorCode::SetupFailed, "{}", e.message);
    // The helper refused the first plan, or bwrap did (a link as its bind's destination, with a
    // bwrap of 0.9 or later; or no root at all, looking between the hook's rename and its new link:
    // since bwrap starts while the walk runs, `overlap`, this hook fires during bwrap's setup, in
    // words that depend on the step: "Can't find source path", "Can't get type of source", ...),
    // and the runner read it as the workspace changed (`setup_changed`); planning again refused
    // the root, now behind a link. Nothing ran.
    assert!(e.message.contains(&cwd.display().to_string()) && e.message.contains("changed while the sandbox was planned"), "{}", e.message);
    assert_eq!(plans.load(Ordering::SeqCst), 1);
}

/// Found by an attacker's review (race18): bwrap binds a writable root by its path, following
/// symlinks in it, when it runs. A concurrent run that swapped the root (the cwd `ws/a`) for a link
/// between the host's plan and bwrap's bind had the link's target bound writable, any directory of
/// the host (the user's home, to plant `~/.bashrc`), while the run's result named the cwd asked for.
/// The helper now checks, before anything else, that each planned writable mount is a mount of the
/// planned directory at the planned path, reached without a symlink; the run is planned again, and
/// the root, behind a link now, refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writable_root_swapped_for_a_link_after_the_plan_is_never_bound_where_the_link_leads() {
    let (_t, ws) = workspace();
    let (_o, outside) = workspace();
    std::fs::create_dir(ws.join("a")).unwrap();
    let cwd = ws.join("a");
    let plans = swap_for_a_link_after_the_first_plan_to(&cwd, &ws, &outside);
    write_with_a_link_swapped_in(&cwd, &ws, &outside.join("PWNED"), plans).await;
}

/// The same with a directory above the root swapped (cwd `ws/a/bin`, `ws/a` a link to a directory
/// that holds a `bin`): the bundled bwrap refuses a link as a bind's destination, but follows one
/// above it, so any directory whose last name is the root's was reachable (`/usr/bin`, for root).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_above_a_writable_root_swapped_for_a_link_after_the_plan_is_never_bound_where_the_link_leads() {
    let (_t, ws) = workspace();
    let (_o, outside) = workspace();
    std::fs::create_dir_all(ws.join("a/bin")).unwrap();
    std::fs::create_dir(outside.join("bin")).unwrap();
    let cwd = ws.join("a/bin");
    let plans = swap_for_a_link_after_the_first_plan_to(&cwd, &ws, &outside);
    write_with_a_link_swapped_in(&cwd, &ws, &outside.join("bin/PWNED"), plans).await;
}

/// What `landlock_swap` swaps as a preparation begins (a `before_prepare` hook is a plain `fn`).
static LANDLOCK_SWAP: std::sync::Mutex<Option<(PathBuf, String)>> = std::sync::Mutex::new(None);

/// Once: `dir/a` moved aside and made a link (`LANDLOCK_SWAP`), after the policy was resolved and
/// before the plan.
fn landlock_swap() {
    if let Some((dir, link)) = LANDLOCK_SWAP.lock().unwrap().take() {
        std::fs::rename(dir.join("a"), dir.join("a.real")).unwrap();
        std::os::unix::fs::symlink(&link, dir.join("a")).unwrap();
    }
}

/// The Landlock mode's form: its plan took a root's identity from an `lstat` that follows links
/// above it, and the helper opened the grant without following only its last component, so a
/// directory above the root swapped for a link once the policy was resolved (and kept so) had the
/// link's target granted writable, its identity matching. The plan now takes the identity the
/// policy recorded, and the helper opens a grant without following any link.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_landlock_mode_a_directory_above_a_writable_root_swapped_for_a_link_is_not_granted() {
    let (_t, ws) = workspace();
    let (_o, outside) = workspace();
    std::fs::create_dir_all(ws.join("a/bin")).unwrap();
    std::fs::create_dir(outside.join("bin")).unwrap();
    let cwd = ws.join("a/bin");
    *LANDLOCK_SWAP.lock().unwrap() = Some((ws.clone(), relative_link(&ws, &outside)));
    test_hooks::before_prepare(&cwd, landlock_swap);
    let opts = json!({ "sandbox": "workspace-write", "linux": { "allow": ["landlock"] } });
    let write = format!("echo planted > {}/bin/PWNED; echo rc=$?", outside.display());
    let r = finish(&cwd, start_in(&cwd, json!(["sh", "-c", write]), opts, None)).await;
    let swapped = ws.join("a").read_link().is_ok();
    if swapped {
        std::fs::remove_file(ws.join("a")).unwrap();
        std::fs::rename(ws.join("a.real"), ws.join("a")).unwrap();
    }
    assert!(swapped, "the swap was not made");
    assert!(!outside.join("bin/PWNED").exists(), "the link's target was granted writable: {}", brief(&r));
    if let Ok(r) = r {
        assert_eq!(r.sandbox_type, crate::platform::SandboxType::Landlock);
        assert!(r.stdout.starts_with("rc=") && r.stdout != "rc=0\n", "{}", r.stdout);
    }
}

/// Found by an attacker's review (rev41): a repository another process (a concurrent run's command
/// in the same workspace) makes after the walk, before the keeper takes its baseline, is neither
/// kept read-only (the walk did not see it) nor new to the keeper after the run. The run's command
/// then gives it a `core.fsmonitor` the host's next `git status` there runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_made_after_the_walk_and_written_by_the_run_is_reported() {
    let (_t, ws) = workspace();
    let w = ws.clone();
    let plans = after_each_plan(&ws, move |n| {
        if n == 1 {
            repository(&w.join("late"));
            std::fs::write(w.join("late/.git/config"), "[core]\n\trepositoryformatversion = 0\n").unwrap();
        }
    });
    let write = "printf '[core]\\n\\tfsmonitor = /tmp/x\\n' >> late/.git/config; echo rc=$?";
    let r = run_in(&ws, json!(["sh", "-c", write]), None).await.expect("ran");
    assert!(plans.load(Ordering::SeqCst) >= 1);
    let config = std::fs::read_to_string(ws.join("late/.git/config")).unwrap();
    let reported = r.host_risks.iter().any(|h| h.path.contains("late"));
    assert!(!config.contains("fsmonitor") || reported, "written ({}), reported: {:?}", r.stdout.trim(), r.host_risks);
}

/// rev41: a nested repository whose `.git` is a file (`gitdir:`, a submodule's) is retargeted in
/// place (same inode, so the helper's check of the entry passes) after the walk, at a git
/// directory the walk saw as none (no HEAD yet). The run writes a `core.fsmonitor` there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gitdir_file_retargeted_after_the_walk_is_reported_when_the_run_writes_where_it_leads() {
    let (_t, ws) = workspace();
    repository(&ws.join("modules/m"));
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(ws.join("sub/.git"), format!("gitdir: {}\n", ws.join("modules/m").display())).unwrap();
    std::fs::create_dir_all(ws.join("plain")).unwrap();
    let w = ws.clone();
    let plans = after_each_plan(&ws, move |n| {
        if n == 1 {
            use std::io::{Seek, Write};
            let mut f = std::fs::OpenOptions::new().write(true).open(w.join("sub/.git")).unwrap();
            f.set_len(0).unwrap();
            f.seek(std::io::SeekFrom::Start(0)).unwrap();
            write!(f, "gitdir: {}\n", w.join("plain").display()).unwrap();
        }
    });
    let write = "mkdir plain/objects plain/refs && printf 'ref: refs/heads/main\\n' > plain/HEAD && printf '[core]\\n\\tfsmonitor = /tmp/x\\n' > plain/config; echo rc=$?";
    let r = run_in(&ws, json!(["sh", "-c", write]), None).await.expect("ran");
    assert!(plans.load(Ordering::SeqCst) >= 1);
    let config = std::fs::read_to_string(ws.join("plain/config")).unwrap_or_default();
    let reported = r.host_risks.iter().any(|h| h.path.contains("plain") || h.path.contains("sub"));
    assert!(!config.contains("fsmonitor") || reported, "written ({}), reported: {:?}", r.stdout.trim(), r.host_risks);
}
