'use strict'
// The host's child_process keeps working alongside sandboxed runs: both kinds of children are
// reaped, each with its own exit status, and neither side hangs.

const test = require('node:test')
const assert = require('node:assert/strict')
const { spawn: cpSpawn } = require('node:child_process')
const { spawnSandboxed } = require('..')
const { guard } = require('./fixtures/spawn-helpers')

// Each host spawn loop starts its next child from setImmediate, not from inside the previous
// child's 'exit' callback. Spawning from inside it triggers a livelock in Node's own event loop
// (libuv's SIGCHLD reader), which scripts/repro-sigchld-livelock.js reproduces with no sandspawn
// loaded at all. It starves timers and every native completion for seconds (README "Limits").
// This test checks sandspawn, so it uses the host pattern that does not hit that Node bug.
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

// 100 sandboxed runs (4 at a time) next to two host spawn loops that run until the sandboxed runs
// are done and at least 100 host children have exited.
async function interleave(options) {
  let sandboxDone = false
  let cpCount = 0
  const cpErrors = []
  const cpOnce = () =>
    new Promise((resolve) => {
      const c = cpSpawn('sh', ['-c', 'exit 7'], { stdio: 'ignore' })
      c.on('error', (e) => {
        cpErrors.push(String(e))
        resolve()
      })
      c.on('exit', (code, sig) => {
        if (code !== 7) cpErrors.push(`child_process exit ${code} ${sig}`)
        cpCount++
        resolve()
      })
    })
  const cpLoop = async () => {
    while (!sandboxDone || cpCount < 100) {
      await nextTurn()
      await guard(cpOnce(), 30000, 'child_process.spawn run')
    }
  }
  const sbLoop = async () => {
    const bad = []
    const worker = async (k) => {
      for (let i = k; i < 100; i += 4) {
        const r = await guard(spawnSandboxed(['sh', '-c', `exit ${i % 50}`], options), 30000, 'sandboxed run')
        if (r.exitCode !== i % 50) bad.push([i, r.exitCode, r.signal])
      }
    }
    try {
      await Promise.all([0, 1, 2, 3].map(worker))
    } finally {
      sandboxDone = true
    }
    return bad
  }
  const [bad] = await Promise.all([sbLoop(), cpLoop(), cpLoop()])
  assert.deepEqual(bad, [], 'sandboxed exit codes')
  assert.deepEqual(cpErrors, [], 'child_process exit codes')
  assert.ok(cpCount >= 100)
}

test("node's child_process keeps working alongside sandboxed runs (no stolen SIGCHLD / exit statuses)", async () => {
  await interleave() // the default: read-only, under bwrap
})

test('the same with no sandbox (danger-full-access: the fastest runs, so the most overlap)', async () => {
  await interleave({ sandbox: 'danger-full-access' })
})
