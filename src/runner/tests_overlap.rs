//! A bwrap run walks its workspace while bwrap sets up (`overlap`): the helper blocks until the
//! host sends its arguments. A run cut during that walk (killed, or its timeout) ends with bwrap
//! killed, the command never run and nothing of the sandbox left; a walk that changes bwrap's own
//! arguments sends nothing and the run is planned again with its walk first; and the helper
//! itself runs nothing when its arguments never come. The walk is made slow by the hook the runner
//! calls once the walked plan is made (`test_hooks`), so the window is hit every time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::{launch, test_hooks, ProcessHandle};
use crate::options::{parse_spawn_options, Entry, HostContext};

/// A workspace under the target directory (not the shared /tmp, whose top every run protects).
fn workspace() -> (tempfile::TempDir, PathBuf) {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let t = tempfile::Builder::new().prefix("overlap-").tempdir_in(base).unwrap();
    let ws = t.path().canonicalize().unwrap();
    (t, ws)
}

fn start_in(ws: &Path, cmd: serde_json::Value, opts: serde_json::Value) -> ProcessHandle {
    let host = HostContext { cwd: ws.to_path_buf(), env: BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]), package_dir: None };
    let req = parse_spawn_options(&cmd, &opts, &host, Entry::Start, None).expect("valid options");
    let (handle, driver) = launch(req, None);
    tokio::spawn(driver);
    handle
}

/// Counts the walked plans of runs in `ws`, each held `hold` before the helper gets its arguments.
fn slow_walk(ws: &Path, hold: Duration) -> Arc<AtomicUsize> {
    let plans = Arc::new(AtomicUsize::new(0));
    let counted = plans.clone();
    test_hooks::after_plan(ws, move || {
        counted.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(hold);
    });
    plans
}

/// Processes whose command line names `ws` (bwrap's binds of it): none once a run has ended.
fn processes_naming(ws: &Path) -> Vec<String> {
    let needle = ws.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if entry.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(&needle) {
            found.push(format!("{}: {text}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

/// Until the run's walked plan is made. A hang bound: a run that fails before it (the helper not
/// found, when the test binary was started by a relative path) never plans, and this waited forever.
async fn until_planned(plans: &AtomicUsize) {
    for _ in 0..12_000 {
        if plans.load(Ordering::SeqCst) > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the run was never planned in 120 s: it failed before its walk");
}

/// What the cut runs below would have made, had the command run.
fn marker_cmd() -> serde_json::Value {
    json!(["sh", "-c", "echo ran > marker"])
}

async fn assert_never_ran(ws: &Path) {
    // Long enough for a command that had been let through to have written.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!ws.join("marker").exists(), "the command ran");
    assert_eq!(processes_naming(ws), Vec::<String>::new(), "bwrap outlived the run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_while_it_walks_after_bwrap_s_spawn_never_runs_the_command() {
    let (_t, ws) = workspace();
    let plans = slow_walk(&ws, Duration::from_millis(1500));
    let handle = start_in(&ws, marker_cmd(), json!({ "sandbox": "workspace-write" }));
    until_planned(&plans).await;
    handle.kill(None);
    let e = handle.started().await.unwrap_err();
    assert!(e.message.contains("never started: it was killed"), "{}", e.message);
    let r = handle.wait().await.unwrap();
    test_hooks::clear(&ws);
    assert_eq!((r.pid, r.exit_code, r.signal.as_deref()), (0, None, None), "reported as a run cut before its spawn");
    assert_never_ran(&ws).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_timeout_passes_while_it_walks_after_bwrap_s_spawn_never_runs_the_command() {
    let (_t, ws) = workspace();
    let _plans = slow_walk(&ws, Duration::from_millis(1500));
    let handle = start_in(&ws, marker_cmd(), json!({ "sandbox": "workspace-write", "timeout": 300 }));
    let r = handle.wait().await.unwrap();
    test_hooks::clear(&ws);
    assert!(r.timed_out);
    assert_eq!((r.pid, r.exit_code), (0, None));
    assert_never_ran(&ws).await;
}

/// A walk that adds to bwrap's own arguments (a directory pinned above a hooks directory a nested
/// repository names inside the workspace, which the walk did not see as an entry of its own): the
/// helper is sent nothing, and the run is planned again with its walk before the spawn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_walk_that_changes_bwrap_s_arguments_is_planned_again_with_the_walk_first() {
    let (_t, ws) = workspace();
    std::fs::create_dir_all(ws.join("sub/.git/hooks")).unwrap();
    std::fs::write(ws.join("sub/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(ws.join("shared/deep/hooks")).unwrap();
    std::fs::write(ws.join("sub/.git/config"), format!("[core]\n\thooksPath = {}\n", ws.join("shared/deep/hooks").display())).unwrap();
    let plans = slow_walk(&ws, Duration::ZERO);
    let planting = "echo x > shared/deep/hooks/post-checkout || echo refused; mv shared elsewhere || echo pinned";
    let r = start_in(&ws, json!(["sh", "-c", planting]), json!({ "sandbox": "workspace-write" })).wait().await;
    test_hooks::clear(&ws);
    let r = r.unwrap();
    assert_eq!((r.exit_code, r.stdout.as_str()), (Some(0), "refused\npinned\n"), "{}", r.stderr);
    assert_eq!(plans.load(Ordering::SeqCst), 2, "the first plan's bwrap part differed from the walked one's");
    assert!(!ws.join("shared/deep/hooks/post-checkout").exists());
    assert_never_ran_again(&ws);
}

/// The ordinary case: a workspace with a nested repository is walked after bwrap's spawn, planned once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_with_a_nested_repository_is_walked_after_the_spawn_and_planned_once() {
    let (_t, ws) = workspace();
    for d in ["sub/.git/hooks", "sub/.git/objects", "sub/.git/refs"] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    std::fs::write(ws.join("sub/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let plans = slow_walk(&ws, Duration::ZERO);
    let r = start_in(&ws, json!(["sh", "-c", "echo x > sub/.git/config || echo refused"]), json!({ "sandbox": "workspace-write" })).wait().await;
    test_hooks::clear(&ws);
    let r = r.unwrap();
    assert_eq!((r.exit_code, r.stdout.as_str()), (Some(0), "refused\n"), "{}", r.stderr);
    assert_eq!(plans.load(Ordering::SeqCst), 1, "walked once, after the spawn");
    assert!(!ws.join("sub/.git/config").exists());
}

fn assert_never_ran_again(ws: &Path) {
    assert_eq!(processes_naming(ws), Vec::<String>::new(), "the first attempt's bwrap outlived the run");
}

/// The helper started to read its arguments from a pipe whose host end closes before (or while)
/// they come: it exits 125 with its report, and runs nothing. Its last case sends them whole.
#[test]
fn the_helper_runs_nothing_when_its_arguments_never_come_whole() {
    use std::io::Write;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    let helper = crate::helper::require().expect("the helper is built");
    let (_t, ws) = workspace();
    let args: Vec<String> = ["v1", "--", "sh", "-c", "echo ran > marker"].iter().map(|s| s.to_string()).collect();
    let framed = sandspawn_helper::args_pipe::encode(&args).unwrap();
    for cut in [None, Some(0), Some(5), Some(framed.len() - 1), Some(framed.len())] {
        // Above the numbers the child takes, so no dup2 below is one onto itself.
        let (from_host, to_helper): (OwnedFd, OwnedFd) = super::spawn::pipe_above(10).unwrap();
        let (report_r, report_w): (OwnedFd, OwnedFd) = super::spawn::pipe_above(10).unwrap();
        let (from, report) = (from_host.as_raw_fd(), report_w.as_raw_fd());
        let mut cmd = std::process::Command::new(&helper);
        cmd.args(["--args-from=6", "--report-fd=4"]).current_dir(&ws);
        // SAFETY: only dup2 between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(from, 6) < 0 || libc::dup2(report, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        drop((from_host, report_w));
        let mut to_helper = std::fs::File::from(to_helper);
        if let Some(n) = cut {
            to_helper.write_all(&framed[..n]).unwrap();
        }
        drop(to_helper);
        let status = child.wait().unwrap();
        let report = std::fs::read_to_string(format!("/proc/self/fd/{}", report_r.as_raw_fd())).unwrap_or_default();
        if cut == Some(framed.len()) {
            assert!(status.success(), "{status:?} {report}");
            assert!(ws.join("marker").exists(), "sent whole, the command runs (the test can fail)");
        } else {
            assert_eq!(status.code(), Some(125), "{cut:?}");
            assert!(report.contains("closed the helper's arguments"), "{cut:?}: {report}");
            assert!(!ws.join("marker").exists(), "{cut:?}: the command ran");
        }
    }
}

/// The command has stdio alone: the pipe of its own arguments is closed before it runs, and the
/// host end of another run's (held open by a slow walk meanwhile) reaches no other run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_descriptor_of_the_helper_s_arguments_reaches_a_command() {
    let (_t, slow) = workspace();
    let (_u, ws) = workspace();
    let plans = slow_walk(&slow, Duration::from_millis(1500));
    let held = start_in(&slow, json!(["ls", "/proc/self/fd"]), json!({ "sandbox": "workspace-write" }));
    until_planned(&plans).await;
    // While the slow run's host end is open and unwritten.
    let r = start_in(&ws, json!(["ls", "/proc/self/fd"]), json!({ "sandbox": "workspace-write" })).wait().await.unwrap();
    assert_eq!((r.exit_code, r.stdout.as_str()), (Some(0), "0\n1\n2\n3\n"), "stdio and ls's own listing only: {}", r.stderr);
    let r = held.wait().await;
    test_hooks::clear(&slow);
    let r = r.unwrap();
    assert_eq!((r.exit_code, r.stdout.as_str()), (Some(0), "0\n1\n2\n3\n"), "{}", r.stderr);
}


/// Found by an attacker's review (ovl38): a kill (or the timeout) that came once the helper had its
/// arguments, while the host thread that wrote them had not yet handed the walk back, ended the run
/// as one cut before its spawn: bwrap killed, `pid` 0, "the command never started", and no check
/// after the run, though the command had started (here: written its marker). Under load the thread
/// that wrote is often not the next to run; the hook holds it there. A run whose helper was sent its
/// arguments is a started run, ended by the kill as any is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_once_its_arguments_are_sent_is_reported_as_a_run_that_started() {
    let (_t, ws) = workspace();
    let sent = Arc::new(AtomicUsize::new(0));
    let counted = sent.clone();
    test_hooks::after_send(&ws, move || {
        counted.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(2000));
    });
    let handle = start_in(&ws, json!(["sh", "-c", "echo ran > marker; sleep 30"]), json!({ "sandbox": "workspace-write" }));
    for _ in 0..1000 {
        if sent.load(Ordering::SeqCst) > 0 && ws.join("marker").exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(ws.join("marker").exists(), "the command never ran (the test can fail)");
    handle.kill(None);
    let started = handle.started().await;
    let r = handle.wait().await;
    test_hooks::clear_sent(&ws);
    let r = r.unwrap();
    assert!(started.is_ok(), "reported as never started, though it ran: {:?}", started.err());
    assert_ne!(r.pid, 0, "reported as a run cut before its spawn");
    assert_eq!((r.exit_code, r.signal.as_deref()), (None, Some("SIGTERM"))); // the default kill signal
    assert_eq!(processes_naming(&ws), Vec::<String>::new(), "bwrap outlived the run");
}

/// Found by an attacker's review (ovl38): a nested repository set up by husky (`core.hooksPath =
/// .husky`, pinned above by bwrap once the walk finds it) made every run in its workspace plan
/// twice, a whole bwrap started and killed each time. The first run still does; the next walk first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_whose_walk_changes_bwrap_s_arguments_is_walked_first_by_its_next_runs() {
    let (_t, ws) = workspace();
    for d in ["sub/.git/hooks", "sub/.git/objects", "sub/.git/refs", "sub/.husky"] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    std::fs::write(ws.join("sub/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.join("sub/.git/config"), "[core]\n\thooksPath = .husky\n").unwrap();
    let plans = slow_walk(&ws, Duration::ZERO);
    let planting = json!(["sh", "-c", "echo x > sub/.husky/pre-commit || echo refused"]);
    let mut counts = Vec::new();
    for _ in 0..3 {
        let before = plans.load(Ordering::SeqCst);
        let r = start_in(&ws, planting.clone(), json!({ "sandbox": "workspace-write" })).wait().await.unwrap();
        assert_eq!((r.exit_code, r.stdout.as_str()), (Some(0), "refused\n"), "{}", r.stderr);
        counts.push(plans.load(Ordering::SeqCst) - before);
    }
    test_hooks::clear(&ws);
    assert_eq!(counts, [2, 1, 1], "plans per run");
    assert!(!ws.join("sub/.husky/pre-commit").exists());
}
