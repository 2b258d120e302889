'use strict'
// `sandbox.network.onRequest`: taken out of the options before they reach the core (a function
// is no data), and wrapped so that whatever the user's callback does (throw, reject, hang,
// answer nonsense) the proxy gets a decision's name or 'error', never an exception: a failed
// callback denies the request and is reported as a warning, and never wedges the proxy (which
// bounds the wait itself: requestTimeoutMs).

const { invalid } = require('./errors')

const DECISIONS = new Set(['allow', 'deny', 'allow-run', 'deny-run'])

/**
 * Takes `network.onRequest` out of `sandbox`, normalize's own copy of the option (null-prototype
 * objects, so `in` sees own keys only), and returns it (or undefined). Throws for a non-function.
 */
function takeOnRequest(sandbox) {
  if (sandbox === null || typeof sandbox !== 'object' || Array.isArray(sandbox)) return undefined
  const network = sandbox.network
  if (network === null || typeof network !== 'object' || Array.isArray(network) || !('onRequest' in network)) return undefined
  const onRequest = network.onRequest
  if (onRequest !== undefined && typeof onRequest !== 'function') {
    throw invalid('options.sandbox.network.onRequest', `must be a function (request) => 'allow' | 'deny' | 'allow-run' | 'deny-run', got ${onRequest === null ? 'null' : typeof onRequest}`)
  }
  delete network.onRequest
  return onRequest
}

function warn(message, err) {
  process.emitWarning(`sandspawn: the network onRequest callback ${message}; the request was denied`, {
    code: 'SANDSPAWN_CALLBACK_ERROR',
    detail: err && err.stack ? err.stack : undefined,
  })
}

function describe(v) {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v
}

/**
 * What the native proxy calls: `(request) => Promise<decision name | 'error'>`. `over()`: whether
 * the run has ended; the proxy asks nothing after that, and a call already on its way to this
 * thread then is answered deny without calling `onRequest` for a run that is over.
 */
function asker(onRequest, command, over = () => false) {
  const settle = (answer) => {
    if (DECISIONS.has(answer)) return answer
    warn(`answered ${describe(answer)}, which is none of 'allow', 'deny', 'allow-run', 'deny-run'`)
    return 'error'
  }
  const failed = (err) => {
    warn(`failed: ${err && err.message ? err.message : String(err)}`, err)
    return 'error'
  }
  return (req) => {
    if (over()) return Promise.resolve('deny')
    const request = Object.freeze({ host: req.host, port: req.port, protocol: req.protocol, command: [...command] })
    try {
      return Promise.resolve(onRequest(request)).then(settle, failed)
    } catch (err) {
      return Promise.resolve(failed(err))
    }
  }
}

module.exports = { takeOnRequest, asker }
