//! One change of a change set: its new content (`readChange`) and a unified diff against the
//! host's current file (`diffChange`, the CLI's `diff`).
//!
//! Only what the set lists is read, found as the listing names it: a path is the key its change
//! shows (`changes::shown`), resolved to the real names one directory at a time (`resolve`), and
//! read from the set's upper directory and the host's workspace one component at a time without
//! following a symlink (`host_fs::Dir`). A symlink the command made is a change to show (its
//! target), never a way into the host's tree: a run denied a file linked to it, and `readChange`
//! of a path through the link read the file out (found by an attacker's review).

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use super::changes::{shown, Change, ChangeKind, Differ, EntryType};
use super::diff_text;
use super::entries::{self, Event, Kind};
use super::host_fs::Dir;
use super::store::ChangeSet;
use crate::error::{Result, SandboxError};

/// Files larger than this are not diffed (the diff says so instead).
const MAX_DIFF_BYTES: u64 = 4 << 20;

/// The most `readChange` returns: a file's size is the run's to choose, and `truncate -s 5G` costs
/// it 36 KiB of disk while reading it cost the host 5 GB of memory (and, past what a Node Buffer
/// holds, a promise that never settled; found by an attacker's review).
const MAX_READ_BYTES: u64 = 64 << 20;

/// How long a diff may look for the smallest set of changes. Myers' algorithm is quadratic in the
/// lines that differ: 200,000 lines for a 100-line file took 28 s of the host's CPU, 2,000,000
/// (4 MiB, within `MAX_DIFF_BYTES`) about 47 minutes (found by an attacker's review). Past it the
/// rest is shown as removed and added whole: a valid diff, not a minimal one, and it says so.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// A path of the set's view by its real names.
pub struct Resolved {
    /// The set's root it is below.
    pub root: usize,
    /// The path below that root.
    pub rel: PathBuf,
    /// The set's upper directory has an entry there (something of the set is at or below it).
    pub in_upper: bool,
}

fn read_failed(path: &Path, e: std::io::Error) -> SandboxError {
    SandboxError::setup_failed(format!("reading {} failed: {}", path.display(), sandspawn_helper::report::os_words(&e)), "")
}

/// The set's root whose shown path `path` is below, and the rest.
fn locate<'a>(set: &ChangeSet, path: &'a Path, option: &str) -> Result<(usize, &'a Path)> {
    let mut found = set.meta.roots.iter().enumerate().filter_map(|(i, r)| path.strip_prefix(shown(r)).ok().map(|rel| (i, rel)));
    match (found.next(), found.next()) {
        (Some(one), None) => Ok(one),
        (None, _) => Err(SandboxError::invalid(option, format!("{} is not inside the change set's workspace roots", path.display()))),
        (Some(_), Some(_)) => Err(ambiguous(path, 2, option)),
    }
}

fn ambiguous(path: &Path, n: usize, option: &str) -> SandboxError {
    SandboxError::invalid(
        option,
        format!(
            "{} names {n} entries of the change set: a name that is not UTF-8 is shown with each such byte as \\xhh, and another name here is written that way itself; refused rather than picking one (review and apply their directory as a whole, or discard the set)",
            path.display()
        ),
    )
}

/// The names in `dirs` that show as `key`: only `key` itself, unless it holds an escape (`\x`),
/// which a name that is not UTF-8 shows (and a UTF-8 name may spell).
fn names_shown_as(key: &OsStr, dirs: [Option<&Dir>; 2]) -> std::io::Result<Vec<OsString>> {
    if !key.as_bytes().windows(2).any(|w| w == b"\\x") {
        return Ok(vec![key.to_os_string()]);
    }
    let mut found = Vec::new();
    for dir in dirs.into_iter().flatten() {
        found.extend(dir.names()?.into_iter().filter(|n| shown(Path::new(n)).as_bytes() == key.as_bytes()));
    }
    found.sort();
    found.dedup();
    if found.is_empty() {
        found.push(key.to_os_string());
    }
    Ok(found)
}

/// `path` as callers name it (a change's `path`, `changes::shown`) by its real names: each
/// component looked up among what the set's upper directory and the host's workspace hold there
/// (neither entered through a symlink). A path that could name more than one entry is refused;
/// `option` is what the caller gave it as.
pub fn resolve(set: &ChangeSet, path: &Path, option: &str) -> Result<Resolved> {
    let (root, key) = locate(set, path, option)?;
    if key.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(SandboxError::invalid(option, format!("{} must be a plain absolute path (no `.` or `..`)", path.display())));
    }
    let mut upper = Some(Dir::open_trusted(&set.upper(root)).map_err(|e| read_failed(path, e))?);
    let mut host = Dir::open_root(&set.meta.roots[root]).ok();
    let (mut rel, mut in_upper) = (PathBuf::new(), true);
    for part in key.components() {
        let names = names_shown_as(part.as_os_str(), [upper.as_ref(), host.as_ref()]).map_err(|e| read_failed(path, e))?;
        let [name] = names.as_slice() else { return Err(ambiguous(path, names.len(), option)) };
        in_upper = match &upper {
            Some(d) => d.stat(name).map_err(|e| read_failed(path, e))?.is_some(),
            None => false,
        };
        upper = upper.and_then(|d| d.child(name).ok());
        host = host.and_then(|d| d.child(name).ok());
        rel.push(name);
    }
    Ok(Resolved { root, rel, in_upper })
}

/// What the set's listing says of one path.
struct Listed {
    /// Its changes, as the listing has them (two where a file or symlink replaces a directory).
    changes: Vec<Change>,
    /// A directory above it is deleted (with everything in it).
    below_deleted: bool,
}

/// The listing's changes at `rel`, from the same `Differ` as the listing, fed the upper's entries
/// on the way down to it. Each step's entry is read only once the one above it was found a
/// directory (not a symlink), and nothing writes the upper while the caller holds the set's lock.
fn listed(set: &ChangeSet, root: usize, rel: &Path) -> std::io::Result<Listed> {
    let upper = set.upper(root);
    let mut differ = Differ::new(&set.meta.roots[root]);
    let mut out = Listed { changes: Vec::new(), below_deleted: false };
    // The root itself: its own mode change, the only one it can have.
    if rel.as_os_str().is_empty() {
        out.changes.extend(differ.root_change(&upper, set.meta.root_modes.get(root).copied()));
    }
    let mut at = PathBuf::new();
    for part in rel.components() {
        at.push(part);
        let entry = match entries::read(&upper.join(&at), at.clone()) {
            Ok(e) => e,
            // Not in the upper: what the walk of the directory above said of it is all.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(e) => return Err(e),
        };
        let mut emit = |c: Change| {
            if c.rel == rel {
                out.changes.push(c);
            } else if c.kind == ChangeKind::Deleted && c.entry_type == EntryType::Directory && rel.starts_with(&c.rel) {
                out.below_deleted = true;
            }
        };
        if !matches!(entry.kind, Kind::Dir { .. }) {
            differ.event(&Event::Leaf(&entry), &upper, &mut emit)?;
            break;
        }
        let names = entries::names(&upper.join(&at))?;
        differ.event(&Event::Enter(&entry, &names), &upper, &mut emit)?;
    }
    Ok(out)
}

/// Whether the listing has a change at `r` (as a host entry deleted below a replaced directory
/// does, with no entry in the upper).
pub fn is_listed(set: &ChangeSet, r: &Resolved) -> std::io::Result<bool> {
    Ok(!listed(set, r.root, &r.rel)?.changes.is_empty())
}

/// What the set makes of a path it lists.
enum New {
    /// Deleted (itself or a directory above it).
    Gone,
    Dir,
    /// A file or symlink in the upper directory.
    Entry,
}

fn not_listed(set: &ChangeSet, path: &Path) -> SandboxError {
    SandboxError::invalid(
        "path",
        format!("{} is not a change of the change set {} (only the paths it lists are read, and what is below a directory it deletes)", path.display(), set.meta.id),
    )
}

/// `path` resolved, what the set makes of it, and the listing's changes there; a path it does not
/// list is refused.
fn find(set: &ChangeSet, path: &Path) -> Result<(Resolved, New, Vec<Change>)> {
    let r = resolve(set, path, "path")?;
    let listed = listed(set, r.root, &r.rel).map_err(|e| read_failed(path, e))?;
    let new = match listed.changes.last() {
        Some(c) if c.kind == ChangeKind::Deleted => New::Gone,
        Some(c) if c.entry_type == EntryType::Directory => New::Dir,
        Some(_) => New::Entry,
        None if listed.below_deleted => New::Gone,
        None => return Err(not_listed(set, path)),
    };
    Ok((r, new, listed.changes))
}

/// The directory holding `rel`, from `top` down, never through a symlink; and `rel`'s name.
fn parent_of<'a>(top: Dir, rel: &'a Path) -> std::io::Result<(Dir, &'a OsStr)> {
    let name = rel.file_name().ok_or_else(|| std::io::Error::from_raw_os_error(libc::EISDIR))?;
    let mut dir = top;
    for part in rel.parent().into_iter().flat_map(Path::components) {
        dir = dir.child(part.as_os_str())?;
    }
    Ok((dir, name))
}

/// An entry's content as a diff takes it.
enum Content {
    Bytes(Vec<u8>),
    /// A file past the size limit: its size.
    Large(u64),
}

/// The file's bytes or the symlink's target at `name` in `dir` (`None`: nothing such there); a
/// file larger than `limit` is `Large`.
fn content(dir: &Dir, name: &OsStr, limit: u64) -> std::io::Result<Option<Content>> {
    let Some(st) = dir.stat(name)? else { return Ok(None) };
    if st.is_symlink() {
        return Ok(Some(Content::Bytes(dir.read_link(name)?.into_os_string().into_encoded_bytes())));
    }
    if !st.is_file() {
        return Ok(None);
    }
    let (file, size) = dir.open_file(name)?;
    if size > limit {
        return Ok(Some(Content::Large(size)));
    }
    // Never past the limit, whatever the file grew to since its size was taken.
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(Some(Content::Bytes(bytes)))
}

/// The set's new content of a listed file or symlink, up to `limit`.
fn upper_content(set: &ChangeSet, r: &Resolved, path: &Path, limit: u64) -> Result<Content> {
    let read = || -> std::io::Result<Option<Content>> {
        let (dir, name) = parent_of(Dir::open_trusted(&set.upper(r.root))?, &r.rel)?;
        content(&dir, name, limit)
    };
    read().map_err(|e| read_failed(path, e))?.ok_or_else(|| read_failed(path, std::io::Error::from_raw_os_error(libc::ENOENT)))
}

/// `path` after `prefix` as a diff's header names it: as shown, or, when it holds a control
/// character or a double quote, quoted the way git quotes such names (`"b/x\ny"`, other control
/// characters as octal bytes). A name is the run's to choose: raw, a newline in it began lines of
/// the diff's own (a forged hunk above the real one, found by an attacker's review).
pub(crate) fn header_path(prefix: &str, path: &Path) -> String {
    let shown = format!("{prefix}{}", path.display());
    if !shown.chars().any(|c| c.is_control() || c == '"') {
        return shown;
    }
    let mut quoted = String::from('"');
    for c in shown.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\t' => quoted.push_str("\\t"),
            '\r' => quoted.push_str("\\r"),
            c if c.is_control() => c.encode_utf8(&mut [0; 4]).bytes().for_each(|b| quoted.push_str(&format!("\\{b:03o}"))),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// The file's content in the set's view (a symlink: its target), `None` when deleted.
pub fn read(set: &ChangeSet, path: &Path) -> Result<Option<Vec<u8>>> {
    match find(set, path)? {
        (_, New::Gone, _) => Ok(None),
        (_, New::Dir, _) => Err(SandboxError::invalid("path", format!("{} is a directory", path.display()))),
        (r, New::Entry, _) => match upper_content(set, &r, path, MAX_READ_BYTES)? {
            Content::Bytes(b) => Ok(Some(b)),
            Content::Large(size) => Err(too_large_to_read(path, size)),
        },
    }
}

fn too_large_to_read(path: &Path, size: u64) -> SandboxError {
    SandboxError::unsupported(format!(
        "{} is {size} bytes, more than readChange returns ({MAX_READ_BYTES} bytes; a sparse file counts at its full size): apply the change set to read it in the workspace, or discard it",
        path.display()
    ))
}

/// A unified diff from the host's current `path` to the set's (empty when they are the same),
/// below a line for each change its lines cannot show (`unseen`: a mode, a type, a directory
/// deleted whole).
pub fn diff(set: &ChangeSet, path: &Path) -> Result<String> {
    let (r, new, changes) = find(set, path)?;
    // The host's side where it is reached without a symlink (one on the way is what the set
    // replaces, never a way to read elsewhere).
    let host_dir = || Dir::open_root(&set.meta.roots[r.root]).and_then(|top| if r.rel.as_os_str().is_empty() { Ok((top, OsStr::new("."))) } else { parent_of(top, &r.rel) });
    let host_stat = host_dir().and_then(|(dir, name)| dir.stat(name)).ok().flatten();
    let note = super::unseen::note(&changes, host_stat, &header_path("", path));
    Ok(note + &content_diff(set, &r, new, path, || host_dir().and_then(|(dir, name)| content(&dir, name, MAX_DIFF_BYTES)))?)
}

/// The diff of the lines: from the host's content (`host`) to the set's.
fn content_diff(set: &ChangeSet, r: &Resolved, new: New, path: &Path, host: impl FnOnce() -> std::io::Result<Option<Content>>) -> Result<String> {
    let large = || Ok(format!("Binary or large file {} differs\n", header_path("", path)));
    let new = match new {
        New::Dir => return Ok(String::new()),
        New::Gone => None,
        New::Entry => match upper_content(set, r, path, MAX_DIFF_BYTES)? {
            Content::Bytes(b) => Some(b),
            Content::Large(_) => return large(),
        },
    };
    // A host file past the bound is not compared, but a small one the set puts in its place is
    // shown whole: "differs" alone hid a 5 MiB bundle (dist/cli.js) replaced by a one-line script,
    // which apply landed (found by an attacker's review, mode40).
    let (old, host_size) = match host() {
        Ok(Some(Content::Large(size))) if new.is_some() => (None, Some(size)),
        Ok(Some(Content::Large(_))) => return large(),
        Ok(Some(Content::Bytes(b))) => (Some(b), None),
        Ok(None) | Err(_) => (None, None),
    };
    if old == new {
        return Ok(String::new());
    }
    // Both sides escaped alike when either must be (a backslash then reads the same on both).
    let escaped = [&old, &new].iter().any(|b| b.as_deref().is_some_and(diff_text::needs_escaping));
    let (old_text, new_text) = (old.as_deref().map(|b| diff_text::text(b, escaped)), new.as_deref().map(|b| diff_text::text(b, escaped)));
    let (a, b) = (if old_text.is_some() { header_path("a", path) } else { "/dev/null".into() }, if new_text.is_some() { header_path("b", path) } else { "/dev/null".into() });
    let (o, n) = (old_text.unwrap_or_default(), new_text.unwrap_or_default());
    let deadline = std::time::Instant::now() + DIFF_TIMEOUT;
    let lines = similar::TextDiff::configure().deadline(deadline).diff_lines(&o, &n);
    // `similar` does not tell whether it stopped early: a diff that took until the deadline may have.
    let mut note = if std::time::Instant::now() >= deadline { not_minimal(path) } else { String::new() };
    if let Some(size) = host_size {
        note.push_str(&format!("{}: the host's file is {size} bytes, over {} MiB, and not compared: the change set's content is shown whole\n", header_path("", path), MAX_DIFF_BYTES >> 20));
    }
    if escaped {
        note.push_str(&format!("{}: not UTF-8 text: each byte that is not UTF-8 and each NUL is shown as \\xhh, a backslash as \\\\\n", header_path("", path)));
    }
    Ok(note + &lines.unified_diff().context_radius(3).header(&a, &b).to_string())
}

/// The line above a diff that stopped looking for the smallest changes at `DIFF_TIMEOUT`: before
/// the `---` header, where `patch` and `git apply` skip text, as they skip git's own lines there.
fn not_minimal(path: &Path) -> String {
    format!(
        "Diff of {} not minimal: it stopped looking for the fewest changed lines after {} s, and shows what it had not compared as removed and added whole\n",
        header_path("", path),
        DIFF_TIMEOUT.as_secs()
    )
}
