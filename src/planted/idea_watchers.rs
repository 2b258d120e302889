//! The strings of a JetBrains project's `.idea/watcherTasks.xml` that name what its File Watchers
//! run (and of its run configurations), for `editor_programs` to take as a task's command line. Found by an attacker's review
//! (hostb37): `.idea` is a protected name, but a committed watcher's
//! `<option name="program" value="$ProjectFileDir$/tools/fmt.sh" />` (or `sh` with
//! `scripts/lint.sh` in its `arguments`) named a program a default run rewrote with
//! `hostRisks: []`; the IDE runs a watcher whenever a matching file is saved (or changes on disk,
//! `runOnExternalChanges`), with no prompt once the project is trusted.
//!
//! The file is the IDE's own serialization: `<TaskOptions>` elements holding
//! `<option name="..." value="..." />` and `<envs><env name="..." value="..." /></envs>`. Only
//! those elements' attributes are read (a tag scanner, not an XML parser: the IDE writes no
//! CDATA or comments there, and a tag it cannot place is skipped as the IDE skips it); a value's
//! entities (`&quot;`, `&amp;`, `&#47;`) are decoded. The IDE's macros for the project's directory
//! (`$ProjectFileDir$`, and `$PROJECT_DIR$`, which it writes for a path chosen below the
//! project) become `${workspaceFolder}`; `$USER_HOME$` becomes `~` (not resolved, as elsewhere).
//! A disabled watcher is read too, the generous side (one click enables it).
//!
//! The same scanner reads the shared run configurations a project's startup tasks start
//! (`RUN_CONFIGURATION`; `editor_programs` reads them while `.idea/startup.xml` lists a task).

/// The macros standing for the directory holding `.idea`; `$ContentRoot$` and `$ModuleFileDir$`
/// are that directory in a project of one module, the usual case, and taken as it.
const PROJECT_DIR_MACROS: &[&str] = &["$ProjectFileDir$", "$PROJECT_DIR$", "$ContentRoot$", "$ModuleFileDir$", "$MODULE_DIR$"];

/// What a file of the IDE's gives: each string as `(key, value)` (the key `command` for a program or
/// its arguments, `env` and the variable's name for an environment), and the working directories.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Watchers {
    pub strings: Vec<(Vec<String>, String)>,
    pub cwds: Vec<String>,
}

/// Which `<option name="...">`s of a file name what runs, and which the directory it runs in.
pub struct Options {
    pub programs: &'static [&'static str],
    pub cwds: &'static [&'static str],
}

/// A File Watcher's (`watcherTasks.xml`).
pub const WATCHER: Options = Options { programs: &["program", "arguments"], cwds: &["workingDir"] };

/// A run configuration's (`.idea/runConfigurations/*.xml`, `.run/*.run.xml`) that a startup task
/// starts: a Shell Script's script and interpreter with their options, a Python one's script,
/// interpreter (`SDK_HOME`) and parameters, an Application's or a generic one's program and its
/// parameters.
pub const RUN_CONFIGURATION: Options = Options {
    programs: &["SCRIPT_PATH", "SCRIPT_OPTIONS", "INTERPRETER_PATH", "INTERPRETER_OPTIONS", "SCRIPT_NAME", "SDK_HOME", "PARAMETERS", "PROGRAM_PARAMETERS", "PROGRAM_PATH", "EXE_PATH"],
    cwds: &["SCRIPT_WORKING_DIRECTORY", "WORKING_DIRECTORY", "workingDir"],
};

/// The strings of `text` (a `watcherTasks.xml`), at most `most` (then stops).
pub fn strings(text: &str, most: usize) -> Watchers {
    strings_of(text, &WATCHER, most)
}

/// The strings of `text` the `options` name, and every `<env>`'s, at most `most` (then stops).
pub fn strings_of(text: &str, options: &Options, most: usize) -> Watchers {
    let mut out = Watchers::default();
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        let end = tag_end(rest);
        let tag = &rest[..end];
        rest = &rest[end..];
        if out.strings.len() > most {
            break;
        }
        let Some((element, attrs)) = tag.split_once(char::is_whitespace) else { continue };
        let (Some(name), Some(value)) = (attribute(attrs, "name"), attribute(attrs, "value")) else { continue };
        let value = macros(&value);
        match element {
            "option" if options.programs.contains(&name.as_str()) => out.strings.push((vec!["command".to_string()], value)),
            "option" if options.cwds.contains(&name.as_str()) && !out.cwds.contains(&value) => out.cwds.push(value),
            "env" => out.strings.push((vec!["env".to_string(), name], value)),
            _ => {}
        }
    }
    out
}

/// The components listing startup tasks: the shared ones' (`.idea/startup.xml`) and the local
/// ones' (`.idea/workspace.xml`, ProjectStartupLocalConfiguration).
const STARTUP_COMPONENTS: &[&str] = &["\"ProjectStartupSharedConfiguration\"", "\"ProjectStartupLocalConfiguration\""];

/// Whether `text` (a `.idea/startup.xml` or `.idea/workspace.xml`) lists a run configuration a
/// startup task starts: a `<configuration` within a startup component.
pub fn lists_startup_tasks(text: &str) -> bool {
    STARTUP_COMPONENTS.iter().any(|c| {
        text.match_indices(c).any(|(at, _)| {
            let within = &text[at..];
            within[..within.find("</component>").unwrap_or(within.len())].contains("<configuration ")
        })
    })
}

/// Where the tag `s` begins ends: its first `>` outside a quoted attribute value (a hand-written
/// file may hold a raw `>` in one, `value="a>b"`, which XML allows; the IDE writes `&gt;`), or a
/// comment's `-->`.
fn tag_end(s: &str) -> usize {
    // A comment ends at `-->` whatever quotes it holds (`<!-- don't -->`).
    if let Some(body) = s.strip_prefix("!--") {
        return body.find("-->").map_or(s.len(), |at| at + 3 + 2);
    }
    let mut quote = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (None, '>') => return i,
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            _ => {}
        }
    }
    s.len()
}

/// The value of the attribute `name` in a tag's attributes `attrs`, its entities decoded.
fn attribute(attrs: &str, name: &str) -> Option<String> {
    let mut rest = attrs;
    loop {
        let eq = rest.find('=')?;
        let key = rest[..eq].trim();
        let after = rest[eq + 1..].trim_start();
        let quote = after.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let close = after[1..].find(quote)?;
        if key == name {
            return Some(entities(&after[1..1 + close]));
        }
        rest = &after[2 + close..];
    }
}

/// `s` with XML's entities decoded (an unknown one kept as written).
fn entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(semi) = rest.find(';') else { break };
        let decoded = match &rest[1..semi] {
            "quot" => Some('"'),
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "apos" => Some('\''),
            e if e.starts_with("#x") || e.starts_with("#X") => u32::from_str_radix(&e[2..], 16).ok().and_then(char::from_u32),
            e if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[semi + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `s` with the project directory's macros as `${workspaceFolder}` and the home's as `~`.
fn macros(s: &str) -> String {
    let mut out = s.replace("$USER_HOME$", "~");
    for m in PROJECT_DIR_MACROS {
        out = out.replace(m, "${workspaceFolder}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_programs_arguments_environment_and_working_directories() {
        let text = r#"<?xml version="1.0" encoding="UTF-8"?>
<project version="4">
  <component name="ProjectTasksOptions">
    <TaskOptions isEnabled="false">
      <option name="arguments" value="scripts/lint.sh &quot;$FilePath$&quot; &amp;&amp; tools&#47;b" />
      <option name="name" value="tools/not-a-program" />
      <option name='program' value='$PROJECT_DIR$/tools/fmt.sh' />
      <option name="workingDir" value="$ProjectFileDir$/sub" />
      <envs>
        <env name="NODE_OPTIONS" value="--require=$USER_HOME$/h.js" />
      </envs>
    </TaskOptions>
  </component>
</project>"#;
        let got = strings(text, 100);
        let command = |s: &str| (vec!["command".to_string()], s.to_string());
        let want = vec![
            command("scripts/lint.sh \"$FilePath$\" && tools/b"),
            command("${workspaceFolder}/tools/fmt.sh"),
            (vec!["env".to_string(), "NODE_OPTIONS".to_string()], "--require=~/h.js".to_string()),
        ];
        assert_eq!(got, Watchers { strings: want, cwds: vec!["${workspaceFolder}/sub".to_string()] });
        assert_eq!(entities("&bogus; &#xZZ; &"), "&bogus; &#xZZ; &", "unknown entities as written");
        let component = |name: &str, inner: &str| format!("<component name=\"{name}\">{inner}</component>");
        let listed = "<configurations><configuration id=\"Shell Script.x\" name=\"x\" /></configurations>";
        assert!(lists_startup_tasks(&component("ProjectStartupSharedConfiguration", listed)));
        assert!(lists_startup_tasks(&(component("RunManager", "") + &component("ProjectStartupLocalConfiguration", listed))));
        assert!(!lists_startup_tasks(&(component("ProjectStartupLocalConfiguration", "<configurations />") + &component("RunManager", "<configuration name=\"x\" type=\"y\" />"))), "a run configuration is no startup task");
        let raw = strings("<option name=\"program\" value=\"tools/a>b.sh --x=1\" /><option name=\"arguments\" value='tools/c.sh' />", 100);
        assert_eq!(raw.strings.iter().map(|(_, v)| v.as_str()).collect::<Vec<_>>(), ["tools/a>b.sh --x=1", "tools/c.sh"], "a raw > in a value, single quotes");
        let commented = strings("<!-- the team's formatter --><option name=\"program\" value=\"tools/fmt.sh\" />", 100);
        assert_eq!(commented.strings.len(), 1, "a quote in a comment hides nothing after it");
        assert_eq!(strings("<option name=\"program\" value=\"unclosed", 100), Watchers::default());
        let many = "<option name=\"program\" value=\"a/b\"/>".repeat(50);
        assert_eq!(strings(&many, 10).strings.len(), 11, "stops past the bound, which says the file capped");
    }
}
