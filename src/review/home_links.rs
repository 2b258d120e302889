//! What a reviewed root holds of the host user's home by way of links (`planted::home_links`):
//! a home path or protected name at a home's top that is a symlink into the root (GNU stow's
//! `~/.bashrc` → `~/dotfiles/bash/.bashrc`), and a program the host's global git configuration
//! names by an absolute or `~/` path (`global_git::Global::programs`: `core.fsmonitor =
//! ~/bin/fsmon`). A change at or below where one leads is a host risk, held back from a plain
//! apply, as a direct run finds it read-only. Found by an attacker's review: with the cwd at
//! `~/dotfiles`, only the global `.gitconfig` was held back, and a plain apply landed a line in
//! `.bashrc`, a `ProxyCommand` in `.ssh/config` and a new `bin/fsmon`.

use std::path::{Path, PathBuf};

use super::store::Meta;
use crate::planted::global_git::Global;
use crate::planted::home::Bases;
use crate::planted::home_links;
use crate::policy::paths::canonical_lenient;

const PROGRAM: &str = "git runs it for the host user: its global configuration names it as a program (core.fsmonitor, core.pager, credential.helper, gpg.program, ...)";

/// Each path below `root` that such a link or program leads to, and what the host does with it.
pub fn guarded(root: &Path, bases: &Bases, meta: &Meta, global: &Global) -> Vec<(PathBuf, &'static str)> {
    let names: Vec<String> = meta.protected_names.iter().chain(&meta.reported_names).cloned().collect();
    let linked = home_links::linked(bases, &names).into_iter().map(|l| (home_links::leads_to(&l.path), l.what));
    let programs = global.programs.iter().map(|p| (p.clone(), PROGRAM));
    let mut out = Vec::new();
    for (p, what) in linked.chain(programs) {
        // Where it leads on the host, missing components kept (a dangling link's target).
        let Ok(l) = canonical_lenient("HOME", &p) else { continue };
        if let Ok(rel) = l.path.strip_prefix(root) {
            if !rel.as_os_str().is_empty() {
                out.push((rel.to_path_buf(), what));
            }
        }
    }
    out
}
