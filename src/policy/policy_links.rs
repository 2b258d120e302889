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
}

impl LinkWalks {
    pub(super) fn start() -> LinkWalks {
        LinkWalks { held: Held::lock(), links: Vec::new() }
    }

    /// Walks `p` and keeps the links met. When one of them is held by a live run, where the walk
    /// ends following the links as recorded: that run may have changed one since.
    pub(super) fn walk(&mut self, p: &Path) -> Option<WalkEnd> {
        let held = &self.held;
        let (recorded_end, met) = walk_links(p, &|l| held.recorded(l));
        let recorded = met.iter().any(|l| held.recorded(&l.path).is_some()).then_some(recorded_end);
        self.links.extend(met);
        recorded
    }

    /// Holds the links met inside directly written roots, except those under a path in `covered`
    /// (masked whole: nothing reaches them). Second: those in `reviewed` roots, by path (a change
    /// set that removes or replaces one is held back: `review::risks`). Lets go of the lock.
    pub(super) fn hold(self, roots: &[WritableRoot], reviewed: &[PathBuf], covered: &[PathBuf]) -> (Vec<HeldLink>, Vec<PathBuf>) {
        let LinkWalks { mut held, mut links } = self;
        links.retain(|l| !covered.iter().any(|d| l.path.starts_with(d)));
        links.sort_by(|a, b| a.path.cmp(&b.path));
        links.dedup_by(|a, b| a.path == b.path);
        let root_of = |l: &LinkOnTheWay| deepest_root(roots, &l.path).map(|r| &roots[r].root);
        let in_review: Vec<PathBuf> = links.iter().filter(|l| root_of(l).is_some_and(|r| reviewed.contains(r))).map(|l| l.path.clone()).collect();
        links.retain(|l| root_of(l).is_some_and(|r| !reviewed.contains(r)));
        (links.into_iter().map(|l| held.hold(l)).collect(), in_review)
    }
}
