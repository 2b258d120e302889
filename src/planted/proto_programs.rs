//! The WASM plugins a proto configuration (`.prototools`, a reported name) loads from the
//! workspace, kept as the files a mise configuration names are (`mise_programs`). Found by an
//! attacker's review (hostb38): proto's shell activation (`eval "$(proto activate zsh)"`) loads,
//! at every change of directory, the plugin of each tool the `.prototools` of the cwd and every
//! parent pins, and a `[plugins]` entry `"file://./plugins/tool.wasm"` is a file of the
//! workspace; a WASM plugin runs programs on the host through proto's `exec_command` host
//! function (warpgate-api's host_funcs.rs). A run that rewrote the plugin had the host's next `cd`
//! there run its code, with no trust step and nothing said.
//!
//! Read as TOML (`toml_strings`): each string under `plugins` (`[plugins]`, `[plugins.tools]`,
//! `[plugins.backends]`) that starts with `file://`, and each env file (`[env] file`,
//! `[tools.<id>.env] file`: `env_file`), its path taken from the directory holding the
//! file, as proto's `make_absolute` takes it (crates/core/src/config.rs). Not TOML this reads is
//! `capped` (said in `notEnforced`). At most `MAX_PROGRAMS` per file, then `capped`.

use std::path::Path;
use std::rc::Rc;

use super::config_reads::{self, Judged, Reads};
use super::named_files::from_base;
pub use super::named_files::{Named, MAX_PROGRAMS};
use super::toml_strings;

/// What one file gave: the plugin paths as written, and whether it could not be read whole.
pub type Words = Rc<(Vec<String>, bool)>;

/// proto's configuration file (`names::REPORTED`).
pub const FILE: &str = ".prototools";

/// Whether `entry` (a walked name) is a proto configuration.
pub fn is_entry(entry: &Path) -> bool {
    entry.file_name().is_some_and(|n| n == FILE)
}

/// `named_within` with a budget of its own.
pub fn named(entry: &Path) -> Named {
    named_within(entry, &mut Reads::new(config_reads::BUDGET), config_reads::TOOL_PROGRAMS_IN_ALL)
}

/// The plugin files `entry` loads, at most `most` of them (then `capped`).
pub fn named_within(entry: &Path, reads: &mut Reads<Words>, most: usize) -> Named {
    let base = entry.parent().unwrap_or(Path::new("/"));
    let words = match reads.judge(entry, |text| Rc::new(plugin_words(text))) {
        Judged::Judged(words) => words,
        Judged::Absent => return Named::default(),
        Judged::Unjudged => return Named::unread(),
    };
    let mut out = Named { programs: Vec::new(), capped: words.1 || words.0.len() > MAX_PROGRAMS };
    for w in words.0.iter().take(MAX_PROGRAMS) {
        if out.full(most) {
            break;
        }
        out.keep(w, from_base(w, base));
    }
    out
}

/// The paths of the `file://` locators under `plugins` and of the env files (`env_file`), as
/// written (at most `MAX_PROGRAMS` + 1).
fn plugin_words(text: &str) -> (Vec<String>, bool) {
    let read = toml_strings::strings(text);
    let words = read
        .found
        .iter()
        .filter_map(|(key, v)| if env_file(key) { Some(v.as_str()) } else { key.first().filter(|k| *k == "plugins").and(v.strip_prefix("file://")) })
        .filter(|w| !w.is_empty())
        .map(String::from)
        .take(MAX_PROGRAMS + 1)
        .collect();
    (words, read.unread)
}

/// Whether `key` names a dotenv file proto loads: `[env] file` or a tool's `[tools.<id>.env] file`
/// (proto's `ENV_FILE_KEY`, taken from the file's directory, loaded by `get_env_vars` with the
/// variables the shell activation exports at every cd: a `PROMPT_COMMAND` or `BASH_ENV` written
/// there runs at the host's next prompt; found by an attacker's review, rev39).
fn env_file(key: &[String]) -> bool {
    matches!(key, [env, file] if env == "env" && file == "file") || matches!(key, [tools, _, env, file] if tools == "tools" && env == "env" && file == "file")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_file_plugins_of_every_plugins_table() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["plugins", "config"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let file = dir.path().join(FILE);
        std::fs::write(
            &file,
            "node = \"20\"\n[plugins]\nmy = \"file://./plugins/my.wasm\"\nweb = \"https://example.invalid/p.wasm\"\n\
             [plugins.tools]\nt = \"file://plugins/t.wasm\"\n[plugins.backends]\nb = \"file:///opt/b.wasm\"\n[env]\nX = \"file://env\"\n",
        )
        .unwrap();
        let n = named(&file);
        let want = [dir.path().join("./plugins/my.wasm"), dir.path().join("plugins/t.wasm"), "/opt/b.wasm".into()];
        assert_eq!(n.programs, want.to_vec(), "{n:?}");
        assert!(!n.capped);
        std::fs::write(&file, "[env]\nfile = \"config/a.env\"\nB = \"x\"\n[tools.node.env]\nfile = 'b.env'\n[tools.node]\nfile = \"not-an-env\"\n").unwrap();
        assert_eq!(named(&file).programs, [dir.path().join("config/a.env"), dir.path().join("b.env")], "the env files proto loads");
        std::fs::write(&file, "[plugins\nmy = \"file://./plugins/my.wasm\"\n").unwrap();
        assert!(named(&file).capped, "not TOML it reads: said");
    }
}
