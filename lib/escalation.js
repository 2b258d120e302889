'use strict'

const { invalid } = require('./errors')
const { spawnSandboxed, resolvedPolicies, policyOf, abortError } = require('./process')
const { ownOptions } = require('./normalize')
const { ownData } = require('./own-data')
const { attemptChanges } = require('./attempt-changes')

/** Wait for `promise`, or reject with an AbortError carrying `result` when `signal` aborts first. */
function raceAbort(promise, signal, result) {
  if (!signal) return promise
  if (signal.aborted) return Promise.reject(abortError(signal, result))
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal, result))
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort)
        resolve(v)
      },
      (e) => {
        signal.removeEventListener('abort', onAbort)
        reject(e)
      },
    )
  })
}

/**
 * Run under the sandbox; only when that run is classified as a sandbox denial, ask `approve` (told
 * what the attempt changed in its writable roots: `changes`); if it answers exactly `true`, run
 * once more without the sandbox. Never escalates an ordinary failure, a timeout, an abort, a setup
 * failure, or a policy with `denyRead` (dropping the sandbox would drop the only read boundary).
 */
async function runWithEscalation(command, options) {
  if (options === null || typeof options !== 'object') throw invalid('options', 'runWithEscalation needs an options object with approve()')
  // Own properties only, each read once: an inherited approve (a polluted Object.prototype) must
  // never answer for the caller.
  const rest = ownOptions(options)
  const approve = rest.approve
  delete rest.approve
  if (typeof approve !== 'function') throw invalid('options.approve', `must be a function, got ${typeof approve}`)
  const signal = rest.signal
  // One copy of the command for both runs and for approve(): the retry read the caller's array
  // again, so what approve() was shown and what ran unsandboxed could differ (an element changed
  // meanwhile, by approve() itself or by any code holding the array).
  const argv = ownData(command, 'command')
  const shown = () => (Array.isArray(argv) ? [...argv] : argv)

  const started = Date.now()
  const first = await spawnSandboxed(argv, rest)
  const keep = (result, escalated) => {
    const out = { ...result, escalated }
    resolvedPolicies.set(out, resolvedPolicies.get(result))
    return out
  }
  if (first.timedOut || !first.denial || first.sandboxType === 'none') return keep(first, false)
  // Parsed only for a denial (`policyOf`).
  const policy = policyOf(first)
  if (policy && Array.isArray(policy.denyRead) && policy.denyRead.length > 0) return keep(first, false)

  let approved = false
  try {
    // What the attempt changed (the script the retry would run, rewritten?): for approve to see.
    // A failure to tell is a refusal, like approve's own.
    const ask = async () => approve({ command: shown(), result: first, denial: first.denial, changes: await attemptChanges(argv, first, policy, started) })
    const answer = await raceAbort(ask(), signal, first)
    approved = answer === true
  } catch (err) {
    if (err && err.name === 'AbortError') throw err
    approved = false // a throwing or rejecting approve() is a refusal
  }
  if (!approved) return keep(first, false)
  const second = await spawnSandboxed(argv, Object.assign(Object.create(null), rest, { sandbox: 'danger-full-access' }))
  // What the sandboxed attempt planted is still on the host: the retry's result must not hide it.
  // In review mode the attempt wrote a change set (with `changeSet: id`, one holding a whole
  // task's earlier writes too) that the retry, unsandboxed and so unreviewed, does not touch: it
  // stays pending, and the result names it for the caller to apply or discard (it was dropped, and
  // the set left for 14 days with nobody told).
  return keep({ ...second, hostRisks: [...first.hostRisks, ...second.hostRisks], changeSet: first.changeSet ?? null }, true)
}

module.exports = { runWithEscalation }
