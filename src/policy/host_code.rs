//! Where the host loads code from, kept read-only in whichever writable root holds it, as a
//! `readOnlyPaths` entry there would be (Linux).
//!
//! bwrap discovery trusts a `bwrap` in the system program directories, and that bwrap, like every
//! program of the host, loads its libraries through the dynamic loader. Found by attackers'
//! reviews: as root with `/usr/local` (or `/usr`, `/`) writable, a run could write
//! `/usr/local/bin/bwrap`; with the cwd `/usr`, once the program directories were kept, it wrote
//! `/usr/lib/x86_64-linux-gnu/libcap.so.2` (merged-usr: `/lib` is `/usr/lib`), and the next run's
//! system bwrap ran its constructor on the host as root. `/usr` itself stays writable: Docker
//! images use `WORKDIR /usr/src/app`.

use std::path::{Path, PathBuf};

use crate::error::{Result, SandboxError};

use super::kernel_fs::MountTable;
use super::system_paths::SystemPaths;
use super::terms::deepest_root;
use super::{MissingReadOnly, PlaceholderKind, WritableRoot};

/// The directories the dynamic loader, the system bwrap and the host's programs load code from
/// (`/usr/local/lib` is on Debian's loader path and holds root's Python's `.pth` files).
pub(super) const LIBRARY_DIRS: [&str; 11] = [
    "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32", "/usr/libexec", "/lib", "/lib32", "/lib64", "/libx32", "/usr/local/lib",
    "/usr/local/libexec",
];

/// The dynamic loader's configuration: `ld.so.preload` names libraries loaded into every program
/// (a missing one must stay absent), the others where it finds them.
pub(super) const LOADER_FILES: [&str; 3] = ["/etc/ld.so.preload", "/etc/ld.so.conf", "/etc/ld.so.cache"];
pub(super) const LOADER_DIRS: [&str; 1] = ["/etc/ld.so.conf.d"];

/// Where below `/usr` and `/usr/local` a run may write when a root holds them (Docker's `WORKDIR
/// /usr/src/app`); `local` is listed on its own.
const USR_WRITABLE: [&str; 2] = ["src", "local"];

/// The system's own code and configuration, where no writable root may lie (see
/// `refuse_system_roots`): each with what it holds, for the message, and where below it a root may
/// still lie. `/usr/local` has its own entry in case it is a link out of `/usr`.
const SYSTEM_TREES: [(&str, &str, &[&str]); 6] = [
    ("/usr", "the system's programs, libraries and the code interpreters and tools load (Perl's modules, git's template hooks)", &["/usr/src", "/usr/local/src"]),
    ("/usr/local", "programs, libraries and code installed for every user of the host", &["/usr/local/src"]),
    ("/etc", "the system's configuration, which names code to run (profile.d, cron.d, sudoers.d, Perl's modules in perl/)", &[]),
    ("/boot", "the kernel, the initramfs and the boot loader's configuration", &[]),
    ("/var/spool/cron", "the crontabs cron runs", &[]),
    ("/var/lib/dpkg", "the scripts dpkg runs when a package is upgraded or removed", &[]),
];

/// Keep all of them read-only in the writable roots that hold them. `system`: the paths resolved
/// once for this policy, which `refuse_roots_inside` and `refuse_system_roots` ask again.
pub(super) fn keep_host_code(roots: &mut [WritableRoot], system: &SystemPaths) {
    // No writable root (read-only): nothing to keep, and no system path resolved on every run.
    if roots.is_empty() {
        return;
    }
    keep_in(system, roots, &crate::capabilities::discover::SYSTEM_PROGRAM_DIRS, PlaceholderKind::Dir);
    keep_usr(roots, system);
    // A root holding `/etc`, `/boot`, ... (`/var` holds `/var/spool/cron`): whole, as `/usr`'s entries.
    let trees: Vec<&str> = SYSTEM_TREES.iter().map(|t| t.0).filter(|d| !d.starts_with("/usr")).collect();
    keep_in(system, roots, &trees, PlaceholderKind::Dir);
    keep_in(system, roots, &LIBRARY_DIRS, PlaceholderKind::Dir);
    keep_in(system, roots, &LOADER_DIRS, PlaceholderKind::Dir);
    keep_in(system, roots, &LOADER_FILES, PlaceholderKind::File);
}

/// Every entry of `/usr` and `/usr/local` but `src`, read-only in a root that holds them. Found by
/// an attacker's review: the library directories were not all the host loads code from; with the
/// cwd `/usr`, a run as root wrote `/usr/local/share/perl/5.36.0/strict.pm` (before perl-base in
/// `@INC`: the host's `perl -e 'use strict'` ran it as root) and git's template hooks in
/// `share/git-core/templates`, which the next `git clone` copied and ran. Interpreters' paths,
/// headers the host compiles, `local/etc`: everything there is the system's. Listed only when a
/// root holds `/usr`: no cost otherwise.
fn keep_usr(roots: &mut [WritableRoot], system: &SystemPaths) {
    for base in ["/usr", "/usr/local"] {
        let Some(real) = system.canonical(base) else { continue };
        if !roots.iter().any(|r| real.starts_with(&r.root)) {
            continue;
        }
        let Ok(listing) = std::fs::read_dir(&real) else { continue };
        let entries: Vec<String> = listing
            .filter_map(|e| e.ok())
            .filter(|e| !USR_WRITABLE.iter().any(|w| e.file_name() == *w))
            .filter_map(|e| e.path().to_str().map(str::to_string))
            .collect();
        keep_in(system, roots, &entries.iter().map(String::as_str).collect::<Vec<_>>(), PlaceholderKind::Dir);
    }
}

/// `ERR_SANDBOX_INVALID_OPTIONS` for a writable root strictly inside one of the directories
/// `keep_host_code` keeps (`/usr/lib/x86_64-linux-gnu`, `/usr/bin/tools`): a root that is one of them
/// is read-only whole, but one inside it would be a writable part of where the host loads code from
/// (found by a fixer's review). `cwd`: which option to name.
pub(super) fn refuse_roots_inside(roots: &[WritableRoot], cwd: &Path, system: &SystemPaths) -> Result<()> {
    if roots.is_empty() {
        return Ok(());
    }
    let dirs = crate::capabilities::discover::SYSTEM_PROGRAM_DIRS.iter().chain(LIBRARY_DIRS.iter()).chain(LOADER_DIRS.iter());
    let dirs: Vec<std::path::PathBuf> = dirs.filter_map(|d| system.canonical(d)).collect();
    for r in roots {
        let Some(dir) = dirs.iter().find(|d| r.root.starts_with(d) && r.root != **d) else { continue };
        let option = if r.root == cwd { "cwd" } else { "sandbox.writableRoots" };
        return Err(SandboxError::invalid(
            option,
            format!(
                "writable root {} lies inside {}, where the host's programs (and the system bwrap sandspawn trusts) load code from: \
                 a command could plant code every later program runs; give a directory outside it",
                r.root.display(),
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// `ERR_SANDBOX_INVALID_OPTIONS` for a writable root that is or lies in one of `SYSTEM_TREES` but
/// not in a place it allows (`/usr/src`). Found by an attacker's review (fixes17/usrsub.sh): as root
/// with the cwd `/usr/share/perl5` a run wrote `strict.pm`, which the host's `perl -e 'use strict'`
/// ran; with `/usr/local/share`, `perl/5.36.0/strict.pm` and git's template hooks (the next `git
/// clone` ran them); with `/etc`, `perl/strict.pm`. `keep_usr` acted only on a root holding `/usr`,
/// and `refuse_roots_inside` only on the program and library directories; and a root of `/usr` or
/// `/usr/local` could still make a new entry there (`/usr/local/go/bin/go`, on many a `PATH`) under
/// bwrap and in review mode. Whatever a run there could write is the system's, so such a root is
/// refused in every mode and for every user (as `refuse_roots_inside`: one who cannot write there
/// loses nothing). Compared canonically (`roots` are, and so are the trees here), then through the
/// mounts (`refuse_bound_roots`).
pub(super) fn refuse_system_roots(roots: &[WritableRoot], cwd: &Path, mounts: &MountTable, system: &SystemPaths) -> Result<()> {
    if roots.is_empty() {
        return Ok(());
    }
    let real = |p: &str| system.canonical(p).unwrap_or_else(|| p.into());
    let trees: Vec<(PathBuf, Vec<PathBuf>)> = SYSTEM_TREES.iter().map(|(dir, _, allowed)| (real(dir), allowed.iter().map(|a| real(a)).collect())).collect();
    for r in roots {
        let inside = |(tree, allowed): &(PathBuf, Vec<PathBuf>)| r.root.starts_with(tree) && !allowed.iter().any(|a| r.root.starts_with(a));
        if let Some(i) = trees.iter().position(inside) {
            return Err(system_root(r, cwd, &trees[i], SYSTEM_TREES[i].1, "is or lies in"));
        }
    }
    #[cfg(target_os = "linux")]
    refuse_bound_roots(roots, cwd, trees, mounts)?;
    #[cfg(not(target_os = "linux"))]
    let _ = mounts;
    Ok(())
}

/// What the program and library directories hold, for a root that reaches one through a bind mount.
#[cfg(target_os = "linux")]
const CODE_DIRS_HOLD: &str = "where the host's programs (and the system bwrap sandspawn trusts) load code from";

/// A root that reaches one of `trees`, or a program or library directory outside them (`/lib`,
/// `/bin` where `/usr` is not merged: Alpine), through a bind mount (`tree_identity`): found by an
/// attacker's review (fixes18/bindroot.sh), the cwd a bind of `/etc` was accepted, and a run as root
/// appended to `/etc/profile.d`. The directories outside the trees are those of `/` itself that are
/// no links (on merged-usr each is a link into `/usr`): their names are canonical, and an `lstat`
/// tells them apart for less than resolving each.
#[cfg(target_os = "linux")]
fn refuse_bound_roots(roots: &[WritableRoot], cwd: &Path, mut trees: Vec<(PathBuf, Vec<PathBuf>)>, mounts: &MountTable) -> Result<()> {
    let code = crate::capabilities::discover::SYSTEM_PROGRAM_DIRS.iter().chain(LIBRARY_DIRS.iter()).map(Path::new);
    for dir in code.filter(|d| d.parent() == Some(Path::new("/"))) {
        if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) && !trees.iter().any(|(t, _)| dir.starts_with(t)) {
            trees.push((dir.to_path_buf(), Vec::new()));
        }
    }
    let found = super::tree_identity::Trees::find(&trees, mounts.bytes("to find a system directory reached through a bind mount")?);
    for r in roots {
        let Some(i) = found.reached_from(&r.root) else { continue };
        let holds = SYSTEM_TREES.get(i).map_or(CODE_DIRS_HOLD, |t| t.1);
        return Err(system_root(r, cwd, &trees[i], holds, "reaches (through a bind mount)"));
    }
    Ok(())
}

/// The refusal of root `r`, which `relation` `tree`, which `holds`.
fn system_root(r: &WritableRoot, cwd: &Path, (tree, allowed): &(PathBuf, Vec<PathBuf>), holds: &str, relation: &str) -> SandboxError {
    let option = if r.root == cwd { "cwd" } else { "sandbox.writableRoots" };
    let elsewhere = match allowed.as_slice() {
        [] => String::new(),
        a => format!(" (in {} is fine)", a.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" or ")),
    };
    SandboxError::invalid(
        option,
        format!(
            "writable root {} {relation} {}, {holds}: a command running as root could plant code the host runs later; \
             give a directory outside it{elsewhere}, or use mode 'read-only'",
            r.root.display(),
            tree.display()
        ),
    )
}

/// Each of `paths`, symlinks resolved (so `/lib` and `/usr/lib` are one carve-out on merged-usr), is
/// read-only in the deepest writable root holding it; a missing one is made uncreatable (a
/// placeholder of `kind` at its first missing component). (The policy's own: `keep_in`.)
#[cfg(test)]
pub(super) fn keep(roots: &mut [WritableRoot], paths: &[&str], kind: PlaceholderKind) {
    keep_in(&SystemPaths::default(), roots, paths, kind)
}

/// `keep`, each path resolved through `system` (once for the policy).
fn keep_in(system: &SystemPaths, roots: &mut [WritableRoot], paths: &[&str], kind: PlaceholderKind) {
    for p in paths {
        let Some(l) = system.lenient(p) else { continue };
        let Some(r) = deepest_root(roots, &l.path) else { continue };
        match l.first_missing {
            None if !roots[r].read_only.contains(&l.path) => roots[r].read_only.push(l.path),
            None => {}
            Some(first) if !roots[r].missing_read_only.iter().any(|m| m.path == first) => {
                // Only the path itself missing is a file; a missing directory above it is a directory.
                let kind = if first == l.path { kind.clone() } else { PlaceholderKind::Dir };
                roots[r].missing_read_only.push(MissingReadOnly { path: first, kind })
            }
            Some(_) => {}
        }
    }
}
