'use strict'

/** Codes the native core reports; anything else from the binding is an internal failure. */
const CODES = new Set([
  'ERR_SANDBOX_INVALID_OPTIONS',
  'ERR_SANDBOX_UNAVAILABLE',
  'ERR_SANDBOX_SETUP_FAILED',
  'ERR_SANDBOX_UNSUPPORTED',
  'ERR_SANDBOX_CHANGE_SET_CHANGED',
  'ENOENT',
  'EACCES',
  'EPIPE',
])

/** The one error class sandspawn rejects with (besides `AbortError`). */
class SandboxError extends Error {
  constructor(code, message, given = {}) {
    // Own fields only: an absent one is absent, not Object.prototype's.
    const extra = Object.assign(Object.create(null), given)
    super(message, extra.cause !== undefined ? { cause: extra.cause } : undefined)
    this.name = 'SandboxError'
    this.code = code
    if (extra.stderr != null) this.stderr = extra.stderr
    if (extra.result !== undefined) this.result = extra.result
    if (extra.attempts != null) this.attempts = extra.attempts
    if (extra.fixes != null) this.fixes = extra.fixes
  }
}

/** Node's own shape for aborted operations: `name: 'AbortError'`, `code: 'ABORT_ERR'`. */
class AbortError extends Error {
  constructor(message = 'The operation was aborted', options) {
    super(message, options)
    this.name = 'AbortError'
    this.code = 'ABORT_ERR'
  }
}

function invalid(option, problem) {
  return new SandboxError('ERR_SANDBOX_INVALID_OPTIONS', `${option}: ${problem}`)
}

/** A `{ code, message, stderr, attempts?, fixes? }` record from the core, as a SandboxError. */
function fromRecord(given) {
  // Fields the core left out are absent, not Object.prototype's.
  const record = Object.assign(Object.create(null), given)
  return new SandboxError(record.code, record.message, {
    stderr: record.stderr ?? undefined,
    attempts: record.attempts,
    fixes: record.fixes,
  })
}

/** An exception thrown synchronously by the binding, as a SandboxError. */
function fromThrown(err, what) {
  if (err && CODES.has(err.code)) return new SandboxError(err.code, err.message)
  // napi-rs could not convert an argument (e.g. a function where a string belongs).
  return new SandboxError('ERR_SANDBOX_INVALID_OPTIONS', `${what}: ${err && err.message ? err.message : String(err)}`, { cause: err })
}

module.exports = { SandboxError, AbortError, invalid, fromRecord, fromThrown }
