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

/// Each path below `root` that such a link or program leads to, and what the host does with it;
/// with each symlink below `root` on the way to them, or to a file of the host's global git
/// configuration or a directory it takes hooks from (`~/.bashrc -> <root>/active/bashrc`, itself a
/// link to `../pkgs/bash/bashrc`). Found by an attacker's review: only the chain's end was
/// guarded, and a plain apply landed the set's `ln -sf evil-bashrc active/bashrc`.
pub fn guarded(root: &Path, bases: &Bases, meta: &Meta, global: &Global) -> Vec<(PathBuf, &'static str)> {
    let names: Vec<String> = meta.protected_names.iter().chain(&meta.reported_names).cloned().collect();
    let linked: Vec<(PathBuf, &'static str)> = home_links::linked(bases, &names).into_iter().map(|l| (l.path, l.what)).collect();
    let programs = global.programs.iter().map(|p| (p.clone(), PROGRAM));
    let mut out = Vec::new();
    for (p, what) in linked.iter().cloned().chain(programs.clone()) {
        // Where it leads on the host, missing components kept (a dangling link's target).
        let Ok(l) = canonical_lenient("HOME", &home_links::leads_to(&p)) else { continue };
        out.extend(below(root, &l.path).map(|rel| (rel, what)));
    }
    let files = global.files.iter().map(|f| (f.clone(), GLOBAL)).chain(global.host_dirs.iter().map(|d| (d.clone(), GLOBAL)));
    for (p, what) in linked.into_iter().chain(programs).chain(files) {
        for link in home_links::links_on_the_way(&p) {
            out.extend(below(root, &link.path).map(|rel| (rel, what)));
        }
    }
    out
}

const GLOBAL: &str = "git reads the host user's global configuration or hooks through this symlink: what it leads to after apply is what git runs";

/// `p` relative to `root`, when it lies strictly below it.
fn below(root: &Path, p: &Path) -> Option<PathBuf> {
    p.strip_prefix(root).ok().filter(|rel| !rel.as_os_str().is_empty()).map(Path::to_path_buf)
}
