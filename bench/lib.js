'use strict'
/**
 * Shared helpers of the benchmark: loading the addon under test, running a launch plan with Node's
 * child_process exactly as sandspawn would, statistics and machine facts. No timing assertions.
 */

const fs = require('node:fs')
const path = require('node:path')
const os = require('node:os')
const { spawn, spawnSync } = require('node:child_process')

/** The package under test: SANDSPAWN_BENCH_PKG (a directory holding a built sandspawn) or the repo. */
const PKG_DIR = process.env.SANDSPAWN_BENCH_PKG ? path.resolve(process.env.SANDSPAWN_BENCH_PKG) : path.resolve(__dirname, '..')
const PEERS_DIR = path.join(__dirname, 'peers')

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/**
 * Waits until the wall clock is in a later second than now. sandspawn trusts a directory's or a
 * repository's times (to reuse what it read of it) only from the second after its last change:
 * timestamps are coarse, so within that second it reads everything again (`scan::stat_rule`,
 * `repo::facts`' `read_at`). A bench that times warm runs in a tree it has just made calls this
 * after making it; else the runs of the first second (up to ~40 of them, at 13 ms of host CPU
 * instead of 5 with 200 repositories) are counted as warm ones.
 */
function pastThisSecond() {
  sleepSync((Math.floor(Date.now() / 1000) + 1) * 1000 + 50 - Date.now())
}

/**
 * sandspawn's state directory for this environment (`$XDG_STATE_HOME/sandspawn`, else
 * `~/.local/state/sandspawn`), where its stores live by default; made if missing (0700, as
 * sandspawn makes it).
 */
function stateDir() {
  const abs = (v) => (v && path.isAbsolute(v) ? v : null)
  const dir = path.join(abs(process.env.XDG_STATE_HOME) || path.join(abs(process.env.HOME) || os.homedir(), '.local/state'), 'sandspawn')
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  return dir
}

/**
 * The benches make fresh workspaces by the hundred, and each workspace-write run in one makes that
 * workspace a store of private tool caches. Kept in the user's state directory, those stores would
 * outlive the workspaces by 30 days (58 MB of them after a few sessions here). So unless the caller
 * chose a store, this process and the workers it starts use a fresh one beside the default (the
 * same disk and directory, so the same costs), removed when the process that made it exits.
 */
function scratchToolCaches() {
  if (process.env.SANDSPAWN_TOOL_CACHE_DIR) return
  const dir = fs.mkdtempSync(path.join(stateDir(), 'bench-tool-caches-'))
  process.env.SANDSPAWN_TOOL_CACHE_DIR = dir
  process.on('exit', () => {
    // Overlayfs leaves mode-000 work directories; a fold may still be finishing (retried).
    spawnSync('chmod', ['-R', 'u+rwx', dir])
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 })
  })
}

/** require() the package, retrying for a while: somebody may be rebuilding the addon right now. */
function loadSandspawn() {
  scratchToolCaches()
  let last
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      return require(PKG_DIR)
    } catch (err) {
      last = err
      for (const k of Object.keys(require.cache)) if (k.startsWith(PKG_DIR + path.sep) && !k.startsWith(__dirname)) delete require.cache[k]
      sleepSync(500)
    }
  }
  throw last
}

/** Which `.node` file the package loads and whether it is a debug build (has DWARF sections). */
function addonInfo() {
  const files = fs.readdirSync(PKG_DIR).filter((f) => /^sandspawn\..*\.node$/.test(f))
  if (files.length === 0) return { file: null, build: 'unknown', size: 0 }
  const file = path.join(PKG_DIR, files[0])
  const bytes = fs.readFileSync(file)
  const sections = elfSectionNames(bytes)
  const debug = sections ? sections.includes('.debug_info') : null
  const build = debug === null ? 'unknown build' : debug ? 'DEBUG build (numbers are not representative; build with --release)' : 'release build'
  return { file, build, release: debug === false, size: bytes.length, mtime: fs.statSync(file).mtime.toISOString() }
}

/** Section names of a 64-bit little-endian ELF file, or null. (A debug build has .debug_info.) */
function elfSectionNames(b) {
  try {
    if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2 || b[5] !== 1) return null
    const shoff = Number(b.readBigUInt64LE(0x28))
    const shentsize = b.readUInt16LE(0x3a)
    const shnum = b.readUInt16LE(0x3c)
    const shstrndx = b.readUInt16LE(0x3e)
    const strOff = Number(b.readBigUInt64LE(shoff + shstrndx * shentsize + 0x18))
    const names = []
    for (let i = 0; i < shnum; i++) {
      const nameOff = b.readUInt32LE(shoff + i * shentsize)
      const start = strOff + nameOff
      names.push(b.toString('latin1', start, b.indexOf(0, start)))
    }
    return names
  } catch {
    return null
  }
}

/**
 * Run a launch plan (from buildSandboxCommand) with node:child_process the way sandspawn does:
 * stdout and stderr piped and read, settled on 'close' (exit + all output read), like
 * spawnSandboxed settles. Plans are self-contained; `extraFds` (always empty now) is still honoured
 * so the bench can compare against older builds.
 * `onStdout(buf)` receives every stdout chunk. Resolves with { code, signal, stderr }.
 */
function runPlanWithNode(plan, { onStdout } = {}) {
  return new Promise((resolve, reject) => {
    const stdio = ['ignore', 'pipe', 'pipe']
    for (const f of plan.extraFds) {
      while (stdio.length < f.fd) stdio.push('ignore')
      stdio[f.fd] = 'pipe'
    }
    let child
    try {
      child = spawn(plan.program, plan.args, { argv0: plan.argv0, env: plan.env, cwd: plan.cwd, stdio })
    } catch (err) {
      reject(err)
      return
    }
    for (const f of plan.extraFds) {
      const s = child.stdio[f.fd]
      s.on('error', () => {})
      s.end(f.data)
    }
    let stderr = ''
    child.stdout.on('data', onStdout || (() => {}))
    child.stderr.on('data', (d) => {
      if (stderr.length < 4096) stderr += d
    })
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stderr }))
  })
}

function nowMs() {
  return Number(process.hrtime.bigint()) / 1e6
}

function quantile(sorted, q) {
  if (sorted.length === 0) return NaN
  const pos = (sorted.length - 1) * q
  const lo = Math.floor(pos)
  const hi = Math.ceil(pos)
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo)
}

function summarize(samples) {
  const s = [...samples].sort((a, b) => a - b)
  return { n: s.length, median: quantile(s, 0.5), p95: quantile(s, 0.95), p5: quantile(s, 0.05), min: s[0], max: s[s.length - 1] }
}

function vmStatus(field) {
  try {
    const m = fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))
    return m ? Number(m[1]) * 1024 : null
  } catch {
    return null
  }
}

function firstLine(cmd, args) {
  try {
    const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 5000 })
    return ((r.stdout || '') + (r.stderr || '')).trim().split('\n')[0] || null
  } catch {
    return null
  }
}

function machineInfo() {
  let cpu = os.cpus()[0] ? os.cpus()[0].model : 'unknown'
  try {
    const m = fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.+)$/m)
    if (m) cpu = m[1].trim()
  } catch {}
  let distro = null
  try {
    const m = fs.readFileSync('/etc/os-release', 'utf8').match(/^PRETTY_NAME="?([^"\n]+)"?/m)
    if (m) distro = m[1]
  } catch {}
  return {
    cpu,
    cores: os.cpus().length,
    ramGiB: (os.totalmem() / 2 ** 30).toFixed(1),
    kernel: `${os.type()} ${os.release()} ${os.arch()}`,
    distro,
    node: process.version,
    bwrap: firstLine('bwrap', ['--version']),
    date: new Date().toISOString(),
    loadavg: os.loadavg().map((x) => x.toFixed(2)).join(' '),
  }
}

module.exports = { PKG_DIR, PEERS_DIR, loadSandspawn, stateDir, addonInfo, runPlanWithNode, nowMs, summarize, quantile, vmStatus, machineInfo, sleepSync, pastThisSecond, scratchToolCaches }
