//! The host user's home in a reviewed root, beyond the held list (`planted::home_config` is the
//! direct runs' side): a change set's entry made or changed directly in the home's XDG
//! configuration directory (`~/.config/*`), one level below it (`~/.config/<tool>/*`), or a
//! dot-entry made at the home's top is a host risk, held back from a plain apply. A list of the
//! tools whose configuration runs code always lags (an attacker's review, rfix23b).

use std::path::{Path, PathBuf};

use super::changes::{Change, ChangeKind};
use crate::planted::home::Bases;
use crate::planted::HostRisk;

/// Where the homes and configuration directories lie below a root (each as `below_root` gives it;
/// the root itself is an empty path).
#[derive(Debug, Clone, Default)]
pub struct Places {
    pub homes: Vec<PathBuf>,
    pub config: Vec<PathBuf>,
}

impl Places {
    /// Those of `bases` that `below_root` places in the root.
    pub fn of(bases: &Bases, below_root: impl Fn(&Path) -> Option<PathBuf>) -> Places {
        Places { homes: bases.homes.iter().filter_map(|h| below_root(h)).collect(), config: bases.config.iter().filter_map(|c| below_root(c)).collect() }
    }

    /// The risk of `change` (below the root), if it is such an entry; `root`: the root's path.
    pub fn risk(&self, root: &Path, change: &Change) -> Option<HostRisk> {
        let rel = change.rel.as_path();
        let parent = rel.parent()?;
        let name = rel.file_name()?;
        let at_top = change.kind == ChangeKind::Added && name.as_encoded_bytes().starts_with(b".") && self.homes.iter().any(|h| h == parent);
        let in_config = change.kind != ChangeKind::Deleted && self.config.iter().any(|c| c == parent || parent.parent() == Some(c.as_path()));
        if !(at_top || in_config) {
            return None;
        }
        let place = if at_top { "made at the top of the host user's home" } else { "made or changed in the XDG configuration directory of the host user's home" };
        let detail = format!(
            "was {place} in the change set, which a reviewed root holds: tools read their configuration there, and many run what \
             it names when they start (an init script, a plugin, an exec line); it is not on sandspawn's list of such paths: look \
             at it before applying it"
        );
        let path = super::changes::shown(&root.join(rel));
        Some(HostRisk { path, kind: crate::planted::RiskKind::ProtectedNameCreated, detail })
    }
}
