'use strict'
// `sandspawn explain [options] COMMAND`: print the launch plan without running anything.

const { loadSandspawn } = require('./library')
const { toSpawnOptions } = require('./options')
const out = require('./output')
const { printable, shellWord: quote } = require('./printable')

function explain(command, values) {
  // A plan carries no timer (buildSandboxCommand refuses a timeout): the CLI's own run keeps
  // --timeout, so the plan it explains is the one without it, and the text says so.
  const { timeout, ...options } = toSpawnOptions(values)
  const plan = loadSandspawn().buildSandboxCommand(command, options)
  if (values.json) {
    out.printJson(planAsJson(plan))
    return out.exit(0)
  }
  // Paths in the plan name the workspace's directories and files, whose names anyone who wrote
  // there chose: every one is escaped (quote, printable), so none can move the cursor or erase.
  const lines = [`sandbox:  ${plan.sandboxType}`, `program:  ${quote(plan.program)}`, `cwd:      ${quote(plan.cwd)}`, 'args:']
  // One bwrap/sandbox-exec option per line with its operands, the command after `--`.
  let line = []
  const flush = () => line.length && (lines.push(`  ${line.map(quote).join(' ')}`), (line = []))
  let args = plan.args
  if (plan.sandboxType === 'bwrap' && /sandspawn-helper$/.test(plan.program)) {
    // The helper in front of bwrap (it opens descriptors bwrap reads): its steps and bwrap on one line.
    const front = args.indexOf('--')
    lines.push(`  ${args.slice(0, front + 2).map(quote).join(' ')}`)
    args = args.slice(front + 2)
  }
  const sep = args.indexOf('--')
  args.forEach((a, i) => {
    if (sep >= 0 && i >= sep) return
    if (a.startsWith('-')) flush()
    line.push(a)
  })
  flush()
  if (sep >= 0) {
    // Under bwrap: the in-sandbox helper and its steps, then the command after the helper's `--`.
    const rest = args.slice(sep + 1)
    const inner = plan.sandboxType === 'bwrap' ? rest.indexOf('--') : -1
    if (inner >= 0) lines.push(`  -- ${rest.slice(0, inner).map(quote).join(' ')}`)
    lines.push(`  -- ${rest.slice(inner + 1).map(quote).join(' ')}`)
  }
  const marks = Object.keys(plan.env).filter((k) => k.startsWith('SANDSPAWN_'))
  if (marks.length) lines.push(`env:      ${marks.map((k) => `${k}=${quote(plan.env[k])}`).join(' ')}`)
  if (timeout) lines.push(`timeout:  ${timeout} ms, kept by sandspawn's own run; this plan has no timer (give the timeout to what runs it)`)
  if (plan.profile) lines.push('profile:', ...plan.profile.split('\n').map(printable))
  // What a run's result would list in notEnforced: whoever runs the plan gets no result.
  if (plan.notEnforced.length) lines.push('not enforced:', ...plan.notEnforced.map((l) => `  ${printable(l)}`))
  out.writeStdout(lines.join('\n') + '\n')
  out.exit(0)
}

/**
 * The plan as JSON. The environment is given as what differs from the CLI's own (`envSet`,
 * `envUnset`): the rest is inherited, and printing all of it would copy every secret in it.
 * `extraFds` is always empty (plans are self-contained) and kept for older readers.
 */
function planAsJson(plan) {
  const envSet = {}
  for (const [k, v] of Object.entries(plan.env)) if (process.env[k] !== v) envSet[k] = v
  const envUnset = Object.keys(process.env).filter((k) => !(k in plan.env))
  return {
    sandboxType: plan.sandboxType,
    program: plan.program,
    argv0: plan.argv0,
    args: plan.args,
    cwd: plan.cwd,
    envSet,
    envUnset,
    extraFds: [],
    profile: plan.profile,
    notEnforced: plan.notEnforced,
  }
}

module.exports = { explain }
