'use strict'
/**
 * One benchmark case in a fresh Node process (so heaps, RSS peaks and threads of one case never
 * leak into another). Usage: node bench/worker.js <case> '<json args>'. Prints progress on stderr
 * and, last, one line `@@RESULT <json>` on stdout. Launched by bench/run.js.
 */

const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { loadSandspawn, runPlanWithNode, nowMs, vmStatus, stateDir, PEERS_DIR } = require('./lib')

const sandspawn = loadSandspawn()
const TRUE = ['/bin/true']

function log(...a) {
  process.stderr.write(`  [${process.argv[2]}] ${a.join(' ')}\n`)
}

/** The directory that holds sandspawn's change-set store here (src/review/store.rs `root`), made if missing. */
function defaultChangeSetParent() {
  const chosen = process.env.SANDSPAWN_CHANGE_SET_DIR
  if (!chosen || !path.isAbsolute(chosen)) return stateDir()
  fs.mkdirSync(path.dirname(chosen), { recursive: true, mode: 0o700 })
  return path.dirname(chosen)
}

async function sandspawnOnce(argv, options) {
  const r = await sandspawn.spawnSandboxed(argv, options)
  if (r.exitCode !== 0) throw new Error(`sandspawn: ${argv.join(' ')} exited ${r.exitCode ?? r.signal}: ${r.stderr.slice(0, 500)}`)
  return r
}

async function nodeOnce(plan, opts) {
  const r = await runPlanWithNode(plan, opts)
  if (r.code !== 0) throw new Error(`child_process: ${plan.program} exited ${r.code ?? r.signal}: ${r.stderr.slice(0, 500)}`)
  return r
}

/** ABAB: each iteration runs both sides, alternating which goes first. Returns ms samples. */
async function interleaved(sides, warmup, iterations) {
  const out = Object.fromEntries(Object.keys(sides).map((k) => [k, []]))
  const names = Object.keys(sides)
  for (let i = 0; i < warmup + iterations; i++) {
    const order = i % 2 === 0 ? names : [...names].reverse()
    for (const name of order) {
      const t0 = process.hrtime.bigint()
      await sides[name]()
      const ms = Number(process.hrtime.bigint() - t0) / 1e6
      if (i >= warmup) out[name].push(ms)
    }
  }
  return out
}

/**
 * Blocks of `block` runs per side, the sides alternating block by block (and which goes first,
 * round by round), the first `settle` runs of each block not kept. Used where one side's runs
 * leave the host process slower for a moment: a `fork` of a process holding gigabytes (what
 * child_process does) write-protects all of its pages, and the parent's next runs pay the page
 * faults, which ABAB would charge to the other side.
 */
async function blockwise(sides, warmup, iterations, block = 20, settle = 3) {
  const out = Object.fromEntries(Object.keys(sides).map((k) => [k, []]))
  // The host process's CPU per run (every thread's: sandspawn's own work runs off the JavaScript
  // thread too), kept for the same runs as the times: under load a latency ratio mostly measures
  // the scheduler, while this grows only with the work each side does on the host.
  out.cpu = Object.fromEntries(Object.keys(sides).map((k) => [k, []]))
  const names = Object.keys(sides)
  for (let i = 0; i < warmup; i++) for (const name of names) await sides[name]()
  for (let round = 0; out[names[0]].length < iterations; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse()
    for (const name of order) {
      for (let j = 0; j < settle + block; j++) {
        const c0 = process.cpuUsage()
        const t0 = process.hrtime.bigint()
        await sides[name]()
        const ms = Number(process.hrtime.bigint() - t0) / 1e6
        const c = process.cpuUsage(c0)
        if (j >= settle && out[name].length < iterations) {
          out[name].push(ms)
          out.cpu[name].push((c.user + c.system) / 1000)
        }
      }
    }
  }
  return out
}

/** Hold `mib` MiB of live, touched Buffers (external memory: resident, not on the V8 heap). */
function holdHeap(mib) {
  const held = []
  for (let i = 0; i < mib; i++) {
    const b = Buffer.alloc(1 << 20)
    for (let j = 0; j < b.length; j += 4096) b[j] = (i + j) & 0xff || 1
    held.push(b)
  }
  globalThis.__held = held
  return held
}

/** ms from the call to the first byte of terminal output (`echo x` in a pty), then to the end. */
async function ptyFirstByte(options) {
  const t0 = process.hrtime.bigint()
  let first = null
  const proc = await sandspawn.startSandboxed(['sh', '-c', 'echo x'], { ...options, pty: true, onOutput: () => (first ??= process.hrtime.bigint()) })
  const r = await proc.wait()
  if (r.exitCode !== 0 || first === null) throw new Error(`pty run: exit ${r.exitCode ?? r.signal}: ${r.stdout.slice(0, 300)}`)
  return Number(first - t0) / 1e6
}

/** The baseline: util-linux `script` giving `echo x` a pty (unsandboxed), first byte on its stdout. */
function scriptFirstByte() {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint()
    let first = null
    const child = spawn('script', ['-qec', 'echo x', '/dev/null'], { stdio: ['ignore', 'pipe', 'ignore'] })
    child.stdout.on('data', () => (first ??= process.hrtime.bigint()))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 && first !== null ? resolve(Number(first - t0) / 1e6) : reject(new Error(`script: exit ${code}`))))
  })
}

const cases = {
  async pty({ warmup, iterations }) {
    const out = { bwrap: [], none: [], script: [] }
    for (let i = 0; i < warmup + iterations; i++) {
      const sample = [await ptyFirstByte({}), await ptyFirstByte({ sandbox: 'danger-full-access' }), await scriptFirstByte()]
      if (i >= warmup) ['bwrap', 'none', 'script'].forEach((k, j) => out[k].push(sample[j]))
    }
    return out
  },
  /** Cases 1-3: sequential /bin/true, read-only bwrap and unsandboxed, optionally under a big heap. */
  async latency({ heapMiB = 0, warmup = 20, iterations = 200 }) {
    const info = { rssStart: process.memoryUsage.rss() }
    if (heapMiB > 0) {
      const t0 = nowMs()
      holdHeap(heapMiB)
      info.allocMs = nowMs() - t0
    }
    info.rssHeld = process.memoryUsage.rss()
    const modes = { bwrap: 'read-only', none: 'danger-full-access' }
    const out = { info }
    for (const [key, mode] of Object.entries(modes)) {
      const plan = sandspawn.buildSandboxCommand(TRUE, { sandbox: mode })
      log(`${key}: ${warmup} warm-ups + ${iterations} iterations per side (heap ${heapMiB} MiB, rss ${(info.rssHeld / 2 ** 20).toFixed(0)} MiB)`)
      out[key] = await blockwise(
        {
          sandspawn: () => sandspawnOnce(TRUE, { sandbox: mode }),
          node: () => nodeOnce(plan),
        },
        warmup,
        iterations,
      )
    }
    return out
  },

  /** Case 4: `concurrency` runs in flight, `total` per round, rounds alternate the sides. */
  async parallel({ concurrency = 64, total = 256, rounds = 4, mode = 'read-only' }) {
    const plan = sandspawn.buildSandboxCommand(TRUE, { sandbox: mode })
    const sides = {
      sandspawn: () => sandspawnOnce(TRUE, { sandbox: mode }),
      node: () => nodeOnce(plan),
    }
    async function round(fn) {
      let next = 0
      const t0 = nowMs()
      const lane = async () => {
        while (next < total) {
          next++
          await fn()
        }
      }
      await Promise.all(Array.from({ length: concurrency }, lane))
      return (total / (nowMs() - t0)) * 1000
    }
    // Warm-up: one small round each.
    for (const fn of Object.values(sides)) {
      let n = 0
      await Promise.all(Array.from({ length: concurrency }, async () => n++ < concurrency && fn()))
    }
    const out = { sandspawn: [], node: [] }
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? ['sandspawn', 'node'] : ['node', 'sandspawn']
      for (const name of order) {
        const rate = await round(sides[name])
        out[name].push(rate)
        log(`round ${r + 1}/${rounds} ${name}: ${rate.toFixed(0)} runs/s`)
      }
    }
    return out
  },

  /**
   * Case 5: a command writing `bytes` to stdout, one side per process. Peak RSS growth is the max of
   * an rss sample taken every 10 ms and VmHWM (reset before the run through /proc/self/clear_refs).
   */
  async output({ side, bytes, maxBuffer = null, keep = false, mode = 'read-only' }) {
    const argv = ['head', '-c', String(bytes), '/dev/zero']
    const opts = { sandbox: mode }
    if (maxBuffer) opts.maxBuffer = maxBuffer
    const plan = sandspawn.buildSandboxCommand(argv, opts)
    const smallPlan = sandspawn.buildSandboxCommand(['head', '-c', '1000', '/dev/zero'], opts)
    // Warm up the code paths (threads, JIT) without growing the heap much.
    for (let i = 0; i < 3; i++) {
      if (side === 'sandspawn') await sandspawnOnce(['head', '-c', '1000', '/dev/zero'], opts)
      else await nodeOnce(smallPlan)
    }
    if (global.gc) global.gc()
    let hwmReset = false
    try {
      fs.writeFileSync('/proc/self/clear_refs', '5')
      hwmReset = true
    } catch {}
    const base = process.memoryUsage.rss()
    let peak = base
    const timer = setInterval(() => {
      const r = process.memoryUsage.rss()
      if (r > peak) peak = r
    }, 10)
    const t0 = process.hrtime.bigint()
    let received
    if (side === 'sandspawn') {
      const r = await sandspawnOnce(argv, opts)
      if (keep && (r.truncated || r.stdout.length !== bytes)) throw new Error(`sandspawn kept ${r.stdout.length} of ${bytes} bytes`)
      if (!keep && r.stdout.length + r.omittedBytes.stdout < bytes) throw new Error(`sandspawn saw ${r.stdout.length}+${r.omittedBytes.stdout} of ${bytes} bytes`)
      received = keep ? r.stdout.length : bytes
    } else if (keep) {
      const chunks = []
      await nodeOnce(plan, { onStdout: (d) => chunks.push(d) })
      received = Buffer.concat(chunks).length
    } else {
      let n = 0
      await nodeOnce(plan, { onStdout: (d) => (n += d.length) })
      received = n
    }
    const ms = Number(process.hrtime.bigint() - t0) / 1e6
    clearInterval(timer)
    peak = Math.max(peak, process.memoryUsage.rss())
    const hwm = vmStatus('VmHWM')
    if (received !== bytes) throw new Error(`${side}: received ${received} of ${bytes} bytes`)
    const growth = Math.max(peak, hwmReset && hwm ? hwm : 0) - base
    return { side, bytes, ms, mbps: bytes / 1e6 / (ms / 1000), base, peakSampled: peak - base, hwmGrowth: hwmReset && hwm ? hwm - base : null, growth }
  },

  /** Case 7a: srt (SandboxManager.wrapWithSandbox + spawn with a shell) against sandspawn, ABAB. */
  async srt({ warmup = 5, iterations = 60 }) {
    const { pathToFileURL } = require('node:url')
    const entry = require.resolve('@anthropic-ai/sandbox-runtime', { paths: [PEERS_DIR] })
    const mod = await import(pathToFileURL(entry).href)
    const SandboxManager = mod.SandboxManager || (mod.default && mod.default.SandboxManager)
    const version = JSON.parse(fs.readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')).version
    const t0 = nowMs()
    await SandboxManager.initialize({
      network: { allowedDomains: [], deniedDomains: [] },
      filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
    })
    const initMs = nowMs() - t0
    const srtOnce = async () => {
      const wrapped = await SandboxManager.wrapWithSandbox('true')
      await new Promise((resolve, reject) => {
        const child = spawn(wrapped, { shell: true, stdio: ['ignore', 'pipe', 'pipe'] })
        let stderr = ''
        child.stdout.on('data', () => {})
        child.stderr.on('data', (d) => (stderr += d))
        child.on('error', reject)
        child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`srt: exit ${code}: ${stderr.slice(0, 300)}`))))
      })
    }
    const samples = await interleaved({ sandspawn: () => sandspawnOnce(TRUE, {}), peer: srtOnce }, warmup, iterations)
    try {
      await SandboxManager.reset()
    } catch {}
    return { version, initMs, ...samples }
  },

  /**
   * Case 10: `/bin/true` in workspace-write, direct against `workspace: 'review'` (a new change set
   * each run, discarded after it, untimed), ABAB, in a workspace of `files` files.
   */
  async review({ warmup = 20, iterations = 200, files = 0, store = 'default' }) {
    const base = fs.mkdtempSync(path.join('/var/tmp', 'sandspawn-bench-review-'))
    // The change sets' store: beside the default one (a fresh directory in sandspawn's state
    // directory, where users' sets live), or `var-tmp`: inside `base`.
    const storeBase = store === 'default' ? fs.mkdtempSync(path.join(defaultChangeSetParent(), 'bench-review-')) : base
    process.env.SANDSPAWN_CHANGE_SET_DIR = path.join(storeBase, 'store')
    const ws = path.join(base, 'ws')
    fs.mkdirSync(ws)
    for (let i = 0; i < files; i++) {
      const dir = path.join(ws, `d${i % 100}`)
      if (i < 100) fs.mkdirSync(dir)
      fs.writeFileSync(path.join(dir, `f${i}.txt`), 'x')
    }
    const sides = {
      direct: { sandbox: 'workspace-write' },
      review: { sandbox: { mode: 'workspace-write', workspace: 'review' } },
    }
    const out = { direct: [], review: [] }
    try {
      for (let i = 0; i < warmup + iterations; i++) {
        for (const name of i % 2 === 0 ? ['direct', 'review'] : ['review', 'direct']) {
          const t0 = process.hrtime.bigint()
          const r = await sandspawnOnce(TRUE, { cwd: ws, ...sides[name] })
          const ms = Number(process.hrtime.bigint() - t0) / 1e6
          if (i >= warmup) out[name].push(ms)
          if (r.changeSet) await sandspawn.discardChangeSet(r.changeSet.id)
        }
      }
      return { ...out, files, store: process.env.SANDSPAWN_CHANGE_SET_DIR }
    } finally {
      fs.rmSync(base, { recursive: true, force: true })
      fs.rmSync(storeBase, { recursive: true, force: true })
    }
  },

  /** Case 7b: the Codex CLI's `codex sandbox` against sandspawn, ABAB. */
  async codex({ warmup = 5, iterations = 60, bin, args }) {
    const codexOnce = () =>
      new Promise((resolve, reject) => {
        const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] })
        let stderr = ''
        child.stdout.on('data', () => {})
        child.stderr.on('data', (d) => (stderr += d))
        child.on('error', reject)
        child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`codex: exit ${code}: ${stderr.slice(0, 300)}`))))
      })
    return interleaved({ sandspawn: () => sandspawnOnce(TRUE, {}), peer: codexOnce }, warmup, iterations)
  },
}

async function main() {
  const [name, json] = process.argv.slice(2)
  const fn = cases[name]
  if (!fn) throw new Error(`unknown case ${name}`)
  const result = await fn(json ? JSON.parse(json) : {})
  process.stdout.write(`\n@@RESULT ${JSON.stringify(result)}\n`)
  process.exit(0)
}

main().catch((err) => {
  process.stdout.write(`\n@@RESULT ${JSON.stringify({ error: String((err && err.stack) || err) })}\n`)
  process.exit(1)
})
