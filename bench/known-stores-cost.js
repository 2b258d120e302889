#!/usr/bin/env node
'use strict'
/**
 * What the entries of `known-stores` cost a workspace-write run: the list is filled with N entries
 * (existing private directories, or paths removed), and `/bin/true` runs in an empty git
 * repository; prints this process's CPU time per run (median) and, with `--strace`, nothing more:
 * run it under `strace -f -c` for the system calls. Run it in a mount namespace of its own whose
 * `~/.local/state/sandspawn` is a scratch directory (the list is the user's, shared by every
 * process): `unshare -m --propagation private sh -c 'mount --bind DIR ~/.local/state/sandspawn && node ...'`.
 *
 *   node bench/known-stores-cost.js N existing|removed [--iterations K]
 */
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')

const [n, kind] = [Number(process.argv[2]), process.argv[3]]
const at = process.argv.indexOf('--iterations')
const iterations = at > 0 ? Number(process.argv[at + 1]) : 40
const state = path.join(os.homedir(), '.local/state/sandspawn')
// The list is the user's, shared by every sandspawn process: only a scratch one, bound over the
// state directory in a mount namespace of this run's own, is written.
const mounted = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').some((l) => l.split(' ')[4] === state)
if (!mounted) {
  console.error(`refusing: ${state} is not a mount point here; run this in a mount namespace of its own (see the header)`)
  process.exit(2)
}
const scratch = fs.mkdtempSync('/var/tmp/ks-cost-')
const entries = []
for (let i = 0; i < n; i++) {
  const p = path.join(scratch, `s${i}`)
  if (kind === 'existing') fs.mkdirSync(p, { mode: 0o700 })
  entries.push(p)
}
fs.writeFileSync(path.join(state, 'known-stores'), entries.map((e) => e + '\n').join(''), { mode: 0o600 })
const ws = path.join(scratch, 'ws')
fs.mkdirSync(ws)
execFileSync('git', ['init', '-q', ws])
const pkg = require(path.resolve(process.argv[4] && !process.argv[4].startsWith('--') ? process.argv[4] : '.'))
;(async () => {
  const cpus = []
  for (let i = 0; i < iterations; i++) {
    const c0 = process.cpuUsage()
    const r = await pkg.spawnSandboxed(['/bin/true'], { cwd: ws, sandbox: 'workspace-write' })
    const c = process.cpuUsage(c0)
    if (r.exitCode !== 0) throw new Error(JSON.stringify(r).slice(0, 400))
    if (i >= 3) cpus.push((c.user + c.system) / 1000)
  }
  cpus.sort((a, b) => a - b)
  const lines = fs.readFileSync(path.join(state, 'known-stores'), 'utf8').split('\n').filter(Boolean).length
  console.log(`${n} ${kind}: host CPU median ${cpus[cpus.length >> 1].toFixed(2)} ms, list left ${lines} lines`)
  fs.rmSync(scratch, { recursive: true, force: true })
})()
