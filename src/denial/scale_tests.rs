//! The classifier is linear in the output: a command chooses what it prints, and a long line with
//! no whitespace full of keywords once took minutes (every occurrence rescanned the whole line).

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::platform::SandboxType::Bwrap;

/// A quarter MiB: linear code takes about a second in a debug build; the quadratic code took
/// minutes (37 s in a release build).
const MIB: usize = 1 << 18;

/// Generous for a debug build: CPU time of the classifying thread, not wall time, so a loaded
/// machine (a fixer's run beside seven others took over 10 s of wall time) does not fail it.
const BOUND: Duration = Duration::from_secs(10);

/// The CPU time this thread has used.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec to fill.
    assert_eq!(unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) }, 0);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

fn ctx() -> DenialContext {
    DenialContext::from_json(&json!({
        "mode": "workspace-write", "writableRoots": ["/ws"], "denyRead": ["/ws/secret"],
        "network": false, "cwd": "/ws"
    }))
    .unwrap()
}

/// `unit` repeated to 1 MiB as stderr (and the same as the combined output), exit 1.
fn timed(unit: &str) -> (Duration, Option<SandboxDenial>) {
    timed_text(&unit.repeat(MIB / unit.len()))
}

fn timed_text(stderr: &str) -> (Duration, Option<SandboxDenial>) {
    let out = CommandOutput { exit_code: Some(1), signal: None, stdout: "", stderr, aggregated: stderr, cwd: None };
    let ctx = ctx();
    let t = thread_cpu();
    let with = classify_sandbox_denial(Bwrap, &out, Some(&ctx));
    let _ = classify_sandbox_denial(Bwrap, &out, None);
    let _ = is_likely_sandbox_denied(Bwrap, &out);
    (thread_cpu() - t, with)
}

#[test]
fn a_long_line_of_keywords_classifies_quickly() {
    for unit in [
        "xsandbox", "'sandbox'", "/sandbox", "xseccomp", "xlandlock", "sandbox_init/",
        "permission denied: \u{2018}", "no such file or directory: \u{2018}", "enoent: \u{2018}",
        "operation not permitted: \u{2018}", "read-only file system, \u{2018}", "Permission denied/",
    ] {
        let (took, _) = timed(unit);
        assert!(took < BOUND, "{unit:?} x 256 KiB took {took:?}");
    }
    // `name: message` looks past the colon: once per occurrence, never to the line's trailing blanks.
    let (took, _) = timed_text(&format!("{}{}", "(sandbox:".repeat(MIB / 18), " ".repeat(MIB / 2)));
    assert!(took < BOUND, "headings before blanks took {took:?}");
}

#[test]
fn keywords_in_one_long_token_still_classify_as_before() {
    // The verdicts of the long lines are what the short forms give.
    assert!(timed("xsandbox").1.is_none());
    assert!(timed("'sandbox'").1.is_none());
    let (_, d) = timed("sandbox: denied ");
    assert_eq!(d.map(|d| d.reason.as_str()), Some("policy_denied"));
}


/// A run's resolved policy carries hundreds of read-only paths (every protected name at each
/// root's top, present or a placeholder: ~550 in an ordinary workspace-write run), and each line
/// naming a path inside a writable root was compared with every one of them (two `PathBuf`s made
/// per comparison): a command printing `a/: Permission denied` lines, 1 MiB on each stream (the
/// default `maxBuffer`), cost the host 19 s of CPU after a 134 ms run, its result a minute late
/// (found by an attacker's review, cross31). The cost must not grow with the policy's paths.
#[test]
fn a_policy_of_many_paths_costs_no_more_per_line() {
    let many = |n: usize, prefix: &str| (0..n).map(|i| format!("/ws/{prefix}-{i}")).collect::<Vec<_>>();
    let ctx = DenialContext::from_json(&json!({
        "mode": "workspace-write", "cwd": "/ws", "network": false,
        "writableRoots": [{ "root": "/ws", "readOnly": many(2_000, ".protected"), "missingReadOnly": many(2_000, ".absent").iter().map(|p| json!({ "path": p, "kind": "dir" })).collect::<Vec<_>>() }],
        "denyRead": many(2_000, "secret"), "readOnlyPaths": many(2_000, "kept"),
    }))
    .unwrap();
    // And not with a path's depth: one 32 KiB path a line (looking each ancestor up hashed it whole).
    let deep = format!("cannot open '/ws/{}': Permission denied\n", "a/".repeat(16_000));
    for unit in [deep.as_str(), "a/: Permission denied\n", "sh: 1: cannot create a/b: Is a directory\n", "ls: cannot access 'a/b': No such file or directory\n", "error: could not write index\n", "error: cannot rehash: a/b isn't writable\n", "Error: ENOENT: no such file or directory, mkdir 'a/b'\n"] {
        let text = unit.repeat(MIB / unit.len());
        let out = CommandOutput { exit_code: Some(1), signal: None, stdout: &text, stderr: &text, aggregated: &text, cwd: None };
        let t = thread_cpu();
        let _ = classify_sandbox_denial(Bwrap, &out, Some(&ctx.clone().with_cwd("/ws")));
        let took = thread_cpu() - t;
        assert!(took < BOUND, "{unit:?} x 256 KiB against 8,000 paths took {took:?}");
    }
}
