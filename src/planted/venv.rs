//! Python virtual environments at a top (the workspace's, a repository's): a directory holding
//! `pyvenv.cfg` one level below it (`.venv`, `venv`, `env`: tools and editors look there, and Python
//! finds an environment by that file). Found by an attacker's review: a run wrote a `.pth` file in
//! `.venv`'s site-packages and a line in `bin/activate`, and the host's next start of
//! `.venv/bin/python` (an editor's Python extension starts it when the folder opens) ran them.
//!
//! What pip never writes (`pyvenv.cfg`, whose `home` decides which interpreter runs, `bin/python*`,
//! `bin/activate*`) is kept read-only as a protected name is. What installing a package may write
//! (a `.pth` of an editable install, `sitecustomize.py`, `usercustomize.py` in site-packages) is
//! reported when the run creates or changes it. The installed packages themselves are the
//! project's code, as `node_modules` is. The walk finds these entries with the protected names
//! (`walked`), so a warm run pays nothing more for them than for a name.

use std::ffi::OsStr;
use std::path::Path;

/// The file that makes a directory a virtual environment.
pub const CONFIG: &str = "pyvenv.cfg";

/// Found by an attacker's review (hostc41): pip applies an environment's own `pip.conf` (its
/// "site" configuration, `sys.prefix`'s, over the user's) on every pip command run with that
/// environment, activated or not: an `index-url` or `extra-index-url` there makes the host's next
/// `pip install` fetch its packages from that index and run their setup.py. `pip config --site
/// set` writes it: reported, not kept. Beside `pyvenv.cfg`, so found as that file is.
pub const PIP_CONFIG: &str = "pip.conf";

/// What the host does with a virtual environment's files.
pub const WHAT_IT_DOES: &str = "Python runs the .pth files, sitecustomize.py and usercustomize.py of a virtual environment's site-packages at every start of its interpreter (editors start the workspace's .venv/bin/python when the folder opens), the interpreter its pyvenv.cfg's home names, and what bin/activate holds when it is sourced; pip applies its pip.conf on every pip command with it (an index-url is where the next pip install fetches packages from and runs their setup.py)";

/// Whether the walk keeps `name`, an entry of `dir`, as one of a virtual environment's files (to be
/// judged against the environments found at tops, `file_of`).
pub fn walked(dir: &Path, name: &OsStr) -> bool {
    name == CONFIG || name == PIP_CONFIG || kind(dir, name).is_some()
}

/// How a virtual environment's file is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Read-only: `pyvenv.cfg`, `bin/python*`, `bin/activate*`.
    Kept,
    /// Reported when created or changed: site-packages' `.pth`, `sitecustomize.py`, `usercustomize.py`.
    Reported,
}

/// `name` in `dir`, by the place alone (`dir` need not be in an environment).
fn kind(dir: &Path, name: &OsStr) -> Option<Kind> {
    let n = name.as_encoded_bytes();
    let dir_name = dir.file_name()?.as_encoded_bytes();
    if dir_name == b"bin" && (n.starts_with(b"python") || n.starts_with(b"activate")) {
        return Some(Kind::Kept);
    }
    let site = dir_name == b"site-packages"
        && dir.parent().and_then(Path::file_name).is_some_and(|p| p.as_encoded_bytes().starts_with(b"python"))
        && dir.parent().and_then(Path::parent).and_then(Path::file_name).is_some_and(|l| l == "lib" || l == "lib64");
    // `import sitecustomize` finds a package (a directory) or any module form (`.py`, `.pyc`, an
    // extension module) as well as `sitecustomize.py`; site reads `.pth` files at site-packages'
    // top level only (`site.addsitedir` lists that directory alone).
    let customize = |m: &[u8]| n == m || (n.starts_with(m) && n.get(m.len()) == Some(&b'.'));
    let runs = n.ends_with(b".pth") || customize(b"sitecustomize") || customize(b"usercustomize");
    (site && runs).then_some(Kind::Reported)
}

/// The environment directory `p` (a walked entry) belongs to, with how it is kept: its depth below
/// the environment is fixed (`pyvenv.cfg`: 1, `bin/*`: 2, `lib/pythonX.Y/site-packages/*`: 4).
pub fn file_of(p: &Path) -> Option<(&Path, Kind)> {
    let (dir, name) = (p.parent()?, p.file_name()?);
    if name == CONFIG {
        return Some((dir, Kind::Kept));
    }
    if name == PIP_CONFIG {
        return Some((dir, Kind::Reported));
    }
    let k = kind(dir, name)?;
    let up = if k == Kind::Kept { 1 } else { 3 };
    let env = dir.ancestors().nth(up)?;
    Some((env, k))
}

/// Whether `p` is a file of an environment's `bin` (`bin/activate`, `bin/python3`).
pub fn in_bin(p: &Path) -> bool {
    p.parent().and_then(Path::file_name).is_some_and(|b| b == "bin") && file_of(p).is_some_and(|(_, k)| k == Kind::Kept)
}

/// Whether `env` is one this module keeps: it holds `pyvenv.cfg` (in `configs`) and lies one level
/// below a top.
pub fn kept(env: &Path, configs: &std::collections::HashSet<&Path>, is_top: impl Fn(&Path) -> bool) -> bool {
    configs.contains(env) && env.parent().is_some_and(is_top)
}

/// For a change set: the index in `parts` (a path's components below a reviewed root) of the
/// environment directory it is a file of (or lies in: a `sitecustomize` package's module), by
/// shape alone (the set may have made the environment).
pub fn in_parts(parts: &[&OsStr]) -> Option<usize> {
    (2..=parts.len()).find_map(|n| {
        let p: std::path::PathBuf = parts[..n].iter().collect();
        let (env, _) = file_of(&p)?;
        env.components().count().checked_sub(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_of_an_environment_are_found_by_their_place() {
        let f = |p: &str| file_of(Path::new(p)).map(|(e, k)| (e.to_str().unwrap().to_string(), k));
        assert_eq!(f("/w/.venv/pyvenv.cfg"), Some(("/w/.venv".into(), Kind::Kept)));
        assert_eq!(f("/w/.venv/bin/activate"), Some(("/w/.venv".into(), Kind::Kept)));
        assert_eq!(f("/w/.venv/bin/python3.12"), Some(("/w/.venv".into(), Kind::Kept)));
        assert_eq!(f("/w/.venv/lib/python3.12/site-packages/x.pth"), Some(("/w/.venv".into(), Kind::Reported)));
        assert_eq!(f("/w/.venv/lib64/python3.12/site-packages/sitecustomize.py"), Some(("/w/.venv".into(), Kind::Reported)));
        assert_eq!(f("/w/.venv/pip.conf"), Some(("/w/.venv".into(), Kind::Reported)));
        assert_eq!(f("/w/.venv/bin/pip"), None, "pip install writes its scripts");
        assert_eq!(f("/w/.venv/lib/python3.12/site-packages/pkg/__init__.py"), None, "the project's code");
        assert_eq!(f("/w/.venv/lib/python3.12/site-packages/pkg/x.pth"), None);
        assert_eq!(f("/w/.venv/lib/python3.12/site-packages/sitecustomize"), Some(("/w/.venv".into(), Kind::Reported)), "a package");
        assert_eq!(f("/w/.venv/lib/python3.12/site-packages/usercustomize.cpython-312-x86_64-linux-gnu.so"), Some(("/w/.venv".into(), Kind::Reported)));
        assert_eq!(f("/w/.venv/lib/python3.12/site-packages/sitecustomizer.py"), None);
        let parts = [".venv", "lib", "python3.12", "site-packages", "sitecustomize", "__init__.py"].map(OsStr::new);
        assert_eq!(in_parts(&parts), Some(0), "a module of the package");
        assert_eq!(in_parts(&[".venv".as_ref(), "bin".as_ref(), "activate".as_ref()]), Some(0));
        assert_eq!(in_parts(&["a".as_ref(), "env".as_ref(), "pyvenv.cfg".as_ref()]), Some(1));
    }
}
