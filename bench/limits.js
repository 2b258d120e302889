#!/usr/bin/env node
'use strict'
/**
 * The latency that resource limits add to a run (issue 19; target: at most 1 ms with rlimits).
 *
 * Two measurements, each interleaved ABAB so machine load hits both sides alike, reported as the
 * median difference and the ratio. Asserts nothing: a missed target is printed, never thrown.
 *   1. spawnSandboxed(['true']) with and without all four rlimit-backed limits (memory, cpuTime,
 *      fileSize, openFiles), under bwrap and unsandboxed (where the helper is an extra exec).
 *   2. The floor: the same bwrap plan from a bash loop with and without the helper's `--rlimit`
 *      steps, alternating in one loop, so only the setrlimit calls differ; and the helper alone.
 *
 *   node bench/limits.js [--quick]
 */

const { spawnSync } = require('node:child_process')
const { loadSandspawn, addonInfo, summarize, nowMs } = require('./lib')

const QUICK = process.argv.includes('--quick')
const N = QUICK ? { warmup: 5, iterations: 40, loop: 100 } : { warmup: 20, iterations: 200, loop: 500 }
const LIMITS = { memory: 1 << 30, cpuTime: 60000, fileSize: 1 << 30, openFiles: 1024 }

async function interleaved(a, b) {
  const sa = []
  const sb = []
  for (let i = 0; i < N.warmup + N.iterations; i++) {
    const order = i % 2 ? [[a, sa], [b, sb]] : [[b, sb], [a, sa]]
    for (const [fn, samples] of order) {
      const t0 = nowMs()
      await fn()
      if (i >= N.warmup) samples.push(nowMs() - t0)
    }
  }
  return [summarize(sa), summarize(sb)]
}

const shq = (s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${String(s).replace(/'/g, `'\\''`)}'`)

/** Runs two argvs alternately from one bash loop (A, B, A, B, ...); returns both sides' samples. */
function bashLoopAB(a, b, { cwd, env }) {
  const timed = (argv, tag) => `s=$EPOCHREALTIME; ${argv.map(shq).join(' ')} >/dev/null 2>&1 || echo FAIL; e=$EPOCHREALTIME; echo "${tag} $s $e"`
  const script = `for i in $(seq ${N.loop}); do ${timed(a, 'A')}; ${timed(b, 'B')}; done`
  const r = spawnSync('bash', ['-c', script], { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 })
  if (r.stdout.includes('FAIL')) throw new Error(`a plan failed in the shell loop: ${script}`)
  const samples = { A: [], B: [] }
  for (const line of r.stdout.trim().split('\n')) {
    const [tag, s, e] = line.replace(/,/g, '.').split(' ')
    samples[tag].push((Number(e) - Number(s)) * 1000)
  }
  return [samples.A, samples.B]
}

async function main() {
  const sandspawn = loadSandspawn()
  const info = addonInfo()
  console.log(`addon: ${info.file} (${info.build})`)
  const rows = []
  for (const sandbox of [undefined, 'danger-full-access']) {
    const run = (limits) => async () => {
      const r = await sandspawn.spawnSandboxed(['true'], { sandbox, limits })
      if (r.exitCode !== 0) throw new Error(`true failed: ${r.stderr}`)
    }
    const [withLimits, without] = await interleaved(run(LIMITS), run(undefined))
    rows.push([`spawnSandboxed(['true']), ${sandbox || 'read-only bwrap'}`, withLimits, without])
  }
  // The floor: two bwrap plans differing only in the helper's --rlimit steps, alternated in one
  // shell loop; and the helper alone (no bwrap) with and without them.
  const plain = sandspawn.buildSandboxCommand(['/bin/true'])
  const limited = sandspawn.buildSandboxCommand(['/bin/true'], { limits: LIMITS })
  const [a, b] = bashLoopAB([limited.program, ...limited.args], [plain.program, ...plain.args], plain)
  rows.push(['bwrap plan from a bash loop (helper with vs without --rlimit steps)', summarize(a), summarize(b)])
  const helper = limited.args[limited.args.indexOf('--') + 1]
  const steps = limited.args.filter((x) => x.startsWith('--rlimit='))
  const [ha, hb] = bashLoopAB([helper, 'v1', ...steps, '--', '/bin/true'], [helper, 'v1', '--', '/bin/true'], plain)
  rows.push([`the helper alone from a bash loop (${steps.length} --rlimit steps vs none)`, summarize(ha), summarize(hb)])

  console.log('\n| case | with limits (median / p95) | without (median / p95) | added (median) | ratio |')
  console.log('|---|---|---|---|---|')
  for (const [name, w, wo] of rows) {
    const f = (x) => `${x.toFixed(2)} ms`
    console.log(`| ${name} | ${f(w.median)} / ${f(w.p95)} | ${f(wo.median)} / ${f(wo.p95)} | ${f(w.median - wo.median)} | ${(w.median / wo.median).toFixed(3)} |`)
  }
  console.log(`\n${N.iterations} interleaved runs per side (${N.warmup} warm-up), ${N.loop} alternating loop runs per side; target: added <= 1 ms.`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
