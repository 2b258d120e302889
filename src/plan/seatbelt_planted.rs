//! Seatbelt rules for planted configuration (see `planted`): in every writable root, deny creating
//! or writing a `.git` (`protectGit`) or a protected name at any depth. Seatbelt matches every path
//! the command touches, so unlike bwrap's mounts (which can only cover paths that exist) this
//! prevents what Linux can only detect after the run.
//!
//! The rules restrict each root by its `-D` parameter and match the name with an unanchored regex on
//! one path component, so no path is written into the profile text. Protected names are not enforced
//! inside `node_modules`: published packages contain `.vscode` or `.idea` directories, and denying
//! them would break `npm install` (sandbox-runtime #540); the Linux walk skips `node_modules` too.
//! Names match in any case (`seatbelt_case`): `.GIT` is `.git` on a case-insensitive volume, and
//! `.vſcode` (U+017F) is `.vscode` to APFS's case folding; a name holding a code point HFS+ ignores
//! is refused when its other letters are those of the names (`ignorable_spelling`).

use super::seatbelt_case::{any_case, ignorable_spelling};
use crate::policy::ResolvedPolicy;

/// Whether `rules` deny `path` below `root` by its name, in any case: `.git` with `protectGit`, a
/// protected name unless `root` lies in a `node_modules` (whose rule would not apply there).
pub fn denied_by_name(policy: &ResolvedPolicy, root: &std::path::Path, path: &std::path::Path) -> bool {
    let Some(name) = path.file_name() else { return false };
    let is = |n: &str| name.eq_ignore_ascii_case(n);
    (policy.protect_git && is(".git"))
        || (!root.components().any(|c| c.as_os_str() == "node_modules") && policy.protected_names.iter().any(|n| n.is_ascii() && is(n)))
}

/// The rules, to follow the `(allow file-write* ...)` they restrict (SBPL: the last match wins).
pub fn rules(policy: &ResolvedPolicy) -> String {
    let mut s = String::new();
    let names = (!policy.protected_names.is_empty()).then(|| {
        let alternatives: Vec<String> = policy.protected_names.iter().map(|n| any_case(n)).collect();
        let all: Vec<&str> = policy.protected_names.iter().map(String::as_str).collect();
        (alternatives.join("|"), ignorable_spelling(&all))
    });
    let git_ignorable = ignorable_spelling(&[".git"]);
    for (i, _) in policy.writable_roots.iter().enumerate() {
        let root = format!("(subpath (param \"WRITABLE_ROOT_{i}\"))");
        if policy.protect_git {
            s.push_str(&format!("(deny file-write* (require-all {root} (regex #\"/{}(/.*)?$\")))\n", any_case(".git")));
            s.push_str(&format!("(deny file-write* (require-all {root} (regex #\"{git_ignorable}\")))\n"));
        }
        if let Some((names, ignorable)) = &names {
            s.push_str(&format!(
                "(deny file-write* (require-all {root} (require-any (regex #\"/({names})(/.*)?$\") (regex #\"{ignorable}\")) (require-not (regex #\"/node_modules/\"))))\n"
            ));
        }
    }
    s
}
