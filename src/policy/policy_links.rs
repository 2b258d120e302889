//! The symlinks the policy's paths (`writableRoots`, `readOnlyPaths`, `denyRead`) are resolved
//! through, walked and held under one lock (`held_links`), so that what the walks followed and
//! what is held are the same.
//!
//! Why every kind and not only `denyRead`'s: a run may replace such a link in a writable root, and
//! the next run resolves the path through what it left there. Found by an attacker's review: with
//! `readOnlyPaths: [ws/link/settings.json]`, `ws/link -> cfg`, a run did `rm link; mkdir away; ln -s
//! away link`; the next run's entry resolved to the missing `away/settings.json`, and it overwrote
//! `cfg/settings.json`. A `writableRoots` entry through a repointed link would make the next run's
//! root wherever the run pointed it. Held, such a link is put back after the run that changed it and
//! reported (`planted::detect`), and a run started while another holds it follows it the way the
//! record says (what each kind does with that: `resolve`).

use std::path::{Path, PathBuf};

use super::held_links::{Held, HeldLink};
use super::paths::{walk_links, LinkOnTheWay, WalkEnd};
use super::terms::deepest_root;
use super::WritableRoot;

/// The walks of one policy's paths, the held links locked until `hold`.
pub(super) struct LinkWalks {
    held: Held,
    links: Vec<LinkOnTheWay>,
    /// Where the last walk ended following the links as they are now (`past_dangling`).
    last_missing: Option<PathBuf>,
}

impl LinkWalks {
    pub(super) fn start() -> LinkWalks {
        LinkWalks { held: Held::lock(), links: Vec::new(), last_missing: None }
    }

    /// Walks `p` and keeps the links met. When one of them is held by a live run, where the walk
    /// ends following the links as recorded: that run may have changed one since.
    pub(super) fn walk(&mut self, p: &Path) -> Option<WalkEnd> {
        let held = &self.held;
        let (recorded_end, met) = walk_links(p, &|l| held.recorded(l));
        let recorded = met.iter().any(|l| held.recorded(&l.path).is_some());
        self.last_missing = match (&recorded_end, recorded) {
            (WalkEnd::Missing(first), false) => Some(first.clone()),
            _ => None,
        };
        self.links.extend(met);
        recorded.then_some(recorded_end)
    }

    /// Walks the cwd as the caller `named` it, when that was not `canonical` (where it leads), and
    /// keeps the links met, to be held with the others: found by an attacker's review (host29),
    /// the cwd's own way was not held. Named `/tmp/x/link/proj` (`link -> real`, in the writable
    /// `/tmp`), a run planted `evil/proj` with a `core.fsmonitor` and repointed `link` there, with
    /// `hostRisks: []`; the host's next `git status` in the cwd it named ran the planted program,
    /// and every later run there worked in the run's tree. When a live run holds one of those
    /// links and the way it recorded leads elsewhere than `canonical`, the run is refused, as a
    /// `writableRoots` entry is: which of the two the caller meant is not known.
    pub(super) fn walk_cwd(&mut self, named: Option<&Path>, canonical: &Path) -> crate::error::Result<()> {
        let Some(named) = named else { return Ok(()) };
        match self.walk(named) {
            Some(end) if end != WalkEnd::At(canonical.to_path_buf()) => Err(crate::error::SandboxError::invalid(
                "cwd",
                format!("{} is reached through a symlink that a sandboxed run still going on changed since it started (it is put back when that run ends): refused rather than work where the link leads now", named.display()),
            )),
            _ => Ok(()),
        }
    }

    /// The first missing component to keep absent for the path last walked, given `first`, the one
    /// `canonical_lenient` found: where that is a dangling symlink (the host's `link -> cfg`, `cfg`
    /// not made yet), the missing place it leads to, which the walk found. The link itself exists:
    /// kept absent, it was moved aside after every run, even one that did nothing, then put back as
    /// a held link (a `link.sandspawn-held-*` and two risks a run), while a run that made
    /// `cfg/settings.json` kept the path the caller named (found by an attacker's review, rfix27).
    /// The link is held as every link on the way is.
    pub(super) fn past_dangling(&self, first: Option<PathBuf>) -> Option<PathBuf> {
        let dangling = first.as_deref().is_some_and(|f| f.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()));
        match (dangling, &self.last_missing) {
            (true, Some(missing)) => Some(missing.clone()),
            _ => first,
        }
    }

    /// Holds the links met inside directly written roots, except those under a path in `covered`
    /// (masked whole: nothing reaches them). Second: those in `reviewed` roots, by path (a change
    /// set that removes or replaces one is held back: `review::risks`). Lets go of the lock.
    pub(super) fn hold(self, roots: &[WritableRoot], reviewed: &[PathBuf], covered: &[PathBuf]) -> (Vec<HeldLink>, Vec<PathBuf>) {
        let LinkWalks { mut held, mut links, .. } = self;
        links.retain(|l| !covered.iter().any(|d| l.path.starts_with(d)));
        links.sort_by(|a, b| a.path.cmp(&b.path));
        links.dedup_by(|a, b| a.path == b.path);
        let root_of = |l: &LinkOnTheWay| deepest_root(roots, &l.path).map(|r| &roots[r].root);
        let in_review: Vec<PathBuf> = links.iter().filter(|l| root_of(l).is_some_and(|r| reviewed.contains(r))).map(|l| l.path.clone()).collect();
        links.retain(|l| root_of(l).is_some_and(|r| !reviewed.contains(r)));
        (links.into_iter().map(|l| held.hold(l)).collect(), in_review)
    }
}
