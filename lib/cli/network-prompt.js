'use strict'
// `--ask` on a terminal with an allow-list: the proxy's questions about hosts on neither list,
// asked on the terminal while the command runs and its request waits:
//   sandspawn: allow registry.example.org:443 for this run? [y/N/a] (a = this and every later host, no more questions)
// y: this host and port for the rest of the run; a: this one and every host asked about later in
// the run; anything else (n, Enter): refused for the rest of the run; Ctrl-C: refused, and the CLI
// is interrupted like any Ctrl-C. One question at a time; the command's output is held while a
// question is on the screen and written after the answer, so the two never interleave. Only a key
// typed after the question appeared answers it (./type-ahead). The key is read in raw mode (no
// Enter needed, nothing echoed but the answer), and the terminal's mode is restored right after.
//
// What is held is bounded: past HOLD_BYTES the command's output waits (../output-hold: the addon
// reads no more, the command blocks on its pipe) until the answer; a command that wrote without
// pause while nobody answered grew the CLI to 961 MiB in 13 s (an attacker's review). A run that
// ends with a question up (`finish()`) has it ended as refused and its held output shown.

const { printable } = require('./printable')
const { freshLine } = require('./terminal-reset')
const { askFresh } = require('./type-ahead')

// What each key does, said on the question itself: an `a` allows every host the run asks about
// later, without asking, and a bare `[y/N/a]` left that to be guessed (found by a review of the
// CLI). A host refused already (at its question, or on the deny list) stays refused.
const CHOICES = '[y/N/a] (a = this and every later host, no more questions) '

/** Output held while a question is on the screen before the command's output is made to wait. */
const HOLD_BYTES = 1024 * 1024
/**
 * Past this, held output is dropped (and the count said after the question): only if the output
 * did not wait, which the addon bounds to 64 chunks of 64 KiB (src/binding.rs, JsSink).
 */
const DROP_BYTES = 16 * 1024 * 1024

class NetworkPrompt {
  /**
   * `input`: the terminal (a tty ReadStream); `write(stream, data)`: how output reaches the screen;
   * `fresh()`: what starts a line of ours after the command's output (see ./terminal-reset), asked
   * at each such line: it depends on what the output did so far.
   */
  constructor({ input = process.stdin, write, fresh = () => freshLine() }) {
    this.input = input
    this.write = write
    this.fresh = fresh
    this.queue = Promise.resolve()
    this.asking = false
    this.held = []
    this.heldBytes = 0
    this.dropped = 0
    // While output waits: the promise its chunks get, and what settles it (see release()).
    this.waiting = null
    this.wake = null
    // The run is over: nothing more is asked (see finish()).
    this.ended = false
    // Ends the wait for a key early (the run ended).
    this.stopWaiting = null
    this.allowAll = false
    // host:port -> the run-long answer given: the proxy asks about plain HTTP and tunnels apart
    // (an `allow-run` for one is not one for the other), but the question on the screen names only
    // the host and port, so its answer stands for both and the user is not asked twice.
    this.answered = new Map()
    this.onRequest = (req) => {
      const answer = this.queue.then(() => this.ask(req))
      this.queue = answer.catch(() => {})
      return answer
    }
  }

  /**
   * The command's output: on the screen now, or after the question on it is answered. Returns a
   * promise (settled then) once enough is held: until it settles the run's output waits.
   */
  output(stream, data) {
    if (!this.asking) return void this.show(stream, data)
    if (this.heldBytes >= DROP_BYTES) this.dropped += data.length
    else {
      this.held.push([stream, data])
      this.heldBytes += data.length
    }
    if (this.heldBytes < HOLD_BYTES) return undefined
    if (!this.waiting) this.waiting = new Promise((resolve) => (this.wake = resolve))
    return this.waiting
  }

  /** The question is off the screen: what was held is shown, in order, and output flows again. */
  release() {
    this.asking = false
    const held = this.held
    this.held = []
    this.heldBytes = 0
    for (const [stream, data] of held) this.show(stream, data)
    if (this.dropped > 0) {
      this.write('stderr', Buffer.from(`${this.fresh()}sandspawn: ${this.dropped} bytes of the command's output were dropped while the question was on the screen\n`))
      this.dropped = 0
    }
    const wake = this.wake
    this.waiting = this.wake = null
    if (wake) wake()
  }

  /**
   * The run is over: a question still on the screen is ended (refused, said on its line), later
   * ones are not asked, and the held output is shown. Resolves once all that is done.
   */
  finish() {
    this.ended = true
    if (this.stopWaiting) this.stopWaiting()
    return this.queue
  }

  show(stream, data) {
    this.write(stream, data)
  }

  async ask({ host, port }) {
    // A host refused at its question stays refused after an `a` (which the question says is for
    // later hosts): the proxy asks about one again once it keeps too many refusals.
    const given = this.answered.get(`${host}:${port}`)
    if (given) return given
    if (this.allowAll) return 'allow-run'
    if (this.ended) return 'deny-run'
    this.asking = true
    try {
      const question = Buffer.from(`${this.fresh()}sandspawn: allow ${printable(host)}:${port} for this run? ${CHOICES}`)
      // Keys typed before the question appeared (for one the command printed) never answer it.
      await askFresh(this.input, () => this.write('stderr', question))
      const key = this.ended ? null : await this.key()
      if (key === null) {
        this.write('stderr', Buffer.from('not answered: the command ended (refused)\n'))
        return 'deny-run'
      }
      const choice = key === 'y' || key === 'Y' ? 'yes' : key === 'a' || key === 'A' ? 'all' : 'no'
      this.write('stderr', Buffer.from(`${choice === 'no' ? 'n' : choice === 'all' ? 'a' : 'y'}\n`))
      if (key === '\x03') process.kill(process.pid, 'SIGINT')
      if (choice === 'all') this.allowAll = true
      const answer = choice === 'no' ? 'deny-run' : 'allow-run'
      this.answered.set(`${host}:${port}`, answer)
      return answer
    } finally {
      this.release()
    }
  }

  /**
   * One key from the terminal, read in raw mode; the terminal's mode is restored before it returns.
   * Null when the run ended first (finish()).
   */
  key() {
    const input = this.input
    return new Promise((resolve) => {
      const wasRaw = Boolean(input.isRaw)
      const restore = () => {
        try {
          input.setRawMode(wasRaw)
        } catch {
          // The terminal is gone: nothing to restore.
        }
      }
      const done = (data) => {
        this.stopWaiting = null
        input.off('data', done)
        input.off('end', ended)
        process.off('exit', restore)
        restore()
        input.pause()
        resolve(data === null || typeof data === 'string' ? data : data.toString('utf8', 0, 1))
      }
      const ended = () => done('')
      this.stopWaiting = () => done(null)
      // Also restored when the CLI exits with the question open (a signal ended the run).
      process.on('exit', restore)
      input.setRawMode(true)
      input.on('data', done)
      input.once('end', ended)
      input.resume()
    })
  }
}

module.exports = { NetworkPrompt }
