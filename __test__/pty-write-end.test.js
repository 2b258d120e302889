'use strict'
// A write() still pending when the command's input goes away must fail (EPIPE), never hang the
// run. Found by an attacker's review (round 21): a pty command that set its terminal raw and did
// not read, given a write larger than the terminal takes (~12 KiB), then exiting: the write spun a
// runtime thread forever (the master reports a hang-up, never room to write), wait() never
// settled (the run's end waited for the writer), kill() and the timeout did not help, and after
// two such runs every later run in the process hung.
// The commands below exit (or are ended) only once their input queue holds bytes, so the write is
// pending by then: no sleep decides the order. Bounds only catch a hang.

const test = require('node:test')
const assert = require('node:assert/strict')

const { startSandboxed, spawnSandboxed } = require('..')
const { MODES, guard } = require('./fixtures/spawn-helpers')

const HANG = 10000
const BIG = Buffer.alloc(1 << 20, 'a')
const opt = (mode, extra = {}) => (mode.sandbox === undefined ? { ...extra } : { sandbox: mode.sandbox, ...extra })

/** Python: optionally make stdin raw and say so, wait until 1 KiB of input is queued unread (a terminal reports at most 4095), then `then`. */
const holder = (raw, then) => [
  'python3', '-c',
  'import fcntl,termios,struct,sys,time\n' +
  (raw ? 'import tty; tty.setraw(0); sys.stdout.write("ready\\n"); sys.stdout.flush()\n' : '') +
  'while struct.unpack("i", fcntl.ioctl(0, termios.FIONREAD, b"\\0\\0\\0\\0"))[0] < 1024: time.sleep(0.01)\n' +
  then,
]

/** Read the terminal until the command says `needle`. */
async function until(proc, needle) {
  let text = ''
  const deadline = Date.now() + HANG
  while (!text.includes(needle)) {
    if (Date.now() > deadline) throw new Error(`no ${needle} in ${JSON.stringify(text)}`)
    const r = await guard(proc.read({ waitMs: 0 }), HANG, `reading until ${needle}`)
    text += r.data.toString('utf8')
    if (r.exited) throw new Error(`exited before ${needle}: ${JSON.stringify(text)}`)
  }
}

const epipe = (e) => e.code === 'EPIPE'

/** Start, write BIG while the command does not read, then `end` the run; the write must fail and the run end. */
async function pendingWrite(command, options, end = async () => {}) {
  const proc = await guard(startSandboxed(command, options), HANG, 'start')
  // A pipe needs no wait: what is written before the command reads it stays queued.
  if (options.pty) await until(proc, 'ready')
  const write = proc.write(BIG)
  write.catch(() => {})
  await end(proc)
  await guard(assert.rejects(write, epipe), HANG, 'the pending write')
  const r = await guard(proc.wait(), HANG, 'wait()')
  await guard(assert.rejects(proc.write('x'), epipe), HANG, 'a write after the end')
  return r
}

for (const mode of MODES) {
  test(`${mode.name}: a raw terminal that is not read, then the command exits: the pending write fails with EPIPE and the run ends (3 runs)`, async () => {
    for (let i = 0; i < 3; i++) {
      const r = await pendingWrite(holder(true, 'sys.exit(0)'), opt(mode, { pty: true }))
      assert.equal(r.exitCode, 0)
    }
    // The runtime is not wedged: a plain run still ends.
    const plain = await guard(spawnSandboxed(['true'], opt(mode)), HANG, 'a later plain run')
    assert.equal(plain.exitCode, 0)
  })

  test(`${mode.name}: a terminal kept open and never read: kill() ends the pending write (EPIPE) and the run`, async () => {
    const full = 'sys.stdout.write("full\\n"); sys.stdout.flush(); time.sleep(600)'
    const r = await pendingWrite(holder(true, full), opt(mode, { pty: true }), async (proc) => {
      await until(proc, 'full')
      proc.kill('SIGKILL')
    })
    assert.equal(r.signal, 'SIGKILL')
  })

  test(`${mode.name}: a terminal kept open and never read: the timeout ends the pending write (EPIPE) and the run`, async () => {
    const r = await pendingWrite(holder(true, 'time.sleep(600)'), opt(mode, { pty: true, timeout: 5000 }))
    assert.equal(r.timedOut, true)
  })

  test(`${mode.name}: stdin a pipe the command never reads, then it exits: the pending write fails with EPIPE and the run ends`, async () => {
    const r = await pendingWrite(holder(false, 'sys.exit(0)'), opt(mode, { stdin: 'pipe' }))
    assert.equal(r.exitCode, 0)
  })
}

// A failed run may leave spinning runtime threads behind that keep the process alive.
test.after(() => setTimeout(() => process.exit(process.exitCode ?? 0), 500).unref())
