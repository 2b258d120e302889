//! Parsing and validating the `command` and `options` arguments of `spawnSandboxed`,
//! `startSandboxed` and `buildSandboxCommand`. Everything arrives as JSON-like values from the
//! binding, so every type check, range check and "unknown option" report happens here, with an
//! `ERR_SANDBOX_INVALID_OPTIONS` message that names the option.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::{Map, Value};

use crate::capabilities::LinuxOptions;
use crate::error::{Result, SandboxError};
use crate::describe::describe;
use crate::platform::Platform;
use crate::policy::{resolve_policy_named, PolicyContext, ResolvedPolicy};
use crate::signals::parse_signal;

pub const DEFAULT_MAX_BUFFER: usize = 1024 * 1024;
pub const DEFAULT_FORCE_KILL_AFTER: Duration = Duration::from_millis(2000);

/// What the caller's process knows that the core cannot ask for itself (in a worker thread,
/// `process.env` and `process.cwd()` are the worker's, not the OS process's).
#[derive(Debug, Clone)]
pub struct HostContext {
    pub cwd: PathBuf,
    /// `process.env`, used as the base environment when `extendEnv` is true.
    pub env: BTreeMap<String, String>,
    /// The directory the JavaScript facade was loaded from (see `own_files`).
    pub package_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StdinMode {
    /// `/dev/null`.
    Null,
    /// A pipe the caller writes with `write()` and closes with `end()`.
    Pipe,
    /// Write these bytes, then close.
    Bytes(bytes::Bytes),
}

/// Which entry point the options are for: each accepts a slightly different set of names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Spawn,
    Start,
    Build,
}

/// Option names handled by the JavaScript layer (functions, AbortSignals, Buffers): allowed here
/// but never seen as values.
const JS_ONLY: &[&str] = &["signal", "onOutput", "input", "approve"];
const COMMON: &[&str] = &["cwd", "sandbox", "env", "extendEnv", "timeout", "killSignal", "forceKillAfterDelay", "maxBuffer", "linux", "pty", "limits"];

#[derive(Debug, Clone)]
pub struct SpawnRequest {
    pub command: Vec<String>,
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
    pub policy: ResolvedPolicy,
    pub platform: Platform,
    pub timeout: Option<Duration>,
    pub kill_signal: Signal,
    pub force_kill_after: Duration,
    pub max_buffer: usize,
    pub stdin: StdinMode,
    /// Which Linux sandbox mechanisms may run (`linux` option).
    pub linux: LinuxOptions,
    /// The command runs in a pseudo-terminal (`pty` option); stdin is then the terminal.
    pub pty: Option<crate::pty::PtyOptions>,
    /// Resource limits (`limits` option; validated by `limits::parse`).
    pub limits: crate::limits::Limits,
    /// The directory the JavaScript facade was loaded from (see `own_files`).
    pub package_dir: Option<PathBuf>,
    /// Who answers for hosts on neither list (`network.onRequest`, set by the binding).
    pub network_ask: Option<crate::network::ask::AskHandle>,
    /// The `sandbox` option as given, to resolve the policy again when the workspace changed
    /// while the sandbox was set up (`resolve_policy_again`).
    pub sandbox_option: Option<Value>,
    /// The cwd as the caller named it (absolute), when its way went through a symlink (or `..`):
    /// the links on it are held as a `writableRoots` path's are (`policy_links::walk_cwd`).
    pub named_cwd: Option<PathBuf>,
    /// Walk the workspace before bwrap is spawned, not while it sets up (`runner::overlap`): set
    /// for the next attempt when the walk changed bwrap's own arguments.
    pub walk_before_spawn: bool,
}

pub fn parse_command(value: &Value) -> Result<Vec<String>> {
    let Value::Array(items) = value else {
        return Err(SandboxError::invalid_command(format!("expected an array of strings (argv), got {}", describe(value))));
    };
    if items.is_empty() {
        return Err(SandboxError::invalid_command("must have at least one element (the program)"));
    }
    let mut argv = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Value::String(s) = item else {
            return Err(SandboxError::invalid_command(format!("command[{i}] must be a string, got {}", describe(item))));
        };
        if s.contains('\0') {
            return Err(SandboxError::invalid_command(format!("command[{i}] contains a NUL byte")));
        }
        argv.push(s.clone());
    }
    if argv[0].is_empty() {
        return Err(SandboxError::invalid_command("command[0] (the program) is an empty string"));
    }
    check_arg_max(&argv)?;
    Ok(argv)
}

/// Reject an argv the kernel would refuse (E2BIG), so the error names the problem.
fn check_arg_max(argv: &[String]) -> Result<()> {
    let limit = unsafe { libc::sysconf(libc::_SC_ARG_MAX) };
    let total: usize = argv.iter().map(|a| a.len() + 1 + std::mem::size_of::<usize>()).sum();
    // Leave room for the environment and the sandbox tool's own arguments.
    if limit > 0 && total > limit as usize / 2 {
        return Err(SandboxError::invalid_command(format!(
            "the argument list is {total} bytes, larger than the system allows for a command (ARG_MAX/2 = {})",
            limit / 2
        )));
    }
    for (i, a) in argv.iter().enumerate() {
        // Linux also caps a single argument at MAX_ARG_STRLEN (32 pages).
        if a.len() >= 32 * 4096 {
            return Err(SandboxError::invalid_command(format!("command[{i}] is {} bytes, larger than one argument may be (128 KiB)", a.len())));
        }
    }
    Ok(())
}

pub fn parse_spawn_options(command: &Value, options: &Value, host: &HostContext, entry: Entry, stdin_bytes: Option<Vec<u8>>) -> Result<SpawnRequest> {
    let command = parse_command(command)?;
    let empty = Map::new();
    let opts = match options {
        Value::Null => &empty,
        Value::Object(m) => m,
        other => return Err(SandboxError::new(crate::ErrorCode::InvalidOptions, format!("options: expected an object, got {}", describe(other)))),
    };
    for key in opts.keys() {
        let known = COMMON.contains(&key.as_str())
            || JS_ONLY.contains(&key.as_str())
            || (entry == Entry::Start && key == "stdin")
            || (entry == Entry::Build && key == "platform");
        if !known {
            return Err(SandboxError::invalid(key, "unknown option (check its spelling; sandspawn does not ignore options it does not know)"));
        }
    }
    let get = |k: &str| opts.get(k).filter(|v| !v.is_null());

    let platform = match get("platform") {
        None => Platform::host(),
        Some(Value::String(s)) if s == "linux" => Platform::Linux,
        Some(Value::String(s)) if s == "darwin" => Platform::Darwin,
        Some(v) => return Err(SandboxError::invalid("platform", format!("must be 'linux' or 'darwin', got {}", describe(v)))),
    };

    let cwd = match get("cwd") {
        None => host.cwd.clone(),
        // An empty cwd is what a variable left unset gives; taken for the host's own directory, a
        // workspace-write run would make that writable, so it is refused as the CLI refuses `--cwd ''`.
        Some(Value::String(s)) if s.is_empty() => {
            return Err(SandboxError::invalid("cwd", "is empty (omit cwd for the host process's current directory, or give a path)"))
        }
        Some(Value::String(s)) => {
            no_nul("cwd", s)?;
            host.cwd.join(s)
        }
        Some(v) => return Err(SandboxError::invalid("cwd", format!("must be a string, got {}", describe(v)))),
    };
    let named = cwd;
    let cwd = std::fs::canonicalize(&named).map_err(|e| SandboxError::invalid("cwd", format!("{} cannot be used: {e}", named.display())))?;
    // Kept only when it differs: the symlinks on its way are then held (`resolve_policy_named`).
    let named_cwd = Some(named).filter(|n| *n != cwd);
    if !cwd.is_dir() {
        return Err(SandboxError::invalid("cwd", format!("{} is not a directory", cwd.display())));
    }

    let extend_env = match get("extendEnv") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(v) => return Err(SandboxError::invalid("extendEnv", format!("must be a boolean, got {}", describe(v)))),
    };
    let mut env = if extend_env { host.env.clone() } else { BTreeMap::new() };
    match get("env") {
        None => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                if k.is_empty() || k.contains('=') || k.contains('\0') {
                    return Err(SandboxError::invalid("env", format!("invalid variable name {k:?} (empty, or contains '=' or a NUL byte)")));
                }
                match v {
                    Value::String(s) => {
                        if s.contains('\0') {
                            return Err(SandboxError::invalid("env", format!("the value of {k} contains a NUL byte")));
                        }
                        env.insert(k.clone(), s.clone());
                    }
                    Value::Null => {
                        env.remove(k);
                    }
                    other => return Err(SandboxError::invalid("env", format!("the value of {k} must be a string, got {}", describe(other)))),
                }
            }
        }
        Some(v) => return Err(SandboxError::invalid("env", format!("must be an object of strings, got {}", describe(v)))),
    }

    let timeout = match non_negative_ms("timeout", get("timeout"))? {
        None | Some(0) => None,
        Some(ms) => Some(Duration::from_millis(ms)),
    };
    let force_kill_after = non_negative_ms("forceKillAfterDelay", get("forceKillAfterDelay"))?.map(Duration::from_millis).unwrap_or(DEFAULT_FORCE_KILL_AFTER);
    let kill_signal = match get("killSignal") {
        None => Signal::SIGTERM,
        Some(Value::String(s)) => parse_signal(s).ok_or_else(|| SandboxError::invalid("killSignal", format!("unknown signal {s:?} (use a name such as 'SIGTERM' or 'SIGKILL')")))?,
        Some(Value::Number(n)) => n
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .and_then(crate::signals::signal_from_number)
            .ok_or_else(|| SandboxError::invalid("killSignal", format!("unknown signal number {n}")))?,
        Some(v) => return Err(SandboxError::invalid("killSignal", format!("must be a signal name such as 'SIGTERM', got {}", describe(v)))),
    };
    let max_buffer = match get("maxBuffer") {
        None => DEFAULT_MAX_BUFFER,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if f.is_finite() && f >= 1.0 => f.min(usize::MAX as f64) as usize,
            _ => return Err(SandboxError::invalid("maxBuffer", format!("must be a positive number of bytes, got {n}"))),
        },
        Some(v) => return Err(SandboxError::invalid("maxBuffer", format!("must be a positive number of bytes, got {}", describe(v)))),
    };
    let pty = crate::pty::parse_pty(get("pty"), platform)?;
    if pty.is_some() {
        if stdin_bytes.is_some() {
            return Err(SandboxError::invalid("input", "cannot be combined with pty: the terminal is the command's stdin; start it with startSandboxed and write() instead"));
        }
        if get("stdin").is_some_and(|v| v.as_str() != Some("pipe")) {
            return Err(SandboxError::invalid("stdin", "with pty, stdin is the terminal (leave stdin out)"));
        }
        // `pty.term`, else the `TERM` the caller set in `env`, else what terminal emulators use.
        let explicit = get("env").and_then(|e| e.get("TERM")).and_then(Value::as_str).map(str::to_owned);
        let term = pty.as_ref().and_then(|p| p.term.clone()).or(explicit).unwrap_or_else(|| crate::pty::options::DEFAULT_TERM.into());
        env.insert("TERM".into(), term);
    }
    let stdin = match (stdin_bytes, get("stdin")) {
        (Some(bytes), _) => StdinMode::Bytes(bytes.into()),
        (None, None) => StdinMode::Null,
        (None, Some(Value::String(s))) if s == "ignore" => StdinMode::Null,
        (None, Some(Value::String(s))) if s == "pipe" => StdinMode::Pipe,
        (None, Some(v)) => return Err(SandboxError::invalid("stdin", format!("must be 'pipe' or 'ignore', got {}", describe(v)))),
    };

    let linux = parse_linux_options(get("linux"))?;
    let limits = crate::limits::parse(get("limits"))?;

    let sandbox_option = get("sandbox").cloned();
    let policy = resolve_policy_named(sandbox_option.as_ref(), &policy_context(&cwd, &env, platform), named_cwd.as_deref())?;

    // With a terminal, `write()` goes to the terminal: stdin is always a "pipe".
    let stdin = if pty.is_some() { StdinMode::Pipe } else { stdin };
    let package_dir = host.package_dir.clone();
    Ok(SpawnRequest { command, cwd, env, policy, platform, timeout, kill_signal, force_kill_after, max_buffer, stdin, linux, pty, limits, package_dir, network_ask: None, sandbox_option, named_cwd, walk_before_spawn: false })
}

fn policy_context(cwd: &std::path::Path, env: &BTreeMap<String, String>, platform: Platform) -> PolicyContext {
    let tmpdir = env.get("TMPDIR").filter(|s| !s.is_empty()).cloned();
    PolicyContext { cwd: cwd.to_path_buf(), tmpdir, platform, env: env.clone() }
}

/// The request's policy resolved again from its `sandbox` option, as a new call would resolve it
/// now: the paths it protects are looked at again.
pub fn resolve_policy_again(req: &SpawnRequest) -> Result<ResolvedPolicy> {
    resolve_policy_named(req.sandbox_option.as_ref(), &policy_context(&req.cwd, &req.env, req.platform), req.named_cwd.as_deref())
}

/// `linux: { allow?: Array<'bwrap' | 'landlock'>, bundledBwrap?: boolean }`. Accepted on every
/// platform (one options object serves all hosts); only Linux reads it.
pub fn parse_linux_options(value: Option<&Value>) -> Result<LinuxOptions> {
    let mut o = LinuxOptions::default();
    // The host-only opt-in applies unless the API option names the mechanisms itself.
    let given = matches!(value, Some(Value::Object(m)) if m.get("allow").is_some_and(|v| !v.is_null()));
    if !given {
        if let Some(text) = std::env::var_os(LINUX_ALLOW_ENV) {
            (o.allow_bwrap, o.allow_landlock) = allow_from_env(&text.to_string_lossy())?;
            // An empty value is the default, which the variable then did not choose.
            o.allow_from_env = o != LinuxOptions::default();
        }
    }
    let m = match value {
        None => return Ok(o),
        Some(Value::Object(m)) => m,
        Some(v) => return Err(SandboxError::invalid("linux", format!("must be an object like {{ bundledBwrap: false }}, got {}", describe(v)))),
    };
    for (k, v) in m {
        match (k.as_str(), v) {
            (_, Value::Null) => {}
            ("bundledBwrap", Value::Bool(b)) => o.bundled_bwrap = *b,
            ("bundledBwrap", v) => return Err(SandboxError::invalid("linux.bundledBwrap", format!("must be a boolean, got {}", describe(v)))),
            ("allow", Value::Array(items)) => {
                if items.is_empty() {
                    return Err(SandboxError::invalid("linux.allow", "must name at least one mechanism ('bwrap', 'landlock'); to run without a sandbox use sandbox: 'danger-full-access'"));
                }
                o.allow_bwrap = false;
                o.allow_landlock = false;
                o.allow_from_env = false;
                for (i, item) in items.iter().enumerate() {
                    match item.as_str() {
                        Some("bwrap") => o.allow_bwrap = true,
                        Some("landlock") => o.allow_landlock = true,
                        _ => return Err(SandboxError::invalid(&format!("linux.allow[{i}]"), format!("must be 'bwrap' or 'landlock', got {}", describe(item)))),
                    }
                }
            }
            ("allow", v) => return Err(SandboxError::invalid("linux.allow", format!("must be an array such as ['bwrap'], got {}", describe(v)))),
            (other, _) => return Err(SandboxError::invalid(&format!("linux.{other}"), "unknown option (known: allow, bundledBwrap)")),
        }
    }
    Ok(o)
}

pub use crate::capabilities::LINUX_ALLOW_ENV;

/// The mechanisms `SANDSPAWN_LINUX_ALLOW` names, as (bwrap, landlock); empty means the default.
fn allow_from_env(text: &str) -> Result<(bool, bool)> {
    let words: Vec<&str> = text.split(',').map(str::trim).filter(|w| !w.is_empty()).collect();
    if words.is_empty() {
        return Ok((true, false));
    }
    let (mut bwrap, mut landlock) = (false, false);
    for w in words {
        match w {
            "bwrap" => bwrap = true,
            "landlock" => landlock = true,
            _ => return Err(SandboxError::invalid(LINUX_ALLOW_ENV, format!("(environment variable) names {w:?}; expected a comma-separated list of 'bwrap' and 'landlock'"))),
        }
    }
    Ok((bwrap, landlock))
}

fn no_nul(option: &str, s: &str) -> Result<()> {
    if s.contains('\0') {
        return Err(SandboxError::invalid(option, "contains a NUL byte"));
    }
    Ok(())
}

fn non_negative_ms(option: &str, value: Option<&Value>) -> Result<Option<u64>> {
    match value {
        None => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(f) if f.is_finite() && f >= 0.0 => Ok(Some(f.ceil() as u64)),
            _ => Err(SandboxError::invalid(option, format!("must be a finite, non-negative number of milliseconds, got {n}"))),
        },
        Some(v) => Err(SandboxError::invalid(option, format!("must be a finite, non-negative number of milliseconds, got {}", describe(v)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn host() -> HostContext {
        HostContext { cwd: PathBuf::from("/"), env: BTreeMap::from([("PATH".into(), "/usr/bin:/bin".into()), ("HOME".into(), "/root".into())]), package_dir: None }
    }

    fn err(cmd: Value, opts: Value) -> SandboxError {
        parse_spawn_options(&cmd, &opts, &host(), Entry::Spawn, None).unwrap_err()
    }

    #[test]
    fn bad_commands() {
        for (cmd, needle) in [
            (json!([]), "at least one"),
            (json!("echo hi"), "array"),
            (json!(["echo", 3]), "command[1] must be a string"),
            (json!(["ec\u{0}ho"]), "NUL"),
            (json!([""]), "empty"),
        ] {
            let e = err(cmd, json!({}));
            assert_eq!(e.code, crate::ErrorCode::InvalidOptions);
            assert!(e.message.contains(needle), "{}", e.message);
        }
    }

    #[test]
    fn huge_argv_is_rejected() {
        let big = "x".repeat(100_000);
        let argv: Vec<Value> = std::iter::once(json!("echo")).chain((0..100).map(|_| json!(big.clone()))).collect();
        assert!(err(Value::Array(argv), json!({})).message.contains("larger than the system allows"));
    }

    #[test]
    fn bad_options_name_the_option() {
        for (opts, needle) in [
            (json!({"timeoutt": 1}), "options.timeoutt"),
            (json!({"timeout": -1}), "options.timeout"),
            (json!({"timeout": "5"}), "options.timeout"),
            (json!({"killSignal": "SIGNOPE"}), "options.killSignal"),
            (json!({"maxBuffer": 0}), "options.maxBuffer"),
            (json!({"maxBuffer": -5}), "options.maxBuffer"),
            (json!({"cwd": "/etc/passwd"}), "options.cwd"),
            (json!({"cwd": "/does/not/exist"}), "options.cwd"),
            (json!({"cwd": ""}), "options.cwd: is empty"),
            (json!({"env": {"A": 1}}), "options.env"),
            (json!({"env": {"A\u{0}": "x"}}), "options.env"),
            (json!({"env": {"A": "x\u{0}"}}), "options.env"),
            (json!({"extendEnv": "yes"}), "options.extendEnv"),
            (json!({"stdin": "pipe"}), "options.stdin"),
            (json!({"linux": true}), "options.linux"),
            (json!({"linux": {"bundledBwrap": "no"}}), "options.linux.bundledBwrap"),
            (json!({"linux": {"allow": []}}), "options.linux.allow"),
            (json!({"linux": {"allow": "bwrap"}}), "options.linux.allow"),
            (json!({"linux": {"allow": ["bwrap", "none"]}}), "options.linux.allow[1]"),
            (json!({"linux": {"allow": [1]}}), "options.linux.allow[0]"),
            (json!({"linux": {"bundled": true}}), "options.linux.bundled"),
        ] {
            let e = err(json!(["true"]), opts.clone());
            assert_eq!(e.code, crate::ErrorCode::InvalidOptions, "{opts}");
            assert!(e.message.starts_with(needle), "{opts}: {}", e.message);
        }
    }

    #[test]
    fn env_merging() {
        let r = parse_spawn_options(&json!(["true"]), &json!({"env": {"A": "1"}, "sandbox": "danger-full-access"}), &host(), Entry::Spawn, None).unwrap();
        assert_eq!(r.env.get("A").map(String::as_str), Some("1"));
        assert_eq!(r.env.get("HOME").map(String::as_str), Some("/root"));
        let r = parse_spawn_options(&json!(["true"]), &json!({"env": {"A": "1"}, "extendEnv": false, "sandbox": "danger-full-access"}), &host(), Entry::Spawn, None).unwrap();
        assert_eq!(r.env.len(), 1);
    }

    #[test]
    fn defaults() {
        let r = parse_spawn_options(&json!(["true"]), &Value::Null, &host(), Entry::Spawn, None).unwrap();
        assert_eq!(r.timeout, None);
        assert_eq!(r.kill_signal, Signal::SIGTERM);
        assert_eq!(r.force_kill_after, Duration::from_millis(2000));
        assert_eq!(r.max_buffer, 1024 * 1024);
        assert_eq!(r.stdin, StdinMode::Null);
        assert_eq!(r.policy.mode, crate::policy::SandboxMode::ReadOnly);
        assert_eq!(r.linux, LinuxOptions { allow_bwrap: true, allow_landlock: false, bundled_bwrap: true, allow_from_env: false });
    }

    #[test]
    fn pty_options() {
        let parse = |opts: Value, input: Option<Vec<u8>>| parse_spawn_options(&json!(["true"]), &opts, &host(), Entry::Start, input);
        let r = parse(json!({"pty": true}), None).unwrap();
        assert_eq!(r.stdin, StdinMode::Pipe, "the terminal is stdin");
        assert_eq!(r.env.get("TERM").map(String::as_str), Some("xterm-256color"));
        let r = parse(json!({"pty": {"term": "vt100"}, "env": {"TERM": "dumb"}}), None).unwrap();
        assert_eq!(r.env.get("TERM").map(String::as_str), Some("vt100"), "pty.term wins");
        let r = parse(json!({"pty": true, "env": {"TERM": "dumb"}}), None).unwrap();
        assert_eq!(r.env.get("TERM").map(String::as_str), Some("dumb"), "then env.TERM");
        assert_eq!(parse(json!({"pty": false}), None).unwrap().env.get("TERM"), None);
        let e = parse(json!({"pty": true}), Some(b"x".to_vec())).unwrap_err();
        assert!(e.message.starts_with("options.input: cannot be combined with pty"), "{}", e.message);
        let e = parse(json!({"pty": true, "stdin": "ignore"}), None).unwrap_err();
        assert!(e.message.starts_with("options.stdin"), "{}", e.message);
        assert!(parse(json!({"pty": true, "stdin": "pipe"}), None).is_ok());
        let e = parse(json!({"pty": {"cols": -1}}), None).unwrap_err();
        assert!(e.message.starts_with("options.pty.cols"), "{}", e.message);
    }

    #[test]
    fn linux_allow_env_words() {
        assert_eq!(allow_from_env("bwrap,landlock").unwrap(), (true, true));
        assert_eq!(allow_from_env(" landlock ").unwrap(), (false, true));
        assert_eq!(allow_from_env("").unwrap(), (true, false));
        assert!(allow_from_env("bwrap,none").unwrap_err().message.contains("SANDSPAWN_LINUX_ALLOW"));
    }

    #[test]
    fn linux_options() {
        let parse = |v: Value| parse_spawn_options(&json!(["true"]), &json!({ "linux": v }), &host(), Entry::Spawn, None).unwrap().linux;
        assert_eq!(parse(json!({"bundledBwrap": false})), LinuxOptions { allow_bwrap: true, allow_landlock: false, bundled_bwrap: false, allow_from_env: false });
        assert_eq!(parse(json!({"allow": ["landlock", "bwrap", "bwrap"]})), LinuxOptions { allow_bwrap: true, allow_landlock: true, bundled_bwrap: true, allow_from_env: false });
        assert_eq!(parse(json!({"allow": ["landlock"]})), LinuxOptions { allow_bwrap: false, allow_landlock: true, bundled_bwrap: true, allow_from_env: false });
        assert_eq!(parse(json!({"allow": null, "bundledBwrap": null})), LinuxOptions::default());
        assert_eq!(parse(Value::Null), LinuxOptions::default());
    }
}
