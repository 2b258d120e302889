'use strict'
// Shared helpers for the security suite: temp workspaces outside the default writable set,
// host-state snapshots, host process listing, polling.

const fs = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')
const { execFileSync, spawnSync } = require('node:child_process')
const { START_BOUND } = require('../fixtures/spawn-helpers')

/**
 * A test file run directly (`node --test __test__/security/x.test.js`, not `npm test`, which gives
 * every step a scratch store): its runs keep their tool caches in a scratch store removed at exit,
 * as `scripts/test.js` does, not in the developer's ~/.local/state (where each test workspace would
 * leave a store until its 30-day expiry).
 */
if (!process.env.SANDSPAWN_TOOL_CACHE_DIR) {
  const target = path.resolve(__dirname, '../../target')
  fs.mkdirSync(target, { recursive: true })
  const store = fs.mkdtempSync(path.join(target, 'test-tool-caches-'))
  process.env.SANDSPAWN_TOOL_CACHE_DIR = store
  process.on('exit', () => {
    // Overlayfs work leftovers have mode 000, Go's module cache is read-only.
    ownerRwx(store)
    fs.rmSync(store, { recursive: true, force: true })
  })
}

/**
 * The package, loaded with retries: other engineers rebuild the native addon concurrently, and
 * it may be missing for a few seconds.
 */
function loadPackage() {
  const deadline = Date.now() + 30_000
  for (;;) {
    try {
      return require('../..')
    } catch (err) {
      if (Date.now() > deadline) throw err
      for (const key of Object.keys(require.cache)) if (key.startsWith(path.resolve(__dirname, '../..')) && !key.startsWith(__dirname)) delete require.cache[key]
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000)
    }
  }
}

/**
 * A system bwrap the ladder would try first: `SANDSPAWN_BWRAP`, or an executable `bwrap` on PATH in
 * a system program directory or a Nix/Guix store (the only places PATH search trusts).
 */
const SYSTEM_PROGRAM_DIR = /^(\/usr(\/local)?\/s?bin|\/s?bin|\/(nix|gnu)\/store\/[^/]+\/bin)$/
function systemBwrapOnPath() {
  if (process.env.SANDSPAWN_BWRAP) return true
  return (process.env.PATH || '').split(':').some((dir) => {
    try {
      fs.accessSync(path.join(dir || '.', 'bwrap'), fs.constants.X_OK)
      const real = fs.realpathSync(path.join(dir || '.', 'bwrap'))
      return fs.statSync(real).isFile() && SYSTEM_PROGRAM_DIR.test(path.dirname(real))
    } catch (err) {
      if (!err.code) throw err // a bug here, not a missing or unreadable bwrap
      return false
    }
  })
}
/**
 * Which bwrap this pass runs: the system one, or the bundled one on a host without a system bwrap
 * (a fresh machine) and under `SANDSPAWN_TEST_BWRAP=bundled`.
 *
 * `SANDSPAWN_TEST_BWRAP=bundled` (the extra pass of `npm test`): hide the system bwrap from the
 * host PATH, so every run of this process uses sandspawn's bundled bwrap. Each PATH directory that
 * holds a `bwrap` is replaced by a directory of symlinks to everything else in it, so commands
 * resolve exactly as before. It lives under /var/tmp, which sandboxes see (a private /tmp hides /tmp).
 * `bwrap-source.test.js` checks that the pass really runs the bundled binary.
 *
 * Defined after SYSTEM_PROGRAM_DIR: called before it, the pattern was in its temporal dead zone,
 * the ReferenceError was taken for "no bwrap here", and every pass hid the system bwrap (the
 * security suite ran only the bundled bwrap from bcda1c4 on).
 */
const EXPECTED_BWRAP_SOURCE = process.env.SANDSPAWN_TEST_BWRAP === 'bundled' || !systemBwrapOnPath() ? 'bundled' : 'system'
function hideSystemBwrap() {
  const farmRoot = fs.mkdtempSync(path.join('/var/tmp', 'sandspawn-nobwrap-path-'))
  // Open to other users: tests that run a fixture as another uid pass it this PATH (mkdtemp's 0700
  // hid /usr/bin from it: "spawn sh ENOENT" in CI's bundled pass).
  fs.chmodSync(farmRoot, 0o755)
  process.on('exit', () => fs.rmSync(farmRoot, { recursive: true, force: true }))
  const farms = new Map()
  const entries = (process.env.PATH || '').split(':').map((dir) => {
    if (!dir || !fs.existsSync(path.join(dir, 'bwrap'))) return dir
    const real = fs.realpathSync(dir)
    if (!farms.has(real)) {
      const farm = path.join(farmRoot, String(farms.size))
      fs.mkdirSync(farm)
      for (const name of fs.readdirSync(real)) if (name !== 'bwrap') fs.symlinkSync(path.join(real, name), path.join(farm, name))
      farms.set(real, farm)
    }
    return farms.get(real)
  })
  process.env.PATH = entries.join(':')
}
if (EXPECTED_BWRAP_SOURCE === 'bundled') hideSystemBwrap()

const sandspawn = loadPackage()

/**
 * Workspaces live under /var/tmp, not /tmp: in workspace-write the host /tmp is writable by
 * contract (`tmp: 'writable'`), so a sibling under /tmp would not be "outside the writable set".
 */
const BASE = '/var/tmp'

function token(prefix = 'sec') {
  return `${prefix}-${crypto.randomBytes(8).toString('hex')}`
}

/**
 * A fresh temp tree `{ root, ws, out }`: `ws` is the workspace (cwd), `out` a sibling outside it.
 * Removed after the test (`t.after`).
 */
function tempTree(t, { git = false } = {}) {
  const root = fs.mkdtempSync(path.join(BASE, 'sandspawn-sec-'))
  const ws = path.join(root, 'ws')
  const out = path.join(root, 'out')
  fs.mkdirSync(ws)
  fs.mkdirSync(out)
  if (git) execFileSync('git', ['init', '-q', ws])
  if (t && typeof t.after === 'function') t.after(() => rmrf(root))
  return { root, ws, out }
}

/**
 * `chmod -R u+rwx` done here, not by running chmod: exit handlers run it, and by then the bundled
 * pass's PATH farm (hideSystemBwrap, whose own exit handler ran first) is gone, so `chmod` was not
 * found as the ordinary user and overlayfs' mode-000 `work/work` stayed in /var/tmp. Directories are
 * opened before they are read; links are not followed.
 */
function ownerRwx(p) {
  let st
  try {
    st = fs.lstatSync(p)
  } catch {
    return
  }
  if (!st.isDirectory()) return // removing a file needs only its directory's permissions
  try {
    fs.chmodSync(p, (st.mode & 0o777) | 0o700)
  } catch {}
  let names = []
  try {
    names = fs.readdirSync(p)
  } catch {}
  for (const name of names) ownerRwx(path.join(p, name))
}

/**
 * A change-set store of this test file's own (SANDSPAWN_CHANGE_SET_DIR), removed at exit with
 * `rmrf`: a review run's set holds overlayfs' work directory (mode 000), which an ordinary user
 * (the suite's second pass) removes only once it is writable again.
 */
function changeSetStore(prefix) {
  const store = fs.mkdtempSync(path.join(BASE, prefix))
  process.env.SANDSPAWN_CHANGE_SET_DIR = store
  process.on('exit', () => rmrf(store))
  return store
}

/**
 * Paths `rmrf` could not remove yet: tried again when the process exits, after every test's hooks
 * (a tracefs test unmounts in a hook of its own that runs after the tree's removal, a sandbox may
 * still be torn down), and what is still there then is said on stderr, with the error and the
 * entries, so litter in /var/tmp can be traced. A retry on an unref'd timer never ran when the
 * process exited first (last session's litter, unexplained), and one spinning here for seconds
 * only waited for hooks that run after it.
 */
const removeAtExit = new Set()
let exiting = false
process.on('exit', () => {
  exiting = true
  for (const p of removeAtExit) removeOrSay(p)
})

function removeOrSay(p) {
  ownerRwx(p)
  try {
    fs.rmSync(p, { recursive: true, force: true })
  } catch (err) {
    let left = []
    try {
      left = fs.readdirSync(p).slice(0, 20)
    } catch {}
    process.stderr.write(`# litter: could not remove ${p}: ${err.message}; left: ${JSON.stringify(left)}\n`)
  }
}

/**
 * Removes what a test's run left at the top of the shared /tmp under NAMES: each name, and what a
 * run moved aside (`NAME.sandspawn-held-*`); never a plan's placeholder there (a symlink to
 * /dev/null/sandspawn-held, an empty directory of mode 1500): that is another process's plan's,
 * live, whose sandbox has it covered (removing it detached the cover under that sandbox, or failed
 * its setup: found by flake41, a workspace-write plan of helper.test.js beside a running CI), and
 * the runner removes it once that sandbox is gone.
 */
function removeTmpLeftovers(names) {
  for (const e of fs.readdirSync('/tmp')) {
    if (!names.some((n) => e === n || e.startsWith(`${n}.sandspawn-held-`))) continue
    const p = path.join('/tmp', e)
    if (names.includes(e) && isPlaceholder(p)) continue
    rmrf(p)
  }
}

/** Whether P is a plan's placeholder (see `removeTmpLeftovers`). */
function isPlaceholder(p) {
  try {
    const st = fs.lstatSync(p)
    if (st.isSymbolicLink()) return fs.readlinkSync(p) === '/dev/null/sandspawn-held'
    return st.isDirectory() && (st.mode & 0o7777) === 0o1500 && fs.readdirSync(p).length === 0
  } catch {
    return false
  }
}

function rmrf(p) {
  try {
    fs.rmSync(p, { recursive: true, force: true })
    return
  } catch {}
  // Tests leave directories without write permission (a placeholder's mode 1500, a filled `.git`
  // chmodded to it): root removes them anyway, an ordinary user (the suite's second pass) only
  // once they are writable again.
  if (exiting) return removeOrSay(p)
  ownerRwx(p)
  try {
    fs.rmSync(p, { recursive: true, force: true })
  } catch {
    removeAtExit.add(p)
  }
}

/** lstat + content hash of one path (or `{ exists: false }`). */
function snapshot(p) {
  let st
  try {
    st = fs.lstatSync(p)
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return { exists: false }
    throw err
  }
  const snap = {
    exists: true,
    type: st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other',
    mode: st.mode,
    ino: st.ino,
    mtimeMs: st.mtimeMs,
    ctimeMs: st.ctimeMs,
    size: st.size,
  }
  if (snap.type === 'file') snap.sha = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex')
  if (snap.type === 'symlink') snap.target = fs.readlinkSync(p)
  if (snap.type === 'dir') snap.entries = fs.readdirSync(p).sort()
  return snap
}

/** Recursive snapshot of a tree: `{ relpath: snapshot }`. */
function treeSnapshot(dir) {
  const out = {}
  const walk = (rel) => {
    const abs = path.join(dir, rel)
    const s = snapshot(abs)
    out[rel || '.'] = s
    if (s.type === 'dir') for (const e of s.entries) walk(path.join(rel, e))
  }
  walk('')
  return out
}

/** The output a command produced, for assertion messages. */
function show(r) {
  return `exit=${r.exitCode} signal=${r.signal} timedOut=${r.timedOut}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`
}

/** spawnSandboxed with a safety timeout so a broken sandbox cannot hang the suite. */
function run(command, options = {}) {
  return sandspawn.spawnSandboxed(command, { timeout: 15000, ...options })
}

/** `bash -c script`. */
function sh(script, options = {}) {
  return run(['bash', '-c', script], options)
}

/** Quote a string for bash. */
function q(s) {
  return `'${String(s).replace(/'/g, `'\\''`)}'`
}

/** Every process on the host: `{ pid, ppid, state, sid, comm, cmdline }`. */
function hostProcesses() {
  const procs = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8')
      const close = stat.lastIndexOf(')')
      const comm = stat.slice(stat.indexOf('(') + 1, close)
      const fields = stat.slice(close + 2).split(' ')
      let cmdline = ''
      try {
        cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim()
      } catch {}
      procs.push({ pid: Number(name), state: fields[0], ppid: Number(fields[1]), sid: Number(fields[3]), comm, cmdline })
    } catch {
      // raced with exit
    }
  }
  return procs
}

/** Live (non-zombie) host processes whose command line contains `marker`. */
function processesMatching(marker) {
  return hostProcesses().filter((p) => p.state !== 'Z' && p.cmdline.includes(marker) && p.pid !== process.pid)
}

/** All live descendants of `pid` (by ppid chain). */
function descendantsOf(pid = process.pid) {
  const procs = hostProcesses()
  const children = new Map()
  for (const p of procs) {
    if (!children.has(p.ppid)) children.set(p.ppid, [])
    children.get(p.ppid).push(p)
  }
  const out = []
  const stack = [...(children.get(pid) || [])]
  while (stack.length) {
    const p = stack.pop()
    out.push(p)
    stack.push(...(children.get(p.pid) || []))
  }
  return out
}

function isAlive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Poll `predicate` (sync or async) every `interval` ms until true or `ms` elapsed; returns the last value. */
async function waitFor(predicate, ms = 2000, interval = 25) {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await predicate()
    if (v || Date.now() >= deadline) return v
    await sleep(interval)
  }
}

function fdCount() {
  return fs.readdirSync('/proc/self/fd').length
}

function threadCount() {
  const m = /^Threads:\s+(\d+)/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))
  return Number(m[1])
}

function which(cmd) {
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || null
  } catch {
    return null
  }
}

/** The mount table of this (host) mount namespace. */
function hostMounts() {
  return fs.readFileSync('/proc/self/mountinfo', 'utf8')
}

/**
 * How much slower than the machine the host-CPU bounds of the cost tests were set on this one is
 * (at least 1): the least host CPU of five warm workspace-write 'true' runs in an empty workspace,
 * over the 4.2 ms such a run cost there (bench/scale.js, the fortieth session). The bounds guard
 * against costs many times over them; on a machine twice as slow (the forty-first session's: 8.4
 * to 9.4 ms a run) a fixed bound failed where main's own cost was within it on the first.
 */
async function machineSlowness(t) {
  const { ws } = tempTree(t)
  const opts = { cwd: ws, sandbox: 'workspace-write', timeout: 60000 }
  await sandspawn.spawnSandboxed(['true'], opts)
  let least = Infinity
  for (let i = 0; i < 5; i++) {
    const before = process.cpuUsage()
    await sandspawn.spawnSandboxed(['true'], opts)
    const used = process.cpuUsage(before)
    least = Math.min(least, (used.user + used.system) / 1000)
  }
  return Math.max(1, least / 4.2)
}

module.exports = {
  START_BOUND,
  machineSlowness,
  sandspawn,
  EXPECTED_BWRAP_SOURCE,
  BASE,
  token,
  tempTree,
  changeSetStore,
  rmrf,
  removeTmpLeftovers,
  ownerRwx,
  snapshot,
  treeSnapshot,
  show,
  run,
  sh,
  q,
  hostProcesses,
  processesMatching,
  descendantsOf,
  isAlive,
  sleep,
  waitFor,
  fdCount,
  threadCount,
  which,
  hostMounts,
}
