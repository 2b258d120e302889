//! Names in Seatbelt regexes matched whatever their case. macOS volumes are case-insensitive by
//! default (APFS, HFS+): `.GIT/config` is `.git/config` to git, `.ZSHRC` is `.zshrc` to zsh and
//! `~/.SSH` is `~/.ssh` to sshd, while the profile's `literal`, `subpath` and `regex` filters
//! compare the path a new entry is created at as the command spelled it (found by an attacker's
//! review: `.GIT/config`, `.Envrc`, `~/.SSH/authorized_keys` were writable). SBPL documents no case
//! flag for its regexes, so each letter is written as both of its cases.
//!
//! APFS folds names with Unicode's case folding, which takes a few letters outside ASCII to ASCII
//! ones (found by an attacker's review, seat39: `.vſcode/tasks.json`, `.gitconﬁg`, `~/.ßh` were
//! writable): those are alternatives of the letters they fold to (`FOLDS_TO_ASCII`), simple and
//! full folding both, since Apple's table is unverified without a Mac. HFS+ ignores some code
//! points in names altogether (`IGNORABLE`): `ignorable_spelling` refuses a name made of the
//! protected names' letters with one of them inside.
//!
//! APFS compares names normalization-insensitively too: `u` + U+0308 is `ü` (found by an attacker's
//! review, seat40: `cafe\u{301}.json` was writable with `café.json` protected, and a missing
//! `readOnlyPaths` entry `Über` could be created as `U\u{308}ber`). A name is taken decomposed
//! (`NFD`, Unicode's table, `seatbelt_nfd_table`) and each composed letter is an alternative of
//! the letters it decomposes to, as a ligature is (`([eE]\u{301}|é|É)`).
//!
//! Not covered: marks in another canonical order than the decomposition's (two marks of different
//! combining classes after one letter), Hangul syllables against their jamo, and the ignorable code
//! points inside the home's paths when no name is protected (`ignorable_spelling`'s rule takes
//! them when their letters are the names', as nearly every ASCII name's are); every default name
//! is ASCII.

use std::fmt::Write;
use std::path::{Component, Path};

use super::seatbelt_nfd_table::NFD;

/// Letters outside ASCII that Unicode's case folding (CaseFolding.txt: C and S, the simple one; F,
/// the full one) or a canonical decomposition to one code point takes to ASCII, with what they
/// become: KELVIN SIGN, LONG S, SHARP S and its capital, the Latin ligatures of U+FB00..FB06. Not İ
/// (U+0130) nor ı (U+0131), which fold to `i` only in the Turkic mapping (T), not APFS's: they
/// would add 8 bytes to each of the profile's 766 `i`s (6 KB). GREEK QUESTION MARK and GREEK VARIA are `;` and `` ` ``
/// in canonical decomposition (APFS compares names decomposed).
/// `folds_to_ascii_is_complete` checks it against Rust's case tables.
const FOLDS_TO_ASCII: &[(char, &str)] = &[
    ('\u{212A}', "k"),
    ('\u{017F}', "s"),
    ('\u{00DF}', "ss"),
    ('\u{1E9E}', "ss"),
    ('\u{FB00}', "ff"),
    ('\u{FB01}', "fi"),
    ('\u{FB02}', "fl"),
    ('\u{FB03}', "ffi"),
    ('\u{FB04}', "ffl"),
    ('\u{FB05}', "st"),
    ('\u{FB06}', "st"),
    ('\u{037E}', ";"),
    ('\u{1FEF}', "`"),
];

/// The code points HFS+ leaves out when it compares names (Apple's TN1150, FastUnicodeCompare).
const IGNORABLE: &[(char, char)] = &[('\u{200C}', '\u{200F}'), ('\u{202A}', '\u{202E}'), ('\u{206A}', '\u{206F}'), ('\u{FEFF}', '\u{FEFF}')];

/// At most this many spellings of a run of letters that ligatures overlap (`ffi`: 4); past it the
/// run is matched as any sequence of its letters and ligatures (wider, never narrower).
const MAX_SPELLINGS: usize = 16;

/// `name` as a regex that matches it in any case and in any spelling Unicode's case folding takes
/// to it, every other regex operator escaped. An ASCII letter becomes a bracket class (`[gG]`), or
/// a group with the letters that fold to it (`([kK]|\u{212A})`); another letter with one other case
/// a group of both (`(ü|Ü)`: a class of multi-byte characters would mean single bytes to a
/// byte-wise engine); letters a ligature folds to a group of their spellings (`([fF][iI]|ﬁ)`).
/// `"`, `\` and control characters, which a `#"..."` literal cannot hold verbatim, match any one
/// byte (wider, never narrower; `planted::names` rejects them in protected names anyway).
pub fn any_case(name: &str) -> String {
    // A name spelled with such a letter is the name it folds to, decomposed.
    let chars: Vec<char> = decomposed(name).chars().flat_map(|c| match FOLDS_TO_ASCII.iter().find(|f| f.0 == c) {
        Some(f) => f.1.chars().collect(),
        None => vec![c],
    }).collect();
    let mut out = String::with_capacity(name.len() * 6);
    let mut at = 0;
    while at < chars.len() {
        let end = run_end(&chars, at);
        if end == at + 1 {
            out.push_str(&letter(chars[at]));
        } else {
            let mut spellings = Vec::new();
            spell(&chars, at, end, String::new(), &mut spellings);
            if spellings.len() <= MAX_SPELLINGS {
                write!(out, "({})", spellings.join("|")).unwrap();
            } else {
                let mut pieces: Vec<String> = Vec::new();
                let ligatures = (at..end).flat_map(|i| ligatures_at(&chars, i)).map(|(c, _)| c.to_string());
                for piece in (at..end).map(|i| letter(chars[i])).chain(ligatures) {
                    if !pieces.contains(&piece) {
                        pieces.push(piece);
                    }
                }
                write!(out, "({})+", pieces.join("|")).unwrap();
            }
        }
        at = end;
    }
    out
}

/// The ligatures and composed letters (of more than one letter or mark) whose letters
/// `chars[at..]` begins with, in any case. A composed letter's decomposition always ends in a
/// letter outside ASCII (a mark), so a name in ASCII looks at the ligatures only.
fn ligatures_at(chars: &[char], at: usize) -> impl Iterator<Item = (char, usize)> + '_ {
    let composed = if chars.get(at + 1).is_some_and(|c| !c.is_ascii()) { NFD } else { &[] };
    FOLDS_TO_ASCII.iter().chain(composed).filter(|f| f.1.chars().nth(1).is_some()).filter_map(move |&(c, to)| {
        let n = to.chars().count();
        let here = chars.get(at..at + n)?;
        here.iter().zip(to.chars()).all(|(&a, b)| same_letter(a, b)).then_some((c, n))
    })
}

/// Are `a` and `b` one letter in either case?
fn same_letter(a: char, b: char) -> bool {
    a == b || a.to_lowercase().eq(b.to_lowercase())
}

/// `name` in its canonical decomposition (NFD) as far as `NFD` goes: each composed letter replaced
/// by its letter and marks. (The marks are not reordered: see the module's comment.)
pub fn decomposed(name: &str) -> String {
    name.chars().fold(String::with_capacity(name.len()), |mut out, c| {
        match NFD.binary_search_by_key(&c, |e| e.0) {
            Ok(i) => out.push_str(NFD[i].1),
            Err(_) => out.push(c),
        }
        out
    })
}

/// Where the run of letters from `at` that ligatures overlap ends (`at + 1` when none starts there).
fn run_end(chars: &[char], at: usize) -> usize {
    let mut end = at + 1;
    let mut i = at;
    while i < end {
        end = ligatures_at(chars, i).map(|(_, n)| i + n).fold(end, usize::max);
        i += 1;
    }
    end
}

/// Every spelling of `chars[at..end]` (letters and ligatures), each after `prefix`, into `out`
/// (stops adding once past `MAX_SPELLINGS`).
fn spell(chars: &[char], at: usize, end: usize, prefix: String, out: &mut Vec<String>) {
    if out.len() > MAX_SPELLINGS {
        return;
    }
    if at == end {
        out.push(prefix);
        return;
    }
    spell(chars, at + 1, end, prefix.clone() + &letter(chars[at]), out);
    for (c, n) in ligatures_at(chars, at).filter(|&(_, n)| at + n <= end) {
        spell(chars, at + n, end, format!("{prefix}{c}"), out);
    }
}

/// One letter in any case, with the letters outside ASCII that fold to it.
fn letter(c: char) -> String {
    let (lower, upper) = (single(c.to_lowercase()), single(c.to_uppercase()));
    // And the code points that decompose to it alone (U+2126 OHM SIGN is `Ω`); those of ASCII
    // letters are all in FOLDS_TO_ASCII (`ascii_singletons_fold_to_ascii`).
    let singletons = if c.is_ascii() { &[] } else { NFD };
    let alone = FOLDS_TO_ASCII.iter().chain(singletons).filter(|f| f.1.chars().nth(1).is_none());
    let folded: Vec<char> = alone.filter(|f| f.1.chars().all(|a| same_letter(a, c))).map(|f| f.0).collect();
    let mut out = match (lower, upper) {
        (Some(l), Some(u)) if l != u && c.is_ascii() => format!("[{l}{u}]"),
        (Some(l), Some(u)) if l != u => format!("({l}|{u})"),
        _ if c == '"' || c == '\\' || c.is_control() => ".".to_string(),
        _ if ".+*?()|[]{}^$".contains(c) => format!("\\{c}"),
        _ => c.to_string(),
    };
    if !folded.is_empty() {
        out = format!("({out}{})", folded.iter().map(|f| format!("|{f}")).collect::<String>());
    }
    out
}

fn single(mut it: impl Iterator<Item = char>) -> Option<char> {
    let c = it.next()?;
    it.next().is_none().then_some(c)
}

/// A regex for a path component that holds one of HFS+'s ignorable code points and otherwise only
/// letters of `names` (in any case, or folded to them): HFS+ compares `.vs\u{200C}code` as `.vscode`.
/// Wider than the names (`.edocsv` with one is refused too), never narrower; no component without
/// such a code point matches, and few names hold one (Persian's ZWNJ, among its own letters).
pub fn ignorable_spelling(names: &[&str]) -> String {
    let mut letters: Vec<String> = Vec::new();
    let decomposed: Vec<String> = names.iter().map(|n| decomposed(n)).collect();
    let spelled = names.iter().copied().chain(decomposed.iter().map(String::as_str));
    for c in spelled.flat_map(str::chars).chain(FOLDS_TO_ASCII.iter().map(|f| f.0)) {
        for l in [c.to_ascii_lowercase(), c.to_ascii_uppercase()] {
            let l = letter(l);
            if !letters.contains(&l) {
                letters.push(l);
            }
        }
    }
    let ignorable: Vec<String> = IGNORABLE.iter().flat_map(|&(a, b)| (a..=b).map(String::from)).collect();
    let (l, i) = (letters.join("|"), ignorable.join("|"));
    format!("/({l}|{i})*({i})({l}|{i})*(/.*)?$")
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
        assert_eq!(any_case("Müller 1.json"), "[mM]([uU]\u{308}|Ü|ü)[lL][lL][eE][rR] 1\\.[jJ]([sS]|\u{17f})[oO][nN]");
        assert_eq!(any_case("a\"b\\c\u{1}"), "[aA].[bB].[cC].");
        // ß folds to `ss`: the name is `ss`, in any of its spellings.
        assert_eq!(any_case("ß"), "(([sS]|\u{17f})([sS]|\u{17f})|\u{df}|\u{1e9e})");
        let re = format!("^/({})$", any_case(".mcp.json"));
        assert!(m(&re, "/.MCP.json") && m(&re, "/.mcp.JSON") && !m(&re, "/.mcpXjson"));
    }

    #[test]
    fn any_case_takes_the_letters_that_fold_to_ascii() {
        assert_eq!(any_case("ask"), "[aA]([sS]|\u{17f})([kK]|\u{212a})");
        assert_eq!(any_case("fi"), "([fF][iI]|\u{fb01})");
        let re = format!("^/({})$", any_case(".gitconfig"));
        for yes in [".gitconfig", ".GITCONFIG", ".gitcon\u{fb01}g", ".gitcon\u{fb01}G"] {
            assert!(m(&re, &format!("/{yes}")), "{yes:?}");
        }
        let re = format!("^/({})$", any_case("baffle"));
        for yes in ["baffle", "ba\u{fb00}le", "baf\u{fb02}e", "ba\u{fb04}e", "BAFFLE"] {
            assert!(m(&re, &format!("/{yes}")), "{yes:?}");
        }
        assert!(!m(&re, "/ba\u{fb03}e") && !m(&re, "/baffe"));
        // A name given with such a letter is the name it folds to.
        assert_eq!(any_case("\u{fb01}"), any_case("fi"));
        // Many overlapping ligatures: any sequence of their letters and ligatures (the wider side).
        let re = format!("^/{}$", any_case("ssssssss"));
        assert!(m(&re, "/ss\u{df}\u{17f}sSs\u{17f}") && m(&re, "/s") && !m(&re, "/sx"));
        // HFS+'s ignorable code points inside a name of those letters, not elsewhere.
        let re = ignorable_spelling(&[".vscode"]);
        for yes in ["/.vs\u{200c}code", "/\u{feff}.vscode/x", "/.V\u{17f}C\u{206f}ODE", "/.v\u{202a}"] {
            assert!(m(&re, yes), "{yes:?}");
        }
        for no in ["/.vscode", "/\u{645}\u{200c}\u{6cc}", "/.vs\u{200b}code", "/x\u{200c}"] {
            assert!(!m(&re, no), "{no:?}");
        }
    }

    /// Every code point outside ASCII that Rust's case tables fold (upper, then lower, to a fixed
    /// point) to ASCII is in `FOLDS_TO_ASCII` with what it folds to.
    #[test]
    fn folds_to_ascii_is_complete() {
        let fold = |s: &str| -> String { s.chars().flat_map(char::to_uppercase).flat_map(char::to_lowercase).collect() };
        for c in (0x80..=0x10FFFFu32).filter_map(char::from_u32) {
            let mut f = fold(&c.to_string());
            loop {
                let again = fold(&f);
                if again == f {
                    break;
                }
                f = again;
            }
            // Turkic only (see FOLDS_TO_ASCII).
            if f.is_ascii() && c != '\u{131}' {
                let entry = FOLDS_TO_ASCII.iter().find(|e| e.0 == c);
                assert_eq!(entry.map(|e| e.1.to_string()), Some(f), "U+{:04X}", c as u32);
            }
        }
    }

    /// A name given composed or decomposed is one regex, that matches it in both spellings and in
    /// either case, and the code points that decompose to one letter alone (U+2126 is `Ω`).
    #[test]
    fn any_case_takes_both_normalizations() {
        assert_eq!(any_case("caf\u{e9}"), any_case("cafe\u{301}"));
        let re = format!("^/{}$", any_case("\u{e9}t\u{e9}-\u{439}-\u{3a9}"));
        for yes in ["\u{e9}t\u{e9}-\u{439}-\u{3a9}", "e\u{301}TE\u{301}-\u{438}\u{306}-\u{2126}", "\u{c9}t\u{e9}-\u{419}-\u{3c9}", "E\u{301}t\u{c9}-\u{418}\u{306}-\u{3a9}"] {
            assert!(m(&re, &format!("/{yes}")), "{yes:?}");
        }
        for no in ["ete-\u{439}-\u{3a9}", "\u{e8}t\u{e9}-\u{439}-\u{3a9}", "e\u{300}t\u{e9}-\u{439}-\u{3a9}", "\u{e9}t\u{e9}-\u{438}-\u{3a9}"] {
            assert!(!m(&re, &format!("/{no}")), "{no:?}");
        }
        // More than one mark: each prefix composed (U+1E09 is c + U+0327 + U+0301, U+E7 c + U+0327).
        let re = format!("^/{}$", any_case("\u{1e09}"));
        for yes in ["\u{1e09}", "\u{1e08}", "c\u{327}\u{301}", "\u{e7}\u{301}", "\u{c7}\u{301}", "C\u{327}\u{301}"] {
            assert!(m(&re, &format!("/{yes}")), "{yes:?}");
        }
        assert!(!m(&re, "/\u{e7}") && !m(&re, "/c\u{301}"));
    }

    /// The table is sorted (it is searched by halves), fully decomposed, and every code point that
    /// decomposes to an ASCII character alone is in FOLDS_TO_ASCII (`letter` skips the table for
    /// ASCII letters).
    #[test]
    fn nfd_table_is_sorted_decomposed_and_its_ascii_singletons_fold() {
        assert!(NFD.len() > 2000 && NFD.windows(2).all(|w| w[0].0 < w[1].0));
        for &(c, to) in NFD {
            assert!(to.chars().all(|t| NFD.binary_search_by_key(&t, |e| e.0).is_err()), "U+{:04X}", c as u32);
            if to.is_ascii() && to.len() == 1 {
                assert!(FOLDS_TO_ASCII.iter().any(|f| f.0 == c && f.1.eq_ignore_ascii_case(to)), "U+{:04X}", c as u32);
            }
            // Multi-letter decompositions end outside ASCII (`ligatures_at` relies on it).
            assert!(to.chars().count() == 1 || to.chars().skip(1).all(|t| !t.is_ascii()), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn below_root_matches_at_the_path_s_depth_only() {
        let re = below_root(Path::new("/Users/me"), Path::new("/Users/me/.config/git")).unwrap();
        assert_eq!(re, "^/[^/]+/[^/]+/\\.[cC][oO][nN]([fF][iI]|\u{fb01})[gG]/[gG][iI][tT](/.*)?$");
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
