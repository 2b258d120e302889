'use strict'
// The paths `sandspawn review apply|diff ID PATH...` is given, as the kernel names them.
//
// The library takes a change's path as the set shows it: absolute, without `.` or `..`. A `..` is
// resolved here as the kernel resolves it, up from the real path of what stands before it: with
// `link -> sub/deeper`, `link/../notes.txt` is `sub/notes.txt` to `cat`, `ls` and the user's
// editor. path.resolve dropped `link/..` as text, and the diff showed, and the apply landed, the
// workspace's top `notes.txt`, which nobody named (found by an attacker's review, mode34).
//
// What stands before a `..` must be on the host: a directory or link only the change set has (a
// link the command planted) leads nowhere until the set lands, so it is refused, never guessed.

const fs = require('node:fs')
const path = require('node:path')
const { UsageError } = require('./args')

/** `given` (relative to `cwd`, the process's real directory, or absolute) with its `.` and `..` resolved as the kernel would. */
function kernelPath(cwd, given, action, json) {
  const words = (path.isAbsolute(given) ? given : `${cwd}/${given}`).split('/')
  let at = '/'
  for (const word of words) {
    if (word === '' || word === '.') continue
    if (word !== '..') {
      at = path.join(at, word)
      continue
    }
    let real
    try {
      real = fs.realpathSync(at)
    } catch (e) {
      throw new UsageError(`review ${action} ${given}: its .. cannot be resolved: ${at} is not on the host (${e.code || e.message}); a directory or link of the change set leads nowhere until it lands: name the path without ..`, 'review', json)
    }
    at = path.dirname(real)
  }
  return at
}

/** Each of `given` as kernelPath makes it. */
function reviewPaths(given, action, json) {
  const cwd = process.cwd()
  return given.map((p) => kernelPath(cwd, p, action, json))
}

module.exports = { reviewPaths, kernelPath }
