//! Folding one run's overlay upper directory into a cache's base layer, as overlayfs would show the
//! two stacked: what the run wrote replaces what the base held, a whiteout (a character device 0:0)
//! removes the entry below it, and an opaque directory (`user.overlay.opaque = y`, the `userxattr`
//! form a user namespace's overlay writes) replaces the whole directory below it.
//!
//! Everything moves by `rename` within one filesystem: nothing is copied, and an entry of the base
//! is replaced in one step (a directory it replaces is renamed aside into a discard directory, for
//! the caller to remove later: removing it here could take as long as the directory is big).
//! Whiteouts and opaque markers are kept in the base: below it lies the host's own cache, whose
//! entries they must go on hiding. Runs only while no run has the base mounted (`layers`: under
//! the cache's exclusive lock), so no overlay sees it change. The modes runs left (Go's 0555 module
//! directories, a `chmod 000`) stay as they were, and do not stop a move (`owner_access`).
//!
//! A merge can stop after any entry (`Fold::stop`). What is left of the layer then still lies
//! above the base, and the two stacked show what they showed before the merge began: each step
//! moves one entry of the layer to the same name in the base, where the layer's entry hid the
//! base's (a file, a whiteout, an opaque directory, a directory over a non-directory) or merged
//! with it (two directories: the step is inside). So a run may mount the layer and the base
//! between two steps (`layers::fold_if_alone`).

use std::ffi::OsStr;
use std::io;
#[cfg(all(test, target_os = "linux"))]
use std::os::unix::fs::{FileTypeExt, MetadataExt};
#[cfg(all(test, target_os = "linux"))]
use std::os::unix::fs::PermissionsExt;
#[cfg(all(test, target_os = "linux"))]
use std::path::Path;

use super::dir::Dir;
use super::owner_access::{open_up, Access, ALL, WRITE_IN};

#[cfg(target_os = "linux")]
const OPAQUE: &std::ffi::CStr = c"user.overlay.opaque";

/// How deep a merge goes into directories both the layer and the base have: each level holds two
/// descriptors open. Far deeper than any tool's cache; a layer deeper than that is dropped as one
/// that cannot be folded (`layers::fold_if_alone`), before the descriptors run out.
const MOST_DEPTH: usize = 256;

/// A character device 0:0: how overlayfs records a deletion in an upper directory (moved into the
/// base like any entry: see the module comment).
#[cfg(all(test, target_os = "linux"))]
fn is_whiteout(meta: &std::fs::Metadata) -> bool {
    meta.file_type().is_char_device() && meta.rdev() == 0
}

/// The directory carries the opaque marker: the layers below it are hidden there.
#[cfg(target_os = "linux")]
fn is_opaque(dir: &Dir) -> bool {
    use std::os::fd::AsRawFd;
    let mut value = [0u8; 2];
    // SAFETY: our descriptor, a valid C string and a buffer of the length passed.
    let n = unsafe { libc::fgetxattr(dir.fd().as_raw_fd(), OPAQUE.as_ptr(), value.as_mut_ptr().cast(), value.len()) };
    n == 1 && value[0] == b'y'
}

/// Opaque markers are overlayfs's, which only Linux has; a store elsewhere holds none.
#[cfg(not(target_os = "linux"))]
fn is_opaque(_dir: &Dir) -> bool {
    false
}

/// Where a merge puts what it replaces, and when it stops.
pub struct Fold<'a> {
    /// A directory of the same filesystem, in no layer, where the base's replaced directories go.
    pub discard: &'a Dir,
    /// Asked after each entry moved: stop the merge there (the rest of the layer stays).
    pub stop: &'a mut dyn FnMut() -> bool,
}

/// Names for what goes into a discard directory, unique in this process (and with its pid, in the store).
static DISCARDED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn is_dir(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFDIR
}

/// Take the entry `name` of `base` out of the way whatever it is: a directory is renamed into
/// `discard` (one step, whatever it holds, made writable first: a directory moves to another
/// parent only so), anything else removed.
fn discard_any(base: &Dir, name: &OsStr, discard: &Dir) -> io::Result<()> {
    match base.stat(name)? {
        None => Ok(()),
        Some(st) if is_dir(&st) => {
            open_up(base, name)?;
            let n = DISCARDED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            base.rename(name, discard, format!("{}-{n}", std::process::id()))
        }
        Some(_) => base.remove(name),
    }
}

/// Move everything of `layer` into `base` (both directories of one filesystem, with `fold.discard`),
/// each entry by its name in its directory's descriptor, never through a link (`dir`).
/// `Ok(true)`: `layer` is left empty of entries (its directories may remain, for the caller to
/// remove); `Ok(false)`: `fold.stop` said so first, and what is left of `layer` still belongs above
/// `base` (see the module comment). Whatever modes a run left, the directories keep them, and the
/// fold moves what they hold (`owner_access`).
pub fn merge_into(layer: &Dir, base: &Dir, fold: &mut Fold) -> io::Result<bool> {
    // The layer's root may be anything its run made of its cache's mount point.
    let _layer = Access::grant(layer, ALL)?;
    let _base = Access::grant(base, WRITE_IN)?;
    merge_at(layer, base, fold, 0)
}

/// `merge_into` once both directories are open to the fold, `depth` levels down.
fn merge_at(layer: &Dir, base: &Dir, fold: &mut Fold, depth: usize) -> io::Result<bool> {
    if depth > MOST_DEPTH {
        return Err(io::Error::other(format!("the layer is deeper than {MOST_DEPTH} directories")));
    }
    for name in layer.names()? {
        let Some(meta) = layer.stat(&name)? else { continue };
        let below = base.stat(&name)?;
        let below_dir = below.as_ref().is_some_and(is_dir);
        // A directory of the layer is opened (its entries, its opaque marker) and emptied or
        // moved: it holds the access that takes until it is dropped.
        let from = if is_dir(&meta) { Some(Access::open(layer, &name, ALL)?) } else { None };
        if let (Some(from), true) = (&from, below_dir) {
            if !is_opaque(from) {
                // Both directories: their entries merge, the layer's winning. Merged whole, the
                // base's directory has the layer's mode, which overlayfs showed (the uppermost
                // directory's).
                let mut into = Access::open(base, &name, WRITE_IN)?;
                if !merge_at(from, &into, fold, depth + 1)? {
                    return Ok(false);
                }
                into.put_back_as(meta.st_mode as u32);
                continue;
            }
        }
        // A file, a link, a whiteout, an opaque directory, or a directory over a non-directory:
        // it replaces what was below, in one rename where it can. Until that rename the layer's
        // entry still hides what the base no longer has.
        if below.is_some() && (is_dir(&meta) || below_dir) {
            discard_any(base, &name, fold.discard)?;
        }
        layer.rename(&name, base, &name)?;
        // Its mode back (by its descriptor, at its new place) before the fold may stop.
        drop(from);
        if (fold.stop)() {
            return Ok(false);
        }
    }
    Ok(true)
}

// The layers' tests make whiteouts and opaque directories as overlayfs does: Linux only.
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    fn whiteout(p: &Path) -> bool {
        let c = CString::new(p.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid C string; creating a 0:0 character device (root, or a user namespace's
        // overlay) — skipped where not permitted.
        unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, 0) == 0 }
    }

    fn opaque(dir: &Path) -> bool {
        let c = CString::new(dir.as_os_str().as_bytes()).unwrap();
        // SAFETY: valid C strings and a one-byte value.
        unsafe { libc::lsetxattr(c.as_ptr(), OPAQUE.as_ptr(), b"y".as_ptr().cast(), 1, 0) == 0 }
    }

    #[test]
    fn a_layer_folds_into_the_base_as_the_overlay_showed_it() {
        let t = tempfile::tempdir().unwrap();
        let (base, layer) = (t.path().join("base"), t.path().join("layer"));
        for d in ["base/keep", "base/replaced", "base/gone-dir/sub", "base/opaque-dir", "layer/keep", "layer/new", "layer/opaque-dir"] {
            std::fs::create_dir_all(t.path().join(d)).unwrap();
        }
        std::fs::write(base.join("keep/old"), "old").unwrap();
        std::fs::write(base.join("replaced/f"), "base").unwrap();
        std::fs::write(base.join("opaque-dir/hidden"), "x").unwrap();
        std::fs::write(base.join("file-to-dir"), "f").unwrap();
        std::fs::write(layer.join("keep/added"), "added").unwrap();
        std::fs::write(layer.join("new/n"), "n").unwrap();
        std::fs::write(layer.join("replaced"), "now a file").unwrap();
        std::fs::create_dir(layer.join("file-to-dir")).unwrap();
        std::fs::write(layer.join("opaque-dir/shown"), "y").unwrap();
        std::os::unix::fs::symlink("keep/old", layer.join("link")).unwrap();
        let can_whiteout = whiteout(&layer.join("gone-dir"));
        let can_opaque = opaque(&layer.join("opaque-dir"));
        let discard = t.path().join("discard");
        std::fs::create_dir(&discard).unwrap();
        assert!(merge_into(&Dir::at(&layer), &Dir::at(&base), &mut Fold { discard: &Dir::at(&discard), stop: &mut || false }).unwrap(), "merged whole");
        let read = |p: &str| std::fs::read_to_string(base.join(p)).unwrap();
        assert_eq!((read("keep/old"), read("keep/added"), read("new/n"), read("replaced")), ("old".into(), "added".into(), "n".into(), "now a file".into()));
        assert!(base.join("file-to-dir").is_dir());
        assert_eq!(std::fs::read_link(base.join("link")).unwrap(), Path::new("keep/old"));
        if can_whiteout {
            let m = std::fs::symlink_metadata(base.join("gone-dir")).unwrap();
            assert!(is_whiteout(&m), "the whiteout replaces the directory, and stays (it hides the host's)");
        }
        if can_opaque {
            assert!(!base.join("opaque-dir/hidden").exists() && base.join("opaque-dir/shown").exists());
            assert!(is_opaque(&Dir::at(&base.join("opaque-dir"))), "the marker stays");
        }
        assert_eq!(std::fs::read_dir(&layer).unwrap().filter(|e| !e.as_ref().unwrap().path().is_dir()).count(), 0, "nothing but directories left in the layer");
    }

    /// What overlayfs shows of `layers` stacked (uppermost first): each path, and what it is (a
    /// directory with its mode, which overlayfs takes from the uppermost one).
    fn view(layers: &[&Path]) -> std::collections::BTreeMap<std::path::PathBuf, String> {
        let mut out = std::collections::BTreeMap::new();
        show(layers, Path::new(""), &mut out);
        out
    }

    /// The directory `rel` of the `layers` that merge there (uppermost first).
    fn show(layers: &[&Path], rel: &Path, out: &mut std::collections::BTreeMap<std::path::PathBuf, String>) {
        for (i, layer) in layers.iter().enumerate() {
            for entry in std::fs::read_dir(layer.join(rel)).into_iter().flatten().flatten() {
                let p = rel.join(entry.file_name());
                if out.contains_key(&p) || layers[..i].iter().any(|l| std::fs::symlink_metadata(l.join(&p)).is_ok()) {
                    continue;
                }
                let full = layer.join(&p);
                let meta = std::fs::symlink_metadata(&full).unwrap();
                if is_whiteout(&meta) {
                    continue;
                }
                if !meta.is_dir() {
                    let what = std::fs::read_link(&full).map(|l| format!("-> {}", l.display())).or_else(|_| std::fs::read_to_string(&full)).unwrap();
                    out.insert(p, what);
                    continue;
                }
                // The directories below merge with it, down to an opaque one or a non-directory.
                let mut merged = vec![*layer];
                if !is_opaque(&Dir::at(&full)) {
                    for below in &layers[i + 1..] {
                        match std::fs::symlink_metadata(below.join(&p)) {
                            Ok(m) if m.is_dir() => {
                                merged.push(*below);
                                if is_opaque(&Dir::at(&below.join(&p))) {
                                    break;
                                }
                            }
                            Ok(_) => break,
                            Err(_) => {}
                        }
                    }
                }
                out.insert(p.clone(), format!("dir {:o}", meta.permissions().mode() & 0o7777));
                show(&merged, &p, out);
            }
        }
    }

    /// A base and a layer over it with every kind of step (nested merges, replacements both ways,
    /// whiteouts and an opaque directory where this user may make them).
    fn fixture(root: &Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
        let (base, layer, discard) = (root.join("base"), root.join("layer"), root.join("discard"));
        for d in ["base/a/b/c", "base/dir-to-file/x", "base/opaque", "base/gone", "layer/a/b/c", "layer/a/new", "layer/opaque", "discard"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for (f, text) in [("base/a/f1", "old"), ("base/a/b/c/f2", "old"), ("base/a/b/kept", "kept"), ("base/opaque/hidden", "h"), ("base/gone/g", "g"), ("base/file-to-dir", "f")] {
            std::fs::write(root.join(f), text).unwrap();
        }
        for i in 0..5 {
            std::fs::write(layer.join(format!("a/b/c/n{i}")), format!("{i}")).unwrap();
        }
        for (f, text) in [("layer/a/f1", "new"), ("layer/a/b/c/f2", "new"), ("layer/a/new/n", "n"), ("layer/dir-to-file", "now a file"), ("layer/opaque/shown", "s")] {
            std::fs::write(root.join(f), text).unwrap();
        }
        std::fs::create_dir(layer.join("file-to-dir")).unwrap();
        std::fs::write(layer.join("file-to-dir/in"), "in").unwrap();
        whiteout(&layer.join("gone"));
        whiteout(&layer.join("a/b/kept"));
        opaque(&layer.join("opaque"));
        (base, layer, discard)
    }

    #[test]
    fn a_merge_cut_short_after_any_entry_leaves_the_layer_over_the_base_showing_the_same() {
        let t = tempfile::tempdir().unwrap();
        let before = {
            let (base, layer, _) = fixture(&t.path().join("whole"));
            view(&[&layer, &base])
        };
        assert_eq!(before.get(Path::new("a/b/c/f2")).map(String::as_str), Some("new"));
        assert_eq!(before.get(Path::new("file-to-dir/in")).map(String::as_str), Some("in"));
        let mut cut = 0;
        loop {
            let root = t.path().join(format!("cut{cut}"));
            let (base, layer, discard) = fixture(&root);
            let mut moved = 0;
            let whole = merge_into(&Dir::at(&layer), &Dir::at(&base), &mut Fold { discard: &Dir::at(&discard), stop: &mut || { moved += 1; moved > cut } }).unwrap();
            assert_eq!(view(&[&layer, &base]), before, "cut after {cut} entries");
            // The next fold goes on from there.
            assert!(merge_into(&Dir::at(&layer), &Dir::at(&base), &mut Fold { discard: &Dir::at(&discard), stop: &mut || false }).unwrap());
            assert_eq!(view(&[&base]), before, "the rest folded after a cut at {cut}");
            if whole {
                break;
            }
            cut += 1;
        }
        assert!(cut > 10, "every step was cut at once ({cut})");
    }

    /// The fixture, and what runs leave with modes: Go's module cache (every module directory
    /// 0555, its files 0444: a new module into a directory the base has, and a module the base has
    /// that the run made writable and added to), a directory made 0000 or left without search
    /// access, an opaque one made 0000, a directory of the layer its owner cannot write, one of the
    /// base the same, and the layer's root made 0555 (a `chmod` of the cache's mount point).
    fn fixture_with_modes(root: &Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
        let (base, layer, discard) = fixture(root);
        for d in ["base/go/m@v1", "layer/go/m@v1", "layer/go/m@v2/sub", "layer/closed/in", "layer/unsearchable"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in ["base/go/m@v1/m.go", "layer/go/m@v1/added.go", "layer/go/m@v2/m.go", "layer/go/m@v2/sub/blob", "layer/closed/in/f", "layer/unsearchable/f"] {
            std::fs::write(root.join(f), f).unwrap();
            std::fs::set_permissions(root.join(f), std::fs::Permissions::from_mode(0o444)).unwrap();
        }
        // Deepest first: a directory's mode is set once what goes in it is there.
        let modes = [
            ("base/go/m@v1", 0o555),
            ("base/a/b", 0o555),
            ("layer/a/b", 0o555),
            ("layer/a", 0o500),
            ("layer/go/m@v1", 0o755),
            ("layer/go/m@v2/sub", 0o555),
            ("layer/go/m@v2", 0o555),
            ("layer/closed/in", 0o000),
            ("layer/closed", 0o000),
            ("layer/unsearchable", 0o600),
            ("layer/opaque", 0o000),
            ("layer", 0o555),
        ];
        for (d, mode) in modes {
            std::fs::set_permissions(root.join(d), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        (base, layer, discard)
    }

    /// Found by a review (/work/atk/fixes17b/gomod.js): as a user other than root, the fold of a
    /// second `go mod download` got EACCES renaming the new 0555 module directory (a directory
    /// moved to another parent must be writable: its `..` changes), and the fold dropped the whole
    /// base, every module earlier runs had fetched. Modes a run leaves neither fail a fold nor
    /// change what the layers showed, cut short anywhere or whole.
    #[test]
    fn a_fold_by_a_user_other_than_root_moves_directories_of_any_mode_and_keeps_the_modes_shown() {
        use crate::test_capabilities::without_dac_override;
        let t = tempfile::tempdir().unwrap();
        let before = {
            let (base, layer, _) = fixture_with_modes(&t.path().join("whole"));
            view(&[&layer, &base])
        };
        let shown = |p: &str| before.get(Path::new(p)).map(String::as_str);
        assert_eq!((shown("go/m@v2/sub"), shown("go/m@v1"), shown("closed/in"), shown("a")), (Some("dir 555"), Some("dir 755"), Some("dir 0"), Some("dir 500")));
        assert_eq!((shown("go/m@v1/m.go"), shown("go/m@v1/added.go")), (Some("base/go/m@v1/m.go"), Some("layer/go/m@v1/added.go")));
        let mut cut = 0;
        loop {
            let root = t.path().join(format!("cut{cut}"));
            let (base, layer, discard) = fixture_with_modes(&root);
            let mut moved = 0;
            let (layer_dir, base_dir, discard) = (Dir::at(&layer), Dir::at(&base), Dir::at(&discard));
            let merged = without_dac_override(|| merge_into(&layer_dir, &base_dir, &mut Fold { discard: &discard, stop: &mut || { moved += 1; moved > cut } }));
            let whole = merged.unwrap_or_else(|e| panic!("cut after {cut} entries: {e}"));
            assert_eq!(view(&[&layer, &base]), before, "cut after {cut} entries");
            let rest = without_dac_override(|| merge_into(&layer_dir, &base_dir, &mut Fold { discard: &discard, stop: &mut || false }));
            assert!(rest.unwrap_or_else(|e| panic!("the rest after a cut at {cut}: {e}")));
            assert_eq!(view(&[&base]), before, "the rest folded after a cut at {cut}");
            if whole {
                break;
            }
            cut += 1;
        }
        assert!(cut > 15, "every step was cut at once ({cut})");
    }
}
