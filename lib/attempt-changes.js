'use strict'
// What the sandboxed attempt of runWithEscalation changed in its writable roots, for approve():
// the attempt could have rewritten the very script that the approved retry runs as the user, and
// then printed a plausible denial to be retried. The walk (native, bounded: planted::changed)
// reports entries whose ctime is at or after the attempt's start; ctime cannot be set back, so the
// command cannot hide a change. Called only after a denial, never on a run's path.

const fs = require('node:fs')
const path = require('node:path')
const native = require('../binding.js')

// The kernel stamps a change with its coarse clock, which lags the time Date.now() reads by up to
// one tick (4 ms at HZ=250, 10 ms at HZ=100): a change made right after the start could be stamped
// a little before it. A change made within this margin before the start is reported too.
const CLOCK_SLACK_MS = 100

/** The canonical path, or null when it does not resolve. */
function real(p) {
  try {
    return fs.realpathSync(p)
  } catch {
    return null
  }
}

/**
 * The roots to walk: the cwd and `writableRoots`, not the shared temporary directories (`/tmp`,
 * `$TMPDIR`, which every process on the host writes: what they hold would be reported as the
 * attempt's) unless the cwd is one.
 */
function rootsToWalk(policy, cwd) {
  const writable = (policy && Array.isArray(policy.writableRoots) ? policy.writableRoots : []).map((r) => r.root)
  const shared = new Set(['/tmp', process.env.TMPDIR].filter(Boolean).map(real))
  const cwdWritable = writable.some((r) => cwd === r || cwd.startsWith(r + path.sep))
  return { writable, walked: [...new Set([...(cwdWritable ? [cwd] : []), ...writable.filter((r) => !shared.has(r))])] }
}

/**
 * The command's argv entries that are files in a writable root (`sh build.sh`, `./run.sh`), each
 * as the file it leads to and as the entry it names when that is a symlink. The walk reports real
 * paths: with `run.sh -> tools/run.sh`, an attempt that rewrites tools/run.sh is reported there,
 * and `run.sh` as typed matched nothing (found by an attacker's review). The link itself counts
 * too: an attempt can point it at another file. The kernel bounds the links followed (ELOOP).
 */
function commandFiles(command, cwd, writable) {
  const files = []
  const inWritable = (p) => writable.some((r) => p === r || p.startsWith(r + path.sep))
  for (const arg of command) {
    if (typeof arg !== 'string' || arg === '' || arg.startsWith('-')) continue
    // Joined as written, its `.` and `..` left for realpath(3), which goes up from a link's
    // target as the command's `sh link/../build.sh` does; path.resolve dropped `link/..` as text
    // and named another file than the one the command runs (found by an attacker's review, mode34).
    const p = path.isAbsolute(arg) ? arg : `${cwd}/${arg}`
    const target = realNative(p)
    if (target === null || !isFile(target)) continue
    const dir = realNative(path.dirname(p))
    const entry = dir === null ? target : path.join(dir, path.basename(p))
    for (const f of [target, entry]) if (inWritable(f) && !files.includes(f)) files.push(f)
  }
  return files
}

/** The canonical path by realpath(3), which gives up on a loop or too many links; else null. */
function realNative(p) {
  try {
    return fs.realpathSync.native(p)
  } catch {
    return null
  }
}

function isFile(p) {
  try {
    return fs.statSync(p).isFile()
  } catch {
    return false
  }
}

/**
 * `{ paths, truncated, commandFiles }`: what changed in the writable roots since `startedMs`
 * (absolute paths, shallow first; `truncated`: the walk's bound cut it), and which of those the
 * command line names.
 */
async function attemptChanges(command, result, policy, startedMs) {
  const cwd = result.cwd
  const { writable, walked } = rootsToWalk(policy, cwd)
  const named = commandFiles(command, cwd, writable)
  const { paths, truncated } = await native.changedSince(walked, named, startedMs - CLOCK_SLACK_MS)
  return { paths, truncated, commandFiles: named.filter((f) => paths.includes(f)) }
}

module.exports = { attemptChanges }
