#!/usr/bin/env node
'use strict'
/**
 * The reviewable workspace's other costs (issue 32): applying a change set of 1,000 files, and a
 * change set of 10,000 files (what an `npm install` leaves: `node_modules/` with many small files
 * in many directories) described and applied, with the host's peak RSS growth (VmHWM reset before
 * each step). Each size `--rounds` times; prints medians; asserts nothing.
 *
 *   node bench/review-apply.js [--rounds N]
 */

const fs = require('node:fs')
const path = require('node:path')
const { loadSandspawn, nowMs } = require('./lib')

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? Number(process.argv[i + 1]) : dflt
}
const ROUNDS = arg('--rounds', 5)

/** Peak RSS since the last reset, in MiB (`/proc/self/clear_refs` 5 resets VmHWM). */
function resetPeak() {
  fs.writeFileSync('/proc/self/clear_refs', '5')
  return process.memoryUsage().rss
}
function peakGrowthMiB(before) {
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024
  return (hwm - before) / 2 ** 20
}

async function round(s, base, files) {
  const ws = fs.mkdtempSync(path.join(base, 'ws-'))
  // `files` files of about 1 KiB in directories of 10, like a package tree.
  const script = `for d in $(seq 0 ${files / 10 - 1}); do mkdir -p node_modules/p$d/lib; for f in $(seq 0 9); do head -c 1000 /dev/urandom > node_modules/p$d/lib/f$f.js; done; done`
  let before = resetPeak()
  let t0 = nowMs()
  const r = await s.spawnSandboxed(['bash', '-c', script], { cwd: ws, timeout: 300_000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
  const run = { ms: nowMs() - t0, rss: peakGrowthMiB(before), listed: r.changeSet.changes.length, counted: r.changeSet.counts.added }
  if (r.exitCode !== 0) throw new Error(r.stderr)
  before = resetPeak()
  t0 = nowMs()
  const out = await s.applyChangeSet(r.changeSet.id)
  const apply = { ms: nowMs() - t0, rss: peakGrowthMiB(before), applied: out.applied.length }
  const landed = fs.readdirSync(path.join(ws, 'node_modules')).length
  if (landed !== files / 10 || out.conflicts.length) throw new Error(`apply: ${landed} directories, ${out.conflicts.length} conflicts`)
  fs.rmSync(ws, { recursive: true, force: true })
  return { run, apply }
}

async function main() {
  const s = loadSandspawn()
  const base = fs.mkdtempSync(path.join('/var/tmp', 'sandspawn-bench-apply-'))
  process.env.SANDSPAWN_CHANGE_SET_DIR = path.join(base, 'store')
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  try {
    console.log('| files in the change set | run (create them) | its description: changes listed / counted | apply | apply: changes landed | host peak RSS growth, run / apply |')
    console.log('|---:|---:|---:|---:|---:|---:|')
    for (const files of [1000, 10000]) {
      const rs = []
      for (let i = 0; i < ROUNDS; i++) rs.push(await round(s, base, files))
      const m = (f) => med(rs.map(f))
      console.log(`| ${files.toLocaleString('en')} | ${m((r) => r.run.ms).toFixed(0)} ms | ${rs[0].run.listed} / ${rs[0].run.counted} | ${m((r) => r.apply.ms).toFixed(0)} ms | ${rs[0].apply.applied} | ${m((r) => r.run.rss).toFixed(1)} / ${m((r) => r.apply.rss).toFixed(1)} MiB |`)
    }
  } finally {
    fs.rmSync(base, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
