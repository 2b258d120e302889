//! Seatbelt rules for planted configuration (see `planted`): in every writable root, deny creating
//! or writing a `.git` (`protectGit`) or a protected name at any depth. Seatbelt matches every path
//! the command touches, so unlike bwrap's mounts (which can only cover paths that exist) this
//! prevents what Linux can only detect after the run.
//!
//! The rules restrict each root by its `-D` parameter and match the name with an unanchored regex on
//! one path component, so no path is written into the profile text. Protected names are not enforced
//! inside `node_modules`: published packages contain `.vscode` or `.idea` directories, and denying
//! them would break `npm install` (sandbox-runtime #540); the Linux walk skips `node_modules` too.

use crate::policy::ResolvedPolicy;

/// The rules, to follow the `(allow file-write* ...)` they restrict (SBPL: the last match wins).
pub fn rules(policy: &ResolvedPolicy) -> String {
    let mut s = String::new();
    let names = (!policy.protected_names.is_empty()).then(|| {
        let alternatives: Vec<String> = policy.protected_names.iter().map(|n| regex_escape(n)).collect();
        alternatives.join("|")
    });
    for (i, _) in policy.writable_roots.iter().enumerate() {
        let root = format!("(subpath (param \"WRITABLE_ROOT_{i}\"))");
        if policy.protect_git {
            s.push_str(&format!("(deny file-write* (require-all {root} (regex #\"/\\.git(/.*)?$\")))\n"));
        }
        if let Some(names) = &names {
            s.push_str(&format!(
                "(deny file-write* (require-all {root} (regex #\"/({names})(/.*)?$\") (require-not (regex #\"/node_modules/\"))))\n"
            ));
        }
    }
    s
}

/// A file name as a literal in a Seatbelt regex. `planted::names` rejects `"`, `\` and control
/// characters, which a `#"..."` literal could not hold verbatim.
fn regex_escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len() * 2);
    for c in name.chars() {
        if ".+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_every_regex_operator() {
        assert_eq!(regex_escape(".mcp.json"), "\\.mcp\\.json");
        assert_eq!(regex_escape("a+b*c?(d)|[e]{f}^g$"), "a\\+b\\*c\\?\\(d\\)\\|\\[e\\]\\{f\\}\\^g\\$");
    }
}
