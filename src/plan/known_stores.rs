//! The list of the state directories and stores this user's sandspawn processes keep, in the one
//! place no environment variable moves: `known-stores` in the default state directory of the user
//! database's home (`~/.local/state/sandspawn`). Each process records its own there, and every
//! process covers what is listed (`stores::to_cover`). Found by an attacker's review: a process
//! with `XDG_STATE_HOME` set kept its change sets where another process of the user, without it,
//! could not know to cover them, and that one's run (cwd at `$HOME`) rewrote a pending set, whose
//! `applyChangeSet` then wrote the run's file outside its workspace.
//!
//! Only appended to (one `O_APPEND` write per process and change), never locked: a Landlock run,
//! which restricts no reads, could hold a lock on a file it may open. Past `PRUNE_AT` bytes, or
//! when mostly of stores gone, a process replaces it with what still exists (`prune`), losing no
//! live entry another process appends meanwhile.

use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

const FILE: &str = "known-stores";
const PRUNE_AT: u64 = 64 * 1024;
/// Entries a list may hold before one mostly of stores gone is pruned (below, not worth a rewrite).
const PRUNE_FEW: usize = 32;

/// Where the list is: `None` when the user database names no absolute home.
pub fn file() -> Option<PathBuf> {
    Some(crate::state_dir::home_base(crate::planted::home::database_home())?.join(FILE))
}

/// Records those of `own` (this process's own state directories, never a run's environment's: a
/// run chose those) not listed yet, and returns every listed directory that is still one
/// (`unlinked`); nothing when the list cannot be read. An entry that cannot be looked up for
/// anything but absence refuses the run (`store_lookup`).
pub fn record_and_list(own: &[PathBuf]) -> crate::error::Result<Vec<PathBuf>> {
    let env = |k: &str| std::env::var_os(k).map(PathBuf::from);
    let homes: Vec<PathBuf> = [env("HOME"), crate::planted::home::database_home()].into_iter().flatten().filter_map(|h| crate::canonical_memo::canonicalize(&h).ok()).collect();
    // Not a store in `/tmp`, which every workspace-write run of any process may write (`tmp:
    // 'writable'`): a cover in other runs guards nothing there that the next run without it could
    // not reach (no change set store may lie there: `review::run`), and its pins changed every
    // plan with `/tmp` writable (`HOME=/tmp` made `/tmp/.local/state/sandspawn`, and every later
    // plan bound its way). Not this process's `$TMPDIR` too, as before: that is this process's
    // alone, and a store another process keeps there (with `TMPDIR` unset, `/var/tmp` is no root
    // of its runs) went uncovered by this one's runs, which rewrote a pending set and chose where
    // its apply wrote (found by an attacker's review, land27).
    let shared: Vec<PathBuf> = [PathBuf::from("/tmp")].into_iter().filter_map(|t| crate::canonical_memo::canonicalize(&t).ok()).collect();
    let excluded = |p: &Path| homes.iter().any(|h| h.starts_with(p)) || shared.iter().any(|t| p.starts_with(t));
    file().map(|path| at_excluding(&path, own, &excluded)).unwrap_or(Ok(Vec::new()))
}

/// `record_and_list` with the list at `path`, and what `excluded` names (a directory holding a
/// home, one in a shared temporary directory) neither recorded nor listed, and pruned with the gone.
fn at_excluding(path: &Path, own: &[PathBuf], excluded: &dyn Fn(&Path) -> bool) -> crate::error::Result<Vec<PathBuf>> {
    let (listed, size) = read(path);
    let keep = |ps: &[PathBuf]| -> crate::error::Result<Vec<PathBuf>> {
        let found = ps.iter().map(|p| unlinked(p)).collect::<crate::error::Result<Vec<_>>>()?;
        Ok(found.into_iter().flatten().filter(|p| !excluded(p)).collect())
    };
    let mut new: Vec<PathBuf> = keep(own)?.into_iter().filter(|p| !listed.contains(p)).collect();
    new.sort();
    new.dedup();
    let mut out: Vec<PathBuf> = keep(&listed)?;
    // Every run looks at every entry (an `lstat` each): a list mostly of stores gone (tests'
    // temporary homes: 453 entries after one CI run, 0.3 ms a run) is pruned as a long one is.
    let mostly_gone = listed.len() > PRUNE_FEW && out.len() * 2 < listed.len();
    // A long list is rewritten only to drop something (a store gone, a line twice): one of live
    // stores alone (past `PRUNE_AT`: some 1,200 of them) was rewritten by every run, to itself.
    let distinct = listed.iter().collect::<std::collections::HashSet<_>>().len();
    let drops = out.len() < listed.len() || distinct < listed.len();
    if (size > PRUNE_AT && drops) || mostly_gone {
        let keep: Vec<PathBuf> = out.iter().chain(&new).cloned().collect();
        let live = |p: &Path| unlinked(p).ok().flatten().is_some_and(|p| !excluded(&p));
        prune(path, &keep, &live);
    } else if !new.is_empty() {
        let _ = append(path, &new);
    }
    out.extend(new);
    Ok(out)
}

/// Replaces the list at `path` with `keep` (what still exists, with this process's own), losing no
/// live store another process recorded meanwhile (pstores40: the rewrite renamed over the list,
/// and an entry appended between its read and the rename was lost until that process's next run,
/// while every other process's runs left its store uncovered). The new list is exchanged with the
/// old one (one atomic `renameat2`), so what it replaced, whoever wrote it last (another pruner's
/// list too), is read after the exchange: each of its entries not kept that `live` still finds (one
/// appended meanwhile, one made again since it was judged) is appended again. An append that lands
/// in the replaced file after that read is made again by its writer (`append_through`). Without
/// the exchange (a file system that has none) nothing is pruned.
fn prune(path: &Path, keep: &[PathBuf], live: &dyn Fn(&Path) -> bool) {
    static TAKEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    // One name per prune: two threads of this process may prune at once.
    let n = TAKEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_file_name(format!("{FILE}.{}.{n}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    if write_new(&tmp, keep).is_err() || !exchange(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return;
    }
    let (replaced, _) = read(&tmp);
    let _ = std::fs::remove_file(&tmp);
    let kept: std::collections::HashSet<&PathBuf> = keep.iter().collect();
    let mut again: Vec<PathBuf> = replaced.into_iter().filter(|p| !kept.contains(p) && live(p)).collect();
    again.sort();
    again.dedup();
    if !again.is_empty() {
        let _ = append(path, &again);
    }
}

/// Swaps the files at `a` and `b`, atomically; false when it cannot.
fn exchange(a: &Path, b: &Path) -> bool {
    use std::ffi::CString;
    let (Ok(a), Ok(b)) = (CString::new(a.as_os_str().as_bytes()), CString::new(b.as_os_str().as_bytes())) else { return false };
    // SAFETY: both are NUL-terminated paths that outlive the call.
    #[cfg(target_os = "linux")]
    let done = unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) } == 0;
    // SAFETY: as above.
    #[cfg(target_os = "macos")]
    let done = unsafe { libc::renamex_np(a.as_ptr(), b.as_ptr(), libc::RENAME_SWAP) } == 0;
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    let done = false;
    done
}

/// Appends `paths` to the list at `path`.
fn append(path: &Path, paths: &[PathBuf]) -> std::io::Result<()> {
    append_through(open_to_append(path)?, path, paths)
}

fn open_to_append(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).append(true).create(true).open(path)
}

/// Appends through `f`, opened at `path` before, and again (a few times at most) while the file
/// it wrote is no longer the one at `path`: a prune replaced it meanwhile (`prune`), and what was
/// written after the pruner read it would be lost.
fn append_through(mut f: std::fs::File, path: &Path, paths: &[PathBuf]) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let buf = lines(paths);
    for _ in 0..8 {
        f.write_all(&buf)?;
        let (wrote, there) = (f.metadata()?, std::fs::symlink_metadata(path)?);
        if (wrote.dev(), wrote.ino()) == (there.dev(), there.ino()) {
            return Ok(());
        }
        f = open_to_append(path)?;
    }
    Ok(())
}

/// The listed paths as they are written, looked up by nobody (the after-run check of the
/// directories above them, `runner::store_modes`).
pub fn listed() -> Vec<PathBuf> {
    file().map(|path| read(&path).0).unwrap_or_default()
}

#[cfg(test)]
fn at(path: &Path, own: &[PathBuf]) -> Vec<PathBuf> {
    at_excluding(path, own, &|_| false).unwrap()
}

/// `p` itself when it is a private directory (`state_dir::is_private`) that no symlink leads to:
/// none at it, none on its way. Found by an attacker's review (rfix24): an entry whose directory
/// had gone (a test's temporary home in `/tmp`) was made again by a run as a symlink to the home,
/// and every later run of every process of the user covered the whole home. A listed path names
/// the real directory that was recorded, or nothing.
/// A lookup that fails for anything but absence refuses (found by an attacker's review, rfix25: a
/// run's `chmod 000` above a listed store dropped it from every later run's cover), unless a
/// symlink is on its way (cross37: a symlink loop there refused every later run of the user).
fn unlinked(p: &Path) -> crate::error::Result<Option<PathBuf>> {
    if super::store_lookup::lookup_as_named(p)?.is_none() {
        return Ok(None);
    }
    let private = std::fs::symlink_metadata(p).is_ok_and(|m| crate::state_dir::is_private(&m));
    Ok(private.then(|| p.to_path_buf()))
}

/// The listed absolute paths and the list's size; nothing from a file that is not this user's
/// alone (another user could name what this one's runs lose).
fn read(path: &Path) -> (Vec<PathBuf>, u64) {
    let Ok(mut f) = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path) else { return (Vec::new(), 0) };
    let Ok(meta) = f.metadata() else { return (Vec::new(), 0) };
    // SAFETY: geteuid has no preconditions.
    if !meta.is_file() || meta.uid() != unsafe { libc::geteuid() } || meta.mode() & 0o022 != 0 {
        return (Vec::new(), 0);
    }
    // Read whole: only this user's processes write it, one line per live store (a prune keeps no
    // other), and every run covers every one of them anyway. Before, the first 256 KiB were read
    // (about 5,000 stores), and a prune, which every run made past `PRUNE_AT`, dropped the rest.
    // Into a buffer of the size fstat gave (and one byte more, for the end): two reads, where
    // `take`'s reader, which has no size to give, made std probe and double from 32 bytes (8 reads
    // of a 1 KiB list, three lists a workspace-write run).
    let first = meta.len().min(READ_AT_MOST) as usize + 1;
    let Ok(bytes) = crate::whole_file::read_from((&mut f).take(READ_AT_MOST), first) else { return (Vec::new(), 0) };
    // A list read in part is never pruned (size 0): the prune would drop what was not read.
    let size = if meta.len() > READ_AT_MOST { 0 } else { meta.len() };
    (complete_lines(&bytes).map(|l| PathBuf::from(std::ffi::OsStr::from_bytes(l))).collect(), size)
}

/// The most of a list read: far past what any user's processes record (a million stores of this
/// machine's paths; the sandbox's argument bound refuses a run long before).
const READ_AT_MOST: u64 = 64 << 20;

/// The absolute paths of `bytes`, one a line, but a last one without its newline: an append
/// another process is making (a reader may see part of a write), never a path to cover (a prefix
/// of a store's path names one of its ancestors).
fn complete_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    bytes[..end].split(|b| *b == b'\n').filter(|l| l.first() == Some(&b'/'))
}

/// `paths` one a line (one holding a newline cannot be listed), for one write.
fn lines(paths: &[PathBuf]) -> Vec<u8> {
    let mut buf = Vec::new();
    for p in paths.iter().map(|p| p.as_os_str().as_bytes()).filter(|p| !p.contains(&b'\n')) {
        buf.extend_from_slice(p);
        buf.push(b'\n');
    }
    buf
}

/// Writes `paths` into a new file at `path`, in one write.
fn write_new(path: &Path, paths: &[PathBuf]) -> std::io::Result<()> {
    std::fs::OpenOptions::new().mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).write(true).create_new(true).open(path)?.write_all(&lines(paths))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn a_process_records_its_stores_and_another_lists_them() {
        let t = tempfile::tempdir().unwrap();
        let list = t.path().join(FILE);
        let (mine, theirs) = (t.path().join("xdg/sandspawn"), t.path().join("sets"));
        for d in [&mine, &theirs] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        assert_eq!(at(&list, &[theirs.clone()]), [theirs.canonicalize().unwrap()]);
        let both = at(&list, &[mine.clone(), mine.clone()]);
        assert_eq!(both, [theirs.canonicalize().unwrap(), mine.canonicalize().unwrap()]);
        // Recorded once each; a store since removed is no longer listed.
        assert_eq!(std::fs::read_to_string(&list).unwrap().lines().count(), 2);
        std::fs::remove_dir(&theirs).unwrap();
        assert_eq!(at(&list, &[]), [mine.canonicalize().unwrap()]);
    }

    #[test]
    fn only_private_directories_are_listed_and_only_from_a_private_list() {
        let t = tempfile::tempdir().unwrap();
        let list = t.path().join(FILE);
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(at(&list, &[open]).is_empty());
        let private = t.path().join("private");
        std::fs::create_dir(&private).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(at(&list, &[private.clone()]).len(), 1);
        std::fs::set_permissions(&list, std::fs::Permissions::from_mode(0o622)).unwrap();
        assert!(read(&list).0.is_empty(), "a list others may write names nothing");
    }

    /// Found by an attacker's review (rfix24, known_stale.sh): an entry whose directory was
    /// removed (a test's temporary home) was made again by a run as a symlink to the home, and
    /// every later run of every process covered the whole home. A listed path counts only as the
    /// real directory it named: no symlink at it or on its way.
    #[test]
    fn a_listed_path_made_a_symlink_names_nothing() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        let list = base.join(FILE);
        let (gone, home) = (base.join("tmp-home/state"), base.join("home"));
        for d in [&gone, &home] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        assert_eq!(at(&list, &[gone.clone()]), [gone.clone()]);
        std::fs::remove_dir(&gone).unwrap();
        std::os::unix::fs::symlink(&home, &gone).unwrap();
        assert!(at(&list, &[]).is_empty(), "the link at the listed path is not followed");
        std::fs::remove_file(&gone).unwrap();
        std::fs::remove_dir(base.join("tmp-home")).unwrap();
        std::os::unix::fs::symlink(&home, base.join("tmp-home")).unwrap();
        std::fs::create_dir_all(home.join("state")).unwrap();
        assert!(at(&list, &[]).is_empty(), "nor one on its way");
    }

    /// Found by an attacker's review (cross37): a listed path whose directory was removed, made a
    /// symlink loop by a run (at it, or at a directory on its way), failed its lookup with ELOOP,
    /// and every later run of the user was refused. It names nothing, as any link there does.
    #[test]
    fn a_listed_path_made_a_symlink_loop_names_nothing_and_refuses_nothing() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        let list = base.join(FILE);
        let (store, other) = (base.join("ws/ttc/store"), base.join("other"));
        for d in [&store, &other] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        assert_eq!(at(&list, &[store.clone(), other.clone()]), [other.clone(), store.clone()]);
        std::fs::remove_dir(&store).unwrap();
        std::os::unix::fs::symlink("store", &store).unwrap();
        assert_eq!(at_excluding(&list, &[], &|_| false).map_err(|e| e.message), Ok(vec![other.clone()]), "a loop at the path");
        std::fs::remove_file(&store).unwrap();
        std::fs::remove_dir(base.join("ws/ttc")).unwrap();
        std::os::unix::fs::symlink("ttc", base.join("ws/ttc")).unwrap();
        assert_eq!(at_excluding(&list, &[], &|_| false).map_err(|e| e.message), Ok(vec![other]), "a loop on its way");
    }

    /// What holds a home (a store set to `$HOME` by mistake, or a run's) is never recorded: every
    /// later run of every process would cover the workspaces in it.
    #[test]
    fn a_directory_holding_a_home_is_not_recorded() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        let list = base.join(FILE);
        let home = base.join("home");
        std::fs::create_dir_all(home.join(".local/state/sandspawn")).unwrap();
        for d in [&base, &home, &home.join(".local"), &home.join(".local/state"), &home.join(".local/state/sandspawn")] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        let holds_home = |p: &Path| home.starts_with(p);
        let listed = at_excluding(&list, &[home.clone(), base.clone(), home.join(".local/state/sandspawn")], &holds_home).unwrap();
        assert_eq!(listed, [home.join(".local/state/sandspawn")]);
    }

    #[test]
    fn a_list_mostly_of_stores_gone_is_pruned_however_short() {
        let t = tempfile::tempdir().unwrap();
        let list = t.path().join(FILE);
        let gone: String = (0..=PRUNE_FEW).map(|i| format!("/gone/{i:09}\n")).collect();
        std::fs::write(&list, gone).unwrap();
        std::fs::set_permissions(&list, std::fs::Permissions::from_mode(0o600)).unwrap();
        let kept = t.path().join("kept");
        std::fs::create_dir(&kept).unwrap();
        std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o700)).unwrap();
        at(&list, &[kept.clone()]);
        assert_eq!(std::fs::read_to_string(&list).unwrap(), format!("{}\n", kept.canonicalize().unwrap().display()));
    }

    fn private_dir(p: &Path) -> PathBuf {
        std::fs::create_dir_all(p).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700)).unwrap();
        p.canonicalize().unwrap()
    }

    fn gone_list(list: &Path) {
        let gone: String = (0..=PRUNE_FEW).map(|i| format!("/gone/{i:09}\n")).collect();
        std::fs::write(list, gone).unwrap();
        std::fs::set_permissions(list, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    /// The race of a prune with another process recording its store (pstores40): the pruner read
    /// the list, another process appended its live store, and the rewrite renamed over the list
    /// without it, so until that process's next run no run of any other process covered it.
    #[test]
    fn a_store_appended_while_the_list_is_pruned_stays_listed() {
        let t = tempfile::tempdir().unwrap();
        let list = t.path().join(FILE);
        gone_list(&list);
        let (kept, theirs) = (private_dir(&t.path().join("kept")), private_dir(&t.path().join("theirs")));
        let live = |p: &Path| unlinked(p).ok().flatten().is_some();
        // Read and judged (the pruner's first half), then the other process's append.
        let (listed, _) = read(&list);
        assert!(listed.iter().all(|p| !live(p)));
        append(&list, &[theirs.clone()]).unwrap();
        prune(&list, &[kept.clone()], &live);
        let left = read(&list).0;
        assert!(left.contains(&theirs), "the store appended meanwhile is listed: {left:?}");
        assert!(left.contains(&kept) && left.len() == 2, "{left:?}");
    }

    /// The other half: a process opened the list before a prune replaced it and wrote after; its
    /// entry went into the replaced file, which nobody reads. Its append sees that and writes again.
    #[test]
    fn an_append_into_a_list_replaced_meanwhile_is_made_again() {
        let t = tempfile::tempdir().unwrap();
        let list = t.path().join(FILE);
        gone_list(&list);
        let (kept, theirs) = (private_dir(&t.path().join("kept")), private_dir(&t.path().join("theirs")));
        let opened = open_to_append(&list).unwrap();
        prune(&list, &[kept.clone()], &|p: &Path| unlinked(p).ok().flatten().is_some());
        append_through(opened, &list, &[theirs.clone()]).unwrap();
        let left = read(&list).0;
        assert!(left.contains(&theirs) && left.contains(&kept), "{left:?}");
    }

    /// A listed store judged gone, made again before the prune replaced the list (its process
    /// read the list then, found it listed, and recorded nothing): still listed after the prune.
    #[test]
    fn a_store_made_again_while_the_list_is_pruned_stays_listed() {
        let t = tempfile::tempdir().unwrap();
        let list = t.path().join(FILE);
        let back = t.path().canonicalize().unwrap().join("back");
        let mut entries: String = (0..=PRUNE_FEW).map(|i| format!("/gone/{i:09}\n")).collect();
        entries.push_str(&format!("{}\n", back.display()));
        std::fs::write(&list, entries).unwrap();
        std::fs::set_permissions(&list, std::fs::Permissions::from_mode(0o600)).unwrap();
        let live = |p: &Path| unlinked(p).ok().flatten().is_some();
        assert!(!live(&back), "judged gone");
        private_dir(&back);
        prune(&list, &[], &live);
        assert_eq!(read(&list).0, [back]);
    }

    /// Past the 256 KiB a run used to read (about 5,000 live stores at this machine's paths), the
    /// rest of the list was neither listed nor kept: every run pruned (the file is past
    /// `PRUNE_AT`) and rewrote the list with what it had read, so every store recorded after the
    /// first 256 KiB went uncovered by every other process's runs; and the line the read cut in two
    /// was taken for a path, a prefix of a store's (an ancestor directory covered in every run).
    #[test]
    fn a_list_of_thousands_of_live_stores_is_read_and_kept_whole() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        let list = base.join(FILE);
        // Long paths, so that fewer stores (1,200) pass the old 256 KiB.
        let parent = base.join("s".repeat(200));
        let stores: Vec<PathBuf> = (0..1_200).map(|i| private_dir(&parent.join(format!("ttc-{i:06}")))).collect();
        std::fs::write(&list, lines(&stores)).unwrap();
        std::fs::set_permissions(&list, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(std::fs::metadata(&list).unwrap().len() > 4 * PRUNE_AT, "past the old read");
        let before = std::fs::metadata(&list).unwrap().ino();
        let listed = at(&list, &[]);
        assert_eq!(std::fs::metadata(&list).unwrap().ino(), before, "a list of live stores alone is not rewritten");
        assert_eq!(listed.len(), stores.len(), "every live store is listed");
        assert!(listed.contains(stores.last().unwrap()));
        assert_eq!(read(&list).0.len(), stores.len(), "and every one is still in the list after the run");
    }

    /// A line without its newline is one being written (an append another process has not
    /// finished) or one a read cut: a prefix of a store's path, which names an ancestor of it.
    #[test]
    fn a_line_without_its_newline_names_nothing() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        let list = base.join(FILE);
        let store = private_dir(&base.join("ws/target/ttc-0001/state"));
        std::fs::write(&list, format!("{}
{}", store.display(), base.join("ws/target").display())).unwrap();
        std::fs::set_permissions(&list, std::fs::Permissions::from_mode(0o600)).unwrap();
        private_dir(&base.join("ws/target"));
        assert_eq!(read(&list).0, [store]);
    }

    #[test]
    fn a_long_list_is_pruned_to_what_exists() {
        let t = tempfile::tempdir().unwrap();
        let list = t.path().join(FILE);
        let gone: String = (0..=PRUNE_AT / 16).map(|i| format!("/gone/{i:09}\n")).collect();
        std::fs::write(&list, gone).unwrap();
        std::fs::set_permissions(&list, std::fs::Permissions::from_mode(0o600)).unwrap();
        let kept = t.path().join("kept");
        std::fs::create_dir(&kept).unwrap();
        std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(at(&list, &[kept.clone()]), [kept.canonicalize().unwrap()]);
        let left = std::fs::read_to_string(&list).unwrap();
        assert!(left == format!("{}\n", kept.canonicalize().unwrap().display()), "{} bytes left", left.len());
    }
}
