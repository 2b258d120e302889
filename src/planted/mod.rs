//! Planted configuration: what a sandboxed command could leave in a writable root that makes the
//! host run code later (git metadata and hooks, shell rc files, `.envrc`, editor and MCP settings).
//!
//! Prevented (carve-outs in the policy, enforced by bwrap mounts and Seatbelt rules): the git
//! directories of every repository the bounded walk finds (`scan`), their configured hooks
//! directories, those a repository above a writable root names inside it (`above`), and
//! `protectedNames` at the top of each writable root, of each repository found and of each
//! directory between a root and a root nested below it (`between`), there and at a root's top
//! above another root with the names tools search upward for (`upward`)
//! (read-only when they exist, an empty read-only placeholder when they do not). Detected after the
//! run on Linux (`detect`), because a mount can only cover a path that exists: a `.git` or a
//! protected name created deeper during the run. On macOS Seatbelt regex rules deny creating them
//! anywhere in a writable root (`plan::seatbelt_planted`), in any case; what no rule names there (a
//! folder turned into a git directory, a workspace moved away) is detected after the run as on
//! Linux, with names compared in any case (`scan::WalkSpec::fold_case`).
//!
//! The walk runs before and after every run, so its cost follows what changed, not the tree: the
//! process keeps the last walk of each area (`walk_with_cache`), and the next walk reads again only
//! the directories that changed since, which inotify tells on Linux (`watch`) and an `lstat` of each
//! directory tells otherwise (`scan`).

use std::collections::{HashMap, HashSet};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::policy::held_links::{Held, HeldLink};
use crate::policy::paths::{canonical_lenient, walk_links, Lenient, WalkEnd};
use crate::policy::{MissingReadOnly, PlaceholderKind, WritableRoot};

mod above;
pub mod cargo_programs;
pub mod config_reads;
pub mod named_files;
pub mod dir_links;
pub mod deep_paths;
mod between;
mod upward;
mod armed;
mod baseline;
pub mod changed;
pub mod config_hard;
pub mod few_named;
mod detect;
pub mod git_paths;
pub mod gitconfig;
pub mod global_git;
pub mod hard_linked;
pub mod home;
pub mod name_patterns;
pub mod home_hard;
pub mod home_links;
pub mod home_config;
pub mod hook_links;
pub mod hook_risks;
pub mod keeper;
pub mod links;
pub mod links_budget;
mod links_into_nm;
mod link_looks;
mod listing;
mod named_stamp;
mod opened_tops;
mod top_acls;
mod top_flags;
mod stamped_names;
mod store_configs;
mod vouch;
pub(crate) mod undo;
pub mod names;
pub mod repo;
pub mod scan;
pub mod small_file;
pub mod toml_strings;
pub mod toolchain_path;
pub mod yarn_programs;
pub mod mvn_programs;
pub mod envrc_sources;
mod mise_exec;
mod mise_run;
pub mod mise_programs;
pub mod proto_programs;
pub mod read_only_hard;
pub mod dev_env_programs;
pub mod editor_programs;
mod compose_files;
mod editor_tasks;
mod idea_watchers;
pub mod jsonc;
pub mod yaml_scalars;
pub mod envrc_runs;
mod unreadable;
pub mod unwalked_links;
mod links_via;
mod dangling_memo;
pub mod venv;
pub mod venv_way;
#[cfg(target_os = "linux")]
mod watch;
#[cfg(target_os = "linux")]
mod watch_budget;
#[cfg(all(test, target_os = "linux"))]
mod watch_test_budget;
#[cfg(not(target_os = "linux"))]
#[path = "watch_none.rs"]
mod watch;

pub use above::repositories_above;
pub use baseline::{forget as forget_walk, Baseline, HeldCache};
use baseline::walk_with_cache;
pub use detect::{detect, detect_after, detect_after_listed, judge_link, HostRisk, RiskKind, MAX_LINKS_JUDGED};

/// What to protect, from the policy.
pub struct Request<'a> {
    /// The roots walked for repositories: the cwd and `writableRoots`, not the shared temporary
    /// directories (`tmp: 'writable'`), which every other process on the host writes too.
    pub scan_roots: &'a [PathBuf],
    /// Every writable root, reviewed ones too (canonical): the directories between a root and one
    /// nested below it get the protected names (`between`).
    pub all_roots: &'a [PathBuf],
    /// Denied paths: nothing to protect in them (the command cannot see them).
    pub deny_read: &'a [PathBuf],
    /// The symlinks in directly written roots that `denyRead`, `readOnlyPaths` and `writableRoots`
    /// paths are resolved through (named for the first; `policy::policy_links`): put back
    /// after a run that changed one (`Baseline::deny_links`).
    pub deny_links: Vec<HeldLink>,
    pub protect_git: bool,
    pub names: &'a [String],
    /// The report-only tier: looked for by the walk, never carved out.
    pub reported: &'a [String],
    /// A plan for macOS: names are compared in any case (its volumes are case-insensitive by
    /// default) and the home keeps macOS's paths too (`home`).
    pub macos: bool,
}

/// The carve-outs at the top of each writable root (cheap: a few `lstat`s), done while the policy
/// is resolved. The walk for nested repositories is left to `walk_and_protect`, which the runner
/// calls on a blocking thread (never on the JavaScript thread).
pub fn protect(roots: &mut [WritableRoot], req: &Request) -> Baseline {
    let mut c = Carver::new(roots, req.deny_read, None);
    c.scan_roots = req.scan_roots.to_vec();
    // The user's own read-only paths (already carved): nothing to walk or create in them.
    let mut skip: Vec<PathBuf> = req.deny_read.to_vec();
    skip.extend(c.roots.iter().flat_map(|r| r.read_only.iter().cloned()));
    // Those of them with other names (hard links), said in the run's result (`read_only_hard`).
    let read_only_hard = read_only_hard::not_enforced(&skip[req.deny_read.len()..]);
    let tops: Vec<PathBuf> = c.roots.iter().map(|r| r.root.clone()).collect();
    // Above a workspace, the names tools search upward for too (`upward`): one list per directory,
    // so that each is listed once (`presence`).
    // Made only when a top above a workspace or a directory between roots needs them: each list
    // clones the names (hundreds), ~20 µs of the host's CPU a run that had none of either.
    let above_names_made = std::cell::OnceCell::new();
    let above_names = || above_names_made.get_or_init(|| req.names.iter().cloned().chain(upward_names(req.names)).collect::<Vec<String>>());
    let tops_above = tops_above_a_root(req, &tops);
    // And git's `HEAD` there, which would make the top a git directory for the workspaces below.
    let top_above_names = if tops_above.is_empty() { Vec::new() } else { between::with_head(above_names(), req.protect_git) };
    for top in &tops {
        if req.protect_git {
            c.repository(&top.join(".git"), true, None);
            // git's `HEAD` too where no `.git` comes first (`repo::head_would_count`): with it the
            // top is a git directory itself. The tops above a workspace get it with their names.
            if !tops_above.contains(top) && repo::head_would_count(top) {
                c.absent(&top.join(upward::GIT_HEAD.0), Some(names::placeholder_kind(upward::GIT_HEAD.0)));
            }
        }
        // The shared temporary directories too (`tmp: 'writable'`): some hosts run with HOME=/tmp,
        // and then /tmp/.bashrc is the user's.
        c.names(top, if tops_above.contains(top) { &top_above_names } else { req.names });
    }
    // The directories between a root and a root nested below it (a workspace below the writable
    // `/tmp`): tools search the parents of their cwd too, and no walk looks there (`between`).
    let inside = |d: &Path| c.root_of(d).is_some() && !c.is_covered(d);
    let between = between::directories_between(req.all_roots, &inside);
    // A `.git` there too, as at a root's top: git's discovery walks up from the workspace (a run's
    // `git init ..` with a `core.fsmonitor` ran on the host's next `git status`, found by an
    // attacker's review, gitabove26). In the same list, so the same listing answers for it.
    if !between.is_empty() {
        let between_names = between::with_git(above_names(), req.protect_git);
        for dir in &between {
            c.names(dir, &between_names);
        }
    }
    // Repositories are looked for when their git dirs are protected or their tops get names.
    let repositories = req.protect_git || !req.names.is_empty();
    // A `.git` there that is a placeholder (another program's plan's, at the shared `/tmp`'s top) is
    // kept absent above, as a missing one is: its identity is nobody's to keep, and the cleanup of
    // placeholders (the next run's, another process's) removed it during runs, each then reporting
    // `workspace-replaced` (found by tmpflake42). What is made there instead is reported as created.
    let git_of = |t: &PathBuf| Some(t.join(".git")).filter(|g| !g.symlink_metadata().is_ok_and(|m| crate::placeholders::is_placeholder(g, &m)));
    let top_modes = opened_tops::taken(tops.iter().flat_map(|t| std::iter::once(t.clone()).chain(git_of(t))));
    let walked_names = req.names.iter().chain(req.reported).cloned().collect();
    let hook_links = c.hook_links;
    let config_hard = c.config_hard;
    // The symlinks past a symlinked protected name at a top (`hold_links_past`), carried to the
    // walk's carving as `hook_links` are.
    let links_on_the_way = c.links_on_the_way;
    Baseline {
        spec: scan::WalkSpec { roots: req.scan_roots.to_vec(), skip, names: walked_names, repositories, fold_case: req.macos },
        deny_links: req.deny_links.clone(),
        report_repositories: req.protect_git,
        macos: req.macos,
        top_modes,
        hook_links,
        config_hard,
        read_only_hard,
        links_on_the_way,
        between,
        ..Baseline::default()
    }
}

/// The upward-searched names (`upward`) not among `names`; none when protected names are off
/// (`protectedNames: []`: nothing is kept by name).
fn upward_names(names: &[String]) -> Vec<String> {
    if names.is_empty() {
        return Vec::new();
    }
    upward::names().into_iter().filter(|n| !names.contains(n)).collect()
}

/// Of the directly written roots' `tops`, those above a workspace, which get the upward-searched
/// names: the shared temporary directories (`/tmp`, `$TMPDIR`: the roots not walked), above every
/// workspace nested in them, this run's or not (an attacker's review, rfix26b: a run elsewhere
/// wrote `/tmp/package.json` with `workspaces` and a `postinstall`, and `/tmp/node_modules/.bin/jest`,
/// for the host's `npm` in a project below `/tmp`); and the host user's home when it holds another
/// root (`between::roots_above`). A `writableRoots` entry holding the cwd (a monorepo's root for a
/// package's run) is the project's: npm workspaces write its `node_modules` and `package-lock.json`
/// from a package.
fn tops_above_a_root(req: &Request, tops: &[PathBuf]) -> Vec<PathBuf> {
    let holding = between::roots_above(req.all_roots);
    let walked_holding: Vec<&PathBuf> = tops.iter().filter(|t| req.scan_roots.contains(t) && holding.contains(t)).collect();
    // No `stat` for the home unless a walked root holds another: the usual case.
    let homes: Vec<PathBuf> = match walked_holding.is_empty() {
        true => Vec::new(),
        false => home::host_homes(),
    };
    tops.iter().filter(|t| !req.scan_roots.contains(t) || (walked_holding.contains(t) && homes.contains(t))).cloned().collect()
}

/// The `.git` entries below `roots` (canonical), found by the same bounded walk as direct runs' (and
/// kept, as theirs, for the next walk of the same area): for review mode, whose roots no run walks.
pub fn repositories_below(roots: &[PathBuf]) -> Vec<PathBuf> {
    let spec = scan::WalkSpec { roots: roots.to_vec(), repositories: true, ..scan::WalkSpec::default() };
    walk_with_cache(&spec, &|| false).map(|(found, _)| found.git_entries).unwrap_or_default()
}

/// How a missing protected name at a nested repository's top is kept absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absent {
    /// A placeholder, covered inside the sandbox: plans another program runs (nobody checks after
    /// them).
    Placeholders,
    /// Moved aside after the run if the run created it (`detect`): the runner's own runs, which
    /// then list nothing per name (`Baseline::protected_tops`).
    UndoneAfter,
}

/// The parts of a resolved policy the walk completes (`ResolvedPolicy::walk_and_protect`).
pub struct Walked<'a> {
    pub absent: Absent,
    pub writable_roots: &'a mut Vec<WritableRoot>,
    pub deny_read: &'a [PathBuf],
    pub protected_names: &'a [String],
    pub protect_git: bool,
    pub planted: &'a mut Arc<Baseline>,
    /// Roots judged on their change set (review mode): nothing of the home is carved in them.
    pub reviewed: &'a [PathBuf],
    /// Whether the run was cut meanwhile (its deadline passed, it was killed: see
    /// `runner::supervise::before_spawn`): the walk and the work per repository stop there.
    pub ended: &'a dyn Fn() -> bool,
}

/// The run was cut during `walk_and_protect`: the policy is as it was before it (not walked), and
/// nothing of the walk was kept.
#[derive(Debug)]
pub struct Abandoned;

/// Walk the writable roots (once per policy), carve out the repositories found below their tops,
/// and keep what the walk saw as the baseline for `detect`. Stops at the next directory or
/// repository once `policy.ended` says so: a timed-out run's preparation went on for seconds after
/// the run settled (a thousand repositories naming one hooks directory of 256 hard links), and the
/// next run waited behind it (an attacker's review).
pub fn walk_and_protect(policy: Walked) -> Result<(), Abandoned> {
    if policy.planted.walked {
        return Ok(());
    }
    let _hooks_budget = crate::policy::path_walk::RunBudget::set(hook_risks::RUN_HOOK_STEPS);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let (taken_at, taken_at_ns) = (now.as_secs() as i64, now.as_nanos() as i64);
    let spec = policy.planted.spec.clone();
    let ended = policy.ended;
    let (found, index) = walk_with_cache(&spec, ended).ok_or(Abandoned)?;
    // What the carving below adds to each root, taken back if the run is cut.
    let carved_before = Carved::of(policy.writable_roots);
    // What changed while the walk ran, too, before the watches vouch for any repository's facts.
    if let Some(w) = watch::global() {
        w.drain();
    }
    let tops: Vec<PathBuf> = policy.writable_roots.iter().map(|r| r.root.clone()).collect();
    let names = policy.protected_names;
    // Which names exist where is known from the walk: no `lstat` for the missing ones. Unless the
    // walk kept only the first `scan::MAX_NAMED`: then each is `lstat`ed.
    let existing = (found.named_unkept.count == 0).then(|| Existing::of(&found.named));
    let mut c = Carver::new(policy.writable_roots, policy.deny_read, existing);
    c.list_missing = policy.absent == Absent::Placeholders;
    // What `protect` found at the roots' tops, and the scan roots links are judged against.
    c.hook_links = policy.planted.hook_links.clone();
    c.config_hard = policy.planted.config_hard.clone();
    c.links_on_the_way = policy.planted.links_on_the_way.clone();
    c.scan_roots = spec.roots.clone();
    let mut protected_tops = HashSet::new();
    for dot_git in &found.git_entries {
        if ended() {
            return Err(carved_before.restore(c.roots));
        }
        let top = dot_git.parent().unwrap_or(Path::new("/"));
        if tops.iter().any(|t| t.as_os_str() == top.as_os_str()) {
            // Done by `protect`, but for what its configuration includes (carved below, once the
            // run's kind of absence is known): its facts are remembered, no reading again.
            if policy.protect_git {
                c.top_includes(dot_git, found.git_inodes.get(dot_git.as_os_str()).map(|id| id.1));
            }
            continue;
        }
        if policy.protect_git {
            c.repository(dot_git, false, found.git_inodes.get(dot_git.as_os_str()).map(|id| id.1));
        }
        c.names(top, names);
        if !c.list_missing && !c.is_covered(top) {
            protected_tops.insert(top.as_os_str().to_os_string());
        }
    }
    if policy.protect_git {
        // The repositories above the roots (a package of a monorepo as the cwd): their `.git` where
        // a root holds it (the writable /tmp), and the hooks directories they name inside a root,
        // as a repository's inside it (`above`).
        if c.repositories_above(&tops, policy.reviewed, &found.git_entries, ended).is_err() {
            return Err(carved_before.restore(c.roots));
        }
        // Bare repositories (a local remote) and other directories that are git directories
        // themselves, as the `.git` of a repository: rare, so no cost for ordinary workspaces.
        for (dir, _) in &found.git_dirs {
            if ended() {
                return Err(carved_before.restore(c.roots));
            }
            if !tops.iter().any(|t| t == dir) && !c.is_covered(dir) {
                c.git_directory(dir);
            }
        }
    }
    let mut unwalked_links = unwalked_links::Kept::of_walk(&found);
    if policy.protect_git {
        // The repositories symlinks into `node_modules` lead to, which no walk sees: read-only as
        // the walk's (a run rewrote such a one's `core.fsmonitor`, found by an attacker's review).
        c.unwalked_repositories(&mut unwalked_links, &found, ended).map_err(|()| carved_before.restore(c.roots))?;
    }
    // The host user's home inside a writable root (`home`): a few `lstat`s, none when it is not.
    let home = home::Bases::of_host().on_macos(policy.planted.macos);
    // A missing host path below a missing directory is kept absent at that directory by plans
    // another program runs (a placeholder needs an existing directory to be made in), and on macOS
    // always: Seatbelt judges a rename by the name it creates, so `mv staging ~/.config` brought a
    // whole `~/.config/git/config` past a rule on `~/.config/git` (found by an attacker's review).
    let at_first_missing = policy.absent == Absent::Placeholders || policy.planted.macos;
    // The home's links, the files in its listed directories and those cut short, found once for
    // the three uses below (each asked the listings' memo again: 8 `lstat`s a time, perf43). One
    // plan's answer, on this thread, before the run's command runs: nothing between them writes
    // the home (the carve only records; placeholders are made later, by the runner), and the next
    // plan asks the listings anew.
    let home_found = home_links::all(&home, names);
    c.home(&home, names, &home_found.linked, at_first_missing, &tops, policy.reviewed);
    c.global_git(at_first_missing, policy.reviewed);
    // Those of the home's files and the global git configuration's that are hard links, which no
    // carve-out covers through their other names (`home_hard`): a `stat` each.
    let direct: Vec<PathBuf> = tops.iter().filter(|t| !policy.reviewed.contains(t)).cloned().collect();
    let devices = home_hard::devices(policy.planted.identities(), &direct);
    // The home's config directory and dot-entries beyond the held list: reported after the run.
    let home_config = home_config::Watched::of(&home, &direct);
    // Listed only when a directly written root's device may hold another of their names: a
    // read-only run (no such device) lists none of the home's directories for it.
    let mut home_hard = match devices.is_empty() {
        true => home_hard::Kept::default(),
        false => home_hard::Kept::of(&home_hard::candidates(&home, names, &home_found.files_in_dirs, &c.global), &devices),
    };
    // Listed home directories past the listing's bound, said whatever the devices (a link there
    // may lead into any root).
    home_hard.cut = home_found.cut_short;
    // The programs each `.cargo` the walk found names by path (`cargo_programs`), kept with the
    // programs the repositories' git configurations name.
    c.cargo_programs(&found.named);
    // The toolchain directory each rust-toolchain file names (`toolchain_path`), kept likewise.
    c.toolchain_paths(&found.named);
    // What each yarn configuration, `.mvn` and `.envrc` has its tool run (`tool_programs`), likewise.
    c.tool_programs(&found.named);
    // Where the symlinks inside each protected directory lead (`dir_links`), kept likewise.
    c.dir_links(&found.named, names);
    c.repo_includes(at_first_missing, policy.reviewed);
    c.repo_ways(policy.reviewed);
    let held_caches = c.held_caches(&policy.planted.held_caches, policy.absent == Absent::Placeholders);
    let hook_links = std::mem::take(&mut c.hook_links);
    let config_hard = std::mem::take(&mut c.config_hard).outside(policy.reviewed);
    let global_git_unresolved = c.global.not_enforced();
    let links_on_the_way = std::mem::take(&mut c.links_on_the_way);
    let named_from_outside = std::mem::take(&mut c.named_from_outside);
    // The virtual environments one level below a top: their interpreter files read-only (`venv`).
    let venvs = venv_files(&found.named, &tops, &found.git_entries);
    let mut venv_bin = HashSet::new();
    for (p, kind) in &venvs.files {
        if *kind == venv::Kind::Kept {
            // The Landlock mode cannot carve a file out of `bin` without `bin` taking no new
            // entries (pip install writes its scripts there): it grants these, and the check after
            // the run reports them changed instead (their stamps below).
            if let Some(kept) = c.entry(p, None).filter(|k| k == p && venv::in_bin(p)) {
                venv_bin.insert(kept);
            }
        }
    }
    crate::policy::sort_carve_outs(policy.writable_roots);
    let (mut named, mut named_changed_at) = (HashMap::new(), HashMap::new());
    let mut report_only = Vec::new();
    let kept_tops = stamped_names::kept_tops(&tops, &found.git_entries);
    for p in &found.named {
        if let Ok(m) = p.symlink_metadata() {
            named.insert(p.clone(), (m.dev(), m.ino()));
            // Report-only names, and protected ones below the tops: those at a top are read-only
            // in the sandbox (`stamped_names`).
            // A virtual environment's files: those of the environments kept only (the read-only
            // ones too: the Landlock mode grants `bin`'s, `venv_bin`).
            let reported = match venvs.files.get(p.as_path()) {
                Some(_) => true,
                // A pattern of that shape (Hermit's `bin/activate-hermit`) is a name (host40).
                None => !venv::walked(p.parent().unwrap_or(Path::new("/")), p.file_name().unwrap_or_default()) || name_patterns::of_path(p).is_some(),
            };
            if reported && stamped_names::stamped(p, names, &kept_tops) {
                report_only.push((p, m));
            }
        }
    }
    let stores = found.named.iter().filter(|p| stamped_names::store_below_tops(p, names, &kept_tops));
    let store_configs = store_configs::Kept::of(stores.map(PathBuf::as_path));
    // By path, as the check after the run takes them, so a shared budget runs out at the same ones.
    report_only.sort_by(|a, b| a.0.cmp(b.0));
    let mut budget = named_stamp::Budget::default();
    for (p, m) in report_only {
        named_changed_at.insert(p.clone(), named_stamp::of(p, &m, &mut budget));
    }
    let top_modes = policy.planted.top_modes.clone();
    let deny_links = policy.planted.deny_links.clone();
    let absent = policy.writable_roots.iter().flat_map(|r| r.missing_read_only.iter().map(|m| m.path.clone())).collect();
    *policy.planted = Arc::new(Baseline {
        absent,
        between: policy.planted.between.clone(),
        protected_tops,
        protected_names: Arc::new(names.iter().cloned().collect()),
        spec,
        git: found.git_inodes,
        git_dirs: found.git_dirs.into_iter().collect(),
        home,
        home_config,
        macos: policy.planted.macos,
        held_caches,
        top_modes,
        deny_links,
        hook_links,
        global_git_unresolved,
        home_hard,
        config_hard,
        read_only_hard: policy.planted.read_only_hard.clone(),
        links_on_the_way,
        named_from_outside,
        named,
        named_changed_at,
        store_configs,
        venv_ways: venvs.envs.iter().map(|e| (e.clone(), venv_way::of(e))).collect(),
        venvs: venvs.envs,
        venv_bin,
        report_repositories: policy.protect_git,
        truncated: found.truncated,
        named_unkept: found.named_unkept,
        unwalked_links,
        taken_at,
        taken_at_ns,
        index,
        walked: true,
    });
    Ok(())
}

/// The virtual environments one level below a top (a writable root's, a repository's) and their
/// files the walk found (`venv`).
#[derive(Default)]
struct Venvs {
    envs: HashSet<PathBuf>,
    files: HashMap<PathBuf, venv::Kind>,
}

fn venv_files(named: &[PathBuf], tops: &[PathBuf], git_entries: &[PathBuf]) -> Venvs {
    let configs: HashSet<&Path> = named.iter().filter(|p| p.file_name().is_some_and(|n| n == venv::CONFIG)).filter_map(|p| p.parent()).collect();
    if configs.is_empty() {
        return Venvs::default();
    }
    let repo_tops: HashSet<&Path> = git_entries.iter().filter_map(|g| g.parent()).collect();
    let is_top = |d: &Path| repo_tops.contains(d) || tops.iter().any(|t| t == d);
    let mut v = Venvs::default();
    for p in named {
        if let Some((env, kind)) = venv::file_of(p).filter(|(env, _)| venv::kept(env, &configs, is_top)) {
            v.envs.insert(env.to_path_buf());
            v.files.insert(p.clone(), kind);
        }
    }
    v
}

/// How many carve-outs and placeholders each writable root had before the walk's: what a cut
/// walk added is taken back, so the policy is the unwalked one it was (listed only, nothing is
/// made on the host until the plan).
struct Carved(Vec<(usize, usize)>);

impl Carved {
    fn of(roots: &[WritableRoot]) -> Carved {
        Carved(roots.iter().map(|r| (r.read_only.len(), r.missing_read_only.len())).collect())
    }

    fn restore(self, roots: &mut [WritableRoot]) -> Abandoned {
        for (r, (read_only, missing)) in roots.iter_mut().zip(self.0) {
            r.read_only.truncate(read_only);
            r.missing_read_only.truncate(missing);
        }
        Abandoned
    }
}

/// The entries named like protected names that the walk found, as a set and by directory.
struct Existing {
    paths: HashSet<PathBuf>,
    /// Keyed by bytes, as `Carver::covered`.
    by_dir: HashMap<std::ffi::OsString, Vec<PathBuf>>,
}

impl Existing {
    fn of(named: &[PathBuf]) -> Existing {
        let mut by_dir: HashMap<std::ffi::OsString, Vec<PathBuf>> = HashMap::new();
        for p in named {
            by_dir.entry(p.parent().unwrap_or(Path::new("/")).as_os_str().to_os_string()).or_default().push(p.clone());
        }
        Existing { paths: named.iter().cloned().collect(), by_dir }
    }

    fn at_top<'e>(&'e self, top: &Path) -> impl Iterator<Item = &'e PathBuf> + 'e {
        self.by_dir.get(top.as_os_str()).into_iter().flatten()
    }
}

struct Carver<'a> {
    roots: &'a mut [WritableRoot],
    /// What is denied or read-only already (the deny list and every root's carve-outs so far):
    /// nothing needs protecting below it. A set, looked up by ancestor: hundreds of repositories
    /// times dozens of names made a scan of a list quadratic.
    /// Keyed by bytes: std hashes a `Path` component by component, several times slower, and
    /// every path here is canonical (built from canonical roots), so equal paths are equal bytes.
    covered: HashSet<std::ffi::OsString>,
    /// Whether this user can create entries in a directory (see `can_create_in`), per directory.
    /// By the directory's bytes (hashed whole, not by component), asked before anything is copied:
    /// `absent` is asked of each of the ~600 names held at the tops, all in two or three directories.
    creatable: HashMap<std::ffi::OsString, bool>,
    /// The protected names that exist, when the walk found them all (else each is `lstat`ed).
    existing: Option<Existing>,
    /// Whether `names` lists the missing ones in `missing_read_only` (else `detect` undoes what a
    /// run creates at a repository's top: `Absent::UndoneAfter`).
    list_missing: bool,
    /// The hooks that lead elsewhere (`hook_links`), for the run's result and the check after it.
    hook_links: hook_risks::Kept,
    /// The configuration files and protected names kept read-only that are hard links
    /// (`config_hard`), for the run's result, the Landlock grants and the check after it.
    config_hard: config_hard::Kept,
    /// The walked roots: a hook's link is judged against them (`links::in_shared_place`).
    scan_roots: Vec<PathBuf>,
    /// The host's global and system git configuration (`global_git`), read once per carving: its
    /// `core.hooksPath` serves each repository that names none of its own, and its files and hooks
    /// directories are kept where a root holds them (`global_git`, the method).
    global: global_git::Global,
    /// The files the configuration of each repository carved includes (`repo::Facts::includes`),
    /// kept by `repo_includes` at the end of the walk, with the repository naming each (where one
    /// in a shared place is reported: `shared_ref`).
    includes: Vec<(PathBuf, PathBuf)>,
    /// How many more of the repositories' included files and programs `includes` may take
    /// (`repo::PATHS_IN_ALL` in a carving: `repo_paths`).
    repo_paths_left: usize,
    /// The symlinks in directly written roots on the way to a host path kept by `host_path`
    /// (`hold_links_on_the_way`), held for the run and put back after it (`detect`).
    links_on_the_way: Vec<HeldLink>,
    /// The paths git follows to the repositories' git directories that are not canonical
    /// (`repo::Facts::ways`): the links on them are held by `repo_ways` at the end of the walk.
    ways: Vec<PathBuf>,
    /// The entries `host_path` kept read-only: a fixed path of the host's names them, so they
    /// are pinned where they are whatever their name (`Baseline::named_from_outside`).
    named_from_outside: HashSet<PathBuf>,
    /// The shared places git directories are judged against (`shared_git_dirs`), found once.
    shared_places: std::cell::OnceCell<links::SharedPlaces>,
    /// Roots nothing is carved in for now: reviewed ones while the repositories above them are
    /// carved (`repositories_above`; their changes are judged on the set, `review::elsewhere`).
    spared: Vec<PathBuf>,
}

impl<'a> Carver<'a> {
    fn new(roots: &'a mut [WritableRoot], deny: &[PathBuf], existing: Option<Existing>) -> Carver<'a> {
        let covered = deny.iter().chain(roots.iter().flat_map(|r| r.read_only.iter())).map(|p| p.as_os_str().to_os_string()).collect();
        Carver { roots, covered, creatable: HashMap::new(), existing, list_missing: true, hook_links: hook_risks::Kept::default(), config_hard: config_hard::Kept::default(), scan_roots: Vec::new(), global: global_git::now(), includes: Vec::new(), repo_paths_left: repo::PATHS_IN_ALL, links_on_the_way: Vec::new(), ways: Vec::new(), named_from_outside: HashSet::new(), shared_places: Default::default(), spared: Vec::new() }
    }

    fn is_covered(&self, p: &Path) -> bool {
        // By slicing at slashes, not parsing components (`covered` holds canonical paths).
        sandspawn_helper::ancestors::or_self_bytes(p.as_os_str().as_bytes()).any(|a| self.covered.contains(std::ffi::OsStr::from_bytes(a)))
    }

    /// Whether the root at `i` is one whose carving is left to its change set's judge (`spared`).
    fn spared(&self, i: usize) -> bool {
        self.spared.iter().any(|s| *s == self.roots[i].root)
    }

    /// The deepest writable root holding `p` (its carve-outs go after that root's bind). Compared
    /// as bytes, as `covered` (every path here is canonical): of the roots holding `p`, the
    /// deepest has the longest path.
    fn root_of(&self, p: &Path) -> Option<usize> {
        let p = p.as_os_str().as_bytes();
        let holds = |root: &[u8]| p.starts_with(root) && (p.len() == root.len() || root.ends_with(b"/") || p[root.len()] == b'/');
        self.roots.iter().enumerate().filter(|(_, r)| holds(r.root.as_os_str().as_bytes())).max_by_key(|(_, r)| r.root.as_os_str().len()).map(|(i, _)| i)
    }

    fn read_only(&mut self, p: PathBuf) {
        if let Some(i) = self.root_of(&p).filter(|&i| !self.spared(i)) {
            self.covered.insert(p.as_os_str().to_os_string());
            self.roots[i].read_only.push(p);
        }
    }

    /// A placeholder made on the host for the run, unless `p` lies in a path that is already read-only
    /// or hidden (there it could not be created, and nothing can be planted anyway).
    fn missing(&mut self, p: PathBuf, kind: PlaceholderKind) {
        let Some(i) = self.root_of(&p).filter(|&i| !self.spared(i)) else { return };
        let parent = p.parent().unwrap_or(Path::new("/"));
        if !self.is_covered(parent) {
            self.roots[i].missing_read_only.push(MissingReadOnly { path: p, kind });
        }
    }

    /// Keep an existing entry read-only, or (when `missing` is given) make a missing one
    /// uncreatable. An empty directory or empty file is mounted over like a placeholder, and a
    /// placeholder (a concurrent run's) is reserved as one, so that its cleanup waits for this run.
    /// A symlink cannot be mounted over: its target is protected (the link itself can be replaced,
    /// which `detect` reports). Returns the path whose contents are protected, if any.
    fn entry(&mut self, p: &Path, missing: Option<PlaceholderKind>) -> Option<PathBuf> {
        self.entry_seen(p, missing).map(|(path, _)| path)
    }

    /// `entry`, and what `lstat` said of `p` when it is no symlink (then it is what `stat` says).
    fn entry_seen(&mut self, p: &Path, missing: Option<PlaceholderKind>) -> Option<(PathBuf, Option<std::fs::Metadata>)> {
        let Ok(meta) = p.symlink_metadata() else {
            self.absent(p, missing);
            return None;
        };
        // A placeholder (of a plan another program runs, or left by a killed run) is recognized by
        // its mode, or a file's by the symlink that leads nowhere (`placeholders::is_placeholder`):
        // the name is as good as missing. Looked at before any other symlink, whose target is
        // protected instead: a placeholder's has none, and the name was left unheld (no cover, not
        // kept absent) when the link was taken for any other. Anything else, an empty one of the
        // user's too, is kept read-only.
        if crate::placeholders::is_placeholder(p, &meta) {
            self.missing(p.to_path_buf(), if meta.is_dir() { PlaceholderKind::Dir } else { PlaceholderKind::File });
            return None;
        }
        if meta.file_type().is_symlink() {
            self.hold_links_past(p);
            let Ok(target) = std::fs::canonicalize(p) else {
                self.dangling(p, missing);
                return None;
            };
            self.read_only(target.clone());
            return Some((target, None));
        }
        self.read_only(p.to_path_buf());
        Some((p.to_path_buf(), Some(meta)))
    }

    /// A protected name `p` that is a dangling symlink (the user's `.envrc -> tools/envrc`, `tools`
    /// not made yet; a gitignored local file linked from the checkout): where it leads is kept
    /// absent, at its first missing directory when one is missing on the way (a placeholder needs
    /// an existing directory to be made in). Found by an attacker's review (revb36): the link had
    /// no target to keep and the name was left unheld; a default workspace-write run made
    /// `tools/envrc`, and the host's `.envrc` read the run's text with hostRisks [] (bwrap and the
    /// Landlock mode). A way that cannot be followed (a loop, `..` after a missing name) keeps
    /// nothing, as before; the link itself is held as any symlink at a protected name is.
    fn dangling(&mut self, p: &Path, missing: Option<PlaceholderKind>) {
        // A chain ending at a placeholder (a plan's or a killed run's, `cfg/mcp.json ->
        // /dev/null/sandspawn-held`) leads nowhere that can be kept absent: the placeholder is.
        let on_the_way = home_links::links_on_the_way(p);
        if let Some(held) = on_the_way.into_iter().find(|l| sandspawn_helper::placeholder::is_link_target(l.target.as_os_str().as_bytes())) {
            self.missing(held.path, PlaceholderKind::File);
            return;
        }
        let to = home_links::leads_to(p);
        if to == p {
            // Not followed (`..` after a missing name, a loop): its first missing name is kept
            // absent where the kernel's walk stops (`tools` of `tools/x/../envrc.local`); a loop's
            // links are held (`hold_links_past`).
            if let (WalkEnd::Missing(first), _) = walk_links(p, &|_| None) {
                self.absent(&first, missing.map(|_| PlaceholderKind::Dir));
            }
            return;
        }
        let Ok(Lenient { path, first_missing: Some(mut first) }) = canonical_lenient("protectedNames", &to) else { return };
        let mut kind = if first == path { missing } else { missing.map(|_| PlaceholderKind::Dir) };
        // A directory placeholder on the way (a plan's `tools`, mode 1500) is what is missing: kept
        // below it, the leftover stayed for good (the run removes only placeholders it lists).
        while let Some(up) = first.parent().filter(|d| d.symlink_metadata().is_ok_and(|m| m.is_dir() && crate::placeholders::is_placeholder(d, &m))) {
            (first, kind) = (up.to_path_buf(), missing.map(|_| PlaceholderKind::Dir));
        }
        self.absent(&first, kind);
    }

    /// The symlinks past the protected name `p` (itself a symlink) on its way that a writable root
    /// holds: held for the run and put back after it (`hold_links_on_the_way`). Found by an
    /// attacker's review (rev37): of `.envrc -> a -> real` only `real` was kept, and a run in bwrap
    /// replaced `a` with a file the host's `.envrc` then read, with hostRisks []. The name itself
    /// is left as before (replaced, it is reported).
    fn hold_links_past(&mut self, p: &Path) {
        let name = p.to_path_buf();
        let skipped = move |c: &Carver, l: &Path| *l == name || c.root_of(l).is_none_or(|i| c.spared(i)) || c.is_covered(l);
        self.hold_links_on_the_way(p, &skipped);
    }

    /// `p` does not exist: make it uncreatable (`missing`), where this user could create it.
    fn absent(&mut self, p: &Path, missing: Option<PlaceholderKind>) {
        let parent = p.parent().unwrap_or(Path::new("/"));
        // Where this user cannot create anything, neither can the command (it runs as this
        // user, with fewer rights), and no placeholder could be made either.
        let creatable = match self.creatable.get(parent.as_os_str()) {
            Some(known) => *known,
            None => *self.creatable.entry(parent.as_os_str().to_os_string()).or_insert_with(|| can_create_in(parent)),
        };
        if let (Some(kind), true) = (missing, creatable) {
            self.missing(p.to_path_buf(), kind);
        }
    }

    /// Carve the repositories above `tops` (every writable root, canonical) that neither is a root's
    /// own nor the walk found (`walked`): those above a directly written root fully, the others
    /// with nothing carved in the `reviewed` roots. `Err` once `ended` says the run was cut.
    fn repositories_above(&mut self, tops: &[PathBuf], reviewed: &[PathBuf], walked: &[PathBuf], ended: &dyn Fn() -> bool) -> Result<(), ()> {
        let (direct, under_review): (Vec<PathBuf>, Vec<PathBuf>) = tops.iter().cloned().partition(|t| !reviewed.contains(t));
        let of_direct = above::repositories_above(&direct);
        let of_reviewed: Vec<PathBuf> = above::repositories_above(&under_review).into_iter().filter(|g| !of_direct.contains(g)).collect();
        let all = of_direct.into_iter().map(|g| (g, false)).chain(of_reviewed.into_iter().map(|g| (g, true)));
        let mut out = Ok(());
        for (dot_git, above_reviewed_only) in all {
            if ended() {
                out = Err(());
                break;
            }
            let top = dot_git.parent().unwrap_or(Path::new("/"));
            if tops.iter().any(|t| t == top) || walked.contains(&dot_git) {
                continue;
            }
            self.spared = if above_reviewed_only { reviewed.to_vec() } else { Vec::new() };
            self.repository(&dot_git, false, None);
        }
        self.spared.clear();
        out
    }

    /// A repository's `.git` entry, the git directories it leads to and its hooks directories. At
    /// the top of a writable root a missing `.git` is made uncreatable (`protectGit`).
    /// `walk_ino`: the inode of `.git` in the walk's listing, for a repository the walk found.
    fn repository(&mut self, dot_git: &Path, at_root_top: bool, walk_ino: Option<u64>) {
        let global = self.global.hooks.clone();
        let global = global.as_slice();
        let facts = match walk_ino.and_then(|ino| repo::vouched(dot_git, ino, global)) {
            // A `.git` directory with entries, as `entry_seen` would find it: no system call.
            Some(facts) => {
                self.read_only(dot_git.to_path_buf());
                facts
            }
            None => {
                let Some((_, meta)) = self.entry_seen(dot_git, at_root_top.then_some(PlaceholderKind::Dir)) else { return };
                repo::facts(dot_git, meta.as_ref(), walk_ino, global)
            }
        };
        for d in &facts.dirs {
            if d != dot_git {
                self.read_only(d.clone());
            }
        }
        self.shared_git_dirs(dot_git, &facts.dirs);
        self.hooks(dot_git, facts.hooks.iter().cloned());
        self.hook_links(dot_git, &facts.links);
        self.repo_paths(dot_git, &facts);
        self.ways.extend(facts.ways.iter().cloned());
        for h in &facts.hard {
            self.config_hard.add(h.clone(), config_hard::What::GitConfig);
        }
    }

    /// What the configuration of the repository at a root's top includes (`repository` carved the
    /// rest while the policy was resolved): its remembered facts, vouched for or checked by `stat`.
    fn top_includes(&mut self, dot_git: &Path, walk_ino: Option<u64>) {
        let global = self.global.hooks.clone();
        let vouched = walk_ino.and_then(|ino| repo::vouched(dot_git, ino, &global));
        let facts = vouched.unwrap_or_else(|| repo::facts(dot_git, None, walk_ino, &global));
        self.repo_paths(dot_git, &facts);
        self.ways.extend(facts.ways.iter().cloned());
        for h in &facts.hard {
            self.config_hard.add(h.clone(), config_hard::What::GitConfig);
        }
    }

    /// The files the configuration of the repository at `dot_git` includes and the programs it
    /// names, into `includes` for `repo_includes`, at most `repo::PATHS_IN_ALL` of all the
    /// repositories of a carving; past that the repository is `capped` (said in `notEnforced`).
    /// Found by an attacker's review (cross34): each repository may name 256 programs, and a run
    /// made 1,500 repositories of 5 KB configurations naming 256 each: every later run kept
    /// 384,000 paths, took 8 s of the host's CPU and 27 s, and then failed, its result past what
    /// napi converts ("Exceeded maximum JSON value count").
    fn repo_paths(&mut self, dot_git: &Path, facts: &repo::Facts) {
        let all = facts.includes.len() + facts.programs.len();
        let taken = all.min(self.repo_paths_left);
        self.repo_paths_left -= taken;
        self.includes.extend(facts.includes.iter().chain(&facts.programs).take(taken).map(|f| (dot_git.to_path_buf(), f.clone())));
        self.hook_links.capped(dot_git, facts.capped || taken < all);
    }

    /// The files the repositories' own configuration includes (`repo::Facts::includes`) and the
    /// programs it names (`repo::Facts::programs`: found by the same kind of review, a run
    /// rewrote `core.fsmonitor = tools/fsmon`), kept as
    /// the global configuration's files are (`global_git`, the method): read-only where a directly
    /// written root holds them, uncreatable when missing. Found by an attacker's review: a run
    /// appended `core.fsmonitor` to `tools/gitconfig`, which `.git/config` included, and the host's
    /// next `git status` in the repository ran it. None in most workspaces: nothing to do. One
    /// where `host_path` finds it leads into a shared place is reported (`shared_ref`).
    fn repo_includes(&mut self, placeholders: bool, skip: &[PathBuf]) {
        let skipped = |c: &Carver, p: &Path| c.root_of(p).is_none_or(|i| skip.contains(&c.roots[i].root)) || c.is_covered(p);
        for (repository, f) in std::mem::take(&mut self.includes) {
            if deep_paths::too_deep(&f) || deep_paths::leads_too_deep(&f) {
                self.hook_links.too_deep(&repository, &f);
                continue;
            }
            if let Some(at) = self.host_path(&f, false, placeholders, &skipped) {
                self.shared_ref(&repository, &at);
            }
        }
    }

    /// The programs the configuration of each `.cargo` directory among `named` (the walk's protected
    /// names, at the tops and below them) names by path (`cargo_programs`: found by an attacker's
    /// review, host33, a run rewrote the `rustc-wrapper` a project's `.cargo/config.toml` named and
    /// the host's next `cargo metadata` ran it), kept by `repo_includes` as a repository's programs
    /// are. Two small reads per `.cargo` a run; none in a workspace without one.
    /// Each file is read once for all its names, within a budget for all, and the programs kept
    /// are bounded in all (found by an attacker's review, cross34: 200 `.cargo` sharing one 1 MiB
    /// file cost every later run 16 s of the host's CPU here).
    fn cargo_programs(&mut self, named: &[PathBuf]) {
        let mut reads = config_reads::Reads::new(config_reads::BUDGET);
        let mut left = cargo_programs::MAX_IN_ALL;
        for dot_cargo in named.iter().filter(|p| p.file_name().is_some_and(|n| n == cargo_programs::DIR)) {
            let found = cargo_programs::named_within(dot_cargo, &mut reads, left);
            left -= found.programs.len();
            self.hook_links.capped(dot_cargo, found.capped);
            self.includes.extend(found.programs.into_iter().map(|p| (dot_cargo.clone(), p)));
        }
    }

    /// The toolchain directory each rust-toolchain file among `named` (the walk's protected names)
    /// names by an absolute `path` (`toolchain_path`: found by an attacker's review, rfix33, a run
    /// rewrote `tc/bin/cargo` and the host's next `cargo --version` ran it), kept by
    /// `repo_includes` as a `.cargo`'s programs are: read-only where a writable root holds it. One
    /// small read per such file, once for all its names and within a budget for all (found by an
    /// attacker's review, cross34: 200 names of one 1 MiB file were read before every later run);
    /// a directory named by several files is kept once. None in a workspace without one.
    fn toolchain_paths(&mut self, named: &[PathBuf]) {
        let mut reads = config_reads::Reads::new(config_reads::BUDGET);
        let mut kept = std::collections::HashSet::new();
        for file in named.iter().filter(|p| p.file_name().is_some_and(|n| toolchain_path::FILES.iter().any(|f| n == *f))) {
            match toolchain_path::named_within(file, &mut reads) {
                Ok(dir) => self.includes.extend(dir.filter(|d| kept.insert(d.clone())).map(|d| (file.clone(), d))),
                Err(()) => self.hook_links.capped(file, true),
            }
        }
    }

    /// The files each yarn configuration, `.mvn` directory and `.envrc` among `named` (the walk's
    /// protected names) has its tool run or load, kept by `repo_includes` as a `.cargo`'s programs
    /// are. Found by an attacker's review (host34): a run rewrote the committed `yarnPath` release
    /// (`yarn_programs`; the host's next yarn ran it), the `-javaagent` jar of a `.mvn/jvm.config`
    /// (`mvn_programs`; the host's next `mvn -v` ran it) and the script an `.envrc` sources
    /// (`envrc_sources`; direnv's allow list covers the `.envrc` alone), and the programs an
    /// editor's settings name (`editor_programs`: found by an attacker's review, host35, a run
    /// rewrote the `clangd.path` a `.vscode/settings.json` named), and the files a mise
    /// configuration sources, loads or hooks (`mise_programs`: found by an attacker's review,
    /// host37, a run rewrote the `_.source` script mise's shell hook runs), and the `file://`
    /// plugins a `.prototools` loads (`proto_programs`: found by an attacker's review, hostb38, a
    /// run rewrote the WASM plugin proto's shell activation loads at every cd). One or two small reads
    /// per such entry; none in a workspace without one.
    /// Each file is read once for all its names, within a budget for each kind, and the files kept
    /// of all six kinds (yarn, Maven, `.envrc`, editor settings, mise, proto) are bounded in all (`config_reads::TOOL_PROGRAMS_IN_ALL`), as the
    /// `.cargo`'s are (found by an attacker's review, rfix34: 200 directories whose six such
    /// files were names of one 1 MiB file cost every later run 10.7 s of the host's CPU here).
    fn tool_programs(&mut self, named: &[PathBuf]) {
        let is = |p: &Path, names: &[&str]| p.file_name().is_some_and(|n| names.iter().any(|f| n == *f));
        let (mut yarn, mut mvn, mut envrc) = (config_reads::Reads::new(config_reads::BUDGET), config_reads::Reads::new(config_reads::BUDGET), config_reads::Reads::new(config_reads::BUDGET));
        let mut editor = editor_programs::reads();
        let mut mise = config_reads::Reads::new(config_reads::BUDGET);
        let mut proto = config_reads::Reads::new(config_reads::BUDGET);
        let mut dev_env = config_reads::Reads::new(config_reads::BUDGET);
        let mut left = config_reads::TOOL_PROGRAMS_IN_ALL;
        for entry in named {
            let (programs, capped) = if is(entry, yarn_programs::FILES) {
                let n = yarn_programs::named_within(entry, &mut yarn, left);
                (n.programs, n.capped)
            } else if is(entry, &[mvn_programs::DIR]) {
                let n = mvn_programs::named_within(entry, &mut mvn, left);
                (n.programs, n.capped)
            } else if is(entry, envrc_sources::FILES) {
                let n = envrc_sources::named_within(entry, &mut envrc, left);
                (n.programs, n.capped)
            } else if editor_programs::is_entry(entry) {
                let n = editor_programs::named_within(entry, &mut editor, left);
                (n.programs, n.capped)
            } else if mise_programs::is_entry(entry) {
                let n = mise_programs::named_within(entry, &mut mise, left);
                (n.programs, n.capped)
            } else if proto_programs::is_entry(entry) {
                // Found by an attacker's review (hostb38): the `file://` WASM plugins proto's
                // shell activation loads at each cd (they run programs through a host function).
                let n = proto_programs::named_within(entry, &mut proto, left);
                (n.programs, n.capped)
            } else if dev_env_programs::is_entry(entry) {
                // Found by an attacker's review (host41): a devbox.json's local plugins and a
                // devenv.yaml's imported files, evaluated with the environment at each cd.
                let n = dev_env_programs::named_within(entry, &mut dev_env, left);
                (n.programs, n.capped)
            } else {
                continue;
            };
            left -= programs.len();
            self.hook_links.capped(entry, capped);
            self.includes.extend(programs.into_iter().map(|p| (entry.clone(), p)));
        }
    }

    /// Where the symlinks among the entries of each protected directory of `named` lead
    /// (`dir_links`: found by the fixer, fix34, a run wrote a `rustc-wrapper` into the file
    /// `.cargo/config.toml` linked to, and the host's next `cargo metadata` ran it), kept by
    /// `repo_includes` as a `.cargo`'s programs are. A listing per protected directory a run. Not
    /// a report-only name's (`.bundle/config -> ../shared/bcfg`): a run may write those, and
    /// their links' targets are stamped for the report after it.
    fn dir_links(&mut self, named: &[PathBuf], names: &[String]) {
        let found = dir_links::of(named.iter().filter(|p| names.iter().any(|n| p.ends_with(n))));
        self.includes.extend(found.targets);
        for d in &found.cut {
            self.hook_links.dir_links_cut(d);
        }
    }

    /// The symlinks on the ways to the repositories' git directories (`repo::git_dirs_and_ways`)
    /// that directly written roots hold: held for the run and put back after it, as `host_path`'s
    /// are (the Landlock mode keeps them unwritten: `plan::pins::held_links`). Found by an
    /// attacker's review: only the git directory a way led to was kept, run 2 repointed `lnkf` of
    /// `sub/.git -> lnkf -> gf` to a `gitdir:` file naming its own git directory, and the host's
    /// next `git status` ran its `core.fsmonitor`. None for the common shape: nothing to do.
    fn repo_ways(&mut self, skip: &[PathBuf]) {
        let skipped = |c: &Carver, p: &Path| c.root_of(p).is_none_or(|i| skip.contains(&c.roots[i].root)) || c.is_covered(p);
        let mut ways = std::mem::take(&mut self.ways);
        ways.dedup();
        for p in ways {
            self.hold_links_on_the_way(&p, &skipped);
        }
    }

    /// The hooks that lead elsewhere (`hook_links`): a git directory's `hooks` that is a symlink is
    /// protected as a `core.hooksPath` is; where a symlinked hook leads is kept read-only (or
    /// absent, when missing) in whichever writable root holds it. Hard links are only kept for the
    /// result: their other names are unknown.
    fn hook_links(&mut self, repository: &Path, links: &hook_links::HookLinks) {
        if links.is_plain() {
            return;
        }
        self.hooks(repository, links.linked_dirs.iter().cloned());
        for (link, to) in &links.symlinks {
            if self.is_covered(to) {
                continue;
            }
            match canonical_lenient("core.hooksPath", to) {
                Ok(Lenient { path, first_missing: None }) => self.read_only(path),
                Ok(Lenient { path, first_missing: Some(first) }) => {
                    let kind = if first == path { PlaceholderKind::File } else { PlaceholderKind::Dir };
                    self.absent(&first, Some(kind));
                }
                // Past `path_walk`'s bounds: not kept, and the result says so.
                Err(_) if !self.hook_links.unjudged.contains(link) => self.hook_links.unjudged.push(link.clone()),
                Err(_) => {}
            }
        }
        self.hook_links.add(links, &self.scan_roots);
    }

    /// The git directories of `repository` that lie in a shared place (`links::SharedPlaces`: /tmp,
    /// the host's `$TMPDIR`, sandspawn's state), outside the walked roots: kept read-only for this
    /// run, but any other run (whose /tmp is writable) or process can write their config and
    /// hooks, so each run reports them (`hook_risks::Kept::after_run`). Found by an attacker's
    /// review: a worktree whose main repository was in /tmp, a `gitdir:` naming a directory there.
    /// Judged from the facts the walk remembers by comparing prefixes: no system call per
    /// repository, on the quiet path too (the carving runs on the remembered facts then).
    fn shared_git_dirs(&mut self, repository: &Path, dirs: &[PathBuf]) {
        let places = self.shared_places.get_or_init(links::SharedPlaces::now);
        for d in dirs {
            if places.hold(d, &self.scan_roots) {
                self.hook_links.git_dir_shared(repository, d);
            }
        }
    }

    /// `repository`'s configuration names `at` (canonical: an included file, a program, a hooks
    /// directory, where links on its way lead): in a shared place it is reported after every run,
    /// as a git directory there is (`shared_git_dirs`; found by an attacker's review: a run in
    /// another workspace wrote `include.path`'s file, `core.hooksPath`'s hooks, `core.fsmonitor`'s
    /// program in /tmp). A comparison of paths: the carving found `at` anyway.
    fn shared_ref(&mut self, repository: &Path, at: &Path) {
        let places = self.shared_places.get_or_init(links::SharedPlaces::now);
        if places.hold(at, &self.scan_roots) {
            self.hook_links.ref_shared(repository, at);
        }
    }

    /// A repository's hooks directories: read-only, and a missing one uncreatable; one in a shared
    /// place reported (`shared_ref`), existing or not (anyone can create it there).
    fn hooks(&mut self, repository: &Path, dirs: impl Iterator<Item = PathBuf>) {
        for hooks in dirs {
            match canonical_lenient("core.hooksPath", &hooks) {
                Ok(Lenient { path, first_missing: None }) => {
                    self.shared_ref(repository, &path);
                    self.read_only(path)
                }
                // Not there yet (e.g. husky's `_` after `git clean`): make it uncreatable.
                Ok(Lenient { path, first_missing: Some(first) }) => {
                    self.shared_ref(repository, &path);
                    self.missing(first, PlaceholderKind::Dir)
                }
                Err(_) => {}
            }
        }
    }

    /// The repositories `links` lead to that the walk did not find (`unwalked_links`), below a
    /// writable root: carved as the walk's, the first `MAX_CARVED` (the rest listed, for
    /// `notEnforced` and the report after the run). `Err` when `ended` says so.
    fn unwalked_repositories(&mut self, links: &mut unwalked_links::Kept, found: &scan::Found, ended: &dyn Fn() -> bool) -> Result<(), ()> {
        if links.is_empty() {
            return Ok(());
        }
        // A set, not a search of the list per repository: up to 1,000 links by as many git directories.
        let git_dirs: HashSet<&Path> = found.git_dirs.iter().map(|(d, _)| d.as_path()).collect();
        let walked = |g: &Path| found.git_inodes.contains_key(g.as_os_str()) || git_dirs.contains(g);
        let mut carved = HashSet::new();
        let (mut uncarved, mut unbound) = (HashSet::new(), HashSet::new());
        for git in links.repositories() {
            if ended() {
                return Err(());
            }
            if walked(git) || self.is_covered(git) || self.root_of(git).is_none() || carved.contains(git) {
                continue;
            }
            if carved.len() + unbound.len() >= unwalked_links::MAX_CARVED {
                uncarved.insert(git.to_path_buf());
                continue;
            }
            // A `realpath` each, `MAX_CARVED` at most.
            if !named_canonically(git) {
                unbound.insert(git.to_path_buf());
                continue;
            }
            carved.insert(git.to_path_buf());
            if git.file_name().is_some_and(|n| n == ".git") {
                self.repository(git, false, None);
            } else {
                self.git_directory(git);
            }
        }
        links.uncarved = uncarved;
        links.unbound = unbound;
        Ok(())
    }

    /// A directory that is a git directory itself (`scan::Found::git_dirs`): read-only, with the
    /// shared directory a `commondir` names and the hooks directory its configuration names
    /// (relative to the git directory, where git runs a bare repository's hooks).
    fn git_directory(&mut self, dir: &Path) {
        let (dirs, ways) = repo::git_dirs_and_ways(dir);
        self.ways.extend(ways);
        for d in &dirs {
            self.read_only(d.clone());
        }
        self.shared_git_dirs(dir, &dirs);
        let hooks = repo::hooks_dirs(dir, &dirs, &self.global.hooks);
        // A bare repository's relative programs run from its git directory.
        let own = global_git::repository(&repo::config_files(&dirs), dir);
        self.hook_links.capped(dir, own.capped);
        self.includes.extend(own.includes.into_iter().chain(own.programs).map(|f| (dir.to_path_buf(), f)));
        self.own_files(dir, &dirs);
        self.hook_links(dir, &hook_links::read(&dirs, &hooks));
        self.hooks(dir, hooks.into_iter());
    }

    /// A bare repository's files its configuration is read from (`repo::OWN_FILES`), as
    /// `repo::facts` does a working tree's: a symlink's target kept as an included file is, a hard
    /// link said and checked (`config_hard`). Found by an attacker's review: `b.git/config` had a
    /// second name in the workspace, and run 2's `core.hooksPath` through it went unsaid. An `lstat`
    /// each: bare repositories are few, and their configuration is read on every run anyway.
    fn own_files(&mut self, repository: &Path, dirs: &[PathBuf]) {
        for (p, m) in dirs.iter().flat_map(|d| repo::own_files(d)) {
            if m.file_type().is_symlink() {
                self.includes.push((repository.to_path_buf(), repo::link_kept(&p)));
            } else if m.is_file() && m.nlink() > 1 {
                self.config_hard.add(hook_risks::HardLinked::of(&p, &m), config_hard::What::GitConfig);
            }
        }
    }

    /// Keep the host's configuration below each home that a writable root holds (`home`): the
    /// protected names at a home that is no root's top (those are done already), and
    /// `home::Bases::paths`. `placeholders`: a missing path below a missing directory is kept absent
    /// at the first missing directory (a plan another program runs, whose placeholder needs an
    /// existing directory to be made in; and on macOS); else (a run of the runner on Linux) the
    /// path itself is listed, undone after the run if the command creates it. `skip`: reviewed roots (their changes are judged on the change set, and
    /// held back there: `review::risks`).
    fn home(&mut self, bases: &home::Bases, names: &[String], linked: &[home_links::Linked], placeholders: bool, tops: &[PathBuf], skip: &[PathBuf]) {
        let skipped = |c: &Carver, p: &Path| c.root_of(p).is_none_or(|i| skip.contains(&c.roots[i].root)) || c.is_covered(p);
        for h in bases.homes.iter().filter(|h| !tops.contains(h)) {
            if !skipped(self, h) {
                for n in names {
                    // A fixed path of the host's (a home link's target too): pinned (`named_from_outside`).
                    let kept = self.entry(&h.join(n), Some(names::placeholder_kind(n)));
                    self.named_from_outside.extend(kept);
                }
            }
        }
        // Bases no writable root holds cost one `realpath` each (a missing XDG directory may be a
        // link's way into a root), their paths none.
        let held = |base: &Path| canonical_lenient("HOME", base).is_ok_and(|l| self.root_of(&l.path).is_some());
        // A path that is a protected name at a home (`.vimrc`) was done with the names above.
        let named = |p: &Path| p.parent().is_some_and(|d| bases.homes.iter().any(|h| h == d)) && p.file_name().is_some_and(|f| names.iter().any(|n| f == n.as_str()));
        for (p, dir, _) in bases.paths_below(held) {
            if !named(&p) {
                self.host_path(&p, dir, placeholders, &skipped);
            }
        }
        // Wherever the home lies, those of its paths and names that are links (a dotfiles
        // manager's, into `~/dotfiles`): kept where they lead when a root holds that
        // (`home_links`, `linked`, found by the caller). The listings are cached: nothing but the
        // watcher's word when no directory changed, and a `realpath` per link found.
        // One batch: each directory on their ways vouched for once (`home_links::ways`).
        let ways = home_links::ways(&linked.iter().map(|l| l.path.as_path()).collect::<Vec<_>>());
        for (l, way) in linked.iter().zip(ways) {
            // Nothing on its way (the link, links it leads through, its end) in a writable root:
            // `host_path` would keep nothing. Known from the listings without a system call while
            // the watcher vouches for them (rustup's proxies cost ~300 a run resolved from `/`).
            let in_no_root = |w: home_links::Way| w.crossed.iter().chain([&w.end]).all(|p| self.root_of(p).is_none());
            if way.is_some_and(in_no_root) {
                continue;
            }
            self.host_path(&home_links::leads_to(&l.path), l.dir, placeholders, &skipped);
        }
    }

    /// Every file the host's global and system git configuration consists of (`global_git`: its
    /// top files, their includes, `includeIf` targets whatever their condition) that a directly
    /// written root holds: kept as `home` keeps a home's paths. Found by an attacker's review:
    /// `~/.gitconfig.local`, or a dotfiles checkout `~/.gitconfig` includes or links to, took a
    /// run's `core.fsmonitor`. The list is `global_git`'s cached one: a `stat` per file a run.
    /// With them the directories git takes hooks from in every repository (`global_git::Global::host_dirs`):
    /// found by the same review, `~/.git-templates/hooks` and `~/.githooks` took a run's hooks.
    fn global_git(&mut self, placeholders: bool, skip: &[PathBuf]) {
        let skipped = |c: &Carver, p: &Path| c.root_of(p).is_none_or(|i| skip.contains(&c.roots[i].root)) || c.is_covered(p);
        let global_git::Global { files, host_dirs, programs, capped, .. } = self.global.clone();
        if let Some(top) = files.first() {
            self.hook_links.capped(top, capped);
        }
        // The programs its keys name by path (`core.fsmonitor = ~/bin/fsmon`) as its files.
        for f in files.into_iter().chain(programs) {
            self.host_path(&f, false, placeholders, &skipped);
        }
        // The template directory `git init`/`clone` copy hooks from, and an absolute or `~/`
        // global `core.hooksPath`: whole directories, held with or without a repository found.
        for d in host_dirs {
            self.host_path(&d, true, placeholders, &skipped);
        }
    }

    /// A path of the host's (`p`, as named: links on its way are followed) kept read-only where it
    /// exists, else uncreatable, unless `skipped` where it leads. Returns where it leads (canonical
    /// as far as it exists), unless that could not be judged.
    fn host_path(&mut self, p: &Path, dir: bool, placeholders: bool, skipped: &dyn Fn(&Carver, &Path) -> bool) -> Option<PathBuf> {
        let Ok(l) = canonical_lenient("HOME", p) else { return None };
        let leads_to = l.path.clone();
        // Named otherwise than where it lies: a symlink may be on its way (wherever it ends).
        if l.path != p {
            self.hold_links_on_the_way(p, skipped);
        }
        if skipped(self, &l.path) {
            return Some(leads_to);
        }
        let kind = if dir { PlaceholderKind::Dir } else { PlaceholderKind::File };
        match l.first_missing {
            // There: the entry itself (a symlink's target is kept), in its canonical directory.
            None => {
                if let (Some(parent), Some(name)) = (p.parent().and_then(|d| std::fs::canonicalize(d).ok()), p.file_name()) {
                    let kept = self.entry(&parent.join(name), Some(kind));
                    self.named_from_outside.extend(kept);
                }
            }
            // Where this user can create nothing, neither can the command.
            Some(first) if first.parent().is_some_and(can_create_in) => {
                let whole = first == l.path || !placeholders;
                let (target, kind) = if whole { (l.path, kind) } else { (first, PlaceholderKind::Dir) };
                self.missing(target, kind);
            }
            Some(_) => {}
        }
        Some(leads_to)
    }

    /// The symlinks on `p`'s way that a directly written root holds, which `entry` cannot keep (a
    /// mount cannot cover a symlink): `~/.bashrc -> dotfiles/active/bashrc`, itself a link to
    /// `../pkgs/bash/bashrc`. Found by an attacker's review: only the chain's end was kept, the run
    /// did `ln -sf evil-bashrc active/bashrc`, and the host's next shell ran it. Each is held
    /// (`policy::held_links`, as `denyRead`'s links are) and put back after the run if the run
    /// replaced it (`detect`). Where a held link led when a run still going held it, if another
    /// changed it meanwhile, is kept read-only too (stricter, never looser).
    fn hold_links_on_the_way(&mut self, p: &Path, skipped: &dyn Fn(&Carver, &Path) -> bool) {
        let mut held = Held::lock();
        let (end, met) = walk_links(p, &|l| held.recorded(l));
        let changed = met.iter().any(|l| !l.is_still_there());
        for l in met {
            if !skipped(self, &l.path) && !self.links_on_the_way.iter().any(|h| h.path == l.path) {
                self.links_on_the_way.push(held.hold(l));
            }
        }
        drop(held);
        if let (true, WalkEnd::At(was)) = (changed, end) {
            if !skipped(self, &was) {
                self.read_only(was);
            }
        }
    }

    /// The missing tool caches of a held home (`tool_caches::held_home`). The command's tools create
    /// them as they work, so a run of the runner leaves them creatable and moves aside after the run
    /// what it created there (`detect`), not at once (under a tool writing in it); a plan another
    /// program runs gets a placeholder, read-only as an existing cache is (nobody checks after it).
    /// Returns those `detect` is to check; none under a path kept absent already (`.cargo`).
    fn held_caches(&mut self, caches: &[HeldCache], placeholders: bool) -> Vec<HeldCache> {
        let mut left = Vec::new();
        for cache in caches {
            let kept_absent = self.roots.iter().flat_map(|r| r.missing_read_only.iter()).any(|m| cache.path.starts_with(&m.path));
            if kept_absent || self.is_covered(&cache.path) {
                continue;
            }
            if placeholders {
                self.missing(cache.path.clone(), PlaceholderKind::Dir);
            } else {
                left.push(cache.clone());
            }
        }
        left
    }

    /// The protected names at the top of a root or repository. A missing one gets an empty
    /// read-only placeholder, a file or a directory after the name (`names::placeholder_kind`):
    /// either blocks a file and a directory of that name alike.
    fn names(&mut self, top: &Path, names: &[String]) {
        if !self.list_missing {
            if let Some(existing) = &self.existing {
                // Only the names that exist need protecting (the missing ones are undone after the
                // run): those the walk found at this top, without a path made per name (hundreds of
                // repositories times dozens of names, every run).
                let here: Vec<(PathBuf, PlaceholderKind)> = existing
                    .at_top(top)
                    .filter_map(|p| {
                        let n = p.file_name()?.to_str()?;
                        names.iter().any(|m| m == n).then(|| (p.clone(), names::placeholder_kind(n)))
                    })
                    .collect();
                for (p, kind) in here {
                    self.named_entry(&p, kind);
                }
                self.nested_name(top, names);
                return;
            }
        }
        let paths: Vec<PathBuf> = names.iter().map(|n| top.join(n)).collect();
        // Unwalked (a root's top before the walk, `/tmp`): one listing says which may exist.
        let presence = if self.existing.is_none() { crate::presence::Presence::of(paths.iter().map(|p| p.as_path())) } else { crate::presence::Presence::default() };
        for (n, p) in names.iter().zip(paths) {
            let kind = names::placeholder_kind(n);
            // What the walk did not find there does not exist: no `lstat` for it.
            if self.existing.as_ref().is_some_and(|e| !e.paths.contains(&p)) {
                if self.list_missing {
                    self.absent(&p, Some(kind));
                }
            } else if !presence.may_exist(&p) {
                self.absent(&p, Some(kind)); // as `entry_seen` does when its `lstat` fails
            } else if n == ".git" {
                // Only between roots (`between::with_git`): an existing repository there is carved
                // whole, its hooks and the files its configuration names too, by
                // `repositories_above`; here only a missing one is kept absent.
                if p.symlink_metadata().is_err() {
                    self.absent(&p, Some(kind));
                }
            } else {
                self.named_entry(&p, kind);
            }
        }
        self.nested_name(top, names);
    }

    /// `.github/hooks` at a top (`name_patterns::NESTED`), kept as a protected directory is:
    /// read-only where it exists, kept absent where `.github` exists and it does not (`absent`
    /// asks whether the parent can take entries: one `lstat`, kept per directory). Where `.github`
    /// is missing too it cannot be kept absent without keeping `.github` (workflows, the project's)
    /// absent: the walk reports it after the run. Only while any name is protected.
    fn nested_name(&mut self, top: &Path, names: &[String]) {
        // `.git` alone is protectGit's (`between::with_git`), no protected name.
        if names.iter().all(|n| n == ".git") {
            return;
        }
        // A `.github` that is a symlink: its hooks lie where it leads, which no plan follows (a
        // path through a link is refused as changed: every run failed where the host had made
        // `.github -> ci-meta` with `ci-meta/hooks`; found by an attacker's review, rfix23c). The
        // walk lists such a link (`name_patterns::of_link`): moved aside and reported after the run
        // that made it, stamped when there before so what is written where it leads is reported.
        let parent = top.join(name_patterns::NESTED_PARENT);
        let linked = match &self.existing {
            Some(e) => e.paths.contains(&parent),
            None => parent.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()),
        };
        if linked {
            return;
        }
        let p = top.join(name_patterns::NESTED);
        match &self.existing {
            // The walk lists it (`name_patterns` matches it): missing when it did not find it.
            Some(e) if !e.paths.contains(&p) => {
                if self.list_missing {
                    self.absent(&p, Some(PlaceholderKind::Dir));
                }
            }
            _ => self.named_entry(&p, PlaceholderKind::Dir),
        }
    }

    /// A protected name at a top that may exist (`entry`); one that is a regular file with other
    /// names (hard links) is kept for the result (`config_hard`), from `entry`'s own `lstat`. A
    /// directory's files (`.vscode/tasks.json`) are not looked at: a listing and a `stat` per
    /// file, for each such directory, on every run.
    fn named_entry(&mut self, p: &Path, kind: PlaceholderKind) {
        if let Some((p, Some(m))) = self.entry_seen(p, Some(kind)) {
            if m.is_file() && m.nlink() > 1 {
                self.config_hard.add(hook_risks::HardLinked::of(&p, &m), config_hard::What::Named);
            }
        }
    }
}

/// Whether this user can create an entry in `dir`: it owns it (an owner may always add the write
/// bit back), or may write and search it now (`access` with the effective ids, ACLs included).
fn can_create_in(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(meta) = dir.symlink_metadata() else { return false };
    // SAFETY: geteuid has no preconditions.
    if meta.uid() == unsafe { libc::geteuid() } {
        return true;
    }
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return false };
    // SAFETY: a valid C string.
    unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK | libc::X_OK, libc::AT_EACCESS) == 0 }
}

/// Whether the repository `git` (a `.git` entry or a git directory) is named canonically, as the
/// run's setup binds it: a look gives such paths (`link_looks`), but one named through a symlink
/// all the same would have setup refuse it on every later run (found by an attacker's review,
/// rfix24, chain_dos.js: `ws/a9/a9/a9/.git`). A `.git` may be a symlink (a `gitdir` elsewhere):
/// the directory holding it is what is named.
fn named_canonically(git: &Path) -> bool {
    let named = if git.file_name().is_some_and(|n| n == ".git") { git.parent() } else { Some(git) };
    named.is_some_and(|d| std::fs::canonicalize(d).is_ok_and(|c| c == d))
}

#[cfg(test)]
mod tests;
