'use strict'
// CLI flags → spawnSandboxed options. Relative paths resolve against --cwd (the directory the
// command runs in), not against the shell's: `--cwd proj --writable out` means proj/out. Without
// --cwd, the command runs where the shell is, named as the shell names it (`shell-cwd`: the links
// on that way are held for the run; a relative --cwd is named from there when it leads to the
// same directory); relative paths resolve against that directory's resolved path, as the kernel
// resolves them (`..` of a link's target, not of the link).

const path = require('node:path')
const { UsageError } = require('./args')
const { checkModeFlags } = require('./mode-rules')


function toSpawnOptions(values) {
  require('./path-flag-values').refuseShellLeftovers(values)
  // As the kernel names --cwd (`..` after a link from its target), never path.resolve's text.
  const cwd = require('./shell-cwd').kernelCwd(values.cwd)
  const abs = (p) => underCwd(cwd, p)
  const named = require('./shell-cwd').namedCwd(values.cwd)
  const writable = values.writable ?? []
  // --review implies workspace-write, as --writable does: it reviews what a run writes.
  const policy = { mode: values.mode ?? (writable.length > 0 || values.review ? 'workspace-write' : 'read-only') }
  // An unknown --mode is the library's to report (it lists the modes).
  checkModeFlags(values, policy.mode)
  if (writable.length) policy.writableRoots = writable.map(abs)
  if (values['read-only']) policy.readOnlyPaths = values['read-only'].map(abs)
  if (values['deny-read']) policy.denyRead = values['deny-read'].map(abs)
  if (values.network) policy.network = true
  if (values['allow-domain'] || values['deny-domain']) {
    if (values.network) throw new UsageError('--network cannot be combined with --allow-domain/--deny-domain (the allow-list replaces full network access)')
    policy.network = { allowedDomains: values['allow-domain'] ?? [], deniedDomains: values['deny-domain'] ?? [] }
    if (values['allow-private']) policy.network.allowPrivateAddresses = values['allow-private']
  }
  if (values['allow-unix-sockets']) policy.allowUnixSockets = true
  if (values.tmp !== undefined) policy.tmp = values.tmp
  if (values['protect-git']) policy.protectGit = true
  if (values['no-protect-git']) policy.protectGit = false
  const names = protectedNames(values)
  if (names) policy.protectedNames = names
  if (values['tool-caches'] !== undefined) policy.toolCaches = values['tool-caches']
  if (values.review) policy.workspace = 'review'
  const options = { cwd: named, sandbox: policy }
  if (values.timeout !== undefined) {
    const ms = values.timeout.trim() === '' ? NaN : Number(values.timeout)
    if (!Number.isFinite(ms) || ms < 0) throw new UsageError(`--timeout must be a number of milliseconds (0 or more), got '${values.timeout}'`)
    options.timeout = ms
  }
  const limits = require('./limits').limitsFromFlags(values)
  if (limits) options.limits = limits
  if (values.platform !== undefined) options.platform = values.platform
  // Linux: may fall back to the Landlock mode (no PID isolation) where bwrap cannot run.
  if (values['allow-landlock']) options.linux = { allow: ['bwrap', 'landlock'] }
  return options
}

/**
 * A path flag's value as an absolute path, its `.` and `..` left for the library, which resolves
 * them as the kernel does (the command's `cat link/../secret` goes up from the link's target).
 * path.resolve dropped `link/..` as text: `--deny-read link/../secret` denied `<cwd>/secret` while
 * the command read the other one (found by an attacker's review, mode33). `cwd` is absolute.
 */
function underCwd(cwd, p) {
  if (path.isAbsolute(p)) return p
  return cwd.endsWith('/') ? cwd + p : `${cwd}/${p}`
}

/**
 * `protectedNames` from --protected-name and --no-protected-names, or undefined (the defaults).
 * --protected-name adds to the library's defaults: a person protecting one more file does not
 * mean to unprotect `.bashrc`.
 */
function protectedNames(values) {
  if (!values['protected-name'] && !values['no-protected-names']) return undefined
  const base = values['no-protected-names'] ? [] : defaultProtectedNames()
  return [...new Set([...base, ...(values['protected-name'] ?? [])])]
}

/** The core's own default list (never a copy here that could drift from it). */
function defaultProtectedNames() {
  return require('../../binding.js').protectedNameDefaults()
}

module.exports = { toSpawnOptions, protectedNames, defaultProtectedNames }
