//! A store another process owns (or a `denyRead` path) removed between the host's plan and the
//! sandbox's start: the run goes on without it (there is nothing left to cover), whether the store lies outside the run's
//! writable roots (covered by the helper where it is still a directory) or inside one (the
//! directories above it pinned: see `plan::pins`). Found last session: another agent's temporary
//! store, listed in `known-stores`, was deleted while a run started, whose setup failed. The store
//! here is the run's environment's (`HOME`), covered as a listed one is, and removed by the
//! runner's hook after each plan (`test_hooks`), so the race is hit every time.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;

use super::{launch, test_hooks};
use crate::options::{parse_spawn_options, Entry, HostContext};

/// A directory under the target directory (not the shared /tmp, whose top every run protects).
fn scratch(prefix: &str) -> (tempfile::TempDir, PathBuf) {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let t = tempfile::Builder::new().prefix(prefix).tempdir_in(base).unwrap();
    let p = t.path().canonicalize().unwrap();
    (t, p)
}

/// A home at `home` holding sandspawn's state directory (private, as a store must be).
fn home_with_a_store(home: &Path) {
    let state = home.join(".local/state/sandspawn");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(state.join("kept"), "x").unwrap();
}

/// `true` run in `ws` in workspace-write with `HOME=home`, whose whole tree is removed after each
/// plan; the exit code or the error, and the count of plans.
async fn run_with_home_removed(ws: &Path, home: &Path) -> (std::result::Result<Option<i32>, String>, usize) {
    home_with_a_store(home);
    let plans = Arc::new(AtomicUsize::new(0));
    let (counted, gone) = (plans.clone(), home.to_path_buf());
    test_hooks::after_plan(ws, move || {
        counted.fetch_add(1, Ordering::SeqCst);
        let _ = std::fs::remove_dir_all(&gone);
    });
    let env = BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]);
    let host = HostContext { cwd: ws.to_path_buf(), env, package_dir: None };
    let opts = json!({ "sandbox": "workspace-write", "env": { "PATH": "/usr/bin:/bin", "HOME": home } });
    let req = parse_spawn_options(&json!(["true"]), &opts, &host, Entry::Start, None).expect("valid options");
    let (handle, driver) = launch(req, None);
    tokio::spawn(driver);
    let r = handle.wait().await;
    test_hooks::clear(ws);
    (r.map(|r| r.exit_code).map_err(|e| e.message), plans.load(Ordering::SeqCst))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_outside_the_workspace_removed_after_the_plan_fails_no_run() {
    let (_w, ws) = scratch("stores-gone-ws-");
    let (_h, homes) = scratch("stores-gone-home-");
    let (r, plans) = run_with_home_removed(&ws, &homes.join("home")).await;
    assert_eq!(r, Ok(Some(0)));
    assert_eq!(plans, 1, "nothing changed that the run protects");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_inside_the_workspace_removed_after_the_plan_fails_no_run() {
    let (_w, ws) = scratch("stores-gone-in-");
    let (r, _) = run_with_home_removed(&ws, &ws.join("tmp-home")).await;
    assert_eq!(r, Ok(Some(0)));
}

/// The same for a `denyRead` directory outside the writable roots removed after the plan: bwrap
/// cannot make the mask's mount point in the read-only view ("Can't mkdir"), and the run failed.
/// Planned again, the path is missing, which has nothing to hide (as documented for a `denyRead`
/// path that does not exist).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_directory_removed_after_the_plan_fails_no_run() {
    let (_w, ws) = scratch("deny-gone-ws-");
    let (_d, outside) = scratch("deny-gone-");
    let (denied, file) = (outside.join("secret"), outside.join("secret-file"));
    std::fs::create_dir(&denied).unwrap();
    std::fs::write(&file, "x").unwrap();
    let (gone, gone_file) = (denied.clone(), file.clone());
    test_hooks::after_plan(&ws, move || {
        let _ = std::fs::remove_dir_all(&gone);
        let _ = std::fs::remove_file(&gone_file);
    });
    let host = HostContext { cwd: ws.to_path_buf(), env: BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]), package_dir: None };
    let opts = json!({ "sandbox": { "mode": "workspace-write", "denyRead": [denied, file] } });
    let req = parse_spawn_options(&json!(["true"]), &opts, &host, Entry::Start, None).expect("valid options");
    let (handle, driver) = launch(req, None);
    tokio::spawn(driver);
    let r = handle.wait().await;
    test_hooks::clear(&ws);
    assert_eq!(r.map(|r| r.exit_code).map_err(|e| e.message), Ok(Some(0)));
}

/// A `denyRead` directory in `outside` removed by a hook after each plan of runs in `ws` started
/// with their walk before bwrap's spawn (as when the overlap's walk changed bwrap's arguments: the
/// hook then fires before bwrap starts, so bwrap always meets the removal); `io`: the run's
/// `stdin` and `pty` options.
async fn run_walked_first_with_a_denied_directory_removed(ws: &Path, outside: &Path, io: serde_json::Value) -> (crate::Result<super::RunResult>, usize) {
    let denied = outside.join("secret");
    std::fs::create_dir(&denied).unwrap();
    let plans = Arc::new(AtomicUsize::new(0));
    let counted = plans.clone();
    test_hooks::after_plan(ws, move || {
        counted.fetch_add(1, Ordering::SeqCst);
        let _ = std::fs::remove_dir_all(&denied);
    });
    let host = HostContext { cwd: ws.to_path_buf(), env: BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]), package_dir: None };
    let mut opts = json!({ "sandbox": { "mode": "workspace-write", "denyRead": [outside.join("secret")] } });
    opts.as_object_mut().unwrap().extend(io.as_object().unwrap().clone());
    let mut req = parse_spawn_options(&json!(["true"]), &opts, &host, Entry::Start, None).expect("valid options");
    req.walk_before_spawn = true;
    let (handle, driver) = launch(req, None);
    tokio::spawn(driver);
    let r = handle.wait().await;
    test_hooks::clear(ws);
    (r, plans.load(Ordering::SeqCst))
}

/// bwrap meets the removed mask's mount point ("Can't mkdir P" in 0.8, "Can't mkdir parents for"
/// or "Can't create file P" in 0.12): planned again (`setup_changed`), the path missing then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_directory_removed_before_bwrap_starts_is_planned_again() {
    let (_w, ws) = scratch("deny-first-ws-");
    let (_d, outside) = scratch("deny-first-");
    let (r, plans) = run_walked_first_with_a_denied_directory_removed(&ws, &outside, json!({ "stdin": "ignore" })).await;
    assert_eq!(r.map(|r| r.exit_code).map_err(|e| e.message), Ok(Some(0)));
    assert_eq!(plans, 2, "bwrap met the removal and the run was planned again");
}

/// The same with stdin a pipe or a terminal: what the caller wrote went to the attempt that
/// stopped, so the run is not planned again; it fails at once as a changed workspace, not in
/// bwrap's words alone (which named a path that is not there and said nothing of why).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_stdin_a_pipe_or_a_terminal_a_denied_directory_removed_before_bwrap_starts_fails_as_a_changed_workspace() {
    for io in [json!({ "stdin": "pipe" }), json!({ "pty": true })] {
        let (_w, ws) = scratch("deny-pipe-ws-");
        let (_d, outside) = scratch("deny-pipe-");
        let (r, plans) = run_walked_first_with_a_denied_directory_removed(&ws, &outside, io.clone()).await;
        let e = r.expect_err("not planned again");
        assert_eq!(e.code, crate::error::ErrorCode::SetupFailed, "{io}");
        assert!(e.message.contains("the workspace changed") && e.message.contains("was removed") && !e.message.contains("attempts"), "{io}: {}", e.message);
        assert_eq!(plans, 1, "{io}");
    }
}
