'use strict'
// Issue 29: every resource one run can take is bounded per run. Memory-backed filesystems the
// sandbox makes follow limits.memory (or a fixed cap), and /dev is not a place to write; what a
// run reports as its own memory use is the command's, not the host's.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const { sh, show, run, tempTree } = require('./helpers')

const MiB = 1024 * 1024

describe('the sandbox\'s memory-backed filesystems are bounded (issue 29)', () => {
  for (const [where, sandbox] of [['/dev/shm', 'read-only'], ['/tmp', { mode: 'workspace-write', tmp: 'private' }]]) {
    test(`256 MiB into ${where} under limits.memory 64 MiB fails; 32 MiB works`, async (t) => {
      const tree = tempTree(t)
      const write = (mib) => `dd if=/dev/zero of=${where}/f bs=1M count=${mib} 2>&1 | grep -E 'No space|copied'; rm -f ${where}/f`
      const r = await sh(`${write(256)}; echo; ${write(32)}`, { cwd: tree.ws, sandbox, limits: { memory: 64 * MiB } })
      const [big, small] = r.stdout.split('\n\n')
      assert.match(big, /No space left on device/, show(r))
      assert.match(big, /^67108864 bytes /m, `stopped at the limit\n${show(r)}`)
      assert.match(small, /^33554432 bytes .* copied/m, `a write below the limit works\n${show(r)}`)
      assert.doesNotMatch(small, /No space/, show(r))
    })
  }

  test('without limits, /dev/shm has the documented cap, and /dev itself takes no files', async () => {
    const r = await sh('df -B1 --output=size /dev/shm | tail -1; touch /dev/sandspawn-x 2>&1 || true')
    assert.equal(Number(r.stdout.split('\n')[0].trim()), 512 * MiB, show(r))
    assert.match(r.stdout, /Read-only file system/, show(r))
  })
})

describe('resourceUsage is the command\'s own (issue 29)', () => {
  test('maxRssBytes of `true` is small while the host holds a 600 MB heap', async () => {
    const held = Buffer.alloc(600 * 1000 * 1000, 1)
    try {
      for (const sandbox of ['read-only', 'danger-full-access']) {
        const r = await run(['true'], { sandbox })
        assert.equal(r.exitCode, 0, show(r))
        assert.ok(r.resourceUsage.maxRssBytes < 50 * MiB, `${sandbox}: ${r.resourceUsage.maxRssBytes} bytes`)
      }
      // A command that does use memory still shows it.
      const big = await run(['python3', '-c', 'import time; b = bytearray(200 * 1024 * 1024); time.sleep(0.5)'], { sandbox: 'danger-full-access' })
      assert.ok(big.resourceUsage.maxRssBytes > 150 * MiB, `${big.resourceUsage.maxRssBytes}`)
    } finally {
      held.fill(0)
    }
  })
})
