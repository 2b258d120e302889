'use strict'
// The questions a run asks `onRequest` (attacker's review): a command that opens and closes
// CONNECTs to made-up names as fast as it can made every one a question of its own, outliving its
// connection and waiting for one of the 4 open slots, without bound (523,677 queued in 40 s, the
// host at 926 MiB); at the end of the run each waiting question called onRequest once more, some
// after spawnSandboxed had resolved. Now a question nobody waits for any more is dropped unasked,
// at most 256 wait per run, and none is asked once the run is over. The made-up names are .test
// names answered deny, so none is ever looked up; nothing leaves the sandbox's proxy.

const { test } = require('node:test')
const assert = require('node:assert/strict')

const { spawnSandboxed } = require('../..')

const FLOOD_SECONDS = 3
const ANSWER_MS = 500

const flood = `
import socket, os, time
port = int(os.environ['HTTP_PROXY'].rsplit(':', 1)[1]); t = time.time(); i = 0
while time.time() - t < ${FLOOD_SECONDS}:
    i += 1
    s = socket.create_connection(('127.0.0.1', port))
    s.sendall(b'CONNECT h%d.flood.test:443 HTTP/1.1\\r\\n\\r\\n' % i); s.close()
print(i)
`

test('a flood of abandoned questions asks onRequest a bounded number of times, and never after the result', { timeout: 120000 }, async () => {
  let calls = 0
  let afterResult = 0
  let over = false
  const onRequest = () => {
    calls++
    if (over) afterResult++
    return new Promise((resolve) => setTimeout(() => resolve('deny'), ANSWER_MS))
  }
  const r = await spawnSandboxed(['python3', '-c', flood], {
    sandbox: { mode: 'read-only', network: { allowedDomains: [], onRequest } },
    timeout: 60000,
  })
  over = true
  const atResult = calls
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const opened = Number(r.stdout.trim())
  const text = `connections opened: ${opened}, onRequest calls: ${atResult}, after the result: ${afterResult}, stderr: ${r.stderr}`
  assert.equal(r.exitCode, 0, text)
  assert.ok(opened > 200, `the flood ran: ${text}`)
  // 4 open at once, each answered in ANSWER_MS: about 4 * FLOOD_SECONDS * 1000 / ANSWER_MS while
  // the flood lasts, and nothing for the questions whose connections had already closed.
  const bound = 4 * (FLOOD_SECONDS * 1000 / ANSWER_MS + 3)
  assert.ok(atResult >= 1 && atResult <= bound, `at most ${bound} questions asked: ${text}`)
  assert.equal(afterResult, 0, `no question after the result: ${text}`)
  assert.equal(calls, atResult, text)
  assert.ok(r.networkDecisions.length <= bound, text)
})
