//! The files a mise configuration has mise run or load, kept as the files an `.envrc` sources are
//! (`envrc_sources`). Found by an attacker's review (host37): mise's configuration files are
//! report-only names (a run that changes one is reported), but what a project's committed one
//! names was left writable: `[env] _.source = "scripts/env.sh"` (mise runs it with bash and exports
//! what it sets: `EnvDiff::from_bash_script`), `_.file = "config/dev.env"` (a dotenv, JSON or YAML
//! file whose variables are exported: `PROMPT_COMMAND`, `BASH_ENV` and `NODE_OPTIONS` run code from
//! there) and `[hooks] enter = "./scripts/enter.sh"` each had a default run rewrite the file with
//! `hostRisks: []`, and with mise's shell hook (`mise activate`) the host's shell runs them at its
//! next prompt in the directory. mise's trust covers the configuration file, not what it names.
//!
//! Read as TOML (`toml_strings`): each string under `env._.source` or `env._.file` (a string, an
//! array, an inline table's `path`), and the programs of each command under `hooks`
//! (`envrc_runs::run_words`: a word holding a `/` in a command's place), and the programs of each
//! command a template's `exec(command="...")` runs (`mise_exec`), in any string and in a `.tool-versions`
//! (mise renders it whole as a template). A relative path is taken
//! from mise's `config_root` (the directory holding the file, or the project above `.config`,
//! `.mise` or `mise`, as mise's `config_root` takes it), `{{config_root}}` standing for it. A word
//! with another template (`{{env.HOME}}`), or starting with `~`, is not resolved; a glob (mise
//! globs `_.source`) cannot be kept and is said as a file not read whole (`capped`). What `_.path`
//! puts on the shell's `PATH` is not kept (a build writes there, as `PATH_add`'s directory), nor are
//! tasks no hook names (they run when the user asks: the project's code). Found by an attacker's
//! review (revc37): a hook naming a task (`enter = { task = "setup" }`, run at the prompt with its
//! `depends`), a current-shell hook's `source completions.sh` (mise's docs' example, printed into
//! the user's shell), `$MISE_PROJECT_ROOT/x.sh` and `[[watch_files]]`' `run` had their files
//! rewritten unsaid: now read too (`command_words`, `task_words`). A relative path in an `enter`,
//! `leave` or `cd` hook is taken from config_root, though mise runs those hooks in the user's cwd. A `_.file` of a reported name
//! (`.env`) is left to its report. At most `MAX_PROGRAMS` per file, then `capped`.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::config_reads::{self, Judged, Reads};
use super::mise_exec::exec_words;
use super::named_files::from_base;
pub use super::named_files::{Named, MAX_PROGRAMS};
use super::toml_strings;

/// What one file gave: each word it names and whether a `_.file` named it (at most
/// `MAX_PROGRAMS` + 1), and whether it could not be read whole (not TOML this reads, or a glob).
pub type Words = Rc<(Vec<(String, bool)>, bool)>;

/// mise's configuration files that the walk names (`names::REPORTED`), read as they are.
pub const FILES: &[&str] = &["mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", ".rtx.toml", ".rtx.local.toml", TOOL_VERSIONS];
/// asdf's file, which mise reads too: not TOML, but mise renders its whole text as a template.
const TOOL_VERSIONS: &str = ".tool-versions";
/// mise's configuration directories, read for these files in them.
pub const DIRS: &[&str] = &["mise", ".mise"];
const IN_DIRS: &[&str] = &["config.toml", "config.local.toml"];

/// Whether `entry` (a walked name) is a mise configuration this reads.
pub fn is_entry(entry: &Path) -> bool {
    entry.file_name().is_some_and(|n| FILES.iter().chain(DIRS).any(|f| n == *f))
}

/// The files the mise configuration `entry` (one of `FILES`, or one of `DIRS` for the files in it)
/// names, resolved from its config_root.
pub fn named(entry: &Path) -> Named {
    named_within(entry, &mut Reads::new(config_reads::BUDGET), config_reads::TOOL_PROGRAMS_IN_ALL)
}

/// `named`, reading through `reads` (each file once for all its names, within the plan's budget),
/// keeping at most `most` files; `capped` when there were more, or a file was not read whole.
pub fn named_within(entry: &Path, reads: &mut Reads<Words>, most: usize) -> Named {
    let Some(name) = entry.file_name() else { return Named::default() };
    let is_dir = DIRS.iter().any(|d| name == *d);
    let files: Vec<PathBuf> = match is_dir {
        true => IN_DIRS.iter().map(|f| entry.join(f)).collect(),
        false => vec![entry.to_path_buf()],
    };
    let root = config_root(entry);
    let mut out = Named::default();
    for file in files {
        let plain = file.file_name().is_some_and(|n| n == TOOL_VERSIONS);
        match reads.judge(&file, |text| Rc::new(if plain { tool_versions_words(text) } else { mise_words(text) })) {
            Judged::Judged(words) => keep_words(&words, &root, most, &mut out),
            Judged::Absent => {}
            Judged::Unjudged => out.capped = true,
        }
    }
    out
}

/// The words of a `.tool-versions`, which mise renders whole as a template: what its `exec` calls run.
fn tool_versions_words(text: &str) -> (Vec<(String, bool)>, bool) {
    let (words, unread) = exec_words(text);
    (words.into_iter().map(|w| (w, false)).collect(), unread)
}

/// mise's config_root of `entry` (a file, or a directory of `DIRS`, whose files have the root of
/// the directory): the directory holding it, or the one above `.config` (`.config/mise.toml`,
/// `.config/mise/config.toml`).
fn config_root(entry: &Path) -> PathBuf {
    let parent = entry.parent().unwrap_or(Path::new("/"));
    match parent.file_name().is_some_and(|n| n == ".config") {
        true => parent.parent().unwrap_or(Path::new("/")).to_path_buf(),
        false => parent.to_path_buf(),
    }
}

/// Keep into `out` the files `words` (one file's) name from `root`, within `most` in all.
fn keep_words(words: &(Vec<(String, bool)>, bool), root: &Path, most: usize, out: &mut Named) {
    let (words, unread) = words;
    out.capped |= *unread || words.len() > MAX_PROGRAMS;
    let reported = super::names::reported_defaults();
    let root_text = root.to_string_lossy();
    for (w, dotenv) in words.iter().take(MAX_PROGRAMS) {
        if out.full(most) {
            break;
        }
        if *dotenv && super::named_files::is_reported(Path::new(w), &reported) {
            continue;
        }
        let w = w.replace("{{config_root}}", &root_text).replace("{{ config_root }}", &root_text);
        if w.contains("{{") || w.contains("{%") || w.starts_with('~') {
            continue;
        }
        out.keep(&w, from_base(&w, root));
    }
}

/// Whether `key` is `env._.source` or `env._.file` (an inline table's `path` below it too), the
/// same under `vars` (which take `[env]`'s directives: found by an attacker's review, revc37, a
/// `[vars] _.source` script runs whenever the configuration loads), or `settings.env_file` (a
/// dotenv mise loads, found by the same review); the second when a dotenv.
fn env_file_key(key: &[String]) -> Option<bool> {
    let k: Vec<&str> = key.iter().map(String::as_str).collect();
    match k.as_slice() {
        ["env" | "vars", "_", d] | ["env" | "vars", "_", d, "path"] if *d == "source" || *d == "file" => Some(*d == "file"),
        ["settings", "env_file"] => Some(true),
        _ => None,
    }
}

/// The words of `text` (a mise configuration) naming files mise runs or loads, and whether it was
/// not read whole; at most `MAX_PROGRAMS` + 1 words, each once.
fn mise_words(text: &str) -> (Vec<(String, bool)>, bool) {
    let read = toml_strings::strings(text);
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut unread = read.unread;
    let mut push = |w: String, dotenv: bool| {
        if out.len() <= MAX_PROGRAMS && !w.is_empty() && !out.iter().any(|(o, _)| *o == w) {
            out.push((w, dotenv));
        }
    };
    let mut hooked: Vec<String> = Vec::new();
    for (key, value) in &read.found {
        let (words, exec_unread) = exec_words(value);
        unread |= exec_unread;
        for w in words {
            push(w, false);
        }
        if let Some(dotenv) = env_file_key(key) {
            // mise globs these (`xx::file::glob`): a pattern names files a run may make.
            if value.contains(['*', '?', '[']) {
                unread = true;
                continue;
            }
            push(value.clone(), dotenv);
        } else if at_prompt(key) && key.last().is_some_and(|k| k == "task") {
            // mise renders a hook's task name as a template: one with a tag cannot be known.
            unread |= value.contains("{{") || value.contains("{%");
            hooked.push(value.clone());
        } else if at_prompt(key) {
            command_words(value).into_iter().for_each(|w| push(w, false));
            hooked.extend(super::mise_run::run_tasks(value));
        }
    }
    let includes: Vec<&str> = read.found.iter().filter(|(k, _)| *k == ["task_config", "includes"]).map(|(_, v)| v.as_str()).collect();
    // A task file it includes is not read here: a hooked task may be defined there (rev38).
    unread |= !hooked.is_empty() && includes.iter().any(|i| i.ends_with(".toml") || i.contains("{{") || i.contains("{%"));
    for w in task_words(&read.found, hooked, &includes) {
        push(w, false);
    }
    (out, unread)
}

/// mise's names of the project's directory in what its hooks run (it sets both for them): read as
/// `{{config_root}}`. Found by an attacker's review (revc37): `cd = "$MISE_PROJECT_ROOT/x.sh"`.
const ROOT_VARIABLES: &[&str] = &["${MISE_PROJECT_ROOT}", "$MISE_PROJECT_ROOT", "${MISE_CONFIG_ROOT}", "$MISE_CONFIG_ROOT"];

/// The directories mise takes file tasks from (its default `task_config.includes`), from config_root.
const TASK_DIRS: &[&str] = &["mise-tasks", ".mise-tasks", ".mise/tasks", ".config/mise/tasks", "mise/tasks"];

/// Whether `key` holds what mise runs at the prompt by itself: anything under `hooks` (`enter`,
/// `leave`, `cd`, and `preinstall`/`postinstall` at installs), and a `[[watch_files]]` entry's
/// `run` or `task`, which the hook runs after a watched file changed (a run can change one).
fn at_prompt(key: &[String]) -> bool {
    match key.first().map(String::as_str) {
        Some("hooks") => true,
        Some("watch_files") => key.get(1).is_some_and(|k| k == "run" || k == "task"),
        _ => false,
    }
}

/// The files a command of a hook, a watch or a hooked task runs or has the user's shell source: the
/// programs of the project it runs (`envrc_runs::run_words`) and the word after `source` or `.`
/// (a current-shell hook's script is printed into the user's own shell: mise's docs' own example
/// is `script = "source completions.sh"`), as an `.envrc`'s lines are read.
fn command_words(text: &str) -> Vec<String> {
    let text = ROOT_VARIABLES.iter().fold(text.to_string(), |t, v| t.replace(v, "{{config_root}}"));
    super::envrc_sources::sourced_words(&text).into_iter().map(|(w, _)| w).collect()
}

/// What the tasks the hooks and watches name (`enter = { task = "setup" }`: mise runs `mise run
/// setup` at the prompt, its `depends` first) run: each such task's `run` and `shell` commands and
/// its `file`, those of the tasks it depends on or runs in turn, and its file task in each of
/// `TASK_DIRS` (`a:b` is `a/b` there), and the tasks a command runs with `mise run`
/// (`mise_run`) or names by their `alias`. Other tasks run when the user asks (a build's output, such
/// as `./target/release/app`, stays writable). At most `MAX_PROGRAMS` tasks.
fn task_words(found: &[(Vec<String>, String)], mut tasks: Vec<String>, includes: &[&str]) -> Vec<String> {
    // `[task_config] includes`' directories hold file tasks as `TASK_DIRS` do (found by an
    // attacker's review, rev38: a hooked task's mytasks/gen was rewritten unsaid); not a remote one.
    let dirs: Vec<&str> = TASK_DIRS.iter().copied().chain(includes.iter().copied().filter(|i| !i.ends_with(".toml") && !i.contains("://"))).collect();
    let task_of = |key: &[String]| (key.len() >= 2 && key[0] == "tasks").then(|| key[1].clone());
    let mut words = Vec::new();
    let mut i = 0;
    while i < tasks.len() && i < MAX_PROGRAMS {
        let task = tasks[i].clone();
        i += 1;
        if task.split(['/', ':']).any(|part| part == "..") {
            continue;
        }
        // `mise run b` runs the task whose `alias` is b (found by an attacker's review, rev38).
        for (key, _) in found.iter().filter(|(k, v)| k.len() == 3 && k[2] == "alias" && *v == task) {
            if let Some(named) = task_of(key).filter(|n| !tasks.contains(n)) {
                tasks.push(named);
            }
        }
        words.extend(dirs.iter().map(|d| format!("{}/{}", d.trim_end_matches('/'), task.replace(':', "/"))));
        for (key, value) in found.iter().filter(|(k, _)| task_of(k).as_deref() == Some(task.as_str())) {
            let more = match key.get(2).map(String::as_str) {
                Some("depends" | "depends_post" | "wait_for") => value.split_whitespace().next().map(str::to_string),
                _ if key.len() > 2 && key.last().is_some_and(|k| k == "task") => Some(value.clone()),
                None | Some("run" | "shell") => {
                    words.extend(command_words(value));
                    tasks.extend(super::mise_run::run_tasks(value).into_iter().filter(|t| !tasks.contains(t)).collect::<Vec<_>>());
                    None
                }
                Some("file") => {
                    words.push(value.clone());
                    None
                }
                _ => None,
            };
            if let Some(m) = more.filter(|m| !tasks.contains(m)) {
                tasks.push(m);
            }
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        mise_words(text).0.into_iter().map(|(w, _)| w).collect()
    }

    #[test]
    fn finds_what_a_mise_configuration_runs_and_loads() {
        let text = "[env]\nNODE_ENV = \"x/y\"\n_.source = \"scripts/env.sh\"\n_.file = ['a.env', { path = \"b.json\", redact = true }]\n_.path = [\"./bin\"]\n\
            [hooks]\nenter = \"./scripts/enter.sh --quiet\"\nleave = [\"echo bye\", \"bash tools/leave.sh\"]\n[tasks.build]\nrun = \"./no/task.sh\"\n";
        assert_eq!(words(text), ["scripts/env.sh", "a.env", "b.json", "./scripts/enter.sh", "tools/leave.sh"]);
        assert_eq!(words("env._.source = { path = \"x.sh\" }\n"), ["x.sh"]);
        assert_eq!(words("[env]\n_ = { source = [\"s.sh\"], file = \"f.env\" }\n"), ["s.sh", "f.env"]);
        assert!(mise_words("[env]\n_.source = \"scripts/*.sh\"\n").1, "a glob cannot be kept: said");
        assert!(mise_words("[env\n").1, "not TOML: said");
        // Tera's exec runs a command: in any string of a configuration, and in a .tool-versions.
        let text = "[env]\nV = \"{{ exec(command='./scripts/version.sh --short') }}\"\n[tools]\nnode = \"{{exec(command=`tools/nv.sh`)}}\"\n";
        assert_eq!(words(text), ["./scripts/version.sh", "tools/nv.sh"]);
    }

    /// Found by an attacker's review (revc37): a hooked task (with what it depends on), a
    /// current-shell hook's `source`, mise's root variables and a watch's command.
    #[test]
    fn finds_what_hooked_tasks_shell_hooks_and_watches_run() {
        let text = "[tasks.setup]\nrun = \"./scripts/setup.sh\"\ndepends = [\"deps --fast\"]\n[tasks.deps]\nfile = \"scripts/deps.sh\"\nrun = [{ task = \"ns:gen\" }]\n\
            [tasks.release]\nrun = \"./target/release/app\"\n[tasks]\nlint = \"tools/lint\"\n\
            [hooks]\nenter = [{ task = \"setup\" }, { shell = \"bash\", script = \"source completions.sh\" }]\ncd = \"\\\"$MISE_PROJECT_ROOT\\\"/scripts/cd.sh\"\n\
            [[watch_files]]\npatterns = [\"src/**/*.rs\"]\nrun = \"${MISE_CONFIG_ROOT}/scripts/fmt.sh\"\n[[watch_files]]\npatterns = [\"uv.lock\"]\ntask = \"lint\"\n";
        let found = words(text);
        for w in ["completions.sh", "{{config_root}}/scripts/cd.sh", "{{config_root}}/scripts/fmt.sh", "./scripts/setup.sh", "mise-tasks/setup", ".mise/tasks/setup", "scripts/deps.sh", "mise-tasks/ns/gen", "tools/lint"] {
            assert!(found.iter().any(|f| f == w), "{w}: {found:?}");
        }
        assert!(!found.iter().any(|f| f.contains("target/release") || f.contains("src/")), "{found:?}");
        assert!(words("[hooks]\nenter = { task = \"../../x\" }\n").is_empty());
        assert_eq!(words("[vars]\n_.source = \"scripts/vars.sh\"\n_.file = { path = \"v.json\" }\n[settings]\nenv_file = \"config/dev.env\"\n"), ["scripts/vars.sh", "v.json", "config/dev.env"]);
    }

    /// Found by an attacker's review (rev38): tasks run through `mise run` or named by an alias.
    #[test]
    fn finds_tasks_run_through_mise_run_or_an_alias() {
        let text = "[tasks.setup]\nrun = \"./scripts/setup.sh\"\n[tasks.deps]\nrun = \"mise run gen ::: lint\"\n[tasks.lint]\nrun = \"tools/lint.sh\"\n\
            [tasks.boot]\nalias = [\"b\"]\nrun = \"./scripts/boot.sh\"\n[tasks.other]\nrun = \"./target/app\"\n\
            [hooks]\nenter = \"mise run setup\"\nleave = \"mise r deps\"\ncd = { task = \"b\" }\n";
        let found = words(text);
        for w in ["./scripts/setup.sh", "mise-tasks/gen", "tools/lint.sh", "./scripts/boot.sh", "mise-tasks/b", "mise-tasks/boot"] {
            assert!(found.iter().any(|f| f == w), "{w}: {found:?}");
        }
        assert!(!found.iter().any(|f| f.contains("target")), "{found:?}");
        assert!(mise_words("[hooks]\nenter = { task = \"{{ env.T }}\" }\n").1, "a task name with a template: said");
        // [task_config] includes: a directory's file tasks are kept, a task file cannot be read here: said.
        let (found, unread) = mise_words("[task_config]\nincludes = [\"tasks.toml\", \"mytasks/\"]\n[hooks]\nenter = { task = \"gen\" }\n");
        assert!(unread && found.iter().any(|(w, _)| w == "mytasks/gen"), "{found:?}");
        assert!(!mise_words("[task_config]\nincludes = [\"tasks.toml\"]\n").1, "no hooked task: nothing to say");
    }

    #[test]
    fn resolves_from_mise_config_root() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        for d in ["scripts", ".config/mise", ".mise"] {
            std::fs::create_dir_all(w.join(d)).unwrap();
        }
        std::fs::write(w.join("mise.toml"), "[env]\n_.source = \"scripts/a.sh\"\n_.file = [\".env\", \"missing/x.env\"]\n[hooks]\nenter = \"{{config_root}}/scripts/b.sh\"\ncd = \"{{env.HOME}}/c.sh\"\n").unwrap();
        assert_eq!(named(&w.join("mise.toml")), Named { programs: vec![w.join("scripts/a.sh"), w.join("scripts/b.sh")], capped: false });
        std::fs::write(w.join(".config/mise/config.toml"), "env._.source = \"scripts/c.sh\"\n").unwrap();
        assert_eq!(named(&w.join(".config/mise")).programs, [w.join("scripts/c.sh")], "the project above .config");
        std::fs::write(w.join(".mise/config.local.toml"), "env._.source = \"{{ config_root }}/scripts/d.sh\"\n").unwrap();
        assert_eq!(named(&w.join(".mise")).programs, [w.join("scripts/d.sh")]);
        assert_eq!(named(&w.join(".mise.toml")), Named::default());
        std::fs::write(w.join(".tool-versions"), "node {{exec(command='scripts/nv.sh')}}\n").unwrap();
        assert_eq!(named(&w.join(".tool-versions")).programs, [w.join("scripts/nv.sh")]);
    }
}
