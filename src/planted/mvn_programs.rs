//! The code a `.mvn` directory's configuration has Maven's JVM load, kept as the programs a
//! `.cargo` configuration names are (`cargo_programs`). Found by an attacker's review (host34):
//! `.mvn` is a protected name because its `jvm.config` and `extensions.xml` load code into every
//! Maven run, but what `jvm.config` names was left writable: with a project's committed
//! `-javaagent:tools/agent.jar`, a default run replaced `tools/agent.jar` with `hostRisks: []`
//! (bwrap and the Landlock mode), and the host's next `mvn -v` there (no goal, no project code)
//! ran the run's agent: the `mvn` script splits `jvm.config` into words and gives them to `java`
//! before Maven starts (Maven 3.8.7's `bin/mvn`, `concat_lines`).
//!
//! What is kept: in `jvm.config`, the files of `-javaagent:`, `-agentpath:`, `-Xbootclasspath/a:`
//! (and `/p:`), `--patch-module`, `-XX:VMOptionsFile=`, an `@argfile`, and the first word of
//! `-XX:OnError=` and `-XX:OnOutOfMemoryError=`; in `maven.config` (Maven's own arguments), the jars
//! of `-Dmaven.ext.class.path=` (core extensions loaded before the build; in `jvm.config` too, a
//! system property Maven reads likewise: found by an attacker's review, rfix34). `java` resolves a
//! relative path from its cwd: taken from the project's base, the directory holding `.mvn` (where
//! `mvn` is usually run; `${MAVEN_PROJECTBASEDIR}` stands for it), and kept where its directory
//! exists. What an argument file or an options file lists in turn is not read. At most
//! `MAX_PROGRAMS` per file, then `capped`.

use std::path::Path;
use std::rc::Rc;

use super::config_reads::{self, Judged, Reads};
pub use super::named_files::{Named, MAX_PROGRAMS};
use super::named_files::from_base;

/// What one file gave, read as a `jvm.config` and as a `maven.config` (a file may be both, by
/// hard links): each at most `MAX_PROGRAMS` + 1 words (one more tells that it names too many),
/// shared by its other names.
pub type Words = Rc<(Vec<String>, Vec<String>)>;

/// The directory whose configuration this reads.
pub const DIR: &str = ".mvn";

/// The files read in it: the JVM's options, Maven's arguments.
const JVM_CONFIG: &str = "jvm.config";
const MAVEN_CONFIG: &str = "maven.config";

/// JVM options whose value (after the prefix, up to a `=` of the agent's options) is a file loaded.
const AGENT_PREFIXES: &[&str] = &["-javaagent:", "-agentpath:"];
/// JVM options whose value is a list of paths (`:`-separated) or one file read or run.
const LIST_PREFIXES: &[&str] = &["-Xbootclasspath/a:", "-Xbootclasspath/p:", "-XX:VMOptionsFile=", "-XX:OnError=", "-XX:OnOutOfMemoryError=", "@"];
/// Maven's property naming the jars of its core extensions, loaded before the build.
const EXT_CLASS_PATH: &str = "maven.ext.class.path=";


/// The files the configuration of `dot_mvn` (a `.mvn` directory) has Maven's JVM load, resolved
/// from the directory holding it.
pub fn named(dot_mvn: &Path) -> Named {
    named_within(dot_mvn, &mut Reads::new(config_reads::BUDGET), config_reads::TOOL_PROGRAMS_IN_ALL)
}

/// `named`, reading through `reads` (each file once for all its names, within the plan's budget:
/// found by an attacker's review, rfix34, 200 `.mvn` whose files were names of one 1 MiB file were
/// read before every later run), keeping at most `most` files (what is left of
/// `config_reads::TOOL_PROGRAMS_IN_ALL`); `capped` when there were more, or a file was not read.
/// `${MAVEN_PROJECTBASEDIR}` is put in after the reading (the words are shared by other `.mvn`).
pub fn named_within(dot_mvn: &Path, reads: &mut Reads<Words>, most: usize) -> Named {
    let base = dot_mvn.parent().unwrap_or(Path::new("/"));
    let mut out = Named::default();
    for (file, jvm) in [(JVM_CONFIG, true), (MAVEN_CONFIG, false)] {
        let words = match reads.judge(&dot_mvn.join(file), |text| Rc::new((jvm_words(text), maven_words(text)))) {
            Judged::Judged(words) => words,
            Judged::Absent => continue,
            Judged::Unjudged => {
                out.capped = true;
                continue;
            }
        };
        let words = if jvm { &words.0 } else { &words.1 };
        out.capped |= words.len() > MAX_PROGRAMS;
        for w in words.iter().take(MAX_PROGRAMS) {
            if out.full(most) {
                break;
            }
            let w = with_base(w, base);
            out.keep(&w, from_base(&w, base));
        }
    }
    out
}

/// `text` with the project's base directory in place of `${MAVEN_PROJECTBASEDIR}`.
fn with_base(text: &str, base: &Path) -> String {
    let b = base.to_string_lossy();
    text.replace("${MAVEN_PROJECTBASEDIR}", &b).replace("$MAVEN_PROJECTBASEDIR", &b)
}

/// The words of a Maven configuration file as its launcher takes them: split on blanks, a line
/// beginning with `#` dropped, quotes around a word removed.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|l| !l.trim_start().starts_with('#')).flat_map(str::split_whitespace).map(|w| w.trim_matches(|c| c == '"' || c == '\''))
}

/// The paths `jvm.config`'s options load or run, in order, once (`AGENT_PREFIXES`,
/// `LIST_PREFIXES`, `--patch-module`'s `module=paths`, a `-Dmaven.ext.class.path=`'s jars).
fn jvm_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let push = |out: &mut Vec<String>, s: &str| {
        for p in s.split(':').filter(|p| !p.is_empty()) {
            if out.len() <= MAX_PROGRAMS && !out.iter().any(|x| x == p) {
                out.push(p.to_string());
            }
        }
    };
    let mut patch_next = false;
    for w in words(text) {
        if out.len() > MAX_PROGRAMS {
            break;
        }
        if std::mem::take(&mut patch_next) {
            push(&mut out, w.split_once('=').map_or("", |(_, p)| p));
            continue;
        }
        if let Some(v) = AGENT_PREFIXES.iter().find_map(|p| w.strip_prefix(p)) {
            // An agent's own options follow its path after a `=` (a `:` in the path splits it in
            // two kept paths: the safe side).
            push(&mut out, v.split('=').next().unwrap_or_default());
        } else if let Some(v) = LIST_PREFIXES.iter().find_map(|p| w.strip_prefix(p)) {
            push(&mut out, v);
        } else if w == "--patch-module" {
            patch_next = true;
        } else if let Some(v) = w.strip_prefix("--patch-module=") {
            push(&mut out, v.split_once('=').map_or("", |(_, p)| p));
        } else if let Some(v) = w.strip_prefix("-D").and_then(|v| v.strip_prefix(EXT_CLASS_PATH)) {
            // Maven reads `maven.ext.class.path` from the JVM's system properties when its own
            // arguments do not give it (MavenCli.parseExtClasspath; found by an attacker's review,
            // rfix34): as `maven.config`'s, its jars load before every build.
            push(&mut out, v);
        }
    }
    out
}

/// The jars `maven.config`'s `-Dmaven.ext.class.path=` names (`-D` joined to it or the word
/// before it), in order, once.
fn maven_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in words(text) {
        if out.len() > MAX_PROGRAMS {
            break;
        }
        let Some(v) = w.strip_prefix("-D").unwrap_or(w).strip_prefix(EXT_CLASS_PATH) else { continue };
        for p in v.split(':').filter(|p| !p.is_empty()) {
            if out.len() <= MAX_PROGRAMS && !out.iter().any(|x| x == p) {
                out.push(p.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn finds_what_the_jvm_loads() {
        let text = "-Xmx1g --add-opens java.base/java.lang=ALL-UNNAMED\n# -javaagent:no/a.jar\n-javaagent:tools/agent.jar=opt=1 \"-agentpath:/opt/lib.so\"\n\
            -Xbootclasspath/a:boot/a.jar:boot/b.jar -XX:VMOptionsFile=opts/vm.txt @args/more\n--patch-module java.base=patch/base -XX:OnError=tools/err.sh\n";
        assert_eq!(jvm_words(text), ["tools/agent.jar", "/opt/lib.so", "boot/a.jar", "boot/b.jar", "opts/vm.txt", "args/more", "patch/base", "tools/err.sh"]);
        assert_eq!(maven_words("-T 4 -Dmaven.ext.class.path=ext/a.jar:ext/b.jar\n-D maven.ext.class.path=ext/c.jar -Dother=x/y\n"), ["ext/a.jar", "ext/b.jar", "ext/c.jar"]);
    }

    /// Found by an attacker's review (rfix34): Maven takes `maven.ext.class.path` from the JVM's
    /// system properties too (MavenCli reads the user properties, then the system ones), so
    /// `-Dmaven.ext.class.path=tools/ext.jar` in `jvm.config` loads that jar as a core extension
    /// before every build, as in `maven.config`; it was not kept.
    #[test]
    fn the_jvm_configs_ext_class_path_property_is_kept_too() {
        assert_eq!(jvm_words("-Xmx1g -Dmaven.ext.class.path=tools/ext.jar:tools/b.jar\n"), ["tools/ext.jar", "tools/b.jar"]);
    }

    #[test]
    fn resolves_from_the_project_base_and_bounds_the_count() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join(DIR);
        std::fs::create_dir(&d).unwrap();
        std::fs::create_dir(t.path().join("tools")).unwrap();
        std::fs::write(d.join(JVM_CONFIG), "-javaagent:tools/a.jar -javaagent:${MAVEN_PROJECTBASEDIR}/tools/b.jar -javaagent:missing/c.jar\n").unwrap();
        std::fs::write(d.join(MAVEN_CONFIG), "-Dmaven.ext.class.path=/abs/ext.jar\n").unwrap();
        assert_eq!(named(&d), Named { programs: vec![t.path().join("tools/a.jar"), t.path().join("tools/b.jar"), PathBuf::from("/abs/ext.jar")], capped: false });
        let many: String = (0..MAX_PROGRAMS + 1).map(|i| format!("-javaagent:tools/{i}.jar\n")).collect();
        std::fs::write(d.join(JVM_CONFIG), many).unwrap();
        let n = named(&d);
        assert!(n.capped && n.programs.len() == MAX_PROGRAMS + 1, "{}", n.programs.len());
    }

    #[test]
    fn one_file_as_both_jvm_config_and_maven_config_is_read_once_and_judged_as_each() {
        let t = tempfile::tempdir().unwrap();
        let m = t.path().join(DIR);
        std::fs::create_dir_all(m.join("../tools")).unwrap();
        std::fs::write(m.join(JVM_CONFIG), "-javaagent:tools/a.jar -Dmaven.ext.class.path=tools/e.jar\n").unwrap();
        std::fs::hard_link(m.join(JVM_CONFIG), m.join(MAVEN_CONFIG)).unwrap();
        let mut reads = Reads::new(config_reads::BUDGET);
        let n = named_within(&m, &mut reads, 1);
        assert_eq!(n, Named { programs: vec![t.path().join("tools/a.jar")], capped: true }, "one kept of two: capped");
        std::fs::write(m.join(JVM_CONFIG), "-javaagent:tools/a.jar -Dmaven.ext.class.path=tools/e.jar -Dx=tools/no.jar\n").unwrap();
        let mut reads = Reads::new(config_reads::BUDGET);
        let n = named_within(&m, &mut reads, config_reads::TOOL_PROGRAMS_IN_ALL);
        assert_eq!(n, Named { programs: vec![t.path().join("tools/a.jar"), t.path().join("tools/e.jar")], capped: false });
    }
}