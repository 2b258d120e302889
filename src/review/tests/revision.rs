//! A set's revision: the same in its description and in the apply's own walk, unchanged by reads,
//! changed by a run (counted) and by any rewrite, one that puts the size and mtime back included.

use super::*;
use crate::review::revision;

#[test]
fn the_described_revision_is_the_one_apply_checks_and_any_change_moves_it() {
    let f = fixture();
    let upper = f.set.upper(0);
    put(&upper, "run.sh", "safe\n");
    let shown = summarize(&f.set, &f.lock, 100).unwrap().revision;
    assert_eq!(revision::of(&f.set, &f.lock), shown, "the description's walk and the apply's agree");
    assert_eq!(summarize(&f.set, &f.lock, 0).unwrap().revision, shown, "however many changes are listed");
    revision::check(&f.set, &f.lock, &shown).unwrap();

    // A rewrite of the same size, its mtime put back: only the ctime (and the kernel) tell.
    let p = upper.join("run.sh");
    let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&p, "evil\n").unwrap();
    std::fs::File::options().write(true).open(&p).unwrap().set_modified(mtime).unwrap();
    let e = revision::check(&f.set, &f.lock, &shown).unwrap_err();
    assert_eq!(e.code, crate::error::ErrorCode::ChangeSetChanged);
    assert!(e.message.contains("Show it again"), "{}", e.message);

    // A run continuing the set, whatever it writes.
    let now = revision::of(&f.set, &f.lock);
    f.lock.count_a_write(&f.set).unwrap();
    assert_ne!(revision::of(&f.set, &f.lock), now);
    assert!(revision::of(&f.set, &f.lock).starts_with("1-"), "counted in the lock file");

    // A new entry, anywhere.
    let now = revision::of(&f.set, &f.lock);
    put(&upper, "deep/er/evil.sh", "x");
    assert_ne!(revision::of(&f.set, &f.lock), now);
}
