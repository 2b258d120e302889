'use strict'
// The one line the CLI prints after a sandbox denial: what was denied, and which flag would allow
// it. Loaded only when a denial happened.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { printable } = require('./printable')

/** `options`: the spawn options the CLI built (absolute paths); `sandboxType`: the result's. */
function denialLine(denial, options, sandboxType) {
  const what = `${denial.reason}${denial.path ? `: ${denial.path}` : ''}`
  return printable(`sandspawn: sandbox denied this command (${what}); ${remedy(denial, options, sandboxType)}`)
}

function remedy(denial, options, sandboxType) {
  const policy = options.sandbox
  // The cwd as named may go through a link (the shell's $PWD: `shell-cwd`); denials name it resolved.
  options = { ...options, cwd: resolved(options.cwd) }
  if (denial.reason === 'network_denied' && denial.host) return `the network policy refused ${denial.host}${networkRemedy(denial)}`
  if (denial.kind === 'network') {
    if (policy.network === true) return 'the network is already allowed (--network), so something else refused it'
    return 'to allow it, add --network'
  }
  if (denial.kind === 'process') return 'a system call the sandbox blocks; only --mode danger-full-access allows it'
  const p = denial.path && path.isAbsolute(denial.path) ? path.normalize(denial.path) : null
  if (p === null) return 'to allow writing a directory, add --writable DIR'
  const hidden = (policy.denyRead ?? []).find((d) => inside(p, d))
  if (hidden) return `it is hidden by --deny-read ${hidden}`
  const kept = (policy.readOnlyPaths ?? []).find((d) => inside(p, d))
  if (kept) return `it is kept read-only by --read-only ${kept}`
  const roots = policy.mode === 'workspace-write' ? [options.cwd, ...(policy.writableRoots ?? [])] : []
  if (roots.some((r) => inside(p, r))) {
    if (p.split(path.sep).includes('.git')) return '.git stays read-only inside writable directories; --no-protect-git would allow it'
    // A protected name at the top of a root or repository (a placeholder when it was missing).
    const names = policy.protectedNames ?? require('./options').defaultProtectedNames()
    const name = p.split(path.sep).find((part) => names.includes(part))
    if (name) return `${name} is a protected name (host tools act on it), kept as it is in writable directories; --no-protected-names would allow it`
    // Landlock cannot carve a read-only path out of a writable directory: the directories that
    // hold one are granted entry by entry (README, "What the Landlock mode guarantees").
    if (sandboxType === 'landlock') return 'in the Landlock mode a directory that holds a read-only path (such as .git) takes no new entries and loses none; work in a subdirectory, or run where bwrap works'
  }
  const dir = nearestDirectory(p)
  const kernel = kernelFilesystem(dir)
  if (kernel) return `${dir} is on ${kernel}, a kernel filesystem: kernel settings cannot be made writable from a sandbox (they are the host's, not the workspace's)`
  if (policy.mode !== 'workspace-write' && inside(dir, options.cwd)) {
    return `to allow it, add --mode workspace-write (makes ${options.cwd} writable) or --writable ${dir}`
  }
  const unsafe = notToSuggest(dir)
  if (unsafe) return `not suggesting --writable ${dir}: ${unsafe}, where the command could change what the host runs later (shell startup files, ssh keys and configuration, git's); if it must write there, give it a directory of its own with --writable`
  return `to allow it, add --writable ${dir}`
}

/** Credential and configuration directories of a home whose files other programs trust. */
const HOME_KEYS = ['.ssh', '.gnupg', '.aws', '.kube', '.docker']

/**
 * Why `--writable DIR` is not to be suggested, or null. The path comes from the command's own
 * output, which the command chooses: a faked "Read-only file system" line for
 * `/root/.ssh/authorized_keys` got "to allow it, add --writable /root" (found by an attacker's
 * review, mode33), advice an agent may follow as it is.
 */
function notToSuggest(dir) {
  const home = resolved(os.homedir())
  if (inside(home, dir)) return dir === home ? 'it is your home' : 'it holds your home'
  const keys = HOME_KEYS.find((d) => inside(dir, path.join(home, d)))
  return keys ? `it lies in your home's ${keys}` : null
}

function resolved(p) {
  try {
    return fs.realpathSync(p)
  } catch {
    return p
  }
}

/** What would allow a refused host, by why the proxy refused it (CLI flags, not API fields). */
function networkRemedy(denial) {
  const h = denial.host
  switch (denial.networkReason) {
    case 'denied':
      return ` (denied): it matches a --deny-domain entry, which nothing overrides`
    case 'private_address':
      return ` (private_address): it is or resolves to a loopback or private address; --allow-private ADDRESS would allow it`
    case 'declined':
      return ` (declined at the question); --allow-domain ${h} would allow it`
    case 'lookup_failed':
      return ` (lookup_failed): the host could not look the name up (no such name, or its name servers failed or timed out); no flag changes that`
    case 'question_limit':
      return ` (question_limit): 256 requests for other hosts were already waiting for an answer, or 4,096 had been allowed; --allow-domain ${h} would allow it`
    // The command's own faults, which no flag fixes (a run is never network_denied for them; a
    // denial made by hand may still name them).
    case 'malformed':
      return ` (malformed): the command's request named no valid host and port; no flag changes that`
    case 'connection_limit':
      return ` (connection_limit): the command held 256 proxy connections at once, the most a run may; no flag changes that`
    case 'unauthenticated':
      return ` (unauthenticated): the request lacked the run's proxy credential; no flag changes that`
    case 'tiny_chunks':
      return ` (tiny_chunks): a plain-HTTP chunked body of tiny chunks (or of endless chunk framing) was cut off, past the run's allowance of them; no flag changes that`
    case 'method_refused':
      return ` (method_refused): TRACE and TRACK are never forwarded; no flag changes that`
    default:
      return `; --allow-domain ${h} would allow it`
  }
}

/**
 * `statfs` types of the kernel pseudo-filesystems a writable root is refused on (the list of
 * src/policy/kernel_fs.rs): suggesting `--writable` there would only earn that refusal.
 */
const KERNEL_FILESYSTEMS = new Map([
  [0x9fa0, 'proc'], [0x62656572, 'sysfs'], [0x0027e0eb, 'cgroup'], [0x63677270, 'cgroup2'],
  [0x64626720, 'debugfs'], [0x74726163, 'tracefs'], [0x73636673, 'securityfs'], [0xcafe4a11, 'bpf'],
  [0x62656570, 'configfs'], [0xde5e81e4, 'efivarfs'], [0x6165676c, 'pstore'], [0x42494e4d, 'binfmt_misc'],
  [0xf97cff8c, 'selinuxfs'], [0x65735543, 'fusectl'],
])

/** The kernel filesystem the existing directory `dir` lies on (anything under /proc or /sys is), else null. */
function kernelFilesystem(dir) {
  if (process.platform !== 'linux') return null
  if (inside(dir, '/proc')) return 'proc'
  if (inside(dir, '/sys')) return 'sysfs'
  try {
    return KERNEL_FILESYSTEMS.get(fs.statfsSync(dir).type >>> 0) ?? null
  } catch {
    return null
  }
}

function inside(p, dir) {
  const rel = path.relative(dir, p)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel))
}

/** `p` itself when it is a directory, else the closest existing directory above it. */
function nearestDirectory(p) {
  let dir = p
  for (;;) {
    try {
      if (fs.statSync(dir).isDirectory()) return dir
    } catch {
      // missing: try the parent
    }
    const up = path.dirname(dir)
    if (up === dir) return dir
    dir = up
  }
}

module.exports = { denialLine }
