#!/usr/bin/env node
'use strict'
/**
 * `node bench/cli-startup.js [runs]`: the CLI's start-up cost, as ratios. Times (median of `runs`,
 * interleaved) `node -e 0`, `node -e "require('sandspawn')"` (the addon's load), `sandspawn
 * --version` (the CLI without the addon) and `sandspawn -- true` (a whole sandboxed run), and
 * prints each against `node -e 0`. Asserts nothing: timings are reported, never thrown.
 */

const path = require('node:path')
const { spawnSync } = require('node:child_process')

const root = path.resolve(__dirname, '..')
const cli = path.join(root, 'bin', 'sandspawn.js')
const runs = Number(process.argv[2]) || 30
const cases = [
  ['node -e 0', ['-e', '0']],
  ["node -e \"require('sandspawn')\"", ['-e', `require(${JSON.stringify(root)})`]],
  ['sandspawn --version', [cli, '--version']],
  ['sandspawn -- true', [cli, '--', 'true']],
  ['sandspawn --mode danger-full-access -- true', [cli, '--mode', 'danger-full-access', '--', 'true']],
]

const times = cases.map(() => [])
for (let i = 0; i < runs; i++) {
  cases.forEach(([, args], c) => {
    const t0 = process.hrtime.bigint()
    const r = spawnSync(process.execPath, args, { stdio: 'ignore' })
    if (r.status !== 0) throw new Error(`${cases[c][0]} exited ${r.status}`)
    times[c].push(Number(process.hrtime.bigint() - t0) / 1e6)
  })
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const base = median(times[0])
console.log(`| case | median | vs node -e 0 |\n|---|---|---|`)
cases.forEach(([name], c) => {
  const m = median(times[c])
  console.log(`| ${name} | ${m.toFixed(1)} ms | ${(m / base).toFixed(2)}x |`)
})
