'use strict'
// Which bwrap this pass of the security suite runs: the system one normally, sandspawn's bundled
// one under SANDSPAWN_TEST_BWRAP=bundled (see helpers.js). Without this check, a pass meant for the
// bundled binary could silently test the system one.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { sandspawn, EXPECTED_BWRAP_SOURCE, tempTree } = require('./helpers')

test(`runs and capabilities use the ${EXPECTED_BWRAP_SOURCE} bwrap`, async (t) => {
  const caps = await sandspawn.sandboxCapabilities()
  const ctx = JSON.stringify(caps, null, 1)
  assert.equal(caps.available, true, ctx)
  assert.equal(caps.sandboxDetails.bwrapSource, EXPECTED_BWRAP_SOURCE, ctx)
  if (EXPECTED_BWRAP_SOURCE === 'bundled') {
    assert.match(caps.bwrap.path, /\/sandspawn-bwrap$/, ctx)
    assert.deepEqual(caps.attempts.map((a) => [a.mechanism, a.cause]), [['bwrap-system', 'bwrap-missing'], ['bwrap-bundled', 'ok']], ctx)
  }
  const { ws } = tempTree(t)
  const r = await sandspawn.spawnSandboxed(['sh', '-c', 'echo in-sandbox'], { cwd: ws })
  assert.equal(r.stdout, 'in-sandbox\n', JSON.stringify(r))
  assert.equal(r.sandboxType, 'bwrap')
  assert.deepEqual(r.sandboxDetails, { bwrapSource: EXPECTED_BWRAP_SOURCE, landlockAbi: null, notEnforced: [] })
})
