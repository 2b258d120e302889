use super::*;
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;

/// A private held-links directory and a link `cfg -> real` in a directory of its own: what every
/// test here holds, rereads and repoints.
struct Fixture {
    _state: tempfile::TempDir,
    _links: tempfile::TempDir,
    d: PathBuf,
    link: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let state = tempfile::tempdir().unwrap();
        let links = tempfile::tempdir().unwrap();
        let link = links.path().canonicalize().unwrap().join("cfg");
        std::os::unix::fs::symlink("real", &link).unwrap();
        Fixture { d: state.path().join("held-links"), _state: state, _links: links, link }
    }

    /// A hold of the link as it is now (another open file description, as another process's is).
    fn hold(&self) -> (Shared, Option<LinkOnTheWay>) {
        Shared::hold_in(self.d.clone(), &LinkOnTheWay::read(&self.link).unwrap()).unwrap()
    }

    fn repoint(&self, to: &str) {
        std::fs::remove_file(&self.link).unwrap();
        std::os::unix::fs::symlink(to, &self.link).unwrap();
    }

    fn recorded(&self) -> Option<LinkOnTheWay> {
        recorded_in(&self.d, &listed_in(&self.d), &self.link)
    }

    /// The last holder lets go: no record is left, and a link the user repoints since is taken as
    /// it is, not as a stale record had it.
    fn let_go_leaves_nothing(&self, last: Shared) {
        drop(last);
        assert!(listed_in(&self.d).is_empty(), "the last holder left the record: {:?}", listed_in(&self.d));
        self.repoint("other");
        assert_eq!(self.recorded(), None, "a record nobody holds looked held");
        let (again, theirs) = self.hold();
        assert_eq!(theirs, None, "the link taken as the stale record had it");
        drop(again);
    }

    /// Each file of the held-links directory opened for reading (what the Landlock mode's
    /// command, which reads everything, can do), `lock` applied to it; `give_read` first gives the
    /// file the read bit back (its owner may: Landlock does not govern modes).
    fn readers(&self, give_read: bool, lock: impl Fn(&File)) -> Vec<File> {
        let entries = std::fs::read_dir(&self.d).unwrap().flatten();
        entries
            .filter_map(|e| {
                let mode = e.metadata().unwrap().permissions().mode();
                if give_read {
                    std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode((mode & 0o777) | 0o400)).unwrap();
                } else if mode & 0o400 == 0 {
                    return None;
                }
                let f = File::open(e.path()).ok()?;
                lock(&f);
                Some(f)
            })
            .collect()
    }
}

/// A read lock on `len` bytes from `start` (0: to the end) through `f`, which must take.
fn read_lock(f: &File, start: libc::off_t, len: libc::off_t) {
    // SAFETY: fcntl on a descriptor this test owns; a zeroed flock is valid.
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = libc::F_RDLCK as libc::c_short;
    (l.l_start, l.l_len) = (start, len);
    let r = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_OFD_SETLK, &l) };
    assert_eq!(r, 0, "{:?}", std::io::Error::last_os_error());
}

/// Where a write lock through `f` would meet another's lock (its start), if it would.
fn locked_at(f: &File) -> Option<libc::off_t> {
    // SAFETY: fcntl on a descriptor this test owns; a zeroed flock is valid.
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = libc::F_WRLCK as libc::c_short;
    assert_eq!(unsafe { libc::fcntl(f.as_raw_fd(), libc::F_OFD_GETLK, &mut l) }, 0);
    (l.l_type != libc::F_UNLCK as libc::c_short).then_some(l.l_start)
}

#[test]
fn a_record_round_trips_and_names_its_path() {
    let l = LinkOnTheWay { path: PathBuf::from("/w/li\nnk"), target: PathBuf::from("c f\0g".split('\0').next().unwrap()), id: (64769, 12), changed_at: (1_700_000_000, 999) };
    assert_eq!(decode(&encode(&l), &l.path), Some(l.clone()));
    assert_eq!(decode(&encode(&l), Path::new("/w/other")), None, "another path's record (a name's collision)");
    assert_ne!(file_name(Path::new("/w/a")), file_name(Path::new("/w/b")));
}

/// Two holds are two open file descriptions, as two processes' are: the second takes the
/// first's record, `recorded` finds it while held, and the last holder removes the file.
#[test]
fn the_first_holder_writes_the_record_and_the_last_removes_it() {
    let fx = Fixture::new();
    let (first, theirs) = fx.hold();
    assert_eq!(theirs, None, "the first holder");
    fx.repoint("other");
    assert_eq!(fx.recorded().map(|l| l.target), Some(PathBuf::from("real")));
    let (second, theirs) = fx.hold();
    assert_eq!(theirs.map(|l| l.target), Some(PathBuf::from("real")), "joined the first's record");
    drop(first);
    assert!(fx.recorded().is_some(), "still held by the second");
    drop(second);
    assert_eq!(fx.recorded(), None);
    assert!(listed_in(&fx.d).is_empty(), "the last holder removed it");
}

/// Found by an attacker's review (cross28): the Landlock mode's command reads the state
/// directory, and a lock it took on a record through a descriptor opened for reading (a read
/// lock, a `flock`) kept the record looking held after its last holder let go: the file stayed,
/// and a run started later took the link as that stale record had it, not as the user had made
/// it since. It opens what the owner may read only (no capability; this test may run as root).
#[test]
fn a_reader_s_lock_keeps_no_record_held() {
    let fx = Fixture::new();
    let (first, _) = fx.hold();
    let readers = fx.readers(false, |f| {
        read_lock(f, 0, 0);
        // SAFETY: flock on a descriptor this test owns.
        assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH) }, 0);
    });
    assert!(!readers.is_empty(), "the reader opened the record");
    fx.let_go_leaves_nothing(first);
    drop(readers);
}

/// Found by an attacker's review (lock28): `NAME.lock`'s mode 0200 keeps no reader out for good.
/// It is the user's own file, and the Landlock mode does not govern modes (`file-modes`): its
/// command gives it the read bit back, opens it for reading and read-locks all of it but the
/// holder's byte (`F_OFD_GETLK` names it). The next hold through the link then waited in the
/// kernel for as long as the command lived (on the host's main thread, in its policy's
/// resolution), and once the holder let go the record stayed, looking held.
#[test]
fn a_reader_that_chmods_the_lock_file_neither_stalls_a_hold_nor_keeps_the_record() {
    let fx = Fixture::new();
    let (first, _) = fx.hold();
    let readers = fx.readers(true, |f| {
        let ranges = match locked_at(f) {
            Some(at) => vec![(0, at), (at + 1, 0)],
            None => vec![(0, 0)],
        };
        for (start, len) in ranges {
            read_lock(f, start, len);
        }
    });
    assert!(readers.len() >= 2, "the reader opened the record and its lock file");
    let found = LinkOnTheWay::read(&fx.link).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let d = fx.d.clone();
    std::thread::spawn(move || {
        let _ = tx.send(Shared::hold_in(d, &found).map(|(s, theirs)| {
            drop(s);
            theirs
        }));
    });
    let second = rx.recv_timeout(std::time::Duration::from_secs(5));
    assert!(second.is_ok(), "the next hold waited in the kernel for the reader's lock");
    fx.let_go_leaves_nothing(first);
    drop(readers);
}
