'use strict'
// Found by a fixer's review (stmode25, the bug class of store-modes.test.js): the directories
// above a `readOnlyPaths` or `denyRead` path inside a writable root are the run's to chmod. A run
// did `chmod 000 ws/cfg`; the next plan's lookup of ws/cfg/settings.json failed with EACCES and
// took it for missing, so instead of a read-only bind it got the missing path's treatment; that run
// did `chmod 700 ws/cfg` and overwrote the file, which the host then moved aside and reported as
// created: the user's content gone. A `denyRead` path so hidden lost its mask and was read. Now
// the run that hides them is reported (`hostRisks`, with the fix) and the next one is refused until
// it is fixed. Only an ordinary user sees this (root searches any directory): as root the test
// switches to one.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')

const { stagedCheckout, cannotRunAs, asUser } = require('./fixtures/other-user')

const UID = 64132 // a uid no other test uses
const isRoot = process.getuid() === 0
const skip = isRoot ? cannotRunAs(UID) ?? false : false

/** The fixture's findings, run as UID (as root) or as this user, in a fresh directory. */
async function attack(t, env = {}) {
  const top = fs.realpathSync(fs.mkdtempSync('/var/tmp/sandspawn-path-modes-'))
  t.after(() => {
    for (const d of ['ws/cfg', 'ws/secret', 'ws2', 'ws3/deps', 'ws3/deps/r7']) fs.existsSync(path.join(top, d)) && fs.chmodSync(path.join(top, d), 0o700)
    fs.rmSync(top, { recursive: true, force: true })
  })
  if (isRoot) fs.chownSync(top, UID, UID)
  fs.chmodSync(top, 0o755)
  const script = isRoot ? path.join(stagedCheckout(), '__test__', 'fixtures', 'path-modes.js') : path.join(__dirname, 'fixtures', 'path-modes.js')
  const [cmd, args] = isRoot ? asUser(UID, [script, top]) : [process.execPath, [script, top]]
  const out = await new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: top, env: { PATH: process.env.PATH, HOME: top, ...env }, timeout: 240_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout))
    })
  })
  return { ws: path.join(top, 'ws'), out }
}

function assertReportedAndRefused(ws, out) {
  const dirs = out.dirs
  assert.deepEqual(dirs.slice(0, 1), [path.join(ws, 'cfg')])
  assert.deepEqual(out.modesAfterHide, dirs.map(() => 0), JSON.stringify(out.hide))
  for (const dir of dirs) {
    const risk = (out.hide.hostRisks || []).find((r) => r.path === dir && r.kind === 'permissions-changed')
    assert.ok(risk, `the hiding run reports ${dir}: ${JSON.stringify(out.hide)}`)
    assert.match(risk.detail, new RegExp(`chmod u\\+rwx ${dir}`))
  }
  assert.equal(out.attack.error, 'ERR_SANDBOX_SETUP_FAILED', JSON.stringify(out.attack))
  assert.match(out.attack.message, /mode 000/)
  assert.match(out.attack.message, new RegExp(`chmod u\\+rwx (${dirs.join('|')})`))
  assert.deepEqual(out.modesAfterAttack, dirs.map(() => 0), 'the refused run ran nothing')
  assert.equal(out.settingsAfter, 'original', 'the read-only file kept its content')
  assert.equal(out.after.exitCode, 0, `once fixed, runs start again: ${JSON.stringify(out.after)}`)
  if (dirs.length > 1) assert.doesNotMatch(out.after.stdout, /SECRET/, 'the denied file stays masked')
  assert.equal(out.settingsAtEnd, 'original', 'and the read-only file read-only')
  // A writable root's top: its .git could not be looked up, and nothing guarded it.
  const ws2 = out.ws2
  assert.equal(out.modeTopAfterHide, 0, JSON.stringify(out.topHide))
  const top = (out.topHide.hostRisks || []).find((r) => r.path === ws2 && r.kind === 'permissions-changed')
  assert.ok(top, `the hiding run reports ${ws2}: ${JSON.stringify(out.topHide)}`)
  assert.equal(out.topAttack.error, 'ERR_SANDBOX_SETUP_FAILED', JSON.stringify(out.topAttack))
  assert.match(out.topAttack.message, new RegExp(`mode 000.*chmod u\\+rwx ${ws2}`))
  assert.equal(out.modeTopAfterAttack, 0, 'the refused run ran nothing')
  assert.equal(out.hook, null, 'no hook planted')
  // A read-only run's cwd so hidden: refused naming the cwd and the fix, not a broken install.
  assert.equal(out.cwdAttack.error, 'ERR_SANDBOX_SETUP_FAILED', JSON.stringify(out.cwdAttack))
  assert.match(out.cwdAttack.message, new RegExp(`working directory ${out.inner} cannot be entered: .*mode 000.*chmod u\\+rwx ${out.inner}`))
  // Among many nested repositories: the one made unsearchable, then their parent, each reported.
  const risksAt = (r) => (r.hostRisks || []).filter((h) => h.kind === 'permissions-changed').map((h) => h.path)
  assert.deepEqual(risksAt(out.repoHide), [path.join(out.ws3, 'deps', 'r7')], JSON.stringify(out.repoHide))
  assert.deepEqual(risksAt(out.parentHide), [path.join(out.ws3, 'deps')], JSON.stringify(out.parentHide))
  assert.deepEqual(risksAt(out.repoFine), [], JSON.stringify(out.repoFine))
}

test('a run that makes the directory of a readOnlyPaths / denyRead path unsearchable is reported, and the next run is refused, not planned as if the path were missing (bwrap)', { skip }, async (t) => {
  const { ws, out } = await attack(t)
  if (out.after.sandboxType !== 'bwrap') return t.skip(`bwrap does not run here (${out.after.sandboxType || out.after.message})`)
  assertReportedAndRefused(ws, out)
})

test('the same under Landlock (SANDSPAWN_LINUX_ALLOW=landlock)', { skip }, async (t) => {
  const { ws, out } = await attack(t, { SANDSPAWN_LINUX_ALLOW: 'landlock' })
  if (out.after.sandboxType !== 'landlock') return t.skip(`the Landlock mode does not run here (${out.after.sandboxType || out.after.message})`)
  assertReportedAndRefused(ws, out)
})
