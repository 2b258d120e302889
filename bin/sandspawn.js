#!/usr/bin/env node
'use strict'
// sandspawn's command line: run a command in the sandbox (`sandspawn [options] -- cmd ...`),
// `sandspawn doctor` (can this host sandbox?), `sandspawn explain [options] -- cmd ...` (the plan).

const { parseArgs } = require('node:util')
const readline = require('node:readline')
const sandspawn = require('..')

const USAGE = `Usage:
  sandspawn [options] -- COMMAND [ARGS...]     run COMMAND in the sandbox
  sandspawn explain [options] -- COMMAND ...   print the launch plan without running anything
  sandspawn doctor                             say whether this host can sandbox, and how to fix it

Options:
  --mode MODE           read-only (default), workspace-write or danger-full-access
  --writable DIR        extra writable directory (repeatable; implies workspace-write)
  --read-only PATH      keep PATH read-only inside writable roots (repeatable)
  --deny-read PATH      hide PATH from the command (repeatable)
  --network             allow network access (default: none)
  --allow-unix-sockets  with the network off, still allow connecting to host Unix sockets
  --tmp MODE            writable, private or read-only
  --cwd DIR             working directory (default: the current one)
  --timeout MS          kill the command's tree after MS milliseconds
  --json                print the result as JSON instead of streaming the output
  --ask                 on a sandbox denial, ask whether to run again without the sandbox
  --platform OS         explain only: linux or darwin
  -h, --help            this text

Exit status: the command's own, 128+N when it died by signal N, 125 when the sandbox could not
run, 126 when the command is not executable, 127 when it was not found, 2 for bad usage.`

const OPTIONS = {
  mode: { type: 'string' },
  writable: { type: 'string', multiple: true },
  'read-only': { type: 'string', multiple: true },
  'deny-read': { type: 'string', multiple: true },
  network: { type: 'boolean' },
  'allow-unix-sockets': { type: 'boolean' },
  tmp: { type: 'string' },
  cwd: { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  ask: { type: 'boolean' },
  platform: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
}

const SIGNALS = require('node:os').constants.signals

function fail(message, code = 2) {
  process.stderr.write(`sandspawn: ${message}\n`)
  process.exit(code)
}

function exitCodeForError(err) {
  if (err && err.code === 'ENOENT') return 127
  if (err && err.code === 'EACCES') return 126
  if (err && err.code === 'ERR_SANDBOX_INVALID_OPTIONS') return 2
  return 125
}

function toOptions(values) {
  const policy = {}
  const writable = values.writable || []
  policy.mode = values.mode || (writable.length > 0 ? 'workspace-write' : 'read-only')
  const path = require('node:path')
  const abs = (p) => path.resolve(p)
  if (writable.length) policy.writableRoots = writable.map(abs)
  if (values['read-only']) policy.readOnlyPaths = values['read-only'].map(abs)
  if (values['deny-read']) policy.denyRead = values['deny-read'].map(abs)
  if (values.network) policy.network = true
  if (values['allow-unix-sockets']) policy.allowUnixSockets = true
  if (values.tmp) policy.tmp = values.tmp
  const options = { sandbox: policy }
  if (values.cwd) options.cwd = values.cwd
  if (values.timeout !== undefined) {
    const ms = Number(values.timeout)
    if (!Number.isFinite(ms) || ms < 0) fail(`--timeout must be a non-negative number of milliseconds, got ${values.timeout}`)
    options.timeout = ms
  }
  return options
}

function denialLine(denial) {
  return `sandspawn: sandbox denied this command (${denial.reason}${denial.path ? `: ${denial.path}` : ''}); ${denial.kind} access outside the policy`
}

function ask(question) {
  return new Promise((resolve) => {
    if (!process.stdin.isTTY) {
      process.stderr.write(`${question} refused: stdin is not a terminal\n`)
      return resolve(false)
    }
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr })
    rl.question(`${question} `, (answer) => {
      rl.close()
      resolve(/^y(es)?$/i.test(answer.trim()))
    })
  })
}

async function doctor() {
  const caps = await sandspawn.sandboxCapabilities()
  const source = caps.sandboxDetails && caps.sandboxDetails.bwrapSource
  const lines = [
    `platform:   ${caps.platform}`,
    `sandbox:    ${caps.sandboxType}`,
    `bwrap:      ${caps.bwrap ? `${caps.bwrap.path} (${caps.bwrap.version || 'unknown version'})${source ? `, ${source}` : ''}` : 'not found'}`,
    `available:  ${caps.available ? 'yes' : 'no'}`,
  ]
  if (!caps.available) {
    lines.push(`cause:      ${caps.cause || 'unknown'}`)
    lines.push(`reason:     ${caps.reason}`)
    lines.push(`fix:        ${caps.fix}`)
  }
  // The Linux fallback ladder: each rung tried, in order (the last one runs when available).
  ;(caps.attempts || []).forEach((a, i) => {
    lines.push(`${i === 0 ? 'ladder:' : ''.padEnd(7)}     ${a.mechanism}: ${a.cause === 'ok' ? 'used' : a.cause} (${a.message})`)
  })
  if (!caps.available && (caps.fixes || []).length > 1) {
    caps.fixes.forEach((f, i) => lines.push(`${i === 0 ? 'fixes:' : ''.padEnd(6)}      ${i + 1}. ${f}`))
  }
  process.stdout.write(lines.join('\n') + '\n')
  process.exit(caps.available ? 0 : 1)
}

function explain(command, values) {
  const options = toOptions(values)
  if (values.platform) options.platform = values.platform
  let plan
  try {
    plan = sandspawn.buildSandboxCommand(command, options)
  } catch (err) {
    fail(`${err.code}: ${err.message}`, exitCodeForError(err))
  }
  const out = [`sandbox:  ${plan.sandboxType}`, `program:  ${plan.program}`, `cwd:      ${plan.cwd}`, 'args:']
  // One bwrap/sandbox-exec option per line with its operands, the command after `--`.
  let line = []
  const flush = () => line.length && (out.push(`  ${line.map(quote).join(' ')}`), (line = []))
  const sep = plan.args.indexOf('--')
  plan.args.forEach((a, i) => {
    if (sep >= 0 && i >= sep) return
    if (a.startsWith('-')) flush()
    line.push(a)
  })
  flush()
  if (sep >= 0) {
    // Under bwrap: the in-sandbox helper and its steps, then the command after the helper's `--`.
    const rest = plan.args.slice(sep + 1)
    const inner = plan.sandboxType === 'bwrap' ? rest.indexOf('--') : -1
    if (inner >= 0) out.push(`  -- ${rest.slice(0, inner).map(quote).join(' ')}`)
    out.push(`  -- ${rest.slice(inner + 1).map(quote).join(' ')}`)
  }
  const marks = Object.keys(plan.env).filter((k) => k.startsWith('SANDSPAWN_'))
  if (marks.length) out.push(`env:      ${marks.map((k) => `${k}=${plan.env[k]}`).join(' ')}`)
  if (plan.profile) out.push('profile:', plan.profile)
  process.stdout.write(out.join('\n') + '\n')
}

function quote(s) {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`
}

async function run(command, values) {
  const options = toOptions(values)
  const controller = new AbortController()
  options.signal = controller.signal
  const onSignal = (name) => controller.abort(new Error(`received ${name}`))
  process.once('SIGINT', () => onSignal('SIGINT'))
  process.once('SIGTERM', () => onSignal('SIGTERM'))
  if (!values.json) {
    options.onOutput = (chunk) => (chunk.stream === 'stdout' ? process.stdout : process.stderr).write(chunk.data)
  }
  let result
  try {
    if (values.ask) {
      result = await sandspawn.runWithEscalation(command, {
        ...options,
        approve: async ({ denial }) => {
          process.stderr.write(denialLine(denial) + '\n')
          return ask('Run again without the sandbox? [y/N]')
        },
      })
    } else {
      result = await sandspawn.spawnSandboxed(command, options)
    }
  } catch (err) {
    if (err && err.name === 'AbortError') process.exit(err.result && err.result.signal ? 128 + (SIGNALS[err.result.signal] || 2) : 130)
    process.stderr.write(`sandspawn: ${err.code || 'error'}: ${err.message}\n`)
    process.exit(exitCodeForError(err))
  }
  if (values.json) {
    process.stdout.write(JSON.stringify(result, null, 2) + '\n')
  } else if (result.denial && !(values.ask && result.escalated)) {
    process.stderr.write(denialLine(result.denial) + '\n')
  }
  for (const risk of result.hostRisks || []) process.stderr.write(require('../lib/host-risks').hostRiskLine(risk) + '\n')
  if (result.timedOut) process.stderr.write(`sandspawn: timed out after ${values.timeout} ms\n`)
  const code = result.exitCode !== null ? result.exitCode : 128 + (SIGNALS[result.signal] || 0)
  // Let stdout drain before exiting.
  process.stdout.write('', () => process.exit(code))
}

async function main() {
  const argv = process.argv.slice(2)
  const dash = argv.indexOf('--')
  const head = dash >= 0 ? argv.slice(0, dash) : argv
  const command = dash >= 0 ? argv.slice(dash + 1) : []
  let sub = 'run'
  if (head[0] === 'doctor' || head[0] === 'explain') sub = head.shift()
  let values
  try {
    ;({ values } = parseArgs({ args: head, options: OPTIONS, allowPositionals: false, strict: true }))
  } catch (err) {
    fail(`${err.message}\n\n${USAGE}`)
  }
  if (values.help) {
    process.stdout.write(USAGE + '\n')
    return
  }
  if (sub === 'doctor') return doctor()
  if (command.length === 0) fail(`no command given (put it after --)\n\n${USAGE}`)
  if (sub === 'explain') return explain(command, values)
  return run(command, values)
}

main().catch((err) => fail(err && err.stack ? err.stack : String(err), 125))
