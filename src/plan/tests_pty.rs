//! Plans for pty runs: who takes the terminal as the controlling tty on each platform.

use super::*;

fn pty_plan(p: &crate::policy::ResolvedPolicy, cwd: &Path, platform: Platform, resolved: Option<&Path>) -> LaunchPlan {
    let command = v(&["python3", "-i"]);
    build(&PlanRequest {
        command: &command,
        cwd,
        env: &BTreeMap::new(),
        policy: p,
        platform,
        bwrap: None,
        resolved_program: resolved,
        helper: Some(helper_path()),
        runner_fds: false,
        terminal: true,
        rlimits: &[], own_files: &[], stores: &[], proxy: None,
    })
    .unwrap()
}

#[test]
fn bwrap_keeps_new_session_and_the_helper_takes_the_terminal() {
    let (_t, w) = tmp();
    let p = policy(json!("read-only"), &w, Platform::Linux);
    let plan = pty_plan(&p, &w, Platform::Linux, None);
    // Network off: the helper in front of bwrap only opens the offline nsswitch.conf and makes the status pair.
    assert_eq!(&plan.args[..5], &v(&["v1", "--offline-nsswitch-fd=3", "--status-pair=4,5", "--", "/usr/bin/bwrap"])[..], "no terminal step outside the sandbox");
    assert_eq!(plan.args[5], "--new-session", "the sandbox keeps its own session (TIOCSTI, CVE-2017-5226)");
    let helper = s(helper_path());
    let at = plan.args.iter().position(|a| *a == helper).unwrap();
    let expect = [v(&[&helper, "v1", "--tmpfs-inodes=131072:/dev/shm", "--devpts-max=256", "--stdio-devices=/dev/sandspawn-host-dev"]), userns_steps(true), v(&["--controlling-tty", "--rlimit=sigpending:4096:4096", "--rlimit=msgqueue:262144:262144", "--rlimit=rtprio:0:0", "--rlimit=nice:0:0", "--rlimit=core:1:1", "--filter=inet", "--bwrap-alive=5", "--", "python3", "-i"])].concat();
    assert_eq!(&plan.args[at..], &expect[..]);
    let plain = plan_with_env(&p, &w, Platform::Linux, &["python3", "-i"], &BTreeMap::new());
    assert!(!plain.args.contains(&"--controlling-tty".to_string()), "only pty runs take a terminal");
}

#[test]
fn seatbelt_runs_the_helper_first_and_allows_dev_tty() {
    let (_t, w) = tmp();
    let p = policy(json!("read-only"), &w, Platform::Darwin);
    let plan = pty_plan(&p, &w, Platform::Darwin, None);
    let helper = helper_path();
    assert_eq!((plan.program.as_path(), plan.argv0.as_str()), (helper, "sandspawn-helper"));
    let prof = plan.profile.clone().unwrap();
    check_seatbelt_profile(&prof);
    assert!(prof.ends_with("(allow file-read* file-write* file-ioctl (literal \"/dev/tty\"))\n(deny file-write-setugid)\n"), "{prof}");
    assert_eq!(&plan.args[..4], &v(&["v1", "--controlling-tty", "--", "/usr/bin/sandbox-exec"])[..]);
    assert_eq!(&plan.args[4..6], &v(&["-p", &prof])[..]);
    assert_eq!(&plan.args[6..], &v(&["--", "python3", "-i"])[..]);
    assert_eq!(plan.helper.as_deref(), Some(helper));
    let plain = plan_with_env(&p, &w, Platform::Darwin, &["true"], &BTreeMap::new());
    assert!(!plain.profile.unwrap().contains("/dev/tty\""), "/dev/tty only with a terminal");
}

#[test]
fn no_sandbox_takes_the_terminal_in_the_spawn_on_linux_and_in_the_helper_on_macos() {
    let (_t, w) = tmp();
    let python = Path::new("/usr/bin/python3");
    let linux = pty_plan(&policy(json!("danger-full-access"), &w, Platform::Linux), &w, Platform::Linux, Some(python));
    assert_eq!((linux.program.as_path(), linux.args.clone(), linux.helper), (python, v(&["-i"]), None));
    let mac = pty_plan(&policy(json!("danger-full-access"), &w, Platform::Darwin), &w, Platform::Darwin, Some(python));
    assert_eq!(mac.program, helper_path());
    assert_eq!(mac.args, v(&["v1", "--controlling-tty", "--", "/usr/bin/python3", "-i"]));
    assert_eq!(mac.sandbox_type, SandboxType::None);
}

fn check_seatbelt_profile(prof: &str) {
    crate::plan::seatbelt::check_sexpr(prof).unwrap();
}
