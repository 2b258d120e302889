'use strict'

const { invalid } = require('./errors')
const { takeOnRequest } = require('./network-ask')
const { ownData, ownProperties, describe } = require('./own-data')
const { holdsOutput } = require('./output-hold')

/** Options the JavaScript layer consumes itself (functions, signals, bytes). */
const JS_ONLY = new Set(['signal', 'onOutput', 'input', 'approve'])
/** Numeric options that must be finite (NaN and Infinity cannot cross into JSON faithfully). */
const FINITE = ['timeout', 'forceKillAfterDelay']

function isAbortSignal(value) {
  return (
    value != null &&
    typeof value === 'object' &&
    typeof value.aborted === 'boolean' &&
    typeof value.addEventListener === 'function' &&
    typeof value.removeEventListener === 'function'
  )
}

/**
 * A Buffer over `raw`'s bytes. A view of a detached (transferred) ArrayBuffer threw a bare
 * TypeError from Buffer.from, or from the binding: it is a bad option, named.
 */
function bytesOf(raw) {
  try {
    if (raw.byteLength === 0 && raw.buffer.byteLength === 0 && raw.byteOffset === 0 && isDetached(raw)) throw new TypeError('detached')
    return Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
  } catch (err) {
    throw invalid('options.input', `cannot be read: its ArrayBuffer is detached (transferred) (${err && err.message})`)
  }
}

/** Whether a view's ArrayBuffer was transferred away (Node 20 has no ArrayBuffer.prototype.detached). */
function isDetached(view) {
  if ('detached' in ArrayBuffer.prototype) return view.buffer.detached
  try {
    new Uint8Array(view.buffer)
    return false
  } catch {
    return true
  }
}

/**
 * The options' own properties, read once each (see own-data.js: nothing inherited reaches the
 * core, the signal or the callbacks). Throws SandboxError for a value that is not an options bag.
 */
function ownOptions(options) {
  if (options === undefined || options === null) return Object.create(null)
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw invalid('options', `expected an object, got ${Array.isArray(options) ? 'an array' : typeof options}`)
  }
  return ownProperties(options, 'options')
}

/** One option's value as the core sees it (a copy of its own data); `undefined`: not given. */
function coreValue(key, value) {
  if (FINITE.includes(key) && typeof value === 'number' && !Number.isFinite(value)) {
    throw invalid(`options.${key}`, `must be a finite, non-negative number of milliseconds, got ${value}`)
  }
  // Infinity is "no bound", which the core spells as the largest safe integer.
  if (key === 'maxBuffer' && value === Infinity) return Number.MAX_SAFE_INTEGER
  if (key === 'maxBuffer' && Number.isNaN(value)) throw invalid('options.maxBuffer', 'must be a positive number of bytes, got NaN')
  // An array was taken as { 0: 'A=1' } and its variables silently dropped.
  if (key === 'env' && value !== null && (typeof value !== 'object' || Array.isArray(value))) {
    throw invalid('options.env', `must be an object of strings like { NAME: 'value' }, got ${describe(value)}`)
  }
  // NaN and Infinity anywhere below (limits, network.requestTimeoutMs, ...) are refused by name there.
  return ownData(value, `options.${key}`, ['options.sandbox.network.onRequest'])
}

/**
 * Split user options into what the core validates (plain data, own properties only, in
 * null-prototype objects) and what JavaScript handles. Throws SandboxError for JS-level type
 * errors; everything else is checked by the core.
 */
function normalizeOptions(options) {
  const own = ownOptions(options)
  const data = Object.create(null)
  let onRequest
  for (const key of Object.keys(own)) {
    if (own[key] === undefined || JS_ONLY.has(key)) continue
    data[key] = coreValue(key, own[key])
    if (key === 'sandbox') onRequest = takeOnRequest(data.sandbox)
  }
  const signal = own.signal
  if (signal !== undefined && !isAbortSignal(signal)) throw invalid('options.signal', 'must be an AbortSignal')
  const onOutput = own.onOutput
  if (onOutput !== undefined && typeof onOutput !== 'function') throw invalid('options.onOutput', `must be a function, got ${typeof onOutput}`)
  let input
  if (own.input !== undefined) {
    const raw = own.input
    if (typeof raw === 'string') {
      if (!raw.isWellFormed()) throw invalid('options.input', 'holds a lone surrogate (not valid UTF-16), which has no exact UTF-8 form')
      input = Buffer.from(raw, 'utf8')
    } else if (raw instanceof Uint8Array) input = bytesOf(raw)
    else throw invalid('options.input', `must be a string, Buffer or Uint8Array, got ${raw === null ? 'null' : typeof raw}`)
  }
  return { data, signal, onOutput, input, onRequest, extendEnv: own.extendEnv !== false }
}

const { isMainThread } = require('node:worker_threads')

/**
 * What the calling context knows that the native side must not guess. On the main thread
 * `process.env` is the OS environment, which the native side reads directly (no copy per call);
 * a worker's `process.env` is its own copy and is passed along.
 */
/** Where this package was loaded from: its files are kept read-only in every run (see own_files.rs). */
const PACKAGE_DIR = require('node:path').resolve(__dirname, '..')

function hostInfo(extendEnv) {
  // Null-prototype: the binding reads env and processEnv by name, through the prototype chain.
  const host = Object.create(null)
  host.cwd = process.cwd()
  host.packageDir = PACKAGE_DIR
  if (!extendEnv) return host
  if (isMainThread) {
    host.processEnv = true
    return host
  }
  const env = Object.create(null)
  for (const [k, v] of Object.entries(process.env)) if (typeof v === 'string') env[k] = v
  host.env = env
  return host
}

/**
 * Wrap the user's onOutput so a throwing (or rejecting) callback never crashes the host or the run.
 * Returns a promise only for an internal holder (./output-hold), else undefined.
 */
function safeCallback(onOutput) {
  if (!onOutput) return undefined
  const warn = (err) => {
    process.emitWarning(`sandspawn: the onOutput callback threw: ${err && err.message ? err.message : String(err)}`, {
      code: 'SANDSPAWN_CALLBACK_ERROR',
      detail: err && err.stack ? err.stack : undefined,
    })
  }
  const holds = holdsOutput(onOutput)
  return (chunk) => {
    try {
      const ret = onOutput(chunk)
      if (!ret || typeof ret.then !== 'function') return undefined
      // The addon waits for what this returns (a promise that never rejects) before it reads on.
      if (holds) return Promise.resolve(ret).then(() => undefined, warn)
      ret.then(undefined, warn)
    } catch (err) {
      warn(err)
    }
    return undefined
  }
}

module.exports = { normalizeOptions, ownOptions, hostInfo, safeCallback, isAbortSignal }
