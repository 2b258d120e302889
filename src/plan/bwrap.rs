//! The bubblewrap argv for a policy (Linux).
//!
//! bwrap applies mounts in argv order and a later mount hides an earlier one, so the order is the
//! security property: read-only host → private /tmp → deny masks above/outside the writable roots →
//! per writable root (shallowest first): its bind, its read-only carve-outs, the deny masks nested
//! in it. A deny mask placed before the bind of an ancestor root would be undone by that bind.

use std::path::{Path, PathBuf};

use super::{child_env, path_arg, seccomp, ExtraFd, FdPurpose, LaunchPlan, PlanRequest};
use crate::error::{Result, SandboxError};
use crate::platform::SandboxType;
use crate::policy::{PlaceholderKind, TmpMode, UnixSockets};

pub const DEFAULT_BWRAP: &str = "/usr/bin/bwrap";

/// procfs entries a root-owned sandbox could still write through uid-0 DAC even without
/// capabilities (`--proc` mounts them writable). `/proc/sys` always exists; the rest may not.
const PROC_COVERS: &[(&str, &str)] = &[
    ("--ro-bind", "/proc/sys"),
    ("--ro-bind-try", "/proc/sysrq-trigger"),
    ("--ro-bind-try", "/proc/irq"),
    ("--ro-bind-try", "/proc/bus"),
    ("--ro-bind-try", "/proc/fs"),
];

/// argv under construction plus the extra descriptors it refers to.
struct Argv {
    args: Vec<String>,
    fds: Vec<ExtraFd>,
}

impl Argv {
    fn push(&mut self, parts: &[&str]) {
        self.args.extend(parts.iter().map(|s| s.to_string()));
    }

    fn path(&mut self, flag: &str, p: &Path) -> Result<()> {
        let p = path_arg(p)?;
        self.args.extend([flag.to_string(), p.clone(), p]);
        Ok(())
    }

    /// A new descriptor (numbered from 3 in order). Each `--ro-bind-data` gets its own: bwrap 0.8
    /// happens to re-read an empty pipe at EOF, but nothing promises a consumed fd stays usable.
    fn fd(&mut self, purpose: FdPurpose, data: Vec<u8>) -> String {
        let fd = 3 + self.fds.len() as i32;
        self.fds.push(ExtraFd { fd, purpose, data });
        fd.to_string()
    }

    /// An empty file with `mode` over `p` (a denied file, or a missing read-only path).
    fn data_file(&mut self, mode: &str, p: &Path) -> Result<()> {
        let fd = self.fd(FdPurpose::Data, Vec::new());
        self.push(&["--perms", mode, "--ro-bind-data", &fd]);
        self.args.push(path_arg(p)?);
        Ok(())
    }
}

pub fn build(req: &PlanRequest) -> Result<LaunchPlan> {
    let policy = req.policy;
    if req.bwrap.is_some_and(|b| b.proc_unmountable) {
        // `--ro-bind /proc /proc` would show every host process; never weaken silently.
        return Err(SandboxError::unavailable(
            "bwrap cannot mount a fresh /proc here (the container masks /proc), and sandspawn will not \
             fall back to the host's /proc",
            "run the container with `--security-opt systempaths=unconfined` (Docker/Podman), or use \
             sandbox 'danger-full-access' inside a disposable container",
        ));
    }
    let mut a = Argv { args: Vec::new(), fds: Vec::new() };
    a.push(&["--new-session", "--die-with-parent"]);
    // Its number is only known once every extra fd is allocated; patched at the end.
    let status_at = req.with_status_fd.then(|| {
        a.push(&["--json-status-fd", ""]);
        a.args.len() - 1
    });
    a.push(&["--unshare-user"]);
    // Without this the command could create a user namespace and regain capabilities in it.
    if req.bwrap.is_none_or(|b| b.disable_userns) {
        a.push(&["--disable-userns"]);
    }
    a.push(&["--cap-drop", "ALL", "--unshare-pid"]);
    if !policy.network {
        a.push(&["--unshare-net"]);
    }
    a.push(&["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
    for (flag, p) in PROC_COVERS {
        a.push(&[flag, p, p]);
    }

    if policy.tmp == TmpMode::Private {
        // Before every writable bind, so roots under /tmp (a cwd under /tmp) are bound on top of it.
        a.push(&["--tmpfs", "/tmp"]);
        // A read-only cwd under /tmp must stay visible, or the command could not even start in it.
        if req.cwd.starts_with("/tmp") && !policy.is_writable(req.cwd) {
            a.path("--ro-bind", req.cwd)?;
        }
    }

    let roots = &policy.writable_roots;
    let deepest_root = |p: &Path| {
        roots.iter().enumerate().filter(|(_, r)| p.starts_with(&r.root)).max_by_key(|(_, r)| r.root.components().count()).map(|(i, _)| i)
    };
    let root_paths: Vec<&Path> = roots.iter().map(|r| r.root.as_path()).collect();
    for d in policy.deny_read.iter().filter(|d| deepest_root(d).is_none()) {
        deny(&mut a, d, &root_paths)?;
    }
    for (i, root) in roots.iter().enumerate() {
        a.path("--bind", &root.root)?;
        let mut carve: Vec<(&Path, Option<PlaceholderKind>)> = root.read_only.iter().map(|p| (p.as_path(), None)).collect();
        carve.extend(root.missing_read_only.iter().map(|m| (m.path.as_path(), Some(m.kind))));
        carve.sort_by_key(|(p, _)| p.components().count()); // stable: keeps the policy's order per depth
        for (p, missing) in carve {
            match missing {
                None => a.path("--ro-bind", p)?,
                // An empty read-only directory: `mkdir .git` fails and nothing can be put in it.
                Some(PlaceholderKind::Dir) => {
                    a.push(&["--perms", "555", "--tmpfs", &path_arg(p)?, "--remount-ro", &path_arg(p)?]);
                }
                Some(PlaceholderKind::File) => a.data_file("444", p)?,
            }
        }
        for d in policy.deny_read.iter().filter(|d| deepest_root(d) == Some(i)) {
            deny(&mut a, d, &root_paths)?;
        }
    }

    if !policy.network && policy.unix_sockets == UnixSockets::Blocked {
        let filter = seccomp::unix_socket_filter().ok_or_else(|| {
            SandboxError::unsupported(format!(
                "blocking Unix sockets needs a seccomp filter, which sandspawn has only for x86_64 and aarch64 \
                 (this is {}); set sandbox.allowUnixSockets: true to run without it",
                std::env::consts::ARCH
            ))
        })?;
        let fd = a.fd(FdPurpose::Seccomp, filter);
        a.push(&["--seccomp", &fd]);
    }

    // The dynamic loader variables must not reach bwrap itself (it may be setuid, and a caller's
    // LD_PRELOAD has no business running inside the sandbox tool); they are set for the command.
    let mut env = child_env(req, SandboxType::Bwrap);
    let loader: Vec<String> = env.keys().filter(|k| k.starts_with("LD_")).cloned().collect();
    for name in loader {
        let value = env.remove(&name).unwrap_or_default();
        a.push(&["--setenv", &name, &value]);
    }

    a.push(&["--chdir", &path_arg(req.cwd)?, "--"]);
    // Unchanged: bwrap execvp()s it, so a bare name is looked up in the child's PATH.
    a.args.extend(req.command.iter().cloned());

    let status_fd = status_at.map(|at| {
        let fd = 3 + a.fds.len() as i32;
        a.args[at] = fd.to_string();
        fd
    });
    Ok(LaunchPlan {
        program: req.bwrap.map(|b| b.path.clone()).unwrap_or_else(|| PathBuf::from(DEFAULT_BWRAP)),
        argv0: "bwrap".into(),
        args: a.args,
        env,
        cwd: req.cwd.to_path_buf(),
        sandbox_type: SandboxType::Bwrap,
        profile: None,
        extra_fds: a.fds,
        status_fd,
    })
}

/// Hide `p`. A directory becomes an empty read-only tmpfs; the mount points of writable roots below
/// it are made with `--dir` *before* `--remount-ro` (bwrap cannot mkdir in a read-only tmpfs), and
/// those roots are bound on top later. A file becomes an empty file nobody can read (mode 000: the
/// sandbox has no CAP_DAC_OVERRIDE after `--cap-drop ALL`).
fn deny(a: &mut Argv, p: &Path, roots: &[&Path]) -> Result<()> {
    if !p.is_dir() {
        return a.data_file("000", p);
    }
    let ps = path_arg(p)?;
    a.push(&["--tmpfs", &ps]);
    let mut dirs: Vec<PathBuf> = Vec::new();
    for r in roots.iter().filter(|r| r.starts_with(p) && **r != p) {
        let mut d = p.to_path_buf();
        for c in r.strip_prefix(p).expect("checked").components() {
            d.push(c);
            dirs.push(d.clone());
        }
    }
    dirs.sort_by(|x, y| x.components().count().cmp(&y.components().count()).then_with(|| x.cmp(y)));
    dirs.dedup();
    for d in dirs {
        a.push(&["--dir", &path_arg(&d)?]);
    }
    a.push(&["--remount-ro", &ps]);
    Ok(())
}
