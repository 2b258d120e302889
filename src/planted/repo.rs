//! One repository found by the walk: which directories hold its metadata (the `.git` directory, the
//! target of a `gitdir:` file, a worktree's common directory), which hooks directory its
//! configuration names, and which files that configuration includes.

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::armed::{self, Armed};
use super::gitconfig;
use super::global_git;
use super::small_file::{self, Read};
use super::hook_links::{self, HookLinks};

/// The git directories of the repository whose `.git` entry is `dot_git` (canonical, existing;
/// the `.git` entry itself is protected by the caller).
pub fn git_dirs(dot_git: &Path) -> Vec<PathBuf> {
    git_dirs_and_ways(dot_git).0
}

/// `git_dirs`, and the paths git follows to reach them that are not canonical as written (`ways`):
/// the `.git` entry when it is a symlink, the path of its `gitdir:` line joined as git joins it,
/// and `commondir`'s. A symlink on one of them that a run can repoint (`lnkf` of `.git -> lnkf ->
/// gf`, `p` of `gitdir: node_modules/p/g`) points the host's git at a git directory of the run's:
/// found by an attacker's review, only where the way led was kept. The caller holds the links on
/// them (`Carver::hold_links_on_the_way`). None for a `.git` directory without `commondir`, the
/// common shape: it costs no system call more.
pub fn git_dirs_and_ways(dot_git: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let top = dot_git.parent().unwrap_or(Path::new("/"));
    let Ok(meta) = dot_git.symlink_metadata() else { return (Vec::new(), Vec::new()) };
    let mut ways = Vec::new();
    if meta.is_symlink() {
        ways.push(dot_git.to_path_buf());
    }
    // Kept as a way when its canonical form differs from it as written: a symlink, `.` or `..` is
    // on it (a path that is its own `realpath` has no symlink on it).
    let resolve = |written: PathBuf, ways: &mut Vec<PathBuf>| {
        let canonical = std::fs::canonicalize(&written).ok();
        if canonical.as_ref() != Some(&written) && !ways.contains(&written) {
            ways.push(written);
        }
        canonical
    };
    // A `.git` directory is its own git directory, and its path is canonical already (the walk
    // joins names of real directories to canonical roots): no `realpath` per repository per run.
    // A symlink to a file is a `.git` file to git, which reads it through the link and takes a
    // relative path from the directory holding `.git`, not from the link's target's (git 2.47).
    // Found by an attacker's review: `.git -> gf` was followed to `gf` and no further, and the git
    // directory `gf` named (in node_modules, which the walk skips) stayed writable.
    let first = if meta.is_dir() {
        Some(dot_git.to_path_buf())
    } else if meta.is_file() || (meta.is_symlink() && dot_git.metadata().is_ok_and(|m| m.is_file())) {
        read_gitdir(dot_git).map(|g| if g.is_absolute() { g } else { top.join(g) }).and_then(|p| resolve(p, &mut ways))
    } else {
        std::fs::canonicalize(dot_git).ok()
    };
    let Some(first) = first else { return (Vec::new(), ways) };
    let mut dirs = vec![first.clone()];
    // A linked worktree (or a submodule's) git dir names the shared one in `commondir`.
    if let Some(text) = small_file::text(&first.join("commondir")) {
        let common = PathBuf::from(text.trim());
        let common = if common.is_absolute() { common } else { first.join(common) };
        if let Some(c) = resolve(common, &mut ways) {
            if !dirs.contains(&c) {
                dirs.push(c);
            }
        }
    }
    (dirs, ways)
}

/// The path of a `gitdir: <path>` file (worktrees, submodules, `--separate-git-dir`), as written.
pub fn read_gitdir(file: &Path) -> Option<PathBuf> {
    let text = small_file::text(file)?;
    let line = text.lines().next()?;
    let path = line.strip_prefix("gitdir:")?.trim();
    (!path.is_empty()).then(|| PathBuf::from(path))
}

/// The hooks directories outside the git directories that git on the host would run hooks from:
/// `core.hooksPath` (relative to the working tree, `~/` to `$HOME`; the repository's own, else
/// `global`, the host's global and system configuration's: `global_git`), its parent when it is husky's
/// `.husky/_` (whose stubs run the scripts in `.husky`), and `.husky` at the top when present
/// (husky sets `core.hooksPath` to it on the next `npm install`). Absolute, possibly missing.
/// Read lossily (`small_file` decodes so): git reads a config with a byte that is not UTF-8 (a
/// Latin-1 `user.name`) all the same; its `core.hooksPath` went unseen (an attacker's review).
/// The files it includes count (`global_git::repository`): git takes a hooks path from them too,
/// and from an `includeIf`'s where its condition holds (`may_apply`).
pub fn hooks_dirs(top: &Path, git_dirs: &[PathBuf], global: &[String]) -> Vec<PathBuf> {
    let own = global_git::repository(&config_files(git_dirs), top);
    hooks_at(top, may_apply(own.hooks, own.maybe_hooks, global))
}

/// The hooks paths git may take in a repository: its own plain one, else the global ones
/// (`global_git::Global::hooks`), and those of its own `includeIf` files whatever their condition.
/// Found by an attacker's review: `[includeIf "gitdir:/"]` naming `core.hooksPath = tools/hk`
/// left `tools/hk` writable; keeping a directory git does not use costs nothing.
fn may_apply(own: Option<String>, maybe: Vec<String>, global: &[String]) -> Vec<String> {
    let mut out = match own {
        Some(h) => vec![h],
        None => global.to_vec(),
    };
    out.extend(maybe.into_iter().filter(|h| !out.contains(h)).collect::<Vec<_>>());
    out
}

/// The configuration files of a repository's git directories, as git may read them (`config.worktree`
/// whether or not `extensions.worktreeConfig` is set: reading one git ignores costs nothing).
pub fn config_files(git_dirs: &[PathBuf]) -> Vec<PathBuf> {
    git_dirs.iter().flat_map(|d| [d.join("config"), d.join("config.worktree")]).collect()
}

/// `hooks_dirs` for the hooks paths `configured` (`may_apply`), each once.
fn hooks_at(top: &Path, configured: Vec<String>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for hp in configured {
        let p = match hp.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(rest)),
            None => Some(top.join(&hp)),
        };
        if let Some(p) = p.map(|p| normalize(&p)) {
            let parent = p.parent().filter(|_| p.file_name().is_some_and(|n| n == "_")).map(Path::to_path_buf);
            for d in parent.into_iter().chain([p]) {
                if !out.contains(&d) {
                    out.push(d);
                }
            }
        }
    }
    let husky = top.join(".husky");
    if husky.is_dir() && !out.contains(&husky) {
        out.push(husky);
    }
    out
}

/// The files of a git directory git takes its configuration from, or where it is: a symlink among
/// them is followed, and where it leads is kept as an included file is. Found by an attacker's
/// review: run 1 made `sub/.git/config` a symlink to `d/cfg`, run 2 put `core.fsmonitor` in `d/cfg`.
pub const OWN_FILES: [&str; 3] = ["config", "config.worktree", "commondir"];

/// The `OWN_FILES` of the git directory `dir` that exist, each with its `lstat`.
pub fn own_files(dir: &Path) -> impl Iterator<Item = (PathBuf, std::fs::Metadata)> + '_ {
    OWN_FILES.iter().filter_map(move |f| {
        let p = dir.join(f);
        p.symlink_metadata().ok().map(|m| (p, m))
    })
}

/// What of `link`, one of a git directory's `OWN_FILES` that is a symlink, is kept as an included
/// file: the link itself when it leads somewhere (the links on its way are held then), else where
/// its target would be made, in its directory's canonical path (a path with `..` below a missing
/// part cannot be resolved: `run 1` made `config -> ../../d/cfg` with no `d/cfg` yet).
pub fn link_kept(link: &Path) -> PathBuf {
    let dangling = std::fs::metadata(link).is_err();
    let target = std::fs::read_link(link).ok().filter(|_| dangling).map(|t| link.parent().unwrap_or(Path::new("/")).join(t));
    let Some(target) = target else { return link.to_path_buf() };
    match (target.parent().and_then(|d| std::fs::canonicalize(d).ok()), target.file_name()) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => normalize(&target),
    }
}

/// What the host made of the configuration git reads for a repository: the keys that make git run
/// a program, and the files it did not read (`small_file`), each with why.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Configured {
    pub keys: Vec<String>,
    pub unjudged: Vec<String>,
}

/// At most this many keys are named in a report (`Configured::keys_named`): a run-written config
/// named thousands, and 300 such repositories made 57 MB of `hostRisks` (found by an attacker's review).
pub const MAX_KEYS_NAMED: usize = super::few_named::MAX_NAMED;

impl Configured {
    /// The keys, the first `MAX_KEYS_NAMED` and how many more, each cut to a bound (`few_named`):
    /// a key's subsection is as long as the config file lets it be.
    pub fn keys_named(&self) -> String {
        super::few_named::listed(&self.keys)
    }

    /// What a report adds of the files not judged (empty when every one was): the user must hear of
    /// them, git itself would read them (and wait forever on a FIFO).
    pub fn unjudged_detail(&self) -> String {
        if self.unjudged.is_empty() {
            return String::new();
        }
        format!("; its configuration could not be judged: {}; git on the host would read it: look at it before running git there", self.unjudged.join(", "))
    }
}

/// The configuration of the repository whose git directories are `dirs` (`git_dirs`): each one's
/// `config` and `config.worktree`, and the first one's `commondir` (which names where the shared
/// configuration is: when it is not judged, neither is that).
pub fn configured(dirs: &[PathBuf]) -> Configured {
    let mut out = Configured::default();
    let mut met = std::collections::HashSet::new();
    let configs = dirs.iter().flat_map(|d| [d.join("config"), d.join("config.worktree")]);
    for file in dirs.first().map(|d| d.join("commondir")).into_iter().chain(configs) {
        match small_file::read(&file) {
            Read::Text(text) if file.file_name().is_some_and(|n| n != "commondir") => {
                out.keys.extend(gitconfig::risky_keys(&text).into_iter().filter(|k| met.insert(k.clone())))
            }
            Read::Unjudged { why } => out.unjudged.push(format!("{} is {why}", file.display())),
            _ => {}
        }
    }
    out
}

/// What a repository's carve-outs are made of: its git directories and hooks directories, the
/// hooks in them that lead elsewhere (`hook_links`), the files its configuration includes and the programs it names
/// (`global_git::repository`: relative ones joined to the including file's directory, `..` taken
/// as the kernel takes it; missing ones too, a run could create them).
#[derive(Debug, PartialEq, Eq)]
pub struct Facts {
    pub dirs: Vec<PathBuf>,
    pub hooks: Vec<PathBuf>,
    pub links: HookLinks,
    pub includes: Vec<PathBuf>,
    /// The programs that configuration (its includes too) names by path (`global_git::Own::programs`):
    /// kept and judged as the included files are. Read with them: no cost of their own.
    pub programs: Vec<PathBuf>,
    /// Their reading stopped at `global_git::MAX_ENTRIES` or `MAX_PROGRAMS` (the result says so).
    pub capped: bool,
    /// Of the files git takes the configuration from (`OWN_FILES`, the `.git` file, the included
    /// ones), the regular files with more than one name (`config_hard`), from the `stat` each takes
    /// here anyway. Still true while the facts are used again: a link made changes the file's ctime
    /// (the stat rule) and raises `IN_ATTRIB` on its watch (`armed`).
    pub hard: Vec<super::hard_linked::HardLinked>,
    /// The paths git follows to the git directories that are not canonical (`git_dirs_and_ways`):
    /// the symlinks on them are held for each run. None in the common shape.
    pub ways: Vec<PathBuf>,
}

/// What `facts` remembers of one repository: what it read the facts from, and the watches that
/// vouch for them when the repository has the common shape (`armed`).
struct Known {
    seen: Vec<Seen>,
    facts: Arc<Facts>,
    /// The global hooks paths the facts were read with: others make them stale.
    global: Vec<String>,
    armed: Option<Armed>,
    /// Watches were refused for these facts (not the common shape, or the watch budget): not
    /// tried again every run, until the facts are read again.
    unarmable: bool,
}

/// Keyed by bytes: std hashes a `Path` component by component, several times slower, and the
/// paths here are the walk's (canonical), so equal paths are equal bytes.
static KNOWN: Mutex<Option<HashMap<OsString, Known>>> = Mutex::new(None);
/// The bytes of path `KNOWN` holds (`Known::path_bytes`), kept with it under its lock.
static KNOWN_BYTES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Repositories remembered at most, and the bytes of path they hold at most: a process that
/// walked very many starts over. In bytes too (found by an attacker's review, cross30): a run made
/// 20,000 directories holding an empty `.git` each at a 3.3 KB path, and the host kept about 14 KB
/// for each, whole paths, for its life (280 MB). 16 MiB holds some 16,000 repositories of
/// ordinary paths.
const MAX_KNOWN: usize = 20_000;

/// The most files included and programs named, of all the repositories' configurations, that one
/// carving keeps (`Carver::repo_paths`): each repository may name `global_git::MAX_PROGRAMS`, and
/// a run that made 1,500 such repositories had every later run keep 384,000 paths (found by an
/// attacker's review, cross34). A project's repositories name a few each.
pub const PATHS_IN_ALL: usize = 1_024;
const MAX_KNOWN_BYTES: usize = 16 << 20;

fn known() -> std::sync::MutexGuard<'static, Option<HashMap<OsString, Known>>> {
    KNOWN.lock().unwrap_or_else(|e| e.into_inner())
}

impl Known {
    /// The bytes of the paths it holds, its key's included.
    fn path_bytes(&self, key: &OsString) -> usize {
        let f = &self.facts;
        let l = &f.links;
        let paths = f.dirs.iter().chain(&f.hooks).chain(&f.includes).chain(&f.programs).chain(&f.ways).chain(&l.linked_dirs).chain(&l.unjudged).chain(&l.unlisted).chain(&l.entries);
        let pairs = l.symlinks.iter().flat_map(|(a, b)| [a, b]).chain(l.hard.iter().map(|(p, _)| p)).chain(f.hard.iter().map(|h| &h.path));
        let seen = self.seen.iter().map(|s| &s.path);
        key.len() + paths.chain(pairs).chain(seen).map(|p| p.as_os_str().len()).sum::<usize>()
    }
}

/// The facts of the repository at `dot_git` (`.git` seen by the walk as inode `walk_ino`), when its
/// watches vouch that nothing they were read from changed: no system call at all. The `.git` is
/// then a directory with entries, as it was (never a placeholder).
pub fn vouched(dot_git: &Path, walk_ino: u64, global: &[String]) -> Option<Arc<Facts>> {
    let known = known();
    let k = known.as_ref()?.get(dot_git.as_os_str()).filter(|k| k.global == global)?;
    k.armed.as_ref().is_some_and(|a| a.vouches(walk_ino)).then(|| Arc::clone(&k.facts))
}

/// `git_dirs` and `hooks_dirs` of the repository whose `.git` entry is `dot_git`, remembered per
/// process and used again while nothing they were read from changed: every run protects every
/// repository of the workspace, and reading each one's configuration again cost hundreds of system
/// calls per run in a workspace of 200 repositories. What is checked instead, a `stat` each: the
/// `.git` entry and each git directory (an entry added there, a `commondir` or `config.worktree`,
/// changes its ctime), each of those files that exists (followed: an edit in place changes its
/// ctime), `.husky` at the top, and each hooks directory and the hooks git would run in it
/// (`hook_links`). A `.git` directory is its own first git directory: one stat.
/// `dot_git_now`: its metadata if the caller just read it (no second stat), following links.
/// `walk_ino`: the inode of `.git` in the walk's listing, when the walk found it; then watches are
/// armed (`armed`) so that the next runs need not even those stats (`vouched`).
/// `global`: the host's global `core.hooksPath`s (`global_git`), read once per run by the caller.
pub fn facts(dot_git: &Path, dot_git_now: Option<&std::fs::Metadata>, walk_ino: Option<u64>, global: &[String]) -> Arc<Facts> {
    let top = dot_git.parent().unwrap_or(Path::new("/"));
    // Watches first: whatever changes from here on raises an event.
    let arm = || walk_ino.and_then(|ino| armed::arm(dot_git, ino));
    let still = |s: &Seen| match dot_git_now {
        Some(m) if s.path == dot_git => s.stat == Some(Seen::of(m)),
        _ => s.still(),
    };
    let (mut armed, mut tried) = (None, false);
    if let Some(k) = known().as_mut().and_then(|m| m.get_mut(dot_git.as_os_str())).filter(|k| k.global == global) {
        // Here because the watches did not vouch (something changed, perhaps only a file at the
        // top): armed again, unless they were refused for these facts.
        // Watches see no included file: a repository with includes is checked by the stat rule.
        if !k.unarmable && k.facts.includes.is_empty() {
            let hook_dirs = hook_links::dirs(&k.facts.dirs, &k.facts.hooks);
            (armed, tried) = (arm().and_then(|a| armed::with_hook_dirs(a, top, &hook_dirs)).and_then(|a| armed::with_hooks(a, &k.facts.links)), true);
        }
        if k.seen.iter().all(still) {
            // Without the walk's inode (the top's repository, while the policy is resolved) there
            // is nothing to arm, and the watches the walk's call armed still vouch for these facts:
            // dropping them raised an `IN_IGNORED` that the watcher counted as a change, so every
            // run walked its whole area again (60,000 directories: +57 ms a run, `bench/scale.js`).
            if walk_ino.is_some() {
                k.unarmable = armed.is_none();
                k.armed = armed;
            }
            return Arc::clone(&k.facts);
        }
    }
    // Read again: armed again, whatever was refused for the facts read before.
    if !tried {
        armed = arm();
    }
    let (dirs, ways) = git_dirs_and_ways(dot_git);
    let global_git::Own { hooks: own, maybe_hooks, includes, programs, capped } = global_git::repository(&config_files(&dirs), top);
    let facts_includes = includes.len();
    let hooks = hooks_at(top, may_apply(own, maybe_hooks, global));
    // A hooks path deeper than `deep_paths` follows is not kept (found by an attacker's review,
    // cross35: one 1,800 levels deep made every later run take a minute and fail, E2BIG): capped, said.
    let (hooks, deep): (Vec<PathBuf>, Vec<PathBuf>) = hooks.into_iter().partition(|h| !super::deep_paths::too_deep(h) && !super::deep_paths::leads_too_deep(h));
    let capped = capped || !deep.is_empty();
    if !includes.is_empty() {
        armed = None;
    }
    // The hooks directories watched before they are listed, their hooks after (`armed`).
    let hook_dirs = hook_links::dirs(&dirs, &hooks);
    armed = armed.and_then(|a| armed::with_hook_dirs(a, top, &hook_dirs));
    let links = hook_links::read(&dirs, &hooks);
    armed = armed.and_then(|a| armed::with_hooks(a, &links));
    let mut seen: Vec<Seen> = Vec::new();
    let mut hard = Vec::new();
    // `config`: what is read of a file git takes its configuration from (`hard`) from the same
    // `stat`; `known`: that stat, when the caller has it (not a symlink's: it follows).
    let mut check = |path: PathBuf, even_absent: bool, config: bool, known: Option<std::fs::Metadata>| {
        if seen.iter().all(|s| s.path != path) {
            let (s, m) = match known {
                Some(m) => (Seen { stat: Some(Seen::of(&m)), path }, Some(m)),
                None => Seen::read(path),
            };
            if let Some(m) = m.filter(|m| config && m.is_file() && m.nlink() > 1) {
                hard.push(super::hard_linked::HardLinked::of(&s.path, &m));
            }
            if even_absent || s.stat.is_some() {
                seen.push(s);
            }
        }
    };
    // A `.git` file (`gitdir: ../real`) says where the configuration is, as `commondir` does:
    // another name of either rewritten pointed the host's git at a run's (an attacker's review).
    check(dot_git.to_path_buf(), true, true, None);
    check(top.join(".husky"), true, false, None);
    let mut includes = includes;
    for d in &dirs {
        check(d.clone(), true, false, None);
        // A file of a git directory that is absent now can appear only as a new entry there,
        // which changes the directory's times: only the present ones need a stat of their own
        // (their `lstat`, which is their `stat` unless they are symlinks).
        for (p, m) in own_files(d) {
            if m.file_type().is_symlink() {
                // Kept where it leads as an included file is (`Carver::repo_includes`).
                includes.push(link_kept(&p));
                check(p, true, true, None);
            } else {
                // `commondir` too: git takes the common directory, hence its config, from it.
                check(p, false, true, Some(m));
            }
        }
    }
    // Watches see nothing outside the repository's directories (as for includes, below).
    if includes.len() > facts_includes {
        armed = None;
    }
    // Followed: a hook made, removed or renamed changes its directory's times; a hook's target
    // replaced (or a symlink on its way) is another inode; a hard link made is a new ctime.
    for p in hook_dirs.iter().chain(&links.entries) {
        check(p.clone(), true, false, None);
    }
    // Followed, missing ones too: an included file appears, is edited or replaced where no
    // directory of the repository's changes (and what it includes in turn may change with it).
    for p in &includes {
        check(p.clone(), true, true, None);
    }
    let read_at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let facts = Arc::new(Facts { dirs, hooks, links, includes, programs, capped, hard, ways });
    // Timestamps are coarse: a change in the same second as this reading could leave the same
    // times behind. Kept only what last changed before that second (as the walk's stat rule).
    if seen.iter().any(|s| s.stat.is_some_and(|st| st.5 >= read_at)) {
        return facts;
    }
    let mut known = known();
    let map = known.get_or_insert_with(Default::default);
    let key = dot_git.as_os_str().to_os_string();
    let unarmable = walk_ino.is_some() && armed.is_none();
    let k = Known { seen, facts: Arc::clone(&facts), global: global.to_vec(), armed, unarmable };
    let bytes = k.path_bytes(&key);
    use std::sync::atomic::Ordering::Relaxed;
    if let Some(old) = map.remove(&key) {
        KNOWN_BYTES.fetch_sub(old.path_bytes(&key), Relaxed);
    }
    // Bounded: a process that walked very many repositories, or very long paths, starts over.
    if map.len() >= MAX_KNOWN || KNOWN_BYTES.load(Relaxed) + bytes > MAX_KNOWN_BYTES {
        map.clear();
        KNOWN_BYTES.store(0, Relaxed);
    }
    if bytes <= MAX_KNOWN_BYTES {
        KNOWN_BYTES.fetch_add(bytes, Relaxed);
        map.insert(key, k);
    }
    facts
}

/// A path and what `stat` (following links) said of it then: identity, size and times, or absent.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    path: PathBuf,
    stat: Option<(u64, u64, u64, i64, i64, i64, i64)>,
}

impl Seen {
    fn now(path: PathBuf) -> Seen {
        Seen::read(path).0
    }

    /// `now`, and the metadata it was made of.
    fn read(path: PathBuf) -> (Seen, Option<std::fs::Metadata>) {
        let m = std::fs::metadata(&path).ok();
        (Seen { stat: m.as_ref().map(Seen::of), path }, m)
    }

    fn of(m: &std::fs::Metadata) -> (u64, u64, u64, i64, i64, i64, i64) {
        use std::os::unix::fs::MetadataExt;
        (m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec())
    }

    fn still(&self) -> bool {
        Seen::now(self.path.clone()).stat == self.stat
    }
}

/// `a/./b/../c` → `a/c`, lexically (a hooks path may not exist yet, so it cannot be canonicalized).
fn normalize(p: &Path) -> PathBuf {
    global_git::without_dots(p, false)
}

/// `HEAD` (not a directory) with `objects` and `refs`, or with `commondir`, of any kind (git's
/// `access` follows symlinks, so a link or a file counts): what git takes for a git directory (as
/// `scan::GitDirParts` says of a listing).
pub fn is_git_dir(d: &Path) -> bool {
    d.join("HEAD").symlink_metadata().is_ok_and(|m| !m.is_dir()) && is_git_dir_but_head(d)
}

/// Whether `d` holds all that makes a git directory but `HEAD` (`is_git_dir`): one whose `HEAD`
/// was moved aside.
pub fn is_git_dir_but_head(d: &Path) -> bool {
    let has = |n: &str| d.join(n).symlink_metadata().is_ok();
    (has("objects") && has("refs")) || has("commondir")
}

/// Whether git's discovery from `top` would take `top` itself for a git directory were its missing
/// `HEAD` made (`is_git_dir_but_head`, with `objects` and `refs` made too): no `HEAD` there, and no
/// `.git` that git takes first: any `.git` but a placeholder (a `gitdir:` file, valid or not: an
/// invalid one stops the discovery; a repository's directory). An attacker's review (fix28): a run
/// wrote `HEAD`, `objects/`, `refs/` and a `config` with `core.worktree = .` and `core.fsmonitor`
/// at its workspace's top, which had no `.git`, and the host's `git status` there during the run
/// ran it (`.git` alone was kept absent). A `.git` directory that is no git directory (an empty or
/// broken one) does not stop git either, which then looks at `top` itself; that is the host's own
/// state, which the run cannot make, and is left out so that a repository's plan stays as it was.
///
/// A `HEAD` in a placeholder's shape (a plan another program runs left it) counts as missing, as a
/// protected name's does: the next run adopts and removes it.
pub fn head_would_count(top: &Path) -> bool {
    let placeholder = |p: &Path| p.symlink_metadata().map(|m| crate::placeholders::is_placeholder(p, &m));
    let git_first = placeholder(&top.join(".git")).is_ok_and(|is| !is);
    !git_first && placeholder(&top.join("HEAD")).unwrap_or(true)
}

/// Whether one of the entries that make `dir` a git directory (`is_git_dir`, which the caller has
/// found it is), or its `config`, changed at or after `since` (unix seconds).
pub fn git_dir_changed_since(dir: &Path, since: i64) -> bool {
    use std::os::unix::fs::MetadataExt;
    let changed = |name: &str| dir.join(name).symlink_metadata().is_ok_and(|m| m.ctime() >= since);
    ["HEAD", "objects", "refs", "commondir", "config"].into_iter().any(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_counts_where_no_dot_git_comes_first() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        assert!(head_would_count(&r), "no .git, no HEAD");
        std::fs::create_dir(r.join("HEAD")).unwrap();
        std::fs::set_permissions(r.join("HEAD"), std::fs::Permissions::from_mode(0o1500)).unwrap();
        assert!(head_would_count(&r), "a placeholder HEAD counts as missing");
        std::fs::set_permissions(r.join("HEAD"), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!head_would_count(&r), "the user's own HEAD");
        std::fs::remove_dir(r.join("HEAD")).unwrap();
        std::fs::create_dir(r.join(".git")).unwrap();
        std::fs::set_permissions(r.join(".git"), std::fs::Permissions::from_mode(0o1500)).unwrap();
        assert!(head_would_count(&r), "a placeholder .git is none");
        std::fs::set_permissions(r.join(".git"), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!head_would_count(&r), "a repository's .git comes first");
        std::fs::remove_dir(r.join(".git")).unwrap();
        std::fs::write(r.join(".git"), "gitdir: elsewhere\n").unwrap();
        assert!(!head_would_count(&r), "a gitdir: file comes first");
    }

    /// The bytes of path the remembered facts hold: each key, each path stat'ed, each of the facts'.
    fn known_path_bytes() -> usize {
        let known = known();
        let Some(map) = known.as_ref() else { return 0 };
        map.iter().map(|(key, k)| key.len() + k.seen.iter().map(|s| s.path.as_os_str().len()).sum::<usize>() + k.facts.dirs.iter().chain(&k.facts.hooks).map(|p| p.as_os_str().len()).sum::<usize>()).sum()
    }

    /// An attacker's review (cross30): a workspace-write run made 20,000 directories holding an
    /// empty `.git` each at a 3.3 KB path, and the host kept about 14 KB for each in the facts it
    /// remembers (its key and every path it stat'ed, whole), for its life: 280 MB, the bound being
    /// 20,000 repositories, not their bytes. Now what they hold is bounded in bytes too (16 MiB).
    ///
    /// Run in a process of its own: reaching the bound clears what this process remembers, every
    /// other test's repositories and their watches with it (as it should: the process starts over),
    /// and a test beside it that had just remembered its repository found it read again instead
    /// of vouched for (`armed`'s `another_repository_at_the_same_path_is_read`, once under load;
    /// every time with a pause between its two runs).
    #[test]
    fn the_remembered_facts_are_bounded_in_bytes() {
        const NAME: &str = "planted::repo::tests::the_remembered_facts_are_bounded_in_bytes";
        if std::env::var_os("SANDSPAWN_KNOWN_BOUND_INNER").is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
                .env("SANDSPAWN_KNOWN_BOUND_INNER", "1")
                .output()
                .unwrap();
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success() && text.contains("1 passed"), "in a process of its own:\n{text}");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let mut deep = t.path().canonicalize().unwrap();
        for i in 0..13 {
            deep.push(format!("{i:02}{}", "d".repeat(250)));
        }
        let n = 2_000;
        for i in 0..n {
            let d = deep.join(format!("r{i:05}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(".git"), "").unwrap();
        }
        // Facts are remembered once their files are older than the second they are read in.
        std::thread::sleep(std::time::Duration::from_millis(1_100));
        for i in 0..n {
            facts(&deep.join(format!("r{i:05}/.git")), None, None, &[]);
        }
        let bytes = known_path_bytes();
        assert!(bytes <= MAX_KNOWN_BYTES, "{} MB of paths remembered for {n} repositories", bytes >> 20);
    }

    #[test]
    fn worktree_gitdir_and_commondir() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("main/.git/worktrees/wt")).unwrap();
        std::fs::write(r.join("main/.git/worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::create_dir(r.join("wt")).unwrap();
        std::fs::write(r.join("wt/.git"), format!("gitdir: {}\n", r.join("main/.git/worktrees/wt").display())).unwrap();
        assert_eq!(git_dirs(&r.join("wt/.git")), vec![r.join("main/.git/worktrees/wt"), r.join("main/.git")]);
        std::fs::create_dir(r.join("sub")).unwrap();
        std::fs::write(r.join("sub/.git"), "gitdir: ../main/.git\n").unwrap();
        assert_eq!(git_dirs(&r.join("sub/.git")), vec![r.join("main/.git")]);
        std::fs::write(r.join("sub/.git"), "garbage").unwrap();
        assert!(git_dirs(&r.join("sub/.git")).is_empty());
    }

    /// Git's reading (checked with git 2.47): a `.git` symlink to a file is that `gitdir:` file,
    /// its relative path taken from the directory holding `.git`, not from the link's target's;
    /// a `commondir` symlink is read through too, its path relative to the git directory.
    #[test]
    fn a_dot_git_symlink_to_a_gitdir_file() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        for d in ["sub/g", "sub/common", "other/g", "other/common"] {
            std::fs::create_dir_all(r.join(d)).unwrap();
        }
        std::fs::write(r.join("other/gf"), "gitdir: g\n").unwrap();
        std::os::unix::fs::symlink("../other/gf", r.join("other/link")).unwrap();
        std::os::unix::fs::symlink("../other/link", r.join("sub/.git")).unwrap();
        assert_eq!(git_dirs(&r.join("sub/.git")), vec![r.join("sub/g")]);
        std::fs::write(r.join("other/cd"), "../common\n").unwrap();
        std::os::unix::fs::symlink("../../other/cd", r.join("sub/g/commondir")).unwrap();
        assert_eq!(git_dirs(&r.join("sub/.git")), vec![r.join("sub/g"), r.join("sub/common")]);
        // A symlink to a directory is that git directory, wherever it is.
        std::fs::remove_file(r.join("sub/.git")).unwrap();
        std::os::unix::fs::symlink("../other/g", r.join("sub/.git")).unwrap();
        assert_eq!(git_dirs(&r.join("sub/.git")), vec![r.join("other/g")]);
    }

    /// Found by an attacker's review (rfix21/gitlink_chain.js): the paths git follows to the git
    /// directories, whose symlinks the caller holds; none for a plain `.git` directory.
    #[test]
    fn the_ways_to_the_git_directories() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("plain/.git")).unwrap();
        assert_eq!(git_dirs_and_ways(&r.join("plain/.git")), (vec![r.join("plain/.git")], vec![]));
        for d in ["sub/nm/gg/g", "sub/nm/gg/common"] {
            std::fs::create_dir_all(r.join(d)).unwrap();
        }
        std::os::unix::fs::symlink("gg", r.join("sub/nm/p")).unwrap();
        std::fs::write(r.join("sub/gf"), "gitdir: nm/p/g\n").unwrap();
        std::os::unix::fs::symlink("gf", r.join("sub/lnkf")).unwrap();
        std::os::unix::fs::symlink("lnkf", r.join("sub/.git")).unwrap();
        std::fs::write(r.join("sub/nm/gg/g/commondir"), "../../p/common\n").unwrap();
        let (dirs, ways) = git_dirs_and_ways(&r.join("sub/.git"));
        assert_eq!(dirs, vec![r.join("sub/nm/gg/g"), r.join("sub/nm/gg/common")]);
        assert_eq!(ways, vec![r.join("sub/.git"), r.join("sub/nm/p/g"), r.join("sub/nm/gg/g/../../p/common")]);
        // Written canonical: no way to hold.
        std::fs::write(r.join("sub/nm/gg/g/commondir"), format!("{}\n", r.join("sub/nm/gg/common").display())).unwrap();
        assert_eq!(git_dirs_and_ways(&r.join("sub/.git")).1, vec![r.join("sub/.git"), r.join("sub/nm/p/g")]);
    }

    /// A repository whose `.git` and config are old enough for `facts` to remember them.
    fn remembered_repository() -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::write(r.join(".git/config"), "[core]\n").unwrap();
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(5);
        for p in [r.join(".git/config"), r.join(".git")] {
            std::fs::File::open(&p).unwrap().set_modified(past).unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(1100)); // ctime (now) must be older too
        (t, r)
    }

    /// The top's repository is looked at without the walk's inode while the policy is resolved,
    /// and again with it by the walk: the first look dropped the walk's watches (an `IN_IGNORED`
    /// the watcher counts as a change), so no run took the quiet path and a 60,000-directory
    /// workspace was walked again at every run (+57 ms). The watches must still vouch after it.
    #[test]
    fn a_look_without_the_walk_s_inode_keeps_the_watches_that_vouch() {
        use std::os::unix::fs::MetadataExt;
        let (_t, r) = remembered_repository();
        let dot_git = r.join(".git");
        let ino = dot_git.metadata().unwrap().ino();
        let first = facts(&dot_git, None, Some(ino), &[]);
        if vouched(&dot_git, ino, &[]).is_none() {
            return; // no inotify here (the watch budget spent): nothing is armed to keep
        }
        assert!(std::sync::Arc::ptr_eq(&first, &facts(&dot_git, None, None, &[])), "remembered");
        assert!(vouched(&dot_git, ino, &[]).is_some(), "the walk's watches were dropped by a look without its inode");
    }

    #[test]
    fn facts_are_read_again_when_the_configuration_changes() {
        let (_t, r) = remembered_repository();
        let first = facts(&r.join(".git"), None, None, &[]);
        assert!(first.hooks.is_empty());
        assert!(std::sync::Arc::ptr_eq(&first, &facts(&r.join(".git"), None, None, &[])), "remembered");
        std::fs::write(r.join(".git/config"), "[core]\n\thooksPath = hooks\n").unwrap();
        assert_eq!(facts(&r.join(".git"), None, None, &[]).hooks, vec![r.join("hooks")], "an edit in place is seen");
        std::fs::create_dir(r.join(".husky")).unwrap();
        assert_eq!(facts(&r.join(".git"), None, None, &[]).hooks, vec![r.join("hooks"), r.join(".husky")], ".husky appearing is seen");
    }

    #[test]
    fn a_configuration_file_that_appears_is_seen_without_a_stat_of_its_own() {
        let (_t, r) = remembered_repository();
        let first = facts(&r.join(".git"), None, None, &[]);
        assert!(std::sync::Arc::ptr_eq(&first, &facts(&r.join(".git"), None, None, &[])), "remembered");
        let meta = std::fs::symlink_metadata(r.join(".git")).unwrap();
        assert!(std::sync::Arc::ptr_eq(&first, &facts(&r.join(".git"), Some(&meta), None, &[])), "the caller's reading of .git counts");
        // Absent when read, so not stat-ed itself: its arrival changes the git directory's times.
        std::fs::write(r.join(".git/config.worktree"), "[core]\n\thooksPath = wt-hooks\n").unwrap();
        assert_eq!(facts(&r.join(".git"), None, None, &[]).hooks, vec![r.join("wt-hooks")]);
    }

    /// The global hooks path is the repository's unless it names its own, and facts remembered
    /// with another global one are read again (the user's global configuration changed).
    #[test]
    fn the_global_hooks_path_counts_unless_the_repository_names_one() {
        let (_t, r) = remembered_repository();
        assert!(facts(&r.join(".git"), None, None, &[]).hooks.is_empty());
        assert_eq!(facts(&r.join(".git"), None, None, &[".githooks".to_string()]).hooks, vec![r.join(".githooks")]);
        assert_eq!(facts(&r.join(".git"), None, None, &["/abs/hooks".to_string()]).hooks, vec![PathBuf::from("/abs/hooks")]);
        std::fs::write(r.join(".git/config"), "[core]\n\thooksPath = own\n").unwrap();
        assert_eq!(hooks_dirs(&r, &[r.join(".git")], &[".githooks".to_string()]), vec![r.join("own")]);
    }

    #[test]
    fn husky_hooks_dirs() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        std::fs::create_dir_all(r.join(".husky")).unwrap();
        assert_eq!(hooks_dirs(&r, &[r.join(".git")], &[]), vec![r.join(".husky")]);
        std::fs::write(r.join(".git/config"), "[core]\n\thooksPath = .husky/_\n").unwrap();
        assert_eq!(hooks_dirs(&r, &[r.join(".git")], &[]), vec![r.join(".husky"), r.join(".husky/_")]);
        std::fs::write(r.join(".git/config"), "[core]\n\thooksPath = ./tools/../hooks\n").unwrap();
        assert_eq!(hooks_dirs(&r, &[r.join(".git")], &[]), vec![r.join("hooks"), r.join(".husky")]);
    }

    /// Found by an attacker's review (fixes20): a git directory's `config` a symlink into the
    /// workspace (where it leads is an include, a dangling one's target where it would be made), a
    /// `commondir` and a `.git` file with other names (in `hard`).
    #[test]
    fn a_git_directory_s_links_are_facts() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("sub/.git")).unwrap();
        std::fs::create_dir_all(r.join("d")).unwrap();
        std::os::unix::fs::symlink("../../d/cfg", r.join("sub/.git/config")).unwrap();
        std::fs::write(r.join("sub/.git/commondir"), ".\n").unwrap();
        std::fs::hard_link(r.join("sub/.git/commondir"), r.join("d/notes.txt")).unwrap();
        assert_eq!(link_kept(&r.join("sub/.git/config")), r.join("d/cfg"));
        let f = facts(&r.join("sub/.git"), None, None, &[]);
        assert!(f.includes.contains(&r.join("d/cfg")), "{:?}", f.includes);
        assert_eq!(f.hard.iter().map(|h| h.path.clone()).collect::<Vec<_>>(), [r.join("sub/.git/commondir")]);
        std::fs::write(r.join("d/cfg"), "[core]\n").unwrap();
        assert_eq!(link_kept(&r.join("sub/.git/config")), r.join("sub/.git/config"), "there: the link, whose way is held");
        std::fs::create_dir_all(r.join("w")).unwrap();
        std::fs::write(r.join("w/.git"), "gitdir: ../sub/.git\n").unwrap();
        std::fs::hard_link(r.join("w/.git"), r.join("d/w.txt")).unwrap();
        let f = facts(&r.join("w/.git"), None, None, &[]);
        assert!(f.hard.iter().any(|h| h.path == r.join("w/.git")), "{:?}", f.hard);
        assert!(f.includes.contains(&r.join("sub/.git/config")), "{:?}", f.includes);
    }

    /// Found by an attacker's review: a repository's files a run planted as FIFOs blocked the
    /// host's reading of them in `open` forever.
    #[test]
    fn planted_fifos_stall_no_reading_of_a_repository() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join(".git")).unwrap();
        for name in ["config", "config.worktree", "commondir"] {
            let c = std::ffi::CString::new(r.join(".git").join(name).as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid C string.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let top = r.clone();
        std::thread::spawn(move || {
            let dirs = git_dirs(&top.join(".git"));
            tx.send((hooks_dirs(&top, &dirs, &[]), dirs)).unwrap();
        });
        let (hooks, dirs) = rx.recv_timeout(std::time::Duration::from_secs(5)).expect("returns, not blocked in open");
        assert_eq!(dirs, vec![r.join(".git")]);
        assert!(hooks.is_empty());
        // Reported, not taken for harmless; what can be read still judged.
        std::fs::remove_file(r.join(".git/config")).unwrap();
        std::fs::write(r.join(".git/config"), "[core]\n\tfsmonitor = x\n").unwrap();
        let config = configured(&dirs);
        assert_eq!(config.keys, ["core.fsmonitor"]);
        let fifo = |n: &str| format!("{} is a FIFO, on which git on the host would wait forever", r.join(".git").join(n).display());
        assert_eq!(config.unjudged, [fifo("commondir"), fifo("config.worktree")]);
        assert!(config.unjudged_detail().contains("could not be judged"));
    }

    /// Found by an attacker's review: every risky key of a run-written config was named in the
    /// report (thousands, megabytes of `hostRisks`); the same config as `config.worktree` named
    /// them all twice.
    #[test]
    fn a_report_names_a_bounded_number_of_keys() {
        let t = tempfile::tempdir().unwrap();
        let git = t.path().join(".git");
        std::fs::create_dir(&git).unwrap();
        let text: String = std::iter::once("[alias]\n".to_string()).chain((0..5000).map(|i| format!("\ta{i} = !x\n"))).collect();
        std::fs::write(git.join("config"), &text).unwrap();
        std::fs::write(git.join("config.worktree"), &text).unwrap();
        let config = configured(&[git]);
        assert_eq!(config.keys.len(), 5000, "each once");
        let named = config.keys_named();
        assert!(named.starts_with("alias.a0, alias.a1, ") && named.ends_with("alias.a15 and 4984 more"), "{named}");
        assert_eq!(Configured { keys: vec!["core.pager".into()], unjudged: vec![] }.keys_named(), "core.pager");
    }
}
