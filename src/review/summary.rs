//! `SpawnResult.changeSet` and `sandspawn review show`: a set described in one streamed walk,
//! bounded for huge sets (every change counted, the first `max` listed) and judged for host risks.

use std::collections::BTreeMap;

use serde::Serialize;

use super::changes::{Change, ChangeKind, Differ};
use super::entries;
use super::revision::Revision;
use super::risks::Judge;
use super::store::{ChangeSet, Lock};
use crate::error::Result;
use crate::planted::{HostRisk, RiskKind};

#[derive(Debug, Clone, Default, Serialize)]
pub struct Counts {
    pub added: u64,
    pub modified: u64,
    pub deleted: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub id: String,
    pub counts: Counts,
    pub changes: Vec<Change>,
    pub truncated: bool,
    pub host_risks: Vec<HostRisk>,
    /// What `applyChangeSet({ revision })` checks the set still is (`revision`).
    pub revision: String,
}

/// The risk of what a description or an apply could not examine: `rel` below `root` (the root:
/// everything after where it stopped), and why.
pub fn incomplete(root: &std::path::Path, rel: &std::path::Path, why: &str) -> HostRisk {
    let path = if rel.as_os_str().is_empty() { root.to_path_buf() } else { root.join(rel) };
    HostRisk { path: super::changes::shown(&path), kind: RiskKind::ScanIncomplete, detail: format!("{why}: what is there was not examined, and stays in the change set") }
}

/// Why the walk left an entry out (`Event::Beyond`): past its bounds, or `unread`.
pub fn beyond_why(rel: &std::path::Path, unread: Option<&std::io::Error>) -> String {
    if let Some(e) = unread {
        format!("the change set's entry could not be read ({}), as the command left its permissions", sandspawn_helper::report::os_words(e))
    } else if rel.as_os_str().is_empty() {
        format!("the change set holds more than {} entries", entries::MAX_ENTRIES)
    } else {
        format!("the change set's tree is deeper than {} directories, or its paths longer than the kernel takes", entries::MAX_DEPTH)
    }
}

/// The risk of a fifo, socket or device (`what`) the set holds at `rel` below `root`: a change set
/// cannot carry one into a workspace, so it is never applied; said here rather than left out of
/// the listing as nothing (found by an attacker's review: a fifo put where a deleted directory was
/// hid the deletion, and apply removed the set as applied).
pub fn special(root: &std::path::Path, rel: &std::path::Path, what: &str) -> HostRisk {
    HostRisk {
        path: super::changes::shown(&root.join(rel)),
        kind: RiskKind::ScanIncomplete,
        detail: format!("a {what} the command made: a change set cannot carry it into the workspace, so it is never applied (what it replaced is listed deleted); it stays in the change set until discarded"),
    }
}

/// Describe `set` (held by `lock`), listing at most `max` changes (and as many risks), with its
/// revision read in the same walk. What cannot be read is reported (`scan-incomplete`,
/// `truncated`), never an error: a run's result must not be lost because its change set could not
/// be described.
pub fn summarize(set: &ChangeSet, lock: &Lock, max: usize) -> Result<Summary> {
    let mut s = Summary { id: set.meta.id.clone(), counts: Counts::default(), changes: Vec::new(), truncated: false, host_risks: Vec::new(), revision: String::new() };
    let mut revision = Revision::new(set, lock.writes());
    let mut walked_whole = true;
    let mut risks: BTreeMap<(String, u8), HostRisk> = BTreeMap::new();
    let elsewhere = super::elsewhere::hooks_elsewhere(&set.meta);
    // What could not be asked at the last run's end whether it was held open (`unasked`).
    let unasked = super::unasked::read(set);
    for (i, root) in set.meta.roots.iter().enumerate() {
        let upper = set.upper(i);
        let unasked_below = |rel: &std::path::Path, id: &super::unasked::Id, to: &mut Vec<HostRisk>| match &unasked {
            Ok(ids) if ids.contains(id) => to.push(super::unasked::risk(root, rel)),
            Ok(_) => {}
            Err(e) if rel.as_os_str().is_empty() => to.push(super::unasked::unreadable(root, e)),
            Err(_) => {}
        };
        let mut differ = Differ::new(root);
        let mut judge = Judge::new(&set.meta, root, &upper, &elsewhere);
        let mut emit = |c: Change| {
            match c.kind {
                ChangeKind::Added => s.counts.added += 1,
                ChangeKind::Modified => s.counts.modified += 1,
                ChangeKind::Deleted => s.counts.deleted += 1,
            }
            if let Some(r) = judge.judge(&c) {
                if risks.len() < max.max(1) {
                    risks.entry((r.path.clone(), r.kind as u8)).or_insert(r);
                }
            }
            if s.changes.len() < max {
                s.changes.push(c);
            } else {
                s.truncated = true;
            }
        };
        let (mut beyond, mut specials): (Vec<HostRisk>, Vec<HostRisk>) = (Vec::new(), Vec::new());
        if let Some(c) = differ.root_change(&upper, set.meta.root_modes.get(i).copied()) {
            emit(c);
        }
        let top = super::unasked::id_of(&upper).unwrap_or_default();
        unasked_below(std::path::Path::new(""), &top, &mut beyond);
        revision.root(i, &upper);
        let walked = entries::walk(&upper, root, |ev| {
            revision.event(&ev);
            match &ev {
                entries::Event::Beyond(rel, unread) => beyond.push(incomplete(root, rel, &beyond_why(rel, *unread))),
                entries::Event::Leaf(e) => {
                    if let entries::Kind::Special(what) = e.kind {
                        specials.push(special(root, &e.rel, what));
                    }
                    unasked_below(&e.rel, &e.inode, &mut beyond);
                }
                entries::Event::Enter(e, _) => unasked_below(&e.rel, &e.inode, &mut beyond),
                _ => {}
            }
            differ.event(&ev, &upper, &mut emit)
        });
        if let Err(e) = walked {
            walked_whole = false;
            beyond.push(incomplete(root, std::path::Path::new(""), &format!("reading the change set failed ({})", sandspawn_helper::report::os_words(&e))));
        }
        s.truncated |= !beyond.is_empty();
        for r in beyond.into_iter().chain(specials) {
            if risks.len() < max.max(1) {
                risks.entry((r.path.clone(), r.kind as u8)).or_insert(r);
            }
        }
    }
    s.host_risks = risks.into_values().collect();
    // A walk the description stopped early did not see the whole set: its own walk does.
    s.revision = if walked_whole { revision.finish() } else { super::revision::of(set, lock) };
    Ok(s)
}
