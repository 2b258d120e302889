//! Files host tools act on that no single name in `names` can stand for, found by an attacker's
//! review (tools23): VS Code's `*.code-workspace` (settings, and tasks with `runOn: folderOpen`,
//! the counterpart of `.vscode`) and GitHub Copilot CLI's `.github/hooks` (it runs the `bash`
//! commands of each `*.json` there; `.github` itself is the project's, workflows); and (host25)
//! bazelisk's `tools/bazel` wrapper (`tools` is the project's own); and (host40) Hermit's
//! `bin/hermit.hcl` and `bin/activate-hermit` (`bin` is the project's own); and (host30) Copilot CLI's
//! `.github/lsp.json` and `.github/mcp.json` (it starts the servers listed there); and (host43)
//! Trunk's `.trunk/trunk.yaml` and `.trunk/user.yaml` (the commands of its actions). They are
//! matched beside the names by the walk and review mode (a suffix and a parent compared per entry,
//! no lookup of its own), so a run that creates or replaces one says so in `hostRisks` and
//! review's apply holds it back. `.github/hooks` at a root's or repository's top is also kept as a
//! protected directory (`NESTED`); a pattern cannot be (placeholders and the keeper work by path).
//!
//! And (host32) direnv's layout directory: nix-direnv evals its cached `.direnv/*.rc` (the dev
//! shell of `use flake` and `use nix`) whenever it is newer than the flake, and puts `.direnv/bin`
//! first on PATH, for every `.envrc` the user allowed that uses it: matched as `*.rc` and `bin` in
//! a `.direnv` directory, and a `.direnv` that is a symlink (`of_link`). Report-only: direnv
//! writes them on the host. Its layouts' environments (`.direnv/python-3.12/bin`, on PATH under
//! `layout python`) are not matched.
//!
//! A `.github` that is a symlink is matched too (`of_link`): found by an attacker's review, a run
//! made `.github` a link to a directory of its own holding `hooks/evil.json`, and neither the walk
//! (it follows no link, and that `hooks`'s parent is named otherwise) nor review's parent compare
//! saw a hooks directory; Copilot CLI reads it through the link all the same.

use std::ffi::OsStr;

/// The nested path kept at each top as a protected directory is (`Carver::nested_name`).
pub const NESTED: &str = ".github/hooks";

const WORKSPACE: &str = "VS Code applies its settings and runs its tasks (`runOn: folderOpen` when the folder opens)";
/// The directory `NESTED` lies in (`of_link`).
pub const NESTED_PARENT: &str = ".github";

const COPILOT_HOOKS_LINK: &str = "it is a symlink: GitHub Copilot CLI runs the commands of the hooks (*.json) in the hooks directory of what it leads to when a session starts here";
/// Found by an attacker's review (host25): bazelisk runs a workspace's `tools/bazel` in place of
/// Bazel, so `bazel build` there runs what a run put in it.
const BAZEL_WRAPPER: &str = "bazelisk (and Bazel's own launcher) runs it in place of bazel for every bazel command in the workspace";
const COPILOT_HOOKS: &str = "GitHub Copilot CLI runs the commands of the hooks (*.json) in it when a session starts here";
/// Found by an attacker's review (host30): Copilot CLI takes a repository's `.github/lsp.json` as
/// its project configuration of language servers and, once the directory is trusted (as for its
/// hooks), starts each relevant one's `command` in the background when a session starts. Projects
/// commit it (Copilot's lsp-setup skill writes it): report-only, as `tools/bazel` is.
const COPILOT_LSP: &str = "GitHub Copilot CLI starts the command of each language server it lists, in the background, when a session starts here";
/// The same review: Copilot CLI (1.0.61 on) also loads a trusted repository's `.github/mcp.json`
/// as its workspace MCP configuration, beside `.mcp.json` (a protected name), and starts each
/// local server's command with the session. VS Code's Copilot writes it too: report-only.
const COPILOT_MCP: &str = "GitHub Copilot CLI starts the command of each local MCP server it lists when a session starts here";

/// Found by an attacker's review (host39): with `PROTO_ENV` set, proto reads `.prototools.<env>`
/// beside each `.prototools` (a reported name; file_manager.rs) and its shell activation applies
/// its `[env]` and aliases at every cd: a run created `.prototools.dev` unsaid. Report-only, as
/// `.prototools` is (`proto pin --env` writes it).
const PROTO_ENV_FILE: &str = "proto reads it in place of .prototools' own settings when PROTO_ENV names its suffix: its shell activation exports the [env] variables (PS1, PROMPT_COMMAND) and aliases into the shell at every cd";
const PROTO_ENV_PREFIX: &[u8] = b".prototools.";

/// Found by an attacker's review (host40): Hermit's shell hooks (`hermit shell-hooks`) source a
/// directory's `bin/activate-hermit` when a shell enters it (or below it), checking its text and
/// `bin/hermit`'s against Hermit's known sums only, so a copy of a genuine one is a new
/// environment; activating exports `bin/hermit.hcl`'s `env` and puts that `bin` first on PATH.
/// Report-only: `hermit init` writes both, projects commit them.
const HERMIT_BIN: &str = "bin";
const HERMIT_CONFIG: &str = "Hermit's shell hooks activate the environment when a shell enters the directory: its env is exported (PROMPT_COMMAND runs at the next prompt), its sources' packages are installed and its bin put first on PATH";
const HERMIT_ACTIVATE: &str = "Hermit's shell hooks source it when a shell enters the directory (a genuine copy passes their check): the environment's bin goes first on PATH and its hermit.hcl's env is exported";

/// direnv's layout directory (`.direnv`) and what in it the host runs (the module's comment).
pub const DIRENV: &str = ".direnv";
const DIRENV_RC: &str = "nix-direnv evals it (its cached dev shell) in the host's shell whenever direnv loads the .envrc here (`use flake`, `use nix`): direnv reloads when it changes, at the shell's next prompt";
const DIRENV_BIN: &str = "nix-direnv puts it first on PATH in the host's shell here: its programs run in place of the host's (git at every prompt)";
const DIRENV_LINK: &str = "it is a symlink: nix-direnv evals the *.rc and puts bin first on PATH of what it leads to, in the host's shell here";

/// Found by an attacker's review (host41; left by host40): Sublime Text applies a project file's
/// `settings` when the user opens it (`subl --project`, the recent projects), and its LSP package
/// starts the language server a project's `LSP` settings define (`command`) as soon as a file of
/// the project is opened; its `build_systems` run on the build key. A run wrote one with
/// `hostRisks` `[]`. The project's own file, written by Sublime itself: report-only, as
/// `*.code-workspace` is.
const SUBLIME_PROJECT: &str = "Sublime Text applies its settings when the project is opened: its LSP settings' language servers start (their command runs) as a file is opened, its build systems run on the build key";
const SUBLIME_SUFFIX: &[u8] = b".sublime-project";

/// Found by an attacker's review (host41; left by host40): a conda environment (pixi's
/// `.pixi/envs/<name>`, VS Code's `.conda`, `conda create -p ./env`) is activated on the host by
/// `conda activate`, `pixi shell`, every `pixi run`, `pixi shell-hook` in an `.envrc` at each cd,
/// and editors' terminals: activation sources each script of its `etc/conda/activate.d` (and
/// `deactivate.d` on leaving) in the host's shell and exports the variables of
/// `etc/conda/env_vars.d/*.json` and of `conda-meta/state`'s `env_vars` (`LD_PRELOAD`,
/// `PROMPT_COMMAND`). A run wrote or appended to each with `hostRisks` `[]`. Packages install
/// them (`pixi install`): report-only, as a virtual environment's `.pth` files are.
const CONDA_ACTIVATE: &str = "conda activate, pixi run, pixi shell and pixi shell-hook (a direnv .envrc's, at each cd) source it in the host's shell when the conda environment holding it is activated";
const CONDA_ENV_VARS: &str = "conda activate, pixi run and pixi shell(-hook) export the variables it sets (env_vars: LD_PRELOAD, PROMPT_COMMAND) into the host's shell when the conda environment holding it is activated";
/// The directories whose every entry a conda environment's activation sources or exports.
const CONDA_SCRIPT_DIRS: &[&str] = &["activate.d", "deactivate.d"];

/// Found by an attacker's review (host43): Trunk runs the `run` command of each action its
/// `.trunk/trunk.yaml` (and the user's `.trunk/user.yaml`) defines on the git hooks it installs by
/// itself when an action names one, and on file changes and schedules through its daemon, which
/// its editor extension starts as the folder opens. A run wrote both with `hostRisks` `[]`. `.trunk`
/// holds Trunk's own logs and caches and `trunk init`/`trunk upgrade` write the file: report-only.
const TRUNK: &str = ".trunk";
const TRUNK_CONFIG: &str = "Trunk runs the run commands of the actions it defines on git hooks (installed by trunk itself), on file changes and on schedules (its daemon, which its editor extension starts when the folder opens)";

/// Found by an attacker's review (rev44): the patterns matched by their parent's name were not
/// matched where that parent is a symlink a run made to a directory of its own (`ln -s tmeta
/// .trunk` with `tmeta/trunk.yaml`: `hostRisks` `[]` in both modes and in review), as `.github`
/// and `.direnv` links were not before; the tools read through the link all the same. Such a link
/// is matched itself (`of_link`), as those two are.
const TRUNK_LINK: &str = "it is a symlink: Trunk runs the run commands of the actions the trunk.yaml and user.yaml of what it leads to define (git hooks, file changes, schedules)";
const HERMIT_LINK: &str = "it is a symlink: Hermit's shell hooks source the activate-hermit of what it leads to when a shell enters the directory, and export its hermit.hcl's env";
const BAZEL_LINK: &str = "it is a symlink: bazelisk runs the bazel of what it leads to in place of bazel for every bazel command in the workspace";

/// Found by an attacker's review (host44): pixi merges a workspace's `.pixi/config.toml` over the
/// user's configuration on every command, `pixi shell-hook` (its direnv integration, at each load)
/// among them, which installs the environment first: its `mirrors` say where the packages come
/// from (their `activate.d` scripts are then sourced in the host's shell), `run-post-link-scripts`
/// runs theirs. `.pixi` holds the environments too, so only this file in it is matched.
const PIXI: &str = ".pixi";
const PIXI_CONFIG: &str = "pixi merges it over the user's configuration on every command here (pixi shell-hook in a direnv .envrc at each load, which installs first): its mirrors say where the packages whose activation scripts the host's shell sources come from, run-post-link-scripts runs theirs";

/// What the entry `name` in a directory named `parent` can make the host do, when it is one of the
/// patterns. Only when names are looked for at all (`protectedNames` or `reportedNames` not empty).
pub fn what_it_does(parent: Option<&OsStr>, name: &OsStr) -> Option<&'static str> {
    let bytes = name.as_encoded_bytes();
    if bytes.len() > ".code-workspace".len() && bytes.ends_with(b".code-workspace") {
        return Some(WORKSPACE);
    }
    if bytes.len() > SUBLIME_SUFFIX.len() && bytes.ends_with(SUBLIME_SUFFIX) {
        return Some(SUBLIME_PROJECT);
    }
    if let Some(what) = conda_activation(parent, name) {
        return Some(what);
    }
    if bytes.len() > PROTO_ENV_PREFIX.len() && bytes.starts_with(PROTO_ENV_PREFIX) {
        return Some(PROTO_ENV_FILE);
    }
    if parent.is_some_and(|p| p == HERMIT_BIN) {
        if name == "hermit.hcl" {
            return Some(HERMIT_CONFIG);
        }
        if name == "activate-hermit" {
            return Some(HERMIT_ACTIVATE);
        }
    }
    if parent.is_some_and(|p| p == PIXI) && name == "config.toml" {
        return Some(PIXI_CONFIG);
    }
    if parent.is_some_and(|p| p == TRUNK) && (name == "trunk.yaml" || name == "user.yaml") {
        return Some(TRUNK_CONFIG);
    }
    if name == "bazel" && parent.is_some_and(|p| p == "tools") {
        return Some(BAZEL_WRAPPER);
    }
    if parent.is_some_and(|p| p == DIRENV) {
        if name == "bin" {
            return Some(DIRENV_BIN);
        }
        if bytes.len() > ".rc".len() && bytes.ends_with(b".rc") {
            return Some(DIRENV_RC);
        }
    }
    if parent.is_some_and(|p| p == NESTED_PARENT) {
        if name == "lsp.json" {
            return Some(COPILOT_LSP);
        }
        if name == "mcp.json" {
            return Some(COPILOT_MCP);
        }
    }
    (name == "hooks" && parent.is_some_and(|p| p == NESTED_PARENT)).then_some(COPILOT_HOOKS)
}

/// A conda environment's activation files (`CONDA_ACTIVATE`): every entry of `etc/conda/activate.d`
/// and `deactivate.d`, every entry of `env_vars.d`, and `conda-meta/state`. Judged by the parent's
/// name alone, as the other patterns are.
fn conda_activation(parent: Option<&OsStr>, name: &OsStr) -> Option<&'static str> {
    let parent = parent?;
    match () {
        _ if CONDA_SCRIPT_DIRS.iter().any(|d| parent == *d) => Some(CONDA_ACTIVATE),
        _ if parent == "env_vars.d" || (parent == "conda-meta" && name == "state") => Some(CONDA_ENV_VARS),
        _ => None,
    }
}

/// What an entry `name` that is a symlink can make the host do beside `what_it_does`: a `.github`
/// one leads Copilot CLI to the `hooks` of its target, as `.github/hooks` itself would; so for
/// each parent a pattern names (`.direnv`, `.trunk`, `bin`, `tools`).
pub fn of_link(name: &OsStr) -> Option<&'static str> {
    match () {
        _ if name == NESTED_PARENT => Some(COPILOT_HOOKS_LINK),
        _ if name == DIRENV => Some(DIRENV_LINK),
        _ if name == TRUNK => Some(TRUNK_LINK),
        _ if name == HERMIT_BIN => Some(HERMIT_LINK),
        _ if name == "tools" => Some(BAZEL_LINK),
        _ => None,
    }
}

/// The same for the last component of `path`.
pub fn of_path(path: &std::path::Path) -> Option<&'static str> {
    what_it_does(path.parent().and_then(|p| p.file_name()), path.file_name()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_patterns_only() {
        assert!(of_path("w/proj.code-workspace".as_ref()).is_some());
        assert!(of_path("w/.prototools.dev".as_ref()).is_some() && of_path("w/.prototools.".as_ref()).is_none());
        assert!(of_path("w/.github/hooks".as_ref()).is_some());
        assert!(of_path("w/tools/bazel".as_ref()).is_some());
        assert!(of_path("w/bin/hermit.hcl".as_ref()).is_some() && of_path("w/sub/bin/activate-hermit".as_ref()).is_some());
        assert!(of_path("w/hermit.hcl".as_ref()).is_none() && of_path("w/bin/hermit".as_ref()).is_none() && of_path("w/sbin/activate-hermit".as_ref()).is_none());
        assert!(of_path("w/.github/lsp.json".as_ref()).is_some() && of_path("w/lsp.json".as_ref()).is_none());
        assert!(of_path("w/.github/mcp.json".as_ref()).is_some() && of_path("w/mcp.json".as_ref()).is_none());
        assert!(of_path("w/.trunk/trunk.yaml".as_ref()).is_some() && of_path("w/sub/.trunk/user.yaml".as_ref()).is_some());
        assert!(of_path("w/.pixi/config.toml".as_ref()).is_some() && of_path("w/sub/.pixi/config.toml".as_ref()).is_some());
        assert!(of_path("w/config.toml".as_ref()).is_none() && of_path("w/.pixi/envs".as_ref()).is_none() && of_path("w/.cargo/config.toml".as_ref()).is_none());
        assert!(of_path("w/trunk.yaml".as_ref()).is_none() && of_path("w/.trunk/logs".as_ref()).is_none() && of_path("w/x/user.yaml".as_ref()).is_none());
        assert!(of_path("w/tool/bazel".as_ref()).is_none() && of_path("w/tools/bazelisk".as_ref()).is_none());
        for not in ["w/.code-workspace", "w/proj.code-workspace.bak", "w/hooks", "w/.github", "w/.github/workflows", "w/x/.githubx/hooks"] {
            assert!(of_path(not.as_ref()).is_none(), "{not}");
        }
        assert!(of_path("w/.direnv/flake-profile-0a1b.rc".as_ref()).is_some() && of_path("w/.direnv/bin".as_ref()).is_some());
        for not in ["w/.direnv/.rc", "w/.direnv/flake-profile-0a1b", "w/.direnv/python-3.12", "w/x.rc", "w/bin", "w/.direnv/bin/git"] {
            assert!(of_path(not.as_ref()).is_none(), "{not}");
        }
        assert!(of_link(".direnv".as_ref()).is_some());
        assert!(of_path("w/ed.sublime-project".as_ref()).is_some() && of_path("w/.sublime-project".as_ref()).is_none());
        for conda in ["e/etc/conda/activate.d/x.sh", "e/etc/conda/deactivate.d/y", "e/etc/conda/env_vars.d/v.json", "e/conda-meta/state"] {
            assert!(of_path(conda.as_ref()).is_some(), "{conda}");
        }
        for not in ["e/conda-meta/history", "e/activate.d", "e/etc/conda/x.sh", "w/ed.sublime-workspace"] {
            assert!(of_path(not.as_ref()).is_none(), "{not}");
        }
        assert!(of_link(".github".as_ref()).is_some());
        assert!(of_link("hooks".as_ref()).is_none() && of_link(".githubx".as_ref()).is_none());
        // rev44: the parents the other patterns name, made links.
        assert!([".trunk", "bin", "tools"].iter().all(|n| of_link(n.as_ref()).is_some()));
        assert!(of_link("trunk".as_ref()).is_none() && of_link("bin2".as_ref()).is_none());
    }
}
