//! The WASM plugins a proto configuration (`.prototools`, a reported name) loads from the
//! workspace, kept as the files a mise configuration names are (`mise_programs`). Found by an
//! attacker's review (hostb38): proto's shell activation (`eval "$(proto activate zsh)"`) loads,
//! at every change of directory, the plugin of each tool the `.prototools` of the cwd and every
//! parent pins, and a `[plugins]` entry `"file://./plugins/tool.wasm"` is a file of the
//! workspace; a WASM plugin runs programs on the host through proto's `exec_command` host
//! function (warpgate-api's host_funcs.rs). A run that rewrote the plugin had the host's next `cd`
//! there run its code, with no trust step and nothing said.
//!
//! Found by an attacker's review (host39): proto loads the dotenv file an `[env]` table's `file`
//! names too (the shared `[env]`'s, each `[tools.<id>.env]`'s and `[backends.<id>.env]`'s;
//! config.rs `push_env_file`), and the activation exports its variables into the shell at every
//! cd (exec_workflow.rs, `get_env_vars`): a `PS1='$(./x.sh)'` or `PROMPT_COMMAND` written there
//! runs at the next prompt. Its name is the project's choice (`config/proto.env`), no reported
//! name, and a run rewrote it with `hostRisks` `[]`.
//!
//! Read as TOML (`toml_strings`): each string under `plugins` (`[plugins]`, `[plugins.tools]`,
//! `[plugins.backends]`) that starts with `file://`, and the string of each `env.file`,
//! `tools.<id>.env.file` and `backends.<id>.env.file`, its path taken from the directory holding
//! the file, as proto's `make_absolute` takes it (crates/core/src/config.rs). Not TOML this reads
//! is `capped` (said in `notEnforced`). At most `MAX_PROGRAMS` per file, then `capped`.

use std::path::Path;
use std::rc::Rc;

use super::config_reads::{self, Judged, Reads};
use super::named_files::from_base;
pub use super::named_files::{Named, MAX_PROGRAMS};
use super::toml_strings;

/// What one file gave: the plugin and dotenv paths as written, and whether it could not be read whole.
pub type Words = Rc<(Vec<String>, bool)>;

/// proto's configuration file (`names::REPORTED`).
pub const FILE: &str = ".prototools";

/// Whether `entry` (a walked name) is a proto configuration: `.prototools`, or a
/// `.prototools.<PROTO_ENV>` beside it (found by an attacker's review, host40: proto loads its
/// `file://` plugins and `[env] file` as it does `.prototools`', and they were rewritten unsaid).
pub fn is_entry(entry: &Path) -> bool {
    entry.file_name().is_some_and(|n| {
        let b = n.as_encoded_bytes();
        n == FILE || (b.len() > FILE.len() + 1 && b.starts_with(FILE.as_bytes()) && b[FILE.len()] == b'.')
    })
}

/// `named_within` with a budget of its own.
pub fn named(entry: &Path) -> Named {
    named_within(entry, &mut Reads::new(config_reads::BUDGET), config_reads::TOOL_PROGRAMS_IN_ALL)
}

/// The plugin and dotenv files `entry` loads, at most `most` of them (then `capped`).
pub fn named_within(entry: &Path, reads: &mut Reads<Words>, most: usize) -> Named {
    let base = entry.parent().unwrap_or(Path::new("/"));
    let words = match reads.judge(entry, |text| Rc::new(loaded_words(text))) {
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

/// The paths of the `file://` locators under `plugins` and of the dotenv files the `[env]` tables
/// name, as written (at most `MAX_PROGRAMS` + 1).
fn loaded_words(text: &str) -> (Vec<String>, bool) {
    let read = toml_strings::strings(text);
    let words = read
        .found
        .iter()
        .filter_map(|(key, v)| match key.first().map(String::as_str) {
            Some("plugins") => v.strip_prefix("file://"),
            _ if is_env_file(key) => Some(v.as_str()),
            _ => None,
        })
        .filter(|w| !w.is_empty())
        .map(String::from)
        .take(MAX_PROGRAMS + 1)
        .collect();
    (words, read.unread)
}

/// Whether `key` is an `[env]` table's `file`: the shared one's, a tool's or a backend's
/// (`env.file`, `tools.<id>.env.file`, `backends.<id>.env.file`), the only ones proto reads.
fn is_env_file(key: &[String]) -> bool {
    let k: Vec<&str> = key.iter().map(String::as_str).collect();
    matches!(k.as_slice(), ["env", "file"] | ["tools" | "backends", _, "env", "file"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_an_env_file_for_a_configuration() {
        assert!(is_entry(Path::new("/w/.prototools")) && is_entry(Path::new("/w/.prototools.dev")));
        assert!(!is_entry(Path::new("/w/.prototools.")) && !is_entry(Path::new("/w/.prototoolsx")) && !is_entry(Path::new("/w/prototools.dev")));
    }

    #[test]
    fn keeps_the_file_plugins_of_every_plugins_table() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("plugins")).unwrap();
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
        std::fs::write(&file, "[plugins\nmy = \"file://./plugins/my.wasm\"\n").unwrap();
        assert!(named(&file).capped, "not TOML it reads: said");
    }

    #[test]
    fn keeps_the_dotenv_files_of_every_env_table() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        let file = dir.path().join(FILE);
        std::fs::write(
            &file,
            "node = \"20\"\nfile = \"top.env\"\n[env]\nfile = \"config/proto.env\"\nX = \"y.env\"\n\
             [tools.node.env]\nfile = './node.env'\n[tools.deno]\nenv.file = \"deno.env\"\n\
             [backends.asdf]\nenv = { file = \"/opt/asdf.env\" }\n[settings]\nfile = \"s.env\"\n",
        )
        .unwrap();
        let n = named(&file);
        let want = [dir.path().join("config/proto.env"), dir.path().join("./node.env"), dir.path().join("deno.env"), "/opt/asdf.env".into()];
        assert_eq!(n.programs, want.to_vec(), "only the env tables' file keys: {n:?}");
        assert!(!n.capped);
    }
}
