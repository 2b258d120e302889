//! sandspawn's own files: what the host executes from the installed package. The JavaScript entry
//! points (`package.json`, `index.js`, `index.mjs`, `binding.js`, `lib/`, `bin/`) in the package
//! directory the facade was loaded from, and beside the addon (`.node`, which may live in a
//! platform package of its own) the addon itself, `sandspawn-helper` and `sandspawn-bwrap`.
//!
//! A run must not change them (the host's next `require`, or the helper it runs in front of bwrap,
//! would run the change), nor rename them or a directory above them away and put others in their
//! place. The bwrap plan binds each read-only and makes every directory between it and the
//! writable root that holds it a mount point, which the kernel refuses to rename or remove
//! (`plan::pins`); a writable root inside one of them is refused.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The JavaScript package's entries the host runs (or reads to find what to run).
const JS_ENTRIES: &[&str] = &["package.json", "index.js", "index.mjs", "binding.js", "lib", "bin"];
/// The entries beside the addon the host runs.
const ADDON_ENTRIES: &[&str] = &[crate::helper::FILE_NAME, crate::capabilities::bundled::FILE_NAME];

/// The own files of the package loaded from `package_dir` (canonical, existing), computed once per
/// package directory: they do not move while the process runs.
pub fn list(package_dir: Option<&Path>) -> Vec<PathBuf> {
    static CACHE: Mutex<Option<(Option<PathBuf>, Vec<PathBuf>)>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((dir, files)) = cache.as_ref() {
        if dir.as_deref() == package_dir {
            return files.clone();
        }
    }
    let files = collect(package_dir, crate::helper::addon_file().as_deref());
    *cache = Some((package_dir.map(Path::to_path_buf), files.clone()));
    files
}

fn collect(package_dir: Option<&Path>, addon: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let js = package_dir.into_iter().flat_map(|d| JS_ENTRIES.iter().map(move |e| d.join(e)));
    let beside_addon = addon.and_then(Path::parent).into_iter().flat_map(|d| ADDON_ENTRIES.iter().map(move |e| d.join(e)));
    for p in js.chain(beside_addon).chain(addon.map(Path::to_path_buf)) {
        // Only what exists; canonical, so that it compares with the policy's canonical roots.
        if let Ok(real) = std::fs::canonicalize(&p) {
            if !out.contains(&real) {
                out.push(real);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entries_that_exist_canonical_and_once() {
        let t = tempfile::tempdir().unwrap();
        let pkg = t.path().canonicalize().unwrap();
        for d in ["lib", "bin"] {
            std::fs::create_dir(pkg.join(d)).unwrap();
        }
        for f in ["package.json", "index.js", "sandspawn.linux-x64-gnu.node", "sandspawn-helper"] {
            std::fs::write(pkg.join(f), "").unwrap();
        }
        std::os::unix::fs::symlink("index.js", pkg.join("binding.js")).unwrap();
        let addon = pkg.join("sandspawn.linux-x64-gnu.node");
        let got = collect(Some(&pkg), Some(&addon));
        let expect: Vec<PathBuf> = ["package.json", "index.js", "lib", "bin", "sandspawn-helper", "sandspawn.linux-x64-gnu.node"].iter().map(|e| pkg.join(e)).collect();
        assert_eq!(got, expect, "index.mjs and the bundled bwrap do not exist; binding.js is index.js");
        // A platform package of its own: the addon's directory is listed apart from the package's.
        let platform = pkg.join("lib");
        std::fs::write(platform.join("sandspawn-bwrap"), "").unwrap();
        let got = collect(None, Some(&platform.join("x.node")));
        assert_eq!(got, vec![platform.join("sandspawn-bwrap")], "the addon itself must exist to be listed");
    }
}
