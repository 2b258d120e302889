//! One path of a change set: its new content (`readChange`) and a unified diff against the host's
//! current file (the CLI's `diff`).

use std::path::{Path, PathBuf};

use super::entries::{self, Kind};
use super::store::ChangeSet;
use crate::error::{Result, SandboxError};

/// Files larger than this are not diffed (the diff says so instead).
const MAX_DIFF_BYTES: u64 = 4 << 20;

/// Where `path` is in the set's view.
enum Found {
    /// The set deleted it (or it was never there).
    Absent,
    /// A regular file at this real path (the set's copy, or the host's unchanged one).
    File(PathBuf),
    Symlink(PathBuf),
    Dir,
}

fn find(set: &ChangeSet, path: &Path) -> Result<Found> {
    let (i, rel) = set.locate(path).ok_or_else(|| SandboxError::invalid("path", format!("{} is not inside the change set's workspace roots", path.display())))?;
    let upper = set.upper(i);
    if rel.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
        return Err(SandboxError::invalid("path", format!("{} must be a plain absolute path (no `.` or `..`)", path.display())));
    }
    if let Ok(e) = entries::read(&upper.join(rel), rel.to_path_buf()) {
        return Ok(match e.kind {
            Kind::Whiteout | Kind::Other => Found::Absent,
            Kind::File => Found::File(upper.join(rel)),
            Kind::Symlink(t) => Found::Symlink(t),
            Kind::Dir { .. } => Found::Dir,
        });
    }
    for a in rel.ancestors().skip(1).filter(|a| !a.as_os_str().is_empty()) {
        match entries::read(&upper.join(a), a.to_path_buf()).map(|e| e.kind) {
            Ok(Kind::Dir { opaque: false }) | Err(_) => {}
            Ok(_) => return Ok(Found::Absent),
        }
    }
    // Unchanged by the set: the host's, where no symlink on the way leads elsewhere.
    let host = set.meta.roots[i].join(rel);
    let real = std::fs::canonicalize(&host).ok().filter(|r| *r == host);
    Ok(match (host.symlink_metadata(), real) {
        (Ok(m), _) if m.file_type().is_symlink() => Found::Symlink(std::fs::read_link(&host).unwrap_or_default()),
        (Ok(m), Some(_)) if m.is_dir() => Found::Dir,
        (Ok(m), Some(_)) if m.is_file() => Found::File(host),
        _ => Found::Absent,
    })
}

/// The file's content in the set's view (a symlink: its target), `None` when deleted.
pub fn read(set: &ChangeSet, path: &Path) -> Result<Option<Vec<u8>>> {
    let read_err = |e: std::io::Error| SandboxError::setup_failed(format!("reading {} failed: {}", path.display(), sandspawn_helper::report::os_words(&e)), "");
    match find(set, path)? {
        Found::Absent => Ok(None),
        Found::File(p) => std::fs::read(p).map(Some).map_err(read_err),
        Found::Symlink(t) => Ok(Some(t.into_os_string().into_encoded_bytes())),
        Found::Dir => Err(SandboxError::invalid("path", format!("{} is a directory", path.display()))),
    }
}

/// A unified diff from the host's current `path` to the set's (empty when they are the same).
pub fn diff(set: &ChangeSet, path: &Path) -> Result<String> {
    let new = match find(set, path)? {
        Found::Dir => return Ok(String::new()),
        Found::File(p) if p.symlink_metadata().map(|m| m.len()).unwrap_or(0) > MAX_DIFF_BYTES => return Ok(format!("Binary or large file {} differs\n", path.display())),
        _ => read(set, path)?,
    };
    let old = match path.symlink_metadata() {
        Ok(m) if m.file_type().is_symlink() => Some(std::fs::read_link(path).unwrap_or_default().into_os_string().into_encoded_bytes()),
        Ok(m) if m.is_file() && m.len() <= MAX_DIFF_BYTES => std::fs::read(path).ok(),
        Ok(m) if m.is_file() => return Ok(format!("Binary or large file {} differs\n", path.display())),
        _ => None,
    };
    if old == new {
        return Ok(String::new());
    }
    let text = |b: &Option<Vec<u8>>| b.as_deref().map(|b| std::str::from_utf8(b).map(str::to_string));
    let (old_text, new_text) = match (text(&old), text(&new)) {
        (Some(Err(_)), _) | (_, Some(Err(_))) => return Ok(format!("Binary files {} differ\n", path.display())),
        (o, n) => (o.and_then(|r| r.ok()), n.and_then(|r| r.ok())),
    };
    let shown = path.display().to_string();
    let (a, b) = (if old_text.is_some() { format!("a{shown}") } else { "/dev/null".into() }, if new_text.is_some() { format!("b{shown}") } else { "/dev/null".into() });
    let (o, n) = (old_text.unwrap_or_default(), new_text.unwrap_or_default());
    Ok(similar::TextDiff::from_lines(&o, &n).unified_diff().context_radius(3).header(&a, &b).to_string())
}
