'use strict'
// A pty run's output before the first onData subscriber is kept for that subscriber, bounded by
// maxBuffer. Found by an attacker's review (round 3): it was kept as one Buffer per native chunk,
// bounded by bytes only, and a command writing one byte per write() made the host hold ~500,000
// Buffers (410-510 MB RSS for ~1 MB of output), and each later chunk of k bytes ran k
// `Array.shift()`s over that array: the host's event loop froze for 25 s to minutes. With
// spawnSandboxed({ pty: true }), which has no onData, the held output served nobody.
// Bounds here are generous (a loaded 2-core machine passes them); the bug broke them by far.

const test = require('node:test')
const assert = require('node:assert/strict')
const v8 = require('node:v8')
const vm = require('node:vm')
const { monitorEventLoopDelay } = require('node:perf_hooks')

const { startSandboxed, spawnSandboxed } = require('..')
const { TerminalListeners } = require('../lib/terminal-listeners')
const { guard } = require('./fixtures/spawn-helpers')

v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc')
v8.setFlagsFromString('--no-expose-gc')

const HANG = 120000
const MB = 1024 * 1024

/** Heap and off-heap bytes held after a full collection. */
function held() {
  gc()
  gc()
  const m = process.memoryUsage()
  return m.heapUsed + m.external
}

test('one-byte chunks far past maxBuffer: memory stays a few x maxBuffer, each chunk costs little, and a late subscriber gets the tail', () => {
  const limit = 256 * 1024
  const before = held()
  const t = new TerminalListeners(null, limit)
  // 1,000,000 one-byte chunks (4x the bound), then 4 KiB chunks: the pattern of the review.
  // CPU time of this process, not wall time: on a loaded 2-core machine (CI) the wall time of this
  // pure-JS work is several times its CPU (300 ms of CPU took 1.1 to 2.2 s at a load of 23), while the
  // unfixed code needed tens of seconds of CPU.
  const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
  const started = cpuMs()
  let n = 0
  const feed = (data) => {
    t.dispatch({ stream: 'stdout', data })
    n++
  }
  const elapsed = () => cpuMs() - started
  const one = (i) => Buffer.from([0x61 + (i % 26)])
  // Up to the bound nothing is dropped yet: the unfixed code held one Buffer per byte (~40 MB).
  for (let i = 0; i < limit; i++) feed(one(i))
  const full = held() - before
  assert.ok(full < 4 * limit + 4 * MB, `${(full / MB).toFixed(1)} MB held for ${limit} one-byte chunks`)
  // Past it, the unfixed code needed minutes: give up (and fail) after 10 s of CPU rather than hang.
  for (let i = limit; i < 1000000 && (i % 1000 || elapsed() < 10000); i++) feed(one(i))
  assert.equal(n, 1000000, `only ${n} one-byte chunks in ${elapsed()} ms of CPU`)
  const mid = held() - before
  // Each of these dropped 4096 entries from the front of the array, one shift each.
  const bigStart = elapsed()
  for (let i = 0; i < 16; i++) feed(Buffer.alloc(4096, 0x30 + (i % 10)))
  const big = elapsed() - bigStart
  const total = elapsed()
  const after = held() - before
  assert.ok(mid < 4 * limit + 4 * MB, `${(mid / MB).toFixed(1)} MB held for a ${limit / 1024} KiB bound after 1e6 one-byte chunks`)
  assert.ok(after < 4 * limit + 4 * MB, `${(after / MB).toFixed(1)} MB held for a ${limit / 1024} KiB bound`)
  assert.ok(big < 1000, `16 chunks of 4 KiB took ${big} ms of CPU`)
  assert.ok(total < 10000, `${n} chunks took ${total} ms of CPU`)

  // The late subscriber gets exactly the newest `limit` bytes, in order, in one chunk.
  const expected = Buffer.concat([
    ...Array.from({ length: limit - 16 * 4096 }, (_, k) => Buffer.from([0x61 + ((1000000 - (limit - 16 * 4096) + k) % 26)])),
    ...Array.from({ length: 16 }, (_, i) => Buffer.alloc(4096, 0x30 + (i % 10))),
  ])
  const got = []
  t.add((d) => got.push(d))
  return new Promise((resolve) => queueMicrotask(resolve)).then(() => {
    assert.equal(got.length, 1)
    assert.equal(got[0].length, limit)
    assert.ok(got[0].equals(expected), 'the newest bytes, in order')
    // What comes after the hand-over goes straight to the listener.
    t.dispatch({ stream: 'stdout', data: Buffer.from('z') })
    assert.deepEqual(got.slice(1).map(String), ['z'])
  })
})

test('the kept backlog wraps around its ring correctly for mixed chunk sizes', async () => {
  // A reference model: the concatenation of everything, cut to the newest `limit` bytes.
  for (const limit of [1, 7, 64, 1000]) {
    let all = Buffer.alloc(0)
    const t = new TerminalListeners(null, limit)
    let seed = limit
    for (let i = 0; i < 300; i++) {
      seed = (seed * 1103515245 + 12345) % 2147483648
      const size = [0, 1, 2, 5, limit - 1, limit, limit + 3, 37][seed % 8]
      const data = Buffer.from(Array.from({ length: Math.max(0, size) }, (_, k) => (i * 7 + k) % 256))
      all = Buffer.concat([all, data])
      t.dispatch({ stream: 'stdout', data })
    }
    const got = []
    t.add((d) => got.push(d))
    await new Promise((resolve) => queueMicrotask(resolve))
    assert.equal(got.length, 1, `limit ${limit}`)
    assert.ok(got[0].equals(all.subarray(-limit)), `limit ${limit}: ${got[0].length} bytes`)
  }
})

/** A python loop: `ones` one-byte writes ~20 us apart, then 4 KiB writes for `secs` seconds. */
const trickle = (ones, secs) => `import os,time
for i in range(${ones}):
    os.write(1,b'x'); t=time.perf_counter()
    while time.perf_counter()-t<0.00002: pass
end=time.time()+${secs}
while time.time()<end:
    os.write(1,b'y'*4096)
os.write(1,b'END')
`

/** Runs `body` watching the event loop's longest stall and the memory held at its end. */
async function watched(body) {
  const before = held()
  const h = monitorEventLoopDelay({ resolution: 10 })
  h.enable()
  const out = await body()
  h.disable()
  return { out, stallMs: h.max / 1e6, grew: held() - before }
}

test('a pty run read only with read(), one byte per write past maxBuffer: no stall, bounded memory, the tail for a late onData', async () => {
  const maxBuffer = 128 * 1024
  const { out: proc, stallMs, grew } = await watched(async () => {
    const p = await startSandboxed(['python3', '-c', trickle(100000, 2)], { pty: true, maxBuffer, sandbox: 'danger-full-access' })
    let tail = ''
    for (;;) {
      const r = await guard(p.read({ waitMs: 100 }), HANG, 'read')
      tail = (tail + r.data.toString()).slice(-8)
      if (tail.endsWith('END')) break
    }
    return p
  })
  const got = []
  proc.onData((d) => got.push(d))
  const r = await guard(proc.wait(), HANG, 'wait')
  assert.equal(r.exitCode, 0)
  const kept = Buffer.concat(got).toString()
  assert.ok(kept.length > 0 && kept.length <= maxBuffer, `${kept.length} bytes`)
  assert.ok(kept.endsWith('yyyyEND'), JSON.stringify(kept.slice(-16)))
  assert.ok(stallMs < 1000, `the event loop stalled for ${stallMs} ms`)
  assert.ok(grew < 8 * maxBuffer + 16 * MB, `${(grew / MB).toFixed(1)} MB held`)
})

test('spawnSandboxed({ pty: true }), one byte per write past maxBuffer: no stall', async () => {
  const maxBuffer = 128 * 1024
  const { out: r, stallMs } = await watched(() => spawnSandboxed(['python3', '-c', trickle(100000, 2)], { pty: true, maxBuffer, sandbox: 'danger-full-access' }))
  assert.equal(r.exitCode, 0)
  assert.ok(r.stdout.endsWith('END'))
  assert.ok(stallMs < 1000, `the event loop stalled for ${stallMs} ms`)
})
