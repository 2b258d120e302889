//! The tasks a shell command runs through mise's command line. Found by an attacker's review
//! (rev38): a hook, a watch or a hooked task that runs a task as a user does by hand
//! (`enter = "mise run setup"`, `mise r fmt`, a task's `run = "mise run gen ::: lint"`, which runs
//! both) had mise run that task at the prompt, and what it ran was rewritten by a default run with
//! `hostRisks: []`: only `{ task = "setup" }` was read as naming a task.
//!
//! Read: each `mise` (or a path ending `/mise`) word, its global flags passed over (`-C`, `--cd`,
//! `-E`, `--env`, `-j`, `--jobs` with their values), then `run`, `r`, or `task(s) run`: the first
//! word after it that is no flag, and the first after each `:::`. Found by an attacker's review
//! (host39): mise's shorthand `mise <task>` (a name that is no subcommand of mise's: `mise setup`)
//! and `mise watch <task>` (`w`, which runs it and again on each change) ran a task too, and what
//! it ran was rewritten unsaid: a word that is no subcommand `SUBCOMMANDS` knows is read as the
//! task (a subcommand missing there is taken for a task: the safe side, a file kept more).

/// Words that end a command (statements, pipes, subshells).
const SEPARATORS: &[char] = &[';', '&', '|', '\n', '(', ')', '`', '{', '}'];
/// mise's global flags that take a value, so the word after them is no subcommand.
const VALUED_FLAGS: &[&str] = &["-C", "--cd", "-E", "--env", "-j", "--jobs"];

/// mise's subcommands and their aliases (mise's `Commands`), but `run`, `r`, `watch`, `w`,
/// `task(s)` and `t`, which run tasks: any other word after `mise` and its flags names a task.
const SUBCOMMANDS: &[&str] = &[
    "activate", "alias", "a", "asdf", "backends", "b", "bin-paths", "cache", "completion", "config", "cfg", "current",
    "deactivate", "direnv", "doctor", "dr", "edit", "en", "env", "e", "exec", "x", "external", "fmt", "generate", "gen", "g",
    "global", "help", "hook-env", "hook-not-found", "implode", "install", "i", "install-into", "latest", "link", "ln",
    "local", "lock", "ls", "list", "ls-remote", "mcp", "outdated", "plugins", "plugin", "p", "prune", "registry",
    "render-help", "reshim", "search", "self-update", "set", "settings", "shell", "sh", "shell-alias", "sync",
    "test-tool", "tool", "tool-stub", "trust", "uninstall", "unset", "unuse", "rm", "remove", "upgrade", "up", "usage",
    "use", "u", "version", "v", "where", "which",
];

/// The names of the tasks `text` (a shell command) runs with `mise run`, in order, each once.
pub fn run_tasks(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for segment in text.split(SEPARATORS) {
        let words: Vec<String> = segment.split_whitespace().map(|w| w.replace(['"', '\''], "")).collect();
        let Some(mise) = words.iter().position(|w| w == "mise" || w.ends_with("/mise")) else { continue };
        let Some(args) = after_run(&words[mise + 1..]) else { continue };
        let mut next_is_task = true;
        for w in args {
            if w == ":::" {
                next_is_task = true;
            } else if next_is_task && !w.starts_with('-') {
                next_is_task = false;
                if !out.contains(w) {
                    out.push(w.clone());
                }
            }
        }
    }
    out
}

/// The words after `run` (`r`, `task run`, `tasks run`) among `words` (those after `mise`), past
/// its global flags; `None` when the command is another of mise's.
fn after_run(words: &[String]) -> Option<&[String]> {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if VALUED_FLAGS.contains(&w.as_str()) {
            i += 2;
        } else if w.starts_with('-') {
            i += 1;
        } else if w == "task" || w == "tasks" || w == "t" {
            return matches!(words.get(i + 1).map(String::as_str), Some("run" | "r")).then(|| &words[i + 2..]);
        } else if matches!(w.as_str(), "run" | "r" | "watch" | "w") {
            return Some(&words[i + 1..]);
        } else {
            // The shorthand `mise setup`: the word itself is the task.
            return (!SUBCOMMANDS.contains(&w.as_str())).then(|| &words[i..]);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_tasks_mise_run_runs() {
        assert_eq!(run_tasks("mise run setup"), ["setup"]);
        assert_eq!(run_tasks("echo hi && mise r fmt --check; ~/.local/bin/mise -C sub --quiet run --force gen ::: lint -x ::: ns:x"), ["fmt", "gen", "lint", "ns:x"]);
        assert_eq!(run_tasks("mise tasks run \"a\" | tee log\n(mise task r b)"), ["a", "b"]);
        assert!(run_tasks("mise install; mise exec -- node x.js; mise tasks ls; promise run z; mise").is_empty());
        // Found by an attacker's review (host39): the shorthand and `mise watch`.
        assert_eq!(run_tasks("mise setup; mise --quiet -C sub build --force ::: lint; mise w dev; mise watch -t test; mise t r ci"), ["setup", "build", "lint", "dev", "test", "ci"]);
        assert!(run_tasks("mise use node@20; mise x -- a; mise i; mise ls; mise trust; mise env -s bash").is_empty());
    }
}
