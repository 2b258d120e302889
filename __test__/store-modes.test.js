'use strict'
// Found by an attacker's review (rfix25, chmod_apply.js): the directories above sandspawn's stores
// are pinned against a rename, not a mode change. A run with the cwd at $HOME did `chmod 000
// ~/.local/state`; the next plan's lookups of the stores failed with EACCES and dropped them all,
// so that run covered none, made the directory searchable again and rewrote a pending change set,
// whose applyChangeSet wrote the run's file outside the set's workspace. Now the run that hides
// them is reported (`hostRisks`, with the fix) and the next one is refused until it is fixed.
// Only an ordinary user sees this (root searches any directory): as root the test switches to one.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')

const { stagedCheckout, cannotRunAs, asUser } = require('./fixtures/other-user')

const UID = 64131 // a uid no other test uses
const isRoot = process.getuid() === 0
const skip = isRoot ? cannotRunAs(UID) ?? false : false

/** The fixture's findings, run as UID (as root) or as this user, with cwd = HOME = a fresh home. */
async function attack(t, env = {}) {
  const home = fs.realpathSync(fs.mkdtempSync('/var/tmp/sandspawn-store-modes-'))
  t.after(() => {
    fs.chmodSync(path.join(home, '.local', 'state'), 0o700)
    fs.rmSync(home, { recursive: true, force: true })
  })
  fs.mkdirSync(path.join(home, '.local', 'state'), { recursive: true, mode: 0o700 })
  if (isRoot) {
    for (const p of [home, path.join(home, '.local'), path.join(home, '.local', 'state')]) fs.chownSync(p, UID, UID)
  }
  fs.chmodSync(home, 0o755)
  const script = isRoot ? path.join(stagedCheckout(), '__test__', 'fixtures', 'store-modes.js') : path.join(__dirname, 'fixtures', 'store-modes.js')
  const [cmd, args] = isRoot ? asUser(UID, [script, home]) : [process.execPath, [script, home]]
  const out = await new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: home, env: { PATH: process.env.PATH, HOME: home, ...env }, timeout: 240_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout))
    })
  })
  return { home, out }
}

/** The run that hid the stores is told so; the next is refused, naming the directory and the fix. */
function assertReportedAndRefused(home, out) {
  const state = path.join(home, '.local', 'state')
  assert.equal(out.modeAfterHide, 0, JSON.stringify(out.hide))
  // (The walk after the run also says it could not look inside: `scan-incomplete`.)
  const risk = (out.hide.hostRisks || []).find((r) => r.path === state && r.kind === 'permissions-changed')
  assert.ok(risk, `the hiding run reports ${state}: ${JSON.stringify(out.hide)}`)
  assert.match(risk.detail, new RegExp(`chmod u\\+rwx ${state}`))
  assert.equal(out.attack.error, 'ERR_SANDBOX_SETUP_FAILED', JSON.stringify(out.attack))
  assert.match(out.attack.message, /mode 000/)
  assert.match(out.attack.message, new RegExp(`chmod u\\+rwx ${state}`))
  assert.equal(out.modeAfterAttack, 0, 'the refused run ran nothing')
  assert.equal(out.after.exitCode, 0, `once fixed, runs start again: ${JSON.stringify(out.after)}`)
}

test('a run that makes ~/.local/state unsearchable is reported, and the next run is refused, not left without a cover over the stores (bwrap)', { skip }, async (t) => {
  const { home, out } = await attack(t)
  if (out.after.sandboxType !== 'bwrap') return t.skip(`bwrap does not run here (${out.after.sandboxType || out.after.message})`)
  assertReportedAndRefused(home, out)
  assert.equal(out.evil, false, 'nothing landed outside the change set\'s workspace')
  assert.equal(out.notes, true, JSON.stringify(out.applied))
})

test('the same under Landlock (SANDSPAWN_LINUX_ALLOW=landlock)', { skip }, async (t) => {
  const { home, out } = await attack(t, { SANDSPAWN_LINUX_ALLOW: 'landlock' })
  if (out.after.sandboxType !== 'landlock') return t.skip(`the Landlock mode does not run here (${out.after.sandboxType || out.after.message})`)
  assertReportedAndRefused(home, out)
})

/**
 * What `fixtures/chmodded-stores.js` saw, run as `uid` (as root) or as this user with cwd = HOME =
 * a fresh home under /var/tmp named `prefix`: a Landlock command in another workspace runs `attack`
 * in sandspawn's state directory, then the later steps. `withHome`: `{ out, home }`.
 */
async function chmodded(t, uid, prefix, attack, { withHome = false } = {}) {
  const home = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', prefix)))
  t.after(() => {
    require('node:child_process').spawnSync('chmod', ['-R', 'u+rwx,go-w', home])
    fs.rmSync(home, { recursive: true, force: true })
  })
  if (isRoot) fs.chownSync(home, uid, uid)
  fs.chmodSync(home, 0o755)
  const script = isRoot ? path.join(stagedCheckout(), '__test__', 'fixtures', 'chmodded-stores.js') : path.join(__dirname, 'fixtures', 'chmodded-stores.js')
  const [cmd, args] = isRoot ? asUser(uid, [script, home, attack]) : [process.execPath, [script, home, attack]]
  const out = await new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: home, env: { PATH: process.env.PATH, HOME: home }, timeout: 400_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout))
    })
  })
  return withHome ? { out, home } : out
}

// Found by an attacker's review (fix29): lock28 replaced a lock file a reader spoiled and gave the
// write bit back to a change set's lock.exclusive, but every other lock file was opened first:
// a Landlock command in another workspace that did `chmod 0` on each lock file of the stores (the
// user's own files; that mode does not govern modes) made every later run of a workspace with tool
// caches fail ("locking the tool cache ... Permission denied") and a pending change set refuse a
// run continuing it and its apply, for good, hostRisks []. Only an ordinary user sees this (root
// opens any file).
const LOCKS_UID = 64133 // a uid no other test uses
test('a Landlock command that takes the owner\'s write bit from every lock file of the stores fails no later run, continuation or apply', { skip: isRoot ? cannotRunAs(LOCKS_UID) ?? false : false }, async (t) => {
  const locks = 'find "$HOME" -type f \\( -name lock -o -name waiting -o -name lock.exclusive \\) -print -exec chmod 0 {} + | sed "s#^$HOME/##"'
  const out = await chmodded(t, LOCKS_UID, 'sandspawn-lock-modes-', locks)
  assert.equal(out.first.exitCode, 0, JSON.stringify(out.first))
  assert.ok(out.first.caches.length > 0, `the workspace has tool caches: ${JSON.stringify(out.first)}`)
  assert.ok(out.set.changeSet, JSON.stringify(out.set))
  assert.equal(out.chmod.sandboxType, 'landlock', JSON.stringify(out.chmod))
  for (const name of ['/lock', '/waiting', '/lock.exclusive']) assert.ok(out.chmod.stdout.split('\n').some((l) => l.endsWith(name)), `the command took the write bit from a ${name}: ${out.chmod.stdout}`)
  assert.equal(out.next.exitCode, 0, `the next run of the workspace: ${JSON.stringify(out.next)}`)
  assert.ok(out.continued.changeSet, `the run continuing the set: ${JSON.stringify(out.continued)}`)
  assert.equal(out.applied.error, undefined, `the apply: ${JSON.stringify(out.applied)}`)
})

// Found by an attacker's review (fix29; store29): fix29 gave the lock files their owner bits
// back, but a Landlock command in another workspace can `chmod 0` any of sandspawn's own
// directories and files too (the user's own; that mode does not govern modes): with
// `tool-caches/workspaces` at mode 0 every later workspace-write run of the user failed ("cannot
// create the private tool cache store ... Permission denied"); with a change set's directory at
// mode 0 the pending set was "no change set" (its continuation and apply refused, as if
// discarded); with `change-sets` at mode 0 no change set could be made; all with hostRisks [].
// Only an ordinary user sees this (root opens any directory).
const STORES_UID = 64134 // a uid no other test uses
const STORE_ATTACKS = {
  'the tool caches\' directories and files': 'find tool-caches -depth -mindepth 1 ! -name lock ! -name waiting -exec chmod 0 {} +',
  'a change set\'s directory, meta.json and roots': 'for d in change-sets/cs-*; do chmod 0 $d/meta.json $d/last-used $d/roots/0 $d/roots; done; chmod 0 change-sets/cs-*',
  'the stores\' tops': 'chmod 0 tool-caches change-sets held-dirs runs',
}
for (const [what, attackCmd] of Object.entries(STORE_ATTACKS)) {
  test(`a Landlock command that takes the owner's bits from ${what} fails no later run, continuation, apply or new set`, { skip: isRoot ? cannotRunAs(STORES_UID) ?? false : false }, async (t) => {
    const out = await chmodded(t, STORES_UID, 'sandspawn-store-dirs-', `${attackCmd}; echo done`)
    assert.equal(out.first.exitCode, 0, JSON.stringify(out.first))
    assert.ok(out.set.changeSet, JSON.stringify(out.set))
    assert.equal(out.chmod.sandboxType, 'landlock', JSON.stringify(out.chmod))
    assert.equal(out.chmod.stdout, 'done\n', JSON.stringify(out.chmod))
    assert.equal(out.next.exitCode, 0, `the next run of the workspace: ${JSON.stringify(out.next)}`)
    assert.equal(out.landlock.exitCode, 0, `a run in the Landlock mode (its run directory in runs/): ${JSON.stringify(out.landlock)}`)
    assert.ok(out.continued.changeSet, `the run continuing the set: ${JSON.stringify(out.continued)}`)
    assert.equal(out.applied.error, undefined, `the apply: ${JSON.stringify(out.applied)}`)
    assert.ok(out.newSet.changeSet, `a new change set: ${JSON.stringify(out.newSet)}`)
    // Each entry the later steps used has its owner's bits back (held-dirs is used by plans with
    // placeholders only, buildSandboxCommand's; a scope's `workspace` record is written at its
    // first run only, and read by no code).
    const used = (l) => !/ \.\/held-dirs$/.test(l) && !/\/workspace$/.test(l)
    assert.deepEqual(out.modes.filter((l) => l.startsWith('0 ') && used(l)), [], 'no entry of the stores the later steps used is left at mode 0')
  })
}

// Found by an attacker's review (store29): the same command can make sandspawn's state directory
// writable by everyone (`chmod 0777 ~/.local/state/sandspawn`): the stores are refused only when
// their own roots are, so every later run went on with hostRisks [], and another user's process
// could rename or replace what sandspawn keeps there (`held-links`, `known-stores`, a store's
// root). The run that did it reports it now, with the fix.
test('a Landlock command that makes the state directory writable by others is reported in its own result, with the fix', { skip: isRoot ? cannotRunAs(STORES_UID) ?? false : false }, async (t) => {
  const { out, home } = await chmodded(t, STORES_UID, 'sandspawn-store-open-', 'chmod 0777 . && echo done', { withHome: true })
  const state = path.join(home, '.local', 'state', 'sandspawn')
  assert.equal(out.chmod.stdout, 'done\n', JSON.stringify(out.chmod))
  const risk = (out.chmod.hostRisks || []).find((r) => r.path === state && r.kind === 'permissions-changed')
  assert.ok(risk, `the run that opened ${state} to others reports it: ${JSON.stringify(out.chmod)}`)
  assert.match(risk.detail, new RegExp(`chmod go-w ${state}`))
})

// Found by an attacker's review (fix30): the report of a store opened to others (store29) looked
// at the stores' roots and the state directory only. The same Landlock command's `chmod 0777
// held-links` turned the records shared with the user's other processes off for every later run
// (a directory others may write is not used: each run then held its links per process, as before
// rfix27, when a run in another process repointed a writableRoots link and a run here wrote where
// it led), and `chmod 0777 change-sets/<id>` had the pending set refused for good (its
// continuation and apply: not private), both with hostRisks []. Each is reported now, with the fix,
// in that run's result and every later one while it stays so.
test('a Landlock command that makes held-links or a pending change set\'s directory writable by others is reported, with the fix', { skip: isRoot ? cannotRunAs(STORES_UID) ?? false : false }, async (t) => {
  const { out, home } = await chmodded(t, STORES_UID, 'sandspawn-store-open-', 'chmod 0777 held-links change-sets/cs-* && echo done', { withHome: true })
  const state = path.join(home, '.local', 'state', 'sandspawn')
  assert.equal(out.chmod.stdout, 'done\n', JSON.stringify(out.chmod))
  const set = path.join(state, 'change-sets', out.set.changeSet.id)
  for (const [step, r] of [['the run that did it', out.chmod], ['the next run', out.next]]) {
    for (const dir of [path.join(state, 'held-links'), set]) {
      const risk = (r.hostRisks || []).find((h) => h.path === dir && h.kind === 'permissions-changed')
      assert.ok(risk, `${step} reports ${dir}: ${JSON.stringify(r.hostRisks)}`)
      assert.match(risk.detail, new RegExp(`chmod go-w ${dir}`))
    }
  }
})
