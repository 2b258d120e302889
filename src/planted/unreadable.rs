//! The directories the walk after a run could not list (`Found::unreadable`): what the run planted
//! below one was out of the walk's sight. Reported as `scan-incomplete`, never dropped:
//! - one whose `lstat` works and whose ctime moved during the run: the run made it (or made it
//!   unreadable: `chmod 300`, it can still enter and write there). Those unreadable before the run
//!   and unchanged are left as they were (the walk before the run could not look in them either);
//! - one whose `lstat` fails too (EACCES below a directory this user can list but not search, the
//!   `chmod 000` of a directory whose listing the walk kept; ENAMETOOLONG past PATH_MAX; ELOOP):
//!   nothing tells whether the run changed it, so it is reported, at the nearest directory above it
//!   that a path names, with how many such directories lie below that one.
//!
//! Found by attackers' reviews: the walk kept the first 24 it met and the report then dropped each
//! it could not `lstat`, so 30 directories past PATH_MAX hid a `chmod 300` one holding a planted
//! repository; and a `chmod 000` of a directory whose listing was kept hid its subdirectory's.
//! Every one is counted; at most `SHOWN` entries name them, and one more counts the rest.

use std::collections::HashMap;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::scan;

/// At most this many entries name unlisted directories (or the directory above them); the rest
/// are counted in one more entry.
pub const SHOWN: usize = scan::UNEXAMINED_SHOWN * 8;

/// What one entry of the report names.
enum Area {
    /// A directory the run made, or made unreadable.
    Made(PathBuf),
    /// The nearest directory a path names above `count` directories that could not be `lstat`ed
    /// either (`example`, and why).
    Above { dir: PathBuf, count: usize, example: PathBuf, why: io::Error },
}

impl Area {
    fn dirs(&self) -> usize {
        match self {
            Area::Made(_) => 1,
            Area::Above { count, .. } => *count,
        }
    }

    fn path(&self) -> &Path {
        match self {
            Area::Made(dir) | Area::Above { dir, .. } => dir,
        }
    }
}

/// One `scan-incomplete` host risk: the directory it names and what is said of it.
#[derive(Debug)]
pub struct Incomplete {
    pub path: PathBuf,
    pub detail: String,
}

/// What is reported of the directories the walk after the run could not list (`since`: when the
/// walk before the run started, unix seconds): each a `scan-incomplete` host risk.
pub fn report(unreadable: &[PathBuf], since: i64) -> Vec<Incomplete> {
    let areas = areas(unreadable, since);
    let shown = areas.len().min(SHOWN);
    let mut risks: Vec<Incomplete> = areas[..shown].iter().map(risk).collect();
    let rest = &areas[shown..];
    if let Some(first) = rest.first() {
        let dirs: usize = rest.iter().map(Area::dirs).sum();
        let common = rest.iter().fold(first.path().to_path_buf(), |a, r| a.ancestors().find(|d| r.path().starts_with(d)).unwrap_or(Path::new("/")).to_path_buf());
        risks.push(Incomplete {
            path: common,
            detail: format!(
                "{dirs} more directories below this one that the walk after the run could not list are not named (a run names at \
                 most {SHOWN} such places): the run made them, made them unreadable, or no path names them; repositories or \
                 protected names planted below them were not looked for: look there before running host tools in them"
            ),
        });
    }
    risks
}

/// Each unlisted directory judged (see the module comment), those above which a path fails grouped
/// by the directory that names them, in the walk's order (shallow first). Up to `MAX_DIRS` of
/// them: one `lstat` each, and those that fail one per directory above them, once per parent.
fn areas(unreadable: &[PathBuf], since: i64) -> Vec<Area> {
    let mut areas: Vec<Area> = Vec::new();
    // The `Above` area of each directory above, and of each parent met (siblings share it).
    let mut area_of_above: HashMap<PathBuf, usize> = HashMap::new();
    let mut area_of_parent: HashMap<&Path, usize> = HashMap::new();
    for dir in unreadable {
        match dir.symlink_metadata() {
            Ok(m) if m.ctime() >= since => areas.push(Area::Made(dir.clone())),
            Ok(_) => {}
            // Gone since the walk (removed, or a file now): nothing below it.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {}
            Err(why) => {
                let parent = dir.parent().unwrap_or(Path::new("/"));
                let i = match area_of_parent.get(parent) {
                    Some(&i) => i,
                    None => {
                        let above = nearest_named(dir);
                        let i = *area_of_above.entry(above.clone()).or_insert_with(|| {
                            areas.push(Area::Above { dir: above, count: 0, example: dir.clone(), why });
                            areas.len() - 1
                        });
                        area_of_parent.insert(parent, i);
                        i
                    }
                };
                if let Area::Above { count, .. } = &mut areas[i] {
                    *count += 1;
                }
            }
        }
    }
    areas
}

/// The nearest directory above `dir` whose path can be `lstat`ed (for the host user to look at).
/// A path of PATH_MAX bytes or more cannot be: not tried.
fn nearest_named(dir: &Path) -> PathBuf {
    let nameable = |d: &&Path| d.as_os_str().len() < libc::PATH_MAX as usize && d.symlink_metadata().is_ok();
    dir.ancestors().skip(1).find(nameable).unwrap_or(Path::new("/")).to_path_buf()
}

fn risk(area: &Area) -> Incomplete {
    let detail = match area {
        Area::Made(_) => "the run made this directory unreadable to this user (or made it so), and the walk after the run could not \
                          list it: repositories or protected names planted below it were not looked for; give it back its read \
                          permission (chmod u+rx) and look inside before running host tools in it"
            .to_string(),
        Area::Above { dir, count, example, why } => {
            let below = example.strip_prefix(dir).unwrap_or(example).display();
            let (dirs, them, e_g) = if *count == 1 { ("a directory".to_string(), "it", "") } else { (format!("{count} directories"), "them", "e.g. ") };
            format!(
                "the walk after the run could not list {dirs} below this one, nor tell whether the run changed {them} ({e_g}{below}: \
                 {why}): repositories or protected names planted below {them} were not looked for; look inside (chmod u+rx what is \
                 not readable) before running host tools there"
            )
        }
    };
    Incomplete { path: area.path().to_path_buf(), detail }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planted::tests::past_path_max;

    fn risks(unreadable: Vec<PathBuf>, since: i64) -> Vec<Incomplete> {
        report(&unreadable, since)
    }

    fn now() -> i64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
    }

    #[test]
    fn directories_no_path_names_are_counted_at_the_nearest_one_that_does() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let (top, names) = past_path_max(&r, 30);
        let risks = risks(names.iter().map(|n| top.join(n)).collect(), now() + 100);
        assert_eq!(risks.len(), 1, "however old: nothing tells whether the run changed them");
        assert_eq!(risks[0].path, top);
        assert!(risks[0].detail.contains("could not list 30 directories below this one"), "{}", risks[0].detail);
        assert!(risks[0].detail.contains("too long"), "why: {}", risks[0].detail);
    }

    #[test]
    fn a_directory_the_run_changed_is_named_among_any_number_of_others() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let (top, names) = past_path_max(&r, 30);
        let made = r.join("b/hide");
        std::fs::create_dir_all(&made).unwrap();
        let mut unreadable: Vec<PathBuf> = names.iter().map(|n| top.join(n)).collect();
        unreadable.extend([made.clone(), r.join("gone")]);
        let risks = risks(unreadable, now() - 100);
        let paths: Vec<&PathBuf> = risks.iter().map(|h| &h.path).collect();
        assert_eq!(paths, vec![&top, &made]);
        assert!(risks[1].detail.contains("the run made this directory unreadable"), "{}", risks[1].detail);
        let risks = report(&[made.clone(), r.join("gone")], now() + 100);
        assert!(risks.is_empty(), "unchanged since before the run, and gone: {risks:?}");
    }

    #[test]
    fn past_the_shown_bound_the_rest_is_counted_in_one_entry() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let dirs: Vec<PathBuf> = (0..SHOWN + 16).map(|i| r.join(format!("d/{i:03}"))).collect();
        for d in &dirs {
            std::fs::create_dir_all(d).unwrap();
        }
        let risks = risks(dirs.clone(), now() - 100);
        assert_eq!(risks.len(), SHOWN + 1);
        assert!(risks[..SHOWN].iter().zip(&dirs).all(|(h, d)| h.path == *d), "the first, shallowest, named");
        let last = risks.last().unwrap();
        assert_eq!(last.path, r.join("d"));
        assert!(last.detail.starts_with("16 more directories below this one"), "{}", last.detail);
    }
}
