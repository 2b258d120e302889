//! `SpawnResult.changeSet` and `sandspawn review show`: a set described in one streamed walk,
//! bounded for huge sets (every change counted, the first `max` listed) and judged for host risks.

use std::collections::BTreeMap;

use serde::Serialize;

use super::changes::{Change, ChangeKind, Differ};
use super::entries;
use super::risks::Judge;
use super::store::ChangeSet;
use crate::error::{Result, SandboxError};
use crate::planted::HostRisk;

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
}

/// Describe `set`, listing at most `max` changes (and as many risks).
pub fn summarize(set: &ChangeSet, max: usize) -> Result<Summary> {
    let mut s = Summary { id: set.meta.id.clone(), counts: Counts::default(), changes: Vec::new(), truncated: false, host_risks: Vec::new() };
    let mut risks: BTreeMap<(String, u8), HostRisk> = BTreeMap::new();
    for (i, root) in set.meta.roots.iter().enumerate() {
        let upper = set.upper(i);
        let mut differ = Differ::new(root);
        let mut judge = Judge::new(&set.meta, root, &upper);
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
        entries::walk(&upper, |ev| differ.event(&ev, &upper, &mut emit))
            .map_err(|e| SandboxError::setup_failed(format!("reading change set {} failed: {e}", set.meta.id), ""))?;
    }
    s.host_risks = risks.into_values().collect();
    Ok(s)
}
