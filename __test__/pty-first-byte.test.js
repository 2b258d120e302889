'use strict'
// A terminal's output reaches its first onData subscriber from the first byte (issue 31): what the
// command printed before anyone subscribed (a shell's first prompt, typically while
// `startSandboxed` was still resolving) is kept, up to maxBuffer bytes, and delivered to the first
// subscriber before anything newer.

const test = require('node:test')
const assert = require('node:assert/strict')

const { startSandboxed } = require('..')
const { MODES, sleep, guard } = require('./fixtures/spawn-helpers')

const HANG = 30000
const opt = (mode, extra = {}) => (mode.sandbox === undefined ? { ...extra } : { sandbox: mode.sandbox, ...extra })

/** Starts `command` in a pty and subscribes as soon as the handle is there, as a terminal would. */
async function subscribeAtOnce(command, options) {
  const proc = await startSandboxed(command, options)
  const chunks = []
  proc.onData((d) => chunks.push(d))
  const result = await guard(proc.wait(), HANG, command.join(' '))
  return { text: Buffer.concat(chunks).toString(), result }
}

test('onData subscribed right after startSandboxed sees tick1: 100 of 100 runs', async () => {
  const script = 'echo tick1; sleep 0.2; echo tick2'
  const missed = []
  const partial = []
  // Four at a time: each run is mostly the 0.2 s sleep.
  for (let batch = 0; batch < 25; batch++) {
    const runs = await Promise.all([0, 1, 2, 3].map(() => subscribeAtOnce(['bash', '-c', script], { pty: true })))
    for (const { text, result } of runs) {
      assert.equal(result.exitCode, 0, result.stdout)
      if (!text.includes('tick1')) missed.push(text)
      // Exactly the terminal stream: nothing lost, nothing twice, in order.
      if (text !== result.stdout) partial.push({ seen: text, stdout: result.stdout })
    }
  }
  assert.deepEqual(missed, [], `${missed.length} of 100 runs missed tick1`)
  assert.deepEqual(partial, [], `${partial.length} of 100 runs saw something else than the result's stdout`)
})

for (const mode of MODES) {
  test(`${mode.name}: a subscriber that comes after the command printed gets all of it, in order, then the rest`, async () => {
    const proc = await startSandboxed(['bash', '-c', 'printf "one\\ntwo\\n"; read line; echo "got $line"'], opt(mode, { pty: true }))
    // Wait until the command has printed and is blocked on `read`: the output is there, unread by anyone.
    await sleep(300)
    const chunks = []
    const first = proc.onData((d) => chunks.push(['first', d.toString()]))
    assert.deepEqual(chunks, [], 'delivered after onData returns, not inside it')
    const second = proc.onData((d) => chunks.push(['second', d.toString()]))
    await proc.write('x\r')
    const r = await guard(proc.wait(), HANG, 'wait')
    first.dispose()
    second.dispose()
    const firstText = chunks.filter(([who]) => who === 'first').map(([, d]) => d).join('')
    const secondText = chunks.filter(([who]) => who === 'second').map(([, d]) => d).join('')
    assert.equal(firstText, r.stdout, 'the first subscriber gets the whole stream from the first byte')
    assert.ok(firstText.startsWith('one\r\ntwo\r\n'), JSON.stringify(firstText))
    assert.ok(!secondText.includes('one'), `a later subscriber gets only what came after it: ${JSON.stringify(secondText)}`)
    assert.match(secondText, /got x/)
  })
}

test('output before the first subscriber is bounded by maxBuffer: the newest bytes are kept, the oldest dropped', async () => {
  const proc = await startSandboxed(['bash', '-c', 'seq 1 20000; read line'], { pty: true, maxBuffer: 4096, sandbox: 'danger-full-access' })
  // seq prints ~109 KB; wait (through read(), which has a buffer of its own) until it is all out
  // and the command blocks on `read`.
  let seen = ''
  while (!seen.includes('20000\r\n')) seen = (seen + (await guard(proc.read({ waitMs: 20 }), HANG, 'seq')).data.toString()).slice(-64)
  const chunks = []
  proc.onData((d) => chunks.push(d))
  await sleep(50)
  const kept = Buffer.concat(chunks).toString()
  assert.ok(kept.length > 0 && kept.length <= 4096, `${kept.length} bytes kept`)
  assert.ok(kept.endsWith('19999\r\n20000\r\n'), JSON.stringify(kept.slice(-40)))
  proc.kill('SIGKILL')
  await guard(proc.wait(), HANG, 'wait')
})
