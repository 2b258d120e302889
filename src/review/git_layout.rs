//! What a git directory holds, as far as a change set is judged: the plain data git reads and
//! writes as it works (objects, refs, logs, the index, the files naming a commit), which never
//! makes git run a program, read configuration or look at another directory; and what makes a
//! directory a git directory at all. Everything else in a git directory (its `config*`, `hooks/`,
//! `info/`, `commondir`, `gitdir`, `objects/info/alternates`, an in-progress rebase's todo list
//! with its `exec` lines, names git may learn to read later) is a host risk in review mode, and
//! so is any symlink in it: a key blacklist missed `pager.<cmd>`, `remote.*.uploadpack` and a
//! config that is a link to a workspace file (gitrepository-layout(5) lists what git reads).

use std::ffi::OsStr;

use super::changes::{ChangeKind, EntryType};
use super::entries::Kind;

/// Files at the top of a git directory that hold object ids, refs or messages git shows.
const DATA_FILES: &[&str] = &[
    "HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "MERGE_RR", "AUTO_MERGE", "CHERRY_PICK_HEAD",
    "REVERT_HEAD", "REBASE_HEAD", "COMMIT_EDITMSG", "TAG_EDITMSG", "SQUASH_MSG", "index", "packed-refs", "shallow",
    "description",
];

/// Trees of plain data (objects, refs and their logs, rerere's records, git-lfs's objects).
const DATA_TREES: &[&str] = &["objects", "refs", "logs", "reftable", "rr-cache", "lfs"];

/// Inside `objects/`: the files that make git read objects from another directory.
const ALTERNATES: &[&str] = &["alternates", "http-alternates"];

/// Directories holding whole git directories of their own (linked worktrees, submodules), one
/// per name below them: judged by the same rules.
const NESTED: &[&str] = &["worktrees", "modules"];

/// The names git reads in a git directory (for a directory that is one without being named
/// `.git`): a change to one of them is git's business, anything else there is not.
pub const GIT_READS: &[&str] = &[
    "HEAD", "config", "config.worktree", "objects", "refs", "hooks", "packed-refs", "commondir", "gitdir", "info", "index",
    "worktrees", "modules", "reftable", "logs", "shallow", "rebase-merge", "rebase-apply", "sequencer",
];

/// How a change at `rest` (its path below a git directory) looks to git.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Data,
    /// A `HEAD`: data while it holds a ref or an object id (`head_holds_a_ref`).
    Head,
    /// Configuration, hooks, a pointer elsewhere, a symlink, or a name git does not document.
    Risky,
}

pub fn judge(rest: &[&OsStr], kind: ChangeKind, entry_type: EntryType) -> Verdict {
    let Some(first) = rest.first().and_then(|f| f.to_str()) else { return Verdict::Risky };
    if entry_type == EntryType::Symlink {
        return Verdict::Risky;
    }
    // A directory made or changed holds nothing by itself: what lands in it is judged on its own.
    if entry_type == EntryType::Directory && kind != ChangeKind::Deleted {
        return Verdict::Data;
    }
    let name = |i: usize| rest.get(i).and_then(|n| n.to_str());
    match rest.len() {
        _ if first == "objects" && name(1) == Some("info") && name(2).is_some_and(|n| ALTERNATES.contains(&n)) => Verdict::Risky,
        _ if DATA_TREES.contains(&first) => Verdict::Data,
        _ if NESTED.contains(&first) && rest.len() > 2 => judge(&rest[2..], kind, entry_type),
        1 if first == "HEAD" && kind != ChangeKind::Deleted => Verdict::Head,
        1 if DATA_FILES.contains(&first) || first.starts_with("sharedindex.") => Verdict::Data,
        // Samples never run (git runs only the hook without `.sample`).
        2 if first == "hooks" && name(1).is_some_and(|n| n.ends_with(".sample")) => Verdict::Data,
        _ => Verdict::Risky,
    }
}

/// Whether a `HEAD` holds what git expects there: `ref: refs/...` or an object id.
pub fn head_holds_a_ref(text: &str) -> bool {
    let t = text.strip_suffix('\n').unwrap_or(text);
    let plain = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_graphic() && c != '\\');
    match t.strip_prefix("ref: ") {
        Some(r) => r.starts_with("refs/") && plain(r) && !r.contains(".."),
        None => matches!(t.len(), 40 | 64) && t.chars().all(|c| c.is_ascii_hexdigit()),
    }
}

/// Whether a directory is a git directory, given what is at a name in it: a `HEAD`, and either a
/// `commondir` (objects and refs come from there) or `objects` and `refs` (as git's own check,
/// which asks `access(X_OK)`: that follows a symlink and passes an executable file, so an entry of
/// any kind counts; directories only let `objects -> /usr/share` and `refs -> /usr/lib` beside a
/// planted `config` land unflagged, found by an attacker's review).
pub fn is_git_dir(at: impl Fn(&str) -> Option<Kind>) -> bool {
    let present = |k: Option<Kind>| k.is_some_and(|k| k != Kind::Whiteout);
    at("HEAD").is_some_and(|k| !matches!(k, Kind::Dir { .. } | Kind::Whiteout)) && (present(at("commondir")) || (present(at("objects")) && present(at("refs"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(path: &str, kind: ChangeKind, t: EntryType) -> Verdict {
        let parts: Vec<&OsStr> = path.split('/').map(OsStr::new).collect();
        judge(&parts, kind, t)
    }

    #[test]
    fn only_plain_data_passes() {
        use ChangeKind::*;
        use EntryType::*;
        for p in ["objects/ab/cd", "objects/info/commit-graph", "refs/heads/x", "logs/HEAD", "index", "ORIG_HEAD", "packed-refs", "worktrees/w/index", "modules/m/refs/heads/x", "hooks/pre-commit.sample"] {
            assert_eq!(v(p, Added, File), Verdict::Data, "{p}");
        }
        for p in ["config", "config.worktree", "commondir", "gitdir", "info/exclude", "info/attributes", "hooks/pre-commit", "objects/info/alternates", "rebase-merge/git-rebase-todo", "worktrees/w/commondir", "modules/m/config", "modules/m/hooks/post-checkout", "whatever-next"] {
            assert_eq!(v(p, Added, File), Verdict::Risky, "{p}");
            assert_eq!(v(p, Deleted, File), Verdict::Risky, "{p} deleted");
        }
        assert_eq!(v("refs/heads/x", Added, Symlink), Verdict::Risky);
        assert_eq!(v("hooks", Added, Directory), Verdict::Data);
        assert_eq!(v("hooks", Deleted, Directory), Verdict::Risky);
        assert_eq!(v("HEAD", Modified, File), Verdict::Head);
        assert_eq!(v("HEAD", Deleted, File), Verdict::Data);
    }

    #[test]
    fn a_git_directory_is_seen_whatever_its_objects_and_refs_are() {
        let with = |objects: Kind, refs: Kind| move |n: &str| match n {
            "HEAD" => Some(Kind::File),
            "objects" => Some(objects.clone()),
            "refs" => Some(refs.clone()),
            _ => None,
        };
        let dir = Kind::Dir { opaque: false };
        assert!(is_git_dir(with(dir.clone(), dir.clone())));
        assert!(is_git_dir(with(Kind::Symlink("/usr/share".into()), Kind::Symlink("/usr/lib".into()))), "links, as git's access() follows them");
        assert!(is_git_dir(with(Kind::File, dir.clone())), "an executable file passes git's access(X_OK)");
        assert!(!is_git_dir(with(Kind::Whiteout, dir.clone())), "deleted");
        assert!(!is_git_dir(|n: &str| (n == "HEAD").then_some(Kind::File)));
    }

    #[test]
    fn head_is_a_ref_or_an_id() {
        assert!(head_holds_a_ref("ref: refs/heads/main\n"));
        assert!(head_holds_a_ref(&"a".repeat(40)));
        assert!(!head_holds_a_ref("ref: ../../x\n"));
        assert!(!head_holds_a_ref("[core]\n\tfsmonitor = x\n"));
    }
}
