'use strict'
// SIGINT, SIGTERM and SIGHUP to the CLI go to the command's whole tree (the command runs in its
// own session, so a terminal's Ctrl-C reaches only the CLI). A second signal SIGKILLs the tree.
// The CLI then exits 128 + n for the first signal it got, as a shell reports it (130 for Ctrl-C).

const { signals: NUMBERS } = require('node:os').constants

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP']

/**
 * Start catching the signals. `attach(target)` names what receives them: anything with
 * `kill(signal)` (a SandboxedProcess); signals caught before that are delivered on attach.
 */
function catchSignals() {
  let received = null
  let target = null
  const handlers = FORWARDED.map((name) => {
    const handler = () => {
      if (received === null) {
        received = name
        if (target) target.kill(name)
      } else if (target) {
        target.kill('SIGKILL')
      }
    }
    process.on(name, handler)
    return [name, handler]
  })
  return {
    attach(t) {
      target = t
      if (received !== null) target.kill(received)
    },
    /** The first signal received, or null. */
    get received() {
      return received
    },
    /** 128 + n for the first signal received (null when none was). */
    exitCode() {
      return received === null ? null : 128 + NUMBERS[received]
    },
    release() {
      for (const [name, handler] of handlers) process.off(name, handler)
    },
  }
}

module.exports = { catchSignals, FORWARDED }
