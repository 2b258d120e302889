//! How deep a path a configuration names may lie and still be followed on every run: an include
//! of a repository's git configuration, a program it, a `.cargo`, a yarn, Maven or `.envrc`
//! configuration names, a toolchain directory, a protected directory's link target. Each is
//! looked up once per run or more (a `stat` per repository per include, then a walk of the kept
//! path component by component to keep it read-only or absent), and the cost of a look-up grows
//! with its components. How many such paths there are is bounded (`repo::PATHS_IN_ALL`,
//! `config_reads`); how deep each is was the command's to choose. Found by an attacker's review
//! (cross35): one `mkdir` chain 1,500 levels deep, 20 repositories including 255 files at its
//! bottom and 4 `.cargo` naming 256 runners there cost every later `true` 6.4 s of host CPU (300
//! such repositories: 27 s, 80 s late).
//!
//! A path of more components is not followed: an include is not read (its configuration is
//! `capped`, which the result says), any other path is not kept and is said in
//! `sandboxDetails.notEnforced` (`hook_risks::Kept::too_deep`).

use std::path::Path;

/// The most components (the root's included) of a path followed. Projects name files a few levels
/// from where they are; a workspace itself rarely lies more than twenty below `/`.
pub const MAX_COMPONENTS: usize = 64;

/// Whether `p` has more than `MAX_COMPONENTS` components (counted no further than one past them).
pub fn too_deep(p: &Path) -> bool {
    p.components().nth(MAX_COMPONENTS).is_some()
}

/// Whether the absolute `p`, within `MAX_COMPONENTS` as written, leads deeper than them through a
/// symlink on its way: the deepest of its ancestors that exists is opened one component at a time
/// from the root (`openat`, `O_PATH`, following links in the kernel: one walk of a link's target,
/// not one system call per component) and the kernel's name of it, with the components past it,
/// counted. A name past `PATH_MAX` is too deep. Found by an attacker's review (left36): a run made
/// a chain 1,500 directories deep and a link `L` to its bottom, and 20 repositories including 255
/// files `L/xN` and 4 `.cargo` naming 256 runners there: each path, 2 components short of the
/// bound as written, was walked component by component at its target's depth, and every later
/// `true` cost the host 88 s of CPU (97-101 s late).
/// Elsewhere (macOS: no `O_PATH`, no `/proc`) a path is counted as written.
#[cfg(not(target_os = "linux"))]
pub fn leads_too_deep(_p: &Path) -> bool {
    false
}

/// Linux's `leads_too_deep`.
#[cfg(target_os = "linux")]
pub fn leads_too_deep(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    if !p.is_absolute() {
        return false;
    }
    let names: Vec<&std::ffi::OsStr> = p.components().skip(1).map(|c| c.as_os_str()).collect();
    // SAFETY: a constant, NUL-terminated path; the fd is owned here and closed below.
    let mut fd = unsafe { libc::open(b"/\0".as_ptr().cast(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return false;
    }
    let mut past = 0;
    for (i, name) in names.iter().enumerate() {
        let Ok(c) = std::ffi::CString::new(name.as_bytes()) else { break };
        // SAFETY: `fd` is open; `c` is NUL-terminated.
        let next = unsafe { libc::openat(fd, c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if next < 0 {
            past = names.len() - i;
            break;
        }
        // SAFETY: `fd` is open and owned here.
        unsafe { libc::close(fd) };
        fd = next;
    }
    let named = std::fs::read_link(format!("/proc/self/fd/{fd}"));
    // SAFETY: `fd` is open and owned here.
    unsafe { libc::close(fd) };
    named.map_or(true, |at| too_deep(&at) || at.components().count() + past > MAX_COMPONENTS)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    /// Found by an attacker's review (left36): a link makes a short path deep.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_short_path_through_a_link_to_a_deep_directory_leads_too_deep() {
        let t = tempfile::tempdir().unwrap();
        let mut deep = t.path().to_path_buf();
        for _ in 0..super::MAX_COMPONENTS {
            deep.push("a");
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::os::unix::fs::symlink(&deep, t.path().join("L")).unwrap();
        std::fs::create_dir(t.path().join("tools")).unwrap();
        assert!(!super::too_deep(&t.path().join("L/x")));
        assert!(super::leads_too_deep(&t.path().join("L/x")), "a missing file below the link");
        assert!(super::leads_too_deep(&t.path().join("L/m/n/x")), "missing directories below it");
        assert!(!super::leads_too_deep(&t.path().join("tools/x")));
        assert!(!super::leads_too_deep(&t.path().join("tools/m/x")));
    }

    #[test]
    fn a_path_past_the_bound_is_too_deep() {
        let at = |n: usize| PathBuf::from(format!("/{}", vec!["a"; n].join("/")));
        assert!(!super::too_deep(&at(super::MAX_COMPONENTS - 1)), "the root and 63 names are 64 components");
        assert!(super::too_deep(&at(super::MAX_COMPONENTS)));
        assert!(!super::too_deep(std::path::Path::new("tools/fsmon")));
    }
}
