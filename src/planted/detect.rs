//! After a run (bwrap, Landlock and Seatbelt runs): what the sandbox could not prevent, found by
//! walking the same area as before the run and comparing. Only entries that can do something are reported: an empty file
//! or directory runs nothing (and is what a concurrent run's placeholder looks like).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{links, named_stamp, names, repo, scan, undo, Baseline};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RiskKind {
    RepositoryCreated,
    HooksWritten,
    ProtectedNameCreated,
    /// A writable root or its `.git`, or a tool cache a private copy covered inside one
    /// (`tool_caches::moved`), is not the directory it was before the run.
    WorkspaceReplaced,
    /// A directory became a git directory itself (bare, or planted into a folder).
    GitDirectoryCreated,
    /// The walk after the run stopped at its bound: the area it names was not examined.
    ScanIncomplete,
    /// A symlink the run made that leads into a shared temporary directory (`links`).
    LinkToSharedDirectory,
    /// A change set's directory mode that opens it to other users, or takes the workspace root
    /// from its owner (`review::dir_modes`; review mode only); or a directory above sandspawn's
    /// stores this user can no longer search (`runner::store_modes`); or a writable root's top a
    /// direct run opened to others (`opened_tops`).
    PermissionsChanged,
}

/// One entry of `SpawnResult.hostRisks`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostRisk {
    pub path: String,
    pub kind: RiskKind,
    /// What it could make the host do.
    pub detail: String,
}

/// At most this many entries in a run's `hostRisks`, and one more that counts the rest (see
/// `Listed`): 100,000 planted repositories made 200,000 entries, 52 MB of JSON and 530 MiB more in
/// the host process.
pub const MAX_REPORTED: usize = 1_000;

/// What the run left on the host (see `detect_after`), nothing reported during it.
pub fn detect(baseline: &Baseline) -> Vec<HostRisk> {
    detect_after(baseline, Vec::new())
}

/// What the run left on the host, after `during_run` (what was moved aside while it ran): at most
/// `MAX_REPORTED` entries in path order, then one `scan-incomplete` entry for the rest, if any.
/// Whatever is found is undone all the same, listed or not.
pub fn detect_after(baseline: &Baseline, during_run: Vec<HostRisk>) -> Vec<HostRisk> {
    detect_after_listed(baseline, during_run, &mut crate::presence::Presence::default())
}

/// `detect_after`, the listings it takes of the tops the walk does not cover (`/tmp`'s) left in
/// `presence`, for the cleanup of placeholders right after it (`placeholders::remove_leftovers_listed`):
/// the same moment, after the run, so one listing of each top instead of two.
pub fn detect_after_listed(baseline: &Baseline, during_run: Vec<HostRisk>, presence: &mut crate::presence::Presence) -> Vec<HostRisk> {
    let (found, index) = scan::walk_indexed(&baseline.spec, Some(&baseline.index), baseline.taken_at_ns);
    let index = std::sync::Arc::new(index);
    // The next run in this area starts from this walk: what this run changed is read once, here.
    super::baseline::remember(&baseline.spec, std::sync::Arc::clone(&index));
    let mut risks = Listed::default();
    risks.extend(replaced_roots(baseline));
    risks.extend(super::opened_tops::opened(&baseline.top_modes).into_iter().map(|o| HostRisk {
        path: o.path.to_string_lossy().into_owned(),
        kind: RiskKind::PermissionsChanged,
        detail: o.detail(),
    }));
    risks.extend(during_run);
    let absent: HashSet<&PathBuf> = baseline.absent.iter().collect();
    undo_created(baseline, &found, presence, &mut risks);
    if baseline.report_repositories {
        unwalked_tops_made_git_dirs(baseline, &mut risks);
    }
    undo_created_caches(baseline, &mut risks);
    restore_deny_links(baseline, &mut risks);
    restore_links_on_the_way(baseline, &mut risks);
    if baseline.report_repositories {
        // New, or another inode than before at the same path (a directory above it was swapped).
        let new = |p: &&PathBuf| !absent.contains(*p) && baseline.git.get(p.as_os_str()).is_none_or(|ino| found.git_inodes.get(p.as_os_str()) != Some(ino));
        let mut hooks_read = HooksRead::default();
        for dot_git in found.git_entries.iter().filter(new) {
            if can_act(dot_git) {
                new_repository(dot_git, baseline.taken_at, &mut hooks_read, &mut risks);
            }
        }
        // New, or another directory than before at the same path (one above it was swapped).
        for (dir, _) in found.git_dirs.iter().filter(|(d, id)| baseline.git_dirs.get(d) != Some(id)) {
            git_directory(dir, baseline.git_dirs.contains_key(dir), &mut risks);
        }
    }
    risks.extend(incomplete(&found));
    risks.extend(named_unkept(&found));
    for u in super::unreadable::report(&found.unreadable, baseline.taken_at) {
        risks.push(HostRisk { path: u.path.to_string_lossy().into_owned(), kind: RiskKind::ScanIncomplete, detail: u.detail });
    }
    for p in found.named.iter().filter(|p| !absent.contains(p)) {
        let replaced = match baseline.named.get(p) {
            None => false,
            Some(id) => p.symlink_metadata().is_ok_and(|m| (m.dev(), m.ino()) != *id),
        };
        let Some(what) = what_it_does(baseline, p) else { continue };
        if (replaced || !baseline.named.contains_key(p)) && can_act(p) {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let how = if replaced { "was replaced" } else { "was created" };
            let mut detail = format!("{name} {how} during the run: {what}");
            // At a nested repository's top it had to stay absent (`Absent::UndoneAfter`).
            let kept_absent = !replaced && (baseline.protected_names.contains(&name) && p.parent().is_some_and(|t| baseline.protected_tops.contains(t.as_os_str())) || hooks_link_at_top(baseline, p));
            if kept_absent {
                detail.push_str(&moved_aside(p));
            }
            risks.push(HostRisk { path: p.to_string_lossy().into_owned(), kind: RiskKind::ProtectedNameCreated, detail });
        }
    }
    changed_in_place(baseline, &mut risks);
    store_configs(baseline, &mut risks);
    venv_ways(baseline, &mut risks);
    // Hooks written through another name (`hook_risks`).
    let hooks_budget = crate::policy::path_walk::RunBudget::set(super::hook_risks::RUN_HOOK_STEPS);
    let hooks = baseline.hook_links.after_run();
    drop(hooks_budget);
    let hooks = hooks.into_iter().map(|f| {
        let kind = if f.shared { RiskKind::LinkToSharedDirectory } else { RiskKind::HooksWritten };
        HostRisk { path: f.path.to_string_lossy().into_owned(), kind, detail: f.detail }
    });
    risks.extend(hooks);
    // The host's configuration files written through another name (`home_hard`).
    for (path, detail) in baseline.home_hard.after_run() {
        risks.push(HostRisk { path: path.to_string_lossy().into_owned(), kind: RiskKind::ProtectedNameCreated, detail });
    }
    // A repository's configuration or a protected name written through another name (`config_hard`).
    for (path, what, detail) in baseline.config_hard.after_run() {
        let kind = if what == super::config_hard::What::GitConfig { RiskKind::HooksWritten } else { RiskKind::ProtectedNameCreated };
        risks.push(HostRisk { path: path.to_string_lossy().into_owned(), kind, detail });
    }
    links_made(baseline, &found, &mut risks);
    if baseline.report_repositories {
        unwalked_links(baseline, &found, index.totals(), &mut risks);
    }
    home_config(baseline, &index, &mut risks);
    risks.report()
}

/// What the run made in a held home's config directory or as a dot-entry at its top, beyond the
/// held list (`home_config`): reported, left in place. Not what is held, nor what a risk names
/// already at its very path (`Listed::names`).
fn home_config(baseline: &Baseline, index: &scan::Index, risks: &mut Listed) {
    let w = &baseline.home_config;
    if w.homes.is_empty() && w.config.is_empty() {
        return;
    }
    // Sets, asked by each ancestor: thousands of directories are looked at against hundreds of
    // held paths (a list scanned for each took over a second on a home with a full `~/.config`).
    let held: HashSet<PathBuf> = baseline.home.paths().map(|(p, _, _)| p).chain(baseline.held_caches.iter().map(|c| c.path.clone())).collect();
    let under = |set: &HashSet<PathBuf>, p: &Path| p.ancestors().any(|a| set.contains(a));
    let named = |p: &Path| p.parent().is_some_and(|d| w.homes.iter().any(|h| h == d)) && p.file_name().is_some_and(|n| baseline.protected_names.contains(&*n.to_string_lossy()));
    // sandspawn's own directories (its state, made in the home on a first run: `~/.local`).
    let env = |k: &str| std::env::var_os(k).map(PathBuf::from).filter(|p| p.is_absolute());
    let own: Vec<PathBuf> = [crate::state_dir::base(env), env("SANDSPAWN_TOOL_CACHE_DIR"), env("SANDSPAWN_CHANGE_SET_DIR")].into_iter().flatten().collect();
    let ours = |p: &Path| own.iter().any(|o| o.starts_with(p));
    // Only a risk naming the very path stands for an entry (`Listed::names`): one above it, or a
    // `scan-incomplete`, does not (rfix23c); so only held paths and sandspawn's own directories
    // are not looked into.
    let skip = |p: &Path| named(p) || ours(p) || under(&held, p) || risks.names(p);
    let not_below = |p: &Path| own.iter().any(|o| p.starts_with(o)) || under(&held, p);
    let found = super::home_config::after_run(w, &baseline.index, index, baseline.taken_at_ns, &skip, &not_below);
    for p in found.entries {
        let detail = super::home_config::detail(&p, w);
        risks.keep(HostRisk { path: p.to_string_lossy().into_owned(), kind: RiskKind::ProtectedNameCreated, detail });
    }
    for dir in found.unjudged {
        risks.push(HostRisk { path: dir.to_string_lossy().into_owned(), kind: RiskKind::ScanIncomplete, detail: super::home_config::unjudged_detail() });
    }
    if let Some(at) = found.cut {
        risks.push(HostRisk { path: at.to_string_lossy().into_owned(), kind: RiskKind::ScanIncomplete, detail: super::home_config::cut_detail() });
    }
}

/// At most this many symlinks the run made are judged by where they lead (each costs a few dozen
/// `lstat`s at most): those the walk after the run keeps (`scan::MAX_LINKS`); past it, one
/// `scan-incomplete` entry says so.
pub const MAX_LINKS_JUDGED: usize = scan::MAX_LINKS;

/// The symlinks the run made or changed in the directories the walk after it read again (only
/// those: a run that made no link pays for none), judged by where they lead (`links::judge`): git
/// run there on the host would use a repository the run could have planted, or they lead into a
/// shared temporary directory. A repository the walk saw before the run, as the same inode, is
/// not one the run planted (its git directory was read-only).
fn links_made(baseline: &Baseline, found: &scan::Found, risks: &mut Listed) {
    // Past the bound the walk kept none (`Found::links_unkept`).
    if let Some(area) = &found.links_unkept.first_dir {
        let detail = format!("the run made more than {MAX_LINKS_JUDGED} symlinks; those past them (this directory's among them) were not judged by where they lead: look at them before running host tools through them");
        risks.push(HostRisk { path: area.to_string_lossy().into_owned(), kind: RiskKind::ScanIncomplete, detail });
    }
    if found.links.is_empty() {
        return;
    }
    let known = |g: &Path| baseline.entry_id(g).is_some_and(|id| g.symlink_metadata().is_ok_and(|m| (m.dev(), m.ino()) == id));
    let places = links::Places { roots: &baseline.spec.roots, known: &known };
    // Names inside `node_modules` are neither protected nor reported: a link into one is said
    // when they are elsewhere (`links_into_nm`).
    let names = !baseline.spec.names.is_empty();
    // All of them judged within one budget (`links_budget`): past it, the rest is said once.
    let mut budget = super::links_budget::LinksBudget::after_run();
    let made: Vec<(&PathBuf, PathBuf)> = links::made_since(&found.links, baseline.taken_at_ns).collect();
    for (i, (link, target)) in made.iter().enumerate() {
        if budget.spent() {
            risks.push(past_the_budget(link, made.len() - i - 1));
            break;
        }
        let resolved = budget.resolve(link, target);
        // Repositories are reported with `protectGit` only, as above. Each within the bound, an
        // unjudged one too: a run makes thousands of links through /proc cheaply.
        let judged = judge_resolved_link(link, target, resolved.clone(), &places, &mut budget).filter(|r| baseline.report_repositories || r.kind != RiskKind::GitDirectoryCreated);
        let into_nm = || {
            let detail = names.then(|| super::links_into_nm::said(target, resolved.as_deref().ok())).flatten()?;
            Some(HostRisk { path: link.to_string_lossy().into_owned(), kind: RiskKind::ScanIncomplete, detail })
        };
        if let Some(r) = judged.or_else(into_nm) {
            risks.keep(r);
        }
    }
}

/// The `scan-incomplete` at `link`, the first link the run made met past the budget for judging
/// them all (`links_budget`), with the `more` after it.
fn past_the_budget(link: &Path, more: usize) -> HostRisk {
    let detail = format!(
        "is a symlink made during the run; the symlinks it made before it took up all the steps judging them may take ({} components of \
         their ways and directories git's discovery looks at), so this one and the {more} after it were not judged by where they lead: \
         look at them before running host tools through them",
        super::links_budget::STEPS
    );
    HostRisk { path: link.to_string_lossy().into_owned(), kind: RiskKind::ScanIncomplete, detail }
}

/// The symlinks into `node_modules` that existed before the run (`unwalked_links`): one that leads
/// now to a repository the run planted or changed there, which no walk sees. One `links_made`
/// judged (the run made it, as far as its ctime tells) is not said twice. `all`: what the walk
/// after the run holds, directories it did not read again included (their other links, each of
/// which the run may have led into `node_modules` by a change elsewhere on its way).
fn unwalked_links(baseline: &Baseline, found: &scan::Found, all: &scan::Found, risks: &mut Listed) {
    if baseline.unwalked_links.is_empty() && all.links_via.is_empty() && all.links_via_unkept.first_dir.is_none() {
        return;
    }
    let known = |g: &Path| baseline.entry_id(g).is_some_and(|id| g.symlink_metadata().is_ok_and(|m| (m.dev(), m.ino()) == id));
    let made: HashSet<&Path> = links::made_since(&found.links, baseline.taken_at_ns).map(|(l, _)| l.as_path()).collect();
    let judged = |l: &Path| made.contains(l);
    let after = baseline.unwalked_links.after_run(baseline.taken_at_ns, &baseline.spec.roots, &known, &judged, &all.links_via);
    links_via_unjudged(&after, all, risks);
    if let Some(cut) = &after.cut {
        let detail = format!(
            "is a symlink into node_modules; looking at such links after the run took more than {} steps, and this one and the {} \
             after it were not judged: a repository a run planted where they lead is not reported: look at them before running git through them",
            super::unwalked_links::MAX_LOOK_STEPS,
            cut.count - 1
        );
        risks.keep(HostRisk { path: cut.first.to_string_lossy().into_owned(), kind: RiskKind::ScanIncomplete, detail });
    }
    for (link, why) in &after.unfollowed {
        let detail = format!(
            "is a symlink into node_modules whose way {}: where it leads, and so a repository a run planted there, is not judged: \
             look at it before running git through it",
            why.why()
        );
        risks.keep(HostRisk { path: link.to_string_lossy().into_owned(), kind: RiskKind::ScanIncomplete, detail });
    }
    for f in after.found {
        let (kind, mut detail) = match f.unjudged {
            None => (
                RiskKind::GitDirectoryCreated,
                format!(
                    "is a symlink, to {}, into node_modules, where the walk for planted repositories does not look: git run there on \
                     the host (`cd` there, then `git status`) uses the repository at {}, which was created or changed during the run: \
                     its configuration and hooks",
                    f.target.display(),
                    f.git.display()
                ),
            ),
            Some(why) => (
                RiskKind::ScanIncomplete,
                format!(
                    "is a symlink, to {}, into node_modules, where the walk for planted repositories does not look: git run there on \
                     the host (`cd` there, then `git status`) uses the repository at {}, which {} and what a run changed there (its \
                     hooks, configuration, submodules) is not judged: look at it before running git through this link",
                    f.target.display(),
                    f.git.display(),
                    match why {
                        super::unwalked_links::Unjudged::PastTheBound => format!(
                            "is not kept read-only (past the first {} repositories behind such links),",
                            super::unwalked_links::MAX_CARVED
                        ),
                        super::unwalked_links::Unjudged::NotCanonical => {
                            "is named through a symlink, so it is not kept read-only,".to_string()
                        }
                        super::unwalked_links::Unjudged::Elsewhere => "lies outside the run's roots, in a node_modules other runs write,".to_string(),
                        super::unwalked_links::Unjudged::OtherRuns => "lies in a node_modules that a run in another working directory (a \
                            package of a monorepo, the package itself) writes unseen by this workspace's runs,"
                            .to_string(),
                    }
                ),
            ),
        };
        if !f.config.keys.is_empty() {
            detail.push_str(&format!("; its configuration sets {}, each of which makes git run a program", f.config.keys_named()));
        }
        detail.push_str(&f.config.unjudged_detail());
        risks.keep(HostRisk { path: f.link.to_string_lossy().into_owned(), kind, detail });
    }
}

/// The other links (`scan::Found::links_via`) whose ways the look after the run did not follow:
/// past the budget, or past the walk's bound. Whether one leads into `node_modules` now is not known.
fn links_via_unjudged(after: &super::unwalked_links::AfterRun, found: &scan::Found, risks: &mut Listed) {
    let past = |n: usize| format!(
        "is a symlink whose text names no node_modules; whether it and the {n} other such links after it lead into a node_modules \
         through another link was not told (more than {} steps, or {} links): a repository a run planted where they lead is not \
         reported: look at them before running git through them",
        super::unwalked_links::MAX_LOOK_STEPS,
        scan::MAX_LINKS_VIA
    );
    if let Some(cut) = &after.unsorted {
        risks.keep(HostRisk { path: cut.first.to_string_lossy().into_owned(), kind: RiskKind::ScanIncomplete, detail: past(cut.count - 1) });
    }
    if let Some(dir) = &found.links_via_unkept.first_dir {
        let n = found.links_via_unkept.count;
        risks.keep(HostRisk { path: dir.to_string_lossy().into_owned(), kind: RiskKind::ScanIncomplete, detail: past(n.saturating_sub(1)) });
    }
}

/// The host risk of the symlink at `link` (holding `target`) a run made, if any (`links::judge`):
/// after a direct run and on a change set alike.
/// Its way and git's discovery spend from `budget`, the judgement's (`links_budget`).
pub fn judge_link(link: &Path, target: &Path, places: &links::Places, budget: &mut super::links_budget::LinksBudget) -> Option<HostRisk> {
    let resolved = budget.resolve(link, target);
    judge_resolved_link(link, target, resolved, places, budget)
}

/// `judge_link`, given where the link leads (`links::resolve`'s answer).
fn judge_resolved_link(link: &Path, target: &Path, resolved: Result<PathBuf, crate::policy::path_walk::Unjudged>, places: &links::Places, budget: &mut super::links_budget::LinksBudget) -> Option<HostRisk> {
    let path = link.to_string_lossy().into_owned();
    let shown = target.display();
    Some(match links::judge_resolved(resolved, places, &mut |d| budget.discover(d))? {
        links::Verdict::Repository { git, config } => {
            let mut detail = format!(
                "is a symlink made during the run, to {shown}, where git run on the host (`cd` there, then `git status`) uses the \
                 repository at {}, which the run could have planted: its configuration and hooks",
                git.display()
            );
            if !config.keys.is_empty() {
                detail.push_str(&format!("; its configuration sets {}, each of which makes git run a program", config.keys_named()));
            }
            detail.push_str(&config.unjudged_detail());
            HostRisk { path, kind: RiskKind::GitDirectoryCreated, detail }
        }
        links::Verdict::Unjudged(why) => HostRisk {
            path,
            kind: RiskKind::ScanIncomplete,
            detail: format!(
                "is a symlink made during the run, to {shown}, whose way {}: where it leads on the host (a shell that `cd`s \
                 through it, git run there) was not judged, and may be a repository the run planted; look at it before running \
                 host tools through it",
                why.why()
            ),
        },
        links::Verdict::Shared => HostRisk {
            path,
            kind: RiskKind::LinkToSharedDirectory,
            detail: format!(
                "is a symlink made during the run, to {shown}, in a temporary directory every process on the host (and every later \
                 run) can write: what the host runs there next (git, a build) sees whatever was put there, a planted repository too"
            ),
        },
    })
}

/// A `.github` symlink (`name_patterns::of_link`: the walk names one only as a link) made at the top
/// of a walked root or of a nested repository whose missing names are undone, while names are
/// protected: it stands for `.github/hooks`, which is kept absent there, so it is moved aside as a
/// protected name made there is. Found by an attacker's review: `ln -s ci-meta .github`, with
/// `ci-meta/hooks/evil.json`, stayed for Copilot CLI on the host (the project's `.github`, moved
/// aside by the run first, is left where the run put it).
fn hooks_link_at_top(baseline: &Baseline, p: &Path) -> bool {
    let (Some(top), Some(name)) = (p.parent(), p.file_name()) else { return false };
    let at_top = baseline.protected_tops.contains(top.as_os_str()) || baseline.spec.roots.iter().any(|r| r == top);
    !baseline.protected_names.is_empty() && at_top && name == super::name_patterns::NESTED_PARENT
}

/// Report-only names that existed and were rewritten in place (`cat > .pre-commit-config.yaml`,
/// a chmod): the same inode, so neither created nor replaced (another inode is reported as
/// replaced above), whether or not the walk listed their directory again. Their ctime moved,
/// which no command can set back. One `lstat` per such name that existed (protected ones are
/// read-only and not looked at).
fn changed_in_place(baseline: &Baseline, risks: &mut Listed) {
    let mut budget = named_stamp::Budget::default();
    let mut before: Vec<_> = baseline.named_changed_at.iter().collect();
    // In the order the stamps before the run were taken (by path), so the shared budget runs out
    // at the same entries.
    before.sort_by_key(|(p, _)| *p);
    let mut changed: Vec<(&PathBuf, bool)> = before
        .into_iter()
        .filter_map(|(p, before)| {
            let m = p.symlink_metadata().ok().filter(|m| baseline.named.get(p) == Some(&(m.dev(), m.ino())))?;
            let now = named_stamp::of(p, &m, &mut budget);
            let judged = before.complete && now.complete;
            (now.newest != before.newest || !judged).then_some((p, judged))
        })
        .collect();
    changed.sort();
    for (p, judged) in changed.into_iter().filter(|(p, _)| can_act(p)) {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let path = p.to_string_lossy().into_owned();
        let what = what_it_does(baseline, p).unwrap_or_else(|| names::what_at(p));
        if judged {
            let detail = format!("{name} was changed during the run: {what}");
            risks.push(HostRisk { path, kind: RiskKind::ProtectedNameCreated, detail });
        } else {
            let detail = format!(
                "{name} holds more than {} entries, lies past the {} entries looked at per run, holds some that could not be read, \
                 or is (or holds) a symlink through /proc (/proc/self/cwd, /dev/fd: it leads wherever the process following it is): \
                 a file changed inside it or where it leads during the run would not be seen ({})",
                named_stamp::MAX_ENTRIES,
                named_stamp::MAX_TOTAL,
                what
            );
            risks.push(HostRisk { path, kind: RiskKind::ScanIncomplete, detail });
        }
    }
}

/// A version-control store's configuration below the tops created, replaced or rewritten during the
/// run (`store_configs`), and the first store past the bound, each run while it is there.
fn store_configs(baseline: &Baseline, risks: &mut Listed) {
    for c in baseline.store_configs.changed().into_iter().filter(|c| can_act(c.path)) {
        let name = &c.shown;
        let (kind, detail) = match c.judged {
            true => (RiskKind::ProtectedNameCreated, format!("{name} was created or changed during the run: {}", c.what)),
            false => (
                RiskKind::ScanIncomplete,
                format!("{name} is a symlink through /proc (it leads wherever the process following it is): a change where it leads would not be seen ({})", c.what),
            ),
        };
        risks.push(HostRisk { path: c.path.to_string_lossy().into_owned(), kind, detail });
    }
    if let Some((first, count)) = baseline.store_configs.unexamined() {
        let detail = format!(
            "{count} version-control stores (.hg, .sl, .jj, .pijul, _darcs) below the tops, this one first, lie past the {} configuration files looked at per run: one whose hgrc or config was changed during the run would not be seen",
            super::store_configs::MAX_PATHS
        );
        risks.push(HostRisk { path: first.to_string_lossy().into_owned(), kind: RiskKind::ScanIncomplete, detail });
    }
}

/// A directory on the way from a kept virtual environment to its site-packages replaced, renamed
/// or made a link during the run (`venv_way`): the files Python runs there were not judged.
fn venv_ways(baseline: &Baseline, risks: &mut Listed) {
    let mut envs: Vec<_> = baseline.venv_ways.iter().collect();
    envs.sort_by(|a, b| a.0.cmp(b.0));
    for (env, before) in envs {
        for p in super::venv_way::changed(env, before).into_iter().filter(|p| can_act(p)) {
            let detail = format!(
                "{} was replaced, renamed, removed or made a symlink during the run, on the way from {} to its site-packages: \
                 what Python runs where it now leads was not judged ({})",
                p.display(),
                env.display(),
                super::venv::WHAT_IT_DOES
            );
            risks.push(HostRisk { path: p.to_string_lossy().into_owned(), kind: RiskKind::ProtectedNameCreated, detail });
        }
    }
}

/// What the host does with a named entry the walk found; `None` for a virtual environment's file
/// (`venv::walked`) outside the environments kept (a `bin/python` of a toolchain, an environment
/// the run made: its own work). A pattern's name first: Hermit's `bin/activate-hermit` has the
/// shape of an environment's `bin/activate*` (found by the fixer, host40: one made below a new
/// directory was taken for the run's own environment and not reported).
fn what_it_does(baseline: &Baseline, p: &Path) -> Option<&'static str> {
    let name = p.file_name()?;
    if !super::venv::walked(p.parent()?, name) || super::name_patterns::of_path(p).is_some() {
        return Some(names::what_at(p));
    }
    super::venv::file_of(p).filter(|(env, _)| baseline.venvs.contains(*env)).map(|_| super::venv::WHAT_IT_DOES)
}

/// A run's host risks as they are found: at most `MAX_REPORTED` kept, the rest counted by kind
/// along with the directory they all lie in, so the list stays bounded however much a run planted.
/// `workspace-replaced` and `scan-incomplete` entries are always kept: a few per root at most (a
/// link that could not be judged is kept as a git risk is, `keep`: a run makes thousands).
/// Past the bound a git risk (a repository, a git directory, hooks: what git on the host runs)
/// takes the place of a kept protected name, so a run cannot push the repository it planted out
/// of the list with a thousand names found before it.
#[derive(Default)]
struct Listed {
    always: Vec<HostRisk>,
    /// By tier: git risks, then protected names.
    kept: [Vec<HostRisk>; 2],
    more: BTreeMap<RiskKind, usize>,
    /// The deepest directory holding every entry counted in `more`.
    area: Option<PathBuf>,
}

fn tier(kind: RiskKind) -> usize {
    match kind {
        RiskKind::ProtectedNameCreated => 1,
        _ => 0,
    }
}

impl Listed {
    /// Whether `p` itself is named already, by a risk that says what it is. Not one above it, nor
    /// a `scan-incomplete` (which says only that an area was not examined): found by an attacker's
    /// review (rfix23c), 10,001 links at the home's top made one `scan-incomplete` at $HOME, and
    /// every entry a run made in the home then went unnamed. In a direct run no risk holds an
    /// entry back (what is moved aside is gone, or held by path: `home_config`'s `held`).
    fn names(&self, p: &Path) -> bool {
        self.always.iter().chain(self.kept.iter().flatten()).any(|r| r.kind != RiskKind::ScanIncomplete && Path::new(&r.path) == p)
    }

    fn push(&mut self, r: HostRisk) {
        if matches!(r.kind, RiskKind::WorkspaceReplaced | RiskKind::ScanIncomplete) {
            self.always.push(r);
            return;
        }
        self.keep(r);
    }

    /// Kept within `MAX_REPORTED` by its tier, whatever its kind: for what a run can make by the
    /// thousand (a `scan-incomplete` for each link through /proc), as a git risk, which it may hide.
    fn keep(&mut self, r: HostRisk) {
        let t = tier(r.kind);
        if self.kept.iter().map(Vec::len).sum::<usize>() < MAX_REPORTED {
            self.kept[t].push(r);
            return;
        }
        // Full: a lower tier's entry gives way, if there is one; else this one is counted.
        match (t + 1..self.kept.len()).find(|&u| !self.kept[u].is_empty()) {
            Some(u) => {
                let out = self.kept[u].pop().expect("not empty");
                self.kept[t].push(r);
                self.count(out);
            }
            None => self.count(r),
        }
    }

    fn count(&mut self, r: HostRisk) {
        *self.more.entry(r.kind).or_default() += 1;
        let p = Path::new(&r.path);
        self.area = Some(match self.area.take() {
            None => p.parent().unwrap_or(p).to_path_buf(),
            Some(a) => a.ancestors().find(|d| p.starts_with(d)).unwrap_or(Path::new("/")).to_path_buf(),
        });
    }

    fn extend(&mut self, risks: impl IntoIterator<Item = HostRisk>) {
        for r in risks {
            self.push(r);
        }
    }

    /// The kept entries in path order, then the one that counts the rest.
    fn report(self) -> Vec<HostRisk> {
        let [git, names] = self.kept;
        let mut risks: Vec<HostRisk> = self.always.into_iter().chain(git).chain(names).collect();
        risks.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.kind.cmp(&b.kind)));
        let Some(area) = self.area else { return risks };
        let total: usize = self.more.values().sum();
        let kinds: Vec<String> = self.more.iter().map(|(k, n)| format!("{}: {n}", serde_json::to_value(k).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default())).collect();
        risks.push(HostRisk {
            path: area.to_string_lossy().into_owned(),
            kind: RiskKind::ScanIncomplete,
            detail: format!(
                "{total} more host risks were found here and are not listed ({}); a run lists at most {MAX_REPORTED}. Those that \
                 had to stay absent were moved aside like the listed ones; look for the others (repositories, hooks, protected \
                 names) below this directory before running host tools in it",
                kinds.join(", ")
            ),
        });
        risks
    }
}

/// What is said of an entry created where a missing `readOnlyPaths` or `denyRead` entry is kept absent.
pub(super) const KEPT_ABSENT_BY_PATH: &str =
    "was created during the run where the policy keeps a missing path absent (a readOnlyPaths or denyRead entry): the next run would resolve the path through it";

/// The outcome said of an entry that was gone when it was to be moved aside.
pub(super) const GONE: &str = "; gone before this run could move it aside: moved aside by a concurrent run with the same writable root (and reported there too), or removed by the command";

/// Move `p` aside (`undo`), and say how that went, for a report's detail.
/// Where protectGit keeps a missing `.git` absent: a root's top, and the directories between a
/// root and one nested below it, where git's discovery from the workspace finds it (`between`).
pub(crate) const WHERE_GIT_KEPT: &str = "at the top of a writable root or in a directory between one and a workspace below it";

/// What is said of git's `HEAD` created where protectGit keeps it absent (`upward::GIT_HEAD`).
pub(super) fn head_created() -> String {
    format!("git's HEAD was created during the run {WHERE_GIT_KEPT}, where protectGit keeps it absent: {}", super::upward::GIT_HEAD.1)
}

fn moved_aside(p: &Path) -> String {
    match undo::move_aside(p) {
        undo::Undone::MovedTo(to) => format!("; undone: moved aside to {}", to.display()),
        undo::Undone::Left(why) => format!("; NOT undone: {why}"),
        undo::Undone::Gone => GONE.to_string(),
    }
}

/// What the run created where a name must stay absent: moved aside, and reported. Whether it exists
/// is known without a syscall where the walk after the run covers its directory (read again only
/// if an entry was added there); elsewhere (the tops of `/tmp` and `$TMPDIR`, names the walk does
/// not look for) it is `lstat`ed.
fn undo_created(baseline: &Baseline, found: &scan::Found, presence: &mut crate::presence::Presence, risks: &mut Listed) {
    let seen: HashSet<&PathBuf> = found.named.iter().chain(&found.git_entries).collect();
    // Past its bound the walk did not keep every name it found (`Found::named_unkept`): each looked at.
    let all_seen = found.named_unkept.count == 0;
    // Judged once a path (it is asked twice): which paths a walk covers does not change.
    let by_walk: Vec<bool> = baseline.absent.iter().map(|p| all_seen && walked(baseline, p)).collect();
    // The others (a hundred names at `/tmp`'s top): one listing says which may exist.
    // Listed now, after the run (a listing held from before it would miss what the run made).
    presence.more(baseline.absent.iter().zip(&by_walk).filter(|(_, w)| !**w).map(|(p, _)| p.as_path()));
    for (p, &by_walk) in baseline.absent.iter().zip(&by_walk) {
        let meta = if by_walk { seen.contains(p).then(|| p.symlink_metadata().ok()).flatten() } else { presence.symlink_metadata(p) };
        let Some(meta) = meta else { continue };
        if crate::placeholders::is_placeholder(p, &meta) {
            continue;
        }
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let what = if name == ".git" {
            let config = repo::configured(&repo::git_dirs(p));
            let keys = if config.keys.is_empty() { String::new() } else { format!(" (its configuration set {})", config.keys_named()) };
            format!("a git repository was created {WHERE_GIT_KEPT}{keys}, where protectGit keeps .git from being created{}", config.unjudged_detail())
        } else if baseline.spec.names.contains(&name) {
            format!("{name} was created during the run where it is a protected name: {}", names::what_it_does(&name))
        } else if let Some(what) = super::name_patterns::of_path(p) {
            format!("{name} was created during the run where it is kept as a protected name is: {what}")
        } else if name == super::upward::GIT_HEAD.0 {
            head_created()
        } else if let Some(what) = super::upward::what_it_does(&name) {
            format!("{name} was created during the run in a directory above a workspace, where tools search for it: {what}")
        } else if let Some(what) = baseline.home.what_it_does(p) {
            format!("{name} was created during the run in the host user's home, which a writable root holds: {what}")
        } else {
            KEPT_ABSENT_BY_PATH.to_string()
        };
        let outcome = match undo::link_on_the_way(p, &baseline.spec.roots, baseline.taken_at) {
            Some(link) => format!("; a symlink made during the run on its way, {}{}", link.display(), moved_aside(&link)),
            None => moved_aside(p),
        };
        let kind = match name.as_str() {
            ".git" => RiskKind::RepositoryCreated,
            n if n == super::upward::GIT_HEAD.0 && !baseline.spec.names.contains(&name) => RiskKind::GitDirectoryCreated,
            _ => RiskKind::ProtectedNameCreated,
        };
        risks.push(HostRisk { path: p.to_string_lossy().into_owned(), kind, detail: format!("{what}{outcome}") });
    }
}

/// Whether the walk after the run looks for `p` (a path kept absent): a name it looks for, in a
/// root it walks; not the tops of `/tmp` and `$TMPDIR`, which it skips.
/// The roots first: most paths kept absent lie at `/tmp`'s top (hundreds of names), which no walk
/// covers, so the names (hundreds) are compared only for the few in a walked root, and without a
/// copy of the name (0.4 ms of the host's CPU a run when every path was compared with every name).
fn walked(baseline: &Baseline, p: &Path) -> bool {
    if !baseline.spec.roots.iter().any(|r| p.starts_with(r)) || baseline.spec.skip.iter().any(|s| p.starts_with(s)) {
        return false;
    }
    let Some(name) = p.file_name() else { return false };
    (name == ".git" && baseline.spec.repositories) || baseline.spec.names.iter().any(|n| std::ffi::OsStr::new(n) == name)
}

/// The tops of writable roots the walk skips (`/tmp`, `$TMPDIR`, where a `.git` is kept absent
/// by `lstat`) that the run made git directories themselves (`HEAD`, `objects/`, `refs/`, `config`
/// written at `/tmp`'s top): git run on the host in any folder below that is no repository of its
/// own (a build directory in `/tmp`) uses it, as it would a `/tmp/.git`, found by an attacker's
/// review. Moved out of git's sight as a `.git` is (its `HEAD` moved aside) and reported. Whenever
/// it was made: a host that exited during the run that made it (`process.exit()`, a crash) never
/// ran this check, and one that looked only at what changed during each run left it for good
/// (found by a review of this fix). One `lstat` per top when nothing is there.
///
/// Where `HEAD` is kept absent too (`upward::GIT_HEAD`), the keeper moved it aside at once, or
/// `undo_created` just did: such a top is no git directory any more, but what the run made there
/// is said as of one, its configuration's keys named (`headless`).
fn unwalked_tops_made_git_dirs(baseline: &Baseline, risks: &mut Listed) {
    let tops = baseline.absent.iter().filter(|p| p.file_name() == Some(std::ffi::OsStr::new(".git")) && !walked(baseline, p)).filter_map(|p| p.parent());
    for top in tops {
        let head = top.join(super::upward::GIT_HEAD.0);
        let risk = if repo::is_git_dir(top) {
            let made = if repo::git_dir_changed_since(top, baseline.taken_at) { Made::DuringRun } else { Made::Before };
            let mut risk = git_directory_risk(top, made);
            risk.detail.push_str(&moved_aside(&head));
            risk
        } else if baseline.absent.contains(&head) && risks.names(&head) && repo::is_git_dir_but_head(top) {
            let mut risk = git_directory_risk(top, Made::DuringRun);
            risk.detail.push_str(&format!("; its HEAD was moved aside during the run (reported at {}), so git takes it for none", head.display()));
            risk
        } else {
            continue;
        };
        risks.push(risk);
    }
}

/// The missing tool caches of a held home that the run created (`Baseline::held_caches`): the
/// command's tools used them during the run; the host's would run from them after it (its next `npx`
/// from `~/.npm/_npx`, its next `pip install` takes the wheels of `~/.cache/pip`). Moved aside and
/// reported, as a protected name is. One `lstat` each, and only when a root holds a home.
fn undo_created_caches(baseline: &Baseline, risks: &mut Listed) {
    for cache in &baseline.held_caches {
        let p = &cache.path;
        // Empty, it runs nothing (and a plan's placeholder looks like that).
        if !can_act(p) {
            continue;
        }
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let outcome = moved_aside(p);
        let detail = format!(
            "{name} was created during the run in the host user's home, which a writable root holds: it is a tool cache the host's tools run from ({}){outcome}",
            cache.what
        );
        risks.push(HostRisk { path: p.to_string_lossy().into_owned(), kind: RiskKind::ProtectedNameCreated, detail });
    }
}

/// The symlinks policy paths (`denyRead`, `readOnlyPaths`, `writableRoots`, the cwd as named:
/// `policy::policy_links`) are resolved through that the run replaced or removed: what is
/// there is moved aside and the link made again as it was, so that the next run's mask lands where
/// the caller meant it (a link swapped for one to another directory moved the mask there, and left
/// the directory it had hidden readable to the next run). "As it was": the same inode, ctime and
/// target (`LinkOnTheWay::is_still_there`). Also reported: a link that led elsewhere when the run
/// started (both targets were masked), and one a concurrent run put back during this run's life.
fn restore_deny_links(baseline: &Baseline, risks: &mut Listed) {
    let held = HeldKind {
        by: "a concurrent run with a denyRead, readOnlyPaths or writableRoots path, or its cwd, resolved through it",
        why: "a denyRead, readOnlyPaths or writableRoots path, or the cwd, is resolved through this symlink, and a run's mask, read-only bind or writable root lands where it points (left changed, what it led to would be readable, or writable, to the next run, and where it points writable; a cwd named through it would be the run's tree, whose .git the host's git there obeys)",
    };
    restore_held(&baseline.deny_links, &held, baseline, risks);
}

/// The symlinks on the way to a host path kept where it leads (`Carver::hold_links_on_the_way`:
/// `~/.bashrc -> dotfiles/active/bashrc -> ../pkgs/bash/bashrc`) that the run replaced or removed:
/// put back as `restore_deny_links` puts back theirs. Found by an attacker's review: the run did
/// `ln -sf evil-bashrc active/bashrc`, and the host's next shell ran `evil-bashrc`.
fn restore_links_on_the_way(baseline: &Baseline, risks: &mut Listed) {
    let held = HeldKind {
        by: "a concurrent run that kept a host path reached through it",
        why: "the host reaches a file it runs or trusts through this symlink (a home link, the global git configuration: ~/.bashrc, ~/.gitconfig, ~/.ssh/config; a repository's git directory, whose configuration git on the host obeys; a protected name such as .envrc); left changed, the host would read what it points to now",
    };
    restore_held(&baseline.links_on_the_way, &held, baseline, risks);
}

/// What a kind of held link is to the host, for its entry.
struct HeldKind {
    /// Who else held it.
    by: &'static str,
    /// Why it matters.
    why: &'static str,
}

fn restore_held(links: &[crate::policy::held_links::HeldLink], kind: &HeldKind, baseline: &Baseline, risks: &mut Listed) {
    for held in links {
        let Some(settled) = held.settle(|l| put_back(l, baseline)) else { continue };
        let mut said = Vec::new();
        if settled.found_changed {
            said.push(format!(
                "when the run started, it did not lead where it led when {} started (that run, or you, changed it meanwhile): both the link as it was, to {}, and as it is now were kept",
                kind.by,
                settled.link.target.display()
            ));
        }
        if let Some(outcome) = settled.put_back {
            said.push(outcome);
        } else if settled.put_back_by_another {
            said.push(format!("was replaced or removed during the run, and made again, to {}, after {}", settled.link.target.display(), kind.by));
        }
        if !said.is_empty() {
            let detail = format!("{}: {}", said.join("; "), kind.why);
            risks.push(HostRisk { path: held.path.to_string_lossy().into_owned(), kind: RiskKind::ProtectedNameCreated, detail });
        }
    }
}

/// Put back a held link: what is there now is moved aside and the link made again as it was. Says
/// what it found and did. A symlink the run made on its way (a directory above it swapped for one,
/// which the plans' pins refuse: `plan::pins::held_links`) is moved aside first, and directories
/// missing on its way are made again (`undo::restore_link`): found by an attacker's review
/// (fixes18/dirswap.sh), the link was only reported "NOT undone", and the host's next shell ran the
/// `bashrc` in the directory the run's symlink led to.
fn put_back(l: &crate::policy::paths::LinkOnTheWay, baseline: &Baseline) -> String {
    let roots = &baseline.spec.roots;
    let mut swapped = String::new();
    if let Some(link) = undo::link_on_the_way(&l.path, roots, baseline.taken_at) {
        swapped = format!("a symlink made during the run on its way, {}{}; ", link.display(), moved_aside(&link).trim_start_matches("; "));
    }
    let root = roots.iter().filter(|r| l.path.starts_with(r)).max_by_key(|r| r.as_os_str().len());
    let now = l.path.symlink_metadata().ok();
    let moved = if now.is_some() { undo::move_aside(&l.path) } else { undo::Undone::Gone };
    let aside = match &moved {
        undo::Undone::MovedTo(to) => format!(" (what was there was moved aside to {})", to.display()),
        _ => String::new(),
    };
    let outcome = match undo::restore_link(&l.path, &l.target, &moved, root.map(PathBuf::as_path)) {
        Ok(()) => format!("undone: the link was made again, to {}{aside}", l.target.display()),
        Err(why) => format!("NOT undone: {why}"),
    };
    let how = if now.is_some() { "was replaced" } else { "was removed" };
    format!("{swapped}{how} during the run (or a concurrent one); {outcome}")
}

/// The writable roots and their `.git` that are not the same directories as before the run.
fn replaced_roots(baseline: &Baseline) -> Vec<HostRisk> {
    let now = |p: &Path| p.symlink_metadata().ok().map(|m| (m.dev(), m.ino()));
    baseline
        .identities()
        .filter(|(p, id)| now(p) != Some(*id))
        .map(|(p, _)| HostRisk {
            path: p.to_string_lossy().into_owned(),
            kind: RiskKind::WorkspaceReplaced,
            detail: "is not the directory it was before the run (it was moved away, removed or replaced): what the host runs \
                     here next (git, a build) sees another tree, which the run may have planted"
                .into(),
        })
        .collect()
}

/// A directory that git takes for a repository when run in it (a bare one, or `HEAD`, `config`,
/// `objects/` and `refs/` written into an ordinary folder).
/// `replaced`: a git directory was at that path before the run, another directory than this one.
fn git_directory(dir: &Path, replaced: bool, risks: &mut Listed) {
    risks.push(git_directory_risk(dir, if replaced { Made::Replaced } else { Made::DuringRun }));
}

/// How a directory came to be a git directory, as its host risk says.
#[derive(Clone, Copy)]
enum Made {
    DuringRun,
    /// A git directory was at that path before the run, another directory than this one.
    Replaced,
    /// Before this run: by an earlier run whose end the host never saw, or by another process.
    Before,
}

fn git_directory_risk(dir: &Path, made: Made) -> HostRisk {
    let config = repo::configured(&[dir.to_path_buf()]);
    let how = match made {
        Made::DuringRun => "became a git directory during the run",
        Made::Replaced => "was replaced by another git directory during the run",
        Made::Before => "is a git directory, made so before this run (by an earlier run whose host did not see it end, or by another process)",
    };
    let mut detail = format!("{how}: git run in it on the host (`cd` there, then `git status`, or a push to it) uses its configuration and hooks");
    if !config.keys.is_empty() {
        detail.push_str(&format!("; its configuration sets {}, each of which makes git run a program", config.keys_named()));
    }
    detail.push_str(&config.unjudged_detail());
    HostRisk { path: dir.to_string_lossy().into_owned(), kind: RiskKind::GitDirectoryCreated, detail }
}

/// The walk after the run stopped at its bound: it says where, rather than report nothing.
fn incomplete(found: &scan::Found) -> Vec<HostRisk> {
    if !found.truncated {
        return Vec::new();
    }
    found
        .unexamined
        .iter()
        .map(|dir| HostRisk {
            path: dir.to_string_lossy().into_owned(),
            kind: RiskKind::ScanIncomplete,
            detail: format!(
                "the walk after the run stopped at its bound ({} directories, {} levels below a root) before examining this \
                 directory: repositories or protected names planted below it were not looked for",
                scan::MAX_DIRS,
                scan::MAX_DEPTH
            ),
        })
        .collect()
}

/// The entries named like protected names that the walk after the run found past its bound
/// (`scan::MAX_NAMED`), in the directories it read again: not kept, so not looked at.
fn named_unkept(found: &scan::Found) -> Option<HostRisk> {
    let unkept = &found.named_unkept;
    let area = unkept.first_dir.as_ref()?;
    let detail = format!(
        "the walk after the run found more than {} entries named like protected names in the directories the run changed; \
         the {} past them (this directory's among them) were not looked at: look for those the run created or changed below \
         this directory before running host tools in it",
        scan::MAX_NAMED,
        unkept.count
    );
    Some(HostRisk { path: area.to_string_lossy().into_owned(), kind: RiskKind::ScanIncomplete, detail })
}

/// A symlink, a non-empty file or a non-empty directory.
fn can_act(p: &Path) -> bool {
    match p.symlink_metadata() {
        Ok(m) if m.file_type().is_symlink() => true,
        Ok(m) if m.is_dir() => std::fs::read_dir(p).map(|mut d| d.next().is_some()).unwrap_or(false),
        Ok(m) => m.len() > 0,
        Err(_) => false,
    }
}

/// What each hooks directory held, by device and inode, read once per report: many new
/// repositories may name one directory (`core.hooksPath = ../H`), and one of 20,000 entries read
/// again for each of 40 repositories cost the host 7.4 s after the run (an attacker's review,
/// cross26). The names said, or `None` when none was written during the run.
type HooksRead = HashMap<(u64, u64), Option<String>>;

/// Entries of one hooks directory looked at after a run; past them it is reported all the same.
const MAX_HOOK_ENTRIES: usize = 100_000;

fn new_repository(dot_git: &Path, since: i64, hooks_read: &mut HooksRead, risks: &mut Listed) {
    let top = dot_git.parent().unwrap_or(Path::new("/"));
    let dirs = repo::git_dirs(dot_git);
    let config = repo::configured(&dirs);
    let mut detail = String::from(
        "a git repository was created during the run (a mount cannot prevent that on Linux); git run in this directory on the host uses its configuration and hooks",
    );
    if !config.keys.is_empty() {
        detail.push_str(&format!("; its configuration sets {}, each of which makes git run a program", config.keys_named()));
    }
    detail.push_str(&config.unjudged_detail());
    risks.push(HostRisk { path: dot_git.to_string_lossy().into_owned(), kind: RiskKind::RepositoryCreated, detail });
    let hooks_dirs = dirs.iter().map(|d| d.join("hooks")).chain(repo::hooks_dirs(top, &dirs, &super::global_git::hooks_paths()));
    for hooks in hooks_dirs {
        let Ok(meta) = hooks.metadata() else { continue };
        let said = hooks_read.entry((meta.dev(), meta.ino())).or_insert_with(|| {
            let planted = hook_scripts(&hooks, since);
            (!planted.is_empty()).then(|| planted.said())
        });
        if let Some(said) = said {
            risks.push(HostRisk {
                path: hooks.to_string_lossy().into_owned(),
                kind: RiskKind::HooksWritten,
                detail: format!("hooks {said} were written during the run: git on the host runs them (e.g. on commit, checkout, merge)"),
            });
        }
    }
}

/// The hook files in `dir` changed since `since` (unix seconds) that git would run (git ignores the
/// `*.sample` files `git init` writes): the first few by name and how many. A new repository may
/// name an existing hooks directory, of any size (many repositories the same one: `few_named`).
fn hook_scripts(dir: &Path, since: i64) -> super::few_named::Fewest {
    #[cfg(test)]
    HOOK_DIRS_READ.with(|r| r.borrow_mut().push(dir.to_path_buf()));
    let mut found = super::few_named::Fewest::default();
    // Resolved once: `core.hooksPath` is the run's to write, and a way through 40 symlinks of 4 KB
    // each looked up again for each of 20,000 entries (twice) cost the host 49 s of CPU after the
    // run (an attacker's review, rfix26b). Each entry is then looked at from the directory itself.
    let Ok(dir) = std::fs::canonicalize(dir) else { return found };
    let Ok(entries) = std::fs::read_dir(&dir) else { return found };
    for (looked, e) in entries.flatten().enumerate() {
        if looked == MAX_HOOK_ENTRIES {
            found.add(format!("(past {MAX_HOOK_ENTRIES} entries, not looked at)"));
            break;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".sample") {
            continue;
        }
        // `DirEntry::metadata` is an `fstatat` in the open directory, not following a link.
        let Ok(m) = e.metadata() else { continue };
        let acts = if m.file_type().is_symlink() { true } else if m.is_dir() { can_act(&e.path()) } else { m.len() > 0 };
        if acts && m.ctime() >= since {
            found.add(name);
        }
    }
    found
}

#[cfg(test)]
thread_local! {
    /// The hooks directories `hook_scripts` listed on this thread, for the test that each is read once.
    static HOOK_DIRS_READ: std::cell::RefCell<Vec<PathBuf>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[cfg(test)]
mod cap_tests {
    use serde_json::json;

    use super::*;
    use crate::platform::Platform;
    use crate::policy::{resolve_policy, PolicyContext};

    use super::super::tests::init_repo as repo;

    /// A fresh workspace (canonical), its policy resolved (no report-only names) and walked.
    fn walked_workspace() -> (tempfile::TempDir, std::path::PathBuf, crate::policy::ResolvedPolicy) {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let v = json!({"mode": "workspace-write", "tmp": "read-only", "reportedNames": []});
        let mut p = resolve_policy(Some(&v), &PolicyContext { cwd: r.clone(), tmpdir: None, platform: Platform::Linux, env: Default::default() }).unwrap();
        p.walk_and_protect(crate::planted::Absent::UndoneAfter);
        (t, r, p)
    }

    /// Found by an attacker's review (rfix23c): a `scan-incomplete` at the home (the walk's link
    /// bound) stood in for every entry below it, which then went unnamed.
    #[test]
    fn only_a_risk_naming_the_very_path_says_it_already() {
        let risk = |path: &str, kind| HostRisk { path: path.into(), kind, detail: String::new() };
        let mut l = Listed::default();
        l.push(risk("/h", RiskKind::ScanIncomplete));
        l.push(risk("/h/.config/newtool", RiskKind::ScanIncomplete));
        l.push(risk("/h/.config/tool", RiskKind::GitDirectoryCreated));
        l.push(risk("/w", RiskKind::WorkspaceReplaced));
        for p in ["/h/.evilrc", "/h/.config/newtool", "/h/.config/tool/init.lua", "/w/.evilrc"] {
            assert!(!l.names(Path::new(p)), "{p}");
        }
        assert!(l.names(Path::new("/h/.config/tool")));
    }

    #[test]
    fn a_run_lists_at_most_max_reported_risks_and_says_how_many_more_yet_undoes_them_all() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        const N: usize = 1_500;
        for i in 0..N {
            repo(&r.join(format!("old/o{i}")));
        }
        let v = json!({"mode": "workspace-write", "tmp": "read-only", "protectedNames": [".envrc"], "reportedNames": []});
        let mut p = resolve_policy(Some(&v), &PolicyContext { cwd: r.clone(), tmpdir: None, platform: Platform::Linux, env: Default::default() }).unwrap();
        p.walk_and_protect(crate::planted::Absent::UndoneAfter);
        // What the run does: a protected name at each repository's top (each moved aside after
        // the run), and as many new repositories with a hook and a key that runs a program.
        for i in 0..N {
            std::fs::write(r.join(format!("old/o{i}/.envrc")), "eval x").unwrap();
            let new = r.join(format!("new/n{i}"));
            repo(&new);
            std::fs::write(new.join(".git/config"), "[core]\n\tfsmonitor = /bin/echo\n").unwrap();
            std::fs::write(new.join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        }
        let risks = detect(&p.planted);
        assert_eq!(risks.len(), MAX_REPORTED + 1, "the listed ones and one that counts the rest");
        let last = risks.last().unwrap();
        assert_eq!(last.kind, RiskKind::ScanIncomplete);
        assert_eq!(last.path, r.to_string_lossy(), "the area the unlisted ones lie in");
        let more = 3 * N - MAX_REPORTED;
        assert!(last.detail.starts_with(&format!("{more} more host risks were found here and are not listed")), "{}", last.detail);
        for kind in ["repository-created", "hooks-written", "protected-name-created"] {
            let listed = risks.iter().filter(|h| serde_json::to_value(h.kind).unwrap() == kind).count();
            assert!(last.detail.contains(&format!("{kind}: {}", N - listed)), "{kind} ({listed} listed): {}", last.detail);
        }
        // Every protected name was moved aside, listed or not.
        let left: Vec<usize> = (0..N).filter(|i| r.join(format!("old/o{i}/.envrc")).exists()).collect();
        assert!(left.is_empty(), "{} left in place, e.g. o{}", left.len(), left[0]);
    }

    /// Found by an attacker's review (cross26): a new repository's `hooks-written` entry named every
    /// hook in its hooks directory, and a run made 40 repositories whose `core.hooksPath` named one
    /// directory of 20,000 links with 247-byte names: 199 MB of `hostRisks`. Its configuration's keys
    /// were few but each as long as the config file let it be. Each list names a few, then how many more.
    #[test]
    fn a_new_repository_s_entries_name_a_few_hooks_and_keys_and_count_the_rest() {
        let (_t, r, p) = walked_workspace();
        const N: usize = 300;
        let long = "h".repeat(240);
        std::fs::create_dir(r.join("H")).unwrap();
        for i in 0..N {
            std::os::unix::fs::symlink("t", r.join(format!("H/{long}{i:07}"))).unwrap();
        }
        repo(&r.join("new"));
        let driver = "d".repeat(100_000); // an alias's name, as long as the config file lets it be
        std::fs::write(r.join("new/.git/config"), format!("[core]\n\thooksPath = ../H\n[alias]\n\t{driver} = !x\n")).unwrap();
        let risks = detect(&p.planted);
        let hooks = risks.iter().find(|h| h.kind == RiskKind::HooksWritten).expect("the hooks are reported");
        assert!(hooks.detail.contains(&format!("{long}0000000, ")), "the first by name are named: {}", &hooks.detail[..300]);
        let more = N - super::super::few_named::MAX_NAMED;
        assert!(hooks.detail.contains(&format!(" and {more} more were written during the run")), "the rest counted: {}", hooks.detail.len());
        assert!(hooks.detail.len() < 8 * 1024, "{} bytes", hooks.detail.len());
        let made = risks.iter().find(|h| h.kind == RiskKind::RepositoryCreated).expect("the repository is reported");
        assert!(made.detail.contains("alias.ddd") && made.detail.len() < 8 * 1024, "{} bytes", made.detail.len());
    }

    /// Found by an attacker's review (cross26): 40 new repositories naming one hooks directory of
    /// 20,000 entries had it listed (and each entry stat'ed) 40 times after the run, 7.4 s of the
    /// host's time. Each is listed once; every repository still gets its entry.
    #[test]
    fn a_hooks_directory_many_new_repositories_name_is_read_once() {
        let (_t, r, p) = walked_workspace();
        std::fs::create_dir(r.join("H")).unwrap();
        std::fs::write(r.join("H/pre-commit"), "#!/bin/sh\n").unwrap();
        for i in 0..3 {
            repo(&r.join(format!("new{i}")));
            std::fs::write(r.join(format!("new{i}/.git/config")), "[core]\n\thooksPath = ../H\n").unwrap();
        }
        HOOK_DIRS_READ.with(|d| d.borrow_mut().clear());
        let risks = detect(&p.planted);
        let shared: Vec<&HostRisk> = risks.iter().filter(|h| h.kind == RiskKind::HooksWritten && h.detail.contains("pre-commit")).collect();
        assert_eq!(shared.len(), 3, "each repository says its hooks: {risks:?}");
        let reads = HOOK_DIRS_READ.with(|d| d.borrow().iter().filter(|p| p.canonicalize().ok() == Some(r.join("H"))).count());
        assert_eq!(reads, 1, "the shared hooks directory is listed once");
    }

    /// A hooks path through a chain of symlinks (rfix26b made 40 of 4 KB each, which every entry's
    /// lookup walked again): resolved once, its hooks still said.
    #[test]
    fn a_hooks_path_through_symlinks_is_resolved_once_and_its_hooks_said() {
        let (_t, r, p) = walked_workspace();
        std::fs::create_dir(r.join("H")).unwrap();
        std::fs::write(r.join("H/pre-commit"), "#!/bin/sh\n").unwrap();
        std::fs::write(r.join("H/empty"), "").unwrap();
        std::os::unix::fs::symlink("H", r.join("c1")).unwrap();
        std::os::unix::fs::symlink("x/../c1", r.join("c0")).unwrap();
        std::fs::create_dir(r.join("x")).unwrap();
        repo(&r.join("new"));
        std::fs::write(r.join("new/.git/config"), "[core]\n\thooksPath = ../c0\n").unwrap();
        let risks = detect(&p.planted);
        let hooks: Vec<&HostRisk> = risks.iter().filter(|h| h.kind == RiskKind::HooksWritten && h.path.ends_with("c0")).collect();
        assert_eq!(hooks.len(), 1, "{risks:?}");
        assert!(hooks[0].detail.contains("pre-commit") && !hooks[0].detail.contains("empty"), "{}", hooks[0].detail);
    }

    /// Links a run made that could not be judged (through /proc: cheap to make by the thousand)
    /// are counted past the bound like the git risks they may hide, not each kept as a
    /// `scan-incomplete` of the walk's own is (found making them unjudged: 1,500 links listed
    /// 1,500 entries).
    #[cfg(target_os = "linux")]
    #[test]
    fn links_that_could_not_be_judged_are_counted_past_the_bound() {
        let (_t, r, p) = walked_workspace();
        const N: usize = 1_500;
        std::fs::create_dir(r.join("l")).unwrap();
        for i in 0..N {
            std::os::unix::fs::symlink(format!("/proc/self/cwd/x{i}"), r.join(format!("l/m{i}"))).unwrap();
        }
        let risks = detect(&p.planted);
        assert_eq!(risks.len(), MAX_REPORTED + 1, "the listed ones and one that counts the rest");
        let last = risks.last().unwrap();
        assert!(last.detail.contains(&format!("scan-incomplete: {}", N - MAX_REPORTED)), "{}", last.detail);
    }

    /// Past the bound, git risks are kept before protected names, whatever order they are found
    /// in: a run must not push the repository it planted out of the list (into the last entry's
    /// count) with names found before it. `detect` pushes repositories before the names at nested
    /// tops today, but not before the names moved aside at a root's top or a keeper's findings.
    #[test]
    fn past_the_bound_a_git_risk_takes_the_place_of_a_protected_name() {
        let risk = |path: String, kind| HostRisk { path, kind, detail: String::new() };
        let mut l = Listed::default();
        for i in 0..MAX_REPORTED + 5 {
            l.push(risk(format!("/w/a{i}/.envrc"), RiskKind::ProtectedNameCreated));
        }
        l.push(risk("/w/z/.git".into(), RiskKind::RepositoryCreated));
        l.push(risk("/w/z/.git/hooks".into(), RiskKind::HooksWritten));
        let risks = l.report();
        assert_eq!(risks.len(), MAX_REPORTED + 1);
        assert!(risks.iter().any(|h| h.path == "/w/z/.git" && h.kind == RiskKind::RepositoryCreated));
        assert!(risks.iter().any(|h| h.path == "/w/z/.git/hooks"));
        assert!(risks.last().unwrap().detail.starts_with("7 more host risks"), "{}", risks.last().unwrap().detail);
        assert!(risks.last().unwrap().detail.contains("protected-name-created: 7"), "{}", risks.last().unwrap().detail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_directory_s_risk_says_when_it_was_made() {
        let t = tempfile::tempdir().unwrap();
        let words = |made| git_directory_risk(t.path(), made).detail;
        assert!(words(Made::DuringRun).starts_with("became a git directory during the run: "));
        assert!(words(Made::Replaced).starts_with("was replaced by another git directory during the run: "));
        let before = words(Made::Before);
        assert!(before.starts_with("is a git directory, made so before this run (by an earlier run"), "{before}");
        assert!(!before.contains("during the run"), "{before}");
    }
}
