//! Step two: a parsed policy resolved against the real filesystem and the run's context. After this,
//! every path is absolute and canonical and every platform/combination check has been made, so the
//! plan builders only translate.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::terms::{deepest_root, sort_carve_outs};
use super::parse::{parse, RawPolicy, RawUnixSockets};
use super::held_links::HeldLink;
use super::policy_links::LinkWalks;
use super::kernel_fs::{refuse_kept_root, refuse_kernel_root, MountTable};
use super::paths::{absolute, canonical_lenient, sort_shallowest_first, sort_shallowest_first_by, WalkEnd};
use super::{
    MissingReadOnly, PlaceholderKind, PolicyContext, ResolvedPolicy, SandboxMode, TmpMode, UnixSockets,
    WritableRoot,
};
use crate::error::{Result, SandboxError};
use crate::platform::Platform;

/// Validate the user's `sandbox` option (`None`/null = read-only) and resolve it for one run.
pub fn resolve_policy(value: Option<&Value>, ctx: &PolicyContext) -> Result<ResolvedPolicy> {
    resolve_policy_named(value, ctx, None)
}

/// `resolve_policy` for a run whose cwd the caller named as `named_cwd` (absolute, its links not
/// resolved; `ctx.cwd` is where it led): the symlinks on that way are held as a `writableRoots`
/// path's are (`policy_links::walk_cwd`).
pub fn resolve_policy_named(value: Option<&Value>, ctx: &PolicyContext, named_cwd: Option<&Path>) -> Result<ResolvedPolicy> {
    let raw = parse(value)?;
    if raw.mode == SandboxMode::DangerFullAccess {
        return danger_full_access(&raw, ctx);
    }
    if ctx.platform == Platform::Other {
        return Err(SandboxError::unsupported(format!(
            "sandbox mode '{}' is not supported on {}: only 'danger-full-access' runs here",
            mode_name(raw.mode),
            ctx.platform.as_str()
        )));
    }
    let workspace = raw.mode == SandboxMode::WorkspaceWrite;
    if !workspace && raw.writable_roots.as_ref().is_some_and(|r| !r.is_empty()) {
        return Err(SandboxError::invalid(
            "sandbox.writableRoots",
            "only allowed with mode 'workspace-write' (in 'read-only' nothing is writable)",
        ));
    }
    let tmp = raw.tmp.unwrap_or(if workspace { TmpMode::Writable } else { TmpMode::ReadOnly });
    if tmp == TmpMode::Writable && !workspace {
        return Err(SandboxError::invalid(
            "sandbox.tmp",
            "'writable' needs mode 'workspace-write' (in 'read-only' nothing is writable; use 'private' for a scratch /tmp)",
        ));
    }
    if tmp == TmpMode::Private && ctx.platform == Platform::Darwin {
        return Err(SandboxError::unsupported(
            "sandbox.tmp 'private' is not supported on macOS: Seatbelt cannot give a process its own /tmp",
        ));
    }
    let network = raw.network.unwrap_or(false);
    let unix_sockets = unix_sockets(&raw, network, ctx.platform)?;
    let protect_git = raw.protect_git.unwrap_or(true);

    let protected_names = raw.protected_names.clone().unwrap_or_else(crate::planted::names::defaults);
    // A name of both lists is protected.
    let reported_names: Vec<String> =
        raw.reported_names.clone().unwrap_or_else(crate::planted::names::reported_defaults).into_iter().filter(|n| !protected_names.contains(n)).collect();
    let mounts = MountTable::default();
    // Locked from here to the end of `deny_read`: see `policy_links`.
    let mut walks = LinkWalks::start();
    if workspace {
        walks.walk_cwd(named_cwd, &ctx.cwd)?;
    }
    let (mut roots, mut scan_roots) = if workspace { writable_roots(&raw, ctx, tmp, &mounts, &mut walks)? } else { (Vec::new(), Vec::new()) };
    let reviewed = review_roots(&raw, workspace, ctx.platform, &mut roots, &mut scan_roots)?;
    let mut read_only_paths = read_only_paths(&raw, &mut roots, &mut walks)?;
    read_only_other_mounts(&mut roots, &mut read_only_paths, ctx.platform, &mounts)?;
    if ctx.platform == Platform::Linux {
        let system = super::system_paths::SystemPaths::default();
        super::host_code::keep_host_code(&mut roots, &system);
        super::host_code::refuse_roots_inside(&roots, &ctx.cwd, &system)?;
        super::host_code::refuse_system_roots(&roots, &ctx.cwd, &mounts, &system)?;
        #[cfg(target_os = "linux")]
        super::home_views::refuse_roots_showing_home(&roots, &ctx.cwd, &mounts)?;
    }
    for r in &roots {
        super::hidden::refuse_unsearchable_top(&r.root)?;
    }
    let (deny_read, deny_links, reviewed_deny_links) = deny_read(&raw, &mut roots, &reviewed, walks)?;
    let deny_read = with_other_mounts(deny_read, ctx.platform, &mounts)?;
    // After readOnlyPaths: nothing is walked or created inside them. Reviewed roots are judged on
    // their change set instead (`review::risks`): their `.git` is writable for the run.
    let (mut direct, mut under_review): (Vec<WritableRoot>, Vec<WritableRoot>) = roots.into_iter().partition(|r| !reviewed.contains(&r.root));
    let all_roots: Vec<PathBuf> = direct.iter().chain(&under_review).map(|r| r.root.clone()).collect();
    let planted = crate::planted::protect(
        &mut direct,
        &crate::planted::Request { scan_roots: &scan_roots, all_roots: &all_roots, deny_read: &deny_read, deny_links, protect_git, names: &protected_names, reported: &reported_names, macos: ctx.platform == Platform::Darwin },
    );
    let held: Vec<PathBuf> = under_review.iter_mut().flat_map(|r| std::mem::take(&mut r.missing_read_only)).map(|m| m.path).collect();
    let mut roots: Vec<WritableRoot> = direct.into_iter().chain(under_review).collect();
    sort_shallowest_first_by(&mut roots, |r| &r.root);
    sort_carve_outs(&mut roots);
    let review = raw.review.clone().map(|option| crate::review::option::ReviewPolicy { option, roots: reviewed, held, deny_links: reviewed_deny_links, mounts: None });
    sort_shallowest_first(&mut read_only_paths);

    let mut policy = ResolvedPolicy {
        mode: raw.mode,
        writable_roots: roots,
        deny_read,
        read_only_paths,
        network,
        network_proxy: raw.network_proxy.clone(),
        unix_sockets,
        tmp,
        protect_git,
        protected_names,
        review,
        planted: std::sync::Arc::new(planted),
        landlock_writable_dirs: None,
        tool_caches: crate::tool_caches::ToolCaches::none(),
    };
    // Last: a cache is covered only where no other rule of the policy lies (see `tool_caches`).
    let given = raw.read_only_paths.as_deref().unwrap_or_default();
    policy.tool_caches = crate::tool_caches::resolve(raw.tool_caches.as_ref(), &cache_rules(&policy, &|| confinement(&policy, given, &ctx.env)), &ctx.env, ctx.platform, &ctx.cwd)?;
    // After them: a held home's caches they do not cover stay read-only.
    policy.keep_home_caches(&ctx.env, ctx.platform);
    Ok(policy)
}

/// The `denyRead` paths that exist, canonical. One that does not exist has nothing to hide, and
/// masking it would need a mount point created on the host; but inside a writable root the run
/// could create it, and the next run would resolve the path through what it put there (a link to
/// a directory elsewhere moved the mask off the path the caller named; one to a non-UTF-8 name made
/// every later run fail). So it is held like a missing `readOnlyPaths` entry: its first missing
/// component is kept absent (`missing_read_only`: what a run creates there is moved aside after it
/// and reported; a plan another program runs gets a placeholder), unless a denied path already
/// covers it. Outside every writable root nothing can create it.
/// Second: the symlinks in a directly written root that a path is resolved through (the host's:
/// one a run made at a missing path was moved aside after it). A run could replace one, and the next
/// run's mask would land where it points, leaving the path the caller meant to hide readable; so
/// each is held for the run (`held_links`) and put back after it if changed (`planted::detect`),
/// with those of `writableRoots` and `readOnlyPaths` (`policy_links`, walked by `walks`).
/// A path whose walk meets a link a live run holds is masked where the recorded link led too: that
/// run may have swapped it since. Third: those in reviewed roots, by path: a change set that
/// removes or replaces one is held back (`review::risks`).
fn deny_read(raw: &RawPolicy, roots: &mut [WritableRoot], reviewed: &[PathBuf], mut walks: LinkWalks) -> Result<(Vec<PathBuf>, Vec<HeldLink>, Vec<PathBuf>)> {
    let mut deny_read = Vec::new();
    let mut missing = Vec::new();
    for (i, raw_path) in raw.deny_read.iter().flatten().enumerate() {
        let option = format!("sandbox.denyRead[{i}]");
        let p = absolute(&option, raw_path)?;
        match walks.walk(&p) {
            Some(WalkEnd::At(c)) => deny_read.push(c),
            Some(WalkEnd::Missing(first)) => missing.push(first),
            Some(WalkEnd::TooManyLinks) | None => {}
        }
        match std::fs::canonicalize(&p) {
            Ok(c) => deny_read.push(c),
            Err(_) => {
                let first = walks.past_dangling(canonical_lenient(&option, &p)?.first_missing);
                // Held absent inside a root only if missing, not hidden by a run (`hidden`).
                if first.as_ref().is_some_and(|f| deepest_root(roots, f).is_some()) {
                    super::hidden::refuse_if_hidden(&option, &p)?;
                }
                missing.extend(first);
            }
        }
    }
    sort_shallowest_first(&mut missing);
    for first in missing.into_iter().filter(|m| !deny_read.iter().any(|d| m.starts_with(d))) {
        if let Some(r) = deepest_root(roots, &first) {
            roots[r].missing_read_only.push(MissingReadOnly { path: first, kind: PlaceholderKind::File });
        }
    }
    sort_shallowest_first(&mut deny_read);
    let (links, in_review) = walks.hold(roots, reviewed, &deny_read);
    Ok((deny_read, links, in_review))
}

/// `deny_read` with the other names the host's other mounts of their filesystems give them
/// (`deny_views`, Linux): a mask covers a path, not another mount of the same files.
fn with_other_mounts(deny_read: Vec<PathBuf>, platform: Platform, mounts: &MountTable) -> Result<Vec<PathBuf>> {
    #[cfg(target_os = "linux")]
    if platform == Platform::Linux && !deny_read.is_empty() {
        let mut all = deny_read;
        let table = mounts.bytes("to find other mounts of a denyRead path's filesystem")?;
        all.extend(super::deny_views::other_names(&all, table));
        sort_shallowest_first(&mut all);
        return Ok(all);
    }
    let _ = (platform, mounts);
    Ok(deny_read)
}

/// The other names the host's other mounts give the existing `readOnlyPaths` (`deny_views`,
/// Linux), each kept read-only as the path is: a bind is no copy, so with `/ws` bound from
/// `/data/ws` and `/data` a writable root, `readOnlyPaths: ['/ws/config']` was written as
/// `/data/ws/config`, unreported (found by an attacker's review, rev41). Nothing without
/// `readOnlyPaths`.
fn read_only_other_mounts(roots: &mut [WritableRoot], outside: &mut Vec<PathBuf>, platform: Platform, mounts: &MountTable) -> Result<()> {
    #[cfg(target_os = "linux")]
    if platform == Platform::Linux {
        let kept: Vec<PathBuf> = roots.iter().flat_map(|r| r.read_only.iter()).chain(outside.iter()).filter(|p| p.exists()).cloned().collect();
        if kept.is_empty() {
            return Ok(());
        }
        let table = mounts.bytes("to find other mounts of a readOnlyPaths entry's filesystem")?;
        for name in super::deny_views::other_names(&kept, table) {
            keep_read_only(roots, outside, name, None);
        }
    }
    let _ = (roots, outside, platform, mounts);
    Ok(())
}

/// The `readOnlyPaths`: each inside a writable root is kept read-only there (`WritableRoot::
/// read_only`), or, missing, held absent at its first missing component (a placeholder there blocks
/// creating the path and its parents); unless it is hidden, not missing: a run may have made its
/// directory unsearchable. The rest, outside every writable root, are read-only anyway: returned,
/// for the denial classifier. The symlinks on their way are held as `denyRead`'s are (`policy_links`);
/// a path whose walk meets one a live run holds is kept read-only where the recorded link led too.
fn read_only_paths(raw: &RawPolicy, roots: &mut [WritableRoot], walks: &mut LinkWalks) -> Result<Vec<PathBuf>> {
    let mut outside = Vec::new();
    for (i, raw_path) in raw.read_only_paths.iter().flatten().enumerate() {
        let option = format!("sandbox.readOnlyPaths[{i}]");
        let p = absolute(&option, raw_path)?;
        match walks.walk(&p) {
            Some(WalkEnd::At(c)) => keep_read_only(roots, &mut outside, c, None),
            Some(WalkEnd::Missing(first)) => keep_read_only(roots, &mut outside, first.clone(), Some(first)),
            Some(WalkEnd::TooManyLinks) | None => {}
        }
        let lenient = canonical_lenient(&option, &p)?;
        if lenient.first_missing.is_some() && deepest_root(roots, &lenient.path).is_some() {
            super::hidden::refuse_if_hidden(&option, &lenient.path)?;
        }
        let first_missing = walks.past_dangling(lenient.first_missing);
        keep_read_only(roots, &mut outside, lenient.path, first_missing);
    }
    Ok(outside)
}

/// `path` (canonical up to `first_missing`, when a component is missing) kept read-only.
fn keep_read_only(roots: &mut [WritableRoot], outside: &mut Vec<PathBuf>, path: PathBuf, first_missing: Option<PathBuf>) {
    match (deepest_root(roots, &path), first_missing) {
        (Some(r), None) => roots[r].read_only.push(path),
        (Some(r), Some(first)) => roots[r].missing_read_only.push(MissingReadOnly { path: first, kind: PlaceholderKind::File }),
        (None, _) => outside.push(path),
    }
}

fn mode_name(m: SandboxMode) -> &'static str {
    match m {
        SandboxMode::ReadOnly => "read-only",
        SandboxMode::WorkspaceWrite => "workspace-write",
        SandboxMode::DangerFullAccess => "danger-full-access",
    }
}

/// No sandbox at all. Fields that ask for a restriction are errors rather than ignored, because
/// sandspawn never runs a command with less isolation than was asked for. A restriction given by
/// name counts even where it is another mode's default: `protectGit: true`, `allowUnixSockets:
/// false` or `[]`, like `network: false` (found by an attacker's review, mode30: they were taken
/// and dropped, `.git` writable and every Unix socket of the host reachable, nothing said).
fn danger_full_access(raw: &RawPolicy, ctx: &PolicyContext) -> Result<ResolvedPolicy> {
    let restricting: [(&str, bool); 11] = [
        ("workspace", raw.review.is_some()),
        ("network", raw.network_proxy.is_some()),
        ("protectedNames", raw.protected_names.as_ref().is_some_and(|v| !v.is_empty())),
        ("reportedNames", raw.reported_names.as_ref().is_some_and(|v| !v.is_empty())),
        ("writableRoots", raw.writable_roots.as_ref().is_some_and(|v| !v.is_empty())),
        ("readOnlyPaths", raw.read_only_paths.as_ref().is_some_and(|v| !v.is_empty())),
        ("denyRead", raw.deny_read.as_ref().is_some_and(|v| !v.is_empty())),
        ("network", raw.network == Some(false)),
        ("tmp", raw.tmp.is_some_and(|t| t != TmpMode::Writable)),
        ("protectGit", raw.protect_git == Some(true)),
        ("allowUnixSockets", matches!(&raw.allow_unix_sockets, Some(RawUnixSockets::List(_)) | Some(RawUnixSockets::Bool(false)))),
    ];
    if let Some((name, _)) = restricting.iter().find(|(_, set)| *set) {
        return Err(SandboxError::invalid(
            &format!("sandbox.{name}"),
            "cannot be enforced with mode 'danger-full-access' (no sandbox at all); choose 'read-only' or 'workspace-write'",
        ));
    }
    let mut policy = ResolvedPolicy {
        mode: SandboxMode::DangerFullAccess,
        writable_roots: Vec::new(),
        deny_read: Vec::new(),
        read_only_paths: Vec::new(),
        network: true,
        network_proxy: None,
        unix_sockets: UnixSockets::All,
        tmp: TmpMode::Writable,
        protect_git: false,
        protected_names: Vec::new(),
        review: None,
        planted: Default::default(),
        landlock_writable_dirs: None,
        tool_caches: crate::tool_caches::ToolCaches::none(),
    };
    // Validates the option ('private' is an error here); always 'none'.
    policy.tool_caches = crate::tool_caches::resolve(raw.tool_caches.as_ref(), &cache_rules(&policy, &|| confinement(&policy, &[], &ctx.env)), &ctx.env, ctx.platform, &ctx.cwd)?;
    Ok(policy)
}

fn unix_sockets(raw: &RawPolicy, network: bool, platform: Platform) -> Result<UnixSockets> {
    let list = match &raw.allow_unix_sockets {
        // Left out, the network on allows them (the host's whole network, README).
        None => return Ok(if network { UnixSockets::All } else { UnixSockets::Blocked }),
        Some(RawUnixSockets::Bool(true)) => return Ok(UnixSockets::All),
        // An empty list allows nothing: the same as `false`.
        Some(RawUnixSockets::Bool(false)) => return refused_by_name(network, platform),
        Some(RawUnixSockets::List(l)) if l.is_empty() => return refused_by_name(network, platform),
        Some(RawUnixSockets::List(l)) => l,
    };
    let mut paths = Vec::new();
    for (i, raw_path) in list.iter().enumerate() {
        let option = format!("sandbox.allowUnixSockets[{i}]");
        paths.push(canonical_lenient(&option, &absolute(&option, raw_path)?)?.path);
    }
    if platform == Platform::Linux {
        return Err(SandboxError::unsupported(
            "sandbox.allowUnixSockets: a list of socket paths cannot be enforced on Linux (seccomp sees \
             socket calls, not paths); use true to allow every Unix socket, or false",
        ));
    }
    if network {
        // The network-on profile allows every socket: the list was dropped (mode31).
        return Err(SandboxError::unsupported(
            "sandbox.allowUnixSockets: a list of socket paths with network: true cannot be enforced on macOS (the \
             network-on profile allows every socket, and name lookups go through mDNSResponder's Unix socket); \
             leave allowUnixSockets out to allow Unix sockets, or use a network allow-list",
        ));
    }
    sort_shallowest_first(&mut paths);
    Ok(UnixSockets::Only(paths))
}

/// `allowUnixSockets: false` (or `[]`) given by name: refused even with the network on, where
/// leaving it out allows them. Taken and dropped before (found by an attacker's review, mode31):
/// with `network: true` the command reached Docker's, ssh-agent's or the user's D-Bus socket file
/// and the host's abstract sockets, nothing said; the filter's `inet` socket rule (the Internet
/// families and netlink, no `AF_UNIX`) enforces it on Linux. Seatbelt cannot: with the network on
/// its name lookups go through mDNSResponder's Unix socket.
fn refused_by_name(network: bool, platform: Platform) -> Result<UnixSockets> {
    if network && platform == Platform::Darwin {
        return Err(SandboxError::unsupported(
            "sandbox.allowUnixSockets: false with network: true cannot be enforced on macOS (with the network on, \
             name lookups go through mDNSResponder's Unix socket); leave allowUnixSockets out to allow Unix sockets, \
             or use a network allow-list, which refuses them",
        ));
    }
    Ok(UnixSockets::Blocked)
}

/// cwd, `writableRoots` and (tmp writable) `/tmp` + `$TMPDIR`: canonical, deduplicated, shallowest
/// first. A nested root stays its own entry so its carve-outs are applied after its own bind.
/// Second: the roots walked for repositories (cwd and `writableRoots`; see `planted::Request`).
fn writable_roots(raw: &RawPolicy, ctx: &PolicyContext, tmp: TmpMode, mounts: &MountTable, walks: &mut LinkWalks) -> Result<(Vec<WritableRoot>, Vec<PathBuf>)> {
    // Every root, however named (the cwd, TMPDIR, review mode's), is checked here; see `kernel_fs`.
    refuse_kernel_root("cwd", &ctx.cwd, mounts)?;
    let mut roots = vec![ctx.cwd.clone()];
    for (i, raw_path) in raw.writable_roots.iter().flatten().enumerate() {
        let option = format!("sandbox.writableRoots[{i}]");
        let p = absolute(&option, raw_path)?;
        // The links on its way are held (`policy_links`); one a live run holds that leads elsewhere
        // now than as recorded is refused: which of the two the caller meant is not known.
        let recorded = walks.walk(&p);
        // canonicalize binds a symlinked root's target, which is what bwrap/Seatbelt see anyway.
        let c = match std::fs::canonicalize(&p) {
            Ok(c) => c,
            Err(e) => {
                // A missing path under /sys is named for what it is, not as merely missing.
                refuse_kernel_root(&option, &p, mounts)?;
                return Err(SandboxError::invalid(&option, format!("writable root {} does not exist: {e}", p.display())));
            }
        };
        // Checked in full on what is kept (`p` by its name alone), never on `p` resolved again: a
        // directory above it swapped for a link between two resolutions made the kept root `/dev`
        // while the check saw the workspace (found by an attacker's review, racing a swap of the
        // link back and forth). Before the directory test: a file under /sys is named for what it is.
        refuse_kept_root(&option, &p, &c, mounts)?;
        if recorded.is_some_and(|end| end != WalkEnd::At(c.clone())) {
            return Err(SandboxError::invalid(
                &option,
                format!("writable root {} is reached through a symlink that a sandboxed run still going on changed since it started (it is put back when that run ends): refused rather than make writable where the link leads now", p.display()),
            ));
        }
        if !c.is_dir() {
            return Err(SandboxError::invalid(&option, format!("writable root {} is not a directory", p.display())));
        }
        roots.push(c);
    }
    let mut scan_roots = roots.clone();
    sort_shallowest_first(&mut scan_roots);
    if tmp == TmpMode::Writable {
        let tmpdir = ctx.tmpdir.as_deref().map(Path::new).filter(|p| p.is_absolute());
        for (option, t) in std::iter::once(("sandbox.tmp", Path::new("/tmp"))).chain(tmpdir.map(|t| ("env.TMPDIR", t))) {
            if let Ok(c) = std::fs::canonicalize(t) {
                if c.is_dir() {
                    refuse_kernel_root(option, &c, mounts)?;
                    roots.push(c);
                }
            }
        }
    }
    sort_shallowest_first(&mut roots);
    let roots = roots.into_iter().map(|root| Ok(WritableRoot { id: root_id(&root, ctx.platform)?, root, read_only: Vec::new(), missing_read_only: Vec::new() })).collect::<Result<_>>()?;
    Ok((roots, scan_roots))
}

/// The identity of a writable root (canonical) for a Linux plan (see `WritableRoot::id`).
fn root_id(root: &Path, platform: Platform) -> Result<Option<(u64, u64)>> {
    if platform != Platform::Linux {
        return Ok(None);
    }
    planned_identity(root).map(Some)
}

/// The `(device, inode)` of the directory `dir` (canonical) names, taken without following a
/// symlink: what bwrap binds at that path (a writable root, a pin), or enters (the cwd), must be
/// this directory, which the helper checks (the Landlock mode's helper, that its grant is). A
/// directory on the path replaced by a link since the path was resolved (a concurrent run
/// renaming in its own writable root) fails the run here, rather than bind where the link leads.
pub fn planned_identity(dir: &Path) -> Result<(u64, u64)> {
    crate::no_symlinks::identity(dir).map_err(|e| {
        SandboxError::new(
            crate::error::ErrorCode::SetupFailed,
            format!(
                "{} changed while the sandbox was planned ({e}): a directory on its path was replaced by a symlink, or \
                 removed, since the path was resolved (another process renamed it: a concurrent sandboxed run can, in its \
                 own writable roots); refused rather than bind where a link leads",
                dir.display()
            ),
        )
    })
}

/// `workspace: 'review'`: the reviewed roots (the cwd and `writableRoots`, the outermost of nested
/// ones), after taking every other root inside them out of `roots` (what lies in a reviewed root
/// is reviewed with it, the temporary directories too) and out of the walk (`scan_roots`).
fn review_roots(raw: &RawPolicy, workspace: bool, platform: Platform, roots: &mut Vec<WritableRoot>, scan_roots: &mut Vec<PathBuf>) -> Result<Vec<PathBuf>> {
    if raw.review.is_none() {
        return Ok(Vec::new());
    }
    if !workspace {
        return Err(SandboxError::invalid("sandbox.workspace", "'review' needs mode 'workspace-write' (nothing else writes the workspace)"));
    }
    if platform == Platform::Darwin {
        return Err(SandboxError::unsupported(
            "sandbox.workspace 'review' is not supported on macOS: Seatbelt cannot mount a copy-on-write overlay over the workspace",
        ));
    }
    let mut reviewed: Vec<PathBuf> = Vec::new();
    for r in scan_roots.drain(..) {
        if !reviewed.iter().any(|o| r.starts_with(o)) {
            reviewed.push(r);
        }
    }
    roots.retain(|r| reviewed.contains(&r.root) || !reviewed.iter().any(|o| r.root.starts_with(o)));
    Ok(reviewed)
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;

/// What the tool caches' own resolution needs of the policy resolved so far.
fn cache_rules<'a>(p: &'a ResolvedPolicy, confinement: &'a dyn Fn() -> Vec<u8>) -> crate::tool_caches::Rules<'a> {
    let reviewed = p.review.as_ref().map_or(&[][..], |r| r.roots.as_slice());
    crate::tool_caches::Rules { mode: p.mode, writable_roots: &p.writable_roots, read_only_paths: &p.read_only_paths, deny_read: &p.deny_read, tmp: p.tmp, reviewed, confinement }
}

/// What bounds a run besides its writable roots, canonically (sorted lists, one JSON text): the
/// tool caches' scope key (see `tool_caches::scope::of`). With the command's environment `env`, as
/// a digest (`tool_caches::env_key`): a run given a token must not run what a run without it
/// planted in its caches. `given`: the `readOnlyPaths` as the caller gave them, since the policy's
/// `read_only_paths` keeps only those outside the writable roots (read-only anyway); those inside
/// are the roots' own rules, mixed there with `.git` and what the walk found. Found by an
/// attacker's review (xrun43): a run with `readOnlyPaths: [ws/cfg]` alone planted a tool in its
/// caches that a run of the same cwd without it ran, and the tool wrote `cfg`. A run given none
/// keeps the key it had.
fn confinement(p: &ResolvedPolicy, given: &[String], env: &std::collections::BTreeMap<String, String>) -> Vec<u8> {
    let sorted = |v: &[PathBuf]| {
        let mut v: Vec<String> = v.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        v.sort();
        v
    };
    let read_only: Vec<PathBuf> = p.read_only_paths.iter().cloned().chain(given.iter().map(PathBuf::from)).collect();
    let mut read_only = sorted(&read_only);
    read_only.dedup();
    let mut names = p.protected_names.clone();
    names.sort();
    let value = serde_json::json!({
        "readOnlyPaths": read_only,
        "denyRead": sorted(&p.deny_read),
        "protectGit": p.protect_git,
        "protectedNames": names,
        "network": p.network,
        "networkProxy": p.network_proxy,
        "unixSockets": format!("{:?}", p.unix_sockets),
        "tmp": format!("{:?}", p.tmp),
        "environment": crate::tool_caches::env_key::of(env),
    });
    value.to_string().into_bytes()
}
