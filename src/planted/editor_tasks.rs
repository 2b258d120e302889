//! The strings of a VS Code `tasks.json` that name what runs when the folder opens, for
//! `editor_programs` (found by an attacker's review, host36: a committed task with
//! `"runOptions": { "runOn": "folderOpen" }` named `tools/bootstrap.sh`, a run rewrote it with
//! `hostRisks: []`, and VS Code's next open of the trusted folder ran it, no prompt).
//!
//! Which tasks: those whose `runOptions.runOn` is `folderOpen`, and every task they `dependsOn`
//! (by label, a string or a list; VS Code runs those first), to any depth. Of each: all the
//! strings of `command` and `args` (a string, a list, or `{ "value": ..., "quoting": ... }`: the
//! whole command line is what runs, `sh scripts/watch.sh` as much as `tools/bootstrap.sh`), and
//! its `options` (`editor_programs` takes their `shell.executable` and `env` as settings' are),
//! with the same of the task's `linux`, `osx` and `windows` forms, and the file's own `options`
//! (and its platforms'), which every task gets. A task run on demand is left: the project's code
//! as the user runs it. This module knows the file's shape; `editor_programs` takes the strings.

use serde_json::Value;

/// Where a task (or the file) gives forms of itself per platform.
const PLATFORMS: &[&str] = &["linux", "osx", "windows"];

/// A value of a `tasks.json` that holds what runs when the folder opens.
#[derive(Debug, PartialEq)]
pub enum Part<'a> {
    /// A task's `command` or `args`: each of its strings is part of the command line.
    CommandLine(&'a Value),
    /// An `options` object: its programs are taken as settings' are (`shell.executable`, `env`).
    Options(&'a Value),
}

/// The parts of the tasks the file `file` runs when the folder opens, with the file's own
/// `options` (which every task gets) when there is any such task.
pub fn parts(file: &Value) -> Vec<Part<'_>> {
    let tasks = on_open(file);
    let mut out = Vec::new();
    if !tasks.is_empty() {
        options(file, &mut out);
        for t in tasks {
            task(t, &mut out);
        }
    }
    out
}

/// The tasks run when the folder opens: the `folderOpen` ones and, to any depth, those they
/// depend on, each once.
fn on_open(file: &Value) -> Vec<&Value> {
    let tasks: &[Value] = file.get("tasks").and_then(Value::as_array).map_or(&[], Vec::as_slice);
    let label = |t: &Value| t.get("label").or_else(|| t.get("taskName")).and_then(Value::as_str).map(str::to_string);
    let mut run: Vec<usize> = (0..tasks.len()).filter(|&i| tasks[i].pointer("/runOptions/runOn").and_then(Value::as_str) == Some("folderOpen")).collect();
    let mut next = 0;
    while next < run.len() {
        let deps: Vec<String> = match tasks[run[next]].get("dependsOn") {
            Some(Value::String(d)) => vec![d.clone()],
            Some(Value::Array(ds)) => ds.iter().filter_map(Value::as_str).map(str::to_string).collect(),
            _ => Vec::new(),
        };
        for d in deps {
            for j in (0..tasks.len()).filter(|&j| label(&tasks[j]).as_deref() == Some(d.as_str())) {
                if !run.contains(&j) {
                    run.push(j);
                }
            }
        }
        next += 1;
    }
    run.into_iter().map(|i| &tasks[i]).collect()
}

/// A task's command line and options, and its platforms' forms', into `out`.
fn task<'a>(t: &'a Value, out: &mut Vec<Part<'a>>) {
    out.extend(["command", "args"].iter().filter_map(|k| t.get(*k)).map(Part::CommandLine));
    options(t, out);
    for p in PLATFORMS.iter().filter_map(|p| t.get(*p)) {
        task(p, out);
    }
}

/// `scope`'s `options` and its platforms' `options`.
fn options<'a>(scope: &'a Value, out: &mut Vec<Part<'a>>) {
    let platforms = PLATFORMS.iter().filter_map(|p| scope.get(*p));
    out.extend(std::iter::once(scope).chain(platforms).filter_map(|s| s.get("options")).map(Part::Options));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_the_tasks_run_on_open_and_what_they_depend_on() {
        let file: Value = serde_json::json!({
            "options": { "cwd": "x" },
            "tasks": [
                { "label": "up", "command": "a", "dependsOn": "dep", "runOptions": { "runOn": "folderOpen" } },
                { "label": "dep", "args": ["b"], "dependsOn": ["deeper", "up"] },
                { "label": "deeper", "linux": { "command": "c" } },
                { "label": "deploy", "command": "d" },
            ]
        });
        let cmd = |s: &str| serde_json::Value::String(s.to_string());
        let parts = parts(&file);
        assert_eq!(parts.len(), 4, "{parts:?}");
        assert_eq!(parts[0], Part::Options(&file["options"]));
        assert_eq!(parts[1..], [Part::CommandLine(&cmd("a")), Part::CommandLine(&file["tasks"][1]["args"]), Part::CommandLine(&cmd("c"))]);
        let none = serde_json::json!({ "options": { "cwd": "x" }, "tasks": [{ "label": "b", "command": "d" }] });
        assert_eq!(super::parts(&none), [], "no task runs on open: nothing");
    }
}
