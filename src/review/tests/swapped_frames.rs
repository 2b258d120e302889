//! A directory swapped on the host while the set is applied. Found by an attacker's review
//! (race18/apply_race.js): the set adds `docs/remote.git/hooks/post-receive`, no risk as `docs` is
//! a plain folder; during the apply a direct run exchanged `docs` with `repos`, which holds a bare
//! repository it cannot write (a read-only carve-out). The judge looked at the host by path, apply
//! wrote through the directories it had opened: the hook landed in `repos/remote.git/hooks` and
//! the host's `git push` ran it. Each level is now judged through the directory apply writes
//! through.

use super::*;
use crate::review::apply::AROUND_CHILD;

fn exchange(a: &Path, b: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let (a, b) = (std::ffi::CString::new(a.as_os_str().as_bytes()).unwrap(), std::ffi::CString::new(b.as_os_str().as_bytes()).unwrap());
    // SAFETY: valid strings.
    let rc = unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
}

#[test]
fn a_bare_repository_swapped_in_while_applying_keeps_its_hooks() {
    let mut f = fixture();
    put(&f.ws, "docs/README", "docs\n");
    put(&f.ws, "repos/remote.git/HEAD", "ref: refs/heads/main\n");
    put(&f.ws, "repos/remote.git/config", "[core]\n\tbare = true\n");
    std::fs::create_dir_all(f.ws.join("repos/remote.git/objects/info")).unwrap();
    std::fs::create_dir_all(f.ws.join("repos/remote.git/refs/heads")).unwrap();
    std::fs::create_dir_all(f.ws.join("repos/remote.git/hooks")).unwrap();
    begin_now(&mut f);
    put(&f.set.upper(0), "docs/remote.git/hooks/post-receive", "#!/bin/sh\ntouch /tmp/pwned\n");
    assert_eq!(risks_of(&f), vec![], "in a plain folder, no risk");
    // `docs` is opened while it is `repos`; by path it is the plain folder again.
    let (docs, repos) = (f.ws.join("docs"), f.ws.join("repos"));
    AROUND_CHILD.with(|h| *h.borrow_mut() = Some(Box::new(move |name, _| if name == "docs" { exchange(&docs, &repos) })));
    let out = apply(&f.set, &f.lock, &Request { paths: None, force: false });
    AROUND_CHILD.with(|h| *h.borrow_mut() = None);
    let out = out.unwrap();
    assert!(!f.ws.join("repos/remote.git/hooks/post-receive").exists(), "the hook landed in the bare repository: {out:?}");
    assert!(out.held_back.iter().any(|h| h.risk.kind == crate::planted::RiskKind::HooksWritten), "{out:?}");
    assert!(f.set.dir.exists(), "the hook stays in the set");
}
