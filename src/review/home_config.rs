//! The host user's home in a reviewed root, beyond the held list (`planted::home_config` is the
//! direct runs' side, and says the places): a change set's entry made or changed up to three
//! levels below the home's XDG configuration or data directory (`~/.config/<tool>/<dir>/*`,
//! `~/.local/share/<app>/<dir>/*`) or up to two below a dot-directory at its top (not `~/.cache`),
//! or a dot-entry made at the home's top, is a host risk, held back from a plain apply. A list of
//! the tools whose configuration runs code always lags (attacker's reviews, rfix23b and rfix23c).

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
    pub data: Vec<PathBuf>,
}

/// Levels below an XDG directory, and below a dot-directory at the home's top, as the direct
/// runs' side looks (`planted::home_config`).
const XDG_DEPTH: usize = 3;
const DOT_DIR_DEPTH: usize = 2;

impl Places {
    /// Those of `bases` that `below_root` places in the root.
    pub fn of(bases: &Bases, below_root: impl Fn(&Path) -> Option<PathBuf>) -> Places {
        let homes: Vec<PathBuf> = bases.homes.iter().filter_map(|h| below_root(h)).collect();
        let data = homes.iter().map(|h| h.join(".local/share")).collect();
        Places { homes, config: bases.config.iter().filter_map(|c| below_root(c)).collect(), data }
    }

    /// Whether `rel` lies within the depths watched below an XDG directory or a dot-directory.
    fn watched(&self, rel: &Path) -> bool {
        let depth = |base: &Path| rel.strip_prefix(base).ok().map(|r| r.components().count());
        let xdg = self.config.iter().chain(&self.data).any(|b| depth(b).is_some_and(|d| (1..=XDG_DEPTH).contains(&d)));
        let dot_dir = |h: &PathBuf| {
            let Ok(below) = rel.strip_prefix(h) else { return false };
            let top = below.components().next().map(|c| c.as_os_str().as_encoded_bytes());
            let n = below.components().count();
            top.is_some_and(|t| t.starts_with(b".") && t != b".cache") && (2..=DOT_DIR_DEPTH + 1).contains(&n)
        };
        xdg || self.homes.iter().any(dot_dir)
    }

    /// The risk of `change` (below the root), if it is such an entry; `root`: the root's path.
    pub fn risk(&self, root: &Path, change: &Change) -> Option<HostRisk> {
        let rel = change.rel.as_path();
        let parent = rel.parent()?;
        let name = rel.file_name()?;
        let at_top = change.kind == ChangeKind::Added && name.as_encoded_bytes().starts_with(b".") && self.homes.iter().any(|h| h == parent);
        let in_config = change.kind != ChangeKind::Deleted && self.watched(rel);
        if !(at_top || in_config) {
            return None;
        }
        let place = if at_top { "made at the top of the host user's home" } else { "made or changed in the XDG configuration or data directory, or a dot-directory, of the host user's home" };
        let detail = format!(
            "was {place} in the change set, which a reviewed root holds: tools read their configuration there, and many run what \
             it names when they start (an init script, a plugin, an exec line); it is not on sandspawn's list of such paths: look \
             at it before applying it"
        );
        let path = super::changes::shown(&root.join(rel));
        Some(HostRisk { path, kind: crate::planted::RiskKind::ProtectedNameCreated, detail })
    }
}
