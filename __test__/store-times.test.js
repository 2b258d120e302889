'use strict'
// Found by an attacker's review (cross31): a Landlock command can set the times of any file its
// user owns (README: `file-times`, not enforced), sandspawn's own stores included, which it reads.
// The stores dropped a pending change set, and a tool cache scope, once its `last-used` file's
// mtime said it had not been used for 14 (30) days: a command in another workspace's `touch -d
// 2000-01-01` of them had the next process that listed the sets (a CLI's `review list`, the next
// agent's run) remove the set, the agent's work in it gone for good (its apply: "no change set"),
// and another workspace's caches with it, hostRisks []. The stores now go by the ctime, which no
// process can set.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')

const linux = process.platform === 'linux'

test('a Landlock command that sets the times of sandspawn\'s own entries back has no pending change set or tool cache scope dropped', { skip: !linux }, async (t) => {
  const home = fs.realpathSync(fs.mkdtempSync('/var/tmp/sandspawn-store-times-'))
  t.after(() => {
    require('node:child_process').spawnSync('chmod', ['-R', 'u+rwx', home])
    fs.rmSync(home, { recursive: true, force: true })
  })
  const script = path.join(__dirname, 'fixtures', 'aged-stores.js')
  const out = await new Promise((resolve, reject) => {
    execFile(process.execPath, [script, home], { cwd: home, env: { PATH: process.env.PATH, HOME: home }, timeout: 400_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout))
    })
  })
  if (out.touch.sandboxType !== 'landlock') return t.skip(`the Landlock mode does not run here (${out.touch.sandboxType || out.touch.message})`)
  const id = out.set.changeSet && out.set.changeSet.id
  assert.ok(id, JSON.stringify(out.set))
  assert.equal(out.cache.exitCode, 0, JSON.stringify(out.cache))
  assert.ok(out.scopesBefore.length >= 1, `wsA's runs made tool cache scopes: ${JSON.stringify(out)}`)
  assert.equal(out.touch.stdout, 'done\n', `the command set the times back: ${JSON.stringify(out.touch)}`)
  assert.deepEqual(out.later.list, [id], `another process still lists the pending set: ${JSON.stringify(out.later)}`)
  assert.equal(out.later.run, 0, JSON.stringify(out.later))
  assert.ok(out.scopesBefore.every((s) => out.scopesAfter.includes(s)), `wsA's tool cache scopes are still there: ${JSON.stringify(out)}`)
  assert.deepEqual(out.applied, { applied: 1 }, 'the set still applies')
  assert.equal(out.notes, true, 'the agent\'s work landed')
})
