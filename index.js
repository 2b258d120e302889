'use strict'
/**
 * sandspawn: run a command inside the operating system's sandbox (bubblewrap on Linux, Seatbelt
 * on macOS). This hand-written facade wraps the generated native loader (`binding.js`): it adapts
 * AbortSignal, turns native error records into `SandboxError`, and guards user callbacks.
 * Types and documentation: index.d.ts. Contract: README.md.
 */

const native = require('./binding.js')
const { SandboxError, AbortError, fromThrown, fromRecord, invalid } = require('./lib/errors')
const { spawnSandboxed, startSandboxed, SandboxedProcess, resolvedPolicies } = require('./lib/process')
const { runWithEscalation } = require('./lib/escalation')
const { hostInfo, normalizeOptions } = require('./lib/normalize')
const { applyChangeSet, discardChangeSet, readChange, diffChange, listChangeSets, showChangeSet } = require('./lib/review')

function isLikelySandboxDenied(sandboxType, output) {
  try {
    return native.isLikelySandboxDenied(sandboxType, output)
  } catch (err) {
    throw fromThrown(err, 'isLikelySandboxDenied')
  }
}

function classifySandboxDenial(result, policy) {
  let payload = result
  if (policy === undefined && result !== null && typeof result === 'object' && resolvedPolicies.has(result)) {
    payload = { ...result, policy: resolvedPolicies.get(result) }
  }
  try {
    return native.classifySandboxDenial(payload, policy === undefined ? null : policy)
  } catch (err) {
    throw fromThrown(err, 'classifySandboxDenial')
  }
}

function buildSandboxCommand(command, options) {
  const opts = normalizeOptions(options)
  let plan
  try {
    plan = native.buildSandboxCommand(command, opts.data, hostInfo(opts.extendEnv))
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
    // Plans are self-contained since sandspawn-helper applies seccomp inside the sandbox; the field
    // stays for code written against earlier versions.
    extraFds: [],
  }
}

async function sandboxCapabilities(options) {
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    throw invalid('options', `expected an object like { linux: { bundledBwrap: false } }, got ${Array.isArray(options) ? 'an array' : typeof options}`)
  }
  const tagged = await native.sandboxCapabilities(process.cwd(), options ?? null)
  if (!tagged.ok) throw fromRecord(tagged.error)
  return tagged.value
}

/** The store the runs of an environment use (`options.env`, default `process.env`), measured or cleaned. */
async function toolCacheStore(options) {
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    throw invalid('options', `expected an object like { clean: true }, got ${Array.isArray(options) ? 'an array' : typeof options}`)
  }
  const { env: given, ...rest } = options ?? {}
  if (given !== undefined && given !== null && (typeof given !== 'object' || Array.isArray(given))) {
    throw invalid('env', `expected an object of strings, got ${Array.isArray(given) ? 'an array' : typeof given}`)
  }
  const source = given ?? process.env
  const env = {}
  for (const k of ['SANDSPAWN_TOOL_CACHE_DIR', 'XDG_STATE_HOME', 'HOME']) if (typeof source[k] === 'string') env[k] = source[k]
  const tagged = await native.toolCacheStore(rest, env)
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
