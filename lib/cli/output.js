'use strict'
// How the CLI reports and ends: text on stderr or `--json` on stdout, then the exit status once
// stdout has been flushed.

const { cliMessage, exitCodeForError } = require('./messages')
const { printable, jsonText } = require('./printable')

/** Multi-line text with each line escaped (`printable`), the line breaks kept. */
function lines(text) {
  return String(text).split('\n').map(printable).join('\n')
}

let stdoutBroken = false
const brokenListeners = []

// The reader of our stdout went away (`sandspawn -- yes | head -1`). Node ignores SIGPIPE, so
// without this the write error would crash the CLI with a stack trace, or the command would keep
// writing into a pipe nobody reads.
process.stdout.on('error', (err) => {
  if (err && err.code !== 'EPIPE') throw err
  if (stdoutBroken) return
  stdoutBroken = true
  for (const f of brokenListeners) f()
})
process.stderr.on('error', () => {})

function onStdoutBroken(listener) {
  brokenListeners.push(listener)
}

function writeStdout(data) {
  if (!stdoutBroken) process.stdout.write(data)
}

/** `value` as JSON on stdout, nothing in it a terminal acts on (see printable.js jsonText). */
function printJson(value) {
  writeStdout(jsonText(value) + '\n')
}

function exit(code) {
  if (stdoutBroken) process.exit(code)
  process.stdout.write('', () => process.exit(code))
}

/** Report an error that kept the command from running (or sandspawn from working), then exit. */
function fail(err, { json = false, values = {}, subcommand = 'run' } = {}) {
  const message = cliMessage(err, values)
  const internal = !(err && typeof err.code === 'string')
  if (json) {
    printJson({ error: { code: internal ? 'ERR_SANDSPAWN_INTERNAL' : err.code, message } })
  } else {
    // Messages and the sandbox tool's words carry paths and names from the command and the
    // workspace: each line escaped, so none can move the cursor, erase or hide a line. An error can
    // follow the command's output (a run cut short), so the terminal's state is ended first too.
    process.stderr.write(`${require('./terminal-reset').freshLine()}sandspawn: ${lines(internal && err && err.stack ? err.stack : message)}\n`)
    if (err && typeof err.stderr === 'string' && err.stderr.trim() && !message.includes(err.stderr.trim())) {
      process.stderr.write(`sandspawn: the sandbox tool said: ${lines(err.stderr.trim())}\n`)
    }
    if (err && err.usage) process.stderr.write(require('./help').usageHint(err.subcommand ?? subcommand) + '\n')
  }
  exit(exitCodeForError(err))
}

module.exports = { fail, exit, printJson, writeStdout, onStdoutBroken }
