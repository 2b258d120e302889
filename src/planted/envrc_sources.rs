//! The files an `.envrc` has direnv source or load, kept as the programs a `.cargo` configuration
//! names are (`cargo_programs`). Found by an attacker's review (host34): `.envrc` and
//! `.envrc.local` are protected names because direnv runs them when a shell enters the directory,
//! but what they source was left writable: direnv's allow list is of the `.envrc` alone (host32
//! showed it for `.envrc.local`), and a project's committed `source_env scripts/dev-env.sh` (or
//! `source ./env/common.sh`, `dotenv .env.shared`) had a run rewrite the sourced file with
//! `hostRisks: []`; the host's shell ran it at its next prompt there. zsh-autoenv's `.autoenv.zsh`
//! and `.autoenv_leave.zsh` are read the same way (host39: zsh sources them in the user's shell at
//! each cd, the checksum authorized being the file's alone), their relative paths taken from the
//! directory holding them (zsh-autoenv sources the nearest one up from a directory entered below
//! it too, where a relative path would be the shell's cwd: the usual spelling is `${0:A:h}`).
//!
//! direnv evaluates the file with bash from the directory holding it, so a relative path is taken
//! from there (`$PWD` stands for it). What is read: the word after `source_env`,
//! `source_env_if_exists`, `source`, `.`, `dotenv` and `dotenv_if_exists` wherever it stands on a
//! line (after `&&`, `;`, `then`); `source_env` of a directory names its `.envrc`. And the
//! programs of the project a line runs (`envrc_runs`: `./scripts/check`, `eval "$(./x.sh)"`).
//! A bare `dotenv` loads `.env`, a reported name already, and a `dotenv` of a reported name (`dotenv .env`,
//! `dotenv_if_exists .env.local`) is left to its report: commands write those (`cp .env.example
//! .env`), which is why they are reported, not kept. A word with another expansion (`$HOME`, `$(...)`) is not
//! resolved, and what `PATH_add` puts on the shell's `PATH` is not kept (a run writes there:
//! `layout node`'s `node_modules/.bin`). At most `MAX_PROGRAMS` per file, then `capped`.

use std::path::Path;
use std::rc::Rc;

use super::config_reads::{self, Judged, Reads};
pub use super::named_files::{Named, MAX_PROGRAMS};
use super::named_files::from_base;

/// What one file gave: the words it sources and whether a dotenv named each (at most
/// `MAX_PROGRAMS` + 1: one more tells that it names too many), shared by its other names.
pub type Words = Rc<Vec<(String, bool)>>;

/// The files direnv evaluates (each a protected name), and zsh-autoenv's, which zsh sources in the
/// user's shell on entering and leaving (found by an attacker's review, host39: what they source
/// was rewritten with `hostRisks: []`; zsh-autoenv authorizes the file's checksum alone). `.envrc`
/// first: `source_env DIR` names it.
/// autoenv's (hyperupcall's, for bash and zsh) `.env` and `.env.leave` too: it sources them as shell
/// scripts on entering and leaving, the checksum authorized the file's alone (rev40); both stay
/// reported names, and a dotenv `.env` (`KEY=value` lines) names nothing here.
pub const FILES: &[&str] = &[".envrc", ".envrc.local", ".autoenv.zsh", ".autoenv_leave.zsh", ".env", ".env.leave"];

/// The commands whose next word is a file sourced (or, for `DOTENV`'s, loaded into the environment).
const COMMANDS: &[&str] = &["source_env", "source_env_if_exists", "source", ".", "dotenv", "dotenv_if_exists"];
/// The commands of `COMMANDS` that load variables, not a script.
const DOTENV: &[&str] = &["dotenv", "dotenv_if_exists"];


/// The files the `.envrc` `file` sources or loads, resolved from the directory holding it; a
/// relative one only where its directory exists, as `cargo_programs` does.
pub fn named(file: &Path) -> Named {
    named_within(file, &mut Reads::new(config_reads::BUDGET), config_reads::TOOL_PROGRAMS_IN_ALL)
}

/// `named`, reading through `reads` (each file once for all its names, within the plan's budget:
/// found by an attacker's review, rfix34, 200 names of one 1 MiB file were read before every
/// later run), keeping at most `most` files (what is left of `config_reads::TOOL_PROGRAMS_IN_ALL`);
/// `capped` when there were more, or the file was not read.
pub fn named_within(file: &Path, reads: &mut Reads<Words>, most: usize) -> Named {
    // `python -m venv .env` makes a directory of that name: no autoenv file, nothing to say.
    if file.file_name().is_some_and(|n| n == ".env" || n == ".env.leave") && file.is_dir() {
        return Named::default();
    }
    let base = file.parent().unwrap_or(Path::new("/"));
    let words = match reads.judge(file, |text| Rc::new(sourced_words(text))) {
        Judged::Judged(words) => words,
        Judged::Absent => return Named::default(),
        Judged::Unjudged => return Named::unread(),
    };
    let mut out = Named { programs: Vec::new(), capped: words.len() > MAX_PROGRAMS };
    let reported = super::names::reported_defaults();
    for (w, dotenv) in words.iter().take(MAX_PROGRAMS) {
        if out.full(most) {
            break;
        }
        let dotenv = *dotenv;
        if dotenv && super::named_files::is_reported(Path::new(w), &reported) {
            continue;
        }
        // `$(pwd)` is `$PWD` there too (found by an attacker's review, rfix35: `source "$(pwd)/x"`).
        let w = super::envrc_runs::pwd_as_variable(w);
        let w = w.replace("${PWD}", &base.to_string_lossy()).replace("$PWD", &base.to_string_lossy());
        if w.contains('$') || w.contains('`') {
            continue;
        }
        let mut p = from_base(&w, base);
        // `source_env DIR` sources DIR/.envrc.
        if p.is_dir() {
            p.push(FILES[0]);
        }
        out.keep(&w, p);
    }
    out
}

/// The word after each of `COMMANDS` in `text` (unquoted), and whether a `DOTENV` command named
/// it, in order, once; at most `MAX_PROGRAMS` + 1 (each word is compared with those kept: 50,000
/// distinct ones cost seconds of the host's CPU before every run, found by an attacker's review,
/// rfix34).
pub(super) fn sourced_words(text: &str) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    for line in text.lines() {
        if out.len() > MAX_PROGRAMS {
            break;
        }
        // The directory's own spellings (`$(pwd)`, `$(dirname "${BASH_SOURCE[0]}")`) read as
        // `$PWD` before the line is split: unquoted, their parentheses split words (found by an
        // attacker's review, left36: `source $(pwd)/tools/g.sh` gave the word `$`).
        let line = &super::envrc_runs::pwd_as_variable(line);
        let mut after: Option<bool> = None;
        for word in shell_words(line) {
            if word.starts_with('#') && after.is_none() {
                break;
            }
            // `source -- x`: bash's builtin takes `--` before the file (found by an attacker's
            // review, left36: the `--` was taken for the file).
            if word == "--" && after.is_some() {
                continue;
            }
            if let Some(dotenv) = after.take() {
                if !word.is_empty() && out.len() <= MAX_PROGRAMS && !out.iter().any(|(w, _)| *w == word) {
                    out.push((word.clone(), dotenv));
                }
            }
            after = COMMANDS.contains(&word.as_str()).then(|| DOTENV.contains(&word.as_str()));
        }
        // And the programs of the project the line runs (`envrc_runs`: found by an attacker's
        // review, rfix34, `eval "$(./scripts/env.sh)"` was rewritten unsaid).
        for word in super::envrc_runs::run_words(line) {
            if out.len() <= MAX_PROGRAMS && !out.iter().any(|(w, _)| *w == word) {
                out.push((word, false));
            }
        }
    }
    out
}

/// `line` split into words as bash would at its simplest: blanks and `;`, `&`, `|`, `(`, `)`
/// separate words, quotes ('...', "...") are removed and keep what they hold in one word.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')') => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            None => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_an_envrc_sources_and_loads() {
        let text = "# source_env no/1.sh\nsource_env scripts/dev-env.sh\n[[ -f env/common.sh ]] && source \"./env/common.sh\"\n\
            source_env_if_exists env/optional.sh; dotenv .env.shared # dotenv no/2\nif true; then . 'lib/x.sh'; fi\nPATH_add bin\nlayout node\ndotenv\n";
        let words: Vec<String> = sourced_words(text).into_iter().map(|(w, _)| w).collect();
        assert_eq!(words, ["scripts/dev-env.sh", "./env/common.sh", "env/optional.sh", ".env.shared", "lib/x.sh"]);
        assert_eq!(sourced_words("dotenv .env.x\n")[0], (".env.x".to_string(), true));
        // Found by an attacker's review (left36): `--` before the file, and the .envrc's own
        // directory through BASH_SOURCE (direnv sources it as `. "./.envrc"`).
        let text = "source -- tools/f.sh\n. \"$(dirname \"${BASH_SOURCE[0]}\")/tools/b.sh\"\nsource \"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)/tools/e.sh\"\nsource $(pwd)/tools/g.sh\n";
        let words: Vec<String> = sourced_words(text).into_iter().map(|(w, _)| w).collect();
        assert_eq!(words, ["tools/f.sh", "$PWD/tools/b.sh", "$PWD/tools/e.sh", "$PWD/tools/g.sh"]);
    }

    #[test]
    fn resolves_from_the_envrc_directory() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("scripts")).unwrap();
        std::fs::create_dir_all(t.path().join("sub")).unwrap();
        let f = t.path().join(FILES[0]);
        std::fs::write(&f, "source_env scripts/a.sh\nsource_env sub\nsource $PWD/scripts/b.sh\nsource $HOME/x.sh\nsource missing/c.sh\ndotenv .env\ndotenv_if_exists sub/.env.local\n").unwrap();
        let want = vec![t.path().join("scripts/a.sh"), t.path().join("sub/.envrc"), t.path().join("scripts/b.sh")];
        assert_eq!(named(&f), Named { programs: want, capped: false });
        assert_eq!(named(&t.path().join(FILES[1])), Named::default());
    }

    #[test]
    fn reads_zsh_autoenv_files_with_zsh_s_own_directory() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("tools")).unwrap();
        let f = t.path().join(".autoenv.zsh");
        std::fs::write(&f, "source ./tools/a.zsh\n. \"${0:A:h}/tools/b.zsh\"\nsource $0:a:h/tools/c.zsh\n\
            source ${autoenv_env_file:h}/tools/d.zsh\n[[ -x tools/e ]] && ./tools/e\nsource ${0:t}/no.zsh\n").unwrap();
        let want = ["./tools/a.zsh", "tools/b.zsh", "tools/c.zsh", "tools/d.zsh", "./tools/e"].map(|p| t.path().join(p));
        assert_eq!(named(&f), Named { programs: want.to_vec(), capped: false });
        assert!(FILES.contains(&".autoenv_leave.zsh"));
        // autoenv's (rev40): `.env` sourced as a script names its file; a venv directory named
        // `.env` is no such file and nothing is said of it.
        let env = t.path().join(".env");
        std::fs::write(&env, "API=1\nsource ./tools/a.zsh\n").unwrap();
        assert_eq!(named(&env).programs, vec![t.path().join("tools/a.zsh")]);
        std::fs::remove_file(&env).unwrap();
        std::fs::create_dir(&env).unwrap();
        assert_eq!(named(&env), Named::default());
    }
}
