//! The names tools search for in every parent of their cwd, and then run or trust: legitimate at
//! a workspace's own top (the project's `package.json`, `node_modules`, `Cargo.toml`), planted
//! in a directory ABOVE it that a writable root covers (between `/tmp` and a cwd `/tmp/x/outer/proj`,
//! or `/tmp`'s top itself) they act on the host's next command in that workspace, or in any other
//! workspace below the same directory. Found by an attacker's review (rfix26): a run wrote
//! `../node_modules/.bin/sh` (npm puts every ancestor's `node_modules/.bin` on PATH, and the host's
//! `npm test` ran it), `/tmp/node_modules/.bin/sh` (another workspace's `npm test` ran it), and
//! `../package.json` listing the workspace in `workspaces` (npm 7+ took the parent as the project's
//! root, and the host's `npm install` ran its postinstall). `protect` gives these names, in those
//! directories only (`between`), what the protected names get there.

/// Each name with what it can make the host do, for `hostRisks` details.
const UPWARD: &[(&str, &str)] = &[
    ("node_modules", "npm puts every ancestor's node_modules/.bin first on PATH for scripts, and Node resolves require() from every ancestor's node_modules: its programs and packages run in the workspaces below"),
    ("package.json", "npm 7+ takes an ancestor whose `workspaces` list a directory below as the project's root, and runs its lifecycle scripts on `npm install` there"),
    ("pnpm-workspace.yaml", "pnpm takes an ancestor holding it as the workspace's root (its `pnpmfile` and scripts run)"),
    ("deno.json", "deno takes the nearest ancestor's as the configuration (its import map redirects the modules run, its tasks run)"),
    ("deno.jsonc", "deno takes the nearest ancestor's as the configuration (its import map redirects the modules run, its tasks run)"),
    ("tsconfig.json", "tsc and editors' TypeScript server take the nearest ancestor's as the project's (its `plugins` load code)"),
    ("jsconfig.json", "editors' TypeScript server takes the nearest ancestor's as the project's (its `plugins` load code)"),
    ("Cargo.toml", "cargo takes an ancestor's `[workspace]` holding the package as its workspace (`[patch]` replaces dependencies, whose build scripts run)"),
    ("go.work", "go takes the nearest ancestor's as the workspace (its `use` and `replace` choose the code built and run)"),
    ("go.mod", "go takes the nearest ancestor's as the module of a directory with none (its `replace` chooses the code built and run)"),
    ("conftest.py", "pytest imports the conftest.py of every directory from its rootdir down (an ancestor's ini file makes that the rootdir)"),
    ("pytest.ini", "pytest takes the nearest ancestor's as its rootdir and configuration (`addopts -p` loads plugins, conftest.py there is imported)"),
    (".pytest.ini", "pytest takes the nearest ancestor's as its rootdir and configuration (`addopts -p` loads plugins, conftest.py there is imported)"),
    ("pytest.toml", "pytest takes the nearest ancestor's as its rootdir and configuration (`addopts -p` loads plugins, conftest.py there is imported)"),
    (".pytest.toml", "pytest takes the nearest ancestor's as its rootdir and configuration (`addopts -p` loads plugins, conftest.py there is imported)"),
    ("pyproject.toml", "pytest and uv search ancestors for it (pytest's rootdir and plugins; uv's workspace, whose members' build backends run)"),
    ("tox.ini", "pytest takes the nearest ancestor's with a [pytest] section as its rootdir and configuration"),
    ("setup.cfg", "pytest takes the nearest ancestor's with a [tool:pytest] section as its rootdir and configuration"),
    ("uv.toml", "uv applies the nearest ancestor's settings (indexes, build settings, the Python it runs)"),
    ("settings.gradle", "Gradle searches ancestors for a settings script and runs it (a build that includes the directory below)"),
    ("settings.gradle.kts", "Gradle searches ancestors for a settings script and runs it (a build that includes the directory below)"),
    ("MODULE.bazel", "bazel takes the nearest ancestor holding it as the workspace (its repositories and rules run)"),
    ("WORKSPACE", "bazel takes the nearest ancestor holding it as the workspace (its repositories and rules run)"),
    ("WORKSPACE.bazel", "bazel takes the nearest ancestor holding it as the workspace (its repositories and rules run)"),
    ("REPO.bazel", "bazel takes the nearest ancestor holding it as the workspace's root"),
    // Found by an attacker's review (rfix27), each planted above a workspace with hostRisks []:
    // more tools that take the nearest ancestor's file for a directory with none of its own, and
    // run what it says (or the code it names).
    ("Gemfile", "Bundler takes the nearest ancestor's for a directory with none: it runs as Ruby on every bundle command"),
    ("gems.rb", "Bundler takes the nearest ancestor's for a directory with none: it runs as Ruby on every bundle command"),
    ("Rakefile", "rake runs the nearest ancestor's (Ruby) for a directory with none"),
    ("rakefile", "rake runs the nearest ancestor's (Ruby) for a directory with none"),
    ("Rakefile.rb", "rake runs the nearest ancestor's (Ruby) for a directory with none"),
    ("rakefile.rb", "rake runs the nearest ancestor's (Ruby) for a directory with none"),
    (".rubocop.yml", "RuboCop takes the nearest ancestor's: its `require` and `plugins` load Ruby"),
    ("Vagrantfile", "Vagrant takes the nearest ancestor's (Ruby) for a directory with none"),
    ("compose.yaml", "docker compose takes the nearest ancestor's for a directory with none: its services run, with the host paths they mount"),
    ("compose.yml", "docker compose takes the nearest ancestor's for a directory with none: its services run, with the host paths they mount"),
    ("docker-compose.yaml", "docker compose takes the nearest ancestor's for a directory with none: its services run, with the host paths they mount"),
    ("docker-compose.yml", "docker compose takes the nearest ancestor's for a directory with none: its services run, with the host paths they mount"),
    ("Directory.Build.props", "MSBuild imports the nearest ancestor's into every project below: its targets run (`Exec`) on dotnet build"),
    ("Directory.Build.targets", "MSBuild imports the nearest ancestor's into every project below: its targets run (`Exec`) on dotnet build"),
    ("Directory.Packages.props", "MSBuild imports the nearest ancestor's into every project below that manages its packages centrally: its targets run"),
    ("Directory.Build.rsp", "MSBuild takes the nearest ancestor's as command-line switches (loggers and properties that load code)"),
    ("nuget.config", "NuGet applies every ancestor's: its package sources choose the packages restored, whose build files run"),
    ("NuGet.config", "NuGet applies every ancestor's: its package sources choose the packages restored, whose build files run"),
    ("NuGet.Config", "NuGet applies every ancestor's: its package sources choose the packages restored, whose build files run"),
    (".flake8", "flake8 takes the nearest ancestor's with a [flake8] section: its local-plugins `paths` load Python code"),
    ("mypy.ini", "mypy takes the nearest ancestor's (up to a repository's top): its `plugins` load Python code"),
    (".mypy.ini", "mypy takes the nearest ancestor's (up to a repository's top): its `plugins` load Python code"),
    ("pixi.toml", "pixi takes the nearest ancestor's as the project: its activation scripts run on pixi run and pixi shell"),
    (".golangci.yml", "golangci-lint takes the nearest ancestor's: its custom linters load plugins"),
    (".golangci.yaml", "golangci-lint takes the nearest ancestor's: its custom linters load plugins"),
    (".golangci.toml", "golangci-lint takes the nearest ancestor's: its custom linters load plugins"),
    (".golangci.json", "golangci-lint takes the nearest ancestor's: its custom linters load plugins"),
    ("dune-project", "dune takes the outermost ancestor holding it as the root: the rules of the dune files there run on dune build"),
    ("dune-workspace", "dune takes the outermost ancestor holding it as the root: the rules of the dune files there run on dune build"),
    ("stack.yaml", "stack takes the nearest ancestor's as the project: the packages it lists are built (their Setup.hs and Template Haskell run)"),
    ("cabal.project", "cabal takes the nearest ancestor's as the project: the packages it lists are built (their Setup.hs runs)"),
    ("justfile", "just runs the recipes of the nearest ancestor's for a directory with none"),
    ("Justfile", "just runs the recipes of the nearest ancestor's for a directory with none"),
    (".justfile", "just runs the recipes of the nearest ancestor's for a directory with none"),
    ("Taskfile.yml", "Task runs the tasks of the nearest ancestor's for a directory with none"),
    ("taskfile.yml", "Task runs the tasks of the nearest ancestor's for a directory with none"),
    ("Taskfile.yaml", "Task runs the tasks of the nearest ancestor's for a directory with none"),
    ("taskfile.yaml", "Task runs the tasks of the nearest ancestor's for a directory with none"),
    ("Taskfile.dist.yml", "Task runs the tasks of the nearest ancestor's for a directory with none"),
    ("taskfile.dist.yml", "Task runs the tasks of the nearest ancestor's for a directory with none"),
    ("Taskfile.dist.yaml", "Task runs the tasks of the nearest ancestor's for a directory with none"),
    ("taskfile.dist.yaml", "Task runs the tasks of the nearest ancestor's for a directory with none"),
    // Found by an attacker's review (host27), each planted above a nested workspace unreported:
    // more tools that search every parent of their cwd and run, load or build what they find.
    ("pylintrc", "pylint takes an ancestor's inside a package as its configuration: `init-hook` runs Python, `load-plugins` imports it"),
    (".pylintrc", "pylint takes an ancestor's inside a package as its configuration: `init-hook` runs Python, `load-plugins` imports it"),
    ("pylintrc.toml", "pylint takes an ancestor's inside a package as its configuration: `init-hook` runs Python, `load-plugins` imports it"),
    (".pylintrc.toml", "pylint takes an ancestor's inside a package as its configuration: `init-hook` runs Python, `load-plugins` imports it"),
    ("pyrightconfig.json", "pyright takes the nearest ancestor's as its configuration: it runs the Python interpreter of the environment it names"),
    ("tasks.py", "invoke imports the nearest ancestor's on every `invoke` command (`inv --list` too)"),
    ("fabfile.py", "Fabric imports the nearest ancestor's on every `fab` command"),
    ("gulpfile.babel.js", "gulp runs the nearest ancestor's on every gulp command"),
    ("Package.swift", "SwiftPM takes the nearest ancestor holding it as the package and runs it (Swift) on every `swift build`"),
    ("nx.json", "Nx takes the nearest ancestor holding it as the workspace's root: its `plugins` load code"),
    (".tool-versions", "asdf and mise take each tool's version from the nearest ancestor's naming it: `path:` runs the tools of any directory"),
    (".python-version", "uv and pyenv take the nearest ancestor's: uv also takes an interpreter's path, and `uv run` runs it"),
    // The same review: more tools taking the nearest ancestor's file as their project, and coding
    // agents' instruction files, which they read from every ancestor as the user's standing word.
    ("compose.yaml", "docker compose takes the nearest ancestor's: its containers, with the host paths it binds into them, start on `docker compose up`"),
    ("compose.yml", "docker compose takes the nearest ancestor's: its containers, with the host paths it binds into them, start on `docker compose up`"),
    ("docker-compose.yaml", "docker compose takes the nearest ancestor's: its containers, with the host paths it binds into them, start on `docker compose up`"),
    ("docker-compose.yml", "docker compose takes the nearest ancestor's: its containers, with the host paths it binds into them, start on `docker compose up`"),
    ("Vagrantfile", "Vagrant runs the nearest ancestor's (Ruby) on every vagrant command"),
    ("build.zig", "`zig build` runs the nearest ancestor's build script"),
    (".venv", "uv takes the nearest ancestor's virtual environment: `uv run` and `uv pip` run its python"),
    ("Pipfile", "pipenv takes an ancestor's (up to three levels) as the project: its scripts run, the .env beside it is loaded"),
    ("rush.json", "Rush takes the nearest ancestor's as the repository's: its event hooks run on install and build"),
    ("devbox.json", "devbox takes the nearest ancestor's as the project: its init hook and scripts run"),
    ("flake.nix", "nix takes the nearest ancestor's (up to a repository's top) as the flake: `nix develop` runs its shell hook"),
    ("CLAUDE.md", "Claude Code reads every ancestor's as the user's standing instructions (up to /), and acts on them"),
    ("CLAUDE.local.md", "Claude Code reads every ancestor's as the user's standing instructions (up to /), and acts on them"),
    ("GEMINI.md", "Gemini CLI reads every ancestor's up to the project's top as standing instructions, and acts on them"),
    ("AGENTS.md", "coding agents (opencode, Codex up to the repository's top) read an ancestor's as standing instructions, and act on them"),
    // Found by an attacker's review (host28), each planted above a nested workspace unreported:
    // more build tools, language servers and package managers that take the nearest (or
    // outermost) ancestor's file as their project's, and more agents' instruction files.
    ("project.clj", "Leiningen's lein changes to the nearest ancestor holding it for a directory with none: it is evaluated as Clojure, its plugins, hooks and :injections load code"),
    ("_opam", "opam selects the nearest ancestor's local switch: `opam env` (its shell hook) and `opam exec` put its bin first on PATH"),
    ("hie.yaml", "the Haskell language server (hie-bios) takes the nearest ancestor's when a file below opens: its cradle's program runs"),
    (".merlin", "Merlin takes the nearest ancestor's when a file below opens: the preprocessors it names (-pp) run"),
    ("pants.toml", "Pants takes the nearest ancestor holding it as the build root: its pythonpath and backend_packages import Python code on every pants command"),
    (".buckconfig", "buck2 takes the outermost ancestor holding one as the project's root: its cells and build files decide what every buck2 command runs"),
    (".buckroot", "buck2 takes the nearest ancestor holding it as the project's root: the .buckconfig and build files there decide what runs"),
    ("composer.json", "Composer offers the nearest ancestor's for a directory with none (asks, Y by default): its scripts and plugins run on composer install"),
    ("QWEN.md", "Qwen Code reads every ancestor's up to the project's top as standing instructions, and acts on them"),
    ("IFLOW.md", "iFlow CLI reads every ancestor's up to the project's top as standing instructions, and acts on them"),
    ("AGENT.md", "Amp (and agents taking the older name) read an ancestor's as standing instructions, and act on them"),
    (".goosehints", "goose reads the ancestors' as standing instructions, and acts on them"),
    // Nim reads these from EVERY parent of the project file (not the nearest only), on each
    // `nim c` and in nimsuggest when an editor opens a file: the workspace's own keep none out.
    ("config.nims", "nim and nimsuggest run every ancestor's (NimScript: `exec` runs commands) on each build and when an editor opens a file below"),
    ("nim.cfg", "nim and nimsuggest apply every ancestor's on each build and when an editor opens a file below: `gcc.exe` names the compiler they run"),
    ("truffle-config.js", "Truffle takes the nearest ancestor's as the project's configuration: it runs as JavaScript on every truffle command"),
    ("truffle.js", "Truffle takes the nearest ancestor's as the project's configuration: it runs as JavaScript on every truffle command"),
    ("angular.json", "the Angular CLI takes the nearest ancestor's as the workspace: the builders it names are modules ng loads"),
    (".angular.json", "the Angular CLI takes the nearest ancestor's as the workspace: the builders it names are modules ng loads"),
    ("vcpkg.json", "vcpkg takes the nearest ancestor's manifest on `vcpkg install`: the ports it builds run their portfiles"),
    ("vcpkg-configuration.json", "vcpkg applies the one beside the manifest it takes: its overlay ports' portfiles run"),
    // Found by an attacker's review (host29), each planted above a nested workspace unreported.
    // `.env` is a reported name in a root (tools write it), but above a workspace it is no file of
    // the project's: Gemini CLI's `findEnvFile` (Qwen Code's too) walks from the workspace to `/`.
    (".env", "Gemini CLI and Qwen Code load the first .env they find from the workspace up to / into their environment: NODE_OPTIONS or BASH_ENV there run code in every MCP server and shell command they start"),
    ("AGENTS.override.md", "Codex reads it in place of AGENTS.md in each directory from the project's root down to the cwd, as standing instructions it acts on"),
    ("psalm.xml", "Psalm takes the nearest ancestor's as its configuration: the plugins and autoloader it names are PHP it loads"),
    ("psalm.xml.dist", "Psalm takes the nearest ancestor's as its configuration: the plugins and autoloader it names are PHP it loads"),
    (".lintr", "lintr (run by the R language server on each file an editor opens) takes the nearest ancestor's, up to /: its values are evaluated as R"),
    ("Pulumi.yaml", "Pulumi takes the nearest ancestor's as the project: its program runs on pulumi preview and pulumi up"),
    ("Pulumi.yml", "Pulumi takes the nearest ancestor's as the project: its program runs on pulumi preview and pulumi up"),
    ("Capfile", "Capistrano's cap (a Rake application) runs the nearest ancestor's (Ruby) for a directory with none"),
    ("capfile", "Capistrano's cap (a Rake application) runs the nearest ancestor's (Ruby) for a directory with none"),
    ("Capfile.rb", "Capistrano's cap (a Rake application) runs the nearest ancestor's (Ruby) for a directory with none"),
    ("capfile.rb", "Capistrano's cap (a Rake application) runs the nearest ancestor's (Ruby) for a directory with none"),
    // Found by an attacker's review (host29b), each planted above a nested workspace unreported:
    // luacheck's configuration is a Lua script it executes, found from the cwd up to `/`; Thor's
    // runner ascends from the cwd to the first directory holding its files (`Thor::Runner#thorfiles`;
    // its `*.thor` globs there are no one name: not kept); Standard Ruby's `FileFinder` ascends too.
    (".luacheckrc", "luacheck takes the nearest ancestor's (up to /): it executes it as Lua (`os.execute` runs programs), in editors' linting of each file too"),
    ("Thorfile", "Thor's runner loads the nearest ancestor's as Ruby on every thor command"),
    (".standard.yml", "Standard Ruby takes the nearest ancestor's: each plugin's `require_path` is Ruby it requires"),
    // Found by an attacker's review (host30), each planted above a nested workspace unreported.
    // mise reads its configuration files and file tasks from the cwd and EVERY parent, merged
    // (its docs, "Task discovery"); a file of `[tasks]` alone needs no `mise trust`. In a root
    // these are reported names (commands write them); above a workspace they are no file of the
    // project's. Its `.config/mise.toml` and `.config/mise/` are left: keeping `.config` above a
    // workspace would keep the home's `~/.config` for runs nested below a writable home; so is
    // its bare `mise` directory (`mise/config.toml`, `mise/tasks`): `$TMPDIR/mise` is mise's own
    // temporary directory, and keeping it at `/tmp`'s top would break every sandboxed mise.
    ("mise.toml", MISE),
    (".mise.toml", MISE),
    ("mise.local.toml", MISE),
    (".mise.local.toml", MISE),
    (".rtx.toml", MISE),
    (".rtx.local.toml", MISE),
    (".mise", MISE_DIR),
    ("mise-tasks", MISE_TASKS),
    (".mise-tasks", MISE_TASKS),
    // treefmt's `config::lookup` ("from the current folder, and up") takes the nearest ancestor's.
    ("treefmt.toml", TREEFMT),
    (".treefmt.toml", TREEFMT),
    // c8 finds its rc file with find-up from the cwd (`.nycrc*`, which it reads too, is kept
    // already); istanbul-reports' `create` require()s a reporter name that is not built in.
    (".c8rc", C8),
    (".c8rc.json", C8),
    // Lerna's cosmiconfig search (`searchStrategy: 'global'`, from the cwd up to `/`).
    ("lerna.json", "Lerna takes the nearest ancestor's on every lerna command: the module its `extends` names is require()d, and `npmClient` is the program `lerna run` runs"),
    // Cloudflare's wrangler find-ups its configuration (and a deploy redirect in `.wrangler`).
    ("wrangler.toml", WRANGLER),
    ("wrangler.json", WRANGLER),
    ("wrangler.jsonc", WRANGLER),
    (".wrangler", "wrangler takes the nearest ancestor's deploy/config.json as a redirect to the configuration it uses: its `[build] command` runs in sh before every wrangler dev and deploy"),
    // Found by an attacker's review (hostb38): proto's shell activation reads `.prototools` from
    // the cwd and every parent (`ConfigMode::Upwards`) at each change of directory and evals its
    // `[env]` and `[shell] aliases` in the user's shell, with no trust step. In a root it is a
    // reported name (`proto pin` writes it).
    (".prototools", "proto's shell activation merges every ancestor's: its [env] variables and [shell] aliases are exported into the shell at every cd in the workspaces below, unasked"),
    // Found by an attacker's review (host45): jEnv takes the nearest `.java-version` (or older
    // `.jenv-version`) and `.java-options` from the cwd up to `/` (libexec/jenv-version-file,
    // jenv-options-file) for every java command its shims run and for the JAVA_HOME its export
    // plugin sets at each prompt; the version word is joined to its versions directory unchecked.
    // In a root they are reported names (`jenv local` writes them).
    (".java-version", JENV_VERSION),
    (".jenv-version", JENV_VERSION),
    (".java-options", "jEnv takes the nearest ancestor's for a directory with none: its words are passed to every java command its shims run (-javaagent loads code)"),
    // The same review: tfenv and tofuenv walk from the cwd up to `/` the same way
    // (lib/tfenv-version-file.sh) for every terraform or tofu command.
    (".terraform-version", TFENV),
    (".opentofu-version", TFENV),
    // The same review kind (host45b): rbenv before 1.2.0 (Debian 12 ships 1.1.2) takes
    // `.ruby-version`'s word unchecked, as the *env managers of `ENV_VERSION_FILES` do
    // (upward-searched too, below). In a root it is a reported name.
    (".ruby-version", "rbenv before 1.2.0 (Debian 12's 1.1.2) takes the nearest ancestor's for a directory with none: its shims run the ruby of the version it names, a ../ path leading anywhere"),
];

/// Found by an attacker's review (host45b), each planted with `hostRisks: []` (bwrap, Landlock;
/// review's apply landed them): rbenv's copies take the first word of the nearest version file up
/// from the cwd and their shims run `$ROOT/versions/<word>/bin/<command>` (libexec/*-which)
/// unchecked, `..` and `/` included: plenv, luaenv, scalaenv, exenv, crenv, and swiftenv (the whole
/// file, `<prefix>/usr/bin/<command>`). phpenv refuses such a word only since April 2025
/// (bd98dbf), in no release; goenv since 2.2.29 (August 2025: 2.2.28's `goenv exec go` ran the
/// workspace's `bin/go`), so `.go-version` is one too. rbenv (1.2.0), pyenv (2.3.3) and nodenv (`..`,
/// 1.3.1) refuse it. `plenv local` and the like write them: reported names in a root
/// (`names::reported_defaults`), kept above a workspace (they search every parent): one list.
pub const ENV_VERSION_FILES: [&str; 11] = [".go-version", ".perl-version", ".plenv-version", ".php-version", ".lua-version", ".luaenv-version", ".swift-version", ".scala-version", ".exenv-version", ".crystal-version", ".crenv-version"];
const ENV_VERSION: &str = "its version manager (plenv, phpenv, luaenv, swiftenv, scalaenv, exenv, crenv, goenv before 2.2.29) takes the nearest ancestor's for a directory with none: its shims run the interpreter of the version it names, a ../ path leading anywhere";

const TFENV: &str = "tfenv (tofuenv) takes the nearest ancestor's for a directory with none: its terraform (tofu) runs the binary of the version it names, a ../ path leading anywhere, on every command in the workspaces below";

const JENV_VERSION: &str = "jEnv takes the nearest ancestor's for a directory with none: its shims run the java of the version it names (a ../ path leads anywhere) and its export plugin sets JAVA_HOME there at each prompt";

const WRANGLER: &str = "wrangler takes the nearest ancestor's configuration: its `[build] command` runs in sh before every wrangler dev and deploy";

const MISE: &str = "mise reads every ancestor's configuration: its tasks run on `mise run` in the workspaces below (a file of tasks alone needs no `mise trust`), its hooks and env scripts, once trusted, when a shell enters them";
const MISE_DIR: &str = "mise reads every ancestor's .mise/config.toml and .mise/tasks/ directory: its tasks run on `mise run` in the workspaces below, its hooks and env scripts, once trusted, when a shell enters them";
const MISE_TASKS: &str = "mise takes each executable file in every ancestor's task directory as a task: it runs on `mise run` in the workspaces below";
const TREEFMT: &str = "treefmt takes the nearest ancestor's: the command of each formatter it lists runs on every `treefmt` (and `nix fmt` through treefmt-nix)";
const C8: &str = "c8 takes the nearest ancestor's configuration: each `reporter` that is no built-in one is a module it require()s";

/// JavaScript tools whose configuration is searched for from the cwd upward (ESLint's flat and
/// legacy configs, cosmiconfig's and lilconfig's users: Prettier, stylelint, PostCSS; Babel's and
/// Jest's), each a stem and the extensions it is read with: a `.js` one runs as it is loaded, and
/// the JSON and YAML ones name plugins and parsers by path, which are loaded.
const JS_CONFIGS: &[(&str, &[&str], &str)] = &[
    ("eslint.config", &["js", "mjs", "cjs", "ts", "mts", "cts"], "ESLint loads the nearest ancestor's config: it runs as JavaScript"),
    (".eslintrc", &["", "js", "cjs", "json", "yaml", "yml"], "ESLint (eslintrc) merges every ancestor's config: its plugins and parser load code"),
    (".prettierrc", &["", "json", "json5", "yaml", "yml", "toml", "js", "cjs", "mjs", "ts", "cts", "mts"], "Prettier loads the nearest ancestor's config: its plugins load code"),
    ("prettier.config", &["js", "cjs", "mjs", "ts", "cts", "mts"], "Prettier loads the nearest ancestor's config: it runs as JavaScript"),
    (".stylelintrc", &["", "json", "yaml", "yml", "js", "cjs", "mjs", "ts", "cts", "mts"], "stylelint loads the nearest ancestor's config: its plugins load code"),
    ("stylelint.config", &["js", "cjs", "mjs", "ts", "cts", "mts"], "stylelint loads the nearest ancestor's config: it runs as JavaScript"),
    (".postcssrc", &["", "json", "yaml", "yml", "js", "cjs", "mjs", "ts", "cts", "mts"], "PostCSS loads the nearest ancestor's config: its plugins load code"),
    ("postcss.config", &["js", "cjs", "mjs", "ts", "cts", "mts"], "PostCSS loads the nearest ancestor's config: it runs as JavaScript"),
    ("babel.config", &["js", "cjs", "mjs", "cts", "json"], "Babel loads it from an ancestor (`rootMode: upward`): it runs as JavaScript, its plugins load code"),
    (".babelrc", &["", "js", "cjs", "mjs", "cts", "json"], "Babel loads the nearest ancestor's for files with no package.json between: its plugins load code"),
    ("jest.config", &["js", "ts", "mjs", "cjs", "cts", "json"], "Jest takes the nearest ancestor's config for a directory with no package.json: it runs as JavaScript"),
    // Found by an attacker's review (rfix27): mocha's rc file and Vitest's config are found up
    // from the cwd too (find-up), and landed above a workspace with hostRisks [].
    (".mocharc", &["cjs", "js", "yaml", "yml", "jsonc", "json"], "mocha loads the nearest ancestor's rc file: a JavaScript one runs, and its `require` loads modules"),
    ("vitest.config", &["ts", "mts", "cts", "js", "mjs", "cjs"], "Vitest loads the nearest ancestor's config (find-up from its root): it runs as JavaScript"),
    ("vite.config", &["ts", "mts", "cts", "js", "mjs", "cjs"], "Vitest loads the nearest ancestor's vite.config where it finds no vitest.config: it runs as JavaScript"),
    // host27: grunt-cli and gulp (Liftoff) search every parent for their file and run it.
    ("Gruntfile", &["js", "cjs", "coffee", "ts"], "grunt runs the nearest ancestor's on every grunt command"),
    ("gruntfile", &["js", "cjs", "coffee", "ts"], "grunt runs the nearest ancestor's on every grunt command"),
    ("gulpfile", &["js", "cjs", "mjs", "ts", "cts", "mts", "coffee"], "gulp runs the nearest ancestor's on every gulp command"),
    ("Gulpfile", &["js", "cjs", "mjs", "ts"], "gulp runs the nearest ancestor's on every gulp command"),
    // Mocha and nyc find their configuration with find-up: `require` loads modules, `.js` runs.
    (".mocharc", &["cjs", "js", "yaml", "yml", "jsonc", "json"], "Mocha takes the nearest ancestor's configuration: its `require` loads modules (a .js one runs)"),
    (".nycrc", &["", "json", "yml", "yaml"], "nyc takes the nearest ancestor's configuration: its `require` loads modules"),
    ("nyc.config", &["js", "cjs", "mjs"], "nyc takes the nearest ancestor's configuration: it runs as JavaScript"),
    // host28: unified-engine (remark-cli, rehype-cli, retext, the remark language server in
    // editors) merges the nearest ancestor's rc file: a JavaScript one runs, its plugins load.
    (".remarkrc", &["", "json", "js", "cjs", "mjs", "yml", "yaml"], "remark loads the nearest ancestor's configuration: a .js one runs, its plugins load code"),
    (".rehyperc", &["", "json", "js", "cjs", "mjs", "yml", "yaml"], "rehype loads the nearest ancestor's configuration: a .js one runs, its plugins load code"),
    (".retextrc", &["", "json", "js", "cjs", "mjs", "yml", "yaml"], "retext loads the nearest ancestor's configuration: a .js one runs, its plugins load code"),
    // host28: Hardhat searches for the closest config from the cwd up; the Svelte language server
    // loads the nearest svelte.config when an editor opens a .svelte file below it.
    ("hardhat.config", &["js", "ts", "cjs", "mjs", "cts", "mts"], "Hardhat takes the nearest ancestor's config: it runs as JavaScript on every hardhat command"),
    ("svelte.config", &["js", "mjs", "cjs", "ts"], "the Svelte language server loads the nearest ancestor's config when a file below opens: it runs as JavaScript"),
    // host29b: commitlint searches from the cwd up (cosmiconfig with `searchStrategy: 'global'`);
    // lint-staged lists each parent's files up to `/` when git lists none of the repository's. Both
    // run from the hooks of the host's `git commit` (in a root lint-staged's are reported names).
    (".commitlintrc", &["", "json", "yaml", "yml", "js", "cjs", "mjs", "ts", "cts", "mts"], "commitlint (run by a commit-msg hook on git commit) takes the nearest ancestor's configuration: a .js or .ts one runs, its plugins and parser preset load code"),
    ("commitlint.config", &["js", "cjs", "mjs", "ts", "cts", "mts"], "commitlint (run by a commit-msg hook on git commit) takes the nearest ancestor's configuration: it runs as JavaScript"),
    (".lintstagedrc", &["", "json", "yaml", "yml", "js", "mjs", "cjs", "ts"], "lint-staged (run by a pre-commit hook on git commit) takes the nearest ancestor's configuration where the repository has none: a .js one runs, the commands it lists run"),
    ("lint-staged.config", &["js", "mjs", "cjs", "ts"], "lint-staged (run by a pre-commit hook on git commit) takes the nearest ancestor's configuration where the repository has none: it runs as JavaScript"),
    // host30: AVA searches the project's directory and each parent up to the repository's top
    // (the first ancestor holding `.git`, else `/`) and import()s a JavaScript one.
    ("ava.config", &["js", "cjs", "mjs", "json"], "AVA takes the nearest ancestor's configuration (up to a repository's top, / with none): a JavaScript one runs as it is loaded, its `require` loads modules"),
    // host30: tsup's JoyCon search stops at the filesystem's root (a package.json counts only
    // with a `tsup` key); unconfig (tsdown's and UnoCSS's loader) searches each source up to `/`
    // before the next, so a parent's config comes before the workspace's own package.json.
    ("tsup.config", &["ts", "cts", "mts", "js", "cjs", "mjs", "json"], "tsup takes the nearest ancestor's config for a project with none: it is bundled and run as JavaScript on every tsup build"),
    ("tsdown.config", &["ts", "mts", "cts", "js", "mjs", "cjs", "json"], "tsdown takes the nearest ancestor's config (up to /) for a project with none: it runs as JavaScript on every tsdown build"),
    ("uno.config", &["ts", "mts", "cts", "js", "mjs", "cjs", "json"], "UnoCSS (its Vite plugin, CLI and editor extension) takes the nearest ancestor's config up to /: it runs as JavaScript"),
    ("unocss.config", &["ts", "mts", "cts", "js", "mjs", "cjs", "json"], "UnoCSS (its Vite plugin, CLI and editor extension) takes the nearest ancestor's config up to /: it runs as JavaScript"),
];

/// The upward-searched names that are directories (their placeholders too; `node_modules` has a
/// file placeholder of its own); every other one is a file, whatever its shape
/// (`names::placeholder_kind`).
pub const DIRECTORIES: &[&str] = &[".venv", "_opam", ".mise", "mise-tasks", ".mise-tasks", ".wrangler"];

/// Every upward-searched name.
pub fn names() -> Vec<String> {
    let configs = JS_CONFIGS.iter().flat_map(|(stem, exts, _)| exts.iter().map(move |e| if e.is_empty() { stem.to_string() } else { format!("{stem}.{e}") }));
    let env_versions = ENV_VERSION_FILES.map(String::from);
    UPWARD.iter().map(|(n, _)| n.to_string()).chain(configs).chain(env_versions).collect()
}

/// git's own upward-searched name besides `.git`, kept with it (protectGit, `between::with_git`):
/// git's discovery takes an ancestor holding `HEAD` with `objects/` and `refs/` (or `commondir`)
/// for a git directory. An attacker's review (rfix26b): a run wrote those and a `config` with
/// `core.worktree` and `core.fsmonitor` into `..`, and the host's `git status` in the workspace,
/// during the run, ran it (`.git` alone was kept out). Without `HEAD` nothing there is one.
pub const GIT_HEAD: (&str, &str) = (
    "HEAD",
    "git's discovery takes a directory holding HEAD, objects and refs (and no .git) for a git directory, the workspace's top or an ancestor, and its configuration's core.worktree and core.fsmonitor then apply to the workspace",
);

/// What the upward-searched `name` can make the host do, if it is one.
pub fn what_it_does(name: &str) -> Option<&'static str> {
    if name == GIT_HEAD.0 {
        return Some(GIT_HEAD.1);
    }
    if let Some((_, what)) = UPWARD.iter().find(|(n, _)| *n == name) {
        return Some(what);
    }
    // plenv, phpenv, luaenv, swiftenv, scalaenv, exenv and crenv walk from the cwd up to `/`
    // (libexec/*-version-file), the word joined to their versions directory unchecked.
    if ENV_VERSION_FILES.contains(&name) {
        return Some(ENV_VERSION);
    }
    let (stem, ext) = name.rsplit_once('.').filter(|(s, _)| !s.is_empty()).unwrap_or((name, ""));
    let of = |stem: &str, ext: &str| JS_CONFIGS.iter().find(|(s, exts, _)| *s == stem && exts.contains(&ext)).map(|(_, _, what)| *what);
    of(stem, ext).or_else(|| of(name, ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_says_what_it_does() {
        let all = names();
        assert!(all.len() > 80, "{}", all.len());
        for n in &all {
            assert!(what_it_does(n).is_some(), "{n}");
            assert!(!n.contains('/') && !n.is_empty(), "{n}");
        }
        for n in ["node_modules", "package.json", ".eslintrc", ".eslintrc.js", "eslint.config.mjs", ".prettierrc", "conftest.py", "go.work", "Cargo.toml", ".mocharc.yml", "vitest.config.mjs", "Gemfile", "compose.yaml", "Directory.Build.props"] {
            assert!(all.iter().any(|a| a == n), "{n}");
        }
        for n in ["Directory.Build.props", "mypy.ini", ".flake8", "tasks.py", "Rakefile", "justfile", "Taskfile.yml", "Gemfile", ".golangci.yml", ".tool-versions", "gulpfile.js", "Gruntfile.js", "gulpfile.babel.js", "compose.yaml", ".venv", "CLAUDE.md", ".mocharc.yml", ".nycrc"] {
            assert!(all.iter().any(|a| a == n), "{n}");
        }
        for n in [".env", "AGENTS.override.md", "psalm.xml", "psalm.xml.dist", ".lintr", "Pulumi.yaml", "Pulumi.yml", "Capfile", "capfile.rb", ".luacheckrc", "Thorfile", ".standard.yml", ".commitlintrc", ".commitlintrc.yml", "commitlint.config.js", ".lintstagedrc", ".lintstagedrc.js", "lint-staged.config.mjs"] {
            assert!(all.iter().any(|a| a == n), "{n}");
        }
        for n in ["project.clj", "_opam", "hie.yaml", ".merlin", "pants.toml", ".buckconfig", ".buckroot", "composer.json", "QWEN.md", "IFLOW.md", "AGENT.md", ".goosehints", "config.nims", "nim.cfg", "hardhat.config.ts", "truffle-config.js", "angular.json", ".angular.json", "svelte.config.js", "vcpkg.json", "vcpkg-configuration.json", ".remarkrc", ".remarkrc.mjs", ".rehyperc.js", ".retextrc.yml"] {
            assert!(all.iter().any(|a| a == n), "{n}");
        }
        for n in ["wrangler.toml", "wrangler.json", "wrangler.jsonc", ".wrangler", "tsup.config.ts", "tsup.config.mjs", "tsdown.config.ts", "uno.config.ts", "unocss.config.js"] {
            assert!(all.iter().any(|a| a == n), "{n}");
        }
        assert!(!all.iter().any(|a| a == "mise"), "$TMPDIR/mise is mise's own temporary directory");
        for n in ["mise.toml", ".mise.toml", "mise.local.toml", ".mise", "mise-tasks", ".mise-tasks", "treefmt.toml", ".treefmt.toml", ".c8rc", ".c8rc.json", "lerna.json", "ava.config.js", "ava.config.mjs", "ava.config.cjs", "ava.config.json", ".prototools", ".java-version", ".jenv-version", ".java-options", ".terraform-version", ".opentofu-version", ".perl-version", ".plenv-version", ".php-version", ".lua-version", ".luaenv-version", ".swift-version", ".scala-version", ".exenv-version", ".crystal-version", ".crenv-version", ".ruby-version", ".go-version"] {
            assert!(all.iter().any(|a| a == n), "{n}");
        }
        assert_eq!(what_it_does("README.md"), None);
        assert_eq!(what_it_does("eslint.config"), None, "a stem alone is no config");
    }
}
