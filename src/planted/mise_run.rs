//! The tasks a shell command runs through mise's command line. Found by an attacker's review
//! (rev38): a hook, a watch or a hooked task that runs a task as a user does by hand
//! (`enter = "mise run setup"`, `mise r fmt`, a task's `run = "mise run gen ::: lint"`, which runs
//! both) had mise run that task at the prompt, and what it ran was rewritten by a default run with
//! `hostRisks: []`: only `{ task = "setup" }` was read as naming a task.
//!
//! Read: each `mise` (or a path ending `/mise`) word, its global flags passed over (`-C`, `--cd`,
//! `-E`, `--env`, `-j`, `--jobs` with their values), then `run`, `r`, or `task(s) run`: the first
//! word after it that is no flag, and the first after each `:::`. mise's shorthand `mise <task>`
//! (a name that is no subcommand) is not read: a task's name is no different from a word.

/// Words that end a command (statements, pipes, subshells).
const SEPARATORS: &[char] = &[';', '&', '|', '\n', '(', ')', '`', '{', '}'];
/// mise's global flags that take a value, so the word after them is no subcommand.
const VALUED_FLAGS: &[&str] = &["-C", "--cd", "-E", "--env", "-j", "--jobs"];

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
        } else if w == "task" || w == "tasks" {
            return matches!(words.get(i + 1).map(String::as_str), Some("run" | "r")).then(|| &words[i + 2..]);
        } else {
            return matches!(w.as_str(), "run" | "r").then(|| &words[i + 1..]);
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
    }
}
