#!/usr/bin/env node
'use strict'
/**
 * What a workspace-write run costs as the workspace grows (issue 36): `/bin/true` in read-only and
 * in workspace-write (the defaults), side by side and interleaved, in workspaces of several shapes:
 *   empty      an empty git repository
 *   repos      N nested repositories (default 200), each with HEAD, objects, refs, hooks
 *   dirs60k    60,000 directories under src/ (a git repository at the top)
 *   dirs250k   250,000 directories (a git repository at the top, and 20 nested ones)
 * Each shape runs in a process of its own, so its first run pays what a first run in a new host
 * process pays (the whole walk) and is reported apart; the runs start in the second after the tree
 * was made (before it, every run reads the tree again: `pastThisSecond`). Prints medians and p95 of
 * wall time, the host process's median CPU a run (which load inflates less), what a run said in
 * `sandboxDetails.notEnforced` and `scan-incomplete` host risks; asserts nothing.
 *
 *   node bench/scale.js [--iterations N] [--repos N] [--shapes empty,repos,dirs60k,dirs250k]
 */

const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : dflt
}
const ITER = Number(arg('--iterations', 40))
const REPOS = Number(arg('--repos', 200))
const SHAPES = arg('--shapes', 'empty,repos,dirs60k,dirs250k').split(',')

function gitDir(top) {
  for (const d of ['objects', 'refs/heads', 'hooks']) fs.mkdirSync(path.join(top, '.git', d), { recursive: true })
  fs.writeFileSync(path.join(top, '.git', 'HEAD'), 'ref: refs/heads/main\n')
  fs.writeFileSync(path.join(top, '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n')
}

/** `count` directories as a tree of fan-out 50 under `root` (as wide as a real src/ or node_modules). */
function directories(root, count) {
  let made = 0
  const queue = [root]
  while (made < count) {
    const dir = queue.shift()
    for (let i = 0; i < 50 && made < count; i++, made++) {
      const d = path.join(dir, `d${i}`)
      fs.mkdirSync(d)
      queue.push(d)
    }
  }
}

const GENERATE = {
  empty: (ws) => gitDir(ws),
  repos: (ws) => {
    gitDir(ws)
    for (let i = 0; i < REPOS; i++) {
      const top = path.join(ws, 'deps', `r${i}`)
      fs.mkdirSync(path.join(top, 'src'), { recursive: true })
      gitDir(top)
    }
  },
  dirs60k: (ws) => {
    gitDir(ws)
    fs.mkdirSync(path.join(ws, 'src'))
    directories(path.join(ws, 'src'), 60_000)
  },
  dirs250k: (ws) => {
    gitDir(ws)
    fs.mkdirSync(path.join(ws, 'src'))
    directories(path.join(ws, 'src'), 250_000)
    for (let i = 0; i < 20; i++) gitDir(path.join(ws, 'src', `d${i}`, `d${i}`))
  },
}

/** In the worker: the first workspace-write run, then both sides interleaved. */
async function worker(ws) {
  const { loadSandspawn, summarize, nowMs } = require('./lib')
  const s = loadSandspawn()
  const run = async (sandbox) => {
    const [t0, c0] = [nowMs(), process.cpuUsage()]
    const r = await s.spawnSandboxed(['/bin/true'], { cwd: ws, sandbox })
    const [ms, c] = [nowMs() - t0, process.cpuUsage(c0)]
    if (r.exitCode !== 0) throw new Error(`${JSON.stringify(sandbox)}: exit ${r.exitCode}: ${r.stderr}`)
    return { ms, cpu: (c.user + c.system) / 1000, r }
  }
  await run('read-only')
  const first = await run('workspace-write')
  const times = { 'read-only': [], 'workspace-write': [] }
  const cpus = { 'read-only': [], 'workspace-write': [] }
  let said = { notEnforced: first.r.sandboxDetails.notEnforced, incomplete: first.r.hostRisks.filter((h) => h.kind === 'scan-incomplete').length }
  for (let i = 0; i < ITER + 3; i++) {
    for (const side of i % 2 ? ['read-only', 'workspace-write'] : ['workspace-write', 'read-only']) {
      const { ms, cpu, r } = await run(side)
      if (i >= 3) times[side].push(ms), cpus[side].push(cpu)
      if (side === 'workspace-write') said = { notEnforced: r.sandboxDetails.notEnforced, incomplete: r.hostRisks.filter((h) => h.kind === 'scan-incomplete').length }
    }
  }
  process.stdout.write(JSON.stringify({ first: first.ms, ro: summarize(times['read-only']), ww: summarize(times['workspace-write']), cpu: { ro: summarize(cpus['read-only']).median, ww: summarize(cpus['workspace-write']).median }, said }) + '\n')
}

function main() {
  const { addonInfo } = require('./lib')
  console.log(`addon: ${addonInfo().file} (${addonInfo().build}); ${ITER} runs per side`)
  console.log('\n| workspace | read-only | workspace-write | difference | ww p95 | first ww run | host CPU ro / ww | notEnforced / scan-incomplete |\n|---|---:|---:|---:|---:|---:|---:|---|')
  for (const shape of SHAPES) {
    // The big trees on tmpfs: ext4 with `discard` took two minutes to delete 250,000 directories.
    const base = shape.startsWith('dirs') && fs.existsSync('/dev/shm') ? '/dev/shm' : '/var/tmp'
    const ws = fs.mkdtempSync(`${base}/sandspawn-bench-scale-${shape}-`)
    try {
      const t0 = Date.now()
      GENERATE[shape](ws)
      const made = Date.now() - t0
      // Warm runs are what is timed: none in the second the tree was made (see pastThisSecond).
      require('./lib').pastThisSecond()
      const r = spawnSync(process.execPath, [__filename, '--worker', ws], { encoding: 'utf8', maxBuffer: 1 << 20 })
      if (r.status !== 0) throw new Error(`${shape}: ${r.stderr}`)
      const o = JSON.parse(r.stdout.trim().split('\n').pop())
      const f = (x) => `${x.toFixed(2)} ms`
      const said = `${o.said.notEnforced.length ? o.said.notEnforced.join('; ') : 'nothing'} / ${o.said.incomplete}`
      const label = shape === 'repos' ? `${REPOS} nested repositories` : { empty: 'empty git repository', dirs60k: '60,000 directories', dirs250k: '250,000 directories, 21 repositories' }[shape]
      console.log(`| ${label} (made in ${made} ms) | ${f(o.ro.median)} | ${f(o.ww.median)} | +${f(o.ww.median - o.ro.median)} | ${f(o.ww.p95)} | ${f(o.first)} | ${o.cpu.ro.toFixed(2)} / ${o.cpu.ww.toFixed(2)} ms | ${said} |`)
    } finally {
      fs.rmSync(ws, { recursive: true, force: true })
    }
  }
}

if (process.argv[2] === '--worker') {
  worker(process.argv[3]).catch((e) => {
    console.error(e)
    process.exit(1)
  })
} else {
  main()
}
