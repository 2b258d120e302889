//! The directories on the way from a kept virtual environment to its site-packages (`venv`): the
//! environment itself, `lib`, `lib64`, each `lib*/pythonX.Y` and its `site-packages`. `venv` finds
//! the files Python runs by their place and the walk does not follow a symlink, so a run that made
//! one of these a link (`mv lib/python3.11 stash; ln -s stash lib/python3.11`) wrote its `.pth` in
//! `stash/site-packages`, where nothing was judged, and the host's next start of `.venv/bin/python`
//! ran it (found by an attacker's review, venv_swap.js). Each is taken by its `(device, inode)`
//! before the run and again after it: one replaced, renamed, removed or made (`lib64` made a link)
//! is reported. A few `lstat`s and one or two short listings per environment, whatever the run did.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The entries on the way, by path, with their `(device, inode)` and a link's target (`None`:
/// absent). The target too: a link removed and made again may take the inode it freed.
pub type Way = BTreeMap<PathBuf, Option<Id>>;

type Id = (u64, u64, Option<PathBuf>);

/// At most this many `python*` entries of a `lib` are taken (a venv holds one).
const MAX_VERSIONS: usize = 16;

fn id(p: &Path) -> Option<(std::fs::Metadata, Id)> {
    p.symlink_metadata().ok().map(|m| {
        let target = m.is_symlink().then(|| std::fs::read_link(p).unwrap_or_default());
        let id = (m.dev(), m.ino(), target);
        (m, id)
    })
}

/// The way to `env`'s site-packages as it is now.
pub fn of(env: &Path) -> Way {
    let mut way = Way::new();
    way.insert(env.to_path_buf(), id(env).map(|(_, i)| i));
    for lib in ["lib", "lib64"].map(|l| env.join(l)) {
        let found = id(&lib);
        way.insert(lib.clone(), found.as_ref().map(|(_, i)| i.clone()));
        // A link (`lib64 -> lib`, as `python -m venv` makes it) is judged by its own inode only:
        // what it leads to is taken through the real directory.
        if !found.as_ref().is_some_and(|(m, _)| m.is_dir()) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&lib) else { continue };
        let versions = entries.flatten().filter(|e| e.file_name().as_encoded_bytes().starts_with(b"python")).take(MAX_VERSIONS);
        for v in versions.map(|e| e.path()) {
            let found = id(&v);
            way.insert(v.clone(), found.as_ref().map(|(_, i)| i.clone()));
            if found.as_ref().is_some_and(|(m, _)| m.is_dir()) {
                let site = v.join("site-packages");
                way.insert(site.clone(), id(&site).map(|(_, i)| i));
            }
        }
    }
    way
}

/// The entries of `before` (taken by `of`) that are not what they were, and those made since.
pub fn changed(env: &Path, before: &Way) -> Vec<PathBuf> {
    let now = of(env);
    let mut out: Vec<PathBuf> = before.iter().filter(|(p, id)| now.get(*p) != Some(*id)).map(|(p, _)| p.clone()).collect();
    out.extend(now.iter().filter(|(p, id)| id.is_some() && !before.contains_key(*p)).map(|(p, _)| p.clone()));
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_on_the_way_made_a_link_or_renamed_is_found() {
        let t = tempfile::tempdir().unwrap();
        let env = t.path().join(".venv");
        let site = env.join("lib/python3.12/site-packages");
        std::fs::create_dir_all(&site).unwrap();
        std::os::unix::fs::symlink("lib", env.join("lib64")).unwrap();
        let before = of(&env);
        std::fs::write(site.join("x.pth"), "").unwrap();
        assert!(changed(&env, &before).is_empty(), "a file written in site-packages is judged by the walk");
        std::fs::rename(env.join("lib/python3.12"), env.join("lib/stash")).unwrap();
        std::os::unix::fs::symlink("stash", env.join("lib/python3.12")).unwrap();
        assert_eq!(changed(&env, &before), [env.join("lib/python3.12"), site.clone()]);
        std::fs::remove_file(env.join("lib/python3.12")).unwrap();
        std::fs::rename(env.join("lib/stash"), env.join("lib/python3.12")).unwrap();
        assert!(changed(&env, &before).is_empty(), "put back as it was");
        std::fs::remove_file(env.join("lib64")).unwrap();
        std::os::unix::fs::symlink("/tmp", env.join("lib64")).unwrap();
        assert_eq!(changed(&env, &before), [env.join("lib64")]);
    }
}
