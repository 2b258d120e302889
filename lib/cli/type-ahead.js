'use strict'
// Only keys typed after one of our questions appeared may answer it. With --ask the command's
// stdin is /dev/null, so what the user types during the run (the "y" for a question the command
// printed itself, then faked a denial) waits in the terminal's input queue, and the next read, our
// question's, took it: "Run again without the sandbox?" answered before anyone saw it.
//
// So around each question: what the terminal holds is dropped (tcflush, through the addon: Node
// has none), the question is shown, and what arrives in the next GUARD_MS is dropped too. Those
// keys were already on their way: nobody reads a question and answers it within 100 ms (a
// person's fastest reaction to something new on the screen is about twice that, and over ssh the
// round trip adds to it), so they answer what was on the screen before. Echo is off meanwhile
// (raw mode), so dropped keys never show next to the question.

/** How long after a question appears keys are still dropped. */
const GUARD_MS = 100

/** Drop what `input` (a tty ReadStream on descriptor `fd`, paused, nobody listening) holds unread. */
function discardPendingInput(input, fd) {
  // What the stream already took from the terminal (a tty stream reads a chunk ahead once paused).
  while (input.readableLength > 0 && input.read() !== null);
  require('../../binding.js').discardTerminalInput(fd)
}

/**
 * Show a question on the terminal `input` (`show()` writes it) so that only keys typed after it
 * appeared can answer it. `fd`: the stream's descriptor (a stream made from one does not carry
 * it; process.stdin does). Resolves, the terminal in its mode from before, when the caller may
 * read the answer.
 */
async function askFresh(input, show, fd = input.fd) {
  const wasRaw = Boolean(input.isRaw)
  const restore = () => {
    try {
      input.setRawMode(wasRaw)
    } catch {
      // The terminal is gone: nothing to restore.
    }
  }
  // Also restored when the CLI exits meanwhile (a signal).
  process.on('exit', restore)
  try {
    input.setRawMode(true)
    discardPendingInput(input, fd)
    show()
    await new Promise((resolve) => setTimeout(resolve, GUARD_MS))
    discardPendingInput(input, fd)
  } finally {
    restore()
    process.off('exit', restore)
  }
}

/**
 * Ask `prompt` on the terminal `input` (descriptor `fd`) and read the line typed after it
 * appeared: the terminal's own line editing and echo (cooked mode), so nothing but the question is
 * written by us. Resolves with the line, or null at end of input or on Ctrl-C (SIGINT, which the
 * CLI's own handlers also see: the caller exits as they decide).
 */
async function askLine(input, prompt, fd = input.fd) {
  // On a line of its own, cleared below: nothing the command drew there reads as part of it.
  await askFresh(input, () => process.stderr.write(require('./terminal-reset').freshLine() + prompt), fd)
  const readline = require('node:readline')
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input, terminal: false })
    let answer = null
    const interrupted = () => rl.close()
    process.once('SIGINT', interrupted)
    rl.once('line', (line) => {
      answer = line
      rl.close()
    })
    rl.once('close', () => {
      process.off('SIGINT', interrupted)
      resolve(answer)
    })
  })
}

module.exports = { askFresh, askLine }
