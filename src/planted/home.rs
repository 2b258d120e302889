//! The host user's home inside a writable root (a cwd of `$HOME`, or `HOME=/tmp` with a writable
//! `/tmp`): besides the protected names at its top (`.bashrc`, `.gitconfig`, ...), the paths below
//! it that the host's shells, git, ssh, editors and session manager run or trust, kept read-only
//! where they exist and absent where they do not, as the protected names are. An attacker's review
//! found a run writing `~/.config/git/config` (its `core.fsmonitor` ran on the host's next `git`
//! anywhere), `~/.local/bin/git` and `~/.ssh/authorized_keys`.
//!
//! Whose home: the host process's `HOME` and the home the user database gives (login shells and
//! sshd use that one), and for the XDG paths `$XDG_CONFIG_HOME` as well as each home's `.config`.
//! The command's own `HOME` (its environment) is not the host's: host tools never read it.
//!
//! A home in a reviewed root is not carved: a change to these paths there is a host risk of the
//! change set, held back from a plain apply (`review::risks`).

use std::ffi::CStr;
use std::path::{Path, PathBuf};


/// Below a home: what reads or runs each, and whether it is a directory.
const HOME_PATHS: &[(&str, bool, &str)] = &[
    (".ssh", true, "sshd trusts its authorized_keys and runs its rc on login; ssh runs its config's ProxyCommand and LocalCommand"),
    (".local/bin", true, "login shells put it on PATH (Debian's and Ubuntu's ~/.profile, systemd's user PATH): a program there shadows git, node or sudo"),
    (".gnupg", true, "gpg runs the programs its gpg.conf and gpg-agent.conf name (pinentry-program), and git runs gpg to sign"),
    (".bashrc.d", true, "bash runs every file in it when an interactive shell starts (Fedora's and RHEL's ~/.bashrc)"),
    (".vimrc", false, "Vim runs it when it starts"),
    (".gvimrc", false, "gVim runs it when it starts"),
    (".vim", true, "Vim runs the plugins in it when it starts"),
    (".emacs", false, "Emacs runs it when it starts"),
    (".emacs.d", true, "Emacs runs its init.el when it starts"),
    (".xprofile", false, "display managers run it when a graphical session starts"),
    (".xsessionrc", false, "Debian's X session runs it when a graphical session starts"),
    (".xinitrc", false, "startx runs it"),
    // Found by an attacker's review of the first list (each shown running on the host, or named by
    // the tool's documentation as a file it runs).
    ("bin", true, "login shells put it on PATH (Debian's and Ubuntu's ~/.profile): a program there shadows git, node or sudo"),
    (".tmux.conf", false, "tmux runs its run-shell and if-shell commands when it starts"),
    (".docker", true, "the docker CLI runs the plugins in cli-plugins and the credential helpers config.json names"),
    (".kube/config", false, "kubectl runs the exec credential plugins it names"),
    (".aws/config", false, "the AWS CLI and SDKs run its credential_process"),
    (".hgrc", false, "Mercurial runs the hooks and extensions it names"),
    (".gradle/init.d", true, "Gradle runs every init script in it before each build"),
    (".gradle/init.gradle", false, "Gradle runs it before each build"),
    (".gradle/init.gradle.kts", false, "Gradle runs it before each build"),
    (".oh-my-zsh", true, "zsh runs oh-my-zsh and its custom plugins when it starts"),
    (".pam_environment", false, "PAM sets the variables it lists (PATH, LD_PRELOAD) at login"),
    // Whole: ipython_config.py beside the startup directory runs code too (an attacker's review).
    (".ipython", true, "IPython runs its profiles' ipython_config.py and every file in their startup directories when it starts"),
    (".Rprofile", false, "R runs it when it starts"),
    // Found by a review of the macOS list (its `Library/Python`).
    (".local/lib", true, "Python runs the .pth files and usercustomize of the user's site-packages (.local/lib/pythonX.Y) at every start"),
    (".local/share/nvim", true, "Neovim runs the plugins below its data directory (site/plugin) when it starts"),
    // Found by an attacker's review: a toolchain linked into ~/.rustup and made the default in its
    // settings.toml, and the host's next `cargo` anywhere ran it (~/.cargo/bin's proxies exec it).
    (".rustup", true, "rustup's proxies (cargo, rustc in ~/.cargo/bin) run the toolchain its settings.toml makes the default, from its toolchains directory"),
    (".jupyter", true, "Jupyter runs its jupyter_*_config.py files when a server, notebook or console starts"),
    (".local/share/systemd", true, "systemd runs the user units it holds (timers, at login)"),
    (".local/share/dbus-1", true, "the session bus starts the services it lists on demand"),
    (".local/share/applications", true, "desktop entries: the session and file managers run the command their Exec names when a file type or URL is opened"),
    // Found by an attacker's review (cwd = $HOME, and HOME=/tmp with the default writable /tmp):
    // each was shown running on the host, or its tool's documentation names it as a file it runs
    // or whose settings name a program. The startup files of shells and host tools:
    (".bash_aliases", false, "Debian's and Ubuntu's default ~/.bashrc runs it when an interactive shell starts"),
    (".bash_completion", false, "bash-completion runs it when an interactive shell starts"),
    (".local/share/bash-completion", true, "bash-completion runs the completion scripts in it (completions/) when a command is completed"),
    (".mavenrc", false, "mvn (its launcher script) runs it on every build"),
    (".gdbearlyinit", false, "gdb runs it when it starts, before anything else (its settings, such as auto-load safe-path, decide what else runs)"),
    (".lesskey", false, "less applies it when it starts: its #env section sets LESSOPEN, a command less runs on every file"),
    (".lessfilter", false, "lesspipe (the LESSOPEN of Debian and Ubuntu) runs it on every file less opens"),
    // Debuggers and REPLs that run their home rc file when they start (beside the workspace-top
    // names of `names.rs`, which cover a home only while protectedNames keeps them).
    (".perldb", false, "the Perl debugger (perl -d) runs it when it starts"),
    (".psqlrc", false, "psql runs its commands (\\! runs a shell command) when it starts"),
    (".sqliterc", false, "sqlite3 runs its commands (.shell and .system run programs) when it starts"),
    (".ghci", false, "GHCi runs its commands (:! runs a shell command) when it starts"),
    (".ghc/ghci.conf", false, "GHCi runs its commands (:! runs a shell command) when it starts"),
    (".ocamlinit", false, "the OCaml toplevel runs it when it starts"),
    (".erlang", false, "erl runs it when the Erlang runtime starts"),
    (".octaverc", false, "Octave runs it when it starts"),
    (".Renviron", false, "R sets the variables it lists (R_PROFILE_USER, R_LIBS_USER: code R loads) when it starts"),
    // Version managers and toolchain installations: their bin, shims and hooks are on the login
    // shell's PATH or sourced by its rc file (pyenv exec sources pyenv.d/exec/*.bash), so a file
    // changed in one runs on the host's next python, node, java or ruby. Kept whole.
    (".pyenv", true, "pyenv's shims are on PATH, and pyenv sources the hooks of its pyenv.d on every shimmed command"),
    (".nvm", true, "the shell's rc file sources its nvm.sh, and its Node.js versions are on PATH"),
    (".sdkman", true, "the shell's rc file sources its init script, and its SDKs' bin are on PATH"),
    (".asdf", true, "asdf's shims and plugins' scripts run on every command it manages"),
    (".rbenv", true, "rbenv's shims are on PATH, and rbenv sources the hooks of its plugins"),
    (".nodenv", true, "nodenv's shims are on PATH, and nodenv sources the hooks of its plugins"),
    (".volta", true, "Volta's shims (node, npm) are on PATH"),
    (".bun", true, "its bin (bun and the packages it installs globally) is on PATH"),
    (".deno", true, "its bin (deno and the scripts it installs) is on PATH"),
    (".opam", true, "opam's switches' bin are on PATH (opam env), and its hooks run"),
    (".conda", true, "conda activates the environments it holds (their bin and activate.d scripts run)"),
    ("miniconda3", true, "the shell's rc file runs its conda init hook, and its bin is on PATH"),
    ("anaconda3", true, "the shell's rc file runs its conda init hook, and its bin is on PATH"),
    (".vscode-server", true, "VS Code's remote server runs its own binaries and the extensions installed in it when the editor connects"),
    // Found by an attacker's review (cwd = $HOME, HOME=/tmp, and stow links): each ran on the host.
    (".node_modules", true, "Node.js looks there for a module a program's own node_modules lack (ws loads an optional bufferutil at start)"),
    (".node_libraries", true, "Node.js looks there for a module a program's own node_modules lack"),
    ("node_modules", true, "Node.js looks there for a module that programs installed below the home do not find in their own node_modules"),
    (".local/share/pipx", true, "the programs pipx installed (linked from ~/.local/bin) run from the virtual environments in it: a .pth file or a changed module there runs with them"),
    (".local/share/uv", true, "the tools and Pythons uv installed (linked from ~/.local/bin) run from it: a .pth file or a changed module there runs with them"),
    (".inputrc", false, "readline applies it in every interactive bash: a macro bound to Enter types and runs a command"),
    (".direnvrc", false, "direnv runs it before every .envrc it loads"),
    (".iex.exs", false, "iex runs it when it starts"),
    (".byebugrc", false, "byebug runs its commands when it starts"),
    (".cshrc", false, "csh and tcsh run it when a shell starts"),
    (".tcshrc", false, "tcsh runs it when a shell starts"),
    (".login", false, "csh and tcsh run it when a login shell starts"),
    (".xsession", false, "display managers run it as the graphical session"),
    (".gradle/gradle.properties", false, "Gradle applies it on every build: org.gradle.java.home runs that Java, org.gradle.jvmargs can load an agent"),
    (".gradle/wrapper", true, "./gradlew runs the Gradle distribution it finds there, on every build of any project"),
    (".m2/wrapper", true, "./mvnw runs the Maven distribution it finds there, on every build of any project"),
    (".m2/settings.xml", false, "Maven applies it on every build (its profiles' properties and mirrors decide what code is fetched and run)"),
    (".julia/config", true, "Julia runs its startup.jl when it starts"),
    // A review of the seventeenth session's list: tclsh ran a planted ~/.tclshrc.
    (".tclshrc", false, "tclsh runs it when an interactive shell starts"),
    (".wishrc", false, "wish runs it when it starts"),
    (".screenrc", false, "GNU screen runs its commands (exec, screen) when it starts"),
    (".terraformrc", false, "Terraform applies it: provider dev_overrides and plugin directories name the provider binaries it runs"),
    // Found by an attacker's review (rfix23), with opencode's config below: the home's files of the
    // same class, each read by a tool that runs what it says when the tool starts (or on every
    // use). Those that are also protected names (`.irbrc`, `.npmrc`, `.cargo`, `.claude`) keep a
    // home only while `protectedNames` holds them: a user who drops one for a project's has not
    // agreed to the home's, which applies in every directory.
    (".xonshrc", false, "xonsh runs it when it starts"),
    (".wezterm.lua", false, "WezTerm runs it when it starts"),
    (".alacritty.toml", false, "Alacritty starts the shell program it names"),
    (".alacritty.yml", false, "Alacritty (before 0.13) starts the shell program it names"),
    (".doom.d", true, "Doom Emacs runs its config.el and init.el when Emacs starts"),
    (".spacemacs", false, "Spacemacs runs it when Emacs starts"),
    (".spacemacs.d", true, "Spacemacs runs its init.el when Emacs starts"),
    (".irbrc", false, "irb runs it when it starts, in any directory"),
    (".pryrc", false, "pry runs it when it starts, in any directory"),
    (".pdbrc", false, "pdb runs its commands (`!` runs Python) when a Python debugger starts, in any directory"),
    (".gdbinit", false, "gdb runs its commands (shell, python) when it starts, in any directory"),
    (".lldbinit", false, "lldb runs its commands (script, platform shell) when it starts, in any directory"),
    (".npmrc", false, "npm applies it on every command: `node-options`, `script-shell` and `git` run programs"),
    (".yarnrc", false, "yarn 1 applies it on every command: `yarn-path` makes yarn run that file"),
    (".yarnrc.yml", false, "yarn 2+ applies it on every command: `yarnPath` and plugins run that code"),
    (".tool-versions", false, "asdf and mise apply it in every directory below the home: a `path:` version runs the tools of that directory"),
    (".python-version", false, "pyenv and uv apply it in the directories below the home (uv outside projects): uv runs the interpreter whose path it names"),
    (".cargo/config.toml", false, "cargo applies it on every build: `runner`, `rustc-wrapper` and linkers run programs"),
    (".cargo/config", false, "cargo applies it on every build: `runner`, `rustc-wrapper` and linkers run programs"),
    (".cargo/bin", true, "login shells put it on PATH (rustup's env script): a program there shadows cargo, rustc or git"),
    (".claude/settings.json", false, "Claude Code runs the hooks it lists on every session, in any directory"),
    (".claude/plugins", true, "Claude Code runs the hooks and MCP servers of the plugins it holds"),
    (".gemini/settings.json", false, "Gemini CLI starts the MCP servers and runs the hooks it lists, in any directory"),
    (".codex/config.toml", false, "Codex CLI starts the MCP servers and runs the notify program it names, in any directory"),
    (".local/share/jupyter", true, "Jupyter starts the program each kernel.json in its kernels directory names when a notebook opens"),
    (".local/share/JetBrains", true, "JetBrains IDEs load the plugins it holds when they start"),
    // Found by an attacker's review (plant22, cwd = $HOME): user-level configs of coding agents and
    // bun, and the extension folders of VS Code's builds and forks, created unreported. VS Code's,
    // Cursor's and Windsurf's own (`.vscode`, `.cursor`, `.windsurf`) are protected names too, but
    // those keep a home only while `protectedNames` holds them: a user who drops one to let a run
    // edit a project's settings has not agreed to the home's extensions being written.
    (".claude.json", false, "Claude Code starts the MCP servers its mcpServers list (the user's and each project's) when it starts"),
    (".bunfig.toml", false, "bun applies it as its global configuration: `preload` runs scripts before every `bun run` and test"),
    (".codeium/windsurf", true, "Windsurf starts the MCP servers its mcp_config.json lists"),
    (".copilot", true, "GitHub Copilot CLI starts the MCP servers its mcp-config.json lists and applies its config.json"),
    (".vscode/extensions", true, "VS Code loads the extensions in it when it starts"),
    (".vscode-insiders/extensions", true, "VS Code Insiders loads the extensions in it when it starts"),
    (".vscode-oss/extensions", true, "VSCodium and Code - OSS load the extensions in it when they start"),
    (".cursor/extensions", true, "Cursor loads the extensions in it when it starts"),
    (".windsurf/extensions", true, "Windsurf loads the extensions in it when it starts"),
    // Found by an attacker's review (tools23): Cline's global hooks, run on every task in every
    // project (its global rules, `Documents/Cline/Rules`, are instructions it reads, not run).
    ("Documents/Cline/Hooks", true, "Cline runs the hooks in it (TaskStart, PreToolUse, ...) in every project"),
    // Found by an attacker's review (rfix23b) of the rfix23 list: more of the same class.
    (".muttrc", false, "mutt runs its backticks and `source cmd|` lines when it starts"),
    (".guile", false, "Guile's REPL runs it when it starts"),
    (".sbclrc", false, "SBCL runs it when it starts"),
    (".lein/profiles.clj", false, "Leiningen runs the :injections of its profiles at every start"),
    (".irssi", true, "irssi loads the scripts in scripts/autorun and runs its config's commands when it starts"),
    // Found by an attacker's review (rfix23c): fish's vendor_conf.d below the XDG data directory
    // (which the home's own report did not look into), and the same class there and in the
    // browsers' dot-directories: places whose files the host runs, or whose entries name a command.
    (".local/share/fish", true, "fish sources the scripts of its vendor_conf.d and loads the functions of vendor_functions.d and the completions of vendor_completions.d and generated_completions when it starts"),
    (".local/share/nautilus/scripts", true, "Nautilus runs the scripts in it from its Scripts menu"),
    (".local/share/nemo", true, "Nemo runs the Exec of the actions and the scripts it holds from its menus"),
    (".local/share/file-manager/actions", true, "the file managers' actions (Caja, Nautilus's actions extension) run the Exec of the actions it holds"),
    (".local/share/kio/servicemenus", true, "Dolphin and KDE's file dialogs offer its service menus, whose Exec runs a command"),
    (".local/share/kservices5", true, "KDE Frameworks 5 offers its service menus (whose Exec runs a command) and loads the plugins it describes"),
    (".local/share/plasma", true, "Plasma loads the widgets, look-and-feel packages and desktop scripts it holds when the session starts"),
    (".local/share/gnome-shell/extensions", true, "GNOME Shell loads the enabled extensions it holds when the session starts"),
    (".mozilla/native-messaging-hosts", true, "Firefox starts the program each manifest's path names when an extension asks for it"),
    (".librewolf/native-messaging-hosts", true, "LibreWolf starts the program each manifest's path names when an extension asks for it"),
];

/// Below a home on macOS too, all directories (found by an attacker's review: with the cwd at the
/// home, a run wrote a LaunchAgent, VS Code's settings and tasks, Claude's MCP server list, an
/// iTerm2 AutoLaunch script and Terminal's preferences). `Library/Application Support` is kept
/// whole: editors (VS Code, Cursor, VSCodium, Sublime Text, JetBrains), Claude, iTerm2, browsers
/// and many more keep there what they run or trust, and a list of apps would always lag. What
/// tools write, `Library/Caches` (pip, Homebrew, the private tool caches), stays writable.
const MACOS_PATHS: &[(&str, &str)] = &[
    ("Library/LaunchAgents", "launchd runs the agents it holds at login"),
    ("Library/Application Support", "applications keep there what they run or trust: editors' settings, tasks and extensions (VS Code, Cursor, VSCodium, Sublime Text, JetBrains), Claude's MCP servers, iTerm2's AutoLaunch scripts"),
    ("Library/Preferences", "applications apply their preferences from it (Terminal's startup command, login items' settings)"),
    ("Library/Services", "the Services menu runs the workflows it holds"),
    ("Library/Workflows", "Automator and Shortcuts run the workflows it holds"),
    ("Library/Scripts", "the Script menu and Folder Actions run the scripts it holds"),
    ("Library/Application Scripts", "applications run the user scripts it holds (Mail rules' AppleScripts)"),
    ("Library/Keychains", "the user's keychains: a replaced one hands the next secrets stored to whoever planted it"),
    ("Library/Python", "pip --user's site-packages: Python runs its .pth files whenever it starts, and its bin is on PATH"),
    ("Library/Input Methods", "the system loads the input methods it holds"),
    ("Library/QuickLook", "Quick Look loads the plugins it holds"),
    ("Library/Spotlight", "Spotlight loads the importers it holds"),
    ("Library/PreferencePanes", "System Settings loads the panes it holds"),
    ("Library/Frameworks", "dyld looks there for frameworks an application does not find elsewhere"),
];

/// Below the XDG configuration directory (`$XDG_CONFIG_HOME`, else `~/.config`): whether it is a
/// directory, what it does.
const CONFIG_PATHS: &[(&str, bool, &str)] = &[
    ("git", true, "git reads its configuration (core.fsmonitor, aliases, hooks), attributes and ignore files from it in every repository"),
    ("systemd", true, "systemd runs the user units it holds at login and on timers"),
    ("environment.d", true, "systemd sets the variables it lists (PATH, LD_PRELOAD) in the user's session"),
    ("autostart", true, "the desktop session starts the programs its entries name at login"),
    ("fish", true, "fish runs its config.fish and conf.d when it starts"),
    ("nvim", true, "Neovim runs its init.lua or init.vim and the plugins in it when it starts"),
    ("emacs", true, "Emacs runs its init.el when it starts"),
    ("tmux", true, "tmux runs its tmux.conf's run-shell commands when it starts"),
    ("direnv", true, "direnv runs its direnvrc before every .envrc"),
    ("mise", true, "mise runs its global config's hooks and env scripts in every directory"),
    ("Code/User", true, "VS Code applies its settings (terminal profiles, task and interpreter paths) and runs its tasks"),
    ("mimeapps.list", false, "the desktop opens each file type and URL scheme with the application it names (a desktop entry whose Exec runs a command)"),
    // Found by an attacker's review (with `.gdbearlyinit`, `.lesskey`, `.lessfilter` of a home).
    ("gdb", true, "gdb runs its gdbinit and gdbearlyinit when it starts"),
    ("lesskey", false, "less applies it when it starts: its #env section sets LESSOPEN, a command less runs on every file"),
    ("lessfilter", false, "lesspipe runs it on every file less opens"),
    ("ocaml", true, "the OCaml toplevel runs its init.ml when it starts"),
    ("erlang", true, "erl runs the .erlang in it when the Erlang runtime starts"),
    // Found by an attacker's review (each ran on the host: hg's pre-status hook, nushell's env.nu,
    // go's env GOFLAGS=-toolexec on every build); the rest are the same kind.
    ("hg", true, "Mercurial runs the hooks and extensions its hgrc names"),
    ("nushell", true, "nushell runs its env.nu and config.nu when it starts"),
    ("go", true, "go applies its env file on every command: GOFLAGS=-toolexec runs a program on every build"),
    ("powershell", true, "PowerShell runs its profile scripts when it starts"),
    ("starship.toml", false, "starship runs its custom modules' commands at every prompt"),
    ("wezterm", true, "WezTerm runs its wezterm.lua when it starts"),
    ("kitty", true, "kitty applies its kitty.conf when it starts (startup sessions and watchers run programs)"),
    ("alacritty", true, "Alacritty starts the shell program its configuration names"),
    ("helix", true, "Helix runs the language servers its languages.toml names"),
    ("zed", true, "Zed runs the language servers and tasks its settings name"),
    ("jj", true, "jj runs the pager, editor, diff and signing programs its config.toml names"),
    ("Cursor/User", true, "Cursor applies its settings (terminal profiles, interpreter paths) and runs its tasks"),
    ("i3", true, "i3 runs the exec lines of its config when the session starts"),
    ("sway", true, "sway runs the exec lines of its config when the session starts"),
    ("mpv", true, "mpv runs the scripts in it when it starts"),
    ("ranger", true, "ranger runs its commands.py and rc.conf when it starts"),
    ("VSCodium/User", true, "VSCodium applies its settings (terminal profiles, interpreter paths) and runs its tasks"),
    // Found by an attacker's review (plant22), with `~/.claude.json` and the rest of a home's.
    ("Code - Insiders/User", true, "VS Code Insiders applies its settings (terminal profiles, interpreter paths) and runs its tasks"),
    ("Code - OSS/User", true, "Code - OSS applies its settings (terminal profiles, interpreter paths) and runs its tasks"),
    ("Windsurf/User", true, "Windsurf applies its settings (terminal profiles, interpreter paths) and runs its tasks"),
    (".bunfig.toml", false, "bun applies it as its global configuration: `preload` runs scripts before every `bun run` and test"),
    ("pnpm", true, "pnpm applies its global rc on every command: `node-options` and `script-shell` run programs"),
    ("goose", true, "goose starts the extensions (MCP servers) its config.yaml lists"),
    // Found by a review of those (rfix22).
    ("amp", true, "Amp starts the MCP servers its settings.json lists"),
    ("Claude", true, "Claude Desktop starts the MCP servers its claude_desktop_config.json lists"),
    // Found by an attacker's review (rfix23): opencode's plugins were created unreported; the
    // rest are the same class (each runs a command or loads code when its tool starts, or on
    // every use).
    ("opencode", true, "opencode loads the plugins in its plugins directory and starts the MCP servers and commands its opencode.json names, when it starts"),
    ("crush", true, "Crush starts the MCP servers and language servers its crush.json lists"),
    ("kak", true, "Kakoune runs its kakrc and autoload scripts when it starts (%sh{} runs shell commands)"),
    ("lf", true, "lf runs its lfrc when it starts (its `$`, `!` and `&` commands run shell commands)"),
    ("zellij", true, "zellij starts the shell, plugins and layout commands its config.kdl names when it starts"),
    ("yazi", true, "Yazi runs its init.lua and plugins when it starts, and the openers its yazi.toml names"),
    ("broot", true, "the shell's rc file sources its launcher script (broot --install), and its verbs run programs"),
    ("xonsh", true, "xonsh runs its rc.xsh and rc.d when it starts"),
    ("elvish", true, "Elvish runs its rc.elv when it starts"),
    ("vim", true, "Vim (9.1 and later) runs its vimrc and the plugins in it when it starts"),
    ("micro", true, "micro runs its init.lua and the plugins in it when it starts"),
    ("vifm", true, "vifm runs its vifmrc when it starts (`!` runs shell commands)"),
    ("doom", true, "Doom Emacs runs its config.el and init.el when Emacs starts"),
    ("lazygit", true, "lazygit runs the pager, editor and custom commands its config.yml names (the pager on every diff)"),
    ("gh", true, "gh runs the pager, editor and `!` aliases its config.yml names"),
    ("bat", true, "bat applies its config on every call: `--pager` runs that program"),
    ("ghostty", true, "Ghostty starts the command its config names when it starts"),
    ("foot", true, "foot starts the shell its foot.ini names when it starts"),
    ("containers", true, "podman runs the runtimes, conmon and hooks its containers.conf names on every container"),
    ("nix", true, "nix applies its nix.conf on every command: plugin-files loads libraries into nix, and build hooks run programs"),
    ("nixpkgs", true, "Nix evaluates its config.nix and overlays, which replace the packages the user installs"),
    ("home-manager", true, "home-manager switch builds its home.nix and runs its activation scripts"),
    ("composer", true, "Composer runs the plugins of its global vendor directory on every command, and its vendor/bin is on PATH for many"),
    ("JetBrains", true, "JetBrains IDEs apply its .vmoptions when they start (-javaagent loads code)"),
    ("sublime-text", true, "Sublime Text loads the Python plugins in its Packages when it starts"),
    ("irb", true, "irb (Ruby 3.3 and later) runs its irbrc when it starts"),
    ("pry", true, "pry runs its pryrc when it starts"),
    ("uv", true, "uv applies its uv.toml and its global .python-version outside projects: uv runs the interpreter whose path it names"),
    ("zsh", true, "zsh runs the startup files in it when ~/.zshenv sets ZDOTDIR there (a common setup)"),
    ("hypr", true, "Hyprland runs the exec and exec-once lines of its hyprland.conf when the session starts"),
    ("awesome", true, "awesome runs its rc.lua when the session starts"),
    ("bspwm", true, "bspwm runs its bspwmrc (a shell script) when the session starts"),
    ("openbox", true, "Openbox runs its autostart script when the session starts"),
    ("qtile", true, "Qtile runs its config.py when the session starts"),
    // Found by an attacker's review (rfix23b) of that list: more of the same class.
    ("plasma-workspace", true, "KDE Plasma sources the scripts in its env directory at login"),
    ("qutebrowser", true, "qutebrowser runs its config.py when it starts"),
    ("river", true, "river runs its init when the session starts"),
    ("labwc", true, "labwc runs its autostart with sh when the session starts"),
    ("waybar", true, "Waybar runs its custom modules' exec commands when it starts"),
    ("polybar", true, "polybar runs its custom/script modules' exec commands when it starts"),
    ("niri", true, "niri runs the spawn-at-startup commands of its config.kdl when the session starts"),
    ("ptpython", true, "ptpython runs its config.py when it starts"),
    ("yt-dlp", true, "yt-dlp applies its config on every call: --exec runs a command after each download"),
    // Found by an attacker's review (rfix23c): two levels below `~/.config`, which the home's own
    // report did not look into then; lxsession runs its profiles' autostart lines at login.
    ("lxsession", true, "lxsession runs each line of its profiles' autostart (LXDE-pi/autostart on Raspberry Pi OS) at login"),
    ("lxqt", true, "LXQt starts the window manager and programs its session.conf names at login"),
    ("xfce4", true, "the Xfce session runs the commands its keyboard shortcuts, panel launchers and preferred applications (xfconf's xml, helpers.rc) name"),
    ("khotkeysrc", false, "Plasma 5 runs the commands of the custom shortcuts it lists"),
    ("google-chrome/NativeMessagingHosts", true, NATIVE_MESSAGING),
    ("google-chrome-beta/NativeMessagingHosts", true, NATIVE_MESSAGING),
    ("google-chrome-unstable/NativeMessagingHosts", true, NATIVE_MESSAGING),
    ("chromium/NativeMessagingHosts", true, NATIVE_MESSAGING),
    ("BraveSoftware/Brave-Browser/NativeMessagingHosts", true, NATIVE_MESSAGING),
    ("microsoft-edge/NativeMessagingHosts", true, NATIVE_MESSAGING),
    ("microsoft-edge-beta/NativeMessagingHosts", true, NATIVE_MESSAGING),
    ("microsoft-edge-dev/NativeMessagingHosts", true, NATIVE_MESSAGING),
    ("vivaldi/NativeMessagingHosts", true, NATIVE_MESSAGING),
];

/// What a Chromium-based browser does with its `NativeMessagingHosts`.
const NATIVE_MESSAGING: &str = "the browser starts the program each manifest's path names when an extension asks for it";

/// Where the host user's configuration lives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bases {
    /// The homes, canonical and existing.
    pub homes: Vec<PathBuf>,
    /// The XDG configuration directories (absolute; they may not exist).
    pub config: Vec<PathBuf>,
    /// A plan for macOS: its paths (`MACOS_PATHS`) are kept too.
    pub macos: bool,
}

impl Bases {
    /// The host process's: `$HOME`, the user database's home, `$XDG_CONFIG_HOME`.
    pub fn of_host() -> Bases {
        #[cfg(test)]
        if let Some(home) = test_home::get() {
            return Bases::of([home].into_iter(), None);
        }
        let env = |k: &str| std::env::var_os(k).map(PathBuf::from).filter(|p| p.is_absolute());
        Bases::of([env("HOME"), database_home()].into_iter().flatten(), env("XDG_CONFIG_HOME"))
    }

    /// These bases with macOS's paths too, when `macos`.
    pub fn on_macos(self, macos: bool) -> Bases {
        Bases { macos, ..self }
    }

    pub(super) fn of(homes: impl Iterator<Item = PathBuf>, xdg_config: Option<PathBuf>) -> Bases {
        let mut b = Bases::default();
        for h in homes.filter_map(|h| std::fs::canonicalize(h).ok()) {
            if !b.homes.contains(&h) {
                b.config.push(h.join(".config"));
                b.homes.push(h);
            }
        }
        b.config.extend(xdg_config.filter(|x| !b.config.contains(x)));
        b
    }

    /// Each path to keep, with whether it is a directory and what it does.
    pub fn paths(&self) -> impl Iterator<Item = (PathBuf, bool, &'static str)> + '_ {
        self.paths_below(|_| true).into_iter()
    }

    /// `paths`, of the bases `held` says yes to (asked once a base: most runs hold no home).
    pub fn paths_below(&self, held: impl Fn(&Path) -> bool) -> Vec<(PathBuf, bool, &'static str)> {
        self.below_bases(held).into_iter().map(|(base, p, dir, what)| (base.join(p), dir, what)).collect()
    }

    /// `paths_below` as each base and the path below it (`.ssh`, `git`): a change set judges them
    /// below where the base lies in its root, and where links there lead (`review::risks`).
    pub fn below_bases(&self, held: impl Fn(&Path) -> bool) -> Vec<(&Path, &'static str, bool, &'static str)> {
        let macos = MACOS_PATHS.iter().filter(|_| self.macos).map(|(p, what)| (*p, true, *what));
        let below_home: Vec<(&'static str, bool, &'static str)> = HOME_PATHS.iter().copied().chain(macos).collect();
        let homes = self.homes.iter().filter(|h| held(h)).flat_map(|h| below_home.iter().map(move |(p, dir, what)| (h.as_path(), *p, *dir, *what)));
        let config = self.config.iter().filter(|c| held(c)).flat_map(|c| CONFIG_PATHS.iter().map(move |(p, dir, what)| (c.as_path(), *p, *dir, *what)));
        homes.chain(config).collect()
    }

    /// These bases and `homes` and `config` (a change set's, recorded when its runs ran).
    pub fn and(mut self, homes: &[PathBuf], config: &[PathBuf]) -> Bases {
        for (have, add) in [(&mut self.homes, homes), (&mut self.config, config)] {
            for p in add {
                if !have.contains(p) {
                    have.push(p.clone());
                }
            }
        }
        self
    }

    /// What the host does with `p`, when it is one of these paths.
    pub fn what_it_does(&self, p: &Path) -> Option<&'static str> {
        self.paths().find(|(q, _, _)| q == p).map(|(_, _, what)| what)
    }
}

/// Tests: the host's home for this thread's walks (`HOME` is the process's, shared by every test).
#[cfg(test)]
pub mod test_home {
    use std::cell::RefCell;
    use std::path::PathBuf;

    thread_local!(static HOME: RefCell<Option<PathBuf>> = const { RefCell::new(None) });

    /// `home` stands for the host's home (`$HOME` and the user database's) until the guard drops.
    pub fn set(home: PathBuf) -> impl Drop {
        HOME.with(|h| *h.borrow_mut() = Some(home));
        struct Unset;
        impl Drop for Unset {
            fn drop(&mut self) {
                HOME.with(|h| *h.borrow_mut() = None);
            }
        }
        Unset
    }

    pub(in crate::planted) fn get() -> Option<PathBuf> {
        HOME.with(|h| h.borrow().clone())
    }
}

/// The host user's homes, canonical and each once: the host process's `HOME` and the user
/// database's (login shells and sshd use that one). Those that do not resolve are left out.
pub fn host_homes() -> Vec<PathBuf> {
    let mut homes: Vec<PathBuf> = [std::env::var_os("HOME").map(PathBuf::from), database_home()].into_iter().flatten().filter_map(|h| std::fs::canonicalize(h).ok()).collect();
    homes.dedup();
    homes
}

/// The current user's home in the user database, looked up once per process (a lookup may ask a
/// directory service).
pub fn database_home() -> Option<PathBuf> {
    static HOME: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    HOME.get_or_init(look_up_home).clone()
}

fn look_up_home() -> Option<PathBuf> {
    home_in_database(None)
}

/// A home in the user database: `user`'s (`~user/`), or this process's effective user's.
pub(super) fn home_in_database(user: Option<&CStr>) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: valid buffers of the given length; `out` is set to `&pwd` or null.
    let rc = unsafe {
        match user {
            Some(name) => libc::getpwnam_r(name.as_ptr(), &mut pwd, buf.as_mut_ptr(), buf.len(), &mut out),
            None => libc::getpwuid_r(libc::geteuid(), &mut pwd, buf.as_mut_ptr(), buf.len(), &mut out),
        }
    };
    if rc != 0 || out.is_null() || pwd.pw_dir.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string inside `buf`, alive here.
    let dir = unsafe { CStr::from_ptr(pwd.pw_dir) };
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes()))).filter(|p| p.is_absolute())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's row for a held home ("Limits") names every path kept below it: a path added
    /// here and not there is one the user cannot know is held. Gradle's are named together.
    #[test]
    fn the_readme_names_every_path_kept_below_a_home() {
        let readme = include_str!("../../README.md");
        let row = readme.lines().find(|l| l.starts_with("| the host user's home, when a writable root is it")).expect("the README's row");
        let gradle = |p: &str| p.starts_with(".gradle/");
        for p in HOME_PATHS.iter().map(|(p, _, _)| *p).chain(CONFIG_PATHS.iter().map(|(p, _, _)| *p)).chain(MACOS_PATHS.iter().map(|(p, _)| *p)) {
            assert!(gradle(p) || row.contains(&format!("`{p}`")), "{p}: the README's row names it");
        }
        assert!(row.contains("Gradle's init scripts"));
    }

    /// The seventeenth session's review: each of these ran on the host after a run wrote it in a
    /// held home (Node's home module folder through `ws`'s optional `bufferutil`, a pipx venv's
    /// `.pth`, readline's Enter macro, hg's pre-status hook, direnv's rc, iex, nushell's env.nu,
    /// go's env `GOFLAGS=-toolexec`): each is kept, as a directory where the tool reads one.
    #[test]
    fn the_paths_an_attackers_review_saw_run_are_kept() {
        let home = |p: &str| HOME_PATHS.iter().find(|(q, _, _)| *q == p).map(|(_, dir, _)| *dir);
        let config = |p: &str| CONFIG_PATHS.iter().find(|(q, _, _)| *q == p).map(|(_, dir, _)| *dir);
        for dir in [".node_modules", ".node_libraries", "node_modules", ".local/share/pipx", ".local/share/uv", ".gradle/wrapper", ".m2/wrapper", ".julia/config"] {
            assert_eq!(home(dir), Some(true), "~/{dir}");
        }
        for file in [".inputrc", ".direnvrc", ".iex.exs", ".byebugrc", ".cshrc", ".tcshrc", ".login", ".xsession", ".gradle/gradle.properties", ".m2/settings.xml", ".terraformrc", ".tclshrc", ".wishrc", ".screenrc"] {
            assert_eq!(home(file), Some(false), "~/{file}");
        }
        for dir in ["hg", "nushell", "go", "powershell", "wezterm", "kitty", "alacritty", "helix", "zed", "jj", "i3", "sway", "mpv", "ranger", "Cursor/User", "VSCodium/User"] {
            assert_eq!(config(dir), Some(true), "~/.config/{dir}");
        }
        assert_eq!(config("starship.toml"), Some(false));
    }

    /// The twenty-third session's review (rfix23): opencode's plugins, created in a held home with
    /// nothing reported, and the same class found next: XDG and home configs of developer tools
    /// that run a command or load code when they start (or on every use: a pager, a shim).
    #[test]
    fn the_tools_configs_of_rfix23_are_kept() {
        let home = |p: &str| HOME_PATHS.iter().find(|(q, _, _)| *q == p).map(|(_, dir, _)| *dir);
        let config = |p: &str| CONFIG_PATHS.iter().find(|(q, _, _)| *q == p).map(|(_, dir, _)| *dir);
        for dir in ["opencode", "crush", "kak", "lf", "zellij", "yazi", "broot", "xonsh", "elvish", "vim", "micro", "vifm", "doom", "lazygit", "gh", "bat", "ghostty", "foot", "containers", "nix", "nixpkgs", "home-manager", "composer", "JetBrains", "sublime-text", "irb", "pry", "uv", "zsh", "hypr", "awesome", "bspwm", "openbox", "qtile"] {
            assert_eq!(config(dir), Some(true), "~/.config/{dir}");
        }
        for file in [".xonshrc", ".wezterm.lua", ".alacritty.toml", ".alacritty.yml", ".spacemacs", ".irbrc", ".pryrc", ".pdbrc", ".gdbinit", ".lldbinit", ".npmrc", ".yarnrc", ".yarnrc.yml", ".tool-versions", ".python-version", ".cargo/config.toml", ".cargo/config", ".claude/settings.json", ".gemini/settings.json", ".codex/config.toml"] {
            assert_eq!(home(file), Some(false), "~/{file}");
        }
        for dir in [".doom.d", ".spacemacs.d", ".cargo/bin", ".claude/plugins", ".local/share/jupyter", ".local/share/JetBrains"] {
            assert_eq!(home(dir), Some(true), "~/{dir}");
        }
    }

    /// The review of those (rfix23b): more configs of the same class, created unreported.
    #[test]
    fn the_tools_configs_of_rfix23b_are_kept() {
        let home = |p: &str| HOME_PATHS.iter().find(|(q, _, _)| *q == p).map(|(_, dir, _)| *dir);
        let config = |p: &str| CONFIG_PATHS.iter().find(|(q, _, _)| *q == p).map(|(_, dir, _)| *dir);
        for dir in ["plasma-workspace", "qutebrowser", "river", "labwc", "waybar", "polybar", "niri", "ptpython", "yt-dlp"] {
            assert_eq!(config(dir), Some(true), "~/.config/{dir}");
        }
        for file in [".muttrc", ".guile", ".sbclrc", ".lein/profiles.clj"] {
            assert_eq!(home(file), Some(false), "~/{file}");
        }
        assert_eq!(home(".irssi"), Some(true));
    }

    /// The review of those (rfix23c): fish's vendor_conf.d below the XDG data directory, the file
    /// managers' scripts and service menus there, lxsession's autostart, the browsers' native
    /// messaging hosts and xfce's settings (keyboard shortcuts run commands), each written unreported.
    #[test]
    fn the_code_running_places_of_rfix23c_are_kept() {
        let home = |p: &str| HOME_PATHS.iter().find(|(q, _, _)| *q == p).map(|(_, dir, _)| *dir);
        let config = |p: &str| CONFIG_PATHS.iter().find(|(q, _, _)| *q == p).map(|(_, dir, _)| *dir);
        for dir in [".local/share/fish", ".local/share/nautilus/scripts", ".local/share/kio/servicemenus", ".local/share/kservices5", ".mozilla/native-messaging-hosts", ".librewolf/native-messaging-hosts"] {
            assert_eq!(home(dir), Some(true), "~/{dir}");
        }
        for dir in ["lxsession", "xfce4", "google-chrome/NativeMessagingHosts", "chromium/NativeMessagingHosts", "BraveSoftware/Brave-Browser/NativeMessagingHosts", "microsoft-edge/NativeMessagingHosts", "vivaldi/NativeMessagingHosts"] {
            assert_eq!(config(dir), Some(true), "~/.config/{dir}");
        }
    }

    /// The twenty-second session's review (plant22): agents' MCP lists, bun's preload, pnpm's
    /// global rc, VS Code's builds' and forks' settings and extension folders, each created in a
    /// held home with nothing reported.
    #[test]
    fn the_agents_and_editors_configs_of_plant22_are_kept() {
        let home = |p: &str| HOME_PATHS.iter().find(|(q, _, _)| *q == p).map(|(_, dir, _)| *dir);
        let config = |p: &str| CONFIG_PATHS.iter().find(|(q, _, _)| *q == p).map(|(_, dir, _)| *dir);
        for file in [".claude.json", ".bunfig.toml"] {
            assert_eq!(home(file), Some(false), "~/{file}");
        }
        for dir in [".codeium/windsurf", ".copilot", ".vscode/extensions", ".vscode-insiders/extensions", ".vscode-oss/extensions", ".cursor/extensions", ".windsurf/extensions"] {
            assert_eq!(home(dir), Some(true), "~/{dir}");
        }
        for dir in ["Code - Insiders/User", "Code - OSS/User", "Windsurf/User", "pnpm", "goose", "zed", "amp", "Claude"] {
            assert_eq!(config(dir), Some(true), "~/.config/{dir}");
        }
        assert_eq!(config(".bunfig.toml"), Some(false));
        assert_eq!(home("Documents/Cline/Hooks"), Some(true), "tools23: Cline's global hooks");
    }
}
