//! The files a yarn configuration names to run, kept as the programs a `.cargo` configuration
//! names are (`cargo_programs`). Found by an attacker's review (host34): `.yarnrc.yml` and
//! `.yarnrc` are protected names because `yarnPath` (yarn 1's `yarn-path`) makes every yarn
//! command run that file and `plugins` load code, but the files they name were left writable and
//! unreported: yarn berry projects commit `yarnPath: .yarn/releases/yarn-4.x.cjs` and their plugins
//! under `.yarn/plugins`, a run rewrote them, and the host's next yarn in that folder (any command,
//! `yarn --version` too, through corepack's shim as well) ran the run's code: berry's `runYarnPath`
//! runs `node <yarnPath> ...argv` before looking at the command, and every plugin is `require`d.
//!
//! And the environment files a `.yarnrc.yml`'s `injectEnvironmentFiles` lists (yarn 4 loads each
//! into every script it runs; found by an attacker's review, rfix34), but for a reported name
//! (`.env`, `.env.yarn`, its default), left to that name's report.
//!
//! yarn resolves a relative path from the directory holding the file (berry's path settings and
//! plugin paths; yarn 1's `yarn-path`, a `*-path` key of its rc). The files are read as
//! `small_file` reads a run's file; the YAML is not parsed whole: a line's `yarnPath:` (or yarn 1's
//! `yarn-path`) gives its value, and within `plugins:` each item's `path:` or a bare item, block or
//! flow style, each value in any form js-yaml (which yarn berry parses with) takes it (`yaml_scalars`: a block scalar, the next line, a tag, an alias, an escape; found by an attacker's review, host35). That is the safe side: a value kept that yarn takes otherwise costs a read-only
//! path. At most `MAX_PROGRAMS` per file, then `capped`.

use std::path::Path;
use std::rc::Rc;

use super::config_reads::{self, Judged, Reads};
pub use super::named_files::{Named, MAX_PROGRAMS};
use super::named_files::from_base;
use super::yaml_scalars;

/// What one configuration file gave: its program words (at most `MAX_PROGRAMS` + 1: one more
/// tells that it names too many), shared by its other names.
pub type Words = Rc<Vec<String>>;

/// The configuration files whose named programs yarn runs (berry's, yarn 1's).
pub const FILES: &[&str] = &[".yarnrc.yml", ".yarnrc"];

/// The keys whose value is the file yarn runs in its own place (berry's, yarn 1's).
const YARN_PATH_KEYS: &[&str] = &["yarnPath", "yarn-path"];

/// The keys whose list names files yarn berry loads: its plugins (code), and the environment files
/// it injects into every script it runs (`injectEnvironmentFiles`, yarn 4: NODE_OPTIONS there runs
/// code in each; found by an attacker's review, rfix34).
const LISTS: &[&str] = &["plugins", "injectEnvironmentFiles"];


/// The files the yarn configuration `file` (one of `FILES`) names to run, resolved from the
/// directory holding it; a relative one only where its directory exists, as `cargo_programs` does.
pub fn named(file: &Path) -> Named {
    named_within(file, &mut Reads::new(config_reads::BUDGET), config_reads::TOOL_PROGRAMS_IN_ALL)
}

/// `named`, reading through `reads` (each file once for all its names, within the plan's budget:
/// found by an attacker's review, rfix34, 200 names of one 1 MiB file were read before every
/// later run), keeping at most `most` files (what is left of `config_reads::TOOL_PROGRAMS_IN_ALL`);
/// `capped` when there were more, or the file was not read.
pub fn named_within(file: &Path, reads: &mut Reads<Words>, most: usize) -> Named {
    let base = file.parent().unwrap_or(Path::new("/"));
    let words = match reads.judge(file, |text| Rc::new(program_words(text))) {
        Judged::Judged(words) => words,
        Judged::Absent => return Named::default(),
        Judged::Unjudged => return Named::unread(),
    };
    let mut out = Named { programs: Vec::new(), capped: words.len() > MAX_PROGRAMS };
    let reported = super::names::reported_defaults();
    for w in words.iter().take(MAX_PROGRAMS) {
        if out.full(most) {
            break;
        }
        // An environment file of a reported name (`.env`, `.env.yarn`) is left to its report, as
        // an .envrc's dotenv of one is: commands write those.
        if super::named_files::is_reported(Path::new(w), &reported) {
            continue;
        }
        out.keep(w, from_base(w, base));
    }
    out
}

/// The values in `text` that name a file yarn runs: each `yarnPath`/`yarn-path`, and each plugin
/// of a `plugins` list (an item's `path:`, or the item itself), in order, once; at most
/// `MAX_PROGRAMS` + 1 (each word is compared with those kept: 50,000 distinct ones in a file cost
/// seconds of the host's CPU before every run, found by an attacker's review, rfix34).
fn program_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    // Past `MAX_PROGRAMS` + 1 nothing more is compared (a flow list on one line may hold many).
    let push = |words: &mut Vec<String>, w: String| {
        // An environment file's trailing `?`: optional (yarn reads it when it is there).
        let w = w.strip_suffix('?').map(str::to_string).unwrap_or(w);
        if words.len() <= MAX_PROGRAMS && !w.is_empty() && !w.contains("${") && !words.contains(&w) {
            words.push(w);
        }
    };
    // The indentation of the `plugins:` line whose block list is being read.
    let mut plugins_at: Option<usize> = None;
    // An explicit key (`? yarnPath`) waiting for its `: value` line, and the anchors seen.
    let mut explicit: Option<String> = None;
    let mut anchors = Vec::new();
    // js-yaml drops a byte order mark at the start, so the first key is read as written after it.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines = yaml_scalars::lines(text);
    // The depth of flow collections (`{`, `[`) open at a line's start, and whether the outermost
    // is a `plugins` (or other `LISTS`) list: a flow collection may run over lines (found by an
    // attacker's review, left36: `{nodeLinker: pnp,` then `yarnPath: x}` was read as `x}`).
    let mut depth = 0usize;
    let mut flow_list = false;
    for (i, line) in lines.iter().enumerate() {
        if words.len() > MAX_PROGRAMS {
            break;
        }
        let body = line.trim_start();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let opened = depth;
        depth = flow_depth(body, depth);
        if opened > 0 {
            let found = if flow_list { flow_items(body) } else { flow_pairs(body) };
            found.into_iter().for_each(|w| push(&mut words, w));
        }
        flow_list &= depth > 0;
        let indent = line.len() - body.len();
        if plugins_at.is_some_and(|at| indent < at || (indent == at && !body.starts_with('-'))) {
            plugins_at = None;
        }
        let item = body.trim_start_matches(|c: char| c == '-' || c.is_whitespace());
        // The value's candidates, read from the rest of the line and the lines below it.
        let mut value_of = |v: &str| yaml_scalars::candidates(v, &lines[i + 1..], indent, &mut anchors);
        if let Some(key) = item.strip_prefix("? ") {
            explicit = Some(yaml_scalars::scalar(yaml_scalars::properties(key).1));
            continue;
        }
        let key_value = match (explicit.take(), item.strip_prefix(':')) {
            (Some(key), Some(value)) => Some((key, value)),
            _ => key_and_value(item),
        };
        match key_value {
            Some((key, value)) if YARN_PATH_KEYS.contains(&key.as_str()) => value_of(value).into_iter().for_each(|w| push(&mut words, w)),
            Some((key, value)) if LISTS.contains(&key.as_str()) && value.trim().is_empty() => plugins_at = Some(indent),
            // A list of plugins through an alias (`plugins: *p`) or a flow list over lines.
            Some((key, value)) if LISTS.contains(&key.as_str()) && value.trim_start().starts_with('*') => value_of(value).into_iter().for_each(|w| push(&mut words, w)),
            Some((key, value)) if LISTS.contains(&key.as_str()) => {
                flow_list = opened == 0 && depth > 0;
                flow_items(value).into_iter().for_each(|w| push(&mut words, w))
            }
            Some((key, value)) if key == "path" && plugins_at.is_some() => value_of(value).into_iter().for_each(|w| push(&mut words, w)),
            // A mapping in flow style (`{yarnPath: x, nodeLinker: pnp}`): its pairs as lines.
            Some(_) | None if item.starts_with('{') => flow_pairs(item).into_iter().for_each(|w| push(&mut words, w)),
            // Another key's anchor (`x: &r .yarn/r.cjs`), which a later `yarnPath: *r` takes.
            Some((_, value)) if value.trim_start().starts_with(['&', '!']) => drop(value_of(value)),
            Some(_) => {}
            None if plugins_at.is_some() && body.starts_with('-') => value_of(item).into_iter().for_each(|w| push(&mut words, w)),
            None => {}
        }
    }
    words
}

/// A line's key (a YAML scalar as a value is: its tag and anchor dropped, a quoted one unquoted
/// with its escapes read, `"yarn\u0050ath"` being `yarnPath`, found by an attacker's review,
/// left36; yarn 1's `--scope.key` and a key without a colon, `yarn-path "x"`, as its rc takes
/// them) and what follows it; `None` for a line that assigns no key.
fn key_and_value(item: &str) -> Option<(String, &str)> {
    let (_, item) = yaml_scalars::properties(item);
    let (key, value) = match item.chars().next()? {
        '"' | '\'' => {
            let end = yaml_scalars::quoted_len(item)?;
            (yaml_scalars::scalar(&item[..end]), item[end..].trim_start().strip_prefix(':')?)
        }
        _ => {
            let end = item.find(|c: char| c == ':' || c.is_whitespace()).unwrap_or(item.len());
            let rest = item[end..].trim_start();
            (item[..end].to_string(), rest.strip_prefix(':').unwrap_or(rest))
        }
    };
    // yarn 1 takes `--install.yarn-path` as `yarn-path` for that command.
    let key = key.trim_start_matches("--");
    let key = key.rsplit('.').next().unwrap_or(key);
    (!key.is_empty() && (item.contains(':') || YARN_PATH_KEYS.contains(&key))).then(|| (key.to_string(), value))
}

/// The `yarnPath` values of a flow mapping's pairs on one line (`{yarnPath: x, nodeLinker: pnp}`,
/// or a line of one that runs over lines).
fn flow_pairs(line: &str) -> Vec<String> {
    let pairs = line.split(',').map(|p| p.trim().trim_start_matches(['{', '[']).trim_end_matches(['}', ']']).trim());
    pairs.filter_map(key_and_value).filter(|(k, _)| YARN_PATH_KEYS.contains(&k.as_str())).map(|(_, v)| yaml_scalars::scalar(yaml_scalars::properties(v).1)).collect()
}

/// The depth of flow collections open after `line`, `depth` being open before it: each `{` or `[`
/// outside a quoted scalar and a comment opens one, each `}` or `]` closes one.
fn flow_depth(line: &str, mut depth: usize) -> usize {
    let mut rest = line;
    let mut before = ' ';
    while let Some(c) = rest.chars().next() {
        let starts_token = before.is_whitespace() || matches!(before, '[' | '{' | ',' | ':' | '-');
        match c {
            '"' | '\'' if starts_token => match yaml_scalars::quoted_len(rest) {
                Some(n) => rest = &rest[n - 1..],
                None => return depth,
            },
            '#' if before.is_whitespace() => return depth,
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        before = c;
        rest = &rest[c.len_utf8()..];
    }
    depth
}

/// The plugins of a flow list on the `plugins:` line (`[a.cjs, {path: b.cjs, spec: x}]`).
fn flow_items(value: &str) -> Vec<String> {
    let inner = value.trim().trim_start_matches('[').split(']').next().unwrap_or_default();
    let mut out = Vec::new();
    for part in inner.split(',') {
        let part = part.trim().trim_start_matches('{').trim_end_matches('}').trim();
        match key_and_value(part) {
            Some((k, v)) if k == "path" => out.push(yaml_scalars::scalar(yaml_scalars::properties(v).1)),
            Some(_) => {}
            None => out.push(yaml_scalars::scalar(yaml_scalars::properties(part).1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn finds_the_release_and_the_plugins_yarn_runs() {
        let text = "nodeLinker: node-modules\n# yarnPath: no/1.cjs\nplugins:\n  - path: .yarn/plugins/@yarnpkg/a.cjs\n    spec: \"@yarnpkg/a\"\n\
            - '.yarn/plugins/b.cjs' # a comment\n  -   path: \"c/c.cjs\"\nnpmScopes:\n  x:\n    npmRegistryServer: \"https://r.test/x\"\n\
            unsafeHttpWhitelist:\n  - no/2\n\"yarnPath\": \".yarn/releases/yarn-4.5.0.cjs\"\n";
        assert_eq!(program_words(text), [".yarn/plugins/@yarnpkg/a.cjs", ".yarn/plugins/b.cjs", "c/c.cjs", ".yarn/releases/yarn-4.5.0.cjs"]);
        assert_eq!(program_words("plugins: [d.cjs, {path: e/e.cjs, spec: x}, 'f.cjs']\nyarnPath: /abs/y.cjs\n"), ["d.cjs", "e/e.cjs", "f.cjs", "/abs/y.cjs"]);
        assert_eq!(program_words("plugins:\n- g.cjs\nyarnPath: ${HOME}/y.cjs\n"), ["g.cjs"]);
    }

    #[test]
    fn reads_yarn_ones_rc() {
        assert_eq!(program_words("# comment\nyarn-path \"./tools/yarn-1.22.js\"\nregistry \"https://r.test\"\n"), ["./tools/yarn-1.22.js"]);
        assert_eq!(program_words("--install.yarn-path tools/y.js\nyarnPath: z.js\n"), ["tools/y.js", "z.js"]);
    }

    #[test]
    fn resolves_from_the_directory_holding_the_file_and_bounds_the_count() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join(".yarn/releases")).unwrap();
        let f = t.path().join(FILES[0]);
        std::fs::write(&f, "yarnPath: .yarn/releases/y.cjs\nplugins:\n  - path: missing/p.cjs\n  - /abs/p.cjs\n").unwrap();
        assert_eq!(named(&f), Named { programs: vec![t.path().join(".yarn/releases/y.cjs"), PathBuf::from("/abs/p.cjs")], capped: false });
        let many: String = std::iter::once("plugins:\n".to_string()).chain((0..MAX_PROGRAMS + 1).map(|i| format!("  - .yarn/{i}.cjs\n"))).collect();
        std::fs::write(&f, many).unwrap();
        let n = named(&f);
        assert!(n.capped && n.programs.len() == MAX_PROGRAMS, "{}", n.programs.len());
        assert_eq!(named(&t.path().join(FILES[1])), Named::default());
    }

    /// Found by an attacker's review (host35): yarn berry reads `.yarnrc.yml` with js-yaml, which
    /// takes the same `yarnPath` from a value on the lines below its key, a block scalar, a tag,
    /// an anchor's alias, a double-quoted escape, an explicit key and a flow mapping; the line
    /// reader took none of them.
    #[test]
    fn reads_each_yaml_form_of_a_value() {
        let text = "yarnPath: >-\n  .yarn/releases/a.cjs\nplugins:\n  - !!str .yarn/plugins/i.cjs\n  - path: |-\n      .yarn/plugins/j.cjs\n";
        assert_eq!(program_words(text), [".yarn/releases/a.cjs", ".yarn/plugins/i.cjs", ".yarn/plugins/j.cjs"]);
        assert_eq!(program_words("x: &r .yarn/d.cjs\nyarnPath: *r\n"), [".yarn/d.cjs"]);
        assert_eq!(program_words("yarnPath:\n  .yarn/c.cjs\nnodeLinker: pnp\n"), [".yarn/c.cjs"]);
        assert_eq!(program_words("yarnPath: \"\\x2Eyarn/g.cjs\"\n"), [".yarn/g.cjs"]);
        assert_eq!(program_words("? yarnPath\n: .yarn/h.cjs\n"), [".yarn/h.cjs"]);
        assert_eq!(program_words("{yarnPath: .yarn/f.cjs, nodeLinker: pnp}\n"), [".yarn/f.cjs"]);
        // A byte order mark before the first key (js-yaml drops it; fix35's spelling).
        assert_eq!(program_words("\u{feff}yarnPath: .yarn/b.cjs\n"), [".yarn/b.cjs"]);
    }

    /// Found by an attacker's review (left36), attacking host35's reader: js-yaml takes a key as
    /// it takes a value (a double-quoted escape, a tag, an anchor before it), ends a line at a
    /// lone CR, a comment after a tab, and reads a flow collection or a quoted value over lines
    /// and a list of plugins through an alias; each of these named the release unread.
    #[test]
    fn reads_each_yaml_form_of_a_key_and_of_lines() {
        let want = [".yarn/r.cjs"];
        for text in [
            "\"yarn\\u0050ath\": .yarn/r.cjs\n",
            "'yarnPath' : .yarn/r.cjs\n",
            "!!str yarnPath: .yarn/r.cjs\n",
            "&k !!str \"\\x79arnPath\": .yarn/r.cjs\n",
            "yarnPath: .yarn/r.cjs\t# pinned\n",
            "nodeLinker: pnp\ryarnPath: .yarn/r.cjs\r",
            "{nodeLinker: pnp,\n  yarnPath: .yarn/r.cjs}\n",
            "{\"yarn\\u0050ath\": .yarn/r.cjs}\n",
            "yarnPath: \".yarn/\\\n  r.cjs\"\n",
            "plugins: [\n  .yarn/r.cjs\n  ]\n",
            "plugins: [\n  {spec: x,\n   path: .yarn/r.cjs}]\n",
            "mine: &p\n  - .yarn/r.cjs\nplugins: *p\n",
            "mine: &p\n  - path: .yarn/r.cjs\nplugins: *p\n",
        ] {
            let got = program_words(text);
            assert!(got.iter().any(|w| w == want[0]), "{text:?} gave {got:?}");
        }
        // Not another key's path: a flow mapping over lines, a quoted value with a brace in it.
        assert_eq!(program_words("{cacheFolder: .yarn/cache,\n  nodeLinker: pnp}\nx: \"{[\"\nenableGlobalCache: false\n"), Vec::<String>::new());
    }

    /// Found by an attacker's review (rfix34): yarn berry 4 loads the files `injectEnvironmentFiles`
    /// lists (a trailing `?`: optional) into the environment of every script it runs, so one a
    /// project names (`[tools/yarn.env]`) with NODE_OPTIONS runs code in each; a run rewrote it
    /// unsaid. A reported name there (`.env`, `.env.yarn`) is left to its report.
    #[test]
    fn the_environment_files_yarn_injects() {
        assert_eq!(program_words("injectEnvironmentFiles:\n  - tools/yarn.env\n  - \"ci/extra.env?\"\nyarnPath: y.cjs\n"), ["tools/yarn.env", "ci/extra.env", "y.cjs"]);
        assert_eq!(program_words("injectEnvironmentFiles: [tools/a.env, b.env?]\n"), ["tools/a.env", "b.env"]);
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("tools")).unwrap();
        let f = t.path().join(FILES[0]);
        std::fs::write(&f, "injectEnvironmentFiles: [tools/a.env, .env, .env.yarn?]\n").unwrap();
        assert_eq!(named(&f), Named { programs: vec![t.path().join("tools/a.env")], capped: false });
    }
}