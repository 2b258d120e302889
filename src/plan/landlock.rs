//! The Landlock mode's plan (Linux without user namespaces, opt-in): the helper runs as the
//! supervisor on the host and confines the command with Landlock + seccomp (see the helper's
//! `supervisor` and `confine`). Landlock rules only add access, so a policy that needs something
//! hidden or narrowed below a granted tree cannot be expressed; such a policy is refused, naming
//! the rule, instead of being run with less than it asks for.
//!
//! What it grants: read and execute everywhere (as bwrap's read-only `/`); write in the writable
//! roots; write to the harmless devices bwrap's `/dev` has. A writable root that holds protected
//! paths (`.git`, `readOnlyPaths`, sandspawn's own helper) is not granted as a whole: its other
//! entries are, each on its own, descending into the directories that lead to a protected path.
//! That is stricter than bwrap: entries cannot be created, removed or renamed directly in such a
//! directory (only inside its existing subdirectories and files), and symlinks are not followed.

use std::path::Path;

use sandspawn_helper::protocol::{LandlockSteps, Steps};
use sandspawn_helper::seccomp::Sockets;

use super::{child_env, path_arg, LaunchPlan, PlanRequest};
use crate::error::{Result, SandboxError};
use crate::platform::SandboxType;
use crate::policy::{ResolvedPolicy, TmpMode, UnixSockets};

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

pub fn build(req: &PlanRequest, abi: u32) -> Result<LaunchPlan> {
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
    let mut write: Vec<String> = Vec::new();
    for root in &policy.writable_roots {
        let mut protected: Vec<&Path> = root.read_only.iter().map(|p| p.as_path()).collect();
        protected.extend(root.missing_read_only.iter().map(|m| m.path.as_path()));
        if helper.starts_with(&root.root) {
            protected.push(helper);
        }
        grant(&root.root, &protected, &mut write)?;
    }
    write.extend(DEVICES.iter().filter(|d| Path::new(d).exists()).map(|d| d.to_string()));
    let sockets = if policy.network {
        Sockets::All
    } else if policy.unix_sockets == UnixSockets::All {
        Sockets::UnixOnly
    } else {
        Sockets::None
    };
    let runner = req.runner_fds;
    let landlock = LandlockSteps { abi, read: vec!["/".into()], write, sockets, control_fd: runner.then_some(CONTROL_FD) };
    let steps = Steps { report_fd: runner.then_some(REPORT_FD), rlimits: req.rlimits.to_vec(), landlock: Some(landlock), ..Steps::default() };
    let mut args = steps.to_args();
    args.extend(req.command.iter().cloned());
    Ok(LaunchPlan {
        program: helper.to_path_buf(),
        argv0: crate::helper::FILE_NAME.to_string(),
        args,
        env: child_env(req, SandboxType::Landlock),
        cwd: req.cwd.to_path_buf(),
        sandbox_type: SandboxType::Landlock,
        profile: None,
        status_fd: None,
        report_fd: runner.then_some(REPORT_FD),
        helper: Some(helper.to_path_buf()),
        net_ctl_fd: None,
        control_fd: runner.then_some(CONTROL_FD),
    })
}

/// Write rules for `dir` that leave every `protected` path (and its subtree) read-only: the whole
/// of `dir` when nothing in it is protected; else each entry on its own, skipping protected ones
/// and symlinks, descending into the ones that lead to a protected path.
fn grant(dir: &Path, protected: &[&Path], out: &mut Vec<String>) -> Result<()> {
    if !protected.iter().any(|p| p.starts_with(dir)) {
        out.push(path_arg(dir)?);
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| {
        SandboxError::unsupported(format!("cannot list {} to protect the read-only paths in it: {e}", dir.display()))
    })?;
    let mut names: Vec<_> = entries.flatten().collect();
    names.sort_by_key(|e| e.file_name());
    for e in names {
        let path = e.path();
        let Ok(kind) = e.file_type() else { continue };
        if protected.iter().any(|p| *p == path) || kind.is_symlink() {
            continue;
        }
        if kind.is_dir() {
            grant(&path, protected, out)?;
        } else {
            out.push(path_arg(&path)?);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::WritableRoot;

    fn policy(root: &Path, read_only: Vec<std::path::PathBuf>) -> ResolvedPolicy {
        let mut p = crate::plan::test_support::policy(serde_json::json!({"mode": "workspace-write"}), root, crate::platform::Platform::Linux);
        p.writable_roots = vec![WritableRoot { root: root.to_path_buf(), read_only, missing_read_only: Vec::new() }];
        p
    }

    #[test]
    fn protected_paths_split_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for d in [".git/hooks", "src/deep"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("file"), "").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("link")).unwrap();
        let mut out = Vec::new();
        grant(&root, &[&root.join(".git")], &mut out).unwrap();
        let s = |p: &str| root.join(p).to_str().unwrap().to_string();
        assert_eq!(out, [s("file"), s("src")], "not the root, not .git, not the symlink");
        let mut out = Vec::new();
        grant(&root, &[&root.join("src/deep/x")], &mut out).unwrap();
        assert_eq!(out, [s(".git"), s("file")], "src/deep leads to the protected path: its (no) other entries");
        let mut out = Vec::new();
        grant(&root, &[Path::new("/elsewhere")], &mut out).unwrap();
        assert_eq!(out, [root.to_str().unwrap()]);
        let _ = policy(&root, Vec::new());
    }

    #[test]
    fn refuses_what_landlock_cannot_express() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let mut p = policy(&root, Vec::new());
        assert!(unsupported_rules(&p).is_empty());
        p.deny_read = vec![root.join("secret")];
        p.tmp = TmpMode::Private;
        p.unix_sockets = UnixSockets::Only(vec![root.join("s.sock")]);
        let rules = unsupported_rules(&p).join("\n");
        assert!(rules.contains("sandbox.denyRead entry") && rules.contains("sandbox.tmp: 'private'") && rules.contains("allowUnixSockets"), "{rules}");
    }
}
