'use strict'
// The denial classifier is linear in the output. A command chooses what it prints: a long line with
// no whitespace full of "sandbox" once took minutes to classify after the command exited (the run's
// timeout no longer covers it), on one of the addon's two async workers, so two such runs starved
// every other run; classifySandboxDenial blocked the JavaScript thread as long.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { classifySandboxDenial, spawnSandboxed } = require('..')
const { START_BOUND } = require('./fixtures/spawn-helpers')

const KIB = 1024

const flood = (kib) => spawnSandboxed(['python3', '-c',
  `import sys,os\nsys.stderr.write('xsandbox'*(${kib}*128)); sys.stderr.flush(); os._exit(1)`], { cwd: __dirname })

/** The least wall time of three classifications of `stderr` (the least: the others waited for a CPU). */
function classifyMs(stderr) {
  let least = Infinity
  for (let i = 0; i < 3; i++) {
    const t = process.hrtime.bigint()
    classifySandboxDenial({ exitCode: 1, stdout: '', stderr, aggregatedOutput: stderr, sandboxType: 'bwrap', cwd: __dirname }, { mode: 'workspace-write' })
    least = Math.min(least, Number(process.hrtime.bigint() - t) / 1e6)
  }
  return least
}

// Speed as a ratio to 1 MiB of one whitespace-free line without a keyword, timed under the same
// load: a bound of 2 s failed at 2,674 ms here with other builds running (load 20-25); the way
// this guards against took minutes.
test('classifySandboxDenial on 1 MiB of whitespace-free keywords returns at once', () => {
  const plain = classifyMs('x'.repeat(1024 * KIB))
  for (const unit of ['xsandbox', "'sandbox'", 'xseccomp', 'permission denied: \u2018']) {
    const ms = classifyMs(unit.repeat(Math.floor(1024 * KIB / unit.length)))
    assert.ok(ms < 20 * plain + 200, `${unit}: ${Math.round(ms)} ms, ${Math.round(plain)} ms without a keyword`)
  }
})

test('runs whose stderr is a long line of keywords settle promptly and starve no other run', async () => {
  const t0 = Date.now()
  const floods = [flood(256), flood(256)]
  await new Promise((r) => setTimeout(r, 1500))
  const t1 = Date.now()
  const benign = await spawnSandboxed(['sh', '-c', 'echo hi; sleep 60'], { cwd: __dirname, timeout: START_BOUND })
  const benignMs = Date.now() - t1
  const results = await Promise.all(floods)
  const floodMs = Date.now() - t0
  assert.equal(benign.timedOut, true)
  assert.equal(benign.stdout, 'hi\n')
  // Hang bounds: starved runs waited minutes.
  assert.ok(benignMs < START_BOUND + 20000, `the ${START_BOUND} ms timeout fired after ${benignMs} ms`)
  assert.ok(floodMs < 60000, `the flooding runs settled after ${floodMs} ms`)
  for (const r of results) {
    assert.equal(r.exitCode, 1)
    assert.equal(r.stderr.length, 256 * KIB)
  }
})
