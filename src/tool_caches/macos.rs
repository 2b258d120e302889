//! `toolCaches` on macOS. Seatbelt cannot mount anything, so instead of an overlay over each cache
//! every tool is pointed, through its own variable, at a directory of the workspace's store, the
//! only cache directories the profile lets the command write (the host's caches stay read-only, and
//! so do other workspaces' stores: the same contract as on Linux). What the host already cached
//! reaches the command in one of two ways:
//!
//! - the tool reads another cache read-only by itself: Go (`GOPROXY=file://` on the host's module
//!   download cache, then the usual proxies), Maven 3.9 (`maven.repo.local.tail`), Gradle
//!   (`GRADLE_RO_DEP_CACHE`);
//! - otherwise the directory starts as a copy-on-write clone of the host's cache (APFS
//!   `clonefile`, see `seed`), made when the workspace first uses it: later writes of either side
//!   never reach the other, and nothing is copied until written. For `CARGO_HOME` and
//!   `GRADLE_USER_HOME`, which also hold the user's settings, only the caches in them are cloned and
//!   the settings files are linked (read-only through the link: the profile does not let the
//!   command write the host's file).
//!
//! Unlike Linux, a covered tool is pointed at its store directory even when the host has no cache
//! yet (a variable costs nothing, and the tool would otherwise fail to create its cache in the
//! read-only home); and the store directory is shared by concurrent runs of the workspace, as the
//! host's cache is by concurrent host processes (no overlay upper directories to keep apart).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How a cache's store directory gets the host's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seed {
    /// A clone of the whole host directory.
    Whole,
    /// A new directory with clones of these entries of the host's and links to these files.
    Parts { clone: &'static [&'static str], link: &'static [&'static str] },
    /// Nothing: the tool reads the host's cache itself (see `variables`).
    ReadsHost,
}

/// One tool's cache on macOS: the store's name for it, where the host keeps it, how it is seeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tool {
    pub name: &'static str,
    pub host: PathBuf,
    pub seed: Seed,
}

/// The caches sandspawn points into the store on macOS, where each tool keeps its cache by default
/// there (or where the variable that moves it says), in a fixed order.
pub fn known(env: &BTreeMap<String, String>) -> Vec<Tool> {
    let var = |k: &str| env.get(k).map(PathBuf::from).filter(|p| p.is_absolute());
    let Some(home) = var("HOME") else { return Vec::new() };
    let caches = home.join("Library/Caches");
    let gopath = env.get("GOPATH").and_then(|g| g.split(':').next().map(PathBuf::from)).filter(|p| p.is_absolute()).unwrap_or_else(|| home.join("go"));
    let tool = |name, host, seed| Tool { name, host, seed };
    vec![
        tool("npm", var("npm_config_cache").unwrap_or_else(|| home.join(".npm")), Seed::Whole),
        tool("pnpm-store", var("npm_config_store_dir").unwrap_or_else(|| home.join("Library/pnpm/store")), Seed::Whole),
        tool("yarn-berry", var("YARN_GLOBAL_FOLDER").unwrap_or_else(|| home.join(".yarn/berry")), Seed::Whole),
        tool("pip", var("PIP_CACHE_DIR").unwrap_or_else(|| caches.join("pip")), Seed::Whole),
        tool("uv", var("UV_CACHE_DIR").unwrap_or_else(|| var("XDG_CACHE_HOME").unwrap_or_else(|| home.join(".cache")).join("uv")), Seed::Whole),
        tool("cargo-home", var("CARGO_HOME").unwrap_or_else(|| home.join(".cargo")), Seed::Parts { clone: &["registry", "git"], link: &["config.toml", "config"] }),
        tool("go-mod", var("GOMODCACHE").unwrap_or_else(|| gopath.join("pkg/mod")), Seed::ReadsHost),
        tool("go-build", var("GOCACHE").unwrap_or_else(|| caches.join("go-build")), Seed::Whole),
        tool("maven", home.join(".m2/repository"), Seed::ReadsHost),
        tool("gradle-home", var("GRADLE_USER_HOME").unwrap_or_else(|| home.join(".gradle")), Seed::Parts { clone: &["wrapper"], link: &["gradle.properties", "init.d"] }),
    ]
}

/// How `name`'s seed works (`None` for a name this table does not have).
pub fn seed_of(name: &str, env: &BTreeMap<String, String>) -> Option<Seed> {
    known(env).into_iter().find(|t| t.name == name).map(|t| t.seed)
}

/// A path that can stand in a list variable or a URL unescaped (`GOPROXY` splits on `,` and `|`,
/// `MAVEN_OPTS` on whitespace): otherwise the read-only fallback is left out rather than garbled.
fn plain(p: &Path) -> Option<&str> {
    p.to_str().filter(|s| !s.chars().any(|c| c.is_whitespace() || matches!(c, ',' | '|' | '%' | '"' | '\'' | '\\')))
}

/// The variables that point `name`'s tool at `dir` (its store directory), and at `host` where the
/// tool reads it read-only. `env` is the command's environment (values appended to, not replaced).
pub fn variables(name: &str, dir: &Path, host: &Path, env: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let d = dir.to_string_lossy().into_owned();
    let mut v = BTreeMap::new();
    let mut set = |k: &str, value: String| {
        v.insert(k.to_string(), value);
    };
    match name {
        "npm" => set("npm_config_cache", d),
        "pnpm-store" => set("npm_config_store_dir", d),
        "yarn-berry" => set("YARN_GLOBAL_FOLDER", d),
        "pip" => set("PIP_CACHE_DIR", d),
        "uv" => set("UV_CACHE_DIR", d),
        "cargo-home" => set("CARGO_HOME", d),
        "go-build" => set("GOCACHE", d),
        "go-mod" => {
            set("GOMODCACHE", d);
            let download = host.join("cache/download");
            if let (true, Some(h)) = (download.is_dir(), plain(&download)) {
                // The host's downloads first, then what the command would have used.
                let then = env.get("GOPROXY").filter(|g| !g.trim().is_empty()).cloned().unwrap_or_else(|| "https://proxy.golang.org,direct".into());
                set("GOPROXY", format!("file://{h},{then}"));
            }
        }
        "maven" => {
            if let Some(d) = plain(dir) {
                let mut opts = env.get("MAVEN_OPTS").map(|o| format!("{} ", o.trim_end())).filter(|o| !o.trim().is_empty()).unwrap_or_default();
                opts.push_str(&format!("-Dmaven.repo.local={d}"));
                if let (true, Some(h)) = (host.is_dir(), plain(host)) {
                    opts.push_str(&format!(" -Dmaven.repo.local.tail={h}"));
                }
                set("MAVEN_OPTS", opts);
            }
        }
        "gradle-home" => {
            set("GRADLE_USER_HOME", d);
            if host.join("caches/modules-2").is_dir() {
                set("GRADLE_RO_DEP_CACHE", host.join("caches").to_string_lossy().into_owned());
            }
        }
        _ => {}
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn macos_defaults_and_the_variables_that_move_them() {
        let at = |e: &BTreeMap<String, String>, name: &str| known(e).into_iter().find(|t| t.name == name).unwrap().host;
        let e = env(&[("HOME", "/Users/u")]);
        assert_eq!(at(&e, "npm"), Path::new("/Users/u/.npm"));
        assert_eq!(at(&e, "pip"), Path::new("/Users/u/Library/Caches/pip"));
        assert_eq!(at(&e, "pnpm-store"), Path::new("/Users/u/Library/pnpm/store"));
        assert_eq!(at(&e, "uv"), Path::new("/Users/u/.cache/uv"));
        assert_eq!(at(&e, "cargo-home"), Path::new("/Users/u/.cargo"));
        assert_eq!(at(&e, "go-mod"), Path::new("/Users/u/go/pkg/mod"));
        assert_eq!(at(&e, "go-build"), Path::new("/Users/u/Library/Caches/go-build"));
        let e = env(&[("HOME", "/Users/u"), ("PIP_CACHE_DIR", "/c/pip"), ("CARGO_HOME", "/c/cargo"), ("GOPATH", "/gp:/other"), ("XDG_CACHE_HOME", "/x"), ("npm_config_cache", "rel")]);
        assert_eq!((at(&e, "pip"), at(&e, "cargo-home"), at(&e, "go-mod"), at(&e, "uv")), ("/c/pip".into(), "/c/cargo".into(), "/gp/pkg/mod".into(), "/x/uv".into()));
        assert_eq!(at(&e, "npm"), Path::new("/Users/u/.npm"), "a relative variable is ignored");
        assert!(known(&env(&[])).is_empty());
    }

    #[test]
    fn each_tool_is_pointed_at_its_store_directory() {
        let t = tempfile::tempdir().unwrap();
        let host = t.path().canonicalize().unwrap();
        let dir = Path::new("/store/ws/x");
        let e = env(&[("HOME", "/Users/u"), ("MAVEN_OPTS", "-Xmx2g"), ("GOPROXY", "https://corp.example/go")]);
        let one = |name: &str| variables(name, dir, &host, &e);
        assert_eq!(one("npm"), env(&[("npm_config_cache", "/store/ws/x")]));
        assert_eq!(one("pip"), env(&[("PIP_CACHE_DIR", "/store/ws/x")]));
        assert_eq!(one("cargo-home"), env(&[("CARGO_HOME", "/store/ws/x")]));
        // Read-only fallbacks only where the host has something to read.
        assert_eq!(one("go-mod"), env(&[("GOMODCACHE", "/store/ws/x")]));
        assert_eq!(one("gradle-home"), env(&[("GRADLE_USER_HOME", "/store/ws/x")]));
        std::fs::create_dir_all(host.join("cache/download")).unwrap();
        std::fs::create_dir_all(host.join("caches/modules-2")).unwrap();
        let h = host.to_str().unwrap();
        assert_eq!(one("go-mod")["GOPROXY"], format!("file://{h}/cache/download,https://corp.example/go"));
        assert_eq!(variables("go-mod", dir, &host, &env(&[]))["GOPROXY"], format!("file://{h}/cache/download,https://proxy.golang.org,direct"));
        assert_eq!(one("gradle-home")["GRADLE_RO_DEP_CACHE"], format!("{h}/caches"));
        assert_eq!(one("maven")["MAVEN_OPTS"], format!("-Xmx2g -Dmaven.repo.local=/store/ws/x -Dmaven.repo.local.tail={h}"));
        // A path the variable's syntax cannot hold unescaped: left out, never garbled.
        assert!(variables("maven", Path::new("/store/my ws/x"), &host, &e).is_empty());
        let odd = host.join("a,b");
        std::fs::create_dir_all(odd.join("cache/download")).unwrap();
        assert!(!variables("go-mod", dir, &odd, &e).contains_key("GOPROXY"));
    }
}
