//! The reviewed workspace in a bwrap plan: the change set's directory bound for the helper and
//! detached by it, one overlay per reviewed root, and the wait for the clock that stamps ctimes
//! when the run began the set. A plan without an open set is refused, never given direct writes.

use std::collections::BTreeMap;

use sandspawn_helper::protocol::ReviewOverlay;

use super::test_support::{helper_path, policy, try_plan_with_env};
use crate::platform::Platform;
use crate::policy::ResolvedPolicy;
use crate::review::option::Mounts;

fn try_plan(p: &ResolvedPolicy, cwd: &std::path::Path) -> crate::Result<super::LaunchPlan> {
    try_plan_with_env(p, cwd, Platform::Linux, &["true"], &BTreeMap::new())
}

fn review_policy(ws: &std::path::Path, exec_after_ns: Option<i64>) -> ResolvedPolicy {
    let mut p = policy(serde_json::json!({"mode": "workspace-write", "workspace": "review"}), ws, Platform::Linux);
    let r = p.review.as_mut().expect("review mode");
    assert_eq!(r.roots, [ws.to_path_buf()]);
    let root = ws.to_string_lossy().into_owned();
    r.mounts = Some(Mounts {
        set_dir: "/state/cs/cs-0123456789abcdef".into(),
        overlays: vec![ReviewOverlay { root, upper: "/state/cs/cs-0123456789abcdef/roots/0/upper".into(), work: "/state/cs/cs-0123456789abcdef/roots/0/work".into() }],
        exec_after_ns,
    });
    p
}

fn position(args: &[String], want: &[&str]) -> Option<usize> {
    args.windows(want.len()).position(|w| w.iter().zip(want).all(|(a, b)| a == b))
}

#[test]
fn a_reviewed_root_is_mounted_by_the_helper_and_a_new_set_waits_for_the_clock() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().canonicalize().unwrap();
    let root = ws.to_string_lossy().into_owned();
    let set = "/state/cs/cs-0123456789abcdef";
    let (upper, work) = (format!("{set}/roots/0/upper"), format!("{set}/roots/0/work"));

    let plan = try_plan(&review_policy(&ws, Some(1_760_000_000_000_000_000)), &ws).unwrap();
    let a = &plan.args;
    // bwrap's arguments end where the helper it runs inside begins.
    let sep = a.iter().position(|x| Some(x.as_str()) == helper_path().to_str()).expect("the helper inside");
    assert!(position(&a[..sep], &["--bind", set, set]).is_some(), "the set is bound for the helper: {a:?}");
    let helper = &a[sep..];
    let review = position(helper, &["--review", &root, &upper, &work]).expect("the overlay");
    let unmount = helper.iter().position(|x| *x == format!("--unmount={set}")).expect("the set detached");
    assert!(review < unmount, "mounted before the set is detached");
    assert!(helper.iter().any(|x| x == "--exec-after=1760000000000000000"), "{helper:?}");
    assert!(helper.iter().any(|x| x == "--own-userns"), "the capabilities the mount used are dropped");

    // A continued set began long ago: nothing to wait for.
    let plan = try_plan(&review_policy(&ws, None), &ws).unwrap();
    assert!(!plan.args.iter().any(|x| x.starts_with("--exec-after")), "{:?}", plan.args);
}

#[test]
fn without_an_open_change_set_the_plan_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().canonicalize().unwrap();
    let p = policy(serde_json::json!({"mode": "workspace-write", "workspace": "review"}), &ws, Platform::Linux);
    let err = try_plan(&p, &ws).unwrap_err();
    assert_eq!(err.code.as_str(), "ERR_SANDBOX_UNSUPPORTED");
    assert!(err.message.contains("spawnSandboxed"), "{}", err.message);
}
