//! JSON with comments and trailing commas (VS Code's `settings.json`, Zed's, coc.nvim's), made
//! plain JSON for `serde_json`: `//` and `/* */` comments outside strings become blanks (a
//! newline stays, so an error's line is the file's), and a comma with only blanks before a `}` or
//! `]` is dropped. A byte-order mark at the start is dropped too. Nothing else is forgiven: a file
//! VS Code's lenient reader takes past a real error is one this cannot read, which the callers say.

/// `text` as plain JSON.
pub fn plain(text: &str) -> String {
    let s = text.strip_prefix('\u{feff}').unwrap_or(text).as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'"' => {
                // A string whole, its escapes included (`\"` does not end it).
                let start = i;
                i += 1;
                while i < s.len() && s[i] != b'"' {
                    i += if s[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(s.len());
                out.extend_from_slice(&s[start..i]);
                continue;
            }
            b'/' if s.get(i + 1) == Some(&b'/') => {
                // Ended by a CR as by an LF: jsonc-parser's (VS Code's, coc.nvim's) scanner does,
                // so in a file with CR line ends the next line is a setting (rfix36).
                while i < s.len() && !matches!(s[i], b'\n' | b'\r') {
                    i += 1;
                }
                continue;
            }
            b'/' if s.get(i + 1) == Some(&b'*') => {
                let end = s[i + 2..].windows(2).position(|w| w == b"*/").map_or(s.len(), |p| i + 2 + p + 2);
                out.extend(s[i..end].iter().map(|&c| if c == b'\n' { b'\n' } else { b' ' }));
                i = end;
                continue;
            }
            c @ (b'}' | b']') => {
                if let Some(last) = out.iter().rposition(|c| !c.is_ascii_whitespace()) {
                    if out[last] == b',' {
                        out[last] = b' ';
                    }
                }
                out.push(c);
            }
            c => out.push(c),
        }
        i += 1;
    }
    // Only whole strings and ASCII were cut or blanked: the rest is `text`'s UTF-8 as it was.
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_comments_and_trailing_commas_not_strings() {
        let text = "\u{feff}{\n  // a comment \"x\": 1\n  \"a//b\": \"c/*d*/\", /* block\n over lines */ \"e\": [1, 2,],\n  \"f\": \"\\\",}\",\n}\n";
        let v: serde_json::Value = serde_json::from_str(&plain(text)).unwrap();
        assert_eq!(v, serde_json::json!({ "a//b": "c/*d*/", "e": [1, 2], "f": "\",}" }));
        assert_eq!(plain("{\"a\": 1 /* x\ny */}").lines().count(), 2, "a newline of a comment stays");
        assert!(serde_json::from_str::<serde_json::Value>(&plain("{\"a\": 1,, }")).is_err(), "two commas: not forgiven");
        let v: serde_json::Value = serde_json::from_str(&plain("{\r// c\r\"a\": 1 // d\r\n}\r")).unwrap();
        assert_eq!(v, serde_json::json!({ "a": 1 }), "a CR ends a line comment, as in jsonc-parser");
    }
}
