//! What the host's repositories in a set's roots run hooks from outside their own top: a
//! `core.hooksPath` leading elsewhere (`../hooks`, an absolute path, `~/…`), or a hooks directory
//! reached through a symlink below the top (husky's `.husky` a link to `../x`). The judge walks a
//! set's changes directory by directory and guards what lies below each repository's top
//! (`risks::Judge::guarded_of`); these lie anywhere in the roots, a change there may come before the
//! walk reaches the repository, so they are found first, once per set, by the bounded walk direct
//! runs make for the same repositories, and guarded from each root.
//! The repositories above a root (`planted::above`) count too, with all their hooks directories:
//! a reviewed package of a monorepo whose `core.hooksPath` is `frontend/githooks` got a hook
//! written there applied unflagged (found by an attacker's review).
//! Left open by the tenth session: a run in review mode wrote `hooks/pre-commit` for the repository
//! `a/` whose `core.hooksPath` was `../hooks`, and apply landed it unflagged (the host's next `git
//! commit` in `a/` ran it); likewise `x/_/pre-commit` under a `.husky` that was a link to `../x`.
//! And the hooks the host's hooks directories link to (`planted::hook_links`): found by an
//! attacker's review, `.git/hooks/pre-commit` a symlink to `../../scripts/pre-commit`; the set
//! rewrote `scripts/pre-commit`, apply landed it unflagged, and the host's `git commit` ran it.
//! And the files the repositories' own configuration includes (`repo::Facts::includes`): found by
//! an attacker's review, `include.path = ../tools/gitconfig`; the set appended `core.fsmonitor`
//! there, apply landed it unflagged, and the host's next `git status` in the repository ran it.
//! And the programs that configuration names by path (`repo::Facts::programs`): found by an
//! attacker's review, `core.fsmonitor = <top>/tools/fsmon`, rewritten by the set and applied.
//! And the programs a `.cargo` at a root's or a repository's top names by path
//! (`planted::cargo_programs`): found by an attacker's review (host33), a set rewrote the
//! `rustc-wrapper = "tools/wrap.sh"` a project's `.cargo/config.toml` named, apply landed it, and
//! the host's next `cargo metadata` ran it. A `.cargo` deeper than a top is not read here (direct
//! runs read every one their walk finds).
//! And the files a `.yarnrc.yml` or `.yarnrc` at a top names to run, its `yarnPath` and `plugins`
//! (`planted::yarn_programs`): found by an attacker's review (host34), a set rewrote the committed
//! `.yarn/releases/yarn-4.5.0.cjs` and apply landed it; the host's next yarn there ran it.
//! And what a `.mvn` at a top has Maven's JVM load (`planted::mvn_programs`): the same review, a
//! set replaced the `-javaagent:tools/agent.jar` of its jvm.config; the host's next `mvn -v` ran it.
//! And what an `.envrc` at a top sources (`planted::envrc_sources`): the same review, a set
//! rewrote the `scripts/dev-env.sh` it sourced; direnv's allow list covers the `.envrc` alone.
//! And the programs an editor's settings at a top name by path (`planted::editor_programs`):
//! found by an attacker's review (host35), a set rewrote the `clangd.path` a `.vscode/settings.json`
//! named; the editor's next start there ran it.
//! And the local plugins a `devbox.json` and the files a `devenv.yaml` at a top pull in
//! (`planted::dev_env_programs`): found by an attacker's review (host41), a set rewrote the
//! `plugins/p/plugin.json` a devbox.json included, and apply landed it.
//! And where the symlinks among a protected directory's entries at a top lead
//! (`planted::dir_links`): found by the fixer (fix34), a set rewrote the file
//! `.cargo/config.toml` linked to, and apply landed it.

use std::path::{Path, PathBuf};

use super::store::Meta;

/// What the judge guards from each root of a set (absolute paths).
#[derive(Debug, Default)]
pub struct Elsewhere {
    /// Hooks directories: a hook written in one is a risk.
    pub dirs: Vec<PathBuf>,
    /// Files git runs as hooks through the host's symlink to them: written, a risk.
    pub hooks: Vec<PathBuf>,
    /// Files a repository's configuration includes (`repo::Facts::includes`) or names as programs
    /// (`repo::Facts::programs`), and those another tool's configuration names (`.cargo`, yarn,
    /// `.mvn`, `.envrc`, an editor's settings, mise), as named and where the host's links lead
    /// them, each with what the host does with it (one of `By`'s): any change, a risk.
    pub configs: Vec<(PathBuf, &'static str)>,
}

/// What the host does with a file of `Elsewhere::configs`, by the configuration naming it: said in
/// the risk's detail. Before (found by an attacker's review, hostb37), every such file was said
/// with git's words ("a repository's configuration includes it (include.path) ...") whichever tool
/// named it: a reviewer was told git reads the script an `.envrc` sources.
pub struct By;

impl By {
    pub const GIT: &'static str = "a repository's configuration includes it (include.path), and git on the host reads it as that configuration (core.fsmonitor and aliases run commands), or names it as a program git runs (core.fsmonitor, core.pager, ...)";
    pub const CARGO: &'static str = "a .cargo configuration names it as a program cargo runs (rustc-wrapper, runner, linker): the host's next cargo metadata or build runs it";
    pub const TOOLCHAIN: &'static str = "it lies in the toolchain a rust-toolchain file's path names: rustup runs its programs for every cargo and rustc there";
    pub const YARN: &'static str = "a yarn configuration names it (.yarnrc.yml's yarnPath or plugins, .yarnrc's yarn-path): the host's next yarn there runs it";
    pub const MAVEN: &'static str = "a .mvn directory's jvm.config or maven.config names it (-javaagent, an extension): the host's next mvn there has Maven's JVM load it";
    pub const ENVRC: &'static str = "an .envrc sources, loads or runs it (or zsh-autoenv's .autoenv.zsh, autoenv's .env does: source_env, dotenv, source, ...): direnv (zsh-autoenv, autoenv) on the host runs it at the next cd there, its allow list (checksum) covering the file alone";
    pub const EDITOR: &'static str = "an editor's project settings name it as a program (.vscode's settings and folder-open tasks, .idea's File Watchers, .zed, .helix, a dev container's initializeCommand, ...): the editor runs it when the folder opens (on the host, for initializeCommand, when it opens in its container) or a file is saved";
    pub const MISE: &'static str = "a mise configuration names it (env._.source, env._.file, hooks, exec(...)): mise's shell hook on the host runs or loads it at the next prompt there, mise's trust covering the configuration alone";
    pub const PROTO: &'static str = "a .prototools names it as a file:// plugin or an [env] file: proto's shell activation on the host loads it at the next cd there (a WASM plugin runs programs through proto's exec_command; a dotenv's variables, PS1 or PROMPT_COMMAND among them, are exported into the shell)";
    pub const DEV_ENV: &'static str = "a devbox.json includes it as a local plugin, or a devenv.yaml imports it: the environment's directory hook (direnv's use devenv, devbox's .envrc) on the host evaluates it at the next prompt there (a plugin's init_hook, an enterShell runs)";
    pub const DIR_LINK: &'static str = "a symlink among a protected directory's entries leads to it: the tool that reads that directory reads it as its own configuration";
}

/// The hooks directories (absolute) that the host's repositories below `meta`'s roots run hooks
/// from outside their top or through a symlink below it (a git directory's `hooks` that is one,
/// too): each as git names it (the judge follows the links on its way in each root's view) and
/// where the host's links lead it now (into another root of the set, too); every hooks directory
/// of a repository above a root; and where the host's symlinked hooks lead (`hooks`). Nothing
/// without `protectGit`, which guards hooks at all. Repositories beyond the walk's bound, or in
/// `node_modules`, are not looked at (as in direct runs).
pub fn hooks_elsewhere(meta: &Meta) -> Elsewhere {
    let mut out = Elsewhere::default();
    if !meta.protect_git {
        cargo_programs(&meta.roots, &mut out.configs);
        toolchain_paths(&meta.roots, &mut out.configs);
        yarn_programs(&meta.roots, &mut out.configs);
        mvn_programs(&meta.roots, &mut out.configs);
        envrc_sources(&meta.roots, &mut out.configs);
        editor_programs(&meta.roots, &mut out.configs);
        mise_programs(&meta.roots, &mut out.configs);
        proto_programs(&meta.roots, &mut out.configs);
        dev_env_programs(&meta.roots, &mut out.configs);
        dir_links(&meta.roots, &meta.protected_names, &mut out.configs);
        return out;
    }
    let push = |list: &mut Vec<PathBuf>, p: PathBuf| {
        if !list.contains(&p) {
            list.push(p);
        }
    };
    let below = crate::planted::repositories_below(&meta.roots).into_iter().map(|g| (g, false));
    // A repository whose top lies above a root (a package of a monorepo as the cwd): the judge
    // meets no top of it in the root, so every hooks directory it names is guarded from the root.
    let above = crate::planted::repositories_above(&meta.roots).into_iter().map(|g| (g, true));
    let global = crate::planted::global_git::hooks_paths();
    let mut tops = meta.roots.clone();
    for (dot_git, is_above) in below.chain(above) {
        let Some(top) = dot_git.parent() else { continue };
        if !tops.iter().any(|t| t == top) {
            tops.push(top.to_path_buf());
        }
        let facts = crate::planted::repo::facts(&dot_git, None, None, &global);
        let outside = facts.hooks.iter().filter(|h| is_above || !h.starts_with(top) || through_a_link(top, h));
        for h in outside.chain(&facts.links.linked_dirs) {
            let led = crate::policy::paths::canonical_lenient("core.hooksPath", h).ok().map(|l| l.path);
            for p in std::iter::once(h.clone()).chain(led) {
                push(&mut out.dirs, p);
            }
        }
        for (_, to) in &facts.links.symlinks {
            push(&mut out.hooks, to.clone());
        }
        // The programs it names by path (`core.fsmonitor = tools/fsmon`) likewise: git runs them.
        for f in facts.includes.iter().chain(&facts.programs) {
            guard_as_named(&mut out.configs, "include.path", By::GIT, f.clone());
        }
    }
    cargo_programs(&tops, &mut out.configs);
    toolchain_paths(&tops, &mut out.configs);
    yarn_programs(&tops, &mut out.configs);
    mvn_programs(&tops, &mut out.configs);
    envrc_sources(&tops, &mut out.configs);
    editor_programs(&tops, &mut out.configs);
    mise_programs(&tops, &mut out.configs);
    proto_programs(&tops, &mut out.configs);
    dev_env_programs(&tops, &mut out.configs);
    dir_links(&tops, &meta.protected_names, &mut out.configs);
    out
}

/// Where the symlinks among the entries of each protected directory at each of `tops` lead
/// (`planted::dir_links`), as named and where the host's links lead them, into `configs`: an
/// `lstat` per name and top, a listing per such directory.
fn dir_links(tops: &[PathBuf], names: &[String], configs: &mut Vec<(PathBuf, &'static str)>) {
    let dirs: Vec<PathBuf> = tops.iter().flat_map(|t| names.iter().map(move |n| t.join(n))).filter(|d| d.symlink_metadata().is_ok_and(|m| m.is_dir())).collect();
    for (_, to) in crate::planted::dir_links::of(dirs.iter()).targets {
        guard_as_named(configs, "protectedNames", By::DIR_LINK, to);
    }
}

/// The programs the `.cargo` at each of `tops` names by path, as named and where the host's links
/// lead them, into `configs`: an `lstat` per top, two small reads per `.cargo`.
fn cargo_programs(tops: &[PathBuf], configs: &mut Vec<(PathBuf, &'static str)>) {
    use crate::planted::cargo_programs::{named, DIR};
    for dot_cargo in tops.iter().map(|t| t.join(DIR)).filter(|d| d.symlink_metadata().is_ok_and(|m| m.is_dir())) {
        for f in named(&dot_cargo).programs {
            guard_as_named(configs, DIR, By::CARGO, f);
        }
    }
}

/// The toolchain directory a rust-toolchain file at each of `tops` names by path
/// (`planted::toolchain_path`: found by an attacker's review, rfix33), as named and where the
/// host's links lead it, into `configs`, which guard what lies below them too: an `lstat` per name
/// and top, a small read per file.
fn toolchain_paths(tops: &[PathBuf], configs: &mut Vec<(PathBuf, &'static str)>) {
    use crate::planted::toolchain_path::{named, FILES};
    for file in tops.iter().flat_map(|t| FILES.iter().map(move |f| t.join(f))).filter(|f| f.symlink_metadata().is_ok()) {
        let Ok(Some(dir)) = named(&file) else { continue };
        guard_as_named(configs, "rust-toolchain", By::TOOLCHAIN, dir);
    }
}

/// The files a yarn configuration at each of `tops` names to run (`planted::yarn_programs`: found
/// by an attacker's review, host34, a set rewrote the `yarnPath` release and apply landed it), as
/// named and where the host's links lead them, into `configs`: an `lstat` per name and top, a
/// small read per file.
fn yarn_programs(tops: &[PathBuf], configs: &mut Vec<(PathBuf, &'static str)>) {
    use crate::planted::yarn_programs::{named, FILES};
    for file in tops.iter().flat_map(|t| FILES.iter().map(move |f| t.join(f))).filter(|f| f.symlink_metadata().is_ok()) {
        for f in named(&file).programs {
            guard_as_named(configs, "yarnPath", By::YARN, f);
        }
    }
}

/// What the `.mvn` at each of `tops` has Maven's JVM load (`planted::mvn_programs`: found by an
/// attacker's review, host34, a set replaced the `-javaagent` jar and apply landed it), as named
/// and where the host's links lead them, into `configs`: an `lstat` per top, two small reads per
/// `.mvn`.
fn mvn_programs(tops: &[PathBuf], configs: &mut Vec<(PathBuf, &'static str)>) {
    use crate::planted::mvn_programs::{named, DIR};
    for dot_mvn in tops.iter().map(|t| t.join(DIR)).filter(|d| d.symlink_metadata().is_ok_and(|m| m.is_dir())) {
        for f in named(&dot_mvn).programs {
            guard_as_named(configs, DIR, By::MAVEN, f);
        }
    }
}

/// The files an `.envrc` (or `.envrc.local`) at each of `tops` sources or loads
/// (`planted::envrc_sources`: found by an attacker's review, host34, a set rewrote the
/// `scripts/dev-env.sh` an `.envrc` sourced and apply landed it), as named and where the host's
/// links lead them, into `configs`: an `lstat` per name and top, a small read per file.
fn envrc_sources(tops: &[PathBuf], configs: &mut Vec<(PathBuf, &'static str)>) {
    use crate::planted::envrc_sources::{named, FILES};
    for file in tops.iter().flat_map(|t| FILES.iter().map(move |f| t.join(f))).filter(|f| f.symlink_metadata().is_ok()) {
        for f in named(&file).programs {
            guard_as_named(configs, ".envrc", By::ENVRC, f);
        }
    }
}

/// The programs the editor settings at each of `tops` name by path (`planted::editor_programs`:
/// found by an attacker's review, host35, a set rewrote the `clangd.path` a `.vscode/settings.json`
/// named and apply landed it), as named and where the host's links lead them, into `configs`: an
/// `lstat` per name and top, a small read per file.
fn editor_programs(tops: &[PathBuf], configs: &mut Vec<(PathBuf, &'static str)>) {
    use crate::planted::editor_programs::{named, ENTRIES};
    // `.vscode` is two rows (its settings and its tasks), read by one `named`.
    let mut names: Vec<&str> = ENTRIES.iter().map(|(e, _, _)| *e).collect();
    names.dedup();
    for entry in tops.iter().flat_map(|t| names.iter().map(move |e| t.join(e))).filter(|f| f.symlink_metadata().is_ok()) {
        for f in named(&entry).programs {
            guard_as_named(configs, "editor settings", By::EDITOR, f);
        }
    }
}

/// The files the mise configurations at each of `tops` (`mise.toml`, `.config/mise.toml`,
/// `.mise/config.toml`, ...) have mise run or load (`planted::mise_programs`: found by an
/// attacker's review, host37, a set rewrote the `_.source` script of a committed `mise.toml` and
/// apply landed it), as named and where the host's links lead them, into `configs`: an `lstat`
/// per name and top, a small read per file.
fn mise_programs(tops: &[PathBuf], configs: &mut Vec<(PathBuf, &'static str)>) {
    use crate::planted::mise_programs::{named, DIRS, FILES};
    let at_top = FILES.iter().chain(DIRS).flat_map(|f| [PathBuf::from(f), Path::new(".config").join(f)]);
    let at_top: Vec<PathBuf> = at_top.collect();
    for entry in tops.iter().flat_map(|t| at_top.iter().map(move |e| t.join(e))).filter(|f| f.symlink_metadata().is_ok()) {
        for f in named(&entry).programs {
            guard_as_named(configs, "mise configuration", By::MISE, f);
        }
    }
}

/// The `file://` plugins the `.prototools` at each of `tops` has proto load
/// (`planted::proto_programs`: found by an attacker's review, hostb38), into `configs`.
fn proto_programs(tops: &[PathBuf], configs: &mut Vec<(PathBuf, &'static str)>) {
    use crate::planted::proto_programs::{named, FILE};
    for entry in tops.iter().map(|t| t.join(FILE)).filter(|f| f.symlink_metadata().is_ok()) {
        for f in named(&entry).programs {
            guard_as_named(configs, "proto configuration", By::PROTO, f);
        }
    }
}

/// The local plugins a `devbox.json` and the files a `devenv.yaml` at each of `tops` pull in
/// (`planted::dev_env_programs`: found by an attacker's review, host41), into `configs`.
fn dev_env_programs(tops: &[PathBuf], configs: &mut Vec<(PathBuf, &'static str)>) {
    use crate::planted::dev_env_programs::{named, DEVBOX, DEVENV};
    for entry in tops.iter().flat_map(|t| std::iter::once(DEVBOX).chain(DEVENV.iter().copied()).map(move |f| t.join(f))).filter(|f| f.symlink_metadata().is_ok()) {
        for f in named(&entry).programs {
            guard_as_named(configs, "dev environment configuration", By::DEV_ENV, f);
        }
    }
}

/// `f` as named and where the host's links lead it (`what` names the setting in a refusal), into
/// `configs` with `by` (one of `By`'s), once: the first tool to name a file says it.
fn guard_as_named(configs: &mut Vec<(PathBuf, &'static str)>, what: &str, by: &'static str, f: PathBuf) {
    let led = crate::policy::paths::canonical_lenient(what, &f).ok().map(|l| l.path);
    for p in std::iter::once(f).chain(led) {
        if !configs.iter().any(|(c, _)| *c == p) {
            configs.push((p, by));
        }
    }
}

/// Whether a directory on the host's way from `top` down to `dir` (below it) is a symlink.
fn through_a_link(top: &Path, dir: &Path) -> bool {
    let Ok(below) = dir.strip_prefix(top) else { return false };
    let mut at = top.to_path_buf();
    for c in below.components() {
        at.push(c);
        match at.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}
