//! Everything between validated options and a spawnable plan: is the sandbox available, does the
//! command exist, which placeholders must be reserved, and the plan itself. Runs on a blocking
//! thread because the first call may probe bwrap.

use std::path::Path;

use crate::capabilities;
use crate::error::Result;
use crate::limits::{self, HostFacts, LimitPlan};
use crate::options::SpawnRequest;
use crate::plan::{self, LaunchPlan, PlanRequest};
use crate::platform::Platform;
use crate::policy::SandboxMode;
use crate::program::resolve_program;

use super::scratch::Scratch;

pub struct Prepared {
    pub plan: LaunchPlan,
    /// What `SpawnResult.sandboxDetails` reports.
    pub details: capabilities::SandboxDetails,
    /// How the requested resource limits are enforced.
    pub limits: LimitPlan,
    /// The private tool caches' work directories of this run, removed when dropped.
    pub cache_run: Option<crate::tool_caches::RunGuard>,
    /// The bwrap the plan runs, also when the helper runs in front of it (then it is not
    /// `plan.program`, yet is still setup, not the command: see `Child::command_started`).
    pub bwrap_path: Option<std::path::PathBuf>,
    /// macOS with a `NetworkPolicy`: the proxy's listener the plan names (`network::for_run`).
    pub proxy_listener: Option<crate::network::loopback::Loopback>,
    /// The Landlock mode's directory of the run, removed when dropped (after the run).
    pub scratch: Option<Scratch>,
    /// `workspace: 'review'`: the run's hold on its change set, described once the sandbox is gone.
    pub review_run: Option<crate::review::run::ReviewRun>,
    /// A bwrap run whose walk was left for later (`runner::overlap`): `plan` was built from the
    /// unwalked policy, and only the in-sandbox helper's arguments may differ once it is walked.
    pub walk_deferred: Option<Deferred>,
}

/// What the plan built again after a deferred walk needs (see `Prepared::walk_deferred`).
pub struct Deferred {
    pub bwrap: Option<crate::plan::BwrapInfo>,
    pub resolved: std::path::PathBuf,
}

/// `ended`: whether the run ended meanwhile (its deadline passed, it was killed or aborted: see
/// `supervise::before_spawn`); a step that waits for a lock stops waiting then.
pub fn prepare(req: &mut SpawnRequest, ended: &dyn Fn() -> bool) -> Result<Prepared> {
    // Before anything else: a change set this run begins begins here (see `review::store::Meta`).
    let asked_ns = crate::review::store::realtime_now_ns();
    // First: a limit this host cannot enforce rejects the run before anything is probed.
    let limits = decide_limits(req)?;
    let child_path = req.env.get("PATH").map(String::as_str);
    let resolved = resolve_program(&req.command[0], child_path, &req.cwd)?;
    let sandbox = if req.policy.mode == SandboxMode::DangerFullAccess {
        capabilities::Sandbox { bwrap: None, landlock: false, details: capabilities::SandboxDetails::default() }
    } else {
        // bwrap is looked up in the host's PATH (never in the command's cwd).
        let host_path = std::env::var("PATH").ok();
        let sandbox = capabilities::require_sandbox(req.platform, host_path.as_deref(), &req.cwd, &req.linux)?;
        refuse_override_run_may_write(req)?;
        sandbox
    };
    let bwrap = sandbox.bwrap;
    let mut details = sandbox.details;
    let landlock = details.landlock_abi.is_some() && sandbox.landlock;
    // A bwrap run walks while bwrap sets up (`overlap`): its walk reaches only the helper's arguments.
    // Not where the last such walk changed bwrap's own (`walk_first`).
    let defer_walk = !landlock && linux_sandbox_here(req) && !req.policy.planted.walked && !req.walk_before_spawn && !super::walk_first::take(&req.policy.planted.spec.roots);
    if !defer_walk {
        // Here, on a blocking thread, not while the options were parsed on the JavaScript thread.
        // Stopped when the run is cut: nothing after it (a plan, placeholders, caches) is made for it.
        req.policy.walk_and_protect_until(crate::planted::Absent::UndoneAfter, ended).map_err(|_| cut_while_preparing())?;
        details.not_enforced.extend(policy_not_enforced(req));
    }
    // The store's layers are listed (and held) before the plan that mounts them is built.
    let review_run = prepare_review(req, landlock, asked_ns)?;
    let cache_run = if !landlock && req.policy.mode == SandboxMode::WorkspaceWrite && req.platform == crate::platform::Platform::Linux {
        Some(crate::tool_caches::RunGuard::prepare(&mut req.policy.tool_caches, ended)?)
    } else {
        if req.policy.mode == SandboxMode::WorkspaceWrite && req.platform == crate::platform::Platform::Darwin {
            // The store's directories the tools are pointed at (no layers: see tool_caches::macos).
            crate::tool_caches::macos_run::prepare(&mut req.policy.tool_caches, &req.env)?;
        }
        None
    };
    details.not_enforced.extend(core_dump_not_enforced(req));
    let mut proxy_listener = None;
    let mut scratch = None;
    let plan = match details.landlock_abi {
        Some(abi) if sandbox.landlock => {
            let (plan, run_dir) = build_landlock_plan(req, abi, Path::new(&resolved), &limits, &mut details)?;
            scratch = run_dir;
            plan
        }
        _ => {
            details.not_enforced.extend(write_guard_not_enforced(req));
            proxy_listener = crate::network::for_run::before_plan(&req.policy, req.platform)?;
            let endpoint = proxy_listener.as_ref().map(|l| &l.endpoint);
            match defer_walk {
                false => build_plan(req, bwrap.as_ref(), Some(Path::new(&resolved)), true, &limits, endpoint)?,
                true => plan_walked_or_not(req, &PlanInputs { bwrap: bwrap.as_ref(), resolved: Some(Path::new(&resolved)), runner_fds: true, limits: &limits, proxy: endpoint })?,
            }
        }
    };
    let walk_deferred = defer_walk.then(|| Deferred { bwrap: bwrap.clone(), resolved: resolved.clone() });
    Ok(Prepared { plan, details, limits, cache_run, bwrap_path: bwrap.map(|b| b.path), proxy_listener, scratch, review_run, walk_deferred })
}

/// What the policy leaves unguarded that a run says in `sandboxDetails.notEnforced`, whatever runs
/// it: the runner's result and a launch plan for another spawner (`api::build_sandbox_command`)
/// carry the same lines. Read once the walk is done (`walk_and_protect_until`).
pub(crate) fn policy_not_enforced(req: &SpawnRequest) -> Vec<String> {
    let mut out = Vec::new();
    if req.policy.planted.truncated {
        out.push(format!(
            "planted configuration: the walk for repositories and protected names stopped at its bound ({} directories, {} levels); \
             repositories beyond it are not protected",
            crate::planted::scan::MAX_DIRS,
            crate::planted::scan::MAX_DEPTH
        ));
    }
    // Entries named like protected names past the walk's bound: not recorded before the run.
    out.extend(req.policy.planted.not_enforced());
    // Symlinks into node_modules past the bound: not judged after the run (`planted::unwalked_links`).
    out.extend(req.policy.planted.unwalked_links.not_enforced());
    // Hooks git runs through another name that no carve-out covers (`planted::hook_links`).
    out.extend(req.policy.planted.hook_links.not_enforced());
    // Programs the host's git configuration names through the shell (`global_git::Global::unresolved`).
    out.extend(req.policy.planted.global_git_unresolved.iter().cloned());
    // The host's configuration files that are hard links (`planted::home_hard`): the same.
    out.extend(req.policy.planted.home_hard.not_enforced());
    // The workspace's files the host runs that are hard links (`planted::config_hard`): the same.
    out.extend(req.policy.planted.config_hard.not_enforced());
    // The readOnlyPaths files that are hard links (`planted::read_only_hard`): the same.
    out.extend(req.policy.planted.read_only_hard.iter().cloned());
    // Links held for the run whose records no other process can see (`held_links::unshared_why`).
    if !req.policy.planted.links_on_the_way.is_empty() || !req.policy.planted.deny_links.is_empty() {
        out.extend(crate::policy::held_links::unshared_why());
    }
    // A store the run could write, which it keeps no caches in (`tool_caches::resolve`).
    out.extend(req.policy.tool_caches.not_enforced.iter().cloned());
    // Installs that are hard links into a package manager's store (`tool_caches::linked`).
    out.extend(linked_stores(req));
    // Allowed wildcards that let in every owner's hosts under a suffix (`network::policy`).
    out.extend(req.policy.network_proxy.iter().flat_map(|n| n.spanning_private()));
    out
}

/// Every Linux run sets the command's RLIMIT_CORE to 1 (no piped core): not where the caller's
/// hard limit is 0, and a socket core_pattern takes cores whatever the limit (`limits::core_dump`).
/// Read from this host: a Linux plan built on macOS says nothing of the host it will run on.
pub(crate) fn core_dump_not_enforced(req: &SpawnRequest) -> Vec<String> {
    match linux_sandbox_here(req) {
        true => crate::limits::core_dump::not_enforced(),
        false => Vec::new(),
    }
}

/// What the helper's write guard leaves unjudged on this kernel's Landlock ABI (below 2 it is skipped).
/// The kernel's ABI is asked only on Linux (the number is another system call elsewhere).
pub(crate) fn write_guard_not_enforced(req: &SpawnRequest) -> Vec<String> {
    match linux_sandbox_here(req) {
        true => plan::bwrap::write_guard_not_enforced_at(capabilities::landlock_rung::kernel_abi()).into_iter().map(String::from).collect(),
        false => Vec::new(),
    }
}

/// A sandboxed Linux run, and this host is Linux (a plan can be built for Linux on macOS).
fn linux_sandbox_here(req: &SpawnRequest) -> bool {
    req.platform == Platform::Linux && Platform::host() == Platform::Linux && req.policy.mode != SandboxMode::DangerFullAccess
}

/// Linux: a `SANDSPAWN_BWRAP` this run could re-point or replace (see
/// `capabilities::override_path`) is refused, whatever mechanism runs it (a Landlock run could plant
/// for the next bwrap run too).
pub(crate) fn refuse_override_run_may_write(req: &SpawnRequest) -> Result<()> {
    if req.platform != Platform::Linux || req.policy.mode == SandboxMode::DangerFullAccess {
        return Ok(());
    }
    capabilities::override_path::refuse_writable_by_run(&|p| req.policy.is_writable(p))
}

/// Linux, workspace-write: the writable roots' tops and the cwd (when a writable root holds it)
/// whose packages pnpm or uv linked into a store, of the command's environment or the host
/// process's. A reviewed root is left out: what the run writes there goes to its change set. macOS
/// is too: pnpm and uv clone files on APFS rather than link them.
fn linked_stores(req: &SpawnRequest) -> Vec<String> {
    let p = &req.policy;
    if p.mode != SandboxMode::WorkspaceWrite || req.platform != Platform::Linux {
        return Vec::new();
    }
    let direct = |d: &Path| p.writable_roots.iter().filter(|r| d.starts_with(&r.root)).all(|r| !p.is_reviewed(&r.root));
    let cwd = Some(req.cwd.clone()).filter(|c| p.is_writable(c));
    let dirs: Vec<_> = p.writable_roots.iter().map(|r| r.root.clone()).chain(cwd).filter(|d| direct(d)).collect();
    // The host's environment is copied only where there is something to look for (not on every run).
    if !crate::tool_caches::linked::any_installed(&dirs) {
        return Vec::new();
    }
    // `vars_os`: `vars` panics on a variable that is not UTF-8.
    let host: std::collections::BTreeMap<String, String> = std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
    crate::tool_caches::linked::not_enforced(&dirs, &[&req.env, &host])
}

/// What `prepare` gives for a run cut during its walk: nobody sees it (the run ended already,
/// `supervise::before_spawn`), but it is an error, not a plan.
pub(super) fn cut_while_preparing() -> crate::error::SandboxError {
    crate::error::SandboxError::new(crate::error::ErrorCode::SetupFailed, "the run ended (its timeout passed, or it was killed) while the sandbox was being prepared")
}

/// Open (or begin) the change set of a review-mode run, before its plan names the set's
/// directories. Refused where no overlay can be mounted: the Landlock mode (no mount namespace)
/// and kernels before 5.11 (no overlayfs in user namespaces).
fn prepare_review(req: &mut SpawnRequest, landlock: bool, asked_ns: i64) -> Result<Option<crate::review::run::ReviewRun>> {
    let p = &mut req.policy;
    let Some(review) = p.review.as_mut() else { return Ok(None) };
    if let Some(why) = crate::review::run::unavailable(landlock) {
        return Err(crate::error::SandboxError::unsupported(format!("sandbox.workspace 'review' is not available here: {why}")));
    }
    let ctx = crate::review::run::Context {
        cwd: &req.cwd,
        writable: p.writable_roots.iter().map(|r| r.root.as_path()).collect(),
        deny_read: &p.deny_read,
        private_tmp: p.tmp == crate::policy::TmpMode::Private,
        protect_git: p.protect_git,
        protected_names: &p.protected_names,
        // The walk's names: the protected ones and the report-only tier.
        reported_names: &p.planted.spec.names,
        asked_ns,
        // `npx sandspawn` beside the package that runs: the set must not land a change to it.
        own_links: crate::own_links::entries(req.package_dir.as_deref()),
    };
    crate::review::run::ReviewRun::prepare(review, &ctx).map(Some)
}

/// How `req.limits` are enforced for a plan on `req.platform` (see `limits::decide`).
pub fn decide_limits(req: &SpawnRequest) -> Result<LimitPlan> {
    limits::decide(&req.limits, &HostFacts::read(req.platform, req.policy.mode != SandboxMode::DangerFullAccess))
}

/// The Landlock mode's plan (the runner's only: its supervisor needs the runner's control pipe),
/// and the run's own directory it grants (workspace-write). Its grants are kept in the policy, for
/// the denial classifier; what this policy loses at `abi` goes into `details`.
fn build_landlock_plan(req: &mut SpawnRequest, abi: u32, resolved: &Path, limits: &LimitPlan, details: &mut capabilities::SandboxDetails) -> Result<(LaunchPlan, Option<Scratch>)> {
    if limits.requested(crate::limits::Limit::Processes) {
        // Without a user namespace of its own, RLIMIT_NPROC would count every process of this uid
        // on the host, not the run's: not the limit that was asked for.
        return Err(crate::error::SandboxError::unsupported(
            "limits.processes cannot be enforced in the Landlock mode (without a user namespace the process limit \
             counts every process of this user on the host); drop it, or run where bwrap works",
        ));
    }
    // No mount namespace: the default private caches are unavailable here, and the result says so
    // (`toolCaches.mode: 'none'`: the caches stay read-only); an explicit `toolCaches: 'private'` is
    // refused by the plan, naming the rule.
    if !req.policy.tool_caches.explicit {
        req.policy.drop_tool_caches(&req.env, req.platform);
    }
    details.not_enforced.extend(plan::landlock::policy_not_enforced(&req.policy, abi));
    let scratch = match req.policy.mode {
        SandboxMode::WorkspaceWrite => {
            let (place, shared) = Scratch::place();
            details.not_enforced.extend(shared);
            Some(Scratch::create(&place)?)
        }
        _ => None,
    };
    let scratch_path = scratch.as_ref().map(Scratch::path);
    let helper = crate::helper::require()?;
    let own = crate::own_files::list(req.package_dir.as_deref());
    // sandspawn's stores are kept read-only like its own files: a writable root that holds them (a
    // cwd of $HOME) let the command rewrite a pending change set, which the host's applyChangeSet
    // then followed (found by an attacker's review). Reads cannot be taken away in this mode.
    let mut kept = own.clone();
    kept.extend(plan::stores::to_cover(&req.policy, &req.env)?);
    let grants = plan::landlock_grants::grants(&req.policy, &kept, scratch_path.as_slice())?;
    req.policy.landlock_writable_dirs = Some(grants.dirs.clone());
    let plan = plan::landlock::build(
        &PlanRequest {
            command: &req.command,
            cwd: &req.cwd,
            env: &req.env,
            policy: &req.policy,
            platform: req.platform,
            bwrap: None,
            resolved_program: Some(resolved),
            helper: Some(&helper),
            runner_fds: true,
            terminal: req.pty.is_some(),
            rlimits: &limits.rlimits,
            own_files: &own,
            // No mount namespace: the Landlock mode restricts no reads, sandspawn's stores included
            // (README, "Limits").
            stores: &[],
            proxy: None,
        },
        abi,
        &grants,
        scratch_path,
    )?;
    Ok((plan, scratch))
}

/// The launch plan for a validated request (shared by the runner and `buildSandboxCommand`).
/// `proxy`: the allow-list's listener on macOS (`network::for_run::before_plan`), runner only.
pub fn build_plan(
    req: &mut SpawnRequest,
    bwrap: Option<&crate::plan::BwrapInfo>,
    resolved: Option<&Path>,
    runner_fds: bool,
    limits: &LimitPlan,
    proxy: Option<&crate::network::loopback::Endpoint>,
) -> Result<LaunchPlan> {
    // Once per policy: a run walked already (and undoes after itself what no placeholder keeps).
    req.policy.walk_and_protect(crate::planted::Absent::Placeholders);
    plan_walked_or_not(req, &PlanInputs { bwrap, resolved, runner_fds, limits, proxy })
}

/// What `build_plan` takes besides the request.
#[derive(Clone, Copy)]
pub(crate) struct PlanInputs<'a> {
    pub bwrap: Option<&'a crate::plan::BwrapInfo>,
    pub resolved: Option<&'a Path>,
    pub runner_fds: bool,
    pub limits: &'a LimitPlan,
    pub proxy: Option<&'a crate::network::loopback::Endpoint>,
}

/// `build_plan` without the walk: for a policy walked already, or the runner's bwrap plan built
/// before its walk (`overlap`), which is built again once walked.
pub(crate) fn plan_walked_or_not(req: &mut SpawnRequest, inputs: &PlanInputs) -> Result<LaunchPlan> {
    let PlanInputs { bwrap, resolved, runner_fds, limits, proxy } = *inputs;
    // Linux sandbox plans run the helper, and so does every plan that sets resource limits or
    // gives a pty on macOS (the helper runs in front: see `plan::limited`); a missing or
    // mismatched one makes them unavailable. A plan for another host's platform (explain, tests)
    // names where the helper would be.
    let needs_helper = match req.platform {
        Platform::Linux => req.policy.mode != SandboxMode::DangerFullAccess,
        Platform::Darwin => req.pty.is_some(),
        Platform::Other => false,
    } || !limits.rlimits.is_empty();
    let helper = if needs_helper {
        Some(if Platform::host() == req.platform { crate::helper::require()? } else { crate::helper::expected_path() })
    } else {
        None
    };
    let own_files = crate::own_files::list(req.package_dir.as_deref());
    let stores = if req.platform == Platform::host() { plan::stores::to_cover(&req.policy, &req.env)? } else { Vec::new() };
    plan::build(&PlanRequest {
        command: &req.command,
        cwd: &req.cwd,
        env: &req.env,
        policy: &req.policy,
        platform: req.platform,
        bwrap,
        resolved_program: resolved,
        helper: helper.as_deref(),
        runner_fds,
        terminal: req.pty.is_some(),
        rlimits: &limits.rlimits,
        own_files: &own_files,
        stores: &stores,
        proxy,
    })
}
