'use strict'
// The denial classifier is linear in the output. A command chooses what it prints: a long line with
// no whitespace full of "sandbox" once took minutes to classify after the command exited (the run's
// timeout no longer covers it), on one of the addon's two async workers, so two such runs starved
// every other run; classifySandboxDenial blocked the JavaScript thread as long.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { classifySandboxDenial, spawnSandboxed } = require('..')

const KIB = 1024

const flood = (kib) => spawnSandboxed(['python3', '-c',
  `import sys,os\nsys.stderr.write('xsandbox'*(${kib}*128)); sys.stderr.flush(); os._exit(1)`], { cwd: __dirname })

test('classifySandboxDenial on 1 MiB of whitespace-free keywords returns at once', () => {
  for (const unit of ['xsandbox', "'sandbox'", 'xseccomp', 'permission denied: \u2018']) {
    const stderr = unit.repeat(Math.floor(1024 * KIB / unit.length))
    const t = Date.now()
    classifySandboxDenial({ exitCode: 1, stdout: '', stderr, aggregatedOutput: stderr, sandboxType: 'bwrap', cwd: __dirname }, { mode: 'workspace-write' })
    assert.ok(Date.now() - t < 2000, `${unit}: ${Date.now() - t} ms`)
  }
})

test('runs whose stderr is a long line of keywords settle promptly and starve no other run', async () => {
  const t0 = Date.now()
  const floods = [flood(256), flood(256)]
  await new Promise((r) => setTimeout(r, 1500))
  const t1 = Date.now()
  const benign = await spawnSandboxed(['sh', '-c', 'echo hi; sleep 30'], { cwd: __dirname, timeout: 3000 })
  const benignMs = Date.now() - t1
  const results = await Promise.all(floods)
  const floodMs = Date.now() - t0
  assert.equal(benign.timedOut, true)
  assert.equal(benign.stdout, 'hi\n')
  assert.ok(benignMs < 10000, `the 3 s timeout fired after ${benignMs} ms`)
  assert.ok(floodMs < 15000, `the flooding runs settled after ${floodMs} ms`)
  for (const r of results) {
    assert.equal(r.exitCode, 1)
    assert.equal(r.stderr.length, 256 * KIB)
  }
})
