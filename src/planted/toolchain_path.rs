//! The toolchain directory a `rust-toolchain.toml` (or a `rust-toolchain` in TOML) names by
//! `path`, kept as the programs a `.cargo` configuration names are (`cargo_programs`). Found by an
//! attacker's review (rfix33): both names are protected because `path` makes rustup run the
//! programs of that directory (`<path>/bin/cargo`, `rustc`, ... and the libraries of its `lib`)
//! for every cargo and rustc below the file, but the directory itself was left writable: with
//! `path` naming a toolchain inside the workspace, a default run rewrote `tc/bin/cargo` with
//! `hostRisks: []`, and the host's next `cargo --version` there ran it.
//!
//! rustup takes an absolute `path` only ("relative path toolchain" is refused, rustup 1.29), so
//! only an absolute one is kept. The file is read as `small_file` reads a run's file; the TOML is
//! not parsed whole: a line assigning `path` (bare, dotted as `toolchain.path`, or in an inline
//! table) gives its string. Each file is read once however many names it has, within a budget of
//! bytes for all of a plan's (`config_reads`: found by an attacker's review, cross34, 200 names of
//! one 1 MiB file were read in the setup of every later run).

use std::path::{Path, PathBuf};

use super::config_reads::{self, Judged, Reads};

/// The file names rustup reads a toolchain override from.
pub const FILES: &[&str] = &["rust-toolchain.toml", "rust-toolchain"];

/// The toolchain directory `file` names, if any; `Err(())` when it could not be read (a FIFO, a
/// device, too large).
pub fn named(file: &Path) -> Result<Option<PathBuf>, ()> {
    named_within(file, &mut Reads::new(config_reads::BUDGET))
}

/// `named`, reading through `reads` (each file once, within its budget): `Err(())` past it too.
pub fn named_within(file: &Path, reads: &mut Reads<Option<String>>) -> Result<Option<PathBuf>, ()> {
    match reads.judge(file, |text| path_value(text).filter(|p| p.starts_with('/'))) {
        Judged::Judged(path) => Ok(path.map(PathBuf::from)),
        Judged::Absent => Ok(None),
        Judged::Unjudged => Err(()),
    }
}

/// The string assigned to `path` in `text`, the first one.
fn path_value(text: &str) -> Option<String> {
    const KEY: &str = "path";
    for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        let mut from = 0;
        while let Some(i) = line[from..].find(KEY).map(|i| i + from) {
            from = i + KEY.len();
            let before = line[..i].chars().next_back();
            if before.is_some_and(|c| !(c.is_whitespace() || c == '.' || c == '{' || c == ',')) {
                continue;
            }
            let Some(value) = line[from..].trim_start().strip_prefix('=') else { continue };
            let v = value.trim_start();
            let Some(q) = v.chars().next().filter(|c| *c == '"' || *c == '\'') else { continue };
            if let Some(end) = v[1..].find(q) {
                return Some(v[1..1 + end].to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_an_absolute_path_in_each_spelling() {
        assert_eq!(path_value("[toolchain]\npath = \"/w/tc\"\n").as_deref(), Some("/w/tc"));
        assert_eq!(path_value("toolchain.path='/w/tc'\n").as_deref(), Some("/w/tc"));
        assert_eq!(path_value("toolchain = { channel = \"x\", path = \"/w/tc\" }\n").as_deref(), Some("/w/tc"));
        assert_eq!(path_value("[toolchain]\n# path = \"/no\"\nchannel = \"stable\"\nxpath = \"/no\"\n"), None);
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join(FILES[0]);
        std::fs::write(&f, "[toolchain]\npath = \"tc\"\n").unwrap();
        assert_eq!(named(&f), Ok(None), "relative: rustup refuses it");
        std::fs::write(&f, "[toolchain]\npath = \"/w/tc\"\n").unwrap();
        assert_eq!(named(&f), Ok(Some(PathBuf::from("/w/tc"))));
        assert_eq!(named(&t.path().join("none")), Ok(None));
    }
}
