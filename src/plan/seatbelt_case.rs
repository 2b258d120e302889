//! Names in Seatbelt regexes matched whatever their case. macOS volumes are case-insensitive by
//! default (APFS, HFS+): `.GIT/config` is `.git/config` to git, `.ZSHRC` is `.zshrc` to zsh and
//! `~/.SSH` is `~/.ssh` to sshd, while the profile's `literal`, `subpath` and `regex` filters
//! compare the path a new entry is created at as the command spelled it (found by an attacker's
//! review: `.GIT/config`, `.Envrc`, `~/.SSH/authorized_keys` were writable). SBPL documents no case
//! flag for its regexes, so each letter is written as both of its cases.
//!
//! Not covered: Unicode normalization (APFS also takes a decomposed `u` + U+0308 for `ü`) and the
//! code points HFS+ ignores in names; every default name is ASCII.

use std::fmt::Write;
use std::path::{Component, Path};

/// `name` as a regex that matches it in any case, every other regex operator escaped. An ASCII
/// letter becomes a bracket class (`[gG]`); another letter with one other case a group of both
/// (`(ü|Ü)`: a class of multi-byte characters would mean single bytes to a byte-wise engine).
/// `"`, `\` and control characters, which a `#"..."` literal cannot hold verbatim, match any one
/// byte (wider, never narrower; `planted::names` rejects them in protected names anyway).
pub fn any_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() * 4);
    for c in name.chars() {
        let (lower, upper) = (single(c.to_lowercase()), single(c.to_uppercase()));
        match (lower, upper) {
            (Some(l), Some(u)) if l != u && c.is_ascii() => write!(out, "[{l}{u}]").unwrap(),
            (Some(l), Some(u)) if l != u => write!(out, "({l}|{u})").unwrap(),
            _ if c == '"' || c == '\\' || c.is_control() => out.push('.'),
            _ => {
                if ".+*?()|[]{}^$".contains(c) {
                    out.push('\\');
                }
                out.push(c);
            }
        }
    }
    out
}

fn single(mut it: impl Iterator<Item = char>) -> Option<char> {
    let c = it.next()?;
    it.next().is_none().then_some(c)
}

/// A regex for `path` and everything below it, in any case below `root`, at exactly its depth:
/// the components of `root` are matched as any components (the rule that uses it restricts to
/// `(subpath ROOT)`, so no path of the host is written into the profile, only the names below the
/// root). `None` when `path` is not below `root`.
pub fn below_root(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let depth = root.components().filter(|c| matches!(c, Component::Normal(_))).count();
    let mut re = String::from("^");
    re.push_str(&"/[^/]+".repeat(depth));
    let mut names = 0;
    for c in rel.components() {
        let Component::Normal(name) = c else { return None };
        write!(re, "/{}", any_case(&name.to_string_lossy())).unwrap();
        names += 1;
    }
    (names > 0).then(|| re + "(/.*)?$")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::seatbelt_eval_regex::Regex;

    fn m(pattern: &str, text: &str) -> bool {
        Regex::parse(pattern).unwrap().is_match(text)
    }

    #[test]
    fn any_case_escapes_operators_and_folds_letters() {
        assert_eq!(any_case(".git"), "\\.[gG][iI][tT]");
        assert_eq!(any_case("a+b*c?(d)|[e]{f}^g$"), "[aA]\\+[bB]\\*[cC]\\?\\([dD]\\)\\|\\[[eE]\\]\\{[fF]\\}\\^[gG]\\$");
        assert_eq!(any_case("Müller 1.json"), "[mM](ü|Ü)[lL][lL][eE][rR] 1\\.[jJ][sS][oO][nN]");
        assert_eq!(any_case("a\"b\\c\u{1}"), "[aA].[bB].[cC].");
        // ß upper-cases to two letters: kept as it is.
        assert_eq!(any_case("ß"), "ß");
        let re = format!("^/({})$", any_case(".mcp.json"));
        assert!(m(&re, "/.MCP.json") && m(&re, "/.mcp.JSON") && !m(&re, "/.mcpXjson"));
    }

    #[test]
    fn below_root_matches_at_the_path_s_depth_only() {
        let re = below_root(Path::new("/Users/me"), Path::new("/Users/me/.config/git")).unwrap();
        assert_eq!(re, "^/[^/]+/[^/]+/\\.[cC][oO][nN][fF][iI][gG]/[gG][iI][tT](/.*)?$");
        for yes in ["/Users/me/.config/git", "/Users/me/.Config/GIT/config", "/Users/me/.CONFIG/git/"] {
            assert!(m(&re, yes), "{yes}");
        }
        for no in ["/Users/me/proj/.config/git", "/Users/me/.config/gitx", "/Users/.config/git", "/Users/me/.config"] {
            assert!(!m(&re, no), "{no}");
        }
        assert_eq!(below_root(Path::new("/"), Path::new("/bin")).unwrap(), "^/[bB][iI][nN](/.*)?$");
        assert_eq!(below_root(Path::new("/a"), Path::new("/a")), None, "the root itself");
        assert_eq!(below_root(Path::new("/a"), Path::new("/b/c")), None);
    }
}
