//! The text a review's diff compares: a file's bytes as lines a reviewer can read, whatever they
//! hold. A file that was not UTF-8, or held a NUL, was "Binary files PATH differ" and nothing more,
//! and one such byte in a comment hid any rewrite of a script from the reviewer (bash runs it: a
//! comment's byte is never decoded, a NUL past the first 80 bytes is skipped; Node too; Python with
//! a coding line), while apply landed it (found by an attacker's review, mode40). Now such a pair
//! is diffed with those bytes written `\xhh` (and a backslash `\\`, so no escape is ambiguous).

use std::fmt::Write;

/// Whether `bytes` must be escaped to be shown: not UTF-8, or holding a NUL (which ends a C string
/// and a terminal's line, and which git takes for binary).
pub fn needs_escaping(bytes: &[u8]) -> bool {
    bytes.contains(&0) || std::str::from_utf8(bytes).is_err()
}

/// `bytes` as text: as they are, or (`escaped`) with each byte that is not UTF-8 and each NUL
/// written `\xhh` and each backslash `\\`.
pub fn text(bytes: &[u8], escaped: bool) -> String {
    if !escaped {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\0' => out.push_str("\\x00"),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_that_are_not_text_are_escaped_and_backslashes_doubled() {
        assert!(!needs_escaping(b"echo hi\n"));
        assert!(needs_escaping(b"# \xff\n"));
        assert!(needs_escaping(b"# \0\n"));
        assert_eq!(text(b"a\\xff \xff\0\xc3\xa9\n", true), "a\\\\xff \\xff\\x00\u{e9}\n");
        assert_eq!(text(b"a\\b\n", false), "a\\b\n");
    }
}
