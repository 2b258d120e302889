//! Test helpers: build plans from JSON policies and run bwrap plans for real, as any spawner would.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use super::{build, LaunchPlan, PlanRequest};
use crate::platform::Platform;
use crate::policy::{resolve_policy, PolicyContext, ResolvedPolicy};

/// `v` resolved; without `protectedNames` unless `v` names them (most plan tests are about other
/// fields; `policy_as_given` keeps the defaults).
pub fn policy(v: serde_json::Value, cwd: &Path, platform: Platform) -> ResolvedPolicy {
    policy_as_given(without_protected_names(v), cwd, platform)
}

/// `v` resolved and walked for repositories, as a run does.
pub fn policy_as_given(v: serde_json::Value, cwd: &Path, platform: Platform) -> ResolvedPolicy {
    let mut p = resolve_policy(Some(&v), &PolicyContext { cwd: cwd.to_path_buf(), tmpdir: None, platform, env: Default::default() }).unwrap();
    p.walk_and_protect(crate::planted::Absent::Placeholders);
    p
}

/// `v` with `protectedNames: []` added unless it sets them (a mode string becomes `{ mode }`).
pub fn without_protected_names(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::String(mode) => serde_json::json!({"mode": mode, "protectedNames": []}),
        serde_json::Value::Object(mut map) => {
            map.entry("protectedNames").or_insert(serde_json::json!([]));
            serde_json::Value::Object(map)
        }
        other => other,
    }
}

pub fn plan_with_env(p: &ResolvedPolicy, cwd: &Path, platform: Platform, cmd: &[&str], env: &BTreeMap<String, String>) -> LaunchPlan {
    try_plan_with_env(p, cwd, platform, cmd, env).unwrap()
}

/// The pinned plan, or why `build` refused it.
pub fn try_plan_with_env(p: &ResolvedPolicy, cwd: &Path, platform: Platform, cmd: &[&str], env: &BTreeMap<String, String>) -> crate::Result<LaunchPlan> {
    let command: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
    build(&PlanRequest {
        command: &command,
        cwd,
        env,
        policy: p,
        platform,
        bwrap: None,
        resolved_program: None,
        helper: Some(helper_path()),
        runner_fds: false,
        terminal: false,
        rlimits: &[], own_files: &[], stores: &[], proxy: None,
    })
}

pub fn plan(p: &ResolvedPolicy, cwd: &Path, cmd: &[&str]) -> LaunchPlan {
    plan_with_env(p, cwd, Platform::Linux, cmd, &BTreeMap::new())
}

/// A Linux plan to run for real: it names the helper that was built, wherever the checkout is, and
/// the bwrap the ladder picks here.
pub fn real_plan(p: &ResolvedPolicy, cwd: &Path, cmd: &[&str]) -> LaunchPlan {
    let command: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
    let env = BTreeMap::new();
    build(&PlanRequest {
        command: &command,
        cwd,
        env: &env,
        policy: p,
        platform: Platform::Linux,
        bwrap: ladder_bwrap(),
        resolved_program: None,
        helper: Some(real_helper()),
        runner_fds: false,
        terminal: false,
        rlimits: &[], own_files: &[], stores: &[], proxy: None,
    })
    .unwrap()
}

/// The bwrap a run would use here (the system's, else the bundled one beside Cargo.toml), or
/// `None` when the ladder finds none that works.
pub fn ladder_bwrap() -> Option<&'static crate::plan::BwrapInfo> {
    static FOUND: std::sync::OnceLock<Option<crate::plan::BwrapInfo>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let path_env = std::env::var("PATH").unwrap_or_default();
            let caps = crate::capabilities::capabilities(Some(&path_env), Path::new("/"));
            if !caps.available || caps.sandbox_type != crate::platform::SandboxType::Bwrap {
                eprintln!("NOTE: no bwrap works here ({}); real-bwrap tests skipped", caps.reason.unwrap_or_default());
                return None;
            }
            caps.bwrap
        })
        .as_ref()
}

/// Does a real bwrap work on this host? Tests print a notice and pass vacuously when none does.
pub fn bwrap_works() -> bool {
    ladder_bwrap().is_some()
}

/// The helper path pinned plans name: fixed, so their argv does not depend on where the checkout
/// is (a checkout under /tmp puts the real helper in a writable root, which adds a bind).
pub fn helper_path() -> &'static Path {
    Path::new("/opt/sandspawn/sandspawn-helper")
}

/// The helper built next to the test binary (`cargo build -p sandspawn-helper`), for plans that run.
pub fn real_helper() -> &'static Path {
    static HELPER: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    HELPER.get_or_init(|| crate::helper::require().expect("build the helper first: cargo build -p sandspawn-helper"))
}

/// Spawn the plan as any spawner would: argv, environment, cwd and plain stdio, nothing else.
pub fn run(plan: &LaunchPlan) -> Output {
    Command::new(&plan.program)
        .arg0(&plan.argv0)
        .args(&plan.args)
        .env_clear()
        .envs(&plan.env)
        .current_dir(&plan.cwd)
        .stdin(Stdio::null())
        .output()
        .expect("spawn bwrap")
}

fn host_ids() -> (u32, u32) {
    // SAFETY: getuid and getgid have no preconditions.
    unsafe { (libc::getuid(), libc::getgid()) }
}

/// What bwrap keeps for the helper, as this test's user (see `bwrap::helper_identity`): with the
/// helper's mounts, their capabilities (and `--uid 0 --gid 0` for a user other than root);
/// without, CAP_SETFCAP for root alone.
pub fn kept_for_helper(mounts: bool) -> Vec<String> {
    let root = host_ids() == (0, 0);
    let mut a: Vec<String> = Vec::new();
    let caps: &[&str] = if mounts { &super::bwrap::HELPER_MOUNT_CAPS } else if root { &["CAP_SETFCAP"] } else { &[] };
    for cap in caps {
        a.extend(["--cap-add".to_string(), cap.to_string()]);
    }
    if mounts && !root {
        a.extend(["--uid", "0", "--gid", "0"].map(String::from));
    }
    a
}

/// The helper's user-namespace steps, as this test's user: its own namespace always; the limit and
/// the mapping back to the user's ids with the helper's mounts.
pub fn userns_steps(mounts: bool) -> Vec<String> {
    let (uid, gid) = host_ids();
    let mut a = vec!["--own-userns".to_string()];
    if mounts {
        a.push("--limit-userns".into());
        if (uid, gid) != (0, 0) {
            a.push(format!("--map-ids={uid}:{gid}"));
        }
    }
    a
}
