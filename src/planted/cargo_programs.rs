//! The programs a `.cargo` directory's configuration names by path, kept as the programs a
//! repository's git configuration names are (`repo::Facts::programs`). Found by an attacker's
//! review (host33): `.cargo` is a protected name because its `config.toml`'s `rustc-wrapper`,
//! `runner` and linkers run programs, but a project's committed `rustc-wrapper = "tools/wrap.sh"`
//! left `tools/wrap.sh` writable and unreported: a run rewrote it, and the host's next
//! `cargo metadata` (what rust-analyzer runs when an editor opens the folder; no build script, no
//! project code) ran it.
//!
//! cargo takes a value with a `/` as a path relative to the directory holding `.cargo` (a bare name
//! is looked up on `PATH`, as git's are: not kept). The files are read as `small_file` reads a run's
//! file (a FIFO, a device or a huge one is not read); the TOML is not parsed whole: each line's
//! keys among `KEYS` (bare, dotted as `build.rustc-wrapper`, or inside an inline table) give every
//! string of their value, an array's too over several lines, and each word of a string (cargo splits
//! a `runner` on blanks). That is the safe side: a string kept that cargo takes otherwise costs a
//! read-only path. At most `MAX_PROGRAMS` per file, then `capped`, and `MAX_IN_ALL` in one plan.
//! Each file is read once however many names it has, within a budget of bytes for all of them
//! (`config_reads`: found by an attacker's review, cross34, 200 `.cargo` sharing one 1 MiB file
//! cost every later run 16 s of the host's CPU in its setup).

use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::config_reads::{self, Judged, Reads};

/// The directory whose configuration this reads.
pub const DIR: &str = ".cargo";

/// The configuration files cargo reads in a `.cargo` directory.
const FILES: &[&str] = &["config.toml", "config"];

/// The keys whose value names a program cargo runs (`[build]`, `[target.<triple>]`,
/// `[target.<cfg>]`, `[host]`, `[registry]`/`[registries.<name>]`), and `rustflags`, whose
/// `linker=` (as `-C linker=tools/ld`) and `-fuse-ld=` name one too (its other words do not).
const KEYS: &[&str] = &["rustc", "rustc-wrapper", "rustc-workspace-wrapper", "rustdoc", "linker", "runner", "credential-provider", "global-credential-providers", "rustflags"];

/// The most program paths kept of one configuration file (a run may write one below the tops).
pub const MAX_PROGRAMS: usize = 256;

/// The most program paths kept of all the `.cargo` directories of one plan: each is a path the
/// host looks up and keeps. Found by an attacker's review (cross34): 200 `.cargo` whose
/// configuration was one file naming 256 programs (51,200 paths) cost every later run 1 s of the
/// host's CPU, 2,000 of them ten times that.
pub const MAX_IN_ALL: usize = 4 * MAX_PROGRAMS;

/// What one configuration file gave: its program words (at most `MAX_PROGRAMS` + 1: one more
/// tells that it names too many), shared by its other names.
pub type Words = Rc<Vec<String>>;

/// What `named` found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Named {
    pub programs: Vec<PathBuf>,
    /// A file named more than `MAX_PROGRAMS`, or could not be read (a FIFO, a device, too large).
    pub capped: bool,
}

/// The programs the configuration of `dot_cargo` (a `.cargo` directory) names by path, resolved
/// from the directory holding it (its own budget: `named_within` shares one among many).
pub fn named(dot_cargo: &Path) -> Named {
    named_within(dot_cargo, &mut Reads::new(config_reads::BUDGET), MAX_IN_ALL)
}

/// `named`, reading through `reads` (each file once, within its budget), keeping at most `most`
/// programs (what is left of `MAX_IN_ALL`); `capped` when there were more, or a file was not read.
pub fn named_within(dot_cargo: &Path, reads: &mut Reads<Words>, most: usize) -> Named {
    let base = dot_cargo.parent().unwrap_or(Path::new("/"));
    let mut out = Named::default();
    for f in FILES {
        let words = match reads.judge(&dot_cargo.join(f), |text| Rc::new(program_words(text))) {
            Judged::Judged(words) => words,
            Judged::Absent => continue,
            Judged::Unjudged => {
                out.capped = true;
                continue;
            }
        };
        out.capped |= words.len() > MAX_PROGRAMS;
        for w in words.iter().take(MAX_PROGRAMS) {
            if out.programs.len() == most {
                out.capped = true;
                break;
            }
            let p = Path::new(w);
            let p = if p.is_absolute() { p.to_path_buf() } else { base.join(p) };
            // A relative one is kept where its directory exists, as git's are (`runner =
            // "target/debug/r"` before a first build names no place yet).
            if !w.starts_with('/') && !p.parent().is_some_and(Path::is_dir) {
                continue;
            }
            if !out.programs.contains(&p) {
                out.programs.push(p);
            }
        }
    }
    out
}

/// Each word of the values of `KEYS` in `text` that is a path (holds a `/`), in order, once; of
/// `rustflags`, only what a `linker=` or a `-fuse-ld=` names (its other words are arguments to
/// rustc: `-L vendor/lib` kept a library directory read-only, found by an attacker's review, rfix33).
///
/// At most `MAX_PROGRAMS` + 1 (the caller keeps `MAX_PROGRAMS`; one more says there were more):
/// each word is compared with those kept, and a file of 58,000 distinct ones took 1.8 s of the
/// host's CPU in the setup of every run (found by an attacker's review, cross34).
fn program_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    // An array value left open on its line (and whether it is rustflags'): its strings on the
    // next lines up to `]`.
    let mut open_array: Option<bool> = None;
    for line in text.lines() {
        if words.len() > MAX_PROGRAMS {
            break;
        }
        if line.trim_start().starts_with('#') {
            continue;
        }
        if let Some(flags) = open_array {
            let (strings, closed) = strings_of(line, true);
            strings.iter().for_each(|s| push_words(&mut words, s, flags));
            open_array = (!closed).then_some(flags);
            continue;
        }
        for (key, value) in values_of_keys(line) {
            let flags = key == RUSTFLAGS;
            let (strings, closed) = strings_of(value, false);
            strings.iter().for_each(|s| push_words(&mut words, s, flags));
            if !closed {
                open_array = Some(flags);
            }
        }
    }
    words
}

/// The words of the string `s` that are paths into `words`, once each, while it holds at most
/// `MAX_PROGRAMS`; of a rustflags string (`flags`), only what a `linker=` or `-fuse-ld=` names.
fn push_words(words: &mut Vec<String>, s: &str, flags: bool) {
    // cargo splits a runner's string on blanks; a path with blanks elsewhere is rare, and
    // each of its words is kept then (the safe side).
    for w in s.split_whitespace() {
        if words.len() > MAX_PROGRAMS {
            return;
        }
        let w = match (["linker=", "-fuse-ld="].iter().find_map(|k| w.split_once(k).map(|(_, l)| l)), flags) {
            (Some(named), _) => named,
            (None, true) => continue,
            (None, false) => w,
        };
        if w.contains('/') && !words.iter().any(|x| x == w) {
            words.push(w.to_string());
        }
    }
}

/// The key whose value is rustc's arguments: only its `linker=` names a program.
const RUSTFLAGS: &str = "rustflags";

/// Each of `KEYS` that `line` assigns (bare, the last part of a dotted key, or a key of an inline
/// table), with the text after its `=`.
fn values_of_keys(line: &str) -> Vec<(&'static str, &str)> {
    let mut out = Vec::new();
    for key in KEYS {
        let mut from = 0;
        while let Some(i) = line[from..].find(key).map(|i| i + from) {
            from = i + key.len();
            let before = line[..i].chars().next_back();
            if before.is_some_and(|c| !(c.is_whitespace() || c == '.' || c == '{' || c == ',')) {
                continue;
            }
            let rest = line[from..].trim_start();
            if let Some(value) = rest.strip_prefix('=') {
                out.push((*key, value));
            }
        }
    }
    out
}

/// The string literals at the start of `value` (one, or an array's), and whether an array begun
/// there was closed on this line (`in_array`: the line continues one).
fn strings_of(value: &str, in_array: bool) -> (Vec<String>, bool) {
    let v = value.trim_start();
    let (mut rest, array) = match v.strip_prefix('[') {
        Some(r) => (r, true),
        None => (v, in_array),
    };
    let mut out = Vec::new();
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
        let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else { break };
        let body = &rest[1..];
        let Some(end) = body.find(q) else { break };
        out.push(body[..end].replace("\\\\", "\\"));
        rest = &body[end + 1..];
        if !array {
            return (out, true);
        }
    }
    (out, !array || rest.trim_start().starts_with(']'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_program_paths_cargo_runs() {
        let text = "[build]\nrustc-wrapper = \"tools/wrap.sh\"\nrustc = 'bin/rustc'\n# rustdoc = \"x/no\"\n\
            [target.x86_64-unknown-linux-gnu]\nrunner = \"tools/run.sh --flag\"\nlinker = \"/opt/ld\"\nrustflags = [\"-C\", \"linker=tools/ld2\"]\n\
            [target.'cfg(unix)']\nrunner = [\n  \"scripts/qemu\",\n  \"-x\",\n]\n\
            build.rustdoc = \"tools/rustdoc\"\nhost = { linker = \"tools/hostld\" }\n\
            [registry]\nglobal-credential-providers = [\"cargo:token\", \"tools/cred\"]\n\
            [alias]\nb = \"build --target-dir x/y\"\n[env]\nFOO = \"a/b\"\n";
        let w = program_words(text);
        assert_eq!(w, ["tools/wrap.sh", "bin/rustc", "tools/run.sh", "/opt/ld", "tools/ld2", "scripts/qemu", "tools/rustdoc", "tools/hostld", "tools/cred"]);
    }

    /// Found by an attacker's review (rfix33), over-blocking: every word with a `/` of a rustflags
    /// value was kept, so `-L vendor/lib` made a native library directory read-only. Only what a
    /// `linker=` or a `-fuse-ld=` names runs.
    #[test]
    fn rustflags_keep_only_their_linkers() {
        let text = "[build]\nrustflags = [\"-L\", \"vendor/lib\", \"-C\", \"linker=tools/ld\", \"-C\", \"link-arg=-fuse-ld=tools/mold\", \"--remap-path-prefix\", \"src/=x\"]\n\
            [target.x86_64-unknown-linux-gnu]\nrustflags = \"-L target/native -Clinker=tools/ld3\"\n";
        assert_eq!(program_words(text), ["tools/ld", "tools/mold", "tools/ld3"]);
    }

    /// Found by an attacker's review (cross34): every distinct word was kept and compared with
    /// all those before it, 58,000 of them in a 1 MiB file (1.8 s of the host's CPU every run).
    #[test]
    fn stops_one_word_past_what_is_kept() {
        let text: String = (0..5 * MAX_PROGRAMS).map(|i| format!("runner = \"t/{i}\"\n")).collect();
        assert_eq!(program_words(&text).len(), MAX_PROGRAMS + 1);
    }

    /// Found by the same review: the programs of all the `.cargo` of a plan are bounded in all, and
    /// a file read once for all its names (hard links).
    #[test]
    fn many_names_of_one_configuration_are_read_once_and_bounded_in_all() {
        let t = tempfile::tempdir().unwrap();
        let seed = t.path().join("seed");
        std::fs::write(&seed, (0..MAX_PROGRAMS).map(|i| format!("runner = \"t/{i}\"\n")).collect::<String>()).unwrap();
        let mut reads = Reads::new(config_reads::BUDGET);
        let mut left = MAX_IN_ALL;
        let mut capped = 0;
        for i in 0..10 {
            let p = t.path().join(format!("p{i}"));
            std::fs::create_dir_all(p.join(".cargo")).unwrap();
            std::fs::create_dir(p.join("t")).unwrap();
            std::fs::hard_link(&seed, p.join(".cargo/config.toml")).unwrap();
            let n = named_within(&p.join(".cargo"), &mut reads, left);
            left -= n.programs.len();
            capped += usize::from(n.capped);
        }
        assert_eq!(left, 0, "MAX_IN_ALL kept in all");
        assert_eq!(capped, 10 - MAX_IN_ALL / MAX_PROGRAMS, "the rest said");
    }

    #[test]
    fn resolves_from_the_directory_holding_dot_cargo_and_bounds_the_count() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join(".cargo");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("config.toml"), "[build]\nrustc-wrapper = \"tools/w\"\nrustc = \"sccache\"\n").unwrap();
        std::fs::write(d.join("config"), "[build]\nrustdoc = \"/abs/rd\"\nrunner = \"target/debug/r\"\n").unwrap();
        std::fs::create_dir(t.path().join("tools")).unwrap();
        assert_eq!(named(&d), Named { programs: vec![t.path().join("tools/w"), PathBuf::from("/abs/rd")], capped: false });
        std::fs::create_dir(t.path().join("r")).unwrap();
        let many: String = (0..MAX_PROGRAMS + 1).map(|i| format!("target.t{i}.runner = \"r/{i}\"\n")).collect();
        std::fs::write(d.join("config"), many).unwrap();
        let n = named(&d);
        assert!(n.capped && n.programs.len() == MAX_PROGRAMS + 1, "{}", n.programs.len());
    }
}
