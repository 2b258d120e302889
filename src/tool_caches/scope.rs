//! Which scope of the store a `'private'` run's caches are: one per set of writable roots, each
//! root taken by its path and by the identity of the directory there.
//!
//! Why the writable roots: package managers trust what they extracted earlier (cargo compiles
//! `~/.cargo/registry/src`, npx runs `~/.npm/_npx`), so a run can change, through its caches, what
//! a later run of the same scope builds, and that build writes what the later run may write. Two
//! runs share a scope only when each could already write what the other's build writes: the same
//! roots. The repository around the cwd was the key before, and an attacker's review showed what
//! that allowed: a run in `mono/pkgA` (which could not write `mono/pkgB`) rewrote cfg-if's sources
//! in its scope, and the next `cargo build` in `mono/pkgB` ran the planted build script.
//!
//! Why the identity (`st_dev`, `st_ino`, and the birth time where the filesystem keeps one): a path
//! names whatever directory is there now. A project removed and another made at the same path (a CI
//! checkout, a re-cloned repository) inherited what the old one's runs planted. With the identity
//! in the key, the new directory gets a new scope, so no run can meet a scope of another directory
//! however the removal and the runs interleave; the first run of the new scope removes the
//! predecessors (`retire_predecessors`). A sticky world-writable root (`/tmp`, `/var/tmp`) is taken
//! by its path only: every process of the machine writes it, so its identity names no project, and a
//! tmpfs `/tmp` is new at each boot (the caches would start cold after each).
//!
//! Layout: `workspaces/NAME-PATHS-ID/`, `NAME` the directory name of the repository around the cwd
//! (for people: it keys nothing), `PATHS` a hash of the roots' paths, `ID` a hash of the record, the
//! paths and their identities, kept in the scope's `roots` file.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::dir::Dir;
use crate::policy::WritableRoot;

/// What a scope is recorded as (`create` writes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The repository around the cwd, or the cwd: names the scope for people (its `workspace` file).
    pub repository: PathBuf,
    /// Per root, sorted by path: `write|review DEV INO BTIME PATH\0\n` (`shared` in place of the
    /// identity for a sticky world-writable root; `-` for a birth time the filesystem does not keep).
    pub roots: Vec<u8>,
}

/// The scope of a run with these writable roots (`reviewed`: roots in review mode, whose writes wait
/// for a review, so they are not the same roots as when written directly), or `None` when it has
/// none or one of them cannot be inspected: then the run keeps no caches (see `resolve`).
///
/// `confinement` is what else bounds the run (its read-only and hidden paths, git's protection, the
/// protected names, the network, Unix sockets): it goes into the key with the roots' paths. A run
/// with `readOnlyPaths: [pkgB]`, `denyRead: [secret]` or the network off planted a tool in its
/// scope, and a run of the same roots without those limits ran it: the planted code read the
/// secret and wrote pkgB (found by an attacker's review of the per-roots key).
pub fn of(store: &Path, roots: &[WritableRoot], reviewed: &[PathBuf], confinement: &[u8], cwd: &Path) -> Option<(PathBuf, Record)> {
    let mut entries: Vec<(&Path, &str)> = roots.iter().map(|r| (r.root.as_path(), if reviewed.contains(&r.root) { "review" } else { "write" })).collect();
    if entries.is_empty() {
        return None;
    }
    entries.sort();
    entries.dedup();
    let (mut paths, mut record) = (Vec::new(), Vec::new());
    for (root, how) in entries {
        let path = root.as_os_str().as_encoded_bytes();
        paths.extend_from_slice(format!("{how} ").as_bytes());
        paths.extend_from_slice(path);
        paths.push(0);
        record.extend_from_slice(format!("{how} {} ", identity(root)?).as_bytes());
        record.extend_from_slice(path);
        record.extend_from_slice(b"\0\n");
    }
    paths.extend_from_slice(confinement);
    record.extend_from_slice(b"confined ");
    record.extend_from_slice(confinement);
    record.push(b'\n');
    let repository = super::store::workspace_of(cwd);
    let name: String = repository
        .file_name()
        .map(|n| n.to_string_lossy().chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')).take(32).collect())
        .unwrap_or_default();
    let name = if name.is_empty() { "root".to_string() } else { name };
    let dir = store.join("workspaces").join(format!("{name}-{}-{}", hex(&paths, 8), hex(&record, 6)));
    Some((dir, Record { repository, roots: record }))
}

/// `DEV INO BTIME` of the directory at `root` (one `statx`), or `shared` for a sticky directory
/// every user may write.
fn identity(root: &Path) -> Option<String> {
    let m = std::fs::metadata(root).ok()?;
    if m.mode() & 0o1002 == 0o1002 {
        return Some("shared".to_string());
    }
    let born = m.created().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    let born = born.map_or("-".to_string(), |d| format!("{}.{:09}", d.as_secs(), d.subsec_nanos()));
    Some(format!("{} {} {born}", m.dev(), m.ino()))
}

fn hex(bytes: &[u8], len: usize) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().take(len).map(|b| format!("{b:02x}")).collect()
}

/// `store::create`, then check the scope's `roots` against `r` (one read), or, at its first run,
/// write them (atomically: a concurrent first run reads them whole or not at all), name the
/// repository in `workspace`, and retire the predecessors. Another record means the hash in the
/// name collided or someone edited the store: refused, not shared. Returns the store's root and the
/// scope, opened (every file here is reached from them, through no link: `dir`).
pub fn create(store: &Path, scope: &Path, r: Option<&Record>) -> crate::error::Result<(Dir, Dir)> {
    let (root, dir) = super::store::create(store, scope)?;
    let Some(r) = r else { return Ok((root, dir)) };
    let path = scope.join("roots");
    match dir.read("roots") {
        Ok(found) if found == r.roots => return Ok((root, dir)),
        Ok(_) => return Err(super::store::failed(scope, std::io::Error::other("its `roots` file records other writable roots; remove that directory"))),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(super::store::failed(&path, e)),
        Err(_) => {}
    }
    let _ = dir.write("workspace", r.repository.as_os_str().as_encoded_bytes());
    let new = format!("roots.{}", super::store::run_id());
    dir.write(&new, &r.roots).and_then(|()| dir.rename(&new, &dir, "roots")).map_err(|e| super::store::failed(&path, e))?;
    if let (Ok(scopes), Some(name)) = (root.open("workspaces"), scope.file_name()) {
        retire_predecessors(&scopes, name);
    }
    Ok((root, dir))
}

/// The first run of a scope removes the scopes of the same roots' paths with another identity:
/// directories that were there before, whose caches nobody can reach any more (no run computes
/// their key). Each is renamed aside first, so that of concurrent runs only one removes it, and a
/// run still holding it (started before its directory was replaced) finds its paths gone and
/// publishes nothing anywhere. `scopes`: the store's `workspaces`, holding the scope `name`.
fn retire_predecessors(scopes: &Dir, name: &std::ffi::OsStr) {
    let Some((paths, id)) = name.to_str().and_then(key_of) else { return };
    for other in scopes.names().unwrap_or_default() {
        if !other.to_str().and_then(key_of).is_some_and(|(p, i)| p == paths && i != id) {
            continue;
        }
        let aside = format!(".retired-{}", super::store::run_id());
        if scopes.rename(&other, scopes, &aside).is_ok() {
            let _ = scopes.remove(&aside);
        }
    }
}

/// `(PATHS, ID)` of a scope's directory name `NAME-PATHS-ID`.
fn key_of(name: &str) -> Option<(&str, &str)> {
    let mut parts = name.rsplitn(3, '-');
    let (id, paths, _) = (parts.next()?, parts.next()?, parts.next()?);
    (!name.starts_with('.')).then_some((paths, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(paths: &[&Path]) -> Vec<WritableRoot> {
        paths.iter().map(|p| WritableRoot { root: p.to_path_buf(), read_only: Vec::new(), missing_read_only: Vec::new(), id: None }).collect()
    }

    #[test]
    fn the_roots_and_their_identity_key_the_scope() {
        let t = tempfile::tempdir().unwrap();
        let (store, repo) = (t.path().join("store"), t.path().join("mono"));
        let (a, b) = (repo.join("pkgA"), repo.join("pkgB"));
        for d in [&a, &b, &repo.join(".git")] {
            std::fs::create_dir_all(d).unwrap();
        }
        let (sa, record) = of(&store, &roots(&[&a]), &[], b"", &a).unwrap();
        assert_eq!(record.repository, repo, "named after the repository around the cwd");
        assert!(sa.file_name().unwrap().to_str().unwrap().starts_with("mono-"), "{}", sa.display());
        let (sb, _) = of(&store, &roots(&[&b]), &[], b"", &b).unwrap();
        assert_ne!(sa, sb, "another directory of the repository, another scope");
        assert_eq!(of(&store, &roots(&[&a]), &[], b"", &a).unwrap().0, sa, "the same roots, the same scope");
        assert_eq!(of(&store, &roots(&[&b, &a]), &[], b"", &a).unwrap().0, of(&store, &roots(&[&a, &b]), &[], b"", &b).unwrap().0, "a set");
        assert_ne!(of(&store, &roots(&[&a, &b]), &[], b"", &a).unwrap().0, sa, "more roots, another scope");
        assert_ne!(of(&store, &roots(&[&a]), &[a.clone()], b"", &a).unwrap().0, sa, "a reviewed root is not a root written directly");
        assert_ne!(of(&store, &roots(&[&a]), &[], b"{\"denyRead\":[\"/s\"]}", &a).unwrap().0, sa, "otherwise confined, another scope");
        assert_eq!(of(&store, &[], &[], b"", &a), None, "no writable root, no scope");
        assert_eq!(of(&store, &roots(&[&t.path().join("gone")]), &[], b"", &a), None, "a root that cannot be inspected, no scope");
        std::fs::remove_dir(&a).unwrap();
        std::fs::create_dir(&a).unwrap();
        assert_ne!(of(&store, &roots(&[&a]), &[], b"", &a).unwrap().0, sa, "another directory at the same path, another scope");
        let tmp = of(&store, &roots(&[Path::new("/tmp")]), &[], b"", &a).unwrap().1;
        assert!(String::from_utf8_lossy(&tmp.roots).starts_with("write shared /tmp"), "{:?}", tmp.roots);
    }

    #[test]
    fn create_records_the_roots_once_and_refuses_another_record() {
        let t = tempfile::tempdir().unwrap();
        let (store, ws) = (t.path().join("store"), t.path().join("my app"));
        std::fs::create_dir(&ws).unwrap();
        let (scope, record) = of(&store, &roots(&[&ws]), &[], b"", &ws).unwrap();
        assert!(scope.starts_with(store.join("workspaces")) && scope.file_name().unwrap().to_string_lossy().starts_with("myapp-"));
        create(&store, &scope, Some(&record)).unwrap();
        create(&store, &scope, Some(&record)).unwrap();
        assert_eq!(std::fs::read(scope.join("workspace")).unwrap(), ws.as_os_str().as_encoded_bytes());
        assert_eq!(std::fs::read(scope.join("roots")).unwrap(), record.roots);
        // Another record under the same name (a collision of the name's hash, an edit): refused.
        let other = Record { roots: b"write 1 2 - /elsewhere\0\n".to_vec(), ..record.clone() };
        assert!(create(&store, &scope, Some(&other)).unwrap_err().message.contains("records other writable roots"));
        // The same roots' paths with another identity: retired by the first run of the new scope.
        std::fs::remove_dir(&ws).unwrap();
        std::fs::create_dir(&ws).unwrap();
        let (next, record) = of(&store, &roots(&[&ws]), &[], b"", &ws).unwrap();
        create(&store, &next, Some(&record)).unwrap();
        assert!(!scope.exists() && next.exists());
    }

    #[test]
    fn the_first_run_of_a_scope_removes_its_predecessors_only() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path().join("workspaces");
        for n in ["mono-00aa-111111", "other-00aa-222222", "mono-00aa-333333", "mono-00ab-444444", "mono-1200aa-555555", "mono-0123456789abcdef", ".retired-1"] {
            std::fs::create_dir_all(w.join(n).join("npm/base")).unwrap();
        }
        retire_predecessors(&Dir::at(&w), std::ffi::OsStr::new("mono-00aa-111111"));
        let mut left: Vec<String> = std::fs::read_dir(&w).unwrap().flatten().map(|e| e.file_name().into_string().unwrap()).collect();
        left.sort();
        assert_eq!(left, [".retired-1", "mono-00aa-111111", "mono-00ab-444444", "mono-0123456789abcdef", "mono-1200aa-555555"]);
    }
}
