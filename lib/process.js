'use strict'

const native = require('../binding.js')
const { SandboxError, AbortError, invalid, fromRecord, fromThrown } = require('./errors')
const { normalizeOptions, hostInfo, safeCallback } = require('./normalize')
const { ownData, ownProperties, onlyKnownKeys } = require('./own-data')
const { TerminalListeners } = require('./terminal-listeners')
const { asker } = require('./network-ask')

/**
 * Each result's resolved policy, for `classifySandboxDenial(result)` and escalation rules: the
 * binding's JSON text, parsed the first time it is asked for (`policyOf`), since most results never
 * are (a workspace-write policy is some 30 KB: made an object for every result, 0.7 ms a run).
 */
const resolvedPolicies = new WeakMap()

/** The resolved policy of `result` (a SpawnResult this module made), or undefined. */
function policyOf(result) {
  const held = resolvedPolicies.get(result)
  if (typeof held !== 'string') return held
  const policy = JSON.parse(held)
  resolvedPolicies.set(result, policy)
  return policy
}

/** The native result record, shaped as the public SpawnResult. */
function toSpawnResult(record) {
  // The binding leaves absent fields (None) unset: read own ones only, not Object.prototype's.
  const raw = Object.assign(Object.create(null), record)
  const result = {
    command: raw.command,
    cwd: raw.cwd,
    pid: raw.pid,
    exitCode: raw.exitCode ?? null,
    signal: raw.signal ?? null,
    stdout: raw.stdout,
    stderr: raw.stderr,
    // When only one stream wrote, the interleaving is that stream (sent once, not twice).
    aggregatedOutput: raw.aggregatedOutput ?? (raw.aggregatedSameAs === 'stderr' ? raw.stderr : raw.stdout),
    truncated: raw.truncated,
    omittedBytes: { stdout: raw.omittedStdout, stderr: raw.omittedStderr },
    timedOut: raw.timedOut,
    durationMs: raw.durationMs,
    sandboxType: raw.sandboxType,
    sandboxDenied: raw.sandboxDenied,
    denial: raw.denial ?? null,
    sandboxDetails: raw.sandboxDetails,
    toolCaches: raw.toolCaches ? raw.toolCaches : { mode: 'none', store: null, hostContent: null, caches: [] },
    hostRisks: raw.hostRisks ?? [],
    changeSet: raw.changeSet ?? null,
    networkDenials: raw.networkDenials ?? [],
    networkDenialsOmitted: raw.networkDenialsOmitted ?? 0,
    networkDecisions: raw.networkDecisions ?? [],
    networkDecisionsOmitted: raw.networkDecisionsOmitted ?? 0,
    networkRepeatedAllowsOmitted: raw.networkRepeatedAllowsOmitted ?? 0,
    appliedLimits: raw.appliedLimits,
    limitExceeded: raw.limitExceeded ?? null,
    resourceUsage: raw.resourceUsage,
  }
  if (raw.pty) result.pty = raw.pty
  resolvedPolicies.set(result, raw.policy)
  return result
}

function abortError(signal, result) {
  const err = new AbortError('The operation was aborted', signal && signal.reason !== undefined ? { cause: signal.reason } : undefined)
  if (result !== undefined) err.result = result
  return err
}

/**
 * Start a run. Returns the native handle and a promise of the settled outcome that never rejects
 * (so an unobserved failure is never an unhandled rejection).
 */
function launch(command, options, entry) {
  const opts = normalizeOptions(options)
  const argv = ownData(command, 'command')
  if (opts.signal && opts.signal.aborted) throw abortError(opts.signal)
  // A terminal's output also goes to onData listeners, which can only be added once it runs.
  // spawnSandboxed gives no process to call onData on: nothing would ever take what they keep.
  const terminal = opts.data.pty && entry === 'start' ? new TerminalListeners(safeCallback(opts.onOutput), opts.data.maxBuffer) : null
  let handle
  let aborted = false
  let over = false
  let onAbort
  // The listener goes on before the command starts: a signal whose addEventListener throws (a
  // look-alike) is a bad option while nothing runs yet, not a plain Error with the command running.
  if (opts.signal) {
    onAbort = () => {
      aborted = true
      if (handle) handle.kill()
    }
    try {
      opts.signal.addEventListener('abort', onAbort, { once: true })
    } catch (err) {
      throw invalid('options.signal', `its addEventListener threw: ${err && err.message ? err.message : String(err)}`)
    }
  }
  const unlisten = () => {
    try {
      if (onAbort) opts.signal.removeEventListener('abort', onAbort)
    } catch {
      // A look-alike's throwing removeEventListener: the outcome stands (settled never rejects).
    }
  }
  try {
    const onOutput = terminal ? terminal.dispatch : safeCallback(opts.onOutput)
    const onRequest = opts.onRequest && asker(opts.onRequest, Array.isArray(argv) ? argv : [], () => over)
    handle = native.startProcess(argv, opts.data, hostInfo(opts.extendEnv), entry, opts.input, onOutput, onRequest)
  } catch (err) {
    unlisten()
    throw fromThrown(err, 'command/options')
  }
  // Aborted while the start was under way (a listener of the signal's own ran inside it).
  if (aborted) handle.kill()
  // The pending wait() keeps Node's event loop alive while the command runs, like child_process.
  const settled = handle.wait().then((tagged) => {
    over = true
    unlisten()
    if (!tagged.ok) return { error: fromRecord(tagged.error) }
    const result = toSpawnResult(tagged.value)
    if (aborted) return { error: abortError(opts.signal, result) }
    return { result }
  })
  return { handle, settled, signal: opts.signal, terminal }
}

/** A terminal size argument: NaN and Infinity cannot cross into the binding's JSON (the core checks the rest). */
function dimension(name, value) {
  if (typeof value === 'number' && !Number.isFinite(value)) throw invalid(`resize(): ${name}`, `must be an integer from 1 to 65535, got ${value}`)
  return ownData(value, `resize(): ${name}`)
}

function nonNegative(name, value, fallback) {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw invalid(name, `must be a finite, non-negative number, got ${value === null ? 'null' : typeof value === 'number' ? value : typeof value}`)
  return value
}

async function unwrap(settled) {
  const outcome = await settled
  if (outcome.error) throw outcome.error
  return outcome.result
}

/** A running sandboxed command (see `startSandboxed`). */
class SandboxedProcess {
  #handle
  #settled
  #terminal
  // write() and end() run in call order, like a stream's: each native call is its own task and
  // two of them could otherwise overtake each other (`p.write(x); p.end()` losing `x`).
  #stdinQueue = Promise.resolve()
  constructor(handle, pid, settled, terminal) {
    this.#handle = handle
    this.#settled = settled
    this.#terminal = terminal || null
    /** The host pid of the spawned process (bwrap under a Linux sandbox). */
    this.pid = pid
    Object.freeze(this)
  }

  /** Write to stdin (needs `stdin: 'pipe'`). Writes and `end()` happen in call order, awaited or not. */
  async write(data) {
    let bytes
    // A copy: the write may happen after the caller has reused its buffer.
    if (typeof data === 'string') bytes = Buffer.from(data, 'utf8')
    else if (data instanceof Uint8Array) bytes = Buffer.from(data)
    else throw invalid('data', `must be a string, Buffer or Uint8Array, got ${data === null ? 'null' : typeof data}`)
    const done = this.#stdinQueue.then(() => this.#handle.write(bytes))
    this.#stdinQueue = done.catch(() => {})
    const tagged = await done
    if (!tagged.ok) throw fromRecord(tagged.error)
  }

  /** Close stdin, after every write called before. */
  end() {
    this.#stdinQueue = this.#stdinQueue.then(() => this.#handle.end()).catch(() => {})
  }

  /** Signal the whole tree (default: `killSignal`), SIGKILL after `forceKillAfterDelay`. */
  kill(signal) {
    if (signal !== undefined && typeof signal !== 'string') throw invalid('signal', `must be a signal name such as 'SIGTERM', got ${typeof signal}`)
    try {
      this.#handle.kill(signal)
    } catch (err) {
      throw fromThrown(err, 'signal')
    }
  }

  /** Settles like `spawnSandboxed`; may be called more than once. */
  wait() {
    return unwrap(this.#settled)
  }

  #needsTerminal(member) {
    if (!this.#terminal) throw invalid('pty', `${member}() needs a terminal: start the process with pty: true`)
    return this.#terminal
  }

  /** Resize the terminal (pty); the command's foreground job gets SIGWINCH. */
  resize(cols, rows) {
    this.#needsTerminal('resize')
    const size = [dimension('cols', cols), dimension('rows', rows)]
    try {
      this.#handle.resize(...size)
    } catch (err) {
      throw fromThrown(err, 'resize')
    }
  }

  /**
   * Listen to the terminal's output as it arrives (raw bytes). The first listener also gets what
   * was printed before it subscribed (up to `maxBuffer` bytes), right after this call returns.
   */
  onData(listener) {
    const terminal = this.#needsTerminal('onData')
    if (typeof listener !== 'function') throw invalid('listener', `must be a function, got ${typeof listener}`)
    const wrapped = safeCallback(listener)
    const remove = terminal.add((data) => wrapped(data))
    return { dispose: () => void remove() }
  }

  /** Stop reading the terminal (the command blocks once it is full); `resume()` restarts. */
  pause() {
    this.#needsTerminal('pause')
    this.#handle.setPaused(true)
  }

  resume() {
    this.#needsTerminal('resume')
    this.#handle.setPaused(false)
  }

  /**
   * Terminal output not read yet: resolves when there is some and `waitMs` has passed, or when
   * the process has ended (`exited: true` once everything was read).
   */
  async read(options) {
    this.#needsTerminal('read')
    if (options !== undefined && (options === null || typeof options !== 'object')) throw invalid('read', 'expects an object like { waitMs: 100 }')
    const own = options === undefined ? Object.create(null) : ownProperties(options, 'read')
    onlyKnownKeys(own, 'read', ['waitMs', 'maxBytes'])
    const waitMs = nonNegative('waitMs', own.waitMs, 0)
    const maxBytes = nonNegative('maxBytes', own.maxBytes, Number.MAX_SAFE_INTEGER)
    if (maxBytes < 1) throw invalid('maxBytes', 'must be at least 1')
    const r = await this.#handle.read(waitMs, maxBytes)
    if (!r.ok) throw fromRecord(r.error)
    return { data: r.data, exited: r.exited, omittedBytes: r.omittedBytes }
  }
}

async function spawnSandboxed(command, options) {
  const { settled } = launch(command, options, 'spawn')
  return unwrap(settled)
}

async function startSandboxed(command, options) {
  const { handle, settled, terminal } = launch(command, options, 'start')
  const started = await handle.started()
  if (!started.ok) {
    // The same failure is in `settled`; observe it there so it is not reported twice.
    const outcome = await settled
    if (outcome.error) throw outcome.error
    // The run ended before its process was spawned (its timeout passed while the sandbox was set
    // up): there is no process to give, and the rejection carries the run's result.
    const err = fromRecord(started.error)
    if (outcome.result) err.result = outcome.result
    throw err
  }
  return new SandboxedProcess(handle, started.value, settled, terminal)
}

module.exports = { spawnSandboxed, startSandboxed, SandboxedProcess, resolvedPolicies, policyOf, abortError, SandboxError }
