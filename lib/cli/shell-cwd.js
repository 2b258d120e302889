'use strict'
// The directory the CLI runs in, named as the user's shell names it: `$PWD` (`pwd -L`) when that
// is an absolute path without `.` or `..` that leads to the process's own cwd, else the process's
// cwd (`process.cwd()`, which the kernel gives with every symlink resolved).
//
// Why: the library holds the symlinks on the way to a cwd as the caller named it (a run that
// repoints one has it put back and reported, host29), and a cwd named by its resolved path has
// none to hold. Found by an attacker's review (rfix29): from a shell in `/tmp/x/link/proj` (`link
// -> real`, in the writable /tmp), `sandspawn --mode workspace-write -- ...` ran in `real/proj`
// with no link held; the run repointed `link` to a repository it planted, nothing was said, and
// the user's (or an agent's) next `cd /tmp/x/link/proj && git status` ran its core.fsmonitor.

const fs = require('node:fs')
const path = require('node:path')

function shellCwd(env = process.env) {
  const physical = process.cwd()
  const named = env.PWD
  if (typeof named !== 'string' || !path.isAbsolute(named) || named === physical) return physical
  if (named.split('/').some((part) => part === '.' || part === '..')) return physical
  try {
    const [a, b] = [fs.statSync(named), fs.statSync('.')]
    return a.dev === b.dev && a.ino === b.ino ? named : physical
  } catch {
    return physical
  }
}

module.exports = { shellCwd }
