'use strict'
// runWithEscalation: escalate only a classified sandbox denial, only when approved, never a
// denyRead policy; and the CLI's --ask.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { runWithEscalation, SandboxError } = require('..')
const { START_BOUND } = require('./fixtures/spawn-helpers')

const outsideDir = () => fs.realpathSync(fs.mkdtempSync('/var/tmp/ss-esc-'))
const workspace = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ss-esc-ws-')))

test('a denied write that is approved runs again without the sandbox and succeeds', async (t) => {
  const out = outsideDir()
  const ws = workspace()
  t.after(() => fs.rmSync(ws, { recursive: true, force: true }))
  const target = path.join(out, 'written.txt')
  const calls = []
  const r = await runWithEscalation(['sh', '-c', `echo hello > ${target}`], {
    cwd: ws,
    sandbox: 'workspace-write',
    approve: (req) => {
      calls.push(req)
      return true
    },
  })
  assert.equal(calls.length, 1)
  assert.deepEqual(calls[0].command, ['sh', '-c', `echo hello > ${target}`])
  assert.equal(calls[0].result.sandboxType, 'bwrap')
  assert.equal(calls[0].denial.reason, 'read_only_file_system')
  assert.equal(calls[0].denial.path, target)
  assert.deepEqual(calls[0].changes, { paths: [], truncated: false, commandFiles: [] }, 'the attempt changed nothing in the workspace')
  assert.equal(r.escalated, true)
  assert.equal(r.exitCode, 0)
  assert.equal(r.sandboxType, 'none')
  assert.equal(fs.readFileSync(target, 'utf8'), 'hello\n')
  fs.rmSync(out, { recursive: true })
})

test('the retry runs the command approve() was shown, whatever happens to the caller\'s array meanwhile', async (t) => {
  // Found by an attacker's review of the facade: the retry read the caller's array again, so an
  // element changed after the first run (here by approve itself) ran unsandboxed unseen.
  const out = outsideDir()
  const ws = workspace()
  t.after(() => fs.rmSync(ws, { recursive: true, force: true }))
  t.after(() => fs.rmSync(out, { recursive: true, force: true }))
  const shownTarget = path.join(out, 'shown.txt')
  const command = ['sh', '-c', `echo hello > ${shownTarget}`]
  let shown
  const r = await runWithEscalation(command, {
    cwd: ws,
    sandbox: 'workspace-write',
    approve: (req) => {
      shown = [...req.command]
      req.command[2] = `echo evil > ${path.join(out, 'evil.txt')}`
      command[2] = `echo evil > ${path.join(out, 'evil.txt')}`
      return true
    },
  })
  assert.deepEqual(shown, ['sh', '-c', `echo hello > ${shownTarget}`])
  assert.equal(r.escalated, true)
  assert.equal(r.exitCode, 0)
  assert.equal(fs.readFileSync(shownTarget, 'utf8'), 'hello\n')
  assert.equal(fs.existsSync(path.join(out, 'evil.txt')), false, 'the changed array ran')
})

test('an ordinary failure (bash -c false) never reaches approve', async () => {
  let called = false
  const r = await runWithEscalation(['bash', '-c', 'false'], { approve: () => (called = true) })
  assert.equal(called, false)
  assert.equal(r.escalated, false)
  assert.equal(r.exitCode, 1)
})

test('a timeout never reaches approve, even with denial-looking output', async () => {
  let called = false
  // The timeout counts from the request, setup included: 300 ms could pass before the command
  // wrote its denial, and the test then proved nothing. START_BOUND lets it write first.
  const r = await runWithEscalation(['sh', '-c', 'echo x > /etc/ss-esc-timeout; sleep 60'], { timeout: START_BOUND, approve: () => (called = true) })
  assert.equal(r.timedOut, true)
  assert.match(r.stderr, /ss-esc-timeout/, 'the command wrote its denial-looking output before the timeout')
  assert.equal(called, false)
  assert.equal(r.escalated, false)
})

test('a policy with denyRead is never escalated and approve is never called', async () => {
  const out = outsideDir()
  const secret = path.join(out, 'secret')
  fs.writeFileSync(secret, 'top secret')
  let called = false
  const r = await runWithEscalation(['sh', '-c', `echo x > ${out}/new`], {
    sandbox: { mode: 'read-only', denyRead: [secret] },
    approve: () => (called = true),
  })
  assert.ok(r.denial, 'the first run was a denial')
  assert.equal(called, false)
  assert.equal(r.escalated, false)
  assert.equal(fs.existsSync(path.join(out, 'new')), false)
  fs.rmSync(out, { recursive: true })
})

test('an approve that throws, rejects or answers something other than true is a refusal', async () => {
  const out = outsideDir()
  for (const approve of [() => { throw new Error('boom') }, () => Promise.reject(new Error('nope')), () => 'yes', async () => false]) {
    const r = await runWithEscalation(['sh', '-c', `echo x > ${out}/f`], { approve })
    assert.equal(r.escalated, false)
    assert.ok(r.denial)
    assert.equal(fs.existsSync(path.join(out, 'f')), false)
  }
  fs.rmSync(out, { recursive: true })
})

test('the AbortSignal also covers the wait for approve', async () => {
  const out = outsideDir()
  const ac = new AbortController()
  const p = runWithEscalation(['sh', '-c', `echo x > ${out}/f`], {
    signal: ac.signal,
    approve: () => {
      setTimeout(() => ac.abort(), 20)
      return new Promise(() => {}) // never answers
    },
  })
  await assert.rejects(p, (e) => e.name === 'AbortError' && e.code === 'ABORT_ERR' && e.result && e.result.denial !== null)
  assert.equal(fs.existsSync(path.join(out, 'f')), false)
  fs.rmSync(out, { recursive: true })
})

test('review mode: the escalated result keeps the attempt\'s change set (pending, for the caller to apply or discard)', async (t) => {
  // Found by an attacker's review: the escalated result carried the retry's `changeSet: null`, so
  // the sandboxed attempt's set (and with `changeSet: id`, a whole task's earlier writes) was left
  // pending for 14 days with nobody told of it; the CLI's --review --ask never showed it.
  const store = fs.realpathSync(fs.mkdtempSync('/var/tmp/ss-esc-store-'))
  const saved = process.env.SANDSPAWN_CHANGE_SET_DIR
  process.env.SANDSPAWN_CHANGE_SET_DIR = store
  const out = outsideDir()
  const ws = workspace()
  t.after(() => {
    if (saved === undefined) delete process.env.SANDSPAWN_CHANGE_SET_DIR
    else process.env.SANDSPAWN_CHANGE_SET_DIR = saved
    for (const d of [store, out, ws]) fs.rmSync(d, { recursive: true, force: true })
  })
  let seen = null
  const r = await runWithEscalation(['sh', '-c', `echo attempt > made.txt; echo hello > ${out}/written.txt`], {
    cwd: ws,
    timeout: 30000,
    sandbox: { mode: 'workspace-write', workspace: 'review' },
    approve: (req) => {
      seen = req.result.changeSet
      return true
    },
  })
  assert.ok(seen && /^cs-/.test(seen.id), 'approve saw the attempt\'s change set')
  assert.equal(r.escalated, true)
  assert.ok(r.changeSet, 'the escalated result names the attempt\'s change set')
  assert.equal(r.changeSet.id, seen.id)
  assert.deepEqual(r.changeSet.counts, { added: 1, modified: 0, deleted: 0 })
  const { listChangeSets, discardChangeSet } = require('..')
  assert.deepEqual((await listChangeSets()).map((s) => s.id), [seen.id], 'pending, as the result says')
  await discardChangeSet(r.changeSet.id)
})

test('approve is required', async () => {
  await assert.rejects(runWithEscalation(['true'], {}), (e) => e instanceof SandboxError && /approve/.test(e.message))
})

test('the CLI --ask does not ask (nor escalate) when stdin is not a terminal, and prints the denial once', () => {
  const out = outsideDir()
  const r = spawnSync(process.execPath, [path.join(__dirname, '..', 'bin', 'sandspawn.js'), '--ask', '--', 'sh', '-c', `echo x > ${out}/f`], { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], input: 'y\n' })
  assert.notEqual(r.status, 0)
  assert.equal(r.stderr.split('\n').filter((l) => l.includes('read_only_file_system')).length, 1, r.stderr)
  assert.match(r.stderr, /--ask: not asking to run again without the sandbox: stdin is not a terminal/)
  assert.equal(fs.existsSync(path.join(out, 'f')), false)
  fs.rmSync(out, { recursive: true })
})
