//! Reading, in one plan, the tool configurations the walk's protected names lead to (a `.cargo`'s
//! `config.toml` and `config`: `cargo_programs`; a rust-toolchain file: `toolchain_path`): each
//! file judged once however many names it has, and at most a budget of bytes read in all.
//!
//! Found by an attacker's review (cross34): every such file the walk finds, at a top or below it,
//! was read (up to `small_file::MAX_BYTES`) and scanned in the setup of every run of the
//! workspace, whatever their number. A run made 200 directories whose `.cargo/config.toml` and
//! `config` were names of one 1 MiB file (hard links: no disk, 0.1 s of the command's CPU), and
//! 200 `rust-toolchain.toml` names of another, and every later `true` cost the host 16 s of CPU
//! before it started (500 `.cargo`: 38 s, 90 s late). A file is now known by its identity
//! (device, inode, size, modification and change times: a write changes them), so its other names
//! reuse what the first one gave; and once `BUDGET` bytes were read, a file not judged yet is not
//! read (`Judged::Unjudged`: the caller says so in `notEnforced`, as for a file too large).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::small_file;

/// The bytes one plan reads of one kind of configuration, in all: a project's `.cargo`
/// configuration or toolchain file is a few KiB; this is two of the largest one file may be.
pub const BUDGET: u64 = 2 * small_file::MAX_BYTES;

/// The files kept of all the yarn configurations, `.mvn` directories and `.envrc` files of one
/// plan together (`Carver::tool_programs`), as `cargo_programs::MAX_IN_ALL` bounds the `.cargo`'s:
/// each is a path the host looks up and a carve-out of the sandbox. Found by an attacker's review
/// (rfix34): 300 `.envrc` sourcing 256 files each had every later run keep 76,800 paths.
pub const TOOL_PROGRAMS_IN_ALL: usize = 1024;

/// What became of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judged<T> {
    /// Nothing there to read (absent, a directory, unreadable to this user).
    Absent,
    /// What the caller made of its text (now, or for another name of the same file).
    Judged(T),
    /// There, but not read: not a regular file, over `small_file::MAX_BYTES`, or past the budget.
    Unjudged,
}

/// A file's identity and the times a change of its content moves.
type Identity = (u64, u64, u64, i64, i64, i64, i64);

/// The files of one kind judged in one plan, and the bytes still to be read.
pub struct Reads<T> {
    left: u64,
    seen: HashMap<Identity, T>,
}

impl<T: Clone> Reads<T> {
    pub fn new(budget: u64) -> Reads<T> {
        Reads { left: budget, seen: HashMap::new() }
    }

    /// The file at `path` (its symlinks followed, as the tools follow them), made into a `T` by
    /// `judge` the first time its identity is met.
    pub fn judge(&mut self, path: &Path, judge: impl FnOnce(&str) -> T) -> Judged<T> {
        let Ok(meta) = std::fs::metadata(path) else { return Judged::Absent };
        let id = meta.is_file().then(|| (meta.dev(), meta.ino(), meta.size(), meta.mtime(), meta.mtime_nsec(), meta.ctime(), meta.ctime_nsec()));
        if let Some(done) = id.and_then(|id| self.seen.get(&id)) {
            return Judged::Judged(done.clone());
        }
        if id.is_some() && meta.size() > self.left {
            return Judged::Unjudged;
        }
        match small_file::read(path) {
            small_file::Read::Absent => Judged::Absent,
            small_file::Read::Unjudged { .. } => Judged::Unjudged,
            small_file::Read::Text(text) => {
                self.left = self.left.saturating_sub(text.len() as u64);
                let judged = judge(&text);
                if let Some(id) = id {
                    self.seen.insert(id, judged.clone());
                }
                Judged::Judged(judged)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_name_of_a_file_is_not_read_again_and_the_budget_bounds_the_rest() {
        let t = tempfile::tempdir().unwrap();
        let (a, b, c) = (t.path().join("a"), t.path().join("b"), t.path().join("c"));
        std::fs::write(&a, "x".repeat(600)).unwrap();
        std::fs::hard_link(&a, &b).unwrap();
        std::fs::write(&c, "y".repeat(600)).unwrap();
        let mut reads: Reads<usize> = Reads::new(1000);
        let mut judged = 0;
        let mut judge = |p: &Path| reads.judge(p, |text| {
            judged += 1;
            text.len()
        });
        assert_eq!(judge(&a), Judged::Judged(600));
        assert_eq!(judge(&b), Judged::Judged(600), "another name of a: what a gave");
        assert_eq!(judge(&c), Judged::Unjudged, "past the budget: not read");
        assert_eq!(judge(&t.path().join("missing")), Judged::Absent);
        assert_eq!(judge(t.path()), Judged::Absent, "a directory");
        drop(judge);
        assert_eq!(judged, 1, "read once");
    }
}
