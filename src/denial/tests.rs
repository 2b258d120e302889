//! Codex's test vectors (codex.md §2.3) and the precision rules of `classify_sandbox_denial`.

use serde_json::json;

use super::*;
use crate::platform::SandboxType::{Bwrap, Seatbelt};
use crate::policy::{ResolvedPolicy, TmpMode, UnixSockets, WritableRoot};

fn out<'a>(exit: i32, stdout: &'a str, stderr: &'a str, aggregated: &'a str) -> CommandOutput<'a> {
    CommandOutput {
        exit_code: Some(exit),
        signal: None,
        stdout,
        stderr,
        aggregated,
        cwd: None,
    }
}

fn err(exit: i32, stderr: &str) -> CommandOutput<'_> {
    out(exit, "", stderr, stderr)
}

fn classify(sandbox: SandboxType, o: &CommandOutput) -> Option<SandboxDenial> {
    classify_sandbox_denial(sandbox, o, None)
}

fn ws_ctx() -> DenialContext {
    DenialContext::from_json(&json!({
        "mode": "workspace-write", "writableRoots": ["/ws"], "readOnlyPaths": ["/ws/locked"],
        "denyRead": ["/ws/secret", "/home/u/.ssh"], "network": false, "tmp": "read-only", "cwd": "/ws"
    }))
    .unwrap()
}

fn with_ctx(o: &CommandOutput, ctx: &DenialContext) -> Option<SandboxDenial> {
    classify_sandbox_denial(Bwrap, o, Some(ctx))
}

fn reason(d: &Option<SandboxDenial>) -> Option<(&'static str, &'static str, Option<&str>)> {
    d.as_ref()
        .map(|d| (d.reason.as_str(), d.kind.as_str(), d.path.as_deref()))
}

// ---- core/src/exec_tests.rs (is_likely_sandbox_denied) ----

const NET_DECISION_DENY: &str = r#"CODEX_NETWORK_POLICY_DECISION {"decision":"ask","reason":"not_allowed","source":"decider","protocol":"http","host":"google.com","port":80}"#;
const NET_DECISION_ASK: &str = r#"CODEX_NETWORK_POLICY_DECISION {"decision":"ask","source":"decider","protocol":"http","host":"google.com","port":80}"#;

#[test]
fn sandbox_detection_requires_keywords() {
    // #1
    assert!(!is_likely_sandbox_denied(Bwrap, &out(1, "", "", "")));
    assert!(classify(Bwrap, &out(1, "", "", "")).is_none());
}

#[test]
fn sandbox_detection_identifies_keyword_in_stderr() {
    // #2
    assert!(is_likely_sandbox_denied(
        Bwrap,
        &out(1, "", "Operation not permitted", "")
    ));
    assert!(classify(Bwrap, &out(1, "", "Operation not permitted", "")).is_some());
}

#[test]
fn sandbox_detection_respects_quick_reject_exit_codes() {
    // #3
    assert!(!is_likely_sandbox_denied(
        Bwrap,
        &out(127, "", "command not found", "")
    ));
    assert!(classify(Bwrap, &out(127, "", "command not found", "")).is_none());
}

#[test]
fn sandbox_detection_ignores_non_sandbox_mode() {
    // #4
    assert!(!is_likely_sandbox_denied(
        SandboxType::None,
        &out(1, "", "Operation not permitted", "")
    ));
    assert!(classify(
        SandboxType::None,
        &out(1, "", "Operation not permitted", "")
    )
    .is_none());
}

#[test]
fn sandbox_detection_ignores_network_policy_text_in_non_sandbox_mode() {
    // #5
    assert!(!is_likely_sandbox_denied(
        SandboxType::None,
        &out(0, "", "", NET_DECISION_DENY)
    ));
    assert!(classify(SandboxType::None, &out(0, "", "", NET_DECISION_DENY)).is_none());
}

#[test]
fn sandbox_detection_uses_aggregated_output() {
    // #6
    let o = out(
        101,
        "",
        "",
        "cargo failed: Read-only file system when writing target",
    );
    assert!(is_likely_sandbox_denied(Seatbelt, &o));
    assert!(classify(Seatbelt, &o).is_some());
}

#[test]
fn sandbox_detection_ignores_network_policy_text_with_zero_exit_code() {
    // #7
    assert!(!is_likely_sandbox_denied(
        Bwrap,
        &out(0, "", "", NET_DECISION_ASK)
    ));
    assert!(classify(Bwrap, &out(0, "", "", NET_DECISION_ASK)).is_none());
}

#[test]
fn sandbox_detection_flags_sigsys_exit_code() {
    // #8
    assert!(is_likely_sandbox_denied(Bwrap, &out(159, "", "", "")));
    assert!(
        !is_likely_sandbox_denied(Seatbelt, &out(159, "", "", "")),
        "Seatbelt is never checked for SIGSYS"
    );
}

// ---- sandboxing/src/violation_tests.rs (classify_filesystem_sandbox_violation) ----

#[test]
fn classifies_each_keyword_as_denied() {
    // #9a–g
    for (kw, want) in [
        (
            "operation not permitted",
            DenialReason::OperationNotPermitted,
        ),
        ("permission denied", DenialReason::PermissionDenied),
        ("read-only file system", DenialReason::ReadOnlyFileSystem),
        ("seccomp", DenialReason::PolicyDenied),
        ("sandbox", DenialReason::PolicyDenied),
        ("landlock", DenialReason::PolicyDenied),
        ("failed to write file", DenialReason::FailedToWriteFile),
    ] {
        let o = out(1, "", kw, "");
        assert!(is_likely_sandbox_denied(Bwrap, &o), "{kw}");
        assert_eq!(classify(Bwrap, &o).map(|d| d.reason), Some(want), "{kw}");
    }
}

#[test]
fn classifies_policy_keywords_as_policy_denied() {
    // #10a–c
    for kw in ["seccomp", "sandbox", "landlock"] {
        let d = classify(Bwrap, &out(1, "", kw, "")).unwrap();
        assert_eq!(d.reason, DenialReason::PolicyDenied);
        assert_eq!(d.path, None);
        assert_eq!(d.snippet, kw);
    }
}

#[test]
fn quick_reject_and_keyword_precedence() {
    // #11a–d
    assert!(classify(Bwrap, &out(127, "", "command not found", "")).is_none());
    let d = classify(Bwrap, &out(127, "", "Permission denied", ""))
        .expect("keyword beats quick reject");
    assert_eq!(d.reason, DenialReason::PermissionDenied);
    assert!(is_likely_sandbox_denied(
        Bwrap,
        &out(127, "", "Permission denied", "")
    ));
    assert!(classify(Bwrap, &out(0, "", "Operation not permitted", "")).is_none());
    assert!(classify(
        SandboxType::None,
        &out(1, "", "Operation not permitted", "")
    )
    .is_none());
}

#[test]
fn classifies_seatbelt_operation_not_permitted_with_path() {
    // #12
    let stderr = "bash: /private/tmp/denied: Operation not permitted";
    let d = classify(Seatbelt, &out(1, "", stderr, "")).unwrap();
    assert_eq!(d.reason, DenialReason::OperationNotPermitted);
    assert_eq!(d.kind, DenialKind::Filesystem);
    assert_eq!(d.path.as_deref(), Some("/private/tmp/denied"));
    assert_eq!(d.snippet, stderr);
}

#[test]
fn extracts_path_after_unicode_case_expansion() {
    // #13: `İ` grows when lowercased; offsets must come from the original text.
    let stderr = "bash: /private/tmp/İ-denied: Operation not permitted";
    let d = classify(Seatbelt, &out(1, "", stderr, "")).unwrap();
    assert_eq!(d.reason, DenialReason::OperationNotPermitted);
    assert_eq!(d.path.as_deref(), Some("/private/tmp/İ-denied"));
    assert_eq!(d.snippet, stderr);
}

#[test]
fn classifies_aggregated_read_only_file_system() {
    // #14
    let agg = "cargo failed: Read-only file system when writing target";
    let d = classify(Seatbelt, &out(101, "", "", agg)).unwrap();
    assert_eq!(d.reason, DenialReason::ReadOnlyFileSystem);
    assert_eq!(d.path, None);
    assert_eq!(d.snippet, agg);
}

#[test]
fn classifies_sigsys_exit_code() {
    // #15a (bubblewrap) and #15b (legacy landlock: also our bwrap)
    let d = classify(Bwrap, &out(159, "", "", "")).unwrap();
    assert_eq!(
        (d.reason, d.kind, d.path, d.snippet.as_str()),
        (DenialReason::Sigsys, DenialKind::Process, None, "")
    );
    let by_signal = CommandOutput {
        exit_code: None,
        signal: Some("SIGSYS"),
        ..Default::default()
    };
    assert!(is_likely_sandbox_denied(Bwrap, &by_signal));
    assert_eq!(
        classify(Bwrap, &by_signal).unwrap().reason,
        DenialReason::Sigsys
    );
    let by_other_signal = CommandOutput {
        exit_code: None,
        signal: Some("SIGKILL"),
        ..Default::default()
    };
    assert!(!is_likely_sandbox_denied(Bwrap, &by_other_signal));
    assert!(classify(Bwrap, &by_other_signal).is_none());
    assert!(classify(Seatbelt, &by_signal).is_none());
}

#[test]
fn ignores_unsandboxed_output() {
    // #16
    assert!(classify(
        SandboxType::None,
        &out(1, "", "Operation not permitted", "")
    )
    .is_none());
}

// ---- ordering, snippet, serialization ----

#[test]
fn sections_then_keywords_in_codex_order() {
    // stderr is looked at before stdout, whatever the keyword order.
    let d = classify(
        Bwrap,
        &out(
            1,
            "x: Operation not permitted",
            "y: /a: Read-only file system",
            "",
        ),
    )
    .unwrap();
    assert_eq!(d.reason, DenialReason::ReadOnlyFileSystem);
    assert_eq!(d.path.as_deref(), Some("/a"));
    // Within a section, keywords in list order.
    let d = classify(
        Bwrap,
        &err(
            1,
            "a: /r: Read-only file system\nb: /o: Operation not permitted",
        ),
    )
    .unwrap();
    assert_eq!(
        (d.reason, d.path.as_deref()),
        (DenialReason::OperationNotPermitted, Some("/o"))
    );
}

#[test]
fn snippet_is_at_most_512_chars_and_holds_the_match() {
    let long = format!(
        "{}\ntouch: cannot touch '/x': Read-only file system\n{}",
        "é".repeat(2000),
        "z".repeat(100)
    );
    let d = classify(Bwrap, &err(1, &long)).unwrap();
    assert!(d.snippet.chars().count() <= 512);
    assert!(
        d.snippet.starts_with("touch: cannot touch '/x'"),
        "{}",
        d.snippet
    );
    assert_eq!(d.path.as_deref(), Some("/x"));
}

#[test]
fn serializes_camel_case_snake_reasons() {
    let d = classify(Bwrap, &err(1, "bash: /x: Read-only file system")).unwrap();
    let v = serde_json::to_value(&d).unwrap();
    assert_eq!(
        v,
        json!({"reason": "read_only_file_system", "kind": "filesystem", "path": "/x", "snippet": "bash: /x: Read-only file system", "host": null})
    );
    for (r, s) in [
        (
            DenialReason::OperationNotPermitted,
            "operation_not_permitted",
        ),
        (DenialReason::PermissionDenied, "permission_denied"),
        (DenialReason::ReadOnlyFileSystem, "read_only_file_system"),
        (DenialReason::NetworkUnreachable, "network_unreachable"),
        (DenialReason::PolicyDenied, "policy_denied"),
        (DenialReason::Sigsys, "sigsys"),
        (DenialReason::FailedToWriteFile, "failed_to_write_file"),
    ] {
        assert_eq!(serde_json::to_value(r).unwrap(), json!(s));
        assert_eq!(r.as_str(), s);
    }
    assert_eq!(
        serde_json::to_value(DenialKind::Process).unwrap(),
        json!("process")
    );
}

// ---- path formats through the classifier ----

#[test]
fn path_formats() {
    for (stderr, want, path) in [
        (
            "PermissionError: [Errno 13] Permission denied: '/etc/x'",
            "permission_denied",
            "/etc/x",
        ),
        (
            "OSError: [Errno 30] Read-only file system: '/usr/x'",
            "read_only_file_system",
            "/usr/x",
        ),
        (
            "Error: EACCES: permission denied, open '/etc/y'",
            "permission_denied",
            "/etc/y",
        ),
        (
            "Error: EROFS: read-only file system, open '/usr/y'",
            "read_only_file_system",
            "/usr/y",
        ),
        (
            "Error: EPERM: operation not permitted, open '/usr/z'",
            "operation_not_permitted",
            "/usr/z",
        ),
        (
            "touch: cannot touch '/opt/t': Read-only file system",
            "read_only_file_system",
            "/opt/t",
        ),
        (
            "mkdir: cannot create directory '/opt/d': Read-only file system",
            "read_only_file_system",
            "/opt/d",
        ),
        (
            "cp: cannot create regular file '/opt/f': Permission denied",
            "permission_denied",
            "/opt/f",
        ),
        (
            "sh: 1: cannot create /tmp/x: Read-only file system",
            "read_only_file_system",
            "/tmp/x",
        ),
    ] {
        let d = classify(Bwrap, &err(1, stderr));
        assert_eq!(
            reason(&d),
            Some((want, "filesystem", Some(path))),
            "{stderr}"
        );
    }
}

#[test]
fn relative_paths_are_resolved_against_the_cwd_with_a_context() {
    let ctx = ws_ctx();
    let d = with_ctx(&err(1, "bash: .git/config: Read-only file system"), &ctx);
    assert_eq!(
        reason(&d),
        Some((
            "read_only_file_system",
            "filesystem",
            Some("/ws/.git/config")
        ))
    );
    let d = classify(Bwrap, &err(1, "bash: .git/config: Read-only file system"));
    assert_eq!(
        reason(&d),
        Some(("read_only_file_system", "filesystem", Some(".git/config")))
    );
}

// ---- precision rules (with a context) ----

#[test]
fn permission_denied_inside_a_writable_root_is_ordinary() {
    let ctx = ws_ctx();
    let o = err(126, "bash: line 1: ./noexec.sh: Permission denied");
    assert!(with_ctx(&o, &ctx).is_none());
    assert!(
        classify(Bwrap, &o).is_some(),
        "without a context: Codex's verdict"
    );
    let o = err(
        1,
        "PermissionError: [Errno 13] Permission denied: '/ws/data/locked.txt'",
    );
    assert!(with_ctx(&o, &ctx).is_none());
    // Outside the writable roots, or under a read-only carve-out: still a denial.
    let o = err(1, "cat: /etc/shadow-ish: Permission denied");
    assert_eq!(
        reason(&with_ctx(&o, &ctx)),
        Some(("permission_denied", "filesystem", Some("/etc/shadow-ish")))
    );
    let o = err(1, "bash: /ws/locked/f: Permission denied");
    assert_eq!(
        reason(&with_ctx(&o, &ctx)),
        Some(("permission_denied", "filesystem", Some("/ws/locked/f")))
    );
    let o = err(1, "bash: /ws/.git/hooks/x: Permission denied");
    assert!(with_ctx(&o, &ctx).is_some(), ".git is a carve-out");
    // No path: keep Codex's verdict.
    assert!(with_ctx(&err(1, "Permission denied"), &ctx).is_some());
    // ssh authentication failures are not sandbox denials.
    assert!(with_ctx(
        &err(255, "git@github.com: Permission denied (publickey)."),
        &ctx
    )
    .is_none());
    // A later, real denial in the same output is still found.
    let o = err(
        1,
        "bash: ./noexec.sh: Permission denied\ntouch: cannot touch '/etc/x': Read-only file system",
    );
    assert_eq!(
        reason(&with_ctx(&o, &ctx)),
        Some(("read_only_file_system", "filesystem", Some("/etc/x")))
    );
}

#[test]
fn read_only_file_system_inside_a_writable_root_is_still_a_denial() {
    let ctx = ws_ctx();
    let o = err(
        1,
        "touch: cannot touch '/ws/locked/a': Read-only file system",
    );
    assert_eq!(
        reason(&with_ctx(&o, &ctx)),
        Some(("read_only_file_system", "filesystem", Some("/ws/locked/a")))
    );
    let o = err(1, "touch: cannot touch 'plain.txt': Read-only file system");
    assert_eq!(
        reason(&with_ctx(&o, &ctx)),
        Some(("read_only_file_system", "filesystem", Some("/ws/plain.txt")))
    );
}

#[test]
fn sandbox_inside_a_file_name_is_not_a_denial_with_a_context() {
    let ctx = ws_ctx();
    for (exit, stderr) in [
        (1, "cat: ./sandbox/test.txt: No such file or directory"),
        (
            101,
            "error[E0425]: cannot find value `x` in this scope\n --> src/sandbox.rs:12:5",
        ),
        (1, "src/sandbox.rs:12: unused variable"),
        (1, "sandbox.txt:1:hello\nnotes.md:3:the sandbox blocked it"),
        (1, "notes/sandbox-plan.md: error opening"),
        (1, "ls: cannot access 'sandbox': No such file or directory"),
        (
            1,
            "thread 'main' panicked at src/main.rs:3:5: my_sandbox failed",
        ),
        (1, "test sandbox::tests::spawn ... FAILED"),
        (1, "the word seccomp appears in this log line"),
        (
            1,
            "Traceback:\n  File \"/ws/landlock/run.py\", line 3\nValueError: bad",
        ),
    ] {
        let o = err(exit, stderr);
        assert!(
            is_likely_sandbox_denied(Bwrap, &o),
            "Codex flags {stderr:?}"
        );
        assert_eq!(with_ctx(&o, &ctx), None, "{stderr:?}");
    }
}

#[test]
fn sandbox_words_in_an_error_context_are_denials_with_a_context() {
    let ctx = ws_ctx();
    for (stderr, kind) in [
        (
            "sandbox-exec: sandbox_apply: Operation not permitted",
            "filesystem",
        ),
        ("write denied by sandbox", "filesystem"),
        (
            "Sandbox: touch(123) deny(1) file-write-create /x",
            "filesystem",
        ),
        ("blocked by seccomp filter", "process"),
        ("landlock: access denied", "filesystem"),
        (
            "Sandbox: curl(9) deny(1) network-outbound 1.1.1.1:443",
            "network",
        ),
    ] {
        let d = with_ctx(&err(1, stderr), &ctx);
        assert!(d.is_some(), "{stderr:?}");
        assert_eq!(d.unwrap().kind.as_str(), kind, "{stderr:?}");
    }
}

#[test]
fn network_failures_are_denials_only_with_the_network_off() {
    let off = ws_ctx();
    let on = DenialContext {
        network: true,
        ..ws_ctx()
    };
    for stderr in [
        "OSError: [Errno 101] Network is unreachable",
        "socket.gaierror: [Errno -3] Temporary failure in name resolution",
        "curl: (6) Could not resolve host: example.com",
        "[cause]: Error: getaddrinfo EAI_AGAIN example.com",
        "Error: getaddrinfo ENOTFOUND example.com",
        "connect ENETUNREACH 1.1.1.1:80 - Local (0.0.0.0:0)",
    ] {
        let o = err(1, stderr);
        assert_eq!(
            reason(&classify(Bwrap, &o)),
            Some(("network_unreachable", "network", None)),
            "{stderr}"
        );
        assert_eq!(
            reason(&with_ctx(&o, &off)),
            Some(("network_unreachable", "network", None)),
            "{stderr}"
        );
        assert_eq!(with_ctx(&o, &on), None, "{stderr}");
        assert_eq!(classify(SandboxType::None, &o), None);
        assert!(
            !is_likely_sandbox_denied(Bwrap, &o),
            "not one of Codex's keywords"
        );
    }
    // curl to an IP with no network: only a denial when a context says the network was off.
    let o = err(
        7,
        "curl: (7) Failed to connect to 1.1.1.1 port 80 after 0 ms: Couldn't connect to server",
    );
    assert_eq!(classify(Bwrap, &o), None);
    assert_eq!(
        reason(&with_ctx(&o, &off)),
        Some(("network_unreachable", "network", None))
    );
    assert_eq!(with_ctx(&o, &on), None);
    // Connection refused (issue 22): with the network off the host's loopback is out of reach, so
    // it is the policy's doing; with the network on it is ordinary.
    let refused = err(1, "ConnectionRefusedError: [Errno 111] Connection refused");
    assert_eq!(
        reason(&with_ctx(&refused, &off)),
        Some(("network_unreachable", "network", None))
    );
    assert_eq!(with_ctx(&refused, &on), None);
    assert_eq!(classify(Bwrap, &refused), None);
}

#[test]
fn operation_not_permitted_on_a_socket_is_a_network_denial() {
    let tb = "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n    s.connect('/run/docker.sock')\nPermissionError: [Errno 1] Operation not permitted";
    let d = classify(Bwrap, &err(1, tb)).unwrap();
    assert_eq!(
        (d.reason.as_str(), d.kind.as_str()),
        ("operation_not_permitted", "network")
    );
    let d = classify(Bwrap, &err(1, "connect EPERM /tmp/x.sock")).unwrap();
    assert_eq!(
        (d.reason.as_str(), d.kind.as_str(), d.path.as_deref()),
        ("operation_not_permitted", "network", Some("/tmp/x.sock"))
    );
    let d = classify(Bwrap, &err(1, "socket: Operation not permitted")).unwrap();
    assert_eq!(d.kind, DenialKind::Network);
    let d = classify(
        Bwrap,
        &err(
            1,
            "chown: changing ownership of '/ws/a': Operation not permitted",
        ),
    )
    .unwrap();
    assert_eq!(d.kind, DenialKind::Filesystem);
}

#[test]
fn deny_read_paths_reading_as_missing_are_policy_denials() {
    let ctx = ws_ctx();
    for (exit, stderr, path) in [
        (
            1,
            "cat: /ws/secret/key: No such file or directory",
            "/ws/secret/key",
        ),
        (
            2,
            "ls: cannot access 'secret/key': No such file or directory",
            "/ws/secret/key",
        ),
        (
            1,
            "FileNotFoundError: [Errno 2] No such file or directory: '/home/u/.ssh/id_rsa'",
            "/home/u/.ssh/id_rsa",
        ),
        (
            1,
            "Error: ENOENT: no such file or directory, open '/ws/secret/a/../b'",
            "/ws/secret/b",
        ),
        (
            1,
            "cat: /ws/secret: No such file or directory",
            "/ws/secret",
        ),
    ] {
        let d = with_ctx(&err(exit, stderr), &ctx);
        assert_eq!(
            reason(&d),
            Some(("policy_denied", "filesystem", Some(path))),
            "{stderr}"
        );
    }
    // Other missing files are ordinary; without a context there is nothing to go on.
    assert_eq!(
        with_ctx(
            &err(1, "cat: /ws/secretive: No such file or directory"),
            &ctx
        ),
        None
    );
    assert_eq!(
        with_ctx(&err(1, "cat: missing.txt: No such file or directory"), &ctx),
        None
    );
    assert_eq!(
        classify(
            Bwrap,
            &err(1, "cat: /ws/secret/key: No such file or directory")
        ),
        None
    );
}

#[test]
fn ordinary_failures_are_not_denials() {
    let ctx = ws_ctx();
    for (exit, stderr) in [
        (1, ""),
        (2, "grep: nothing.txt: No such file or directory"),
        (127, "bash: line 1: nosuchcmd: command not found"),
        (
            1,
            "Traceback (most recent call last):\nZeroDivisionError: division by zero",
        ),
    ] {
        let o = err(exit, stderr);
        assert_eq!(classify(Bwrap, &o), None, "{stderr}");
        assert_eq!(with_ctx(&o, &ctx), None, "{stderr}");
    }
    // danger-full-access: nothing was restricted.
    let full = DenialContext::from_json(&json!("danger-full-access")).unwrap();
    assert_eq!(
        with_ctx(&err(1, "bash: /x: Read-only file system"), &full),
        None
    );
}

#[test]
fn sigsys_with_a_shell_message() {
    let d = with_ctx(
        &err(
            159,
            "bash: line 1:    12 Bad system call         mkdir /ws/x",
        ),
        &ws_ctx(),
    )
    .unwrap();
    assert_eq!(
        (d.reason, d.kind),
        (DenialReason::Sigsys, DenialKind::Process)
    );
    assert!(d.snippet.contains("Bad system call"));
}

// ---- DenialContext ----

#[test]
fn context_from_resolved_policy() {
    let p = ResolvedPolicy {
        mode: SandboxMode::WorkspaceWrite,
        writable_roots: vec![WritableRoot {
            root: "/ws".into(),
            read_only: vec!["/ws/.git".into()],
            missing_read_only: vec![crate::policy::MissingReadOnly {
                path: "/ws/.env".into(),
                kind: crate::policy::PlaceholderKind::File,
            }],
            id: None,
        }],
        deny_read: vec!["/ws/secret".into()],
        read_only_paths: vec!["/etc/x".into()],
        network: true,
        network_proxy: None,
        unix_sockets: UnixSockets::All,
        tmp: TmpMode::Writable,
        protect_git: true,
        tool_caches: crate::tool_caches::ToolCaches::none(),
        protected_names: vec![],
        review: None,
        planted: Default::default(),
        landlock_writable_dirs: None,
    };
    let ctx = DenialContext::from(&p);
    assert_eq!(ctx.writable_roots, vec![std::path::PathBuf::from("/ws")]);
    assert!(ctx.is_writable("/ws/a".as_ref()));
    assert!(!ctx.is_writable("/ws/.git/config".as_ref()));
    assert!(!ctx.is_writable("/ws/.env".as_ref()));
    assert!(!ctx.is_writable("/ws/secret/a".as_ref()));
    assert!(!ctx.is_writable("/etc/x".as_ref()));
    assert!(ctx.network);
    assert_eq!(ctx.cwd, None);
}

/// Issue 30: the Landlock mode grants a root split around its `.git` entry by entry, so a new entry
/// at its top is refused although the root is writable: a denial, judged by the grants.
#[test]
fn landlock_grants_decide_what_was_writable() {
    let policy = json!({
        "mode": "workspace-write", "writableRoots": [{"root": "/ws", "readOnly": ["/ws/.git"], "missingReadOnly": []}],
        "landlockWritableDirs": ["/ws/src", "/tmp/sandspawn-run-1"]
    });
    let ctx = DenialContext::from_json(&policy).unwrap().with_cwd("/ws");
    assert!(ctx.is_writable("/ws/src/new".as_ref()));
    assert!(!ctx.is_writable("/ws/newtop".as_ref()), "the split top takes no new entries");
    assert!(!ctx.is_writable("/ws/src".as_ref()), "nor loses one");
    assert!(!ctx.is_writable("/ws/.git/config".as_ref()));
    assert!(!ctx.is_writable("/tmp/x".as_ref()), "/tmp is not a root of this policy");
    let out = CommandOutput { exit_code: Some(1), signal: None, stdout: "", stderr: "touch: cannot touch 'newtop': Permission denied\n", aggregated: "", cwd: None };
    let d = classify_sandbox_denial(SandboxType::Landlock, &out, Some(&ctx)).expect("a denial");
    assert_eq!((d.reason, d.path.as_deref()), (DenialReason::PermissionDenied, Some("/ws/newtop")));
    for (stderr, path) in [
        ("PermissionError: [Errno 13] Permission denied: '/ws/venv'\n", "/ws/venv"),
        ("Error: EACCES: permission denied, open '/ws/package-lock.json'\n", "/ws/package-lock.json"),
        ("mkdir: cannot create directory '/tmp/x': Permission denied\n", "/tmp/x"),
        ("rm: cannot remove 'src': Permission denied\n", "/ws/src"),
    ] {
        let o = CommandOutput { stderr, ..out };
        let d = classify_sandbox_denial(SandboxType::Landlock, &o, Some(&ctx)).unwrap_or_else(|| panic!("{stderr}"));
        assert_eq!(d.path.as_deref(), Some(path), "{stderr}");
    }
    let ordinary = CommandOutput { stderr: "touch: cannot touch 'src/x': Permission denied\n", ..out };
    assert_eq!(classify_sandbox_denial(SandboxType::Landlock, &ordinary, Some(&ctx)), None, "inside a granted directory: ordinary");
    // The same from the resolved policy the runner sets.
    let t = tempfile::tempdir().unwrap();
    let mut p = crate::plan::test_support::policy(json!({"mode": "workspace-write"}), t.path(), crate::platform::Platform::Linux);
    p.landlock_writable_dirs = Some(vec!["/ws/src".into()]);
    let ctx = DenialContext::from(&p);
    assert!(ctx.is_writable("/ws/src/a".as_ref()) && !ctx.is_writable("/ws/a".as_ref()));
    assert_eq!(serde_json::to_value(&p).unwrap()["landlockWritableDirs"], json!(["/ws/src"]));
}

#[test]
fn context_from_json_is_lenient() {
    let ctx = DenialContext::from_json(&json!("read-only")).unwrap();
    assert_eq!(
        (ctx.mode, ctx.network, ctx.writable_roots.len()),
        (SandboxMode::ReadOnly, false, 0)
    );
    assert!(DenialContext::from_json(&json!("bogus")).is_err());
    assert!(DenialContext::from_json(&json!(42)).is_err());
    assert!(DenialContext::from_json(&json!({"mode": "nope"})).is_err());

    let ctx = DenialContext::from_json(&json!({
        "mode": "workspace-write", "writableRoots": ["/a", "relative", 7, "/b/../c"], "denyRead": ["rel", "/s"],
        "network": "yes", "unknown": true
    }))
    .unwrap();
    assert_eq!(
        ctx.writable_roots,
        vec!["/a".into(), std::path::PathBuf::from("/c"), "/tmp".into()]
    );
    assert_eq!(ctx.deny_read, vec![std::path::PathBuf::from("/s")]);
    assert!(!ctx.network);
    assert!(
        !ctx.is_writable("/a/.git/HEAD".as_ref()),
        "protectGit defaults to true"
    );
    assert!(
        ctx.is_writable("/tmp/x".as_ref()),
        "tmp defaults to writable in workspace-write"
    );

    let ctx = DenialContext::from_json(
        &json!({"mode": "workspace-write", "protectGit": false, "tmp": "read-only", "cwd": "/w"}),
    )
    .unwrap();
    assert!(ctx.is_writable("/w/.git/HEAD".as_ref()));
    assert!(!ctx.is_writable("/tmp/x".as_ref()));
    assert_eq!(ctx.cwd.as_deref(), Some("/w".as_ref()));

    // Spawn options holding `sandbox` and `cwd`.
    let ctx =
        DenialContext::from_json(&json!({"sandbox": "workspace-write", "cwd": "/proj"})).unwrap();
    assert!(ctx.is_writable("/proj/src/a.rs".as_ref()));
    assert!(!ctx.is_writable("/proj/.git/x".as_ref()));

    // A serialized ResolvedPolicy.
    let ctx = DenialContext::from_json(&json!({
        "mode": "workspace-write", "writableRoots": [{"root": "/r", "readOnly": ["/r/.git"], "missingReadOnly": [{"path": "/r/.env", "kind": "file"}]}],
        "denyRead": [], "readOnlyPaths": [], "network": true, "tmp": "read-only", "protectGit": true
    }))
    .unwrap();
    assert!(ctx.is_writable("/r/x".as_ref()));
    assert!(!ctx.is_writable("/r/.env".as_ref()));
    assert!(ctx.network);
}

#[test]
fn writing_a_file_over_a_placeholder_is_a_denial_with_the_policy() {
    let ctx = DenialContext { placeholders: vec!["/ws/.envrc".into(), "/ws/sub/.mcp.json".into()], ..ws_ctx() };
    for (stderr, path) in [
        ("sh: 1: cannot create .envrc: Is a directory", "/ws/.envrc"),
        ("bash: line 1: .envrc: Is a directory", "/ws/.envrc"),
        ("IsADirectoryError: [Errno 21] Is a directory: 'sub/.mcp.json'", "/ws/sub/.mcp.json"),
        ("Error: EISDIR: illegal operation on a directory, open '/ws/.envrc'", "/ws/.envrc"),
    ] {
        let o = err(1, stderr);
        assert_eq!(reason(&with_ctx(&o, &ctx)), Some(("read_only_file_system", "filesystem", Some(path))), "{stderr}");
    }
    // Not a placeholder, or no policy that says so: the same words are the command's own mistake.
    for stderr in ["sh: 1: cannot create src: Is a directory", "cat: /ws: Is a directory"] {
        assert_eq!(reason(&with_ctx(&err(1, stderr), &ctx)), None, "{stderr}");
    }
    assert_eq!(reason(&with_ctx(&err(1, "sh: 1: cannot create .envrc: Is a directory"), &ws_ctx())), None);
}

#[test]
fn a_bare_enotfound_is_a_network_denial_with_the_network_off_or_the_allow_list() {
    // What a program that prints only the error code says (`console.error(err.code)` after a
    // failed `dns.lookup`): with no resolver inside (network off, or the allow-list, whose proxy a
    // tool that ignores the proxy variables never reaches), every lookup is ENOTFOUND at once.
    let o = err(1, "ENOTFOUND\n");
    assert_eq!(reason(&with_ctx(&o, &ws_ctx())), Some(("network_unreachable", "network", None)));
    let allow_list = DenialContext::from_json(&json!({"mode": "workspace-write", "network": {"allowedDomains": ["registry.npmjs.org"]}})).unwrap();
    assert_eq!(reason(&with_ctx(&o, &allow_list)), Some(("network_unreachable", "network", None)));
    assert_eq!(reason(&with_ctx(&err(1, "lookup failed: ENOTFOUND registry.example.invalid\n"), &ws_ctx())), Some(("network_unreachable", "network", None)));
    // With the network on it is the name's own failure; a word that merely contains it is not it.
    let net_on = DenialContext::from_json(&json!({"mode": "workspace-write", "network": true})).unwrap();
    assert_eq!(with_ctx(&o, &net_on), None);
    assert_eq!(with_ctx(&err(1, "see src/ENOTFOUNDS.md\nmake: *** [all] Error 1\n"), &ws_ctx()), None);
    assert_eq!(with_ctx(&err(1, "ERR_ENOTFOUND_HANDLER is not defined\n"), &ws_ctx()), None);
}

#[test]
fn a_file_named_like_a_denial_in_a_listing_is_not_one() {
    // `ls` next to an unrelated failure: the keyword is part of a file name (an extension follows,
    // or it is a path component), not a message.
    let listing = "build.log\npermission denied.log\nread-only file system/\nnotes/operation not permitted.txt\n";
    assert_eq!(with_ctx(&out(1, listing, "", listing), &ws_ctx()), None);
    assert_eq!(classify(Bwrap, &out(1, listing, "", listing)), None, "without a policy too");
    // The messages themselves, a trailing full stop included, still are denials.
    assert_eq!(reason(&with_ctx(&err(1, "cp: cannot create regular file '/etc/x': Permission denied.\n"), &ws_ctx())), Some(("permission_denied", "filesystem", Some("/etc/x"))));
    assert_eq!(reason(&with_ctx(&err(1, "touch: cannot touch '/usr/x': Read-only file system\n"), &ws_ctx())), Some(("read_only_file_system", "filesystem", Some("/usr/x"))));
    assert_eq!(reason(&classify(Bwrap, &err(1, "bash: /etc/x: Operation not permitted\n"))), Some(("operation_not_permitted", "filesystem", Some("/etc/x"))));
}
