//! The host's symlinks a `denyRead` path is resolved through (`Meta::deny_links`). Left open by the
//! tenth session (closed there for direct runs): with `denyRead: [ws/top/cfg/key]` and `cfg -> real`,
//! a set that removed or replaced `cfg` landed on apply, and the next run's mask moved off
//! `real/key`, which it could then read.

use super::*;
use crate::planted::RiskKind;

/// The host's `cfg -> real` that `denyRead: [ws/top/cfg/key]` resolves through.
fn deny_link() -> Fixture {
    let mut f = fixture();
    put(&f.ws, "top/real/key/secret", "TOPSECRET");
    put(&f.ws, "top/other/key/x", "");
    std::os::unix::fs::symlink("real", f.ws.join("top/cfg")).unwrap();
    f.set.meta.deny_links = vec![f.ws.join("top/cfg")];
    begin_now(&mut f);
    f
}

#[test]
fn the_hosts_link_a_deny_read_path_resolves_through_removed_or_replaced_is_a_risk() {
    for how in ["link", "whiteout", "dir", "parent"] {
        let f = deny_link();
        let up = f.set.upper(0);
        std::fs::create_dir_all(up.join("top")).unwrap();
        match how {
            "link" => std::os::unix::fs::symlink("other", up.join("top/cfg")).unwrap(),
            "whiteout" => whiteout(&up.join("top/cfg")),
            "dir" => std::fs::create_dir_all(up.join("top/cfg/key")).unwrap(),
            _ => {
                std::fs::remove_dir(up.join("top")).unwrap();
                whiteout(&up.join("top"));
            }
        }
        let at = if how == "parent" { "/top" } else { "/top/cfg" };
        assert_eq!(risks_of(&f), [(at.to_string(), RiskKind::ProtectedNameCreated)], "{how}");
        let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
        assert_eq!(std::fs::read_link(f.ws.join("top/cfg")).unwrap(), Path::new("real"), "{how}: {out:?}");
    }
    // What is written where it leads, or beside it, changes no link.
    let f = deny_link();
    put(&f.set.upper(0), "top/real/notes", "x");
    put(&f.set.upper(0), "top/cfg2", "x");
    assert_eq!(risks_of(&f), []);
}
