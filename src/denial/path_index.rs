//! The policy's paths as one classification looks them up: whether a path lies at or below one of
//! many (the read-only carve-outs, the denied paths, the writable roots, the Landlock grants) costs
//! a hash of each of its ancestors, not a comparison with every entry. A run's resolved policy
//! carries hundreds of read-only paths (each protected name at each root's top, present or a
//! placeholder), and a command chooses how many lines name a path: compared one by one, 1 MiB of
//! `a/: Permission denied` on each stream cost the host 19 s of CPU after a 134 ms run (found by an
//! attacker's review, cross31).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::context::DenialContext;
use super::path::without_private;
use crate::policy::SandboxMode;

/// Paths, each also in its spelling without macOS's `/private` (`path::is_under` compares both),
/// with the numbers of components they have: a path is looked up only at its prefixes of those
/// lengths. Hashing every ancestor would cost the square of a path's length (each ancestor hashed
/// whole): 1 MiB of one 32 KiB path per line took 141 s.
struct PathSet {
    raw: HashSet<PathBuf>,
    plain: HashSet<PathBuf>,
    /// How many components the entries have (both spellings), ascending.
    depths: Vec<usize>,
}

impl PathSet {
    fn of<'a>(paths: impl IntoIterator<Item = &'a PathBuf>) -> PathSet {
        let raw: HashSet<PathBuf> = paths.into_iter().cloned().collect();
        let plain: HashSet<PathBuf> = raw.iter().map(|p| without_private(p)).collect();
        let mut depths: Vec<usize> = raw.iter().chain(&plain).map(|p| p.components().count()).collect();
        depths.sort_unstable();
        depths.dedup();
        PathSet { raw, plain, depths }
    }

    /// `path::is_under(p, e)` for some entry `e`.
    fn at_or_above(&self, p: &Path) -> bool {
        self.found_above(p, false)
    }

    /// The same for an entry other than `p` itself (its ancestors only).
    fn strictly_above(&self, p: &Path) -> bool {
        self.found_above(p, true)
    }

    fn found_above(&self, p: &Path, strict: bool) -> bool {
        if self.raw.is_empty() {
            return false;
        }
        Self::found_in(&self.raw, &self.depths, p, strict) || Self::found_in(&self.plain, &self.depths, &without_private(p), strict)
    }

    /// Whether a prefix of `p` (a proper one when `strict`) whose length in components is one of
    /// `depths` is in `set`: `p`'s components are gone through once, up to the deepest entry.
    fn found_in(set: &HashSet<PathBuf>, depths: &[usize], p: &Path, strict: bool) -> bool {
        let Some(&deepest) = depths.last() else { return false };
        let whole = if strict { p.components().count() } else { usize::MAX };
        let mut prefix = PathBuf::new();
        let mut wanted = depths.iter().peekable();
        for (i, c) in p.components().enumerate().take(deepest) {
            let n = i + 1;
            if n >= whole {
                break;
            }
            prefix.push(c.as_os_str());
            while wanted.next_if(|&&d| d < n).is_some() {}
            if wanted.peek() == Some(&&n) && set.contains(prefix.as_path()) {
                return true;
            }
        }
        false
    }
}

/// One classification's view of a `DenialContext`'s paths, its sets made at the first question (a
/// run that printed no path asks none, and pays nothing).
pub(crate) struct PathIndex<'a> {
    pub ctx: &'a DenialContext,
    sets: std::cell::OnceCell<Sets<'a>>,
}

struct Sets<'a> {
    roots: PathSet,
    read_only: PathSet,
    deny_read: PathSet,
    landlock_dirs: Option<PathSet>,
    placeholders: HashSet<&'a Path>,
}

impl<'a> PathIndex<'a> {
    pub fn of(ctx: &'a DenialContext) -> PathIndex<'a> {
        PathIndex { ctx, sets: std::cell::OnceCell::new() }
    }

    fn sets(&self) -> &Sets<'a> {
        let ctx = self.ctx;
        self.sets.get_or_init(|| Sets {
            roots: PathSet::of(&ctx.writable_roots),
            read_only: PathSet::of(&ctx.read_only),
            deny_read: PathSet::of(&ctx.deny_read),
            landlock_dirs: ctx.landlock_dirs.as_ref().map(PathSet::of),
            placeholders: ctx.placeholders.iter().map(PathBuf::as_path).collect(),
        })
    }

    /// `DenialContext::is_writable`.
    pub fn is_writable(&self, p: &Path) -> bool {
        if self.ctx.mode == SandboxMode::DangerFullAccess {
            return true;
        }
        let sets = self.sets();
        let granted = match &sets.landlock_dirs {
            Some(dirs) => dirs.strictly_above(p),
            None => sets.roots.at_or_above(p),
        };
        granted && !sets.read_only.at_or_above(p) && !self.is_deny_read(p)
    }

    /// `DenialContext::is_deny_read`.
    pub fn is_deny_read(&self, p: &Path) -> bool {
        self.sets().deny_read.at_or_above(p)
    }

    /// `p` is one of the placeholders over missing protected names.
    pub fn is_placeholder(&self, p: &Path) -> bool {
        self.sets().placeholders.contains(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The index answers as the context's own rule (`DenialContext::is_writable`, `is_deny_read`).
    #[test]
    fn the_index_answers_as_the_context_s_rule() {
        let policies = [
            json!({ "mode": "workspace-write", "cwd": "/ws", "writableRoots": ["/ws", "/private/tmp/w"], "readOnlyPaths": ["/ws/kept", "/tmp/w/ro"], "denyRead": ["/ws/secret", "/private/var/s"] }),
            json!({ "mode": "workspace-write", "cwd": "/ws", "landlockWritableDirs": ["/ws", "/ws/sub"], "readOnlyPaths": ["/ws/sub/ro"] }),
            json!({ "mode": "read-only", "cwd": "/ws" }),
            json!({ "mode": "danger-full-access" }),
            json!({ "mode": "workspace-write", "writableRoots": ["/"], "readOnlyPaths": ["/etc"] }),
        ];
        let deep = format!("/ws/{}x", "a/".repeat(300));
        let paths = [deep.as_str(), "/ws/.git", "/ws/.git/x", "/ws", "/ws/a", "/ws/kept", "/ws/kept/x", "/ws/keptx", "/ws/.git/index", "/ws/secret/k", "/tmp/w/a", "/private/tmp/w/a", "/tmp/w/ro/x", "/private/tmp/w/ro", "/var/s/x", "/ws/sub", "/ws/sub/a", "/ws/sub/ro", "/etc/passwd", "/", "/tmp/x"];
        for policy in &policies {
            let ctx = DenialContext::from_json(policy).unwrap();
            let index = PathIndex::of(&ctx);
            for p in paths.map(Path::new) {
                assert_eq!(index.is_writable(p), ctx.is_writable(p), "{p:?} writable under {policy}");
                assert_eq!(index.is_deny_read(p), ctx.is_deny_read(p), "{p:?} denied under {policy}");
            }
        }
    }
}
