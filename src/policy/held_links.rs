//! The symlinks in directly written roots that policy paths are resolved through (`policy_links`:
//! `denyRead`, `readOnlyPaths`, `writableRoots`), held for as
//! long as a run whose policy was resolved through them lives: one record per link in this process,
//! as the first of those runs found it.
//!
//! Why: a run may swap such a link (`rm cfg; ln -s other cfg`) and keep running. Its own check after
//! it puts the link back (`planted::detect`), but a run started meanwhile with the same `denyRead`
//! entry resolved it through the swapped link, masked `other` and read `real`. Now a policy resolved
//! while a link is held follows the link the way the record says (`paths::walk_links`) as well as
//! the way it leads now: both targets are masked (stricter, never looser), the run reports it, and
//! whichever of the holders ends first puts the link back as recorded.
//!
//! While no run holds a link, nothing is recorded: a link the user changes then is taken as it is
//! by the next run. One changed while a run holds it is taken for that run's doing.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use super::held_links_shared::{self as shared, Shared};
use super::paths::LinkOnTheWay;

/// A link as recorded, shared by the runs that hold it.
#[derive(Debug)]
struct Record {
    link: LinkOnTheWay,
    /// How many times a holder put it back: a holder that finds it as recorded after its run, but
    /// this count moved since it started, was alive while it was changed.
    put_back: u64,
    /// This process's hold on the record shared with its user's other processes (`held_links_shared`).
    shared: Option<Shared>,
}

/// The records of the links held now (a record whose holders all ended is gone).
static HELD: Mutex<BTreeMap<PathBuf, Weak<Mutex<Record>>>> = Mutex::new(BTreeMap::new());

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The held links, locked while a policy's paths are walked and their links held, so
/// that what the walk followed and what is held are the same.
pub(crate) struct Held(MutexGuard<'static, BTreeMap<PathBuf, Weak<Mutex<Record>>>>, HashSet<String>);

/// Why the held links' records are shared with no other process, for the result's `notEnforced`
/// (`held_links_shared::unshared_why`).
pub(crate) fn unshared_why() -> Option<String> {
    shared::unshared_why()
}

impl Held {
    /// Second: the shared records' names, listed once (`held_links_shared`).
    pub(crate) fn lock() -> Held {
        Held(lock(&HELD), shared::listed())
    }

    /// The link at `path` as its record has it, if a run holds it: one of this process, or of
    /// another process of this user's.
    pub(crate) fn recorded(&self, path: &Path) -> Option<LinkOnTheWay> {
        match self.0.get(path).and_then(Weak::upgrade) {
            Some(r) => Some(lock(&r).link.clone()),
            None => shared::recorded(&self.1, path),
        }
    }

    /// Hold `link` (as the walk met it: a held one as recorded) for a run, until it ends.
    pub(crate) fn hold(&mut self, link: LinkOnTheWay) -> HeldLink {
        self.0.retain(|_, r| r.strong_count() > 0);
        let record = match self.0.get(&link.path).and_then(Weak::upgrade) {
            Some(record) => record,
            None => {
                // Held by another process too: as its record has it (the walk met it so already).
                let (shared, theirs) = Shared::hold(&link).map_or((None, None), |(s, t)| (Some(s), t));
                let link = theirs.unwrap_or(link);
                let record = Arc::new(Mutex::new(Record { link, put_back: 0, shared }));
                let path = lock(&record).link.path.clone();
                self.0.insert(path, Arc::downgrade(&record));
                record
            }
        };
        let (path, seen, found_changed) = {
            let r = lock(&record);
            (r.link.path.clone(), r.put_back, !r.link.is_still_there())
        };
        HeldLink { path, hold: Arc::new(Mutex::new(Some(Hold { record, seen, found_changed }))) }
    }
}

/// One run's hold on a link (clones of a policy share it); let go by `settle`, or when the last
/// clone is dropped.
#[derive(Debug, Clone)]
pub struct HeldLink {
    pub path: PathBuf,
    hold: Arc<Mutex<Option<Hold>>>,
}

#[derive(Debug)]
struct Hold {
    record: Arc<Mutex<Record>>,
    seen: u64,
    found_changed: bool,
}

impl PartialEq for HeldLink {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.hold, &other.hold)
    }
}
impl Eq for HeldLink {}

/// What became of a held link during a run's life (`HeldLink::settle`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    /// The link as recorded.
    pub link: LinkOnTheWay,
    /// When the run started, it led elsewhere than the record says (a concurrent run, or the user,
    /// had changed it): both targets were masked.
    pub found_changed: bool,
    /// It was not as recorded after the run: what `put_back` said of putting it back.
    pub put_back: Option<String>,
    /// It was as recorded after the run, but another holder had put it back meanwhile.
    pub put_back_by_another: bool,
}

impl HeldLink {
    /// After the run: if the link is not as recorded, `put_back` puts it back (and says how); then
    /// the hold ends. The record is locked meanwhile, so that two runs ending together do not both
    /// put it back. `None` when the hold had already ended.
    pub fn settle(&self, put_back: impl FnOnce(&LinkOnTheWay) -> String) -> Option<Settled> {
        let hold = lock(&self.hold).take()?;
        let mut record = lock(&hold.record);
        let mut settled = Settled { link: record.link.clone(), found_changed: hold.found_changed, put_back: None, put_back_by_another: false };
        if record.link.is_still_there() {
            settled.put_back_by_another = record.put_back != hold.seen;
            return Some(settled);
        }
        // Put back by a holder in another process: made again, as its record now says.
        let target = record.link.target.clone();
        if let Some(now) = record.shared.as_mut().and_then(Shared::reread).filter(|l| l.target == target && l.is_still_there()) {
            record.link = now;
            settled.put_back_by_another = true;
            return Some(settled);
        }
        settled.put_back = Some(put_back(&record.link));
        // Made again: a new inode and ctime, the same target. The other holders compare with this.
        if let Some(now) = LinkOnTheWay::read(&record.link.path).filter(|now| now.target == record.link.target) {
            if let Some(s) = record.shared.as_mut() {
                s.rewrite(&now);
            }
            record.link = now;
            record.put_back += 1;
        }
        Some(settled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_held_as_the_first_holder_found_it_until_the_last_one_ends() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::os::unix::fs::symlink("real", r.join("cfg")).unwrap();
        let cfg = r.join("cfg");
        let first = Held::lock().hold(LinkOnTheWay::read(&cfg).unwrap());
        std::fs::remove_file(&cfg).unwrap();
        std::os::unix::fs::symlink("other", &cfg).unwrap();
        let mut held = Held::lock();
        let recorded = held.recorded(&cfg).unwrap();
        assert_eq!(recorded.target, PathBuf::from("real"));
        let second = held.hold(recorded);
        drop(held);
        let remake = |l: &LinkOnTheWay| {
            std::fs::remove_file(&l.path).unwrap();
            std::os::unix::fs::symlink(&l.target, &l.path).unwrap();
            "made again".to_string()
        };
        let s = second.settle(remake).unwrap();
        assert!(s.found_changed && s.put_back.as_deref() == Some("made again") && !s.put_back_by_another, "{s:?}");
        assert_eq!(std::fs::read_link(&cfg).unwrap(), PathBuf::from("real"));
        assert_eq!(second.settle(|_| unreachable!()), None, "settled once");
        let s = first.settle(|_| panic!("already put back")).unwrap();
        assert!(!s.found_changed && s.put_back.is_none() && s.put_back_by_another, "{s:?}");
        assert_eq!(Held::lock().recorded(&cfg), None, "no holder left");
        // Nobody holds it: a change is taken as it is.
        std::fs::remove_file(&cfg).unwrap();
        std::os::unix::fs::symlink("mine", &cfg).unwrap();
        let third = Held::lock().hold(LinkOnTheWay::read(&cfg).unwrap());
        assert_eq!(Held::lock().recorded(&cfg).unwrap().target, PathBuf::from("mine"));
        drop(third);
        assert_eq!(Held::lock().recorded(&cfg), None, "dropped: let go");
    }
}
