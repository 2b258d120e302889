//! A file of the set some process holds open for writing when a run ends (a descriptor a run
//! passed on, or a mapping of it): dropped from the set and reported, the rest kept. Found by an
//! attacker's review (revd38): written through a shared mapping after the set was shown, such a
//! file kept its ctime, and the apply of the shown revision landed it.

use std::io::BufRead;
use std::process::{Child, Command, Stdio};

use super::*;
use crate::review::held_open::drop_held_open;

/// `put`, written by a child process: this test binary never holds the file open for writing. A
/// child another test forks (`fork` without exec, or any spawn before its exec) holds a copy of
/// every descriptor of the binary meanwhile, a writer of the set's file among them, and the kernel
/// then refuses the read lease that asks whether anyone writes it: the file was dropped as held
/// open for writing by that child (each test below asks about files it has just written).
fn put_from_child(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let status = Command::new("sh").args(["-c", "printf %s \"$1\" > \"$2\"", "sh", text]).arg(&p).status().unwrap();
    assert!(status.success(), "{status:?}");
}

/// A process outside the runs holding `path` open for writing (not this binary, as above) until
/// dropped.
struct Writer(Child);

impl Writer {
    fn hold(path: &Path) -> Writer {
        let mut child = Command::new("sh").args(["-c", "exec 3>>\"$1\"; echo held; exec sleep 60", "sh"]).arg(path).stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line, "held\n");
        Writer(child)
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_file_held_open_for_writing_is_dropped_and_said() {
    let f = fixture();
    let upper = f.set.upper(0);
    put_from_child(&upper, "a/held.sh", "echo shown\n");
    put_from_child(&upper, "a/read.txt", "kept\n");
    put_from_child(&upper, "free.txt", "kept\n");
    // Held for writing, and for reading only: only the first is a writer outside the runs.
    let writer = Writer::hold(&upper.join("a/held.sh"));
    let reader = std::fs::File::open(upper.join("a/read.txt")).unwrap();
    let risks = drop_held_open(&f.set);
    assert!(!upper.join("a/held.sh").exists(), "{risks:?}");
    assert!(upper.join("a/read.txt").exists() && upper.join("free.txt").exists());
    assert_eq!(risks.len(), 1, "{risks:?}");
    assert_eq!(risks[0].path, f.ws.join("a/held.sh").to_string_lossy());
    assert!(risks[0].detail.contains("dropped from the change set"), "{risks:?}");
    drop((writer, reader));
    assert!(drop_held_open(&f.set).is_empty(), "nothing held: nothing said");
}


/// What the check could not ask at a run's end (recorded by `unasked`; a user other than root
/// meets it where the command left a file or a directory unreadable) is said where the set is
/// described and never applied, whatever its permissions are by then (found by an attacker's
/// review, rev39: a holder gave the mode back once the check had passed, and the apply landed
/// what it wrote after the set was shown). The rest lands; a record that cannot be read lands
/// nothing.
#[test]
fn what_could_not_be_asked_is_said_and_never_applied() {
    let mut f = fixture();
    begin_now(&mut f);
    let upper = f.set.upper(0);
    put(&upper, "d/inside.sh", "below a directory that could not be listed\n");
    put(&upper, "e/file.sh", "a file that could not be opened\n");
    put(&upper, "e/free.txt", "asked\n");
    let id = |rel: &str| crate::review::unasked::id_of(&upper.join(rel)).unwrap();
    crate::review::unasked::record(&f.set, &[id("d"), id("e/file.sh")]).unwrap();
    let s = summarize(&f.set, &f.lock, 100).unwrap();
    let said: Vec<&str> = s.host_risks.iter().filter(|r| r.detail.contains("could not be asked")).map(|r| r.path.as_str()).collect();
    assert_eq!(said, [f.ws.join("d").to_str().unwrap(), f.ws.join("e/file.sh").to_str().unwrap()], "{s:?}");
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: true }).unwrap();
    let refused: Vec<&str> = out.conflicts.iter().filter(|c| c.reason.contains("could not be asked")).map(|c| c.path.as_str()).collect();
    assert_eq!(refused, [f.ws.join("d").to_str().unwrap(), f.ws.join("e/file.sh").to_str().unwrap()], "{out:?}");
    assert!(!f.ws.join("d").exists() && !f.ws.join("e/file.sh").exists(), "{out:?}");
    assert_eq!(std::fs::read_to_string(f.ws.join("e/free.txt")).unwrap(), "asked\n");
    assert!(upper.join("d/inside.sh").exists() && upper.join("e/file.sh").exists(), "they stay in the set");
    // A run that leaves nothing unasked clears the record.
    drop_held_open(&f.set);
    assert!(crate::review::unasked::read(&f.set).unwrap().is_empty());
    std::fs::write(f.set.dir.join("unasked"), "not a record\n").unwrap();
    assert!(apply(&f.set, &f.lock, &Request { paths: None, force: false }).is_err(), "an unreadable record lands nothing");
    assert!(summarize(&f.set, &f.lock, 100).unwrap().host_risks.iter().any(|r| r.detail.contains("nothing of the set is applied")));
}

/// A file the kernel refused a read lease on for another reason than a writer (here another user's
/// file without CAP_LEASE, `EACCES`; a host with `fs.leases-enable` 0 or a filesystem without
/// leases refuses every one) could not be asked: recorded, said where the set is described and
/// never applied, `force` or not, like a file that could not be opened. Found by an attacker's
/// review (left40): it was said in the run's result alone, and the apply landed it, so a holder of
/// its descriptor could rewrite it through a mapping after the set was shown.
#[test]
fn a_file_the_kernel_refused_a_lease_on_is_never_applied() {
    // SAFETY: no arguments.
    if unsafe { libc::geteuid() } != 0 {
        // Only root can give a file another owner; CI and the attackers' machine run as root.
        eprintln!("needs root (to give the set's file another owner); not run");
        return;
    }
    let mut f = fixture();
    begin_now(&mut f);
    let upper = f.set.upper(0);
    put_from_child(&upper, "refused.sh", "written by a holder after the set was shown\n");
    put_from_child(&upper, "asked.txt", "asked\n");
    std::os::unix::fs::chown(upper.join("refused.sh"), Some(12345), None).unwrap();
    let risks = crate::test_capabilities::without_lease(|| drop_held_open(&f.set));
    assert!(risks.iter().any(|r| r.detail.contains("read lease was refused")), "{risks:?}");
    assert!(upper.join("refused.sh").exists(), "not held for writing: kept in the set");
    let s = summarize(&f.set, &f.lock, 100).unwrap();
    let said: Vec<&str> = s.host_risks.iter().filter(|r| r.detail.contains("could not be asked")).map(|r| r.path.as_str()).collect();
    assert_eq!(said, [f.ws.join("refused.sh").to_str().unwrap()], "{s:?}");
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: true }).unwrap();
    assert!(out.conflicts.iter().any(|c| c.path == f.ws.join("refused.sh").to_str().unwrap() && c.reason.contains("could not be asked")), "{out:?}");
    assert!(!f.ws.join("refused.sh").exists(), "never applied: {out:?}");
    assert_eq!(std::fs::read_to_string(f.ws.join("asked.txt")).unwrap(), "asked\n");
}
