//! The `core.hooksPath` of the host user's global and system git configuration. A relative one
//! (`.githooks`) names a hooks directory in every repository that sets none of its own: found by
//! an attacker's review, a run wrote `.githooks/pre-commit` and the host's next `git commit` ran
//! it, since only each repository's own configuration was read.
//!
//! Read as git reads them, last one winning, but all of them whatever the host process's
//! environment says (`files_from`): the system files (`$GIT_CONFIG_SYSTEM`, `/etc/gitconfig`,
//! Homebrew's, each `git`'s on `PATH`), then the global ones (`$GIT_CONFIG_GLOBAL`,
//! `$XDG_CONFIG_HOME/git/config`, then `~/.config/git/config` and `~/.gitconfig` of each home),
//! each with the files its `include.path` names (`git_paths::include`). A hooks path (or template
//! directory) an `includeIf` file names is taken as possibly applying (its conditions depend on the
//! repository, its branch, its remotes): its directory is kept as a plain one's is, besides. Found
//! by an attacker's review: `[includeIf "gitdir:/"] path = ../local.cfg` naming `core.hooksPath =
//! tools/hk` left `tools/hk` writable, and the host's next `git commit` ran the run's hook.
//!
//! Nothing is left unread silently: past `MAX_FILES` files, `MAX_BYTES` bytes or `MAX_ENTRIES`
//! entries the configuration is `capped`, which the run's result says. Found by an attacker's
//! review: a config of more than 1 MiB, and a 65th include, were skipped unsaid, and the hooks
//! path or `core.fsmonitor` past them went unseen.
//!
//! `Global::files` lists every file read or looked for, `includeIf` targets too whatever their condition:
//! each that lies in a writable root is kept read-only (absent when missing) in direct runs, and
//! a change to it is a host risk in review mode. Found by an attacker's review: with the cwd at
//! `$HOME` and `[include] path = ~/.gitconfig.local` (or at `~/dotfiles`, which `~/.gitconfig`
//! includes or links to), a run appended `core.fsmonitor` and the host's next `git status` ran it.
//!
//! `init.templateDir` (and `$GIT_TEMPLATE_DIR`) names the directory `git init` and `git clone`
//! copy hooks from into every new repository, and a global `core.hooksPath` that is absolute or
//! `~/…` names one directory every repository without its own runs hooks from (`Global::host_dirs`):
//! kept read-only as a whole in any writable root holding them, whether or not a repository is
//! found there. Found by an attacker's review: with the cwd at `$HOME`, a run wrote
//! `.git-templates/hooks/post-checkout` (the host's next `git clone` ran it) and
//! `.githooks/pre-commit` (its next `git commit` anywhere ran it).
//!
//! On every run's path: the result is remembered with the identity and times of every file read
//! (and of those missing), so a run costs a `stat` per file, and a reading only when one changed.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{git_paths, gitconfig, small_file};

/// git's own bound on nested includes.
const MAX_DEPTH: usize = 10;

/// At most this many files are read for one configuration: a file that includes itself twice would
/// otherwise be read 2^MAX_DEPTH times (git would too, but not on every run of a sandbox). Past it
/// the configuration is `capped`. A `stat` per file a run: hundreds cost nothing noticeable.
pub const MAX_FILES: usize = 256;

/// At most this many bytes are read of one configuration (all its files): git reads a file of any
/// size, and a key past a smaller bound went unseen (an attacker's review). Past it the
/// configuration is `capped`. Read once while no file changes (`current`, `repo::facts`).
pub const MAX_BYTES: u64 = 16 << 20;

/// At most this many entries are read for one configuration (all its files), and at most this many
/// programs kept of what they name: a run-written configuration of thousands of distinct program
/// paths took the host minutes after the run and every later run's setup half a minute (found by
/// an attacker's review). Past either, the configuration is `capped`, which the run's result says.
pub const MAX_ENTRIES: usize = 10_000;
pub const MAX_PROGRAMS: usize = 256;
/// At most this many program words only a shell resolves are said (each a `notEnforced` line).
const MAX_UNRESOLVED: usize = 16;

/// What one run needs of the host's global and system git configuration, read once (a `stat` per
/// file) and passed where it is used: the carving and the review's judge look at it per
/// repository, and reading it there again cost every repository those `stat`s.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Global {
    /// The hooks paths they name, as written (relative to each repository's top, `~/…`, or
    /// absolute): the one set plainly (the last), then those of `includeIf` files, which may
    /// apply in a repository or not (`Values::maybe_hooks`); empty when they name none.
    pub hooks: Vec<String>,
    /// Every file they consist of, as git names them (a link's own path: `canonical_lenient`
    /// finds where it leads): the top files, what they include, and what `includeIf` names under
    /// any condition (carving a file git does not read here costs nothing). Missing ones too: a
    /// run could create them.
    pub files: Vec<PathBuf>,
    /// The directories the host's git runs or copies hooks from in every repository, as named
    /// (links on the way not followed): `$GIT_TEMPLATE_DIR`, the configuration's
    /// `init.templateDir`, and its `core.hooksPath` when absolute or `~/…` (a relative one is per
    /// repository: `repo::hooks_dirs`).
    pub host_dirs: Vec<PathBuf>,
    /// The programs their keys run (`core.fsmonitor`, `core.pager`, `credential.helper`,
    /// `gpg.program`, `core.sshCommand`, `diff.external`, ...: `gitconfig::program_path`) when
    /// named by an absolute or `~/` path, from every file read (an `includeIf`'s too): kept as
    /// `files` are. Found by an attacker's review: `core.fsmonitor = ~/bin/fsmon` with `~/bin` a
    /// link into the dotfiles checkout a run worked in, and the host's next `git status` ran it.
    pub programs: Vec<PathBuf>,
    /// The program words only the shell can resolve (`gitconfig::unresolved`: `$TOOLS/fsmon`,
    /// `` `which x` ``), as `key = word (file)`: nothing is kept for them, and the run's result says
    /// so (`notEnforced`) rather than nothing at all (found by an attacker's review).
    pub unresolved: Vec<String>,
    /// Its reading stopped at `MAX_FILES`, `MAX_BYTES`, `MAX_ENTRIES` or `MAX_PROGRAMS`, or a file of
    /// it could not be read (not a regular file).
    pub capped: bool,
}

/// The configuration as it is now, from the cache when no file changed since.
pub fn now() -> Global {
    let (values, files) = current();
    let hooks = values.all_hooks();
    let Values { template, maybe_templates, programs, unresolved, capped, .. } = values;
    let env_template = std::env::var_os("GIT_TEMPLATE_DIR").filter(|v| !v.is_empty()).map(PathBuf::from);
    #[cfg(test)]
    let env_template = env_template.filter(|_| super::home::test_home::get().is_none());
    let absolute_hooks: Vec<PathBuf> = hooks.iter().flat_map(|h| expand(h, Path::new(""))).filter(|p| p.is_absolute()).collect();
    let host_dirs = env_template.into_iter().filter(|p| p.is_absolute()).chain(template).chain(maybe_templates).chain(absolute_hooks).collect();
    Global { hooks, files, host_dirs, programs, unresolved, capped }
}

impl Global {
    /// What the run's result says in `sandboxDetails.notEnforced` of these programs.
    pub fn not_enforced(&self) -> Vec<String> {
        self.unresolved
            .iter()
            .map(|u| format!("git configuration: the program {u} is named through a shell expansion other than $HOME: not resolved, not kept read-only if a writable root holds it"))
            .collect()
    }
}

/// A repository's own configuration files (`repo::config_files`), read as the global ones are (this
/// reader, not a second one): the hooks path they name, includes counted (`includeIf`'s as
/// possibly applying, as here), and every file they include, nested, `includeIf` whatever its condition, relative to the
/// including file's directory, missing ones too (`repo::Facts::includes`). Found by an attacker's
/// review: `include.path = ../tools/gitconfig` (a file of the worktree, as projects share
/// settings) took a run's `core.fsmonitor`, which the host's next `git status` there ran.
pub struct Own {
    /// The hooks path set plainly (the last): it wins over the global configuration's.
    pub hooks: Option<String>,
    /// Those of `includeIf` files: git takes one where its condition holds, after or instead of
    /// `hooks`, and the global one's where it does not.
    pub maybe_hooks: Vec<String>,
    pub includes: Vec<PathBuf>,
    /// The programs they name by path (`gitconfig::program_paths`, includes' too): absolute, `~/`,
    /// or relative to `top` (git runs them from the worktree's top) when the directory it names
    /// exists (a word with a `/` that is no path, `s/a/b/`, names none). Found by an attacker's
    /// review: `core.fsmonitor = <top>/tools/fsmon`, rewritten by a run, ran in the host's next
    /// `git status`.
    pub programs: Vec<PathBuf>,
    /// Its reading stopped at `MAX_FILES`, `MAX_BYTES`, `MAX_ENTRIES` or `MAX_PROGRAMS`, or a file of
    /// it could not be read (not a regular file).
    pub capped: bool,
}

pub fn repository(configs: &[PathBuf], top: &Path) -> Own {
    let (mut seen, mut value, mut named) = (Vec::new(), Values::default(), Named::default());
    for f in configs {
        read(f, 0, &mut seen, &mut value, false, &mut named);
    }
    let mut includes: Vec<PathBuf> = Vec::new();
    for p in seen.into_iter().filter(|(p, _)| !configs.contains(p)).map(|(p, _)| physical(&p)) {
        if !includes.contains(&p) {
            includes.push(p);
        }
    }
    let (mut programs, mut met) = (Vec::new(), std::collections::HashSet::new());
    for p in named.programs {
        let p = match p.is_absolute() {
            true => Some(p),
            false => Some(physical(&top.join(p))).filter(|p| p.parent().is_some_and(Path::is_dir)),
        };
        if let Some(p) = p.filter(|p| met.insert(p.clone())) {
            programs.push(p);
        }
    }
    Own { hooks: value.hooks, maybe_hooks: value.maybe_hooks, includes, programs, capped: named.capped }
}

/// `p` with its `.` and `..` taken as the kernel takes them where the path exists (a `..` after a
/// symlink is its target's parent), lexically past that: a repository's include reads
/// `.git/../tools/gitconfig`, and `canonical_lenient` (which the carving and the judge use)
/// refuses a `..` in a path that does not exist. A `realpath` per `..`, only when facts are read.
fn physical(p: &Path) -> PathBuf {
    without_dots(p, true)
}

/// `a/./b/../c` → `a/c`: lexically, or (`physical`) with the path so far resolved before each `..`.
pub(super) fn without_dots(p: &Path, physical: bool) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if let Some(real) = physical.then(|| std::fs::canonicalize(&out).ok()).flatten() {
                    out = real;
                }
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The hooks paths alone (`Global::hooks`), for a caller that needs nothing else.
pub fn hooks_paths() -> Vec<String> {
    current().0.all_hooks()
}

/// What the configuration files name, the last one winning.
#[derive(Clone, Default)]
struct Values {
    /// `core.hooksPath`, as written.
    hooks: Option<String>,
    /// Those of `includeIf` files, each once: taken as possibly applying.
    maybe_hooks: Vec<String>,
    /// `init.templateDir`, `~/` and a relative path (from its file's directory) made absolute.
    template: Option<PathBuf>,
    /// Those of `includeIf` files, likewise.
    maybe_templates: Vec<PathBuf>,
    /// `Global::programs`, made absolute.
    programs: Vec<PathBuf>,
    /// `Global::unresolved`.
    unresolved: Vec<String>,
    capped: bool,
}

impl Values {
    /// `Global::hooks`: the plain one, then the conditional ones.
    fn all_hooks(&self) -> Vec<String> {
        let mut out: Vec<String> = self.hooks.iter().cloned().collect();
        out.extend(self.maybe_hooks.iter().filter(|h| self.hooks.as_ref() != Some(*h)).cloned());
        out
    }
}

/// What the files read name as programs: paths (`~/`, `~user/` expanded; relative ones as
/// written), each once and in order, and the words left to the shell (`Global::unresolved`), with
/// the entries read so far.
#[derive(Default)]
struct Named {
    programs: Vec<PathBuf>,
    met: std::collections::HashSet<PathBuf>,
    unresolved: Vec<String>,
    entries: usize,
    /// The bytes read so far, of `MAX_BYTES`.
    bytes: u64,
    /// Past `MAX_FILES`, `MAX_BYTES`, `MAX_ENTRIES`, `MAX_PROGRAMS` or `MAX_UNRESOLVED`, or a file
    /// not read (`small_file::Read::Unjudged`): the rest was not read, or not kept.
    capped: bool,
}

/// The values and the files read, from the cache when no file changed since.
fn current() -> (Values, Vec<PathBuf>) {
    let tops = files();
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = cache.as_ref().filter(|c| c.tops == tops && c.seen.iter().all(|(p, s)| stat(p) == *s)) {
        return (c.value.clone(), c.seen.iter().map(|(p, _)| p.clone()).collect());
    }
    let mut seen = Vec::new();
    let mut value = Values::default();
    let mut named = Named::default();
    for f in &tops {
        read(f, 0, &mut seen, &mut value, false, &mut named);
    }
    // Timestamps are coarse: what changed in this very second may change again unseen.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let settled = seen.iter().all(|(_, s): &(PathBuf, Stat)| s.is_none_or(|s| s.5 < now));
    let read: Vec<PathBuf> = seen.iter().map(|(p, _)| p.clone()).collect();
    // A relative program runs from each repository's top: not one path here (README says so).
    value.programs = named.programs.into_iter().filter(|p| p.is_absolute()).collect();
    value.unresolved = named.unresolved;
    value.capped = named.capped;
    *cache = settled.then(|| Cache { tops, seen, value: value.clone() });
    (value, read)
}

type Stat = Option<(u64, u64, u64, i64, i64, i64, i64)>;

struct Cache {
    tops: Vec<PathBuf>,
    /// Every file read or looked for, and what `stat` said of it then.
    seen: Vec<(PathBuf, Stat)>,
    value: Values,
}

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

fn stat(p: &Path) -> Stat {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec()))
}

/// `file` and what it includes, in order: `value` holds the last values met, and below an
/// `includeIf` (`conditional`) the values that may apply.
fn read(file: &Path, depth: usize, seen: &mut Vec<(PathBuf, Stat)>, value: &mut Values, conditional: bool, named: &mut Named) {
    if seen.len() >= MAX_FILES {
        named.capped = true;
        return;
    }
    seen.push((file.to_path_buf(), stat(file)));
    // git reads a file of any size: one past what is left of `MAX_BYTES`, or one that is no
    // regular file, is said (`capped`), never skipped unsaid.
    let text = match small_file::read_up_to(file, MAX_BYTES - named.bytes) {
        small_file::Read::Text(text) => text,
        small_file::Read::Absent => return,
        small_file::Read::Unjudged { .. } => {
            named.capped = true;
            return;
        }
    };
    named.bytes += text.len() as u64;
    for e in gitconfig::entries(&text) {
        if named.entries >= MAX_ENTRIES {
            named.capped = true;
            return;
        }
        named.entries += 1;
        let Some(v) = e.value.filter(|v| !v.is_empty()) else { continue };
        let dir = file.parent().unwrap_or(Path::new("/"));
        programs(file, &e.key, &v, named);
        let include_if = e.key.starts_with("includeif.") && e.key.ends_with(".path");
        match e.key.as_str() {
            "core.hookspath" if conditional => {
                if !value.maybe_hooks.contains(&v) {
                    value.maybe_hooks.push(v);
                }
            }
            "core.hookspath" => value.hooks = Some(v),
            "init.templatedir" if conditional => value.maybe_templates.extend(expand(&v, dir).into_iter().next()),
            "init.templatedir" => value.template = expand(&v, dir).into_iter().next(),
            _ if (include_if || e.key == "include.path") && depth < MAX_DEPTH => {
                for inc in expand(&v, dir) {
                    // Not followed (`deep_paths`): looked up again on every run, at a cost its depth sets.
                    if super::deep_paths::too_deep(&inc) || super::deep_paths::leads_too_deep(&inc) {
                        named.capped = true;
                        continue;
                    }
                    read(&inc, depth + 1, seen, value, conditional || include_if, named);
                }
            }
            _ => {}
        }
    }
}

/// The programs the entry `key = v` of `file` names (`Named`): absolute, `~/` and `~user/` ones
/// made absolute; relative ones as written, for the caller to place (a repository's run from its
/// worktree's top; the global ones' are not kept); those only the shell resolves, said.
fn programs(file: &Path, key: &str, v: &str, named: &mut Named) {
    for w in gitconfig::program_paths(key, v) {
        if gitconfig::unresolved(&w) {
            match named.unresolved.len() < MAX_UNRESOLVED {
                true => named.unresolved.push(format!("`{key} = {w}` ({})", file.display())),
                false => named.capped = true,
            }
            continue;
        }
        for p in git_paths::tilde(&w, &git_paths::homes()) {
            if named.programs.len() >= MAX_PROGRAMS {
                named.capped = true;
            } else if named.met.insert(p.clone()) {
                named.programs.push(p);
            }
        }
    }
}

/// A path of the configuration as git expands it (`git_paths::include`): `~/` from each home,
/// `~user/`, relative from the including file's directory.
fn expand(p: &str, dir: &Path) -> Vec<PathBuf> {
    git_paths::include(p, dir, &git_paths::homes())
}

/// The configuration files git reads before a repository's own, in its order.
fn files() -> Vec<PathBuf> {
    #[cfg(test)]
    if let Some(home) = super::home::test_home::get() {
        return files_from(&|_| None, &[home], &[]);
    }
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    files_from(&env, &git_paths::homes(), &git_paths::system_files())
}

/// `files`, for this environment (`env`), these homes and system files: the union of what the
/// environment names and the defaults, as the host process's environment is not the user's. Found
/// by an attacker's review: a harness ran with `GIT_CONFIG_GLOBAL=/dev/null` (or another
/// `XDG_CONFIG_HOME`) for its own git, the user's `~/.gitconfig` went unread, and a run rewrote
/// the include and the program it names, which the user's next `git status` ran. So too the
/// system files whatever `GIT_CONFIG_NOSYSTEM` says. In git's order (system, XDG, home), the
/// environment's before the defaults: the user's own `core.hooksPath`, read last, wins.
fn files_from(env: &dyn Fn(&str) -> Option<PathBuf>, homes: &[PathBuf], system: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = env("GIT_CONFIG_SYSTEM").into_iter().chain(system.iter().cloned()).collect();
    out.extend(env("GIT_CONFIG_GLOBAL"));
    out.extend(env("XDG_CONFIG_HOME").filter(|p| p.is_absolute()).map(|x| x.join("git/config")));
    out.extend(homes.iter().map(|h| h.join(".config/git/config")));
    out.extend(homes.iter().map(|h| h.join(".gitconfig")));
    let mut unique = Vec::new();
    for f in out {
        if !unique.contains(&f) {
            unique.push(f);
        }
    }
    unique
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_file_and_includes_win_as_in_git() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().canonicalize().unwrap();
        let _home = super::super::home::test_home::set(home.clone());
        assert!(hooks_paths().is_empty());
        std::fs::create_dir_all(home.join(".config/git")).unwrap();
        std::fs::write(home.join(".config/git/config"), "[core]\n\thooksPath = .xdg\n").unwrap();
        assert_eq!(hooks_paths(), vec![".xdg"], "the XDG file alone");
        std::fs::write(home.join(".gitconfig"), "[core]\n\thooksPath = .home\n").unwrap();
        assert_eq!(hooks_paths(), vec![".home"], "~/.gitconfig after it");
        std::fs::create_dir(home.join("d")).unwrap();
        std::fs::write(home.join("d/inc"), "[core]\n\thooksPath = .included\n").unwrap();
        std::fs::write(home.join(".gitconfig"), "[core]\n\thooksPath = .home\n[include]\n\tpath = d/inc\n").unwrap();
        assert_eq!(hooks_paths(), vec![".included"], "an include, relative to its file");
        std::fs::write(home.join("d/inc"), "[include]\n\tpath = ~/d/inc\n").unwrap();
        assert_eq!(hooks_paths(), vec![".home"], "an include of itself ends at git's depth");
    }

    /// An attacker's review (cross35): includes at the bottom of a chain 1,500 directories deep were
    /// stat'ed per repository on every later run. One deeper than `deep_paths::MAX_COMPONENTS` is
    /// not followed, and the configuration is capped (said); one as deep as the bound is followed.
    #[test]
    fn an_include_past_the_depth_bound_is_not_followed_and_caps_the_configuration() {
        let t = tempfile::tempdir().unwrap();
        let top = t.path().canonicalize().unwrap();
        let deep = |n: usize| PathBuf::from(format!("/{}", vec!["a"; n].join("/")));
        let (ok, far) = (deep(super::super::deep_paths::MAX_COMPONENTS - 1), deep(super::super::deep_paths::MAX_COMPONENTS));
        let config = top.join("config");
        std::fs::write(&config, format!("[include]\n\tpath = {}\n", ok.display())).unwrap();
        let own = repository(std::slice::from_ref(&config), &top);
        assert!(!own.capped && own.includes.contains(&ok), "{:?} {}", own.includes, own.capped);
        std::fs::write(&config, format!("[include]\n\tpath = {}\n[include]\n\tpath = {}\n", far.display(), ok.display())).unwrap();
        let own = repository(std::slice::from_ref(&config), &top);
        assert!(own.capped && !own.includes.contains(&far) && own.includes.contains(&ok), "{:?} {}", own.includes, own.capped);
    }

    /// An attacker's review: a file the global configuration includes (`~/.gitconfig.local`,
    /// `~/dotfiles/gitconfig`) was writable to a run. Every file read is listed, `includeIf`'s
    /// whatever its condition (its hooks path and template directory taken as possibly applying:
    /// another review), missing ones too.
    #[test]
    fn every_file_read_is_listed_includes_and_conditional_ones_too() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().canonicalize().unwrap();
        let _home = super::super::home::test_home::set(home.clone());
        std::fs::create_dir(home.join("dotfiles")).unwrap();
        std::fs::write(home.join(".gitconfig"), "[include]\n\tpath = ~/.gitconfig.local\n[includeIf \"gitdir:~/work/\"]\n\tpath = dotfiles/work\n").unwrap();
        std::fs::write(home.join("dotfiles/work"), "[core]\n\thooksPath = .work\n[include]\n\tpath = deeper\n").unwrap();
        let read = now().files;
        for p in [home.join(".config/git/config"), home.join(".gitconfig"), home.join(".gitconfig.local"), home.join("dotfiles/work"), home.join("dotfiles/deeper")] {
            assert!(read.contains(&p), "{} in {read:?}", p.display());
        }
        assert_eq!(hooks_paths(), vec![".work"], "an includeIf's is taken as possibly applying");
        std::fs::create_dir_all(home.join(".config/git")).unwrap();
        std::fs::write(home.join(".config/git/config"), "[core]\n\thooksPath = ~/plain\n").unwrap();
        std::fs::write(home.join("dotfiles/work"), "[core]\n\thooksPath = ~/.work\n[init]\n\ttemplateDir = tmpl\n").unwrap();
        let g = now();
        assert_eq!(g.hooks, vec!["~/plain", "~/.work"], "the plain one, then the conditional one");
        for d in [home.join("plain"), home.join(".work"), home.join("dotfiles/tmpl")] {
            assert!(g.host_dirs.contains(&d), "{} in {:?}", d.display(), g.host_dirs);
        }
    }

    /// An attacker's review (gitglobalenv.sh): the host process (an agent harness) ran with
    /// `GIT_CONFIG_GLOBAL=/dev/null`, or another `XDG_CONFIG_HOME`, for its own git; the user's
    /// `~/.gitconfig` and `~/.config/git/config` were not read, and a run rewrote the files they
    /// include and the programs they name. Both are read now: the environment's files and the
    /// defaults of every home, the system's too whatever `GIT_CONFIG_NOSYSTEM` says.
    #[test]
    fn the_environment_hides_no_default_file() {
        let (h1, h2) = (PathBuf::from("/h1"), PathBuf::from("/h2"));
        let system = [PathBuf::from("/etc/gitconfig"), PathBuf::from("/usr/local/etc/gitconfig")];
        let env = |k: &str| match k {
            "GIT_CONFIG_GLOBAL" => Some(PathBuf::from("/dev/null")),
            "GIT_CONFIG_SYSTEM" => Some(PathBuf::from("/harness/system")),
            "GIT_CONFIG_NOSYSTEM" => Some(PathBuf::from("1")),
            "XDG_CONFIG_HOME" => Some(PathBuf::from("/elsewhere")),
            _ => None,
        };
        let read = files_from(&env, &[h1.clone(), h2.clone()], &system);
        let want = [&system[0], &system[1], Path::new("/harness/system"), Path::new("/dev/null"), Path::new("/elsewhere/git/config")];
        for p in want.into_iter().map(Path::to_path_buf).chain([&h1, &h2].into_iter().flat_map(|h| [h.join(".config/git/config"), h.join(".gitconfig")])) {
            assert!(read.contains(&p), "{} in {read:?}", p.display());
        }
        let defaults = files_from(&|_| None, &[h1.clone()], &system);
        assert_eq!(defaults.last(), Some(&h1.join(".gitconfig")), "the user's own last, its hooks path winning: {defaults:?}");
    }

    /// Found by an attacker's review: a repository whose config included 4 files of 64 KiB of
    /// distinct program paths took the host 23 s after the run (a `Vec::contains` per path) and a
    /// later run's setup 33 s (each kept read-only). Read now up to `MAX_ENTRIES` entries, at most
    /// `MAX_PROGRAMS` kept, and said to be `capped`; the bound is generous, catching the quadratic
    /// reading, not timing this one.
    #[test]
    fn a_configuration_of_many_programs_is_read_in_bounded_time_and_said_to_be_capped() {
        let t = tempfile::tempdir().unwrap();
        let top = t.path().canonicalize().unwrap();
        let mut config = String::from("[core]\n\thooksPath = .hooks\n");
        for f in 0..4 {
            let text: String = std::iter::once("[alias]\n".to_string()).chain((0..8000).map(|i| format!("\tp{f}x{i} = !/opt/p{f}/{i}\n"))).collect();
            std::fs::write(top.join(format!("inc{f}")), text).unwrap();
            config.push_str(&format!("[include]\n\tpath = inc{f}\n"));
        }
        std::fs::write(top.join("config"), &config).unwrap();
        let started = std::time::Instant::now();
        let own = repository(&[top.join("config")], &top);
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "{:?}", started.elapsed());
        assert_eq!((own.programs.len(), own.capped, own.hooks.as_deref()), (MAX_PROGRAMS, true, Some(".hooks")));
        assert_eq!(own.includes.len(), 2, "32,000 entries: reading stopped in the second include, past MAX_ENTRIES");
        let small = repository(&[top.join("inc0")], &top);
        assert!(small.capped, "8,000 programs in one file: more than kept");
        std::fs::write(top.join("few"), "[core]\n\tpager = /opt/pager\n").unwrap();
        let few = repository(&[top.join("few")], &top);
        assert_eq!((few.programs, few.capped), (vec![PathBuf::from("/opt/pager")], false));
    }
}
