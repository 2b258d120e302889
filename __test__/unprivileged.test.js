'use strict'
// The defaults of workspace-write as a user other than root (run through `setpriv` when the tests
// run as root). bwrap moves a sandbox whose uid is not 0 into a nested user namespace of its own,
// from which the helper could not mount anything; the private tool caches (and the placeholders of
// a plan another program runs) need the helper's mounts. So a user other than root gets uid 0 from bwrap
// and the helper maps the user's ids back after mounting: this test holds both halves to it.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')

const { stagedCheckout, cannotRunAs, asUser } = require('./fixtures/other-user')

const UID = 64124 // a uid no other test uses
const isRoot = process.getuid() === 0
const skip = isRoot ? cannotRunAs(UID) ?? false : 'needs root to switch to another user (as a user other than root every test here runs that way)'

test('as an unprivileged user: missing names kept absent, a private ~/.npm, no capabilities, the user\'s own ids', { skip }, async (t) => {
  // Not under /tmp: that is a writable root itself, and a cache inside one is left writable.
  const home = fs.realpathSync(fs.mkdtempSync('/var/tmp/sandspawn-unpriv-'))
  t.after(() => fs.rmSync(home, { recursive: true, force: true }))
  const ws = path.join(home, 'ws')
  fs.mkdirSync(path.join(home, '.npm'), { recursive: true })
  fs.writeFileSync(path.join(home, '.npm', 'host'), 'host\n')
  fs.mkdirSync(ws)
  for (const p of [home, ws, path.join(home, '.npm'), path.join(home, '.npm', 'host')]) fs.chownSync(p, UID, UID)
  // A repository inside the workspace in a directory the user cannot write (root's): no
  // placeholder can be made there, and none is needed (the command cannot create anything there).
  fs.mkdirSync(path.join(ws, 'vendor', 'lib', '.git'), { recursive: true })
  fs.writeFileSync(path.join(ws, 'vendor', 'lib', '.git', 'HEAD'), 'ref: refs/heads/main\n')
  fs.chmodSync(home, 0o755)
  const tmpGitBefore = fs.existsSync('/tmp/.git')
  // The package as UID can read it, wherever this checkout is (see fixtures/other-user.js).
  const script = path.join(stagedCheckout(), '__test__', 'fixtures', 'unprivileged-workspace.js')
  const [cmd, args] = asUser(UID, [script, ws])
  const out = await new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: ws, env: { PATH: process.env.PATH, HOME: home }, timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout))
    })
  })
  assert.ok(out.run.stdout !== undefined, JSON.stringify(out.run))
  assert.equal(out.run.exitCode, 0, out.run.stderr)
  const lines = out.run.stdout.split('\n')
  assert.deepEqual(lines.slice(0, 2), [String(UID), String(UID)], 'the command runs as the user')
  for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) assert.match(out.run.stdout, new RegExp(`^${set}:\\s+0000000000000000$`, 'm'))
  assert.doesNotMatch(out.run.stdout, /UNSHARED/)
  assert.match(out.run.stdout, new RegExp(`^${UID}\n${UID}\n(Cap.*\n){5}vendor\nWROTE-envrc\n`), 'nothing of sandspawn is listed in the workspace')
  assert.match(out.run.stdout, /^CACHE-WRITTEN$/m)
  assert.match(out.run.stdout, /^WORK-WRITTEN$/m)
  assert.deepEqual(out.run.toolCaches.caches.map((c) => c.name), ['npm'])
  assert.deepEqual(out.run.hostRisks.map((h) => [h.kind, h.path]), [['protected-name-created', path.join(ws, '.envrc')]])
  assert.match(out.run.hostRisks[0].detail, /moved aside/)
  const held = out.afterRun.filter((n) => n.startsWith('.envrc.sandspawn-held-'))
  assert.equal(held.length, 1, out.afterRun.join(' '))
  assert.deepEqual(out.afterRun.filter((n) => !held.includes(n)), ['file.txt', 'vendor'], 'the work, and the .envrc the run planted moved aside')
  assert.deepEqual(out.npmAfterRun, ['host'], 'the host cache is unchanged')
  // The same as a plan another program runs: the helper in front creates the placeholders.
  assert.equal(out.plan.status, 0, out.plan.stderr)
  assert.equal(out.plan.stdout, `${UID}\nREFUSED-envrc\n`)
  assert.ok(out.afterPlan.includes('.envrc') && out.afterPlan.includes('file.txt'), 'left for the next run to remove')
  assert.equal(out.lastExit, 0)
  assert.deepEqual(out.afterLast.filter((n) => !held.includes(n)), ['file.txt', 'vendor'], 'removed by the next run')
  // Unless another process's plan held /tmp then (found by flake41: the shared /tmp's .git is any
  // plan's on the machine, which the run rightly leaves while that plan's sandbox covers it).
  if (!tmpGitBefore && !out.tmpHeldBeforeLast) assert.equal(out.tmpGitAfterLast, false, "and /tmp/.git, the plan's other placeholder, too")
})

// Found by a review (/work/atk/fixes17b/gomod.js): Go leaves every module directory 0555, and as a
// user other than root the fold of the second module failed (a directory moved to another parent
// must be writable) and dropped the whole base: a later run saw only the last module fetched.
test('as an unprivileged user: Go\'s read-only module directories all land in the private cache, and the store keeps nothing else', { skip }, async (t) => {
  const home = fs.realpathSync(fs.mkdtempSync('/var/tmp/sandspawn-unpriv-go-'))
  t.after(() => fs.rmSync(home, { recursive: true, force: true }))
  const ws = path.join(home, 'ws')
  fs.mkdirSync(path.join(home, 'go', 'pkg', 'mod'), { recursive: true })
  fs.mkdirSync(ws)
  for (const p of [home, ws, path.join(home, 'go'), path.join(home, 'go', 'pkg'), path.join(home, 'go', 'pkg', 'mod')]) fs.chownSync(p, UID, UID)
  fs.chmodSync(home, 0o755)
  const script = path.join(stagedCheckout(), '__test__', 'fixtures', 'unprivileged-go-cache.js')
  const [cmd, args] = asUser(UID, [script, ws])
  const out = await new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: ws, env: { PATH: process.env.PATH, HOME: home }, timeout: 180_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout))
    })
  })
  assert.equal(out.error, undefined)
  for (const r of out.runs) assert.equal(r.exitCode, 0, r.stderr)
  assert.ok(out.runs[0].caches.includes('go-mod'), JSON.stringify(out.runs[0].caches))
  assert.equal(out.runs[4].stdout, '555 m@v1.0.0\nv1.0.0\n555 m@v1.1.0\nv1.1.0\n555 m@v1.2.0\nv1.2.0\n0 ' + path.join(home, 'go/pkg/mod/closed') + '\n600 ' + path.join(home, 'go/pkg/mod/noexec') + '\n', 'a later run sees every module, as Go left it')
  // What the folds set aside is removed, and no run's writes wait anywhere but in the base.
  const cache = path.join(out.runs[0].store, 'go-mod')
  assert.deepEqual(fs.readdirSync(path.join(cache, 'discard')), [])
  assert.deepEqual(fs.readdirSync(path.join(cache, 'pending')), [])
  for (const slot of fs.readdirSync(path.join(cache, 'slots'))) {
    const upper = path.join(cache, 'slots', slot, 'upper')
    if (fs.existsSync(upper)) assert.deepEqual(fs.readdirSync(upper), [], `slot ${slot}`)
  }
  assert.deepEqual(fs.readdirSync(path.join(cache, 'base')).sort(), ['closed', 'example.test', 'noexec'])
})

