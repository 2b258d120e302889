'use strict'
// Forwarding the CLI's stdin to the command (`echo data | sandspawn -- cat`), one chunk at a time:
// the next chunk is read only once the previous one is in the command's stdin pipe, so a command
// that reads slowly slows the producer down instead of growing a buffer in the CLI.

/**
 * Stream `input` into `proc` (a SandboxedProcess started with `stdin: 'pipe'`) and close the
 * command's stdin at end of input. Returns `detach()`, which stops reading `input` (call it when
 * the command has ended: a command that never read its stdin must not keep the CLI waiting on it).
 */
function forwardStdin(input, proc) {
  let detached = false
  // Writes and the final end() are chained: they are separate native calls, and the runtime may
  // run a later end() before an earlier write() (which then fails: data lost), or reorder writes.
  let writing = Promise.resolve()
  const detach = () => {
    if (detached) return
    detached = true
    input.off('data', onData)
    input.off('end', onEnd)
    input.off('error', onEnd)
    input.pause()
    input.on('error', () => {}) // a late read error on a stdin we no longer read is no one's concern
    input.destroy()
  }
  function onData(chunk) {
    input.pause()
    writing = writing
      .then(() => proc.write(chunk))
      .then(
        () => detached || input.resume(),
        // EPIPE: the command closed its stdin or ended; reading more of ours would be pointless.
        () => detach(),
      )
  }
  function onEnd() {
    detach()
    writing = writing.then(() => proc.end())
  }
  input.on('data', onData)
  input.once('end', onEnd)
  // An unreadable stdin (e.g. EBADF) counts as end of input.
  input.once('error', onEnd)
  // A stream paused before (pending-input.js reads the terminal first) stays paused otherwise.
  input.resume()
  return detach
}

module.exports = { forwardStdin }
