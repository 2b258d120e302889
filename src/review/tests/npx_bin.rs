//! What `npx sandspawn` runs (`npx_bin`, `Meta::own_links`). Left open by host28's fix: a change
//! set that repointed `node_modules/.bin/sandspawn` listed it as an ordinary entry, and apply
//! landed it; the host's next `npx sandspawn` ran the planted script with no sandbox.

use super::*;
use crate::planted::RiskKind;

const BIN: &str = "node_modules/.bin/sandspawn";

/// sandspawn installed in the workspace, its bin link recorded as the set's (`own_links`).
fn installed(record: bool) -> Fixture {
    let mut f = fixture();
    put(&f.ws, "node_modules/sandspawn/bin/sandspawn.js", "// the CLI");
    std::fs::create_dir(f.ws.join("node_modules/.bin")).unwrap();
    std::os::unix::fs::symlink("../sandspawn/bin/sandspawn.js", f.ws.join(BIN)).unwrap();
    if record {
        f.set.meta.own_links = vec![f.ws.join(BIN)];
    }
    begin_now(&mut f);
    f
}

#[test]
fn the_recorded_bin_link_changed_removed_or_swapped_above_is_held_back() {
    for how in ["repointed", "removed", "node_modules a link", "node_modules removed"] {
        let f = installed(true);
        let up = f.set.upper(0);
        std::fs::create_dir_all(up.join("node_modules/.bin")).unwrap();
        let at = match how {
            "repointed" => {
                std::os::unix::fs::symlink("../.evil", up.join(BIN)).unwrap();
                "/node_modules/.bin/sandspawn"
            }
            "removed" => {
                whiteout(&up.join(BIN));
                "/node_modules/.bin/sandspawn"
            }
            _ => {
                std::fs::remove_dir_all(up.join("node_modules")).unwrap();
                if how == "node_modules a link" {
                    put(&up, "evil/.bin/sandspawn", "#!/bin/sh\ntouch /tmp/x\n");
                    std::os::unix::fs::symlink("evil", up.join("node_modules")).unwrap();
                } else {
                    whiteout(&up.join("node_modules"));
                }
                "/node_modules"
            }
        };
        let risks = risks_of(&f);
        assert!(risks.contains(&(at.to_string(), RiskKind::ProtectedNameCreated)), "{how}: {risks:?}");
        let out = apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
        assert_eq!(std::fs::read_link(f.ws.join(BIN)).unwrap(), Path::new("../sandspawn/bin/sandspawn.js"), "{how}: {out:?}");
    }
}

#[test]
fn a_bin_sandspawn_in_any_node_modules_is_held_back_by_name() {
    // Not recorded (another copy ran the set, or a nested project): judged by its name.
    for (rel, at) in [(BIN, BIN), ("pkg/node_modules/.bin/sandspawn", "pkg/node_modules/.bin/sandspawn"), ("pkg/node_modules/.bin", "pkg/node_modules/.bin")] {
        let f = installed(false);
        let up = f.set.upper(0);
        std::fs::create_dir_all(up.join(rel).parent().unwrap()).unwrap();
        std::os::unix::fs::symlink("../.evil", up.join(rel)).unwrap();
        assert_eq!(risks_of(&f), [(format!("/{at}"), RiskKind::ProtectedNameCreated)], "{rel}");
        apply(&f.set, &f.lock, &Request { paths: None, force: false }).unwrap();
        assert!(std::fs::symlink_metadata(f.ws.join(rel)).map_or(true, |m| !m.file_type().is_symlink() || rel == BIN), "{rel}");
        assert_eq!(std::fs::read_link(f.ws.join(BIN)).unwrap(), Path::new("../sandspawn/bin/sandspawn.js"), "{rel}");
    }
    // Other bin links, and removing one not recorded, are no risk.
    let f = installed(false);
    let up = f.set.upper(0);
    std::fs::create_dir_all(up.join("node_modules/.bin")).unwrap();
    std::os::unix::fs::symlink("../tsc/bin/tsc", up.join("node_modules/.bin/tsc")).unwrap();
    whiteout(&up.join(BIN));
    assert_eq!(risks_of(&f), []);
}

/// Found by an attacker's review (fix29): what `npx sandspawn` runs from the `.bin` before
/// sandspawn's code (`.bin/sh`, `.bin/node`...) was guarded beside the copy that ran the set only;
/// planted by a set another copy made, it landed. Judged by name where the host's `.bin` holds a
/// `sandspawn`; elsewhere (another project's `.bin`, no sandspawn there) it is an ordinary entry.
#[test]
fn what_npx_runs_first_beside_a_bin_sandspawn_is_held_back_by_name() {
    for name in ["sh", "node", "dirname"] {
        let f = installed(false);
        let up = f.set.upper(0);
        put(&up, &format!("node_modules/.bin/{name}"), "#!/bin/sh\ntouch /tmp/x\n");
        put(&up, &format!("pkg/node_modules/.bin/{name}"), "#!/bin/sh\n");
        assert_eq!(risks_of(&f), [(format!("/node_modules/.bin/{name}"), RiskKind::ProtectedNameCreated)], "{name}");
    }
}
