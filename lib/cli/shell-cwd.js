'use strict'
// The directory the CLI runs in, named as the user's shell names it: `$PWD` (`pwd -L`) when that
// is an absolute path without `.` or `..` that leads to the process's own cwd, else the process's
// cwd (`process.cwd()`, which the kernel gives with every symlink resolved). A relative --cwd is
// named from there too, when that way leads where the kernel's does.
//
// Why: the library holds the symlinks on the way to a cwd as the caller named it (a run that
// repoints one has it put back and reported, host29), and a cwd named by its resolved path has
// none to hold. Found by an attacker's review (rfix29): from a shell in `/tmp/x/link/proj` (`link
// -> real`, in the writable /tmp), `sandspawn --mode workspace-write -- ...` ran in `real/proj`
// with no link held; the run repointed `link` to a repository it planted, nothing was said, and
// the user's (or an agent's) next `cd /tmp/x/link/proj && git status` ran its core.fsmonitor.

const fs = require('node:fs')
const path = require('node:path')

/** Whether `a` and `b` are the same directory (false if either cannot be looked at). */
function same(a, b) {
  try {
    const [x, y] = [fs.statSync(a), fs.statSync(b)]
    return x.dev === y.dev && x.ino === y.ino
  } catch {
    return false
  }
}

function shellCwd(env = process.env) {
  const physical = process.cwd()
  const named = env.PWD
  if (typeof named !== 'string' || !path.isAbsolute(named) || named === physical) return physical
  if (named.split('/').some((part) => part === '.' || part === '..')) return physical
  return same(named, physical) ? named : physical
}

/**
 * `--cwd`'s value as the kernel names it: absolute as given, relative joined to the process's own
 * cwd, its `.` and `..` left for the library, which resolves them as the kernel does (a `..` after
 * a link goes up from the link's target). path.resolve dropped `link/..` as text: `--cwd link/..`
 * (link -> sub/deeper) ran a workspace-write command in the directory above, writable, where the
 * kernel and the API's `cwd` name sub (found by an attacker's review, mode34).
 */
function kernelCwd(given) {
  if (given === undefined) return process.cwd()
  if (path.isAbsolute(given)) return given
  const here = process.cwd()
  return here.endsWith('/') ? here + given : `${here}/${given}`
}

/**
 * The cwd to name for `--cwd` (undefined: none given): absolute as given; relative, from the
 * shell's cwd (`shellCwd`) when that leads to the directory the kernel resolves it to, else as the
 * kernel resolves it (`kernelCwd`).
 */
function namedCwd(given, env = process.env) {
  if (given === undefined) return shellCwd(env)
  const resolved = kernelCwd(given)
  if (path.isAbsolute(given)) return resolved
  const named = path.resolve(shellCwd(env), given)
  return same(named, resolved) ? named : resolved
}

module.exports = { shellCwd, namedCwd, kernelCwd }
