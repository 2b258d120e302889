//! `SandboxPolicy.protectedNames`: the file names that host tools read and act on (shells, direnv,
//! editors, MCP clients, git), parsed and validated here. Each name is one path component; they are
//! matched exactly (case-sensitive), at the top of each writable root and of each repository found.

use serde_json::Value;

use crate::error::{Result, SandboxError};
use crate::policy::PlaceholderKind;

const OPTION: &str = "sandbox.protectedNames";
const REPORTED_OPTION: &str = "sandbox.reportedNames";

/// The default list: names a host tool acts on by itself (when a shell starts there, an editor or
/// agent opens the folder, a package manager or debugger runs there), which a command has no need
/// to create or change. The contract's first twelve (API.md, "Planted configuration") and what
/// research of those tools added (issue 28), each with what it can make the host do.
const DEFAULTS: &[(&str, &str)] = &[
    (".gitmodules", "git on the host reads it on `git submodule update` (submodule URLs and update commands)"),
    (".gitconfig", "git reads it as configuration when it is a home directory (hooks, fsmonitor, aliases)"),
    (".bashrc", "bash runs it when an interactive shell starts with this directory as HOME"),
    (".bash_profile", "bash runs it when a login shell starts with this directory as HOME"),
    (".zshrc", "zsh runs it when an interactive shell starts with this directory as HOME"),
    (".zprofile", "zsh runs it when a login shell starts with this directory as HOME"),
    (".profile", "sh and bash run it when a login shell starts with this directory as HOME"),
    (".envrc", "direnv runs it when a shell enters the directory"),
    (".mcp.json", "MCP clients (coding agents, editors) start the servers it lists"),
    (".vscode", "VS Code runs its tasks and applies its settings (e.g. interpreter and terminal paths)"),
    (".idea", "JetBrains IDEs run its run configurations and apply its settings"),
    (".devcontainer", "dev-container tools build and run the containers and commands it describes"),
    // Names beside the listed ones that the same tools read (an attacker's review planted each
    // unflagged): the Dev Containers spec's other spelling, opencode's JSONC config and its
    // directory (plugins there run at its start), Vim's other exrc files, irb's other rc files.
    (".devcontainer.json", "dev-container tools build and run the container and commands it describes (`initializeCommand` runs on the host)"),
    ("opencode.jsonc", "opencode starts the MCP servers and commands it lists"),
    (".opencode", "opencode runs the plugins in its plugins directory at start, and the commands and agents its config names"),
    (".vimrc", "Vim runs it on start in this directory (with 'exrc', before .exrc); Vim's own when this is HOME"),
    ("_vimrc", "Vim runs it on start in this directory (with 'exrc')"),
    (".gvimrc", "gVim runs it on start in this directory (with 'exrc'); gVim's own when this is HOME"),
    ("_gvimrc", "gVim runs it on start in this directory (with 'exrc')"),
    ("_exrc", "vi and Vim run it on start in this directory (with 'exrc')"),
    ("irb.rc", "irb runs it when it starts here"),
    ("_irbrc", "irb runs it when it starts here"),
    ("$irbrc", "irb runs it when it starts here"),
    // Shells started with this directory as HOME.
    (".bash_login", "bash runs it when a login shell starts with this directory as HOME"),
    (".bash_logout", "bash runs it when a login shell with this directory as HOME exits"),
    (".zshenv", "zsh runs it whenever it starts with this directory as HOME (scripts included)"),
    (".zlogin", "zsh runs it when a login shell starts with this directory as HOME"),
    (".zlogout", "zsh runs it when a login shell with this directory as HOME exits"),
    // zsh loads FILE.zwc, the compiled form, in place of FILE when it is newer: found by an
    // attacker's review, a run left `.zshrc.zwc` beside the protected `.zshrc`.
    (".zshenv.zwc", "zsh runs it in place of .zshenv (its compiled form, when newer) whenever it starts with this directory as HOME"),
    (".zprofile.zwc", "zsh runs it in place of .zprofile (its compiled form, when newer) when a login shell starts with this directory as HOME"),
    (".zshrc.zwc", "zsh runs it in place of .zshrc (its compiled form, when newer) when an interactive shell starts with this directory as HOME"),
    (".zlogin.zwc", "zsh runs it in place of .zlogin (its compiled form, when newer) when a login shell starts with this directory as HOME"),
    (".zlogout.zwc", "zsh runs it in place of .zlogout (its compiled form, when newer) when a login shell with this directory as HOME exits"),
    // Coding agents: settings that start hooks, MCP servers and commands when the agent opens the folder.
    (".claude", "Claude Code runs the hooks and MCP servers its settings list"),
    (".codex", "Codex CLI runs the MCP servers and notify commands its config.toml lists"),
    (".agents", "coding agents read their skills and commands from it"),
    (".cursor", "Cursor starts the MCP servers its mcp.json lists and applies its rules"),
    (".gemini", "Gemini CLI runs the MCP servers and tools its settings.json lists"),
    (".continue", "Continue runs the MCP servers and commands its configuration lists"),
    (".windsurf", "Windsurf applies its rules and workflows"),
    (".roo", "Roo Code starts the MCP servers its mcp.json lists"),
    (".amazonq", "Amazon Q starts the MCP servers its mcp.json lists"),
    (".aider.conf.yml", "aider runs its lint-cmd and test-cmd"),
    ("opencode.json", "opencode starts the MCP servers and commands it lists"),
    // Found by an attacker's review: Qwen Code (a Gemini CLI fork; folder trust off by default)
    // started the MCP server a run planted in `.qwen/settings.json`. The others are agents of the
    // same kind whose project settings list MCP servers or commands to start.
    (".qwen", "Qwen Code starts the MCP servers and tools its settings.json lists"),
    (".kiro", "Kiro starts the MCP servers its settings/mcp.json lists and runs its hooks"),
    (".kilocode", "Kilo Code starts the MCP servers its mcp.json lists"),
    (".junie", "Junie starts the MCP servers its mcp/mcp.json lists"),
    (".factory", "Factory's droid starts the MCP servers and hooks its settings list"),
    ("crush.json", "Crush starts the MCP servers and language servers it lists"),
    (".crush.json", "Crush starts the MCP servers and language servers it lists"),
    // Editors: per-project settings that name programs to run.
    (".zed", "Zed runs the language servers and tasks its settings name"),
    (".helix", "Helix runs the language servers its languages.toml names"),
    (".nvim.lua", "Neovim runs it on start in this directory (with 'exrc')"),
    (".nvimrc", "Neovim runs it on start in this directory (with 'exrc')"),
    (".exrc", "vi and Vim run it on start in this directory (with 'exrc')"),
    // Package managers: run-control files whose settings execute programs.
    (".npmrc", "npm applies it in this directory: `node-options`, `script-shell` and `git` run programs"),
    (".yarnrc", "yarn 1 applies it: `yarn-path` makes every yarn command run that file"),
    (".yarnrc.yml", "yarn 2+ applies it: `yarnPath` and plugins run that code on every yarn command"),
    (".pnpmfile.cjs", "pnpm runs its hooks on every install"),
    (".pnpmfile.mjs", "pnpm runs its hooks on every install"),
    ("bunfig.toml", "bun applies it: `preload` runs scripts before every `bun run` and test"),
    (".cargo", "cargo applies its config.toml: `runner`, `rustc-wrapper` and linkers run programs"),
    (".mvn", "Maven loads the extensions and JVM options it lists"),
    (".hg", "Mercurial runs the hooks and extensions of a repository's .hg/hgrc"),
    // Toolchain selectors whose settings name a program to run (an attacker's review: a `path`
    // toolchain in rust-toolchain.toml made the host's next `cargo --version` run the run's cargo).
    ("rust-toolchain.toml", "rustup runs the toolchain it names for every cargo and rustc here: `path` runs the programs of any directory"),
    ("rust-toolchain", "rustup runs the toolchain it names for every cargo and rustc here (TOML with `path` too)"),
    ("global.json", "the dotnet host runs the SDK it selects: `sdk.paths` makes every dotnet command run an SDK from that directory"),
    (".bazelrc", "bazel applies it on every command (IDEs run some by themselves): startup options such as `--server_javabase` and `--run_under`, `--workspace_status_command` run programs"),
    (".bazeliskrc", "bazelisk applies its variables: `BAZELISK_HOME` and `BAZELISK_BASE_URL` make every bazel command run a binary from there"),
    // Debuggers and REPLs that run a file of this directory when they start in it.
    (".pdbrc", "pdb runs its commands when a Python debugger starts here"),
    (".irbrc", "irb runs it when it starts here"),
    (".pryrc", "pry runs it when it starts here"),
    (".gdbinit", "gdb runs it when it starts here (if its auto-load path allows)"),
    (".lldbinit", "lldb runs it when it starts here (if configured to)"),
    // Found by an attacker's review (`.perldb`: a run wrote it, `perl -d` in the project ran it;
    // perl5db checks only its owner and that it is not world-writable): the same kind, each read
    // from the directory the tool starts in (erl, before OTP 21, too; its home's since).
    (".perldb", "the Perl debugger (perl -d) runs it when it starts here"),
    (".ghci", "GHCi runs its commands (:! runs a shell command) when it starts here"),
    (".ocamlinit", "the OCaml toplevel runs it when it starts here"),
    (".octaverc", "Octave runs it when it starts here"),
    (".erlang", "erl runs it when the Erlang runtime starts with this directory as HOME (or here, before OTP 21)"),
    // Found by an attacker's review: plain `iex` in the project ran it; byebug runs its commands
    // (a breakpoint's condition runs Ruby).
    (".iex.exs", "iex runs it when it starts here"),
    (".byebugrc", "byebug runs its commands when it starts here"),
    // Found by an attacker's review (tools23): counterparts of listed names that the same kind of
    // tool acts on by itself, each planted unflagged: Cline's project hooks, Amp's workspace
    // settings, lazy.nvim's local spec (beside `.nvim.lua`), Emacs's directory variables.
    (".clinerules", "Cline runs the hooks in its hooks directory (TaskStart, PreToolUse, ...) and applies its rules"),
    (".amp", "Amp starts the MCP servers its settings.json lists"),
    (".lazy.lua", "lazy.nvim runs it as a local plugin spec when Neovim starts here"),
    (".dir-locals.el", "Emacs applies its variables to files opened below it (`eval` runs Lisp, after asking unless marked safe)"),
    (".dir-locals-2.el", "Emacs applies its variables to files opened below it (`eval` runs Lisp, after asking unless marked safe)"),
    // Found by an attacker's review (host25), each planted unflagged: more coding agents whose
    // project settings start MCP servers, hooks or setup scripts; RVM's and rbenv-vars' files
    // (run, or set RUBYOPT, when a shell enters or ruby starts); Theia's tasks; Pants' and sbt's
    // start-up files; version-control directories whose configuration runs hooks, as `.hg`'s does.
    (".iflow", "iFlow CLI starts the MCP servers and hooks its settings.json lists"),
    (".codebuddy", "CodeBuddy Code starts the MCP servers and hooks its settings list"),
    (".pi", "the pi coding agent loads the extensions and runs the settings it holds"),
    (".continuerc.json", "Continue applies it over its configuration: MCP servers and commands it starts"),
    (".tabnine", "Tabnine starts the MCP servers its mcp_servers.json lists"),
    (".trae", "Trae starts the MCP servers its settings list"),
    (".vibe", "Mistral Vibe starts the MCP servers its config.toml lists"),
    (".grok", "Grok CLI starts the MCP servers its settings.json lists"),
    (".augment", "Augment's agent starts the MCP servers and hooks its settings list"),
    (".openhands", "OpenHands runs its setup.sh and pre-commit script when a session starts here"),
    (".theia", "the Theia IDE runs its tasks and applies its settings"),
    (".rvmrc", "RVM runs it when a shell enters the directory (once trusted; `rvm_trust_rvmrcs_flag` trusts every one)"),
    (".versions.conf", "RVM sets the variables it lists (RUBYOPT: code ruby loads) when a shell enters the directory"),
    (".rbenv-vars", "rbenv-vars sets the variables it lists (RUBYOPT: code ruby loads) for every ruby command here"),
    (".pants.bootstrap", "Pants runs it (a bash script) on every command here"),
    (".sbtrc", "sbt runs the commands it lists when it starts here"),
    (".sl", "Sapling runs the hooks and extensions of a repository's .sl/config"),
    (".jj", "jj (before 0.38) applies a repository's .jj/repo/config.toml: aliases, pager and diff tools it runs"),
    (".pijul", "Pijul runs the hooks of a repository's .pijul/config"),
    // Found by an attacker's review (host41): a darcs repository's `_darcs/prefs/defaults` sets
    // any command's flags, `posthook` and `prehook` commands among them, and `run-posthook` runs
    // them unasked (darcs.net, Using/Configuration); `prefs/prefs`' test runs on `darcs record`.
    ("_darcs", "darcs runs the pre- and post-hooks of a repository's _darcs/prefs/defaults (run-posthook: unasked) on its commands"),
    // Found by an attacker's review (hostc41; left by host41): a Fossil checkout's database
    // (`.fslckout`, `_FOSSIL_` on older ones) names the repository file its commands open, whose
    // hooks (`fossil hook`: before-commit) and per-repository settings (`editor`, `gdiff-command`,
    // `ssh-command`) Fossil runs: a checkout repointed to a repository the run made runs its
    // commands at the host's next `fossil commit`. A store as `.jj/repo`'s pointer is: kept.
    (".fslckout", FOSSIL),
    ("_FOSSIL_", FOSSIL),
    // Found by an attacker's review (host30), each planted unflagged: more coding agents whose
    // project settings run hooks' commands (and start MCP servers) when a session starts there,
    // as Claude Code's `.claude` does.
    (".letta", "Letta Code runs the hooks (SessionStart, PreToolUse, ...) of its settings.json and settings.local.json"),
    (".qoder", "Qoder CLI and the Qoder IDE run the hooks and start the MCP servers of its settings.json and settings.local.json (once the folder is trusted)"),
    // Found by an attacker's review (host31), planted unflagged at a workspace's top and above a
    // nested one: coc.nvim takes the nearest `.vim` directory up from each file opened
    // (`findUp('.vim', ...)`) as that folder's configuration, and starts the `command` of each
    // `languageserver` its `coc-settings.json` lists. Vim itself reads no `.vim` of a project's.
    (".vim", "coc.nvim starts the language servers its coc-settings.json lists (`languageserver` commands) when Vim or Neovim opens a file below it"),
    // The same review: act (GitHub workflows run locally) appends the cwd's `.actrc` to its
    // arguments (`-P ubuntu-latest=-self-hosted` runs every step on the host itself); DDEV runs
    // the `exec-host` tasks of `.ddev/config.yaml`'s hooks on the host at every `ddev start`, as
    // dev-container tools run `initializeCommand`.
    (".actrc", "act takes its flags from it: `-P <platform>=-self-hosted` runs the workflows' steps on the host, `--privileged` and `--container-daemon-socket` give their containers the host's Docker"),
    (".ddev", "DDEV runs the `exec-host` tasks of its config.yaml hooks (and its commands/host scripts) on the host, at every `ddev start`"),
    // Found by an attacker's review (host32): direnv's convention for a user's own additions is
    // `source_env_if_exists .envrc.local` in the `.envrc` (its wiki; many projects commit that
    // line), and direnv's allow list is of the `.envrc` alone: a run that wrote `.envrc.local`
    // had the host's next `direnv exec .` (a cd, the next prompt) run it (direnv 2.32.1).
    (".envrc.local", "direnv runs it when a shell enters the directory, wherever the .envrc sources it (`source_env_if_exists .envrc.local`): allowing the .envrc does not cover it"),
    // Found by an attacker's review (host33): language-server configuration of the project that
    // names commands run when an editor opens the folder, outside `.vscode`, `.zed` and `.helix`.
    // rust-analyzer reads a workspace's `rust-analyzer.toml` (its "workspace" settings:
    // `cargo.buildScripts.overrideCommand` runs as the folder opens, `check.overrideCommand` on
    // each save, `cargo.extraEnv`), whatever the editor; neoconf.nvim hands a project's
    // `.neoconf.json` to each language server Neovim starts (`lspconfig.rust_analyzer` there
    // carries the same overrides).
    ("rust-analyzer.toml", "rust-analyzer runs the commands its settings name (`cargo.buildScripts.overrideCommand` when an editor opens the folder, `check.overrideCommand` on each save)"),
    (".neoconf.json", "neoconf.nvim hands its settings to every language server Neovim starts here (rust-analyzer's `check.overrideCommand` and the like run commands)"),
    // Found by an attacker's review (host44), planted with `hostRisks: []` (bwrap, Landlock;
    // review's apply landed it): nlsp-settings.nvim hands each language server Neovim starts the
    // settings of the project's `.nlsp-settings/<server>.json` (its default `local_settings_dir`,
    // at the root its markers find), as neoconf.nvim does `.neoconf.json`'s.
    (".nlsp-settings", "nlsp-settings.nvim hands the settings of its <server>.json to each language server Neovim starts here (rust-analyzer's `cargo.buildScripts.overrideCommand` runs as the folder opens)"),
    // Found by an attacker's review (hostb38): zsh-autoenv sources the nearest `.autoenv.zsh` up
    // from a directory the shell enters (up to `/`), and `.autoenv_leave.zsh` on leaving it, once
    // the file's checksum is authorized: as direnv's `.envrc`, which no command writes either.
    (".autoenv.zsh", "zsh-autoenv sources it when a shell enters the directory or one below it (once its checksum is authorized)"),
    (".autoenv_leave.zsh", "zsh-autoenv sources it when a shell leaves the directory (once its checksum is authorized)"),
    // Found by an attacker's review (hostb40): YouCompleteMe's ycmd imports the nearest one up from
    // each file Vim opens (to `/`), unasked where `g:ycm_confirm_extra_conf` is 0 or the path is in
    // `g:ycm_extra_conf_globlist` (which trusts a path, not the code): planted at the top, in `src/`
    // and above the workspace with `hostRisks: []`.
    (".ycm_extra_conf.py", "YouCompleteMe imports it (Python) when Vim opens a file below it, unasked where g:ycm_confirm_extra_conf is 0 or its path is in g:ycm_extra_conf_globlist"),
    // The same review: localvimrc sources every `.lvimrc` from the opened file's directory up to
    // `/`, unasked for a path in `g:localvimrc_whitelist` (and commonly with `g:localvimrc_sandbox`
    // off, since `:sandbox` forbids autocommands): planted the same way with `hostRisks: []`.
    // Found by an attacker's review (hostc41; left by host41): prove reads the cwd's `.proverc`
    // (beside `~/.proverc`, unless `--norc`) on every run and takes its options as its own:
    // `--exec CMD` is the program each test runs with, `-P Plugin` loads a plugin into prove.
    // Planted with `hostRisks: []`; a command has no need to write it: kept, as `.sbtrc` is.
    (".proverc", "prove applies its options on every run here: --exec names the program each test runs with, -P and -M load Perl modules"),
    (".lvimrc", "localvimrc sources it when Vim opens a file below it (unasked where its path is whitelisted; shell commands run with g:localvimrc_sandbox off)"),
    // Found by an attacker's review (host42), planted with `hostRisks: []` (bwrap, Landlock; review's
    // apply landed it): lazygit loads "files called `.lazygit.yml` in any of the parent directories
    // of a repo" over the user's config (docs/Config.md): its `git.paging.pager` runs on every diff
    // lazygit shows (at its start, in a repository with a change), `os.edit` and `customCommands`
    // on their keys. A workspace holding repositories, and every directory above a nested one, is
    // such a parent; lazygit reads no repository's own top one, so a command has no need to write it.
    (".lazygit.yml", "lazygit applies it to every repository below it: its git.paging.pager runs on each diff shown (at start), os.edit and customCommands on their keys"),
    // Found by an attacker's review (host45), each planted with `hostRisks: []` (bwrap, Landlock;
    // review's apply landed them): direnv's stdlib `use vim` puts `.vimrc.local` (its default) in
    // DIRENV_EXTRA_VIMRC, and direnv.vim sources it when Vim opens a file below the `.envrc`
    // (autoload/direnv/extra_vimrc.vim): allowing the `.envrc` does not cover it, as `.envrc.local`.
    // nodenv-vars exports the variables of every ancestor's `.nodenv-vars` into each command
    // nodenv's shims run (bin/nodenv-vars), as rbenv-vars does `.rbenv-vars`'. Users write both.
    (".vimrc.local", "direnv.vim sources it when Vim opens a file below it, wherever the .envrc says `use vim` (its default file): allowing the .envrc does not cover it"),
    (".nodenv-vars", "nodenv-vars sets the variables it lists (NODE_OPTIONS: code node loads) for every node and npm command nodenv's shims run here and below"),
];

/// The report-only tier (`sandbox.reportedNames`): files tools run that commands legitimately
/// create and edit, so they are not kept read-only, but a run that creates, replaces or changes one
/// (in place: `detect::changed_in_place`) says so.
const REPORTED: &[(&str, &str)] = &[
    (".pre-commit-config.yaml", "pre-commit runs the hooks it lists on `git commit` (once installed)"),
    ("lefthook.yml", "lefthook runs the commands it lists on git hooks"),
    (".lefthook.yml", "lefthook runs the commands it lists on git hooks"),
    ("lefthook-local.yml", "lefthook runs the commands it lists on git hooks"),
    // lefthook reads its main and local configuration in every format, with or without the
    // leading dot (lefthook.dev, "Config file name"), and runs the scripts of its source dirs.
    ("lefthook.yaml", "lefthook runs the commands it lists on git hooks"),
    ("lefthook.json", "lefthook runs the commands it lists on git hooks"),
    ("lefthook.jsonc", "lefthook runs the commands it lists on git hooks"),
    ("lefthook.toml", "lefthook runs the commands it lists on git hooks"),
    (".lefthook.yaml", "lefthook runs the commands it lists on git hooks"),
    (".lefthook.json", "lefthook runs the commands it lists on git hooks"),
    (".lefthook.jsonc", "lefthook runs the commands it lists on git hooks"),
    (".lefthook.toml", "lefthook runs the commands it lists on git hooks"),
    ("lefthook-local.yaml", "lefthook runs the commands it lists on git hooks"),
    ("lefthook-local.json", "lefthook runs the commands it lists on git hooks"),
    ("lefthook-local.jsonc", "lefthook runs the commands it lists on git hooks"),
    ("lefthook-local.toml", "lefthook runs the commands it lists on git hooks"),
    (".lefthook-local.yml", "lefthook runs the commands it lists on git hooks"),
    (".lefthook-local.yaml", "lefthook runs the commands it lists on git hooks"),
    (".lefthook-local.json", "lefthook runs the commands it lists on git hooks"),
    (".lefthook-local.jsonc", "lefthook runs the commands it lists on git hooks"),
    (".lefthook-local.toml", "lefthook runs the commands it lists on git hooks"),
    (".lefthook", "lefthook runs the scripts in it on git hooks (its default source_dir)"),
    (".lefthook-local", "lefthook runs the scripts in it on git hooks (its default source_dir_local)"),
    ("mise.toml", "mise runs its hooks and env scripts when a shell enters the directory"),
    (".mise.toml", "mise runs its hooks and env scripts when a shell enters the directory"),
    ("mise.local.toml", "mise runs its hooks and env scripts when a shell enters the directory"),
    (".mise.local.toml", "mise runs its hooks and env scripts when a shell enters the directory"),
    (".mise", "mise runs the hooks and env scripts of its config.toml when a shell enters the directory"),
    ("mise", "mise runs the hooks and env scripts of its config.toml when a shell enters the directory"),
    (".rtx.toml", "mise (formerly rtx) runs its hooks and env scripts when a shell enters the directory"),
    (".rtx.local.toml", "mise (formerly rtx) runs its hooks and env scripts when a shell enters the directory"),
    // pnpm writes it itself (`pnpm approve-builds`, catalogs): reported, not kept.
    ("pnpm-workspace.yaml", "pnpm loads the file its `pnpmfile` names on every install and runs its hooks"),
    (".tool-versions", "asdf and mise select (and may install) the tool versions it names; asdf's `path:` runs the tools of any directory"),
    (".nvmrc", "nvm and other version managers select the Node.js it names"),
    (".node-version", "version managers select the Node.js it names"),
    (".python-version", "pyenv and uv select the Python it names; uv also takes an interpreter's path, and `uv run` runs it"),
    (".bazelversion", "bazelisk downloads and runs the Bazel it names: `<fork>/<version>` is that GitHub fork's release"),
    (".ruby-version", "rbenv and rvm select the Ruby it names"),
    (".sdkmanrc", "SDKMAN! selects the SDKs it names"),
    (".bundle", "Bundler applies its config (e.g. another Gemfile to load)"),
    // Found by an attacker's review: R reads both from the directory it starts in before the
    // home's, and sbt's launcher its options files from the project; renv writes `.Rprofile`,
    // usethis `.Renviron`, sbt templates `.jvmopts`: reported, not kept.
    (".Rprofile", "R runs it when it starts here"),
    (".Renviron", "R sets the variables it lists when it starts here (R_PROFILE_USER, R_LIBS: code R loads)"),
    (".sbtopts", "sbt's launcher applies its options when it starts here (-java-home runs that Java, -J-javaagent loads code)"),
    (".jvmopts", "sbt's launcher passes its options to the JVM when it starts here (-javaagent loads code)"),
    // Found by an attacker's review: Gemini CLI loads a trusted folder's `.env` into its own
    // environment (NODE_OPTIONS, BASH_ENV, LD_PRELOAD then reach every MCP server and shell command
    // it starts); aider and Bun load it too. Commands write it legitimately: reported, not kept.
    (".env", "coding agents (Gemini CLI, aider) and Bun load its variables into their environment: NODE_OPTIONS, BASH_ENV or LD_PRELOAD there run code in every program they start"),
    // Found by an attacker's review (tools23): Bun loads these as it loads `.env` (by NODE_ENV,
    // development by default, test under `bun test`), and hk, a hook manager like lefthook, runs
    // the steps of its configuration on git hooks (`.config/hk.pkl` is matched at depth by name).
    // Found by an attacker's review (fix33): nix-direnv's `use flake` (`use nix`) watches these and,
    // when one is newer than its cached `.direnv/*.rc` (reported, host32), builds the dev shell
    // again on the host and evals it, its `shellHook` included, in the host's shell at the next
    // prompt; the .rc is then the host's own writing. Commands edit them: reported, not kept.
    ("flake.nix", NIX_SHELL),
    ("flake.lock", NIX_SHELL),
    ("shell.nix", NIX_SHELL),
    (".env.local", ENV_MODE),
    (".env.development", ENV_MODE),
    (".env.test", ENV_MODE),
    (".env.production", ENV_MODE),
    (".env.development.local", ENV_MODE),
    (".env.test.local", ENV_MODE),
    (".env.production.local", ENV_MODE),
    // Found by an attacker's review (rfix34): yarn berry 4 loads `.env.yarn` (the default of its
    // `injectEnvironmentFiles`, `.env.yarn?`) into the environment of every script it runs, as
    // Bun loads `.env`; users write it by hand and scripts may: reported, not kept.
    (".env.yarn", "yarn (berry 4) injects its variables into every script it runs: NODE_OPTIONS there runs code in each"),
    ("hk.pkl", "hk runs the steps it lists on git hooks"),
    ("hk.local.pkl", "hk runs the steps it lists on git hooks (in place of hk.pkl)"),
    // Found by an attacker's review (host25): hook managers beside pre-commit and lefthook
    // (lint-staged's and husky 4's configurations in each format, rusty-hook, overcommit), and
    // language servers' and build servers' project files naming programs they start; tools write
    // most of them (sbt and mill write `.bsp`, clojure-lsp its `.lsp/.cache`): reported, not kept.
    (".lintstagedrc", LINT_STAGED),
    (".lintstagedrc.json", LINT_STAGED),
    (".lintstagedrc.yaml", LINT_STAGED),
    (".lintstagedrc.yml", LINT_STAGED),
    (".lintstagedrc.js", LINT_STAGED),
    (".lintstagedrc.mjs", LINT_STAGED),
    (".lintstagedrc.cjs", LINT_STAGED),
    (".lintstagedrc.ts", LINT_STAGED),
    ("lint-staged.config.js", LINT_STAGED),
    ("lint-staged.config.mjs", LINT_STAGED),
    ("lint-staged.config.cjs", LINT_STAGED),
    ("lint-staged.config.ts", LINT_STAGED),
    (".huskyrc", HUSKY4),
    (".huskyrc.json", HUSKY4),
    (".huskyrc.yaml", HUSKY4),
    (".huskyrc.yml", HUSKY4),
    (".huskyrc.js", HUSKY4),
    ("husky.config.js", HUSKY4),
    (".rusty-hook.toml", "rusty-hook runs the commands it lists on git hooks"),
    (".overcommit.yml", "overcommit runs the hooks it lists on git hooks"),
    ("hie.yaml", "the Haskell language server runs its cradle's shell command when a file is opened"),
    (".lsp", "clojure-lsp runs the classpath command its config.edn names when it starts"),
    (".bsp", "IDEs and Metals start the build server each connection file's argv names"),
    (".merlin", "Merlin runs the preprocessors it names (-pp) when a file is opened"),
    (".luarc.json", "the Lua language server runs the plugin its runtime.plugin names"),
    // Found by an attacker's review (host36): clangd reads every ancestor's `.clangd` of a file it
    // opens, and runs its `CompileFlags.Compiler` to learn the include paths when the user's own
    // `--query-driver` glob matches (often `**`); committed and written by tools: reported.
    (".clangd", "clangd runs the compiler driver its CompileFlags name (Compiler) when a file below is opened, wherever the user's --query-driver glob matches it"),
    // Found by an attacker's review (host31), each planted unflagged. Ansible takes the cwd's
    // `ansible.cfg` on every command (its documentation refuses one in a world-writable cwd for
    // this reason); PDM runs the interpreter `.pdm-python` names on every later command, as uv does
    // a path in `.python-version`. `ansible-config init` and `pdm use` write them: reported.
    ("ansible.cfg", "every ansible command here applies it: an executable `vault_password_file` or `inventory` is run, `callback_plugins`, `vars_plugins` and the other plugin paths load Python"),
    (".pdm-python", "PDM runs the interpreter it names on every pdm command here (`pdm run`, `pdm install`)"),
    // Found by an attacker's review (fix31) of host30's `.github/lsp.json` pattern: Copilot CLI's
    // project configuration of language servers is also `lsp.json` at the repository's root
    // (GitHub's lsp-setup skill and the CLI's reference: "Repo-level: `lsp.json` (repo root) or
    // `.github/lsp.json`"). A name of the top, not a pattern: a repository's own (the skill writes
    // it), so reported, not kept, as `.github/lsp.json` is.
    ("lsp.json", "GitHub Copilot CLI starts the command of each language server it lists, in the background, when a session starts in the repository"),
    // Found by an attacker's review (hostb36): git-lfs reads the working tree's `.lfsconfig` at a
    // repository's top on every git-lfs command and its pre-push hook; its safelist (lfs.url,
    // lfs.pushurl, remote.<name>.lfsurl) runs no program but names where the host's next `git push`
    // uploads the LFS objects, past the run's network policy. Committed and written by commands.
    (".lfsconfig", "git-lfs sends the repository's LFS objects to the server its lfs.url, lfs.pushurl or remote.<name>.lfsurl names on the host's next git push (and fetches from it on checkout)"),
    // Found by an attacker's review (hostb38), each planted unflagged: what a shell's directory
    // hook runs on `cd`. proto's activation (`eval "$(proto activate zsh)"`) evals, at every change
    // of directory, the `[env]` variables (and `[env] file`'s dotenv) and `[shell] aliases` of
    // `.prototools` in the cwd and every parent, with no trust step (crates/cli/src/commands/
    // activate.rs): `PS1 = "$(./x.sh)"` or an alias of `ls` runs at the next prompt; `proto pin`
    // writes it. shadowenv runs `.shadowenv.d/*.lisp` on entering a directory whose path it
    // trusts (a signature of the path, not of the code); Shopify's `dev up` writes them.
    // autoenv sources `.env.leave` on leaving (its `.env` is reported already).
    (".prototools", "proto's shell activation exports its [env] variables and [shell] aliases into the shell at every cd here, unasked (an alias or PS1 runs at the next prompt); its [plugins] are loaded by every proto command"),
    (".shadowenv.d", "shadowenv runs its *.lisp programs when a shell enters the directory, once the directory is trusted (the trust is of its path, not of the code)"),
    (".env.leave", "autoenv sources it when a shell leaves the directory (AUTOENV_ENABLE_LEAVE), once its checksum is authorized"),
    // Found by an attacker's review (hostb39), each planted unflagged: pkgx's `dev` shellcode
    // evals, at every cd into (or below) a directory the user once ran `dev` in, what `dev`
    // prints: the `env` of the directory's pkgx file (pkgxdev/dev sniff.ts), with no trust step
    // of the file. `$(` is refused there, but `PROMPT_COMMAND: ./x.sh` or a backquoted `PS1` run
    // at the next prompt. The project writes it (its dependencies): reported.
    ("pkgx.yaml", PKGX_DEV),
    ("pkgx.yml", PKGX_DEV),
    (".pkgx.yaml", PKGX_DEV),
    (".pkgx.yml", PKGX_DEV),
    // Found by an attacker's review (host40), each planted unflagged: the other dev environments a
    // directory hook builds and evals on `cd`, as nix-direnv's flake.nix (fix33). devenv's `use
    // devenv` watches these and, when one changes, builds the shell again and evals it (its
    // `enterShell` included) at the next prompt; devbox's `.envrc` runs `devbox shellenv
    // --init-hook` (its `init_hook`, `env`) on each change; a direnv-activated Flox environment
    // sources `.flox/env/manifest.toml`'s `[hook] on-activate` and `[profile]`. Hermit's
    // `bin/hermit.hcl` and `bin/activate-hermit` are patterns (`name_patterns`). The projects
    // write them (`devbox add`, `devenv init`, `flox install`): reported.
    ("devenv.nix", DEVENV),
    ("devenv.yaml", DEVENV),
    ("devenv.lock", DEVENV),
    ("devenv.local.nix", DEVENV),
    ("devenv.local.yaml", DEVENV),
    ("devbox.json", DEVBOX),
    ("devbox.lock", DEVBOX),
    // Found by an attacker's review (hostc41; left by host41), each planted with `hostRisks: []`:
    // Eclipse runs the builders of a project's `.project` buildSpec on every build (auto-build is
    // on by default, and an import builds); an external tool builder's program and arguments
    // live in the `.externalToolBuilders/*.launch` its `LaunchConfigHandle` names (or inline in
    // `.project`). Kate's project plugin loads the `.kateproject` of an opened file's directory
    // or a parent: its `lspclient` section defines language servers (their `command`), its
    // `build` targets run on the build action. The IDEs write them (m2e, Buildship): reported.
    (".project", ECLIPSE_BUILD),
    (".externalToolBuilders", ECLIPSE_BUILD),
    (".kateproject", "Kate loads it when a file below it is opened: the language servers its lspclient section defines start (their command runs), its build targets run on the build action"),
    (".flox", "a Flox environment: `flox activate` (a direnv .envrc's, or the user's) sources its manifest's [hook] on-activate and [profile] scripts in the host's shell"),
    // Found by an attacker's review (host42), each planted with `hostRisks: []` (bwrap, Landlock;
    // review's apply landed them): `opam env` (at every prompt through opam's shell hook, or by
    // hand) and `opam exec` select the local switch `_opam` of the cwd or the nearest parent whose
    // `.opam-switch/switch-config` names the user's root (OpamStateConfig.local_switch_exists),
    // export its `.opam-switch/environment` as written (OpamEnv.get_opam_raw_updates) and put its
    // `bin` first on PATH. `opam switch create .` writes it: reported, as a conda environment's
    // activation is (kept above a workspace: `upward`). gitlint's commit-msg hook reads the cwd's
    // `.gitlint` on every `git commit`: its `extra-path` is Python it imports (as lint-staged's).
    ("_opam", "an opam local switch: `opam env` (at every prompt through opam's shell hook) and `opam exec` here export its .opam-switch/environment's variables and put its bin first on PATH"),
    (".gitlint", "gitlint (its commit-msg hook, on every git commit) applies it: `extra-path` names Python rules it imports"),
    // Found by an attacker's review (host43), each planted with `hostRisks: []` (bwrap, Landlock;
    // review's apply landed them): the hook managers beside pre-commit and lefthook. prek reads
    // `prek.toml` first, then `.pre-commit-config.yaml`, then `.pre-commit-config.yml`, and the hook
    // `prek install` writes names none (crates/prek/src/cli/install.rs: "let prek find it"), so a
    // `prek.toml` silently takes the reported YAML's place. CaptainHook's hooks (its Composer plugin
    // installs them) run the actions of `captainhook.json`; GrumPHP's its tasks from the first of
    // its four names (GuessedPathsLocator). The tools write them: reported, as lefthook's are.
    ("prek.toml", PREK),
    (".pre-commit-config.yml", PREK),
    ("captainhook.json", "CaptainHook's git hooks (installed by its Composer plugin on composer install) run the action commands it lists"),
    ("grumphp.yml", GRUMPHP),
    ("grumphp.yaml", GRUMPHP),
    ("grumphp.yml.dist", GRUMPHP),
    ("grumphp.yaml.dist", GRUMPHP),
    // The same review (host43), planted with `hostRisks: []`: the Lua language server takes
    // `.luarc.jsonc` where there is no `.luarc.json` (script/provider/provider.lua), its
    // `runtime.plugin` as well.
    (".luarc.jsonc", "the Lua language server (where there is no .luarc.json) runs the plugin its runtime.plugin names"),
    // Found by an attacker's review (host44), each planted with `hostRisks: []` (bwrap, Landlock;
    // review's apply landed them): what a language server or a shell hook reads of a workspace by
    // itself and that names what it runs. sourcekit-lsp takes a folder's `buildServer.json` where
    // `.bsp` (reported) holds no `*.json` (ExternalBuildSystemAdapter.getConfigPath) and starts its
    // `argv` as the folder opens; its `.sourcekit-lsp/config.json` gives the clangd it starts
    // `clangdOptions` (`--query-driver=**`) and sourcekitd compiler flags (`-load-plugin-executable`).
    // OmniSharp loads a workspace's `omnisharp.json` as it starts (Startup: the target directory's):
    // the assemblies of `RoslynExtensionsOptions` and `Plugins` `LocationPaths`, the `dotnet` of
    // `DotNetCli`'s. nix-direnv's `use flake` watches `devshell.toml` beside `flake.nix` (direnvrc:
    // files_to_watch). Tools and people write them (xcode-build-server config): reported.
    ("buildServer.json", "sourcekit-lsp starts the build server its argv names when the folder opens (where .bsp holds no connection file)"),
    (".sourcekit-lsp", "sourcekit-lsp applies its config.json when the folder opens: clangdOptions reach the clangd it starts (--query-driver runs compilers), compiler flags reach sourcekitd (-load-plugin-executable runs a macro plugin)"),
    ("omnisharp.json", "OmniSharp applies it as it starts here: it loads the assemblies of RoslynExtensionsOptions' and Plugins' LocationPaths and runs the dotnet of DotNetCli's"),
    ("devshell.toml", "nix-direnv (`use flake` in an allowed .envrc) watches it beside flake.nix: numtide devshell's shell is built again when it changes and evaluated, its startup commands included, in the host's shell at the next prompt"),
    // The same review (host44): terraform-ls and tofu-ls run `terraform providers schema -json` in
    // each root module they open (jobs.ObtainSchema, again when the lock file changes), and
    // Terraform starts each provider binary of `.terraform/providers` whose hash the lock file
    // (the run's too) lists. `terraform init` writes it: reported.
    (".terraform", "terraform-ls (the Terraform extension's language server) and tofu-ls have Terraform start the provider binaries installed in it (terraform providers schema) when the module opens and when .terraform.lock.hcl changes"),
    // The same review (host44): `pixi shell-hook` (pixi's direnv integration, at each load), `pixi
    // run` and `pixi shell` source the scripts of `pixi.toml`'s `[activation] scripts`
    // (get_activator, from the workspace's root) and export its `[activation.env]`, as devbox runs
    // `devbox.json`'s `init_hook`. `pixi add` writes it: reported.
    ("pixi.toml", "pixi shell-hook (a direnv .envrc's, at each load), pixi run and pixi shell source the scripts its [activation] scripts names and export its [activation.env] in the host's shell"),
    // Found by an attacker's review (host45), each planted with `hostRisks: []` (bwrap, Landlock;
    // review's apply landed them). direnv's stdlib `use nix` runs `nix-shell` (its shellHook) at
    // every load on `default.nix` where there is no `shell.nix`, and watches both (nix-direnv's
    // `use nix` builds from and watches it too, as it does `shell.nix`, reported since fix33).
    // Its `use guix` evals `guix shell --search-paths`, which loads (runs) the Guile of the nearest
    // `manifest.scm` or `guix.scm` in a directory the user authorized by its path
    // (guix/scripts/shell.scm, auto-detect-manifest), or with `channels.scm` has `guix
    // time-machine` build and run the Guix those channels name; it watches all three. jEnv's shims
    // and its export plugin's prompt hook take the nearest `.java-version` (`.jenv-version`) and
    // join its word to `$JENV_ROOT/versions/` unchecked (`../` leads into the workspace; goenv and
    // pyenv refuse such a word since CVE-2022-35861), and pass `.java-options`' words to every java
    // command. The projects commit them (`jenv local`, `guix shell --export-manifest`): reported.
    ("default.nix", "direnv's `use nix` runs nix-shell on it (its shellHook) in the host's shell at every load where there is no shell.nix; nix-direnv's builds it again when it changes and evals it at the next prompt"),
    ("manifest.scm", GUIX),
    ("guix.scm", GUIX),
    ("channels.scm", "direnv's `use guix` (an allowed .envrc's) has guix time-machine build the Guix of the channels it names and run it, at every load where it is present"),
    (".java-version", JENV),
    (".jenv-version", JENV),
    (".java-options", "jEnv passes its words to every java command its shims run here and below (-javaagent loads code), and to Maven's and Gradle's through its plugins"),
    // The same review (host45): tfenv's `terraform` shim (lib/tfenv-exec.sh) runs
    // `$TFENV_CONFIG_DIR/versions/<version>/terraform` for the nearest `.terraform-version`'s word,
    // unchecked, and tofuenv's `tofu` the same for `.opentofu-version`; terraform-ls runs terraform
    // by itself when the module opens. `tfenv pin` writes it: reported.
    (".terraform-version", TFENV),
    (".opentofu-version", TFENV),
    // (`upward::ENV_VERSION_FILES`, the *env version managers' files, are reported too.)
];

/// What plenv, phpenv, luaenv, swiftenv, scalaenv, exenv and crenv do with their version files
/// (`upward::ENV_VERSION_FILES`), in a root.
const ENV_VERSION: &str = "its version manager's shims (plenv, phpenv, luaenv, swiftenv, scalaenv, exenv, crenv, goenv before 2.2.29) run the interpreter of the version it names, joined to their versions directory unchecked (a ../ path leads into the workspace), on every command here and below";

/// What tfenv and tofuenv do with their version files (`REPORTED`).
const TFENV: &str = "tfenv's terraform (tofuenv's tofu) runs the binary of the version it names, joined to its versions directory unchecked (a ../ path leads into the workspace), on every command here and below, those terraform-ls runs when the module opens too";

/// What Guix does with the manifests `guix shell` finds by itself (`REPORTED`).
const GUIX: &str = "guix shell with no packages (direnv's `use guix` at every load) loads it, Guile code run on the host, where the user authorized its directory (by path, not content)";
/// What jEnv does with its version files (`REPORTED`).
const JENV: &str = "jEnv's shims run the java (and the commands of its plugins) of the version it names, joined to its versions directory unchecked (a ../ path leads into the workspace), and its export plugin sets JAVA_HOME there at each prompt";

/// What prek does with its configuration (`REPORTED`).
const PREK: &str = "prek (a pre-commit in Rust) runs the hooks it lists on git hooks once installed: its hook finds prek.toml before .pre-commit-config.yaml and .pre-commit-config.yml";
/// What GrumPHP does with its configuration (`REPORTED`).
const GRUMPHP: &str = "GrumPHP's git hooks (installed by its Composer plugin) run the tasks it lists on every commit (`shell` runs scripts)";

/// What Fossil does with a checkout's database (`DEFAULTS`).
const FOSSIL: &str = "Fossil opens the repository this checkout database names on every command here, and runs its hooks (before-commit) and the programs of its settings (editor, gdiff-command, ssh-command)";
/// What Eclipse does with a project's builders (`REPORTED`).
const ECLIPSE_BUILD: &str = "Eclipse runs the builders of the project's .project buildSpec on every build (auto-build, and the build of an import): an external tool builder runs the program its .externalToolBuilders launch file (or .project) names";
/// What devenv's direnv integration does with its files (`REPORTED`).
const DEVENV: &str = "devenv's `use devenv` (an allowed .envrc's) builds the shell again when it changes and evals it, its enterShell included, in the host's shell at the next prompt";
/// What devbox's direnv integration does with its files (`REPORTED`).
const DEVBOX: &str = "devbox's .envrc (`devbox generate direnv`) runs `devbox shellenv --init-hook` when it changes: its init_hook runs and its env is exported in the host's shell at the next prompt";

/// What pkgx's `dev` does with its files (`REPORTED`).
const PKGX_DEV: &str = "pkgx's dev shellcode exports its env into the shell at every cd here once the directory was activated with `dev` (PROMPT_COMMAND or a PS1 there runs at the next prompt)";

const LINT_STAGED: &str = "lint-staged runs the commands it lists on commit (through a git hook)";
const HUSKY4: &str = "husky 4 runs the commands it lists on git hooks";

const ENV_MODE: &str = "Bun loads its variables as it loads .env: NODE_OPTIONS or LD_PRELOAD there run code in every program it starts";
/// What nix-direnv does with the files its dev shell is built from (`REPORTED`).
const NIX_SHELL: &str = "nix-direnv (`use flake`, `use nix` in an allowed .envrc) builds the dev shell again when it changes and evals it, its shellHook included, in the host's shell here at the next prompt";

/// The default `reportedNames`.
pub fn reported_defaults() -> Vec<String> {
    REPORTED.iter().map(|(n, _)| n.to_string()).chain(super::upward::ENV_VERSION_FILES.map(String::from)).collect()
}

/// The default `protectedNames`.
pub fn defaults() -> Vec<String> {
    DEFAULTS.iter().map(|(n, _)| n.to_string()).collect()
}

/// What a protected (or reported) name can make the host do (for `hostRisks` details).
pub fn what_it_does(name: &str) -> &'static str {
    DEFAULTS
        .iter()
        .chain(REPORTED)
        .find(|(n, _)| *n == name)
        .map(|(_, what)| *what)
        .or_else(|| super::upward::ENV_VERSION_FILES.contains(&name).then_some(ENV_VERSION))
        .unwrap_or("it is listed in sandbox.protectedNames: a host tool may read it and run what it says")
}

/// What the entry at `path` can make the host do: a pattern's (`name_patterns`) or its name's.
/// Asked of entries the walk listed, where a `.github` is one only as a symlink (`of_link`).
pub fn what_at(path: &std::path::Path) -> &'static str {
    let name = path.file_name().unwrap_or_default();
    let pattern = super::name_patterns::of_path(path).or_else(|| super::name_patterns::of_link(name));
    pattern.unwrap_or_else(|| what_it_does(&name.to_string_lossy()))
}

/// The directories among the defaults (and `.git`): their placeholder is an empty directory, so
/// that reading a path inside reports it missing, as it would be, and git passes over an empty
/// `.git` directory to the repository above (an empty `.git` file would stop it).
const DIRECTORIES: &[&str] = &[
    ".git", ".vscode", ".idea", ".devcontainer", ".claude", ".codex", ".agents", ".cursor", ".gemini", ".continue", ".windsurf",
    ".roo", ".amazonq", ".opencode", ".zed", ".helix", ".cargo", ".mvn", ".hg", ".qwen", ".kiro", ".kilocode", ".junie", ".factory",
    ".clinerules", ".amp", ".iflow", ".codebuddy", ".pi", ".tabnine", ".trae", ".vibe", ".grok", ".augment", ".openhands", ".theia",
    ".sl", ".jj", ".pijul", ".letta", ".qoder", ".vim", ".ddev", "_darcs", ".nlsp-settings",
];

/// What the placeholder of a missing protected name is. Files by convention get an empty file
/// (reading it gives nothing, writing it `Read-only file system`, and creating one on the host
/// costs a fraction of a directory: no data block to allocate and discard). A name of the user's
/// list is a file when it has an extension (`CLAUDE.md`, `.mcp.json`) or ends in `rc`/`profile`,
/// else a directory. Either kind blocks creating a file and a directory of that name alike.
pub fn placeholder_kind(name: &str) -> PlaceholderKind {
    // A directory by nature, but a file placeholder (a symlink that leads nowhere on the host,
    // covered inside by an empty read-only file: `require` passes over either): an empty
    // `node_modules` directory made `npm` take its directory for the project's root, and an
    // `npm install` in a folder below `/tmp` with no `package.json` installed into the placeholder
    // at `/tmp`'s top (measured, plan36: npm 11.19.1).
    if name == "node_modules" {
        return PlaceholderKind::File;
    }
    // A file whose shape says directory (no extension, no rc ending), kept above a workspace: proto
    // reads any `.prototools` that exists and fails on a directory, so an empty-directory
    // placeholder at `/tmp`'s top would fail its activation at every cd below `/tmp`.
    if name == ".prototools" {
        return PlaceholderKind::File;
    }
    if let Some(kind) = known_kinds().get(name) {
        return *kind;
    }
    let stem = name.trim_start_matches('.');
    if stem.contains('.') || stem.ends_with("rc") || stem.ends_with("profile") {
        PlaceholderKind::File
    } else {
        PlaceholderKind::Dir
    }
}

/// The kinds of `DIRECTORIES` and `DEFAULTS`, made once: asked for each of the ~600 names held at
/// a workspace-write run's tops, the two lists (about 240 names) were searched in turn each time
/// (about 0.15 ms of the JavaScript thread a run).
///
/// The upward-searched names first, so that the two lists decide a name they share: each is a file
/// but for `upward::DIRECTORIES`, whatever its shape (hostb38: `Gemfile`, `Rakefile`, `justfile`,
/// `.env` were empty-directory placeholders, and a plan's at `/tmp`'s top, left on the host until
/// the next run, made Bundler, rake or just fail in every folder below it).
fn known_kinds() -> &'static std::collections::HashMap<String, PlaceholderKind> {
    static KINDS: std::sync::OnceLock<std::collections::HashMap<String, PlaceholderKind>> = std::sync::OnceLock::new();
    KINDS.get_or_init(|| {
        let upward = super::upward::names().into_iter().map(|n| {
            let kind = if super::upward::DIRECTORIES.contains(&n.as_str()) { PlaceholderKind::Dir } else { PlaceholderKind::File };
            (n, kind)
        });
        // The directories last: a name of both lists is a directory, as before.
        let files = DEFAULTS.iter().map(|(n, _)| (n.to_string(), PlaceholderKind::File));
        upward.chain(files).chain(DIRECTORIES.iter().map(|n| (n.to_string(), PlaceholderKind::Dir))).collect()
    })
}

/// Longest name accepted (the usual `NAME_MAX`).
const MAX_LEN: usize = 255;

/// Validate the user's `protectedNames` (`None`/null = the defaults; `[]` disables).
pub fn parse(value: Option<&Value>) -> Result<Vec<String>> {
    parse_list(value, OPTION, defaults)
}

/// Validate the user's `reportedNames` (the same rules; `None`/null = the defaults).
pub fn parse_reported(value: Option<&Value>) -> Result<Vec<String>> {
    parse_list(value, REPORTED_OPTION, reported_defaults)
}

fn parse_list(value: Option<&Value>, option_name: &str, defaults: fn() -> Vec<String>) -> Result<Vec<String>> {
    let Some(value) = value.filter(|v| !v.is_null()) else { return Ok(defaults()) };
    let items = value
        .as_array()
        .ok_or_else(|| SandboxError::invalid(option_name, "must be an array of file names (e.g. [\".envrc\"]); [] disables it"))?;
    let mut names: Vec<String> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let option = format!("{option_name}[{i}]");
        let name = item.as_str().ok_or_else(|| SandboxError::invalid(&option, "must be a string"))?;
        check(&option, name)?;
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    Ok(names)
}

/// One file name: not a path, not `.`/`..`, not `.git` (which `protectGit` governs), and nothing a
/// Seatbelt regex literal could not hold verbatim (quotes, backslashes, control characters).
fn check(option: &str, name: &str) -> Result<()> {
    let problem = if name.is_empty() {
        "must not be empty"
    } else if name.contains('/') {
        "must be a single file name, not a path (it is matched at the top of each writable root and repository)"
    } else if name.chars().any(|c| c.is_control() || c == '"' || c == '\\') {
        "must not contain control characters, quotes or backslashes"
    } else if name == "." || name == ".." {
        "must be a file name, not `.` or `..`"
    } else if name == ".git" {
        "`.git` is governed by sandbox.protectGit"
    } else if name.len() > MAX_LEN {
        "is longer than 255 bytes"
    } else {
        return Ok(());
    };
    Err(SandboxError::invalid(option, format!("{name:?} {problem}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> String {
        let e = parse(Some(&v)).unwrap_err();
        assert_eq!(e.code.as_str(), "ERR_SANDBOX_INVALID_OPTIONS");
        e.message
    }

    #[test]
    fn defaults_and_empty() {
        assert_eq!(parse(None).unwrap().len(), DEFAULTS.len());
        assert!(DEFAULTS.len() >= 40 && parse(None).unwrap()[..12] == ["\u{2e}gitmodules", ".gitconfig", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".envrc", ".mcp.json", ".vscode", ".idea", ".devcontainer"], "the contract's twelve first");
        assert!(reported_defaults().iter().all(|n| !defaults().contains(n)), "one tier per name");
        assert!(reported_defaults().iter().all(|n| !what_it_does(n).contains("protectedNames")));
        assert!(parse_reported(Some(&json!([".env"]))).is_ok());
        assert!(parse_reported(Some(&json!(["a/b"]))).unwrap_err().message.contains("reportedNames[0]"));
        assert_eq!(parse(Some(&Value::Null)).unwrap(), defaults());
        assert_eq!(parse(Some(&json!([]))).unwrap(), Vec::<String>::new());
        assert_eq!(parse(Some(&json!([".envrc", ".claude", ".envrc"]))).unwrap(), vec![".envrc", ".claude"]);
        assert!(defaults().iter().all(|n| !what_it_does(n).contains("protectedNames")));
    }

    /// An attacker's review: host tools read the same settings from names beside those listed
    /// (Vim's `.vimrc` before `.exrc`, `.devcontainer.json`, `opencode.jsonc`, lefthook's other
    /// formats, mise's local and legacy names, `pnpm-workspace.yaml`'s `pnpmfile:`), and a run
    /// planted them unflagged. Each tool's names, all of them, in its tier.
    #[test]
    fn every_name_a_tool_reads_is_in_its_tools_tier() {
        let (protected, reported) = (defaults(), reported_defaults());
        let tools: [(&str, Vec<String>, &Vec<String>); 50] = [
            // zsh loads FILE.zwc (compiled) in place of FILE when it is newer (zshmisc, "Autoloading
            // Functions" and zcompile): the compiled form is as much a startup file.
            ("zsh", [".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout"].into_iter().flat_map(|n| [n.to_string(), format!("{n}.zwc")]).collect(), &protected),
            ("vim", [".exrc", "_exrc", ".vimrc", "_vimrc", ".gvimrc", "_gvimrc"].map(String::from).to_vec(), &protected),
            ("dev containers", [".devcontainer", ".devcontainer.json"].map(String::from).to_vec(), &protected),
            ("opencode", ["opencode.json", "opencode.jsonc", ".opencode"].map(String::from).to_vec(), &protected),
            ("irb", [".irbrc", "irb.rc", "_irbrc", "$irbrc"].map(String::from).to_vec(), &protected),
            ("lefthook", lefthook_names(), &reported),
            ("mise", ["mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", ".mise", "mise", ".rtx.toml", ".rtx.local.toml"].map(String::from).to_vec(), &reported),
            ("pnpm", ["pnpm-workspace.yaml"].map(String::from).to_vec(), &reported),
            // A later review: debuggers' and REPLs' rc files read from the directory they start in
            // (`.perldb` was planted and `perl -d` ran it), and R's and sbt's, which tools write.
            ("debuggers and REPLs", [".pdbrc", ".irbrc", ".pryrc", ".gdbinit", ".lldbinit", ".perldb", ".ghci", ".ocamlinit", ".octaverc", ".erlang"].map(String::from).to_vec(), &protected),
            ("R and sbt", [".Rprofile", ".Renviron", ".sbtopts", ".jvmopts"].map(String::from).to_vec(), &reported),
            // The seventeenth session's review: Qwen Code started a planted MCP server from
            // `.qwen`, plain `iex` ran `.iex.exs`, Gemini CLI's MCP servers took NODE_OPTIONS from
            // `.env`; and the other agents whose project settings start programs.
            ("coding agents", [".qwen", ".kiro", ".kilocode", ".junie", ".factory", "crush.json", ".crush.json"].map(String::from).to_vec(), &protected),
            ("iex and byebug", [".iex.exs", ".byebugrc"].map(String::from).to_vec(), &protected),
            ("tools that load .env", [".env"].map(String::from).to_vec(), &reported),
            // tools23: Bun's per-mode env files, hk's configuration, and the agents' and editors'
            // counterparts of listed names (Cline, Amp, lazy.nvim, Emacs).
            ("yarn env", [".env.yarn"].map(String::from).to_vec(), &reported),
            ("bun", ["", ".local"].iter().flat_map(|l| ["development", "test", "production"].map(|m| format!(".env.{m}{l}"))).chain([".env.local".to_string()]).collect(), &reported),
            ("hk", ["hk.pkl", "hk.local.pkl"].map(String::from).to_vec(), &reported),
            ("agents and editors", [".clinerules", ".amp", ".lazy.lua", ".dir-locals.el", ".dir-locals-2.el"].map(String::from).to_vec(), &protected),
            // host25: more agents, Ruby's per-directory files, Theia, Pants, sbt, version control;
            // hook managers' and language servers' files, reported.
            ("host25 kept", [".iflow", ".codebuddy", ".pi", ".continuerc.json", ".tabnine", ".trae", ".vibe", ".grok", ".augment", ".openhands", ".theia", ".rvmrc", ".versions.conf", ".rbenv-vars", ".pants.bootstrap", ".sbtrc", ".sl", ".jj", ".pijul"].map(String::from).to_vec(), &protected),
            ("host25 reported", [".lintstagedrc", ".lintstagedrc.json", ".lintstagedrc.yml", "lint-staged.config.js", ".huskyrc", ".huskyrc.js", "husky.config.js", ".rusty-hook.toml", ".overcommit.yml", "hie.yaml", ".lsp", ".bsp", ".merlin", ".luarc.json"].map(String::from).to_vec(), &reported),
            // fix31: Copilot CLI's root-level language servers' configuration.
            ("copilot cli", ["lsp.json"].map(String::from).to_vec(), &reported),
            // hostb38: what shells' directory hooks run on cd.
            ("zsh-autoenv", [".autoenv.zsh", ".autoenv_leave.zsh"].map(String::from).to_vec(), &protected),
            ("proto, shadowenv, autoenv", [".prototools", ".shadowenv.d", ".env.leave"].map(String::from).to_vec(), &reported),
            // hostb39: what pkgx's dev exports on cd.
            ("pkgx dev", ["pkgx.yaml", "pkgx.yml", ".pkgx.yaml", ".pkgx.yml"].map(String::from).to_vec(), &reported),
            // host40: the dev environments direnv builds and evals on cd.
            ("devenv, devbox, flox", ["devenv.nix", "devenv.yaml", "devenv.lock", "devenv.local.nix", "devenv.local.yaml", "devbox.json", "devbox.lock", ".flox"].map(String::from).to_vec(), &reported),
            // hostb40: what Vim's YouCompleteMe imports when a file below it is opened.
            ("youcompleteme", [".ycm_extra_conf.py"].map(String::from).to_vec(), &protected),
            ("localvimrc", [".lvimrc"].map(String::from).to_vec(), &protected),
            // hostc41: prove's run-control file; Eclipse's and Kate's project files.
            ("prove", [".proverc"].map(String::from).to_vec(), &protected),
            ("fossil", [".fslckout", "_FOSSIL_"].map(String::from).to_vec(), &protected),
            ("eclipse", [".project", ".externalToolBuilders"].map(String::from).to_vec(), &reported),
            ("kate", [".kateproject"].map(String::from).to_vec(), &reported),
            // host41: darcs' repository directory (its prefs' posthooks).
            ("darcs", ["_darcs"].map(String::from).to_vec(), &protected),
            // host42: lazygit's configuration of the repositories below a directory.
            ("lazygit", [".lazygit.yml"].map(String::from).to_vec(), &protected),
            ("opam", ["_opam"].map(String::from).to_vec(), &reported),
            ("gitlint", [".gitlint"].map(String::from).to_vec(), &reported),
            // host43: hook managers beside pre-commit and lefthook.
            ("prek", ["prek.toml", ".pre-commit-config.yaml", ".pre-commit-config.yml"].map(String::from).to_vec(), &reported),
            ("CaptainHook", ["captainhook.json"].map(String::from).to_vec(), &reported),
            ("GrumPHP", ["grumphp.yml", "grumphp.yaml", "grumphp.yml.dist", "grumphp.yaml.dist"].map(String::from).to_vec(), &reported),
            ("LuaLS", [".luarc.json", ".luarc.jsonc"].map(String::from).to_vec(), &reported),
            // host44: sourcekit-lsp's and OmniSharp's workspace configuration, numtide devshell's.
            ("sourcekit-lsp", [".bsp", "buildServer.json", ".sourcekit-lsp"].map(String::from).to_vec(), &reported),
            ("OmniSharp", ["omnisharp.json"].map(String::from).to_vec(), &reported),
            ("devshell", ["flake.nix", "flake.lock", "devshell.toml"].map(String::from).to_vec(), &reported),
            ("nlsp-settings", [".neoconf.json", ".nlsp-settings"].map(String::from).to_vec(), &protected),
            ("terraform-ls", [".terraform"].map(String::from).to_vec(), &reported),
            ("pixi", ["pixi.toml"].map(String::from).to_vec(), &reported),
            // host45: what direnv's stdlib `use nix`, `use guix` and `use vim` run, jEnv's and
            // nodenv-vars' files.
            ("direnv use nix", ["shell.nix", "default.nix"].map(String::from).to_vec(), &reported),
            ("direnv use guix", ["manifest.scm", "guix.scm", "channels.scm"].map(String::from).to_vec(), &reported),
            ("jEnv", [".java-version", ".jenv-version", ".java-options"].map(String::from).to_vec(), &reported),
            ("tfenv, tofuenv", [".terraform-version", ".opentofu-version"].map(String::from).to_vec(), &reported),
            ("plenv, phpenv, luaenv, swiftenv, scalaenv, exenv, crenv, goenv", [".go-version", ".perl-version", ".plenv-version", ".php-version", ".lua-version", ".luaenv-version", ".swift-version", ".scala-version", ".exenv-version", ".crystal-version", ".crenv-version"].map(String::from).to_vec(), &reported),
            ("direnv use vim, nodenv-vars", [".vimrc.local", ".nodenv-vars"].map(String::from).to_vec(), &protected),
        ];
        for (tool, names, tier) in tools {
            for n in names {
                assert!(tier.contains(&n), "{tool}: {n} in its tier");
                assert!(!what_it_does(&n).contains("protectedNames"), "{tool}: {n} says what it does");
            }
        }
        assert_eq!(placeholder_kind(".opencode"), PlaceholderKind::Dir);
        for dir in [".qwen", ".kiro", ".kilocode", ".junie", ".factory", ".clinerules", ".amp", ".iflow", ".pi", ".openhands", ".theia", ".sl", ".jj", ".pijul", "_darcs", ".nlsp-settings"] {
            assert_eq!(placeholder_kind(dir), PlaceholderKind::Dir, "{dir}");
        }
        for file in [".vimrc.local", ".nodenv-vars", ".ycm_extra_conf.py", ".lvimrc", ".lazy.lua", ".dir-locals.el", ".dir-locals-2.el", ".perldb", ".ghci", ".ocamlinit", ".octaverc", ".erlang", ".proverc", ".fslckout", "_FOSSIL_", ".lazygit.yml", ".zlogout", ".zshrc.zwc", "_exrc", ".vimrc", "_vimrc", "_gvimrc", ".devcontainer.json", "opencode.jsonc", "irb.rc", "_irbrc", "$irbrc"] {
            assert_eq!(placeholder_kind(file), PlaceholderKind::File, "{file}");
        }
    }

    /// The README's table ("Protected and reported names") lists every default name, each in its
    /// tier: the report-only row holds the reported ones and no other row holds them.
    #[test]
    fn the_readme_lists_every_default_name_in_its_tier() {
        let readme = include_str!("../../README.md");
        let section = readme.split("### Protected and reported names").nth(1).expect("the README's section");
        let table: Vec<&str> = section.lines().take_while(|l| !l.starts_with("###")).filter(|l| l.starts_with('|')).collect();
        let (report_only, protected): (Vec<&str>, Vec<&str>) = table.iter().partition(|l| l.starts_with("| report-only"));
        let listed = |rows: &[&str], n: &str| rows.iter().any(|l| l.contains(&format!("`{n}`")));
        for n in defaults() {
            assert!(listed(&protected, &n), "{n}: the README's table lists every protected name");
            assert!(!listed(&report_only, &n), "{n}: a protected name in the report-only row");
        }
        for n in reported_defaults() {
            // lefthook's formats are written once, as `.yml` ("... in every format").
            let shown = match n.rsplit_once('.') {
                Some((stem, _)) if n.contains("lefthook") && !stem.is_empty() => format!("{stem}.yml"),
                _ => n.clone(),
            };
            assert!(listed(&report_only, &shown), "{n}: the README's report-only row lists it");
            assert!(!listed(&protected, &n), "{n}: a reported name in a protected row");
        }
    }

    /// lefthook's main and local configurations in every format, with and without the leading
    /// dot (lefthook.dev, "Config file name"), and its script directories.
    fn lefthook_names() -> Vec<String> {
        let mut out = vec![".lefthook".to_string(), ".lefthook-local".to_string()];
        for dot in ["", "."] {
            for local in ["", "-local"] {
                for ext in ["yml", "yaml", "json", "jsonc", "toml"] {
                    out.push(format!("{dot}lefthook{local}.{ext}"));
                }
            }
        }
        out
    }

    #[test]
    fn invalid_entries_name_the_index() {
        assert!(err(json!(".envrc")).starts_with("options.sandbox.protectedNames: must be an array"));
        assert!(err(json!([1])).starts_with("options.sandbox.protectedNames[0]: must be a string"));
        assert!(err(json!(["ok", "a/b"])).starts_with("options.sandbox.protectedNames[1]:"));
        for bad in ["", ".", "..", ".git", "/abs", "a\0b", "a\"b", "a\\b", "a\nb"] {
            assert!(err(json!([bad])).starts_with("options.sandbox.protectedNames[0]:"), "{bad:?}");
        }
        assert!(err(json!(["x".repeat(256)])).contains("255"));
    }

    #[test]
    fn placeholder_kinds() {
        use PlaceholderKind::{Dir, File};
        for (name, kind) in [
            (".git", Dir), (".vscode", Dir), (".idea", Dir), (".devcontainer", Dir),
            (".envrc", File), (".gitmodules", File), (".gitconfig", File), (".bashrc", File), (".profile", File), (".mcp.json", File),
            // the user's own names: by their shape
            ("CLAUDE.md", File), (".npmrc", File), (".claude", Dir), ("hooks", Dir), (".zlogin.local", File),
            // defaults without an extension or an rc ending are files all the same
            ("rust-toolchain", File), ("rust-toolchain.toml", File), (".bazeliskrc", File),
            // a directory the host's npm must not take for a project's (a symlink on the host)
            ("node_modules", File), (".venv", Dir),
            // an upward name proto reads as a file wherever it exists (hostb38)
            (".prototools", File),
            // upward-searched files whose shape says directory: a directory at `/tmp`'s top (a
            // plan's placeholder, left until the next run) fails Bundler, rake, just, dotenv's
            // readers in every folder below; the upward directories stay directories
            ("Gemfile", File), ("Rakefile", File), ("justfile", File), ("Pipfile", File), (".env", File), (".buckroot", File),
            (".goosehints", File), ("WORKSPACE", File), ("dune-project", File),
            ("_opam", Dir), (".mise", Dir), ("mise-tasks", Dir), (".wrangler", Dir),
        ] {
            assert_eq!(placeholder_kind(name), kind, "{name}");
        }
    }
}
