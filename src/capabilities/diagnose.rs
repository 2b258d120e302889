//! Turning what bwrap (or sandbox-exec) printed into a cause, a reason in words and a concrete fix.
//!
//! `diagnose_bwrap_failure` is pure: it only looks at the text. `diagnose_with_host` refines the
//! result with facts read from the host (`/proc/sys/...`, container markers), which is what the
//! probe and the runner should use.

use serde::Serialize;

use crate::error::ErrorCode;

/// Why bwrap (or sandbox-exec) failed, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnosis {
    /// `Unavailable` when the host cannot run the sandbox at all, `SetupFailed` when only this run's
    /// mounts failed.
    pub code: ErrorCode,
    /// A short stable id, e.g. `apparmor-userns` (see `ALL_CAUSES`).
    pub cause: &'static str,
    /// What is wrong, in words.
    pub reason: String,
    /// How to fix it: concrete commands.
    pub fix: String,
}

/// Every cause id this module can produce.
pub const ALL_CAUSES: &[&str] = &[
    "userns-disabled",
    "docker-seccomp",
    "kernel-no-userns",
    "nesting-limit",
    "caps-missing",
    "apparmor-userns",
    "proc-readonly",
    "netns-denied",
    "container-apparmor",
    "proc-masked",
    "setuid-unsupported",
    "file-caps",
    "old-bwrap",
    "mount-failed",
    "mount-limit",
    "bad-source",
    "mount-point-failed",
    "nested-seatbelt",
    "seatbelt-failed",
    "bwrap-missing",
    "bwrap-too-old",
    "not-allowed",
    "bwrap-override-invalid",
    "bwrap-exec-failed",
    "probe-timeout",
    "unsupported-platform",
    "helper-unusable",
    "resource-shortage",
    "unknown",
];

/// The cause of a failure for lack of something other processes hold right now (this user's
/// processes, memory, open files): it passes when they end. It is a setup failure of this run,
/// never "the sandbox is unavailable here" (whose fixes turn the sandbox off), and never cached.
pub const RESOURCE_SHORTAGE: &str = "resource-shortage";

/// The errnos that mean "not now" rather than "never", with `strerror`'s words for them (as bwrap
/// prints them after its own message; the longer ENFILE text before EMFILE's, which it contains).
const SHORTAGE_WORDS: &[(&str, i32)] = &[
    ("resource temporarily unavailable", libc::EAGAIN),
    ("cannot allocate memory", libc::ENOMEM),
    ("too many open files in system", libc::ENFILE),
    ("too many open files", libc::EMFILE),
];

/// The resource `errno` says is short, in words, and how to look at its limit; `None` for an errno
/// that does not mean a shortage.
fn short_resource(errno: i32) -> Option<(&'static str, &'static str)> {
    match errno {
        libc::EAGAIN => Some((
            "processes: this user's processes and threads reached a per-user limit (RLIMIT_NPROC, `ulimit -u`, which \
             counts every process of the user, other runs' and other programs' included), or a cgroup's pids.max",
            "if it persists, see what holds them (`ps -L -u $(id -u) | wc -l`) or raise the limit",
        )),
        libc::ENOMEM => Some(("memory", "if it persists, free memory")),
        libc::EMFILE => Some(("open files of this process (RLIMIT_NOFILE, `ulimit -n`)", "if it persists, raise `ulimit -n`")),
        libc::ENFILE => Some(("open files of the whole system (fs.file-max)", "if it persists, see what holds them or raise fs.file-max")),
        _ => None,
    }
}

/// A failure for lack of a resource (`errno`): `what` failed (`said`: in whose words). A setup
/// failure to retry, not a property of the host.
fn resource_shortage(what: &str, errno: i32, said: &str) -> Option<Diagnosis> {
    let (resource, persists) = short_resource(errno)?;
    Some(d(
        ErrorCode::SetupFailed,
        RESOURCE_SHORTAGE,
        format!("{what} for lack of {resource}; nothing ran{said}"),
        format!("retry the run when fewer processes run: the shortage passes when the processes holding the resource end; {persists}"),
    ))
}

/// `what` failed with `e`: the diagnosis when `e` is a shortage that passes (EAGAIN, ENOMEM,
/// EMFILE, ENFILE), `None` for any other error.
pub fn shortage_error(what: &str, e: &std::io::Error) -> Option<Diagnosis> {
    resource_shortage(what, e.raw_os_error()?, &format!(" ({})", sandspawn_helper::report::os_words(e)))
}

/// May this cause pass by itself (so that a probe that found it must be made again next time)?
/// ENOSPC from creating a namespace (`nesting-limit`) is either nesting, which stays, or this
/// user's user namespaces at `user.max_user_namespaces`, which pass.
pub fn may_pass(cause: &str) -> bool {
    cause == RESOURCE_SHORTAGE || cause == "nesting-limit"
}

// ---- fix texts -------------------------------------------------------------------------------

pub(crate) const FIX_INSTALL_BWRAP: &str = "install bubblewrap: `sudo apt-get install -y bubblewrap` \
(Debian/Ubuntu), `sudo dnf install bubblewrap` (Fedora/RHEL), `apk add bubblewrap` (Alpine), \
`sudo pacman -S bubblewrap` (Arch); or point SANDSPAWN_BWRAP at an absolute path to bwrap";

pub(crate) const FIX_DOCKER: &str = "inside Docker/Podman, start the container with `--security-opt seccomp=unconfined \
--security-opt apparmor=unconfined` (or `--privileged`), or use sandbox: 'danger-full-access' inside a \
disposable container (the container is then the sandbox)";

const FIX_USERNS_SYSCTL: &str =
    "allow unprivileged user namespaces: `sudo sysctl -w kernel.unprivileged_userns_clone=1` \
(Debian, older Ubuntu) and/or `sudo sysctl -w user.max_user_namespaces=15000` (RHEL/CentOS); persist it in \
/etc/sysctl.d/99-sandspawn.conf";

const FIX_APPARMOR: &str = "allow bwrap to use user namespaces under AppArmor (Ubuntu 23.10+/24.04, GitHub Actions \
ubuntu-24.04 runners): either `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (persist in \
/etc/sysctl.d/60-apparmor-userns.conf), or allow only bwrap by writing \
`abi <abi/4.0>, include <tunables/global> profile bwrap /usr/bin/bwrap flags=(unconfined) { userns, }` to \
/etc/apparmor.d/bwrap and running `sudo systemctl reload apparmor` (Ubuntu 25.04+ ships this as the \
bwrap-userns-restrict profile; on 24.04 `sudo apt-get install apparmor-profiles` and copy it from \
/usr/share/apparmor/extra-profiles/). In a container this must be done on the host";

const FIX_PROC: &str = "give the sandbox a mountable /proc: in Docker run the container with \
`--security-opt systempaths=unconfined` (Podman: `--security-opt unmask=ALL`), or run sandspawn outside \
the enclosing container/sandbox, or use sandbox: 'danger-full-access' inside a disposable container. \
sandspawn does not fall back to exposing the host's /proc";

const FIX_NESTED: &str = "run sandspawn outside the enclosing sandbox (another bwrap/sandspawn/Codex/Claude Code \
sandbox started with --disable-userns), or use sandbox: 'danger-full-access' inside the outer sandbox";

pub(crate) const FIX_UPGRADE: &str =
    "upgrade bubblewrap to 0.8.0 or newer (`sudo apt-get install -y bubblewrap` on Debian 12+/Ubuntu \
24.04+, `sudo dnf install bubblewrap`, `apk add bubblewrap`), or point SANDSPAWN_BWRAP at a newer bwrap";

fn d(code: ErrorCode, cause: &'static str, reason: impl Into<String>, fix: impl Into<String>) -> Diagnosis {
    Diagnosis { code, cause, reason: reason.into(), fix: fix.into() }
}

/// The first line of `stderr` that contains `needle` (case-insensitive), trimmed, for quoting.
fn line_with<'a>(stderr: &'a str, needle: &str) -> &'a str {
    let needle = needle.to_ascii_lowercase();
    stderr.lines().find(|l| l.to_ascii_lowercase().contains(&needle)).map(str::trim).unwrap_or("")
}

/// Diagnose bwrap's stderr from a failed start. `None` when nothing known matches (the caller then
/// quotes the stderr). Pure: looks at the text only.
pub fn diagnose_bwrap_failure(stderr: &str) -> Option<Diagnosis> {
    use ErrorCode::{SetupFailed, Unavailable};
    let s = stderr.to_ascii_lowercase();
    let has = |n: &str| s.contains(n);
    let quote = |n: &str| {
        let l = line_with(stderr, n);
        let l = l.split_whitespace().collect::<Vec<_>>().join(" ");
        if l.is_empty() {
            String::new()
        } else {
            format!(" (bwrap said: {l})")
        }
    };

    // Order matters: more specific texts first ("nesting depth ... (ENOSPC)" before the mount limit).
    if has("setuid use of bubblewrap is not supported") {
        return Some(d(
            Unavailable,
            "setuid-unsupported",
            format!("this bwrap is installed setuid root but was built without setuid support{}", quote("setuid use")),
            "remove the setuid bit (`sudo chmod u-s $(command -v bwrap)`) and allow unprivileged user namespaces, \
             or reinstall your distribution's bubblewrap package",
        ));
    }
    if has("unexpected capabilities but not setuid") {
        return Some(d(
            Unavailable,
            "file-caps",
            format!("this bwrap has file capabilities but is not setuid{}", quote("unexpected capabilities")),
            "remove the file capabilities (`sudo setcap -r $(command -v bwrap)`) or reinstall your distribution's \
             bubblewrap package",
        ));
    }
    if let Some(pos) = s.find("unknown option") {
        let opt = stderr[pos + "unknown option".len()..].split_whitespace().next().unwrap_or("").to_string();
        return Some(d(
            Unavailable,
            "old-bwrap",
            format!("this bubblewrap is too old: it does not know the option {opt}"),
            FIX_UPGRADE,
        ));
    }
    if let Some((words, errno)) = SHORTAGE_WORDS.iter().find(|(w, _)| has(w)) {
        return resource_shortage("bwrap could not set up the sandbox", *errno, &quote(words));
    }
    if has("no permissions to create new namespace")
        || has("no permissions to creating new namespace")
        || has("no permissions to create a new namespace")
        || has("no permissions to creating a new namespace")
    {
        return Some(d(
            Unavailable,
            "userns-disabled",
            format!(
                "bwrap may not create a user namespace: unprivileged user namespaces are disabled on this kernel, \
                 or a container's seccomp profile blocks them{}",
                quote("no permissions to creat")
            ),
            format!("{FIX_USERNS_SYSCTL}; {FIX_DOCKER}"),
        ));
    }
    if has("kernel does not support user namespaces") {
        return Some(d(
            Unavailable,
            "kernel-no-userns",
            format!("this kernel has no user namespace support{}", quote("does not support user namespaces")),
            "use a kernel built with CONFIG_USER_NS=y (all current distribution kernels), or use sandbox: \
             'danger-full-access' inside a disposable VM/container",
        ));
    }
    if has("nesting depth") || has("max_*_namespaces exceeded") || (has("creating new namespace failed") && has("no space left on device")) {
        return Some(d(
            Unavailable,
            "nesting-limit",
            format!(
                "bwrap may not create another namespace: this process is already inside a sandbox that forbids \
                 nested user namespaces, or user.max_user_namespaces is exhausted{}",
                quote("creating new namespace failed")
            ),
            FIX_NESTED,
        ));
    }
    if has("creating new namespace failed") {
        return Some(d(
            Unavailable,
            "caps-missing",
            format!(
                "bwrap could not create its namespaces: it lacks the needed capabilities (root in a container \
                 without CAP_SYS_ADMIN, or a seccomp filter denying unshare/clone){}",
                quote("creating new namespace failed")
            ),
            format!("{FIX_DOCKER}; on a plain host {FIX_USERNS_SYSCTL}"),
        ));
    }
    if has("setting up uid map") || has("setting up gid map") || has("error writing to setgroups") {
        let which = if has("setting up uid map") {
            "setting up uid map"
        } else if has("setting up gid map") {
            "setting up gid map"
        } else {
            "error writing to setgroups"
        };
        if has("read-only file system") {
            return Some(d(
                Unavailable,
                "proc-readonly",
                format!(
                    "bwrap cannot write its uid/gid map because /proc is read-only here (nested inside another \
                     sandbox or a container){}",
                    quote(which)
                ),
                FIX_PROC,
            ));
        }
        return Some(d(
            Unavailable,
            "apparmor-userns",
            format!(
                "bwrap created a user namespace but was denied mapping users in it; this is AppArmor's \
                 unprivileged-user-namespace restriction (Ubuntu 23.10+){}",
                quote(which)
            ),
            FIX_APPARMOR,
        ));
    }
    if has("failed rtm_newaddr") || has("failed rtm_newlink") || has("loopback: failed") {
        return Some(d(
            Unavailable,
            "netns-denied",
            format!(
                "bwrap cannot set up the loopback device of a new network namespace; AppArmor's \
                 unprivileged-user-namespace restriction (Ubuntu 23.10+) denies the capability{}",
                quote("loopback")
            ),
            FIX_APPARMOR,
        ));
    }
    if has("failed to make / slave") {
        return Some(d(
            Unavailable,
            "container-apparmor",
            format!(
                "bwrap may not change mount propagation; the container's AppArmor profile (docker-default) denies \
                 mount{}",
                quote("slave")
            ),
            "start the container with `--security-opt apparmor=unconfined --security-opt seccomp=unconfined`, \
             or use sandbox: 'danger-full-access' inside a disposable container",
        ));
    }
    if has("can't mount proc on") || has("cannot mount proc on") {
        return Some(d(
            Unavailable,
            "proc-masked",
            format!(
                "bwrap cannot mount a fresh /proc: /proc is masked or partly over-mounted (Docker's default \
                 systempaths, or nested inside another sandbox){}",
                quote("mount proc")
            ),
            FIX_PROC,
        ));
    }
    if has("limit exceeded (enospc)") || has("mount-max") {
        return Some(d(
            SetupFailed,
            "mount-limit",
            format!("the kernel's mount limit was reached{}", quote("enospc")),
            "raise the limit with `sudo sysctl -w fs.mount-max=100000`, or use fewer writable/read-only/deny paths \
             in the policy",
        ));
    }
    if has("can't mount tmpfs") || has("failed to mount tmpfs") || has("can't mount devpts") {
        let n = if has("devpts") { "devpts" } else { "tmpfs" };
        return Some(d(
            SetupFailed,
            "mount-failed",
            format!("bwrap could not mount a {n}{}", quote(n)),
            format!(
                "check the mount point named in the message exists and is not a symlink; {FIX_DOCKER}"
            ),
        ));
    }
    if has("can't find source path") {
        return Some(d(
            SetupFailed,
            "bad-source",
            format!("a path in the policy does not exist{}", quote("can't find source path")),
            "create the path named in the message, or remove it from the policy",
        ));
    }
    if has("can't create file at") || has("can't mkdir") || has("can't create tmpfile") {
        let n = if has("can't create file at") { "can't create file at" } else { "can't mkdir" };
        return Some(d(
            SetupFailed,
            "mount-point-failed",
            format!("bwrap could not create a mount point inside the sandbox{}", quote(n)),
            "the path named in the message (or a parent) is a symlink or on a read-only file system: resolve symlinks \
             in the policy, or create the path before running",
        ));
    }
    None
}

/// Facts about the host that make a diagnosis more precise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostFacts {
    /// `/proc/sys/kernel/apparmor_restrict_unprivileged_userns` (Ubuntu 23.10+).
    pub apparmor_restrict_userns: Option<i64>,
    /// `/proc/sys/kernel/unprivileged_userns_clone` (Debian/Ubuntu patch).
    pub unprivileged_userns_clone: Option<i64>,
    /// `/proc/sys/user/max_user_namespaces`.
    pub max_user_namespaces: Option<i64>,
    /// Running inside Docker/Podman/Kubernetes (`/.dockerenv`, `/run/.containerenv`, `$container`).
    pub in_container: bool,
}

fn read_num(path: &str) -> Option<i64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

impl HostFacts {
    pub fn read() -> HostFacts {
        let cgroup = std::fs::read_to_string("/proc/1/cgroup").unwrap_or_default();
        let in_container = std::path::Path::new("/.dockerenv").exists()
            || std::path::Path::new("/run/.containerenv").exists()
            || std::env::var_os("container").is_some_and(|v| !v.is_empty())
            || ["docker", "kubepods", "containerd", "libpod", "lxc"].iter().any(|k| cgroup.contains(k));
        HostFacts {
            apparmor_restrict_userns: read_num("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
            unprivileged_userns_clone: read_num("/proc/sys/kernel/unprivileged_userns_clone"),
            max_user_namespaces: read_num("/proc/sys/user/max_user_namespaces"),
            in_container,
        }
    }

    /// The sysctl values as one parenthesised note, e.g. ` (max_user_namespaces = 0)`.
    fn note(&self) -> String {
        let mut parts = Vec::new();
        if let Some(v) = self.apparmor_restrict_userns {
            parts.push(format!("kernel.apparmor_restrict_unprivileged_userns = {v}"));
        }
        if let Some(v) = self.unprivileged_userns_clone {
            parts.push(format!("kernel.unprivileged_userns_clone = {v}"));
        }
        if let Some(v) = self.max_user_namespaces {
            parts.push(format!("user.max_user_namespaces = {v}"));
        }
        if self.in_container {
            parts.push("running inside a container".to_string());
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!(" [host: {}]", parts.join(", "))
        }
    }
}

/// `diagnose_bwrap_failure` refined with host facts: the sysctl that is actually off is named, a
/// container is told apart from a host, and the reason ends with the relevant sysctl values.
pub fn diagnose_with_host(stderr: &str, host: &HostFacts) -> Option<Diagnosis> {
    let mut d = diagnose_bwrap_failure(stderr)?;
    let said = stderr
        .lines()
        .find(|l| l.contains("bwrap:"))
        .map(|l| format!(" (bwrap said: {})", l.split_whitespace().collect::<Vec<_>>().join(" ")))
        .unwrap_or_default();
    let userns_related =
        matches!(d.cause, "userns-disabled" | "nesting-limit" | "caps-missing" | "apparmor-userns" | "netns-denied");
    if d.cause == "nesting-limit" && host.max_user_namespaces.is_some_and(|n| n < 1000) {
        // Only suggest raising the limit when it is actually low (never advise lowering it).
        d.fix.push_str(", or raise the limit with `sudo sysctl -w user.max_user_namespaces=15000`");
    }
    if userns_related {
        if host.max_user_namespaces == Some(0) {
            d.cause = "userns-disabled";
            d.code = ErrorCode::Unavailable;
            d.reason = format!("user namespaces are switched off: user.max_user_namespaces is 0{said}");
            d.fix = "`sudo sysctl -w user.max_user_namespaces=15000` (persist in /etc/sysctl.d/99-sandspawn.conf)"
                .to_string();
        } else if d.cause == "userns-disabled" && host.unprivileged_userns_clone == Some(0) {
            d.reason =
                format!("unprivileged user namespaces are disabled: kernel.unprivileged_userns_clone is 0{said}");
            d.fix = "`sudo sysctl -w kernel.unprivileged_userns_clone=1` (persist in /etc/sysctl.d/99-sandspawn.conf)"
                .to_string();
        } else if (d.cause == "userns-disabled" || d.cause == "caps-missing") && host.in_container {
            d.cause = "docker-seccomp";
            d.reason = format!(
                "this container's seccomp profile (Docker's default) blocks creating namespaces, or the host \
                 forbids unprivileged user namespaces{said}"
            );
            d.fix = format!("{FIX_DOCKER}; if the host itself forbids user namespaces: {FIX_USERNS_SYSCTL}");
        } else if (d.cause == "apparmor-userns" || d.cause == "netns-denied")
            && host.apparmor_restrict_userns == Some(1)
        {
            d.reason = format!("{} — kernel.apparmor_restrict_unprivileged_userns is 1", d.reason);
        }
    }
    d.reason.push_str(&host.note());
    Some(d)
}

/// Diagnose `sandbox-exec`'s stderr (macOS). Pure; compiled and tested on every platform.
pub fn diagnose_seatbelt_failure(stderr: &str) -> Option<Diagnosis> {
    let s = stderr.to_ascii_lowercase();
    if s.contains("sandbox_apply") && (s.contains("operation not permitted") || s.contains("not permitted")) {
        return Some(d(
            ErrorCode::Unavailable,
            "nested-seatbelt",
            format!(
                "sandbox-exec cannot apply a profile: this process is already inside a Seatbelt sandbox ({})",
                line_with(stderr, "sandbox_apply")
            ),
            "run sandspawn outside the other sandbox, or use sandbox: 'danger-full-access' inside it",
        ));
    }
    if s.contains("sandbox-exec:") || s.contains("sandbox_compile") || s.contains("sandbox_init") {
        let l = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        return Some(d(
            ErrorCode::Unavailable,
            "seatbelt-failed",
            format!("sandbox-exec failed its self-test: {l}"),
            "check that /usr/bin/sandbox-exec works: `/usr/bin/sandbox-exec -p '(version 1)(allow default)' /usr/bin/true`",
        ));
    }
    None
}
