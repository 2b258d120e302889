//! Symlinks a run made in a writable root, judged by where they lead on the host. The walk never
//! follows a link, and never walks the shared temporary directories; but the host's `cd lib && git
//! status` follows `lib` and runs git in whatever repository is there. Found by an attacker's
//! review: a bare-style git directory planted in `/tmp` (`core.worktree=.`, `core.fsmonitor`), and
//! the workspace's `lib` made a link to it.
//!
//! Only the link's target is looked at, on the host, without running anything: its path resolved
//! (`canonicalize`, which the kernel bounds), then what git's discovery would find from there
//! (`lstat`s of a few names per directory upwards). Judged both after a direct run (`detect`) and
//! on a change set (`review::risks`).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::repo::Configured;
use crate::policy::path_walk::Unjudged;
pub(super) use super::hook_links::resolve;

/// Directories above a link's target that git's discovery is followed through.
const MAX_LEVELS: usize = 256;

/// Where a link leads, as far as the judge needs: the roots the walk (or the change set) covers,
/// and which repositories there are known not to be the run's.
pub struct Places<'a> {
    /// The walked (direct mode) or reviewed roots: what lies in them is judged there already.
    pub roots: &'a [PathBuf],
    /// Whether a git directory or `.git` entry found by discovery is one the run could not have
    /// planted (direct mode: the walk saw it before the run, as the same inode; review mode: it
    /// lies in a reviewed root, whose changes are judged on the set).
    pub known: &'a dyn Fn(&Path) -> bool,
}

/// Why a link is a host risk (`detect::link_risk` says it).
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Git run where it leads would use the repository at `git` (a `.git` entry or a git directory),
    /// which the run could have planted; what its configuration sets that runs programs, and what
    /// of it could not be judged.
    Repository { git: PathBuf, config: Configured },
    /// It leads into a shared temporary directory.
    Shared,
    /// Its way could not be followed: too long (`path_walk::MAX_STEPS`), or through a symlink of
    /// /proc, which leads wherever the process following it is (`/proc/self/cwd/../../tmp/x`: from
    /// this process's cwd, not from the host shell's that later `cd`s through it). Where it leads
    /// was not judged.
    Unjudged(Unjudged),
}

/// Whether the symlink at `link` (its target `target`, as the link holds it) is a host risk: git
/// run in it on the host would use a repository the run could have planted (below a root and not
/// known, or in a shared place), or it leads into a shared place (`shared_places`: `/tmp`, the
/// host's `$TMPDIR`, sandspawn's state), which any later run, or any process on the host, can fill in.
pub fn judge(link: &Path, target: &Path, places: &Places) -> Option<Verdict> {
    judge_resolved(resolve(link, target), places, &mut |d| Some(discover(d)))
}

/// `judge`, given where the link leads (`resolve`'s answer): the walk after a run resolves each
/// link it judges once, for this and for `links_into_nm`.
/// Git's discovery is `discover`'s (`links_budget::LinksBudget::discover`, from the judgement's
/// budget): `None`, past it, leaves the link unjudged.
pub fn judge_resolved(resolved: Result<PathBuf, Unjudged>, places: &Places, discover: &mut dyn FnMut(&Path) -> Option<Vec<PathBuf>>) -> Option<Verdict> {
    let resolved = match resolved {
        Ok(resolved) => resolved,
        Err(why) => return Some(Verdict::Unjudged(why)),
    };
    let inside = |p: &Path| places.roots.iter().any(|r| p.starts_with(r));
    let (temporary, state) = shared_places(|k| std::env::var_os(k).map(PathBuf::from));
    let under = |dirs: &[PathBuf], p: &Path| dirs.iter().any(|s| p.starts_with(s));
    // sandspawn's state counts wherever it is: inside a root too (a cwd of $HOME), where the walk
    // does not read it and runs find it covered.
    let shared = |p: &Path| (!inside(p) && under(&temporary, p)) || under(&state, p);
    let Some(found) = discover(&resolved) else { return Some(Verdict::Unjudged(Unjudged::Spent)) };
    if let Some(git) = found.into_iter().find(|g| !(places.known)(g) && (inside(g) || shared(g))) {
        // Possibly in a shared place, which any process fills in: read as bounded as the run's own.
        let config = super::repo::configured(&git_dirs_of(&git));
        return Some(Verdict::Repository { git, config });
    }
    shared(&resolved).then_some(Verdict::Shared)
}

/// Whether `resolved` (a path `resolve` made) lies in a shared place, as `judge` decides: a shared
/// temporary directory outside `roots`, or sandspawn's state wherever it is.
pub fn in_shared_place(resolved: &Path, roots: &[PathBuf]) -> bool {
    SharedPlaces::now().hold(resolved, roots)
}

/// The shared places (`shared_places`) as the host process has them now: found once (a few
/// `lstat`s), then each path is judged by comparing prefixes, no system call (a carving judges
/// every repository's git directories by it, on every run).
#[derive(Debug, Clone, Default)]
pub struct SharedPlaces {
    temporary: Vec<PathBuf>,
    state: Vec<PathBuf>,
}

impl SharedPlaces {
    pub fn now() -> SharedPlaces {
        let (temporary, state) = shared_places(|k| std::env::var_os(k).map(PathBuf::from));
        SharedPlaces { temporary, state }
    }

    /// `in_shared_place`, for a canonical `resolved`.
    pub fn hold(&self, resolved: &Path, roots: &[PathBuf]) -> bool {
        // By bytes (`paths::starts_with`): asked of every nested repository's git directories every run.
        let starts_with = |base: &PathBuf| crate::policy::paths::starts_with(resolved, base);
        let under = |dirs: &[PathBuf]| dirs.iter().any(starts_with);
        (!roots.iter().any(starts_with) && under(&self.temporary)) || under(&self.state)
    }
}

/// What git's discovery may use when run in `dir`, nearest first. Git stops at a `.git` entry only
/// when it is a repository: a regular file (through a symlink too; a `gitdir:` file, which git uses
/// or dies on), or a directory (through a symlink too) that is a git directory. A `.git` that is
/// missing, dangling, empty or otherwise no git directory is passed over: git then takes the
/// directory itself for a bare git directory when it is one, else goes up. Found by an attacker's
/// review: discovery stopped at a dangling `x/.git`, kept and judged it, and git used `x/config`.
/// Each entry that may be what git uses (`repo::is_git_dir`'s loose reading) is returned, and the
/// walk up stops only where git surely stops (`surely_git_dir`): erring towards judging both.
pub(super) fn discover(dir: &Path) -> Vec<PathBuf> {
    discover_in(dir, &mut Looked::new(), &mut || true).unwrap_or_default()
}

/// What `discover` found in each directory it looked at (its entries, whether git stops there):
/// kept for one look at many links, whose ways up share directories (the workspace's, read once).
pub(super) type Looked = std::collections::HashMap<PathBuf, (Vec<PathBuf>, bool)>;

/// `discover`, with what `looked` holds taken as found; each directory not in it first paid for
/// by `spend`: `None` when it refuses (a look's budget, `unwalked_links::MAX_LOOK_STEPS`).
pub(super) fn discover_in(dir: &Path, looked: &mut Looked, spend: &mut dyn FnMut() -> bool) -> Option<Vec<PathBuf>> {
    let mut found = Vec::new();
    for d in dir.ancestors().take(MAX_LEVELS) {
        if !looked.contains_key(d) {
            if !spend() {
                return None;
            }
            looked.insert(d.to_path_buf(), look_in(d));
        }
        // Looked up by reference: a key made for each of a deep way's ancestors cost as much.
        let (here, stop) = &looked[d];
        found.extend(here.iter().cloned());
        if *stop {
            break;
        }
    }
    Some(found)
}

/// What git's discovery may take in `d`: its `.git`, `d` itself, and whether it surely stops there.
pub(super) fn look_in(d: &Path) -> (Vec<PathBuf>, bool) {
    let dot_git = d.join(".git");
    match dot_git.metadata() {
        Ok(m) if m.is_file() => return (vec![dot_git], true),
        Ok(m) if m.is_dir() && super::repo::is_git_dir(&dot_git) => {
            if surely_git_dir(&dot_git) {
                return (vec![dot_git], true);
            }
            let sure = super::repo::is_git_dir(d) && surely_git_dir(d);
            let itself = super::repo::is_git_dir(d).then(|| d.to_path_buf());
            return (std::iter::once(dot_git).chain(itself).collect(), sure);
        }
        _ => {}
    }
    if super::repo::is_git_dir(d) {
        return (vec![d.to_path_buf()], surely_git_dir(d));
    }
    (Vec::new(), false)
}

/// Whether git surely takes `d` for a git directory (its `is_git_directory`): a `HEAD` it accepts
/// (`validate_headref`: a symlink into `refs/`, `ref: refs/...`, or an object id) and `objects` and
/// `refs` directories it may search. Stricter than git where unsure (a `commondir`): a wrong "no"
/// only makes discovery look further up.
fn surely_git_dir(d: &Path) -> bool {
    // As git asks (`access(X_OK)`); it does not ask whether it is a directory.
    let searchable = |n: &str| nix::unistd::access(&d.join(n), nix::unistd::AccessFlags::X_OK).is_ok();
    let head = d.join("HEAD");
    let head_ok = match head.symlink_metadata() {
        Ok(m) if m.is_symlink() => std::fs::read_link(&head).is_ok_and(|t| t.as_os_str().as_encoded_bytes().starts_with(b"refs/")),
        Ok(m) if m.is_file() => super::small_file::text(&head).is_some_and(|t| valid_head(&t)),
        _ => false,
    };
    head_ok && searchable("objects") && searchable("refs") && d.join("commondir").symlink_metadata().is_err()
}

/// `HEAD`'s text as git accepts it: `ref:` then `refs/...`, or a hexadecimal object id.
fn valid_head(text: &str) -> bool {
    if let Some(r) = text.strip_prefix("ref:") {
        return r.trim_start().starts_with("refs/");
    }
    let hex = text.bytes().take_while(|b| b.is_ascii_hexdigit()).count();
    hex == 40 || hex == 64
}

/// The git directories whose configuration git reads for `git` (a `.git` entry or a git directory).
pub(super) fn git_dirs_of(git: &Path) -> Vec<PathBuf> {
    if git.file_name().is_some_and(|n| n == ".git") {
        super::repo::git_dirs(git)
    } else {
        vec![git.to_path_buf()]
    }
}

/// Where anything may have been put by another run or another process, canonical: the host's
/// shared temporary directories (`/tmp` and the host process's `$TMPDIR`, which a run with `tmp:
/// 'writable'`, the default in workspace-write, may write), then sandspawn's own state directory
/// and stores (the tool caches hold what runs wrote in their `~/.npm` or `~/.cargo`: a repository
/// planted there and a workspace entry made a link to it had the host's git run it; found by a
/// fixer). `var` reads the host process's environment.
fn shared_places(var: impl Fn(&str) -> Option<PathBuf>) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let canonical = |dirs: Vec<Option<PathBuf>>| -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = dirs
            .into_iter()
            .flatten()
            .filter(|p| p.is_absolute())
            // What exists made canonical, the rest as written: a store made later is judged too.
            .map(|p| resolve(Path::new("/"), &p).unwrap_or(p))
            .filter(|p| p.parent().is_some())
            .collect();
        dirs.sort();
        dirs.dedup();
        dirs
    };
    let temporary = canonical(vec![Some(PathBuf::from("/tmp")), var("TMPDIR")]);
    let state = canonical(vec![crate::state_dir::base(&var), var("SANDSPAWN_TOOL_CACHE_DIR"), var("SANDSPAWN_CHANGE_SET_DIR")]);
    (temporary, state)
}

/// The symlinks among `candidates` (those the walk after the run found made since the baseline, in
/// the directories it read again) that still are: their ctime is not older than the baseline
/// `since_ns` (`listing::changed_since`: a link's target cannot change in place; a new one, or one
/// renamed into place, gets a new ctime), with what each holds.
pub fn made_since(candidates: &[PathBuf], since_ns: i64) -> impl Iterator<Item = (&PathBuf, PathBuf)> {
    candidates.iter().filter_map(move |p| {
        let made = |m: &std::fs::Metadata| super::listing::changed_since((m.ctime(), m.ctime_nsec()), since_ns);
        p.symlink_metadata().ok().filter(|m| m.file_type().is_symlink() && made(m))?;
        std::fs::read_link(p).ok().map(|t| (p, t))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandspawn_s_state_is_a_shared_place_wherever_it_is_and_whether_it_exists_yet() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("home/.local/state")).unwrap();
        std::os::unix::fs::symlink(r.join("home"), r.join("via")).unwrap();
        let env = |k: &str| match k {
            "HOME" => Some(r.join("via")),
            "SANDSPAWN_TOOL_CACHE_DIR" => Some(r.join("caches")),
            "TMPDIR" => Some(PathBuf::from("relative")),
            _ => None,
        };
        let (temporary, state) = shared_places(env);
        assert_eq!(temporary, [PathBuf::from("/tmp")]);
        assert_eq!(state, [r.join("caches"), r.join("home/.local/state/sandspawn")]);
    }

    #[test]
    fn resolves_what_exists_and_appends_the_rest() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir(r.join("a")).unwrap();
        std::os::unix::fs::symlink(r.join("a"), r.join("via")).unwrap();
        assert_eq!(resolve(&r.join("l"), Path::new("via/x/../y")), Ok(r.join("a/y")));
        assert_eq!(resolve(&r.join("a/l"), Path::new("..")), Ok(r.clone()));
        assert_eq!(resolve(&r.join("l"), &r.join("missing/deep")), Ok(r.join("missing/deep")));
    }

    #[test]
    fn discovery_finds_a_dot_git_or_a_git_directory_above() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join("bare/objects")).unwrap();
        std::fs::create_dir_all(r.join("bare/refs")).unwrap();
        std::fs::create_dir_all(r.join("bare/sub/deeper")).unwrap();
        std::fs::write(r.join("bare/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(r.join("repo/.git")).unwrap();
        std::fs::create_dir_all(r.join("repo/src")).unwrap();
        std::fs::create_dir_all(r.join("repo/.git/objects")).unwrap();
        std::fs::create_dir_all(r.join("repo/.git/refs")).unwrap();
        std::fs::write(r.join("repo/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(discover(&r.join("bare/sub/deeper")), [r.join("bare")]);
        assert_eq!(discover(&r.join("repo/src")), [r.join("repo/.git")]);
    }

    /// Found by an attacker's review (rfix22, nm_dangling_git.js): a `.git` that is no repository
    /// (dangling, empty) is passed over by git, which takes the directory itself for a git directory.
    #[test]
    fn discovery_passes_over_a_dot_git_that_is_no_repository_as_git_does() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        for x in ["dangling", "empty", "badhead"] {
            let d = r.join(x);
            std::fs::create_dir_all(d.join("objects")).unwrap();
            std::fs::create_dir_all(d.join("refs")).unwrap();
            std::fs::write(d.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        }
        std::os::unix::fs::symlink("/nonexistent-discover-test", r.join("dangling/.git")).unwrap();
        std::fs::create_dir(r.join("empty/.git")).unwrap();
        assert_eq!(discover(&r.join("dangling")), [r.join("dangling")]);
        assert_eq!(discover(&r.join("empty")), [r.join("empty")]);
        // A `.git` git may or may not take (a `HEAD` it refuses): both, nearest first.
        let g = r.join("badhead/.git");
        std::fs::create_dir_all(g.join("objects")).unwrap();
        std::fs::create_dir_all(g.join("refs")).unwrap();
        std::fs::write(g.join("HEAD"), "nonsense\n").unwrap();
        assert_eq!(discover(&r.join("badhead")), [g, r.join("badhead")]);
        // A `.git` file stops it, as git stops (uses it or dies).
        std::fs::remove_dir(r.join("empty/.git")).unwrap();
        std::fs::write(r.join("empty/.git"), "gitdir: nowhere\n").unwrap();
        assert_eq!(discover(&r.join("empty")), [r.join("empty/.git")]);
    }

    #[test]
    fn a_link_into_a_root_to_a_known_repository_is_no_risk_and_one_to_a_new_one_is() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        let ws = r.join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::create_dir_all(ws.join("dist/v1")).unwrap();
        std::fs::create_dir_all(ws.join("node_modules/evil/objects")).unwrap();
        std::fs::create_dir_all(ws.join("node_modules/evil/refs")).unwrap();
        std::fs::write(ws.join("node_modules/evil/HEAD"), "x").unwrap();
        std::fs::write(ws.join("node_modules/evil/config"), "[core]\n\tfsmonitor = x\n").unwrap();
        let roots = [ws.clone()];
        let known_git = ws.join(".git");
        let known = |g: &Path| g == known_git;
        let places = Places { roots: &roots, known: &known };
        assert_eq!(judge(&ws.join("latest"), Path::new("dist/v1"), &places), None);
        assert_eq!(judge(&ws.join("self"), Path::new("."), &places), None);
        assert_eq!(judge(&ws.join("usr"), Path::new("/usr/lib"), &places), None, "outside every root and shared directory");
        // Found by an attacker's review: judged from this process's cwd, it led nowhere.
        let ups = "../".repeat(r.components().count() + 1);
        let magic = format!("/proc/self/cwd/{ups}{}", ws.join("node_modules/evil").display());
        assert_eq!(judge(&ws.join("magic"), Path::new(&magic), &places), Some(Verdict::Unjudged(Unjudged::ThroughProc)));
        let v = judge(&ws.join("lib"), Path::new("node_modules/evil"), &places);
        let config = Configured { keys: vec!["core.fsmonitor".into()], unjudged: Vec::new() };
        assert_eq!(v, Some(Verdict::Repository { git: ws.join("node_modules/evil"), config }));
    }
}
