'use strict'

const { invalid } = require('./errors')
const { takeOnRequest } = require('./network-ask')

/** Options the JavaScript layer consumes itself (functions, signals, bytes). */
const JS_ONLY = new Set(['signal', 'onOutput', 'input', 'approve'])
/** Numeric options that must be finite (NaN and Infinity cannot cross into JSON faithfully). */
const FINITE = ['timeout', 'forceKillAfterDelay']

function isAbortSignal(value) {
  return value != null && typeof value === 'object' && typeof value.aborted === 'boolean' && typeof value.addEventListener === 'function'
}

/**
 * Split user options into what the core validates (plain data) and what JavaScript handles.
 * Throws SandboxError for JS-level type errors; everything else is checked by the core.
 */
function normalizeOptions(options) {
  if (options === undefined || options === null) options = {}
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw invalid('options', `expected an object, got ${Array.isArray(options) ? 'an array' : typeof options}`)
  }
  const data = {}
  let onRequest
  for (const key of Object.keys(options)) {
    const value = options[key]
    if (value === undefined || JS_ONLY.has(key)) continue
    if (FINITE.includes(key) && typeof value === 'number' && !Number.isFinite(value)) {
      throw invalid(`options.${key}`, `must be a finite, non-negative number of milliseconds, got ${value}`)
    }
    if (key === 'maxBuffer' && typeof value === 'number') {
      if (Number.isNaN(value)) throw invalid('options.maxBuffer', 'must be a positive number of bytes, got NaN')
      data[key] = value === Infinity ? Number.MAX_SAFE_INTEGER : value
      continue
    }
    if (key === 'limits' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      // NaN and Infinity cannot cross into JSON; the core checks everything else.
      for (const [name, v] of Object.entries(value)) {
        if (typeof v === 'number' && !Number.isFinite(v)) throw invalid(`options.limits.${name}`, `must be a positive integer, got ${v}`)
      }
      data[key] = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined))
      continue
    }
    if (key === 'sandbox') {
      ;({ sandbox: data.sandbox, onRequest } = takeOnRequest(value))
      continue
    }
    if (key === 'env' && value !== null && typeof value === 'object') {
      // Like child_process, drop undefined values instead of passing the string "undefined".
      data[key] = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined))
      continue
    }
    data[key] = value
  }
  const signal = options.signal
  if (signal !== undefined && !isAbortSignal(signal)) throw invalid('options.signal', 'must be an AbortSignal')
  const onOutput = options.onOutput
  if (onOutput !== undefined && typeof onOutput !== 'function') throw invalid('options.onOutput', `must be a function, got ${typeof onOutput}`)
  let input
  if (options.input !== undefined) {
    const raw = options.input
    if (typeof raw === 'string') input = Buffer.from(raw, 'utf8')
    else if (Buffer.isBuffer(raw)) input = raw
    else if (raw instanceof Uint8Array) input = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
    else throw invalid('options.input', `must be a string, Buffer or Uint8Array, got ${raw === null ? 'null' : typeof raw}`)
  }
  return { data, signal, onOutput, input, onRequest, extendEnv: options.extendEnv !== false }
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
  const host = { cwd: process.cwd(), packageDir: PACKAGE_DIR }
  if (!extendEnv) return host
  if (isMainThread) {
    host.processEnv = true
    return host
  }
  const env = {}
  for (const [k, v] of Object.entries(process.env)) if (typeof v === 'string') env[k] = v
  host.env = env
  return host
}

/** Wrap the user's onOutput so a throwing (or rejecting) callback never crashes the host or the run. */
function safeCallback(onOutput) {
  if (!onOutput) return undefined
  const warn = (err) => {
    process.emitWarning(`sandspawn: the onOutput callback threw: ${err && err.message ? err.message : String(err)}`, {
      code: 'SANDSPAWN_CALLBACK_ERROR',
      detail: err && err.stack ? err.stack : undefined,
    })
  }
  return (chunk) => {
    try {
      const ret = onOutput(chunk)
      if (ret && typeof ret.then === 'function') ret.then(undefined, warn)
    } catch (err) {
      warn(err)
    }
  }
}

module.exports = { normalizeOptions, hostInfo, safeCallback, isAbortSignal }
