//! Golden plans with resource limits: where the helper's `--rlimit` steps go on each platform.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sandspawn_helper::rlimit::{Resource, Rlimit};
use serde_json::json;

use super::test_support::{policy, userns_steps};
use super::{build, LaunchPlan, PlanRequest};
use crate::platform::Platform;

/// What every bwrap run sets besides the limits asked for (`rlimit::PER_USER_BUDGETS`, `NO_PRIORITY_RAISE`,
/// `NO_CORE_DUMP` last, which stands for the limits' own RLIMIT_CORE).
const BUDGETS: [&str; 5] = ["--rlimit=sigpending:4096:4096", "--rlimit=msgqueue:262144:262144", "--rlimit=rtprio:0:0", "--rlimit=nice:0:0", "--rlimit=core:1:1"];

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
    assert_eq!(&p.args[..4], ["v1", "--offline-nsswitch-fd=8", "--", "/usr/bin/bwrap"], "no limit in front of bwrap");
    let online = plan(json!({"mode": "read-only", "network": true}), Platform::Linux, &limits(), true);
    assert_eq!(online.program, PathBuf::from("/usr/bin/bwrap"), "no extra process in front of bwrap for the limits");
    // The sandbox's /dev/shm is as large as `memory`; none is set here.
    let steps = |rest: &[&str]| -> Vec<String> { [vec!["v1".to_string(), "--tmpfs-inodes=131072:/dev/shm".to_string(), "--devpts-max=256".to_string(), "--stdio-devices=/dev/sandspawn-host-dev".to_string()], userns_steps(true), rest.iter().map(|s| s.to_string()).collect()].concat() };
    // The limits' RLIMIT_CORE of 0 gives way to every Linux run's 1 (`NO_CORE_DUMP`, in BUDGETS).
    let limits = ["--rlimit=cpu:2:3", "--rlimit=fsize:1048576:1048576"];
    assert_eq!(after_helper(&online.args), steps(&[&limits[..], &BUDGETS[..], &["--filter=inet-unix", "--report-fd=4", "--bwrap-alive=7", "--", "ls", "-l"]].concat()));
    assert_eq!(after_helper(&p.args), steps(&[&limits[..], &BUDGETS[..], &["--filter=inet", "--report-fd=4", "--bwrap-alive=7", "--", "ls", "-l"]].concat()));
    let unlimited = plan(json!("read-only"), Platform::Linux, &[], true);
    assert_eq!(after_helper(&unlimited.args), steps(&[&BUDGETS[..], &["--filter=inet", "--report-fd=4", "--bwrap-alive=7", "--", "ls", "-l"]].concat()));
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

fn inode_steps(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).filter(|a| a.starts_with("--tmpfs-inodes=")).collect()
}

#[test]
fn the_memory_backed_filesystems_hold_one_inode_per_4_kib_of_their_size() {
    let memory = |bytes| [Rlimit { resource: Resource::Data, soft: bytes, hard: bytes }];
    let p = plan(json!({"mode": "read-only", "tmp": "private"}), Platform::Linux, &memory(64 << 20), true);
    assert_eq!(inode_steps(&p.args), ["--tmpfs-inodes=16384:/dev/shm", "--tmpfs-inodes=16384:/tmp"]);
    let p = plan(json!({"mode": "read-only", "tmp": "private"}), Platform::Linux, &[], true);
    assert_eq!(inode_steps(&p.args), ["--tmpfs-inodes=131072:/dev/shm", "--tmpfs-inodes=524288:/tmp"]);
    // `nr_inodes=0` would be no bound at all.
    let p = plan(json!("read-only"), Platform::Linux, &memory(100), true);
    assert_eq!(inode_steps(&p.args), ["--tmpfs-inodes=1:/dev/shm"]);
}

/// A directory under the target directory (not the shared /tmp), whose path holds no link.
fn workspace() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("limits-").tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap()
}

#[test]
fn a_memory_backed_filesystem_a_later_mount_hides_is_left_alone() {
    // The helper would remount what hides it (the host's /dev/shm bound as the cwd, a mask).
    let at = |mode: serde_json::Value, cwd: &Path| {
        let p = policy(mode, cwd, Platform::Linux);
        super::test_support::plan(&p, cwd, &["true"]).args
    };
    let shm = Path::new("/dev/shm");
    assert_eq!(inode_steps(&at(json!("read-only"), shm)), Vec::<&str>::new(), "the cwd's read-only bind");
    assert_eq!(inode_steps(&at(json!({"mode": "workspace-write", "tmp": "private"}), shm)), ["--tmpfs-inodes=524288:/tmp"], "a writable root");
    let masked = at(json!({"mode": "read-only", "denyRead": ["/dev"]}), Path::new("/"));
    assert_eq!(inode_steps(&masked), Vec::<&str>::new(), "a denyRead mask above it");
    // The helper still mounts (the tree made private, see `helper_identity`).
    assert!(masked.contains(&"CAP_SYS_ADMIN".to_string()), "kept for the helper's mounts in every plan");
    // The host's /dev the helper reopens stdio devices through goes over the mask (nothing can be
    // made inside it), after bwrap's last remount of /dev.
    assert!(masked.windows(5).any(|w| w == ["--remount-ro", "/dev", "--ro-bind", "/dev", "/dev"]), "{masked:?}");
    assert!(masked.contains(&"--stdio-devices=/dev".to_string()), "{masked:?}");
    // A workspace of its own: a real directory (the plan takes each writable root's identity).
    // The shared /tmp as a writable root is walked: with another process's thousands of planted
    // repositories there (another session's tests left 10,000), the plan passed bwrap's argument
    // bound and was refused. What is looked at here is the inode bound, not the carve-outs.
    let ws = workspace();
    let tmp = at(json!({"mode": "workspace-write", "tmp": "private", "writableRoots": ["/tmp"], "protectGit": false, "protectedNames": [], "reportedNames": []}), ws.path());
    assert_eq!(inode_steps(&tmp), ["--tmpfs-inodes=131072:/dev/shm"], "a writable root at /tmp");
}

/// Every bwrap plan bounds the ptys of the sandbox's devpts (one run took the machine's whole pool,
/// see `bwrap::PTYS_PER_RUN`), whatever else the helper mounts, unless a later mount hides it.
#[test]
fn the_sandboxs_devpts_holds_a_bounded_share_of_the_machines_ptys() {
    let ws = workspace();
    let at = |mode: serde_json::Value| {
        let p = policy(mode, ws.path(), Platform::Linux);
        super::test_support::plan(&p, ws.path(), &["true"]).args
    };
    let bound = |args: &[String]| args.iter().filter(|a| a.starts_with("--devpts-max=")).cloned().collect::<Vec<_>>();
    for mode in [json!("read-only"), json!("workspace-write"), json!({"mode": "read-only", "denyRead": ["/dev/shm"]})] {
        let args = at(mode.clone());
        assert_eq!(bound(&args), ["--devpts-max=256"], "{mode}");
        assert!(args.contains(&"CAP_SYS_ADMIN".to_string()), "the helper keeps what the remount needs: {mode}");
    }
    for hidden in ["/dev", "/dev/pts"] {
        assert!(bound(&at(json!({"mode": "read-only", "denyRead": [hidden]}))).is_empty(), "a denyRead mask at {hidden}");
    }
}
