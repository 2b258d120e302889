//! Which of many paths may exist, from one listing of their directory instead of an `lstat` each.
//! Every run looks for the hundred-odd protected names at each writable root's top (the workspace,
//! `/tmp`), in the host user's home and again after the run: about 600 failed `lstat`s a run, each a
//! path walk from `/` (1.1 to 1.3 µs here), where a listing of `/tmp` costs about what 30 of them do.
//! So does the cleanup of plans' placeholders after every run (`placeholders`).
//!
//! A name the listing does not hold cannot exist, so it needs no `lstat`; one it holds is looked at
//! as before. Listings are compared the way a lookup may be: in any ASCII case, and not at all when
//! an entry is not ASCII (a case-insensitive volume, macOS's or ext4's casefold directories, may
//! fold such a name onto a protected one: Kelvin sign for `k`). A directory that cannot be listed, or
//! holds more entries than listing is worth, says nothing: each of its paths is looked at.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A directory with fewer of the paths than this is not listed: an `lstat` each is as cheap.
const MIN_PATHS: usize = 8;

/// Entries a listing may read per path it answers for: past that an `lstat` each is cheaper.
/// Measured on Linux 6.18: reading a directory's first 8,192 entries took 1.3 ms on ext4 and 1.5
/// to 3 ms on tmpfs, 500 failed `lstat`s there 0.12 and 0.35 ms: the break-even is about 1.5
/// entries a path on ext4 and 3.7 on tmpfs (`/tmp` is either). It was 16, and one run's 200,000
/// files at a shared `/tmp`'s top cost every later run four listings of 8,192 entries (found by
/// an attacker's review, cross37; 5.5 to 21 ms of host CPU a run).
const ENTRIES_PER_PATH: usize = 3;

/// Bytes of a tmpfs directory's size each entry takes (`BOGO_DIRENT_SIZE`): there the size counts
/// the entries, and a directory of more than `max` is not read at all (reading its first `max`
/// entries only to give up costs as much as the `lstat`s after). Not on other filesystems: an
/// ext4 directory keeps the blocks it once needed (this machine's `/tmp`: 61,440 bytes for 56
/// entries), and taking that for a count would `lstat` hundreds of names a listing saves.
const TMPFS_SIZE_PER_ENTRY: u64 = 20;

/// What the listings said, by directory.
#[derive(Default)]
pub struct Presence {
    /// The entries of each listed directory, lowercased; an empty set for one that does not exist.
    listed: HashMap<PathBuf, HashSet<Vec<u8>>>,
}

impl Presence {
    /// Lists each directory holding at least `MIN_PATHS` of `paths`.
    pub fn of<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Presence {
        let mut presence = Presence::default();
        presence.more(paths);
        presence
    }

    /// Lists each directory holding at least `MIN_PATHS` of `paths` that is not listed yet. A
    /// listing already held is kept: only for a caller that looks at the same moment, or one for
    /// which a name made since the listing needs no look (see `placeholders::remove_leftovers_with`).
    pub fn more<'a>(&mut self, paths: impl IntoIterator<Item = &'a Path>) {
        let mut by_dir: HashMap<&Path, usize> = HashMap::new();
        for p in paths {
            if let Some(dir) = p.parent() {
                *by_dir.entry(dir).or_default() += 1;
            }
        }
        for (dir, n) in by_dir {
            self.list_dir(dir, n);
        }
    }

    /// Lists `dir`, which holds `n` of the paths asked about, unless it is listed already or `n` is
    /// too few for a listing to be worth it.
    pub fn list_dir(&mut self, dir: &Path, n: usize) {
        if n >= MIN_PATHS && !self.listed.contains_key(dir) {
            if let Some(names) = list(dir, n * ENTRIES_PER_PATH) {
                self.listed.insert(dir.to_path_buf(), names);
            }
        }
    }

    /// Whether `p` may exist: false only when its directory's listing holds no such name.
    pub fn may_exist(&self, p: &Path) -> bool {
        let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else { return true };
        self.may_hold(dir, name)
    }

    /// Whether `dir/name` may exist, without a path made for it (hundreds of names a run): false
    /// only when `dir`'s listing holds no such name in any ASCII case.
    pub fn may_hold(&self, dir: &Path, name: &OsStr) -> bool {
        let Some(names) = self.listed.get(dir) else { return true };
        let name = name.as_bytes();
        let mut folded = [0u8; 256];
        // No name in a directory is longer (NAME_MAX): such a one is looked at, never ruled out.
        let Some(folded) = folded.get_mut(..name.len()) else { return true };
        folded.copy_from_slice(name);
        folded.make_ascii_lowercase();
        names.contains(&*folded)
    }

    /// `p`'s `lstat`, skipped when the listing says it does not exist.
    pub fn symlink_metadata(&self, p: &Path) -> Option<std::fs::Metadata> {
        self.may_exist(p).then(|| p.symlink_metadata().ok()).flatten()
    }
}

/// The entries of `dir`, lowercased: empty when it does not exist or is no directory (nothing can
/// be below it); `None` when it cannot be listed, holds more than `max` entries (however many
/// distinct names they fold to) or one that is not ASCII.
fn list(dir: &Path, max: usize) -> Option<HashSet<Vec<u8>>> {
    // A hint only: what it rules out is looked at path by path, and `max` still bounds what is read.
    if tmpfs_entries(dir).is_some_and(|n| n > max as u64) {
        return None;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => return Some(HashSet::new()),
        Err(_) => return None,
    };
    let mut names = HashSet::new();
    // Entries read, not distinct names: the case variants of one name (2^k of a k-letter name) all
    // fold onto one, and a command could otherwise make the listing of a shared top as long as it liked.
    for (read, e) in entries.enumerate() {
        let name = e.ok()?.file_name();
        if read == max || !name.as_bytes().is_ascii() {
            return None;
        }
        names.insert(OsStr::as_bytes(&name).to_ascii_lowercase());
    }
    Some(names)
}

/// How many entries `dir` holds, where its size says so (tmpfs); `None` elsewhere.
fn tmpfs_entries(dir: &Path) -> Option<u64> {
    const TMPFS_MAGIC: u32 = 0x0102_1994;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero `statfs` is a valid value for statfs to overwrite.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a writable `statfs`.
    if unsafe { libc::statfs(path.as_ptr(), &mut st) } != 0 || st.f_type as u32 != TMPFS_MAGIC {
        return None;
    }
    let meta = dir.metadata().ok().filter(|m| m.is_dir())?;
    // `.` and `..` count too (an empty directory is 40 bytes).
    Some((meta.len() / TMPFS_SIZE_PER_ENTRY).saturating_sub(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(dir: &Path, names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(|n| dir.join(n)).collect()
    }

    const NAMES: [&str; 9] = [".git", ".bashrc", ".envrc", ".vscode", ".idea", ".zshrc", ".profile", ".npmrc", ".mcp.json"];

    #[test]
    fn a_listed_directory_answers_for_its_missing_names_and_keeps_those_there() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join(".bashrc"), "").unwrap();
        std::fs::create_dir(t.path().join(".vscode")).unwrap();
        let ps = paths(t.path(), &NAMES);
        let presence = Presence::of(ps.iter().map(|p| p.as_path()));
        let may: Vec<&str> = NAMES.iter().zip(&ps).filter(|(_, p)| presence.may_exist(p)).map(|(n, _)| *n).collect();
        assert_eq!(may, [".bashrc", ".vscode"]);
        assert!(presence.symlink_metadata(&t.path().join(".vscode")).is_some_and(|m| m.is_dir()));
    }

    /// A lookup on a case-insensitive volume finds `.GIT` for `.git`, and may fold a name that is
    /// not ASCII onto a protected one: then nothing is ruled out.
    #[test]
    fn another_case_may_exist_and_a_name_that_is_not_ascii_rules_nothing_out() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join(".GIT")).unwrap();
        let ps = paths(t.path(), &NAMES);
        let presence = Presence::of(ps.iter().map(|p| p.as_path()));
        assert!(presence.may_exist(&t.path().join(".git")));
        assert!(!presence.may_exist(&t.path().join(".envrc")));
        std::fs::write(t.path().join(".\u{212A}ube"), "").unwrap();
        let presence = Presence::of(ps.iter().map(|p| p.as_path()));
        assert!(ps.iter().all(|p| presence.may_exist(p)));
    }

    #[test]
    fn a_missing_directory_holds_nothing_and_an_unlistable_or_large_one_rules_nothing_out() {
        let t = tempfile::tempdir().unwrap();
        let gone = t.path().join("gone");
        let presence = Presence::of(paths(&gone, &NAMES).iter().map(|p| p.as_path()));
        assert!(!presence.may_exist(&gone.join(".git")));
        let big = t.path().join("big");
        std::fs::create_dir(&big).unwrap();
        for i in 0..NAMES.len() * ENTRIES_PER_PATH + 1 {
            std::fs::write(big.join(format!("f{i}")), "").unwrap();
        }
        let presence = Presence::of(paths(&big, &NAMES).iter().map(|p| p.as_path()));
        assert!(presence.may_exist(&big.join(".git")), "past the bound: looked at");
        // Too few paths in a directory to list it: each is looked at.
        let presence = Presence::of(paths(t.path(), &NAMES[..MIN_PATHS - 1]).iter().map(|p| p.as_path()));
        assert!(presence.may_exist(&t.path().join(".git")));
    }

    /// A name is looked up in a listing without a path made for it, in any ASCII case as
    /// `may_exist` does; a directory already listed is not listed again by `more` (its caller
    /// shares a listing of one moment), one not listed yet is.
    #[test]
    fn a_name_is_looked_up_without_a_path_and_more_lists_only_new_directories() {
        let (t, u) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(t.path().join(".Envrc"), "").unwrap();
        let mut presence = Presence::of(paths(t.path(), &NAMES).iter().map(|p| p.as_path()));
        for n in NAMES {
            assert_eq!(presence.may_hold(t.path(), OsStr::new(n)), presence.may_exist(&t.path().join(n)), "{n}");
        }
        assert!(presence.may_hold(t.path(), OsStr::new(".envrc")) && !presence.may_hold(t.path(), OsStr::new(".git")));
        assert!(presence.may_hold(t.path(), OsStr::new(&"x".repeat(300))), "longer than any name: looked at");
        assert!(presence.may_hold(u.path(), OsStr::new(".git")), "not listed: looked at");
        std::fs::write(t.path().join(".git"), "").unwrap();
        std::fs::write(u.path().join(".idea"), "").unwrap();
        presence.more(paths(t.path(), &NAMES).iter().chain(&paths(u.path(), &NAMES)).map(|p| p.as_path()));
        assert!(!presence.may_hold(t.path(), OsStr::new(".git")), "the listing held is the one used");
        assert!(presence.may_hold(u.path(), OsStr::new(".idea")) && !presence.may_hold(u.path(), OsStr::new(".git")), "a new directory listed");
    }

    /// Found by an attacker's review: the bound counted distinct lowercased names, so the case
    /// variants of one name (2^k of a k-letter name) were all read past it, and a run could make a
    /// later run's listing of a shared top (`/tmp`) as long as it liked. Past the bound of entries
    /// read, nothing is ruled out (each path is looked at).
    #[test]
    fn case_variants_of_one_name_count_towards_the_bound() {
        let t = tempfile::tempdir().unwrap();
        let letters = "bashrcxy"; // 2^8 variants, past NAMES.len() * ENTRIES_PER_PATH
        assert!(1 << letters.len() > NAMES.len() * ENTRIES_PER_PATH);
        for bits in 0..1u32 << letters.len() {
            let name: String = letters.chars().enumerate().map(|(i, c)| if bits >> i & 1 == 1 { c.to_ascii_uppercase() } else { c }).collect();
            std::fs::write(t.path().join(format!(".{name}")), "").unwrap();
        }
        let presence = Presence::of(paths(t.path(), &NAMES).iter().map(|p| p.as_path()));
        assert!(presence.may_exist(&t.path().join(".git")), "past the bound: looked at");
        assert!(list(t.path(), NAMES.len() * ENTRIES_PER_PATH).is_none());
    }

    /// Found by an attacker's review (cross37, left; measured by cross38): a listing was read up
    /// to 16 entries a path, while an entry read costs a quarter to a tenth of a failed `lstat`
    /// (Linux 6.18: the first 8,192 entries of a directory 1.3 ms on ext4 and 1.5 to 3 ms on
    /// tmpfs, 500 failed `lstat`s 0.12 and 0.35 ms). One run's 200,000 empty files at a shared
    /// `/tmp`'s top had every later run read four listings of 8,192 of them (before the run, the
    /// keeper's, after it, the placeholders'): 5.5 to 21 ms of host CPU a run. Past about three
    /// entries a path (the break-even on tmpfs) the `lstat`s are cheaper: nothing is listed.
    #[test]
    fn a_directory_of_more_than_a_few_entries_a_path_is_not_listed() {
        let t = tempfile::tempdir().unwrap();
        for i in 0..NAMES.len() * 4 {
            std::fs::write(t.path().join(format!("f{i}")), "").unwrap();
        }
        let presence = Presence::of(paths(t.path(), &NAMES).iter().map(|p| p.as_path()));
        assert!(presence.may_exist(&t.path().join(".git")), "four entries a path: looked at, not listed");
    }

    /// A tmpfs directory's size counts its entries, so one of more than a listing would read is
    /// not read at all; `/dev/shm` is tmpfs on Linux hosts.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_tmpfs_directory_s_entries_are_told_by_its_size() {
        let Ok(t) = tempfile::tempdir_in("/dev/shm") else { return eprintln!("skipped: no /dev/shm here") };
        if tmpfs_entries(t.path()).is_none() {
            return eprintln!("skipped: /dev/shm is no tmpfs here");
        }
        assert_eq!(tmpfs_entries(t.path()), Some(0));
        for i in 0..5 {
            std::fs::write(t.path().join(format!("f{i}")), "").unwrap();
        }
        std::fs::create_dir(t.path().join("d")).unwrap();
        assert_eq!(tmpfs_entries(t.path()), Some(6));
        assert_eq!(tmpfs_entries(&t.path().join("f0")), None, "no directory");
    }
}
