//! The programs of a project an `.envrc` line runs (not sources): found by an attacker's review
//! (rfix34), a project's committed `eval "$(./scripts/env.sh)"`, `./scripts/check-tools`,
//! `bash -e tools/setup.sh` or a backquoted `tools/ver.sh` had a run rewrite the program with
//! `hostRisks: []`, and direnv runs it at the host shell's next prompt there (its allow list
//! covers the `.envrc` alone), as it sources what `envrc_sources` keeps.
//!
//! A word in a command's place (a line's first, after `;`, `&`, `|`, `(`, `$(`, a backquote, a
//! keyword such as `then` or `eval`, and an assignment before it), or the first word after an
//! interpreter's options (`bash -e x.sh`) or read from its input (`bash < x.sh`), that holds a
//! `/`: a bare name is looked up on `PATH`, and a word with an expansion (`$HOME/x`) is not
//! resolved here, but for `$PWD` (`${PWD}`), the directory direnv evaluates the file in, which
//! `envrc_sources` puts in (found by an attacker's review, fix35: `eval "$("$PWD"/x.sh)"`,
//! `${PWD}/x`, `bash < tools/x.sh` were rewritten by a run with `hostRisks: []`), and `$(pwd)`,
//! the same directory (rfix35). The arguments of other commands
//! (`watch_file`, `PATH_add`, `layout`) are not taken: direnv only watches or puts them on `PATH`
//! (what `PATH_add` adds stays writable, README). Quotes are removed; `$(` opens a command's place
//! inside double quotes too. The safe side: a word kept that is no program costs a read-only path.

/// Words after which a command's place continues.
const KEYWORDS: &[&str] = &["if", "then", "else", "elif", "do", "while", "until", "!", "{", "eval", "exec", "command", "builtin", "time", "nohup", "env"];

/// Commands whose first word past their options is a script they run.
pub(super) const INTERPRETERS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh", "python", "python3", "node", "ruby", "perl", "php", "deno", "bun"];

/// Where the next word stands.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    /// A command's place.
    Command,
    /// An interpreter's script (after its options).
    Script,
    /// An argument.
    Argument,
}

/// The words of `line` in a command's (or an interpreter's script's) place that hold a `/` and no
/// expansion, in order.
pub fn run_words(line: &str) -> Vec<String> {
    let line = &pwd_as_variable(line);
    let mut s = Scan { out: Vec::new(), word: String::new(), place: Place::Command };
    let mut quote: Option<char> = None;
    let mut subst = 0usize;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        let in_double_subst = quote == Some('"') && subst > 0;
        match (quote, c) {
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => s.word.push(c),
            (None | Some('"'), '$') if chars.peek() == Some(&'(') => {
                chars.next();
                s.end(Place::Command);
                subst += 1;
            }
            (None | Some('"'), '`') => {
                let opening = s.place != Place::Argument || !s.word.is_empty() || subst == 0;
                s.end(if opening { Place::Command } else { Place::Argument });
            }
            (Some('"'), '"') if !in_double_subst => quote = None,
            // A quote inside `"$(...)"` is the command's own (`"$("$PWD"/x)"`): dropped, as bash
            // removes it, the word going on.
            (Some('"'), '"') => {}
            (Some('"'), ')') if in_double_subst => {
                subst -= 1;
                s.end(Place::Argument);
            }
            (Some('"'), w) if in_double_subst && w.is_whitespace() => s.end(s.after_word()),
            (Some('"'), ';' | '&' | '|' | '(') if in_double_subst => s.end(Place::Command),
            (Some('"'), _) => s.word.push(c),
            (None, '#') if s.word.is_empty() => break,
            (None, '"' | '\'') => quote = Some(c),
            (None, ';' | '&' | '|' | '(') => s.end(Place::Command),
            // An input redirection: an interpreter reads its script there (`bash < x.sh`, `sh -e
            // <x.sh`); a here-document's (`<<`, `<<<`) and a process substitution's (`<(`) are not.
            (None, '<') if !matches!(chars.peek(), Some('<' | '(')) => {
                let next = s.after_word();
                s.end(next);
                s.place = if next == Place::Script { Place::Script } else { Place::Argument };
            }
            (None, '<') => {
                while chars.next_if_eq(&'<').is_some() {}
                let next = s.after_word();
                s.end(next);
                if chars.peek() != Some(&'(') {
                    s.place = Place::Argument;
                }
            }
            (None, ')') => {
                subst = subst.saturating_sub(1);
                s.end(Place::Argument);
            }
            (None, w) if w.is_whitespace() => s.end(s.after_word()),
            _ => s.word.push(c),
        }
    }
    let next = s.after_word();
    s.end(next);
    s.out
}

/// The words read so far of one line.
struct Scan {
    out: Vec<String>,
    word: String,
    place: Place,
}

impl Scan {
    /// Where the word after the current one stands (judging the current one).
    fn after_word(&self) -> Place {
        let w = self.word.as_str();
        match self.place {
            _ if w.is_empty() => self.place,
            Place::Command if KEYWORDS.contains(&w) || is_assignment(w) => Place::Command,
            Place::Command if INTERPRETERS.contains(&w) => Place::Script,
            Place::Script if w.starts_with('-') => Place::Script,
            _ => Place::Argument,
        }
    }

    /// The current word ends (kept when it is a program's path in a command's or script's place);
    /// the next stands at `next`.
    fn end(&mut self, next: Place) {
        let w = std::mem::take(&mut self.word);
        let plain = without_pwd(&w);
        let runs = self.place != Place::Argument && !is_assignment(&w) && w.contains('/') && !plain.contains('$') && !w.contains('`');
        if runs {
            self.out.push(w);
        }
        self.place = next;
    }
}

/// `line` with `$(pwd)` (and `$(pwd -P)`, `$(pwd -L)`, a backquoted `pwd`) written `$PWD`: direnv
/// evaluates the file in its directory, so each is the same directory (found by an attacker's
/// review, rfix35: `eval "$("$(pwd)"/scripts/env.sh)"` was rewritten by a run with `hostRisks: []`).
pub(super) fn pwd_as_variable(line: &str) -> String {
    let line = if line.contains("BASH_SOURCE") { BASH_SOURCE_DIR.iter().fold(line.to_string(), |l, spelling| l.replace(spelling, "$PWD")) } else { line.to_string() };
    let line = if line.contains("0:") || line.contains("autoenv_env_file") { ZSH_SOURCED_DIR.iter().fold(line, |l, spelling| l.replace(spelling, "$PWD")) } else { line };
    let line = CD_PWD.iter().fold(line, |l, spelling| l.replace(spelling, "$PWD"));
    ["$(pwd)", "$(pwd -P)", "$(pwd -L)", "`pwd`"].iter().fold(line, |l, spelling| l.replace(spelling, "$PWD"))
}

/// The spellings of the `.envrc`'s own directory through `BASH_SOURCE`: direnv's stdlib sources it
/// as `. "./.envrc"` from its directory (source_env), so `${BASH_SOURCE[0]}` is `./.envrc` and its
/// dirname is `.`, that directory. Found by an attacker's review (left36): a project's committed
/// `source "$(dirname "${BASH_SOURCE[0]}")/tools/lib.sh"` (bash sources it) left the file writable.
const BASH_SOURCE_DIR: &[&str] = &[
    "$(dirname \"${BASH_SOURCE[0]}\")",
    "$(dirname \"$BASH_SOURCE\")",
    "$(dirname \"${BASH_SOURCE}\")",
    "$(dirname ${BASH_SOURCE[0]})",
    "$(dirname $BASH_SOURCE)",
    "$(dirname -- \"${BASH_SOURCE[0]}\")",
    "$(dirname -- \"$BASH_SOURCE\")",
    "${BASH_SOURCE%/*}",
    "${BASH_SOURCE[0]%/*}",
];

/// zsh's spellings of the directory of the file being sourced: zsh sets `$0` to that file (and
/// zsh-autoenv `$autoenv_env_file`), `:h` its directory, `:a`/`:A` made absolute. Found by an
/// attacker's review (host39): a project's `.autoenv.zsh` sourcing `"${0:A:h}/tools/common.zsh"`
/// left the file writable. zsh-autoenv sources the file by its absolute path, so each is the
/// directory holding it, which `$PWD` stands for here (in an `.envrc`, bash's, they are no spelling
/// bash takes: keeping what they name costs a read-only path).
const ZSH_SOURCED_DIR: &[&str] = &[
    "${0:A:h}", "${0:a:h}", "${0:h}", "$0:A:h", "$0:a:h", "$0:h",
    "${autoenv_env_file:A:h}", "${autoenv_env_file:a:h}", "${autoenv_env_file:h}", "$autoenv_env_file:A:h", "$autoenv_env_file:a:h", "$autoenv_env_file:h",
];

/// The spellings of a directory made absolute by `cd` into it (`$(cd "$(dirname ...)" && pwd)`,
/// once its dirname reads `$PWD`): `$PWD` itself.
const CD_PWD: &[&str] = &["$(cd \"$PWD\" && pwd)", "$(cd \"$PWD\" && pwd -P)", "$(cd \"$PWD\"; pwd)", "$(cd $PWD && pwd)", "$(cd -- \"$PWD\" && pwd)", "$(cd -P \"$PWD\" && pwd)", "$(cd \"$PWD\" >/dev/null && pwd)", "$(cd \"$PWD\" >/dev/null 2>&1 && pwd)"];

/// `w` without its `$PWD` and `${PWD}` (not `$PWDX`): what is left holds another expansion or not.
fn without_pwd(w: &str) -> String {
    let mut out = w.replace("${PWD}", "");
    while let Some(at) = out.find("$PWD").filter(|at| !out[at + 4..].starts_with(|c: char| c == '_' || c.is_ascii_alphanumeric())) {
        out.replace_range(at..at + 4, "");
    }
    out
}

/// `NAME=value`, an assignment before a command (or alone).
fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()))
}

#[cfg(test)]
mod tests {
    use super::run_words;

    #[test]
    fn the_programs_a_line_runs() {
        assert_eq!(run_words(r#"eval "$(./scripts/env.sh)""#), ["./scripts/env.sh"]);
        assert_eq!(run_words("if true; then ./scripts/check-tools --quiet; fi"), ["./scripts/check-tools"]);
        assert_eq!(run_words("bash -e tools/setup.sh && export V=`tools/ver.sh` # ./no/1"), ["tools/setup.sh", "tools/ver.sh"]);
        assert_eq!(run_words(r#"export A="$(cd sub && bin/x --y a/b)" B=1 FOO=bar/baz ./run/me"#), ["bin/x"]);
        assert_eq!(run_words("FOO=1 ./with/assign arg/x"), ["./with/assign"]);
        assert_eq!(run_words("source_env scripts/a.sh"), Vec::<String>::new(), "envrc_sources' own");
        assert_eq!(run_words(r#"eval "$("$(pwd)"/scripts/env.sh)"; `pwd`/x/y; $(pwd -P)/a/b"#), ["$PWD/scripts/env.sh", "$PWD/x/y", "$PWD/a/b"]);
        // Found by an attacker's review (left36): the .envrc's own directory through BASH_SOURCE.
        assert_eq!(run_words(r#"eval "$("$(dirname "${BASH_SOURCE[0]}")"/scripts/env.sh)"; ${BASH_SOURCE%/*}/x/y; "$(cd "$(dirname "$BASH_SOURCE")" && pwd)"/a/b"#), ["$PWD/scripts/env.sh", "$PWD/x/y", "$PWD/a/b"]);
    }

    /// Found by an attacker's review (fix35): a program run by `$PWD` (direnv's directory, which
    /// `envrc_sources` puts in) and a script an interpreter reads from its input were not taken.
    #[test]
    fn programs_run_by_pwd_and_scripts_read_from_input() {
        assert_eq!(run_words(r#"eval "$("$PWD"/scripts/env.sh)""#), ["$PWD/scripts/env.sh"]);
        assert_eq!(run_words("${PWD}/scripts/check --quiet; export V=\"$($PWD/tools/ver.sh)\""), ["${PWD}/scripts/check", "$PWD/tools/ver.sh"]);
        assert_eq!(run_words("bash < tools/setup.sh; sh -e <bin/init.sh arg/x"), ["tools/setup.sh", "bin/init.sh"]);
        assert!(run_words("cat < data/in.txt; $HOME/bin/x; $PWDX/y; ./ok <<EOF").iter().eq(["./ok"].iter()));
        assert_eq!(run_words("source <(./gen/env.sh)"), ["./gen/env.sh"]);
    }

    #[test]
    fn what_is_only_watched_or_put_on_path_is_not_taken() {
        assert!(run_words("watch_file package-lock.json data/list.txt").is_empty());
        assert!(run_words("PATH_add bin ./node_modules/.bin").is_empty());
        assert!(run_words("layout node; use flake . --impure").is_empty());
        assert!(run_words("$HOME/bin/x; ls -l a/b").is_empty());
        assert!(run_words("'./quoted/no' # a comment").len() == 1);
    }
}
