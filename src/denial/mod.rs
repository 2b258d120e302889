//! Sandbox-denial classification (napi-free core).
//!
//! * [`is_likely_sandbox_denied`] is exactly Codex's `is_likely_sandbox_denied` (API.md's 5 rules).
//! * [`classify_sandbox_denial`] is Codex's structured classifier (`violation.rs`: same section and
//!   keyword order, snippet, path extraction) plus what Linux prints under bwrap (network
//!   unreachable / DNS failures, deny-read paths reading as missing) and, given a
//!   [`DenialContext`], precision rules that reject false alarms (ordinary `Permission denied`
//!   inside a writable root, `sandbox` inside a file name, network errors with the network on).

mod context;
mod verdict;
mod network;
mod path;
mod path_index;
mod text;
mod tools;

#[cfg(test)]
mod corpus_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod scale_tests;


pub use context::DenialContext;
use path::{absolutize, extract_path};
use path_index::PathIndex;
pub use network::{deciding_refusal, network_denial};
pub use verdict::{CommandOutput, DenialKind, DenialReason, SandboxDenial};
use text::{contains_ci, find_all_ci, find_ci, find_word_ci, lines_with_offsets, snippet};

use crate::platform::SandboxType;
use crate::policy::SandboxMode;

/// Codex's keywords, in Codex's order.
const KEYWORDS: [&str; 7] = [
    "operation not permitted",
    "permission denied",
    "read-only file system",
    "seccomp",
    "sandbox",
    "landlock",
    "failed to write file",
];

const QUICK_REJECT_EXIT_CODES: [i32; 3] = [2, 126, 127];
const SIGSYS_EXIT_CODE: i32 = 128 + 31;

/// Messages that mean "there is no network here" (what bwrap's `--unshare-net` and Seatbelt's
/// network denial look like). Reported without a context too.
const NETWORK_STRONG: [&str; 9] = [
    "network is unreachable",
    "temporary failure in name resolution",
    "could not resolve host",
    "unable to resolve host",
    "eai_again",
    "getaddrinfo enotfound",
    "enetunreach",
    "network unreachable",
    "could not resolve hostname",
];

/// Messages that mean a connection failed; a denial only when a context says the network was off
/// (with the network on they are ordinary). With the network off the command has only a loopback of
/// its own, so a refused connection (the host's loopback services are out of reach) is the policy's
/// doing too.
/// "Name not found" answers are here too: with the network off every lookup but `/etc/hosts` gets
/// one at once (see `plan::offline_names`), and pip or Go print only that.
const NETWORK_WEAK: [&str; 7] = [
    "couldn't connect to server",
    "failed to connect to",
    "connection refused",
    "econnrefused",
    "name or service not known",
    "no such host",
    "nodename nor servname provided",
];

/// Words that make an `operation not permitted` / policy message a network one.
const NETWORK_WORDS: [&str; 8] = [
    "socket", "connect", "af_unix", "af_inet", "network", "sendto", "bind(", "netlink",
];

/// Words that make a line read as an error report rather than a mention.
const ERRORISH: [&str; 17] = [
    "denied",
    "deny",
    "not permitted",
    "not allowed",
    "violation",
    "block",
    "forbidden",
    "error",
    "fail",
    "killed",
    "refuse",
    "prevent",
    "disallow",
    "restrict",
    "bad system call",
    "cannot",
    "unable",
];

const NOT_FOUND_PHRASES: [&str; 2] = ["no such file or directory", "enoent"];

/// Whether a run's output is read at all: never for a run that exited 0 or ran in no sandbox. The
/// first rule of both verdicts below, and what tells a caller that a `DenialContext` (a copy of the
/// policy's paths) would go unused.
pub fn output_is_read(sandbox: SandboxType, exit_code: Option<i32>) -> bool {
    sandbox != SandboxType::None && exit_code != Some(0)
}

/// Codex's `is_likely_sandbox_denied`, verbatim (API.md `isLikelySandboxDenied`).
pub fn is_likely_sandbox_denied(sandbox: SandboxType, out: &CommandOutput) -> bool {
    if !output_is_read(sandbox, out.exit_code) {
        return false;
    }
    if [out.stderr, out.stdout, out.aggregated]
        .iter()
        .any(|s| KEYWORDS.iter().any(|k| contains_ci(s, k)))
    {
        return true;
    }
    if out
        .exit_code
        .is_some_and(|c| QUICK_REJECT_EXIT_CODES.contains(&c))
    {
        return false;
    }
    is_sigsys(sandbox, out)
}

fn is_sigsys(sandbox: SandboxType, out: &CommandOutput) -> bool {
    sandbox == SandboxType::Bwrap
        && (out.exit_code == Some(SIGSYS_EXIT_CODE) || out.signal == Some("SIGSYS"))
}

fn reason_of(keyword: &str) -> DenialReason {
    match keyword {
        "operation not permitted" => DenialReason::OperationNotPermitted,
        "permission denied" => DenialReason::PermissionDenied,
        "read-only file system" => DenialReason::ReadOnlyFileSystem,
        "failed to write file" => DenialReason::FailedToWriteFile,
        _ => DenialReason::PolicyDenied,
    }
}

fn has_network_word(s: &str) -> bool {
    NETWORK_WORDS.iter().any(|w| contains_ci(s, w))
}

/// The structured verdict: `None` when the output does not look like a sandbox denial.
///
/// Order: sandbox none / exit 0 → `None`; Codex keywords (sections stderr, stdout, aggregated;
/// keywords in Codex's order; with a context each matching line must survive the precision rules);
/// with a context, a deny-read path reading as missing; network failures (not with a context that
/// had the network on); exit 2/126/127 → `None`; SIGSYS on bwrap → `sigsys`.
pub fn classify_sandbox_denial(
    sandbox: SandboxType,
    out: &CommandOutput,
    ctx: Option<&DenialContext>,
) -> Option<SandboxDenial> {
    if !output_is_read(sandbox, out.exit_code) {
        return None;
    }
    if ctx.is_some_and(|c| c.mode == SandboxMode::DangerFullAccess) {
        return None;
    }
    let sections = distinct_sections(out);
    let sections = sections.as_slice();
    let cwd = ctx.and_then(|c| c.cwd.as_deref()).or(out.cwd);
    // Every line's path is looked up in it (made at the first): not compared with each of the policy's paths.
    let index = ctx.map(PathIndex::of);
    let index = index.as_ref();

    // 1. Codex's keywords.
    for &section in sections {
        for keyword in KEYWORDS {
            if !contains_ci(section, keyword) {
                continue;
            }
            for (start, line) in lines_with_offsets(section) {
                if !contains_ci(line, keyword) || keyword_only_in_names(line, keyword) {
                    continue;
                }
                if let Some(index) = index {
                    if is_test_title(line) || !keyword_line_is_denial(keyword, line, index) {
                        continue;
                    }
                }
                let reason = reason_of(keyword);
                let path = path_for(keyword, line, sections).map(|p| display_path(&p, cwd));
                let kind = match reason {
                    DenialReason::OperationNotPermitted | DenialReason::PolicyDenied
                        if has_network_word(line)
                            || (path.is_none() && has_network_word(section)) =>
                    {
                        DenialKind::Network
                    }
                    DenialReason::PolicyDenied if keyword == "seccomp" => DenialKind::Process,
                    _ => DenialKind::Filesystem,
                };
                return Some(SandboxDenial {
                    host: None,
                    network_reason: None,
                    fix: None,
                    reason,
                    kind,
                    path,
                    snippet: snippet(section, Some(start)),
                });
            }
        }
    }

    // 1b. Node's text-less errno form for a blocked socket: `connect EPERM /run/x.sock`.
    for &section in sections {
        for (start, line) in lines_with_offsets(section) {
            if let Some(at) = find_ci(line, "connect eperm") {
                let rest = line[at + "connect eperm".len()..].trim_start();
                let path = rest
                    .split_whitespace()
                    .next()
                    .filter(|t| t.starts_with('/'))
                    .map(str::to_string);
                return Some(SandboxDenial {
                    host: None,
                    network_reason: None,
                    fix: None,
                    reason: DenialReason::OperationNotPermitted,
                    kind: DenialKind::Network,
                    path,
                    snippet: snippet(section, Some(start)),
                });
            }
        }
    }

    // 1c. Tool-specific words for a write the policy refused (git's index, pyenv's shims).
    if let Some(index) = index {
        for &section in sections {
            if let Some(t) = tools::find(section, index) {
                return Some(SandboxDenial {
                    reason: DenialReason::ReadOnlyFileSystem,
                    kind: DenialKind::Filesystem,
                    path: t.path.map(|p| p.to_string_lossy().into_owned()),
                    snippet: snippet(section, Some(t.line_start)),
                    host: None,
                    network_reason: None,
                    fix: None,
                });
            }
        }
    }

    // 2. A deny-read path reads as missing.
    if let Some(index) = index.filter(|i| !i.ctx.deny_read.is_empty()) {
        for &section in sections {
            for (start, line) in lines_with_offsets(section) {
                for phrase in NOT_FOUND_PHRASES {
                    if !contains_ci(line, phrase) {
                        continue;
                    }
                    let found = NOT_FOUND_PHRASES.iter().find_map(|p| extract_path(line, p));
                    let Some(raw) = found else { continue };
                    let Some(abs) = absolutize(&raw, cwd) else {
                        continue;
                    };
                    if index.is_deny_read(&abs) {
                        return Some(SandboxDenial {
                            host: None,
                            network_reason: None,
                            fix: None,
                            reason: DenialReason::PolicyDenied,
                            kind: DenialKind::Filesystem,
                            path: Some(abs.to_string_lossy().into_owned()),
                            snippet: snippet(section, Some(start)),
                        });
                    }
                }
            }
        }
    }

    // 3. No network.
    if ctx.is_none_or(|c| !c.network) {
        let weak: &[&str] = if ctx.is_some() { &NETWORK_WEAK } else { &[] };
        for &section in sections {
            let found = NETWORK_STRONG.iter().chain(weak).find_map(|pattern| find_ci(section, pattern));
            // A bare `ENOTFOUND` (a program printing only the error code): with no resolver inside,
            // every lookup fails so, at once. A word of its own only.
            let found = found.or_else(|| ctx.and_then(|_| find_word_ci(section, "enotfound")));
            if let Some(at) = found {
                return Some(SandboxDenial {
                    host: None,
                    network_reason: None,
                    fix: None,
                    reason: DenialReason::NetworkUnreachable,
                    kind: DenialKind::Network,
                    path: None,
                    snippet: snippet(section, Some(at)),
                });
            }
        }
    }

    // 4. Codex's quick reject, then SIGSYS.
    if out
        .exit_code
        .is_some_and(|c| QUICK_REJECT_EXIT_CODES.contains(&c))
    {
        return None;
    }
    if is_sigsys(sandbox, out) {
        let snip = sections
            .iter()
            .map(|s| s.trim())
            .find(|s| !s.is_empty())
            .map_or(String::new(), |s| snippet(s, None));
        return Some(SandboxDenial {
            host: None,
            network_reason: None,
            fix: None,
            reason: DenialReason::Sigsys,
            kind: DenialKind::Process,
            path: None,
            snippet: snip,
        });
    }
    None
}

/// stderr, stdout and the combined output, each text once: the combined output is often one of the
/// streams (only one wrote), and a text seen again can only repeat what the first reading found.
fn distinct_sections<'a>(out: &CommandOutput<'a>) -> Vec<&'a str> {
    let mut sections: Vec<&'a str> = Vec::with_capacity(3);
    for s in [out.stderr, out.stdout, out.aggregated] {
        if !sections.contains(&s) {
            sections.push(s);
        }
    }
    sections
}

/// The path for a keyword match: from the matching line first (its own phrase, then the other
/// phrases), else Codex's scan of every line of stderr, stdout, aggregated.
fn path_for(keyword: &str, line: &str, sections: &[&str]) -> Option<String> {
    const PHRASES: [&str; 3] = [
        "operation not permitted",
        "permission denied",
        "read-only file system",
    ];
    if PHRASES.contains(&keyword) {
        if let Some(p) = extract_path(line, keyword) {
            return Some(p);
        }
    }
    PHRASES
        .iter()
        .find_map(|p| extract_path(line, p))
        .or_else(|| {
            sections
                .iter()
                .flat_map(|s| s.lines())
                .find_map(|l| PHRASES.iter().find_map(|p| extract_path(l, p)))
        })
}

/// With a known cwd, relative paths are reported absolute (lexically normalised).
fn display_path(raw: &str, cwd: Option<&std::path::Path>) -> String {
    if raw.starts_with('/') {
        return raw.to_string();
    }
    match cwd.and_then(|c| absolutize(raw, Some(c))) {
        Some(abs) => abs.to_string_lossy().into_owned(),
        None => raw.to_string(),
    }
}

/// A test runner's title line (TAP's `# Subtest:`, `ok`/`not ok`, node's and Jest's marks): the
/// words are a test's name, whatever they say.
fn is_test_title(line: &str) -> bool {
    let t = line.trim_start();
    ["# Subtest:", "not ok ", "ok ", "\u{2716} ", "\u{2714} ", "\u{2715} ", "\u{2713} ", "FAIL: ", "ERROR: test"]
        .iter()
        .any(|p| t.starts_with(p))
}

/// Every occurrence of `keyword` in `line` is part of a file name, not a message: a path component
/// (`/` before or after it) or a name with an extension (`permission denied.log` in a listing).
/// A message ends the keyword with the line, a space, `:`, `(`, `,` or a full stop.
fn keyword_only_in_names(line: &str, keyword: &str) -> bool {
    find_all_ci(line, keyword).all(|at| {
        let before = line[..at].chars().next_back();
        let mut after = line[at + keyword.len()..].chars();
        let (next, next2) = (after.next(), after.next());
        before == Some('/') || next == Some('/') || (next == Some('.') && next2.is_some_and(char::is_alphanumeric))
    })
}

/// The precision rules a context enables, for one line holding `keyword`.
fn keyword_line_is_denial(keyword: &str, line: &str, index: &PathIndex) -> bool {
    // `file:LINE:` followed by text that names no path: a grep hit or a test title quoted in a
    // diagnostic, not an error of this run.
    if location_prefix_len(line) > 0 && extract_path(line, keyword).is_none() {
        return false;
    }
    match keyword {
        "permission denied" => {
            // ssh's `Permission denied (publickey)` is an authentication failure.
            if contains_ci(line, "permission denied (publickey")
                || contains_ci(line, "permission denied (password")
            {
                return false;
            }
            match extract_path(line, keyword).and_then(|p| absolutize(&p, index.ctx.cwd.as_deref())) {
                // A path the command could write: an ordinary permission error.
                Some(abs) => !index.is_writable(&abs),
                None => true,
            }
        }
        "seccomp" | "sandbox" | "landlock" => word_in_error_context(line, keyword),
        _ => true,
    }
}

/// `keyword` appears in `line` as a word of an error report, not inside a file name, a path, a
/// quoted name, an identifier or a `path:line:` prefix (grep, compilers).
/// Linear in the line: the facts about the token around an occurrence are found once per token
/// (`Tokens`), and each occurrence's own tests look only at the characters next to it.
fn word_in_error_context(line: &str, keyword: &str) -> bool {
    // A `path:line:` or `file.ext:` line is file content (grep) or a location, not an error.
    if location_prefix_len(line) > 0 {
        return false;
    }
    let errorish = ERRORISH.iter().any(|w| contains_ci(line, w));
    let mut tokens = Tokens::new(line);
    for at in find_all_ci(line, keyword) {
        let token = tokens.around(at);
        let after = &line[at + keyword.len()..];
        if keyword == "sandbox" {
            let lower_after: String = after
                .chars()
                .take(8)
                .collect::<String>()
                .to_ascii_lowercase();
            if ["-exec", "_apply", "_init", "_check"]
                .iter()
                .any(|s| lower_after.starts_with(s))
            {
                if !token.has_slash || token.sandbox_exec_colon {
                    return true;
                }
            }
        }
        if token.has_separator {
            continue;
        }
        let prev = line[..at].chars().next_back();
        if prev.is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.')) {
            continue;
        }
        let mut next_chars = after.chars();
        let next = next_chars.next();
        let next2 = next_chars.next();
        match next {
            Some(c) if c.is_alphanumeric() || c == '_' || c == '-' => continue,
            Some('.') if next2.is_some_and(|c| c.is_alphanumeric()) => continue,
            Some(':') if next2.is_some_and(|c| c == ':' || c.is_ascii_digit()) => continue,
            _ => {}
        }
        if token.quoted {
            continue;
        }
        // `name:` alone is a heading (`ls -R`), `name: message` an error report. (Looks only as
        // far as the first non-blank: `trim` would read the line's trailing blanks every time.)
        let message_follows = next == Some(':') && after[1..].chars().any(|c| !c.is_whitespace());
        if errorish || message_follows {
            return true;
        }
    }
    false
}

/// What `word_in_error_context` asks of the whitespace-delimited token around an occurrence.
#[derive(Clone, Copy, Default)]
struct TokenFacts {
    has_slash: bool,
    /// A `/` or `\`: part of a path.
    has_separator: bool,
    sandbox_exec_colon: bool,
    quoted: bool,
}

/// The tokens of one line around increasing offsets, each token found and judged once: a line of
/// one long token holding a keyword many times (a command's own output) is read a bounded number
/// of times, not once per occurrence.
struct Tokens<'a> {
    line: &'a str,
    /// The current token is `line[..end]` from its start; `end` is a whitespace or the line's end.
    end: usize,
    facts: TokenFacts,
}

impl<'a> Tokens<'a> {
    fn new(line: &'a str) -> Self {
        Tokens { line, end: 0, facts: TokenFacts::default() }
    }

    /// The facts of the token holding byte `at`; `at` never decreases between calls and is never
    /// a whitespace (a keyword starts there).
    fn around(&mut self, at: usize) -> TokenFacts {
        if at < self.end {
            return self.facts;
        }
        let line = self.line;
        // Only the text since the last token's end can hold this token's start.
        let from = self.end;
        let start = line[from..at].rfind(char::is_whitespace).map_or(from, |i| {
            from + i + line[from + i..].chars().next().map_or(1, char::len_utf8)
        });
        self.end = line[at..].find(char::is_whitespace).map_or(line.len(), |i| at + i);
        let token = &line[start..self.end];
        self.facts = TokenFacts {
            has_slash: token.contains('/'),
            has_separator: token.contains('/') || token.contains('\\'),
            sandbox_exec_colon: token.ends_with("sandbox-exec:"),
            quoted: is_quoted_token(token),
        };
        self.facts
    }
}

fn is_quoted_token(token: &str) -> bool {
    let t = token.trim_end_matches([':', ',', ';', '.', ')', ']']);
    let t = t.trim_start_matches(['(', '[']);
    let quotes = ['\'', '"', '`', '\u{2018}', '\u{2019}'];
    t.chars().count() >= 2 && t.starts_with(quotes) && t.ends_with(quotes)
}

/// Length of a leading `file:LINE:` or `file.ext:` location (grep `-n`, grep over several files,
/// compiler diagnostics), or 0.
fn location_prefix_len(line: &str) -> usize {
    let first_token_end = line.find(char::is_whitespace).unwrap_or(line.len());
    let head = &line[..first_token_end];
    let Some(colon) = head.find(':') else {
        return 0;
    };
    let name = &head[..colon];
    if name.is_empty() {
        return 0;
    }
    let rest = &head[colon + 1..];
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && rest[digits..].starts_with(':') {
        return colon + 1 + digits + 1;
    }
    // `name.ext:content` / `dir/name:content` (grep over several files, without -n).
    let looks_like_file = name.contains('/')
        || name
            .rsplit_once('.')
            .is_some_and(|(s, e)| !s.is_empty() && !e.is_empty());
    if looks_like_file && !rest.is_empty() {
        return colon + 1;
    }
    0
}
