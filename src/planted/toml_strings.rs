//! The string values of a TOML document, each with the key it is under, as cargo and rustup read
//! them. Found by the fixer (fix34): `cargo_programs` and `toolchain_path` scanned each line for a
//! bare or dotted key and took a string's text as written, but TOML names the same key quoted
//! (`"rustc-wrapper" = ...`, `[toolchain] "path" = ...`, also inside an inline table) and the same
//! value through a multi-line string (`"""` then a newline) or an escape (`"tools\u002Fwrap.sh"`):
//! cargo and rustup ran those programs, and none was kept.
//!
//! This is a reader of TOML's syntax only (tables, dotted and quoted keys, the four kinds of
//! string with their escapes, arrays and inline tables over several lines): no value but a string
//! is kept, no type is checked. What it cannot read is `Strings::unread` (the callers say so in
//! the result): cargo and rustup refuse such a file too, or it uses a form this reader lacks.

/// What `strings` found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Strings {
    /// Each string value (an array's each), with its whole key: the table's, then the key's parts.
    pub found: Vec<(Vec<String>, String)>,
    /// The text is not TOML this could read: what came before that is in `found`.
    pub unread: bool,
}

/// Every string value of `text`, with its key.
pub fn strings(text: &str) -> Strings {
    let mut c = Cursor { s: text.as_bytes(), i: 0 };
    let mut out = Strings::default();
    out.unread = document(&mut c, &mut out.found).is_err();
    out
}

/// Arrays and inline tables nested deeper than this are not read (recursion's bound).
const MAX_DEPTH: usize = 64;

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

type Found = Vec<(Vec<String>, String)>;

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn starts(&self, p: &str) -> bool {
        self.s[self.i..].starts_with(p.as_bytes())
    }
    fn expect(&mut self, p: &str) -> Result<(), ()> {
        if !self.starts(p) {
            return Err(());
        }
        self.i += p.len();
        Ok(())
    }
    /// Spaces and tabs.
    fn blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }
    /// Blanks, newlines and comments (between statements, in arrays and inline tables).
    fn gaps(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.i += 1,
                Some(b'#') => self.comment(),
                _ => return,
            }
        }
    }
    fn comment(&mut self) {
        while self.peek().is_some_and(|b| b != b'\n') {
            self.i += 1;
        }
    }
}

fn document(c: &mut Cursor, out: &mut Found) -> Result<(), ()> {
    let mut table: Vec<String> = Vec::new();
    loop {
        c.gaps();
        match c.peek() {
            None => return Ok(()),
            Some(b'[') => {
                let array = c.starts("[[");
                c.i += if array { 2 } else { 1 };
                table = key(c)?;
                c.expect(if array { "]]" } else { "]" })?;
            }
            Some(_) => {
                let mut path = table.clone();
                path.extend(key(c)?);
                c.expect("=")?;
                c.blanks();
                value(c, &path, out, 0)?;
            }
        }
        // A statement ends its line.
        c.blanks();
        if c.peek() == Some(b'#') {
            c.comment();
        }
        if !(c.peek().is_none() || c.starts("\n") || c.starts("\r\n")) {
            return Err(());
        }
    }
}

/// A key: bare or quoted parts joined by dots, blanks around each.
fn key(c: &mut Cursor) -> Result<Vec<String>, ()> {
    let mut parts = Vec::new();
    loop {
        c.blanks();
        let part = match c.peek() {
            Some(b'"') if !c.starts("\"\"\"") => basic(c)?,
            Some(b'\'') if !c.starts("'''") => literal(c)?,
            Some(b) if bare(b) => {
                let start = c.i;
                while c.peek().is_some_and(bare) {
                    c.i += 1;
                }
                String::from_utf8_lossy(&c.s[start..c.i]).into_owned()
            }
            _ => return Err(()),
        };
        parts.push(part);
        c.blanks();
        if c.peek() != Some(b'.') {
            return Ok(parts);
        }
        c.i += 1;
    }
}

fn bare(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// A value under `path`: a string is kept, an array's and an inline table's are looked into, any
/// other (a number, a boolean, a date) is passed over.
fn value(c: &mut Cursor, path: &[String], out: &mut Found, depth: usize) -> Result<(), ()> {
    if depth > MAX_DEPTH {
        return Err(());
    }
    match c.peek() {
        Some(b'"' | b'\'') => {
            let s = string(c)?;
            out.push((path.to_vec(), s));
        }
        Some(b'[') => {
            c.i += 1;
            loop {
                c.gaps();
                if c.peek() == Some(b']') {
                    break;
                }
                value(c, path, out, depth + 1)?;
                c.gaps();
                match c.peek() {
                    Some(b',') => c.i += 1,
                    Some(b']') => break,
                    _ => return Err(()),
                }
            }
            c.i += 1;
        }
        Some(b'{') => {
            c.i += 1;
            loop {
                // Newlines inside are TOML 1.1's; taken, the safe side.
                c.gaps();
                if c.peek() == Some(b'}') {
                    break;
                }
                let mut inner = path.to_vec();
                inner.extend(key(c)?);
                c.expect("=")?;
                c.blanks();
                value(c, &inner, out, depth + 1)?;
                c.gaps();
                match c.peek() {
                    Some(b',') => c.i += 1,
                    Some(b'}') => break,
                    _ => return Err(()),
                }
            }
            c.i += 1;
        }
        _ => {
            let start = c.i;
            while c.peek().is_some_and(|b| !matches!(b, b',' | b']' | b'}' | b'\n' | b'\r' | b'#')) {
                c.i += 1;
            }
            if c.i == start {
                return Err(());
            }
        }
    }
    Ok(())
}

/// Any of the four kinds of string.
fn string(c: &mut Cursor) -> Result<String, ()> {
    if c.starts("\"\"\"") {
        multi_line(c, b'"')
    } else if c.starts("'''") {
        multi_line(c, b'\'')
    } else if c.peek() == Some(b'"') {
        basic(c)
    } else {
        literal(c)
    }
}

/// `"..."`, its escapes decoded.
fn basic(c: &mut Cursor) -> Result<String, ()> {
    c.i += 1;
    let mut out = Vec::new();
    loop {
        match c.peek() {
            None | Some(b'\n') => return Err(()),
            Some(b'"') => break,
            Some(b'\\') => escape(c, &mut out)?,
            Some(b) => {
                out.push(b);
                c.i += 1;
            }
        }
    }
    c.i += 1;
    String::from_utf8(out).map_err(drop)
}

/// `'...'`, as written.
fn literal(c: &mut Cursor) -> Result<String, ()> {
    c.i += 1;
    let start = c.i;
    while c.peek().is_some_and(|b| b != b'\'' && b != b'\n') {
        c.i += 1;
    }
    c.expect("'")?;
    String::from_utf8(c.s[start..c.i - 1].to_vec()).map_err(drop)
}

/// `"""..."""` (escapes decoded, a backslash at a line's end taking the blanks and newlines after
/// it) or `'''...'''` (as written); a newline right after the opening is not part of it, and up to
/// two quotes before the closing three are.
fn multi_line(c: &mut Cursor, q: u8) -> Result<String, ()> {
    c.i += 3;
    if c.starts("\n") {
        c.i += 1;
    } else if c.starts("\r\n") {
        c.i += 2;
    }
    let mut out = Vec::new();
    loop {
        match c.peek() {
            None => return Err(()),
            Some(b) if b == q && c.s[c.i..].starts_with(&[q, q, q]) => {
                let run = c.s[c.i..].iter().take_while(|x| **x == q).count();
                if run > 5 {
                    return Err(());
                }
                out.extend(std::iter::repeat_n(q, run - 3));
                c.i += run;
                return String::from_utf8(out).map_err(drop);
            }
            Some(b'\\') if q == b'"' => {
                let after = c.s[c.i + 1..].iter().position(|b| !matches!(b, b' ' | b'\t')).map(|n| c.i + 1 + n);
                if after.is_some_and(|a| c.s[a] == b'\n' || c.s[a..].starts_with(b"\r\n")) {
                    c.i += 1;
                    c.gaps_no_comment();
                } else {
                    escape(c, &mut out)?;
                }
            }
            Some(b) => {
                out.push(b);
                c.i += 1;
            }
        }
    }
}

impl Cursor<'_> {
    /// Blanks and newlines (a line-ending backslash's), no comment: a `#` there is the string's.
    fn gaps_no_comment(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }
}

/// The escape at the cursor (a backslash), decoded into `out`.
fn escape(c: &mut Cursor, out: &mut Vec<u8>) -> Result<(), ()> {
    let e = *c.s.get(c.i + 1).ok_or(())?;
    c.i += 2;
    let simple = match e {
        b'b' => Some('\u{8}'),
        b't' => Some('\t'),
        b'n' => Some('\n'),
        b'f' => Some('\u{c}'),
        b'r' => Some('\r'),
        b'e' => Some('\u{1b}'),
        b'"' => Some('"'),
        b'\\' => Some('\\'),
        _ => None,
    };
    let ch = match (simple, e) {
        (Some(ch), _) => ch,
        (None, b'u' | b'U' | b'x') => {
            let n = match e {
                b'u' => 4,
                b'U' => 8,
                _ => 2,
            };
            let hex = c.s.get(c.i..c.i + n).ok_or(())?;
            c.i += n;
            let code = u32::from_str_radix(std::str::from_utf8(hex).map_err(drop)?, 16).map_err(drop)?;
            char::from_u32(code).ok_or(())?
        }
        _ => return Err(()),
    };
    let mut buf = [0u8; 4];
    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(String, String)> {
        let s = strings(text);
        assert!(!s.unread, "unread: {text:?}");
        s.found.into_iter().map(|(k, v)| (k.join("."), v)).collect()
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn keys_in_every_spelling() {
        let text = "[build]\n\"rustc-wrapper\" = \"a/w\"\nrustc='b/r' # c\n[target.'cfg(target_os = \"linux\")']\nrunner = [\n \"c/q\", # x\n 'd',\n]\n\
            host = { 'linker' = \"e/l\", x = 1, y = { z = [\"f/g\"] } }\n  a . \"b.c\" . d = \"h\"\n[[arr]]\nk = 2026-01-01 10:00:00\nv = true\n";
        assert_eq!(
            found(text),
            pairs(&[
                ("build.rustc-wrapper", "a/w"),
                ("build.rustc", "b/r"),
                ("target.cfg(target_os = \"linux\").runner", "c/q"),
                ("target.cfg(target_os = \"linux\").runner", "d"),
                ("target.cfg(target_os = \"linux\").host.linker", "e/l"),
                ("target.cfg(target_os = \"linux\").host.y.z", "f/g"),
                ("target.cfg(target_os = \"linux\").a.b.c.d", "h"),
            ])
        );
    }

    #[test]
    fn strings_as_cargo_and_rustup_read_them() {
        let text = "a = \"\"\"\n/w/tc\"\"\"\nb = \"t\\u002Fw\\U0000002Fx\\x2f\\\\\"\nc = '''\r\nraw\\n'''\nd = \"\"\"x \\\n   \n  y\"\"\"\"\"\ne = \"\"\"q\"\"\"\n";
        assert_eq!(found(text), pairs(&[("a", "/w/tc"), ("b", "t/w/x/\\"), ("c", "raw\\n"), ("d", "x y\"\""), ("e", "q")]));
    }

    #[test]
    fn what_is_not_toml_is_unread() {
        for bad in ["/w/tc\n", "a = \"x\ny\"", "a = [\"x\"", "a = 'x' b = 'y'", "a = \"\\q\"", &format!("a = {}", "[".repeat(100))] {
            assert!(strings(bad).unread, "{bad:?}");
        }
        let s = strings("a = 'x'\nb = ");
        assert_eq!((s.found.len(), s.unread), (1, true));
    }
}
