'use strict'
// The per-user budgets a run's command is checked against its own limits for (README, "Per-user
// kernel budgets"): locked memory and descriptors in flight. Found by an attacker's review.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { show, run, tempTree } = require('./helpers')

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'user-budget.py')

/** The host's soft limit, from a line like "Max locked memory  8388608  8388608  bytes". */
const hostLimit = (name) => {
  const line = fs.readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith(name))
  const soft = line.slice(name.length).trim().split(/\s+/)[0]
  return soft === 'unlimited' ? Infinity : Number(soft)
}

/** Start `user-budget.py KIND READY` in a sandbox; resolves with what it took once it holds it. */
async function holding(t, kind, options = {}) {
  const tree = tempTree(t)
  const ready = path.join(tree.ws, 'ready')
  const ac = new AbortController()
  const held = run(['python3', FIXTURE, kind, ready], { cwd: tree.ws, sandbox: 'workspace-write', signal: ac.signal, timeout: 100000, ...options }).catch((e) => e)
  // Only to catch a hang: the fixture writes READY as soon as the kernel refuses it.
  for (let waited = 0; !fs.existsSync(ready) && waited < 90000; waited += 100) await new Promise((r) => setTimeout(r, 100))
  const made = fs.existsSync(ready) ? fs.readFileSync(ready, 'utf8') : 'no ready file'
  const release = async () => {
    ac.abort()
    return held
  }
  return { made, release, m: /^made (\d+) (\w+)$/.exec(made) }
}

describe('one run takes a bounded share of the user\'s locked memory (attacker review)', () => {
  // A run SHM_LOCKed the user's whole RLIMIT_MEMLOCK (the user namespace's count, like the message
  // queues), and MSG_ZEROCOPY sends on its loopback pinned the user's whole locked_vm (checked
  // against the sender's RLIMIT_MEMLOCK): the user's own SHM_LOCK and zerocopy sends failed while
  // it lived. The command's RLIMIT_MEMLOCK is now a quarter of the host's.
  for (const [kind, one, code] of [['shmlock', 'SHM_LOCK', 'ENOMEM'], ['zerocopy', 'MSG_ZEROCOPY', 'ENOBUFS']]) {
    test(`${one}: a run takes at most a quarter of the host's RLIMIT_MEMLOCK`, { timeout: 120000 }, async (t) => {
      if (process.platform !== 'linux') return t.skip('Linux only')
      const host = hostLimit('Max locked memory')
      if (!Number.isFinite(host) || host < 1024 * 1024) return t.skip(`the host's RLIMIT_MEMLOCK (${host}) leaves no quarter to measure`)
      const h = await holding(t, kind)
      const r = await h.release()
      t.diagnostic(`the run: ${h.made}; the host's limit ${host}`)
      assert.ok(h.m, `${h.made}\n${show(r.result || r)}`)
      assert.equal(h.m[2], code)
      // Zerocopy counts what the peer's small receive buffers took too (copied, no longer pinned).
      const slack = kind === 'zerocopy' ? host / 8 : 0
      assert.ok(Number(h.m[1]) <= host / 4 + slack, `the run took ${h.m[1]} bytes, a quarter of the host's is ${host / 4}`)
    })
  }

  test('a small mlock (gpg\'s 64 KiB of secure memory) still works', async (t) => {
    if (process.platform !== 'linux') return t.skip('Linux only')
    const tree = tempTree(t)
    const r = await run(['python3', FIXTURE, 'mlock'], { cwd: tree.ws, sandbox: 'workspace-write' })
    assert.equal(r.exitCode, 0, show(r))
  })
})

describe('one run\'s descriptors in flight never stop another run\'s network bridge (attacker review)', () => {
  // A run put ~20,240 descriptors in flight in SCM_RIGHTS messages it never received, until the
  // kernel refused (the user's unix_inflight above the sender's RLIMIT_NOFILE; no capability helps
  // inside a sandbox, even root's). While it lived, every other run of the user with a network
  // allow-list failed setup: its helper's send of the proxy listener to the host was refused.
  test('a run with a network allow-list starts while another holds all the descriptors it can put in flight', { timeout: 120000 }, async (t) => {
    if (process.platform !== 'linux') return t.skip('Linux only')
    const h = await holding(t, 'inflight')
    const tree = tempTree(t)
    const b = await run(['sh', '-c', 'echo proxy=$HTTP_PROXY'], { cwd: tree.ws, sandbox: { mode: 'workspace-write', network: { allowedDomains: ['example.test'] } } }).catch((e) => e)
    const r = await h.release()
    t.diagnostic(`the holder: ${h.made}; the host's RLIMIT_NOFILE ${hostLimit('Max open files')}`)
    assert.ok(h.m, `${h.made}\n${show(r.result || r)}`)
    assert.equal(h.m[2], 'ETOOMANYREFS')
    assert.ok(b.exitCode === 0, `the second run: ${b.message || show(b)}`)
    assert.match(b.stdout, /^proxy=http:\/\/127\.0\.0\.1:\d+/m, show(b))
  })
})
