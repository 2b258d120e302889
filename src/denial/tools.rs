//! What particular tools print when the policy stopped a write, in words that hold none of Codex's
//! keywords (git's index, pyenv's shims, a recursive mkdir reporting ENOENT). Each rule needs the run's policy: the message alone does not say why the write failed,
//! the policy does (the path it names, or the repository's `.git`, was not writable).

use std::path::PathBuf;

use super::context::DenialContext;
use super::path::absolutize;
use super::path_index::PathIndex;
use super::text::{find_ci, lines_with_offsets};
use crate::policy::SandboxMode;

/// A write the policy refused: the path (absolute) when the output names one or the policy implies
/// it, and the byte offset of the matching line in its section.
pub(crate) struct ToolDenial {
    pub path: Option<PathBuf>,
    pub line_start: usize,
}

/// git prints only this when it cannot write `.git/index` (`git stash`, `git reset`, `git mv`).
const GIT_INDEX: [&str; 2] = ["could not write index", "unable to write new index file"];

/// Writing a file over a placeholder directory: dash `sh: 1: cannot create .envrc: Is a directory`,
/// bash `bash: .envrc: Is a directory`, Python `IsADirectoryError: [Errno 21] Is a directory:
/// '.envrc'`, Node `EISDIR: illegal operation on a directory, open '/w/.envrc'`.
const IS_A_DIRECTORY: [&str; 2] = ["is a directory", "illegal operation on a directory"];

/// `pyenv: cannot rehash: /root/.pyenv/shims isn't writable` (and tools phrased alike).
const NOT_WRITABLE: [&str; 2] = [" isn't writable", " is not writable"];

pub(crate) fn find(section: &str, index: &PathIndex) -> Option<ToolDenial> {
    let ctx = index.ctx;
    // The same for every line (it looks at each read-only path): decided once.
    let mut git_index = None;
    for (start, line) in lines_with_offsets(section) {
        if GIT_INDEX.iter().any(|p| find_ci(line, p).is_some()) {
            if let Some(path) = git_index.get_or_insert_with(|| git_index_denied(index)).clone() {
                return Some(ToolDenial { path, line_start: start });
            }
        }
        // A recursive mkdir (Node's, pnpm's) reports a read-only location as missing.
        if let Some(at) = find_ci(line, "no such file or directory, mkdir ") {
            let rest = &line[at + "no such file or directory, mkdir ".len()..];
            let raw = rest.trim().trim_matches(|c| c == '\'' || c == '"');
            if let Some(abs) = absolutize(raw, ctx.cwd.as_deref()) {
                if !index.is_writable(&abs) && !index.is_deny_read(&abs) {
                    return Some(ToolDenial { path: Some(abs), line_start: start });
                }
            }
        }
        for phrase in IS_A_DIRECTORY {
            if ctx.placeholders.is_empty() || find_ci(line, phrase).is_none() {
                continue;
            }
            let named = is_a_directory_paths(line, phrase).into_iter().filter_map(|raw| absolutize(&raw, ctx.cwd.as_deref()));
            if let Some(abs) = named.into_iter().find(|p| index.is_placeholder(p)) {
                return Some(ToolDenial { path: Some(abs), line_start: start });
            }
        }
        for phrase in NOT_WRITABLE {
            let Some(at) = find_ci(line, phrase) else { continue };
            // Only an error report (`cannot rehash: X isn't writable`), never a notice such as pip's
            // "normal site-packages is not writeable" (spelled differently, and not a failure).
            let head = &line[..at];
            if find_ci(head, "cannot").is_none() && find_ci(head, "error").is_none() {
                continue;
            }
            let raw = head.rsplit([' ', '\'', '"', '`']).next().unwrap_or("");
            let Some(abs) = absolutize(raw, ctx.cwd.as_deref()) else { continue };
            if raw.contains('/') && !index.is_writable(&abs) {
                return Some(ToolDenial { path: Some(abs), line_start: start });
            }
        }
    }
    None
}

/// The names a line about `phrase` may give, relative ones included: the segment before
/// `: <phrase>` (without dash's `cannot create `), and the quoted or bare name after it.
fn is_a_directory_paths(line: &str, phrase: &str) -> Vec<String> {
    let clean = |s: &str| s.trim().trim_matches(|c| matches!(c, '\'' | '"' | '`')).to_string();
    let mut out = Vec::new();
    if let Some(at) = find_ci(line, phrase) {
        if let Some(before) = line[..at].strip_suffix(": ") {
            let seg = before.rsplit(": ").next().unwrap_or("");
            out.push(clean(seg.strip_prefix("cannot create ").unwrap_or(seg)));
        }
        let after = line[at + phrase.len()..].trim_start_matches([':', ',', ' ']);
        // Node: `..., open '/w/.envrc'`: the last word.
        if let Some(last) = after.split_whitespace().last() {
            out.push(clean(last));
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// `Some(path)` when the policy kept the repository's index unwritable: the `.git` of the writable
/// root holding the cwd is read-only (`Some(Some(<root>/.git/index))`), or nothing is writable at
/// the cwd (read-only mode, or a cwd outside every writable root: `Some(None)`, the repository's
/// top is not known without reading the filesystem).
fn git_index_denied(index: &PathIndex) -> Option<Option<PathBuf>> {
    let ctx: &DenialContext = index.ctx;
    let cwd = ctx.cwd.as_deref()?;
    if ctx.mode == SandboxMode::DangerFullAccess {
        return None;
    }
    let protected_git = ctx
        .read_only
        .iter()
        .filter(|ro| ro.file_name().is_some_and(|n| n == ".git"))
        .filter_map(|git| git.parent().map(|top| (git, top)))
        .filter(|(_, top)| cwd.starts_with(top))
        .max_by_key(|(_, top)| top.as_os_str().len());
    if let Some((git, _)) = protected_git {
        return Some(Some(git.join("index")));
    }
    (!index.is_writable(cwd)).then_some(None)
}
