//! A file of a change set under several names (the command's `ln`) lands on the host as one file
//! under those names, as the command made it. Copied once per name, a set's 16 MiB linked 100
//! times took 1.6 GiB of the host's disk (found by an attacker's review; ext4 allows ~65,000 links
//! per inode: 1 GB in a set would have been 65 TB on apply). Within one apply, where each of the
//! set's linked files first landed is remembered, and its later names are linked to that file
//! (`host_fs::Dir::link_file`), which must still be the one written. Where no name of it landed
//! yet (held back, conflicting, failed), or the link cannot be made (another filesystem mounted
//! in the workspace, the host replaced the file meanwhile), the data is copied and that copy is
//! the one later names link to.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::entries::Entry;
use super::host_fs::{Dir, Unchanged};

/// Where a file of the set landed: its host path below the root, and its device and inode there.
struct Landed {
    rel: PathBuf,
    inode: (u64, u64),
}

/// The set's linked files that landed in one root, by their device and inode in the upper directory.
#[derive(Default)]
pub struct Links {
    landed: HashMap<(u64, u64), Landed>,
}

impl Links {
    /// Land the set's file `src` (entry `e`) as `name` in `dir`, at `root`/`e.rel`: linked to where
    /// another name of it landed, else written.
    /// Its content must be older than `sealed_ns` (`host_fs::Unchanged`).
    pub fn land(&mut self, root: &Path, dir: &Dir, name: &OsStr, src: &Path, e: &Entry, sealed_ns: i64) -> std::io::Result<()> {
        let linked = self.landed.get(&e.inode).is_some_and(|l| link(root, dir, name, l).is_ok());
        if !linked {
            let inode = dir.write_file(name, src, e.mode, e.mtime, &Unchanged { inode: e.inode, before_ns: sealed_ns })?;
            if e.nlink > 1 {
                self.landed.insert(e.inode, Landed { rel: e.rel.clone(), inode });
            }
        }
        // The set's last name of it: once it goes, its inode may be reused by another file.
        if e.nlink <= 1 {
            self.landed.remove(&e.inode);
        }
        Ok(())
    }
}

/// `name` in `dir` made another name of `landed`, opened from the root without following a symlink.
fn link(root: &Path, dir: &Dir, name: &OsStr, landed: &Landed) -> std::io::Result<()> {
    let from = Dir::open_root(&root.join(landed.rel.parent().unwrap_or(Path::new(""))))?;
    dir.link_file(name, &from, landed.rel.file_name().unwrap_or_default(), landed.inode)
}
