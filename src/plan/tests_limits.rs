//! Golden plans with resource limits: where the helper's `--rlimit` steps go on each platform.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sandspawn_helper::rlimit::{Resource, Rlimit};
use serde_json::json;

use super::test_support::{policy, userns_steps};
use super::{build, LaunchPlan, PlanRequest};
use crate::platform::Platform;

const HELPER: &str = "/opt/sandspawn/sandspawn-helper";

fn limits() -> Vec<Rlimit> {
    vec![
        Rlimit { resource: Resource::Cpu, soft: 2, hard: 3 },
        Rlimit { resource: Resource::Fsize, soft: 1048576, hard: 1048576 },
        Rlimit { resource: Resource::Core, soft: 0, hard: 0 },
    ]
}

fn plan(mode: serde_json::Value, platform: Platform, rlimits: &[Rlimit], runner_fds: bool) -> LaunchPlan {
    let cwd = Path::new("/");
    let p = policy(mode, cwd, platform);
    let command = vec!["ls".to_string(), "-l".to_string()];
    build(&PlanRequest {
        command: &command,
        cwd,
        env: &BTreeMap::new(),
        policy: &p,
        platform,
        bwrap: None,
        resolved_program: Some(Path::new("/bin/ls")),
        helper: Some(Path::new(HELPER)),
        runner_fds,
        terminal: false,
        rlimits,
        own_files: &[], stores: &[], proxy: None,
    })
    .unwrap()
}

fn after_helper(args: &[String]) -> Vec<&str> {
    let at = args.iter().position(|a| a == HELPER).expect("the helper runs inside");
    args[at + 1..].iter().map(String::as_str).collect()
}

#[test]
fn bwrap_plans_pass_the_limits_to_the_helper_inside() {
    let p = plan(json!("read-only"), Platform::Linux, &limits(), true);
    // Network off, so the helper runs in front of bwrap for the offline nsswitch.conf (after the
    // runner's descriptors), but the limits are set only inside.
    assert_eq!(p.program, PathBuf::from(HELPER));
    assert_eq!(&p.args[..4], ["v1", "--offline-nsswitch-fd=7", "--", "/usr/bin/bwrap"], "no limit in front of bwrap");
    let online = plan(json!({"mode": "read-only", "network": true}), Platform::Linux, &limits(), true);
    assert_eq!(online.program, PathBuf::from("/usr/bin/bwrap"), "no extra process in front of bwrap for the limits");
    let steps = |rest: &[&str]| -> Vec<String> { [vec!["v1".to_string()], userns_steps(false), rest.iter().map(|s| s.to_string()).collect()].concat() };
    let limits = ["--rlimit=cpu:2:3", "--rlimit=fsize:1048576:1048576", "--rlimit=core:0:0"];
    assert_eq!(after_helper(&online.args), steps(&[&limits[..], &["--filter=inet-unix", "--report-fd=4", "--", "ls", "-l"]].concat()));
    assert_eq!(after_helper(&p.args), steps(&[&limits[..], &["--filter=inet", "--report-fd=4", "--", "ls", "-l"]].concat()));
    let unlimited = plan(json!("read-only"), Platform::Linux, &[], true);
    assert_eq!(after_helper(&unlimited.args), steps(&["--filter=inet", "--report-fd=4", "--", "ls", "-l"]));
}

#[test]
fn seatbelt_plans_run_the_helper_in_front_of_sandbox_exec() {
    let p = plan(json!("read-only"), Platform::Darwin, &limits(), false);
    assert_eq!((p.program.to_str(), p.argv0.as_str()), (Some(HELPER), "sandspawn-helper"));
    let profile = p.profile.clone().unwrap();
    assert_eq!(
        p.args,
        ["v1", "--rlimit=cpu:2:3", "--rlimit=fsize:1048576:1048576", "--rlimit=core:0:0", "--", "/usr/bin/sandbox-exec", "-p", &profile, "--", "ls", "-l"]
    );
    assert_eq!((p.report_fd, p.helper.as_deref()), (None, Some(Path::new(HELPER))), "a plan for other spawners reports on stderr only");
    let runner = plan(json!("read-only"), Platform::Darwin, &limits(), true);
    assert_eq!(&runner.args[..5], ["v1", "--rlimit=cpu:2:3", "--rlimit=fsize:1048576:1048576", "--rlimit=core:0:0", "--report-fd=4"]);
    assert_eq!(runner.report_fd, Some(4));
    // Without limits the Seatbelt plan is unchanged: sandbox-exec itself, no helper.
    let unlimited = plan(json!("read-only"), Platform::Darwin, &[], true);
    assert_eq!((unlimited.program.to_str(), unlimited.helper), (Some("/usr/bin/sandbox-exec"), None));
}

#[test]
fn unsandboxed_plans_run_the_helper_in_front_of_the_resolved_command() {
    for platform in [Platform::Linux, Platform::Darwin] {
        let p = plan(json!("danger-full-access"), platform, &limits(), true);
        assert_eq!(p.program.to_str(), Some(HELPER));
        assert_eq!(
            p.args,
            ["v1", "--rlimit=cpu:2:3", "--rlimit=fsize:1048576:1048576", "--rlimit=core:0:0", "--report-fd=4", "--", "/bin/ls", "-l"]
        );
        let unlimited = plan(json!("danger-full-access"), platform, &[], true);
        assert_eq!((unlimited.program.to_str(), unlimited.argv0.as_str()), (Some("/bin/ls"), "ls"));
    }
}
