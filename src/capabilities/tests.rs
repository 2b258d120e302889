use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::diagnose::*;
use super::discover::*;
use super::probe::*;
use super::*;
use crate::error::ErrorCode;

/// A bwrap that works here, as the only file of a directory of its own: `bwrap`, a copy of the one
/// the ladder picks (the system's, else the bundled one), in a directory trusted like root's own
/// (a link would be judged by its target, which may lie under HOME: a checkout in /root). It
/// stands in for the system's bin directory, so these tests of the system rung run on a host
/// without bubblewrap too.
struct WorkingBwrap {
    dir: tempfile::TempDir,
    /// Its canonical path (what discovery reports).
    path: PathBuf,
}

fn working_bwrap() -> WorkingBwrap {
    let cwd = tempfile::tempdir().unwrap();
    let path_env = std::env::var("PATH").unwrap_or_default();
    let caps = linux_ladder(None, Some(&path_env), cwd.path(), &LinuxOptions::default(), &BundledBwrap::installed(), true);
    let found = caps.bwrap.clone().filter(|_| caps.available && caps.sandbox_type == SandboxType::Bwrap);
    let found = found.unwrap_or_else(|| panic!("no bwrap works here, neither the system's nor the bundled one: {caps:?}"));
    let dir = tempfile::tempdir().unwrap();
    // Copied by `cp`, not by this process: a child another test thread forked while this process
    // had the copy open for writing holds that descriptor until it execs, and the copy's exec
    // failed with ETXTBSY ("Text file busy", once in a full `cargo test --lib --test-threads=8`).
    let copied = Command::new("cp").arg(&found.path).arg(dir.path().join("bwrap")).status().unwrap();
    assert!(copied.success(), "cp {}", found.path.display());
    fs::set_permissions(dir.path().join("bwrap"), fs::Permissions::from_mode(0o755)).unwrap();
    trust_for_test(dir.path());
    let path = fs::canonicalize(dir.path().join("bwrap")).unwrap();
    WorkingBwrap { dir, path }
}

impl WorkingBwrap {
    fn dir(&self) -> String {
        self.dir.path().display().to_string()
    }
}

/// The system rung alone, as a build without a bundled bwrap has it: what these tests are about
/// (`tests_ladder.rs` covers the bundled rung). `capabilities_cached` with `cached`.
fn system_rung(override_env: Option<OsString>, path_env: Option<&str>, cwd: &Path, cached: bool) -> Capabilities {
    let none = BundledBwrap { path: Some(PathBuf::from("/nonexistent/sandspawn-bwrap")), digest: bundled::BUILT_DIGEST.map(str::to_string) };
    linux_ladder(override_env, path_env, cwd, &LinuxOptions::default(), &none, cached)
}

/// Write an executable shell script.
/// Fake bwraps live in temporary directories, which the trust rule refuses (see `discover`).
fn trust_for_test(dir: &Path) {
    super::discover::TEST_TRUSTED.lock().unwrap().push(fs::canonicalize(dir).unwrap());
}

fn script(path: &Path, body: &str) {
    fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A fake `bwrap` in a fresh temp dir: answers `--version` with `bubblewrap 0.8.0`, and otherwise
/// prints `msg` on stderr and exits 1 (counting its probe runs in `count`).
struct FakeBwrap {
    dir: tempfile::TempDir,
}

impl FakeBwrap {
    fn new(msg: &str) -> FakeBwrap {
        // Outside the temporary directories: an override there is refused (`shared_or_linked`).
        let dir = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
        trust_for_test(dir.path());
        let f = FakeBwrap { dir };
        f.set_message(msg);
        f
    }
    /// Fails with `msg` only when `--proc` is among the arguments; succeeds otherwise.
    fn proc_only(msg: &str) -> FakeBwrap {
        let f = FakeBwrap::new(msg);
        let d = f.dir.path();
        script(
            &d.join("bwrap"),
            &format!(
                "case \"$1\" in --version) echo 'bubblewrap 0.8.0'; exit 0;; esac\n\
                 echo run >> '{count}'\n\
                 for a in \"$@\"; do if [ \"$a\" = --proc ]; then cat '{msg}' >&2; exit 1; fi; done\n\
                 exit 0\n",
                count = d.join("count").display(),
                msg = d.join("msg").display()
            ),
        );
        f
    }
    fn set_message(&self, msg: &str) {
        let d = self.dir.path();
        fs::write(d.join("msg"), format!("{msg}\n")).unwrap();
        script(
            &d.join("bwrap"),
            &format!(
                "case \"$1\" in --version) echo 'bubblewrap 0.8.0'; exit 0;; esac\n\
                 echo run >> '{count}'\n\
                 cat '{msg}' >&2\n\
                 exit 1\n",
                count = d.join("count").display(),
                msg = d.join("msg").display()
            ),
        );
    }
    fn path_env(&self) -> String {
        format!("{}:/usr/bin:/bin", self.dir.path().display())
    }
    fn runs(&self) -> usize {
        fs::read_to_string(self.dir.path().join("count")).map(|s| s.lines().count()).unwrap_or(0)
    }
}

struct Case {
    stderr: &'static str,
    causes: &'static [&'static str],
    code: ErrorCode,
    reason: &'static [&'static str],
    fix: &'static [&'static str],
}

const UNAV: ErrorCode = ErrorCode::Unavailable;
const SETUP: ErrorCode = ErrorCode::SetupFailed;
const NS: &[&str] = &["userns-disabled", "docker-seccomp"];
const CAPS: &[&str] = &["caps-missing", "docker-seccomp"];
const SHORT: &[&str] = &["resource-shortage"];
const AA_FIX: &[&str] = &[
    "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
    "/etc/apparmor.d/bwrap",
    "flags=(unconfined) { userns, }",
    "systemctl reload apparmor",
];

fn cases() -> Vec<Case> {
    vec![
        Case { stderr: "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'.", causes: NS, code: UNAV, reason: &["user namespace"], fix: &["unprivileged_userns_clone=1", "seccomp=unconfined"] },
        Case { stderr: "bwrap: No permissions to create a new namespace, likely because the kernel does not allow non-privileged user namespaces.", causes: NS, code: UNAV, reason: &["namespace"], fix: &["unprivileged_userns_clone=1", "seccomp=unconfined"] },
        Case { stderr: "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces. See <https://deb.li/bubblewrap> or <file:///usr/share/doc/bubblewrap/README.Debian.gz>.", causes: NS, code: UNAV, reason: &["namespace"], fix: &["sysctl -w user.max_user_namespaces=15000", "apparmor=unconfined"] },
        Case { stderr: "bwrap: Creating new namespace failed, likely because the kernel does not support user namespaces.  bwrap must be installed setuid on such systems.", causes: &["kernel-no-userns"], code: UNAV, reason: &["kernel", "user namespace"], fix: &["CONFIG_USER_NS"] },
        Case { stderr: "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)", causes: &["nesting-limit"], code: UNAV, reason: &["already inside a sandbox", "max_user_namespaces"], fix: &["outside the enclosing sandbox", "danger-full-access"] },
        Case { stderr: "bwrap: Creating new namespace failed: Operation not permitted", causes: CAPS, code: UNAV, reason: &["namespace"], fix: &["seccomp=unconfined"] },
        Case { stderr: "bwrap: Creating new namespace failed: Permission denied", causes: CAPS, code: UNAV, reason: &["namespace"], fix: &["seccomp=unconfined"] },
        Case { stderr: "bwrap: setting up uid map: Permission denied", causes: &["apparmor-userns"], code: UNAV, reason: &["AppArmor", "setting up uid map"], fix: AA_FIX },
        Case { stderr: "bwrap: setting up gid map: Permission denied", causes: &["apparmor-userns"], code: UNAV, reason: &["AppArmor", "gid map"], fix: AA_FIX },
        Case { stderr: "bwrap: error writing to setgroups: Permission denied", causes: &["apparmor-userns"], code: UNAV, reason: &["AppArmor", "setgroups"], fix: AA_FIX },
        Case { stderr: "bwrap: setting up uid map: Read-only file system", causes: &["proc-readonly"], code: UNAV, reason: &["/proc is read-only"], fix: &["systempaths=unconfined"] },
        Case { stderr: "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted", causes: &["netns-denied"], code: UNAV, reason: &["loopback", "AppArmor"], fix: AA_FIX },
        Case { stderr: "bwrap: loopback: Failed RTM_NEWLINK: Operation not permitted", causes: &["netns-denied"], code: UNAV, reason: &["network namespace"], fix: AA_FIX },
        Case { stderr: "bwrap: Failed to make / slave: Permission denied", causes: &["container-apparmor"], code: UNAV, reason: &["AppArmor", "mount"], fix: &["--security-opt apparmor=unconfined", "danger-full-access"] },
        Case { stderr: "bwrap: Can't mount proc on /newroot/proc: Operation not permitted", causes: &["proc-masked"], code: UNAV, reason: &["/proc"], fix: &["--security-opt systempaths=unconfined", "danger-full-access"] },
        Case { stderr: "bwrap: Can't mount proc on /newroot/proc: Invalid argument", causes: &["proc-masked"], code: UNAV, reason: &["/proc"], fix: &["systempaths=unconfined"] },
        Case { stderr: "bwrap: Can't mount proc on /newroot/proc: Permission denied", causes: &["proc-masked"], code: UNAV, reason: &["/proc"], fix: &["systempaths=unconfined"] },
        Case { stderr: "bwrap: Can't mount proc on /proc: Operation not permitted", causes: &["proc-masked"], code: UNAV, reason: &["/proc"], fix: &["systempaths=unconfined"] },
        Case { stderr: "bwrap: Can't mount proc on /proc: Invalid argument", causes: &["proc-masked"], code: UNAV, reason: &["/proc"], fix: &["systempaths=unconfined"] },
        Case { stderr: "bwrap: Can't mount tmpfs on /newroot/dev: Permission denied", causes: &["mount-failed"], code: SETUP, reason: &["tmpfs"], fix: &["mount point"] },
        Case { stderr: "bwrap: Failed to mount tmpfs: Operation not permitted", causes: &["mount-failed"], code: SETUP, reason: &["tmpfs"], fix: &["apparmor=unconfined"] },
        Case { stderr: "bwrap: Can't mount devpts on /newroot/dev/pts: Permission denied", causes: &["mount-failed"], code: SETUP, reason: &["devpts"], fix: &["mount point"] },
        Case { stderr: "bwrap: setuid use of bubblewrap is not supported in this build", causes: &["setuid-unsupported"], code: UNAV, reason: &["setuid"], fix: &["chmod u-s"] },
        Case { stderr: "bwrap: Unexpected capabilities but not setuid, old file caps config?", causes: &["file-caps"], code: UNAV, reason: &["capabilities"], fix: &["setcap -r"] },
        Case { stderr: "bwrap: Can't bind mount /oldroot/a on /newroot/a: Limit exceeded (ENOSPC). (Hint: Check that /proc/sys/fs/mount-max is sufficient, typically 100000)", causes: &["mount-limit"], code: SETUP, reason: &["mount limit"], fix: &["sysctl -w fs.mount-max=100000"] },
        Case { stderr: "bwrap: Unknown option --disable-userns", causes: &["old-bwrap"], code: UNAV, reason: &["too old", "--disable-userns"], fix: &["upgrade bubblewrap"] },
        Case { stderr: "bwrap: Unknown option --argv0", causes: &["old-bwrap"], code: UNAV, reason: &["--argv0"], fix: &["upgrade bubblewrap", "apt-get install -y bubblewrap"] },
        Case { stderr: "bwrap: Unknown option --perms", causes: &["old-bwrap"], code: UNAV, reason: &["--perms"], fix: &["upgrade bubblewrap"] },
        Case { stderr: "bwrap: Can't find source path /nope: No such file or directory", causes: &["bad-source"], code: SETUP, reason: &["does not exist", "/nope"], fix: &["create the path"] },
        Case { stderr: "bwrap: Can't create file at /repo/.codex/tmp: Read-only file system", causes: &["mount-point-failed"], code: SETUP, reason: &["mount point", "/repo/.codex/tmp"], fix: &["symlink"] },
        Case { stderr: "bwrap: Can't mkdir parents for /a/b/c: Not a directory", causes: &["mount-point-failed"], code: SETUP, reason: &["mount point", "/a/b/c"], fix: &["symlink"] },
        Case { stderr: "bwrap: Can't mkdir /newroot/x: Permission denied", causes: &["mount-point-failed"], code: SETUP, reason: &["mount point"], fix: &["read-only"] },
        // A passing shortage (another run holding this user's processes): a setup failure to retry.
        Case { stderr: "bwrap: Creating new namespace failed: Resource temporarily unavailable", causes: SHORT, code: SETUP, reason: &["processes", "RLIMIT_NPROC", "per-user", "nothing ran", "Resource temporarily unavailable"], fix: &["retry"] },
        Case { stderr: "bwrap: Can't fork: Resource temporarily unavailable", causes: SHORT, code: SETUP, reason: &["processes", "RLIMIT_NPROC", "Can't fork"], fix: &["retry"] },
        Case { stderr: "bwrap: Creating new namespace failed: Cannot allocate memory", causes: SHORT, code: SETUP, reason: &["memory"], fix: &["retry"] },
        Case { stderr: "bwrap: Can't open /proc/self/fd: Too many open files", causes: SHORT, code: SETUP, reason: &["open files of this process", "ulimit -n"], fix: &["retry"] },
        Case { stderr: "bwrap: Failed to open /dev/null: Too many open files in system", causes: SHORT, code: SETUP, reason: &["open files of the whole system"], fix: &["retry"] },
    ]
}

fn assert_contains(what: &str, hay: &str, needles: &[&str], ctx: &str) {
    for n in needles {
        assert!(hay.contains(n), "{what} for {ctx:?} lacks {n:?}: {hay}");
    }
}

#[test]
fn pure_diagnosis_covers_every_known_string() {
    for c in cases() {
        let d = diagnose_bwrap_failure(c.stderr).unwrap_or_else(|| panic!("no diagnosis for {:?}", c.stderr));
        assert!(c.causes.contains(&d.cause), "{:?}: cause {}", c.stderr, d.cause);
        assert!(ALL_CAUSES.contains(&d.cause), "{} not in ALL_CAUSES", d.cause);
        assert_eq!(d.code, c.code, "{:?}", c.stderr);
        // With syslog level prefixes (`--level-prefix`) and surrounding noise, too.
        let noisy = format!("some output\n<3>{}\n", c.stderr);
        assert_eq!(diagnose_bwrap_failure(&noisy).map(|d| d.cause), Some(d.cause));
    }
    assert_eq!(diagnose_bwrap_failure("bwrap: something nobody has seen"), None);
    assert_eq!(diagnose_bwrap_failure(""), None);
}

#[test]
fn fake_bwrap_for_every_known_string() {
    let cwd = tempfile::tempdir().unwrap();
    for c in cases() {
        let fake = FakeBwrap::new(c.stderr);
        let caps = system_rung(None, Some(&fake.path_env()), cwd.path(), false);
        assert!(!caps.available, "{:?}", c.stderr);
        assert_eq!(caps.platform, Platform::Linux);
        assert_eq!(caps.sandbox_type, SandboxType::Bwrap);
        let cause = caps.cause.as_deref().unwrap();
        assert!(c.causes.contains(&cause), "{:?}: cause {cause}", c.stderr);
        assert_contains("reason", caps.reason.as_deref().unwrap(), c.reason, c.stderr);
        if c.code == SETUP {
            // The self-test mounts nothing of the user's: per-run advice would mislead.
            let expected: &[&str] = match cause {
                // Not the host's: it passes, so the self-test's failure is this run's to retry.
                "resource-shortage" => &["retry"],
                "mount-limit" => &["fs.mount-max"],
                "bad-source" => &["system path"],
                _ => &["not of your policy", "--security-opt"],
            };
            assert_contains("fix", caps.fix.as_deref().unwrap(), expected, c.stderr);
        } else {
            assert_contains("fix", caps.fix.as_deref().unwrap(), c.fix, c.stderr);
        }
        let b = caps.bwrap.as_ref().unwrap();
        assert_eq!(b.path, fs::canonicalize(fake.dir.path().join("bwrap")).unwrap());
        assert_eq!(b.version.as_deref(), Some("0.8.0"));
        assert!(b.disable_userns);
        assert_eq!(caps.stderr.as_deref(), Some(c.stderr));
        // Every bwrap (non-proc) failure is a refusal through require_sandbox... via the uncached path here:
        assert!(!b.proc_unmountable || cause == "proc-masked");
    }
}

#[test]
fn unknown_failure_quotes_stderr() {
    let cwd = tempfile::tempdir().unwrap();
    let fake = FakeBwrap::new("bwrap: the flux capacitor is out of sync");
    let caps = system_rung(None, Some(&fake.path_env()), cwd.path(), false);
    assert!(!caps.available);
    assert_eq!(caps.cause.as_deref(), Some("unknown"));
    let r = caps.reason.unwrap();
    assert!(r.contains("flux capacitor") && r.contains("exit code 1"), "{r}");
    assert!(caps.fix.unwrap().contains("--unshare-user"));
}

#[test]
fn proc_only_failure_sets_proc_unmountable() {
    let cwd = tempfile::tempdir().unwrap();
    let fake = FakeBwrap::proc_only("bwrap: Can't mount proc on /proc: Operation not permitted");
    let caps = system_rung(None, Some(&fake.path_env()), cwd.path(), false);
    assert!(!caps.available);
    assert_eq!(caps.cause.as_deref(), Some("proc-masked"));
    assert!(caps.bwrap.as_ref().unwrap().proc_unmountable);
    assert!(caps.reason.unwrap().contains("everything else works"));
    assert_eq!(fake.runs(), 2);
    // A proc error that also happens without --proc is not "proc only".
    let fake = FakeBwrap::new("bwrap: Can't mount proc on /newroot/proc: Operation not permitted");
    let caps = system_rung(None, Some(&fake.path_env()), cwd.path(), false);
    assert_eq!(caps.cause.as_deref(), Some("proc-masked"));
    assert!(!caps.bwrap.unwrap().proc_unmountable);
}

#[test]
fn no_bwrap_at_all() {
    let cwd = tempfile::tempdir().unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let path = format!("{}:{}::.:relative/dir", a.path().display(), b.path().display());
    assert_eq!(discover(None, Some(&path), cwd.path()), Discovery::NotFound);
    for p in [Some(path.as_str()), Some(""), None] {
        let caps = system_rung(None, p, cwd.path(), false);
        assert!(!caps.available);
        assert_eq!(caps.cause.as_deref(), Some("bwrap-missing"));
        assert!(caps.reason.as_deref().unwrap().starts_with("bubblewrap (bwrap) is not installed or not on PATH"));
        let fix = caps.fix.unwrap();
        for w in ["sudo apt-get install -y bubblewrap", "sudo dnf install bubblewrap", "apk add bubblewrap"] {
            assert!(fix.contains(w), "{fix}");
        }
        assert!(caps.bwrap.is_none());
    }
    // A non-executable or directory `bwrap` does not count.
    fs::write(a.path().join("bwrap"), "#!/bin/sh\n").unwrap();
    fs::create_dir(b.path().join("bwrap")).unwrap();
    assert_eq!(discover(None, Some(&path), cwd.path()), Discovery::NotFound);
}

#[test]
fn bwrap_inside_cwd_is_ignored() {
    let ws = tempfile::tempdir().unwrap();
    let cwd = ws.path();
    let bin = cwd.join("node_modules/.bin");
    fs::create_dir_all(&bin).unwrap();
    script(&bin.join("bwrap"), "echo planted >&2; exit 1\n");
    script(&cwd.join("bwrap"), "echo planted >&2; exit 1\n");
    // An outside dir that is a symlink into the workspace is inside it too.
    let outside = tempfile::tempdir().unwrap();
    let link = outside.path().join("linkbin");
    std::os::unix::fs::symlink(&bin, &link).unwrap();
    let real = working_bwrap();
    let path = format!("{}:{}:.::bin:{}:{}", bin.display(), link.display(), cwd.display(), real.dir());
    let found = find_bwrap(Some(&path), cwd);
    assert_eq!(found.as_deref(), Some(real.path.as_path()));
    let caps = system_rung(None, Some(&path), cwd, false);
    assert!(caps.available, "{caps:?}");
    assert_eq!(caps.bwrap.unwrap().path, real.path);

    // Only planted ones: not found, and the message says why they were ignored.
    let path = format!("{}:{}", bin.display(), link.display());
    assert_eq!(find_bwrap(Some(&path), cwd), None);
    let caps = system_rung(None, Some(&path), cwd, false);
    assert_eq!(caps.cause.as_deref(), Some("bwrap-missing"));
    assert!(caps.reason.unwrap().contains("inside the working directory"));

    // A subdirectory as cwd: the workspace bwrap is outside it and may be used (were it trusted).
    trust_for_test(&bin);
    let sub = cwd.join("src");
    fs::create_dir(&sub).unwrap();
    assert_eq!(
        find_bwrap(Some(&format!("{}", bin.display())), &sub),
        Some(fs::canonicalize(bin.join("bwrap")).unwrap())
    );
}

#[test]
fn override_env() {
    let ws = tempfile::tempdir().unwrap();
    let fake = FakeBwrap::new("bwrap: setting up uid map: Permission denied");
    let fake_path = fake.dir.path().join("bwrap");
    // Used first, before PATH.
    assert_eq!(
        discover(Some(fake_path.as_os_str()), Some("/usr/bin"), ws.path()),
        Discovery::Found(fs::canonicalize(&fake_path).unwrap())
    );
    let caps = system_rung(Some(fake_path.clone().into_os_string()), Some("/usr/bin"), ws.path(), false);
    assert_eq!(caps.cause.as_deref(), Some("apparmor-userns"));
    // Empty means unset.
    let real = working_bwrap();
    assert_eq!(discover(Some(OsString::new().as_os_str()), Some(&real.dir()), ws.path()), Discovery::Found(real.path.clone()));
    // Relative, missing, or inside the cwd: reported, no fallback to PATH.
    for bad in ["bwrap", "/nonexistent/bwrap"] {
        assert!(matches!(discover(Some(bad.as_ref()), Some("/usr/bin"), ws.path()), Discovery::OverrideInvalid(_)));
    }
    script(&ws.path().join("bwrap"), "exit 0\n");
    let inside = ws.path().join("bwrap");
    assert!(matches!(discover(Some(inside.as_os_str()), Some("/usr/bin"), ws.path()), Discovery::OverrideInvalid(_)));
    let caps = system_rung(Some(inside.into_os_string()), Some("/usr/bin"), ws.path(), false);
    assert_eq!(caps.cause.as_deref(), Some("bwrap-override-invalid"));
    assert!(caps.fix.unwrap().contains("SANDSPAWN_BWRAP"));
}

#[test]
fn cache_is_keyed_by_path_and_binary() {
    let cwd = tempfile::tempdir().unwrap();
    let fake = FakeBwrap::new("bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted");
    let real = working_bwrap();
    let path1 = format!("{}:{}", fake.dir.path().display(), real.dir());
    let cached = |path: &str, cwd: &Path| system_rung(None, Some(path), cwd, true);
    let c1 = cached(&path1, cwd.path());
    let c2 = cached(&path1, cwd.path());
    assert_eq!(c1, c2);
    assert_eq!(c1.cause.as_deref(), Some("netns-denied"));
    assert_eq!(fake.runs(), 1, "second call must come from the cache");

    // PATH changes (same bwrap found): probed again.
    let path2 = format!("{}:/nonexistent", path1);
    let c3 = cached(&path2, cwd.path());
    assert_eq!(fake.runs(), 2);
    assert_eq!(c3.cause.as_deref(), Some("netns-denied"));

    // PATH changes to another bwrap: that one's result.
    let other = FakeBwrap::new("bwrap: Failed to make / slave: Permission denied");
    let c4 = cached(&other.path_env(), cwd.path());
    assert_eq!(c4.cause.as_deref(), Some("container-apparmor"));
    assert!(cached(&real.dir(), cwd.path()).available);

    // The binary is replaced (upgrade): probed again.
    fake.set_message("bwrap: Unknown option --disable-userns (replaced binary)");
    let c5 = cached(&path1, cwd.path());
    assert_eq!(c5.cause.as_deref(), Some("old-bwrap"));
    assert_eq!(fake.runs(), 3);

    // The cache never hands out a bwrap that lies in the current cwd.
    let c6 = cached(&path1, fake.dir.path());
    assert_eq!(c6.bwrap.unwrap().path, real.path);
    assert!(c6.available);
    assert_eq!(fake.runs(), 3);
}

#[test]
fn real_probe_succeeds_on_this_host() {
    let real = working_bwrap();
    let v = bwrap_version(&real.path).expect("bwrap --version");
    assert!(parse_version(&v).is_some(), "{v}");
    let out = probe_bwrap(&real.path);
    assert!(out.ok, "{out:?}");
    assert!(out.diagnosis.is_none() && !out.proc_unmountable && !out.timed_out);
    assert!(out.argv.iter().any(|a| a == "--proc") && out.argv.iter().any(|a| a == "--unshare-net"));

    let cwd = tempfile::tempdir().unwrap();
    let caps = capabilities(Some(&real.dir()), cwd.path());
    assert!(caps.available, "{caps:?}");
    assert!(caps.reason.is_none() && caps.fix.is_none() && caps.cause.is_none());
    let b = caps.bwrap.clone().unwrap();
    assert_eq!(b.path, real.path);
    assert_eq!(b.version.as_deref(), Some(v.as_str()));
    assert_eq!(b.disable_userns, parse_version(&v).unwrap() >= (0, 8, 0));
    assert!(!b.proc_unmountable);

    let json = serde_json::to_value(&caps).unwrap();
    assert_eq!(json["platform"], "linux");
    assert_eq!(json["sandboxType"], "bwrap");
    assert_eq!(json["available"], true);
    assert_eq!(json["bwrap"]["path"], real.path.display().to_string());
    assert_eq!(json["bwrap"]["version"], v.as_str());
    assert!(json["bwrap"].get("procUnmountable").is_some());

    let got = require_sandbox(Platform::Linux, Some(&real.dir()), cwd.path(), &LinuxOptions::default()).unwrap();
    assert_eq!(got.bwrap.unwrap().path, real.path);
    assert_eq!(got.details.bwrap_source, Some(BwrapSource::System));
    assert!(doctor_report(&caps).contains("available:    yes"));
}

#[test]
fn require_sandbox_errors() {
    let cwd = tempfile::tempdir().unwrap();
    let fake = FakeBwrap::new("bwrap: setting up uid map: Permission denied");
    let e = require_sandbox(Platform::Linux, Some(&fake.path_env()), cwd.path(), &LinuxOptions::default()).unwrap_err();
    assert_eq!(e.code, ErrorCode::Unavailable);
    assert!(
        e.message.contains("AppArmor") && e.message.contains("apparmor_restrict_unprivileged_userns=0"),
        "{}",
        e.message
    );
    assert_eq!(e.stderr.as_deref(), Some("bwrap: setting up uid map: Permission denied"));

    let empty = tempfile::tempdir().unwrap();
    let system_only = LinuxOptions { bundled_bwrap: false, ..LinuxOptions::default() };
    let e = require_sandbox(Platform::Linux, Some(&empty.path().display().to_string()), cwd.path(), &system_only).unwrap_err();
    assert_eq!(e.code, ErrorCode::Unavailable);
    assert!(e.message.contains("not installed") && e.message.contains("apt-get install -y bubblewrap"));

    let e = require_sandbox(Platform::Other, None, cwd.path(), &LinuxOptions::default()).unwrap_err();
    assert_eq!(e.code, ErrorCode::Unsupported);
    assert!(e.message.contains("danger-full-access"));

    let other = capabilities_for(Platform::Other, None, cwd.path(), &LinuxOptions::default(), false);
    assert!(!other.available);
    assert_eq!(other.sandbox_type, SandboxType::None);
    assert!(other.reason.unwrap().starts_with("no OS sandbox on "));
}

#[test]
fn seatbelt_diagnosis_and_fake_probe() {
    let d = diagnose_seatbelt_failure("sandbox-exec: sandbox_apply: Operation not permitted\n").unwrap();
    assert_eq!(d.cause, "nested-seatbelt");
    assert_eq!(d.code, ErrorCode::Unavailable);
    assert!(d.reason.contains("already inside"));
    assert!(d.fix.contains("run sandspawn outside the other sandbox") && d.fix.contains("danger-full-access"));
    let d = diagnose_seatbelt_failure("sandbox-exec: invalid data type of path filter; expected pattern").unwrap();
    assert_eq!(d.cause, "seatbelt-failed");
    assert_eq!(diagnose_seatbelt_failure("hello"), None);

    let dir = tempfile::tempdir().unwrap();
    let se = dir.path().join("sandbox-exec");
    script(&se, "echo 'sandbox-exec: sandbox_apply: Operation not permitted' >&2; exit 71\n");
    let out = probe_seatbelt(&se);
    assert!(!out.ok);
    assert_eq!(out.exit_code, Some(71));
    assert_eq!(out.diagnosis.unwrap().cause, "nested-seatbelt");
    let caps = darwin_capabilities(&se, false);
    assert_eq!((caps.platform, caps.sandbox_type, caps.available), (Platform::Darwin, SandboxType::Seatbelt, false));
    assert_eq!(caps.cause.as_deref(), Some("nested-seatbelt"));
    assert_eq!(serde_json::to_value(&caps).unwrap()["platform"], "darwin");

    script(
        &se,
        "[ \"$1\" = -p ] && [ \"$2\" = '(version 1)(allow default)' ] && [ \"$3\" = /usr/bin/true ] || exit 9\n",
    );
    let caps = darwin_capabilities(&se, false);
    assert!(caps.available, "{caps:?}");
    assert!(caps.bwrap.is_none());
    let missing = darwin_capabilities(&dir.path().join("nope"), false);
    assert!(!missing.available && missing.reason.unwrap().contains("missing"));
}

#[test]
fn probe_timeout_kills_the_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("hang");
    // A grandchild that keeps stderr open must not hang us either.
    script(&p, "sleep 30 & echo started >&2; sleep 30\n");
    // The timeout must let the script start (its "started" is read below): 300 ms did not on a
    // loaded machine (1 run in 9 at a tenth of a CPU). The hang bound stays under the sleeps' 30 s.
    let t = std::time::Instant::now();
    let out = run_with_timeout(&p, &[], std::time::Duration::from_secs(2)).unwrap();
    assert!(out.timed_out);
    assert!(out.stderr.contains("started"), "{out:?}");
    assert!(t.elapsed() < std::time::Duration::from_secs(20), "{:?}", t.elapsed());
}

#[test]
fn version_parsing() {
    assert_eq!(parse_version_output("bubblewrap 0.8.0\n").as_deref(), Some("0.8.0"));
    assert_eq!(parse_version_output("bubblewrap 0.11.1").as_deref(), Some("0.11.1"));
    assert_eq!(parse_version_output("bwrap: Unknown option --version"), None);
    assert_eq!(parse_version("0.8.0"), Some((0, 8, 0)));
    assert_eq!(parse_version("0.12"), Some((0, 12, 0)));
    assert_eq!(parse_version("0.10.0-rc1"), Some((0, 10, 0)));
    assert!(parse_version("0.6.1").unwrap() < (0, 8, 0));
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("bwrap");
    script(
        &old,
        "case \"$1\" in --version) echo 'bubblewrap 0.6.1';; --help) echo '--unshare-user --ro-bind';; esac\n",
    );
    assert!(!supports_disable_userns(&old, bwrap_version(&old).as_deref()));
    assert!(!bwrap_probe_args(false, true).contains(&"--disable-userns".to_string()));
    script(&old, "case \"$1\" in --help) echo '  --disable-userns  Disable further use of user namespaces';; esac\n");
    assert_eq!(bwrap_version(&old), None);
    assert!(supports_disable_userns(&old, None));
}

#[test]
fn host_refinement() {
    let s = "bwrap: No permissions to create new namespace, likely because ...";
    let plain = HostFacts::default();
    assert_eq!(diagnose_with_host(s, &plain).unwrap().cause, "userns-disabled");
    let docker = HostFacts { in_container: true, ..HostFacts::default() };
    let d = diagnose_with_host(s, &docker).unwrap();
    assert_eq!(d.cause, "docker-seccomp");
    assert!(d.fix.contains("--security-opt seccomp=unconfined --security-opt apparmor=unconfined"));
    let zero = HostFacts { max_user_namespaces: Some(0), in_container: true, ..HostFacts::default() };
    let d = diagnose_with_host(
        "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)",
        &zero,
    )
    .unwrap();
    assert_eq!(d.cause, "userns-disabled");
    assert!(d.reason.contains("max_user_namespaces is 0") && d.fix.contains("user.max_user_namespaces=15000"));
    let clone0 = HostFacts { unprivileged_userns_clone: Some(0), ..HostFacts::default() };
    let d = diagnose_with_host(s, &clone0).unwrap();
    assert!(
        d.reason.contains("unprivileged_userns_clone is 0") && d.fix.contains("kernel.unprivileged_userns_clone=1")
    );
    let aa = HostFacts { apparmor_restrict_userns: Some(1), ..HostFacts::default() };
    let d = diagnose_with_host("bwrap: setting up uid map: Permission denied", &aa).unwrap();
    assert_eq!(d.cause, "apparmor-userns");
    assert!(d.reason.contains("apparmor_restrict_unprivileged_userns is 1"));
}

// ---- real kernel: the probe inside an outer sandbox that forbids user namespaces --------------

const HELPER_ENV: &str = "SANDSPAWN_TEST_NESTED_PROBE";
const MARK: &str = "SANDSPAWN_PROBE_JSON:";

/// Not a test on its own: when re-executed inside an outer bwrap with `HELPER_ENV` set, it runs the
/// real probe there and prints the outcome as one JSON line.
#[test]
fn nested_probe_helper() {
    let Some(bwrap) = std::env::var_os(HELPER_ENV) else { return };
    let out = probe_bwrap(Path::new(&bwrap));
    println!("{MARK}{}", serde_json::to_string(&out).unwrap());
}

/// Run `outer_args -- <this test binary> nested_probe_helper` under the real bwrap, return the
/// inner probe outcome.
fn probe_inside(outer_args: &[&str]) -> serde_json::Value {
    let exe = std::env::current_exe().unwrap();
    let real = working_bwrap();
    let out = Command::new(&real.path)
        .args(outer_args)
        .arg("--")
        .arg(&exe)
        .args(["--exact", "capabilities::tests::nested_probe_helper", "--nocapture", "--test-threads=1"])
        .env(HELPER_ENV, &real.path)
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().find_map(|l| l.split_once(MARK).map(|(_, j)| j.to_string()));
    let line = line.unwrap_or_else(|| {
        panic!(
            "no probe output; status {:?}, stdout {stdout}, stderr {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(&line).unwrap()
}

#[test]
fn real_kernel_probe_under_disable_userns_is_unavailable() {
    // The exact inner bwrap argv of the probe, under an outer bwrap with --disable-userns.
    let inner = bwrap_probe_args(true, true);
    let real = working_bwrap();
    let out = Command::new(&real.path)
        .args([
            "--unshare-user",
            "--disable-userns",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--",
        ])
        .arg(&real.path)
        .args(&inner)
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let d = diagnose_bwrap_failure(&stderr).unwrap_or_else(|| panic!("undiagnosed: {stderr}"));
    assert_eq!(d.code, ErrorCode::Unavailable);
    assert!(["nesting-limit", "userns-disabled", "caps-missing"].contains(&d.cause), "{} for {stderr}", d.cause);
    // Observed with bwrap 0.8.0 on Linux 6.x: the ENOSPC nesting message.
    assert!(stderr.contains("Creating new namespace failed"), "{stderr}");

    // The same through probe_bwrap itself, run inside the outer sandbox.
    let o = probe_inside(&[
        "--unshare-user",
        "--disable-userns",
        "--unshare-pid",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]);
    assert_eq!(o["ok"], false, "{o}");
    assert_eq!(o["diagnosis"]["code"], "Unavailable");
    assert_eq!(o["diagnosis"]["cause"], "nesting-limit", "{o}");
    assert_eq!(o["procUnmountable"], false);
}

#[test]
fn real_kernel_probe_with_overmounted_proc_sets_proc_unmountable() {
    // bwrap's own /proc has read-only over-mounts (/proc/sys, ...), so a nested bwrap cannot mount
    // a fresh proc ("Can't mount proc on /newroot/proc: Operation not permitted") but works without.
    let o =
        probe_inside(&["--unshare-user", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
    assert_eq!(o["ok"], false, "{o}");
    assert_eq!(o["diagnosis"]["cause"], "proc-masked", "{o}");
    assert_eq!(o["procUnmountable"], true, "{o}");
    assert!(o["stderr"].as_str().unwrap().contains("Can't mount proc on"), "{o}");
}

#[test]
fn texts_are_tidy() {
    let hosts = [
        HostFacts::default(),
        HostFacts { in_container: true, apparmor_restrict_userns: Some(1), ..HostFacts::default() },
        HostFacts { max_user_namespaces: Some(0), unprivileged_userns_clone: Some(0), ..HostFacts::default() },
    ];
    for c in cases() {
        let mut all = vec![diagnose_bwrap_failure(c.stderr).unwrap()];
        all.extend(hosts.iter().map(|h| diagnose_with_host(c.stderr, h).unwrap()));
        for d in all {
            for t in [&d.reason, &d.fix] {
                assert!(
                    !t.contains("  ") && !t.contains('\n') && !t.contains("(("),
                    "untidy text for {:?}: {t}",
                    c.stderr
                );
            }
        }
    }
}

#[test]
fn real_kernel_probe_with_readonly_proc_is_unavailable() {
    // An outer sandbox that shows /proc read-only: bwrap cannot write its uid map.
    let o = probe_inside(&[
        "--unshare-user",
        "--unshare-pid",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--ro-bind",
        "/proc",
        "/proc",
    ]);
    assert_eq!(o["ok"], false, "{o}");
    assert_eq!(o["diagnosis"]["code"], "Unavailable");
    assert_eq!(o["diagnosis"]["cause"], "proc-readonly", "{o}");
    assert!(o["stderr"].as_str().unwrap().contains("setting up uid map: Read-only file system"), "{o}");
}

#[test]
fn nesting_fix_suggests_raising_the_limit_only_when_it_is_low() {
    let stderr = "bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)";
    let high = HostFacts { max_user_namespaces: Some(96364), ..HostFacts::default() };
    assert!(!diagnose_with_host(stderr, &high).unwrap().fix.contains("max_user_namespaces=15000"));
    let low = HostFacts { max_user_namespaces: Some(10), ..HostFacts::default() };
    assert!(diagnose_with_host(stderr, &low).unwrap().fix.contains("max_user_namespaces=15000"));
}

// ---- a passing shortage: another run holding this user's processes ------------------------------

#[test]
fn a_passing_shortage_is_a_setup_failure_to_retry_on_any_host() {
    // In a container bwrap's EAGAIN was taken for Docker's seccomp profile, whose fixes turn the
    // sandbox off; it is this user's processes (RLIMIT_NPROC), held by another run for a while.
    let hosts = [
        HostFacts::default(),
        HostFacts { in_container: true, ..HostFacts::default() },
        HostFacts { max_user_namespaces: Some(10), unprivileged_userns_clone: Some(1), in_container: true, ..HostFacts::default() },
    ];
    for c in cases().iter().filter(|c| c.causes == SHORT) {
        for h in &hosts {
            let d = diagnose_with_host(c.stderr, h).unwrap();
            assert_eq!((d.cause, d.code), ("resource-shortage", ErrorCode::SetupFailed), "{:?} on {h:?}: {d:?}", c.stderr);
            assert!(ALL_CAUSES.contains(&d.cause));
            for never in ["danger-full-access", "--security-opt", "landlock", "reinstall"] {
                assert!(!d.fix.contains(never) && !d.reason.contains(never), "{:?}: {d:?}", c.stderr);
            }
        }
    }
    // Definite failures keep their diagnosis.
    let d = diagnose_with_host("bwrap: Creating new namespace failed: Operation not permitted", &hosts[1]).unwrap();
    assert_eq!((d.cause, d.code), ("docker-seccomp", ErrorCode::Unavailable));
}

/// A bwrap that fails its first `n` self-tests for lack of processes (as when another run holds
/// all of this user's processes) and is the real one otherwise; its file never changes meanwhile.
fn briefly_short_bwrap(real: &WorkingBwrap, n: usize) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    trust_for_test(dir.path());
    let d = dir.path();
    fs::write(d.join("left"), format!("{n}\n")).unwrap();
    script(
        &d.join("bwrap"),
        &format!(
            "case \"$1\" in --version|--help) exec '{real}' \"$@\";; esac\n\
             n=$(cat '{left}')\n\
             if [ \"$n\" -gt 0 ]; then echo $((n - 1)) > '{left}'; \
             echo 'bwrap: Creating new namespace failed: Resource temporarily unavailable' >&2; exit 1; fi\n\
             exec '{real}' \"$@\"\n",
            real = real.path.display(),
            left = d.join("left").display()
        ),
    );
    let path = d.display().to_string();
    (dir, path)
}

#[test]
fn a_probe_that_met_a_passing_shortage_is_made_again() {
    let cwd = tempfile::tempdir().unwrap();
    let real = working_bwrap();
    let (_dir, path) = briefly_short_bwrap(&real, 1);
    let caps = system_rung(None, Some(&path), cwd.path(), true);
    assert!(!caps.available);
    assert_eq!(caps.stderr.as_deref(), Some("bwrap: Creating new namespace failed: Resource temporarily unavailable"));
    // The processes are free again: the sandbox works, in this process too.
    let caps = system_rung(None, Some(&path), cwd.path(), true);
    assert!(caps.available, "the shortage was remembered after it passed: {caps:?}");
}

#[test]
fn a_run_that_meets_a_passing_shortage_is_refused_with_a_retry() {
    let cwd = tempfile::tempdir().unwrap();
    let real = working_bwrap();
    let (_dir, path) = briefly_short_bwrap(&real, 2);
    let system_only = LinuxOptions { bundled_bwrap: false, ..LinuxOptions::default() };
    let e = require_sandbox(Platform::Linux, Some(&path), cwd.path(), &system_only).unwrap_err();
    assert_eq!(e.code, ErrorCode::SetupFailed, "{}", e.message);
    assert!(e.message.contains("RLIMIT_NPROC") && e.message.contains("retry"), "{}", e.message);
    assert!(!e.message.contains("danger-full-access") && !e.message.contains("sandbox unavailable"), "{}", e.message);
    assert!(e.stderr.as_deref().is_some_and(|s| s.contains("Resource temporarily unavailable")), "{e:?}");
    let caps = system_rung(None, Some(&path), cwd.path(), true);
    assert_eq!((caps.available, caps.cause.as_deref()), (false, Some("resource-shortage")), "{caps:?}");
    assert!(require_sandbox(Platform::Linux, Some(&path), cwd.path(), &system_only).is_ok());
}

#[test]
fn a_definite_failure_is_kept_only_briefly() {
    // A burst of runs makes one probe; a host fixed meanwhile is seen again within seconds.
    let cwd = tempfile::tempdir().unwrap();
    let fake = FakeBwrap::new("bwrap: setting up uid map: Permission denied");
    let cached = || system_rung(None, Some(&fake.path_env()), cwd.path(), true);
    assert_eq!(cached().cause.as_deref(), Some("apparmor-userns"));
    assert_eq!(cached().cause.as_deref(), Some("apparmor-userns"));
    assert_eq!(fake.runs(), 1);
    std::thread::sleep(super::FAILURE_KEPT + std::time::Duration::from_millis(200));
    assert_eq!(cached().cause.as_deref(), Some("apparmor-userns"));
    assert_eq!(fake.runs(), 2, "kept past FAILURE_KEPT");
}
