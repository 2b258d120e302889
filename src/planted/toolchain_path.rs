//! The toolchain directory a `rust-toolchain.toml` (or a `rust-toolchain` in TOML) names by
//! `path`, kept as the programs a `.cargo` configuration names are (`cargo_programs`). Found by an
//! attacker's review (rfix33): both names are protected because `path` makes rustup run the
//! programs of that directory (`<path>/bin/cargo`, `rustc`, ... and the libraries of its `lib`)
//! for every cargo and rustc below the file, but the directory itself was left writable: with
//! `path` naming a toolchain inside the workspace, a default run rewrote `tc/bin/cargo` with
//! `hostRisks: []`, and the host's next `cargo --version` there ran it.
//!
//! rustup takes an absolute `path` only ("relative path toolchain" is refused, rustup 1.29), so
//! only an absolute one is kept. The file is read as `small_file` reads a run's file, and as TOML
//! (`toml_strings`): `toolchain.path`, bare, dotted, quoted or in an inline table, its string
//! decoded. A `rust-toolchain` of one line is no TOML: rustup takes the line, trimmed, as the
//! toolchain, and an absolute one as the toolchain's directory (found by the fixer, fix34: such a
//! file naming `/ws/tc` made rustup run `/ws/tc/bin/cargo`, and it was not kept, nor were a quoted
//! `"path"`, a multi-line string or an escaped `/`). A file that is not TOML this reads is
//! `Err(())`, said in the result as one that could not be read.

use std::path::{Path, PathBuf};

use super::config_reads::{self, Judged, Reads};
use super::toml_strings;

/// The file names rustup reads a toolchain override from.
pub const FILES: &[&str] = &["rust-toolchain.toml", "rust-toolchain"];

/// The toolchain directory `file` names, if any; `Err(())` when it could not be read (a FIFO, a
/// device, too large, not TOML `toml_strings` reads).
pub fn named(file: &Path) -> Result<Option<PathBuf>, ()> {
    named_within(file, &mut Reads::new(config_reads::BUDGET))
}

/// What one file's text gives, read once for all its names (`config_reads`): the toolchain as
/// the plain name takes it, and as the TOML name does (a file may have both names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Values {
    plain: Result<Option<String>, ()>,
    toml: Result<Option<String>, ()>,
}

/// `named`, reading through `reads` (each file once for all its names, within its budget: found
/// by an attacker's review, cross34, 200 names of one 1 MiB file were read before every later
/// run): `Err(())` past the budget too.
pub fn named_within(file: &Path, reads: &mut Reads<Values>) -> Result<Option<PathBuf>, ()> {
    let values = match reads.judge(file, |text| Values { plain: toolchain_value(text, true), toml: toolchain_value(text, false) }) {
        Judged::Judged(v) => v,
        Judged::Absent => return Ok(None),
        Judged::Unjudged => return Err(()),
    };
    let plain = file.file_name().is_some_and(|n| n == PLAIN);
    let value = if plain { values.plain } else { values.toml };
    Ok(value?.filter(|p| p.starts_with('/')).map(PathBuf::from))
}

/// The name whose one line is the toolchain itself (rustup's legacy form).
const PLAIN: &str = "rust-toolchain";

/// The toolchain (`plain` and one line) or the string assigned to `toolchain.path` (the first
/// absolute one of any key ending in `path`, the safe side) in `text`; `Err(())` when `text` is not
/// TOML this reads.
fn toolchain_value(text: &str, plain: bool) -> Result<Option<String>, ()> {
    // rustup's own test: one line (`lines`: a last newline ends it, `\r\n` too), trimmed.
    if plain && text.lines().count() == 1 {
        return Ok(Some(text.trim().to_string()));
    }
    let read = toml_strings::strings(text);
    if read.unread {
        return Err(());
    }
    Ok(read.found.into_iter().find(|(key, s)| key.last().is_some_and(|k| k == "path") && s.starts_with('/')).map(|(_, s)| s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_value(text: &str) -> Option<String> {
        toolchain_value(text, false).unwrap()
    }

    #[test]
    fn finds_an_absolute_path_in_each_spelling() {
        assert_eq!(path_value("[toolchain]\npath = \"/w/tc\"\n").as_deref(), Some("/w/tc"));
        assert_eq!(path_value("toolchain.path='/w/tc'\n").as_deref(), Some("/w/tc"));
        assert_eq!(path_value("toolchain = { channel = \"x\", path = \"/w/tc\" }\n").as_deref(), Some("/w/tc"));
        assert_eq!(path_value("[toolchain]\n# path = \"/no\"\nchannel = \"stable\"\nxpath = \"/no\"\n"), None);
        // Found by the fixer (fix34): what the line scan missed.
        assert_eq!(path_value("[toolchain]\n\"path\" = \"/w/tc\"\n").as_deref(), Some("/w/tc"));
        assert_eq!(path_value("[toolchain]\npath = \"\"\"\n/w/tc\"\"\"\n").as_deref(), Some("/w/tc"));
        assert_eq!(path_value("[toolchain]\npath = \"\\u002Fw/tc\"\n").as_deref(), Some("/w/tc"));
        assert_eq!(toolchain_value("  /w/tc \r\n", true), Ok(Some("/w/tc".into())), "a plain one-line rust-toolchain");
        assert_eq!(toolchain_value("toolchain.path = \"/w/tc\"\n", true), Ok(Some("toolchain.path = \"/w/tc\"".into())), "one line is the toolchain's name");
        assert_eq!(toolchain_value("\n/w/tc\n", true), Err(()), "two lines: TOML, which this is not");
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join(FILES[0]);
        std::fs::write(&f, "[toolchain]\npath = \"tc\"\n").unwrap();
        assert_eq!(named(&f), Ok(None), "relative: rustup refuses it");
        std::fs::write(&f, "[toolchain]\npath = \"/w/tc\"\n").unwrap();
        assert_eq!(named(&f), Ok(Some(PathBuf::from("/w/tc"))));
        let plain = t.path().join(PLAIN);
        std::fs::write(&plain, "/w/tc\n").unwrap();
        assert_eq!(named(&plain), Ok(Some(PathBuf::from("/w/tc"))));
        std::fs::write(&f, "/w/tc\n").unwrap();
        assert_eq!(named(&f), Err(()), "rust-toolchain.toml is TOML only");
        assert_eq!(named(&t.path().join("none")), Ok(None));
    }
}
