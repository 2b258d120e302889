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
//! file (a FIFO, a device or a huge one is not read) and as TOML (`toml_strings`: a quoted key, a
//! multi-line string, an escape name the same program, found by the fixer, fix34): the strings of
//! `KEYS` in any table, inline or dotted, and of a `[credential-alias]`, give each of their words
//! (cargo splits a `runner` on blanks) and, of a key cargo takes as one path, the whole string.
//! That is the safe side: a string kept that cargo takes otherwise costs a read-only path. At most
//! `MAX_PROGRAMS` per file, then `capped`, as a file that is not TOML this reads is, and
//! `MAX_IN_ALL` in one plan. Each file is read once however many names it has, within a budget of
//! bytes for all of them (`config_reads`: found by an attacker's review, cross34, 200 `.cargo`
//! sharing one 1 MiB file cost every later run 16 s of the host's CPU in its setup).

use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::config_reads::{self, Judged, Reads};
use super::toml_strings;
pub use super::named_files::{Named, MAX_PROGRAMS};

/// The directory whose configuration this reads.
pub const DIR: &str = ".cargo";

/// The configuration files cargo reads in a `.cargo` directory.
const FILES: &[&str] = &["config.toml", "config"];

/// The keys whose value names a program cargo runs (`[build]`, `[target.<triple>]`,
/// `[target.<cfg>]`, `[host]`, `[registry]`/`[registries.<name>]`, `[doc]`'s `browser`, which
/// `cargo doc --open` runs: found by an attacker's review, fix35), and `rustflags`, whose
/// `linker=` (as `-C linker=tools/ld`) and `-fuse-ld=` name one too (its other words do not).
const KEYS: &[&str] = &["rustc", "rustc-wrapper", "rustc-workspace-wrapper", "rustdoc", "linker", "runner", "credential-provider", "global-credential-providers", "browser", "rustflags"];

/// The most program paths kept of all the `.cargo` directories of one plan: each is a path the
/// host looks up and keeps. Found by an attacker's review (cross34): 200 `.cargo` whose
/// configuration was one file naming 256 programs (51,200 paths) cost every later run 1 s of the
/// host's CPU, 2,000 of them ten times that.
pub const MAX_IN_ALL: usize = 4 * MAX_PROGRAMS;

/// What one configuration file gave (`program_words`), shared by its other names.
pub type Words = Rc<(Vec<String>, Vec<String>, bool)>;

/// The most files one `.cargo`'s configuration reads, its own and those they include.
const MAX_FILES: usize = 16;

/// The programs the configuration of `dot_cargo` (a `.cargo` directory) names by path, resolved
/// from the directory holding it, and the files it includes (`include`, relative to the file
/// naming them: cargo takes their keys as its own, their paths from the directory above theirs;
/// found by the fixer, fix34, a run wrote a `rustc-wrapper` into an included file), which are
/// kept as its programs are. At most `MAX_FILES` files read, past them `capped` (its own budget:
/// `named_within` shares one among many).
pub fn named(dot_cargo: &Path) -> Named {
    named_within(dot_cargo, &mut Reads::new(config_reads::BUDGET), MAX_IN_ALL)
}

/// `named`, reading through `reads` (each file once, within its budget), keeping at most `most`
/// programs (what is left of `MAX_IN_ALL`); `capped` when there were more, or a file was not read.
pub fn named_within(dot_cargo: &Path, reads: &mut Reads<Words>, most: usize) -> Named {
    let base = dot_cargo.parent().unwrap_or(Path::new("/"));
    let mut out = Named::default();
    let mut files: Vec<(PathBuf, PathBuf)> = FILES.iter().map(|f| (dot_cargo.join(f), base.to_path_buf())).collect();
    let mut next = 0;
    while let Some((file, base)) = files.get(next).cloned() {
        next += 1;
        if next > MAX_FILES {
            out.capped = true;
            break;
        }
        let read = match reads.judge(&file, |text| Rc::new(program_words(text))) {
            Judged::Judged(read) => read,
            Judged::Absent => continue,
            Judged::Unjudged => {
                out.capped = true;
                continue;
            }
        };
        let (words, includes, unread) = &*read;
        out.capped |= *unread || words.len() > MAX_PROGRAMS;
        for w in words.iter().take(MAX_PROGRAMS) {
            keep(&mut out, w, &base, most);
        }
        let from = file.parent().unwrap_or(Path::new("/"));
        for inc in includes {
            if let Some(p) = keep(&mut out, inc, from, most) {
                let above = p.parent().and_then(Path::parent).unwrap_or(Path::new("/")).to_path_buf();
                if !files.iter().any(|(f, _)| *f == p) {
                    files.push((p, above));
                }
            }
        }
    }
    out
}

/// Keep in `out` the path `w` names from `base` (returned), as `named_files` keeps one, its `..`
/// taken off as the kernel would (`dir_links::without_dots`), so a missing one can be kept
/// absent. None kept past `most` in all (then `capped`).
fn keep(out: &mut Named, w: &str, base: &Path, most: usize) -> Option<PathBuf> {
    if out.full(most) {
        return None;
    }
    out.keep(w, super::dir_links::without_dots(base, Path::new(w)))
}

/// Each word of the strings of `KEYS` in `text` that is a path (holds a `/`), and each such whole
/// string, in order, once; of `rustflags`, only what a `linker=` or a `-fuse-ld=` names (its other
/// words are arguments to rustc: `-L vendor/lib` kept a library directory read-only, found by an
/// attacker's review, rfix33). With the files its `include` names (a string, or a table's `path`),
/// and whether the text is TOML `toml_strings` could not read.
///
/// At most `MAX_PROGRAMS` + 1 words (the caller keeps `MAX_PROGRAMS`; one more says there were
/// more): each word is compared with those kept, and a file of 58,000 distinct ones took 1.8 s of
/// the host's CPU in the setup of every run (found by an attacker's review, cross34).
fn program_words(text: &str) -> (Vec<String>, Vec<String>, bool) {
    let mut words: Vec<String> = Vec::new();
    let mut push = |w: &str| {
        if words.len() <= MAX_PROGRAMS && w.contains('/') && !words.iter().any(|x| x == w) {
            words.push(w.to_string());
        }
    };
    let read = toml_strings::strings(text);
    // A rustflags link argument (`-B`, `-wrapper`) whose program is the next argument.
    let mut program_next = false;
    let includes = read.found.iter().filter(|(key, _)| key.first().is_some_and(|k| k == INCLUDE) && (key.len() == 1 || key[1..] == ["path"])).map(|(_, s)| s.clone()).take(MAX_FILES + 1).collect();
    for (key, s) in &read.found {
        if loader_variable(key) {
            // `[env]`'s paths: each `:`- or blank-separated one with a `/`; of a table's value, a
            // bare name too, from the directory holding .cargo, where `relative = true` has cargo
            // join it (`"wrap.so"`, `"lib"`, `"tools"`). Not `.` or `..`: a directory a program
            // cannot be kept in whole (see the README's Limits).
            let table = key.len() == 3;
            for w in s.split([':', ' ']) {
                if table && !w.contains('/') && !matches!(w, "" | "." | "..") {
                    push(&format!("./{w}"));
                } else {
                    push(w);
                }
            }
            continue;
        }
        let last = key.last().map(String::as_str).unwrap_or("");
        let alias = key.first().is_some_and(|k| k == CREDENTIAL_ALIAS);
        if !alias && !KEYS.contains(&last) {
            continue;
        }
        let flags = !alias && last == RUSTFLAGS;
        if !alias && WHOLE_PATH_KEYS.contains(&last) {
            // `rustc = "tools/my rustc"` is one path (cargo's ConfigRelativePath); a runner's, a
            // credential provider's first word is its program.
            push(s);
        }
        for w in s.split_whitespace() {
            if flags {
                linker_program(w, &mut program_next).iter().for_each(|p| push(p));
                continue;
            }
            push(linker_named(w).unwrap_or(w));
        }
    }
    (words, includes, read.unread)
}

/// The linker a `linker=` or a `-fuse-ld=` in `w` names.
fn linker_named(w: &str) -> Option<&str> {
    ["linker=", "-fuse-ld="].iter().find_map(|k| w.split_once(k).map(|(_, l)| l))
}

/// What the rustflags word `w` names as a program: a `linker=`'s or a `-fuse-ld=`'s, and of a link
/// argument (`link-arg=`, `link-args=`, after `-C` or in one word) gcc's `-B<prefix>` (it looks for
/// collect2, ld and as there first: the prefix kept, a bare one from the directory holding .cargo)
/// and `-wrapper <prog>,<args>` (it runs every subprogram under `prog`), `program_next` carrying
/// a `-B` or a `-wrapper` alone to the next argument. Found by an attacker's review (left36): with
/// cargo 1.95 and gcc 12, `link-arg=-Btools/` had `cargo build` of a crate with no build script
/// run the workspace's tools/collect2, and `-wrapper tools/w,--x` ran tools/w.
fn linker_program(w: &str, program_next: &mut bool) -> Option<String> {
    if let Some(named) = linker_named(w) {
        return Some(named.to_string());
    }
    let arg = ["link-args=", "link-arg="].iter().find_map(|k| w.split_once(k).map(|(_, a)| a)).unwrap_or(w);
    // `-C` before `link-arg=...` is a word of its own: not the argument `program_next` waits for.
    if arg == "-C" {
        return None;
    }
    if std::mem::take(program_next) {
        let program = arg.split(',').next().unwrap_or(arg);
        return Some(if program.contains('/') { program.to_string() } else { format!("./{program}") });
    }
    // gcc's `--prefix=<dir>` and `--prefix <dir>` are its `-B` (found by an attacker's review,
    // rev37: checked with gcc 12, `gcc --prefix=$d/ -c m.c` ran $d/as).
    match arg.strip_prefix("-B").or_else(|| arg.strip_prefix("--prefix=")) {
        Some("") => *program_next = true,
        Some(prefix) => return Some(if prefix.contains('/') { prefix.to_string() } else { format!("./{prefix}") }),
        None => *program_next = arg == "-wrapper" || arg == "--prefix",
    }
    None
}

/// The dynamic loader's variables cargo sets from `[env]` in the rustc (and build scripts) it runs
/// on `cargo build` and `cargo check`: the libraries they name load into the host's rustc. Found
/// by an attacker's review (fix35): checked with cargo 1.95, `[env] LD_PRELOAD = { value =
/// "tools/x.so", relative = true }` had ld.so load the workspace's file into rustc. And `PATH`
/// (with `force = true`, as it is always set): rustc finds its linker `cc` there (found by an
/// attacker's review, rfix35: `PATH = { value = "tools", relative = true, force = true }` had
/// cargo build, on a crate with no build script, run the workspace's tools/cc).
const LOADER_VARIABLES: &[&str] = &["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PATH"];

/// Whether `key` is `env.<one of LOADER_VARIABLES>` (a string) or its table's `value`.
fn loader_variable(key: &[String]) -> bool {
    key.first().is_some_and(|k| k == "env") && key.get(1).is_some_and(|n| LOADER_VARIABLES.contains(&n.as_str())) && (key.len() == 2 || key[2..] == ["value"])
}

/// The top-level key naming the files a configuration includes.
const INCLUDE: &str = "include";

/// The keys whose string cargo takes as one path, blanks and all.
const WHOLE_PATH_KEYS: &[&str] = &["rustc", "rustc-wrapper", "rustc-workspace-wrapper", "rustdoc", "linker"];

/// The key whose value is rustc's arguments: only its `linker=` names a program.
const RUSTFLAGS: &str = "rustflags";

/// The table whose every string names a credential provider's program (an alias that
/// `credential-provider` and `global-credential-providers` take by name).
const CREDENTIAL_ALIAS: &str = "credential-alias";

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
            [alias]\nb = \"build --target-dir x/y\"\n[env]\nFOO = \"a/b\"\nLD_PRELOAD = { value = \"tools/p.so\", relative = true }\nLD_LIBRARY_PATH = \"vendor/lib:/opt/l\"\n[doc]\nbrowser = \"tools/open.sh --new\"\n\
            [env.PATH]\nvalue = \"tools:.:/usr/bin\"\nrelative = true\nforce = true\n";
        let (w, _, unread) = program_words(text);
        assert!(!unread);
        assert_eq!(w, ["tools/wrap.sh", "bin/rustc", "tools/run.sh", "/opt/ld", "tools/ld2", "scripts/qemu", "tools/rustdoc", "tools/hostld", "tools/cred", "tools/p.so", "vendor/lib", "/opt/l", "tools/open.sh", "./tools", "/usr/bin"]);
    }

    /// Found by an attacker's review (rfix33), over-blocking: every word with a `/` of a rustflags
    /// value was kept, so `-L vendor/lib` made a native library directory read-only. Only what a
    /// `linker=` or a `-fuse-ld=` names runs.
    #[test]
    fn rustflags_keep_only_their_linkers() {
        let text = "[build]\nrustflags = [\"-L\", \"vendor/lib\", \"-C\", \"linker=tools/ld\", \"-C\", \"link-arg=-fuse-ld=tools/mold\", \"--remap-path-prefix\", \"src/=x\"]\n\
            [target.x86_64-unknown-linux-gnu]\nrustflags = \"-L target/native -Clinker=tools/ld3\"\n";
        assert_eq!(program_words(text), (vec!["tools/ld".to_string(), "tools/mold".into(), "tools/ld3".into()], vec![], false));
    }

    /// Found by an attacker's review (left36): gcc's `-B<prefix>` and `-wrapper <prog>` in a link
    /// argument name programs cargo build's link runs (checked with cargo 1.95 and gcc 12).
    #[test]
    fn rustflags_keep_the_programs_their_link_arguments_name() {
        let text = "[build]\nrustflags = [\"-C\", \"link-arg=-Btools/\", \"-C\", \"link-arg=-wrapper\", \"-C\", \"link-arg=wrap/w,--x\", \"-L\", \"vendor/lib\"]\n\
            [target.x]\nrustflags = \"-Clink-args=-Bgcc-bin -Clink-arg=-B -Clink-arg=/opt/b/ -Copt-level=2\"\n";
        assert_eq!(program_words(text).0, ["tools/", "wrap/w", "./gcc-bin", "/opt/b/"]);
        // gcc's `--prefix` is its `-B` (rev37).
        let text = "[build]\nrustflags = [\"-C\", \"link-arg=--prefix=pfx/\", \"-Clink-arg=--prefix\", \"-Clink-arg=pfx2/\", \"-Clink-arg=--prefix=bare\"]\n";
        assert_eq!(program_words(text).0, ["pfx/", "pfx2/", "./bare"]);
    }

    /// Found by the fixer (fix34): the line scan missed a quoted key, a multi-line string, an
    /// escape and a credential alias, each a program cargo runs.
    #[test]
    fn reads_every_toml_spelling_of_a_program() {
        let text = "[build]\n\"rustc-wrapper\" = \"tools/a\"\nrustc = \"\"\"\ntools/b\"\"\"\nrustdoc = \"tools\\u002Fc\"\n\
            target.x.runner = { }\nhost = { 'linker' = 'tools/d' }\n[credential-alias]\nmine = [\"tools/e\", \"--x\"]\n\
            [target.y]\nlinker = \"tools/my ld\"\n";
        assert_eq!(program_words(text).0, ["tools/a", "tools/b", "tools/c", "tools/d", "tools/e", "tools/my ld", "tools/my"]);
        assert!(program_words("[build]\nrustc-wrapper = \"tools/a\" x\n").2, "not TOML: said");
    }

    /// Found by an attacker's review (cross34): every distinct word was kept and compared with
    /// all those before it, 58,000 of them in a 1 MiB file (1.8 s of the host's CPU every run).
    #[test]
    fn stops_one_word_past_what_is_kept() {
        let text: String = (0..5 * MAX_PROGRAMS).map(|i| format!("[target.t{i}]\nrunner = \"t/{i}\"\n")).collect();
        assert_eq!(program_words(&text).0.len(), MAX_PROGRAMS + 1);
    }

    /// Found by the same review: the programs of all the `.cargo` of a plan are bounded in all, and
    /// a file read once for all its names (hard links).
    #[test]
    fn many_names_of_one_configuration_are_read_once_and_bounded_in_all() {
        let t = tempfile::tempdir().unwrap();
        let seed = t.path().join("seed");
        std::fs::write(&seed, (0..MAX_PROGRAMS).map(|i| format!("[target.t{i}]\nrunner = \"t/{i}\"\n")).collect::<String>()).unwrap();
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

    /// Found by the fixer (fix34): cargo loads what `include` names, relative to the file, and
    /// takes its paths from the directory above the included file's.
    #[test]
    fn follows_includes_and_keeps_them() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join(".cargo");
        for sub in [".cargo", "cfg", "tools"] {
            std::fs::create_dir(t.path().join(sub)).unwrap();
        }
        std::fs::write(d.join("config.toml"), "include = [\"../cfg/a.toml\", { path = \"../cfg/b.toml\", optional = true }, \"../cfg/none.toml\"]\n").unwrap();
        std::fs::write(t.path().join("cfg/a.toml"), "include = [\"b.toml\", \"a.toml\"]\n").unwrap();
        std::fs::write(t.path().join("cfg/b.toml"), "[build]\nrustc-wrapper = \"tools/w\"\n").unwrap();
        let n = named(&d);
        let want: Vec<PathBuf> = ["cfg/a.toml", "cfg/b.toml", "cfg/none.toml", "tools/w"].iter().map(|p| t.path().join(p)).collect();
        let mut got = n.programs.clone();
        got.sort();
        assert_eq!((got, n.capped), (want, false));
        let many: String = (0..MAX_FILES + 1).map(|i| format!("include = [\"c{i}.toml\"]\n")).collect();
        std::fs::write(d.join("config.toml"), "include = [\"c0.toml\"]\n").unwrap();
        for i in 0..=MAX_FILES {
            std::fs::write(d.join(format!("c{i}.toml")), format!("include = [\"c{}.toml\"]\n", i + 1)).unwrap();
        }
        assert!(!many.is_empty() && named(&d).capped, "a chain past the bound is said");
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
