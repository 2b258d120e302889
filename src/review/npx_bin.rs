//! What `npx sandspawn` runs, judged on a change set: the package manager's link to sandspawn's
//! command line (`node_modules/.bin/sandspawn`), which a direct run puts back (`own_links`). Left
//! open by host28's fix, then closed: in review mode a run repointed it (or wrote a script over
//! it, or swapped `.bin` for a link to a directory of its own), the change set listed that as an
//! ordinary entry with `hostRisks []`, `applyChangeSet` landed it, and the host's next
//! `npx sandspawn` ran the planted script with no sandbox.
//!
//! Two ways, both held back with what lies below: the entries of the installed sandspawn that ran
//! the set (`Meta::own_links`, guarded from the root by `risks` as a path: any change, a deletion
//! too, or a directory above swapped), and by name (`by_name`) a `sandspawn` written into any
//! `node_modules/.bin` of the roots, or such a `.bin` made a symlink or a file: what ran the set
//! may be another copy (a global one) or the project's may lie deeper, and `npx sandspawn` in
//! that project runs whatever is there. A legitimate `npm install` that makes the same link again
//! is no change of the set (`changes`: an equal symlink is not listed); a new one costs a
//! confirmation (naming the path lands it).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::changes::{Change, ChangeKind, EntryType};
use crate::planted::{HostRisk, RiskKind};

/// What the host does with it, for a risk's detail.
pub const WHAT_IT_DOES: &str = "it is sandspawn's command line as the package manager installs it (node_modules/.bin/sandspawn), what `npx sandspawn` runs: after apply the host's next `npx sandspawn` there would run what the change set put there, with no sandbox";

/// A `sandspawn` created or changed in a `node_modules/.bin` at any depth below the root, or such
/// a `.bin` replaced by a symlink or a file (`parts`: the change's path below `root`); and what
/// `npx sandspawn` runs from a `.bin` that holds the host's `sandspawn` before sandspawn's code
/// (`own_links::runs_first`: `node`, `sh`, the shim's `dirname`, `sed`, `uname`) created or changed
/// there. Found by an attacker's review (fix29): those were guarded beside the copy that ran the
/// set only, so a set made by another copy (a global CLI) planted `.bin/sh` beside the project's
/// link with `hostRisks []`, apply landed it, and the host's next `npx sandspawn` there ran it.
pub fn by_name(root: &Path, parts: &[&OsStr], change: &Change) -> Option<HostRisk> {
    if change.kind == ChangeKind::Deleted {
        return None;
    }
    let k = (0..parts.len().saturating_sub(1)).find(|&k| parts[k] == "node_modules" && parts[k + 1] == ".bin")?;
    let dotbin = || root.join(parts[..=k + 1].iter().collect::<PathBuf>());
    let (at, how) = match parts.get(k + 2) {
        Some(name) if *name == crate::own_links::BIN => (k + 2, "was created or changed in the change set".to_string()),
        Some(name) if parts.len() == k + 3 && crate::own_links::runs_first(name) && dotbin().join(crate::own_links::BIN).symlink_metadata().is_ok() => {
            let name = name.to_string_lossy();
            (k + 2, format!("was created or changed in the change set beside sandspawn's command line in node_modules/.bin (`npx sandspawn` puts .bin first on PATH and runs {name} from there before sandspawn)"))
        }
        None if matches!(change.entry_type, EntryType::Symlink | EntryType::File) => (k + 1, "was made a symlink or a file in the change set, where the package manager's .bin directory was".to_string()),
        _ => return None,
    };
    let path: PathBuf = root.join(parts[..=at].iter().collect::<PathBuf>());
    Some(HostRisk { path: super::changes::shown(&path), kind: RiskKind::ProtectedNameCreated, detail: format!("{how}: {WHAT_IT_DOES}") })
}
