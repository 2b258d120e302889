'use strict'
// `sandspawn -- python3` on a terminal: the command runs in a pty of the terminal's size, and the
// CLI becomes a plain relay: our terminal goes raw (Ctrl-C, Ctrl-Z and every key reach the
// command's terminal as bytes, where its line discipline turns them into signals for its
// foreground job), window changes are forwarded, and our terminal is restored on every way out:
// normal end, error, and the signals the CLI forwards (the command's end makes wait() settle).

const { forwardStdin } = require('./stdin')
const { pendingInput } = require('./pending-input')
const { outputProcessingOff } = require('./tty-output')

/** Whether a run gets a pty: both stdin and stdout are terminals and nothing asked otherwise. */
function wantsTerminal(values, isatty) {
  return isatty(0) && isatty(1) && !values['no-pty'] && !values.json && !values.ask
}

function size(stdout) {
  return { cols: stdout.columns || 80, rows: stdout.rows || 24 }
}

/**
 * Run in a pty. `stdin`/`stdout` are the CLI's tty streams (parameters for the tests' sake).
 * Resolves with the result; our terminal is back in its original mode when it settles.
 */
async function runInTerminal(sandspawn, command, options, attach, { stdin = process.stdin, stdout = process.stdout } = {}) {
  const pty = { ...size(stdout) }
  if (process.env.TERM) pty.term = process.env.TERM
  // What the terminal holds already, read while it is still cooked: an end of input (script(1)
  // with its stdin at end of file) would otherwise become a NUL byte once the terminal is raw.
  const pending = await pendingInput(stdin)
  // Raw before the command starts: it may print a prompt and read a key at once, and the key must
  // not be cooked (nor the prompt seen while our terminal still echoes). Not after the end of
  // input: no key will come.
  const restore = pending.ended ? () => {} : rawMode(stdin)
  const restoreOutput = outputProcessingOff(typeof stdout.fd === 'number' ? stdout.fd : 1)
  let proc
  try {
    proc = await sandspawn.startSandboxed(command, { ...options, pty })
  } catch (err) {
    restoreOutput()
    restore()
    throw err
  }
  attach(proc)
  const onResize = () => {
    const { cols, rows } = size(stdout)
    proc.resize(cols, rows)
  }
  stdout.on('resize', onResize)
  // Writes reach the command in call order: what was pending first, then what follows.
  for (const chunk of pending.chunks) proc.write(chunk).catch(() => {})
  let stopStdin = () => {}
  if (pending.ended) proc.end()
  else stopStdin = forwardStdin(stdin, proc)
  try {
    return await proc.wait()
  } finally {
    stdout.off('resize', onResize)
    stopStdin()
    restoreOutput()
    restore()
  }
}

/** Put the terminal in raw mode; returns the (idempotent) restore, also run if the CLI exits first. */
function rawMode(stdin) {
  if (typeof stdin.setRawMode !== 'function') return () => {}
  const wasRaw = Boolean(stdin.isRaw)
  stdin.setRawMode(true)
  let restored = false
  const restore = () => {
    if (restored) return
    restored = true
    process.off('exit', restore)
    try {
      stdin.setRawMode(wasRaw)
    } catch {
      // The terminal is gone (hung up): nothing to restore.
    }
  }
  process.on('exit', restore)
  return restore
}

module.exports = { wantsTerminal, runInTerminal }
