//! Path checks shared by every policy field: absolute, no NUL, canonical.

use std::path::{Component, Path, PathBuf};

use crate::error::{Result, SandboxError};

/// A user-given path, checked to be absolute and free of NUL bytes (which the OS would truncate,
/// silently turning one path into another).
pub(crate) fn absolute(option: &str, raw: &str) -> Result<PathBuf> {
    if raw.contains('\0') {
        return Err(SandboxError::invalid(option, "path contains a NUL byte"));
    }
    let p = PathBuf::from(raw);
    if !p.is_absolute() {
        return Err(SandboxError::invalid(option, format!("path must be absolute, got {raw:?}")));
    }
    Ok(p)
}

/// The canonical path plus, when the path does not exist, its first missing component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lenient {
    /// Canonical existing prefix with the missing rest appended verbatim.
    pub path: PathBuf,
    /// `None` when `path` exists; else the shallowest component of `path` that does not exist.
    pub first_missing: Option<PathBuf>,
}

/// Canonicalize a path that may not exist: resolve symlinks in the longest existing prefix and
/// append the rest. `.` and `..` in the missing rest cannot be resolved honestly (the symlinks they
/// would cross do not exist yet), so they are an error.
pub(crate) fn canonical_lenient(option: &str, p: &Path) -> Result<Lenient> {
    if let Ok(c) = std::fs::canonicalize(p) {
        return Ok(Lenient { path: c, first_missing: None });
    }
    let mut existing = p.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        // symlink_metadata: a dangling symlink "exists" as a link but cannot be canonicalized;
        // treat it like a missing component so we never bind through it.
        if existing.symlink_metadata().is_ok() && std::fs::canonicalize(&existing).is_ok() {
            break;
        }
        match existing.file_name() {
            Some(name) => {
                rest.push(name.to_owned());
                existing.pop();
            }
            None => break, // reached `/` (always exists) or `..`
        }
    }
    if p.components().any(|c| matches!(c, Component::ParentDir | Component::CurDir)) {
        return Err(SandboxError::invalid(option, format!("cannot resolve `..` in the missing path {}", p.display())));
    }
    let mut path = std::fs::canonicalize(&existing)
        .map_err(|e| SandboxError::invalid(option, format!("cannot resolve {}: {e}", p.display())))?;
    let mut first_missing = None;
    for name in rest.iter().rev() {
        path.push(name);
        if first_missing.is_none() {
            first_missing = Some(path.clone());
        }
    }
    Ok(Lenient { path, first_missing })
}

/// A symlink a path is resolved through, as it was when the policy was resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkOnTheWay {
    /// Its canonical directory joined with its name.
    pub path: PathBuf,
    /// What it points to, as written in it.
    pub target: PathBuf,
    /// `(device, inode)`: a symlink cannot be changed in place, so the same inode is the same link.
    pub id: (u64, u64),
}

/// The symlinks `p` is resolved through, in the order met (as `realpath` meets them), up to the
/// first component that does not exist; at most 40, as the kernel bounds a lookup.
pub(crate) fn links_on_the_way(p: &Path) -> Vec<LinkOnTheWay> {
    use std::os::unix::fs::MetadataExt;
    // The components still to resolve, the next one last.
    fn pending(p: &Path) -> Vec<std::ffi::OsString> {
        p.components().filter(|c| !matches!(c, Component::RootDir | Component::Prefix(_))).map(|c| c.as_os_str().to_os_string()).rev().collect()
    }
    let (mut links, mut at, mut rest) = (Vec::new(), PathBuf::from("/"), pending(p));
    while let Some(name) = rest.pop() {
        match name.to_str() {
            Some(".") => continue,
            // `at` holds no link: going up is lexical.
            Some("..") => {
                at.pop();
                continue;
            }
            _ => {}
        }
        let next = at.join(&name);
        let Ok(meta) = next.symlink_metadata() else { break };
        if !meta.file_type().is_symlink() {
            at = next;
            continue;
        }
        let Ok(target) = std::fs::read_link(&next) else { break };
        if links.len() == 40 {
            break;
        }
        if target.is_absolute() {
            at = PathBuf::from("/");
        }
        rest.extend(pending(&target));
        links.push(LinkOnTheWay { path: next, target, id: (meta.dev(), meta.ino()) });
    }
    links
}

/// Sort shallowest first (fewest components), then by bytes, and drop duplicates.
pub(crate) fn sort_shallowest_first(paths: &mut Vec<PathBuf>) {
    sort_shallowest_first_by(paths, |p| p);
    // As bytes, as sorted: equal paths are adjacent equal bytes.
    paths.dedup_by(|a, b| a.as_os_str() == b.as_os_str());
}

/// Sort `items` by their `path`, shallowest first, then by bytes (stable). Each depth is counted
/// once, not twice per comparison, and paths compare as bytes, not component by component: the
/// carve-outs of hundreds of repositories are sorted on every run, and the comparator was a third
/// of the planning's time there. (Paths that differ only in redundant separators would not sort
/// together; the callers' paths are canonical or normalized.)
pub(crate) fn sort_shallowest_first_by<T>(items: &mut Vec<T>, path: impl Fn(&T) -> &Path) {
    use std::os::unix::ffi::OsStrExt;
    let mut keyed: Vec<(usize, T)> = items.drain(..).map(|t| (depth(path(&t)), t)).collect();
    keyed.sort_by(|(da, a), (db, b)| da.cmp(db).then_with(|| path(a).as_os_str().as_bytes().cmp(path(b).as_os_str().as_bytes())));
    items.extend(keyed.into_iter().map(|(_, t)| t));
}

pub(crate) fn depth(p: &Path) -> usize {
    p.components().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_rejects_relative_and_nul() {
        assert!(absolute("sandbox.denyRead[0]", "rel/x").unwrap_err().message.contains("must be absolute"));
        assert!(absolute("sandbox.denyRead[0]", "/a\0b").unwrap_err().message.contains("NUL"));
        assert_eq!(absolute("x", "/a b").unwrap(), PathBuf::from("/a b"));
    }

    #[test]
    fn lenient_canonicalizes_existing_prefix() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("d")).unwrap();
        std::os::unix::fs::symlink(real.join("d"), real.join("link")).unwrap();
        let l = canonical_lenient("x", &real.join("link/missing/deeper")).unwrap();
        assert_eq!(l.path, real.join("d/missing/deeper"));
        assert_eq!(l.first_missing, Some(real.join("d/missing")));
        let l = canonical_lenient("x", &real.join("link")).unwrap();
        assert_eq!(l, Lenient { path: real.join("d"), first_missing: None });
        assert!(canonical_lenient("x", &real.join("nope/../x")).is_err());
    }

    #[test]
    fn links_on_the_way_are_those_realpath_meets() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("real/sub")).unwrap();
        std::os::unix::fs::symlink("real", r.join("a")).unwrap();
        std::os::unix::fs::symlink(r.join("a/sub"), r.join("b")).unwrap();
        let seen = |p: &Path| links_on_the_way(p).into_iter().map(|l| (l.path, l.target)).collect::<Vec<_>>();
        assert_eq!(seen(&r.join("b/missing/x")), vec![(r.join("b"), r.join("a/sub")), (r.join("a"), PathBuf::from("real"))]);
        assert_eq!(seen(&r.join("real/../a/./sub")), vec![(r.join("a"), PathBuf::from("real"))]);
        assert_eq!(seen(&r.join("real/sub")), vec![]);
        std::os::unix::fs::symlink("loop", r.join("loop")).unwrap();
        assert_eq!(links_on_the_way(&r.join("loop")).len(), 40, "bounded");
    }

    #[test]
    fn sorting() {
        let mut v = vec![PathBuf::from("/a/b/c"), PathBuf::from("/z"), PathBuf::from("/a/b"), PathBuf::from("/z")];
        sort_shallowest_first(&mut v);
        assert_eq!(v, vec![PathBuf::from("/z"), PathBuf::from("/a/b"), PathBuf::from("/a/b/c")]);
        let mut pairs = vec![("/b/c", 1), ("/a", 2), ("/a/c", 3), ("/a/b", 4), ("/a", 5)];
        sort_shallowest_first_by(&mut pairs, |(p, _)| Path::new(p));
        assert_eq!(pairs, vec![("/a", 2), ("/a", 5), ("/a/b", 4), ("/a/c", 3), ("/b/c", 1)], "stable, depth then bytes");
    }
}
