//! A YAML value as js-yaml takes it, for the line readers of a YAML configuration
//! (`yarn_programs`): yarn berry reads `.yarnrc.yml` with js-yaml (`@yarnpkg/parsers`' `parseSyml`:
//! `safeLoad` with the failsafe schema), so a value is the same string written in any of YAML's
//! forms. Found by an attacker's review (host35): a value on the lines below its key (`yarnPath:`
//! then an indented line; a block scalar `>-` or `|-`), behind a tag or an anchor (`!!str x`,
//! `&r x`), an alias of an anchor (`*r`), a double-quoted escape (`"\x2Eyarn/releases/x.cjs"`) or
//! an explicit key (`? yarnPath` then `: x`) was not taken, and the file it named not kept (js-yaml
//! 5.5.0, the one in `node_modules`, gave `yarnPath` the release's path for each).
//!
//! What a line gives is a list of candidates, each kept as a path is: the safe side (a candidate
//! that is not the value costs a read-only path at most).

/// A value's candidates: `value`, the rest of the line after a key's `:` (or a list item's `-`),
/// `below` the lines after it, `indent` the key's indentation, `anchors` the anchors seen so far
/// (a new one, `&name value`, is added).
pub fn candidates(value: &str, below: &[&str], indent: usize, anchors: &mut Vec<(String, Vec<String>)>) -> Vec<String> {
    let (anchor, v) = properties(value.trim());
    let found = if let Some(joined) = quoted_over_lines(v, below) {
        vec![scalar(&joined)]
    } else if let Some(name) = v.strip_prefix('*') {
        let name = name.split_whitespace().next().unwrap_or_default();
        anchors.iter().rev().find(|(a, _)| a == name).map(|(_, c)| c.clone()).unwrap_or_default()
    } else if v.is_empty() || v.starts_with('#') || is_block_indicator(v) {
        continued(below, indent)
    } else {
        vec![scalar(v)]
    };
    if let Some(name) = anchor {
        if anchors.len() < super::named_files::MAX_PROGRAMS {
            anchors.push((name.to_string(), found.clone()));
        }
    }
    found
}

/// The lines of `text` as js-yaml breaks them: at a line feed, a carriage return, or both (a lone
/// CR ends a line there: found by an attacker's review, left36, `nodeLinker: pnp\ryarnPath: x`
/// was one line whose key was `nodeLinker`).
pub fn lines(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = text.split('\n').flat_map(|l| l.split('\r')).collect();
    if out.last() == Some(&"") {
        out.pop();
    }
    out
}

/// A quoted scalar `v` that its line does not close, with the lines of `below` it runs on to,
/// joined as js-yaml folds them (an escaped line break of a double-quoted one joins without a
/// blank; found by an attacker's review, left36). `None` for any other `v`.
fn quoted_over_lines(v: &str, below: &[&str]) -> Option<String> {
    let quote = v.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    if closes(&v[1..], quote) {
        return None;
    }
    let mut joined = v.to_string();
    for l in below {
        let piece = l.trim();
        let escaped = quote == '"' && (joined.len() - joined.trim_end_matches('\\').len()) % 2 == 1;
        if escaped {
            joined.pop();
        } else if piece.is_empty() {
            joined.push('\n');
            continue;
        } else if !joined.ends_with('\n') {
            joined.push(' ');
        }
        joined.push_str(piece);
        if closes(piece, quote) {
            break;
        }
    }
    Some(joined)
}

/// Whether `piece` (inside a scalar quoted by `quote`) holds its closing quote.
fn closes(piece: &str, quote: char) -> bool {
    let mut chars = piece.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if quote == '"' => {
                chars.next();
            }
            '\'' if quote == '\'' && chars.peek() == Some(&'\'') => {
                chars.next();
            }
            c if c == quote => return true,
            _ => {}
        }
    }
    false
}

/// The length of the quoted scalar `v` starts with (its closing quote included), if closed.
pub fn quoted_len(v: &str) -> Option<usize> {
    let quote = v.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let mut chars = v.char_indices().skip(1).peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' if quote == '"' => {
                chars.next();
            }
            '\'' if quote == '\'' && chars.peek().is_some_and(|(_, n)| *n == '\'') => {
                chars.next();
            }
            c if c == quote => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// `v` without its comment: from a `#` after a blank (a space or a tab, as YAML's comment needs;
/// found by an attacker's review, left36, `x.cjs\t# pinned` was read whole).
fn without_comment(v: &str) -> &str {
    let cut = v.char_indices().find(|&(i, c)| c == '#' && v[..i].ends_with([' ', '\t'])).map_or(v.len(), |(i, _)| i);
    v[..cut].trim()
}

/// The anchor of `v`'s properties (`&name`, `!tag` in either order), and what follows them.
pub fn properties(mut v: &str) -> (Option<&str>, &str) {
    let mut anchor = None;
    while let Some(first) = v.chars().next().filter(|c| *c == '&' || *c == '!') {
        let end = v.find(char::is_whitespace).unwrap_or(v.len());
        if first == '&' {
            anchor = Some(&v[1..end]);
        }
        v = v[end..].trim_start();
    }
    (anchor, v)
}

/// Whether `v` opens a block scalar (`|`, `>`, with a chomping and an indentation indicator).
fn is_block_indicator(v: &str) -> bool {
    let head = without_comment(v);
    head.starts_with(['|', '>']) && head[1..].chars().all(|c| c == '-' || c == '+' || c.is_ascii_digit())
}

/// The lines of `below` indented past `indent` (a block scalar's, or a plain scalar continued):
/// each trimmed, and all of them folded into one (js-yaml folds a plain or `>` scalar so). A line
/// that is a list's item (`- x`, `- path: x`) gives its item and that item's value too: an anchor
/// of a list of plugins, which `plugins: *p` takes (found by an attacker's review, left36).
fn continued(below: &[&str], indent: usize) -> Vec<String> {
    let lines: Vec<&str> = below
        .iter()
        .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > indent)
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    let mut out: Vec<String> = lines.iter().map(|l| scalar(l)).collect();
    for l in lines.iter().filter(|l| l.starts_with("- ")) {
        let item = l.trim_start_matches(|c: char| c == '-' || c.is_whitespace());
        out.push(scalar(item));
        if let Some((_, value)) = item.split_once(": ") {
            out.push(scalar(value));
        }
    }
    if lines.len() > 1 {
        out.push(lines.join(" "));
    }
    out
}

/// One flow scalar: unquoted (a double-quoted one's escapes read, a single-quoted one's `''`),
/// a plain one's trailing comment dropped.
pub fn scalar(value: &str) -> String {
    let v = value.trim();
    if let Some(rest) = v.strip_prefix('\'') {
        let mut out = String::new();
        let mut chars = rest.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\'' if chars.peek() == Some(&'\'') => {
                    chars.next();
                    out.push('\'');
                }
                '\'' => break,
                c => out.push(c),
            }
        }
        return out;
    }
    if let Some(rest) = v.strip_prefix('"') {
        return double_quoted(rest);
    }
    without_comment(v).to_string()
}

/// The text of a double-quoted scalar whose opening quote is gone, up to its closing one.
fn double_quoted(rest: &str) -> String {
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => {
                let e = chars.next().unwrap_or('\\');
                let hex = |chars: &mut std::str::Chars, n: usize| {
                    let h: String = chars.by_ref().take(n).collect();
                    u32::from_str_radix(&h, 16).ok().and_then(char::from_u32).unwrap_or('\u{fffd}')
                };
                out.push(match e {
                    '0' => '\0',
                    'a' => '\x07',
                    'b' => '\x08',
                    't' | '\t' => '\t',
                    'n' => '\n',
                    'v' => '\x0b',
                    'f' => '\x0c',
                    'r' => '\r',
                    'e' => '\x1b',
                    'N' => '\u{85}',
                    '_' => '\u{a0}',
                    'L' => '\u{2028}',
                    'P' => '\u{2029}',
                    'x' => hex(&mut chars, 2),
                    'u' => hex(&mut chars, 4),
                    'U' => hex(&mut chars, 8),
                    other => other,
                });
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_value_in_each_form_js_yaml_takes() {
        let mut anchors = Vec::new();
        let mut c = |v: &str, below: &[&str]| candidates(v, below, 0, &mut anchors);
        assert_eq!(c(" >-", &["  .yarn/a.cjs", "x: y"]), [".yarn/a.cjs"]);
        assert_eq!(c(" |-  # a comment", &["  .yarn/b.cjs"]), [".yarn/b.cjs"]);
        assert_eq!(c("", &["", "    .yarn/c.cjs", "    more", "next: 1"]), [".yarn/c.cjs", "more", ".yarn/c.cjs more"]);
        assert_eq!(c(" !!str .yarn/e.cjs", &[]), [".yarn/e.cjs"]);
        assert_eq!(c(" &r !!str .yarn/d.cjs", &[]), [".yarn/d.cjs"]);
        assert_eq!(c(" *r", &[]), [".yarn/d.cjs"], "an alias of the anchor");
        assert_eq!(c(" \"\\x2Eyarn\\u002Freleases/g.cjs\" # c", &[]), [".yarn/releases/g.cjs"]);
        assert_eq!(c(" 'it''s/x.cjs'", &[]), ["it's/x.cjs"]);
        assert_eq!(c(" \"a\\\"b/c\"", &[]), ["a\"b/c"]);
        assert_eq!(c(" *missing", &[]), Vec::<String>::new());
    }
}
