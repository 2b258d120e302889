//! The commands a mise template's `exec` runs. mise renders a configuration's strings (and a
//! `.tool-versions`' whole text) with Tera, whose `exec(command="...")` runs the command with the
//! shell from the configuration's directory (mise's `tera_exec`) whenever the environment is
//! resolved, at every prompt with mise's shell hook (found by an attacker's review, host37).
//!
//! Found by an attacker's review (rev38): the reader took `command` only as the call's first
//! argument, right after `exec(`, but mise's exec takes `cache_key` and `cache_duration` beside
//! it in any order (docs/templates.md, "Exec Options"), and Tera takes blanks between a call's name
//! and its `(`: `exec(cache_key='a', command='./scripts/a.sh')` and `exec (command='b.sh')` ran
//! scripts a default run rewrote with `hostRisks: []`. Now each call's keyword arguments are read
//! in turn; a value that is not one quoted string (a variable, strings joined by `~`, a filter), or
//! an argument list this cannot read, makes the text unread: the caller says so (`capped`), as for
//! a glob, since the command cannot be known.

use super::named_files::MAX_PROGRAMS;

/// The programs of the commands `text`'s `exec` calls run (at most `MAX_PROGRAMS` + 1), and
/// whether a call's command could not be read. A Tera string is quoted by `"`, `'` or a backquote
/// and holds no escape.
pub fn exec_words(text: &str) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let mut unread = false;
    let mut from = 0;
    while let Some(at) = text[from..].find("exec") {
        let start = from + at;
        from = start + "exec".len();
        if text[..start].bytes().next_back().is_some_and(is_name_byte) || text[from..].bytes().next().is_some_and(is_name_byte) {
            continue; // part of another name (`myexec`, `exec_x`)
        }
        let Some(args) = text[from..].trim_start_matches(BLANKS).strip_prefix('(') else { continue };
        match command_of(args) {
            Some(Some(command)) => {
                for w in command.lines().flat_map(super::envrc_runs::run_words) {
                    if out.len() <= MAX_PROGRAMS && !out.contains(&w) {
                        out.push(w);
                    }
                }
            }
            Some(None) => {} // no command: mise fails the template, runs nothing
            None => unread = true,
        }
    }
    (out, unread)
}

const BLANKS: &[char] = &[' ', '\t', '\r', '\n'];

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The `command` argument of the call whose arguments begin `args` (after its `(`): `Some(None)`
/// when the call has none, `None` when an argument is not `name = "string"` (what it runs cannot
/// be read).
fn command_of(args: &str) -> Option<Option<&str>> {
    let mut rest = args;
    loop {
        rest = rest.trim_start_matches(BLANKS);
        if rest.starts_with(')') {
            return Some(None);
        }
        let name_len = rest.bytes().take_while(|b| is_name_byte(*b)).count();
        let (name, after) = rest.split_at(name_len);
        let after = after.trim_start_matches(BLANKS).strip_prefix('=')?.trim_start_matches(BLANKS);
        let quote = after.chars().next().filter(|q| matches!(q, '"' | '\'' | '`'))?;
        let end = after[1..].find(quote)? + 1;
        let value = &after[1..end];
        rest = after[end + 1..].trim_start_matches(BLANKS);
        if !rest.starts_with([',', ')']) || name.is_empty() {
            return None; // `~`, a filter, or no name: not one string
        }
        if name == "command" {
            return Some(Some(value));
        }
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_exec_s_command_among_its_arguments() {
        assert_eq!(exec_words("node {{exec(command=\"bash tools/v.sh\")}}\npython 3.12 {{ exec( command = 'x/y' ) }}"), (vec!["tools/v.sh".into(), "x/y".into()], false));
        // Found by an attacker's review (rev38): the command after other arguments, a blank before '('.
        assert_eq!(exec_words("{{ exec(cache_key='a', cache_duration=\"1h\", command='./scripts/a.sh') }}").0, ["./scripts/a.sh"]);
        assert_eq!(exec_words("{{ exec (command=`scripts/b.sh`) }} {{exec\n(\ncommand='c/d'\n)}}").0, ["scripts/b.sh", "c/d"]);
        // What Tera builds cannot be read: said.
        for t in ["{% set c = 'x/c.sh' %}{{ exec(command=c) }}", "{{ exec(command='x/' ~ 'c.sh') }}", "{{ exec(cache_key=k, command='x/c.sh') }}", "{{ exec(command='x/c.sh' | trim) }}", "{{ exec('x/c.sh') }}", "{{ exec(command=\"unclosed) }}"] {
            assert!(exec_words(t).1, "{t}");
        }
        // Not a call of exec.
        assert_eq!(exec_words("run = \"exec ./x\" myexec(command='y/z') exec_it(command='y/z') {{ exec() }}"), (vec![], false));
    }
}
