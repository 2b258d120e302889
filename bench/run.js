#!/usr/bin/env node
'use strict'
/**
 * `npm run bench`: sandspawn against node:child_process (and against bwrap run from a shell, and
 * against peer sandboxes when `npm run bench:peers` installed them), side by side in one run,
 * reported as ratios. Prints a markdown table and writes it with the machine description into
 * bench/RESULTS.md (a hand-written "## Analysis" section already there is kept).
 *
 * Every case runs in its own Node process (bench/worker.js) so that heaps and RSS peaks do not mix.
 * The two sides of a latency case are interleaved (ABAB, alternating who goes first).
 *
 *   node bench/run.js [--quick] [--no-peers] [--no-network] [--no-review] [--no-write]
 *   node bench/run.js --only-review [--quick]   # case 10 alone, printed, RESULTS.md untouched
 *   node bench/run.js --only-network [--quick]  # case 9 alone, the same
 *   SANDSPAWN_BENCH_PKG=/path/to/a/built/sandspawn node bench/run.js   # bench another build
 *
 * Numbers are only meaningful with a release build of the addon (the table says which it loaded).
 * This file asserts nothing about timings: a missed target is reported, never thrown.
 */

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { PKG_DIR, PEERS_DIR, loadSandspawn, addonInfo, summarize, machineInfo, nowMs } = require('./lib')

const ARGS = new Set(process.argv.slice(2))
const QUICK = ARGS.has('--quick')
const RESULTS_MD = path.join(__dirname, 'RESULTS.md')
const WORKER = path.join(__dirname, 'worker.js')

const N = QUICK
  ? { warmup: 5, iterations: 40, parTotal: 128, parRounds: 2, outReps: 1, floor: 50, peer: 15, gb: 200_000_000, heapMiB: 2048 }
  : { warmup: 20, iterations: 200, parTotal: 256, parRounds: 4, outReps: 3, floor: 200, peer: 60, gb: 1_000_000_000, heapMiB: 2048 }

const started = nowMs()
function progress(msg) {
  process.stderr.write(`[bench ${((nowMs() - started) / 1000).toFixed(0).padStart(3)}s] ${msg}\n`)
}

/** Run one case in a fresh Node process; resolves with its result or `{ error }`. */
function worker(name, args, { nodeArgs = [], timeoutMs = 180_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeArgs, WORKER, name, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const line = out.split('\n').find((l) => l.startsWith('@@RESULT '))
      if (line) return resolve(JSON.parse(line.slice(9)))
      resolve({ error: signal === 'SIGKILL' ? `timed out after ${timeoutMs / 1000}s` : `worker exited ${code ?? signal} without a result` })
    })
  })
}

// ---------------------------------------------------------------------------------------------
// Formatting

const fmt = {
  ms: (x) => (Number.isFinite(x) ? `${x.toFixed(2)} ms` : '—'),
  rate: (x, unit) => (Number.isFinite(x) ? `${x >= 100 ? x.toFixed(0) : x.toFixed(1)} ${unit}` : '—'),
  pct: (x) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%` : '—'),
  mb: (x) => (Number.isFinite(x) ? `${(x / 2 ** 20).toFixed(1)} MiB` : '—'),
  ratio: (x) => (Number.isFinite(x) ? x.toFixed(2) : '—'),
}

const rows = []
/**
 * A table row. `a` is sandspawn, `b` the baseline; each `{ median, p95 }` already formatted.
 * `pass`: true / false / null (informational).
 */
function row(id, name, a, baseline, b, ratio, target, pass, note) {
  rows.push({ id, name, a, baseline, b, ratio, target, pass, note })
}
function verdict(pass) {
  return pass === true ? 'pass' : pass === false ? '**MISS**' : 'info'
}
function errorRow(id, name, why, target = '') {
  rows.push({ id, name, a: { median: '—', p95: '—' }, baseline: '', b: { median: '—', p95: '—' }, ratio: '—', target, pass: null, note: why, error: true })
}

function latencyRow(id, name, samples, baselineName, bKey = 'node', target = 1.0) {
  const a = summarize(samples.sandspawn)
  const b = summarize(samples[bKey])
  const ratio = a.median / b.median
  row(id, name, { median: fmt.ms(a.median), p95: fmt.ms(a.p95) }, baselineName, { median: fmt.ms(b.median), p95: fmt.ms(b.p95) }, fmt.ratio(ratio), target === null ? '' : `<= ${target.toFixed(1)}`, target === null ? null : ratio <= target)
  return { a, b, ratio }
}

/** Rates: the p95 column shows the slow tail (the 5th percentile of the rate). */
function rateRow(id, name, aRates, baselineName, bRates, unit, target = 1.0) {
  const a = summarize(aRates)
  const b = summarize(bRates)
  const ratio = a.median / b.median
  row(id, name, { median: fmt.rate(a.median, unit), p95: fmt.rate(a.p5, unit) }, baselineName, { median: fmt.rate(b.median, unit), p95: fmt.rate(b.p5, unit) }, fmt.ratio(ratio), `>= ${target.toFixed(1)}`, ratio >= target)
  return { a, b, ratio }
}

function table() {
  const head = ['#', 'case', 'sandspawn median', 'sandspawn p95', 'baseline', 'baseline median', 'baseline p95', 'ratio', 'target', 'result']
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i >= 2 && i !== 4 ? '---:' : '---')).join('|')}|`]
  for (const r of rows) {
    const name = r.note ? `${r.name} — ${r.note}` : r.name
    lines.push(`| ${[r.id, name, r.a.median, r.a.p95, r.baseline, r.b.median, r.b.p95, r.ratio, r.target, verdict(r.pass)].join(' | ')} |`)
  }
  return lines.join('\n')
}

// ---------------------------------------------------------------------------------------------
// Cases

async function latencyCases() {
  progress(`cases 1-2: sequential /bin/true, ${N.warmup} warm-ups + ${N.iterations} ABAB iterations`)
  const base = await worker('latency', { warmup: N.warmup, iterations: N.iterations })
  progress(`case 3: the same while holding ${N.heapMiB} MiB of live Buffers (separate process)`)
  const heap = await worker('latency', { heapMiB: N.heapMiB, warmup: N.warmup, iterations: N.iterations }, { nodeArgs: ['--max-old-space-size=4096'], timeoutMs: 240_000 })
  const out = {}
  if (base.error) {
    errorRow('1', 'sequential `/bin/true`, read-only bwrap', base.error, '<= 1.0')
    errorRow('2', 'sequential `/bin/true`, unsandboxed', base.error, '<= 1.0')
  } else {
    out.c1 = latencyRow('1', 'sequential `/bin/true`, read-only bwrap (latency)', base.bwrap, 'child_process, same bwrap argv')
    out.c2 = latencyRow('2', 'sequential `/bin/true`, unsandboxed (latency)', base.none, 'child_process.spawn(`/bin/true`)')
    // The host's own work per run, the part of case 1 and 2 that is sandspawn's code: grew from
    // 1.2-1.3 ms to 2.5-2.6 ms between 2026-12-02 and 2026-12-05 unseen by the latency rows, which
    // a loaded machine blurs (README, Performance). Informational: no target.
    latencyRow('1c', 'host process CPU per sequential `/bin/true`, read-only bwrap', base.bwrap.cpu, 'child_process, same bwrap argv', 'node', null)
    latencyRow('2c', 'host process CPU per sequential `/bin/true`, unsandboxed', base.none.cpu, 'child_process.spawn(`/bin/true`)', 'node', null)
  }
  if (heap.error) {
    errorRow('3', `heap independence (${N.heapMiB} MiB held)`, heap.error, '<= +25%')
    return out
  }
  const held = `${(heap.info.rssHeld / 2 ** 30).toFixed(2)} GiB RSS`
  out.c3a = latencyRow('3a', `as 1 with ${held} held by the host`, heap.bwrap, 'child_process, same heap')
  out.c3b = latencyRow('3b', `as 2 with ${held} held by the host`, heap.none, 'child_process, same heap')
  if (out.c1 && out.c2) {
    for (const [id, what, big, small] of [
      ['3c', 'latency growth from the held heap, read-only bwrap (3a vs 1)', out.c3a, out.c1],
      ['3d', 'latency growth from the held heap, unsandboxed (3b vs 2)', out.c3b, out.c2],
    ]) {
      const ga = big.a.median / small.a.median - 1
      const gb = big.b.median / small.b.median - 1
      row(id, what, { median: fmt.pct(ga), p95: fmt.pct(big.a.p95 / small.a.p95 - 1) }, 'child_process growth', { median: fmt.pct(gb), p95: fmt.pct(big.b.p95 / small.b.p95 - 1) }, '—', '<= +25% (sandspawn)', ga <= 0.25)
    }
  }
  return out
}

async function reviewCases() {
  // 10c: the store somewhere else on the same disk. A new set makes about 14 inodes there, and what
  // one costs depends on where on the disk its directory lies (ext4 allocates near the parent).
  const cases = [
    ['10a', 0, 'default'],
    ['10b', 20_000, 'default'],
    ['10c', 0, 'var-tmp'],
  ]
  for (const [id, files, store] of cases) {
    progress(`case ${id}: /bin/true in workspace-write, direct vs workspace: 'review', ${files} files in the workspace, store ${store}`)
    const r = await worker('review', { warmup: N.warmup, iterations: N.iterations, files, store })
    const where = store === 'default' ? 'sets in the default store' : 'sets in a store under /var/tmp'
    const name = `workspace: 'review' against workspace-write (direct), \`/bin/true\`, ${files.toLocaleString('en')} files in the workspace, ${where}`
    const target = store === 'default' ? ['<= +2 ms', (extra) => extra <= 2] : ['', () => null]
    if (r.error) {
      errorRow(id, name, r.error, target[0])
      continue
    }
    const [a, b] = [summarize(r.review), summarize(r.direct)]
    const extra = a.median - b.median
    row(id, `${name} — review costs ${extra >= 0 ? '+' : ''}${extra.toFixed(2)} ms at the median`, { median: fmt.ms(a.median), p95: fmt.ms(a.p95) }, 'workspace-write (direct)', { median: fmt.ms(b.median), p95: fmt.ms(b.p95) }, fmt.ratio(a.median / b.median), target[0], target[1](extra))
  }
}

async function ptyCase() {
  progress(`case 8: pty spawn-to-first-byte (\`echo x\`), ${N.warmup} warm-ups + ${N.iterations} iterations`)
  const r = await worker('pty', { warmup: N.warmup, iterations: N.iterations })
  if (r.error) return errorRow('8', 'pty spawn-to-first-byte', r.error)
  const stats = (xs) => {
    const s = [...xs].sort((a, b) => a - b)
    return { median: s[Math.floor(s.length / 2)], p95: s[Math.min(s.length - 1, Math.floor(s.length * 0.95))] }
  }
  const [bwrap, none, script] = [stats(r.bwrap), stats(r.none), stats(r.script)]
  // node-pty is not installed here (a native build of its own); util-linux `script` is the
  // unsandboxed pty baseline.
  for (const [id, name, a] of [['8a', 'pty spawn-to-first-byte, read-only bwrap (`echo x`)', bwrap], ['8b', 'pty spawn-to-first-byte, unsandboxed (`echo x`)', none]]) {
    row(id, name, { median: fmt.ms(a.median), p95: fmt.ms(a.p95) }, 'util-linux `script -qec` (unsandboxed pty)', { median: fmt.ms(script.median), p95: fmt.ms(script.p95) }, fmt.ratio(a.median / script.median), '', null, '')
  }
}

async function parallelCase() {
  progress(`case 4: 64 concurrent sandboxed /bin/true, ${N.parTotal} runs per round, ${N.parRounds} rounds per side`)
  const r = await worker('parallel', { concurrency: 64, total: N.parTotal, rounds: N.parRounds })
  if (r.error) return errorRow('4', 'parallel throughput, 64 concurrent', r.error, '>= 1.0')
  return rateRow('4', 'parallel throughput, 64 concurrent read-only bwrap `/bin/true`', r.sandspawn, 'child_process, 64 concurrent', r.node, 'runs/s')
}

async function outputCases() {
  const specs = [
    { id: '5a', label: `${N.gb / 1e9} GB to stdout, default maxBuffer (kept: 1 MiB head+tail)`, args: { bytes: N.gb }, baseline: 'child_process counting bytes' },
    { id: '5b', label: '100 MB to stdout, `maxBuffer: 200 MiB` (kept whole)', args: { bytes: 100_000_000, maxBuffer: 200 * 1024 * 1024, keep: true }, baseline: 'child_process collecting + Buffer.concat' },
  ]
  for (const spec of specs) {
    progress(`case ${spec.id}: ${spec.label}, ${N.outReps} rep(s) per side, one process per run`)
    const res = { sandspawn: [], node: [] }
    let error = null
    for (let rep = 0; rep < N.outReps && !error; rep++) {
      const order = rep % 2 === 0 ? ['sandspawn', 'node'] : ['node', 'sandspawn']
      for (const side of order) {
        const r = await worker('output', { side, ...spec.args }, { timeoutMs: 120_000 })
        if (r.error) {
          error = `${side}: ${r.error.split('\n')[0]}`
          break
        }
        res[side].push(r)
        progress(`  ${side}: ${r.mbps.toFixed(0)} MB/s, RSS growth ${fmt.mb(r.growth)}`)
      }
    }
    if (error) {
      errorRow(spec.id, spec.label, error, '>= 1.0')
      continue
    }
    rateRow(spec.id, `${spec.label}: throughput`, res.sandspawn.map((r) => r.mbps), spec.baseline, res.node.map((r) => r.mbps), 'MB/s')
    const ga = summarize(res.sandspawn.map((r) => r.growth))
    const gb = summarize(res.node.map((r) => r.growth))
    const limit = 64 * 2 ** 20
    const target = spec.id === '5a' ? '< 64 MiB (sandspawn)' : ''
    row(`${spec.id}′`, `${spec.label}: host peak RSS growth (max of 10 ms samples and VmHWM)`, { median: fmt.mb(ga.median), p95: fmt.mb(ga.max) }, spec.baseline, { median: fmt.mb(gb.median), p95: fmt.mb(gb.max) }, fmt.ratio(ga.median / gb.median), target, spec.id === '5a' ? ga.max < limit : null)
  }
}

/** Case 6: bwrap's own cost, run from a bash loop (per-run times from $EPOCHREALTIME). */
async function floorCase(c1, c2) {
  const sandspawn = loadSandspawn()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandspawn-bench-'))
  try {
    const results = {}
    for (const [key, mode] of [
      ['bwrap', 'read-only'],
      ['none', 'danger-full-access'],
      ['bwrap-direct', 'read-only'],
    ]) {
      const plan = sandspawn.buildSandboxCommand(['/bin/true'], { sandbox: mode })
      if (key === 'bwrap-direct') {
        // The same argv with bwrap exec'ing /bin/true itself instead of the in-sandbox
        // sandspawn-helper (so without the seccomp filter): what that helper adds to a run. A
        // helper in front of bwrap (offline nsswitch, masks) stays: it is part of both sides.
        const at = plan.args.findIndex((a, i) => i > 0 && plan.args[i - 1] === '--' && a.endsWith('/sandspawn-helper'))
        const inner = plan.args.indexOf('--', at + 1)
        if (at < 0 || inner < 0) throw new Error(`no in-sandbox helper in the plan: ${plan.args.join(' ')}`)
        plan.args = [...plan.args.slice(0, at), ...plan.args.slice(inner + 1)]
      }
      const redirs = plan.extraFds.map((f) => {
        const file = path.join(dir, `fd${f.fd}-${f.purpose}.bin`)
        fs.writeFileSync(file, f.data)
        return `${f.fd}<${shq(file)}`
      })
      const cmd = [plan.program, ...plan.args].map(shq).join(' ')
      const script = `for i in $(seq ${N.floor}); do s=$EPOCHREALTIME; ${cmd} ${redirs.join(' ')} >/dev/null 2>&1 || echo FAIL; e=$EPOCHREALTIME; echo "$s $e"; done`
      progress(`case 6 (${key}): ${N.floor} runs from a bash loop`)
      const t0 = nowMs()
      const out = await new Promise((resolve, reject) => {
        const child = spawn('bash', ['-c', script], { cwd: plan.cwd, env: plan.env, stdio: ['ignore', 'pipe', 'inherit'] })
        let s = ''
        child.stdout.on('data', (d) => (s += d))
        child.on('error', reject)
        child.on('close', () => resolve(s))
      })
      const total = nowMs() - t0
      if (out.includes('FAIL')) throw new Error(`bwrap failed in the shell loop: ${cmd}`)
      const samples = out
        .trim()
        .split('\n')
        .map((l) => l.replace(/,/g, '.').split(' ').map(Number))
        .map(([s, e]) => (e - s) * 1000)
      results[key] = { samples, perRunMs: total / N.floor, script: `bash -c '${script}'` }
    }
    for (const [id, key, name, cN] of [
      ['6a', 'bwrap', 'floor: the same bwrap argv from a bash loop (sandspawn 1 vs this)', c1],
      ['6b', 'none', 'floor: `/bin/true` from a bash loop (sandspawn 2 vs this)', c2],
    ]) {
      const f = summarize(results[key].samples)
      const note = `loop total / ${N.floor} = ${results[key].perRunMs.toFixed(2)} ms per run`
      if (!cN) {
        row(id, name, { median: '—', p95: '—' }, 'bash loop', { median: fmt.ms(f.median), p95: fmt.ms(f.p95) }, '—', '', null, note)
        continue
      }
      row(id, name, { median: fmt.ms(cN.a.median), p95: fmt.ms(cN.a.p95) }, 'bash loop', { median: fmt.ms(f.median), p95: fmt.ms(f.p95) }, fmt.ratio(cN.a.median / f.median), '', null, `${note}; sandspawn's median is ${fmt.ms(cN.a.median - f.median)} above this floor`)
    }
    const withHelper = summarize(results.bwrap.samples)
    const direct = summarize(results['bwrap-direct'].samples)
    row('6c', 'the in-sandbox helper\'s cost: 6a against the same argv with bwrap exec\'ing `/bin/true` directly (no seccomp), bash loop', { median: fmt.ms(withHelper.median), p95: fmt.ms(withHelper.p95) }, 'bwrap without in-sandbox helper', { median: fmt.ms(direct.median), p95: fmt.ms(direct.p95) }, fmt.ratio(withHelper.median / direct.median), '', null, `the helper adds ${fmt.ms(withHelper.median - direct.median)} per run (median)`)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

function shq(s) {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${String(s).replace(/'/g, `'\\''`)}'`
}

/** Case 7: peer sandboxes, when bench/install-peers.js installed them. */
async function peerCases() {
  if (ARGS.has('--no-peers')) return
  const peersInstalled = fs.existsSync(path.join(PEERS_DIR, 'node_modules'))
  // srt
  let srtEntry = null
  try {
    srtEntry = require.resolve('@anthropic-ai/sandbox-runtime', { paths: [PEERS_DIR] })
  } catch {}
  if (!srtEntry) {
    errorRow('7a', 'peer: @anthropic-ai/sandbox-runtime (srt)', 'not installed (run `npm run bench:peers`)')
  } else {
    const missing = ['socat', 'rg'].filter((b) => !onPath(b))
    if (missing.length) {
      errorRow('7a', 'peer: srt', `cannot run: ${missing.join(', ')} not on PATH (apt-get install -y socat ripgrep)`)
    } else {
      progress(`case 7a: srt wrapWithSandbox('true') + spawn(shell), ${N.peer} ABAB iterations`)
      const r = await worker('srt', { warmup: 5, iterations: N.peer }, { timeoutMs: 120_000 })
      if (r.error) errorRow('7a', 'peer: srt', `cannot run: ${r.error.split('\n')[0].slice(0, 200)}`)
      else latencyRow('7a', `peer: srt ${r.version}, \`wrapWithSandbox('true')\` + \`spawn(…, {shell:true})\` (initialize once: ${r.initMs.toFixed(0)} ms) vs sandspawn \`['/bin/true']\``, r, 'srt', 'peer', null)
    }
  }
  // codex
  const codex = findCodex()
  if (!codex) {
    errorRow('7b', 'peer: Codex CLI `codex sandbox`', peersInstalled ? 'not installed (run `npm run bench:peers`)' : 'not installed (run `npm run bench:peers`)')
    return
  }
  const args = await codexArgs(codex.bin)
  if (!args.ok) {
    errorRow('7b', `peer: Codex CLI ${codex.version}`, `cannot run: ${args.why}`)
    return
  }
  progress(`case 7b: ${path.basename(codex.bin)} ${args.args.join(' ')}, ${N.peer} ABAB iterations`)
  const r = await worker('codex', { warmup: 5, iterations: N.peer, bin: codex.bin, args: args.args }, { timeoutMs: 120_000 })
  if (r.error) errorRow('7b', `peer: Codex CLI ${codex.version}`, `cannot run: ${r.error.split('\n')[0].slice(0, 200)}`)
  else latencyRow('7b', `peer: Codex CLI ${codex.version}, \`codex ${args.args.join(' ')}\` (native binary${codex.native ? '' : ' via the npm shim'}) vs sandspawn \`['/bin/true']\``, r, 'codex', 'peer', null)
}

function onPath(name) {
  return (process.env.PATH || '').split(':').some((d) => d && fs.existsSync(path.join(d, name)))
}

function findCodex() {
  const base = path.join(PEERS_DIR, 'node_modules', '@openai')
  if (!fs.existsSync(base)) return null
  let version = '?'
  try {
    version = JSON.parse(fs.readFileSync(path.join(base, 'codex', 'package.json'), 'utf8')).version
  } catch {}
  // Prefer the platform package's native binary (the npm shim adds a Node start per call).
  const found = []
  const walk = (dir, depth) => {
    if (depth > 5) return
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p, depth + 1)
      else if (e.name === 'codex' && fs.statSync(p).mode & 0o100) found.push(p)
    }
  }
  for (const d of fs.readdirSync(base)) if (d.startsWith('codex-')) walk(path.join(base, d), 0)
  if (found.length) return { bin: found[0], version, native: true }
  const shim = path.join(PEERS_DIR, 'node_modules', '.bin', 'codex')
  return fs.existsSync(shim) ? { bin: shim, version, native: false } : null
}

/** The subcommand differs between Codex versions; take the first that runs `true` successfully. */
async function codexArgs(bin) {
  const candidates = [
    ['sandbox', 'linux', '--', 'true'],
    ['sandbox', '--', 'true'],
    ['debug', 'landlock', '--', 'true'],
  ]
  const tried = []
  for (const args of candidates) {
    const r = await new Promise((resolve) => {
      const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] })
      let err = ''
      child.stderr.on('data', (d) => (err += d))
      child.stdout.on('data', () => {})
      const t = setTimeout(() => child.kill('SIGKILL'), 20_000)
      child.on('error', (e) => resolve({ code: -1, err: e.message }))
      child.on('close', (code) => {
        clearTimeout(t)
        resolve({ code, err })
      })
    })
    if (r.code === 0) return { ok: true, args }
    tried.push(`\`${args.join(' ')}\` → exit ${r.code}${r.err ? ` (${r.err.trim().split('\n').pop().slice(0, 80)})` : ''}`)
  }
  return { ok: false, why: tried.join('; ') }
}

// ---------------------------------------------------------------------------------------------

function writeResults(machine, addon, elapsedS, tableText) {
  let analysis = ''
  if (fs.existsSync(RESULTS_MD)) {
    const old = fs.readFileSync(RESULTS_MD, 'utf8')
    const i = old.indexOf('\n## Analysis')
    if (i >= 0) analysis = old.slice(i + 1)
  }
  const md = `# sandspawn benchmark results

Generated by \`npm run bench\` (\`node bench/run.js${QUICK ? ' --quick' : ''}\`) on ${machine.date}; the whole run took ${elapsedS.toFixed(0)} s.
Everything above "Analysis" is rewritten by each run; the Analysis section is hand-written and kept.

## Machine

| | |
|---|---|
| CPU | ${machine.cpu} |
| cores | ${machine.cores} |
| RAM | ${machine.ramGiB} GiB |
| kernel | ${machine.kernel} |
| OS | ${machine.distro ?? 'unknown'} |
| Node | ${machine.node} |
| bwrap | ${machine.bwrap ?? 'not found'} |
| load average at start | ${machine.loadavg} |
| addon | ${addon.file ? path.relative(PKG_DIR, addon.file) : 'not found'} in \`${PKG_DIR}\`, ${addon.build}, ${(addon.size / 2 ** 20).toFixed(1)} MiB, built ${addon.mtime ?? '?'} |
| date | ${machine.date} |

## Results

Ratio = sandspawn / baseline (medians). Latencies: lower is better, target ratio <= 1.0. Rates: higher
is better, target ratio >= 1.0, and the p95 columns show the slow tail (5th-percentile rate). RSS rows:
the "p95" columns show the worst run.

${tableText}

How each case is measured:

- **1, 2**: \`spawnSandboxed(['/bin/true'], { sandbox })\` against \`child_process.spawn\` of the very argv
  \`buildSandboxCommand\` returns (same env, cwd, argv0; the plan is self-contained: bwrap runs
  sandspawn-helper, which installs the seccomp filter and execs the command; stdout/stderr piped and read; timed until \`'close'\`). ${N.warmup} warm-ups then ${N.iterations} iterations,
  the sides alternating in blocks of 20 runs (the first 3 of each block not kept; which side goes first
  alternates) in one dedicated Node process. Not run by run: a child_process \`fork\` of a process holding
  gigabytes write-protects all its pages, and the parent's next run pays the page faults, which ABAB
  charged to sandspawn's side in case 3 (+31 % "growth" that a sandspawn-only loop does not show).
- **1c, 2c**: the same runs as 1 and 2, the host process's CPU time (\`process.cpuUsage()\`, user +
  system, every thread's) around each run: sandspawn's own work on the host, which the latency rows
  blur on a loaded machine (informational, no target).
- **3**: cases 1 and 2 again in another Node process that first allocates ${N.heapMiB} × 1 MiB \`Buffer.alloc\`,
  keeps them referenced and writes every page. Growth = median(3x) / median(1 or 2) − 1, per side.
- **4**: 64 lanes, each awaiting one run after another, ${N.parTotal} runs per round, ${N.parRounds} rounds per side
  (alternating), runs/s per round.
- **5**: \`head -c N /dev/zero\` under the default read-only bwrap sandbox, one fresh Node process per run,
  ${N.outReps} run(s) per side, alternating. Throughput = N bytes / time from spawn to settle. RSS growth =
  max(\`process.memoryUsage.rss()\` sampled every 10 ms, VmHWM after resetting it with
  \`/proc/self/clear_refs\`) − RSS before the run.
- **6**: the argv of case 1 (resp. 2) run ${N.floor} times from \`bash -c 'for i in $(seq ${N.floor}); do …; done'\`;
  per-run times from \`$EPOCHREALTIME\`. The ratio column is sandspawn's median (case 1 / 2) over this floor.
  6c compares 6a with the same loop where bwrap execs \`/bin/true\` without the in-sandbox helper (a helper in front
  of bwrap, which opens the offline nsswitch.conf and mask descriptors, stays on both sides).
- **9**: an HTTP server in a process of its own on 127.0.0.2 sends N bytes; curl downloads them directly on
  the host (\`--noproxy '*'\`, the baseline), and inside the default read-only sandbox through the run's
  allow-list proxy as a plain-HTTP request (9a) and through a CONNECT tunnel (9b), and on the host through
  \`bench/bare-relay.py\` (9c: a splice relay with no policy, the reference for what a second loopback hop
  costs here), the four interleaved (rotating order) in \`bench/network.js\`. Throughput is curl's
  \`%{speed_download}\`; proxy CPU is the bench process's CPU time during a proxied run per GB (the proxy runs
  in the addon's threads; curl and the server are other processes); curl's CPU is from \`/usr/bin/time\`. The
  "p95" columns show the slowest run.
- **7**: peers from \`bench/peers\` (\`npm run bench:peers\`), each interleaved ABAB with sandspawn in one process;
  ratio = sandspawn / peer. Informational.
- **10**: \`/bin/true\` with \`sandbox: 'workspace-write'\` against \`{ mode: 'workspace-write', workspace: 'review' }\`
  in a fresh workspace under /var/tmp (10a empty, 10b 20,000 files in 100 directories), ABAB, each review run
  beginning a new change set (discarded after it, untimed), kept in a fresh store beside the default one
  (\`$XDG_STATE_HOME/sandspawn\`, else \`~/.local/state/sandspawn\`). Target: review costs at most 2 ms more at
  the median. 10c repeats 10a with the store under /var/tmp instead (informational: see the analysis).
${analysis ? '\n' + analysis : `
## Analysis

(none yet)
`}`
  fs.writeFileSync(RESULTS_MD, md)
}

/** Case 9: the network proxy's throughput against direct, per path (bench/network.js). */
async function networkCases() {
  const net = require('./network')
  const spec = QUICK ? { bytes: 128 * 2 ** 20, rounds: 3 } : { bytes: 512 * 2 ** 20, rounds: 7 }
  progress(`case 9: ${spec.bytes / 2 ** 20} MiB downloads through the network proxy vs direct, ${spec.rounds} interleaved rounds`)
  let rows
  try {
    rows = net.summary(await net.measure(spec))
  } catch (err) {
    return errorRow('9', 'network proxy throughput', String(err.message || err).split('\n')[0], '>= 0.80')
  }
  const label = { plain: 'plain HTTP body (absolute-form GET)', connect: 'CONNECT tunnel (`curl -p`)' }
  const curlCpu = (r) => (r.curlCpuSPerGB == null ? '' : `; curl's CPU ${r.curlCpuSPerGB.toFixed(2)} s/GB (direct ${r.directCurlCpuSPerGB.toFixed(2)})`)
  for (const r of rows) {
    const id = { plain: '9a', connect: '9b', relay: '9c' }[r.path]
    const name =
      r.path === 'relay'
        ? `${spec.bytes / 2 ** 20} MiB through a bare \`splice\` relay (bench/bare-relay.py: no policy, no sandbox), the reference for 9a/9b${curlCpu(r)}`
        : `${spec.bytes / 2 ** 20} MiB through the allow-list proxy, ${label[r.path]}; proxy CPU ${r.cpuSPerGB.toFixed(2)} s/GB${curlCpu(r)}`
    const a = summarize(r.samples)
    const b = summarize(r.directSamples)
    const target = r.path === 'relay' ? ['', null] : ['>= 0.80', r.ratio >= 0.8]
    row(id, name, { median: fmt.rate(a.median, 'MB/s'), p95: fmt.rate(a.min, 'MB/s') }, 'direct curl on the host', { median: fmt.rate(b.median, 'MB/s'), p95: fmt.rate(b.min, 'MB/s') }, fmt.ratio(r.ratio), ...target)
  }
}

async function main() {
  const machine = machineInfo()
  const addon = addonInfo()
  progress(`sandspawn from ${PKG_DIR} (${addon.build}); ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.bwrap}`)
  if (!addon.release) progress(`WARNING: ${addon.build}`)
  const sandspawn = loadSandspawn()
  const caps = await sandspawn.sandboxCapabilities()
  if (!caps.available) {
    console.error(`the sandbox is not available here: ${caps.reason}\nfix: ${caps.fix}`)
    process.exit(1)
  }

  if (ARGS.has('--only-review') || ARGS.has('--only-network')) {
    await (ARGS.has('--only-review') ? reviewCases() : networkCases())
    return console.log(`\n${table()}\n\nload average after: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`)
  }
  const lat = await latencyCases()
  await parallelCase()
  await outputCases()
  try {
    await floorCase(lat.c1, lat.c2)
  } catch (err) {
    errorRow('6', 'floor: bwrap from a bash loop', String(err.message || err))
  }
  await peerCases()
  await ptyCase()
  if (!ARGS.has('--no-network')) await networkCases()
  if (!ARGS.has('--no-review')) await reviewCases()

  const elapsedS = (nowMs() - started) / 1000
  const text = table()
  console.log(`\n${text}\n`)
  console.log(`addon: ${addon.build}; ${machine.cpu}, ${machine.cores} cores, ${machine.ramGiB} GiB, ${machine.kernel}, Node ${machine.node}, ${machine.bwrap}; ${elapsedS.toFixed(0)} s`)
  if (!ARGS.has('--no-write')) {
    writeResults(machine, addon, elapsedS, text)
    console.log(`written to ${path.relative(process.cwd(), RESULTS_MD) || RESULTS_MD}`)
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
