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
//! with the same of the task's `linux`, `osx` and `windows` forms, and the same of the file's own
//! top level (and its platforms'): its `options` every task gets, and its global `command` and
//! `args`, which a task with no command takes (VS Code's `CustomTask.fillGlobals`). A task is named
//! by its `label`, `taskName` or `identifier` (VS Code's `Task.matches` takes the label or the
//! identifier; a 0.1.0 file names by `taskName`), and the platforms' own `tasks` lists
//! (`"linux": { "tasks": [...] }`) are read beside `tasks`, as VS Code parses them (found by an
//! attacker's review, rev36: each of those spellings had a folder-open task's program rewritten
//! unsaid). A task run on demand is left: the project's code as the user runs it. This module
//! knows the file's shape; `editor_programs` takes the strings.

use serde_json::Value;

/// Where a task (or the file) gives forms of itself per platform.
const PLATFORMS: &[&str] = &["linux", "osx", "windows"];

/// The keys a `dependsOn` string may name a task by (the generous side: each of them).
const NAMES: &[&str] = &["label", "taskName", "identifier"];

/// A value of a `tasks.json` that holds what runs when the folder opens.
#[derive(Debug, PartialEq)]
pub enum Part<'a> {
    /// A task's `command` or `args`: each of its strings is part of the command line.
    CommandLine(&'a Value),
    /// An `options` object: its programs are taken as settings' are (`shell.executable`, `env`).
    Options(&'a Value),
}

/// The parts of the tasks the file `file` runs when the folder opens, with the file's own
/// `options` (which every task gets) and global command line (which a task with none takes) when
/// there is any such task.
pub fn parts(file: &Value) -> Vec<Part<'_>> {
    let tasks = on_open(file);
    let mut out = Vec::new();
    if !tasks.is_empty() {
        task(file, &mut out);
        for t in tasks {
            task(t, &mut out);
        }
    }
    out
}

/// The tasks run when the folder opens: the `folderOpen` ones and, to any depth, those they
/// depend on, each once.
fn on_open(file: &Value) -> Vec<&Value> {
    let lists = std::iter::once(file).chain(PLATFORMS.iter().filter_map(|p| file.get(*p)));
    let tasks: Vec<&Value> = lists.filter_map(|l| l.get("tasks").and_then(Value::as_array)).flatten().collect();
    let named = |t: &Value, d: &str| NAMES.iter().any(|k| t.get(*k).and_then(Value::as_str) == Some(d));
    let mut run: Vec<usize> = (0..tasks.len()).filter(|&i| tasks[i].pointer("/runOptions/runOn").and_then(Value::as_str) == Some("folderOpen")).collect();
    let mut next = 0;
    while next < run.len() {
        let deps: Vec<String> = match tasks[run[next]].get("dependsOn") {
            Some(Value::String(d)) => vec![d.clone()],
            Some(Value::Array(ds)) => ds.iter().filter_map(Value::as_str).map(str::to_string).collect(),
            _ => Vec::new(),
        };
        for d in deps {
            for j in (0..tasks.len()).filter(|&j| named(tasks[j], &d)) {
                if !run.contains(&j) {
                    run.push(j);
                }
            }
        }
        next += 1;
    }
    run.into_iter().map(|i| tasks[i]).collect()
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

    /// The spellings VS Code's parser accepts that a label-only, `tasks`-only reader missed
    /// (rev36): the file's global command line, a dependency by `identifier` or `taskName`, and a
    /// platform's own `tasks` list.
    #[test]
    fn takes_the_global_command_identifiers_and_platform_task_lists() {
        let file: Value = serde_json::json!({
            "command": "g", "args": ["ga"], "linux": { "command": "lg", "tasks": [{ "label": "l", "command": "lt", "runOptions": { "runOn": "folderOpen" } }] },
            "tasks": [
                { "label": "up", "dependsOn": ["by-id", "old"], "runOptions": { "runOn": "folderOpen" } },
                { "label": "Shown", "identifier": "by-id", "command": "i" },
                { "taskName": "old", "command": "t" },
                { "label": "deploy", "command": "d" },
            ]
        });
        let s = |v: &str| serde_json::Value::String(v.to_string());
        let lines: Vec<&Value> = parts(&file).into_iter().filter_map(|p| match p { Part::CommandLine(v) => Some(v), Part::Options(_) => None }).collect();
        assert_eq!(lines, [&s("g"), &file["args"], &s("lg"), &s("lt"), &s("i"), &s("t")]);
    }
}
