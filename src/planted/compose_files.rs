//! The files a compose file pulls in from other files, which `docker compose -f` merges into the
//! project it starts: its top-level `include` (each entry a path, or a mapping whose `path` is a
//! path or a list of paths) and a service's `extends.file`, each from the including file's own
//! directory (compose resolves them so; an include's `project_directory` moves the paths *inside*
//! the included file, not the include itself). Found by an attacker's review (host40; hostb39 left
//! it): a dev container's `dockerComposeFile` was kept (`editor_programs`), but a service in a file
//! it includes or extends from gets `privileged: true` or a volume of `/` from the host's Docker
//! daemon just as well, and a default run appended to such files with `hostRisks: []`.
//!
//! Read by lines, with no YAML parser: the generous side. Every scalar of an `include` block (a
//! list item, a `path:` value, the items of a flow `[...]` or `{ path: ... }`) and every `file:`
//! value of an `extends` block or flow mapping is a candidate; one that is no existing file costs
//! nothing (the keeper keeps existing files only). An include's `env_file`, the variables the
//! included file is interpolated with, is taken too (found by an attacker's review, host41: a
//! volume's `${DATA:-./data}` became the host's `/`); a service's `env_file` is not (Compose
//! passes it into the container alone, interpolating nothing with it), nor is a remote include
//! (`oci://`, a git URL).

use super::yaml_scalars;

/// The keys of a compose file whose block holds files pulled in, and the key under it (or `None`:
/// every scalar of the block) that names them.
const BLOCKS: &[(&str, Option<&str>)] = &[("include", None), ("extends", Some("file"))];

/// The keys of an include entry that name files: its `path`, and its `env_file`, the variables the
/// included file is interpolated with (found by an attacker's review, host41: `DATA=/` appended to
/// it made the included `${DATA:-./data}:/data` a volume of the host's `/`).
const INCLUDE_KEYS: &[&str] = &["path", "env_file"];

/// The most candidates read of one file (the keeper bounds what it keeps anyway).
const MAX_CANDIDATES: usize = super::named_files::MAX_PROGRAMS + 1;

/// The paths `text` (a compose file) pulls in, as written (relative ones from its directory), at
/// most `MAX_CANDIDATES`; and whether it held more.
pub fn pulled_in(text: &str) -> (Vec<String>, bool) {
    scalars_of(text, BLOCKS)
}

/// The scalars of `text` (YAML, read by lines) that `blocks` name, as `pulled_in` reads a compose
/// file's: also a devenv.yaml's `imports` (`dev_env_programs`).
pub fn scalars_of(text: &str, blocks: &[(&str, Option<&str>)]) -> (Vec<String>, bool) {
    let lines = yaml_scalars::lines(text);
    let mut out: Vec<String> = Vec::new();
    // The block being read: its key's indentation and the key under it that names files.
    let mut block: Option<(usize, Option<&str>)> = None;
    for line in &lines {
        let body = line.trim_start();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let indent = line.len() - body.len();
        if block.is_some_and(|(at, _)| indent <= at) {
            block = None;
        }
        let item = body.strip_prefix("- ").or_else(|| (body == "-").then_some("")).map(str::trim_start);
        let (key, value) = key_and_value(item.unwrap_or(body));
        if let Some(key) = key {
            if let Some((_, under)) = blocks.iter().find(|(k, _)| *k == key) {
                block = Some((indent, *under));
                flow(value, *under, &mut out);
                continue;
            }
        }
        match block {
            Some((_, None)) => match key {
                Some(k) if INCLUDE_KEYS.contains(&k) => flow(value, None, &mut out),
                Some(_) => {}
                None => flow(value, None, &mut out),
            },
            Some((_, Some(under))) if key == Some(under) => flow(value, None, &mut out),
            _ => {}
        }
    }
    let more = out.len() > MAX_CANDIDATES;
    out.truncate(MAX_CANDIDATES);
    (out, more)
}

/// A line's key (a plain or quoted one, followed by `:` and a blank or the end) and what follows,
/// or no key and the whole line.
fn key_and_value(body: &str) -> (Option<&str>, &str) {
    if body.starts_with(['{', '[']) {
        return (None, body);
    }
    let cut = if let Some(end) = yaml_scalars::quoted_len(body) { body[end..].find(':').map(|i| end + i) } else { body.find(':') };
    match cut {
        Some(i) if body[i + 1..].is_empty() || body[i + 1..].starts_with([' ', '\t']) => {
            let key = body[..i].trim().trim_matches(['"', '\'']);
            (Some(key), body[i + 1..].trim())
        }
        _ => (None, body),
    }
}

/// The candidates of `value`: a scalar, or a flow sequence or mapping (`[a.yml, b.yml]`,
/// `{ file: x.yml, service: y }`), whose items are taken where `under` is `None` and whose `under`
/// (or `path`) values are; pushed into `out`.
fn flow(value: &str, under: Option<&str>, out: &mut Vec<String>) {
    let v = yaml_scalars::properties(value).1;
    if v.is_empty() || v.starts_with('#') || v.starts_with(['|', '>', '*']) {
        return;
    }
    if !v.starts_with(['[', '{']) {
        if under.is_none() {
            push(yaml_scalars::scalar(v), out);
        }
        return;
    }
    for piece in v.split([',', '[', ']', '{', '}']).map(str::trim).filter(|p| !p.is_empty() && !p.starts_with('#')) {
        match key_and_value(piece) {
            (Some(k), val) if Some(k) == under || (under.is_none() && INCLUDE_KEYS.contains(&k)) => push(yaml_scalars::scalar(val), out),
            (Some(_), _) => {}
            (None, item) if under.is_none() => push(yaml_scalars::scalar(item), out),
            (None, _) => {}
        }
    }
}

/// Push the candidate `c` unless it is empty, a URL (a remote include) or past the bound.
fn push(c: String, out: &mut Vec<String>) {
    if !c.is_empty() && !c.contains("://") && out.len() <= MAX_CANDIDATES && !out.contains(&c) {
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::pulled_in;

    #[test]
    fn reads_includes_and_extends_in_their_forms() {
        let text = "include:\n  - services/db/compose.yaml   # the db\n  - path:\n      - \"./more/a.yml\"\n    project_directory: .\n    env_file: ../x.env\n  - { path: 'more/b.yml' }\n  - oci://example.invalid/c\nservices:\n  app:\n    extends:\n      file: common/base.yml\n      service: base\n    image: app.yml\n  web:\n    extends: { file: ./common/web.yml, service: web }\n    volumes:\n      - ./src:/src\n";
        let (found, more) = pulled_in(text);
        assert_eq!(found, ["services/db/compose.yaml", "./more/a.yml", "../x.env", "more/b.yml", "common/base.yml", "./common/web.yml"], "project_directory's values, a service's image and volumes, a remote include: not taken");
        assert_eq!(pulled_in("include:\n  - { path: a.yml, env_file: ./a.env }\nservices:\n  s:\n    env_file: s.env\n").0, ["a.yml", "./a.env"], "an include's env_file, not a service's");
        assert!(!more);
        assert_eq!(pulled_in("include: [../../common/deep.yaml, x.yml]\n").0, ["../../common/deep.yaml", "x.yml"]);
        assert_eq!(pulled_in("services:\n  a:\n    extends: base\n").0, Vec::<String>::new(), "extends of a service in the same file names no file");
    }

    #[test]
    fn bounds_what_one_file_gives() {
        let text: String = std::iter::once("include:\n".to_string()).chain((0..1000).map(|i| format!("  - f{i}.yml\n"))).collect();
        let (found, more) = pulled_in(&text);
        assert_eq!(found.len(), super::MAX_CANDIDATES);
        assert!(more);
    }
}
