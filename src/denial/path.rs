//! Finding the path an error message names, and lexical path arithmetic (no filesystem access).

use std::path::{Component, Path, PathBuf};

use super::text::{find_all_ci, starts_with_ci};

const QUOTES: [char; 5] = ['\'', '"', '`', '\u{2018}', '\u{2019}'];

/// Linux's PATH_MAX (macOS's is 1024), plus the closing quote: a quoted name longer than this is
/// no path a system call accepted.
const PATH_MAX_BYTES: usize = 4096 + 4;

/// The path that `line` names next to `phrase` (ASCII lowercase, e.g. `"permission denied"`), in any
/// of the formats we know:
///
/// * Codex / shell: `bash: /p: Permission denied`: the text before `": <phrase>"`, after its last
///   `": "`, trimmed and unquoted, accepted when it starts with `/`, `./` or `../`;
/// * coreutils: `touch: cannot touch '/p': Read-only file system`, `mkdir: cannot create directory
///   '/p': ...`, `cp: cannot create regular file '/p': ...`, `ls: cannot access '/p': ...`: the last
///   quoted name before the phrase; dash's `sh: 1: cannot create /p: ...`;
/// * Python: `PermissionError: [Errno 13] Permission denied: '/p'`;
/// * Node: `EACCES: permission denied, open '/p'`.
pub(crate) fn extract_path(line: &str, phrase: &str) -> Option<String> {
    for at in find_all_ci(line, phrase) {
        // Codex form: `<before>: <phrase>`.
        if let Some(before) = line[..at].strip_suffix(": ") {
            // `tar: /p: Cannot open: Read-only file system`: the path may sit a segment earlier.
            for seg in before.rsplit(": ").take(3) {
                if let Some(p) = candidate_from_segment(seg) {
                    return Some(p);
                }
            }
        }
        // Python / Node form: `<phrase>: '<p>'` or `<phrase>, <syscall> '<p>'`.
        if let Some(p) = path_after(&line[at + phrase.len()..]) {
            return Some(p);
        }
    }
    None
}

fn strip_quotes(s: &str) -> &str {
    s.trim().trim_matches(|c| c == '"' || c == '\'')
}

fn has_codex_prefix(s: &str) -> bool {
    s.starts_with('/') || s.starts_with("./") || s.starts_with("../")
}

fn candidate_from_segment(seg: &str) -> Option<String> {
    candidate_in_segment(seg).and_then(whole_path)
}

/// A path, never a piece of the sentence around it: an unquoted candidate ends at `, ` (cargo's
/// `path: /x/oorandom, error: Read-only file system`) and loses trailing `,`/`;`.
fn whole_path(p: String) -> Option<String> {
    let cut = p.find(", ").map_or(p.as_str(), |i| &p[..i]);
    let cut = cut.trim_end_matches([',', ';']);
    (!cut.is_empty()).then(|| cut.to_string())
}

fn candidate_in_segment(seg: &str) -> Option<String> {
    let s = strip_quotes(seg);
    if s.is_empty() {
        return None;
    }
    if has_codex_prefix(s) {
        return Some(s.to_string());
    }
    if let Some(q) = last_quoted(seg) {
        return Some(q.to_string());
    }
    for prefix in [
        "cannot mkdir ",
        "cannot create ",
        "can't create ",
        "cannot open ",
        "can't open ",
        "cannot remove ",
        "cannot access ",
    ] {
        if starts_with_ci(s, prefix) {
            let rest = strip_quotes(&s[prefix.len()..]);
            // `cannot open output file /p`, `Cannot create temporary file in ./`: the path is the
            // last word, never the words before it.
            let last = strip_quotes(rest.rsplit(char::is_whitespace).next().unwrap_or(""));
            return (!last.is_empty()).then(|| last.to_string());
        }
    }
    if looks_like_relative_path(s) {
        return Some(s.to_string());
    }
    // `could not lock config file .git/config`: a trailing path-shaped word.
    let last = strip_quotes(s.rsplit(char::is_whitespace).next().unwrap_or(""));
    (has_codex_prefix(last) || (last.contains('/') && !last.contains("://") && last.len() > 1))
        .then(|| last.to_string())
}

/// A bare relative name such as `.git/x`, `out.txt` or `dir/file`: no whitespace, and a `/`, a
/// leading dot, or a `name.ext` shape.
fn looks_like_relative_path(s: &str) -> bool {
    if s.chars().any(char::is_whitespace) || s.len() < 2 {
        return false;
    }
    if s.contains('/') || (s.starts_with('.') && s.len() > 1) {
        return true;
    }
    match s.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && !ext.is_empty()
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && !s.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// The content of the last quoted string in `s` (`'x'`, `"x"`, `` `x' ``, `‘x’`), if non-empty.
fn last_quoted(s: &str) -> Option<&str> {
    let s = s.trim_end();
    let close = s.char_indices().rev().find(|(_, c)| QUOTES.contains(c))?;
    let inner = &s[..close.0];
    let open = inner
        .char_indices()
        .rev()
        .find(|(_, c)| QUOTES.contains(c))?;
    let content = &inner[open.0 + open.1.len_utf8()..];
    (!content.is_empty()).then_some(content)
}

fn path_after(rest: &str) -> Option<String> {
    let rest = rest
        .strip_prefix(": ")
        .or_else(|| rest.strip_prefix(", "))?;
    let rest = rest.trim_start();
    if let Some(p) = leading_quoted(rest) {
        return Some(p.to_string());
    }
    // Node: `, open '/p'`, `, mkdir '/p'`, `, scandir '/p'`.
    let word_end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    if word_end > 0 && rest[word_end..].starts_with(' ') {
        if let Some(p) = leading_quoted(rest[word_end + 1..].trim_start()) {
            return Some(p.to_string());
        }
    }
    if rest.starts_with('/') {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        return Some(rest[..end].to_string());
    }
    None
}

fn leading_quoted(s: &str) -> Option<&str> {
    let q = s.chars().next().filter(|c| QUOTES.contains(c))?;
    let body = &s[q.len_utf8()..];
    let closing = if q == '\u{2018}' {
        '\u{2019}'
    } else if q == '`' {
        '\''
    } else {
        q
    };
    // No path is longer than PATH_MAX: the closing quote is looked for that far only, so a line
    // of many unclosed quotes after the phrase is not read to its end once per occurrence.
    let mut within = body.len().min(PATH_MAX_BYTES);
    while !body.is_char_boundary(within) {
        within -= 1;
    }
    // Single-char patterns search with memchr (the bounded search still runs once per occurrence).
    let body_in = &body[..within];
    let end = match q {
        '`' => [body_in.find('\''), body_in.find('`')].into_iter().flatten().min()?,
        _ => body_in.find(closing)?,
    };
    let content = &body[..end];
    (!content.is_empty()).then_some(content)
}

/// `p` made absolute against `cwd` (when relative) and normalised lexically (`.` and `..`).
pub(crate) fn absolutize(p: &str, cwd: Option<&Path>) -> Option<PathBuf> {
    let path = Path::new(p);
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd?.join(path)
    };
    Some(normalize(&joined))
}

pub(crate) fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("/");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// macOS prints `/tmp/x` for what is canonically `/private/tmp/x`; compare both spellings alike.
pub(crate) fn without_private(p: &Path) -> PathBuf {
    for alias in ["/private/tmp", "/private/var", "/private/etc"] {
        if p.starts_with(alias) {
            if let Ok(rest) = p.strip_prefix("/private") {
                return Path::new("/").join(rest);
            }
        }
    }
    p.to_path_buf()
}

/// `p` is `root` or inside it (component-wise), treating `/private/tmp` and `/tmp` alike.
pub(crate) fn is_under(p: &Path, root: &Path) -> bool {
    p.starts_with(root) || without_private(p).starts_with(without_private(root))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(line: &str, phrase: &str) -> Option<String> {
        extract_path(line, phrase)
    }

    #[test]
    fn codex_form() {
        assert_eq!(
            ex(
                "bash: /private/tmp/denied: Operation not permitted",
                "operation not permitted"
            )
            .as_deref(),
            Some("/private/tmp/denied")
        );
        assert_eq!(
            ex(
                "bash: line 1: ./noexec.sh: Permission denied",
                "permission denied"
            )
            .as_deref(),
            Some("./noexec.sh")
        );
        assert_eq!(
            ex("cat: ../up: Permission denied", "permission denied").as_deref(),
            Some("../up")
        );
        assert_eq!(
            ex(
                "bash: \"/q x\": Read-only file system",
                "read-only file system"
            )
            .as_deref(),
            Some("/q x")
        );
        assert_eq!(
            ex(
                "cargo failed: Read-only file system when writing target",
                "read-only file system"
            ),
            None
        );
        assert_eq!(ex("error: Permission denied", "permission denied"), None);
        assert_eq!(ex("Permission denied", "permission denied"), None);
    }

    #[test]
    fn coreutils_forms() {
        assert_eq!(
            ex(
                "touch: cannot touch '/p': Read-only file system",
                "read-only file system"
            )
            .as_deref(),
            Some("/p")
        );
        assert_eq!(
            ex(
                "mkdir: cannot create directory '/p/d': Read-only file system",
                "read-only file system"
            )
            .as_deref(),
            Some("/p/d")
        );
        assert_eq!(
            ex(
                "cp: cannot create regular file '/p/f': Permission denied",
                "permission denied"
            )
            .as_deref(),
            Some("/p/f")
        );
        assert_eq!(
            ex(
                "ls: cannot access '/ws/secret/k': No such file or directory",
                "no such file or directory"
            )
            .as_deref(),
            Some("/ws/secret/k")
        );
        assert_eq!(
            ex(
                "sh: 1: cannot create /tmp/x: Read-only file system",
                "read-only file system"
            )
            .as_deref(),
            Some("/tmp/x")
        );
        assert_eq!(
            ex(
                "bash: out.txt: Read-only file system",
                "read-only file system"
            )
            .as_deref(),
            Some("out.txt")
        );
        assert_eq!(
            ex(
                "bash: .git/x: Read-only file system",
                "read-only file system"
            )
            .as_deref(),
            Some(".git/x")
        );
        assert_eq!(
            ex(
                "error: could not lock config file .git/config: Read-only file system",
                "read-only file system"
            )
            .as_deref(),
            Some(".git/config")
        );
        assert_eq!(
            ex(
                "mkdir: cannot create directory \u{2018}build\u{2019}: Read-only file system",
                "read-only file system"
            )
            .as_deref(),
            Some("build")
        );
        assert_eq!(
            ex(
                "fatal: Unable to create '/w/.git/index.lock': Read-only file system",
                "read-only file system"
            )
            .as_deref(),
            Some("/w/.git/index.lock")
        );
    }

    #[test]
    fn python_and_node_forms() {
        assert_eq!(
            ex(
                "PermissionError: [Errno 13] Permission denied: '/p'",
                "permission denied"
            )
            .as_deref(),
            Some("/p")
        );
        assert_eq!(
            ex(
                "OSError: [Errno 30] Read-only file system: '/p'",
                "read-only file system"
            )
            .as_deref(),
            Some("/p")
        );
        assert_eq!(
            ex(
                "FileNotFoundError: [Errno 2] No such file or directory: 'secret/k'",
                "no such file or directory"
            )
            .as_deref(),
            Some("secret/k")
        );
        assert_eq!(
            ex(
                "Error: EACCES: permission denied, open '/p'",
                "permission denied"
            )
            .as_deref(),
            Some("/p")
        );
        assert_eq!(
            ex(
                "Error: EROFS: read-only file system, open '/p'",
                "read-only file system"
            )
            .as_deref(),
            Some("/p")
        );
        assert_eq!(
            ex(
                "Error: EPERM: operation not permitted, open '/p'",
                "operation not permitted"
            )
            .as_deref(),
            Some("/p")
        );
        assert_eq!(
            ex(
                "[Error: ENOENT: no such file or directory, scandir '/s'] {",
                "no such file or directory"
            )
            .as_deref(),
            Some("/s")
        );
    }

    #[test]
    fn lexical_paths() {
        assert_eq!(
            absolutize("./a/../b", Some(Path::new("/ws"))),
            Some(PathBuf::from("/ws/b"))
        );
        assert_eq!(absolutize("/x/./y/..", None), Some(PathBuf::from("/x")));
        assert_eq!(absolutize("rel", None), None);
        assert!(is_under(Path::new("/ws/a"), Path::new("/ws")));
        assert!(is_under(Path::new("/ws"), Path::new("/ws")));
        assert!(!is_under(Path::new("/wsx"), Path::new("/ws")));
        assert!(is_under(Path::new("/tmp/a"), Path::new("/private/tmp")));
        assert!(is_under(Path::new("/private/tmp/a"), Path::new("/tmp")));
    }
}
