'use strict'
// `sandspawn [options] COMMAND`: run it with its output streamed live (or the result as --json),
// our stdin forwarded to it (in a pty when stdin and stdout are terminals, see ./terminal),
// SIGINT/SIGTERM/SIGHUP forwarded to its tree, and its exit status as ours (128 + n for a signal).

const { isatty } = require('node:tty')
const { signals: NUMBERS } = require('node:os').constants
const { toSpawnOptions } = require('./options')
const { catchSignals } = require('./signals')
const { loadSandspawn } = require('./library')
const out = require('./output')

async function run(command, values) {
  const json = Boolean(values.json)
  const options = toSpawnOptions(values)
  const signals = catchSignals()
  // What stops the run: the process, or (with --ask) an abort. Set once the run has started.
  let target = null
  let stdoutBroken = false
  const attach = (t) => {
    target = t
    signals.attach(t)
    // Output can arrive (and fail to be written) before the start is reported.
    if (stdoutBroken) t.kill('SIGPIPE')
  }
  // Nobody reads our stdout any more: end the command the way a shell pipeline would.
  out.onStdoutBroken(() => {
    stdoutBroken = true
    if (target) target.kill('SIGPIPE')
  })
  if (!json) {
    const { observe } = require('./terminal-reset')
    // What reaches a terminal loses its OSC 52 strings (the host's clipboard: ./clipboard-guard).
    const guard = new (require('./clipboard-guard').ClipboardGuard)()
    const shown = (stream, data) => (stream.isTTY ? guard.filter(data) : data)
    options.onOutput = (chunk) => {
      observe(chunk.data)
      return chunk.stream === 'stdout' ? out.writeStdout(shown(process.stdout, chunk.data)) : process.stderr.write(shown(process.stderr, chunk.data))
    }
  }
  const sandspawn = loadSandspawn()
  // Questions (--ask, --review) are asked only where they are seen: stdin and stderr one terminal.
  const notAsking = require('./asking-terminal').whyNotAsking()
  const terminal = require('./terminal')
  let result
  let announced = false
  try {
    if (values.ask && notAsking === null) {
      // The terminal stays with the CLI, which asks on it; the command gets /dev/null.
      ;({ result, announced } = await require('./ask').runAsking(sandspawn, command, options, attach))
    } else if (terminal.wantsTerminal(values, isatty)) {
      result = await terminal.runInTerminal(sandspawn, command, options, attach)
    } else {
      result = await runForwardingStdin(sandspawn, command, options, true, attach)
    }
  } catch (err) {
    if (err && err.name === 'AbortError') {
      if (json && err.result) out.printJson(err.result)
      return out.exit(signals.exitCode() ?? 130)
    }
    // A signal that came while the sandbox was being set up still decides the exit status.
    if (signals.received !== null) return out.exit(signals.exitCode())
    return out.fail(err, { json, values })
  }
  await report(result, { json, values, options, announced, notAsking })
  // --review: what the run wrote is a change set; ask what to do with it (with --json: pending).
  if (result.changeSet && !json) await require('./review').afterRun(result, sandspawn, notAsking === null)
  out.exit(signals.exitCode() ?? exitStatus(result))
}

async function runForwardingStdin(sandspawn, command, options, pipeStdin, attach) {
  const proc = await sandspawn.startSandboxed(command, { ...options, stdin: pipeStdin ? 'pipe' : 'ignore' })
  attach(proc)
  const stopStdin = pipeStdin ? require('./stdin').forwardStdin(process.stdin, proc) : null
  try {
    return await proc.wait()
  } finally {
    if (stopStdin) stopStdin()
  }
}

async function report(result, { json, values, options, announced, notAsking }) {
  // sandspawn's lines follow the command's output: nothing it printed may hide or disguise them.
  // Asked only once a line is said: it notes that a line of ours began, and when none is, the
  // review's lines that follow must still start a fresh one after the output.
  let first = true
  const say = (line) => {
    process.stderr.write((first ? require('./terminal-reset').freshLine() : '') + line + '\n')
    first = false
  }
  // In every mode, last: what the run left on the host that a tool could run later. Every line
  // before them is escaped too, but nothing printed after a warning can take it back.
  const warnHostRisks = () => {
    for (const risk of result.hostRisks || []) say(require('./host-risks').hostRiskLine(risk))
  }
  if (json) {
    warnHostRisks()
    out.printJson(result)
    return
  }
  if (result.denial && !announced && !result.escalated) {
    say(require('./denial-line').denialLine(result.denial, options, result.sandboxType))
    if (values.ask && notAsking !== null) say(`sandspawn: --ask: not asking to run again without the sandbox: ${notAsking}`)
  }
  // A path the command printed that is really in sandspawn's store (npm's log of a failed run).
  for (const note of await require('./cache-paths').cachePathNotes(result)) say(note)
  if (result.timedOut) say(`sandspawn: timed out after ${values.timeout} ms`)
  const exceeded = require('./limits').exceededLine(result)
  if (exceeded) say(exceeded)
  // A weaker sandbox than the user may think (the Landlock mode, a guarantee not given).
  const weaker = require('./weaker-line').weakerLine(result)
  if (weaker) say(weaker)
  warnHostRisks()
}

function exitStatus(result) {
  return result.exitCode !== null ? result.exitCode : 128 + (NUMBERS[result.signal] ?? 0)
}

module.exports = { run }
