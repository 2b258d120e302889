//! One look at the links into `node_modules` (`unwalked_links`): where each leads and what git's
//! discovery finds from there, within a budget of steps, each step a few system calls whatever the
//! depth of the way. Found by attackers' reviews: rfix22 (nm_many_dos.js), twenty `openat`s a link;
//! rfix23 (nm_deep_links.js), 1,000 links down their own 60-directory chains cost every later run
//! 0.6 s within the budget, ~15 µs a step: each link's way resolved from `/`, and each directory of
//! discovery looked at by full paths, which the kernel looks up from `/` again, name by name.
//!
//! Here each link's directory is made canonical once per look (`Dirs::canonical`, from its nearest
//! ancestor made so already), each way walked from it by descriptors
//! (`path_walk::longest_resolving_from`), and each directory entered on the way looked at by
//! discovery there and then, by `fstatat` from its descriptor (`look_at`): discovery upwards then
//! finds it looked at, and the links of one directory into one `node_modules` share all of it.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::{Component, Path, PathBuf};

use super::links;
use crate::policy::path_walk;

/// Why a look stopped at a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    /// The budget of the look ran out.
    Spent,
    /// The link's way cannot be followed (longer than `path_walk::MAX_STEPS` components, or through
    /// procfs), so where it leads, and what git finds there, is not known. Taken once for "leads
    /// nowhere": an attacker's review (rfix23b, nm_long_way.js) chained three links of 1,900 `./`
    /// each, which the kernel follows, to a repository the run planted, and nothing was said.
    Unfollowed(path_walk::Unjudged),
}

/// The links a look left out, past its budget: the first of them, and how many.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub first: PathBuf,
    pub count: usize,
}

/// What one look found: the links' directories made canonical, what discovery found in each
/// directory (`links::Looked`), and the steps left of its budget.
pub(super) struct Dirs {
    canonical: HashMap<PathBuf, Option<PathBuf>>,
    looked: links::Looked,
    left: usize,
}

impl Dirs {
    pub(super) fn new(steps: usize) -> Dirs {
        Dirs { canonical: HashMap::new(), looked: links::Looked::new(), left: steps }
    }

    /// What git's discovery may use from where `link` leads now (`links::discover`); `Stop` when
    /// the budget ran out on the way, or the way cannot be followed.
    pub(super) fn leads_to(&mut self, link: &Path) -> Result<Vec<PathBuf>, Stop> {
        // The walks spend from the thread's budget (`path_walk::RunBudget`): this look's, for this
        // link, the budget of the caller's (the hooks' checks) as it was afterwards.
        let budget = path_walk::RunBudget::set(self.left);
        let found = self.look(link);
        self.left = path_walk::left().unwrap_or(0);
        drop(budget);
        found
    }

    fn look(&mut self, link: &Path) -> Result<Vec<PathBuf>, Stop> {
        let Some((dir, _)) = self.way_of(link)? else { return Ok(Vec::new()) };
        links::discover_in(&dir, &mut self.looked, &mut || path_walk::spend(1)).ok_or(Stop::Spent)
    }

    /// Where `link` leads now (`resolve`), and whether its whole way exists; `None`: it is no
    /// symlink now. `Stop` as `leads_to`'s.
    pub(super) fn way(&mut self, link: &Path) -> Result<Option<(PathBuf, bool)>, Stop> {
        let budget = path_walk::RunBudget::set(self.left);
        let way = self.way_of(link);
        self.left = path_walk::left().unwrap_or(0);
        drop(budget);
        way
    }

    fn way_of(&mut self, link: &Path) -> Result<Option<(PathBuf, bool)>, Stop> {
        let Ok(target) = std::fs::read_link(link) else { return Ok(None) };
        // Out of steps (`spend` refuses at none left) is the budget's; else the way's own.
        let spent = |u| if path_walk::left() == Some(0) { Stop::Spent } else { Stop::Unfollowed(u) };
        self.resolve(link, &target).map(Some).map_err(spent)
    }

    /// `links::resolve(link, target)`: the longest part of the way that exists made canonical, the
    /// rest appended as written (with whether there was none); walked from the link's directory. The link's directory not made
    /// canonical (a run swapped a directory on it for a link chain too long) is not followed either.
    fn resolve(&mut self, link: &Path, target: &Path) -> Result<(PathBuf, bool), path_walk::Unjudged> {
        let at = link.parent().and_then(|d| self.canonical(d)).ok_or(path_walk::Unjudged::TooLong)?;
        let looked = &mut self.looked;
        let prefix = path_walk::longest_resolving_from(&at, target, &mut |d, fd| look_at(looked, d, fd))?;
        let whole = prefix.resolved == target.components().count();
        Ok((append(prefix.canonical, target.components().skip(prefix.resolved)), whole))
    }

    /// `dir` made canonical (`None`: it does not resolve), one component at a time from its nearest
    /// ancestor made canonical already in this look: the workspace is resolved once, not once a link.
    fn canonical(&mut self, dir: &Path) -> Option<PathBuf> {
        let todo: Vec<&Path> = dir.ancestors().take_while(|a| !self.canonical.contains_key(*a)).collect();
        for a in todo.into_iter().rev() {
            let base = match a.parent() {
                Some(p) => self.canonical[p].clone(),
                None if a.is_absolute() => Some(PathBuf::from("/")),
                None => std::env::current_dir().ok(),
            };
            let name: &Path = a.components().next_back().map_or(Path::new("."), |c| Path::new(c.as_os_str()));
            let looked = &mut self.looked;
            let mut walk = |base: PathBuf| path_walk::longest_resolving_from(&base, name, &mut |d, fd| look_at(looked, d, fd)).ok();
            let canonical = base.and_then(&mut walk).filter(|p| p.resolved == 1).map(|p| p.canonical);
            if canonical.is_none() && path_walk::left() == Some(0) {
                // Spent: not cached, the next look (with a budget) does it again.
                return None;
            }
            self.canonical.insert(a.to_path_buf(), canonical);
        }
        self.canonical[dir].clone()
    }
}

/// `base` and the components of a way past what resolved, as written, up to its first `..`: the
/// first of them did not resolve, so neither does a `..` after it, and taking it away lexically
/// named what lies beside, a symlink too (`missing/../sub` gave `ws/sub`, `sub` a link): found
/// fixing rfix24 (chain_dos.js), a repository "at" `ws/sub/.git` the carver could not bind, and
/// every later run refused. What is missing now is looked at again after the run, as it is then.
fn append<'a>(mut base: PathBuf, rest: impl Iterator<Item = Component<'a>>) -> PathBuf {
    for c in rest {
        match c {
            Component::ParentDir => break,
            Component::Normal(n) => base.push(n),
            _ => {}
        }
    }
    base
}

/// What discovery finds in `d`, entered by a walk (`fd`), put in `looked` unless there already, for
/// one step: `false` when the budget refuses it. Most directories have neither a `.git` nor a
/// `HEAD` (without which nothing there is a git directory): two `fstatat`s tell, and only where
/// one is there is it looked at by paths (`links::look_in`).
fn look_at(looked: &mut links::Looked, d: &Path, fd: BorrowedFd) -> bool {
    if looked.contains_key(d) {
        return true;
    }
    if !path_walk::spend(1) {
        return false;
    }
    let absent = |name: &[u8]| {
        // SAFETY: a zeroed stat is valid; a valid descriptor and a NUL-terminated name.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::fstatat(fd.as_raw_fd(), name.as_ptr().cast(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
        r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOENT)
    };
    let here = if absent(b".git\0") && absent(b"HEAD\0") { (Vec::new(), false) } else { links::look_in(d) };
    looked.insert(d.to_path_buf(), here);
    true
}
