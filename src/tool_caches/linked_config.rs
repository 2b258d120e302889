//! Where pnpm's store and uv's cache are when a configuration file names them, for `linked`.
//!
//! Found by an attacker's review: a store named only by pnpm's documented `store-dir` (in the
//! project's `.npmrc`, the user's `~/.npmrc` or the global npmrc) was never looked for, and a run
//! that appended to a file of `node_modules/.pnpm` (a hard link into that store) changed every
//! project linked to it with nothing said; uv's `cache-dir` (`uv.toml`, `pyproject.toml`'s
//! `[tool.uv]`) was missed the same way. Only the few files each tool reads for a project are
//! read, only when the project has a package directory (the caller's gate), and each only as a
//! small regular file (`small_file`: no FIFO opened, at most 1 MiB read, a symlink followed as the
//! tool follows it): no walk. What is read is a hint to a store's name; the link counts
//! (`linked_sample`) say the rest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::planted::small_file;

type Env = BTreeMap<String, String>;

/// pnpm's `store-dir` in the npmrc files pnpm reads for the project in `dir`: its `.npmrc`, the
/// user's (`$npm_config_userconfig`, `~/.npmrc`), pnpm's own (`$XDG_CONFIG_HOME/pnpm/rc`,
/// `~/.config/pnpm/rc`), and the global one (`$npm_config_globalconfig`,
/// `$npm_config_prefix/etc/npmrc`, the running node's `<prefix>/etc/npmrc`, `/etc/npmrc`).
pub fn pnpm_stores(dir: &Path, envs: &[&Env]) -> Vec<PathBuf> {
    let mut files = vec![dir.join(".npmrc"), PathBuf::from("/etc/npmrc")];
    // The addon runs in node: its prefix is npm's default global prefix.
    files.extend(std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.parent()?.join("etc/npmrc"))));
    for env in envs {
        let var = |k: &str| npm_var(env, k).map(PathBuf::from).filter(|p| p.is_absolute());
        files.extend(var("userconfig").or_else(|| home(env).map(|h| h.join(".npmrc"))));
        files.extend(var("globalconfig"));
        files.extend(var("prefix").map(|p| p.join("etc/npmrc")));
        files.extend(config_home(env).map(|c| c.join("pnpm/rc")));
    }
    let mut out = Vec::new();
    for file in dedup(files) {
        let Some(text) = small_file::text(&file) else { continue };
        for env in envs {
            out.extend(npmrc_values(&text, "store-dir").filter_map(|v| resolved(&v, dir, env)));
        }
    }
    out
}

/// uv's `cache-dir` in the files uv reads for the project in `dir`: `$UV_CONFIG_FILE`, its
/// `uv.toml` and `pyproject.toml` (`[tool.uv]`), the user's (`$XDG_CONFIG_HOME/uv/uv.toml`,
/// `~/.config/uv/uv.toml`) and the system's (`$XDG_CONFIG_DIRS/uv/uv.toml`, `/etc/xdg/uv/uv.toml`,
/// `/etc/uv/uv.toml`).
pub fn uv_caches(dir: &Path, envs: &[&Env]) -> Vec<PathBuf> {
    let mut files = vec![(dir.join("uv.toml"), ""), (dir.join("pyproject.toml"), "tool.uv")];
    files.push((PathBuf::from("/etc/uv/uv.toml"), ""));
    for env in envs {
        files.extend(env.get("UV_CONFIG_FILE").map(|f| (dir.join(f), "")));
        files.extend(config_home(env).map(|c| (c.join("uv/uv.toml"), "")));
        let system = env.get("XDG_CONFIG_DIRS").map_or("/etc/xdg", |s| s.as_str());
        files.extend(system.split(':').filter(|d| d.starts_with('/')).take(4).map(|d| (Path::new(d).join("uv/uv.toml"), "")));
    }
    let mut out = Vec::new();
    for (file, table) in dedup(files) {
        let Some(text) = small_file::text(&file) else { continue };
        for env in envs {
            out.extend(toml_values(&text, table, "cache-dir").filter_map(|v| resolved(&v, dir, env)));
        }
    }
    out
}

fn dedup<T: PartialEq>(items: Vec<T>) -> Vec<T> {
    let mut out = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// An npm configuration variable: npm takes `npm_config_*` whatever its case.
fn npm_var<'a>(env: &'a Env, key: &str) -> Option<&'a String> {
    env.get(&format!("npm_config_{key}")).or_else(|| env.get(&format!("NPM_CONFIG_{}", key.to_uppercase())))
}

fn home(env: &Env) -> Option<PathBuf> {
    env.get("HOME").map(PathBuf::from).filter(|p| p.is_absolute())
}

fn config_home(env: &Env) -> Option<PathBuf> {
    env.get("XDG_CONFIG_HOME").map(PathBuf::from).filter(|p| p.is_absolute()).or_else(|| home(env).map(|h| h.join(".config")))
}

/// The values of `key` in an ini text (npmrc): `key = value` lines, `;` and `#` comments.
fn npmrc_values<'a>(text: &'a str, key: &'a str) -> impl Iterator<Item = String> + 'a {
    text.lines().filter_map(move |line| {
        let (k, v) = line.trim().split_once('=')?;
        // A comment line's key is `; store-dir`, never `store-dir`.
        (k.trim() == key).then(|| unquoted(v.trim()))
    })
}

/// The values of `key` in the table `table` ("" for the top) of a TOML text: one-line
/// `key = "value"` (or `'value'`) entries, as uv's configuration writes a path.
fn toml_values<'a>(text: &'a str, table: &'a str, key: &'a str) -> impl Iterator<Item = String> + 'a {
    let mut current = String::new();
    text.lines().filter_map(move |line| {
        let line = line.trim();
        if line.starts_with('[') {
            current = line.trim_matches(|c| c == '[' || c == ']' || c == ' ').to_string();
            return None;
        }
        let (k, v) = line.split_once('=')?;
        (current == table && k.trim().trim_matches('"') == key).then(|| unquoted(v.trim()))
    })
}

/// A value without its quotes (and a TOML line's comment after them).
fn unquoted(v: &str) -> String {
    for q in ['"', '\''] {
        if let Some(rest) = v.strip_prefix(q) {
            return rest.split(q).next().unwrap_or("").to_string();
        }
    }
    v.to_string()
}

/// A configured path as the tool takes it: `${VAR}` from the environment, `~/` the home, a
/// relative one from the project.
fn resolved(value: &str, dir: &Path, env: &Env) -> Option<PathBuf> {
    let mut s = String::new();
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        let end = rest[at..].find('}')? + at;
        s.push_str(&rest[..at]);
        s.push_str(env.get(rest[at + 2..end].trim_end_matches('?')).map_or("", |v| v.as_str()));
        rest = &rest[end + 1..];
    }
    s.push_str(rest);
    let path = match s.strip_prefix("~/") {
        Some(tail) => home(env)?.join(tail),
        None => dir.join(&s),
    };
    (!s.is_empty()).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npmrc_and_toml_values_are_read_as_the_tools_read_them() {
        let rc = "; store-dir=/commented\n# store-dir=/also\nregistry=https://r/\n  store-dir = \"/a b\"\nstore-dir=rel\n";
        assert_eq!(npmrc_values(rc, "store-dir").collect::<Vec<_>>(), ["/a b", "rel"]);
        let toml = "cache-dir = '/top' # c\n[project]\ncache-dir = \"/no\"\n[ tool.uv ]\n\"cache-dir\" = \"/yes\"\n[tool.uv.pip]\ncache-dir=\"/no\"\n";
        assert_eq!(toml_values(toml, "", "cache-dir").collect::<Vec<_>>(), ["/top"]);
        assert_eq!(toml_values(toml, "tool.uv", "cache-dir").collect::<Vec<_>>(), ["/yes"]);
        let env: Env = [("HOME".to_string(), "/h".to_string()), ("S".to_string(), "/s".to_string())].into();
        let dir = Path::new("/p");
        assert_eq!(resolved("~/st", dir, &env), Some(PathBuf::from("/h/st")));
        assert_eq!(resolved("${S}/st", dir, &env), Some(PathBuf::from("/s/st")));
        assert_eq!(resolved("st", dir, &env), Some(PathBuf::from("/p/st")));
        assert_eq!(resolved("", dir, &env), None);
    }

    #[test]
    fn the_users_and_the_projects_files_are_read() {
        let t = tempfile::tempdir().unwrap();
        let (home, ws) = (t.path().join("home"), t.path().join("ws"));
        std::fs::create_dir_all(home.join(".config/uv")).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(home.join(".npmrc"), "store-dir=~/s1\n").unwrap();
        std::fs::write(ws.join(".npmrc"), "store-dir=/s2\n").unwrap();
        std::fs::write(home.join(".config/uv/uv.toml"), "cache-dir = \"/c1\"\n").unwrap();
        std::fs::write(ws.join("pyproject.toml"), "[tool.uv]\ncache-dir = \"c2\"\n").unwrap();
        let env: Env = [("HOME".to_string(), home.to_string_lossy().into_owned())].into();
        let stores = pnpm_stores(&ws, &[&env]);
        assert!(stores.contains(&home.join("s1")) && stores.contains(&PathBuf::from("/s2")), "{stores:?}");
        let caches = uv_caches(&ws, &[&env]);
        assert!(caches.contains(&PathBuf::from("/c1")) && caches.contains(&ws.join("c2")), "{caches:?}");
    }
}
