//! The bundled bwrap's verification and the fallback ladder, with fake system bwraps and the real
//! bundled binary built by scripts/build-bwrap.js (beside Cargo.toml).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::bundled::{self, BundledBwrap, Problem};
use super::*;

/// SHA-256 of the three bytes "abc" (FIPS 180-2 test vector).
const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

fn exe(path: &Path, body: &[u8]) {
    fs::write(path, body).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A temporary directory for a fake system bwrap, trusted as if it were root's own (see
/// `discover::distrust`; the real rule is tested in `an_untrusted_system_bwrap_is_never_run`).
fn trusted_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    super::discover::TEST_TRUSTED.lock().unwrap().push(fs::canonicalize(d.path()).unwrap());
    d
}

/// A working bwrap on PATH is the system's, whatever binary it is: a copy of the bundled one in a
/// trusted directory, so that tests of the system rung run on a host without bubblewrap too.
/// (The directory, a PATH of it, the copy's canonical path.)
fn trusted_copy_of_the_bundled_bwrap() -> (tempfile::TempDir, String, PathBuf) {
    let bin = trusted_dir();
    exe(&bin.path().join("bwrap"), &fs::read(real_bundled().path.unwrap()).unwrap());
    let path = bin.path().display().to_string();
    let bwrap = fs::canonicalize(bin.path().join("bwrap")).unwrap();
    (bin, path, bwrap)
}

fn at(path: &Path, digest: &str) -> BundledBwrap {
    BundledBwrap { path: Some(path.to_path_buf()), digest: Some(digest.to_string()) }
}

/// The real bundled binary and its baked digest; this build must have them.
fn real_bundled() -> BundledBwrap {
    let digest = bundled::BUILT_DIGEST.expect("no bundled bwrap digest baked in: run `node scripts/build-bwrap.js` first");
    at(&Path::new(env!("CARGO_MANIFEST_DIR")).join(bundled::FILE_NAME), digest)
}

#[test]
fn verify_refuses_anything_but_the_exact_binary() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("sandspawn-bwrap");
    exe(&f, b"abc");
    assert_eq!(bundled::verify(&at(&f, ABC)).unwrap(), fs::canonicalize(&f).unwrap());
    assert_eq!(bundled::verify(&at(&f, &ABC.to_uppercase())).unwrap(), fs::canonicalize(&f).unwrap());

    // Same size, new content: the cached digest must not be reused.
    exe(&f, b"abd");
    match bundled::verify(&at(&f, ABC)) {
        Err(Problem::DigestMismatch { actual, .. }) => assert_ne!(actual, ABC),
        other => panic!("{other:?}"),
    }
    exe(&f, b"abc");
    assert!(bundled::verify(&at(&f, ABC)).is_ok());

    fs::set_permissions(&f, fs::Permissions::from_mode(0o775)).unwrap();
    assert!(matches!(bundled::verify(&at(&f, ABC)), Err(Problem::Unsafe(_, w)) if w.contains("writable")));
    fs::set_permissions(&f, fs::Permissions::from_mode(0o644)).unwrap();
    assert!(matches!(bundled::verify(&at(&f, ABC)), Err(Problem::Unsafe(_, w)) if w.contains("not executable")));
    assert!(matches!(bundled::verify(&at(d.path(), ABC)), Err(Problem::Unsafe(_, w)) if w.contains("regular file")));

    let gone = d.path().join("nope");
    assert_eq!(bundled::verify(&at(&gone, ABC)), Err(Problem::Missing(Some(gone.clone()))));
    assert_eq!(bundled::verify(&BundledBwrap { path: None, digest: Some(ABC.into()) }), Err(Problem::Missing(None)));
    assert_eq!(bundled::verify(&BundledBwrap { path: Some(f.clone()), digest: None }), Err(Problem::NotBuilt));
    assert!(Problem::NotBuilt.message().contains("not available in this build"));
}

/// Found by an attacker's review (self39): only the file's own mode and owner were checked, and it
/// is hashed, then executed by its path; a directory above it that another user may write let them
/// rename their program over it between the two.
#[test]
fn verify_refuses_a_directory_on_the_way_that_another_user_may_write() {
    let d = tempfile::tempdir().unwrap();
    let pkg = d.path().join("pkg");
    fs::create_dir(&pkg).unwrap();
    let f = pkg.join("sandspawn-bwrap");
    exe(&f, b"abc");
    assert!(bundled::verify(&at(&f, ABC)).is_ok());
    fs::set_permissions(&pkg, fs::Permissions::from_mode(0o777)).unwrap();
    match bundled::verify(&at(&f, ABC)) {
        Err(Problem::Unsafe(_, w)) => assert!(w.contains(&format!("{} is writable by everyone", pkg.display())), "{w}"),
        other => panic!("{other:?}"),
    }
    // A sticky one lets nobody else rename this user's entries: kept usable (a package in /tmp).
    fs::set_permissions(&pkg, fs::Permissions::from_mode(0o1777)).unwrap();
    assert!(bundled::verify(&at(&f, ABC)).is_ok());
    // A group with no entry (only root can give one): the owner's private group is no other user
    // (`private_group`), and a user's own group may be one.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::chown(&pkg, None, Some(64127)).unwrap();
        fs::set_permissions(&pkg, fs::Permissions::from_mode(0o770)).unwrap();
        assert!(matches!(bundled::verify(&at(&f, ABC)), Err(Problem::Unsafe(_, w)) if w.contains("writable by its group")));
    }
}

#[test]
fn the_built_binary_matches_its_baked_digest() {
    let b = real_bundled();
    let path = bundled::verify(&b).unwrap_or_else(|p| panic!("{}", p.message()));
    let out = std::process::Command::new(&path).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "bubblewrap 0.12.0");
}

fn ladder(path_env: &str, cwd: &Path, opts: LinuxOptions, b: &BundledBwrap) -> Capabilities {
    linux_ladder(None, Some(path_env), cwd, &opts, b, false)
}

fn causes(c: &Capabilities) -> Vec<(&'static str, String)> {
    c.attempts.iter().map(|a| (a.mechanism, a.cause.clone())).collect()
}

fn v(list: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    list.iter().map(|(m, c)| (*m, c.to_string())).collect()
}

#[test]
fn no_system_bwrap_runs_the_bundled_one() {
    let cwd = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let b = real_bundled();
    let c = ladder(&empty.path().display().to_string(), cwd.path(), LinuxOptions::default(), &b);
    assert!(c.available, "{c:?}");
    assert_eq!(c.sandbox_details.bwrap_source, Some(BwrapSource::Bundled));
    assert_eq!(c.bwrap.as_ref().unwrap().path, fs::canonicalize(b.path.as_ref().unwrap()).unwrap());
    assert_eq!(c.bwrap.as_ref().unwrap().version.as_deref(), Some("0.12.0"));
    assert!(c.bwrap.as_ref().unwrap().disable_userns);
    assert_eq!(causes(&c), v(&[("bwrap-system", "bwrap-missing"), ("bwrap-bundled", "ok")]));
    assert!(c.fixes.is_empty() && c.reason.is_none());

    // The same through require_sandbox's error path, with the bundled one disabled.
    let off = LinuxOptions { bundled_bwrap: false, ..LinuxOptions::default() };
    let c = ladder(&empty.path().display().to_string(), cwd.path(), off, &b);
    assert!(!c.available);
    assert_eq!(c.cause.as_deref(), Some("bwrap-missing"));
    assert_eq!(c.sandbox_details.bwrap_source, None);
    assert_eq!(
        causes(&c),
        v(&[("bwrap-system", "bwrap-missing"), ("bwrap-bundled", "disabled"), ("landlock", "not-allowed")])
    );
    assert!(c.fixes[0].contains("apt-get install -y bubblewrap"), "{:?}", c.fixes);
    assert!(c.fixes.iter().any(|f| f.contains("bundledBwrap: true")), "{:?}", c.fixes);
}

#[test]
fn a_working_system_bwrap_wins() {
    let cwd = tempfile::tempdir().unwrap();
    let (_bin, path, bwrap) = trusted_copy_of_the_bundled_bwrap();
    let c = ladder(&path, cwd.path(), LinuxOptions::default(), &real_bundled());
    assert!(c.available, "{c:?}");
    assert_eq!(c.sandbox_details.bwrap_source, Some(BwrapSource::System));
    assert_eq!(c.bwrap.as_ref().unwrap().path, bwrap);
    assert_eq!(causes(&c), v(&[("bwrap-system", "ok")]));
}

/// Issue 28: a bwrap a sandboxed run could have planted on PATH (here: in a temporary directory,
/// as `writableRoots: ['~/.cargo']` puts one in `~/.cargo/bin`) is never executed, not even for
/// `--version`: the bundled one is used, and the attempt says why.
#[test]
fn an_untrusted_system_bwrap_is_never_run() {
    let cwd = tempfile::tempdir().unwrap();
    let planted = tempfile::tempdir().unwrap();
    let ran = planted.path().join("ran");
    exe(&planted.path().join("bwrap"), format!("#!/bin/sh\ntouch '{}'\nexit 1\n", ran.display()).as_bytes());
    // The next one on PATH is trusted (root's /usr/bin/bwrap on a host that has one).
    let (_next, next_path, next) = trusted_copy_of_the_bundled_bwrap();
    let path = format!("{}:{next_path}", planted.path().display());
    let c = ladder(&path, cwd.path(), LinuxOptions::default(), &real_bundled());
    assert!(c.available, "{c:?}");
    assert_eq!(c.bwrap.as_ref().unwrap().path, next, "the next, trusted one on PATH");
    let only = ladder(&planted.path().display().to_string(), cwd.path(), LinuxOptions::default(), &real_bundled());
    assert_eq!(only.sandbox_details.bwrap_source, Some(BwrapSource::Bundled));
    assert_eq!(causes(&only)[0], ("bwrap-system", "bwrap-missing".to_string()));
    let why = &only.attempts[0].message;
    assert!(why.contains(&planted.path().join("bwrap").display().to_string()) && why.contains("system program directory"), "{why}");
    assert!(!ran.exists(), "the planted bwrap was executed");
    // The rule itself: root's own file in root's directories passes; anything writable by others,
    // or owned by another user, does not.
    // (/usr/bin/env stands for /usr/bin/bwrap: any root file in root's directories, on every host.)
    let trust = super::discover::Trust { home: Some("/nonexistent-home".into()), temp: vec![] };
    assert_eq!(super::discover::distrust(Path::new("/usr/bin/env"), &trust), None);
    let t = planted.path().canonicalize().unwrap();
    assert!(super::discover::distrust(&t.join("bwrap"), &trust).unwrap().contains("system program directory"));
    assert!(super::discover::not_roots_alone(&t.join("bwrap"), &trust).unwrap().contains("writable by everyone"), "the sticky /tmp");
    let home = super::discover::Trust { home: Some("/usr".into()), temp: vec![] };
    assert!(super::discover::distrust(Path::new("/usr/bin/env"), &home).unwrap().contains("under HOME"));
}

#[test]
fn an_old_or_unknown_option_system_bwrap_falls_back() {
    let cwd = tempfile::tempdir().unwrap();
    let old = trusted_dir();
    exe(&old.path().join("bwrap"), b"#!/bin/sh\ncase \"$1\" in --version) echo 'bubblewrap 0.6.1';; *) exit 0;; esac\n");
    let path = format!("{}:/nonexistent", old.path().display());
    let c = ladder(&path, cwd.path(), LinuxOptions::default(), &real_bundled());
    assert!(c.available, "{c:?}");
    assert_eq!(c.sandbox_details.bwrap_source, Some(BwrapSource::Bundled));
    assert_eq!(causes(&c), v(&[("bwrap-system", "bwrap-too-old"), ("bwrap-bundled", "ok")]));
    assert!(c.attempts[0].message.contains("0.6.1"), "{:?}", c.attempts);

    // Too old and no bundled one: refused (never run without --disable-userns).
    let off = LinuxOptions { bundled_bwrap: false, ..LinuxOptions::default() };
    let c = ladder(&path, cwd.path(), off, &real_bundled());
    assert!(!c.available);
    assert_eq!(c.cause.as_deref(), Some("bwrap-too-old"));
    assert!(c.fix.as_deref().unwrap().contains("upgrade bubblewrap"));

    exe(&old.path().join("bwrap"), b"#!/bin/sh\ncase \"$1\" in --version) echo 'bubblewrap 0.8.0';; *) echo 'bwrap: Unknown option --argv0' >&2; exit 1;; esac\n");
    let c = ladder(&path, cwd.path(), LinuxOptions::default(), &real_bundled());
    assert!(c.available, "{c:?}");
    assert_eq!(causes(&c), v(&[("bwrap-system", "old-bwrap"), ("bwrap-bundled", "ok")]));
}

/// A trusted directory with a system `bwrap` 0.8.0 whose every run fails with `bwrap: {message}`.
fn failing_system_bwrap(message: &str) -> tempfile::TempDir {
    let fake = trusted_dir();
    let body = format!("#!/bin/sh\ncase \"$1\" in --version) echo 'bubblewrap 0.8.0';; *) echo 'bwrap: {message}' >&2; exit 1;; esac\n");
    exe(&fake.path().join("bwrap"), body.as_bytes());
    fake
}

#[test]
fn a_host_failure_never_tries_the_bundled_one() {
    let cwd = tempfile::tempdir().unwrap();
    let fake = failing_system_bwrap("setting up uid map: Permission denied");
    // A bundled path that would fail loudly if it were even verified.
    let poisoned = BundledBwrap { path: Some("/nonexistent/sandspawn-bwrap".into()), digest: Some(ABC.into()) };
    let c = ladder(&format!("{}:/nonexistent", fake.path().display()), cwd.path(), LinuxOptions::default(), &poisoned);
    assert!(!c.available);
    assert_eq!(c.cause.as_deref(), Some("apparmor-userns"));
    assert_eq!(
        causes(&c),
        v(&[("bwrap-system", "apparmor-userns"), ("bwrap-bundled", "not-tried-host"), ("landlock", "not-allowed")])
    );
    assert!(c.fixes[0].contains("apparmor"), "{:?}", c.fixes);

    let e = {
        let b = BundledBwrap { path: None, digest: None };
        let caps = linux_ladder(None, Some(&format!("{}:/nonexistent", fake.path().display())), cwd.path(), &LinuxOptions::default(), &b, false);
        assert_eq!(caps.attempts.len(), 3);
        caps
    };
    assert!(e.attempts[2].message.contains("opt in"), "{:?}", e.attempts);
    assert!(e.fixes.iter().any(|f| f.contains("'landlock'")), "the opt-in is offered after a host failure: {:?}", e.fixes);
}

#[test]
fn a_host_failure_of_the_bundled_bwrap_is_the_reason_given() {
    // No system bwrap (a fresh machine), and the bundled one fails because of the host: nested in
    // another sandbox that forbids user namespaces. The reason must name the nesting, not "install
    // bubblewrap" (a system bwrap would fail the same way), and the fixes must offer the opt-in.
    let cwd = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let fake = d.path().join(bundled::FILE_NAME);
    let body = b"#!/bin/sh\ncase \"$1\" in --version) echo 'bubblewrap 0.12.0';; *) echo 'bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)' >&2; exit 1;; esac\n";
    exe(&fake, body);
    use sha2::Digest;
    let digest: String = sha2::Sha256::digest(body).iter().map(|b| format!("{b:02x}")).collect();
    let c = ladder(&empty.path().display().to_string(), cwd.path(), LinuxOptions::default(), &at(&fake, &digest));
    assert!(!c.available, "{c:?}");
    assert_eq!(causes(&c), v(&[("bwrap-system", "bwrap-missing"), ("bwrap-bundled", "nesting-limit"), ("landlock", "not-allowed")]));
    assert_eq!(c.cause.as_deref(), Some("nesting-limit"));
    assert!(c.reason.as_deref().unwrap().contains("already inside a sandbox"), "{:?}", c.reason);
    assert_eq!(c.bwrap.as_ref().unwrap().path, fs::canonicalize(&fake).unwrap());
    assert!(c.stderr.as_deref().unwrap().contains("nesting depth"), "{:?}", c.stderr);
    assert!(!c.fixes.iter().any(|f| f.contains("apt-get install")), "installing bubblewrap would not help: {:?}", c.fixes);
    assert!(c.fixes[0].contains("outside the enclosing sandbox"), "{:?}", c.fixes);
    assert!(c.fixes.iter().any(|f| f.contains("'landlock'")), "{:?}", c.fixes);

    // Through require_sandbox's message: the nesting comes first, the ladder after it.
    let e = crate::error::SandboxError::unavailable(c.reason.clone().unwrap(), c.fix.clone().unwrap());
    assert!(e.message.starts_with("sandbox unavailable: bwrap may not create another namespace"), "{}", e.message);
}

#[test]
fn a_tampered_bundled_binary_is_refused() {
    let cwd = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let real = real_bundled();
    let d = tempfile::tempdir().unwrap();
    let copy = d.path().join(bundled::FILE_NAME);
    let mut bytes = fs::read(real.path.as_ref().unwrap()).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    exe(&copy, &bytes);
    let b = BundledBwrap { path: Some(copy.clone()), digest: real.digest.clone() };
    let c = ladder(&empty.path().display().to_string(), cwd.path(), LinuxOptions::default(), &b);
    assert!(!c.available, "{c:?}");
    assert_eq!(causes(&c)[1], ("bwrap-bundled", "bundled-bwrap-digest-mismatch".to_string()));
    assert!(c.attempts[1].message.contains("refused"), "{:?}", c.attempts);
    assert!(c.fixes.iter().any(|f| f.contains("reinstall sandspawn")), "{:?}", c.fixes);
}

#[test]
fn allow_and_override_shape_the_ladder() {
    let cwd = tempfile::tempdir().unwrap();
    let only_landlock = LinuxOptions { allow_bwrap: false, allow_landlock: true, ..LinuxOptions::default() };
    let c = ladder("/usr/bin:/bin", cwd.path(), only_landlock, &real_bundled());
    let prefix = v(&[("bwrap-system", "not-allowed"), ("bwrap-bundled", "not-allowed")]);
    assert_eq!(causes(&c)[..2], prefix[..]);
    // The Landlock rung itself depends on this kernel's ABI.
    match super::landlock_rung::kernel_abi() {
        abi if abi >= 3 => {
            assert!(c.available, "{c:?}");
            assert_eq!(c.sandbox_type, crate::platform::SandboxType::Landlock);
            assert_eq!(causes(&c)[2], ("landlock", "ok".to_string()));
            assert!(c.sandbox_details.landlock_abi.is_some() && !c.sandbox_details.not_enforced.is_empty());
        }
        0 => assert_eq!(causes(&c)[2], ("landlock", "landlock-enosys".to_string())),
        _ => assert_eq!(causes(&c)[2], ("landlock", "landlock-abi-too-old".to_string())),
    }

    // SANDSPAWN_BWRAP set but unusable: reported, not replaced by the bundled bwrap.
    let c = linux_ladder(Some("relative/bwrap".into()), Some("/usr/bin"), cwd.path(), &LinuxOptions::default(), &real_bundled(), false);
    assert!(!c.available);
    assert_eq!(causes(&c)[..2], v(&[("bwrap-system", "bwrap-override-invalid"), ("bwrap-bundled", "not-tried-override")])[..]);
}

#[test]
fn what_sandspawn_linux_allow_chose_is_named_with_its_value() {
    // Found by an attacker's review: a run the variable put in the Landlock mode looked like any other.
    let cwd = tempfile::tempdir().unwrap();
    let env_only_landlock = LinuxOptions { allow_bwrap: false, allow_landlock: true, allow_from_env: true, ..LinuxOptions::default() };
    assert_eq!(env_only_landlock.allow_source(), "SANDSPAWN_LINUX_ALLOW=landlock");
    let c = ladder("/usr/bin:/bin", cwd.path(), env_only_landlock, &real_bundled());
    assert_eq!(c.attempts[0].message, "not allowed: SANDSPAWN_LINUX_ALLOW=landlock does not include 'bwrap'");
    if c.available {
        let first = &c.sandbox_details.not_enforced[0];
        assert!(first.starts_with("bwrap: SANDSPAWN_LINUX_ALLOW=landlock in the host's environment chose"), "{first}");
    } else {
        assert!(c.reason.as_deref().unwrap().starts_with("SANDSPAWN_LINUX_ALLOW=landlock names only"), "{c:?}");
        assert!(c.fix.as_deref().unwrap().contains("unset SANDSPAWN_LINUX_ALLOW"), "{c:?}");
    }
    // The caller's own linux.allow: what it asked for, nothing added.
    let api_only_landlock = LinuxOptions { allow_from_env: false, ..env_only_landlock };
    let c = ladder("/usr/bin:/bin", cwd.path(), api_only_landlock, &real_bundled());
    assert_eq!(c.attempts[0].message, "not allowed: linux.allow does not include 'bwrap'");
    assert!(!c.sandbox_details.not_enforced.iter().any(|e| e.contains("SANDSPAWN_LINUX_ALLOW")), "{c:?}");
    assert_eq!(LinuxOptions { allow_landlock: true, allow_from_env: true, ..LinuxOptions::default() }.allow_source(), "SANDSPAWN_LINUX_ALLOW=bwrap,landlock");
}

#[test]
fn require_sandbox_error_carries_the_ladder() {
    // Through the public entry point, with no system bwrap and the bundled one turned off: nothing
    // can run.
    let cwd = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let off = LinuxOptions { bundled_bwrap: false, ..LinuxOptions::default() };
    let e = require_sandbox(Platform::Linux, Some(&empty.path().display().to_string()), cwd.path(), &off).unwrap_err();
    assert_eq!(e.code, crate::ErrorCode::Unavailable);
    assert_eq!(e.attempts.len(), 3, "{:?}", e.attempts);
    assert_eq!(e.attempts[1].cause, "disabled");

    // With it on, the test binary finds the bundled bwrap the build put beside Cargo.toml (as the
    // addon finds the one beside its .node file): a host without bubblewrap still sandboxes.
    let got = require_sandbox(Platform::Linux, Some(&empty.path().display().to_string()), cwd.path(), &LinuxOptions::default()).unwrap();
    assert_eq!(got.details.bwrap_source, Some(BwrapSource::Bundled));
    assert!(e.message.contains("tried: bwrap-system:"), "{}", e.message);
    assert!(!e.fixes.is_empty());
}

#[test]
fn a_passing_shortage_of_the_system_bwrap_falls_back_to_no_other_rung() {
    // Another run holding this user's processes must not move this run to a weaker sandbox.
    let cwd = tempfile::tempdir().unwrap();
    let fake = failing_system_bwrap("Creating new namespace failed: Resource temporarily unavailable");
    let with_landlock = LinuxOptions { allow_landlock: true, ..LinuxOptions::default() };
    let c = ladder(&format!("{}:/nonexistent", fake.path().display()), cwd.path(), with_landlock, &real_bundled());
    assert!(!c.available, "{c:?}");
    assert_eq!(c.cause.as_deref(), Some("resource-shortage"));
    assert_eq!(
        causes(&c),
        v(&[("bwrap-system", "resource-shortage"), ("bwrap-bundled", "not-tried-shortage"), ("landlock", "not-tried-shortage")])
    );
    assert_eq!(c.fixes.len(), 1, "only the retry: {:?}", c.fixes);
    assert!(c.fixes[0].contains("retry"), "{:?}", c.fixes);
}
