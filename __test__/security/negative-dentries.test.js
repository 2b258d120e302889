'use strict'
// A run's failed lookups outlive it (README, "Per-user kernel budgets"): every lookup of a name
// that does not exist leaves a negative dentry in the kernel's dentry cache under the directory
// looked in, a host directory the command can only read included (a lookup asks search permission
// alone; a read-only mount refuses nothing here). They are the kernel's, not the run's: nothing
// removes them when the run ends, only memory pressure or the directory's own removal.
//
// Found by an attacker's review (kern42), measured on Linux 6.18: a default read-only run looked up
// 2,000,000 absent names in a host directory in 30 s and left 2,000,000 negative dentries there
// (about 400 MB of kernel memory no limit of the run counts). After the run ended, a host
// process's inotify watch of that directory for its children's events (an editor's, a file
// watcher's: IN_MODIFY) took 145 to 278 ms in the kernel, each with the directory's spinlocks
// held (fsnotify_set_children_dentry_flags walks every cached child, the negative ones included),
// against 0.02 ms before; rmdir of the directory took 3 s. Nothing per run bounds it (a memory
// cgroup around the host process does: dentries are charged to it); it is documented, not
// prevented. 300,000 lookups here, a few seconds and about 60 MB until the tree is removed.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { run, show, tempTree, which, BASE } = require('./helpers')

const DENTRY_STATE = '/proc/sys/fs/dentry-state'
const README = path.join(__dirname, '..', '..', 'README.md')
const LOOKUPS = 300000

const skip =
  process.platform !== 'linux' ? 'Linux only'
  : which('cc') === null ? 'no C compiler to build the probe'
  : !fs.existsSync(DENTRY_STATE) ? `${DENTRY_STATE} is missing`
  : false

/** The kernel's count of negative dentries (dentry-state's fifth field, Linux 5.8 and later). */
const negative = () => Number(fs.readFileSync(DENTRY_STATE, 'utf8').trim().split(/\s+/)[4])

test('a read-only run\'s failed lookups in a host directory outlive it, as the README says', { skip, timeout: 180000 }, async (t) => {
  const bin = fs.mkdtempSync(path.join(BASE, 'sandspawn-lookups-'))
  t.after(() => fs.rmSync(bin, { recursive: true, force: true }))
  fs.chmodSync(bin, 0o755)
  const probe = path.join(bin, 'lookups')
  execFileSync('cc', ['-O2', '-o', probe, path.join(__dirname, 'attacks', 'lookups.c')], { stdio: 'pipe' })
  const tree = tempTree(t)
  const host = path.join(tree.out, 'host-dir') // outside the workspace: read-only to the run
  fs.mkdirSync(host)
  const r = await run([probe, host, String(LOOKUPS)], { cwd: tree.ws, sandbox: 'read-only', timeout: 170000 })
  assert.equal(r.exitCode, 0, show(r))
  assert.equal(r.stdout.trim(), `looked up ${LOOKUPS}`, show(r))
  // The run has ended and its namespaces are gone. Removing the directory drops the dentries
  // cached below it: what the count loses then is what the run left there.
  const held = negative()
  fs.rmdirSync(host)
  const left = held - negative()
  t.diagnostic(`negative dentries the run left in the host directory: ${left} of ${LOOKUPS} lookups`)
  assert.ok(left >= LOOKUPS / 2, `removing the directory dropped ${left} negative dentries`)
  // What this shows is said where the user looks for what one run can take from others.
  const readme = fs.readFileSync(README, 'utf8')
  const budgets = readme.slice(readme.indexOf('- **Per-user kernel budgets.**'), readme.indexOf('- **Advisory locks on your files.**'))
  assert.match(budgets, /negative dentries/, 'the README\'s per-user kernel budgets name the negative dentries a run leaves')
})
