//! The files a dev environment's configuration pulls in from the workspace, kept as the files a
//! mise configuration names are (`mise_programs`). Found by an attacker's review (host41; left by
//! host40, which made `devbox.json` and `devenv.yaml` reported names): a shell's directory hook
//! builds and evals these environments on `cd`, and what they include is evaluated with them.
//!
//! - devbox: each `include` of a `devbox.json` that is `path:<file or directory>` is a local
//!   plugin (a directory's `plugin.json`); `devbox shellenv --init-hook` (the `.envrc` `devbox
//!   generate direnv` writes, at each cd; `devbox shell`, `devbox run`) runs the plugin's
//!   `shell.init_hook` and exports its `env` as the project's own. A run rewrote
//!   `plugins/p/plugin.json` with `hostRisks` `[]`.
//! - devenv: each local path (`./`, `../`, `/`) among a `devenv.yaml`'s `imports` (and a
//!   `devenv.local.yaml`'s) is evaluated with the project's `devenv.nix`: `use devenv` (an allowed
//!   `.envrc`'s) builds the shell again when it changes and evals its `enterShell` in the host's
//!   shell at the next prompt. A file so named (`./nix/mod.nix`) was rewritten with `hostRisks`
//!   `[]`; a directory's `devenv.nix` and `devenv.yaml` are reported names already, and the files
//!   a `.nix` file imports in turn are Nix code of the project, as `flake.nix`'s are.
//!
//! A devbox.json that is not JSON is `capped` (said in `notEnforced`); a devenv.yaml is read by
//! lines as a compose file's `include` is (`compose_files::scalars_of`). At most `MAX_PROGRAMS`
//! per file, then `capped`.

use std::path::Path;
use std::rc::Rc;

use super::config_reads::{self, Judged, Reads};
use super::named_files::from_base;
pub use super::named_files::{Named, MAX_PROGRAMS};

/// What one file gave: the paths as written, and whether it could not be read whole.
pub type Words = Rc<(Vec<String>, bool)>;

/// devbox's configuration (`names::REPORTED`).
pub const DEVBOX: &str = "devbox.json";
/// devenv's configurations (`names::REPORTED`) whose `imports` are read.
pub const DEVENV: &[&str] = &["devenv.yaml", "devenv.local.yaml"];
/// The file a devbox plugin directory holds.
const PLUGIN: &str = "plugin.json";

/// Whether `entry` (a walked name) is a devbox or devenv configuration read here.
pub fn is_entry(entry: &Path) -> bool {
    entry.file_name().is_some_and(|n| n == DEVBOX || DEVENV.iter().any(|f| n == *f))
}

/// `named_within` with a budget of its own.
pub fn named(entry: &Path) -> Named {
    named_within(entry, &mut Reads::new(config_reads::BUDGET), config_reads::TOOL_PROGRAMS_IN_ALL)
}

/// The files `entry` pulls in, at most `most` of them (then `capped`).
pub fn named_within(entry: &Path, reads: &mut Reads<Words>, most: usize) -> Named {
    let base = entry.parent().unwrap_or(Path::new("/"));
    let devbox = entry.file_name().is_some_and(|n| n == DEVBOX);
    let words = match reads.judge(entry, |text| Rc::new(if devbox { devbox_includes(text) } else { devenv_imports(text) })) {
        Judged::Judged(words) => words,
        Judged::Absent => return Named::default(),
        Judged::Unjudged => return Named::unread(),
    };
    let mut out = Named { programs: Vec::new(), capped: words.1 || words.0.len() > MAX_PROGRAMS };
    for w in words.0.iter().take(MAX_PROGRAMS) {
        if out.full(most) {
            break;
        }
        let p = from_base(w, base);
        match (p.is_dir(), devbox) {
            // A plugin directory: devbox reads its plugin.json.
            (true, true) => {
                out.keep(w, p.join(PLUGIN));
            }
            // An imported directory's devenv.nix and devenv.yaml are reported names.
            (true, false) => {}
            (false, _) => {
                out.keep(w, p);
            }
        }
    }
    out
}

/// The local plugins of a devbox.json's `include` (`path:` ones), as written; not JSON: unread.
fn devbox_includes(text: &str) -> (Vec<String>, bool) {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&super::jsonc::plain(text)) else { return (Vec::new(), true) };
    let Some(list) = v.get("include").and_then(|i| i.as_array()) else { return (Vec::new(), false) };
    let words: Vec<String> = list.iter().filter_map(|i| i.as_str()?.strip_prefix("path:")).filter(|w| !w.is_empty()).map(String::from).take(MAX_PROGRAMS + 1).collect();
    (words, false)
}

/// The local paths among a devenv.yaml's `imports`, as written (an input's `name/path` is not one).
fn devenv_imports(text: &str) -> (Vec<String>, bool) {
    let (found, more) = super::compose_files::scalars_of(text, &[("imports", None)]);
    let local = found.into_iter().filter(|w| w.starts_with("./") || w.starts_with("../") || w.starts_with('/') || w == "." || w == "..");
    (local.collect(), more)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_devbox_s_local_plugins_and_devenv_s_imported_files() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["plugins/p", "plugins/dir", "nix", "frontend"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let devbox = dir.path().join(DEVBOX);
        std::fs::write(&devbox, "{\n // a comment\n \"include\": [\"path:./plugins/p/plugin.json\", \"path:plugins/dir\", \"github:x/y\", \"plugin:nginx\"],\n}\n").unwrap();
        let want = [dir.path().join("./plugins/p/plugin.json"), dir.path().join("plugins/dir/plugin.json")];
        assert_eq!(named(&devbox).programs, want.to_vec());
        std::fs::write(&devbox, "{ not json").unwrap();
        assert!(named(&devbox).capped, "not JSON: said");
        let devenv = dir.path().join("devenv.yaml");
        std::fs::write(&devenv, "inputs:\n  nixpkgs:\n    url: github:cachix/devenv-nixpkgs/rolling\nimports:\n  - ./nix/mod.nix\n  - ./frontend\n  - devenv/modules/x\n  - ../shared/common.nix\n").unwrap();
        let n = named(&devenv);
        assert_eq!(n.programs, [dir.path().join("./nix/mod.nix")].to_vec(), "a directory's devenv.nix is a reported name; an input's path and a missing directory's file are not kept: {n:?}");
        assert!(is_entry(Path::new("/w/devenv.local.yaml")) && !is_entry(Path::new("/w/devenv.nix")));
    }
}
