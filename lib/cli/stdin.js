'use strict'
// Forwarding the CLI's stdin to the command (`echo data | sandspawn -- cat`), one chunk at a time:
// the next chunk is read only once the previous one is in the command's stdin pipe, so a command
// that reads slowly slows the producer down instead of growing a buffer in the CLI.

/**
 * Stream `input` into `proc` (a SandboxedProcess started with `stdin: 'pipe'`) and close the
 * command's stdin at end of input. Returns `stop()`, which detaches from `input` (call it when the
 * command has ended: a command that never read its stdin must not keep the CLI waiting for it).
 */
function forwardStdin(input, proc) {
  let stopped = false
  const stop = () => {
    if (stopped) return
    stopped = true
    input.off('data', onData)
    input.off('end', onEnd)
    input.off('error', onEnd)
    input.pause()
    input.destroy()
  }
  function onData(chunk) {
    input.pause()
    proc.write(chunk).then(
      () => stopped || input.resume(),
      // EPIPE: the command closed its stdin or ended; reading more of ours would be pointless.
      () => stop(),
    )
  }
  function onEnd() {
    if (stopped) return
    proc.end()
    stop()
  }
  input.on('data', onData)
  input.once('end', onEnd)
  // An unreadable stdin (e.g. EBADF) counts as end of input.
  input.once('error', onEnd)
  return stop
}

module.exports = { forwardStdin }
