//! One run's share of a change set: opened (or begun) before the plan is built, held while the
//! sandbox lives, described when it is gone.

use std::path::{Path, PathBuf};

use sandspawn_helper::protocol::ReviewOverlay;

use super::option::{Mounts, ReviewPolicy};
use super::store::{self, ChangeSet, Lock, Meta};
use super::summary::{summarize, Summary};
use crate::error::{Result, SandboxError};

/// What the run's policy says beyond the review mode itself.
pub struct Context<'a> {
    pub cwd: &'a Path,
    /// Every writable root of the run (the shared temporary directories too).
    pub writable: Vec<&'a Path>,
    pub deny_read: &'a [PathBuf],
    pub private_tmp: bool,
    pub protect_git: bool,
    pub protected_names: &'a [String],
    /// The report-only tier: held back like protected names (see `Meta::reported_names`).
    pub reported_names: &'a [String],
    /// When the run was asked for (`store::realtime_now_ns`, read before the walk): a set this run
    /// begins begins then, after every host change its caller made before asking.
    pub asked_ns: i64,
    /// The bin entries of the installed sandspawn that runs (`own_links::entries`): those in the
    /// reviewed roots are kept in the set's metadata (`Meta::own_links`).
    pub own_links: Vec<PathBuf>,
}

/// Why no change set can be mounted here (`None`: it can): what `sandboxCapabilities().review`
/// and a refused run say.
pub fn unavailable(landlock: bool) -> Option<&'static str> {
    if crate::platform::Platform::host() != crate::platform::Platform::Linux {
        return Some("only Linux (bwrap) can mount a copy-on-write overlay over the workspace; Seatbelt cannot");
    }
    if landlock {
        return Some("the Landlock mode has no mount namespace to mount the workspace's overlay in; run where bwrap works");
    }
    if !crate::tool_caches::kernel_has_userns_overlay() {
        return Some("this kernel cannot mount overlayfs in a user namespace (Linux 5.11 or newer can)");
    }
    None
}

/// `sandboxCapabilities().review`: `{ available, reason? }` for a host whose sandbox is
/// `sandbox` (and runs at all: `runs`).
pub fn report(runs: bool, sandbox: crate::platform::SandboxType) -> serde_json::Value {
    let why = if !runs { Some("no sandbox is available here (see reason)") } else { unavailable(sandbox == crate::platform::SandboxType::Landlock) };
    match why {
        None => serde_json::json!({ "available": true }),
        Some(r) => serde_json::json!({ "available": false, "reason": r }),
    }
}

/// The run's hold on its change set.
pub struct ReviewRun {
    set: ChangeSet,
    lock: Option<Lock>,
    max_changes: usize,
    /// Begun by this run: removed again if the run never started.
    begun: bool,
    /// The spare for the next new set, made while this run's sandbox lives (`spare`); waited for
    /// before the run's result, so no thread of it outlives the run.
    spare: Option<std::thread::JoinHandle<()>>,
}

fn path_text(p: &Path) -> Result<String> {
    p.to_str().map(str::to_string).ok_or_else(|| SandboxError::invalid("sandbox.workspace", format!("{} is not valid UTF-8, which the overlay's options need", p.display())))
}

impl ReviewRun {
    /// Open or begin the set `review` asks for, and fill in its mounts.
    pub fn prepare(review: &mut ReviewPolicy, ctx: &Context) -> Result<ReviewRun> {
        let root = store::require_root()?;
        // Compared as the kernel will see it: links resolved, missing components kept.
        let seen = crate::policy::paths::canonical_lenient("SANDSPAWN_CHANGE_SET_DIR", &root).map(|l| l.path).unwrap_or_else(|_| root.clone());
        check_store_place(&seen, ctx)?;
        check_masks(&review.roots, ctx.deny_read)?;
        check_mounts_below(&review.roots)?;
        // The host's homes as this process sees them: a later apply may run with another `HOME`.
        let home = crate::planted::home::Bases::of_host();
        let own_links: Vec<PathBuf> = ctx.own_links.iter().filter(|l| review.roots.iter().any(|r| l.starts_with(r))).cloned().collect();
        let (set, lock, begun) = match &review.option.change_set {
            Some(id) => {
                let (mut set, lock) = store::open_locked(id)?;
                if set.meta.roots != review.roots {
                    return Err(SandboxError::invalid(
                        "sandbox.changeSet",
                        format!("change set {id} covers {:?}, this run's workspace is {:?}: continue it from the same cwd and writableRoots", set.meta.roots, review.roots),
                    ));
                }
                // Written before the run: the set, this run's writes and the earlier ones, is
                // judged from now on (its result, show, apply) as strictly as its strictest run.
                if set.meta.tighten(ctx.protect_git, ctx.protected_names, ctx.reported_names, &review.held, &home, &review.deny_links, &own_links) {
                    store::write_meta(&set, &lock)?;
                }
                (set, lock, false)
            }
            None => {
                let meta = Meta {
                    id: String::new(),
                    cwd: ctx.cwd.to_path_buf(),
                    created: 0,
                    begin_ns: ctx.asked_ns,
                    roots: review.roots.clone(),
                    held: review.held.clone(),
                    protect_git: ctx.protect_git,
                    protected_names: ctx.protected_names.to_vec(),
                    reported_names: ctx.reported_names.iter().filter(|n| !ctx.protected_names.contains(n)).cloned().collect(),
                    homes: home.homes,
                    config_homes: home.config,
                    deny_links: review.deny_links.clone(),
                    // Filled in as the upper directories are made.
                    root_modes: Vec::new(),
                    own_links,
                };
                let (set, lock) = store::create(&root, meta)?;
                (set, lock, true)
            }
        };
        // Before the overlay is mounted: every revision shown before this run is stale after it.
        lock.count_a_write(&set)?;
        set.touch();
        let overlays = (0..set.meta.roots.len())
            .map(|i| Ok(ReviewOverlay { root: path_text(&set.meta.roots[i])?, upper: path_text(&set.upper(i))?, work: path_text(&set.work(i))? }))
            .collect::<Result<Vec<_>>>();
        let spare = begun.then(|| make_spare(root)).flatten();
        let run = ReviewRun { set, lock: Some(lock), max_changes: review.option.max_changes, begun, spare };
        // A set begun now: its command waits for the clock that stamps ctimes (see `Meta::begin_ns`),
        // unless the kernel stamps every later change at or after the beginning already.
        let meta = &run.set.meta;
        let floor = || super::clock_floor::floor_reached(&run.set.dir.join(super::store::LAST_USED), meta.begin_ns, &meta.roots);
        let exec_after_ns = (begun && !floor()).then_some(meta.begin_ns);
        review.mounts = Some(Mounts { set_dir: run.set.dir.clone(), overlays: overlays?, exec_after_ns });
        Ok(run)
    }

    /// The set's directory, where the run's writes go (its upper directories).
    pub fn dir(&self) -> &Path {
        &self.set.dir
    }

    /// The sandbox is gone: describe the set and let it go.
    pub fn finish(mut self) -> Result<Summary> {
        self.begun = false;
        let summary = match &self.lock {
            // Before the description: a file dropped is not shown.
            Some(lock) => {
                let held_open = super::held_open::drop_held_open(&self.set);
                summarize(&self.set, lock, self.max_changes).map(|mut s| {
                    s.host_risks.extend(held_open);
                    s
                })
            }
            None => Err(SandboxError::setup_failed(format!("change set {} is no longer held", self.set.meta.id), "")),
        };
        self.lock.take();
        summary
    }
}

/// Start making a spare set in `root` on a thread of its own (`None` when no thread can be had:
/// the next set is then made on its run's path, as without spares).
fn make_spare(root: PathBuf) -> Option<std::thread::JoinHandle<()>> {
    std::thread::Builder::new().name("sandspawn-spare".into()).spawn(move || super::spare::make(&root, &store::names(&root), store::skeleton)).ok()
}

impl Drop for ReviewRun {
    fn drop(&mut self) {
        if let Some(spare) = self.spare.take() {
            let _ = spare.join();
        }
        // Begun for a run that never started (setup failed): nothing was written, nothing is kept.
        if let (true, Some(lock)) = (self.begun, self.lock.as_ref()) {
            let _ = store::remove(&self.set, lock);
        }
    }
}

/// The store must lie outside every writable root (a command could rewrite its own change set,
/// or where it lands) and be visible to bwrap (not denied, not in a private `/tmp`), and no root
/// may lie in it (an overlay's upper directory cannot be inside its lower one).
fn check_store_place(store: &Path, ctx: &Context) -> Result<()> {
    let place = |why: String| {
        SandboxError::invalid(
            "sandbox.workspace",
            format!("the change set store {} {why}; set SANDSPAWN_CHANGE_SET_DIR (or XDG_STATE_HOME) to a directory outside the workspace", store.display()),
        )
    };
    if let Some(w) = ctx.writable.iter().find(|w| store.starts_with(w) || w.starts_with(store)) {
        return Err(place(format!("overlaps the writable root {}: the command could change its own change set", w.display())));
    }
    if let Some(d) = ctx.deny_read.iter().find(|d| store.starts_with(d)) {
        return Err(place(format!("is hidden by the denyRead entry {}", d.display())));
    }
    // Whatever this run does with /tmp: every other run with `tmp: 'writable'` (the default), of
    // any process, may write there, and none covers a store there (`known_stores`). A store under
    // it taken by a run with `tmp: 'read-only'` was rewritten by another process's run, which
    // chose where the apply wrote (found by an attacker's review, land27).
    if crate::state_dir::under_shared_tmp(store) {
        let why = if ctx.private_tmp { "which the run replaces with a private one" } else { "which every other run with tmp: 'writable' may write: one could rewrite the set and where it lands" };
        return Err(place(format!("is under /tmp, {why}")));
    }
    Ok(())
}

/// A denied *file* in a reviewed root cannot be kept hidden: bwrap masks it with a bind of an
/// unlinked file, which the kernel will not attach again on top of the overlay (a denied
/// directory's mask is). Refused, never run with the file readable.
/// A reviewed root with another filesystem mounted below it, which the kernel will not overlay from
/// the sandbox's user namespace (`crate::mounts_below`): refused before any set is begun, naming the
/// mount and the way out, where every run failed setup with "Invalid argument" alone.
fn check_mounts_below(reviewed: &[PathBuf]) -> Result<()> {
    let table = crate::mounts_below::table();
    for root in reviewed {
        if let Some((at, fstype)) = crate::mounts_below::first_below(root, &table) {
            return Err(SandboxError::unsupported(format!(
                "sandbox.workspace 'review' cannot cover {}: a filesystem is mounted inside it at {} ({fstype}), and the kernel refuses an overlay from a user namespace over a directory with mounts below it (it would uncover what they hide); unmount it or move it out of the workspace, or run with workspace: 'direct'",
                root.display(),
                at.display()
            )));
        }
    }
    Ok(())
}

fn check_masks(reviewed: &[PathBuf], deny_read: &[PathBuf]) -> Result<()> {
    let file = deny_read.iter().find(|d| reviewed.iter().any(|r| d.starts_with(r)) && !d.is_dir());
    match file {
        Some(f) => Err(SandboxError::unsupported(format!(
            "sandbox.denyRead: the file {} lies in the reviewed workspace, where sandspawn can hide directories but not single files; deny its directory instead",
            f.display()
        ))),
        None => Ok(()),
    }
}
