'use strict'
// `--ask` on a terminal with an allow-list: the proxy's questions about hosts on neither list,
// asked on the terminal while the command runs and its request waits:
//   sandspawn: allow registry.example.org:443 for this run? [y/N/a]
// y: this host and port for the rest of the run; a: this one and every host asked about later in
// the run; anything else (n, Enter): refused for the rest of the run; Ctrl-C: refused, and the CLI
// is interrupted like any Ctrl-C. One question at a time; the command's output is held while a
// question is on the screen and written after the answer, so the two never interleave. Only a key
// typed after the question appeared answers it (./type-ahead). The key is read in raw mode (no
// Enter needed, nothing echoed but the answer), and the terminal's mode is restored right after.

const { printable } = require('./printable')
const { terminalReset } = require('./terminal-reset')
const { askFresh } = require('./type-ahead')

class NetworkPrompt {
  /**
   * `input`: the terminal (a tty ReadStream); `write(stream, data)`: how output reaches the screen;
   * `reset()`: what ends any state the command's output left the screen in (see ./terminal-reset),
   * asked at each question: it depends on what the output did so far.
   */
  constructor({ input = process.stdin, write, reset = () => terminalReset() }) {
    this.input = input
    this.write = write
    this.reset = reset
    this.queue = Promise.resolve()
    this.asking = false
    this.held = []
    this.allowAll = false
    // Whether the screen's cursor is at the start of a line (a question must start on its own).
    this.atLineStart = true
    this.onRequest = (req) => {
      const answer = this.queue.then(() => this.ask(req))
      this.queue = answer.catch(() => {})
      return answer
    }
  }

  /** The command's output: on the screen now, or after the question on it is answered. */
  output(stream, data) {
    if (this.asking) return void this.held.push([stream, data])
    this.show(stream, data)
  }

  show(stream, data) {
    if (data.length > 0) this.atLineStart = data[data.length - 1] === 0x0a
    this.write(stream, data)
  }

  async ask({ host, port }) {
    if (this.allowAll) return 'allow-run'
    this.asking = true
    try {
      const lead = this.atLineStart ? '' : '\n'
      const question = Buffer.from(`${this.reset()}${lead}sandspawn: allow ${printable(host)}:${port} for this run? [y/N/a] `)
      // Keys typed before the question appeared (for one the command printed) never answer it.
      await askFresh(this.input, () => this.write('stderr', question))
      const key = await this.key()
      const choice = key === 'y' || key === 'Y' ? 'yes' : key === 'a' || key === 'A' ? 'all' : 'no'
      this.write('stderr', Buffer.from(`${choice === 'no' ? 'n' : choice === 'all' ? 'a' : 'y'}\n`))
      this.atLineStart = true
      if (key === '\x03') process.kill(process.pid, 'SIGINT')
      if (choice === 'all') this.allowAll = true
      return choice === 'no' ? 'deny-run' : 'allow-run'
    } finally {
      this.asking = false
      const held = this.held
      this.held = []
      for (const [stream, data] of held) this.show(stream, data)
    }
  }

  /** One key from the terminal, read in raw mode; the terminal's mode is restored before it returns. */
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
        input.off('data', done)
        input.off('end', ended)
        process.off('exit', restore)
        restore()
        input.pause()
        resolve(typeof data === 'string' ? data : data.toString('utf8', 0, 1))
      }
      const ended = () => done('')
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
