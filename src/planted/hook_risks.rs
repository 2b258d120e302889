//! What a run's plan kept of the hooks that lead elsewhere (`hook_links`): said in the run's result
//! before it (`notEnforced`: hard-linked hooks, hooks directories past the bound) and checked after
//! it (`hostRisks`: a hard-linked hook written, a symlinked one whose target path changed, one that
//! leads into a shared temporary directory).

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use super::hook_links::{led_to, HookLinks, MAX_ENTRIES};

/// Steps (hooks directory entries listed, components of hooks' ways looked up) one run's checks
/// before it, and again after it, take at most in all (`path_walk::RunBudget`): about a second of
/// host time at worst, however many repositories and linked hooks a run planted.
pub const RUN_HOOK_STEPS: usize = 250_000;

/// What the check after a run found: a `hooks-written` host risk, or a `link-to-shared-directory`
/// one (`shared`). `detect` makes the entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    pub shared: bool,
    pub detail: String,
}

pub use super::hard_linked::HardLinked;

/// What a run's plan kept of the hooks that lead elsewhere, for its result (`not_enforced`) and for
/// the check after it (`after_run`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Kept {
    /// Symlinked hooks and where each led when the run was planned.
    pub symlinks: Vec<(PathBuf, PathBuf)>,
    /// Symlinked hooks whose way could not be judged (`HookLinks::unjudged`).
    pub unjudged: Vec<PathBuf>,
    /// Those that lead into a shared temporary directory (`links::in_shared_place`).
    pub shared: Vec<(PathBuf, PathBuf)>,
    pub hard: Vec<HardLinked>,
    pub unlisted: Vec<PathBuf>,
    /// Repositories (their `.git`, or the global configuration's first file) whose configuration
    /// was read only up to `global_git`'s bounds (`global_git::Own::capped`).
    pub configs_capped: Vec<PathBuf>,
    /// Repositories (their `.git` entry, or a git directory itself) and their git directories
    /// (the `.git` directory, a `gitdir:` file's target, a `commondir`) that lie in a shared place
    /// (`links::SharedPlaces`): reported on every run, as hooks leading there are.
    pub shared_git_dirs: Vec<(PathBuf, PathBuf)>,
    /// Repositories and what their own configuration names (canonical) that lies in a shared
    /// place: a file it includes (or a configuration file that is a link there), a hooks
    /// directory, a program git runs. Reported on every run, as their git directories are.
    pub shared_refs: Vec<(PathBuf, PathBuf)>,
    /// Protected directories whose symlinks were not all looked at (`dir_links::MAX_ENTRIES`).
    pub dir_links_cut: Vec<PathBuf>,
    /// What named a path deeper than `deep_paths::MAX_COMPONENTS` (a repository, a `.cargo`, a yarn,
    /// Maven or `.envrc` configuration, a rust-toolchain file, a protected directory), and the first
    /// such path: not kept (`deep_paths`).
    pub too_deep: Vec<(PathBuf, PathBuf)>,
    met: Met,
}

/// What each list of `Kept` holds already, to keep an entry once without comparing it with every
/// one before: a run made 6,000 repositories whose hook was one file's names, and every later
/// run's plan spent seconds of host CPU in those comparisons (found by an attacker's review, cross32).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Met {
    symlinks: HashSet<PathBuf>,
    unjudged: HashSet<PathBuf>,
    hard: HashSet<PathBuf>,
    unlisted: HashSet<PathBuf>,
    configs_capped: HashSet<PathBuf>,
    too_deep: HashSet<PathBuf>,
    shared_git_dirs: HashSet<(PathBuf, PathBuf)>,
}

impl Kept {
    /// `at`'s configuration was `capped`: said once in the result.
    pub fn capped(&mut self, at: &std::path::Path, capped: bool) {
        if capped && self.met.configs_capped.insert(at.to_path_buf()) {
            self.configs_capped.push(at.to_path_buf());
        }
    }

    /// `at` names `path`, deeper than `deep_paths::MAX_COMPONENTS`, which is not kept: said once
    /// for `at` in the result.
    pub fn too_deep(&mut self, at: &std::path::Path, path: &std::path::Path) {
        if self.met.too_deep.insert(at.to_path_buf()) {
            self.too_deep.push((at.to_path_buf(), path.to_path_buf()));
        }
    }

    /// The protected directory `dir`'s symlinks were not all looked at (`dir_links`): said in the
    /// result.
    pub fn dir_links_cut(&mut self, dir: &std::path::Path) {
        self.dir_links_cut.push(dir.to_path_buf());
    }

    /// `repository`'s git directory `dir` lies in a shared place: said once after the run.
    pub fn git_dir_shared(&mut self, repository: &std::path::Path, dir: &std::path::Path) {
        if self.met.shared_git_dirs.insert((repository.to_path_buf(), dir.to_path_buf())) {
            self.shared_git_dirs.push((repository.to_path_buf(), dir.to_path_buf()));
        }
    }

    /// `repository`'s configuration names `named`, which lies in a shared place: said once after
    /// the run, at the first repository naming it, unless a shared place said already holds it (a
    /// git directory's own hooks, husky's `.husky/_` below `.husky`). The list is of those in
    /// shared places only: a handful, so the search is no cost.
    pub fn ref_shared(&mut self, repository: &std::path::Path, named: &std::path::Path) {
        if !self.shared_git_dirs.iter().chain(&self.shared_refs).any(|(_, d)| named.starts_with(d)) {
            self.shared_refs.push((repository.to_path_buf(), named.to_path_buf()));
        }
    }

    /// One repository's findings, once (a repository's hooks directory may be another's too).
    pub fn add(&mut self, links: &HookLinks, roots: &[PathBuf]) {
        for (link, to) in &links.symlinks {
            if self.met.symlinks.insert(link.clone()) {
                self.symlinks.push((link.clone(), to.clone()));
                if super::links::in_shared_place(to, roots) {
                    self.shared.push((link.clone(), to.clone()));
                }
            }
        }
        for link in &links.unjudged {
            if self.met.unjudged.insert(link.clone()) {
                self.unjudged.push(link.clone());
            }
        }
        for (path, id) in &links.hard {
            if self.met.hard.contains(path) {
                continue;
            }
            // Read now, for this run: the facts are remembered across runs.
            let Ok(m) = path.symlink_metadata() else { continue };
            if (m.dev(), m.ino()) == *id {
                self.met.hard.insert(path.clone());
                self.hard.push(HardLinked::of(path, &m));
            }
        }
        for d in &links.unlisted {
            if self.met.unlisted.insert(d.clone()) {
                self.unlisted.push(d.clone());
            }
        }
    }

    /// What the run's result says in `sandboxDetails.notEnforced`.
    pub fn not_enforced(&self) -> Vec<String> {
        let mut hard = self.hard.iter().map(|h| {
            format!(
                "planted configuration: the hook {} has {} names (hard links): its other names, which the run may write, \
                 could not be made read-only (finding them needs a walk); a write during the run is reported as hooks-written",
                h.path.display(),
                h.names
            )
        });
        let mut unlisted = self.unlisted.iter().map(|d| {
            format!(
                "planted configuration: the hooks directory {} has more than {MAX_ENTRIES} entries, or the run's budget for \
                 looking at hooks ({} entries and path components in all) ran out; those past it were not looked at for \
                 symlinks or hard links into a writable root",
                d.display(),
                RUN_HOOK_STEPS
            )
        });
        let mut unjudged = self.unjudged.iter().map(|l| {
            format!(
                "planted configuration: the hook {} is a symlink whose way (its target and the symlinks on it) is longer than {} \
                 components, or goes through a symlink of /proc (/proc/self/cwd, /dev/fd: it leads wherever the process following \
                 it is, git's, not this one's), or the run's budget for looking at hooks ({} in all) ran out: where it leads could \
                 not be judged, so it was not kept read-only, nor checked after the run",
                l.display(),
                crate::policy::path_walk::MAX_STEPS,
                RUN_HOOK_STEPS
            )
        });
        let mut capped = self.configs_capped.iter().map(|c| {
            // A `.cargo` directory's configuration (`cargo_programs`), capped as a git one is.
            if c.file_name().is_some_and(|n| n == super::cargo_programs::DIR) {
                return format!(
                    "planted configuration: the cargo configuration in {} names more than {} programs by path in a file (or the \
                     run's {} in all were kept), or has a file that could not be read (not a regular one, over {} MiB, not TOML it \
                     could read, or past the {} MiB of such files one run reads): the programs past that were not kept read-only",
                    c.display(),
                    super::cargo_programs::MAX_PROGRAMS,
                    super::cargo_programs::MAX_IN_ALL,
                    super::small_file::MAX_BYTES >> 20,
                    super::config_reads::BUDGET >> 20
                );
            }
            // A yarn configuration (`yarn_programs`), capped as a `.cargo`'s is.
            if c.file_name().is_some_and(|n| super::yarn_programs::FILES.iter().any(|f| n == *f)) {
                return format!(
                    "planted configuration: the yarn configuration {} names more than {} files to run (yarnPath, plugins) (or the \
                     run's {} in all of yarn, Maven, .envrc, editor and mise configurations were kept), or could not be read (not a regular file, \
                     over {} MiB, or past the {} MiB of such files one run reads): the files past that were not kept read-only",
                    c.display(),
                    super::yarn_programs::MAX_PROGRAMS,
                    super::config_reads::TOOL_PROGRAMS_IN_ALL,
                    super::small_file::MAX_BYTES >> 20,
                    super::config_reads::BUDGET >> 20
                );
            }
            // A `.mvn` directory's configuration (`mvn_programs`), capped as a `.cargo`'s is.
            if c.file_name().is_some_and(|n| n == super::mvn_programs::DIR) {
                return format!(
                    "planted configuration: the Maven configuration in {} (jvm.config, maven.config) names more than {} files its \
                     JVM loads (or the run's {} in all of yarn, Maven, .envrc, editor and mise configurations were kept), or has a file that could \
                     not be read (not a regular one, over {} MiB, or past the {} MiB of such files one run reads): the files past \
                     that were not kept read-only",
                    c.display(),
                    super::mvn_programs::MAX_PROGRAMS,
                    super::config_reads::TOOL_PROGRAMS_IN_ALL,
                    super::small_file::MAX_BYTES >> 20,
                    super::config_reads::BUDGET >> 20
                );
            }
            // An `.envrc` (`envrc_sources`), capped as a `.cargo`'s is.
            if c.file_name().is_some_and(|n| super::envrc_sources::FILES.iter().any(|f| n == *f)) {
                return format!(
                    "planted configuration: {} sources more than {} files (or the run's {} in all of yarn, Maven, .envrc, editor and \
                     mise configurations were kept), or could not be read (not a regular file, over {} MiB, or past the {} MiB of such \
                     files one run reads): the files past that, which direnv (or zsh-autoenv) runs at the host shell's next prompt, were \
                     not kept read-only",
                    c.display(),
                    super::envrc_sources::MAX_PROGRAMS,
                    super::config_reads::TOOL_PROGRAMS_IN_ALL,
                    super::small_file::MAX_BYTES >> 20,
                    super::config_reads::BUDGET >> 20
                );
            }
            // A mise configuration (`mise_programs`), capped as a `.cargo`'s is.
            if super::mise_programs::is_entry(c) {
                return format!(
                    "planted configuration: the mise configuration {} names more than {} files to source, load or run (_.source, \
                     _.file, hooks) (or the run's {} in all of yarn, Maven, .envrc, editor and mise configurations were kept), \
                     names them by a glob, or could not be read whole (not a regular file, over {} MiB, not TOML it could read, \
                     or past the {} MiB of such files one run reads): the files past that, which mise's shell hook runs at the \
                     host shell's next prompt, were not kept read-only",
                    c.display(),
                    super::mise_programs::MAX_PROGRAMS,
                    super::config_reads::TOOL_PROGRAMS_IN_ALL,
                    super::small_file::MAX_BYTES >> 20,
                    super::config_reads::BUDGET >> 20
                );
            }
            // A proto configuration (`proto_programs`), capped as a `.cargo`'s is.
            if super::proto_programs::is_entry(c) {
                return format!(
                    "planted configuration: the proto configuration {} names more than {} file:// plugins and [env] files (or the run's \
                     {} in all of yarn, Maven, .envrc, editor, mise and proto configurations were kept), or could not be read whole (not \
                     a regular file, over {} MiB, not TOML it could read, or past the {} MiB of such files one run reads): the files \
                     past that, which proto's shell activation loads at the host shell's next cd, were not kept read-only",
                    c.display(),
                    super::proto_programs::MAX_PROGRAMS,
                    super::config_reads::TOOL_PROGRAMS_IN_ALL,
                    super::small_file::MAX_BYTES >> 20,
                    super::config_reads::BUDGET >> 20
                );
            }
            // A devbox or devenv configuration (`dev_env_programs`), capped as a `.cargo`'s is.
            if super::dev_env_programs::is_entry(c) {
                return format!(
                    "planted configuration: the dev environment configuration {} includes or imports more than {} files (or the run's \
                     {} in all of the tools' configurations were kept), or could not be read whole (not a regular file, over {} MiB, \
                     not JSON it could read, or past the {} MiB of such files one run reads): the files past that, which the \
                     environment's directory hook evaluates at the host shell's next prompt, were not kept read-only",
                    c.display(),
                    super::dev_env_programs::MAX_PROGRAMS,
                    super::config_reads::TOOL_PROGRAMS_IN_ALL,
                    super::small_file::MAX_BYTES >> 20,
                    super::config_reads::BUDGET >> 20
                );
            }
            // An editor's settings (`editor_programs`), capped as a `.cargo`'s is.
            if super::editor_programs::is_entry(c) {
                return format!(
                    "planted configuration: the editor settings of {} name more than {} programs by path (or the run's {} in all \
                     of yarn, Maven, .envrc, editor and mise configurations were kept), or could not be read whole (not a regular file, \
                     over {} MiB, not JSON or TOML it could read, or past the {} MiB of such files one run reads): the programs \
                     past that, which the editor's language servers and tools start, were not kept read-only",
                    c.display(),
                    super::editor_programs::MAX_PROGRAMS,
                    super::config_reads::TOOL_PROGRAMS_IN_ALL,
                    super::small_file::MAX_BYTES >> 20,
                    super::config_reads::BUDGET >> 20
                );
            }
            // A rust-toolchain file (`toolchain_path`) that could not be read.
            if c.file_name().is_some_and(|n| super::toolchain_path::FILES.iter().any(|f| n == *f)) {
                return format!(
                    "planted configuration: {} could not be read (not a regular file, over {} MiB, not TOML it could read, or past \
                     the {} MiB of such files one run reads): the toolchain directory its path names, whose programs rustup runs, \
                     was not kept read-only",
                    c.display(),
                    super::small_file::MAX_BYTES >> 20,
                    super::config_reads::BUDGET >> 20
                );
            }
            format!(
                "planted configuration: the git configuration of {} (its files and what they include) has more than {} files, \
                 {} MiB or {} entries, names more than {} programs by path (or the run's {} included files and programs of all \
                 the repositories were kept), includes a file or names a hooks directory by a path deeper than {} components, or has a file that is not a \
                 regular one: what lies past that was not read, and \
                 the hooks directories, the files it includes and the programs it names there were not kept read-only",
                c.display(),
                super::global_git::MAX_FILES,
                super::global_git::MAX_BYTES >> 20,
                super::global_git::MAX_ENTRIES,
                super::global_git::MAX_PROGRAMS,
                super::repo::PATHS_IN_ALL,
                super::deep_paths::MAX_COMPONENTS
            )
        });
        // A few of each named, the rest counted (`few_named::lines`): the run chooses how many there are.
        let few = |said: &mut dyn Iterator<Item = String>, count: usize, what: &str| {
            super::few_named::lines(said, count, |more| format!("planted configuration: {more} more {what}, as the ones above"))
        };
        let mut lines = few(&mut hard, self.hard.len(), "hooks have other names (hard links) that could not be made read-only");
        lines.extend(few(&mut unlisted, self.unlisted.len(), "hooks directories were not looked at whole"));
        lines.extend(few(&mut unjudged, self.unjudged.len(), "hooks are symlinks whose way could not be judged, not kept read-only"));
        lines.extend(few(&mut capped, self.configs_capped.len(), "repositories' git configurations were read only up to the bounds, what lies past them not kept read-only"));
        let mut cut = self.dir_links_cut.iter().map(|d| {
            format!(
                "planted configuration: the entries of the protected directory {} were not all looked at (past {} in a run): \
                 where its symlinks lead (a linked .cargo/config.toml's or .vscode/settings.json's file) was not kept read-only",
                d.display(),
                super::dir_links::MAX_ENTRIES
            )
        });
        lines.extend(few(&mut cut, self.dir_links_cut.len(), "protected directories' symlinks were not all looked at"));
        let mut deep = self.too_deep.iter().map(|(at, path)| {
            format!(
                "planted configuration: {} names a path deeper than {} components ({}): it was not kept read-only, nor any \
                 other such path it names (following them cost every run time in proportion to their depth)",
                at.display(),
                super::deep_paths::MAX_COMPONENTS,
                super::few_named::shown(&path.to_string_lossy())
            )
        });
        lines.extend(few(&mut deep, self.too_deep.len(), "configurations name paths too deep to follow, not kept read-only"));
        lines
    }

    /// What the run did to hooks through their other names: a hard-linked hook written (its ctime
    /// moved), a symlinked one that leads elsewhere now (a symlink on its way changed), and those
    /// that lead into a shared temporary directory. A few `lstat`s, only for hooks that are links.
    pub fn after_run(&self) -> Vec<Found> {
        let mut risks = Vec::new();
        for h in &self.hard {
            if h.written(false) {
                let detail = "this hook has other names (hard links), and it was written or changed during the run through one of \
                              them: git on the host runs it (e.g. on commit, checkout, merge)"
                    .to_string();
                risks.push(Found { path: h.path.clone(), shared: false, detail });
            }
        }
        for (link, to) in &self.symlinks {
            let Ok(target) = std::fs::read_link(link) else { continue };
            let now = led_to(link, &target);
            if now.as_ref() != Some(to) {
                let now = now.map_or_else(|| "a place that could not be judged (too deep, through /proc, or past the run's budget for these checks)".to_string(), |p| p.display().to_string());
                let detail = format!(
                    "this hook is a symlink that led to {} when the run started and leads to {now} now (a symlink or directory on \
                     its way was changed during the run): git on the host runs what is there",
                    to.display(),
                );
                risks.push(Found { path: link.clone(), shared: false, detail });
            }
        }
        for (link, to) in &self.shared {
            let detail = format!(
                "this hook is a symlink to {}, in a temporary directory every process on the host (and every later run) can \
                 write: git on the host runs whatever was put there",
                to.display()
            );
            risks.push(Found { path: link.clone(), shared: true, detail });
        }
        // Found by an attacker's review: a worktree whose main repository is in /tmp, a `gitdir:`
        // naming a git directory there. Read-only during this run, but not during another's.
        for (repository, dir) in &self.shared_git_dirs {
            let detail = format!(
                "this repository's git directory {} lies in a temporary directory (or sandspawn's state) that any other run or \
                 any process on the host can write: its config and hooks, which git on the host reads and runs here (e.g. \
                 core.fsmonitor on git status), may be changed there whatever this run was kept from",
                dir.display()
            );
            risks.push(Found { path: repository.clone(), shared: true, detail });
        }
        // Found by an attacker's review (rfix23): `include.path`, `core.hooksPath`,
        // `core.fsmonitor` naming a path in /tmp, which a run in another workspace wrote.
        for (repository, named) in &self.shared_refs {
            let detail = format!(
                "this repository's git configuration names {} (a file it includes, a hooks directory or a program git runs), \
                 which lies in a temporary directory (or sandspawn's state) that any other run or any process on the host can \
                 write: git on the host reads or runs here what is put there (e.g. core.fsmonitor on git status, a hook on \
                 commit), whatever this run was kept from",
                named.display()
            );
            risks.push(Found { path: repository.clone(), shared: true, detail });
        }
        risks
    }
}

#[cfg(test)]
mod tests {
    use super::super::hook_links::read;
    use super::*;

    /// A configuration read only up to `global_git`'s bounds is said in `notEnforced`, once.
    #[test]
    fn a_capped_configuration_is_said_once() {
        let mut kept = Kept::default();
        kept.capped(std::path::Path::new("/w/.git"), false);
        assert!(kept.not_enforced().is_empty());
        kept.capped(std::path::Path::new("/w/.git"), true);
        kept.capped(std::path::Path::new("/w/.git"), true);
        let said = kept.not_enforced();
        assert_eq!(said.len(), 1);
        assert!(said[0].contains("/w/.git") && said[0].contains("10000 entries") && said[0].contains("256 programs"), "{said:?}");
    }

    /// A mise configuration not read whole (a glob in `_.source`, found by host37) is said as
    /// mise's, not as a git configuration.
    #[test]
    fn a_capped_mise_configuration_is_said_as_mise_s() {
        let mut kept = Kept::default();
        kept.capped(std::path::Path::new("/w/.config/mise"), true);
        kept.capped(std::path::Path::new("/w/mise.toml"), true);
        let said = kept.not_enforced();
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said.iter().all(|s| s.contains("the mise configuration /w/") && s.contains("glob") && !s.contains("git")), "{said:?}");
    }

    #[test]
    fn after_the_run_a_write_through_another_name_is_reported() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(r.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(r.join("scripts")).unwrap();
        std::fs::write(r.join("scripts/pre-push"), "#!/bin/sh\n").unwrap();
        std::fs::hard_link(r.join("scripts/pre-push"), r.join(".git/hooks/pre-push")).unwrap();
        std::fs::create_dir_all(r.join("a")).unwrap();
        std::fs::create_dir_all(r.join("b")).unwrap();
        std::os::unix::fs::symlink("../a", r.join("scripts/via")).unwrap();
        std::os::unix::fs::symlink("../../scripts/via/pre-commit", r.join(".git/hooks/pre-commit")).unwrap();
        let mut kept = Kept::default();
        kept.add(&read(&[r.join(".git")], &[]), &[r.clone()]);
        assert_eq!(kept.not_enforced().len(), 1, "{:?}", kept.not_enforced());
        assert!(kept.after_run().is_empty());
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(r.join("scripts/pre-push"), "#!/bin/sh\necho evil\n").unwrap();
        std::fs::remove_file(r.join("scripts/via")).unwrap();
        std::os::unix::fs::symlink("../b", r.join("scripts/via")).unwrap();
        let risks = kept.after_run();
        let mut paths: Vec<PathBuf> = risks.iter().map(|h| h.path.clone()).collect();
        paths.sort();
        assert_eq!(paths, [r.join(".git/hooks/pre-commit"), r.join(".git/hooks/pre-push")]);
        assert!(risks.iter().all(|h| !h.shared));
    }
}
