'use strict'
// The machine's file table (README, "Per-user kernel budgets"): `fs.file-max` counts the open
// files of every process of the machine, and only a process with CAP_SYS_ADMIN on the host may
// open one past it; no sandbox has that, whoever runs it.
//
// Found by an attacker's review (cross27): a run under `limits: { openFiles: 64 }` held the
// machine's whole table (2,466,290 files) in 20 s with 40 processes, each mapping one file 64,000
// times and closing each descriptor (a mapping holds its open file and no descriptor, so
// RLIMIT_NOFILE does not count it; vm.max_map_count bounds a process at 65,530). While it lived
// another run was refused ("bwrap could not set up the sandbox for lack of open files of the
// whole system (fs.file-max)"), and so is every program of every user but root's. Nothing per
// run bounds it (no option: the processes times 65,530); it is documented, not prevented.
//
// Opt-in (SANDSPAWN_MACHINE_WIDE_TESTS=1), and as root only (the test's own process would be
// refused files too): for its seconds, every sandbox and unprivileged program on the machine
// gets ENFILE.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { run, sandspawn, show, tempTree } = require('./helpers')

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'file-table.py')
const FILE_MAX = '/proc/sys/fs/file-max'
const README = path.join(__dirname, '..', '..', 'README.md')
// A process holds at most vm.max_map_count (65,530 by default) mappings; 60,000 each, rounded up.
const PER_PROCESS = 60000

const fileMax = fs.existsSync(FILE_MAX) ? Number(fs.readFileSync(FILE_MAX, 'utf8').trim()) : 0
const skip =
  process.platform !== 'linux' ? 'Linux only'
  : process.env.SANDSPAWN_MACHINE_WIDE_TESTS !== '1' ? 'fills the whole machine\'s file table for seconds: set SANDSPAWN_MACHINE_WIDE_TESTS=1'
  : process.getuid() !== 0 ? 'root only: the test\'s own process would be refused files too'
  : !(fileMax > 0 && fileMax <= 8_000_000) ? `fs.file-max is ${fileMax}: too many files to take in a test`
  : spawnSync('python3', ['-c', '']).status !== 0 ? 'python3 is not installed'
  : false

test('a run under limits.openFiles 64 can take the machine\'s file table, and another run is refused, as the README says', { skip, timeout: 240000 }, async (t) => {
  const tree = tempTree(t)
  const ready = path.join(tree.ws, 'ready')
  const procs = Math.ceil(fileMax / PER_PROCESS) + 2
  const ac = new AbortController()
  const held = run(['python3', FIXTURE, ready, String(procs)], { cwd: tree.ws, sandbox: 'workspace-write', limits: { openFiles: 64 }, signal: ac.signal, timeout: 230000 }).catch((e) => e)
  for (let waited = 0; !fs.existsSync(ready) && waited < 200000; waited += 100) await new Promise((r) => setTimeout(r, 100))
  const took = fs.existsSync(ready) ? fs.readFileSync(ready, 'utf8') : 'no ready file'
  const other = await sandspawn.spawnSandboxed(['true'], { cwd: tree.ws, timeout: 20000 }).catch((e) => e)
  ac.abort()
  const r = await held
  // The tree's mappings go with it; give the table back before the next test.
  for (let waited = 0; Number(fs.readFileSync('/proc/sys/fs/file-nr', 'utf8').split(/\s+/)[0]) > fileMax / 2 && waited < 30000; waited += 200) await new Promise((res) => setTimeout(res, 200))
  t.diagnostic(`the run: ${took}; the other run: ${other instanceof Error ? `${other.code}: ${other.message.slice(0, 200)}` : `exit ${other.exitCode}`}`)
  const m = /^files (\d+) errnos (.*)$/.exec(took)
  assert.ok(m, `${took}\n${show(r.result || r)}`)
  assert.ok(Number(m[1]) > fileMax * 0.99, `the run held ${m[1]} files of ${fileMax}`)
  assert.ok(other instanceof Error && /fs\.file-max/.test(other.message), `another run was not refused: ${other instanceof Error ? other.message : show(other)}`)
  // What this shows is said where the user looks for what one run can take from others.
  const readme = fs.readFileSync(README, 'utf8')
  const budgets = readme.slice(readme.indexOf('- **Per-user kernel budgets.**'), readme.indexOf('- **Advisory locks on your files.**'))
  assert.match(budgets, /fs\.file-max/, 'the README\'s per-user kernel budgets name the machine\'s file table')
})
