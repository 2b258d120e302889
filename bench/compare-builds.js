#!/usr/bin/env node
'use strict'
/**
 * What a change costs per run: two builds of sandspawn side by side in one process, `/bin/true` in
 * each mode, the two builds alternating in blocks (the first runs of each block dropped), medians.
 *
 *   node bench/compare-builds.js BASE_PKG_DIR [NEW_PKG_DIR=.] [--iterations N] [--repos N] [--mode M]...
 *
 * BASE_PKG_DIR is a built checkout of the revision to compare against, e.g.
 *   git worktree add /var/tmp/base HEAD~1 && (cd /var/tmp/base && npm install)
 * Each mode runs in a fresh workspace under /var/tmp holding an empty git repository, and with
 * `--repos N` N nested ones besides (`deps/rI`, as bench/scale.js makes them). Prints a markdown
 * table of wall time and of this process's CPU time per run (`process.cpuUsage`: the host's
 * threads, the addon's included; not bwrap's or the command's), which a loaded machine does not
 * inflate the way it does wall time; asserts nothing.
 */

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { pastThisSecond, scratchToolCaches } = require('./lib')

const argv = process.argv.slice(2)
const flag = (name, fallback) => {
  const at = argv.indexOf(name)
  if (at < 0) return fallback
  const [value] = argv.splice(at, 2).slice(1)
  return value
}
const iterations = Number(flag('--iterations', '200'))
const repos = Number(flag('--repos', '0'))
const modes = []
for (let m; (m = flag('--mode', null)); ) modes.push(m)
if (modes.length === 0) modes.push('read-only', 'workspace-write')
const [baseDir, newDir = path.resolve(__dirname, '..')] = argv
if (!baseDir) {
  console.error('usage: node bench/compare-builds.js BASE_PKG_DIR [NEW_PKG_DIR] [--iterations N] [--repos N] [--mode M]...')
  process.exit(2)
}

// A store of its own, removed at exit: each mode's fresh workspace is otherwise a store of tool
// caches left in the user's state directory for 30 days (as bench/lib.js says of the other benches).
scratchToolCaches()
const builds = { base: require(path.resolve(baseDir)), new: require(path.resolve(newDir)) }
const BLOCK = 20
const DROP = 3

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/** `{ ms, cpu }`: wall and this process's CPU time of one run, in ms. */
async function timeOne(pkg, options) {
  const c0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  const r = await pkg.spawnSandboxed(['/bin/true'], options)
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  const c = process.cpuUsage(c0)
  if (r.exitCode !== 0) throw new Error(`run failed: ${r.stderr}`)
  return { ms, cpu: (c.user + c.system) / 1000 }
}

async function compare(mode) {
  const ws = fs.mkdtempSync(path.join('/var/tmp', 'sandspawn-compare-'))
  execFileSync('git', ['init', '-q', ws])
  for (let i = 0; i < repos; i++) {
    const git = path.join(ws, 'deps', `r${i}`, '.git')
    for (const d of ['objects', 'refs/heads', 'hooks']) fs.mkdirSync(path.join(git, d), { recursive: true })
    fs.writeFileSync(path.join(git, 'HEAD'), 'ref: refs/heads/main\n')
    fs.writeFileSync(path.join(git, 'config'), '[core]\n\trepositoryformatversion = 0\n')
  }
  // Warm runs only: in the second the tree was made every run reads it all again (pastThisSecond),
  // and those runs fell on the warm-ups and the first block (the base build's).
  pastThisSecond()
  const options = { cwd: ws, sandbox: mode }
  const times = { base: [], new: [] }
  const cpus = { base: [], new: [] }
  try {
    for (const name of Object.keys(builds)) for (let i = 0; i < 10; i++) await timeOne(builds[name], options)
    for (let done = 0; done < iterations; done += BLOCK - DROP) {
      const order = (done / (BLOCK - DROP)) % 2 === 0 ? ['base', 'new'] : ['new', 'base']
      for (const name of order) {
        for (let i = 0; i < BLOCK; i++) {
          const { ms, cpu } = await timeOne(builds[name], options)
          if (i >= DROP) times[name].push(ms), cpus[name].push(cpu)
        }
      }
    }
  } finally {
    fs.rmSync(ws, { recursive: true, force: true })
  }
  return { mode, base: median(times.base), new: median(times.new), baseCpu: median(cpus.base), newCpu: median(cpus.new), n: times.new.length }
}

async function main() {
  console.log(`${os.cpus().length} cores, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; base ${path.resolve(baseDir)}, new ${path.resolve(newDir)}; ${repos} nested repositories\n`)
  console.log('| mode | base median | new median | difference | base CPU | new CPU | CPU difference | runs each |')
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|')
  const signed = (x) => (x >= 0 ? '+' : '') + x.toFixed(2)
  for (const mode of modes) {
    const r = await compare(mode)
    console.log(`| ${r.mode} | ${r.base.toFixed(2)} ms | ${r.new.toFixed(2)} ms | ${signed(r.new - r.base)} ms | ${r.baseCpu.toFixed(2)} ms | ${r.newCpu.toFixed(2)} ms | ${signed(r.newCpu - r.baseCpu)} ms | ${r.n} |`)
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
