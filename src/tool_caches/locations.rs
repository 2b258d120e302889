//! Where package managers keep their caches by default, relative to the command's `HOME` (or the
//! XDG variable that moves them). Only locations that exist on the host are covered: bwrap would
//! otherwise have to create a mount point in the host's home directory, which must stay unchanged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One cache location: `name` is also the store's sub-directory for it (stable across runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub name: &'static str,
    pub path: PathBuf,
}

/// Every known location for this environment, existing or not, in a fixed order.
pub fn known(env: &BTreeMap<String, String>) -> Vec<Location> {
    let var = |k: &str| env.get(k).map(PathBuf::from).filter(|p| p.is_absolute());
    let Some(home) = var("HOME") else { return Vec::new() };
    let cache = var("XDG_CACHE_HOME").unwrap_or_else(|| home.join(".cache"));
    let data = var("XDG_DATA_HOME").unwrap_or_else(|| home.join(".local/share"));
    let at = |name, path: PathBuf| Location { name, path };
    vec![
        // pip, uv, yarn 1, go-build, node-gyp, puppeteer, ms-playwright, ...: everything XDG.
        at("xdg-cache", cache),
        at("npm", home.join(".npm")),
        at("yarn-berry", home.join(".yarn/berry")),
        at("pnpm-store", data.join("pnpm")),
        at("cargo-registry", var("CARGO_HOME").unwrap_or_else(|| home.join(".cargo")).join("registry")),
        at("cargo-git", var("CARGO_HOME").unwrap_or_else(|| home.join(".cargo")).join("git")),
        at("go-mod", var("GOMODCACHE").unwrap_or_else(|| var("GOPATH").unwrap_or_else(|| home.join("go")).join("pkg/mod"))),
        at("maven", home.join(".m2/repository")),
        at("gradle", home.join(".gradle/caches")),
    ]
}

/// The locations that exist as directories, canonical, without duplicates (two variables may
/// name the same directory) and without one nested in another (an overlay over the outer one
/// already covers it; mounting the inner one too would hide the outer overlay's view of it).
pub fn existing(env: &BTreeMap<String, String>) -> Vec<Location> {
    let mut out: Vec<Location> = Vec::new();
    for loc in known(env) {
        let Ok(path) = crate::policy::path_walk::canonicalize(&loc.path) else { continue };
        if !path.is_dir() {
            continue;
        }
        if out.iter().any(|o| path.starts_with(&o.path) || o.path.starts_with(&path)) {
            continue;
        }
        out.push(Location { name: loc.name, path });
    }
    out
}

/// `a` and `b` are the same path or one contains the other.
pub fn overlaps(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn defaults_follow_home_and_variables() {
        let k = known(&env(&[("HOME", "/h")]));
        let names: Vec<(&str, &Path)> = k.iter().map(|l| (l.name, l.path.as_path())).collect();
        assert!(names.contains(&("npm", Path::new("/h/.npm"))));
        assert!(names.contains(&("xdg-cache", Path::new("/h/.cache"))));
        assert!(names.contains(&("cargo-registry", Path::new("/h/.cargo/registry"))));
        assert!(names.contains(&("go-mod", Path::new("/h/go/pkg/mod"))));
        let k = known(&env(&[("HOME", "/h"), ("XDG_CACHE_HOME", "/c"), ("CARGO_HOME", "/cargo"), ("GOPATH", "/gp")]));
        assert!(k.iter().any(|l| l.name == "xdg-cache" && l.path == Path::new("/c")));
        assert!(k.iter().any(|l| l.name == "cargo-git" && l.path == Path::new("/cargo/git")));
        assert!(k.iter().any(|l| l.name == "go-mod" && l.path == Path::new("/gp/pkg/mod")));
        // A relative variable is ignored (tools would resolve it against their own cwd).
        let k = known(&env(&[("HOME", "/h"), ("XDG_CACHE_HOME", "rel")]));
        assert!(k.iter().any(|l| l.name == "xdg-cache" && l.path == Path::new("/h/.cache")));
        assert!(known(&env(&[])).is_empty(), "no HOME, no caches");
    }

    #[test]
    fn only_existing_and_not_nested() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        std::fs::create_dir_all(h.join(".npm")).unwrap();
        std::fs::create_dir_all(h.join(".cache/pnpm")).unwrap();
        // pnpm's store inside the XDG cache: covered by the outer overlay.
        let e = env(&[("HOME", h.to_str().unwrap()), ("XDG_DATA_HOME", h.join(".cache").to_str().unwrap())]);
        let names: Vec<&str> = existing(&e).iter().map(|l| l.name).collect();
        assert_eq!(names, ["xdg-cache", "npm"]);
    }
}
