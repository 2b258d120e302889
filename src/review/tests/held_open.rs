//! A file of the set some process holds open for writing when a run ends (a descriptor a run
//! passed on, or a mapping of it): dropped from the set and reported, the rest kept. Found by an
//! attacker's review (revd38): written through a shared mapping after the set was shown, such a
//! file kept its ctime, and the apply of the shown revision landed it.

use super::*;
use crate::review::held_open::drop_held_open;

#[test]
fn a_file_held_open_for_writing_is_dropped_and_said() {
    let f = fixture();
    let upper = f.set.upper(0);
    put(&upper, "a/held.sh", "echo shown\n");
    put(&upper, "a/read.txt", "kept\n");
    put(&upper, "free.txt", "kept\n");
    // Held for writing, and for reading only: only the first is a writer outside the runs.
    let writer = std::fs::OpenOptions::new().write(true).open(upper.join("a/held.sh")).unwrap();
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

