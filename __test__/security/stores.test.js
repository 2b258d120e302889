'use strict'
// sandspawn's own stores on the host (change sets, tool caches) when the workspace holds them: a
// cwd of $HOME. Found by an attacker's review: a run renamed the stores' parent and left a decoy
// at its path; the next run, planned with the decoy covered, read every pending change set of
// every workspace and rewrote one, which the user's later apply followed. Runs as an ordinary user
// (through `setpriv` when the tests run as root) with a fresh home, so the stores are the default
// ones under it (see fixtures/store-swap.js).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')

const { stagedCheckout, cannotRunAs, asUser } = require('../fixtures/other-user')

const UID = 64126 // a uid no other test uses
const isRoot = process.getuid() === 0
const skip = isRoot ? cannotRunAs(UID) ?? false : false

test("a run in the home cannot move sandspawn's stores from under their covers, and the host follows no link to them", { skip }, async (t) => {
  // Not under /tmp: a writable root of its own, which would hold the home.
  const home = fs.realpathSync(fs.mkdtempSync('/var/tmp/sandspawn-stores-home-'))
  t.after(() => fs.rmSync(home, { recursive: true, force: true }))
  if (isRoot) fs.chownSync(home, UID, UID)
  const script = isRoot ? path.join(stagedCheckout(), '__test__', 'fixtures', 'store-swap.js') : path.join(__dirname, '..', 'fixtures', 'store-swap.js')
  const [cmd, args] = isRoot ? asUser(UID, [script]) : [process.execPath, [script]]
  const out = await new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: home, env: { PATH: process.env.PATH, HOME: home }, timeout: 180_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stdout}\n${stderr}`))
      resolve(JSON.parse(stdout))
    })
  })
  assert.equal(out.error, undefined, out.error)
  const local = path.join(home, '.local')
  assert.equal(out.swap, `kept ${local}\nkept ${local}/state\nkept store\n`, `every directory above the stores stays where it is: ${JSON.stringify(out)}`)
  assert.equal(out.forge, 'no store to reach\n')
  assert.ok(out.metaUnchanged && !out.planted, JSON.stringify(out))
  for (const call of ['listThroughLink', 'applyThroughLink', 'reviewThroughLink']) {
    assert.match(out[call], /^ERR_SANDBOX_SETUP_FAILED: .*symlink/, `${call}: ${out[call]}`)
  }
})
