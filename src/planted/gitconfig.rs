//! Just enough of git's config syntax to read what can run code: the hooks directory of a
//! repository (`core.hooksPath`) and, for a repository created during a run, which of its settings
//! make git run a program. `include`/`includeIf` files are not followed here (`risky_keys` reports
//! them as risky, since they can pull in anything); `global_git` follows them, for the global
//! configuration and for each existing repository's own (`global_git::repository`).

/// One `key = value` line: the full key (`section[.subsection].name`; section and name lowercased,
/// subsection as written) and the value (quotes and escapes removed; `None` for a bare key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub value: Option<String>,
}

/// The entries of `text` in order, read as they are asked for: a caller that stops after a bound
/// (`global_git::MAX_ENTRIES`, `MAX_JUDGED`) reads no further. Found by an attacker's review
/// (cross32): every entry of a file was made first, 700,000 of a 16 MiB run-written config of
/// `fsmonitor = x`, and only then the bound applied; 40 repositories sharing that file (hard links)
/// cost the host 12 s of CPU after the run and 12 s in the next run's setup.
pub fn entries(text: &str) -> impl Iterator<Item = Entry> + '_ {
    // git skips a UTF-8 byte order mark at the start (Windows editors write one); the first section
    // header behind it went unseen, with its `core.hooksPath` (found by an attacker's review).
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut section = String::new();
    let mut lines = text.lines();
    std::iter::from_fn(move || {
        while let Some(raw) = lines.next() {
            let Some(line) = after_headers(raw.trim(), &mut section) else { continue };
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') || section.is_empty() {
                continue;
            }
            let (name, value) = match line.split_once('=') {
                Some((n, v)) => (n.trim(), Some(value(v, &mut lines))),
                None => (strip_comment(line).trim(), None),
            };
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                return Some(Entry { key: format!("{section}.{}", name.to_ascii_lowercase()), value });
            }
        }
        None
    })
}

/// What follows the section headers that begin `line` (`section` set to the last one's), or `None`
/// for a header without its `]` (git refuses such a file). git reads any number of them on
/// one line (`[a][include] path = x` is `include.path`): only the first was read, and the entry
/// behind the second went unseen (found by an attacker's review).
fn after_headers<'a>(mut line: &'a str, section: &mut String) -> Option<&'a str> {
    while let Some(rest) = line.strip_prefix('[') {
        let end = header_end(rest)?;
        *section = section_name(&rest[..end]);
        line = rest[end + 1..].trim();
    }
    Some(line)
}

/// Where a header's `]` is: not inside a quoted subsection (`[remote "x]y"]`), where a backslash
/// escapes the next character, as git reads it.
fn header_end(header: &str) -> Option<usize> {
    let (mut quoted, mut escaped) = (false, false);
    for (i, c) in header.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ']' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

/// `core` → `core`; `remote "origin"` → `remote.origin`; legacy `branch.Main` → `branch.Main`.
fn section_name(header: &str) -> String {
    let header = header.trim();
    match header.split_once(char::is_whitespace) {
        Some((sec, sub)) => format!("{}.{}", sec.to_ascii_lowercase(), unquote(sub)),
        None => match header.split_once('.') {
            Some((sec, sub)) => format!("{}.{sub}", sec.to_ascii_lowercase()),
            None => header.to_ascii_lowercase(),
        },
    }
}

fn strip_comment(s: &str) -> &str {
    s.find(['#', ';']).map(|i| &s[..i]).unwrap_or(s)
}

/// A subsection's name, quotes and escapes removed (a header is one line).
fn unquote(v: &str) -> String {
    value(v, &mut std::iter::empty())
}

/// A value as git reads it (its `parse_value`): surrounding blanks dropped, `"..."` joined, `\"`,
/// `\\`, `\t`, `\n` unescaped, a `#`/`;` outside quotes ends it, and a backslash ending the line
/// joins the next one of `more` (git removes backslash-newline, in quotes or not; blanks leading
/// the value are dropped, on the next line too while nothing came before). Found by an attacker's
/// review: `sshCommand = \` + newline + `~/dotfiles/bin/sshcmd`, and `path = ~/dotfiles/\` +
/// newline + `gitconfig.local`, went unread, and a run rewrote what they name.
fn value<'a>(first: &'a str, more: &mut dyn Iterator<Item = &'a str>) -> String {
    let (mut out, mut quoted) = (String::new(), false);
    let mut chars = first.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some(o) => out.push(o),
                None => match more.next() {
                    Some(next) => chars = next.chars(),
                    None => break,
                },
            },
            '#' | ';' if !quoted => break,
            c if c.is_whitespace() && !quoted && out.is_empty() => {}
            _ => out.push(c),
        }
    }
    out.trim_end().to_string()
}

/// The last `core.hooksPath` (the last one wins in git).
pub fn hooks_path(text: &str) -> Option<String> {
    entries(text).into_iter().filter(|e| e.key == "core.hookspath").filter_map(|e| e.value).filter(|v| !v.is_empty()).last()
}

/// Keys (as written in `git config` form) whose values make git run a program or load other files.
/// Deduplicated through a set: a run-written config of 1 MiB of distinct `alias.aN = !x` took the
/// host minutes with a `Vec::contains` per key (found by an attacker's review).
/// At most `MAX_JUDGED` entries are read: past them the last key is `PAST_JUDGED`, which says so
/// where the keys are named (found by an attacker's review, cross32: 100 repositories sharing a
/// 1 MiB config of 45,000 entries, hard links, cost the host 4 s after the run).
pub fn risky_keys(text: &str) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    let mut met = std::collections::HashSet::new();
    for (n, e) in entries(text).enumerate() {
        if n == MAX_JUDGED {
            keys.push(PAST_JUDGED.to_string());
            break;
        }
        if is_risky(&e.key, e.value.as_deref().unwrap_or("")) && met.insert(e.key.clone()) {
            keys.push(e.key);
        }
    }
    keys
}

/// Entries `risky_keys` reads of one file, as many as `global_git` reads of one configuration.
pub const MAX_JUDGED: usize = 10_000;

/// What `risky_keys` names last for a file of more than `MAX_JUDGED` entries.
pub const PAST_JUDGED: &str = "whatever its entries past the first 10000 set (not read here; git reads them)";

/// The words of a value of a key that runs a program (`program_key`) that may name one by path:
/// every word as a shell splits it (quotes removed, after a shell command's `!`) that is absolute,
/// `~/…`, or relative with a `/` (the caller decides what those are relative to). Not only the
/// first: `sh ~/bin/fsmon.sh`, `env A=1 /opt/x`, `"/opt/pager"` (found by an attacker's review).
/// A word holding blanks (`sh -c '/opt/x "$@"'`) is split again, once.
///
/// The shell expands the home in them: a leading `$HOME` or `${HOME}` is given as `~`, for the
/// caller to expand as `~/` and `~user/` (found by an attacker's review: `fsmonitor =
/// $HOME/dotfiles/bin/fsmon`, `helper = "!\"$HOME/…\""` were taken for relative paths and
/// dropped). Any other word that holds a `$` or a backquote (`$TOOLS/x`, `` `which x` ``) is
/// given too, for the caller to report as unresolved (`unresolved`), but for git's own arguments
/// (`"$@"`, `$1`, a tool's `$LOCAL`), which name no program.
pub fn program_paths(key: &str, value: &str) -> Vec<String> {
    if !program_key(key, value) {
        return Vec::new();
    }
    let Some(command) = command_of(key, value) else { return Vec::new() };
    let words = shell_words(command.trim_start().trim_start_matches('!'));
    let inner = words.iter().filter(|w| w.contains(char::is_whitespace)).flat_map(|w| shell_words(w));
    let pathlike = |w: &String| {
        w.starts_with('/') || w.starts_with('~') && w.contains('/') || (w.contains('/') && !w.starts_with('-') && !w.contains('=')) || unresolved(w)
    };
    words.iter().cloned().chain(inner).map(home_variable).filter(pathlike).collect()
}

/// `$HOME/x` and `${HOME}/x` → `~/x` (and either alone → `~`).
fn home_variable(w: String) -> String {
    for var in ["$HOME", "${HOME}"] {
        if let Some(rest) = w.strip_prefix(var).filter(|r| r.is_empty() || r.starts_with('/')) {
            return format!("~{rest}");
        }
    }
    w
}

/// Whether a word of a program value names something only the shell can tell: a `$` or a
/// backquote in it, but for the arguments git passes (`$@`, `$1`, difftool's `$LOCAL`, ...).
pub fn unresolved(w: &str) -> bool {
    const GIVEN: &[&str] = &["@", "*", "#", "?", "-", "$", "!", "LOCAL", "REMOTE", "MERGED", "BASE"];
    let name = w.strip_prefix('$').map(|n| n.strip_prefix('{').and_then(|n| n.strip_suffix('}')).unwrap_or(n));
    let given = name.is_some_and(|n| GIVEN.contains(&n) || (!n.is_empty() && n.chars().all(|c| c.is_ascii_digit())));
    (w.contains('$') || w.contains('`')) && !given && w != "$"
}

/// Whether `key` runs a program its value names (the paths and includes, `core.hooksPath` and
/// `include.path`, do not).
fn program_key(key: &str, value: &str) -> bool {
    !matches!(key, "core.hookspath" | "include.path") && !key.starts_with("includeif.") && is_risky(key, value)
}

/// The command a program key's value gives: an `ext::` url's after its `ext::` (a url rewrite's is
/// its subsection, in the key); none for the keys that only allow one (`protocol.ext.allow`).
fn command_of<'a>(key: &'a str, value: &'a str) -> Option<&'a str> {
    match key.split('.').next() {
        Some("protocol") => None,
        Some("url") => ext_command(subsection(key)?),
        Some("remote" | "submodule") if key.ends_with("url") => ext_command(value),
        _ => Some(value),
    }
}

/// The command of an `ext::` url (git's remote-ext runs it: `ext::sh -c x`, `ext::/x/y %S`).
fn ext_command(url: &str) -> Option<&str> {
    url.trim_start().strip_prefix("ext::")
}

/// A key's subsection: what lies between its section and its name (`url.<base>.insteadof`).
fn subsection(key: &str) -> Option<&str> {
    let (_, rest) = key.split_once('.')?;
    Some(rest.rsplit_once('.')?.0)
}

/// `s` split into words as `sh` splits a command line, without expansions: blanks and the
/// operators `;|&()<>` separate, `'…'` is literal, `"…"` and a backslash escape. Enough to find
/// the paths in a value git hands to the shell.
fn shell_words(s: &str) -> Vec<String> {
    let (mut out, mut word, mut in_word) = (Vec::new(), String::new(), false);
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                word.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c if c.is_whitespace() || ";|&()<>".contains(c) => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                }
                in_word = false;
            }
            _ => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        out.push(word);
    }
    out
}

/// Whether `key` (as `entries` gives it) with `value` makes git run a program or load other files.
fn is_risky(key: &str, value: &str) -> bool {
    let last = key.rsplit('.').next().unwrap_or("");
    let first = key.split('.').next().unwrap_or("");
    match key {
        // `true`/`false` select the built-in daemon; any other value is a program to run.
        "core.fsmonitor" => !is_bool(value),
        "core.hookspath" | "core.sshcommand" | "core.pager" | "core.editor" | "core.askpass" | "core.gitproxy"
        | "sequence.editor" | "diff.external" | "include.path" | "uploadpack.packobjectshook" | "interactive.difffilter"
        | "web.browser" | "imap.tunnel" | "core.alternaterefscommand" | "instaweb.httpd" => true,
        _ => match first {
            "filter" => matches!(last, "clean" | "smudge" | "process"),
            "diff" => matches!(last, "textconv" | "command"),
            "merge" => last == "driver",
            "credential" => matches!(last, "helper" | "program"),
            "alias" => value.trim_start().starts_with('!'),
            // `pager.log = less -S` (a boolean only turns the pager on or off).
            "pager" => !is_bool(value),
            "gpg" => matches!(last, "program" | "defaultkeycommand"),
            "difftool" | "mergetool" | "browser" => matches!(last, "cmd" | "path"),
            "includeif" => last == "path",
            "trailer" => matches!(last, "cmd" | "command"),
            "tar" => last == "command",
            "man" => matches!(last, "cmd" | "path"),
            "guitool" => last == "cmd",
            _ => runs_a_transport_or_mail_program(key, first, last, value),
        },
    }
}

/// The keys of fetching, pushing and mailing that run a program (found by an attacker's review:
/// git 2.47 ran `remote.origin.uploadpack`, and an `ext::` url once `protocol.ext.allow` allowed
/// it, on the host's next `git fetch`): the program run in a remote repository's place
/// (`uploadpack`, `receivepack`), an `ext::` url (a remote's, a submodule's, a rewrite's) and what
/// allows one (`ext` is refused by default), `git submodule update`'s `!command`, and
/// `git send-email`'s commands and an smtp server given as a path (run as sendmail).
fn runs_a_transport_or_mail_program(key: &str, first: &str, last: &str, value: &str) -> bool {
    match first {
        "remote" => matches!(last, "uploadpack" | "receivepack") || (matches!(last, "url" | "pushurl") && ext_command(value).is_some()),
        "submodule" => (last == "update" && value.trim_start().starts_with('!')) || (last == "url" && ext_command(value).is_some()),
        "url" => matches!(last, "insteadof" | "pushinsteadof") && subsection(key).and_then(ext_command).is_some(),
        "protocol" => matches!(key, "protocol.allow" | "protocol.ext.allow") && value.trim() != "never",
        "sendemail" => last.ends_with("cmd") || (last == "smtpserver" && value.trim_start().starts_with(['/', '~'])),
        _ => false,
    }
}

fn is_bool(value: &str) -> bool {
    matches!(value.to_ascii_lowercase().as_str(), "" | "true" | "false" | "yes" | "no" | "on" | "off" | "0" | "1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_hooks_path_like_git() {
        let text = "[core]\n\trepositoryformatversion = 0\n\thooksPath = .husky\n[CORE]\n  HooksPath = \".husky/_\" # husky 9\n";
        assert_eq!(hooks_path(text), Some(".husky/_".into()));
        assert_eq!(hooks_path("[core] hookspath=/x/h ; c"), Some("/x/h".into()));
        assert_eq!(hooks_path("[remote \"o\"]\n\thooksPath = nope\n"), None);
        assert_eq!(hooks_path("[core]\n\tbare = false\n"), None);
        assert_eq!(hooks_path("\u{feff}[core]\n\thooksPath = .githooks\n"), Some(".githooks".into()), "behind a byte order mark, as git reads it");
    }

    #[test]
    fn program_paths_are_every_path_word_as_a_shell_splits_it() {
        assert_eq!(program_paths("core.fsmonitor", "sh ~/d/bin/fsmon.sh"), vec!["~/d/bin/fsmon.sh"]);
        assert_eq!(program_paths("core.pager", "\"/opt/my pager\" -R"), vec!["/opt/my pager", "/opt/my"], "split once more too, in case it is a command");
        assert_eq!(program_paths("core.editor", "env A=1 /x/ed;/y/z|tools/w"), vec!["/x/ed", "/y/z", "tools/w"]);
        assert_eq!(program_paths("alias.q", "!sh -c '/x/inner \"$@\"' -"), vec!["/x/inner \"$@\"", "/x/inner"]);
        assert_eq!(program_paths("alias.q", "status"), Vec::<String>::new(), "not a shell alias");
        assert_eq!(program_paths("pager.log", "false"), Vec::<String>::new());
        assert_eq!(program_paths("pager.log", "/x/p"), vec!["/x/p"]);
        assert_eq!(program_paths("difftool.x.cmd", "/x/d --opt=/y"), vec!["/x/d"]);
        assert_eq!(program_paths("include.path", "/x/inc"), Vec::<String>::new(), "a file read, not run");
    }

    /// An attacker's review (gitspell.sh): git removes a backslash-newline in a value, and the
    /// shell it hands a program to expands `$HOME`; neither was read so, and a run rewrote what
    /// they named. A word only the shell resolves is given, for the caller to report.
    #[test]
    fn values_join_continued_lines_and_program_words_expand_the_home() {
        let text = "[core]\n\tsshCommand = \\\n\t\t~/d/bin/ssh\n[include]\n\tpath = ~/d/\\\ngitconfig.local\n\tpath = \"a\\\n b\" # c \\\n[x]\n\ty = 1\n";
        let got: Vec<(String, String)> = entries(text).into_iter().map(|e| (e.key, e.value.unwrap_or_default())).collect();
        let want = [("core.sshcommand", "~/d/bin/ssh"), ("include.path", "~/d/gitconfig.local"), ("include.path", "a b"), ("x.y", "1")];
        assert_eq!(got, want.map(|(k, v)| (k.to_string(), v.to_string())), "a comment's backslash joins nothing");
        assert_eq!(program_paths("core.fsmonitor", "$HOME/d/bin/fsmon"), vec!["~/d/bin/fsmon"]);
        assert_eq!(program_paths("core.pager", "${HOME}/d/bin/pager -R"), vec!["~/d/bin/pager"]);
        assert_eq!(program_paths("credential.helper", "!\"$HOME/d/bin/cred\""), vec!["~/d/bin/cred"]);
        assert_eq!(program_paths("core.editor", "~someone/d/bin/editor"), vec!["~someone/d/bin/editor"]);
        assert_eq!(program_paths("core.editor", "$HOMEDIR/ed"), vec!["$HOMEDIR/ed"], "not the home: left to the shell");
        assert_eq!(program_paths("core.pager", "$PAGER"), vec!["$PAGER"]);
        assert_eq!(program_paths("core.pager", "`which less`"), vec!["`which", "less`"]);
        assert!(unresolved("$PAGER") && unresolved("$HOMEDIR/ed") && unresolved("`which") && !unresolved("~/x"));
        assert_eq!(program_paths("difftool.x.cmd", "/x/d \"$LOCAL\" \"$REMOTE\""), vec!["/x/d"], "git's own arguments name no program");
        assert_eq!(program_paths("alias.q", "!sh -c '/x/inner \"$@\"' -"), vec!["/x/inner \"$@\"", "/x/inner"]);
    }

    #[test]
    fn finds_what_runs_programs() {
        let text = "[core]\n\tfsmonitor = ./evil.sh\n\tbare\n[alias]\n\tst = status\n\tx = !sh -c boom\n[filter \"lfs\"]\n\tsmudge = git-lfs smudge %f\n[includeIf \"gitdir:/x\"]\n\tpath = other\n";
        assert_eq!(risky_keys(text), vec!["core.fsmonitor", "alias.x", "filter.lfs.smudge", "includeif.gitdir:/x.path"]);
        assert!(risky_keys("[core]\n\tfsmonitor = true\n\teditor=\n").contains(&"core.editor".to_string()));
        assert!(!risky_keys("[core]\n\tfsmonitor = true\n").contains(&"core.fsmonitor".to_string()));
        assert_eq!(risky_keys("not a config \u{0} [[[\n= x\n"), Vec::<String>::new());
    }

    /// Found by an attacker's review (fixes18/gitkeys.sh): keys that make git run a program were
    /// not named, and the programs they name by path not kept: git 2.47 ran `remote.origin.uploadpack`
    /// and, with `protocol.ext.allow = always`, an `ext::` url on the host's next `git fetch`.
    #[test]
    fn finds_the_transport_mail_and_tool_keys_that_run_programs() {
        let risky = [
            ("protocol.ext.allow", "always"), ("protocol.ext.allow", "user"), ("protocol.allow", "always"),
            ("remote.origin.uploadpack", "./x.sh"), ("remote.origin.receivepack", "/x/rp"), ("remote.origin.url", "ext::sh -c x"),
            ("remote.origin.pushurl", " ext::/x/p %S"), ("submodule.m.url", "ext::sh -c x"), ("url.ext::sh -c x.insteadof", "https://"),
            ("url.ext::/x/y %S.pushinsteadof", "git@"), ("sendemail.sendmailcmd", "/x/mail"), ("sendemail.tocmd", "./to"),
            ("sendemail.work.cccmd", "x"), ("sendemail.headercmd", "x"), ("sendemail.smtpserver", "/usr/sbin/msmtp"),
            ("sendemail.work.smtpserver", "~/bin/mail"), ("trailer.sign.cmd", "./x"), ("trailer.sign.command", "x"),
            ("submodule.m.update", "!./x.sh"), ("tar.tgz.command", "./x.sh"), ("man.x.cmd", "x"), ("man.x.path", "/x/man"),
            ("imap.tunnel", "./x"), ("core.alternaterefscommand", "./x"), ("guitool.x.cmd", "./x"), ("instaweb.httpd", "/x/httpd"),
        ];
        for (key, value) in risky {
            assert!(is_risky(key, value), "{key} = {value}");
        }
        let harmless = [
            ("protocol.ext.allow", "never"), ("protocol.allow", "never"), ("protocol.file.allow", "always"), ("remote.origin.url", "https://x/y"),
            ("remote.origin.url", "."), ("url.https://x/.insteadof", "gh:"), ("sendemail.smtpserver", "smtp.example.com"), ("submodule.m.update", "rebase"),
            ("trailer.sign.key", "Signed-off-by"), ("man.viewer", "less"), ("tar.umask", "0022"), ("submodule.m.url", "../m"),
        ];
        for (key, value) in harmless {
            assert!(!is_risky(key, value), "{key} = {value}");
        }
        let text = "[protocol \"ext\"]\n\tallow = always\n[remote \"origin\"]\n\turl = ext::sh -c x\n\tuploadpack = ./x.sh\n[core]\n\talternateRefsCommand = ./alt\n";
        assert_eq!(risky_keys(text), vec!["protocol.ext.allow", "remote.origin.url", "remote.origin.uploadpack", "core.alternaterefscommand"]);
        // The programs they name by path, kept as the others' are: an ext:: url's command after its
        // `ext::`, in a url rewrite's subsection (the key), not its value.
        assert_eq!(program_paths("remote.origin.uploadpack", "/x/up --strict"), vec!["/x/up"]);
        assert_eq!(program_paths("remote.origin.url", "ext::/x/remote %S"), vec!["/x/remote"]);
        assert_eq!(program_paths("url.ext::~/bin/r %S.insteadof", "https://"), vec!["~/bin/r"]);
        assert_eq!(program_paths("sendemail.smtpserver", "~/bin/mail"), vec!["~/bin/mail"]);
        assert_eq!(program_paths("submodule.m.update", "!tools/up.sh"), vec!["tools/up.sh"]);
        assert_eq!(program_paths("protocol.ext.allow", "always"), Vec::<String>::new(), "it names no program");
        assert_eq!(program_paths("remote.origin.url", "https://x/a/b"), Vec::<String>::new());
    }

    /// git reads two section headers on one line (`[a][include] path = x`: `include.path`); the
    /// second and the entry behind it were dropped, and with them an include's path or a
    /// `core.fsmonitor` (found by the same review). A `]` in a quoted subsection is its own.
    #[test]
    fn reads_every_section_header_of_a_line_as_git_does() {
        let got = |text: &str| entries(text).into_iter().map(|e| (e.key, e.value.unwrap_or_default())).collect::<Vec<_>>();
        let want = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
        assert_eq!(got("[a][include] path = x\n"), want(&[("include.path", "x")]));
        assert_eq!(got("[a] [core]fsmonitor=./f\n[b]\t[c \"s\"] [d] k = v\n"), want(&[("core.fsmonitor", "./f"), ("d.k", "v")]));
        assert_eq!(got("[remote \"x]y\"] uploadpack = ./u\n"), want(&[("remote.x]y.uploadpack", "./u")]));
        assert_eq!(got("[remote \"a\\\"]b\"][core] pager = p\n"), want(&[("core.pager", "p")]));
        assert_eq!(risky_keys("[a][core] fsmonitor = ./f\n"), vec!["core.fsmonitor"]);
    }

    /// Found by an attacker's review: a run-written config of distinct risky keys was read in time
    /// quadratic in their number (36 s of host time for 1 MiB). 100,000 keys take milliseconds
    /// now; the bound is generous, to catch the quadratic reading, not to time this one.
    #[test]
    fn risky_keys_reads_at_most_max_judged_entries_and_says_so() {
        let text = format!("[core]\n{}\tfsmonitor = x\n", "\tbare = 1\n".repeat(MAX_JUDGED));
        assert_eq!(risky_keys(&text), vec![PAST_JUDGED.to_string()], "the key past the bound is not read, and that is said");
        let text = format!("[core]\n{}\tfsmonitor = x\n", "\tbare = 1\n".repeat(MAX_JUDGED - 1));
        assert_eq!(risky_keys(&text), vec!["core.fsmonitor".to_string()], "the last entry within the bound is read");
        assert!(PAST_JUDGED.contains(&MAX_JUDGED.to_string()));
        assert_eq!(entries("[a]\nx = 1\n[b]\ny\n").map(|e| e.key).collect::<Vec<_>>(), vec!["a.x", "b.y"], "lazily, in order");
    }

    #[test]
    fn many_distinct_risky_keys_are_read_in_linear_time() {
        let mut text = String::from("[alias]\n");
        for i in 0..100_000 {
            text.push_str(&format!("\ta{i} = !x\n\ta{i} = !y\n"));
        }
        let started = std::time::Instant::now();
        let keys = risky_keys(&text);
        // Each key twice: the first MAX_JUDGED entries name half as many keys, then the bound's.
        assert_eq!((keys.len(), keys[MAX_JUDGED / 2 - 1].as_str(), keys[MAX_JUDGED / 2].as_str()), (MAX_JUDGED / 2 + 1, "alias.a4999", PAST_JUDGED));
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "{:?}", started.elapsed());
    }
}
