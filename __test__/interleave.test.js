'use strict'
// The host's child_process keeps working alongside sandboxed runs. In a file of its own: when the
// known open bug hits, the stuck handles it leaves behind must not affect other tests' process.

const test = require('node:test')
const assert = require('node:assert/strict')
const { spawn: cpSpawn } = require('node:child_process')
const { spawnSandboxed } = require('..')
const { guard } = require('./fixtures/spawn-helpers')

// TODO, not a pass: the known open bug in README "Limits" (a child_process 'exit' or a sandspawn
// promise can be lost under this load; ~1 run in 3 here). node:test still runs it and prints the
// outcome, but reports it as TODO instead of failing the suite, until the bug is fixed.
test("node's child_process keeps working alongside sandboxed runs (no stolen SIGCHLD / exit statuses)", { todo: 'known open bug: lost SIGCHLD/resolution under mixed child_process load (README Limits)' }, async () => {
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
    while (!sandboxDone || cpCount < 100) await guard(cpOnce(), 30000, 'child_process.spawn run')
  }
  const sbLoop = async () => {
    const bad = []
    const worker = async (k) => {
      for (let i = k; i < 100; i += 4) {
        // Default sandbox: danger-full-access hits the open bug more often (faster results).
        const r = await guard(spawnSandboxed(['sh', '-c', `exit ${i % 50}`]), 30000, 'sandboxed run')
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
})
