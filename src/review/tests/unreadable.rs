//! A directory the run made unreadable. Found by an attacker's review: as an ordinary user, a run's
//! `mkdir -p locked/inner && echo s > locked/inner/f && echo x > after.txt && chmod 000 locked/inner
//! locked` made `applyChangeSet` reject after landing `after.txt` (the walk failed on `locked`).
//! What cannot be read is held back, as what lies past the walk's bounds is, and the rest lands.
//! As root the kernel reads any directory: these tests drop, for their own thread only, the
//! capabilities that let it (an ordinary user's view of a mode `000` directory).

use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::planted::RiskKind;
use crate::test_capabilities::without_dac_override;

/// The set: `after.txt`, and `locked/inner/f` below two directories of mode `mode`.
fn locked(mode: u32) -> Fixture {
    let mut f = fixture();
    put(&f.ws, "keep/k.txt", "k");
    begin_now(&mut f);
    let up = f.set.upper(0);
    put(&up, "locked/inner/f", "secret");
    put(&up, "after.txt", "x");
    for d in ["locked/inner", "locked"] {
        std::fs::set_permissions(up.join(d), std::fs::Permissions::from_mode(mode)).unwrap();
    }
    f
}

#[test]
fn an_unreadable_directory_is_held_back_and_the_rest_lands() {
    // 000: neither listed nor searched; 0300: searched, not listed; 0400: listed, not searched.
    for mode in [0o000, 0o300, 0o400] {
        let f = locked(mode);
        let ws = f.ws.to_string_lossy().into_owned();
        let s = without_dac_override(|| summarize(&f.set, &f.lock, 100).unwrap());
        assert!(s.changes.iter().any(|c| c.path.ends_with("/after.txt")), "{mode:o}: {:?}", s.changes);
        let unread: Vec<&str> = s.host_risks.iter().filter(|r| r.kind == RiskKind::ScanIncomplete).map(|r| r.path.strip_prefix(&ws).unwrap()).collect();
        assert!(!unread.is_empty() && unread.iter().all(|p| p.starts_with("/locked")), "{mode:o}: {:?}", s.host_risks);
        let out = without_dac_override(|| apply(&f.set, &f.lock, &Request { paths: None, force: false }));
        let out = out.unwrap_or_else(|e| panic!("{mode:o}: apply failed after landing part of the set: {e:?}; host: {:?}", std::fs::read_dir(&f.ws).unwrap().map(|e| e.unwrap().file_name()).collect::<Vec<_>>()));
        assert!(out.applied.iter().any(|p| p.ends_with("/after.txt")), "{mode:o}: {out:?}");
        assert!(out.held_back.iter().any(|h| h.path.starts_with(&format!("{ws}/locked"))), "{mode:o}: {out:?}");
        assert!(!f.ws.join("locked/inner/f").exists(), "{mode:o}");
        assert!(f.set.dir.exists(), "{mode:o}: what was not read stays in the set");
    }
}
