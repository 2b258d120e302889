//! The Seatbelt (macOS `sandbox-exec`) profile and argv for a policy.
//!
//! Paths never appear in the SBPL text: each is passed as `-D<PARAM>=<path>` and referenced as
//! `(param "PARAM")`, so quotes, spaces and non-ASCII in paths cannot change the profile's meaning.
//! SBPL is last-match-wins: deny rules must follow the allows they restrict.

use std::path::{Path, PathBuf};

use super::{child_env, path_arg, LaunchPlan, PlanRequest};
use crate::error::Result;
use crate::platform::SandboxType;
use crate::policy::ResolvedPolicy;

pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// What ordinary tools need under `(deny default)`; modelled on Codex's base policy (itself
/// modelled on Chrome's). POSIX semaphores only by the names Python's multiprocessing makes
/// (`/mp-` and 8 random characters): named semaphores are global on macOS, and Codex's unfiltered
/// `(allow ipc-posix-sem)` let a command open, post, wait on, unlink or pre-create any host
/// program's, and two runs talk through one with the network off (found by an attacker's review).
const BASE: &str = r#"(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow file-write-data (require-all (path "/dev/null") (vnode-type CHARACTER-DEVICE)))
(allow sysctl-read
  (sysctl-name "hw.activecpu") (sysctl-name "hw.busfrequency_compat") (sysctl-name "hw.byteorder")
  (sysctl-name "hw.cacheconfig") (sysctl-name "hw.cachelinesize_compat") (sysctl-name "hw.cpufamily")
  (sysctl-name "hw.cpufrequency_compat") (sysctl-name "hw.cputype") (sysctl-name "hw.l1dcachesize_compat")
  (sysctl-name "hw.l1icachesize_compat") (sysctl-name "hw.l2cachesize_compat") (sysctl-name "hw.l3cachesize_compat")
  (sysctl-name "hw.logicalcpu_max") (sysctl-name "hw.machine") (sysctl-name "hw.memsize")
  (sysctl-name "hw.ncpu") (sysctl-name "hw.nperflevels") (sysctl-name "hw.packages")
  (sysctl-name "hw.pagesize_compat") (sysctl-name "hw.pagesize") (sysctl-name "hw.physicalcpu")
  (sysctl-name "hw.physicalcpu_max") (sysctl-name "hw.logicalcpu") (sysctl-name "hw.model")
  (sysctl-name "hw.tbfrequency_compat") (sysctl-name "hw.vectorunit")
  (sysctl-name "machdep.cpu.brand_string")
  (sysctl-name "kern.argmax") (sysctl-name "kern.hostname") (sysctl-name "kern.maxfilesperproc")
  (sysctl-name "kern.maxproc") (sysctl-name "kern.osproductversion") (sysctl-name "kern.osrelease")
  (sysctl-name "kern.ostype") (sysctl-name "kern.osvariant_status") (sysctl-name "kern.osversion")
  (sysctl-name "kern.secure_kernel") (sysctl-name "kern.usrstack64") (sysctl-name "kern.version")
  (sysctl-name "sysctl.proc_cputype") (sysctl-name "vm.loadavg")
  (sysctl-name-prefix "hw.optional.arm.") (sysctl-name-prefix "hw.optional.armv8_")
  (sysctl-name-prefix "hw.perflevel") (sysctl-name-prefix "kern.proc.pgrp.")
  (sysctl-name-prefix "kern.proc.pid.") (sysctl-name-prefix "net.routetable."))
(allow sysctl-write (sysctl-name "kern.grade_cputype"))
(allow iokit-open (iokit-registry-entry-class "RootDomainUserClient"))
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.PowerManagement.control")
  (global-name "com.apple.cfprefsd.daemon")
  (global-name "com.apple.cfprefsd.agent"))
(allow ipc-posix-sem (ipc-posix-name-prefix "/mp-"))
(allow ipc-posix-shm-read* ipc-posix-shm-write-create ipc-posix-shm-write-unlink
  (ipc-posix-name-regex #"^/__KMP_REGISTERED_LIB_[0-9]+$"))
(allow ipc-posix-shm-read* (ipc-posix-name-prefix "apple.cfprefs."))
(allow user-preference-read)
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))
(allow file-read* file-write*
  (require-all (regex #"^/dev/ttys[0-9]+") (extension "com.apple.sandbox.pty")))
(allow file-ioctl (regex #"^/dev/ttys[0-9]+"))
"#;

/// What `(allow file-read*)` would give of the other terminals' pty slaves, taken back.
/// (Their metadata stays readable: `ps` and `tty` name terminals by it.)
const OTHER_TERMINALS: &str = r#"(deny file-read-data file-write-data (regex #"^/dev/ttys[0-9]+"))
(allow file-read-data file-write-data (require-all (regex #"^/dev/ttys[0-9]+") (extension "com.apple.sandbox.pty")))
"#;

/// The profile text and its `-D` parameters, in order. `proxy_port`: the run's allow-list proxy on
/// the host's loopback (with a `NetworkPolicy`; without it such a policy gets no network at all).
/// `own`: sandspawn's own files (see `own_files`), which stay read-only and in place.
pub fn profile(policy: &ResolvedPolicy, proxy_port: Option<u16>, own: &[PathBuf], stores: &[PathBuf]) -> (String, Vec<(String, PathBuf)>) {
    let mut params: Vec<(String, PathBuf)> = Vec::new();
    let mut param = |name: String, p: &Path| {
        params.push((name.clone(), p.to_path_buf()));
        format!("(param \"{name}\")")
    };
    let mut s = String::from(BASE);

    s.push_str("(allow file-read*)\n");
    let mut denied = Vec::new();
    for (i, d) in policy.deny_read.iter().enumerate() {
        // `literal` for the path itself, `subpath` for everything under it (a file has no subpath);
        // in its decomposed spelling too (`other_spellings`).
        let filters: String = other_spellings(format!("DENY_READ_{i}"), d).iter().map(|(n, p)| {
            let p = param(n.clone(), p);
            format!(" (literal {p}) (subpath {p})")
        }).collect();
        s.push_str(&format!("(deny file-read*{filters})\n"));
        denied.push(filters);
    }
    // Not the user's other terminals: a pty slave is its owner's to read and write, and one read
    // takes what the user types in another window, passwords included (found by an attacker's
    // review). Only a pty the command opened itself (Seatbelt gives it the extension) stays open.
    s.push_str(OTHER_TERMINALS);

    if !policy.writable_roots.is_empty() {
        s.push_str(&writable_roots(policy, &mut param));
        // Denied paths under a writable root stay unwritable as well as unreadable.
        for filters in &denied {
            s.push_str(&format!("(deny file-write*{filters})\n"));
        }
        // sandspawn's own files in a writable root: what the host runs next (the next `require`,
        // the helper in front of sandbox-exec) must not change (found by an attacker's review:
        // only the bwrap plan kept them).
        let own: Vec<PathBuf> = own.iter().filter(|o| policy.writable_roots.iter().any(|r| o.starts_with(&r.root))).cloned().collect();
        for (i, o) in own.iter().enumerate() {
            let o = param(format!("OWN_FILE_{i}"), o);
            s.push_str(&format!("(deny file-write* (literal {o}) (subpath {o}))\n"));
        }
        // The directories above a read-only or denied path the rules name by path (`pins`), and
        // above an own file: renamed, they would carry it out of its rules (as sandbox-runtime
        // blocks moves: a rename needs `file-write-unlink` on what it moves).
        // And above sandspawn's stores (found by an attacker's review of the bwrap plan: a run
        // renamed the stores' parent away, out of the rules that name them by path, and read and
        // rewrote pending change sets there).
        let mut keep = super::pins::kept(policy);
        keep.extend(own);
        keep.extend(stores.iter().cloned());
        // And each writable root nested in another, with the directories between them (as bwrap
        // pins them).
        let mut held = super::pins::above(policy, &keep);
        held.extend(super::pins::nested_roots(policy));
        held.sort();
        held.dedup();
        for (k, dir) in held.iter().enumerate() {
            let d = param(format!("KEEP_IN_PLACE_{k}"), dir);
            s.push_str(&format!("(deny file-write-unlink (literal {d}))\n"));
        }
        s.push_str(&super::seatbelt_planted::rules(policy));
    }
    // Nor sandspawn's stores, after the writable roots that may hold them (a cwd of $HOME): what
    // runs of other workspaces wrote into their caches (the run's own directories are allowed
    // again last, below). Metadata stays readable, so that a tool's `mkdir -p` of its own cache
    // directory still finds the directories above it.
    for (i, store) in stores.iter().enumerate() {
        let p = param(format!("STORE_{i}"), store);
        s.push_str(&format!("(deny file-read-data file-write* (subpath {p}))\n"));
    }
    // Last: the private caches' store directories (macOS, see `tool_caches::macos`) are the tools'
    // to write whole (cargo's git checkouts hold `.git` directories); the store holds no carve-out
    // or denyRead entry, or no cache is covered.
    let dirs: Vec<&PathBuf> = policy.tool_caches.caches.iter().filter_map(|c| c.dir.as_ref()).collect();
    if !dirs.is_empty() {
        s.push_str("(allow file-read* file-write*");
        for (i, d) in dirs.into_iter().enumerate() {
            s.push_str(&format!(" (subpath {})", param(format!("TOOL_CACHE_{i}"), d)));
        }
        s.push_str(")\n");
    }

    let (network, sockets) = super::seatbelt_network::rules(policy, proxy_port);
    s.push_str(&network);
    for (i, sock) in sockets.iter().enumerate() {
        let p = param(format!("UNIX_SOCKET_{i}"), sock);
        s.push_str(&format!("(allow network-outbound (remote unix-socket (path-literal {p})))\n"));
    }
    (s, params)
}

/// `path` as `name`, and the other spellings the kernel may name its entry by: decomposed (as
/// `name_NFD`) when it has letters outside ASCII, and without `/System/Volumes/Data` (as
/// `name_FIRMLINKED`, with its own `_NFD`). Seatbelt judges an existing entry by the name stored on
/// disk, APFS stores a name as it was created (Cocoa's file-system representation, so Finder's, is
/// decomposed), and a path given composed missed it (found by an attacker's review, seat40:
/// `denyRead: [Privé]` left `Prive\u{301}/key` readable); and the data volume's folders are
/// firmlinked at `/` (`/Users`), the path the kernel gives (unverified on a Mac), so a `denyRead`
/// given through `/System/Volumes/Data` missed `/Users/...`. A path given decomposed is matched as
/// given (no composition table). Each extra spelling only widens the rule it is in.
fn other_spellings(name: String, path: &Path) -> Vec<(String, PathBuf)> {
    let mut out = vec![(name.clone(), path.to_path_buf())];
    if let Ok(rest) = path.strip_prefix("/System/Volumes/Data") {
        if rest.components().next().is_some() {
            out.push((format!("{name}_FIRMLINKED"), Path::new("/").join(rest)));
        }
    }
    for (n, p) in out.clone() {
        let nfd = p.to_str().map(super::seatbelt_case::decomposed).filter(|d| d.as_str() != p.as_os_str());
        out.extend(nfd.map(|d| (format!("{n}_NFD"), PathBuf::from(d))));
    }
    out
}

/// `(allow file-write* ...)`: one clause per writable root, its subpath minus its carve-outs and
/// minus those of every root inside it. The clauses are a union, so a root's carve-outs must be
/// excluded from the clause of each root that holds it too (found by an attacker's review: with
/// the cwd `mono/pkg` and `writableRoots: [mono]`, or a workspace in the writable `/tmp`, the outer
/// root's clause allowed the workspace's `core.hooksPath` directory, its `readOnlyPaths` and the
/// targets of its hook links). A root inside another root's carve-out stays writable by its own
/// clause, as on Linux, where its bind comes after the carve-out's.
fn writable_roots(policy: &ResolvedPolicy, param: &mut impl FnMut(String, &Path) -> String) -> String {
    let roots = &policy.writable_roots;
    // Parameters in the order they always had: each root, then its carve-outs.
    let mut named: Vec<(String, Vec<String>)> = Vec::new();
    for (i, root) in roots.iter().enumerate() {
        let r = param(format!("WRITABLE_ROOT_{i}"), &root.root);
        let carve = root.read_only.iter().chain(root.missing_read_only.iter().map(|m| &m.path));
        let spelled = carve.enumerate().flat_map(|(j, c)| other_spellings(format!("WRITABLE_ROOT_{i}_RO_{j}"), c));
        named.push((r, spelled.map(|(n, c)| param(n, &c)).collect()));
    }
    let mut s = String::from("(allow file-write*");
    for (i, outer) in roots.iter().enumerate() {
        let mut excl = String::new();
        // Its own first, then those of the roots it holds (a root given twice: each the other's).
        let held = (0..roots.len()).filter(|&k| k == i || roots[k].root.starts_with(&outer.root));
        for k in std::iter::once(i).chain(held.filter(|&k| k != i)) {
            excl.push_str(&carve_outs(policy, &roots[k], &outer.root, &named[k].1));
        }
        s.push_str(&format!("\n  (require-all (subpath {}){excl})", named[i].0));
    }
    s.push_str(")\n");
    s
}

/// The `require-not` filters that take `root`'s carve-outs (`params`: their `(param ...)`s) out of
/// the clause of `clause_root` (`root` or a root holding it).
fn carve_outs(policy: &ResolvedPolicy, root: &crate::policy::WritableRoot, clause_root: &Path, params: &[String]) -> String {
    let mut excl = String::new();
    for c in params {
        // Both: `literal` blocks creating a missing path (mkdir .git), `subpath` everything in it.
        excl.push_str(&format!(" (require-not (literal {c})) (require-not (subpath {c}))"));
    }
    // A missing one in any case too (`seatbelt_case`): created as `~/.SSH`, it is `~/.ssh`
    // to sshd on a case-insensitive volume. An existing one is named by its entry's name.
    // Not the names `seatbelt_planted` denies at any depth anyway (one regex each, dozens).
    // Below the clause's root: in an outer root's clause the inner root's own names are matched
    // in any case as well (`MONO/PKG/.Envrc` is `mono/pkg/.envrc`), and no sibling of it is.
    for m in root.missing_read_only.iter().filter(|m| !super::seatbelt_planted::denied_by_name(policy, &root.root, &m.path)) {
        if let Some(re) = super::seatbelt_case::below_root(clause_root, &m.path) {
            excl.push_str(&format!(" (require-not (regex #\"{re}\"))"));
        }
    }
    excl
}

/// With a terminal, `/dev/tty` (the controlling terminal by its generic name) must open, or ssh,
/// sudo, getpass and git's credential prompts fail. Unverified on a Mac.
const TERMINAL: &str = "(allow file-read* file-write* file-ioctl (literal \"/dev/tty\"))\n";

/// Last: no set-user-ID or set-group-ID bit on anything. Since macOS 12.3 `file-write*` no longer
/// covers `file-write-setugid` (Homebrew/brew#13404, which then had to allow it by name), but on
/// older systems it does, and a command could then leave a set-ID program in a writable root (found by an attacker's review: the profile named the operation
/// nowhere). On Linux the helper's seccomp filter refuses the bits (`SET_ID_MODES`).
const NO_SET_ID: &str = "(deny file-write-setugid)\n";

pub fn build(req: &PlanRequest) -> Result<LaunchPlan> {
    if req.policy.network_proxy.is_some() && req.proxy.is_none() {
        return Err(super::proxy_needs_runner());
    }
    // sandspawn's own files, and the helper that runs in front of sandbox-exec (pty, limits); a
    // writable root inside them is refused (`pins::plan` says so).
    let mut own: Vec<PathBuf> = req.own_files.to_vec();
    own.extend(req.helper.map(Path::to_path_buf));
    super::pins::roots_outside_own(&req.policy.writable_roots, &own)?;
    let (mut text, params) = profile(req.policy, req.proxy.map(|e| e.port), &own, req.stores);
    if req.terminal {
        text.push_str(TERMINAL);
    }
    text.push_str(NO_SET_ID);
    let mut args = vec!["-p".to_string(), text.clone()];
    for (name, p) in &params {
        args.push(format!("-D{name}={}", path_arg(p)?));
    }
    args.push("--".into());
    args.extend(req.command.iter().cloned());
    let plan = LaunchPlan {
        program: PathBuf::from(SANDBOX_EXEC),
        argv0: "sandbox-exec".into(),
        args,
        env: env(req),
        cwd: req.cwd.to_path_buf(),
        sandbox_type: SandboxType::Seatbelt,
        profile: Some(text),
        status_fd: None,
        report_fd: None,
        helper: None,
        net_ctl_fd: None,
        control_fd: None,
        inside_args_at: None,
    };
    // With a terminal the helper runs in front of sandbox-exec to take it (see `limited`).
    Ok(plan)
}

/// The child's environment: the caller's with sandspawn's markers, the private caches' variables,
/// and with the allow-list the proxy's variables.
fn env(req: &PlanRequest) -> std::collections::BTreeMap<String, String> {
    let mut env = child_env(req, SandboxType::Seatbelt);
    for c in &req.policy.tool_caches.caches {
        env.extend(c.variables.clone());
    }
    // The caches' variables append to the caller's (MAVEN_OPTS), as it was before `child_env`.
    super::child_env::without_users_proxy(req, &mut env);
    if let Some(endpoint) = req.proxy {
        let java = env.get("JAVA_TOOL_OPTIONS").cloned();
        env.extend(super::seatbelt_network::variables(endpoint, java.as_deref()));
    }
    env
}

/// Test helper: is `text` a sequence of balanced, well-formed S-expressions? Respects `"..."`
/// strings (with `\` escapes), `#"..."` regex literals and `;` comments.
#[cfg(test)]
pub(crate) fn check_sexpr(text: &str) -> std::result::Result<(), String> {
    let mut depth = 0i32;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("unbalanced ')' at {i}"));
                }
            }
            ';' => {
                for (_, c) in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '#' => {
                if chars.next().map(|(_, c)| c) != Some('"') {
                    return Err(format!("'#' not starting a regex literal at {i}"));
                }
                skip_string(&mut chars).ok_or(format!("unterminated regex literal at {i}"))?;
            }
            '"' => skip_string(&mut chars).ok_or(format!("unterminated string at {i}"))?,
            _ => {}
        }
        if depth == 0 && c != ')' && !c.is_whitespace() && c != ';' {
            return Err(format!("atom {c:?} outside any list at {i}"));
        }
    }
    if depth != 0 {
        return Err(format!("{depth} unclosed '('"));
    }
    Ok(())
}

#[cfg(test)]
fn skip_string(chars: &mut std::iter::Peekable<std::str::CharIndices>) -> Option<()> {
    while let Some((_, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next()?;
            }
            '"' => return Some(()),
            _ => {}
        }
    }
    None
}
