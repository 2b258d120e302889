//! The Landlock mode's plan (Linux without user namespaces, opt-in): the helper runs as the
//! supervisor on the host and confines the command with Landlock + seccomp (see the helper's
//! `supervisor` and `confine`). Landlock rules only add access, so a policy that needs something
//! hidden or narrowed below a granted tree cannot be expressed; such a policy is refused, naming
//! the rule, instead of being run with less than it asks for.
//!
//! What it grants: read and execute everywhere but in `/dev` (as bwrap's read-only `/` and its
//! minimal `/dev`, see `readable`); write as
//! `landlock_grants` computes it (the writable roots, split around what stays read-only, and the
//! run's own directory); write to the harmless devices bwrap's `/dev` has.
//!
//! The run's own directory (made and removed by the runner) gives the command what a split root
//! cannot: when the temporary directory the command would use takes no new entries (a workspace
//! with a `.git` inside `/tmp`), `TMPDIR` names the run's directory, so `mktemp` works; and npm,
//! whose cache stays read-only here (no mounts for private tool caches), gets an empty cache there.

use std::path::Path;

use std::path::PathBuf;

use sandspawn_helper::protocol::{LandlockSteps, Planned, Steps};
use sandspawn_helper::seccomp::Sockets;

use super::landlock_grants::Grants;
use super::{child_env, path_arg, LaunchPlan, PlanRequest};
use crate::error::{Result, SandboxError};
use crate::platform::SandboxType;
use crate::policy::{ResolvedPolicy, SandboxMode, TmpMode, UnixSockets};

use crate::child_fds::{CONTROL as CONTROL_FD, REPORT as REPORT_FD};

/// Devices a command may write (bwrap's `--dev` has the same ones).
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"];

/// The rules Landlock cannot express, each named; empty when the policy can run in this mode.
pub fn unsupported_rules(policy: &ResolvedPolicy) -> Vec<String> {
    let mut out = Vec::new();
    for d in &policy.deny_read {
        out.push(format!("sandbox.denyRead entry {} (Landlock cannot hide a path inside a readable tree)", d.display()));
    }
    if policy.network_proxy.is_some() {
        out.push("sandbox.network as a NetworkPolicy (without a network namespace traffic cannot be forced through the proxy)".into());
    }
    if policy.tmp == TmpMode::Private {
        out.push("sandbox.tmp: 'private' (no mount namespace for a private /tmp)".into());
    }
    if policy.tool_caches.mode == crate::tool_caches::Mode::Private && policy.tool_caches.explicit {
        // The default 'private' is treated as unavailable here instead (the runner reports
        // toolCaches.mode 'none': the caches stay read-only).
        out.push("sandbox.toolCaches: 'private' (no mount namespace to mount the private overlays in)".into());
    }
    if let UnixSockets::Only(_) = policy.unix_sockets {
        out.push("sandbox.allowUnixSockets as a list of paths (seccomp cannot tell socket paths apart)".into());
    }
    out
}

/// The read rules: every entry of `/` but `/dev`, and of `/dev` only the devices bwrap's `--dev`
/// has (`/` itself only lists, see `LandlockSteps::list`). The host's other devices stay closed as
/// in bwrap's minimal `/dev`: the user's other terminals (`/dev/pts/N`, whose input a reader would
/// take), disks (a uid that owns them reads every file through them), `/dev/kmsg`, input devices.
fn readable() -> Result<Vec<String>> {
    let entries = std::fs::read_dir("/").map_err(|e| SandboxError::unsupported(format!("cannot list / for the Landlock rules: {e}")))?;
    let mut out: Vec<String> = entries.flatten().map(|e| e.path()).filter(|p| p != Path::new("/dev")).map(|p| path_arg(&p)).collect::<Result<_>>()?;
    out.sort();
    out.extend(DEVICES.iter().filter(|d| Path::new(d).exists()).map(|d| d.to_string()));
    Ok(out)
}

/// What this policy loses at `abi` beyond `sandspawn_helper::landlock::not_enforced` (which depends
/// on the ABI alone): with the network off but Unix sockets allowed, bwrap's network namespace keeps
/// the host's abstract sockets out of reach, and the command's own out of the host's reach.
/// Landlock scopes the command's connections to the host's names only from ABI 6, and at no ABI
/// the other way: a name the command binds there is one a host program connecting to it reaches
/// (an attacker's review, land26: a host client of `@/tmp/.X11-unix/X97` sent its cookie to the
/// command and took its reply). A filter cannot tell an abstract address from a path (`bind` passes
/// a pointer), so it is said, not prevented.
pub fn policy_not_enforced(policy: &ResolvedPolicy, abi: u32) -> Vec<String> {
    let sockets = !policy.network && policy.unix_sockets == UnixSockets::All;
    let mut out = Vec::new();
    if sockets && abi < 6 {
        out.push("abstract-unix-socket-scope".to_string());
    }
    if sockets {
        out.push("abstract-unix-socket-bind".to_string());
    }
    out
}

/// The plan, given the run's write grants and its own directory (`scratch`, granted in `grants`).
pub fn build(req: &PlanRequest, abi: u32, grants: &Grants, scratch: Option<&Path>) -> Result<LaunchPlan> {
    let policy = req.policy;
    let refused = unsupported_rules(policy);
    if !refused.is_empty() {
        return Err(SandboxError::unsupported(format!(
            "the Landlock mode cannot enforce this policy exactly, and sandspawn will not run it with less: {}; \
             drop these rules, or run where bwrap works",
            refused.join("; ")
        )));
    }
    if req.terminal {
        // The supervisor forks the command; handing it the terminal as its controlling tty (and
        // forwarding job control) is not built for this mode.
        return Err(SandboxError::unsupported("pty is not supported in the Landlock mode yet: run where bwrap works, or without pty"));
    }
    let helper = req.helper.ok_or_else(|| SandboxError::unavailable("sandspawn-helper was not found", "reinstall sandspawn"))?;
    let mut write: Vec<Planned> = Vec::new();
    for p in grants.dirs.iter().chain(&grants.files) {
        // As it is, whatever its bytes: the split directories' entries are whatever a run named them.
        write.push(Planned { path: p.clone(), id: grants.ids.get(p).copied() });
    }
    write.extend(DEVICES.iter().filter(|d| Path::new(d).exists()).map(|d| Planned::new(d)));
    // The network on with Unix sockets refused by name: the Internet families alone (the helper
    // takes `Inet` as the network on, its Landlock rules governing no TCP port).
    let sockets = if policy.network && policy.unix_sockets == UnixSockets::Blocked {
        Sockets::Inet
    } else if policy.network {
        Sockets::InetAndUnix
    } else if policy.unix_sockets == UnixSockets::All {
        Sockets::UnixOnly
    } else {
        Sockets::None
    };
    let runner = req.runner_fds;
    let landlock = LandlockSteps { abi, list: vec!["/".into()], read: readable()?, write, sockets, control_fd: runner.then_some(CONTROL_FD) };
    // The command's limits, and no scheduling priority above the host's processes (the command
    // runs as the host's user here: its limits are the caller's).
    let rlimits = sandspawn_helper::rlimit::linux_run(req.rlimits, &sandspawn_helper::rlimit::NO_PRIORITY_RAISE);
    let steps = Steps { report_fd: runner.then_some(REPORT_FD), rlimits, landlock: Some(landlock), ..Steps::default() };
    let mut args = steps.to_args();
    args.extend(req.command.iter().cloned());
    Ok(LaunchPlan {
        program: helper.to_path_buf(),
        argv0: crate::helper::FILE_NAME.to_string(),
        args,
        env: env(req, grants, scratch),
        cwd: req.cwd.to_path_buf(),
        sandbox_type: SandboxType::Landlock,
        profile: None,
        status_fd: None,
        report_fd: runner.then_some(REPORT_FD),
        helper: Some(helper.to_path_buf()),
        net_ctl_fd: None,
        control_fd: runner.then_some(CONTROL_FD),
        inside_args_at: None,
    })
}

/// The command's environment: the plan's usual one, `TMPDIR` in the run's own directory when the
/// temporary directory it would use takes no new entries, npm's cache there when its own is not
/// writable.
fn env(req: &PlanRequest, grants: &Grants, scratch: Option<&Path>) -> std::collections::BTreeMap<String, String> {
    let mut env = child_env(req, SandboxType::Landlock);
    let Some(scratch) = scratch.and_then(Path::to_str) else { return env };
    if req.policy.tmp == TmpMode::Writable && !grants.creatable(&tmp_root(&env)) {
        env.insert("TMPDIR".into(), scratch.into());
    }
    if req.policy.mode == SandboxMode::WorkspaceWrite && !npm_cache_writable(&env, grants) {
        env.retain(|k, _| !k.eq_ignore_ascii_case("npm_config_cache"));
        env.insert("npm_config_cache".into(), format!("{scratch}/npm-cache"));
    }
    env
}

/// The directory `mktemp` would use: `TMPDIR`, else `/tmp` (canonical, as the roots are).
fn tmp_root(env: &std::collections::BTreeMap<String, String>) -> PathBuf {
    let tmpdir = env.get("TMPDIR").filter(|t| t.starts_with('/')).map_or("/tmp", String::as_str);
    std::fs::canonicalize(tmpdir).unwrap_or_else(|_| PathBuf::from(tmpdir))
}

/// Where npm caches (`npm_config_cache` in any case, as `npm test` exports it, else `~/.npm`) is
/// writable here. When it is not, npm would fail at its first cache write, so the plan points it at
/// the run's own directory instead, whoever chose the other place.
fn npm_cache_writable(env: &std::collections::BTreeMap<String, String>, grants: &Grants) -> bool {
    let chosen = env.iter().find(|(k, _)| k.eq_ignore_ascii_case("npm_config_cache")).map(|(_, v)| PathBuf::from(v));
    let Some(cache) = chosen.or_else(|| env.get("HOME").map(|h| Path::new(h).join(".npm"))) else { return false };
    let cache = std::fs::canonicalize(&cache).unwrap_or(cache);
    cache.is_absolute() && grants.dirs.iter().any(|d| cache.starts_with(d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::WritableRoot;

    fn policy(root: &Path) -> ResolvedPolicy {
        let mut p = crate::plan::test_support::policy(serde_json::json!({"mode": "workspace-write"}), root, crate::platform::Platform::Linux);
        p.writable_roots = vec![WritableRoot { root: root.to_path_buf(), read_only: Vec::new(), missing_read_only: Vec::new(), id: None }];
        p
    }

    #[test]
    fn refuses_what_landlock_cannot_express() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let mut p = policy(&root);
        assert!(unsupported_rules(&p).is_empty());
        p.deny_read = vec![root.join("secret")];
        p.tmp = TmpMode::Private;
        p.unix_sockets = UnixSockets::Only(vec![root.join("s.sock")]);
        let rules = unsupported_rules(&p).join("\n");
        assert!(rules.contains("sandbox.denyRead entry") && rules.contains("sandbox.tmp: 'private'") && rules.contains("allowUnixSockets"), "{rules}");
    }

    #[test]
    fn tmpdir_and_npm_cache_go_to_the_runs_directory_only_where_needed() {
        let (t, home, scratch) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (tmp, home) = (t.path().canonicalize().unwrap(), home.path().canonicalize().unwrap());
        let p = policy(&tmp);
        let mut vars = std::collections::BTreeMap::new();
        vars.insert("TMPDIR".to_string(), tmp.to_str().unwrap().to_string());
        vars.insert("HOME".to_string(), home.to_str().unwrap().to_string());
        let cmd = vec!["true".to_string()];
        let req = PlanRequest { command: &cmd, cwd: &tmp, env: &vars, policy: &p, platform: crate::platform::Platform::Linux, bwrap: None, resolved_program: None, helper: None, runner_fds: true, terminal: false, rlimits: &[], own_files: &[], stores: &[], proxy: None };
        let s = scratch.path().to_str().unwrap();
        let split = Grants { split: vec![tmp.clone()], ..Grants::default() };
        let e = env(&req, &split, Some(scratch.path()));
        assert_eq!(e["TMPDIR"], s, "TMPDIR takes no new entries");
        assert_eq!(e["npm_config_cache"], format!("{s}/npm-cache"), "~/.npm is not writable");
        let whole = Grants { dirs: vec![tmp.clone(), home.clone()], ..Grants::default() };
        let e = env(&req, &whole, Some(scratch.path()));
        assert_eq!(e["TMPDIR"], tmp.to_str().unwrap());
        assert!(!e.contains_key("npm_config_cache"), "~/.npm lies in a granted directory");
        // A cache the caller named (as `npm test` exports it) that is not writable here: replaced.
        let mut chosen = vars.clone();
        chosen.insert("NPM_CONFIG_CACHE".to_string(), home.join(".npm").to_str().unwrap().to_string());
        let req = PlanRequest { env: &chosen, ..req };
        let e = env(&req, &split, Some(scratch.path()));
        assert_eq!((e.get("NPM_CONFIG_CACHE"), &e["npm_config_cache"]), (None, &format!("{s}/npm-cache")));
        let e = env(&req, &whole, Some(scratch.path()));
        assert!(!e.contains_key("npm_config_cache") && e.contains_key("NPM_CONFIG_CACHE"), "a writable one is kept");
        assert_eq!(env(&req, &split, None)["TMPDIR"], tmp.to_str().unwrap(), "no directory of the run's own: nothing changes");
    }

    #[test]
    fn abstract_sockets_are_reported_where_only_a_namespace_would_hide_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = policy(&std::fs::canonicalize(dir.path()).unwrap());
        assert!(policy_not_enforced(&p, 5).is_empty(), "no Unix socket at all: nothing to scope");
        p.unix_sockets = UnixSockets::All;
        assert_eq!(policy_not_enforced(&p, 5), ["abstract-unix-socket-scope", "abstract-unix-socket-bind"]);
        assert_eq!(policy_not_enforced(&p, 7), ["abstract-unix-socket-bind"], "Landlock scopes the host's names from ABI 6, never the command's");
        p.network = true;
        assert!(policy_not_enforced(&p, 5).is_empty(), "with the network on bwrap shares them too");
    }
}
