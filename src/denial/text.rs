//! Small hand-written text helpers: ASCII case-insensitive search that never takes offsets from a
//! lowercased copy (`İ` changes length when lowercased), line iteration with byte offsets, and the
//! snippet cut.

/// Byte offset of the first ASCII case-insensitive match of `needle` (which must be ASCII lowercase)
/// in `hay`, at or after `from`. Offsets are always char boundaries of `hay` because an ASCII byte
/// never occurs inside a multi-byte UTF-8 sequence.
pub(crate) fn find_ci_from(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let h = hay.as_bytes();
    let n = needle.as_bytes();
    if n.is_empty() {
        return Some(from.min(h.len()));
    }
    if h.len() < n.len() || from > h.len() - n.len() {
        return None;
    }
    (from..=h.len() - n.len()).find(|&i| {
        h[i..i + n.len()]
            .iter()
            .zip(n)
            .all(|(a, b)| a.to_ascii_lowercase() == *b)
    })
}

pub(crate) fn find_ci(hay: &str, needle: &str) -> Option<usize> {
    find_ci_from(hay, needle, 0)
}

pub(crate) fn contains_ci(hay: &str, needle: &str) -> bool {
    find_ci(hay, needle).is_some()
}

/// Every match offset of `needle` in `hay` (ASCII case-insensitive, non-overlapping).
pub(crate) fn find_all_ci<'a>(hay: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = find_ci_from(hay, needle, from)?;
        from = at + needle.len().max(1);
        Some(at)
    })
}

/// The first occurrence of `word` (ASCII, any case) in `hay` that stands alone: neither side
/// touches a letter, digit or `_` (`ENOTFOUND`, not `ERR_ENOTFOUND_X` or `ENOTFOUNDS`).
pub(crate) fn find_word_ci(hay: &str, word: &str) -> Option<usize> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    find_all_ci(hay, word).find(|&at| {
        let before = hay[..at].chars().next_back();
        let after = hay[at + word.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

pub(crate) fn starts_with_ci(hay: &str, prefix: &str) -> bool {
    hay.len() >= prefix.len()
        && hay.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// Lines of `s` (split on `\n`, a trailing `\r` dropped) with the byte offset where each starts.
pub(crate) fn lines_with_offsets(s: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    s.split('\n').map(move |line| {
        let start = offset;
        offset += line.len() + 1;
        (start, line.strip_suffix('\r').unwrap_or(line))
    })
}

pub(crate) const SNIPPET_MAX_CHARS: usize = 512;

/// The trimmed `section`, at most 512 characters (cut on a char boundary). When the section is
/// longer, the window starts at the matching line (`match_at`, a byte offset into `section`) unless
/// that line already fits in the first 512 characters.
pub(crate) fn snippet(section: &str, match_at: Option<usize>) -> String {
    let lead = section.len() - section.trim_start().len();
    let trimmed = section.trim();
    if trimmed.chars().count() <= SNIPPET_MAX_CHARS {
        return trimmed.to_string();
    }
    let first_cut = cut_chars(trimmed, SNIPPET_MAX_CHARS);
    let start = match match_at {
        Some(at) if at >= lead => {
            let rel = at - lead;
            let line_start = trimmed[..rel.min(trimmed.len())]
                .rfind('\n')
                .map_or(0, |i| i + 1);
            let line_end = trimmed[rel.min(trimmed.len())..]
                .find('\n')
                .map_or(trimmed.len(), |i| rel + i);
            if line_end <= first_cut.len() {
                0
            } else {
                line_start
            }
        }
        _ => 0,
    };
    cut_chars(&trimmed[start..], SNIPPET_MAX_CHARS)
        .trim_end()
        .to_string()
}

/// The first `max` characters of `s`.
pub(crate) fn cut_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_ci_keeps_offsets_of_the_original() {
        let s = "bash: /tmp/İ-x: Operation Not Permitted";
        let at = find_ci(s, ": operation not permitted").unwrap();
        assert_eq!(&s[..at], "bash: /tmp/İ-x");
        assert_eq!(find_all_ci("aXa xa", "xa").collect::<Vec<_>>(), vec![1, 4]);
        assert!(find_ci("short", "longer needle").is_none());
    }

    #[test]
    fn snippet_is_cut_on_char_boundary() {
        let long = "é".repeat(600);
        let s = snippet(&long, None);
        assert_eq!(s.chars().count(), 512);
        let text = format!("{}\nbash: /x: Read-only file system\n", "a".repeat(1000));
        let at = text.find("bash").unwrap();
        assert!(snippet(&text, Some(at)).starts_with("bash: /x"));
        assert_eq!(snippet("  hi \n", Some(2)), "hi");
    }
}
