//! The regular expressions of sandspawn's Seatbelt profiles, matched the way SBPL's `regex` filter
//! matches a path (tests only; see `seatbelt_eval`): POSIX extended syntax, unanchored unless `^`
//! or `$` say otherwise. Only what sandspawn emits is accepted (literals and `\`-escaped
//! punctuation, `.`, `[...]` with ranges and `^`, groups, `|`, `*`, `+`, `?`, `^`, `$`); anything
//! else (`{n}`, `\d`, `[:alpha:]`, back references) is an error, so a profile the evaluator cannot
//! read is never judged by a guess.

#[derive(Debug, Clone)]
enum Node {
    Char(char),
    Any,
    Class { negated: bool, ranges: Vec<(char, char)> },
    Start,
    End,
    /// Alternatives, each a sequence.
    Group(Vec<Vec<Node>>),
    Repeat { node: Box<Node>, min: usize, max: Option<usize> },
}

#[derive(Debug, Clone)]
pub struct Regex {
    alternatives: Vec<Vec<Node>>,
}

impl Regex {
    pub fn parse(pattern: &str) -> Result<Regex, String> {
        let chars: Vec<char> = pattern.chars().collect();
        let mut at = 0;
        let alternatives = alternation(&chars, &mut at)?;
        if at != chars.len() {
            return Err(format!("unbalanced ')' at {at} in {pattern:?}"));
        }
        Ok(Regex { alternatives })
    }

    /// Does the pattern match somewhere in `text`?
    pub fn is_match(&self, text: &str) -> bool {
        let text: Vec<char> = text.chars().collect();
        let m = Matcher { text: &text };
        (0..=text.len()).any(|start| self.alternatives.iter().any(|seq| m.seq(seq, start, &|_| true)))
    }
}

fn alternation(p: &[char], at: &mut usize) -> Result<Vec<Vec<Node>>, String> {
    let mut alternatives = vec![sequence(p, at)?];
    while p.get(*at) == Some(&'|') {
        *at += 1;
        alternatives.push(sequence(p, at)?);
    }
    Ok(alternatives)
}

fn sequence(p: &[char], at: &mut usize) -> Result<Vec<Node>, String> {
    let mut seq = Vec::new();
    while let Some(&c) = p.get(*at) {
        let node = match c {
            '|' | ')' => break,
            '(' => {
                *at += 1;
                let inner = alternation(p, at)?;
                if p.get(*at) != Some(&')') {
                    return Err("unclosed '('".into());
                }
                Node::Group(inner)
            }
            '[' => class(p, at)?,
            '.' => Node::Any,
            '^' => Node::Start,
            '$' => Node::End,
            '\\' => {
                *at += 1;
                match p.get(*at) {
                    Some(&e) if e.is_ascii_punctuation() => Node::Char(e),
                    other => return Err(format!("unsupported escape \\{other:?}")),
                }
            }
            '*' | '+' | '?' | '{' | '}' => return Err(format!("unsupported or misplaced {c:?} at {}", *at)),
            c => Node::Char(c),
        };
        *at += 1;
        let (min, max) = match p.get(*at) {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            _ => {
                seq.push(node);
                continue;
            }
        };
        *at += 1;
        seq.push(Node::Repeat { node: Box::new(node), min, max });
    }
    Ok(seq)
}

/// `[...]` at `p[*at]`; leaves `*at` on the closing `]`.
fn class(p: &[char], at: &mut usize) -> Result<Node, String> {
    *at += 1;
    let negated = p.get(*at) == Some(&'^');
    if negated {
        *at += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = *p.get(*at).ok_or("unclosed '['")?;
        if c == ']' && !first {
            return Ok(Node::Class { negated, ranges });
        }
        if c == '[' && p.get(*at + 1).is_some_and(|n| matches!(n, ':' | '=' | '.')) {
            return Err("character class names are not supported".into());
        }
        first = false;
        if p.get(*at + 1) == Some(&'-') && p.get(*at + 2).is_some_and(|&e| e != ']') {
            ranges.push((c, p[*at + 2]));
            *at += 3;
        } else {
            ranges.push((c, c));
            *at += 1;
        }
    }
}

struct Matcher<'t> {
    text: &'t [char],
}

impl Matcher<'_> {
    /// Match `nodes` from `pos`, then hand the end position to `k` (backtracking by continuation).
    fn seq(&self, nodes: &[Node], pos: usize, k: &dyn Fn(usize) -> bool) -> bool {
        match nodes.split_first() {
            None => k(pos),
            Some((n, rest)) => self.node(n, pos, &|p| self.seq(rest, p, k)),
        }
    }

    fn node(&self, n: &Node, pos: usize, k: &dyn Fn(usize) -> bool) -> bool {
        let here = self.text.get(pos);
        match n {
            Node::Char(c) => here == Some(c) && k(pos + 1),
            Node::Any => here.is_some() && k(pos + 1),
            Node::Class { negated, ranges } => {
                here.is_some_and(|c| ranges.iter().any(|(lo, hi)| (lo..=hi).contains(&c)) != *negated) && k(pos + 1)
            }
            Node::Start => pos == 0 && k(pos),
            Node::End => pos == self.text.len() && k(pos),
            Node::Group(alternatives) => alternatives.iter().any(|seq| self.seq(seq, pos, k)),
            Node::Repeat { node, min, max } => self.repeat(node, *min, *max, pos, 0, k),
        }
    }

    /// Greedy: one more repetition first (only if it consumes something), then stop.
    fn repeat(&self, n: &Node, min: usize, max: Option<usize>, pos: usize, count: usize, k: &dyn Fn(usize) -> bool) -> bool {
        if max.is_none_or(|m| count < m) && self.node(n, pos, &|p| p != pos && self.repeat(n, min, max, p, count + 1, k)) {
            return true;
        }
        count >= min && k(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::Regex;

    fn m(pattern: &str, text: &str) -> bool {
        Regex::parse(pattern).unwrap().is_match(text)
    }

    #[test]
    fn the_profiles_patterns() {
        let git = r"/\.git(/.*)?$";
        assert!(m(git, "/ws/.git") && m(git, "/ws/a/.git/config") && m(git, "/ws/.git/"));
        assert!(!m(git, "/ws/.github/x") && !m(git, "/ws/x.git") && !m(git, "/ws/.gitignore"));
        let names = r"/(\.envrc|\.mcp\.json|odd\(name\))(/.*)?$";
        assert!(m(names, "/ws/.envrc") && m(names, "/ws/a/.mcp.json") && m(names, "/ws/odd(name)/x"));
        assert!(!m(names, "/ws/.envrcx") && !m(names, "/ws/.mcpxjson") && !m(names, "/ws/a.envrc"));
        assert!(m("/node_modules/", "/ws/node_modules/p/.vscode") && !m("/node_modules/", "/ws/node_modulesx/p"));
        assert!(m("^/dev/ttys[0-9]+", "/dev/ttys003") && !m("^/dev/ttys[0-9]+", "/dev/ttys") && !m("^/dev/ttys[0-9]+", "/x/dev/ttys1"));
        assert!(m("^/__KMP_REGISTERED_LIB_[0-9]+$", "/__KMP_REGISTERED_LIB_12") && !m("^/__KMP_REGISTERED_LIB_[0-9]+$", "/__KMP_REGISTERED_LIB_12x"));
        assert!(m("^net.routetable", "net.routetable.0") && !m("^net.routetable", "xnet.routetable"));
    }

    #[test]
    fn operators() {
        assert!(m("a|b", "xbx") && !m("^(a|b)$", "ab") && m("^(ab)+$", "ababab") && !m("^(ab)+$", ""));
        assert!(m("^a?b*$", "") && m("^a?b*$", "abbb") && !m("^a?b*$", "aab"));
        assert!(m("^[^/]*$", "abc") && !m("^[^/]*$", "a/c") && m("^[-a]$", "-") && m("^[]a]$", "]"));
        assert!(m("^(.*/)?x$", "x") && m("^(.*/)?x$", "a/b/x") && !m("^(.*/)?x$", "a/bx"));
    }

    #[test]
    fn what_sandspawn_never_emits_is_refused() {
        for bad in ["a{2}", r"\d", "[[:alpha:]]", "(a", "a)", "[a", "*a", r"\1"] {
            assert!(Regex::parse(bad).is_err(), "{bad}");
        }
    }
}
