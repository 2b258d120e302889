//! `execvp` as glibc (and POSIX) does it, whichever C library the helper is linked with. The helper
//! is built for musl where it can (it starts about 0.6 ms sooner: glibc probes the CPU's caches at
//! every start, and `cpuid` traps in a VM; see scripts/build-helper.js), and musl's `execvp` differs
//! in two ways a command would notice: it does not run a file without `#!` through `/bin/sh`, and
//! without `PATH` it searches `/usr/local/bin` first. Node's `child_process`, a shell and glibc all
//! run such a script, so the command must run the same in every build.

use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;

/// glibc's search path when the environment has no `PATH` (`_CS_PATH`).
const DEFAULT_PATH: &[u8] = b"/bin:/usr/bin";
/// The shell a file without `#!` runs with, as glibc's `maybe_script_execute` does.
const SHELL: &[u8] = b"/bin/sh";
/// Longest file name a search builds on (`NAME_MAX`) and longest candidate path (`PATH_MAX`).
const NAME_MAX: usize = 255;
const PATH_MAX: usize = 4096;

/// Run `argv[0]` with `argv`, searched in `PATH` when it holds no `/`. Returns only on failure,
/// with the errno glibc's `execvp` would leave.
pub(crate) fn execvp(argv: &[CString]) -> i32 {
    let env = environment();
    let Some(file) = argv.first().map(|a| a.as_bytes()) else { return libc::ENOENT };
    if file.is_empty() {
        return libc::ENOENT;
    }
    if file.contains(&b'/') {
        return exec_file(file, argv, &env);
    }
    if file.len() > NAME_MAX {
        return libc::ENAMETOOLONG;
    }
    let path = std::env::var_os("PATH");
    let path = path.as_deref().map(OsStr::as_bytes).unwrap_or(DEFAULT_PATH);
    search(file, path, argv, &env)
}

/// Try each directory of `path` in order, as glibc does: an empty element is the working
/// directory; "not there" errors go on to the next one; a permission error is remembered and
/// reported if nothing runs; any other error ends the search.
fn search(file: &[u8], path: &[u8], argv: &[CString], env: &[CString]) -> i32 {
    let mut saw_eacces = false;
    let mut errno = libc::ENOENT;
    for dir in path.split(|b| *b == b':') {
        if dir.len() + 1 + file.len() >= PATH_MAX {
            continue;
        }
        let mut candidate = dir.to_vec();
        if !dir.is_empty() {
            candidate.push(b'/');
        }
        candidate.extend_from_slice(file);
        errno = exec_file(&candidate, argv, env);
        match errno {
            libc::EACCES => saw_eacces = true,
            libc::ENOENT | libc::ESTALE | libc::ENOTDIR | libc::ENODEV | libc::ETIMEDOUT => {}
            _ => return errno,
        }
    }
    if saw_eacces { libc::EACCES } else { errno }
}

/// `execve(file)`, and when the kernel does not know the format (no `#!`, not ELF), the same
/// through `/bin/sh`. The errno of the last attempt.
fn exec_file(file: &[u8], argv: &[CString], env: &[CString]) -> i32 {
    let Ok(path) = CString::new(file) else { return libc::EINVAL };
    let errno = execve(&path, argv, env);
    if errno != libc::ENOEXEC {
        return errno;
    }
    let shell = CString::new(SHELL).expect("no NUL");
    let mut shell_argv = vec![shell.clone(), path];
    shell_argv.extend(argv.iter().skip(1).cloned());
    execve(&shell, &shell_argv, env);
    // The file's own error, which says more than the shell's (glibc leaves the shell's).
    libc::ENOEXEC
}

fn execve(path: &CString, argv: &[CString], env: &[CString]) -> i32 {
    let argv = null_terminated(argv);
    let env = null_terminated(env);
    // SAFETY: NUL-terminated strings that outlive the call, in NULL-terminated arrays.
    unsafe { libc::execve(path.as_ptr(), argv.as_ptr(), env.as_ptr()) };
    crate::last_errno()
}

fn null_terminated(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings.iter().map(|s| s.as_ptr()).chain(std::iter::once(std::ptr::null())).collect()
}

/// The process's environment as `execve` takes it (the helper passes on what it was given, with
/// whatever its steps set).
fn environment() -> Vec<CString> {
    std::env::vars_os()
        .filter_map(|(k, v)| {
            let mut entry = k.as_bytes().to_vec();
            entry.push(b'=');
            entry.extend_from_slice(v.as_bytes());
            CString::new(entry).ok()
        })
        .collect()
}
