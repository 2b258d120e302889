//! The programs an editor's project settings name by path, kept as the programs a `.cargo`
//! configuration names are (`cargo_programs`). Found by an attacker's review (host35): `.vscode`,
//! `.zed`, `.helix`, coc.nvim's `.vim`, `rust-analyzer.toml` and `.neoconf.json` are protected
//! names because the language servers and tools they configure start when the folder or a file
//! opens, but the programs they name were left writable: with a project's committed
//! `"clangd.path": "${workspaceFolder}/tools/clangd"` or
//! `"rust-analyzer.cargo.buildScripts.overrideCommand": ["tools/ra-check.sh", "--json"]`
//! (rust-analyzer runs it when the folder opens), a default run rewrote the program with
//! `hostRisks: []` (bwrap and the Landlock mode), and the editor's next start there ran it.
//!
//! Settings are open-ended (every extension adds its own), so a value is taken by its key: a
//! string (or each string of an array) under a key whose last part ends in one of `SUFFIXES`
//! (`clangd.path`, `overrideCommand`, `C_Cpp.default.compilerPath`, `ruff.interpreter`, a terminal
//! profile's `path`), or below a key ending in `tools` (`go.alternateTools`), `shell`
//! (`automationShell.linux`) or `env` (`rust-analyzer.cargo.extraEnv`,
//! `terminal.integrated.env.linux`: `RUSTC_WRAPPER`, `NODE_OPTIONS=--require ./x.js`). Of such a value, the whole string and each word holding a `/`
//! (and what follows a word's `=`) is a path, `${workspaceFolder}` and `${workspaceRoot}` put in,
//! a relative one from the folder the settings belong to (the directory holding `.vscode`).
//!
//! Only a path that **exists and is no directory** is kept: settings name directories too
//! (`python.analysis.stubPath`, `jest.rootPath`) and files a build writes
//! (`C_Cpp.default.compileCommands`, whose key ends in `commands`), which must stay the run's to
//! write; a file inside `node_modules` is the project's dependencies, as everywhere, and a
//! reported name (`python.envFile`'s `.env`) is left to its report. A missing program is not kept
//! absent (a run may create it; see the README).
//!
//! And the programs a `.vscode/tasks.json` has VS Code run **when the folder opens** (found by an
//! attacker's review, host36): a task with `"runOptions": { "runOn": "folderOpen" }` starts as soon
//! as the trusted folder opens, with no prompt (Cursor and Windsurf read the same file), and so do
//! the tasks it `dependsOn`; a run rewrote the `tools/bootstrap.sh` such a task named, or the
//! `scripts/watch.sh` its `args` gave `sh`, with `hostRisks: []`. Of those tasks, every string of
//! `command` and `args` (and of their `linux`, `osx` and `windows` forms) is taken as settings'
//! values are, with the programs of `options` (`shell.executable`, `env`) and the file's own.
//! A task run on demand (`Run Task`, a build task) is the project's code as the user runs it, as
//! `package.json`'s scripts are: its programs stay writable.
//!
//! And what a dev container's `initializeCommand` runs **on the host** each time the folder opens
//! in its container (found by an attacker's review, host38: a committed
//! `"initializeCommand": "${localWorkspaceFolder}/tools/init.sh"` was rewritten with
//! `hostRisks: []`), taken as a folder-open task's command line (`devcontainer_words`).

use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::config_reads::{self, Judged, Reads};
pub use super::named_files::{Named, MAX_PROGRAMS};

/// How a settings file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// JSON with comments and trailing commas, as VS Code, Zed, coc.nvim and neoconf read it.
    Jsonc,
    Toml,
    /// VS Code's `tasks.json` (JSON with comments): the tasks run when the folder opens.
    Tasks,
    /// VS Code's `*.code-workspace`: its `settings` as a `settings.json`'s, its `tasks` as a
    /// `tasks.json`'s.
    Workspace,
    /// A JetBrains project's `.idea/watcherTasks.xml` (`idea_watchers`): what its File Watchers
    /// run when a file is saved.
    Watchers,
    /// A JetBrains project's `.idea/startup.xml` or `.idea/workspace.xml`: when it lists startup
    /// tasks, the shared run configurations (`.idea/runConfigurations/*.xml`, `.run/*.run.xml`),
    /// the file's own (a workspace file's local ones) and what they run.
    Startup,
    /// A dev container's configuration (`.devcontainer/devcontainer.json`, the same in each
    /// subfolder of `.devcontainer`, `.devcontainer.json`): what its `initializeCommand` runs on
    /// the host (`devcontainer_words`).
    Devcontainer,
}

/// Each protected name whose settings this reads: the name, the file in it (for a directory), and
/// its syntax. The settings' folder is the directory holding the name.
pub const ENTRIES: &[(&str, Option<&str>, Syntax)] = &[
    (".vscode", Some("settings.json"), Syntax::Jsonc),
    (".vscode", Some("tasks.json"), Syntax::Tasks),
    (".zed", Some("settings.json"), Syntax::Jsonc),
    (".vim", Some("coc-settings.json"), Syntax::Jsonc),
    (".helix", Some("languages.toml"), Syntax::Toml),
    (".neoconf.json", None, Syntax::Jsonc),
    // nlsp-settings.nvim's per-server files (host44), named as lspconfig names its servers: the
    // ones whose settings name programs or commands (the directory is open-ended; README).
    (".nlsp-settings", Some("rust_analyzer.json"), Syntax::Jsonc),
    (".nlsp-settings", Some("clangd.json"), Syntax::Jsonc),
    (".nlsp-settings", Some("pyright.json"), Syntax::Jsonc),
    (".nlsp-settings", Some("basedpyright.json"), Syntax::Jsonc),
    (".nlsp-settings", Some("pylsp.json"), Syntax::Jsonc),
    (".nlsp-settings", Some("gopls.json"), Syntax::Jsonc),
    (".nlsp-settings", Some("lua_ls.json"), Syntax::Jsonc),
    (".nlsp-settings", Some("ts_ls.json"), Syntax::Jsonc),
    ("rust-analyzer.toml", None, Syntax::Toml),
    (".idea", Some("watcherTasks.xml"), Syntax::Watchers),
    (".idea", Some("startup.xml"), Syntax::Startup),
    (".idea", Some("workspace.xml"), Syntax::Startup),
    (".devcontainer", Some("devcontainer.json"), Syntax::Devcontainer),
    (".devcontainer.json", None, Syntax::Devcontainer),
];

/// A key's last part ending in one of these names a program (or a file a program is given).
/// `server`: rust-analyzer's `procMacro.server`, the proc-macro server it spawns (rfix36).
const SUFFIXES: &[&str] = &["path", "command", "cmd", "executable", "exe", "bin", "binary", "interpreter", "runtime", "shell", "server"];

/// A key part ending in one of these holds, below it, programs (`go.alternateTools`, a shell per
/// platform: `terminal.integrated.automationShell.linux`) or an environment (`extraEnv`:
/// `RUSTC_WRAPPER`, `NODE_OPTIONS`; Helix's `environment` of a language server, CMake Tools'
/// `cmake.configureEnvironment`, vscode-go's `go.toolsEnvVars`: found by an attacker's review,
/// rfix36, `CC` and `NODE_OPTIONS` there were not read).
const HOLDERS: &[&str] = &["tools", "shell", "env", "environment", "envvars"];

/// A key (its last part) naming a toolchain's directory, and the programs the editor runs from
/// below it: rust-analyzer's `cargo.sysroot` (`Sysroot::tool` runs `bin/rustc`, its proc-macro
/// server is found in `libexec`), vscode-go's `go.goroot` (`bin/go`) and `go.toolsGopath`
/// (`bin/gopls`, `bin/dlv`), vscode-java's `java.jdt.ls.java.home` (`bin/java`). Found by an
/// attacker's review (rfix36): only a file a value names was kept, never one below a directory.
const TOOLCHAIN_DIRS: &[(&str, &[&str])] = &[
    ("sysroot", &["bin/rustc", "bin/cargo", "libexec/rust-analyzer-proc-macro-srv"]),
    ("goroot", &["bin/go", "bin/gofmt"]),
    ("toolsgopath", &["bin/gopls", "bin/dlv", "bin/staticcheck"]),
    ("home", &["bin/java"]),
];

/// A key (its last part) naming a toolchain's directory, and the directories below it whose every
/// file the programs of `TOOLCHAIN_DIRS` load and run: rustc's `$ORIGIN/../lib` (its RUNPATH:
/// `librustc_driver-*.so`, `libLLVM*.so`), the JDK's `lib` (`libjli.so`, `modules`, the classes)
/// and `lib/server` (`libjvm.so`), the go command's `pkg/tool/<os>_<arch>` (`cgo`, which gopls'
/// `go list -compiled` runs; `compile`, `link`). Found by an attacker's review (rev36): with
/// `bin/rustc` kept, a default run rewrote `lib/librustc_driver-*.so` beside it unsaid.
const TOOLCHAIN_LIBS: &[(&str, &[&str])] = &[
    ("sysroot", &["lib"]),
    ("goroot", &["pkg/tool/linux_amd64", "pkg/tool/linux_arm64", "pkg/tool/darwin_amd64", "pkg/tool/darwin_arm64"]),
    ("home", &["lib", "lib/server"]),
];

/// A word naming every file directly in a directory (`TOOLCHAIN_LIBS`): the directory and this.
const EVERY_FILE: &str = "/*";

/// The directories below the toolchain directory a string under `key` names (`TOOLCHAIN_LIBS`).
fn libs_below_toolchain(key: &[String]) -> &'static [&'static str] {
    let last = key.last().and_then(|k| k.rsplit('.').next()).map(str::to_ascii_lowercase).unwrap_or_default();
    TOOLCHAIN_LIBS.iter().find(|(k, _)| *k == last).map_or(&[], |(_, below)| below)
}

/// The programs below the toolchain directory a string under `key` names (`TOOLCHAIN_DIRS`).
fn below_toolchain(key: &[String]) -> &'static [&'static str] {
    let last = key.last().and_then(|k| k.rsplit('.').next()).map(str::to_ascii_lowercase).unwrap_or_default();
    TOOLCHAIN_DIRS.iter().find(|(k, _)| *k == last).map_or(&[], |(_, below)| below)
}

/// The strings under a program's key read of one file, at most: each is split and its words
/// compared with those kept (`MAX_PROGRAMS`), so a file of many repeated ones costs no more than
/// this (the file is said to be capped past it).
const MAX_STRINGS: usize = 4096;

/// What one settings file gave: its path words (at most `MAX_PROGRAMS` + 1), and whether it could
/// not be read whole (not the syntax it should be), shared by its other names.
pub type Words = Rc<(Vec<String>, bool)>;

/// The reads of one plan's settings files, one per `Syntax` (a file is judged once per syntax:
/// the same file read as settings and as tasks names other strings; the last, compose files read
/// for what they pull in).
pub type EditorReads = [Reads<Words>; 9];

/// Reads for one plan, each within the plan's budget.
pub fn reads() -> EditorReads {
    std::array::from_fn(|_| Reads::new(config_reads::BUDGET))
}

/// The files of `entry` (one of `ENTRIES`' names, a directory or a file) the settings in it name,
/// resolved from the folder holding it.
pub fn named(entry: &Path) -> Named {
    named_within(entry, &mut reads(), config_reads::TOOL_PROGRAMS_IN_ALL)
}

/// The suffix of VS Code's workspace files (`proj.code-workspace`), read wherever the walk names
/// one (`name_patterns` matches them; found by an attacker's review, host36: a committed
/// workspace file's `clangd.path` and folder-open task were rewritten with `hostRisks: []`).
const WORKSPACE_FILE: &str = ".code-workspace";

/// The files of `entry` read, and how: `ENTRIES`' of its name, or the file itself when it is a
/// `*.code-workspace`.
fn rows(entry: &Path) -> Vec<(Option<&'static str>, Syntax)> {
    let Some(n) = entry.file_name() else { return Vec::new() };
    let b = n.as_encoded_bytes();
    if b.len() > WORKSPACE_FILE.len() && b.ends_with(WORKSPACE_FILE.as_bytes()) {
        return vec![(None, Syntax::Workspace)];
    }
    ENTRIES.iter().filter(|(e, _, _)| n == *e).map(|(_, inner, syntax)| (*inner, *syntax)).collect()
}

/// Whether `entry` is one whose settings this reads.
pub fn is_entry(entry: &Path) -> bool {
    !rows(entry).is_empty()
}

/// `named`, reading through `reads` (each file once for all its names, within the plan's budget),
/// keeping at most `most` files; `capped` when there were more, or a file was not read or not read
/// whole. Each of `ENTRIES`' files of that name is read (`.vscode`'s settings and tasks).
pub fn named_within(entry: &Path, reads: &mut EditorReads, most: usize) -> Named {
    let mut out = Named::default();
    let folder = entry.parent().unwrap_or(Path::new("/"));
    let mut compose: Vec<PathBuf> = Vec::new();
    for (inner, syntax) in rows(entry) {
        if syntax == Syntax::Devcontainer && inner.is_some() {
            compose.extend(devcontainer_subfolders(entry, folder, reads, most, &mut out));
        }
        let file = inner.map(|f| entry.join(f)).unwrap_or_else(|| entry.to_path_buf());
        let judged = match syntax {
            Syntax::Jsonc => reads[0].judge(&file, |text| Rc::new(json_words(text))),
            Syntax::Toml => reads[1].judge(&file, |text| Rc::new(toml_words(text))),
            Syntax::Tasks => reads[2].judge(&file, |text| Rc::new(tasks_words(text))),
            Syntax::Workspace => reads[3].judge(&file, |text| Rc::new(workspace_words(text))),
            Syntax::Watchers => reads[4].judge(&file, |text| Rc::new(watchers_words(text))),
            Syntax::Startup => reads[5].judge(&file, |text| Rc::new(startup_words(text))),
            Syntax::Devcontainer => reads[7].judge(&file, |text| Rc::new(devcontainer_words(&file, folder, text))),
        };
        match judged {
            Judged::Judged(words) if syntax == Syntax::Startup && !words.0.is_empty() => {
                keep_words(&words, folder, most, &mut out);
                run_configurations(entry, folder, reads, most, &mut out);
            }
            Judged::Judged(words) => compose.extend(keep_words(&words, folder, most, &mut out)),
            Judged::Absent => {}
            Judged::Unjudged => out.capped = true,
        }
    }
    keep_pulled_in(compose, &mut reads[8], most, &mut out);
    out
}

/// The most compose files read for what they pull in, of one entry: each read may name more, and
/// an include of an include is followed (a cycle too, once per file).
const MAX_COMPOSE_FILES: usize = 64;

/// Keep into `out` the files the kept compose files `compose` pull in (`compose_files`: their
/// `include` and `extends.file`, from each file's own directory), and what those pull in in turn,
/// reading each once through `read`, within `most` in all and `MAX_COMPOSE_FILES` files read (past
/// that: capped, said). Found by an attacker's review (host40): only the files `dockerComposeFile`
/// names were kept, and a default run appended a privileged service to a file one of them
/// included, with `hostRisks: []`.
fn keep_pulled_in(mut compose: Vec<PathBuf>, read: &mut Reads<Words>, most: usize, out: &mut Named) {
    let mut done: Vec<PathBuf> = Vec::new();
    while let Some(file) = compose.pop() {
        if done.contains(&file) {
            continue;
        }
        if done.len() >= MAX_COMPOSE_FILES || out.full(most) {
            out.capped = true;
            return;
        }
        done.push(file.clone());
        let dir = file.parent().unwrap_or(Path::new("/"));
        match read.judge(&file, |text| Rc::new(super::compose_files::pulled_in(text))) {
            Judged::Judged(words) => {
                let marked: Vec<String> = words.0.iter().map(|w| format!("{}{COMPOSE_FILE}", relative_as_word(w))).collect();
                compose.extend(keep_words(&(marked, words.1), dir, most, out));
            }
            Judged::Absent => {}
            Judged::Unjudged => out.capped = true,
        }
    }
}

/// A compose file's path `w` as a word `keep_words` reads from the file's directory: a relative
/// one written `./` (a bare name is no program found on `PATH` here), an absolute one as it is.
fn relative_as_word(w: &str) -> String {
    if w.starts_with('/') || w.starts_with("./") || w.starts_with("../") { w.to_string() } else { format!("./{w}") }
}

/// The end of a word that names a compose file (`compose_words`): kept as any word is, and then
/// read for what it pulls in (`keep_pulled_in`).
const COMPOSE_FILE: &str = "\0compose";

/// Keep into `out` the files `words` (one file's) name from `folder`, within `most` in all; the
/// compose files among them (a word ending in `COMPOSE_FILE`) kept are returned.
fn keep_words(words: &(Vec<String>, bool), folder: &Path, most: usize, out: &mut Named) -> Vec<PathBuf> {
    let (words, unread) = words;
    out.capped |= *unread || words.len() > MAX_PROGRAMS;
    let reported = super::names::reported_defaults();
    let mut compose = Vec::new();
    for w in words.iter().take(MAX_PROGRAMS) {
        if out.full(most) {
            break;
        }
        let (w, is_compose) = w.strip_suffix(COMPOSE_FILE).map_or((w.as_str(), false), |w| (w, true));
        let w = named_folder(w).replace("${workspaceFolder}", &folder.to_string_lossy()).replace("${workspaceRoot}", &folder.to_string_lossy());
        if w.contains("${") || w.starts_with('~') {
            continue;
        }
        let p = super::dir_links::without_dots(folder, Path::new(&w));
        if let Some(dir) = w.strip_suffix(EVERY_FILE) {
            keep_every_file(dir, &super::dir_links::without_dots(folder, Path::new(dir)), &reported, most, out);
        } else if kept_as_program(&p, &reported) {
            if let Some(kept) = out.keep(&w, p).filter(|_| is_compose) {
                compose.push(kept);
            }
        }
    }
    compose
}

/// Keep every file directly in `dir` (the word `word` names it) that `kept_as_program` takes, within
/// `most` in all and `MAX_PROGRAMS` of the directory (past that: capped, said).
fn keep_every_file(word: &str, dir: &Path, reported: &[String], most: usize, out: &mut Named) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for (n, entry) in entries.flatten().enumerate() {
        if n >= MAX_PROGRAMS {
            out.capped = true;
        }
        if n >= MAX_PROGRAMS || out.full(most) {
            break;
        }
        let p = entry.path();
        if kept_as_program(&p, reported) {
            out.keep(&format!("{word}/{}", entry.file_name().to_string_lossy()), p);
        }
    }
}

/// `w` with VS Code's `${workspaceFolder:NAME}` (the folder of that name: an open folder's own is
/// its basename, a `*.code-workspace` names its folders) read as `${workspaceFolder}`, the generous
/// side for any name (found by an attacker's review, rev36: `${workspaceFolder:ws}/tools/clangd`
/// was skipped as a word holding a variable, and rewritten unsaid).
fn named_folder(w: &str) -> String {
    let mut out = String::with_capacity(w.len());
    let mut rest = w;
    while let Some(at) = rest.find("${workspaceFolder:") {
        let Some(end) = rest[at..].find('}') else { break };
        out.push_str(&rest[..at]);
        out.push_str("${workspaceFolder}");
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    out
}

/// Whether `p` is kept: a file there now (a directory, a missing path, a file in `node_modules`
/// or of a reported name are not, see the module's comment).
fn kept_as_program(p: &Path, reported: &[String]) -> bool {
    std::fs::metadata(p).is_ok_and(|m| !m.is_dir())
        && !p.components().any(|c| c.as_os_str() == "node_modules")
        && !super::named_files::is_reported(p, reported)
}

/// Whether a string under `key` (its parts as written: `rust-analyzer.cargo.extraEnv` is one
/// part of three words) is taken for a program.
fn runs(key: &[String]) -> bool {
    let parts: Vec<String> = key.iter().flat_map(|k| k.split('.')).map(str::to_ascii_lowercase).collect();
    let last = parts.last().map(String::as_str).unwrap_or("");
    SUFFIXES.iter().any(|s| last.ends_with(s)) || parts.iter().any(|p| HOLDERS.iter().any(|h| p.ends_with(h))) || !below_toolchain(key).is_empty()
}

/// What ends a word on a shell's command line besides a blank: its operators, subshells,
/// command substitutions and quotes (`$` and braces stay: `${workspaceFolder}` is read later).
const SHELL_BREAKS: &[char] = &[';', '&', '|', '(', ')', '<', '>', '`', '\'', '"'];

/// The path words of the strings `found` (each with its key) that `runs` takes, in order, once;
/// at most `MAX_PROGRAMS` + 1.
fn path_words<'a>(found: impl Iterator<Item = (&'a [String], &'a str)>) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut push = |w: &str| {
        if words.len() <= MAX_PROGRAMS && w.contains('/') && !words.iter().any(|x| x == w) {
            words.push(w.to_string());
        }
    };
    for (key, s) in found.filter(|(key, _)| runs(key)) {
        for program in below_toolchain(key) {
            push(&format!("{}/{program}", s.trim().trim_end_matches('/')));
        }
        for dir in libs_below_toolchain(key) {
            push(&format!("{}/{dir}{EVERY_FILE}", s.trim().trim_end_matches('/')));
        }
        // `"tools/my server"` is one path; `"tools/run.sh --flag"` a program and its arguments;
        // `--require=./x.js`, `-fuse-ld=tools/ld` name a file after the `=`.
        push(s.trim());
        // A shell runs a task's command line (and settings' values that go through one): a path
        // after `;`, `&&`, `|`, inside `$(...)`, backquotes or quotes runs as one between spaces
        // does (found by an attacker's review, rev36: `true;./tools/semi.sh`, `echo $(tools/sub.sh)`
        // and `sh -c './tools/quoted.sh'` were rewritten unsaid); a quoted one may hold spaces.
        s.split(['\'', '"']).for_each(|quoted| push(quoted.trim()));
        // And with its quotes and backslashes removed, as the shell removes them before it runs a
        // word: `./tools/'glued'.sh`, `tools/"dq".sh`, `tools/bs\.sh` (found by an attacker's
        // review, rev37: split at the quotes, each was read as pieces, and rewritten unsaid).
        let unquoted: String = s.chars().filter(|c| !matches!(c, '\'' | '"' | '\\')).collect();
        for text in [s, unquoted.as_str()] {
            for w in text.split(|c: char| c.is_whitespace() || SHELL_BREAKS.contains(&c)) {
                push(w);
                if let Some((_, after)) = w.split_once('=') {
                    push(after);
                }
            }
        }
    }
    words
}

/// The path words of a JSON settings file (comments and trailing commas allowed), and whether it
/// could not be read.
/// A JSON settings file's value (comments and trailing commas allowed): `None` when it is empty or
/// comments only, which VS Code, Zed and coc.nvim take as no settings (an empty settings.json is
/// common, and a launch plan leaves an empty .neoconf.json as a placeholder); `Err` when it is not
/// JSON this reads.
fn settings_value(text: &str) -> Result<Option<serde_json::Value>, ()> {
    let plain = super::jsonc::plain(text);
    if plain.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(&plain).map(Some).map_err(|_| ())
}

fn json_words(text: &str) -> (Vec<String>, bool) {
    let value = match settings_value(text) {
        Ok(Some(value)) => value,
        Ok(None) => return (Vec::new(), false),
        Err(()) => return (Vec::new(), true),
    };
    let mut found: Vec<(Vec<String>, String)> = Vec::new();
    strings(&value, &mut Vec::new(), &mut found);
    (path_words(found.iter().map(|(k, s)| (k.as_slice(), s.as_str()))), found.len() > MAX_STRINGS)
}

/// The path words of a VS Code `tasks.json`'s tasks run when the folder opens, and whether it
/// could not be read.
fn tasks_words(text: &str) -> (Vec<String>, bool) {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&super::jsonc::plain(text)) else {
        return (Vec::new(), true);
    };
    let mut found: Vec<(Vec<String>, String)> = Vec::new();
    let cwds = tasks_strings(&value, &mut found);
    (in_cwds(path_words(found.iter().map(|(k, s)| (k.as_slice(), s.as_str()))), &cwds), found.len() > MAX_STRINGS)
}

/// `words` and, for each relative one, the same below each task's `options.cwd` in `cwds`: a
/// relative program of a task runs from there (found by an attacker's review, rev36: a task with
/// `"options": { "cwd": "${workspaceFolder}/tools" }` ran `./in-cwd.sh`, rewritten unsaid). Each
/// with every cwd, the generous side; within the bound the caller keeps.
fn in_cwds(words: Vec<String>, cwds: &[String]) -> Vec<String> {
    let relative = |w: &&String| !w.starts_with('/') && !w.starts_with("${") && !w.starts_with('~') && !w.starts_with('-');
    let below: Vec<String> = cwds.iter().flat_map(|c| words.iter().filter(relative).map(move |w| format!("{}/{w}", c.trim_end_matches('/')))).collect();
    let mut out = words;
    out.extend(below.into_iter().take((MAX_PROGRAMS + 1).saturating_sub(out.len())));
    out
}

/// The path words of a JetBrains `watcherTasks.xml` (`idea_watchers`): each watcher's program and
/// arguments as a task's command line, its environment as settings' are, a relative word from
/// each watcher's `workingDir` too (the IDE starts the program there); and whether it named more
/// strings than are read.
fn watchers_words(text: &str) -> (Vec<String>, bool) {
    let read = super::idea_watchers::strings(text, MAX_STRINGS);
    let words = path_words(read.strings.iter().map(|(k, s)| (k.as_slice(), s.as_str())));
    (in_cwds(words, &read.cwds), read.strings.len() > MAX_STRINGS)
}

/// The shared run configurations' directory beside `.idea` (the IDE's default for one stored as
/// a project file; one stored elsewhere in the project is not read).
const RUN_DIR: &str = ".run";

/// What a `.idea/startup.xml` or `.idea/workspace.xml` gives: when it lists startup tasks, every
/// file of `RUN_DIR` (their configurations may be there, a Shell Script's inline `SCRIPT_TEXT`
/// among them: kept whole) and what the file's own run configurations run; nothing otherwise. Found by an attacker's review (hostb37): the IDE starts the listed
/// configurations as soon as the trusted project opens (ProjectStartupRunner), with no prompt.
fn startup_words(text: &str) -> (Vec<String>, bool) {
    if !super::idea_watchers::lists_startup_tasks(text) {
        return (Vec::new(), false);
    }
    // The file's own run configurations (`workspace.xml`'s RunManager holds the local ones).
    let (mut words, capped) = run_configuration_words(text);
    words.insert(0, format!("{RUN_DIR}{EVERY_FILE}"));
    (words, capped)
}

/// Keep into `out` what the shared run configurations of the project holding `idea` (its
/// `runConfigurations` and the folder's `RUN_DIR`) run, as a File Watcher's programs are (every
/// configuration, not only those a startup task names: the generous side); at most
/// `MAX_PROGRAMS` files of each directory are read (past that: capped, said).
fn run_configurations(idea: &Path, folder: &Path, reads: &mut EditorReads, most: usize, out: &mut Named) {
    let xml = |e: &std::fs::DirEntry| Some(e.path()).filter(|f| f.extension().is_some_and(|e| e == "xml"));
    for dir in [idea.join("runConfigurations"), folder.join(RUN_DIR)] {
        keep_from_entries(&dir, xml, &mut reads[6], |_, text| run_configuration_words(text), (folder, most), out);
    }
}

/// The path words of a run configuration's file, as a File Watcher's.
fn run_configuration_words(text: &str) -> (Vec<String>, bool) {
    let read = super::idea_watchers::strings_of(text, &super::idea_watchers::RUN_CONFIGURATION, MAX_STRINGS);
    let words = path_words(read.strings.iter().map(|(k, s)| (k.as_slice(), s.as_str())));
    (in_cwds(words, &read.cwds), read.strings.len() > MAX_STRINGS)
}

/// The configuration file of a dev container, in `.devcontainer` and in each of its subfolders
/// (`.devcontainer/python/devcontainer.json`: the tools offer each to pick from).
const DEVCONTAINER_FILE: &str = "devcontainer.json";

/// Keep into `out` what the configurations in the subfolders of `dir` (a `.devcontainer`) run on
/// the host, read from `folder` as its own; at most `MAX_PROGRAMS` entries of `dir` are looked at
/// (past that: capped, said).
fn devcontainer_subfolders(dir: &Path, folder: &Path, reads: &mut EditorReads, most: usize, out: &mut Named) -> Vec<PathBuf> {
    let file = |e: &std::fs::DirEntry| e.file_type().is_ok_and(|t| t.is_dir()).then(|| e.path().join(DEVCONTAINER_FILE));
    keep_from_entries(dir, file, &mut reads[7], |file, text| devcontainer_words(file, folder, text), (folder, most), out)
}

/// Keep into `out` what the file `file` makes of each of the first `MAX_PROGRAMS` entries of `dir`
/// names (read through `read` by `words`, given the file and its text, from `folder`, within
/// `most` in all; past that: capped, said). The compose files kept are returned.
fn keep_from_entries(dir: &Path, file: impl Fn(&std::fs::DirEntry) -> Option<std::path::PathBuf>, read: &mut Reads<Words>, words: impl Fn(&Path, &str) -> (Vec<String>, bool), (folder, most): (&Path, usize), out: &mut Named) -> Vec<PathBuf> {
    let mut compose = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return compose };
    for (n, entry) in entries.flatten().enumerate() {
        if n >= MAX_PROGRAMS || out.full(most) {
            out.capped |= n >= MAX_PROGRAMS;
            break;
        }
        let Some(file) = file(&entry) else { continue };
        match read.judge(&file, |text| Rc::new(words(&file, text))) {
            Judged::Judged(words) => compose.extend(keep_words(&words, folder, most, out)),
            Judged::Absent => {}
            Judged::Unjudged => out.capped = true,
        }
    }
    compose
}

/// The path words of a dev container's configuration: of its `initializeCommand`, which the Dev
/// Containers extension, the devcontainer CLI's `up` and DevPod run **on the host**, from the
/// local workspace folder, each time the folder opens in its container (found by an attacker's
/// review, host38: a committed `"initializeCommand": "${localWorkspaceFolder}/tools/init.sh"` was
/// rewritten with `hostRisks: []`). A string (run by a shell), an array (an argv) or an object of
/// either (run in parallel): each string as a task's command line, `${localWorkspaceFolder}` read
/// as the folder. And the compose files its `dockerComposeFile` names (`compose_words`). The other
/// lifecycle commands run inside the container (the project's code, as its `Dockerfile` is): not
/// read. And whether the file could not be read. `file` is the configuration, below `folder`.
fn devcontainer_words(file: &Path, folder: &Path, text: &str) -> (Vec<String>, bool) {
    let value = match settings_value(text) {
        Ok(Some(value)) => value,
        Ok(None) => return (Vec::new(), false),
        Err(()) => return (Vec::new(), true),
    };
    let mut found: Vec<(Vec<String>, String)> = Vec::new();
    if let Some(command) = value.get("initializeCommand") {
        command_strings(command, &Objects::EachValue, &mut found);
        bare_scripts(command, &mut found);
    }
    for (_, s) in found.iter_mut() {
        *s = s.replace("${localWorkspaceFolder}", "${workspaceFolder}");
    }
    let mut words = path_words(found.iter().map(|(k, s)| (k.as_slice(), s.as_str())));
    if let Some(compose) = value.get("dockerComposeFile") {
        compose_words(compose, file, folder, &mut words);
    }
    (words, found.len() > MAX_STRINGS)
}

/// The compose files a dev container's `dockerComposeFile` (a string or a list) names, each from
/// the configuration's own directory (`../docker-compose.yml` of `.devcontainer/devcontainer.json`
/// is the workspace's top), written as words from `folder` into `words`. Found by an attacker's
/// review (hostb39): the tools hand each to `docker compose -f` on the host when the folder opens
/// in its container, and a service's `privileged: true` or a volume of `/` there is granted by the
/// host's Docker daemon, as the configuration's own `privileged`, `runArgs` and `mounts` (kept
/// with the protected `.devcontainer`) are; one outside `.devcontainer` was rewritten unsaid. Each
/// word ends in `COMPOSE_FILE`: what the file `include`s or `extends` from another file is kept
/// too (`keep_pulled_in`; host40).
fn compose_words(compose: &serde_json::Value, file: &Path, folder: &Path, words: &mut Vec<String>) {
    let names: Vec<&str> = match compose {
        serde_json::Value::String(s) => vec![s.as_str()],
        serde_json::Value::Array(items) => items.iter().filter_map(serde_json::Value::as_str).collect(),
        _ => Vec::new(),
    };
    let dir = file.parent().and_then(|d| d.strip_prefix(folder).ok()).unwrap_or(Path::new(""));
    for name in names {
        let name = name.replace("${localWorkspaceFolder}", "${workspaceFolder}");
        let word = if name.starts_with('/') || name.starts_with("${") { name } else { format!("./{}", dir.join(&name).to_string_lossy()) };
        let word = format!("{word}{COMPOSE_FILE}");
        if words.len() <= MAX_PROGRAMS && !words.contains(&word) {
            words.push(word);
        }
    }
}

/// The scripts `command` (an `initializeCommand`: a string, an argv, an object of either) hands
/// an interpreter by a bare name (`bash init.sh`, `["sh", "-e", "prep.sh"]`), written `./name`
/// into `found`: found by an attacker's review (host39), such a script of the workspace's top ran
/// on the host as one named with a `/` does, and was rewritten with `hostRisks: []`. The first
/// word after an interpreter (`envrc_runs::INTERPRETERS`, by its base name) that is no option;
/// none after `-c` (its word is a command line, read whole already) or `-m` (a module).
fn bare_scripts(command: &serde_json::Value, found: &mut Vec<(Vec<String>, String)>) {
    use serde_json::Value;
    let argv: Vec<String> = match command {
        Value::String(s) => s.split(|c: char| c.is_whitespace() || SHELL_BREAKS.contains(&c)).filter(|w| !w.is_empty()).map(String::from).collect(),
        Value::Array(items) => items.iter().filter_map(Value::as_str).map(String::from).collect(),
        Value::Object(map) => return map.values().for_each(|v| bare_scripts(v, found)),
        _ => return,
    };
    let interpreter = |w: &str| super::envrc_runs::INTERPRETERS.contains(&w.rsplit('/').next().unwrap_or(w));
    let mut after: Option<usize> = None;
    for (i, w) in argv.iter().enumerate() {
        if found.len() > MAX_STRINGS {
            return;
        }
        if interpreter(w) {
            after = Some(i);
        } else if after.is_some() && (w == "-c" || w == "-m") {
            after = None;
        } else if after.is_some() && !w.starts_with('-') {
            after = None;
            if !w.contains('/') && !w.contains('$') {
                found.push((vec!["command".to_string()], format!("./{w}")));
            }
        }
    }
}

/// The path words of a `*.code-workspace`: its `settings` as a `settings.json`'s, its `tasks` as a
/// `tasks.json`'s; and whether it could not be read.
fn workspace_words(text: &str) -> (Vec<String>, bool) {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&super::jsonc::plain(text)) else {
        return (Vec::new(), true);
    };
    let mut found: Vec<(Vec<String>, String)> = Vec::new();
    if let Some(settings) = value.get("settings") {
        strings(settings, &mut Vec::new(), &mut found);
    }
    let cwds = value.get("tasks").map(|tasks| tasks_strings(tasks, &mut found)).unwrap_or_default();
    (in_cwds(path_words(found.iter().map(|(k, s)| (k.as_slice(), s.as_str()))), &cwds), found.len() > MAX_STRINGS)
}

/// The strings of the tasks `file` (a `tasks.json`'s whole) runs when the folder opens
/// (`editor_tasks::parts`): each of their command lines whole, their options' programs as
/// settings' are. Returns their options' `cwd`s.
fn tasks_strings(file: &serde_json::Value, found: &mut Vec<(Vec<String>, String)>) -> Vec<String> {
    use super::editor_tasks::Part;
    let mut cwds = Vec::new();
    for part in super::editor_tasks::parts(file) {
        match part {
            Part::CommandLine(v) => command_strings(v, &Objects::Quoted, found),
            Part::Options(v) => {
                let cwd = v.get("cwd").and_then(serde_json::Value::as_str).map(str::to_string);
                cwds.extend(cwd.filter(|c| !cwds.contains(c)));
                strings(v, &mut vec!["options".to_string()], found)
            }
        }
    }
    cwds
}

/// What an object in a command line holds.
enum Objects {
    /// A task's `{ "value": ..., "quoting": ... }`: its `value`.
    Quoted,
    /// A dev container's `initializeCommand` of commands run in parallel: each value.
    EachValue,
}

/// Each string of a command line (a string, a list, an object as `objects` says), as a
/// program's, up to the bound.
fn command_strings(v: &serde_json::Value, objects: &Objects, out: &mut Vec<(Vec<String>, String)>) {
    use serde_json::Value;
    match v {
        _ if out.len() > MAX_STRINGS => {}
        Value::String(s) => out.push((vec!["command".to_string()], s.clone())),
        Value::Array(items) => items.iter().for_each(|i| command_strings(i, objects, out)),
        Value::Object(map) => match objects {
            Objects::Quoted => map.get("value").into_iter().for_each(|i| command_strings(i, objects, out)),
            Objects::EachValue => map.values().for_each(|i| command_strings(i, objects, out)),
        },
        _ => {}
    }
}

/// Each string of `value` with the keys on its way (an array's items under its key); stops once
/// there are more than enough to fill a file's bound.
fn strings(value: &serde_json::Value, key: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    use serde_json::Value;
    match value {
        _ if out.len() > MAX_STRINGS => {}
        Value::String(s) if runs(key) => out.push((key.clone(), s.clone())),
        Value::Array(items) => items.iter().for_each(|v| strings(v, key, out)),
        Value::Object(map) => {
            for (k, v) in map {
                key.push(k.clone());
                strings(v, key, out);
                key.pop();
            }
        }
        _ => {}
    }
}

/// The path words of a TOML settings file, and whether it could not be read whole.
fn toml_words(text: &str) -> (Vec<String>, bool) {
    let read = super::toml_strings::strings(text);
    let taken = read.found.iter().filter(|(k, _)| runs(k)).take(MAX_STRINGS + 1);
    (path_words(taken.map(|(k, s)| (k.as_slice(), s.as_str()))), read.unread || read.found.iter().filter(|(k, _)| runs(k)).nth(MAX_STRINGS).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_the_values_of_keys_that_name_programs() {
        let text = r#"{
  // the project's servers
  "clangd.path": "${workspaceFolder}/tools/clangd", /* and its arguments */
  "clangd.arguments": ["--compile-commands-dir=build/x"],
  "rust-analyzer.cargo.buildScripts.overrideCommand": ["tools/ra-check.sh", "--json"],
  "rust-analyzer.cargo.extraEnv": { "RUSTC_WRAPPER": "tools/wrap", "CARGO_TARGET_DIR": "target/ra" },
  "[python]": { "python.defaultInterpreterPath": "./tools/py" },
  "terminal.integrated.profiles.linux": { "dev": { "path": "tools/devshell", "args": ["-l", "no/args"] } },
  "go.alternateTools": { "gopls": "tools/gopls" },
  "rust-analyzer.procMacro.server": "tools/pm-srv",
  "go.toolsEnvVars": { "CC": "tools/cc" },
  "cmake.configureEnvironment": { "CXX": "tools/cxx" },
  "rust-analyzer.cargo.sysroot": "./tc/",
  "terminal.integrated.automationShell.linux": "tools/autosh",
  "C_Cpp.default.compileCommands": "build/compile_commands.json",
  "json.schemas": [{ "url": "./schemas/x.json" }],
  "url": "http://x.test/a",
}"#;
        let (mut words, unread) = json_words(text);
        assert!(!unread);
        // serde_json's map keeps its keys sorted: the order is not the file's.
        words.sort();
        assert_eq!(words, ["${workspaceFolder}/tools/clangd", "./tc/", "./tc/bin/cargo", "./tc/bin/rustc", "./tc/lib/*", "./tc/libexec/rust-analyzer-proc-macro-srv", "./tools/py", "target/ra", "tools/autosh", "tools/cc", "tools/cxx", "tools/devshell", "tools/gopls", "tools/pm-srv", "tools/ra-check.sh", "tools/wrap"]);
        assert_eq!(json_words("{ \"clangd.path\": ").1, true, "not JSON: said");
        // An empty file (what a launch plan's placeholder leaves, a project's empty settings.json)
        // or one of comments only is no settings to editors, not a file they cannot read: it was
        // said as unreadable in every run's notEnforced (found by an attacker's review, mode36).
        for nothing in ["", " \n", "\u{feff}", "// nothing yet\n", "/* */"] {
            assert_eq!(json_words(nothing), (Vec::new(), false), "{nothing:?}");
        }
        let (words, unread) = toml_words("[cargo.buildScripts]\noverrideCommand = [\"tools/a.sh\", \"--json\"]\n[language-server.x]\ncommand = \"tools/ls --stdio\"\nenvironment = { NODE_OPTIONS = \"--require ./tools/h.js\" }\n");
        assert!(!unread);
        assert_eq!(words, ["tools/a.sh", "tools/ls --stdio", "tools/ls", "--require ./tools/h.js", "./tools/h.js"]);
    }

    /// Checked by an attacker's review (rfix36), holding: spellings jsonc-parser (VS Code, coc.nvim)
    /// reads as this does: escapes in keys and values, a repeated key (the last wins in both), a
    /// language's block, an object below a dotted key; a file nested past serde_json's depth is
    /// said (unread), not read in part.
    #[test]
    fn escapes_repeats_and_nesting_read_as_the_editor_reads_them() {
        let text = "{\"clangd.p\\u0061th\": \"tools\\u002fa\", \"x.path\": \"tools/first\", \"x.path\": \"tools/last\",\n\
                    \"[rust]\": { \"rust-analyzer\": { \"server\": { \"path\": \"tools/ra\" } } } }";
        let (mut words, unread) = json_words(text);
        words.sort();
        assert!(!unread);
        assert_eq!(words, ["tools/a", "tools/last", "tools/ra"]);
        let deep = format!("{{\"clangd.path\": \"tools/a\", \"x\": {}1{}}}", "[".repeat(200), "]".repeat(200));
        assert_eq!(json_words(&deep), (Vec::new(), true), "past serde_json's depth: unread, said");
    }

    #[test]
    fn takes_what_the_tasks_run_on_open_run() {
        let text = r#"{
  // tasks
  "version": "2.0.0",
  "options": { "env": { "NODE_OPTIONS": "--require=./tools/hook.js" }, "cwd": "sub/dir" },
  "tasks": [
    { "label": "up", "type": "shell", "command": "${workspaceFolder}/tools/up.sh --quiet", "dependsOn": "dep",
      "runOptions": { "runOn": "folderOpen" }, "options": { "shell": { "executable": "tools/mysh" } } },
    { "label": "dep", "command": "sh", "args": ["scripts/dep.sh", { "value": "scripts/q d.sh", "quoting": "strong" }] },
    { "label": "deploy", "command": "./tools/deploy.sh" },
  ],
}"#;
        let (mut words, unread) = tasks_words(text);
        assert!(!unread);
        words.sort();
        assert_eq!(
            words,
            [
                "${workspaceFolder}/tools/up.sh", "${workspaceFolder}/tools/up.sh --quiet", "--require=./tools/hook.js", "./tools/hook.js", "scripts/dep.sh", "scripts/q",
                "scripts/q d.sh", "sub/dir/./tools/hook.js", "sub/dir/scripts/dep.sh", "sub/dir/scripts/q", "sub/dir/scripts/q d.sh", "sub/dir/tools/mysh", "tools/mysh"
            ],
            "each relative word from the folder and from the options' cwd"
        );
        assert!(tasks_words("{ \"tasks\": [").1, "not JSON: said");
        let ws = r#"{ "folders": [{ "path": "." }], "settings": { "clangd.path": "tools/clangd", "folders.path": "no" },
  "tasks": { "version": "2.0.0", "tasks": [{ "label": "up", "command": "./tools/up.sh", "runOptions": { "runOn": "folderOpen" } }] },
  "launch": { "configurations": [{ "program": "tools/debugged" }] } }"#;
        assert_eq!(workspace_words(ws), (vec!["tools/clangd".to_string(), "./tools/up.sh".to_string()], false), "its settings and tasks, not the folders' paths");
        assert!(is_entry(Path::new("/w/proj.code-workspace")) && !is_entry(Path::new("/w/.code-workspace")));
    }

    /// A shell ends a word at its operators and quotes too (rev36): each path there is taken.
    #[test]
    fn takes_the_paths_a_shell_reads_out_of_a_command_line() {
        let line = |s: &str| path_words([(&["command".to_string()][..], s)].into_iter());
        assert_eq!(line("true;./tools/a&&tools/b|cat"), ["true;./tools/a&&tools/b|cat", "./tools/a", "tools/b"]);
        assert_eq!(line("echo $(tools/c) `tools/d` >out/log"), ["echo $(tools/c) `tools/d` >out/log", "tools/c", "tools/d", "out/log"]);
        assert_eq!(line("sh -c './tools/g --x'"), ["sh -c './tools/g --x'", "./tools/g --x", "./tools/g"]);
        assert_eq!(line("'./tools/my h.sh' --x"), ["'./tools/my h.sh' --x", "./tools/my h.sh", "./tools/my"], "a quoted path holds its blank");
        assert_eq!(line("${workspaceFolder}/tools/f"), ["${workspaceFolder}/tools/f"], "the variable is read later, whole");
        // Glued from quoted parts, or escaped: the word the shell runs after its quote removal (rev37).
        assert!(line("./tools/'glued'.sh").contains(&"./tools/glued.sh".to_string()));
        assert!(line("tools/\"dq\".sh --x").contains(&"tools/dq.sh".to_string()));
        assert!(line("true && tools/bs\\.sh").contains(&"tools/bs.sh".to_string()));
    }

    #[test]
    fn keeps_only_files_there_outside_node_modules() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        for d in [".vscode", "tools", "build/dir", "node_modules/.bin"] {
            std::fs::create_dir_all(w.join(d)).unwrap();
        }
        for f in ["tools/clangd", "node_modules/.bin/eslint", ".env"] {
            std::fs::write(w.join(f), "x").unwrap();
        }
        std::fs::write(
            w.join(".vscode/settings.json"),
            "{\"clangd.path\": \"${workspaceRoot}/tools/../tools/clangd\", \"x.path\": \"build/dir\", \"y.path\": \"tools/missing\",\n\
             \"eslint.runtime\": \"node_modules/.bin/eslint\", \"python.envFilePath\": \".env\", \"z.path\": \"${env:HOME}/x\", \"abs.path\": \"/nonexistent/x\"}",
        )
        .unwrap();
        assert_eq!(named(&w.join(".vscode")), Named { programs: vec![w.join("tools/clangd")], capped: false });
        std::fs::write(w.join("rust-analyzer.toml"), "check.overrideCommand = [\"tools/clangd\"]\nx = \"unclosed\n").unwrap();
        assert_eq!(named(&w.join("rust-analyzer.toml")), Named { programs: vec![w.join("tools/clangd")], capped: true }, "not TOML whole: capped");
        assert_eq!(named(&w.join(".zed")), Named::default());
    }

    /// What a toolchain directory's programs load from below it (rev36): every file of the
    /// directories `TOOLCHAIN_LIBS` names, not their subdirectories.
    #[test]
    fn keeps_every_file_of_a_toolchain_directorys_libraries() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        for d in [".vscode", "tc/bin", "tc/lib/rustlib", "go/pkg/tool/linux_amd64"] {
            std::fs::create_dir_all(w.join(d)).unwrap();
        }
        for f in ["tc/bin/rustc", "tc/lib/librustc_driver-1.so", "tc/lib/libLLVM.so.22", "go/pkg/tool/linux_amd64/cgo"] {
            std::fs::write(w.join(f), "x").unwrap();
        }
        std::fs::write(w.join(".vscode/settings.json"), "{\"rust-analyzer.cargo.sysroot\": \"tc/\", \"go.goroot\": \"${workspaceFolder}/go\"}").unwrap();
        let mut kept = named(&w.join(".vscode")).programs;
        kept.sort();
        let want: Vec<_> = ["go/pkg/tool/linux_amd64/cgo", "tc/bin/rustc", "tc/lib/libLLVM.so.22", "tc/lib/librustc_driver-1.so"].iter().map(|f| w.join(f)).collect();
        assert_eq!(kept, want, "the directory rustlib is no program");
    }

    /// A JetBrains watcher's program, its arguments' scripts and a relative program from its
    /// working directory (hostb37).
    #[test]
    fn keeps_what_a_jetbrains_file_watcher_runs() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        for d in [".idea", "tools", "sub/bin"] {
            std::fs::create_dir_all(w.join(d)).unwrap();
        }
        for f in ["tools/fmt.sh", "tools/lint.sh", "sub/bin/gen"] {
            std::fs::write(w.join(f), "x").unwrap();
        }
        let task = |program: &str, args: &str, cwd: &str| format!("<TaskOptions isEnabled=\"true\"><option name=\"arguments\" value=\"{args}\" /><option name=\"program\" value=\"{program}\" /><option name=\"workingDir\" value=\"{cwd}\" /></TaskOptions>");
        let xml = format!("<project version=\"4\"><component name=\"ProjectTasksOptions\">{}{}</component></project>", task("$ProjectFileDir$/tools/fmt.sh", "-w $FilePath$", "$ProjectFileDir$"), task("sh", "tools/lint.sh", "") + &task("bin/gen", "", "$ProjectFileDir$/sub"));
        std::fs::write(w.join(".idea/watcherTasks.xml"), xml).unwrap();
        let mut kept = named(&w.join(".idea")).programs;
        kept.sort();
        assert_eq!(kept, ["sub/bin/gen", "tools/fmt.sh", "tools/lint.sh"].map(|f| w.join(f)));
    }

    /// The run configurations a JetBrains project's startup tasks start (hostb37): the `.run`
    /// files whole and what each configuration names, only while `startup.xml` lists a task.
    #[test]
    fn keeps_what_a_jetbrains_startup_task_runs() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        for d in [".idea/runConfigurations", ".run", "tools", "venv/bin"] {
            std::fs::create_dir_all(w.join(d)).unwrap();
        }
        for f in ["tools/setup.sh", "tools/lint.sh", "venv/bin/python", "tools/main.py"] {
            std::fs::write(w.join(f), "x").unwrap();
        }
        let sh = |script: &str| format!("<component><configuration name=\"x\" type=\"ShConfigurationType\"><option name=\"SCRIPT_PATH\" value=\"{script}\" /><option name=\"INTERPRETER_PATH\" value=\"/bin/bash\" /></configuration></component>");
        std::fs::write(w.join(".run/setup.run.xml"), sh("$PROJECT_DIR$/tools/setup.sh")).unwrap();
        std::fs::write(w.join(".idea/runConfigurations/lint.xml"), sh("tools/lint.sh")).unwrap();
        std::fs::write(w.join(".idea/runConfigurations/py.xml"), "<configuration type=\"PythonConfigurationType\"><option name=\"SDK_HOME\" value=\"$PROJECT_DIR$/venv/bin/python\" /><option name=\"SCRIPT_NAME\" value=\"$PROJECT_DIR$/tools/main.py\" /></configuration>").unwrap();
        assert_eq!(named(&w.join(".idea")), Named::default(), "no startup.xml: run configurations run on demand only");
        std::fs::write(w.join(".idea/startup.xml"), "<project version=\"4\"><component name=\"ProjectStartupSharedConfiguration\"><configurations><configuration id=\"Shell Script.x\" name=\"x\" /></configurations></component></project>").unwrap();
        let mut kept = named(&w.join(".idea")).programs;
        kept.retain(|p| p.starts_with(w)); // and /bin/bash, outside any root: nothing to keep
        kept.sort();
        assert_eq!(kept, [".run/setup.run.xml", "tools/lint.sh", "tools/main.py", "tools/setup.sh", "venv/bin/python"].map(|f| w.join(f)));
    }

    /// Found by an attacker's review (host38): what a dev container's `initializeCommand` runs on
    /// the host, in each of its forms and each place the tools take a configuration from; the
    /// container's own commands are not read.
    #[test]
    fn keeps_what_a_dev_container_runs_on_the_host() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        for d in [".devcontainer/py", "tools", "scripts", "pkg/tools"] {
            std::fs::create_dir_all(w.join(d)).unwrap();
        }
        for f in ["tools/init.sh", "scripts/prep.sh", "scripts/post.sh", "pkg/tools/a.sh", "pkg/tools/b.sh"] {
            std::fs::write(w.join(f), "x").unwrap();
        }
        std::fs::write(w.join(".devcontainer/devcontainer.json"), "// x\n{ \"initializeCommand\": \"${localWorkspaceFolder}/tools/init.sh --q\", \"postCreateCommand\": \"./scripts/post.sh\", }").unwrap();
        std::fs::write(w.join(".devcontainer/py/devcontainer.json"), r#"{ "initializeCommand": ["bash", "scripts/prep.sh"] }"#).unwrap();
        std::fs::write(w.join("pkg/.devcontainer.json"), r#"{ "initializeCommand": { "a": "./tools/a.sh", "b": ["sh", "tools/b.sh"] } }"#).unwrap();
        let mut kept = named(&w.join(".devcontainer")).programs;
        kept.sort();
        assert_eq!(kept, ["scripts/prep.sh", "tools/init.sh"].map(|f| w.join(f)), "not postCreateCommand's, run in the container");
        let mut kept = named(&w.join("pkg/.devcontainer.json")).programs;
        kept.sort();
        assert_eq!(kept, ["pkg/tools/a.sh", "pkg/tools/b.sh"].map(|f| w.join(f)));
        std::fs::write(w.join(".devcontainer/py/devcontainer.json"), "{ \"initializeCommand\": ").unwrap();
        assert!(named(&w.join(".devcontainer")).capped, "not JSON: said");
        // Found by an attacker's review (host39): a script handed to an interpreter by a bare name.
        for f in ["init.sh", "setup.py", "prep.sh", "pipefail.sh"] {
            std::fs::write(w.join(f), "x").unwrap();
        }
        std::fs::write(w.join(".devcontainer/devcontainer.json"), r#"{ "initializeCommand": "bash init.sh && /usr/bin/python3 -u setup.py; sh -c pipefail.sh" }"#).unwrap();
        std::fs::write(w.join(".devcontainer/py/devcontainer.json"), r#"{ "initializeCommand": { "a": ["sh", "-e", "prep.sh"] } }"#).unwrap();
        let mut kept = named(&w.join(".devcontainer")).programs;
        kept.retain(|p| p.starts_with(w)); // and /usr/bin/python3, outside any root
        kept.sort();
        assert_eq!(kept, ["init.sh", "prep.sh", "setup.py"].map(|f| w.join(f)), "not -c's word, a command found on PATH");
    }

    /// Found by an attacker's review (hostb39): the compose files `dockerComposeFile` names, each
    /// from the configuration's own directory; not a `Dockerfile` (built in a container).
    #[test]
    fn keeps_the_compose_files_a_dev_container_names() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        for d in [".devcontainer/py", "deploy", "pkg"] {
            std::fs::create_dir_all(w.join(d)).unwrap();
        }
        for f in ["docker-compose.yml", "deploy/compose.yaml", "pkg/compose.yaml", "Dockerfile"] {
            std::fs::write(w.join(f), "x").unwrap();
        }
        std::fs::write(w.join(".devcontainer/devcontainer.json"), r#"{ "dockerComposeFile": ["../docker-compose.yml", "absent.yml"], "build": { "dockerfile": "../Dockerfile" } }"#).unwrap();
        std::fs::write(w.join(".devcontainer/py/devcontainer.json"), r#"{ "dockerComposeFile": "${localWorkspaceFolder}/deploy/compose.yaml" }"#).unwrap();
        std::fs::write(w.join("pkg/.devcontainer.json"), r#"{ "dockerComposeFile": "compose.yaml" }"#).unwrap();
        let mut kept = named(&w.join(".devcontainer")).programs;
        kept.sort();
        assert_eq!(kept, ["deploy/compose.yaml", "docker-compose.yml"].map(|f| w.join(f)), "a missing one and the Dockerfile not kept");
        assert_eq!(named(&w.join("pkg/.devcontainer.json")).programs, [w.join("pkg/compose.yaml")], "from the file's own directory");
    }

    /// Found by an attacker's review (host40): what a kept compose file includes or extends, from
    /// its own directory, and in turn; a cycle is read once per file, and a chain longer than
    /// `MAX_COMPOSE_FILES` is capped (said), not followed.
    #[test]
    fn keeps_what_a_compose_file_pulls_in_once_each() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        std::fs::create_dir_all(w.join(".devcontainer")).unwrap();
        std::fs::create_dir_all(w.join("c")).unwrap();
        std::fs::write(w.join(".devcontainer/devcontainer.json"), r#"{ "dockerComposeFile": "../a.yml" }"#).unwrap();
        std::fs::write(w.join("a.yml"), "include:\n  - a.yml\n  - c/b.yml\n").unwrap();
        std::fs::write(w.join("c/b.yml"), "services:\n  s:\n    extends: { file: ../a.yml, service: s }\n").unwrap();
        let n = named(&w.join(".devcontainer"));
        assert_eq!(n.programs, [w.join("a.yml"), w.join("c/b.yml")]);
        assert!(!n.capped);
        for i in 0..(MAX_COMPOSE_FILES + 2) {
            std::fs::write(w.join(format!("c/{i}.yml")), format!("include: [{}.yml]\n", i + 1)).unwrap();
        }
        std::fs::write(w.join("c/b.yml"), "include: [0.yml]\n").unwrap();
        let n = named(&w.join(".devcontainer"));
        assert!(n.capped && n.programs.len() <= MAX_COMPOSE_FILES + 1, "{}", n.programs.len());
    }

    #[test]
    fn reads_a_named_workspace_folder_as_the_folder() {
        assert_eq!(named_folder("${workspaceFolder:ws}/tools/a ${workspaceFolder:x y}/b"), "${workspaceFolder}/tools/a ${workspaceFolder}/b");
        assert_eq!(named_folder("${workspaceFolder:unclosed/x"), "${workspaceFolder:unclosed/x", "no closing brace: as written");
        assert_eq!(named_folder("${workspaceFolderBasename}/x"), "${workspaceFolderBasename}/x");
    }
}
