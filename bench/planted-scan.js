#!/usr/bin/env node
'use strict'
/**
 * The cost of the planted-configuration protections (issue 17): the walk of the writable roots
 * before and after each run, and the placeholders for protected names. Runs `/bin/true` in
 * workspace-write, interleaved, three ways:
 *   full     the defaults (protectGit, the default protectedNames): walk + placeholders + detection
 *   gitOnly  protectGit, protectedNames: []: the walk for repositories, no name placeholders
 *   off      protectGit: false, protectedNames: []: no walk at all (what a run cost before)
 * in this repository and in a generated tree of 100k files (1,111 directories, 5 nested
 * repositories). Prints medians and p95; asserts nothing.
 *
 *   node bench/planted-scan.js [--iterations N] [--files N]
 */

const fs = require('node:fs')
const path = require('node:path')
const { loadSandspawn, addonInfo, summarize, nowMs } = require("./lib")

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? Number(process.argv[i + 1]) : dflt
}
const ITER = arg('--iterations', 60)
const FILES = arg('--files', 100_000)

/** 10 × 10 × 10 leaf directories holding FILES files, plus 5 repositories at depths 1 to 4. */
function generate(root) {
  const perLeaf = Math.ceil(FILES / 1000)
  let n = 0
  for (let a = 0; a < 10; a++) for (let b = 0; b < 10; b++) for (let c = 0; c < 10; c++) {
    const dir = path.join(root, `a${a}`, `b${b}`, `c${c}`)
    fs.mkdirSync(dir, { recursive: true })
    for (let f = 0; f < perLeaf && n < FILES; f++, n++) fs.writeFileSync(path.join(dir, `f${f}.txt`), '')
  }
  for (const rel of ['', 'a1', 'a2/b2', 'a3/b3/c3', 'a4/b4/c4/deep']) {
    fs.mkdirSync(path.join(root, rel, '.git/hooks'), { recursive: true })
    fs.writeFileSync(path.join(root, rel, '.git/HEAD'), 'ref: refs/heads/main\n')
  }
  return n
}

const CONFIGS = {
  full: { mode: 'workspace-write' },
  gitOnly: { mode: 'workspace-write', protectedNames: [] },
  off: { mode: 'workspace-write', protectGit: false, protectedNames: [] },
}

async function measure(s, cwd) {
  const times = Object.fromEntries(Object.keys(CONFIGS).map((k) => [k, []]))
  const names = Object.keys(CONFIGS)
  for (let i = 0; i < ITER + 5; i++) {
    // Rotate who goes first so that caches and load drift hit every side alike.
    for (let j = 0; j < names.length; j++) {
      const k = names[(i + j) % names.length]
      const t0 = nowMs()
      const r = await s.spawnSandboxed(['/bin/true'], { cwd, sandbox: CONFIGS[k] })
      const dt = nowMs() - t0
      if (r.exitCode !== 0) throw new Error(`${k}: exit ${r.exitCode}: ${r.stderr}`)
      if (i >= 5) times[k].push(dt)
    }
  }
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, summarize(v)]))
}

function row(label, stats) {
  const f = (x) => `${x.toFixed(2)} ms`
  const off = stats.off.median
  return `| ${label} | ${f(stats.off.median)} | ${f(stats.gitOnly.median)} (+${f(stats.gitOnly.median - off)}) | ${f(stats.full.median)} (+${f(stats.full.median - off)}) | ${f(stats.full.p95)} |`
}

async function main() {
  const s = loadSandspawn()
  const dir = addonInfo().file
  const tmp = fs.mkdtempSync('/var/tmp/sandspawn-bench-planted-')
  try {
    const made = generate(tmp)
    const repo = path.resolve(__dirname, '..')
    console.log(`addon: ${dir}; ${ITER} runs per side; generated tree: ${made} files`)
    console.log('\n| tree | off (no walk) | gitOnly | full (defaults) | full p95 |\n|---|---:|---:|---:|---:|')
    console.log(row('this repository', await measure(s, repo)))
    console.log(row(`generated, ${made} files`, await measure(s, tmp)))
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
