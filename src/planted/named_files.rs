//! What a reader of a tool's configuration found (`cargo_programs`, `yarn_programs`,
//! `mvn_programs`, `envrc_sources`, `editor_programs`): the files it names by path, which
//! `repo_includes` keeps read-only (a missing one absent), and whether it named more than it keeps
//! or could not be read, which `hook_risks` names in `notEnforced`. One type and one rule of
//! keeping for all of them, so a path is kept the same way whichever tool names it.

use std::path::{Path, PathBuf};

/// The most paths kept of one configuration file (a run may write one below the tops).
pub const MAX_PROGRAMS: usize = 256;

/// What a reader found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Named {
    pub programs: Vec<PathBuf>,
    /// A file named more than `MAX_PROGRAMS` (or more than was left of a bound in all), or could
    /// not be read (a FIFO, a device, too large, past the plan's budget of bytes).
    pub capped: bool,
}

impl Named {
    /// What a file that could not be read gives.
    pub fn unread() -> Named {
        Named { programs: Vec::new(), capped: true }
    }

    /// Whether `most` paths are kept already (then `capped`): the reader keeps no more.
    pub fn full(&mut self, most: usize) -> bool {
        self.capped |= self.programs.len() >= most;
        self.programs.len() >= most
    }

    /// Keep `p`, what the word `w` names, once: an absolute word always, a relative one where its
    /// directory exists, as git's programs are (`runner = "target/debug/r"` before a first build
    /// names no place yet). `p` when kept.
    pub fn keep(&mut self, w: &str, p: PathBuf) -> Option<PathBuf> {
        if !w.starts_with('/') && !p.parent().is_some_and(Path::is_dir) {
            return None;
        }
        if !self.programs.contains(&p) {
            self.programs.push(p.clone());
        }
        Some(p)
    }
}

/// Whether `p` bears one of the `reported` names (`names::reported_defaults`): a file of such a
/// name is left to its report, not kept (commands write those: `.env`, `.env.yarn`).
pub fn is_reported(p: &Path, reported: &[String]) -> bool {
    p.file_name().is_some_and(|n| reported.iter().any(|r| n == r.as_str()))
}

/// The path the word `w` names from `base` (an absolute one as it is).
pub fn from_base(w: &str, base: &Path) -> PathBuf {
    let p = Path::new(w);
    if p.is_absolute() { p.to_path_buf() } else { base.join(p) }
}
