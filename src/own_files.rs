//! sandspawn's own files: what the host executes from the installed package. The JavaScript entry
//! points (`package.json`, `index.js`, `index.mjs`, `binding.js`, `lib/`, `bin/`) in the package
//! directory the facade was loaded from, and beside the addon (`.node`, which may live in a
//! platform package of its own) the addon itself, `sandspawn-helper` and `sandspawn-bwrap`.
//!
//! An installed package (a directory of a `node_modules`, as npm, yarn and pnpm lay them out) is
//! kept **whole**: its entries are not all files that exist. The loader first tries an addon beside
//! `binding.js` (`sandspawn.linux-x64-gnu.node`), which the published layout does not have (the
//! addon comes in the platform package), and Node resolves the platform package from
//! `node_modules` inside the package before the one beside it; the platform package's
//! `package.json` names the file to load. A run that created or changed any of those made the
//! host's next `require` load its code. A checkout (the package directory is not in a
//! `node_modules`) keeps the list of entries: it is also a workspace people run commands in.
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
    let js = package_dir.into_iter().flat_map(|d| entries(d, JS_ENTRIES));
    let beside_addon = addon.and_then(Path::parent).into_iter().flat_map(|d| entries(d, ADDON_ENTRIES));
    for p in js.chain(beside_addon).chain(addon.map(Path::to_path_buf)) {
        // Only what exists; canonical, so that it compares with the policy's canonical roots.
        if let Ok(real) = std::fs::canonicalize(&p) {
            if !out.contains(&real) {
                out.push(real);
            }
        }
    }
    if let (Some(pkg), Some(addon_dir)) = (package_dir, addon.and_then(Path::parent)) {
        for dir in link_holders(pkg, addon_dir) {
            if !out.contains(&dir) {
                out.push(dir);
            }
        }
    }
    // A directory kept whole covers the entries listed inside it (the addon, in a package that
    // ships it beside `binding.js`).
    let whole: Vec<PathBuf> = out.iter().filter(|p| installed(p)).cloned().collect();
    out.retain(|p| !whole.iter().any(|w| p != w && p.starts_with(w)));
    out
}

/// What to keep of the package directory `dir`: the directory itself when it is installed, else
/// the `names` in it.
fn entries<'a>(dir: &'a Path, names: &'static [&'static str]) -> Box<dyn Iterator<Item = PathBuf> + 'a> {
    if installed(dir) {
        Box::new(std::iter::once(dir.to_path_buf()))
    } else {
        Box::new(names.iter().map(move |e| dir.join(e)))
    }
}

/// The `node_modules` directories of pnpm's store to keep whole because Node reaches the platform
/// package (`addon_dir`, installed) from the package (`package_dir`) through a link in them: in
/// pnpm's layout `.pnpm/sandspawn@V/node_modules/sandspawn-linux-x64-gnu` is a symlink beside the
/// package, in neither directory kept whole, and a run that replaced it with a directory of its
/// own had the host's next `require` load that (found by a review of the whole-package rule).
/// Node looks in `A/node_modules` for every ancestor `A` of the package not named `node_modules`,
/// nearest first; the first entry there is what it loads. A link in a `node_modules` of the user's
/// (not pnpm's store) cannot be kept without making that whole directory read-only: not done
/// (README, "Not covered").
fn link_holders(package_dir: &Path, addon_dir: &Path) -> Vec<PathBuf> {
    if !installed(addon_dir) || addon_dir.starts_with(package_dir) {
        return Vec::new();
    }
    let Some(name) = package_name(addon_dir) else { return Vec::new() };
    for a in package_dir.ancestors().filter(|a| a.file_name() != Some(std::ffi::OsStr::new("node_modules"))) {
        let entry = a.join("node_modules").join(&name);
        let Ok(meta) = entry.symlink_metadata() else { continue };
        let holder = entry.parent().map(Path::to_path_buf).unwrap_or_default();
        let in_pnpm_store = holder.ancestors().any(|d| d.file_name() == Some(std::ffi::OsStr::new(".pnpm")));
        return if meta.file_type().is_symlink() && in_pnpm_store { vec![holder] } else { Vec::new() };
    }
    Vec::new()
}

/// The name an installed package is required by: `NAME` or `@SCOPE/NAME`.
fn package_name(dir: &Path) -> Option<PathBuf> {
    let name = dir.file_name()?;
    let parent = dir.parent()?.file_name()?;
    Some(if parent.to_str()?.starts_with('@') { Path::new(parent).join(name) } else { PathBuf::from(name) })
}

/// Whether `dir` is a package in a `node_modules` directory (`node_modules/NAME` or
/// `node_modules/@SCOPE/NAME`): the package manager's, nothing a user works in.
fn installed(dir: &Path) -> bool {
    let name = |p: Option<&Path>| p.and_then(Path::file_name).and_then(|n| n.to_str()).map(str::to_owned);
    let parent = dir.parent();
    match name(parent).as_deref() {
        Some("node_modules") => true,
        Some(scope) if scope.starts_with('@') => name(parent.and_then(Path::parent)).as_deref() == Some("node_modules"),
        _ => false,
    }
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

    #[test]
    fn an_installed_package_and_its_platform_package_are_kept_whole() {
        let t = tempfile::tempdir().unwrap();
        let nm = t.path().canonicalize().unwrap().join("node_modules");
        let (pkg, platform) = (nm.join("sandspawn"), nm.join("@sandspawn").join("linux-x64-gnu"));
        for d in [&pkg, &platform] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("package.json"), "{}").unwrap();
        }
        let addon = platform.join("sandspawn.linux-x64-gnu.node");
        std::fs::write(&addon, "").unwrap();
        // Names the loader would try in the package (an addon beside binding.js, a nested
        // node_modules) do not exist yet: only the whole directory covers them.
        assert_eq!(collect(Some(&pkg), Some(&addon)), vec![pkg.clone(), platform.clone()]);
        // The addon shipped in the package itself: one directory.
        let inside = pkg.join("sandspawn.linux-x64-gnu.node");
        std::fs::write(&inside, "").unwrap();
        assert_eq!(collect(Some(&pkg), Some(&inside)), vec![pkg.clone()]);
        // A directory named like a scope that is not in node_modules is a checkout.
        let scoped_checkout = t.path().canonicalize().unwrap().join("@work").join("sandspawn");
        std::fs::create_dir_all(&scoped_checkout).unwrap();
        std::fs::write(scoped_checkout.join("index.js"), "").unwrap();
        assert_eq!(collect(Some(&scoped_checkout), None), vec![scoped_checkout.join("index.js")]);
    }

    #[test]
    fn pnpm_s_link_to_the_platform_package_is_kept_by_its_directory() {
        let t = tempfile::tempdir().unwrap();
        let store = t.path().canonicalize().unwrap().join("node_modules/.pnpm");
        let beside = store.join("sandspawn@0.1.0/node_modules");
        let (pkg, platform) = (beside.join("sandspawn"), store.join("sandspawn-linux-x64-gnu@0.1.0/node_modules/sandspawn-linux-x64-gnu"));
        for d in [&pkg, &platform] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::os::unix::fs::symlink(&platform, beside.join("sandspawn-linux-x64-gnu")).unwrap();
        let addon = platform.join("sandspawn.linux-x64-gnu.node");
        std::fs::write(&addon, "").unwrap();
        assert_eq!(collect(Some(&pkg), Some(&addon)), vec![pkg.clone(), platform.clone(), beside.clone()]);
        // npm's flat layout: the platform package is a directory beside the package, kept whole.
        let flat = t.path().canonicalize().unwrap().join("flat/node_modules");
        let (pkg, platform) = (flat.join("sandspawn"), flat.join("sandspawn-linux-x64-gnu"));
        for d in [&pkg, &platform] {
            std::fs::create_dir_all(d).unwrap();
        }
        let addon = platform.join("sandspawn.linux-x64-gnu.node");
        std::fs::write(&addon, "").unwrap();
        assert_eq!(collect(Some(&pkg), Some(&addon)), vec![pkg, platform]);
    }
}
