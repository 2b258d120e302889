//! What runs on the host beside one run's command: the keeper of the names that must stay absent
//! at the writable roots' tops (bwrap and Landlock runs), and the network allow-list's proxy; and, once the
//! command has exited, the check for what the sandbox could not prevent (`hostRisks`), Seatbelt
//! runs included.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use crate::error::{ErrorCode, Result, SandboxError};
use crate::network::loopback::Loopback;
use crate::network::proxy::{Finished, RunProxy};
use crate::options::SpawnRequest;
use crate::planted::{keeper::{EndRun, Keeper}, HostRisk};
use crate::platform::SandboxType;
use crate::policy::ResolvedPolicy;

pub(super) struct SideServices {
    keeper: Option<Keeper>,
    proxy: Option<RunProxy>,
    /// sandspawn's bin link as it was before the command started (`own_links`).
    own_links: Vec<crate::own_links::Recorded>,
}

impl SideServices {
    /// Start the keeper (a missing `.git` or protected name created at a top is moved aside at once)
    /// and the proxy, which serves the listener the helper sends over `bridge` (Linux) or the one
    /// bound on the host's loopback for the plan (macOS; see `network::for_run`). A keeper that
    /// cannot start is said in `not_enforced` (the result's `sandboxDetails.notEnforced`); one whose
    /// moves reach their bound ends the run through `end_run` (`keeper::EndRun`).
    /// `end_run` None: a run whose walk comes after its spawn (`overlap`), which starts the keeper
    /// itself (`start_keeper`) once walked, before the command can run.
    pub fn start(
        req: &SpawnRequest,
        sandbox: SandboxType,
        bridge: Option<OwnedFd>,
        loopback: Option<Loopback>,
        end_run: Option<EndRun>,
        not_enforced: &mut Vec<String>,
    ) -> Result<SideServices> {
        // Taken before the command starts; the keeper puts it back at once during the run, the
        // check after the run what is left (`own_links`).
        let own_links = crate::own_links::record(req.package_dir.as_deref());
        let keeper = end_run.and_then(|end_run| start_keeper(req, sandbox, &own_links, end_run, not_enforced));
        let proxy = crate::network::for_run::start(&req.policy, bridge, loopback, req.network_ask.as_ref())?;
        Ok(SideServices { keeper, proxy, own_links })
    }

    /// sandspawn's bin link as recorded before the command started (for `start_keeper`).
    pub fn own_links(&self) -> Vec<crate::own_links::Recorded> {
        self.own_links.clone()
    }

    /// The keeper `start_keeper` started for a run walked after its spawn (`overlap`).
    pub fn keep_with(&mut self, keeper: Option<Keeper>) {
        self.keeper = keeper;
    }

    /// The run is over: close the proxy's listeners and every connection it holds; what it refused
    /// and what the caller decided.
    pub async fn stop_proxy(&mut self) -> Finished {
        match self.proxy.take() {
            Some(p) => p.finish().await,
            None => Finished { denials: Vec::new(), denials_omitted: 0, decisions: Vec::new(), decisions_omitted: Default::default() },
        }
    }

    /// What the mounts, the Landlock rules or the Seatbelt profile could not prevent, after the
    /// placeholders are gone: what the keeper moved aside, and the walk's findings. Given the run's
    /// policy and handing it back for the result: the blocking thread shares it (`Arc`) instead of
    /// a copy of its parts (the planted baseline, every name held absent, the ruled paths: some
    /// 1,400 paths cloned and freed a run with 200 nested repositories, about 0.2 ms).
    pub async fn host_risks(mut self, policy: ResolvedPolicy, env: &BTreeMap<String, String>, sandbox: SandboxType) -> Result<(Vec<HostRisk>, ResolvedPolicy)> {
        if !checked_after_run(sandbox) {
            return Ok((Vec::new(), policy));
        }
        let keeper = self.keeper.take();
        let env = env.clone();
        let own_links = std::mem::take(&mut self.own_links);
        let policy = Arc::new(policy);
        let shared = Arc::clone(&policy);
        let risks = tokio::task::spawn_blocking(move || {
            let policy = &*shared;
            let mut risks = after_run(&policy.planted, keeper, policy.writable_roots.iter().flat_map(|r| r.missing_read_only.iter()));
            // sandspawn's bin link (`npx sandspawn`) the run changed, put back (`own_links`).
            risks.extend(crate::own_links::put_back(&own_links));
            // A held home's cache a private copy covered, moved from under it (`tool_caches::moved`).
            risks.extend(crate::tool_caches::moved::moved(&policy.tool_caches.caches));
            let stores = super::store_modes::stores(&env);
            // A directory above a store this user can no longer search (`store_modes`).
            risks.extend(super::store_modes::unsearchable_above_stores(&stores));
            // A store, or the state directory, that others may now write (`store_modes`).
            risks.extend(super::store_modes::open_to_others(&stores));
            // One above a path the policy keeps read-only or masks (`path_modes`).
            risks.extend(super::path_modes::unsearchable_above_rules(&super::path_modes::Ruled::of(policy)));
            risks
        })
            .await
            .map_err(|e| SandboxError::new(ErrorCode::SetupFailed, format!("checking for planted configuration failed: {e}")))?;
        // The closure, and its share with it, is gone once its task has returned: no copy made.
        let policy = Arc::try_unwrap(policy).unwrap_or_else(|shared| (*shared).clone());
        Ok((risks, policy))
    }
}

/// The keeper of the names that must stay absent at the writable roots' tops (bwrap and Landlock
/// runs), from the walked policy; one that cannot start is said in `not_enforced`.
pub(super) fn start_keeper(req: &SpawnRequest, sandbox: SandboxType, own_links: &[crate::own_links::Recorded], end_run: EndRun, not_enforced: &mut Vec<String>) -> Option<Keeper> {
    // The Landlock mode too: its roots' tops stay creatable (`plan::landlock_grants`).
    if !matches!(sandbox, SandboxType::Bwrap | SandboxType::Landlock) {
        return None;
    }
    // A reviewed root's writes go to its change set, never to the host's top.
    let direct = req.policy.writable_roots.iter().filter(|r| !req.policy.is_reviewed(&r.root));
    let mut tops: Vec<std::path::PathBuf> = direct.map(|r| r.root.clone()).collect();
    // The directories between a root and one nested below it, where a directly written root holds
    // them: a `.git` made there is found by git's discovery from below.
    let reviewed = |d: &std::path::Path| req.policy.writable_roots.iter().any(|r| req.policy.is_reviewed(&r.root) && d.starts_with(&r.root));
    tops.extend(req.policy.planted.between.iter().filter(|d| !reviewed(d)).cloned());
    crate::planted::keeper::start(&req.policy.planted.absent, &tops, &req.policy.planted.home, &req.policy.planted.protected_names, own_links, end_run).unwrap_or_else(|why| {
        not_enforced.push(keeper_not_enforced(&why));
        None
    })
}

/// What the result says when the keeper could not start: what it would have moved aside at once
/// stays on the host, for its tools to act on, until the walk after the run moves it.
fn keeper_not_enforced(why: &str) -> String {
    format!(
        "planted configuration: names that must stay absent at the writable roots' tops (.git, protected names) \
         were not kept absent while the run went on ({why}); what the command created there stayed on the host \
         until the run ended, when it was moved aside"
    )
}

/// Which runs the walk after the run checks. Seatbelt's too: its profile denies `.git` and the
/// protected names, but not a folder turned into a git directory (`HEAD`, `config`, `objects/`,
/// `refs/` written into `src/`: the host's `git status` there ran its `core.fsmonitor`), nor a
/// workspace moved away (found by an attacker's review: Seatbelt runs computed no `hostRisks`,
/// which the README said they did). Only the keeper (inotify) is Linux's.
fn checked_after_run(sandbox: SandboxType) -> bool {
    matches!(sandbox, SandboxType::Bwrap | SandboxType::Landlock | SandboxType::Seatbelt)
}

/// The check itself, on a blocking thread: one bounded list (`planted::MAX_REPORTED`), what the
/// keeper moved aside among it; then the placeholders of plans other programs ran, at paths this
/// run kept absent.
fn after_run<'a>(baseline: &crate::planted::Baseline, keeper: Option<Keeper>, keep_absent: impl IntoIterator<Item = &'a crate::policy::MissingReadOnly>) -> Vec<HostRisk> {
    let during_run = keeper.map(|k| k.finish()).unwrap_or_default();
    // One listing of each top the two look at, taken after the run by the first (see
    // `placeholders::remove_leftovers_listed`).
    let mut listed = crate::presence::Presence::default();
    let risks = crate::planted::detect_after_listed(baseline, during_run, &mut listed);
    crate::placeholders::remove_leftovers_listed(keep_absent, &mut listed);
    risks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planted::RiskKind;
    use crate::platform::Platform;
    use crate::policy::{resolve_policy, PolicyContext};

    #[test]
    fn every_sandbox_s_runs_are_checked_after_they_end() {
        for s in [SandboxType::Bwrap, SandboxType::Landlock, SandboxType::Seatbelt] {
            assert!(checked_after_run(s), "{s:?}");
        }
        assert!(!checked_after_run(SandboxType::None), "danger-full-access: nothing was kept from the command");
    }

    /// The check after the run and the cleanup of placeholders share one listing of each top the
    /// walk does not cover (`$TMPDIR`'s), taken after the run: a protected name the run made there
    /// (and at the workspace's top) is still moved aside and reported, one there before is left.
    #[test]
    fn one_listing_after_the_run_still_sees_what_the_run_made_at_the_tops() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        let (ws, tmp) = (base.join("ws"), base.join("tmp"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::write(tmp.join(".envrc"), "there before").unwrap();
        let v = serde_json::json!({"mode": "workspace-write", "tmp": "writable"});
        let ctx = PolicyContext { cwd: ws.clone(), tmpdir: Some(tmp.to_string_lossy().into_owned()), platform: Platform::Linux, env: Default::default() };
        let mut p = resolve_policy(Some(&v), &ctx).unwrap();
        p.walk_and_protect(crate::planted::Absent::UndoneAfter);
        // What the command makes during the run.
        std::fs::create_dir(tmp.join(".vscode")).unwrap();
        std::fs::write(tmp.join(".bashrc"), "planted").unwrap();
        std::fs::write(ws.join(".envrc"), "planted").unwrap();
        let risks = after_run(&p.planted, None, &p.missing_read_only());
        let created = |path: std::path::PathBuf| risks.iter().any(|h| h.path == path.to_string_lossy() && h.kind == RiskKind::ProtectedNameCreated);
        for made in [tmp.join(".vscode"), tmp.join(".bashrc"), ws.join(".envrc")] {
            assert!(created(made.clone()), "{}: {risks:#?}", made.display());
            assert!(made.symlink_metadata().is_err(), "moved aside: {}", made.display());
        }
        assert!(!risks.iter().any(|h| h.path == tmp.join(".envrc").to_string_lossy()), "there before: {risks:#?}");
        assert_eq!(std::fs::read_to_string(tmp.join(".envrc")).unwrap(), "there before");
    }

    /// A Seatbelt run's check, as the runner makes it on macOS: a folder turned into a git
    /// directory is reported, and on macOS in any case (`head`, `OBJECTS`: git takes them for
    /// `HEAD` and `objects` on a case-insensitive volume), as is a `.GIT` made deeper.
    #[test]
    fn a_seatbelt_run_reports_a_folder_turned_into_a_git_directory() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().canonicalize().unwrap();
        for d in ["src", "lib", "deep/sub"] {
            std::fs::create_dir_all(ws.join(d)).unwrap();
        }
        let v = serde_json::json!({"mode": "workspace-write", "tmp": "read-only"});
        let ctx = PolicyContext { cwd: ws.clone(), tmpdir: None, platform: Platform::Darwin, env: Default::default() };
        let mut p = resolve_policy(Some(&v), &ctx).unwrap();
        p.walk_and_protect(crate::planted::Absent::UndoneAfter);
        // What the default profile allowed (the attacker's reproduction).
        for (dir, [head, config, objects, refs]) in [("src", ["HEAD", "config", "objects", "refs"]), ("lib", ["head", "Config", "OBJECTS", "Refs"])] {
            let d = ws.join(dir);
            std::fs::write(d.join(head), "ref: refs/heads/main\n").unwrap();
            std::fs::write(d.join(config), "[core]\n\tworktree = .\n\tfsmonitor = /tmp/x\n").unwrap();
            std::fs::create_dir_all(d.join(objects).join("info")).unwrap();
            std::fs::create_dir_all(d.join(refs).join("heads")).unwrap();
        }
        std::fs::create_dir_all(ws.join("deep/sub/.GIT")).unwrap();
        std::fs::write(ws.join("deep/sub/.GIT/config"), "[core]\n\tfsmonitor = /tmp/x\n").unwrap();
        let risks = after_run(&p.planted, None, &p.missing_read_only());
        let has = |path: std::path::PathBuf, kind| risks.iter().any(|h| h.path == path.to_string_lossy() && h.kind == kind);
        assert!(has(ws.join("src"), RiskKind::GitDirectoryCreated), "{risks:#?}");
        assert!(risks.iter().any(|h| h.path == ws.join("src").to_string_lossy() && h.detail.contains("core.fsmonitor")), "{risks:#?}");
        assert!(has(ws.join("lib"), RiskKind::GitDirectoryCreated), "in any case: {risks:#?}");
        assert!(has(ws.join("deep/sub/.GIT"), RiskKind::RepositoryCreated), "in any case: {risks:#?}");
    }
}
