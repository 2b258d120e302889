'use strict'
/**
 * sandspawn: run a command inside the operating system's sandbox (bubblewrap on Linux, Seatbelt
 * on macOS). This hand-written facade wraps the generated native loader (`binding.js`): it adapts
 * AbortSignal, turns native error records into `SandboxError`, and guards user callbacks.
 * Types and documentation: index.d.ts. Contract: README.md.
 */

const native = require('./binding.js')
const { SandboxError, AbortError, fromThrown, fromRecord, invalid } = require('./lib/errors')
const { spawnSandboxed, startSandboxed, SandboxedProcess, resolvedPolicies, policyOf } = require('./lib/process')
const { runWithEscalation } = require('./lib/escalation')
const { hostInfo, normalizeOptions, ownOptions } = require('./lib/normalize')
const { ownData } = require('./lib/own-data')
const { applyChangeSet, discardChangeSet, readChange, diffChange, listChangeSets, showChangeSet } = require('./lib/review')

// Every argument reaches the binding as a copy of its own data (lib/own-data.js): the binding's
// conversion reads inherited properties, so a polluted Object.prototype would change the verdict.

function isLikelySandboxDenied(sandboxType, output) {
  const given = [ownData(sandboxType, 'sandboxType'), ownData(output, 'output')]
  try {
    return native.isLikelySandboxDenied(...given)
  } catch (err) {
    throw fromThrown(err, 'isLikelySandboxDenied')
  }
}

function classifySandboxDenial(result, policy) {
  const payload = ownData(result, 'result')
  if (policy === undefined && result !== null && typeof result === 'object' && resolvedPolicies.has(result)) {
    payload.policy = ownData(policyOf(result), 'result.policy')
  }
  const given = policy === undefined || policy === null ? null : ownData(policy, 'policy')
  try {
    return native.classifySandboxDenial(payload, given)
  } catch (err) {
    throw fromThrown(err, 'classifySandboxDenial')
  }
}

function buildSandboxCommand(command, options) {
  const opts = normalizeOptions(options)
  // An AbortSignal is kept by the runner, as a timeout is (refused by the core for a plan): taken,
  // it was dropped, and aborting ended nothing (found by an attacker's review, mode32).
  if (opts.signal !== undefined) {
    throw new SandboxError(
      'ERR_SANDBOX_UNSUPPORTED',
      "options.signal: a launch plan cannot be aborted (spawnSandboxed and startSandboxed listen to the signal in their own process); leave it out and give it to the spawner that runs the plan (child_process's signal, or kill the plan's program: the whole sandbox ends with it), or run the command with spawnSandboxed",
    )
  }
  const argv = ownData(command, 'command')
  let plan
  try {
    plan = native.buildSandboxCommand(argv, opts.data, hostInfo(opts.extendEnv))
  } catch (err) {
    throw fromThrown(err, 'command/options')
  }
  return {
    program: plan.program,
    args: plan.args,
    env: plan.env,
    cwd: plan.cwd,
    sandboxType: plan.sandboxType,
    profile: plan.profile ?? null,
    argv0: plan.argv0,
    // What the policy leaves unguarded, as a run's sandboxDetails.notEnforced says it: the spawner
    // that runs a plan gets no result.
    notEnforced: plan.notEnforced,
    // Plans are self-contained since sandspawn-helper applies seccomp inside the sandbox; the field
    // stays for code written against earlier versions.
    extraFds: [],
  }
}

async function sandboxCapabilities(options) {
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    throw invalid('options', `expected an object like { linux: { bundledBwrap: false } }, got ${Array.isArray(options) ? 'an array' : typeof options}`)
  }
  const tagged = await native.sandboxCapabilities(process.cwd(), options == null ? null : ownData(options, 'options'))
  if (!tagged.ok) throw fromRecord(tagged.error)
  return tagged.value
}

/** The store the runs of an environment use (`options.env`, default `process.env`), measured or cleaned. */
async function toolCacheStore(options) {
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    throw invalid('options', `expected an object like { clean: true }, got ${Array.isArray(options) ? 'an array' : typeof options}`)
  }
  const rest = ownOptions(options)
  const given = rest.env
  delete rest.env
  if (given !== undefined && given !== null && (typeof given !== 'object' || Array.isArray(given))) {
    throw invalid('env', `expected an object of strings, got ${Array.isArray(given) ? 'an array' : typeof given}`)
  }
  const source = given == null ? process.env : ownData(given, 'env')
  const env = Object.create(null)
  for (const k of ['SANDSPAWN_TOOL_CACHE_DIR', 'XDG_STATE_HOME', 'HOME']) if (Object.hasOwn(source, k) && typeof source[k] === 'string') env[k] = source[k]
  const tagged = await native.toolCacheStore(ownData(rest, 'options'), env)
  if (!tagged.ok) throw fromRecord(tagged.error)
  return tagged.value
}

module.exports = {
  spawnSandboxed,
  startSandboxed,
  runWithEscalation,
  isLikelySandboxDenied,
  classifySandboxDenial,
  buildSandboxCommand,
  sandboxCapabilities,
  toolCacheStore,
  applyChangeSet,
  discardChangeSet,
  readChange,
  diffChange,
  listChangeSets,
  showChangeSet,
  SandboxError,
  AbortError,
  SandboxedProcess,
}
