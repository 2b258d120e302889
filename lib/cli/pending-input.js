'use strict'
// What our terminal already holds before we make it raw. script(1) whose own stdin is at its end
// (`script -c 'sandspawn cat' < /dev/null`) writes the terminal's end-of-file character at once,
// usually before the CLI has started. A cooked terminal keeps it as an end-of-file mark in the
// line not yet read, and switching it to raw turns that mark into a NUL byte: the command read
// `^@` instead of the end of its input, and waited for more. Read while still cooked, the mark is
// the end of our stdin (and complete lines typed ahead are data, kept for the command).

/**
 * Reads what `stdin` (a cooked tty stream) has ready now, without waiting for more:
 * `{ chunks, ended }`. Two turns of the event loop give libuv one poll of the descriptor.
 */
function pendingInput(stdin) {
  return new Promise((resolve) => {
    const chunks = []
    let ended = false
    const onData = (d) => chunks.push(d)
    const onEnd = () => {
      ended = true
    }
    stdin.on('data', onData)
    stdin.once('end', onEnd)
    setImmediate(() =>
      setImmediate(() => {
        stdin.off('data', onData)
        stdin.off('end', onEnd)
        if (!ended) stdin.pause()
        resolve({ chunks, ended })
      }),
    )
  })
}

module.exports = { pendingInput }
